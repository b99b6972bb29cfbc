"""The sweep record: ``runs/.sweeps/<sweep_id>.json``, what a sweep is (not how its trials went).

The record holds the sweep's definition (config, space, objective, trials wanted, backend, where its
Optuna study lives) and its coordinator's state (pid, status, heartbeat, a one-line message). The
trials themselves (parameters, values, states, run ids) live in the Optuna study only, in its RDB
storage (``sqlite:///<runs>/.sweeps/<sweep_id>.db`` by default): one place per fact. The folder is
hidden, so run listings never see it.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.record import JobKind, JobStatus, coordinator_gone, log_note
from gymnasium_solver.jobs.seeds import SeedStatistic

SWEEPS_DIR = ".sweeps"
KIND = JobKind(noun="sweep", folder=SWEEPS_DIR, pattern=r"^sweep-[0-9]{8}-[0-9]{6}-[0-9a-f]{4,}$",
               example="sweep-20261126-051500-3fa9", start_hint="gsolve sweep or start_sweep")

Objective = Literal["steps", "wall"]
Backend = Literal["local", "ray"]
SweepStatus = JobStatus


def format_value(value: float, objective: str) -> str:
    """An objective's value as the sweep commands print it: env steps whole, seconds to two decimals (a CartPole
    seed solves in about one second, which a whole number hides)."""
    return f"{value:,.0f}" if objective == "steps" else f"{value:,.2f}"


class SweepRecord(BaseModel):
    """One sweep: what it searches, where its study lives, and whether its coordinator is alive."""

    sweep_id: str
    config_id: str
    space: dict[str, Any] = Field(description="the search space as written in the space file")
    fixed_overrides: dict[str, Any] = Field(default_factory=dict, description="--set values every trial gets")
    use_zoo: bool = Field(default=True, description="false: every trial takes gsolve's defaults where the RL Zoo "
                          "has an entry for the env (--no-zoo)")
    objective: Objective = "steps"
    n_trials: int = Field(description="trials the sweep finishes (completed, pruned or failed)")
    parallel: int = 1
    backend: Backend = "local"
    address: str | None = Field(default=None, description="the Ray cluster address (backend ray)")
    storage: str = Field(description="the Optuna RDB storage URL holding the study (study name = sweep_id)")
    timeout_seconds: float
    sampler_seed: int | None = None
    seeds_per_trial: int = Field(default=1, description="runs per trial, on the config's seed and the next ones")
    seed_statistic: SeedStatistic = Field(default="p90", description="a trial's value over its seeds (unsolved "
                                          "seeds at their budget): p90 by default, so the slow seeds count")
    status: SweepStatus = "running"
    created_at: str
    updated_at: str
    finished_at: str | None = None
    pid: int | None = None
    host: str | None = None
    resumes: int = Field(default=0, description="how often --resume continued it")
    message: str = ""


def sweeps_dir(runs_dir: Path) -> Path:
    return Path(runs_dir) / SWEEPS_DIR


def new_sweep_id(now: datetime | None = None) -> str:
    """Sortable and unique, e.g. ``sweep-20261126-051500-3fa9``."""
    now = now or datetime.now(UTC)
    return f"sweep-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def default_storage(runs_dir: Path, sweep_id: str) -> str:
    """SQLite inside the runs folder, one database per sweep (no lock shared between sweeps)."""
    return f"sqlite:///{(sweeps_dir(Path(runs_dir).resolve()) / f'{sweep_id}.db').as_posix()}"


def record_path(runs_dir: Path, sweep_id: str) -> Path:
    return KIND.path(runs_dir, sweep_id)


def write_record(runs_dir: Path, record: SweepRecord) -> None:
    record.updated_at = rf.utc_now_iso()
    KIND.write(runs_dir, record.sweep_id, record)


def list_sweep_ids(runs_dir: Path) -> list[str]:
    """Sweep ids in the runs folder, oldest first."""
    return KIND.list_ids(runs_dir)


def resolve_sweep_id(runs_dir: Path, sweep_id: str) -> str:
    """An exact id or a unique prefix -> the id; ValueError naming close matches otherwise."""
    return KIND.resolve(runs_dir, sweep_id)


def log_name(sweep_id: str) -> str:
    """The coordinator's output (a detached one's: `gsolve sweep --resume`'s stdout and stderr), in sweeps_dir."""
    return f"{sweep_id}.log"


def read_record(runs_dir: Path, sweep_id: str) -> SweepRecord:
    """The record of ``sweep_id`` (or a unique prefix), a dead coordinator reported as crashed."""
    return effective(KIND.read(runs_dir, sweep_id, SweepRecord), runs_dir)


def effective(record: SweepRecord, runs_dir: Path | None = None) -> SweepRecord:
    """A 'running' record whose coordinator is gone (dead pid, or silent too long) is 'crashed'; with
    ``runs_dir``, the message says where its log is and what it said last."""
    why = coordinator_gone(record.status, record.pid, record.host, record.updated_at)
    if why is None:
        return record
    log = "" if runs_dir is None else log_note(runs_dir, SWEEPS_DIR, log_name(record.sweep_id))
    return record.model_copy(update={
        "status": "crashed",
        "message": f"crashed: {why} before it finished{log}; continue it with gsolve sweep {record.config_id} "
                   f"--resume {record.sweep_id} (its study and trial runs are kept)"})
