"""The run-folder contract: every file name, the ``run.json`` schema and the metrics.csv format
(the metric columns themselves are :mod:`gymnasium_solver.contract.metric_names`, re-exported here).

The trainer (write side) and the run store (read side) both import this module and nothing else
to learn what a run folder holds, so the two can never drift apart. This module must not import
torch, gymnasium or the trainer: the MCP server imports it and must start fast.

Layout of ``runs/<run_id>/``::

    run.json        identity and state (RunInfo), rewritten atomically on every change + heartbeat
    config.yaml     the fully resolved config, written once at start
    metrics.csv     one row per training iteration, columns fixed at start, append-only while a
                    trainer runs; a resume (a new trainer process, not mid-run) first cuts the rows
                    after its checkpoint's iteration at a line boundary (docs/resume.md)
    run.log         human-readable log, warnings and tracebacks, append-only
    checkpoints/    <name>.pt (torch) + <name>.json (CheckpointMeta, readable without torch)
    tensorboard/    TensorBoard event files, only when the config says tensorboard: true (docs/tracking.md)
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from gymnasium_solver.config.origin import ConfigOrigin, SettingSource  # noqa: F401 - run.json's config_origin
from gymnasium_solver.contract.algorithms import columns_for  # noqa: F401 - re-exported: part of the contract
from gymnasium_solver.contract.metric_names import COMMON_COLUMNS, METRIC_DESCRIPTIONS, PPO_COLUMNS, M  # noqa: F401 - re-exported: part of the contract

SCHEMA_VERSION = 1

# ---------------------------------------------------------------------------------------------
# File names
# ---------------------------------------------------------------------------------------------
RUN_JSON = "run.json"
CONFIG_YAML = "config.yaml"
METRICS_CSV = "metrics.csv"
RUN_LOG = "run.log"
CHECKPOINTS_DIR = "checkpoints"
CHECKPOINT_SUFFIX = ".pt"
CHECKPOINT_META_SUFFIX = ".json"
BEST_CHECKPOINT = "best"
LAST_CHECKPOINT = "last"
# Checkpoint names are <prefix><env_steps>: periodic ones (checkpoint_freq, pruned to the last
# keep_last_checkpoints) and the policies of the keep_best_checkpoints best evaluations.
PERIODIC_CHECKPOINT_PREFIX = "step_"
TOP_EVAL_CHECKPOINT_PREFIX = "eval_"
TENSORBOARD_DIR = "tensorboard"  # TensorBoard event files (config key tensorboard), docs/tracking.md

RUNS_DIR_ENV = "GSOLVE_RUNS_DIR"
DEFAULT_RUNS_DIR = "runs"

# A running trainer rewrites run.json at least this often; a "running" run whose heartbeat is
# older than HEARTBEAT_STALE_SECONDS (or whose pid is dead on this host) is reported as crashed.
HEARTBEAT_SECONDS = 5.0
HEARTBEAT_STALE_SECONDS = 60.0

RUN_ID_PATTERN = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{4,}$")


def resolve_runs_dir(runs_dir: str | os.PathLike[str] | None = None) -> Path:
    """The runs folder: the explicit argument, else $GSOLVE_RUNS_DIR, else ./runs."""
    if runs_dir is not None:
        return Path(runs_dir)
    return Path(os.environ.get(RUNS_DIR_ENV) or DEFAULT_RUNS_DIR)


def new_run_id(now: datetime | None = None) -> str:
    """Sortable by creation time, e.g. ``20261125-221900-3fa9c1e``: the suffix starts with the
    microsecond in hex, so two runs created in the same second still sort in creation order
    (``@last`` and every listing rely on it), and ends with random hex against collisions."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{now.microsecond:05x}{secrets.token_hex(1)}"


# The metric vocabulary (metrics.csv columns) is metric_names.py, part of this contract.
# ---------------------------------------------------------------------------------------------
# run.json
# ---------------------------------------------------------------------------------------------
class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"
    # Never written by the trainer: the reader reports a "running" run with a dead pid or a stale
    # heartbeat as crashed, and a run whose run.json it cannot read as unreadable.
    CRASHED = "crashed"
    UNREADABLE = "unreadable"


