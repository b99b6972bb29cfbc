"""Runs of one config over seeds: selecting them (run refs or ENV:VARIANT), grouping them, and ranking an
environment's runs and configs (the best config is judged over its seeds, not by its luckiest run)."""

from __future__ import annotations

import difflib
import statistics
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver.config.presets import yaml_value
from gymnasium_solver.config.registry import RECORDING_KEYS
from gymnasium_solver.maths.spread import Spread, share_lower_bound, spread
from gymnasium_solver.run_store.files import RunFileError
from gymnasium_solver.run_store.store import RunStore
from gymnasium_solver.run_store.summaries import RunKind, RunSummary, is_kind, summarize_run

TOP = 5  # runs and configs a ranking shows

# Keys that differ between seeds of one config without making it another config: the seed, and what a run only
# writes elsewhere or measures besides (tensorboard, grad_norm_parts, ...): its training is the same.
SAME_CONFIG_KEYS = ("seed", *RECORDING_KEYS)


def is_config_ref(ref: str) -> bool:
    """ENV:VARIANT (a run id never holds a colon)."""
    return ":" in ref and not ref.startswith("@")


def select_runs(store: RunStore, refs: list[str]) -> list[Path]:
    """The run folders ``refs`` name, in order, without repeats: each a run (id, unique prefix, @last)
    or ENV:VARIANT for every run of that config someone started (fix / sweep trials left out).
    RunNotFoundError / ValueError for a ref that names nothing, with the configs that have runs."""
    dirs: list[Path] = []
    summaries: list[RunSummary] | None = None
    for ref in refs:
        if is_config_ref(ref):
            if summaries is None:
                summaries = [summarize_run(store, store.runs_dir / i) for i in store.run_ids()]
            found = [store.runs_dir / s.run_id for s in summaries if s.config_id == ref and is_kind(s, RunKind.TRAIN)]
            if not found:
                known = sorted({s.config_id for s in summaries if s.config_id and is_kind(s, RunKind.TRAIN)})
                close = difflib.get_close_matches(ref, known, n=3, cutoff=0.5)
                hint = f"; did you mean {' or '.join(close)}?" if close else "."
                raise ValueError(f"no runs of {ref!r} in {store.runs_dir}{hint} Configs with runs: "
                                 f"{', '.join(known) or 'none'}")
        else:
            found = [store.resolve(ref)]
        dirs.extend(d for d in found if d not in dirs)
    return dirs


class SeedGroup(BaseModel):
    """Runs of one config (the same resolved config but for the seed and SAME_CONFIG_KEYS): results over seeds."""

    label: str = Field(description="config id, plus the keys that set this group apart from the other groups of "
                       "its config id")
    config_id: str | None
    run_ids: list[str]
    seeds: list[int | None]
    solved: int = Field(description="runs that reached the reward threshold (of len(run_ids))")
    best_eval_mean: float | None = Field(description="mean over the runs of each run's best eval return")
    best_eval_min: float | None
    best_eval_max: float | None
    steps_to_solve_median: float | None = Field(description="median env steps to solve over the solved runs")
    steps_to_solve_max: int | None = Field(description="the slowest solved run's env steps to solve")
    running: int = Field(default=0, description="runs still training: not in env_steps until they end")
    solved_share_low: float | None = Field(default=None, description="95% lower bound (scipy's Wilson interval) of "
                                           "the share of seeds this config solves, over the runs that ended: 3 of 3 "
                                           "gives 0.44, 10 of 10 0.72, 1 of 1 0.21")
    env_steps: Spread | None = Field(default=None, description="env steps to solve over the runs that ended solved "
                                     "or at their budget, an unsolved run counting with the env steps it trained "
                                     "(a lower bound), as `gsolve train --seeds` reports: median, interquartile "
                                     "mean with its 95% bootstrap interval, fastest and slowest")
    vs_preset: str | None = Field(default=None, description="these seeds against the preset's shipped seeds "
                                  "(Mann-Whitney U, as `gsolve check RUN... --against preset`; filled by "
                                  "ops.seed_check.with_vs_preset)")


