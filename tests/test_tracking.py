"""Tracking sinks (TensorBoard, MLflow) fed by the RunWriter, the user config file, and best-N /
last-N checkpoints (docs/tracking.md). Each training here is a few thousand CartPole steps."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from gymnasium_solver.config import ConfigError, preset_differences, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train import checkpoint_retention as retention

SMALL = ["n_envs=4", "eval_freq=512", "eval_episodes=2", "batch_size=64", "n_steps=64"]


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own ~/.config/gsolve/config.yaml must not change these tests."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")


def _train(runs_dir: Path, *sets: str, steps: int = 1024):
    from gymnasium_solver.train.training import train

    cfg = resolve_config("CartPole-v1:ppo", [*SMALL, f"max_env_steps={steps}", "reward_threshold=.inf", *sets])
    return train(cfg, runs_dir)


def _csv(run_dir: Path) -> rf.MetricsTable:
    return rf.parse_metrics_text((run_dir / rf.METRICS_CSV).read_text(encoding="utf-8"))


def _column(table: rf.MetricsTable, key: str) -> list[tuple[int, float]]:
    """(env_steps, value) of every row where ``key`` has a finite value."""
    steps, col = table.columns.index(rf.M.ENV_STEPS), table.columns.index(key)
    return [(int(r[steps] or 0), float(r[col])) for r in table.rows
            if r[col] is not None and math.isfinite(float(r[col]))]


# --- TensorBoard ------------------------------------------------------------------------------


def test_tensorboard_event_files_hold_every_metrics_column_keyed_by_env_steps(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    result = _train(tmp_path / "runs", "tensorboard=true")
    assert result.status == rf.RunStatus.COMPLETED
    info = rf.read_run_info(result.run_dir)
    assert info.tracking["tensorboard"] == f"{result.run_id}/{rf.TENSORBOARD_DIR}" and info.warnings == []
    events = EventAccumulator(str(result.run_dir / rf.TENSORBOARD_DIR), size_guidance={"scalars": 0})
    events.Reload()
    table = _csv(result.run_dir)
    tags = set(events.Tags()["scalars"])
    written = [k for k in table.columns if _column(table, k)]
    assert set(written) <= tags and rf.M.EVAL_RETURN_MEAN in written and rf.M.POLICY_LOSS in written
    for key in written:
        got = [(e.step, e.value) for e in events.Scalars(key)]
        want = _column(table, key)
        assert [s for s, _ in got] == [s for s, _ in want], key
        assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-6, abs=1e-30), key  # float32


def test_tensorboard_hparams_hold_the_config_and_the_final_results(tmp_path: Path) -> None:
    """Read back as TensorBoard's hparams plugin reads it: its plugin data in the run's event files
    (torch encodes a boolean as 1.0 / 0.0)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import metadata as hp_metadata

    result = _train(tmp_path / "runs", "tensorboard=true", "learning_rate.start=0.002")
    info = rf.read_run_info(result.run_dir)
    events = EventAccumulator(str(result.run_dir / rf.TENSORBOARD_DIR), size_guidance={"scalars": 0})
    events.Reload()
    content = events.PluginTagToContent(hp_metadata.PLUGIN_NAME)
    experiment = hp_metadata.parse_experiment_plugin_data(content[hp_metadata.EXPERIMENT_TAG])
    start = hp_metadata.parse_session_start_info_plugin_data(content[hp_metadata.SESSION_START_INFO_TAG])
    hparams = {k: v.WhichOneof("kind") and getattr(v, v.WhichOneof("kind")) for k, v in start.hparams.items()}
    assert hparams["learning_rate.start"] == pytest.approx(0.002) and hparams["n_envs"] == 4
    assert hparams["algo"] == "ppo" and hparams["normalize_advantages"] == 1.0 and hparams["env_id"] == "CartPole-v1"
    metrics = {m.name.tag for m in experiment.metric_infos}
    assert {"hparams/best_eval_return", "hparams/solved", "hparams/env_steps"} <= metrics
    assert info.best_eval is not None
    best = events.Scalars("hparams/best_eval_return")
    assert [(e.step, e.value) for e in best] == [(info.progress.env_steps, pytest.approx(info.best_eval.return_mean))]
    assert events.Scalars("hparams/solved")[0].value == 0.0


# --- MLflow -----------------------------------------------------------------------------------


