"""Held-out seeds for a sweep's best trials (`gsolve sweep-check`).

A sweep ranks its trials on one seed, so its best trial is partly that seed's luck: on CartPole a
trial can solve at the first evaluation on seed 0 and need ten times as many env steps on the next
seeds. ``check_sweep`` re-trains the top K solved trials and the base config (the preset with the
sweep's fixed overrides) on seeds the sweep never saw, through the same trial pool as the sweep and
`gsolve fix` (jobs.pool; local processes or Ray), alternating the arms seed by seed so machine load
hits them alike. Per arm it reports the seeds solved, the median env steps and seconds, and the
spread (IQM with a bootstrap interval, jobs.seeds), an unsolved seed counting with everything it
spent; the arm with the most seeds solved, then the lowest value of the sweep's objective by the sweep's
own seed statistic (the median for a sweep of one seed per trial; its p90 or slowest seed for a sweep tuned
for the slow seeds), is the one to adopt. Each re-training is a normal run folder whose
``parent_run_id`` is the trial's run and whose ``applied_changes`` is the seed it was given.
"""

from __future__ import annotations

import socket
import statistics
import sys
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.config import env_modules
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments.commands import train_command
from gymnasium_solver.jobs import seeds as seeds_mod
from gymnasium_solver.jobs.backend import (
    TrialBackend,
    TrialHandle,
    TrialSpec,
    failure_message,
    trial_failed,
)
from gymnasium_solver.jobs.pool import Ended, Start, TrialPool
from gymnasium_solver.jobs.record import log_note, process_exited
from gymnasium_solver.launcher import reap, spawn_detached
from gymnasium_solver.maths import stats
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.record import SWEEPS_DIR, SweepRecord, format_value, sweeps_dir
from gymnasium_solver.sweeps.space import to_overrides

DEFAULT_TOP = 3
MAX_TOP = 10
DEFAULT_SEEDS = 5
MAX_RUNS = 200  # arms x seeds: each is a full training run
MAX_CHECK_SECONDS = 24 * 3600.0  # no timeout of its own: this only bounds a runaway
PRESET = "preset"
# The best arm's lead over the preset counts when a one-sided paired test on the seeds puts it below this.
LUCK_ALPHA = 0.05


class SeedRun(BaseModel):
    seed: int
    run_id: str
    solved: bool
    env_steps: int = Field(description="where it solved; unsolved: every env step it spent")
    seconds: float = Field(description="trainer seconds to the solving evaluation; unsolved: all it spent")
    outcome: str = Field(description="solved, not_solved or failed (with the reason)")


class ArmResult(BaseModel):
    name: str = Field(description="'trial #N' or 'preset' (the base config with the sweep's fixed overrides)")
    trial_number: int | None
    sweep_value: float | None = Field(description="the trial's objective on the sweep's own seed")
    overrides: dict[str, Any]
    command: str = Field(description="`gsolve train ...` for this arm (add --set seed=S)")
    runs: list[SeedRun] = Field(default_factory=list)
    solved: int = 0
    median_env_steps: float | None = None
    median_seconds: float | None = None
    spread: seeds_mod.Spread | None = Field(default=None, description="the sweep objective over the seeds (unsolved "
                                            "seeds at all they spent): IQM with its 95% bootstrap interval, extremes")
    ranked_value: float | None = Field(default=None, description="the sweep objective over the seeds by the statistic "
                                       "the arms are ranked by (SweepCheck.statistic)")


