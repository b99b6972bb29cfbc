"""`gsolve serve-metrics`: scraped over real HTTP and parsed with prometheus_client's parser; the
values must be the run store's."""

from __future__ import annotations

import os
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RealRuns

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.ops import telemetry
from gymnasium_solver.run_store import RunStore

parser = pytest.importorskip("prometheus_client.parser")


def _make_live(runs_dir: Path, run_id: str) -> None:
    """A finished real run made to look live: status running, this process's pid, fresh heartbeat."""
    d = runs_dir / run_id
    info = rf.read_run_info(d).model_copy(update={"status": rf.RunStatus.RUNNING, "pid": os.getpid(),
                                                  "host": socket.gethostname(), "updated_at": rf.utc_now_iso(),
                                                  "finished_at": None, "stop_reason": None})
    rf.write_run_info(d, info)


def _serve(runs_dir: Path, keep_finished: float) -> Iterator[str]:
    server = telemetry.make_metrics_server("127.0.0.1", 0, runs_dir, keep_finished)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _scrape(base: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain")
        text = resp.read().decode()
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for fam in parser.text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def _by_run(samples: dict[tuple[tuple[str, str], ...], float]) -> dict[str, float]:
    return {dict(k)["run"]: v for k, v in samples.items()}


@pytest.fixture()
def live(scratch_runs: RealRuns) -> Iterator[tuple[RealRuns, str]]:
    _make_live(scratch_runs.runs_dir, scratch_runs.short)
    yield from ((scratch_runs, b) for b in _serve(scratch_runs.runs_dir, keep_finished=0.0))


def test_endpoint_exports_the_live_run_with_the_run_stores_values(live: tuple[RealRuns, str]) -> None:
    runs, base = live
    got = _scrape(base)
    store = RunStore(runs.runs_dir)
    d = runs.runs_dir / runs.short
    info = store.info(d)
    labels = (("algo", info.algo), ("env", info.env_id), ("run", runs.short))
    # Only the live run: the finished fixture runs ended long ago (keep_finished=0 drops them).
    assert set(_by_run(got["gsolve_run_env_steps_total"])) == {runs.short}
    assert got["gsolve_run_env_steps_total"][labels] == store.env_steps(d)
    assert got["gsolve_run_fps"][labels] == pytest.approx(store.last_value(d, rf.M.FPS))
    assert info.last_eval is not None
    assert got["gsolve_run_eval_return"][labels] == pytest.approx(info.last_eval.return_mean)
    assert got["gsolve_train_policy_loss"][labels] == pytest.approx(store.last_value(d, rf.M.POLICY_LOSS))
    assert got["gsolve_train_value_loss"][labels] == pytest.approx(store.last_value(d, rf.M.VALUE_LOSS))
    assert got["gsolve_run_status"][(*labels[:2], labels[2], ("status", "running"))] == 1.0
    assert got["gsolve_run_status"][(*labels[:2], labels[2], ("status", "completed"))] == 0.0
    assert got["gsolve_runs_exported"][()] == 1.0


def test_a_growing_run_is_seen_by_the_next_scrape_and_other_paths_404(live: tuple[RealRuns, str]) -> None:
    runs, base = live
    d = runs.runs_dir / runs.short
    first = _by_run(_scrape(base)["gsolve_train_policy_loss"])[runs.short]
    header = RunStore(runs.runs_dir).metric_columns(d)
    w = rf.MetricsWriter(d / rf.METRICS_CSV, header)
    w.append({rf.M.ITERATION: 999, rf.M.ENV_STEPS: 10**6, rf.M.POLICY_LOSS: first + 1.5})
    w.close()
    got = _scrape(base)
    assert _by_run(got["gsolve_train_policy_loss"])[runs.short] == pytest.approx(first + 1.5)
    # Columns the new row left empty keep their last measured value (read further back).
    store = RunStore(runs.runs_dir)
    assert _by_run(got["gsolve_train_value_loss"])[runs.short] == pytest.approx(store.last_value(d, rf.M.VALUE_LOSS))
    assert _by_run(got["gsolve_run_fps"])[runs.short] == pytest.approx(store.last_value(d, rf.M.FPS))
    assert _by_run(got["gsolve_run_env_steps_total"])[runs.short] == 10**6
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{base}/other", timeout=10)
    assert err.value.code == 404


def test_finished_runs_are_kept_with_their_final_status_then_dropped(real_runs: RealRuns) -> None:
    for base in _serve(real_runs.runs_dir, keep_finished=telemetry.MAX_KEEP_FINISHED_SECONDS):
        got = _scrape(base)
    status = {(dict(k)["run"], dict(k)["status"]): v for k, v in got["gsolve_run_status"].items()}
    assert status[(real_runs.solved, "completed")] == 1.0 and status[(real_runs.solved, "running")] == 0.0
    assert _by_run(got["gsolve_run_solved"])[real_runs.solved] == 1.0
    assert _by_run(got["gsolve_run_solved"])[real_runs.short] == 0.0
    now = max(rf.parse_iso(rf.read_run_info(real_runs.runs_dir / r).finished_at or "") for r in
              (real_runs.short, real_runs.solved, real_runs.reinforce))
    assert telemetry.scrape(RunStore(real_runs.runs_dir), keep_finished_seconds=60, now=now + 61).samples == []


def test_serve_metrics_cli_refuses_a_busy_port(real_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code = cli.main(["serve-metrics", "--port", str(port), "--runs-dir", str(real_runs.runs_dir)])
    assert code == 2
    assert f"port {port} on 127.0.0.1 is already in use" in capsys.readouterr().err
    assert cli.main(["serve-metrics", "--port", "70000"]) == 2
