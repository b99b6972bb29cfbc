"""A fix trial's record entry from its run folder: its progress while it runs, its outcome when it ends, and
the line a person reads about it."""

from __future__ import annotations

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments.record import Trial
from gymnasium_solver.jobs.backend import failure_message, trial_failed
from gymnasium_solver.jobs.trial import read_progress


def trial_line(trial: Trial, done: int, total: int) -> str:
    """One line for a person: how a finished trial ended."""
    what = {"solved": f"solved at {trial.solved_at_env_steps:,} env steps" if trial.solved_at_env_steps else "solved",
            "not_solved": "not solved", "stopped_early": "stopped early", "failed": "FAILED",
            "skipped": "skipped"}.get(trial.outcome, trial.outcome)
    secs = f" in {trial.seconds:.1f}s" if trial.seconds is not None and trial.outcome != "skipped" else ""
    detail = f" ({trial.detail})" if trial.detail and trial.outcome != "solved" else ""
    run = f" [run {trial.run_id}]" if trial.run_id else ""
    seed = f" seed {trial.seed}" if trial.seed is not None else ""
    return f"[{done}/{total}] {trial.candidate}{seed}: {what}{secs}{detail}{run}"


def refresh(trial: Trial, info: rf.RunInfo | None) -> None:
    """Copy a trial's progress from its run.json into the record."""
    if info is not None:
        read_progress(trial, info)


def finish(trial: Trial, info: rf.RunInfo | None, exit_code: int, stop_detail: str | None) -> None:
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