class SweepCheck(BaseModel):
    sweep_id: str
    config_id: str
    objective: str
    sweep_seed: int = Field(description="the first seed every trial of the sweep trained on")
    sweep_seeds_per_trial: int = Field(default=1, description="how many seeds each trial trained on: sweep_seed and "
                                       "the next ones")
    seeds: list[int] = Field(description="the held-out seeds each arm trained on")
    held_out: bool = Field(description="whether none of the seeds is the sweep's own")
    arms: list[ArmResult]
    statistic: str = Field(default="median", description="what ranks the arms over the seeds: the sweep's own seed "
                           "statistic when it trained each trial on several seeds, else the median")
    best: str | None = Field(description="the arm with the most seeds solved, then the lowest objective by statistic")
    vs_preset_p: float | None = Field(default=None, description="one-sided Wilcoxon signed-rank p-value that the best "
                                      "arm's objective is below the preset's on the same seeds (None when the preset "
                                      "is best)")
    verdict: str


def sweep_seed(record: SweepRecord) -> int:
    return int(config_mod.resolve_config(record.config_id, record.fixed_overrides, use_zoo=record.use_zoo).seed)


def plan_arms(record: SweepRecord, study: Any, top: int) -> list[ArmResult]:
    """The top ``top`` solved trials by the sweep's objective, then the base config. ValueError when
    no trial solved (there is nothing to check)."""
    if not 1 <= top <= MAX_TOP:
        raise ValueError(f"--top must be between 1 and {MAX_TOP}, got {top}")
    solved = [t for t in study.get_trials(deepcopy=False)
              if t.state.name == "COMPLETE" and t.value is not None and st.result_of(t).outcome == "solved"]
    if not solved:
        raise ValueError(f"sweep {record.sweep_id} has no solved trial to check yet; see its trials with gsolve "
                         f"sweep-status {record.sweep_id} (MCP get_sweep)")
    arms = []
    for t in sorted(solved, key=lambda x: x.value)[:top]:
        overrides = to_overrides(dict(t.params), record.fixed_overrides)
        arms.append(ArmResult(name=f"trial #{t.number}", trial_number=t.number, sweep_value=float(t.value),
                              overrides=overrides, command=train_command(record.config_id, overrides, record.use_zoo)))
    base = dict(record.fixed_overrides)
    arms.append(ArmResult(name=PRESET, trial_number=None, sweep_value=None, overrides=base,
                          command=train_command(record.config_id, base, record.use_zoo)))
    return arms


def _seed_run(seed: int, handle: TrialHandle, info: rf.RunInfo | None, code: int) -> SeedRun:
    if info is not None and info.solved and info.solved_at is not None:
        return SeedRun(seed=seed, run_id=handle.run_id, solved=True, env_steps=info.solved_at.env_steps,
                       seconds=round(info.solved_at.wall_seconds, 2), outcome="solved")
    if trial_failed(info, code):
        why = failure_message(info, code)
        return SeedRun(seed=seed, run_id=handle.run_id, solved=False,
                       env_steps=info.progress.env_steps if info else 0,
                       seconds=round(info.progress.wall_seconds, 2) if info else 0.0,
                       outcome=f"failed: {why}; see gsolve show {handle.run_id}")
    assert info is not None  # trial_failed covers a missing run.json
    return SeedRun(seed=seed, run_id=handle.run_id, solved=False, env_steps=info.progress.env_steps,
                   seconds=round(info.progress.wall_seconds, 2), outcome="not_solved")


def _score(arm: ArmResult, objective: str, statistic: str = "median") -> tuple[int, float]:
    value = (arm.median_env_steps if objective == "steps" else arm.median_seconds) if statistic == "median" \
        else arm.ranked_value
    return -arm.solved, float("inf") if value is None else value


def ranking_statistic(record: SweepRecord) -> str:
    """The sweep's own seed statistic when it ranked each trial on several seeds (a sweep tuned for the slow
    seeds is checked for them), else the median."""
    return record.seed_statistic if record.seeds_per_trial > 1 else "median"


