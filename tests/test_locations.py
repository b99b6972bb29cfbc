"""Settings that name a location or a host are confined for runs started over MCP (issue 26, item 3):
the default store and the runs folder, anything else only when the server's operator allowed it.
The rule itself, then through the real MCP client, then the trainer's own last line (the sink)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from mcp import Client

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.locations import CONFINE_ENV, LocationError, LocationPolicy
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

CONFINED = LocationPolicy.from_options()
TINY = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "eval_freq": 256, "eval_episodes": 2, "max_env_steps": 256,
        "reward_threshold": 1e9}


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG", "")  # a developer's own tracking defaults must not change these tests


def _allowed(policy: LocationPolicy, uri: str, runs: Path) -> bool:
    try:
        policy.check_uri(uri, runs)
    except LocationError:
        return False
    return True


def test_the_default_store_and_the_runs_folder_are_allowed_and_nothing_else(tmp_path: Path) -> None:
    runs, outside = tmp_path / "runs", tmp_path / "outside"
    runs.mkdir()
    outside.mkdir()
    (runs / "link").symlink_to(outside)
    assert _allowed(CONFINED, None, runs)  # type: ignore[arg-type]  # unset: the default store
    for uri in [(runs / "store").as_uri(), str(runs / "store"), f"file:{runs}/a", f"sqlite:///{runs}/.mlflow/mlflow.db",
                f"sqlite:///{runs}/other.db"]:
        assert _allowed(CONFINED, uri, runs), uri
    # The old default (mlruns/ beside the runs folder) is outside it now that the default store is inside.
    for uri in [outside.as_uri(), "file:/etc/gsolve", f"{runs}/../outside", (runs / "link" / "x").as_uri(),
                f"file:{runs}/%2e%2e/outside", "file://otherhost/tmp/x", "http://internal-host/api",
                "https://169.254.169.254/latest", "sqlite:///mlflow.db", "databricks", "mlruns",
                (tmp_path / "mlruns").as_uri(), f"sqlite:///{outside}/x.db", f"sqlite:///{runs}/../x.db",
                f"sqlite:///{runs}/%2e%2e/x.db", f"sqlite:///{runs}/link/x.db", f"sqlite:///{runs}/a.db?uri=true",
                f"sqlite://host/{runs}/a.db", "sqlite://", "sqlite:///:memory:"]:
        assert not _allowed(CONFINED, uri, runs), uri
    # A shell user (no confining server above them) names what they like.
    assert _allowed(LocationPolicy.from_env({}), "http://internal-host/api", runs)


def test_an_operator_allowance_covers_itself_and_what_is_below_it_only(tmp_path: Path) -> None:
    runs, shared = tmp_path / "runs", tmp_path / "shared"
    policy = LocationPolicy.from_options(["http://mlflow.internal:5000/team", str(shared)])
    for uri in ["http://mlflow.internal:5000/team", "http://MLflow.internal:5000/team/x", (shared / "a").as_uri()]:
        assert _allowed(policy, uri, runs), uri
    for uri in ["http://mlflow.internal:5000@evil.example/team", "http://mlflow.internal:50001/team",
                "https://mlflow.internal:5000/team", "http://mlflow.internal:5000/teamster",
                "http://mlflow.internal:5000/team/../admin", "http://mlflow.internal:5000/team/%2e%2e/admin",
                "http://mlflow.internal:5000/team?x=1", (tmp_path / "shared2").as_uri()]:
        assert not _allowed(policy, uri, runs), uri
    assert _allowed(LocationPolicy.from_options(["*"]), "http://anywhere/", runs)
    with pytest.raises(ValueError, match="neither a path"):
        LocationPolicy.from_options(["http:no-host"])
    # The policy travels to every process the server starts through its environment.
    assert LocationPolicy.from_env(policy.as_env()) == policy and LocationPolicy.from_env({}).confined is False


def test_a_refusal_is_one_sentence_that_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(LocationError) as info:
        CONFINED.check_uri("http://internal-host/", tmp_path, "CartPole-v1:ppo")
    text = str(info.value)
    assert text.startswith("CartPole-v1:ppo: mlflow_tracking_uri 'http://internal-host/' is not allowed on this server")
    assert "leave it unset" in text and "--allow-tracking-uri http://internal-host/" in text and "\n" not in text


# --- through the MCP client -------------------------------------------------------------------


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, str, Any]:
    res = await client.call_tool(name, args)
    return res.is_error, " ".join(getattr(c, "text", "") for c in res.content), res.structured_content


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["file_outside", "http_host"])
async def test_start_training_refuses_a_tracking_uri_the_operator_did_not_allow(where: str, tmp_path: Path) -> None:
    runs, outside = tmp_path / "runs", tmp_path / "outside"
    runs.mkdir()
    uri = outside.as_uri() if where == "file_outside" else "http://internal-host:5000/"
    async with Client(create_server(runs)) as client:
        failed, text, _ = await _call(client, "start_training", {
            "config_id": "CartPole-v1:ppo", "overrides": {**TINY, "mlflow": True, "mlflow_tracking_uri": uri}})
        assert failed and "is not allowed on this server" in text and "--allow-tracking-uri" in text
        assert "Traceback" not in text
        # The same setting in a sweep's fixed overrides or its space is refused the same way.
        failed, text, _ = await _call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "overrides": {**TINY, "mlflow": True},
            "space": {"mlflow_tracking_uri": {"type": "categorical", "choices": [(runs / "s").as_uri(), uri]}}})
        assert failed and "is not allowed on this server" in text
    assert not outside.exists() and list(runs.iterdir()) == []  # nothing written, no run folder created


def _plant(real_runs: RealRuns, runs: Path, uri: str) -> Path:
    """A copy of an unsolved run whose folder (someone else's) names ``uri`` and can be resumed."""
    run_dir = runs / real_runs.short
    shutil.copytree(real_runs.runs_dir / real_runs.short, run_dir)
    cfg = yaml.safe_load((run_dir / rf.CONFIG_YAML).read_text())
    cfg.update(mlflow=True, mlflow_tracking_uri=uri, max_env_steps=1_000_000)
    (run_dir / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg))
    info = json.loads((run_dir / rf.RUN_JSON).read_text())
    info.update(status="stopped", stop_reason="user_stopped", max_env_steps=1_000_000)
    (run_dir / rf.RUN_JSON).write_text(json.dumps(info))
    return run_dir


