"""Is a run significantly worse than a baseline? (``gsolve check`` and MCP ``check_run``.)

Two baselines, two tests (docs/ops.md says why):

- **A baseline run**: the evaluation at matched env steps. E is the last env step at which both
  runs have evaluated (the smaller of their last evaluations); each run's latest evaluation at or
  before E is taken (mean, std, episodes), and a one-sided Welch t-test asks whether the run's
  evaluation episodes return less than the baseline's.
- **``preset``**: steps-to-solve across seeds, at the preset's reward threshold T. Where the preset ships a
  seed sample (its env steps to solve on many seeds, ``diagnostics/seed_sample.py``), the run is ranked among
  those seeds: a conformal p-value, exact for a fresh seed whatever the distribution's shape. Otherwise the references
  are solved runs of the same environment, algorithm and threshold in the runs folder (at least 3),
  else the reference runs shipped for the preset (``gymnasium_solver/presets/references/``). The run's steps to
  solve are the env steps of its first evaluation >= T (whatever its own threshold). A one-sided
  t prediction test on log env steps asks whether the run needed more env steps than the
  references' distribution allows. A run that never reached T counts with the env steps it has
  spent, a lower bound: enough to call it worse, never enough to clear it.

Verdicts map to exit codes: 0 not worse, 3 significantly worse, 2 cannot compare (the sentence says why).
Pure reads; no torch.
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics.seed_sample import SeedSample, place, shipped_sample
from gymnasium_solver.maths import stats
from gymnasium_solver.run_store import RunFileError, RunStore, refuse_live

PRESET_BASELINE = "preset"
DEFAULT_ALPHA = 0.05


class Verdict(StrEnum):
    NOT_WORSE = "not_worse"
    WORSE = "worse"
    CANNOT_COMPARE = "cannot_compare"


# The `gsolve` exit-code table (cli_error.ExitCode, docs/cli.md): 3 = ran to its end, the answer is no.
EXIT_CODES: dict[Verdict, int] = {Verdict.NOT_WORSE: 0, Verdict.WORSE: 3, Verdict.CANNOT_COMPARE: 2}


class EvalPoint(BaseModel):
    """One evaluation of a run: what the Welch test compares."""

    run_id: str
    env_steps: int
    return_mean: float
    return_std: float = Field(description="population std of the evaluation episodes' returns, as logged")
    episodes: int


class GroupRun(BaseModel):
    """One of several runs checked together against the preset (ops/seed_check.py)."""

    run_id: str
    seed: int
    env_steps: int = Field(description="to the preset's threshold (unsolved: env steps done)")
    solved: bool


class RegressionCheck(BaseModel):
    """The answer of ``gsolve check`` / ``check_run``."""

    run_id: str
    baseline: str = Field(description="the baseline run id, or 'preset' (the preset's reference runs)")
    verdict: Verdict
    exit_code: int = Field(description="0 not worse, 3 significantly worse, 2 cannot compare")
    test: str | None = Field(default=None, description="the test used; null when nothing could be compared")
    alternative: str | None = Field(default=None, description="the one-sided alternative hypothesis")
    statistic: float | None = None
    df: float | None = Field(default=None, description="degrees of freedom of the t statistic")
    p_value: float | None = None
    alpha: float
    matched_env_steps: int | None = Field(default=None, description="run vs run: the env step both runs reached")
    run_eval: EvalPoint | None = None
    baseline_eval: EvalPoint | None = None
    run_steps_to_solve: int | None = Field(default=None, description="run vs preset: env steps of its first "
                                           "evaluation >= reference_threshold (env steps done, a lower bound, if none)")
    run_solved: bool | None = Field(default=None, description="run vs preset: reached reference_threshold")
    reference_threshold: float | None = Field(default=None, description="run vs preset: the preset's reward threshold")
    reference_steps_to_solve: list[int] = Field(default_factory=list, description="t test: the references'; "
                                                 "empty against a seed sample")
    reference_seeds: int | None = Field(default=None, description="seeds in the seed sample")
    reference_source: str | None = None
    runs: list[GroupRun] = Field(default_factory=list, description="several runs checked together")
    summary: str = Field(description="one sentence: the verdict and why")


def _cannot(run_id: str, baseline: str, alpha: float, why: str) -> RegressionCheck:
    return RegressionCheck(run_id=run_id, baseline=baseline, verdict=Verdict.CANNOT_COMPARE,
                           exit_code=EXIT_CODES[Verdict.CANNOT_COMPARE], alpha=alpha, summary=f"cannot compare: {why}")


def _evals(store: RunStore, run_dir: Path, with_std: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(env_steps, return_mean, return_std) of the run's evaluations with finite values (without ``with_std``, the
    std is not read nor required: all NaN). KeyError when the metrics have no evaluation column."""
    steps, _ = store.metric_column(run_dir, M.ENV_STEPS)
    mean, miss_m = store.metric_column(run_dir, M.EVAL_RETURN_MEAN)
    keep = ~miss_m & np.isfinite(mean) & np.isfinite(steps)
    if with_std:
        std, miss_s = store.metric_column(run_dir, M.EVAL_RETURN_STD)
        keep &= ~miss_s & np.isfinite(std)
    else:
        std = np.full_like(mean, np.nan)
    return steps[keep], mean[keep], std[keep]


