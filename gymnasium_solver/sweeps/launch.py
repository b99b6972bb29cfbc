"""Plan a sweep (validate the space, write its record, create its study), resume one, or start one detached.

``prepare_sweep`` checks everything a person can get wrong before any trial starts (the space
against the config's bounds, the trial count, the storage URL) and creates the study;
``start_detached`` then starts ``gsolve sweep --resume ID`` in its own session, so an MCP tool call
returns a sweep id at once and the sweep outlives the server that started it.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver.config import env_modules
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.seeds import SEED_STATISTICS
from gymnasium_solver.launcher import start_coordinator
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.record import (
    Backend,
    Objective,
    SweepRecord,
    default_storage,
    log_name,
    new_sweep_id,
    read_record,
    sweeps_dir,
    write_record,
)
from gymnasium_solver.sweeps.space import SearchSpace, parse_space, validate_space

MAX_TRIALS = 10_000
DEFAULT_TIMEOUT_SECONDS = 3600.0
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600.0


class SweepPlan(BaseModel):
    """A validated sweep, its record written and its study created; nothing is running yet."""

    record: SweepRecord
    eval_grid: int = Field(description="the pruner's step unit in env steps (the base config's eval_freq)")


MAX_SEEDS_PER_TRIAL = 50  # each is a full training run of every trial


def prepare_sweep(
    runs_dir: Path,
    config_id: str,
    space: SearchSpace,
    *,
    n_trials: int,
    parallel: int = 1,
    objective: Objective = "steps",
    storage: str | None = None,
    fixed_overrides: dict[str, Any] | None = None,
    backend: Backend = "local",
    address: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    sampler_seed: int | None = None,
    seeds_per_trial: int = 1,
    seed_statistic: str = "p90",
    use_zoo: bool = True,
) -> SweepPlan:
    """Validate, write the record and create the study. ValueError (a sentence) on any bad input.
    ``use_zoo=False``: trials take gsolve's defaults even where the RL Zoo has an entry (``--no-zoo``)."""
    if not 1 <= seeds_per_trial <= MAX_SEEDS_PER_TRIAL:
        raise ValueError(f"--seeds-per-trial must be between 1 and {MAX_SEEDS_PER_TRIAL}, got {seeds_per_trial}")
    if seed_statistic not in SEED_STATISTICS:
        raise ValueError(f"--seed-statistic must be one of {', '.join(SEED_STATISTICS)}, got {seed_statistic!r}")
    if not 1 <= n_trials <= MAX_TRIALS:
        raise ValueError(f"--trials must be between 1 and {MAX_TRIALS}, got {n_trials}")
    if parallel < 1:
        raise ValueError(f"--parallel must be at least 1, got {parallel}")
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise ValueError(f"--timeout must be between 1 and {MAX_TIMEOUT_SECONDS:g} seconds, got {timeout_seconds:g}")
    if objective not in ("steps", "wall"):
        raise ValueError(f"--objective must be 'steps' (env steps to solve) or 'wall' (seconds to solve), got {objective!r}")
    if address is not None and backend != "ray":
        raise ValueError("--address is for --backend ray (the Ray cluster to join)")
    fixed = dict(fixed_overrides or {})
    base = validate_space(space, config_id, fixed, use_zoo)
    if base.reward_threshold is None:
        raise ValueError(f"{config_id} has no reward threshold, so no trial can be 'solved'; set one "
                         f"(--set reward_threshold=...) to sweep for steps or seconds to solve")
    runs_dir = Path(runs_dir).resolve()
    sweep_id = new_sweep_id()
    now = rf.utc_now_iso()
    record = SweepRecord(
        sweep_id=sweep_id, config_id=base.config_id, space=space.model_dump(mode="json")["params"],
        fixed_overrides=fixed, use_zoo=use_zoo, objective=objective, n_trials=n_trials, parallel=parallel, backend=backend,
        address=address, storage=storage or default_storage(runs_dir, sweep_id), timeout_seconds=timeout_seconds,
        sampler_seed=sampler_seed, seeds_per_trial=seeds_per_trial, seed_statistic=seed_statistic,  # type: ignore[arg-type]
        created_at=now, updated_at=now, host=socket.gethostname(),
        message="planned; not started yet",
    )
    sweeps_dir(runs_dir).mkdir(parents=True, exist_ok=True)
    st.open_study(record, create=True)  # fails here, before a record exists, on a bad storage URL
    write_record(runs_dir, record)
    return SweepPlan(record=record, eval_grid=base.eval_freq)


def load_for_resume(runs_dir: Path, sweep_id: str) -> tuple[SweepRecord, SearchSpace, int]:
    """The record, its space and eval grid, for ``--resume``; ValueError if it is still running."""
    record = read_record(runs_dir, sweep_id)
    if record.status == "running" and record.pid not in (None, os.getpid()):  # start_detached wrote ours
        raise ValueError(f"sweep {record.sweep_id} is still running (pid {record.pid} on {record.host}); "
                         f"follow it with gsolve sweep-status {record.sweep_id}, or stop that process first")
    space = parse_space(record.space, f"sweep {record.sweep_id}'s space")
    base = validate_space(space, record.config_id, record.fixed_overrides, record.use_zoo)
    return record, space, base.eval_freq


class SweepStart(BaseModel):
    """A sweep started in the background."""

    sweep_id: str
    config_id: str
    n_trials: int
    parallel: int
    space: dict[str, Any]
    pid: int = Field(description="the coordinator process (gsolve sweep --resume ID)")
    log: str = Field(description="the coordinator's output")
    note: str = Field(description="what to call next")


def start_detached(plan: SweepPlan, runs_dir: Path) -> SweepStart:
    """Start the planned sweep's coordinator in its own session; returns at once."""
    record = plan.record
    runs_dir = Path(runs_dir).resolve()
    log = sweeps_dir(runs_dir) / log_name(record.sweep_id)
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "sweep", record.config_id, "--resume", record.sweep_id,
           "--runs-dir", str(runs_dir), "--parallel", str(record.parallel), *env_modules.granted_flags()]

    def claim(pid: int) -> None:
        if read_record(runs_dir, record.sweep_id).pid is None:
            record.pid, record.message = pid, f"starting: coordinator pid {pid}"
            write_record(runs_dir, record)

    pid = start_coordinator(cmd, log, claim)
    return SweepStart(
        sweep_id=record.sweep_id, config_id=record.config_id, n_trials=record.n_trials, parallel=record.parallel,
        space=record.space, pid=pid, log=str(log),
        note=f"{record.n_trials} trials started in the background, {record.parallel} at a time (at most "
        f"{record.timeout_seconds:g}s); call get_sweep(sweep_id={record.sweep_id!r}) for progress and the best "
        f"trial so far")
