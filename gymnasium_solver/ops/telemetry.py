"""Live telemetry: the runs folder as a Prometheus exposition endpoint (``gsolve serve-metrics``).

A custom collector reads the run store on every scrape (run.json and metrics.csv are cached by
file identity, and a grown metrics.csv is read only from where the last scrape stopped), so what
Prometheus sees is what the run folders hold at that moment; nothing is pushed or duplicated.

Which runs are exported: every run whose effective status is ``running``, plus runs that finished
(completed, failed, stopped, crashed) less than ``keep_finished_seconds`` ago (default 10 minutes),
exported with their final values and final status so a scrape sees how each run ended; after
that they drop out, so the series of a long-lived runs folder do not grow without bound.

prometheus-client is the ``telemetry`` extra; nothing here imports torch.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, NamedTuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import numpy as np

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import M, RunStatus
from gymnasium_solver.run_store import MetricsArrays, RunFileError, RunStore, read_run_file

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

DEFAULT_KEEP_FINISHED_SECONDS = 600.0
MAX_KEEP_FINISHED_SECONDS = 7 * 24 * 3600.0
LABELS = ("run", "env", "algo")
PREFIX = "gsolve"
TAIL_BYTES = 4096  # ~8 rows of metrics.csv: where the last values of a live run are
METRICS_PATH = "/metrics"

# The metrics.csv columns exported as gauges, named from the vocabulary: train/policy_loss ->
# gsolve_train_policy_loss. Their meaning is run_folder.METRIC_DESCRIPTIONS (docs/metrics.md).
EXPORTED_COLUMNS: tuple[str, ...] = (
    M.POLICY_LOSS, M.VALUE_LOSS, M.ENTROPY, M.APPROX_KL, M.CLIP_FRACTION, M.EXPLAINED_VARIANCE, M.GRAD_NORM,
    M.LEARNING_RATE, M.EP_RETURN_MEAN, M.EP_LEN_MEAN,
)
# Statuses a run can be exported with (one-hot in gsolve_run_status).
EXPORTED_STATUSES: tuple[RunStatus, ...] = (
    RunStatus.RUNNING, RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.STOPPED, RunStatus.CRASHED,
)


def column_metric_name(column: str) -> str:
    """The Prometheus name of a metrics.csv column: ``train/policy_loss`` -> ``gsolve_train_policy_loss``."""
    return f"{PREFIX}_" + column.replace("/", "_")


class RunSample(NamedTuple):
    """What one scrape exports about one run."""

    run_id: str
    env_id: str
    algo: str
    status: RunStatus
    env_steps: int
    max_env_steps: int
    fps: float | None
    last_eval: float | None
    best_eval: float | None
    reward_threshold: float | None
    solved: bool
    heartbeat_age: float | None
    columns: dict[str, float]  # EXPORTED_COLUMNS -> last measured value (finite or not)


class Scrape(NamedTuple):
    samples: list[RunSample]
    unreadable: int  # runs that should have been exported but whose files could not be read
    seconds: float


def _exported(info: rf.RunInfo, status: RunStatus, now: float, keep_finished: float) -> bool:
    if status == RunStatus.RUNNING:
        return True
    if status == RunStatus.UNREADABLE:
        return False
    ended = info.finished_at or info.updated_at
    try:
        return now - rf.parse_iso(ended) <= keep_finished
    except ValueError:
        return False


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _last_values(arrays: MetricsArrays, names: tuple[str, ...]) -> dict[str, float]:
    """The last measured value of each column in ``names`` that the file has."""
    out = {}
    for name in names:
        if name in arrays.columns:
            j = arrays.col(name)
            measured = np.flatnonzero(~arrays.missing[:, j])
            if len(measured):
                out[name] = float(arrays.values[measured[-1], j])
    return out


def _tail_values(run_dir: Path, columns: list[str], names: tuple[str, ...]) -> dict[str, float] | None:
    """The last measured value of each of ``names``, from the complete rows in the last TAIL_BYTES
    of metrics.csv (columns: the header the trainer recorded in run.json). None when a column is
    measured in none of those rows, so the caller falls back to the whole file."""
    got = read_run_file(run_dir, rf.METRICS_CSV, last=TAIL_BYTES)
    data = got.data
    lines = data[: data.rfind(b"\n") + 1].split(b"\n")[1:-1]  # the first is the header or a cut line
    want = {n: columns.index(n) for n in names if n in columns}
    out: dict[str, float] = {}
    for line in reversed(lines):  # bytes: float() reads them, and only the fields used are looked at
        parts = line.split(b",")
        if len(parts) != len(columns):
            return None  # not the header run.json recorded: read the file properly
        for name, j in list(want.items()):
            if parts[j]:
                out[name] = float(parts[j])
                del want[name]
        if not want:
            return out
    return out if got.offset == 0 else None


def sample_run(store: RunStore, run_dir: Path, info: rf.RunInfo, status: RunStatus, now: float) -> RunSample:
    """The exported values of one run, from run.json and the last rows of metrics.csv."""
    names = (M.ENV_STEPS, M.FPS, *EXPORTED_COLUMNS)
    try:
        # The tail is enough when every column was measured recently (a scrape of 50 live runs
        # then parses 50 lines); else the run store's cached, incremental read of the whole file.
        last = _tail_values(run_dir, info.metric_columns, names) if info.metric_columns else None
        if last is None:
            last = _last_values(store.metric_arrays(run_dir), names)
    except (RunFileError, ValueError):
        last = {}  # no metrics.csv yet (a run that is starting): export what run.json says
    # run.json is rewritten as a heartbeat, so the last metrics row may be ahead of its progress.
    steps = max(info.progress.env_steps, int(last.get(M.ENV_STEPS, 0)) if math.isfinite(last.get(M.ENV_STEPS, 0)) else 0)
    try:
        age: float | None = max(0.0, now - rf.parse_iso(info.updated_at))
    except ValueError:
        age = None
    return RunSample(
        run_id=info.run_id, env_id=info.env_id, algo=info.algo, status=status, env_steps=steps,
        max_env_steps=info.max_env_steps, fps=_finite(last.get(M.FPS)),
        last_eval=info.last_eval.return_mean if info.last_eval else None,
        best_eval=info.best_eval.return_mean if info.best_eval else None,
        reward_threshold=info.reward_threshold, solved=info.solved, heartbeat_age=age,
        columns={c: last[c] for c in EXPORTED_COLUMNS if c in last},
    )


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def scrape(store: RunStore, keep_finished_seconds: float = DEFAULT_KEEP_FINISHED_SECONDS,
           now: float | None = None, retired: dict[str, tuple[int, int, int]] | None = None) -> Scrape:
    """The runs to export now (live ones, and ones finished within ``keep_finished_seconds``).

    ``retired`` (kept by the caller between scrapes) remembers runs that ended before the window,
    by their run.json's identity: they are skipped without being read until run.json changes (a
    resume), so a folder of thousands of old runs costs one lstat each per scrape."""
    start = time.perf_counter()
    now = time.time() if now is None else now
    samples, unreadable = [], 0
    root = str(store.runs_dir)
    for rid in store.run_ids():
        ident = _identity(f"{root}/{rid}/{rf.RUN_JSON}")
        if ident is None or (retired is not None and retired.get(rid) == ident):
            continue
        run_dir = store.runs_dir / rid
        try:
            info = store.info(run_dir)
        except (RunFileError, OSError):
            continue  # not a run (or not yet): nothing to label it with
        status = rf.effective_status(info, now)
        if not _exported(info, status, now, keep_finished_seconds):
            if retired is not None and status != RunStatus.RUNNING:
                retired[rid] = ident
            continue
        try:
            samples.append(sample_run(store, run_dir, info, status, now))
        except (RunFileError, OSError):
            unreadable += 1
    return Scrape(samples, unreadable, time.perf_counter() - start)


class RunCollector:
    """A prometheus_client collector that exports :func:`scrape` on every collect()."""

    def __init__(self, store: RunStore, keep_finished_seconds: float = DEFAULT_KEEP_FINISHED_SECONDS):
        self.store = store
        self.keep_finished_seconds = keep_finished_seconds
        self.retired: dict[str, tuple[int, int, int]] = {}  # see scrape(); one writer: collect() is serialised
        self._lock = threading.Lock()

    def describe(self) -> list[Any]:
        return []  # no registration-time scrape (the runs folder may be large); names are checked per scrape

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        with self._lock:  # concurrent scrapes share the retired-run memo
            got = scrape(self.store, self.keep_finished_seconds, retired=self.retired)

        def gauge(name: str, doc: str, extra: tuple[str, ...] = ()) -> GaugeMetricFamily:
            return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=[*LABELS, *extra])

        steps = CounterMetricFamily(f"{PREFIX}_run_env_steps", "environment steps done (every sub-env step once)",
                                    labels=list(LABELS))
        budget = gauge("run_max_env_steps", "the run's env-step budget")
        fps = gauge("run_fps", "env steps per second over the last iteration (time/fps)")
        last = gauge("run_eval_return", "mean return of the latest evaluation (eval/return_mean)")
        best = gauge("run_best_eval_return", "best evaluation mean return so far")
        thr = gauge("run_reward_threshold", "evaluation return that counts as solved")
        solved = gauge("run_solved", "1 once the run reached its reward threshold")
        age = gauge("run_heartbeat_age_seconds", "seconds since the trainer last rewrote run.json")
        status = gauge("run_status", "1 for the run's effective status (crashed = process gone), 0 for the others",
                       ("status",))
        cols = {c: gauge(column_metric_name(c)[len(PREFIX) + 1:], f"last value of {c}: {rf.METRIC_DESCRIPTIONS[c]}")
                for c in EXPORTED_COLUMNS}
        for s in got.samples:
            lv = [s.run_id, s.env_id, s.algo]
            steps.add_metric(lv, float(s.env_steps))
            budget.add_metric(lv, float(s.max_env_steps))
            solved.add_metric(lv, 1.0 if s.solved else 0.0)
            for fam, v in ((fps, s.fps), (last, s.last_eval), (best, s.best_eval), (thr, s.reward_threshold),
                           (age, s.heartbeat_age)):
                if v is not None:
                    fam.add_metric(lv, v)
            for st in EXPORTED_STATUSES:
                status.add_metric([*lv, st.value], 1.0 if s.status == st else 0.0)
            for c, v in s.columns.items():
                cols[c].add_metric(lv, v)
        yield from (steps, budget, fps, last, best, thr, solved, age, status, *cols.values())
        yield GaugeMetricFamily(f"{PREFIX}_runs_exported", "runs exported by this scrape", value=len(got.samples))
        yield GaugeMetricFamily(f"{PREFIX}_runs_unreadable", "live runs whose files could not be read this scrape",
                                value=got.unreadable)
        yield GaugeMetricFamily(f"{PREFIX}_scrape_seconds", "seconds this scrape spent reading the runs folder",
                                value=got.seconds)


def make_registry(store: RunStore, keep_finished_seconds: float = DEFAULT_KEEP_FINISHED_SECONDS) -> CollectorRegistry:
    """A registry holding only the run collector (no process metrics of this server)."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(RunCollector(store, keep_finished_seconds))  # type: ignore[arg-type]
    return registry


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # one line per scrape every few seconds would drown the terminal


def make_app(registry: CollectorRegistry) -> Any:
    """The WSGI app: /metrics answers with the exposition text, anything else is a 404 naming /metrics."""
    from prometheus_client import make_wsgi_app

    metrics = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO", "") == METRICS_PATH:
            return metrics(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [f"gymnasium-solver telemetry: scrape {METRICS_PATH}\n".encode()]

    return app


def make_metrics_server(host: str, port: int, runs_dir: Path | str | None = None,
                        keep_finished_seconds: float = DEFAULT_KEEP_FINISHED_SECONDS) -> WSGIServer:
    """A bound (not yet serving) HTTP server exporting the runs folder's live runs on /metrics;
    port 0 picks a free port (``server.server_port``). OSError if the address cannot be bound."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, got {port}")
    if not 0 <= keep_finished_seconds <= MAX_KEEP_FINISHED_SECONDS:
        raise ValueError(f"--keep-finished must be between 0 and {MAX_KEEP_FINISHED_SECONDS:g} seconds, "
                         f"got {keep_finished_seconds:g}")
    app = make_app(make_registry(RunStore(runs_dir), keep_finished_seconds))
    return make_server(host, port, app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