def plan_check(record: SweepRecord, top: int = DEFAULT_TOP, seeds: list[int] | None = None,
               ) -> tuple[Any, list[ArmResult], list[int], int]:
    """The study, the arms, the seeds and the sweep's own seed, validated before anything trains: ValueError
    (a sentence) on a bad --top or --seeds, a sweep with nothing solved, or too many runs."""
    study = st.open_study(record, create=False)
    own = sweep_seed(record)
    # The default: the seeds after the sweep's own (all of them: a trial trained on own .. own + N - 1).
    seeds = list(seeds) if seeds else [own + record.seeds_per_trial + i for i in range(DEFAULT_SEEDS)]
    if len(set(seeds)) != len(seeds) or any(s < 0 for s in seeds):
        raise ValueError(f"seeds (--seeds) must be distinct non-negative integers, got {seeds}")
    arms = plan_arms(record, study, top)
    if len(arms) * len(seeds) > MAX_RUNS:
        raise ValueError(f"{len(arms)} arms x {len(seeds)} seeds is {len(arms) * len(seeds)} training runs; "
                         f"at most {MAX_RUNS}: use fewer --seeds or a smaller --top")
    return study, arms, seeds, own


class CheckJob:
    """The sweep check's policy for the trial pool: every arm on every seed, seed by seed (so machine
    load hits the arms alike), run to its end: keys are indices into the queue."""

    def __init__(self, store: RunStore, record: SweepRecord, arms: list[ArmResult], seeds: list[int],
                 parents: dict[int, str | None], say: Callable[[str], None]):
        self.store, self.record, self.say = store, record, say
        self.queue = [(arm, seed) for seed in seeds for arm in arms]
        self.parents, self.next, self.done = parents, 0, 0

    def next_start(self) -> Start | None:
        if self.next >= len(self.queue):
            return None
        arm, seed = self.queue[self.next]
        parent = self.parents.get(arm.trial_number) if arm.trial_number is not None else None
        spec = TrialSpec(self.record.config_id, {**arm.overrides, "seed": seed}, parent or "", "", {"seed": seed},
                         use_zoo=self.record.use_zoo)
        self.next += 1
        return Start(self.next - 1, spec)

    def started(self, key: Hashable, handle: TrialHandle) -> None:
        pass

    def start_failed(self, key: Hashable, error: str) -> None:
        arm, seed = self.queue[int(str(key))]
        arm.runs.append(SeedRun(seed=seed, run_id="-", solved=False, env_steps=0, seconds=0.0, outcome=f"failed: {error}"))
        self._said(arm, arm.runs[-1])

    def should_stop(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> str | None:
        return None  # every seed runs to its end: the check is the figure that counts

    def recorded(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> None:
        pass  # nothing waits on one run's result: it is read when its process has exited

    def ended(self, end: Ended) -> None:
        arm, seed = self.queue[int(str(end.key))]
        run = _seed_run(seed, end.handle, end.info, end.exit_code)
        arm.runs.append(run)
        self._said(arm, run)

    def _said(self, arm: ArmResult, run: SeedRun) -> None:
        self.done += 1
        how = (f"solved at {run.env_steps:,} env steps in {run.seconds:.1f}s" if run.solved
               else f"{run.outcome} after {run.env_steps:,} env steps")
        self.say(f"[{self.done}/{len(self.queue)}] {arm.name} seed {run.seed}: {how} [run {run.run_id}]")

    def skip_pending(self, why: str) -> None:
        self.next = len(self.queue)

    def save(self) -> None:
        pass  # the check is written once, at its end (write_check)


def check_sweep(store: RunStore, record: SweepRecord, backend: TrialBackend, *, top: int = DEFAULT_TOP,
                seeds: list[int] | None = None, progress: Callable[[str], None] | None = None) -> SweepCheck:
    """Train the top ``top`` solved trials and the base config on ``seeds`` (default: the
    DEFAULT_SEEDS seeds after the sweep's own) and compare them. ValueError (a sentence) on bad input."""
    study, arms, seeds, own = plan_check(record, top, seeds)
    parents = {t.number: st.result_of(t).run_id for t in study.get_trials(deepcopy=False)}
    job = CheckJob(store, record, arms, seeds, parents, progress or (lambda _line: None))
    TrialPool(store, backend).run(job, MAX_CHECK_SECONDS, "sweep check")
    statistic = ranking_statistic(record)
    for arm in arms:
        arm.runs.sort(key=lambda r: r.seed)
        arm.solved = sum(r.solved for r in arm.runs)
        if arm.runs:
            arm.median_env_steps = float(statistics.median(r.env_steps for r in arm.runs))
            arm.median_seconds = round(float(statistics.median(r.seconds for r in arm.runs)), 2)
            values = list(_objective_values(arm, record.objective).values())
            arm.spread = seeds_mod.spread(values, arm.solved)
            arm.ranked_value = seeds_mod.aggregate(values, statistic)
    best = min(arms, key=lambda a: _score(a, record.objective, statistic))
    p = _vs_preset(arms, best, record.objective)
    return SweepCheck(sweep_id=record.sweep_id, config_id=record.config_id, objective=record.objective,
                      sweep_seed=own, sweep_seeds_per_trial=record.seeds_per_trial, seeds=seeds,
                      held_out=_held_out(own, record.seeds_per_trial, seeds), arms=arms, statistic=statistic,
                      best=best.name, vs_preset_p=p, verdict=_verdict(arms, best, len(seeds), record.objective, p,
                                                                      statistic))


def _held_out(own: int, seeds_per_trial: int, seeds: list[int]) -> bool:
    """Whether none of ``seeds`` is one the sweep ranked its trials on."""
    return not set(seeds_mod.seed_list(own, seeds_per_trial)) & set(seeds)


def _objective_values(arm: ArmResult, objective: str) -> dict[int, float]:
    return {r.seed: float(r.env_steps if objective == "steps" else r.seconds) for r in arm.runs}


def _vs_preset(arms: list[ArmResult], best: ArmResult, objective: str) -> float | None:
    """The paired test of the best arm against the preset on the seeds both trained (an unsolved seed at what
    it spent): whether the best arm's lead is more than these seeds' luck."""
    preset = next(a for a in arms if a.name == PRESET)
    if best is preset:
        return None
    ours, theirs = _objective_values(best, objective), _objective_values(preset, objective)
    seeds = sorted(set(ours) & set(theirs))
    if len(seeds) < 2:
        return None
    return stats.paired_less([ours[s] for s in seeds], [theirs[s] for s in seeds]).p_value


def _verdict(arms: list[ArmResult], best: ArmResult, n: int, objective: str, p: float | None = None,
             statistic: str = "median") -> str:
    preset = next(a for a in arms if a.name == PRESET)
    unit = "env steps" if objective == "steps" else "s"

    def median(a: ArmResult) -> str:
        v = a.median_env_steps if objective == "steps" else a.median_seconds
        text = "-" if v is None else f"{format_value(v, objective)} {unit}"
        if statistic != "median" and a.ranked_value is not None:  # the figure the arms were ranked by, first
            text = f"{statistic} {format_value(a.ranked_value, objective)} {unit}, median {text}"
        return text

    if best.solved == 0:
        return f"No arm solved any of the {n} seeds: nothing here to adopt."
    if best is preset:
        return (f"The {PRESET} is at least as good on these seeds ({preset.solved}/{n} solved, "
                f"{'' if statistic != 'median' else 'median '}{median(preset)}): no trial beats it; keep the preset.")
    if p is None:
        luck = ""
    elif p < LUCK_ALPHA:
        luck = (f" Seed by seed it is below the {PRESET} beyond these seeds' luck (one-sided Wilcoxon signed-rank "
                f"p = {p:.2g}).")
    else:
        luck = (f" Seed by seed its lead over the {PRESET} may be these seeds' luck (one-sided Wilcoxon "
                f"signed-rank p = {p:.2g} >= {LUCK_ALPHA:g}): check it on more seeds before adopting it.")
    by = "" if statistic == "median" else f" by the sweep's seed statistic ({statistic})"
    return (f"{best.name} is best on these seeds{by}: {best.solved}/{n} solved, "
            f"{'' if statistic != 'median' else 'median '}{median(best)}, vs the "
            f"{PRESET}'s {preset.solved}/{n} and {median(preset)}.{luck} Reproduce: {best.command}")


def render(check: SweepCheck) -> str:
    seeds = ", ".join(str(s) for s in check.seeds)
    where = "held-out seeds" if check.held_out else "seeds (including the sweep's own, so not held out)"
    n, own = check.sweep_seeds_per_trial, check.sweep_seed
    ranked = f"seed {own}" if n == 1 else f"seeds {own}-{own + n - 1}"
    lines = [f"Sweep {check.sweep_id} ({check.config_id}, objective {check.objective}) re-trained on {where} "
             f"{seeds}; the sweep ranked its trials on {ranked}"
             + (f" by their {check.statistic}, and so are the arms here." if check.statistic != "median" else "."),
             f"{'arm':<12} {'sweep':>10} {'solved':>7} {'median env steps':>17} {'median s':>9} "
             f"{'IQM [95% CI]':>28} {'slowest (x median)':>20}  env steps by seed"]
    for a in check.arms:
        sweep = "-" if a.sweep_value is None else (format_value(a.sweep_value, check.objective)
                                                   + ("" if check.objective == "steps" else "s"))
        steps = "-" if a.median_env_steps is None else format_value(a.median_env_steps, "steps")
        secs = "-" if a.median_seconds is None else format_value(a.median_seconds, "wall")
        by_seed = " ".join(f"{r.env_steps:,}" + ("" if r.solved else "*") for r in a.runs)
        lines.append(f"{a.name:<12} {sweep:>10} {a.solved:>4}/{len(check.seeds):<2} {steps:>17} {secs:>9} "
                     f"{_interval(a.spread, check.objective):>28} {_slowest(a):>20}  {by_seed}")
    if any(not r.solved for a in check.arms for r in a.runs):
        lines.append("(* = not solved: every env step it spent)")
    base = next((a for a in check.arms if a.name == PRESET), None)
    if base is not None and base.overrides:
        fixed = " ".join(f"{k}={v}" for k, v in base.overrides.items())
        lines.append(f"({PRESET} = {check.config_id} with the sweep's fixed overrides: {fixed})")
    lines.append(check.verdict)
    return "\n".join(lines)


def _slowest(arm: ArmResult) -> str:
    """The slowest seed's env steps and its ratio to the arm's median: the spread beside the median."""
    if not arm.runs or not arm.median_env_steps:
        return "-"
    slowest = max(arm.runs, key=lambda r: (not r.solved, r.env_steps))
    return f"{slowest.env_steps:,}{'' if slowest.solved else '*'} ({slowest.env_steps / arm.median_env_steps:.1f}x)"


def _interval(sp: seeds_mod.Spread | None, objective: str) -> str:
    if sp is None or sp.iqm is None:
        return "-"
    if sp.ci_low is None or sp.ci_high is None:
        return format_value(sp.iqm, objective)
    return f"{format_value(sp.iqm, objective)} [{format_value(sp.ci_low, objective)}, {format_value(sp.ci_high, objective)}]"


def check_path(runs_dir: Path, sweep_id: str) -> Path:
    """Where the latest check of a sweep is kept, beside its record (sweep-status and get_sweep show it)."""
    return sweeps_dir(runs_dir) / f"{sweep_id}.check.json"


def write_check(runs_dir: Path, check: SweepCheck) -> None:
    """Write the check's result; a detached check's start record (``started_path``) goes with it."""
    rf.atomic_write_text(check_path(runs_dir, check.sweep_id), check.model_dump_json(indent=1))
    started_path(runs_dir, check.sweep_id).unlink(missing_ok=True)


class CheckStarted(BaseModel):
    """A detached check that has not written its result yet: its process, kept beside the sweep's record so get_sweep
    can say it is running, or that it died (a check writes its result only at its end)."""

    pid: int
    host: str
    started_at: str
    runs: int


def started_path(runs_dir: Path, sweep_id: str) -> Path:
    return sweeps_dir(runs_dir) / f"{sweep_id}.check.started.json"


def log_name(sweep_id: str) -> str:
    """A detached check's output (`gsolve sweep-check`'s stdout and stderr), in sweeps_dir."""
    return f"{sweep_id}.check.log"


def check_in_progress(runs_dir: Path, sweep_id: str) -> str | None:
    """A sentence on a detached check that has not written its result: running, or dead with its log's last line;
    None when no check was started in the background or its result is written."""
    try:
        started = CheckStarted.model_validate_json(started_path(runs_dir, sweep_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not process_exited(started.pid, started.host):
        return (f"a held-out check is running (pid {started.pid}, started {started.started_at}, {started.runs} training "
                f"runs); its result appears here when all have finished")
    log = log_note(runs_dir, SWEEPS_DIR, log_name(sweep_id))
    return (f"the held-out check started {started.started_at} crashed: its process exited before it wrote a "
            f"result{log}")


def read_check(runs_dir: Path, sweep_id: str, seeds_per_trial: int = 1) -> SweepCheck | None:
    """The sweep's latest check, or None (never run, or unreadable: a check is advice, not state).

    A check written before checks recorded how many seeds the sweep ranked on has only its first seed: it is
    read with the sweep's ``seeds_per_trial``, and ``held_out`` is worked out again over all of them (such a
    check of an N-seed sweep took the seeds after the first by default, which are the sweep's own)."""
    path = check_path(runs_dir, sweep_id)
    try:
        check = SweepCheck.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if "sweep_seeds_per_trial" not in check.model_fields_set and seeds_per_trial > 1:
        check = check.model_copy(update={"sweep_seeds_per_trial": seeds_per_trial,
                                         "held_out": _held_out(check.sweep_seed, seeds_per_trial, check.seeds)})
    return check


class CheckStart(BaseModel):
    """A sweep check started in the background (MCP check_sweep)."""

    sweep_id: str
    arms: list[str] = Field(description="the trials re-trained, and 'preset'")
    seeds: list[int]
    runs: int = Field(description="training runs it will make: arms x seeds")
    pid: int
    log: str
    note: str


def start_detached(runs_dir: Path, record: SweepRecord, arms: list[ArmResult], seeds: list[int], top: int,
                   parallel: int) -> CheckStart:
    """Start `gsolve sweep-check` in its own session; it writes the check where get_sweep reads it."""
    log = sweeps_dir(runs_dir) / log_name(record.sweep_id)
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "sweep-check", record.sweep_id, "--top", str(top),
           "--seeds", *(str(s) for s in seeds), "--parallel", str(parallel), "--runs-dir", str(Path(runs_dir).resolve()),
           *env_modules.granted_flags()]
    proc = spawn_detached(cmd, log)
    reap(proc)
    n = len(arms) * len(seeds)
    started = CheckStarted(pid=proc.pid, host=socket.gethostname(), started_at=rf.utc_now_iso(), runs=n)
    rf.atomic_write_text(started_path(runs_dir, record.sweep_id), started.model_dump_json(indent=1))
    return CheckStart(sweep_id=record.sweep_id, arms=[a.name for a in arms], seeds=seeds, runs=n, pid=proc.pid,
                      log=str(log), note=f"{n} training runs started in the background, {parallel} at a time; when "
                      f"they are done, get_sweep(sweep_id={record.sweep_id!r}) has the result under 'check' (its "
                      "'seeds' and 'arms' say which check it is), and the log says how far it got")
