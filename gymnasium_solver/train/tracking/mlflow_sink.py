"""MLflow logging of a run: the resolved config as params, every metrics.csv column as metrics keyed
by env steps, and at the end the run folder as artifacts and the best checkpoint as a pyfunc model
(docs/tracking.md). Through ``MlflowClient`` with an explicit tracking URI, so the process-global
MLflow state (active run, tracking URI) is never touched."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.locations import (
    MLFLOW_ARTIFACTS_DIR,
    LocationPolicy,
    default_mlflow_uri,
    sqlite_path,
)
from gymnasium_solver.train.tracking.sinks import Row, SinkContext

FLUSH_SECONDS = 10.0  # metrics are sent in batches at most this often (and at the end)
MAX_BATCH_METRICS = 1000  # MLflow's limit per log_batch request
MAX_PARAMS_PER_BATCH = 100  # MLflow's limit per log_batch request
MAX_PARAM_CHARS = 6000  # MLflow's limit on a param value
MODEL_ARTIFACT_PATH = "model"
RUN_FOLDER_ARTIFACT_PATH = "run_folder"
# A tracking server that is down must cost the run seconds, not MLflow's default minutes of retries.
# Its artifact progress bars and INFO lines ("Creating initial MLflow database tables...") are not for the
# trainer's stderr (the run has its own progress bar); a user who sets MLFLOW_LOGGING_LEVEL keeps theirs.
_ENV_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "15",
                 "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false", "MLFLOW_LOGGING_LEVEL": "WARNING"}
_END_STATUS = {rf.RunStatus.COMPLETED: "FINISHED", rf.RunStatus.STOPPED: "KILLED"}


def default_tracking_uri(run_dir: Path) -> str:
    """The store inside the runs folder that holds ``run_dir``: ``sqlite:///<runs>/.mlflow/mlflow.db``."""
    return default_mlflow_uri(run_dir.resolve().parent)


def artifact_root(uri: str) -> str | None:
    """Where new experiments of a SQLite store keep their artifacts: ``artifacts/`` beside the database.
    MLflow's own default for a client-side database is ``./mlruns`` in the current directory, which
    would put a run's files outside the runs folder. None for other stores (a server chooses its own)."""
    db = sqlite_path(uri)
    return None if db is None else (db.expanduser().resolve().parent / MLFLOW_ARTIFACTS_DIR).as_uri()


def flatten_params(config: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """The config as MLflow params: nested keys joined with '.' (learning_rate.start), values as text."""
    out: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten_params(value, f"{name}."))
        else:
            out[name] = str(value)[:MAX_PARAM_CHARS]
    return out