def _episodes(store: RunStore, run_dir: Path) -> int:
    value = store.config(run_dir).get("eval_episodes")
    if not isinstance(value, int) or value < 1:
        raise RunFileError(f"run {run_dir.name}: config.yaml has no valid eval_episodes, so its evaluations' sizes are unknown")
    return value


def _point_at(store: RunStore, run_dir: Path, evals: tuple[np.ndarray, np.ndarray, np.ndarray], at: float) -> EvalPoint:
    steps, mean, std = evals
    i = int(np.nonzero(steps <= at)[0][-1])
    return EvalPoint(run_id=run_dir.name, env_steps=int(steps[i]), return_mean=float(mean[i]),
                     return_std=float(std[i]), episodes=_episodes(store, run_dir))


def check_against_run(store: RunStore, run_dir: Path, base_dir: Path, alpha: float = DEFAULT_ALPHA) -> RegressionCheck:
    """Welch t-test on the evaluation episodes at matched env steps (see the module docstring)."""
    run_id, base_id = run_dir.name, base_dir.name
    if run_dir == base_dir:
        return _cannot(run_id, base_id, alpha, "the run and the baseline are the same run; pass another baseline")
    info, base = store.info(run_dir), store.info(base_dir)
    if info.env_id != base.env_id:
        return _cannot(run_id, base_id, alpha, f"run {run_id} is {info.env_id} but baseline {base_id} is {base.env_id}; "
                       "returns of different environments are not comparable")
    mine, theirs = _evals(store, run_dir), _evals(store, base_dir)
    for rid, ev in ((run_id, mine), (base_id, theirs)):
        if not len(ev[0]):
            return _cannot(run_id, base_id, alpha, f"run {rid} has no evaluation yet (eval/return_mean is empty); "
                           "check again after its first evaluation")
    matched = float(min(mine[0][-1], theirs[0][-1]))
    for rid, ev in ((run_id, mine), (base_id, theirs)):
        if ev[0][0] > matched:
            return _cannot(run_id, base_id, alpha, f"run {rid}'s first evaluation (at {int(ev[0][0]):,} env steps) "
                           f"comes after the other run's last (at {int(matched):,}): there are no matched env steps")
    a, b = _point_at(store, run_dir, mine, matched), _point_at(store, base_dir, theirs, matched)
    if a.episodes < 2 or b.episodes < 2:
        return _cannot(run_id, base_id, alpha, f"a t-test needs at least 2 evaluation episodes per evaluation; run "
                       f"{a.run_id} used {a.episodes} and {b.run_id} used {b.episodes} (raise eval_episodes)")
    res = stats.welch_less(a.return_mean, stats.sample_sd(a.return_std, a.episodes), a.episodes,
                           b.return_mean, stats.sample_sd(b.return_std, b.episodes), b.episodes)
    verdict = Verdict.WORSE if res.p_value < alpha else Verdict.NOT_WORSE
    word = "significantly worse than" if verdict == Verdict.WORSE else "not significantly worse than"
    summary = (f"run {run_id} is {word} baseline {base_id} at {int(matched):,} env steps: eval return "
               f"{a.return_mean:.4g} (at {a.env_steps:,}) vs {b.return_mean:.4g} (at {b.env_steps:,}), Welch t = "
               f"{res.statistic:.3g}, df = {res.df:.3g}, one-sided p = {res.p_value:.3g} (alpha {alpha:g})")
    return RegressionCheck(run_id=run_id, baseline=base_id, verdict=verdict, exit_code=EXIT_CODES[verdict],
                           test="Welch t-test on evaluation episode returns at matched env steps",
                           alternative="the run's mean evaluation return is lower than the baseline's",
                           statistic=res.statistic, df=res.df, p_value=res.p_value, alpha=alpha,
                           matched_env_steps=int(matched), run_eval=a, baseline_eval=b, summary=summary)


class References(NamedTuple):
    steps_to_solve: list[int]
    threshold: float
    source: str


def preset_threshold(info: rf.RunInfo) -> float | None:
    """The solve definition of the run's preset (its reward threshold), else the run's own."""
    from gymnasium_solver.config import resolve_config

    try:
        return resolve_config(info.config_id).reward_threshold
    except ValueError:
        return info.reward_threshold


