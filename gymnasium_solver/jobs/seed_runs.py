"""`gsolve train CONFIG --seeds ...`: one config trained on several seeds through the trial pool, and judged over
them. One seed's result is one draw; this is the count, the middle and the slowest of several, with an
interval from ``jobs.seeds`` (scipy's bootstrap of the interquartile mean). The runs are ordinary runs of the
config (no experiment or sweep: `gsolve runs` lists them, `gsolve compare` groups them).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, RootModel

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.pool import Ended, Start, TrialPool
from gymnasium_solver.jobs.seeds import Spread, spread
from gymnasium_solver.jobs.trial import TrialBackend, TrialHandle, TrialSpec
from gymnasium_solver.run_store import RunDetails, RunStore

MAX_SEEDS = 200  # one command line; more is a sweep's or a script's job


class SeedRun(BaseModel):
    seed: int
    run_id: str | None = Field(default=None, description="None: the run never started (see outcome)")
    outcome: str = Field(description="solved, not solved, failed, stopped, or why it did not start")
    solved: bool = False
    env_steps: int | None = Field(default=None, description="to solve; unsolved: the env steps it trained")
    wall_seconds: float | None = Field(default=None, description="to solve (environment creation to the solving "
                                       "evaluation); unsolved: the whole run")
    best_eval: float | None = None


class SeedRuns(BaseModel):
    """`gsolve train CONFIG --seeds ... --json`: every seed's run and the config's result over them."""

    config_id: str
    reward_threshold: float | None
    runs: list[SeedRun]
    env_steps: Spread = Field(description="env steps to solve over the seeds that finished, an unsolved seed "
                              "counting with the env steps it trained (at least its budget)")
    stopped: str | None = Field(default=None, description="why the seeds stopped before all had run (Ctrl-C)")
    vs_preset: str | None = Field(default=None, description="the runs against the preset's shipped seed sample (a "
                                  "Mann-Whitney U test, `gsolve check RUN... --against preset`); None where the "
                                  "preset ships none or fewer than 2 seeds finished")

    def finished(self) -> list[SeedRun]:
        """The seeds whose run ended solved or at its budget: what ``env_steps`` is taken over."""
        return _finished(self.runs)


def _finished(runs: list[SeedRun]) -> list[SeedRun]:
    return [r for r in runs if r.env_steps is not None and r.outcome in ("solved", "not solved")]


def _seed(key: Hashable) -> int:
    assert isinstance(key, int)  # the job's keys are its seeds
    return key


class TrainOutput(RootModel[RunDetails | SeedRuns]):
    """What `gsolve train --json` prints: the finished run's RunDetails, or with --seeds the SeedRuns."""


class _SeedJob:
    """The pool's policy: every seed once, in order, none stopped early (each seed is a measurement)."""

    def __init__(self, config_id: str, overrides: dict[str, Any], seeds: list[int], use_zoo: bool,
                 on_end: Callable[[SeedRun, int, int], None]):
        self.pending = list(seeds)
        self.specs = {s: TrialSpec(config_id, {**overrides, "seed": s}, "", "", {}, use_zoo=use_zoo) for s in seeds}
        self.results: dict[int, SeedRun] = {}
        self.total, self.finished = len(seeds), 0  # finished: ended or refused, not skipped
        self.on_end = on_end

    def next_start(self) -> Start | None:
        if not self.pending:
            return None
        seed = self.pending.pop(0)
        return Start(seed, self.specs[seed])

    def started(self, key: Hashable, handle: TrialHandle) -> None:
        self.results[_seed(key)] = SeedRun(seed=_seed(key), run_id=handle.run_id, outcome="running")

    def start_failed(self, key: Hashable, error: str) -> None:
        self._done(SeedRun(seed=_seed(key), outcome=error))

    def should_stop(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> str | None:
        return None

    def recorded(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> None:
        pass

    def ended(self, end: Ended) -> None:
        seed, info = _seed(end.key), end.info
        run = SeedRun(seed=seed, run_id=end.handle.run_id, outcome=f"failed (exit code {end.exit_code})")
        if info is not None:
            solved = info.solved_at is not None
            if solved:
                run.outcome = "solved"
            elif info.status == rf.RunStatus.COMPLETED:
                run.outcome = "not solved"
            elif info.status == rf.RunStatus.STOPPED:
                run.outcome = "stopped"
            else:
                run.outcome = "failed" + (f": {info.failure.message}" if info.failure is not None else "")
            run.solved = solved
            run.env_steps = info.solved_at.env_steps if info.solved_at is not None else info.progress.env_steps
            run.wall_seconds = info.solved_at.wall_seconds if info.solved_at is not None else info.progress.wall_seconds
            run.best_eval = info.best_eval.return_mean if info.best_eval is not None else None
        self._done(run)

    def _done(self, run: SeedRun) -> None:
        self.results[run.seed] = run
        self.finished += 1
        self.on_end(run, self.finished, self.total)

    def skip_pending(self, why: str) -> None:
        for seed in self.pending:
            self.results[seed] = SeedRun(seed=seed, outcome=why)
        self.pending = []

    def save(self) -> None:
        pass  # nothing to resume: the runs themselves are the record


def check_seeds(seeds: list[int]) -> list[int]:
    """The seeds of one `train --seeds`: at least one, none negative or repeated, at most MAX_SEEDS."""
    if not seeds:
        raise ValueError("--seeds needs at least one seed, e.g. --seeds 0-9")
    if min(seeds) < 0:
        raise ValueError(f"seeds must be >= 0, got {min(seeds)}")
    repeated = sorted(s for s, n in Counter(seeds).items() if n > 1)
    if repeated:
        raise ValueError(f"seed {repeated[0]} is given twice; each seed trains once")
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"{len(seeds)} seeds: at most {MAX_SEEDS} in one command (a sweep tunes over more)")
    return seeds


def train_seeds(backend: TrialBackend, runs_dir: Path, config_id: str, overrides: dict[str, Any], seeds: list[int],
                use_zoo: bool, reward_threshold: float | None,
                on_end: Callable[[SeedRun, int, int], None] = lambda run, done, total: None) -> SeedRuns:
    """Train ``config_id`` with ``overrides`` once per seed, ``backend.capacity`` at a time, until all have ended or
    the process is asked to stop (SIGINT/SIGTERM: the running seeds stop gracefully, the rest are not started)."""
    job = _SeedJob(config_id, overrides, seeds, use_zoo, on_end)
    ending = TrialPool(RunStore(runs_dir), backend).run(job, timeout_seconds=math.inf, what="training over seeds")
    runs = [job.results.get(s, SeedRun(seed=s, outcome="not started")) for s in seeds]
    finished = _finished(runs)
    return SeedRuns(config_id=config_id, reward_threshold=reward_threshold, runs=runs,
                    env_steps=spread([float(r.env_steps or 0) for r in finished], sum(r.solved for r in finished)),
                    stopped=ending)
