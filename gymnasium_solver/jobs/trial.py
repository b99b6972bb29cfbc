"""One trial as every backend sees it: what to train (``TrialSpec``), the handle of a started trial
(``TrialHandle``) and the three calls a backend answers (``TrialBackend``). backend.py and
ray_backend.py both implement it; neither imports the other."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from gymnasium_solver.contract.run_folder import RunInfo


class TrialSpec(NamedTuple):
    """What to train for one trial; the run folder records the provenance fields."""

    config_id: str
    overrides: dict[str, Any]
    parent_run_id: str
    experiment_id: str
    applied_changes: dict[str, Any]
    sweep_id: str | None = None
    trial_number: int | None = None
    use_zoo: bool = True  # False: resolve config_id without the RL Zoo's entry, as a --no-zoo parent was

    def provenance(self) -> dict[str, Any]:
        """The run.json fields that say where the trial came from (None/empty ones left out)."""
        return {k: v for k, v in (("parent_run_id", self.parent_run_id), ("experiment_id", self.experiment_id),
                                  ("applied_changes", self.applied_changes), ("sweep_id", self.sweep_id),
                                  ("trial_number", self.trial_number)) if v not in (None, "", {})}


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


class Progressed(Protocol):
    """A job's record of one trial's progress (a fix's Trial, a sweep's TrialResult)."""

    env_steps: int
    best_eval: float | None
    solved_at_env_steps: int | None
    seconds: float | None


def read_progress(into: Progressed, info: RunInfo) -> None:
    """Copy a trial's progress from its run.json: env steps, best evaluation, and, once solved, the env steps and
    trainer seconds to solve (else the trainer seconds it has run)."""
    into.env_steps = info.progress.env_steps
    into.best_eval = info.best_eval.return_mean if info.best_eval else None
    if info.solved and info.solved_at is not None:
        into.solved_at_env_steps = info.solved_at.env_steps
        into.seconds = round(info.solved_at.wall_seconds, 2)
    else:
        into.seconds = round(info.progress.wall_seconds, 2)