class StopReason(StrEnum):
    SOLVED = "solved"
    BUDGET_EXHAUSTED = "budget_exhausted"
    USER_STOPPED = "user_stopped"
    NON_FINITE_LOSS = "non_finite_loss"
    ERROR = "error"


class LogLevel(StrEnum):
    """Levels of run.log lines, lowest first: the log filter keeps a level and those after it."""

    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    CRITICAL = "CRITICAL"


class EvalRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")
    return_mean: float
    return_std: float
    episodes: int
    env_steps: int
    wall_seconds: float
    iteration: int


class SolvedAt(BaseModel):
    model_config = ConfigDict(extra="ignore")
    env_steps: int
    wall_seconds: float = Field(description="seconds from environment creation to the solving evaluation")
    iteration: int
    eval_return_mean: float
    confirm_return_mean: float | None = Field(default=None, description="the mean of the confirmation episodes that "
                                              "the solving evaluation was checked on (config confirm_episodes); "
                                              "None: not checked")
    confirm_episodes: int = Field(default=0, description="how many confirmation episodes (0: not checked)")


class Progress(BaseModel):
    model_config = ConfigDict(extra="ignore")
    env_steps: int = 0
    iteration: int = 0
    wall_seconds: float = 0.0


class Failure(BaseModel):
    """Where and why a run failed; structured so nothing needs to parse the log."""

    model_config = ConfigDict(extra="ignore")
    kind: str
    message: str
    env_steps: int | None = None
    iteration: int | None = None


