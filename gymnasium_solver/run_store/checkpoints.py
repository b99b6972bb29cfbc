"""The checkpoint metadata of a run, readable without torch."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from gymnasium_solver import run_folder as rf
from gymnasium_solver.run_store.files import RunFileError, read_run_file, regular_file_size


class CheckpointInfo(BaseModel):
    name: str
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
        out.append(CheckpointInfo(name=m.name, file=m.file, file_present=size is not None,
                                  bytes=size, env_steps=m.env_steps,
                                  iteration=m.iteration, wall_seconds=m.wall_seconds,
                                  eval_return_mean=m.eval_return_mean, created_at=m.created_at))
    out.sort(key=lambda c: (c.env_steps, c.name))
    note = "; ".join(skipped[:5])
    if not out:
        note = (note + "; " if note else "") + ("no checkpoints yet: the trainer writes 'best' at the first evaluation that improves and "
                "'last' when the run ends")
    return CheckpointList(run_id=run_dir.name, checkpoints=out, note=note)