def _config_without_seed(store: RunStore, run_dir: Path) -> dict[str, Any]:
    try:
        return {k: v for k, v in store.config(run_dir).items() if k not in SAME_CONFIG_KEYS}
    except RunFileError:
        return {}


def group_runs(store: RunStore, run_dirs: list[Path]) -> list[SeedGroup]:
    """Group runs by config (config id and every resolved key but SAME_CONFIG_KEYS), in first-seen order."""
    keyed: dict[str, tuple[dict[str, Any], list[Path]]] = {}
    for d in run_dirs:
        cfg = _config_without_seed(store, d)
        key = repr(sorted(cfg.items())) if cfg else f"unreadable:{d.name}"
        keyed.setdefault(key, (cfg, []))[1].append(d)
    ids = {key: summarize_run(store, dirs[0]).config_id for key, (_, dirs) in keyed.items()}
    groups = []
    for cfg, dirs in keyed.values():
        summaries = [summarize_run(store, d) for d in dirs]
        cid = summaries[0].config_id
        # The label names the keys that set this group apart from the other groups of its config id only: a
        # group of another environment or algorithm differs in most keys, and its config id already says how.
        peers = [c for k, (c, _) in keyed.items() if ids[k] == cid]
        varying = sorted({k for c in peers for k in c if len({repr(o.get(k)) for o in peers}) > 1}
                         - {"env_id", "variant"})
        # Each key as --set writes it ({end: 0.0, start: 0.004}, true), not as Python prints it.
        label = " ".join([cid or dirs[0].name, *(f"{k}={yaml_value(cfg.get(k))}" for k in varying if k in cfg)])
        best = [s.best_eval_return for s in summaries if s.best_eval_return is not None]
        steps = sorted(s.solved_at_env_steps for s in summaries if s.solved and s.solved_at_env_steps is not None)
        seeds: list[int | None] = []
        for d in dirs:
            try:
                seed = store.config(d).get("seed")
            except RunFileError:
                seed = None
            seeds.append(seed if isinstance(seed, int) else None)
        ended = [s for s in summaries if s.solved or s.status == "completed"]
        groups.append(SeedGroup(
            label=label, config_id=cid, run_ids=[s.run_id for s in summaries], seeds=seeds,
            solved=sum(s.solved for s in summaries), best_eval_mean=statistics.fmean(best) if best else None,
            best_eval_min=min(best) if best else None, best_eval_max=max(best) if best else None,
            steps_to_solve_median=statistics.median(steps) if steps else None,
            steps_to_solve_max=steps[-1] if steps else None, running=sum(s.status == "running" for s in summaries),
            env_steps=spread([float(_steps_trained(s)) for s in ended], sum(s.solved for s in ended)) if ended else None,
            solved_share_low=share_lower_bound(sum(s.solved for s in ended), len(ended)) if ended else None))
    return groups


def _steps_trained(s: RunSummary) -> int:
    """To solve, or for an unsolved run the env steps it trained."""
    return s.solved_at_env_steps if s.solved and s.solved_at_env_steps is not None else s.env_steps


class BestRun(BaseModel):
    env_id: str
    best: RunSummary | None = Field(description="the fastest solved run (fewest env steps), else the highest best eval")
    ranking: list[RunSummary] = Field(description="up to 5 runs, best first")
    runs_considered: int
    criterion: str
    configs: list[SeedGroup] = Field(default_factory=list, description="up to 5 configs of these runs, best first "
                                     "over their seeds: the highest lower bound of the share of seeds solved "
                                     "(solved_share_low), then the lowest median env steps to solve (an unsolved "
                                     "seed counting with the env steps it trained)")
    note: str = ""


