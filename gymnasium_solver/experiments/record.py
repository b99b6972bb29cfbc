"""The experiment record: ``runs/.experiments/<experiment_id>.json``, its schema, writer and reader.

One JSON file per experiment, rewritten atomically by the coordinator whenever a trial starts or
finishes, so any process (``gsolve fix --json``, the MCP tool ``get_experiment``) can read it at
any time. The folder is hidden (its name starts with a dot), so run listings never see it.
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
from gymnasium_solver.experiments.candidates import Candidate

EXPERIMENTS_DIR = ".experiments"
_ID_PATTERN = re.compile(r"^fix-[0-9]{8}-[0-9]{6}-[0-9a-f]{4,}$")
# A coordinator rewrites its record at least this often while it runs (see runner.POLL_SECONDS).
RECORD_STALE_SECONDS = 60.0

TrialOutcome = Literal["pending", "running", "solved", "not_solved", "stopped_early", "failed", "skipped"]
ExperimentStatus = Literal["running", "done", "failed", "crashed"]


class Trial(BaseModel):
    """One trial run of one candidate."""

    candidate: str = Field(description="the candidate's name")
    changes: dict[str, Any] = Field(description="the candidate's config changes over the parent's overrides")
    set_args: list[str] = Field(description="the changes as --set arguments")
    run_id: str | None = Field(default=None, description="the trial's run folder (None until started)")
    outcome: TrialOutcome = "pending"
    detail: str = Field(default="", description="why it ended, e.g. 'stopped: cannot beat trial 1 (solved at 12288)'")
    env_steps: int = Field(default=0, description="env steps the trial ran")
    solved_at_env_steps: int | None = Field(default=None, description="env steps to solve (None unless solved)")
    seconds: float | None = Field(
        default=None, description="trainer seconds to solve when solved, else the trainer seconds it ran")
    best_eval: float | None = Field(default=None, description="best evaluation return")


class Winner(BaseModel):
    """The trial that solved in the fewest env steps (ties: fewer seconds)."""

    candidate: str
    run_id: str
    solved_at_env_steps: int
    seconds: float | None
    changes: dict[str, Any]
    set_args: list[str] = Field(description="the winning changes as --set arguments")
    command: str = Field(description="`gsolve train ...` that reproduces the winning trial (parent's overrides included)")


class ExperimentRecord(BaseModel):
    """The state of one fix experiment: its candidates, their trials and the winner."""

    experiment_id: str
    kind: Literal["fix"] = "fix"
    parent_run_id: str
    config_id: str
    seed: int
    parent_overrides: dict[str, Any] = Field(description="the parent's config as overrides: its own, plus the "
                                             "keys its preset has changed since (experiments/parent.py)")
    drifted: list[str] = Field(default_factory=list, description="the keys of parent_overrides the parent did not "
                               "set, which its preset has changed since; a pure revert to the preset drops them")
    status: ExperimentStatus = "running"
    created_at: str
    updated_at: str
    finished_at: str | None = None
    pid: int | None = Field(default=None, description="the coordinator process (gsolve fix)")
    host: str | None = None
    parallel: int = Field(default=1, description="trials run at once")
    timeout_seconds: float
    candidates: list[Candidate]
    trials: list[Trial]
    winner: Winner | None = None
    message: str = Field(default="", description="one line: how the experiment ended, or what it is doing")


def experiments_dir(runs_dir: Path) -> Path:
    return Path(runs_dir) / EXPERIMENTS_DIR


def new_experiment_id(now: datetime | None = None) -> str:
    """Sortable and unique, e.g. ``fix-20261125-221900-3fa9``."""
    now = now or datetime.now(UTC)
    return f"fix-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def record_path(runs_dir: Path, experiment_id: str) -> Path:
    if not _ID_PATTERN.match(experiment_id):
        raise ValueError(f"{experiment_id!r} is not an experiment id; they look like fix-20261125-221900-3fa9 "
                         f"(try_fixes / gsolve fix print them)")
    return experiments_dir(runs_dir) / f"{experiment_id}.json"


def write_record(runs_dir: Path, record: ExperimentRecord) -> None:
    record.updated_at = rf.utc_now_iso()
    rf.atomic_write_text(record_path(runs_dir, record.experiment_id), record.model_dump_json(indent=2), durable=False)


def list_experiment_ids(runs_dir: Path) -> list[str]:
    """Experiment ids in the runs folder, oldest first."""
    folder = experiments_dir(runs_dir)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("fix-*.json") if _ID_PATTERN.match(p.stem))


def read_record(runs_dir: Path, experiment_id: str) -> ExperimentRecord:
    """The record of ``experiment_id`` (or a unique prefix), with a dead coordinator reported as crashed.

    Raises ValueError naming close matches for an unknown id.
    """
    ids = list_experiment_ids(runs_dir)
    experiment_id = experiment_id.strip()
    matches = [i for i in ids if i == experiment_id] or [i for i in ids if i.startswith(experiment_id)]
    if len(matches) != 1:
        if len(matches) > 1:
            raise ValueError(f"experiment prefix {experiment_id!r} is ambiguous: {', '.join(matches[-5:])}")
        close = difflib.get_close_matches(experiment_id, ids, n=3, cutoff=0.6)
        hint = (f"; did you mean {', '.join(close)}?" if close
                else f"; newest: {ids[-1]}" if ids else "; none have been started here (start one with try_fixes or gsolve fix)")
        raise ValueError(f"no experiment {experiment_id!r} in {experiments_dir(runs_dir)}{hint}")
    path = record_path(runs_dir, matches[0])
    try:
        record = ExperimentRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is malformed: {exc}") from None
    return _effective(record)


def _effective(record: ExperimentRecord) -> ExperimentRecord:
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
        return record.model_copy(update={"status": "crashed", "message": f"crashed: {why} before it finished; "
                                         f"its trials' run folders hold what was done"})
    return record