class ActionSpaceInfo(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kind: str = Field(description="'discrete' or 'box'")
    n: int | None = Field(default=None, description="number of actions (discrete)")
    shape: list[int] | None = Field(default=None, description="action shape (box)")
    low: list[float] | None = None
    high: list[float] | None = None
    max_entropy: float | None = Field(
        default=None, description="log(n) for discrete spaces; None for continuous ones"
    )


class ResumeRecord(BaseModel):
    """One ``gsolve train --resume``: where the run continued from (see docs/resume.md)."""

    model_config = ConfigDict(extra="ignore")
    at_env_steps: int
    at_iteration: int
    from_checkpoint: str
    time: str
    previous_status: str = Field(description="the status the run had before the resume (stopped, crashed, failed)")


class ImportSource(BaseModel):
    """Where an imported run came from (``gsolve import``); such a run is read-only."""

    model_config = ConfigDict(extra="ignore")
    framework: str = Field(description="'sb3' (Stable-Baselines3 / RL Zoo) or 'cleanrl'")
    kind: str = Field(description="'sb3_log_folder', 'rl_zoo_folder', 'sb3_tensorboard' or 'cleanrl_tensorboard'")
    path: str = Field(description="the folder imported, absolute")
    files: list[str] = Field(default_factory=list, description="the files read, relative to path")
    fingerprint: str = Field(description="hash of the files read: re-importing the same content is a no-op")
    imported_at: str
    metric_map: dict[str, str] = Field(default_factory=dict, description="source metric -> our column")
    unknown: dict[str, str] = Field(
        default_factory=dict, description="run fields the source does not record, and what was done instead"
    )


class RunWarning(BaseModel):
    """Something that went wrong without ending the run, e.g. a tracking sink (TensorBoard, MLflow)
    that failed and was switched off, or a valid config that throws away what it collects; the run
    and its folder are unaffected."""

    model_config = ConfigDict(extra="ignore")
    kind: str = Field(description="e.g. tracking_sink_failed, config_wastes_samples")
    source: str = Field(description="what failed, e.g. tensorboard or mlflow; or the config key at fault")
    message: str
    env_steps: int | None = None
    time: str


class RunInfo(BaseModel):
    """Contents of run.json. Readers ignore unknown keys so newer trainers stay readable."""

    model_config = ConfigDict(extra="ignore")
    schema_version: int = SCHEMA_VERSION
    run_id: str
    config_id: str
    env_id: str
    variant: str
    algo: str
    seed: int
    status: RunStatus = RunStatus.RUNNING
    stop_reason: StopReason | None = None
    failure: Failure | None = None
    created_at: str
    updated_at: str
    finished_at: str | None = None
    pid: int | None = None
    host: str | None = None
    reward_threshold: float | None = None
    max_env_steps: int
    progress: Progress = Field(default_factory=Progress)
    best_eval: EvalRecord | None = None
    last_eval: EvalRecord | None = None
    solved: bool = False
    solved_at: SolvedAt | None = None
    action_space: ActionSpaceInfo | None = None
    observation_shape: list[int] | None = None
    observation_kind: str | None = Field(default=None, description="the environment's own observation space before "
                                         "flattening: discrete (one-hot encoded), box, multi_discrete, dict, tuple "
                                         "(None: written before 2026-12-04, or an import)")
    device: str | None = Field(default=None, description="where the network ran: cpu, cuda or cuda:N (None: "
                                                         "written before the trainer recorded it)")
    versions: dict[str, str] = Field(default_factory=dict)
    git_commit: str | None = None
    parent_run_id: str | None = None
    experiment_id: str | None = Field(default=None, description="the fix experiment / sweep this run is a trial of")
    applied_changes: dict[str, Any] = Field(default_factory=dict)
    sweep_id: str | None = Field(default=None, description="the sweep this run is a trial of (gsolve sweep)")
    trial_number: int | None = Field(default=None, description="its trial number in that sweep's Optuna study")
    overrides: dict[str, Any] = Field(default_factory=dict)
    config_origin: ConfigOrigin | None = Field(default=None, description="where each config value came from")
    metric_columns: list[str] = Field(default_factory=list)
    resumes: list[ResumeRecord] = Field(default_factory=list)
    warnings: list[RunWarning] = Field(default_factory=list, description="problems that did not end the run")
    tracking: dict[str, str] = Field(
        default_factory=dict, description="where the run is also logged: tensorboard folder, mlflow run id and URI"
    )
    placeholder: bool = Field(
        default=False, description="true while a launcher's pre-created run.json waits for its trainer to adopt it"
    )
    source: ImportSource | None = Field(default=None, description="set for a run imported from another framework")
    read_only: bool = Field(default=False, description="true for imported runs: nothing may train into them")


def trial_of(info: RunInfo) -> str | None:
    """The fix experiment or sweep the run is a trial of (None for a run someone started)."""
    return info.sweep_id or info.experiment_id


def refuse_read_only(info: RunInfo, action: str) -> None:
    """ValueError with a sentence when ``info`` is a read-only (imported) run that ``action`` would write to."""
    if not info.read_only:
        return
    origin = f" from {info.source.framework} ({info.source.path})" if info.source else ""
    raise ValueError(f"run {info.run_id} was imported{origin} and is read-only: it cannot be used to {action}. "
                     f"Train a run of our own instead (gsolve train ENV:VARIANT, e.g. {info.env_id}:ppo) and "
                     "compare it with this one (gsolve compare)")


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def parse_iso(ts: str) -> float:
    """ISO-8601 timestamp to POSIX seconds."""
    return datetime.fromisoformat(ts).timestamp()


def atomic_write_text(path: Path, text: str, durable: bool = True) -> None:
    """Write a file so readers see the old or the new content, never a torn one.

    ``durable=False`` skips the fsync: still atomic for readers (the rename is), but a power loss
    may lose the update. The trainer uses it for frequent mid-run run.json updates (~5 ms each).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_run_info(run_dir: Path, info: RunInfo, durable: bool = True) -> None:
    atomic_write_text(run_dir / RUN_JSON, info.model_dump_json(indent=2), durable=durable)


def read_run_info(run_dir: Path) -> RunInfo:
    """Parse run.json. Raises FileNotFoundError, or ValueError for malformed content."""
    text = (run_dir / RUN_JSON).read_text(encoding="utf-8")
    try:
        return RunInfo.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValueError) as exc:
        raise ValueError(f"{run_dir / RUN_JSON} is malformed: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# metrics.csv: writer and reader side by side
# ---------------------------------------------------------------------------------------------
def format_value(value: float | int | None) -> str:
    """Full precision; '' means "not measured this iteration"; nan/inf stay visible."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    f = float(value)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return repr(f)


def parse_value(text: str) -> float | None:
    """Inverse of format_value: '' -> None, else float (nan/inf included)."""
    if text == "":
        return None
    return float(text)


class MetricsWriter:
    """Appends one row per iteration to metrics.csv and flushes it, never rewriting the file."""

    def __init__(self, path: Path, columns: Iterable[str]):
        self.path = path
        self.columns = tuple(columns)
        self._file = open(path, "a", encoding="utf-8", newline="")  # noqa: SIM115 - long-lived
        if self._file.tell() == 0:
            self._file.write(",".join(self.columns) + "\n")
            self._file.flush()

    def append(self, row: Mapping[str, float | int | None]) -> None:
        unknown = set(row) - set(self.columns)
        if unknown:
            raise KeyError(f"metrics row has columns not declared at start: {sorted(unknown)}")
        self._file.write(",".join(format_value(row.get(c)) for c in self.columns) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class MetricsTable(NamedTuple):
    """Parsed metrics.csv: the header and one list per row (None = not measured that iteration)."""

    columns: list[str]
    rows: list[list[float | None]]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list[float | None]:
        """One column's values; KeyError if the run does not have it."""
        i = self.columns.index(name) if name in self.columns else -1
        if i < 0:
            raise KeyError(name)
        return [r[i] for r in self.rows]


def parse_metrics_text(text: str) -> MetricsTable:
    """Parse metrics.csv content. A torn last line (no trailing newline) is dropped.

    Returns the header and the complete rows. Malformed rows raise ValueError naming the line.
    """
    if not text:
        return MetricsTable([], [])
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    lines = complete.splitlines()
    if not lines:
        return MetricsTable([], [])
    header = next(csv.reader(io.StringIO(lines[0])), None)
    if not header:
        raise ValueError("metrics.csv line 1 is empty: expected the header row (iteration,env_steps,...)")
    rows: list[list[float | None]] = []
    for lineno, line in enumerate(lines[1:], start=2):
        parts = line.split(",")
        if len(parts) != len(header):
            raise ValueError(f"metrics.csv line {lineno} has {len(parts)} fields, expected {len(header)}")
        try:
            rows.append([parse_value(p) for p in parts])
        except ValueError as exc:
            raise ValueError(f"metrics.csv line {lineno}: {exc}") from exc
    return MetricsTable(header, rows)


# ---------------------------------------------------------------------------------------------
# checkpoints/<name>.json
# ---------------------------------------------------------------------------------------------
class CheckpointMeta(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    file: str
    env_steps: int
    iteration: int
    wall_seconds: float
    eval_return_mean: float | None = None
    created_at: str


def write_checkpoint_meta(run_dir: Path, meta: CheckpointMeta) -> None:
    atomic_write_text(run_dir / CHECKPOINTS_DIR / f"{meta.name}{CHECKPOINT_META_SUFFIX}", meta.model_dump_json(indent=2))


def read_checkpoint_metas(run_dir: Path) -> list[CheckpointMeta]:
    """All readable checkpoint metadata, ordered by env_steps. Unreadable ones are skipped."""
    out: list[CheckpointMeta] = []
    folder = run_dir / CHECKPOINTS_DIR
    if not folder.is_dir():
        return out
    for p in folder.glob(f"*{CHECKPOINT_META_SUFFIX}"):
        try:
            out.append(CheckpointMeta.model_validate_json(p.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return sorted(out, key=lambda m: (m.env_steps, m.name))


_PROC_STAT = os.path.exists("/proc/self/stat")  # Linux: one read answers both "exists" and "zombie"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (exited, not yet reaped by its parent)."""
    if _PROC_STAT:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        except FileNotFoundError:
            return False
        except (OSError, IndexError):
            pass  # /proc not readable here (hidepid): ask the kernel instead
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_status(info: RunInfo, now: float | None = None, hostname: str | None = None) -> RunStatus:
    """The status a reader should report: a 'running' run whose process is gone is 'crashed'."""
    if info.status != RunStatus.RUNNING:
        return info.status
    now = time.time() if now is None else now
    import socket

    same_host = info.host is None or info.host == (hostname or socket.gethostname())
    if same_host and info.pid is not None and not pid_alive(info.pid):
        return RunStatus.CRASHED
    try:
        if now - parse_iso(info.updated_at) > HEARTBEAT_STALE_SECONDS:
            return RunStatus.CRASHED
    except ValueError:
        pass
    return RunStatus.RUNNING
