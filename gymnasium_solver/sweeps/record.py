"""The sweep record: ``runs/.sweeps/<sweep_id>.json``, what a sweep is (not how its trials went).

The record holds the sweep's definition (config, space, objective, trials wanted, backend, where its
Optuna study lives) and its coordinator's state (pid, status, heartbeat, a one-line message). The
trials themselves (parameters, values, states, run ids) live in the Optuna study only, in its RDB
storage (``sqlite:///<runs>/.sweeps/<sweep_id>.db`` by default): one place per fact. The folder is
hidden, so run listings never see it.
"""

from __future__ import annotations

import difflib
import re
import secrets
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from gymnasium_solver import run_folder as rf

SWEEPS_DIR = ".sweeps"
_ID_PATTERN = re.compile(r"^sweep-[0-9]{8}-[0-9]{6}-[0-9a-f]{4,}$")
RECORD_STALE_SECONDS = 60.0  # the coordinator rewrites its record at least every HEARTBEAT_SECONDS

Objective = Literal["steps", "wall"]
Backend = Literal["local", "ray"]
SweepStatus = Literal["running", "done", "failed", "crashed"]


class SweepRecord(BaseModel):
    """One sweep: what it searches, where its study lives, and whether its coordinator is alive."""

    sweep_id: str
    config_id: str
    space: dict[str, Any] = Field(description="the search space as written in the space file")
    fixed_overrides: dict[str, Any] = Field(default_factory=dict, description="--set values every trial gets")
    objective: Objective = "steps"
    n_trials: int = Field(description="trials the sweep finishes (completed, pruned or failed)")
    parallel: int = 1
    backend: Backend = "local"
    address: str | None = Field(default=None, description="the Ray cluster address (backend ray)")
    storage: str = Field(description="the Optuna RDB storage URL holding the study (study name = sweep_id)")
    timeout_seconds: float
    sampler_seed: int | None = None
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
    if not _ID_PATTERN.match(sweep_id):
        raise ValueError(f"{sweep_id!r} is not a sweep id; they look like sweep-20261126-051500-3fa9 "
                         f"(gsolve sweep and start_sweep print them)")
    return sweeps_dir(runs_dir) / f"{sweep_id}.json"


def write_record(runs_dir: Path, record: SweepRecord) -> None:
    record.updated_at = rf.utc_now_iso()
    rf.atomic_write_text(record_path(runs_dir, record.sweep_id), record.model_dump_json(indent=2), durable=False)


def list_sweep_ids(runs_dir: Path) -> list[str]:
    """Sweep ids in the runs folder, oldest first."""
    folder = sweeps_dir(runs_dir)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("sweep-*.json") if _ID_PATTERN.match(p.stem))


def resolve_sweep_id(runs_dir: Path, sweep_id: str) -> str:
    """An exact id or a unique prefix -> the id; ValueError naming close matches otherwise."""
    ids = list_sweep_ids(runs_dir)
    sweep_id = sweep_id.strip()
    matches = [i for i in ids if i == sweep_id] or [i for i in ids if sweep_id and i.startswith(sweep_id)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise ValueError(f"sweep prefix {sweep_id!r} is ambiguous: {', '.join(matches[-5:])}")
    close = difflib.get_close_matches(sweep_id, ids, n=3, cutoff=0.6)
    hint = (f"; did you mean {', '.join(close)}?" if close
            else f"; newest: {ids[-1]}" if ids else "; none have been started here (gsolve sweep or start_sweep)")
    raise ValueError(f"no sweep {sweep_id!r} in {sweeps_dir(runs_dir)}{hint}")


def read_record(runs_dir: Path, sweep_id: str) -> SweepRecord:
    """The record of ``sweep_id`` (or a unique prefix), a dead coordinator reported as crashed."""
    path = record_path(runs_dir, resolve_sweep_id(runs_dir, sweep_id))
    try:
        record = SweepRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is malformed: {exc}") from None
    return effective(record)


def effective(record: SweepRecord) -> SweepRecord:
    """A 'running' record whose coordinator is gone (dead pid, or silent too long) is 'crashed'."""
    if record.status != "running":
        return record
    dead = record.pid is not None and record.host == socket.gethostname() and not rf.pid_alive(record.pid)
    try:
        stale = time.time() - rf.parse_iso(record.updated_at) > RECORD_STALE_SECONDS
    except ValueError:
        stale = False
    if dead or stale:
        why = "its coordinator process exited" if dead else f"no update for over {RECORD_STALE_SECONDS:g}s"
        return record.model_copy(update={
            "status": "crashed",
            "message": f"crashed: {why} before it finished; continue it with gsolve sweep {record.config_id} "
                       f"--resume {record.sweep_id} (its study and trial runs are kept)"})
    return record
