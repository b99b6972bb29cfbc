"""The one trial pool: the loop every job that trains runs shares (fix experiments, sweeps, sweep checks).

A job is a policy: which trial to start next, when a running trial should stop, what a finished one
means. The pool owns the mechanics: start trials up to the backend's capacity, poll their exit codes
and run folders (through the RunStore, never torch), release a slot as soon as a trial has recorded
its end or been asked to stop (its process may still be tearing down: start-up costs overlap instead
of adding up), SIGKILL a trial that ignored SIGTERM for :data:`STOP_GRACE_SECONDS`, heartbeat the
job's record, end everything on the job's timeout or on SIGTERM/SIGINT, and never leave a trial
behind (the backends add the kernel's parent-death signal for a coordinator that is SIGKILLed).
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.backend import TrialBackend, TrialHandle, TrialSpec
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.train import run_writer
from gymnasium_solver.train.run_guards import stop_on_signals

POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 5.0  # a job's record is rewritten at least this often while it runs
STALE_SECONDS = 60.0  # a record silent this long belongs to a dead coordinator (12 missed heartbeats)
STOP_GRACE_SECONDS = 20.0  # after SIGTERM, a trial gets this long for its final evaluation before SIGKILL


class Start(NamedTuple):
    """A trial the job wants started: its key (the job's own name for it) and what to train."""

    key: Hashable
    spec: TrialSpec


class Ended(NamedTuple):
    """A trial whose process has exited, with its run folder's final word."""

    key: Hashable
    handle: TrialHandle
    info: rf.RunInfo | None  # None: no readable run.json
    exit_code: int
    stop_detail: str | None  # why the pool asked it to stop (the job's reason or the ending), else None
    ending: str | None  # the whole job's ending ("stopped: ..."), when it is ending


class Job(Protocol):
    """What a job tells the pool. Every method is called from the pool's loop, one at a time."""

    def next_start(self) -> Start | None:
        """The next trial to start now, or None (nothing left, or waiting for running trials' results)."""
        ...

    def started(self, key: Hashable, handle: TrialHandle) -> None: ...

    def start_failed(self, key: Hashable, error: str) -> None:
        """The backend refused the trial (a bad config: ValueError; the OS: OSError)."""
        ...

    def should_stop(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> str | None:
        """A reason to stop this running trial now (it cannot win, it was pruned, ...), or None."""
        ...

    def recorded(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> None:
        """The trial recorded its end in run.json; its process is still exiting (``ended`` follows). Its
        slot is free from now on, so a job whose next trial depends on this one's result decides here."""
        ...

    def ended(self, end: Ended) -> None: ...

    def skip_pending(self, why: str) -> None:
        """The job is ending: mark what it has not started as skipped (``why`` says why)."""
        ...

    def save(self) -> None:
        """Write the job's record (on every change and as the heartbeat)."""
        ...


@dataclass
class _Active:
    key: Hashable
    handle: TrialHandle
    released: bool = False  # recorded its end, or was asked to stop: its slot goes to the next trial
    released_at: float = 0.0
    stop_detail: str | None = None
    killed: bool = False


def read_info(store: RunStore, handle: TrialHandle) -> rf.RunInfo | None:
    """A trial's run.json, or None while it is unreadable (the trainer is starting)."""
    try:
        return store.info(handle.run_dir)
    except ValueError:
        return None


class TrialPool:
    """Runs one job's trials on a backend. :meth:`run` blocks until the job is done or ended."""

    def __init__(self, store: RunStore, backend: TrialBackend):
        self.store, self.backend = store, backend
        self.active: list[_Active] = []
        self.last_save = 0.0

    def running(self) -> int:
        """Trials holding a slot (not yet released)."""
        return sum(not a.released for a in self.active)

    def run(self, job: Job, timeout_seconds: float, what: str = "job") -> str | None:
        """Run ``job`` until it has nothing left to start and nothing running, or until its timeout or
        a stop signal (then its running trials are stopped gracefully and the rest skipped).
        Returns the ending ("stopped: ..."), or None when the job ran to its end."""
        deadline = time.monotonic() + timeout_seconds
        ending: str | None = None
        with stop_on_signals() as stop_requested:
            try:
                while True:
                    if ending is None and stop_requested():
                        ending = f"stopped: the {what} was stopped"
                    elif ending is None and time.monotonic() >= deadline:
                        ending = f"stopped: the {what}'s timeout of {timeout_seconds:g}s passed"
                    started = self._start_more(job) if ending is None else 0
                    if ending is not None:
                        job.skip_pending(f"not started: {ending.removeprefix('stopped: ')}")
                    if not self.active and not started:
                        break
                    self._poll(job, ending)
                    if time.monotonic() - self.last_save >= HEARTBEAT_SECONDS:
                        self._save(job)
                    time.sleep(POLL_SECONDS)
            finally:
                for a in self.active:  # only on an unexpected error: leave no trial behind
                    self.backend.stop(a.handle, force=True)
        self._save(job)
        return ending

    def _save(self, job: Job) -> None:
        job.save()
        self.last_save = time.monotonic()

    def _start_more(self, job: Job) -> int:
        n = 0
        while self.running() < self.backend.capacity:
            nxt = job.next_start()
            if nxt is None:
                break
            try:
                handle = self.backend.start(nxt.spec)
            except (ValueError, OSError) as exc:  # e.g. a value over a cross-field limit
                job.start_failed(nxt.key, f"could not start: {exc}")
            else:
                self.active.append(_Active(nxt.key, handle))
                job.started(nxt.key, handle)
            n += 1
            self._save(job)
        return n

    def _poll(self, job: Job, ending: str | None) -> None:
        """Finish the exited trials; stop those the job gives up on (or all, when ending)."""
        for a in list(self.active):
            code = self.backend.exit_code(a.handle)
            info = read_info(self.store, a.handle)  # read after the exit check: it sees the final write
            if code is not None:
                if info is not None and info.status == rf.RunStatus.RUNNING:
                    # It exited without recording its end (stopped before its trainer had started,
                    # or killed): record it, so readers do not report the trial as crashed.
                    run_writer.record_forced_stop(a.handle.run_dir, info, a.stop_detail or f"exited with code {code}")
                    info = read_info(self.store, a.handle)
                self.active.remove(a)
                job.ended(Ended(a.key, a.handle, info, code, a.stop_detail, ending))
                self._save(job)
                continue
            now = time.monotonic()
            if not a.released and info is not None and info.status != rf.RunStatus.RUNNING:
                a.released, a.released_at = True, now  # it recorded its end; the process is exiting
                job.recorded(a.key, a.handle, info)  # before its slot is refilled
            if not a.released:
                reason = ending or (job.should_stop(a.key, a.handle, info) if info is not None else None)
                if reason is not None:
                    self.backend.stop(a.handle)
                    a.released, a.released_at, a.stop_detail = True, now, reason
            elif not a.killed and now - a.released_at > STOP_GRACE_SECONDS:
                self.backend.stop(a.handle, force=True)  # ignored SIGTERM, or hung while exiting
                a.killed = True

    def stop(self, key: Hashable, reason: str) -> None:
        """Ask one running trial to stop (a job's decision taken outside should_stop)."""
        for a in self.active:
            if a.key == key and not a.released:
                self.backend.stop(a.handle)
                a.released, a.released_at, a.stop_detail = True, time.monotonic(), reason
