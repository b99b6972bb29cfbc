"""The write side of the run folder: creates ``runs/<run_id>/`` and keeps run.json, config.yaml,
metrics.csv and run.log up to date, as the contract in ``run_folder.py`` describes."""

from __future__ import annotations

import errno
import fcntl
import os
import platform
import re
import socket
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from gymnasium_solver.config import Config, config_to_yaml
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.tracking import SinkContext, Sinks, make_sinks
from gymnasium_solver.train.write_errors import WRITE_FAILURE_KINDS, RunWriteError, writing  # noqa: F401 - re-exported

_SAFE_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
FORCED_STOP = "forced_stop"  # failure kind of a stop recorded from outside the trainer

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


def _check_run_id(run_id: str) -> None:
    if not _SAFE_RUN_ID.match(run_id):
        raise ValueError(
            f"invalid run id {run_id!r}: use letters, digits, '.', '_' and '-' only "
            "(e.g. 20261125-221900-3fa9, or omit --run-id to get a fresh one)"
        )


def _new_run_dir(runs_dir: Path) -> tuple[str, Path]:
    """A fresh run id and its newly created (empty) folder."""
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        while True:
            run_id = rf.new_run_id()
            try:
                (runs_dir / run_id).mkdir()
                return run_id, runs_dir / run_id
            except FileExistsError:
                continue
    except OSError as exc:
        raise ValueError(f"cannot create a run folder in {runs_dir}: {exc.strerror}; choose another --runs-dir") from exc


def _new_info(cfg: Config, run_id: str, *, pid: int | None, columns: tuple[str, ...] = (), **provenance: Any) -> rf.RunInfo:
    now = rf.utc_now_iso()
    return rf.RunInfo(
        run_id=run_id, config_id=cfg.config_id, env_id=cfg.env_id, variant=cfg.variant, algo=cfg.algo,
        seed=cfg.seed, created_at=now, updated_at=now, pid=pid, host=socket.gethostname(),
        reward_threshold=cfg.reward_threshold, max_env_steps=cfg.max_env_steps, metric_columns=list(columns),
        parent_run_id=provenance.get("parent_run_id"), experiment_id=provenance.get("experiment_id"),
        applied_changes=dict(provenance.get("applied_changes") or {}),
        overrides=dict(provenance.get("overrides") or {}), config_origin=provenance.get("config_origin"),
        sweep_id=provenance.get("sweep_id"), trial_number=provenance.get("trial_number"),
    )


def create_placeholder(
    runs_dir: Path,
    cfg: Config,
    *,
    overrides: dict[str, Any] | None = None,
    parent_run_id: str | None = None,
    experiment_id: str | None = None,
    applied_changes: dict[str, Any] | None = None,
    sweep_id: str | None = None,
    trial_number: int | None = None,
    config_origin: rf.ConfigOrigin | None = None,
) -> rf.RunInfo:
    """Pre-create a fresh run folder whose run.json is a placeholder (status running, no pid yet,
    ``placeholder: true``), so a launched run is visible before its trainer starts. The trainer
    started with ``run_id=<its run_id>`` adopts it (:func:`adopt_placeholder`)."""
    run_id, run_dir = _new_run_dir(Path(runs_dir))
    info = _new_info(cfg, run_id, pid=None, overrides=overrides, parent_run_id=parent_run_id,
                     experiment_id=experiment_id, applied_changes=applied_changes, sweep_id=sweep_id,
                     trial_number=trial_number, config_origin=config_origin)
    info.placeholder = True
    with writing(run_dir, rf.RUN_JSON):
        rf.write_run_info(run_dir, info)
    return info


def record_launch_pid(run_dir: Path, pid: int) -> None:
    """The launcher's one write after the start: the trainer's pid, into the placeholder only (a
    trainer that already adopted the folder has written its own run.json); never fails."""
    try:
        current = rf.read_run_info(run_dir)
        if current.placeholder and current.pid is None:
            rf.write_run_info(run_dir, current.model_copy(update={"pid": pid, "updated_at": rf.utc_now_iso()}))
    except (OSError, ValueError):
        pass


