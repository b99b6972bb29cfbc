"""Which run can be resumed, from which checkpoint, and starting a resume in the background.

Torch-free (the MCP server imports it): the refusals are decided here from run.json, config.yaml
and the checkpoints' metadata, before any trainer starts; the trainer (``training.resume``) asks
the same question again under the run folder's lock. See docs/resume.md.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from pydantic import BaseModel, Field

from gymnasium_solver.config import NATIVE_ALGOS, Config, ConfigError, config_from_yaml_text, env_modules
from gymnasium_solver.config.presets import override_pairs
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store.files import RunFileError, regular_file_size

PERIODIC_PREFIX = rf.PERIODIC_CHECKPOINT_PREFIX  # declared once, in the run-folder contract


class ResumePlan(NamedTuple):
    """A run that may be resumed and the checkpoint it continues from."""

    run_dir: Path
    info: rf.RunInfo
    config: Config
    checkpoint: rf.CheckpointMeta
    checkpoint_path: Path


def _latest_resumable_checkpoint(run_dir: Path) -> rf.CheckpointMeta | None:
    """``last`` or the newest periodic checkpoint, whichever has more env steps (``best`` holds no
    optimizer or RNG state and is never resumed from)."""
    candidates = [
        m for m in rf.read_checkpoint_metas(run_dir)
        if (m.name == rf.LAST_CHECKPOINT or m.name.startswith(PERIODIC_PREFIX)) and _regular_checkpoint(run_dir, m.file)
    ]
    return max(candidates, key=lambda m: (m.env_steps, m.name == rf.LAST_CHECKPOINT), default=None)


def next_step_after_failure(run_dir: Path, config: Config, overrides: Mapping[str, Any]) -> str:
    """What to do once the cause of a failure outside the run (a full disk) is fixed: resume it when it has
    a checkpoint a resume would take, else start it again with the same settings, said as a command."""
    try:
        meta = _latest_resumable_checkpoint(run_dir) if config.algo in NATIVE_ALGOS else None
    except (OSError, ValueError):
        meta = None  # unreadable checkpoint metadata on a failing disk: nothing a resume could take
    if meta is not None and meta.env_steps < config.max_env_steps:
        return (f"continue the run with `gsolve train --resume {run_dir.name}` (from its checkpoint {meta.name} at "
                f"{meta.env_steps:,} env steps)")
    return f"start it again with `gsolve train {config.config_id}{_sets(overrides)}`: it has no checkpoint to resume from"


def _sets(overrides: Mapping[str, Any]) -> str:
    return "".join(f" --set {shlex.quote(pair)}" for pair in override_pairs(dict(overrides)))


def _regular_checkpoint(run_dir: Path, file: str) -> bool:
    """True if ``checkpoints/<file>`` is a regular file inside the run folder (a name, not a path or a link)."""
    if "/" in file or file.startswith("."):
        return False
    try:
        return regular_file_size(run_dir, f"{rf.CHECKPOINTS_DIR}/{file}") is not None
    except RunFileError:
        return False


def _refuse_links(run_dir: Path) -> None:
    """A resume reads and appends to the run's files: each must be the regular file the trainer
    wrote, never a link out of the folder. RunFileError (a ValueError) names the file and what to do."""
    for name in (rf.RUN_JSON, rf.CONFIG_YAML, rf.METRICS_CSV, rf.RUN_LOG):
        regular_file_size(run_dir, name)


def plan_resume(run_dir: Path) -> ResumePlan:
    """Check that ``run_dir`` can be resumed and choose its checkpoint. ValueError says why not:
    the run is still running, it is completed (solved or out of budget), it has no resumable
    checkpoint, or its config.yaml no longer validates."""
    name = run_dir.name
    _refuse_links(run_dir)
    try:
        info = rf.read_run_info(run_dir)
    except FileNotFoundError:
        raise ValueError(f"{name} has no run.json: not a run folder, nothing to resume") from None
    rf.refuse_read_only(info, "resume training")
    status = rf.effective_status(info)
    if status == rf.RunStatus.RUNNING:
        raise ValueError(f"run {name} is still running (pid {info.pid}, last heartbeat {info.updated_at}); "
                         "stop it first (stop_training / SIGTERM), then resume it")
    if info.solved or status == rf.RunStatus.COMPLETED:
        why = "it solved the environment" if info.solved else f"it ended {info.stop_reason or 'normally'}"
        raise ValueError(f"run {name} is completed ({why}); nothing to resume. To train further, start a new "
                         "run (e.g. with a larger max_env_steps)")
    try:
        config = config_from_yaml_text((run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8"),
                                       f"{name}/{rf.CONFIG_YAML}")
    except FileNotFoundError:
        raise ValueError(f"run {name} has no {rf.CONFIG_YAML}; it never started training, nothing to resume") from None
    except (ConfigError, yaml.YAMLError) as exc:
        raise ValueError(f"run {name} cannot be resumed: its config no longer validates: {exc}") from None
    if config.algo not in NATIVE_ALGOS:
        raise ValueError(f"run {name} cannot be resumed: it trained {config.algo} through Stable-Baselines3, whose "
                         "checkpoints hold the weights but not the replay buffer or rollout state a resume needs; "
                         f"start a new run instead (`gsolve train {config.config_id}`)")
    env_modules.require_config(config)  # its --env-package/--env-class, before the run is touched
    meta = _latest_resumable_checkpoint(run_dir)
    if meta is None:
        best = (" (its best checkpoint holds only what evaluation needs)"
                if (run_dir / rf.CHECKPOINTS_DIR / f"{rf.BEST_CHECKPOINT}{rf.CHECKPOINT_SUFFIX}").exists() else "")
        raise ValueError(f"run {name} has no checkpoint to resume from: no checkpoints/last.pt or step_*.pt{best}; "
                         f"it ended after {info.progress.wall_seconds:.0f} s of training, before its first `last`, "
                         f"which is written every last_checkpoint_seconds={config.last_checkpoint_seconds:g} s; "
                         f"start it again instead: `gsolve train {config.config_id}{_sets(info.overrides)}`")
    if meta.env_steps >= config.max_env_steps:
        raise ValueError(f"run {name}'s checkpoint {meta.name} is at {meta.env_steps} env steps, its whole budget "
                         f"({config.max_env_steps}); nothing left to train")
    return ResumePlan(run_dir, info, config, meta, run_dir / rf.CHECKPOINTS_DIR / meta.file)


class ResumeStart(BaseModel):
    run_id: str
    pid: int
    from_checkpoint: str = Field(description="the checkpoint training continues from")
    at_env_steps: int = Field(description="env steps of that checkpoint; metrics rows after it are replaced")
    at_iteration: int
    max_env_steps: int
    previous_status: str
    note: str = Field(description="what to call next")


def start_resume(run_dir: Path) -> ResumeStart:
    """Check ``run_dir`` (:func:`plan_resume`; ValueError says why it cannot be resumed) and start
    ``gsolve train --resume RUN --quiet`` detached, appending to its run.log. Returns at once."""
    from gymnasium_solver.launcher import (  # not at import: the trainer imports this module
        reap,
        spawn_detached,
    )

    plan = plan_resume(run_dir)
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "train", "--resume", run_dir.name,
           *env_modules.flags_for(plan.config),  # refused here unless this process was granted them
           "--runs-dir", str(run_dir.parent), "--quiet", "--no-fail"]
    proc = spawn_detached(cmd, run_dir / rf.RUN_LOG)
    reap(proc)
    info = plan.info
    return ResumeStart(
        run_id=info.run_id, pid=proc.pid, from_checkpoint=plan.checkpoint.name, at_env_steps=plan.checkpoint.env_steps,
        at_iteration=plan.checkpoint.iteration, max_env_steps=plan.config.max_env_steps,
        previous_status=str(rf.effective_status(info)),
        note=f"training resumes in the background; follow it with get_run_info(run_id={info.run_id!r}, "
        "view='status', wait_seconds=60), end it with stop_training",
    )
