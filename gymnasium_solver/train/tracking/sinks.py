"""The metric-sink interface, the guard that keeps a failing sink from touching the run, which
sinks a config asks for, and the check (before training) that their libraries are installed."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from gymnasium_solver.config import ConfigBase, ConfigError
from gymnasium_solver.contract import run_folder as rf

TRACKING_PIP = "pip install 'gymnasium-solver[tracking]'"


class Need(NamedTuple):
    """What a sink needs installed: the modules it imports, the distribution that brings them, its extra."""

    modules: tuple[str, ...]
    dist: str
    extra: str


# What each sink needs, by the config key that turns it on.
_NEEDS = {
    "tensorboard": Need(("tensorboard",), "tensorboard", "tracking"),
    # The default store is SQLite: MLflow's database store needs SQLAlchemy and Alembic (not in mlflow-skinny).
    "mlflow": Need(("mlflow", "sqlalchemy", "alembic"), "mlflow-skinny", "tracking"),
    "wandb": Need(("wandb",), "wandb", "wandb"),
    "otel": Need(("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
                 "opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http", "otel"),
}

Row = Mapping[str, float | int | None]


class SinkContext(NamedTuple):
    """What a sink learns at the start of a run. ``info`` is the writer's live RunInfo: a sink may
    record where it logs in ``info.tracking`` (the writer saves it with run.json)."""

    run_dir: Path
    info: rf.RunInfo
    config: dict[str, Any]  # the resolved config, as config.yaml holds it
    resumed: bool


class MetricSink(Protocol):
    """An output that receives what the run folder receives: ``start`` once, ``append`` for every
    metrics.csv row, ``finish`` with the final run.json when the run ends, ``close`` always. Any
    exception it raises switches it off (see :class:`Sinks`)."""

    name: str

    def start(self, ctx: SinkContext) -> None: ...

    def append(self, row: Row) -> None: ...

    def finish(self, info: rf.RunInfo) -> None: ...

    def close(self) -> None: ...


class Sinks:
    """Feeds every sink and contains its failures: a sink that raises is switched off for the rest
    of the run and ``on_failure(sink_name, message)`` is called (the writer logs it to run.log and
    records a warning in run.json); the run and its folder go on untouched."""

    def __init__(self, sinks: list[MetricSink], on_failure: Callable[[str, str], None]):
        self._active = list(sinks)
        self._on_failure = on_failure

    def __bool__(self) -> bool:
        return bool(self._active)

    def _each(self, what: str, call: Callable[[MetricSink], None]) -> None:
        for sink in list(self._active):
            try:
                call(sink)
            except Exception as exc:  # noqa: BLE001 - any failure of an optional output is contained
                self._active.remove(sink)
                detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                self._on_failure(sink.name, f"{sink.name} failed at {what} ({type(exc).__name__}: {detail[:500]}); "
                                 f"it is switched off for the rest of this run, the run folder is complete")
                try:
                    sink.close()
                except Exception:  # noqa: BLE001, S110 - already reported; closing is best effort
                    pass

    def start(self, ctx: SinkContext) -> None:
        self._each("start", lambda s: s.start(ctx))

    def append(self, row: Row) -> None:
        self._each("append", lambda s: s.append(row))

    def finish(self, info: rf.RunInfo) -> None:
        self._each("finish", lambda s: s.finish(info))

    def close(self) -> None:
        self._each("close", lambda s: s.close())
        self._active.clear()


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def check_tracking_available(cfg: ConfigBase) -> None:
    """ConfigError, with the pip command, if the config turns on a sink whose library is not
    installed. Called before a run starts, so nothing is written for a run that cannot log as asked."""
    missing = [(key, need) for key, need in _NEEDS.items()
               if getattr(cfg, key) and not all(_installed(m) for m in need.modules)]
    if missing:
        keys = ", ".join(f"{k}: true" for k, _ in missing)
        dists = " and ".join(dict.fromkeys(n.dist for _, n in missing))
        extras = ",".join(dict.fromkeys(n.extra for _, n in missing))
        raise ConfigError(f"{cfg.config_id}: {keys} needs {dists}, which is not installed: run "
                          f"`pip install 'gymnasium-solver[{extras}]'`, "
                          f"or set {' '.join(f'{k}=false' for k, _ in missing)} (--set, or in the user config)")


def final_results(info: rf.RunInfo) -> dict[str, float]:
    """A finished run's results, as the sinks that keep a summary show them (TensorBoard's hparams, W&B's
    summary, the OpenTelemetry span): the known and finite ones of best/last eval return, solved (1/0),
    env steps, wall seconds and env steps to solve."""
    out = {"solved": float(info.solved), "env_steps": float(info.progress.env_steps),
           "wall_seconds": float(info.progress.wall_seconds)}
    if info.best_eval is not None:
        out["best_eval_return"] = float(info.best_eval.return_mean)
    if info.last_eval is not None:
        out["last_eval_return"] = float(info.last_eval.return_mean)
    if info.solved_at is not None:
        out["solved_at_env_steps"] = float(info.solved_at.env_steps)
    return {k: v for k, v in out.items() if math.isfinite(v)}


def make_sinks(cfg: ConfigBase) -> list[MetricSink]:
    """The sinks ``cfg`` turns on, not started yet (their libraries are imported at start)."""
    sinks: list[MetricSink] = []
    if cfg.tensorboard:
        from gymnasium_solver.train.tracking.tensorboard_sink import TensorBoardSink

        sinks.append(TensorBoardSink())
    if cfg.mlflow:
        from gymnasium_solver.train.tracking.mlflow_sink import MlflowSink

        sinks.append(MlflowSink(cfg.mlflow_tracking_uri, cfg.mlflow_experiment))
    if cfg.wandb:
        from gymnasium_solver.train.tracking.wandb_sink import WandbSink

        sinks.append(WandbSink(cfg.wandb_project))
    if cfg.otel:
        from gymnasium_solver.train.tracking.otel_sink import OtelSink

        sinks.append(OtelSink())
    return sinks