def test_mlflow_default_store_is_sqlite_inside_the_runs_folder_read_back_without_flags(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default store is ``sqlite:///<runs>/.mlflow/mlflow.db`` with its artifacts beside it: MLflow's
    own client reads params, metrics, artifacts and the model back with no MLFLOW_ALLOW_FILE_STORE."""
    import mlflow.pyfunc
    import numpy as np
    from mlflow.tracking import MlflowClient

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)  # nothing may land in the current directory (MLflow's ./mlruns)
    runs = tmp_path / "runs"
    result = _train(runs, "mlflow=true", "learning_rate.start=0.002")
    info = rf.read_run_info(result.run_dir)
    assert info.warnings == []
    uri = info.tracking["mlflow_tracking_uri"]
    assert uri == f"sqlite:///{runs.resolve() / '.mlflow' / 'mlflow.db'}"
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(info.tracking["mlflow_run_id"])
    assert run.info.status == "FINISHED" and run.info.run_name == result.run_id
    assert run.info.artifact_uri.startswith((runs.resolve() / ".mlflow" / "artifacts").as_uri())
    assert client.get_experiment(run.info.experiment_id).name == "CartPole-v1"
    assert run.data.params["learning_rate.start"] == "0.002" and run.data.params["n_envs"] == "4"
    assert run.data.tags["gsolve.config_id"] == "CartPole-v1:ppo" and run.data.tags["gsolve.status"] == "completed"
    table = _csv(result.run_dir)
    for key in (rf.M.EVAL_RETURN_MEAN, rf.M.POLICY_LOSS, rf.M.EP_RETURN_MEAN):
        history = sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, key))
        want = _column(table, key)
        assert [s for s, _ in history] == [s for s, _ in want], key
        assert [v for _, v in history] == pytest.approx([v for _, v in want]), key
    folder = {a.path for a in client.list_artifacts(run.info.run_id, "run_folder")}
    assert {"run_folder/metrics.csv", "run_folder/run.json", "run_folder/config.yaml", "run_folder/checkpoints"} <= folder
    assert "model/MLmodel" in {a.path for a in client.list_artifacts(run.info.run_id, "model")}
    model = mlflow.pyfunc.load_model(f"{run.info.artifact_uri}/model")
    actions = model.predict(np.zeros((3, 4), np.float32))
    assert np.asarray(actions).shape == (3,) and set(np.asarray(actions).tolist()) <= {0, 1}
    # A second run shares the store and the experiment; the run store does not list the store as a run.
    second = _train(runs, "mlflow=true", steps=512)
    again = rf.read_run_info(second.run_dir).tracking
    assert again["mlflow_tracking_uri"] == uri and client.get_run(again["mlflow_run_id"]).info.experiment_id == \
        run.info.experiment_id
    from gymnasium_solver import run_store as rs

    assert sorted(rs.RunStore(runs).run_ids()) == sorted([result.run_id, second.run_id])


def test_mlflow_prints_nothing_of_its_own_on_the_trainers_stderr(tmp_path: Path) -> None:
    """A first run creates the store's tables: MLflow's INFO lines about it are not the user's business; the
    run's own lines are all that stderr shows."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_LOGGING_LEVEL"}
    out = subprocess.run([sys.executable, "-m", "gymnasium_solver.cli", "train", "CartPole-v1:ppo", "--set",
                          "max_env_steps=512", "mlflow=true", *SMALL, "--runs-dir", str(tmp_path / "runs")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 3, out.stderr[-2000:]  # 3: trained to its budget, unsolved (docs/cli.md)
    assert (tmp_path / "runs" / ".mlflow" / "mlflow.db").is_file()
    assert "mlflow" not in out.stderr.lower(), out.stderr


def test_a_named_file_store_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.tracking import MlflowClient

    store = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # what the sink sets for a file: URI
    result = _train(tmp_path / "runs", "mlflow=true", f"mlflow_tracking_uri={store}", steps=512)
    info = rf.read_run_info(result.run_dir)
    assert info.warnings == [] and info.tracking["mlflow_tracking_uri"] == store
    assert MlflowClient(tracking_uri=store).get_run(info.tracking["mlflow_run_id"]).info.status == "FINISHED"


def test_a_confined_run_never_logs_to_an_experiment_whose_artifacts_live_outside_the_runs_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow's 'Default' experiment keeps its artifacts in ./mlruns of whoever made the store: a run
    started over MCP may not write there (the sink refuses, the run completes, the warning says why)."""
    from gymnasium_solver.contract.locations import LocationPolicy

    monkeypatch.chdir(tmp_path)
    for key, value in LocationPolicy.from_options([]).as_env().items():
        monkeypatch.setenv(key, value)
    result = _train(tmp_path / "runs", "mlflow=true", "mlflow_experiment=Default", steps=512)
    info = rf.read_run_info(result.run_dir)
    assert result.status == rf.RunStatus.COMPLETED and [w.source for w in info.warnings] == ["mlflow"]
    assert "MLflow experiment 'Default''s artifact location" in info.warnings[0].message
    assert not (tmp_path / "mlruns").exists()


def test_the_mlflow_model_class_is_defined_without_mlflow_warnings() -> None:
    """Defining the pyfunc model class (which every run that logs a model does) must not make MLflow
    warn about predict's missing type hints: the run's output would carry a warning it cannot act on."""
    import importlib
    import warnings

    from gymnasium_solver.train.tracking import mlflow_model

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.reload(mlflow_model)
    assert not [w for w in caught if "type hint" in str(w.message)], [str(w.message) for w in caught]


# --- Weights & Biases (offline) ----------------------------------------------------------------


def test_wandb_offline_run_read_back_with_wandbs_own_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline by default, inside the run folder, read back by W&B's own reader of its transaction log
    (``wandb leet inspect --json``; the Python datastore reader is gone from wandb 0.2x+ and wandb.Api
    needs the server): config, every metric keyed by env steps, the final results, the exit."""
    import json
    import subprocess
    import sys

    pytest.importorskip("wandb")
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_API_KEY", "")  # no account needed
    monkeypatch.chdir(tmp_path)
    result = _train(tmp_path / "runs", "wandb=true", "learning_rate.start=0.002")
    info = rf.read_run_info(result.run_dir)
    assert info.warnings == [] and info.tracking["wandb_mode"] == "offline"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]  # nothing outside the run folder
    offline = list((result.run_dir / "wandb").glob("offline-run-*"))
    assert len(offline) == 1 and list(offline[0].glob("*.wandb"))
    wandb_cli = str(Path(sys.executable).with_name("wandb"))
    out = subprocess.run([wandb_cli, "leet", "inspect", "--json", str(offline[0])], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    records = [json.loads(line) for line in out.splitlines() if line.strip()]
    run = next(r["run"] for r in records if r["type"] == "run")
    assert run["run_id"] == result.run_id and run["run_group"] == "CartPole-v1:ppo"
    assert run["config"]["update"]["learning_rate"]["start"] == 0.002 and run["config"]["update"]["n_envs"] == 4
    history = [r["history"]["item"] for r in records if r["type"] == "history"]
    table = _csv(result.run_dir)
    for key in (rf.M.EVAL_RETURN_MEAN, rf.M.POLICY_LOSS, rf.M.EP_RETURN_MEAN):
        got = [(int(h[rf.M.ENV_STEPS]), h[key]) for h in history if key in h]
        want = _column(table, key)
        assert [s for s, _ in got] == [s for s, _ in want], key
        assert [v for _, v in got] == pytest.approx([v for _, v in want]), key
    summary = json.loads(subprocess.run([wandb_cli, "leet", "inspect", "--summary", "--json", str(offline[0])],
                                        capture_output=True, text=True, timeout=120, check=True).stdout)
    assert summary["state"] == "finished" and summary["exit_code"] == 0
    assert info.best_eval is not None
    assert summary["summary"]["final/best_eval_return"] == pytest.approx(info.best_eval.return_mean)
    assert summary["summary"]["gsolve/status"] == "completed"


# --- OpenTelemetry ---------------------------------------------------------------------------


def test_otel_exports_one_span_per_run_with_evaluation_events_and_metrics(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read back with the SDK's own in-memory exporter and reader (the OTLP exporters are swapped out)."""
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from gymnasium_solver.train.tracking import otel_sink

    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    monkeypatch.setattr(otel_sink, "make_exporters", lambda: (spans, reader))
    collected: list = []
    real_close = otel_sink.OtelSink.close

    def close(self: otel_sink.OtelSink) -> None:  # the reader's data, taken before the provider shuts down
        if self._meter_provider is not None:
            collected.append(reader.get_metrics_data())
        real_close(self)

    monkeypatch.setattr(otel_sink.OtelSink, "close", close)
    result = _train(tmp_path / "runs", "otel=true")
    info = rf.read_run_info(result.run_dir)
    assert info.warnings == []
    [span] = spans.get_finished_spans()
    assert span.name == "gsolve.train" and span.attributes["gsolve.run_id"] == result.run_id
    assert f"{span.context.trace_id:032x}" == info.tracking["otel_trace_id"]
    assert span.status.is_ok and span.attributes["gsolve.status"] == "completed"
    assert info.best_eval is not None
    assert span.attributes["gsolve.final.best_eval_return"] == pytest.approx(info.best_eval.return_mean)
    table = _csv(result.run_dir)
    events = [(e.attributes[rf.M.ENV_STEPS], e.attributes[rf.M.EVAL_RETURN_MEAN]) for e in span.events]
    assert events == [(s, pytest.approx(v)) for s, v in _column(table, rf.M.EVAL_RETURN_MEAN)]
    metrics = {m.name: m for rm in collected[0].resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert {f"gsolve.{rf.M.POLICY_LOSS}", f"gsolve.{rf.M.EVAL_RETURN_MEAN}"} <= set(metrics)
    [point] = metrics[f"gsolve.{rf.M.EP_RETURN_MEAN}"].data.data_points
    assert point.value == pytest.approx(_column(table, rf.M.EP_RETURN_MEAN)[-1][1])  # a gauge: the last value
    assert point.attributes["gsolve.run_id"] == result.run_id


# --- imported only when enabled ---------------------------------------------------------------

TRACKER_MODULES = ("mlflow", "wandb", "opentelemetry.sdk", "opentelemetry.exporter", "tensorboard", "sqlalchemy",
                   "torch.utils.tensorboard")


def test_no_tracker_library_loads_in_the_mcp_server_or_a_run_that_does_not_ask_for_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = f"""
import sys
import mcp_server.server
from gymnasium_solver.config import resolve_config
from gymnasium_solver.train.training import train
cfg = resolve_config("CartPole-v1:ppo", {[*SMALL, "max_env_steps=256", "reward_threshold=.inf"]!r})
train(cfg, {str(tmp_path / "runs")!r})
print([m for m in sys.modules if m.startswith({TRACKER_MODULES!r})])
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GSOLVE_CONFIG": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


# --- a failing sink never fails the run -------------------------------------------------------


def test_a_sink_that_fails_is_switched_off_and_recorded_and_the_run_completes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from gymnasium_solver.train.tracking.tensorboard_sink import TensorBoardSink

    calls = {"n": 0}
    original = TensorBoardSink.append

    def flaky(self: TensorBoardSink, row: dict) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk of the event files went away")
        original(self, row)

    monkeypatch.setattr(TensorBoardSink, "append", flaky)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the MLflow store would go")
    result = _train(tmp_path / "runs", "tensorboard=true", "mlflow=true",
                    f"mlflow_tracking_uri={(blocked / 'mlruns').as_uri()}")
    assert result.status == rf.RunStatus.COMPLETED and result.failure is None
    info = rf.read_run_info(result.run_dir)
    assert sorted(w.source for w in info.warnings) == ["mlflow", "tensorboard"]
    assert all(w.kind == "tracking_sink_failed" for w in info.warnings)
    tb = next(w for w in info.warnings if w.source == "tensorboard")
    assert "disk of the event files went away" in tb.message and tb.env_steps
    assert calls["n"] == 3  # switched off after the failure: never called again
    table = _csv(result.run_dir)
    assert table.rows and int(table.rows[-1][table.columns.index(rf.M.ENV_STEPS)] or 0) >= 1024
    log = (result.run_dir / rf.RUN_LOG).read_text(encoding="utf-8")
    assert "warning: tensorboard failed at append" in log and "warning: mlflow failed at start" in log
    # ... and every reader shows them: get_run_info's details and `gsolve show`
    from gymnasium_solver import run_store as rs
    from gymnasium_solver.cli import app as cli

    store = rs.RunStore(tmp_path / "runs")
    details = rs.run_details(store, result.run_dir)
    assert sorted(w.source for w in details.warnings) == ["mlflow", "tensorboard"]
    assert cli.main(["show", result.run_id, "--runs-dir", str(tmp_path / "runs")]) == 0
    shown = capsys.readouterr().out
    assert "warning     tracking_sink_failed (tensorboard)" in shown and "disk of the event files went away" in shown


def test_asking_for_a_sink_whose_library_is_missing_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from gymnasium_solver.train.training import train

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    cfg = resolve_config("CartPole-v1:ppo", ["mlflow=true"])
    with pytest.raises(ConfigError, match=r"mlflow: true needs mlflow-skinny.*pip install 'gymnasium-solver\[tracking\]'"):
        train(cfg, tmp_path / "runs")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.parametrize(("key", "module", "extra"), [("wandb", "wandb", "wandb"), ("otel", "opentelemetry.sdk", "otel"),
                                                     ("mlflow", "sqlalchemy", "tracking")])
def test_each_sink_names_its_own_extra_when_missing(monkeypatch: pytest.MonkeyPatch, key: str, module: str,
                                                    extra: str) -> None:
    import importlib.util

    from gymnasium_solver.train.tracking import check_tracking_available

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(ConfigError, match=rf"{key}: true needs .*pip install 'gymnasium-solver\[{extra}\]'"):
        check_tracking_available(resolve_config("CartPole-v1:ppo", [f"{key}=true"]))


# --- best-N and last-N checkpoints -----------------------------------------------------------


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory: pytest.TempPathFactory):
    """One run keeping the 2 best evaluations and the 2 last periodic checkpoints (8 evaluations)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GSOLVE_CONFIG", "")
        return _train(tmp_path_factory.mktemp("kept") / "runs", "keep_best_checkpoints=2", "checkpoint_freq=512",
                      "keep_last_checkpoints=2", "eval_freq=256", steps=2048)


def test_best_n_and_last_n_keep_exactly_the_right_checkpoints_with_metadata(kept_run, capsys) -> None:
    from gymnasium_solver import run_store as rs
    from gymnasium_solver.cli.app import main

    result = kept_run
    table = _csv(result.run_dir)
    evals = [retention.Kept(retention.top_eval_name(s), s, v) for s, v in _column(table, rf.M.EVAL_RETURN_MEAN)]
    assert len(evals) >= 6
    expected_top = retention.best_n(evals, 2)
    steps_col = [int(r[table.columns.index(rf.M.ENV_STEPS)] or 0) for r in table.rows]
    periodic = [s for s in steps_col if s % 512 == 0]  # 256 env steps per iteration: every other one
    listing = rs.list_checkpoints(result.run_dir)
    by_name = {c.name: c for c in listing.checkpoints}
    assert set(by_name) == {"best", "last", *(e.name for e in expected_top),
                            *(retention.periodic_name(s) for s in periodic[-2:])}
    for rank, want in enumerate(expected_top, 1):
        got = by_name[want.name]
        assert (got.role, got.rank, got.env_steps, got.file_present) == ("top_eval", rank, want.env_steps, True)
        assert got.eval_return_mean == pytest.approx(want.eval_return_mean)
        row = table.rows[steps_col.index(want.env_steps)]
        assert got.iteration == int(row[table.columns.index(rf.M.ITERATION)] or 0)
        assert got.wall_seconds == pytest.approx(float(row[table.columns.index(rf.M.WALL_SECONDS)] or 0), abs=0.5)
    assert by_name["best"].eval_return_mean == pytest.approx(expected_top[0].eval_return_mean)
    assert {c.role for c in listing.checkpoints} == {"best", "last", "top_eval", "periodic"}
    files = sorted(p.name for p in (result.run_dir / rf.CHECKPOINTS_DIR).iterdir())
    assert len(files) == 2 * len(by_name)  # pruned ones leave neither weights nor metadata behind

    runs = str(result.run_dir.parent)
    assert main(["checkpoints", result.run_id, "--runs-dir", runs]) == 0
    out = capsys.readouterr().out
    assert expected_top[0].name in out and "top_eval" in out and f"gsolve eval {result.run_id}" in out
    assert main(["eval", result.run_id, "--checkpoint", expected_top[1].name, "--episodes", "2", "--runs-dir", runs]) == 0
    assert f"checkpoint {expected_top[1].name}" in capsys.readouterr().out


@pytest.mark.anyio
async def test_list_checkpoints_over_mcp_gives_each_role_and_the_best_n_ranks(kept_run) -> None:
    from mcp import Client

    from mcp_server.server import create_server

    async with Client(create_server(kept_run.run_dir.parent)) as client:
        res = await client.call_tool("get_run_info", {"run_id": kept_run.run_id, "view": "checkpoints"})
    assert not res.is_error and res.structured_content is not None
    cps = res.structured_content["checkpoints"]["checkpoints"]
    tops = sorted((c for c in cps if c["role"] == "top_eval"), key=lambda c: c["rank"])
    assert [c["rank"] for c in tops] == [1, 2] and tops[0]["eval_return_mean"] >= tops[1]["eval_return_mean"]
    assert sum(c["role"] == "periodic" for c in cps) == 2 and {"best", "last"} <= {c["name"] for c in cps}
    assert all(c["file_present"] and c["iteration"] > 0 and c["wall_seconds"] > 0 for c in cps)


def test_retention_ranks_by_return_ties_to_the_earlier_and_keeps_the_newest() -> None:
    k = retention.Kept
    cands = [k("eval_100", 100, 5.0), k("eval_200", 200, 9.0), k("eval_300", 300, 9.0), k("eval_400", 400, None),
             k("eval_500", 500, 7.0)]
    assert [c.name for c in retention.best_n(cands, 2)] == ["eval_200", "eval_300"]
    assert [c.name for c in retention.best_n(cands, 3)] == ["eval_200", "eval_300", "eval_500"]
    assert retention.would_rank(cands, 9.5, 2) and not retention.would_rank(cands, 9.0, 2)
    assert retention.would_rank([], -1e9, 1) and not retention.would_rank(cands, 100.0, 0)
    assert [c.name for c in retention.last_n(cands, 2)] == ["eval_500", "eval_400"]
    assert retention.to_prune(cands, retention.best_n(cands, 2)) == ["eval_100", "eval_400", "eval_500"]


def test_keep_last_needs_periodic_checkpoints_and_counts_are_bounded() -> None:
    with pytest.raises(ConfigError, match="set checkpoint_freq too"):
        resolve_config("CartPole-v1:ppo", ["keep_last_checkpoints=3"])
    with pytest.raises(ConfigError, match="keep_best_checkpoints: must be <= 100"):
        resolve_config("CartPole-v1:ppo", ["keep_best_checkpoints=101"])


# --- the user config file ---------------------------------------------------------------------


def test_the_user_config_sets_output_defaults_that_set_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "config.yaml"
    user.write_text("tensorboard: true\nkeep_best_checkpoints: 3\n")
    monkeypatch.setenv("GSOLVE_CONFIG", str(user))
    cfg = resolve_config("CartPole-v1:ppo")
    assert cfg.tensorboard and cfg.keep_best_checkpoints == 3 and not cfg.mlflow
    assert not resolve_config("CartPole-v1:ppo", ["tensorboard=false"]).tensorboard
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    plain = resolve_config("CartPole-v1:ppo")
    assert not plain.tensorboard
    assert preset_differences(cfg.model_dump(mode="json"), plain) == {}  # where results go is no deviation


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("learning_rate: 0.1\n", "'learning_rate' is a training key: set it in a preset or with --set"),
        ("tensorbord: true\n", "'tensorbord' is not a config key; did you mean 'tensorboard'?"),
        ("- tensorboard\n", "expected a mapping such as 'tensorboard: true'"),
        ("keep_best_checkpoints: -1\n", "keep_best_checkpoints: must be >= 0"),
    ],
)
def test_a_bad_user_config_is_a_sentence_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str) -> None:
    user = tmp_path / "config.yaml"
    user.write_text(text)
    monkeypatch.setenv("GSOLVE_CONFIG", str(user))
    with pytest.raises(ConfigError, match="user config") as err:
        resolve_config("CartPole-v1:ppo")
    assert message in str(err.value)


def test_a_user_config_named_but_missing_says_how_to_fix_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(ConfigError, match="does not exist; create it, or unset"):
        resolve_config("CartPole-v1:ppo")
    monkeypatch.delenv("GSOLVE_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no gsolve/config.yaml there: no defaults
    assert not resolve_config("CartPole-v1:ppo").tensorboard