def best_run(store: RunStore, env_id: str, algo: str | None = None) -> BestRun:
    """The best run for an environment: solved in the fewest env steps, else the highest best eval return;
    and its best configs over their seeds, which is what a user should copy (one run's speed can be its seed's)."""
    if not isinstance(env_id, str) or not env_id.strip():
        raise ValueError("env_id must be a Gymnasium id such as 'CartPole-v1'")
    summaries = [summarize_run(store, store.runs_dir / i) for i in store.run_ids()]
    mine = [s for s in summaries if s.env_id == env_id and (algo is None or s.algo == algo)]
    if not mine:
        algos = sorted({str(s.algo) for s in summaries if s.env_id == env_id and s.algo})
        if algos:  # the environment has runs, of other algorithms
            return BestRun(env_id=env_id, best=None, ranking=[], runs_considered=0, criterion="none",
                           note=f"no runs for {env_id!r} with algo {algo!r}; its runs are of {', '.join(algos)}.")
        known = sorted({s.env_id for s in summaries if s.env_id})
        close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(close)}?" if close else "."
        return BestRun(env_id=env_id, best=None, ranking=[], runs_considered=0, criterion="none",
                       note=f"no runs for {env_id!r}{' with algo ' + repr(algo) if algo else ''}{hint} "
                            f"Environments with runs: {', '.join(known) or 'none'}.")
    configs = rank_configs(group_runs(store, [store.runs_dir / s.run_id for s in mine]))
    top = configs[:TOP]
    solved = sorted((s for s in mine if s.solved and s.solved_at_env_steps is not None),
                    key=lambda s: (s.solved_at_env_steps or 0, s.solved_at_wall_seconds or 0.0))
    if solved:
        return BestRun(env_id=env_id, best=solved[0], ranking=solved[:TOP], runs_considered=len(mine),
                       criterion="solved in the fewest env steps (ties: less wall time)", configs=top,
                       note=_over_seeds(solved[0], configs))
    scored = sorted((s for s in mine if s.best_eval_return is not None), key=lambda s: -(s.best_eval_return or 0.0))
    return BestRun(env_id=env_id, best=scored[0] if scored else None, ranking=scored[:TOP], runs_considered=len(mine),
                   criterion="no run solved it; highest best eval return", configs=top,
                   note="" if scored else "no run has finished an evaluation yet")


def rank_configs(groups: list[SeedGroup]) -> list[SeedGroup]:
    """Configs with a run that ended, best first over their seeds: the lower bound of the share of seeds solved (so
    3 of 3 beats 1 of 1: more seeds are more evidence), then the median env steps to solve (unsolved seeds at what
    they trained)."""
    ended = [g for g in groups if g.env_steps is not None and g.env_steps.median is not None]

    def key(g: SeedGroup) -> tuple[float, float]:
        assert g.env_steps is not None and g.env_steps.median is not None and g.solved_share_low is not None
        return -g.solved_share_low, g.env_steps.median

    return sorted(ended, key=key)


def _over_seeds(best: RunSummary, configs: list[SeedGroup]) -> str:
    """What the best run's own config did on its other seeds, and how much evidence the best config has."""
    notes = []
    mine = next((g for g in configs if best.run_id in g.run_ids), None)
    if mine is not None and mine.env_steps is not None and mine.env_steps.seeds > 1 \
            and mine.env_steps.solved < mine.env_steps.seeds:
        notes.append(f"the best run's config ({mine.label}) solved {mine.env_steps.solved} of its "
                     f"{mine.env_steps.seeds} ended runs: its speed is partly its seed's")
    top = configs[0] if configs else None
    if top is not None and top.env_steps is not None and top.env_steps.seeds < 3:
        notes.append(f"the best config ({top.label}) has ended on {top.env_steps.seeds} seed(s): judge it over "
                     "more (start_training with seeds, or `gsolve train CONFIG --seeds 0-4`) before relying on it")
    return "; ".join(notes)
