"""The coordinator: runs an experiment's trials on a backend and stops the ones that cannot win.

:func:`run_experiment` starts trials up to the backend's capacity, reads each trial's progress
from its run folder through the RunStore (never torch), and rewrites the experiment record on
every start and finish (and as a heartbeat). Early stopping: once a trial has solved at S env
steps, a running trial that is past S env steps can no longer beat it and is asked to stop
(SIGTERM: a graceful stop with a final evaluation). The whole experiment is bounded by a wall-time
timeout; SIGTERM/SIGINT to the coordinator end it the same way, stopping every trial it started.
"""

from __future__ import annotations

import os
import shlex
import socket
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymnasium_solver import config as config_mod
from gymnasium_solver import run_folder as rf
from gymnasium_solver import run_writer
from gymnasium_solver.experiments.backend import (
    TrialBackend,
    TrialHandle,
    TrialSpec,
    failure_message,
    trial_failed,
)
from gymnasium_solver.experiments.parent import ParentConfig
from gymnasium_solver.experiments.record import ExperimentRecord, Trial, Winner, write_record
from gymnasium_solver.launcher import override_pairs
from gymnasium_solver.run_guards import stop_on_signals
from gymnasium_solver.run_store import RunStore

DEFAULT_TIMEOUT_SECONDS = 600.0
MAX_TIMEOUT_SECONDS = 6 * 3600.0
POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 5.0  # the record is rewritten at least this often (readers detect a dead coordinator)
STOP_GRACE_SECONDS = 20.0  # after SIGTERM, a trial gets this long for its final evaluation before SIGKILL

Progress = Callable[[str], None]


def trial_overrides(record: ExperimentRecord, trial: Trial) -> dict[str, Any]:
    """The parent's config plus the candidate's changes (today's preset instead for a pure revert to it,
    experiments/parent.py), with the parent's seed kept."""
    parent = ParentConfig(record.parent_overrides, record.drifted)
    overrides = {**parent.base_for(record.config_id, trial.changes), **trial.changes}
    if config_mod.resolve_config(record.config_id, override_pairs(overrides)).seed != record.seed:
        overrides["seed"] = record.seed
    return overrides


def train_command(config_id: str, overrides: dict[str, Any]) -> str:
    """The `gsolve train` command line that runs ``config_id`` with ``overrides``."""
    return " ".join(["gsolve", "train", config_id, *(f"--set {shlex.quote(a)}" for a in override_pairs(overrides))])


def cannot_beat(trials: list[Trial], trial: Trial) -> str | None:
    """Why ``trial`` should stop early, or None: it is past the env steps the best solved trial needed."""
    # A trial counts as solved as soon as its run.json says so, before its process has exited.
    solved = [t for t in trials if t.solved_at_env_steps is not None and t is not trial]
    if not solved or trial.solved_at_env_steps is not None:
        return None
    best = min(solved, key=lambda t: t.solved_at_env_steps or 0)
    assert best.solved_at_env_steps is not None
    if trial.env_steps > best.solved_at_env_steps:
        return f"stopped: cannot beat {best.candidate} (solved at {best.solved_at_env_steps})"
    return None


def pick_winner(record: ExperimentRecord) -> Winner | None:
    """The solved trial with the fewest env steps to solve; ties go to fewer seconds."""
    solved = [t for t in record.trials if t.outcome == "solved" and t.solved_at_env_steps is not None and t.run_id]
    if not solved:
        return None
    best = min(solved, key=lambda t: (t.solved_at_env_steps, t.seconds if t.seconds is not None else float("inf")))
    assert best.solved_at_env_steps is not None and best.run_id is not None
    return Winner(candidate=best.candidate, run_id=best.run_id, solved_at_env_steps=best.solved_at_env_steps,
                  seconds=best.seconds, changes=best.changes, set_args=best.set_args,
                  command=train_command(record.config_id, trial_overrides(record, best)))