def record_forced_stop(run_dir: Path, info: rf.RunInfo, message: str) -> rf.RunInfo:
    """Record in run.json that a run was stopped from outside because its trainer could not record
    it itself (killed, or exited on the signal during start-up): status stopped, reason
    user_stopped, failure kind ``forced_stop``. ``info`` is the run.json the caller read (through
    the run store, which refuses links). Returns what was written; RunWriteError if it cannot be."""
    failure = rf.Failure(kind=FORCED_STOP, message=message, env_steps=info.progress.env_steps,
                         iteration=info.progress.iteration)
    now = rf.utc_now_iso()
    info = info.model_copy(update={
        "status": rf.RunStatus.STOPPED, "stop_reason": rf.StopReason.USER_STOPPED, "failure": failure,
        "updated_at": now, "finished_at": now,
    })
    rf.write_run_info(run_dir, info)
    return info


def write_imported_run_info(run_dir: Path, info: rf.RunInfo) -> None:
    """run.json of a run imported from another framework (gymnasium_solver.imports), written once
    into its folder before the folder is renamed into the runs folder; nothing rewrites it after."""
    if info.source is None or not info.read_only:
        raise ValueError(f"run {info.run_id}: only a read-only run with its import source is written this way")
    with writing(run_dir, rf.RUN_JSON):
        rf.write_run_info(run_dir, info)


def adopt_placeholder(run_dir: Path) -> rf.RunInfo | None:
    """Check that an existing run folder may be used by a new trainer: it must be empty (None) or
    hold a launcher's placeholder run.json (returned). Any other folder holds a run: ValueError."""
    try:
        info = rf.read_run_info(run_dir)
    except FileNotFoundError:
        if not any(run_dir.iterdir()):
            return None
        raise ValueError(f"run folder {run_dir} is not empty and has no run.json; choose a new --run-id") from None
    if not info.placeholder:
        raise ValueError(
            f"run folder {run_dir} already holds a run (status {info.status.value}, "
            f"{info.progress.env_steps} env steps); choose a new --run-id, or continue it with --resume"
        )
    return info


def prepare_run_dir(runs_dir: Path, run_id: str | None) -> tuple[str, Path, rf.RunInfo | None]:
    """Choose and create the run folder. An explicit ``run_id`` may name a launcher's placeholder
    (returned, to be adopted); any other existing run is refused so its data is never overwritten."""
    if run_id is None:
        return (*_new_run_dir(runs_dir), None)
    _check_run_id(run_id)
    run_dir = runs_dir / run_id
    placeholder = adopt_placeholder(run_dir) if run_dir.is_dir() else None
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the run folder {run_dir}: {exc.strerror}; choose another --runs-dir") from exc
    return run_id, run_dir, placeholder


