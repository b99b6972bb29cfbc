"""The checkpoint metadata of a run, readable without torch."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store.files import RunFileError, read_run_file, regular_file_size


class CheckpointRole(StrEnum):
    """What a checkpoint is kept for, from its name (run_folder's checkpoint names)."""

    BEST = "best"  # the best evaluation so far (`gsolve eval` default)
    LAST = "last"  # the latest state; what `gsolve train --resume` continues from
    PERIODIC = "periodic"  # step_<env_steps>: every checkpoint_freq env steps (the last keep_last_checkpoints kept)
    TOP_EVAL = "top_eval"  # eval_<env_steps>: one of the keep_best_checkpoints best evaluations
    OTHER = "other"


def checkpoint_role(name: str) -> CheckpointRole:
    if name in (rf.BEST_CHECKPOINT, rf.LAST_CHECKPOINT):
        return CheckpointRole(name)
    for prefix, role in ((rf.PERIODIC_CHECKPOINT_PREFIX, CheckpointRole.PERIODIC),
                         (rf.TOP_EVAL_CHECKPOINT_PREFIX, CheckpointRole.TOP_EVAL)):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return role
    return CheckpointRole.OTHER


class CheckpointInfo(BaseModel):
    name: str = Field(description="what `gsolve eval RUN --checkpoint NAME` takes")
    role: CheckpointRole
    rank: int | None = Field(default=None, description="top_eval checkpoints: 1 = the best evaluation return")
    file: str
    file_present: bool
    bytes: int | None = None
    env_steps: int
    iteration: int
    wall_seconds: float
    eval_return_mean: float | None = None
    created_at: str


class CheckpointList(BaseModel):
    run_id: str
    checkpoints: list[CheckpointInfo] = Field(description="ordered by env_steps")
    note: str = ""


def _read_metas(run_dir: Path, skipped: list[str]) -> list[rf.CheckpointMeta]:
    """Every readable checkpoint metadata file; why the others were skipped goes to ``skipped``."""
    try:
        names = sorted(os.listdir(run_dir / rf.CHECKPOINTS_DIR))
    except OSError:  # no checkpoints folder (yet), or it is not one: nothing to list
        return []
    out = []
    for name in names:
        if not name.endswith(rf.CHECKPOINT_META_SUFFIX):
            continue
        try:
            text = read_run_file(run_dir, f"{rf.CHECKPOINTS_DIR}/{name}").data
            out.append(rf.CheckpointMeta.model_validate_json(text))
        except RunFileError as exc:
            skipped.append(str(exc))
        except ValueError:
            skipped.append(f"run {run_dir.name}: {rf.CHECKPOINTS_DIR}/{name} is malformed and was skipped")
    return out


def list_checkpoints(run_dir: Path) -> CheckpointList:
    """Checkpoint metadata of a run (readable without torch), with whether each weights file exists."""
    out = []
    skipped: list[str] = []
    for m in _read_metas(run_dir, skipped):
        try:
            size = regular_file_size(run_dir, f"{rf.CHECKPOINTS_DIR}/{m.file}") if "/" not in m.file else None
        except RunFileError as exc:
            skipped.append(str(exc))
            size = None
        out.append(CheckpointInfo(name=m.name, role=checkpoint_role(m.name), file=m.file, file_present=size is not None,
                                  bytes=size, env_steps=m.env_steps,
                                  iteration=m.iteration, wall_seconds=m.wall_seconds,
                                  eval_return_mean=m.eval_return_mean, created_at=m.created_at))
    out.sort(key=lambda c: (c.env_steps, c.name))
    tops = sorted((c for c in out if c.role == CheckpointRole.TOP_EVAL and c.eval_return_mean is not None),
                  key=lambda c: (-(c.eval_return_mean or 0.0), c.env_steps))
    for rank, c in enumerate(tops, 1):
        c.rank = rank
    note = "; ".join(skipped[:5])
    if not out:
        note = (note + "; " if note else "") + ("no checkpoints yet: the trainer writes 'best' at the first evaluation that improves and "
                "'last' when the run ends")
    return CheckpointList(run_id=run_dir.name, checkpoints=out, note=note)