def trial_line(trial: Trial, done: int, total: int) -> str:
    """One line for a person: how a finished trial ended."""
    what = {"solved": f"solved at {trial.solved_at_env_steps:,} env steps" if trial.solved_at_env_steps else "solved",
            "not_solved": "not solved", "stopped_early": "stopped early", "failed": "FAILED",
            "skipped": "skipped"}.get(trial.outcome, trial.outcome)
    secs = f" in {trial.seconds:.1f}s" if trial.seconds is not None and trial.outcome != "skipped" else ""
    detail = f" ({trial.detail})" if trial.detail and trial.outcome != "solved" else ""
    run = f" [run {trial.run_id}]" if trial.run_id else ""
    return f"[{done}/{total}] {trial.candidate}: {what}{secs}{detail}{run}"


def _refresh(trial: Trial, store: RunStore, run_dir: Path) -> rf.RunInfo | None:
    """Copy a trial's progress from its run.json into the record; None while it is unreadable."""
    try:
        info = store.info(run_dir)
    except ValueError:
        return None
    trial.env_steps = info.progress.env_steps
    trial.best_eval = info.best_eval.return_mean if info.best_eval else None
    if info.solved and info.solved_at is not None:
        trial.solved_at_env_steps = info.solved_at.env_steps
        trial.seconds = round(info.solved_at.wall_seconds, 2)
    else:
        trial.seconds = round(info.progress.wall_seconds, 2)
    return info


def _finish(trial: Trial, info: rf.RunInfo | None, exit_code: int, stop_detail: str | None) -> None:
    if info is not None and info.solved:
        trial.outcome, trial.detail = "solved", f"solved at {trial.solved_at_env_steps} env steps"
    elif stop_detail is not None and (info is None or info.status != rf.RunStatus.FAILED):
        trial.outcome, trial.detail = "stopped_early", stop_detail
    elif trial_failed(info, exit_code):
        trial.outcome, trial.detail = "failed", (f"{failure_message(info, exit_code)}; see `gsolve show {trial.run_id}` "
                                                 "and its run.log")
    else:
        assert info is not None  # trial_failed covers a missing run.json
        best = f", best eval {trial.best_eval:.4g}" if trial.best_eval is not None else ""
        trial.outcome, trial.detail = "not_solved", f"{info.stop_reason or info.status} after {trial.env_steps} env steps{best}"


class _Active:
    def __init__(self, handle: TrialHandle):
        self.handle = handle
        self.released_at = 0.0
        self.stop_detail: str | None = None
        self.killed = False
        # Released: the trial has recorded its end, or was asked to stop. Its process may still be
        # tearing down (final evaluation, closing envs, interpreter exit: seconds with torch), but its
        # slot goes to the next trial now, so start-up costs overlap instead of adding up.
        self.released = False