def preset_references(store: RunStore, info: rf.RunInfo) -> References | str:
    """Steps-to-solve at the preset's threshold: solved runs of the same environment and algorithm
    and threshold in the runs folder when there are at least MIN_STORE_REFERENCES, else the runs
    shipped for the preset (gymnasium_solver/presets/references/). A string says why there are none."""
    from gymnasium_solver.diagnostics.references import MAX_SCANNED, MIN_STORE_REFERENCES, shipped_references

    threshold = preset_threshold(info)
    if threshold is None or not math.isfinite(threshold):
        return f"the preset {info.config_id} has no finite reward threshold, so steps to solve are undefined"
    steps: list[int] = []
    for rid in reversed(store.run_ids()[-MAX_SCANNED:]):
        if rid == info.run_id:
            continue
        try:
            o = store.info(store.runs_dir / rid)
        except (RunFileError, OSError):
            continue
        if (o.solved and o.solved_at and o.env_id == info.env_id and o.algo == info.algo
                and o.reward_threshold == threshold):
            steps.append(o.solved_at.env_steps)
    if len(steps) >= MIN_STORE_REFERENCES:
        return References(sorted(steps), threshold, f"{len(steps)} solved {info.env_id} {info.algo} run(s) at "
                                                    f"threshold {threshold:g} in the runs folder")
    shipped = sorted(r.steps_to_solve for r in shipped_references(info.config_id).runs if r.steps_to_solve)
    if not shipped:
        return (f"fewer than {MIN_STORE_REFERENCES} solved {info.env_id} {info.algo} runs at threshold {threshold:g} "
                f"in the runs folder ({len(steps)}) and no reference runs shipped for {info.config_id}; train a few "
                f"seeds of it (gsolve train {info.config_id} --seed N), or compare with a baseline run (--against RUN; "
                "MCP: baseline=RUN)")
    return References(shipped, threshold, f"{len(shipped)} solved runs of the {info.config_id} preset shipped with "
                                          f"the project (gymnasium_solver/presets/references/)")


def steps_to_reach(store: RunStore, run_dir: Path, threshold: float) -> tuple[int, bool]:
    """(env steps of the run's first evaluation >= threshold, True), or (env steps done so far, False):
    a lower bound when it never got there (a run stops at its own threshold, which may be lower)."""
    try:
        steps, mean, _ = _evals(store, run_dir, with_std=False)
    except KeyError:  # a metrics file without an evaluation column: no evaluation yet
        return store.env_steps(run_dir), False
    hit = np.nonzero(mean >= threshold)[0]
    if len(hit):
        return int(steps[hit[0]]), True
    return store.env_steps(run_dir), False


def check_against_seed_sample(store: RunStore, run_dir: Path, sample: SeedSample, alpha: float) -> RegressionCheck:
    """Rank (conformal) test of the run's steps-to-solve among the preset's shipped seed sample (module docstring)."""
    run_id = run_dir.name
    steps, solved = steps_to_reach(store, run_dir, sample.reward_threshold)
    if steps <= 0:
        return _cannot(run_id, PRESET_BASELINE, alpha, f"run {run_id} has not taken any env steps yet")
    p = place(steps, sample, unsolved=not solved)
    span = (f"of {p.seeds} seeds of the preset, {p.as_slow_or_slower} needed "
            f"{'at least that many' if solved else 'more'}; median "
            f"{'-' if p.median is None else f'{p.median:,.0f}'}, slowest solved {p.slowest_solved or 0:,}"
            + (f", {p.unsolved} unsolved" if p.unsolved else "") + f" ({sample.source})")
    stat = f"rank p = (1 + {p.as_slow_or_slower}) / ({p.seeds} + 1) = {p.p_value:.3g} (alpha {alpha:g})"
    floor = ("" if 1 / (p.seeds + 1) <= alpha else
             f"; with {p.seeds} seeds no rank p can go below alpha, so this test cannot call a run worse")
    base = RegressionCheck(run_id=run_id, baseline=PRESET_BASELINE, verdict=Verdict.CANNOT_COMPARE,
                           exit_code=EXIT_CODES[Verdict.CANNOT_COMPARE],
                           test="rank (conformal) prediction test of env steps to solve among the preset's seeds",
                           alternative="the run needs more env steps to solve than a seed of the preset",
                           statistic=float(p.as_slow_or_slower), p_value=p.p_value, alpha=alpha,
                           run_steps_to_solve=steps, run_solved=solved, reference_seeds=len(sample.runs),
                           reference_threshold=sample.reward_threshold, reference_source=sample.source, summary="")
    return _preset_verdict(base, p.p_value <= alpha, f"{span}; {stat}", floor)


