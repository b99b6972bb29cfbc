"""The live training status of one run: progress, speed, ETA and crashed detection."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import RunStatus
from gymnasium_solver.run_store.files import RunFileError
from gymnasium_solver.run_store.store import RunStore
from gymnasium_solver.run_store.summaries import Threshold, run_threshold


class TrainingStatus(BaseModel):
    run_id: str
    status: str = Field(description="running, completed, failed, stopped or crashed (process gone)")
    stop_reason: str | None = None
    env_steps: int
    max_env_steps: int
    progress: float = Field(description="env_steps / max_env_steps, 0..1")
    iteration: int
    wall_seconds: float
    fps: float | None = Field(default=None, description="env steps per second over the last iteration")
    eta_seconds: float | None = Field(default=None, description="rough time to spend the budget at the current fps")
    heartbeat_age_seconds: float | None = Field(default=None, description="seconds since run.json was last rewritten")
    pid: int | None = None
    best_eval_return: float | None = None
    last_eval_return: float | None = None
    reward_threshold: Threshold = Field(default=None, description="'inf' when the run has no threshold to reach")
    solved: bool = False
    solved_at_env_steps: int | None = None
    failure: str | None = None
    finished: bool = Field(description="True once the run will not change any more")


def refuse_live(store: RunStore, run_dir: Path, action: str) -> None:
    """ValueError with a sentence when the run is still training (its process alive, its heartbeat fresh), which
    ``action`` (e.g. 'promote it') must not judge before the run has finished."""
    info = store.info(run_dir)
    if rf.effective_status(info) != RunStatus.RUNNING:
        return
    raise ValueError(f"run {run_dir.name} is still training ({store.env_steps(run_dir):,} of {info.max_env_steps:,} "
                     f"env steps), so it cannot {action} yet: wait until it finishes (`gsolve show {run_dir.name}` shows its "
                     f"progress; MCP: get_run_info with view='status' and wait_seconds=60, again until finished is "
                     f"true), then try again")


def training_status(store: RunStore, run_dir: Path) -> TrainingStatus:
    """Live status of a run: progress, speed, ETA, latest evaluation, and crashed detection."""
    info = store.info(run_dir)
    status = rf.effective_status(info)
    fps = None
    try:
        v = store.last_value(run_dir, rf.M.FPS)
        fps = v if v is not None and np.isfinite(v) else None
    except RunFileError:
        pass
    env_steps = store.env_steps(run_dir)
    remaining = max(info.max_env_steps - env_steps, 0)
    try:
        age = round(time.time() - rf.parse_iso(info.updated_at), 1)
    except ValueError:
        age = None
    return TrainingStatus(
        run_id=info.run_id,
        status=str(status),
        stop_reason=None if info.stop_reason is None else str(info.stop_reason),
        env_steps=env_steps,
        max_env_steps=info.max_env_steps,
        progress=round(min(env_steps / max(info.max_env_steps, 1), 1.0), 4),
        iteration=info.progress.iteration,
        wall_seconds=info.progress.wall_seconds,
        fps=fps,
        eta_seconds=round(remaining / fps, 1) if status == RunStatus.RUNNING and fps else None,
        heartbeat_age_seconds=age,
        pid=info.pid,
        best_eval_return=None if info.best_eval is None else info.best_eval.return_mean,
        last_eval_return=None if info.last_eval is None else info.last_eval.return_mean,
        reward_threshold=run_threshold(store, run_dir, info),
        solved=info.solved,
        solved_at_env_steps=None if info.solved_at is None else info.solved_at.env_steps,
        failure=None if info.failure is None else f"{info.failure.kind}: {info.failure.message}"[:1000],
        finished=status != RunStatus.RUNNING,
    )