class MlflowSink:
    name = "mlflow"

    def __init__(self, tracking_uri: str | None, experiment: str | None):
        self._uri_setting, self._experiment_setting = tracking_uri, experiment
        self._client: Any = None
        self._run_id: str | None = None
        self._run_dir: Path | None = None
        self._pending: list[Any] = []
        self._last_flush = time.monotonic()

    def start(self, ctx: SinkContext) -> None:
        # The last line of the confinement (locations.py): a trainer started by a confining MCP server
        # never writes to, or sends requests to, a place its operator did not allow, whatever path led here.
        LocationPolicy.from_env().check_uri(self._uri_setting, ctx.run_dir.parent, f"run {ctx.info.run_id}")
        for key, value in _ENV_DEFAULTS.items():
            os.environ.setdefault(key, value)
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        info, self._run_dir = ctx.info, ctx.run_dir
        uri = self._uri_setting or default_tracking_uri(ctx.run_dir)
        if uri.startswith("file:") or "://" not in uri:
            # MLflow 3 keeps its file store only on request ("maintenance mode"); a user who names one
            # gets it (docs/tracking.md). The default store is SQLite, which needs no flag.
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        name = self._experiment_setting or info.env_id
        with _quiet(), _store_lock(uri):
            self._client = MlflowClient(tracking_uri=uri)
            previous = info.tracking.get("mlflow_run_id") if info.tracking.get("mlflow_tracking_uri") == uri else None
            if ctx.resumed and previous:  # a resume continues the same MLflow run
                self._run_id = previous
                self._client.update_run(previous, status="RUNNING")
                return
            experiment = self._client.get_experiment_by_name(name)
            if experiment is not None:
                # An existing experiment keeps its artifact location (MLflow's "Default" points at ./mlruns):
                # a confined run may write there only if it is a place it may name itself.
                LocationPolicy.from_env().check_uri(experiment.artifact_location, ctx.run_dir.parent,
                                                    f"run {info.run_id}", f"MLflow experiment {name!r}'s artifact location")
                experiment_id = experiment.experiment_id
            else:
                experiment_id = self._client.create_experiment(name, artifact_location=artifact_root(uri))
            tags = {"gsolve.run_id": info.run_id, "gsolve.config_id": info.config_id, "gsolve.algo": info.algo,
                    "gsolve.env_id": info.env_id, "gsolve.seed": str(info.seed)}
            run = self._client.create_run(experiment_id, run_name=info.run_id, tags=tags)
            self._run_id = run.info.run_id
            params = [Param(k, v) for k, v in flatten_params(ctx.config).items()]
            for i in range(0, len(params), MAX_PARAMS_PER_BATCH):
                self._client.log_batch(self._run_id, params=params[i:i + MAX_PARAMS_PER_BATCH])
        info.tracking.update(mlflow_tracking_uri=uri, mlflow_experiment=name, mlflow_run_id=self._run_id)

    def append(self, row: Row) -> None:
        from mlflow.entities import Metric

        steps = row.get(rf.M.ENV_STEPS)
        if steps is None:
            return
        now = int(time.time() * 1000)
        self._pending.extend(Metric(key, float(value), now, int(steps)) for key, value in row.items()
                             if value is not None and math.isfinite(value))
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        self._last_flush = time.monotonic()
        with _quiet():
            for i in range(0, len(pending), MAX_BATCH_METRICS):
                self._client.log_batch(self._run_id, metrics=pending[i:i + MAX_BATCH_METRICS])

    def finish(self, info: rf.RunInfo) -> None:
        assert self._run_dir is not None and self._run_id is not None
        self._flush()
        run_id, client = self._run_id, self._client
        with _quiet():
            client.set_tag(run_id, "gsolve.status", info.status.value)
            if info.stop_reason is not None:
                client.set_tag(run_id, "gsolve.stop_reason", info.stop_reason.value)
            client.set_tag(run_id, "gsolve.solved", str(info.solved).lower())
            best = self._run_dir / rf.CHECKPOINTS_DIR / f"{rf.BEST_CHECKPOINT}{rf.CHECKPOINT_SUFFIX}"
            if best.is_file() and not best.is_symlink():
                self._log_model(best)
            client.log_artifacts(run_id, str(self._run_dir), RUN_FOLDER_ARTIFACT_PATH)
            client.set_terminated(run_id, status=_END_STATUS.get(info.status, "FAILED"))

    def _log_model(self, checkpoint: Path) -> None:
        """The best checkpoint as an MLflow pyfunc model (``mlflow.pyfunc.load_model`` then
        ``predict(observations)`` gives the deterministic actions), saved then logged as artifacts."""
        import mlflow.pyfunc

        from gymnasium_solver.train.tracking.mlflow_model import MODEL_CODE, pip_requirements

        with tempfile.TemporaryDirectory(prefix="gsolve-mlflow-") as tmp:
            path = Path(tmp) / MODEL_ARTIFACT_PATH
            mlflow.pyfunc.save_model(str(path), python_model=str(MODEL_CODE), artifacts={"checkpoint": str(checkpoint)},
                                     pip_requirements=pip_requirements())
            self._client.log_artifacts(self._run_id, str(path), MODEL_ARTIFACT_PATH)

    def close(self) -> None:
        if self._client is not None and self._run_id is not None and self._pending:
            self._flush()
        self._client = None


@contextlib.contextmanager
def _store_lock(uri: str) -> Iterator[None]:
    """Serialise the start of runs that share one SQLite store: the first creates its tables (MLflow
    runs its migrations), and parallel sweep trials must not race to do it or to create one experiment."""
    db = sqlite_path(uri)
    if db is None:
        yield
        return
    from filelock import FileLock

    db = db.expanduser().resolve()
    db.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(db) + ".lock", timeout=120):
        yield


class _quiet(warnings.catch_warnings):
    """MLflow's own deprecation notices (e.g. about the file store) are not the run's warnings."""

    def __enter__(self) -> None:
        super().__enter__()
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