class _Coordinator:
    def __init__(self, store: RunStore, record: ExperimentRecord, backend: TrialBackend, progress: Progress | None):
        self.store, self.record, self.backend, self.progress = store, record, backend, progress
        self.pending = deque(i for i, t in enumerate(record.trials) if t.outcome == "pending")
        self.active: dict[int, _Active] = {}
        self.done = sum(1 for t in record.trials if t.outcome not in ("pending", "running"))
        self.last_write = 0.0

    def save(self) -> None:
        write_record(self.store.runs_dir, self.record)
        self.last_write = time.monotonic()

    def say(self, trial: Trial) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(trial_line(trial, self.done, len(self.record.trials)))

    def start_more(self) -> None:
        while self.pending and sum(not a.released for a in self.active.values()) < self.backend.capacity:
            i = self.pending.popleft()
            trial = self.record.trials[i]
            try:
                spec = TrialSpec(self.record.config_id, trial_overrides(self.record, trial), self.record.parent_run_id,
                                 self.record.experiment_id, trial.changes)
                handle = self.backend.start(spec)
            except (ValueError, OSError) as exc:
                trial.outcome, trial.detail = "failed", f"could not start: {exc}"
                self.say(trial)
            else:
                trial.run_id, trial.outcome = handle.run_id, "running"
                self.active[i] = _Active(handle)
            self.save()

    def poll(self, ending: str | None) -> None:
        """Refresh every running trial; finish the exited ones; stop those that cannot win (or all, when ending)."""
        for i, a in list(self.active.items()):
            trial = self.record.trials[i]
            code = self.backend.exit_code(a.handle)
            info = _refresh(trial, self.store, a.handle.run_dir)  # read after the exit check: its final write
            if code is not None:
                if info is not None and info.status == rf.RunStatus.RUNNING:
                    # It exited without recording its end (stopped before its trainer had started,
                    # or killed): record it, so readers do not report the trial as crashed.
                    run_writer.record_forced_stop(a.handle.run_dir, info, a.stop_detail or f"exited with code {code}")
                    info = _refresh(trial, self.store, a.handle.run_dir)
                _finish(trial, info, code, a.stop_detail)
                del self.active[i]
                self.say(trial)
                self.save()
                continue
            now = time.monotonic()
            if not a.released and info is not None and info.status != rf.RunStatus.RUNNING:
                a.released, a.released_at = True, now  # it recorded its end; the process is exiting
            if not a.released:
                reason = cannot_beat(self.record.trials, trial) or ending
                if reason is not None:
                    self.backend.stop(a.handle)
                    a.released, a.released_at, a.stop_detail = True, now, reason
            elif not a.killed and now - a.released_at > STOP_GRACE_SECONDS:
                self.backend.stop(a.handle, force=True)  # ignored SIGTERM, or hung while exiting
                a.killed = True

    def skip_pending(self, why: str) -> None:
        while self.pending:
            trial = self.record.trials[self.pending.popleft()]
            trial.outcome, trial.detail = "skipped", why
            self.say(trial)
        self.save()


def run_experiment(
    store: RunStore, record: ExperimentRecord, backend: TrialBackend, *, progress: Progress | None = None
) -> ExperimentRecord:
    """Run every pending trial of ``record`` on ``backend`` and return the finished record.

    Blocks until all trials have ended or ``record.timeout_seconds`` has passed (then the running
    trials are stopped and the rest skipped). ``progress`` gets one line per finished trial.
    """
    record.pid, record.host, record.status = os.getpid(), socket.gethostname(), "running"
    record.parallel = backend.capacity
    c = _Coordinator(store, record, backend, progress)
    c.save()
    deadline = time.monotonic() + record.timeout_seconds
    ending: str | None = None
    with stop_on_signals() as stop_requested:  # every trial stopped, the record finished
        try:
            while c.pending or c.active:
                if ending is None and stop_requested():
                    ending = "stopped: the experiment was stopped"
                elif ending is None and time.monotonic() >= deadline:
                    ending = f"stopped: the experiment's timeout of {record.timeout_seconds:g}s passed"
                if ending is None:
                    c.start_more()
                else:
                    c.skip_pending(f"not started: {ending.removeprefix('stopped: ')}")
                c.poll(ending)
                if time.monotonic() - c.last_write >= HEARTBEAT_SECONDS:
                    c.save()
                time.sleep(POLL_SECONDS)
        finally:
            for a in c.active.values():  # only on an unexpected error: leave no trial behind
                backend.stop(a.handle)
    record.winner = pick_winner(record)
    record.status, record.finished_at = "done", rf.utc_now_iso()
    record.message = _summary(record, ending)
    c.save()
    return record


def _summary(record: ExperimentRecord, ending: str | None) -> str:
    w = record.winner
    solved = sum(1 for t in record.trials if t.outcome == "solved")
    head = f"{solved} of {len(record.trials)} trials solved"
    if ending is not None:
        head += f" ({ending.removeprefix('stopped: ')})"
    if w is None:
        return (f"{head}; no candidate fixed run {record.parent_run_id} within its budget. Diagnose the trials "
                f"(gsolve diagnose RUN_ID) for the next step, or try your own change: "
                f"gsolve retry {record.parent_run_id} --set key=value")
    return f"{head}; best: {w.candidate} ({' '.join(w.set_args)}) solved at {w.solved_at_env_steps} env steps"
