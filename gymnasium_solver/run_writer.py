"""The write side of the run folder: creates ``runs/<run_id>/`` and keeps run.json, config.yaml,
metrics.csv and run.log up to date, as the contract in ``run_folder.py`` describes."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from gymnasium_solver import run_folder as rf
from gymnasium_solver.config import Config, config_to_yaml

_SAFE_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("torch", "gymnasium", "numpy", "gymnasium-solver"):
        try:
            out[dist.replace("-", "_")] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_commit() -> str | None:
    """The source checkout's commit (with ``+dirty`` if it has local changes), or None; never fails."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=2, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root, capture_output=True, text=True, timeout=2, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head or None


def prepare_run_dir(runs_dir: Path, run_id: str | None) -> tuple[str, Path]:
    """Choose and create the run folder. An explicit ``run_id`` may name a folder a launcher
    pre-created (placeholder run.json with status running and no progress); any other existing
    run is refused so its data is never overwritten."""
    if run_id is None:
        run_id = rf.new_run_id()
        while (runs_dir / run_id).exists():
            run_id = rf.new_run_id()
    elif not _SAFE_RUN_ID.match(run_id):
        raise ValueError(
            f"invalid run id {run_id!r}: use letters, digits, '.', '_' and '-' only "
            "(e.g. 20261125-221900-3fa9, or omit --run-id to get a fresh one)"
        )
    run_dir = runs_dir / run_id
    if run_dir.exists():
        _check_placeholder(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the run folder {run_dir}: {exc.strerror}; choose another --runs-dir") from exc
    return run_id, run_dir


def _check_placeholder(run_dir: Path) -> None:
    metrics = run_dir / rf.METRICS_CSV
    if metrics.exists() and metrics.stat().st_size > 0:
        raise ValueError(f"run folder {run_dir} already holds a run (metrics.csv exists); choose a new --run-id")
    try:
        info = rf.read_run_info(run_dir)
    except FileNotFoundError:
        return
    if info.status != rf.RunStatus.RUNNING or info.progress.env_steps > 0:
        raise ValueError(
            f"run folder {run_dir} already holds a run (status {info.status.value}, "
            f"{info.progress.env_steps} env steps); choose a new --run-id"
        )


class RunWriter:
    """Owns one run folder while training. run.json is rewritten on every state change and as a
    heartbeat; metrics.csv and run.log are append-only."""

    def __init__(self, run_dir: Path, info: rf.RunInfo, cfg: Config):
        self.run_dir = run_dir
        self.info = info
        self._last_write = 0.0
        self._log = open(run_dir / rf.RUN_LOG, "a", encoding="utf-8")  # noqa: SIM115 - long-lived
        (run_dir / rf.CONFIG_YAML).write_text(config_to_yaml(cfg), encoding="utf-8")
        self.metrics = rf.MetricsWriter(run_dir / rf.METRICS_CSV, info.metric_columns)
        self.write(durable=True)

    @classmethod
    def create(
        cls,
        cfg: Config,
        runs_dir: Path,
        run_id: str | None,
        *,
        columns: tuple[str, ...],
        parent_run_id: str | None = None,
        experiment_id: str | None = None,
        applied_changes: dict[str, Any] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> RunWriter:
        run_id, run_dir = prepare_run_dir(runs_dir, run_id)
        now = rf.utc_now_iso()
        info = rf.RunInfo(
            run_id=run_id, config_id=cfg.config_id, env_id=cfg.env_id, variant=cfg.variant, algo=cfg.algo,
            seed=cfg.seed, created_at=now, updated_at=now, pid=os.getpid(), host=socket.gethostname(),
            reward_threshold=cfg.reward_threshold, max_env_steps=cfg.max_env_steps,
            versions=package_versions(), git_commit=git_commit(), parent_run_id=parent_run_id,
            experiment_id=experiment_id, applied_changes=applied_changes or {}, overrides=overrides or {},
            metric_columns=list(columns),
        )
        return cls(run_dir, info, cfg)

    def write(self, durable: bool = False) -> None:
        """Rewrite run.json now, atomically. Mid-run updates skip the fsync (readers still never
        see a torn file); the first and the final write are durable."""
        self.info.updated_at = rf.utc_now_iso()
        rf.write_run_info(self.run_dir, self.info, durable=durable)
        self._last_write = time.monotonic()

    def heartbeat(self) -> None:
        """Rewrite run.json if the last write is getting old; cheap to call every iteration."""
        if time.monotonic() - self._last_write >= rf.HEARTBEAT_SECONDS * 0.5:
            self.write()

    def log(self, message: str) -> None:
        self._log.write(f"{rf.utc_now_iso()} {message}\n")
        self._log.flush()

    def finish(self, status: rf.RunStatus, reason: rf.StopReason, failure: rf.Failure | None = None) -> None:
        self.info.status = status
        self.info.stop_reason = reason
        self.info.failure = failure
        self.info.finished_at = rf.utc_now_iso()
        self.write(durable=True)

    def close(self) -> None:
        self.metrics.close()
        self._log.close()
