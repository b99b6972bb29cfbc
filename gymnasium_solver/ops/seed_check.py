"""``gsolve check RUN RUN ... --against preset``: several seeds of one config against the preset's seed sample.

One run is one seed, and its rank among the preset's seeds only says how rare that seed is. Several runs of one
config (other seeds: ``gsolve train CONFIG --seeds 0-4``) ask the question a change needs answered: do its seeds
need more env steps than the preset's? A one-sided Mann-Whitney U test (scipy) between the runs' env steps to solve
and the sample's, a rank test again, so the tail's shape does not matter. A run that never reached the preset's
threshold counts with the env steps it spent (a lower bound: its true rank is at least as high, so the test stays
conservative for "worse"); a sample seed that did not solve needs more than any budget.

Pure reads; no torch.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import overload

import numpy as np

from gymnasium_solver.diagnostics.seed_sample import SeedSample, shipped_sample
from gymnasium_solver.ops.regression import (
    EXIT_CODES,
    PRESET_BASELINE,
    GroupRun,
    RegressionCheck,
    Verdict,
    _cannot,
    preset_threshold,
    steps_to_reach,
)
from gymnasium_solver.run_store import BestRun, Comparison, RunStore, SeedGroup, refuse_live


def check_runs_against_preset(store: RunStore, runs: list[str], alpha: float) -> RegressionCheck:
    """Mann-Whitney U (one-sided) of several runs' env steps to solve against the preset's shipped seed sample."""
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be between 0 and 0.5 (a one-sided significance level), got {alpha}")
    dirs: list[Path] = []
    for ref in runs:
        run_dir = store.resolve(ref)
        if run_dir in dirs:
            raise ValueError(f"run {run_dir.name} is given twice; give each seed's run once")
        refuse_live(store, run_dir, "be checked")
        dirs.append(run_dir)
    infos = [store.info(d) for d in dirs]
    label = ", ".join(d.name for d in dirs)
    configs = sorted({i.config_id for i in infos})
    if len(configs) > 1:
        return _cannot(label, PRESET_BASELINE, alpha, f"the runs are of {', '.join(configs)}: several runs are "
                       "checked together only when they are seeds of one config")
    threshold = preset_threshold(infos[0])
    if threshold is None or not math.isfinite(threshold):
        return _cannot(label, PRESET_BASELINE, alpha, f"the preset {configs[0]} has no finite reward threshold, so "
                       "steps to solve are undefined")
    sample = shipped_sample(configs[0], threshold)
    if not isinstance(sample, SeedSample):
        return _cannot(label, PRESET_BASELINE, alpha, f"{sample}; several runs are checked against a preset's seed "
                       "sample (check one run at a time against its reference runs)")
    if len({i.seed for i in infos}) < len(infos):
        return _cannot(label, PRESET_BASELINE, alpha, "two of the runs share a seed: give one run per seed")
    configs_seen = [{k: v for k, v in store.config(d).items() if k != "seed"} for d in dirs]
    other = next((d.name for d, c in zip(dirs, configs_seen, strict=True) if c != configs_seen[0]), None)
    if other is not None:
        return _cannot(label, PRESET_BASELINE, alpha, f"run {other}'s config differs from run {dirs[0].name}'s beyond "
                       "the seed: several runs are checked together only when they are seeds of one config")
    group = [GroupRun(run_id=d.name, seed=i.seed, env_steps=steps, solved=ok)
             for d, i in zip(dirs, infos, strict=True) for steps, ok in [steps_to_reach(store, d, threshold)]]
    return _judge(label, group, sample, alpha)


def _judge(label: str, group: list[GroupRun], sample: SeedSample, alpha: float) -> RegressionCheck:
    from scipy.stats import mannwhitneyu

    ours = np.array([g.env_steps for g in group], dtype=float)
    needs = sample.needs()
    res = mannwhitneyu(ours, needs, alternative="greater")
    p = float(res.pvalue)
    med = float(np.median(ours))
    solved = sum(g.solved for g in group)
    finite = needs[np.isfinite(needs)]
    span = (f"the runs: {solved}/{len(group)} reached {sample.reward_threshold:g}, median {med:,.0f} env steps"
            + ("" if solved == len(group) else " (an unsolved run counts with the env steps it spent)")
            + f"; the preset: median {np.median(needs):,.0f} over {len(needs)} seeds, slowest solved "
            f"{int(finite.max()) if len(finite) else 0:,} ({sample.source})")
    stat = f"Mann-Whitney U = {float(res.statistic):g}, one-sided p = {p:.3g} (alpha {alpha:g}, scipy)"
    worse = p < alpha
    verdict = Verdict.WORSE if worse else Verdict.NOT_WORSE
    if not worse and solved < len(group):
        verdict = Verdict.CANNOT_COMPARE  # a lower bound cannot clear a run: it may still have been slower
    word = {Verdict.WORSE: "are significantly worse than", Verdict.NOT_WORSE: "are not significantly worse than",
            Verdict.CANNOT_COMPARE: "cannot be compared with"}[verdict]
    why = "" if verdict != Verdict.CANNOT_COMPARE else (
        " (a run that stopped before the threshold may have needed more env steps than it spent)")
    return RegressionCheck(run_id=label, baseline=PRESET_BASELINE, verdict=verdict, exit_code=EXIT_CODES[verdict],
                           test="one-sided Mann-Whitney U of env steps to solve: the runs against the preset's seeds",
                           alternative="the runs need more env steps to solve than seeds of the preset",
                           statistic=float(res.statistic), p_value=p, alpha=alpha, runs=group,
                           reference_seeds=len(needs),
                           reference_threshold=sample.reward_threshold, reference_source=sample.source,
                           summary=f"{len(group)} runs of {sample.config_id} {word} the preset{why}: {span}; {stat}")


@overload
def with_vs_preset(store: RunStore, result: Comparison) -> Comparison: ...
@overload
def with_vs_preset(store: RunStore, result: BestRun) -> BestRun: ...
def with_vs_preset(store: RunStore, result: Comparison | BestRun) -> Comparison | BestRun:
    """A comparison (its groups of seeds) or an environment's best configs with each group's ``vs_preset`` filled
    where it applies. It reads every run's metrics: the comparisons a person reads call it, on their few groups."""
    if isinstance(result, Comparison):
        return result.model_copy(update={"groups": [_filled(store, g) for g in result.groups]})
    return result.model_copy(update={"configs": [_filled(store, g) for g in result.configs]})


def _filled(store: RunStore, group: SeedGroup) -> SeedGroup:
    ended = [r for r in group.run_ids if (i := store.info(store.runs_dir / r)).solved or i.status == "completed"]
    summary = vs_preset(store, ended)
    return group if summary is None else group.model_copy(update={"vs_preset": summary})


def vs_preset(store: RunStore, run_ids: list[str]) -> str | None:
    """The several-runs check's one sentence for two or more ended runs of one of our presets (changed or not), on
    as many seeds, whose solve definition is the preset's shipped seed sample's; None where it does not apply or a
    run folder changed or became unreadable under the read (no sentence rather than a wrong one)."""
    infos = [store.info(store.runs_dir / r) for r in run_ids]
    if len(infos) < 2 or len({i.seed for i in infos}) < len(infos):
        return None
    if not isinstance(shipped_sample(infos[0].config_id, infos[0].reward_threshold), SeedSample):
        return None
    try:
        return check_runs_against_preset(store, run_ids, 0.05).summary
    except (ValueError, KeyError, OSError):
        return None
