"""Where trial runs execute: the backend interface, the local process backends and their lifetime rule.

A backend only starts, polls and stops trainer processes; what a trial achieved is read from its
run folder (the contract) by the coordinator, so every backend looks the same to it. The local
backend runs each trial as a ``gsolve train ... --run-id ID --quiet`` subprocess on this machine
(through ``launcher.start_trainer``); ``ray_backend.RayBackend`` implements the same three calls on Ray.

A trial never outlives its coordinator: local trials are started with the kernel's parent-death
signal (``PR_SET_PDEATHSIG``, SIGTERM: the trainer's graceful stop), so even a SIGKILLed ``gsolve fix``
or ``gsolve sweep`` leaves no trainer behind; Ray cancels the tasks of a driver that exits.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from gymnasium_solver import launcher
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.trial import TrialBackend, TrialHandle, TrialSpec  # noqa: F401 - the backend API

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with(coordinator_pid: int) -> Callable[[], None]:
    """A hook for a trial's process, run right after fork: SIGTERM it when its coordinator dies.

    SIGTERM (not SIGKILL) so the trainer records how it ended. Linux only (elsewhere a no-op: the
    coordinator's own signal handlers still stop its trials on SIGTERM/SIGINT)."""

    def hook() -> None:
        if not sys.platform.startswith("linux"):
            return
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != coordinator_pid:  # it died before the prctl: nothing would signal us
            os.kill(os.getpid(), signal.SIGTERM)

    return hook


def trial_failed(info: rf.RunInfo | None, exit_code: int) -> bool:
    """A finished trial process failed: no readable run.json, a run recorded as failed (or still
    'running' after its process ended), or an exit code other than success or a graceful stop (130)."""
    return info is None or info.status in (rf.RunStatus.FAILED, rf.RunStatus.RUNNING) or exit_code not in (0, 130)


def failure_message(info: rf.RunInfo | None, exit_code: int) -> str:
    """Why a failed trial failed: the run's own failure message, else its exit code."""
    return info.failure.message if info is not None and info.failure is not None else f"trainer exited with code {exit_code}"


def default_parallel(requested: int | None = None) -> int:
    """Trials at once: the machine's cores, capped by ``requested``."""
    cores = os.cpu_count() or 1
    if requested is None:
        return cores
    if requested < 1:
        raise ValueError(f"parallel must be at least 1, got {requested}")
    return min(cores, requested)


class LocalProcessBackend:
    """Trials as local ``gsolve train`` processes, each in its own session (process group)."""

    def __init__(self, runs_dir: Path, capacity: int | None = None):
        self.runs_dir = Path(runs_dir)
        self.capacity = default_parallel(capacity)

    def start(self, spec: TrialSpec) -> TrialHandle:
        launch = launcher.start_trainer(self.runs_dir, spec.config_id, spec.overrides, **spec.provenance(),
                                        use_zoo=spec.use_zoo,
                                        preexec=die_with(os.getpid()))
        return TrialHandle(launch.run_id, launch.run_dir, launch.proc)

    def exit_code(self, handle: TrialHandle) -> int | None:
        proc: subprocess.Popen[bytes] = handle.token
        return proc.poll()

    def stop(self, handle: TrialHandle, force: bool = False) -> None:
        proc: subprocess.Popen[bytes] = handle.token
        if proc.poll() is not None:
            return
        try:
            if force:
                os.killpg(proc.pid, signal.SIGKILL)  # the trainer and its env workers
            else:
                # The trainer only: its env workers must live until its final evaluation is done.
                proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass


class ForkBackend:
    """Trials as children forked from this process after it has imported the trainer once.

    Same contract as :class:`LocalProcessBackend` (a pre-created run folder, a process per trial in
    its own session, SIGTERM for a graceful stop), without paying the trainer's import (torch,
    gymnasium: 3-12 s on 2 cores) again in every trial: a forked child starts training at once.
    POSIX only; the MCP server never uses it (it would import torch): ``gsolve fix`` does, in its own
    process. Fork happens before any torch thread pool starts in this process (it never trains).
    """

    def __init__(self, runs_dir: Path, capacity: int | None = None):
        import gymnasium_solver.train.training  # noqa: F401 - the import every child then shares

        self.runs_dir = Path(runs_dir)
        self.capacity = default_parallel(capacity)
        self._codes: dict[int, int] = {}

    def start(self, spec: TrialSpec) -> TrialHandle:
        prov = spec.provenance()
        prep = launcher.prepare_run(self.runs_dir, spec.config_id, spec.overrides, **prov, use_zoo=spec.use_zoo)
        log = os.open(prep.run_dir / "run.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        hook = die_with(os.getpid())
        pid = os.fork()
        if pid == 0:  # the trial: its own session, output into run.log, never returns
            code = 1
            try:
                os.setsid()
                os.dup2(log, 1)
                os.dup2(log, 2)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                hook()  # after the reset: a SIGTERM from here on is the trainer's graceful stop
                from gymnasium_solver.train.training import train

                train(prep.config, prep.run_dir.parent, run_id=prep.run_id, parent_run_id=prov.get("parent_run_id"),
                      experiment_id=prov.get("experiment_id"), applied_changes=prov.get("applied_changes"),
                      overrides=spec.overrides)
                code = 0
            finally:
                os._exit(code)
        os.close(log)
        return TrialHandle(prep.run_id, prep.run_dir, pid)

    def exit_code(self, handle: TrialHandle) -> int | None:
        pid: int = handle.token
        if pid in self._codes:
            return self._codes[pid]
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return self._codes.setdefault(pid, 1)
        if done == 0:
            return None
        self._codes[pid] = os.waitstatus_to_exitcode(status)
        return self._codes[pid]

    def stop(self, handle: TrialHandle, force: bool = False) -> None:
        pid: int = handle.token
        if self.exit_code(handle) is not None:
            return
        try:
            if force:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


BACKENDS = ("local", "ray")


def make_backend(runs_dir: Path, capacity: int | None = None, kind: str = "local",
                 address: str | None = None) -> TrialBackend:
    """``local``: the fastest local backend this platform has (forked trials where fork exists, else
    processes); ``ray``: Ray tasks on the cluster at ``address`` (None: a local Ray instance)."""
    if kind not in BACKENDS:
        raise ValueError(f"unknown backend {kind!r}; use one of {', '.join(BACKENDS)}")
    if kind == "ray":
        from gymnasium_solver.jobs.ray_backend import RayBackend

        return RayBackend(runs_dir, capacity, address)
    if address is not None:
        raise ValueError("--address is for --backend ray (the Ray cluster to join)")
    if hasattr(os, "fork"):
        return ForkBackend(runs_dir, capacity)
    return LocalProcessBackend(runs_dir, capacity)