@pytest.mark.anyio
async def test_a_run_folder_from_someone_else_cannot_point_resume_or_fixes_elsewhere(real_runs: RealRuns,
                                                                                    tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_dir = _plant(real_runs, runs, "http://internal-host/")
    before = sorted(p.name for p in runs.iterdir())
    async with Client(create_server(runs)) as client:
        for tool, args, what in (("start_training", {"resume": run_dir.name}, f"resuming {run_dir.name}"),
                                 ("fix_run", {"run_id": run_dir.name}, "trials of")):
            failed, text, _ = await _call(client, tool, args)
            assert failed and f": {what}" in text and "is not allowed on this server" in text, (tool, text)
    assert sorted(p.name for p in runs.iterdir()) == before


@pytest.mark.anyio
async def test_what_the_operator_allowed_is_where_the_run_logs(tmp_path: Path) -> None:
    runs, shared = tmp_path / "runs", tmp_path / "shared-mlflow"
    runs.mkdir()
    uri = (shared / "store").as_uri()
    async with Client(create_server(runs, locations=LocationPolicy.from_options([str(shared)]))) as client:
        failed, text, started = await _call(client, "start_training", {
            "config_id": "CartPole-v1:ppo", "overrides": {**TINY, "mlflow": True, "mlflow_tracking_uri": uri}})
        assert not failed, text
        for _ in range(6):
            failed, text, waited = await _call(client, "get_run_info", {"run_id": started["run_id"], "view": "status",
                                                                        "wait_seconds": 30})
            if waited["status"]["finished"]:
                break
        assert waited["status"]["finished"] and waited["status"]["status"] == "completed", waited
    info = rf.read_run_info(runs / started["run_id"])
    assert info.warnings == [] and info.tracking["mlflow_tracking_uri"] == uri
    assert any((shared / "store").iterdir())


# --- the trainer's own last line ----------------------------------------------------------------


def test_a_trainer_started_by_a_confining_server_never_reaches_an_outside_uri(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever path led to the trainer (a future tool, a hand-edited sweep record), the MLflow sink
    checks the policy it inherited before it connects: the run trains, MLflow is switched off and why is recorded."""
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.train.training import train

    monkeypatch.setenv(CONFINE_ENV, "1")
    outside = tmp_path / "outside"
    cfg = resolve_config("CartPole-v1:ppo", {**TINY, "mlflow": True, "mlflow_tracking_uri": outside.as_uri()})
    result = train(cfg, tmp_path / "runs")
    assert result.status == rf.RunStatus.COMPLETED
    info = rf.read_run_info(result.run_dir)
    assert [w.source for w in info.warnings] == ["mlflow"] and "is not allowed on this server" in info.warnings[0].message
    assert not outside.exists()