def lock_run_folder(run_dir: Path) -> IO[str]:
    """Hold an exclusive lock on the run folder (flock on its run.log) for as long as the returned
    file stays open, so two resumes of one run cannot both train it. ValueError if already held."""
    try:  # O_NOFOLLOW: a run.log linked out of the folder is refused, never appended to
        fd = os.open(run_dir / rf.RUN_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        why = "is a symbolic link" if exc.errno == errno.ELOOP else f"cannot be opened ({os.strerror(exc.errno or 0)})"
        raise ValueError(f"run {run_dir.name}: {rf.RUN_LOG} {why}; a resume appends only to the regular files "
                         "the trainer wrote inside the run folder: replace it with the file itself") from None
    lock = os.fdopen(fd, "a", encoding="utf-8")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise ValueError(f"run {run_dir.name} is being trained by another process right now; nothing to resume") from None
    return lock


def truncate_metrics_after(path: Path, iteration: int) -> int:
    """Cut metrics.csv back to its header and the rows up to ``iteration`` (a torn last line
    included), at a line boundary, before a resume appends. Returns the number of lines cut.
    Only a resume does this: a run's metrics.csv is never rewritten while its trainer runs."""
    with open(path, "r+b") as f:
        data = f.read()
        keep = data.find(b"\n") + 1  # the header
        header = data[:keep].decode("utf-8", "replace").rstrip("\n").split(",")
        if keep == 0 or rf.M.ITERATION not in header:
            raise ValueError(f"{path} has no complete header line with {rf.M.ITERATION!r}; cannot resume onto it")
        col = header.index(rf.M.ITERATION)
        cut = 0
        for line in data[keep:].splitlines(keepends=True):
            fields = line.split(b",")
            value = fields[col] if len(fields) == len(header) else b""
            if cut or not line.endswith(b"\n") or not value.isdigit() or int(value) > iteration:
                cut += 1
                continue
            keep += len(line)
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return cut


class RunWriter:
    """Owns one run folder while training. run.json is rewritten on every state change and as a
    heartbeat; metrics.csv and run.log are append-only. The tracking sinks the config turns on
    (TensorBoard, MLflow: gymnasium_solver.train.tracking) get every metrics row and the run's end."""

    def __init__(self, run_dir: Path, info: rf.RunInfo, cfg: Config, *, lock: IO[str] | None = None):
        self.run_dir = run_dir
        self.info = info
        self._last_write = 0.0
        self._lock = lock
        with writing(run_dir, rf.RUN_LOG):
            self._log = open(run_dir / rf.RUN_LOG, "a", encoding="utf-8")  # noqa: SIM115 - long-lived
        try:
            if lock is None:  # a resume keeps the config.yaml written once at the start
                with writing(run_dir, rf.CONFIG_YAML):
                    (run_dir / rf.CONFIG_YAML).write_text(config_to_yaml(cfg), encoding="utf-8")
            with writing(run_dir, rf.METRICS_CSV):
                self.metrics = rf.MetricsWriter(run_dir / rf.METRICS_CSV, info.metric_columns)
        except BaseException:
            self._log.close()
            raise
        self.write(durable=True)
        self.sinks = Sinks(make_sinks(cfg), self._sink_failed)
        if self.sinks:
            self.sinks.start(SinkContext(run_dir, info, cfg.model_dump(mode="json"), resumed=lock is not None))
            if self.info.tracking:
                self.log("tracking: " + ", ".join(f"{k} {v}" for k, v in sorted(self.info.tracking.items())))
            self.write()

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
        config_origin: rf.ConfigOrigin | None = None,
    ) -> RunWriter:
        run_id, run_dir, placeholder = prepare_run_dir(runs_dir, run_id)
        info = _new_info(cfg, run_id, pid=os.getpid(), columns=columns, overrides=overrides,
                         parent_run_id=parent_run_id, experiment_id=experiment_id, applied_changes=applied_changes,
                         config_origin=config_origin)
        info.versions, info.git_commit = package_versions(), git_commit()
        if placeholder is not None:
            info.created_at = placeholder.created_at  # the run exists since its launcher created it
            # A sweep trial's identity is known only to its launcher: the trainer keeps it.
            info.sweep_id, info.trial_number = placeholder.sweep_id, placeholder.trial_number
            # So is where its config came from, for a trainer given a resolved config (fork and Ray trials).
            info.config_origin = info.config_origin or placeholder.config_origin
        return cls(run_dir, info, cfg)

    @classmethod
    def resume(
        cls, run_dir: Path, cfg: Config, lock: IO[str], *, checkpoint: str, env_steps: int, iteration: int,
        wall_seconds: float,
    ) -> RunWriter:
        """Take over an existing run (``lock`` from :func:`lock_run_folder`, the checks done by the
        caller) to continue it from a checkpoint: cut metrics.csv back to the checkpoint's
        iteration, record the resume in run.json and mark the run running again under this pid."""
        info = rf.read_run_info(run_dir)
        previous = rf.effective_status(info)
        cut = truncate_metrics_after(run_dir / rf.METRICS_CSV, iteration)
        record = rf.ResumeRecord(at_env_steps=env_steps, at_iteration=iteration, from_checkpoint=checkpoint,
                                 time=rf.utc_now_iso(), previous_status=previous.value)
        info = info.model_copy(update={
            "status": rf.RunStatus.RUNNING, "stop_reason": None, "failure": None, "finished_at": None,
            "pid": os.getpid(), "host": socket.gethostname(), "versions": package_versions(),
            "git_commit": git_commit(), "resumes": [*info.resumes, record],
            "progress": rf.Progress(env_steps=env_steps, iteration=iteration, wall_seconds=wall_seconds),
        })
        writer = cls(run_dir, info, cfg, lock=lock)
        writer.log(f"resuming ({previous.value} run) from checkpoint {checkpoint} at {env_steps} env steps, "
                   f"iteration {iteration}; cut {cut} metrics.csv line(s) written after it")
        return writer

    def write(self, durable: bool = False) -> None:
        """Rewrite run.json now, atomically. Mid-run updates skip the fsync (readers still never
        see a torn file); the first and the final write are durable."""
        self.info.updated_at = rf.utc_now_iso()
        with writing(self.run_dir, rf.RUN_JSON):
            rf.write_run_info(self.run_dir, self.info, durable=durable)
        self._last_write = time.monotonic()

    def heartbeat(self) -> None:
        """Rewrite run.json if the last write is getting old; cheap to call every iteration."""
        if time.monotonic() - self._last_write >= rf.HEARTBEAT_SECONDS * 0.5:
            self.write()

    def append_metrics(self, row: dict[str, float | int | None]) -> None:
        """Append one iteration's row to metrics.csv (flushed), then hand it to the tracking sinks;
        RunWriteError if the disk refuses it (a sink's failure is only recorded)."""
        with writing(self.run_dir, rf.METRICS_CSV):
            self.metrics.append(row)
        if self.sinks:
            self.sinks.append(row)

    def _sink_failed(self, sink: str, message: str) -> None:
        """A tracking sink failed and was switched off: a warning in run.json and run.log, never an
        end of the run (and never an error of its own if the disk refuses these writes too)."""
        self.warn("tracking_sink_failed", sink, message)

    def warn(self, kind: str, source: str, message: str) -> None:
        """Something the run goes on despite: a warning in run.json and run.log (and on stderr at the end
        of `gsolve train`); never an error of its own if the disk refuses these writes."""
        self.info.warnings.append(rf.RunWarning(kind=kind, source=source, message=message,
                                                env_steps=self.info.progress.env_steps, time=rf.utc_now_iso()))
        try:
            self.log(f"warning: {message}")
            self.write()
        except RunWriteError:
            pass

    def log(self, message: str) -> None:
        with writing(self.run_dir, rf.RUN_LOG):
            self._log.write(f"{rf.utc_now_iso()} {message}\n")
            self._log.flush()

    def finish(self, status: rf.RunStatus, reason: rf.StopReason, failure: rf.Failure | None = None) -> None:
        self.info.status = status
        self.info.stop_reason = reason
        self.info.failure = failure
        self.info.finished_at = rf.utc_now_iso()
        self.write(durable=True)
        if self.sinks:  # after the final run.json, which MLflow uploads with the run folder
            warnings_before = len(self.info.warnings)
            self.sinks.finish(self.info)
            if len(self.info.warnings) != warnings_before:
                self.write(durable=True)

    def close(self) -> None:
        # Rows and lines are flushed as they are written, so a close that fails can only concern
        # bytes whose write already failed and was recorded: the run's end is not lost with them.
        self.sinks.close()
        for f in (self.metrics, self._log):
            try:
                f.close()
            except OSError:
                pass
        if self._lock is not None:
            self._lock.close()  # releases the flock
