"""Where trial runs execute: the backend interface and the local process backend.

A backend only starts, polls and stops trainer processes; what a trial achieved is read from its
run folder (the contract) by the coordinator, so every backend looks the same to it. The local
backend runs each trial as a ``gsolve train ... --run-id ID --quiet`` subprocess on this machine
(through ``launcher.start_trainer``); a Ray backend would implement the same three calls.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from gymnasium_solver import launcher


class TrialSpec(NamedTuple):
    """What to train for one trial; the run folder records the provenance fields."""

    config_id: str
    overrides: dict[str, Any]
    parent_run_id: str
    experiment_id: str
    applied_changes: dict[str, Any]


class TrialHandle(NamedTuple):
    run_id: str
    run_dir: Path
    token: Any  # backend-specific (a Popen for the local backend)


class TrialBackend(Protocol):
    """Start, poll and stop trial runs. ``capacity`` is how many can run at once."""

    capacity: int

    def start(self, spec: TrialSpec) -> TrialHandle:
        """Start a trial; its run folder exists when this returns. ValueError for a bad config."""
        ...

    def exit_code(self, handle: TrialHandle) -> int | None:
        """None while the trial's process runs, else its exit code."""
        ...

    def stop(self, handle: TrialHandle, force: bool = False) -> None:
        """Ask the trial to stop gracefully (SIGTERM: final evaluation and checkpoint), or kill it."""
        ...


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
        launch = launcher.start_trainer(
            self.runs_dir, spec.config_id, spec.overrides, parent_run_id=spec.parent_run_id,
            experiment_id=spec.experiment_id, applied_changes=spec.applied_changes,
        )
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