def check_against_preset(store: RunStore, run_dir: Path, alpha: float = DEFAULT_ALPHA) -> RegressionCheck:
    """Against the preset's shipped seed sample when there is one for its threshold (a rank test), else a t
    prediction test on log steps-to-solve against the preset's references (module docstring)."""
    run_id = run_dir.name
    info = store.info(run_dir)
    threshold = preset_threshold(info)
    if threshold is not None and math.isfinite(threshold):
        sample = shipped_sample(info.config_id, threshold)
        if isinstance(sample, SeedSample):
            return check_against_seed_sample(store, run_dir, sample, alpha)
    refs = preset_references(store, info)
    if isinstance(refs, str):
        return _cannot(run_id, PRESET_BASELINE, alpha, refs)
    ref_steps = refs.steps_to_solve
    steps, solved = steps_to_reach(store, run_dir, refs.threshold)
    if steps <= 0:
        return _cannot(run_id, PRESET_BASELINE, alpha, f"run {run_id} has not taken any env steps yet")
    try:
        res = stats.prediction_greater(math.log(steps), [math.log(s) for s in ref_steps])
    except ValueError as exc:
        return _cannot(run_id, PRESET_BASELINE, alpha, f"{exc} ({refs.source})")
    worse = res.p_value < alpha
    span = (f"the references reached {refs.threshold:g} in {ref_steps[0]:,}-{ref_steps[-1]:,} env steps "
            f"({refs.source})")
    stat = f"t = {res.statistic:.3g}, df = {res.df:g}, one-sided p = {res.p_value:.3g} (alpha {alpha:g})"
    base = RegressionCheck(run_id=run_id, baseline=PRESET_BASELINE, verdict=Verdict.CANNOT_COMPARE, exit_code=EXIT_CODES[Verdict.CANNOT_COMPARE],
                           test="t prediction test on log env steps to solve (one new run vs the references)",
                           alternative="the run needs more env steps to solve than the references",
                           statistic=res.statistic, df=res.df, p_value=res.p_value, alpha=alpha,
                           run_steps_to_solve=steps, run_solved=solved, reference_steps_to_solve=ref_steps,
                           reference_threshold=refs.threshold,
                           reference_source=refs.source, summary="")
    return _preset_verdict(base, worse, f"{span}; {stat}")


def _preset_verdict(base: RegressionCheck, worse: bool, evidence: str, floor: str = "") -> RegressionCheck:
    """``base`` (a run against the preset, verdict still open) with its verdict and summary: worse when the test
    says so; not worse when the run solved; otherwise unknown (a run that stopped before the threshold)."""
    run_id, steps, threshold = base.run_id, base.run_steps_to_solve or 0, base.reference_threshold or 0.0
    if worse:
        what = (f"reached {threshold:g} at {steps:,} env steps" if base.run_solved
                else f"has not reached {threshold:g} after {steps:,} env steps")
        return base.model_copy(update={"verdict": Verdict.WORSE, "exit_code": EXIT_CODES[Verdict.WORSE],
                                       "summary": f"run {run_id} is significantly worse than the preset: it {what}; "
                                       f"{evidence}. One run is one seed, and a slow seed of the unchanged preset "
                                       "can land here: judge a change over several seeds (`gsolve check RUN RUN ... "
                                       "--against preset`)"})
    if base.run_solved:
        return base.model_copy(update={"verdict": Verdict.NOT_WORSE, "exit_code": EXIT_CODES[Verdict.NOT_WORSE],
                                       "summary": f"run {run_id} is not significantly worse than the preset: reached "
                                       f"{threshold:g} at {steps:,} env steps; {evidence}{floor}"})
    why = (f"it stopped before reaching {threshold:g}, and its env steps are too few to call it worse "
           "(its steps to solve are unknown)")  # a live run is refused first (check_run)
    return base.model_copy(update={"summary": f"cannot compare: run {run_id} has {steps:,} env steps and {why}; "
                                              f"{evidence} on that lower bound{floor}"})


def check_run(store: RunStore, run: str, baseline: str, alpha: float = DEFAULT_ALPHA) -> RegressionCheck:
    """Compare run ``run`` against ``baseline`` (a run reference, or ``preset``). Unknown run
    references raise RunNotFoundError (a ValueError with close matches)."""
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be between 0 and 0.5 (a one-sided significance level), got {alpha}")
    run_dir = store.resolve(run)
    # A run still training has no steps to solve yet: judged now, a slow start would read as a regression.
    refuse_live(store, run_dir, "be checked")
    if baseline.strip().lower() == PRESET_BASELINE:
        return check_against_preset(store, run_dir, alpha)
    baseline_dir = store.resolve(baseline)
    refuse_live(store, baseline_dir, "be a baseline")
    return check_against_run(store, run_dir, baseline_dir, alpha)

