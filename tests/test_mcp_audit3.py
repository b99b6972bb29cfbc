"""New-user audit 3: what the MCP tools answer must be true and said in the tools' own terms (each test
failed before its fix)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio


@pytest.fixture()
async def client(real_runs: RealRuns) -> AsyncIterator[Client]:
    async with Client(create_server(real_runs.runs_dir)) as c:
        yield c


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    assert "Traceback" not in text
    return res.is_error, (text if res.is_error else res.structured_content)


async def test_get_config_source_says_where_the_settings_came_from(client: Client, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """MountainCar-v0 has no preset of ours: its settings are the RL Zoo's (or, zoo=false, the defaults), not a
    preset's; `source` said 'preset' whatever settings_from said."""
    for args, source in (({"config_id": "CartPole-v1:ppo"}, "preset"),
                         ({"config_id": "MountainCar-v0:ppo"}, "zoo"),
                         ({"config_id": "MountainCar-v0:ppo", "zoo": False}, "default")):
        failed, cfg = await _call(client, "get_config", args)
        assert not failed and cfg["source"] == source and cfg["settings_from"].startswith(f"{source}:"), (args, cfg)
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "CartPole-v1.yaml").write_text("variants:\n  mine: {algo: ppo, n_envs: 2}\n", encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    failed, cfg = await _call(client, "get_config", {"config_id": "CartPole-v1:mine"})
    assert not failed and cfg["source"] == "user_preset" and cfg["settings_from"].startswith("preset:"), cfg


async def test_results_name_the_tools_argument_not_the_command_lines(client: Client, real_runs: RealRuns) -> None:
    """diagnose_run's summary said `try --set learning_rate=...` and start_training's config_notes `set one with
    --set reward_threshold=...`: flags the model cannot pass; a tool's settings are its `overrides`."""
    failed, d = await _call(client, "diagnose_run", {"run_id": real_runs.short})
    assert not failed and "try overrides={" in d["summary"] and "--set" not in str(d), d["summary"]
    failed, cfg = await _call(client, "get_config", {"config_id": "Blackjack-v1:ppo", "overrides": {"n_envs": 2}})
    assert not failed and "--set" not in str(cfg), cfg
    assert any('overrides={"reward_threshold": ...}' in n for n in cfg["notes"]), cfg["notes"]


def test_a_shell_quoted_set_reads_as_the_overrides_argument() -> None:
    """The diagnosis quotes a --set whose value has spaces (a schedule) for a shell; a tool says it as overrides."""
    from mcp_server.common import in_tool_terms

    text = "most likely: X [x]; try --set 'learning_rate={start: 0.0001, end: 0.0}' --set max_env_steps=200000"
    assert in_tool_terms(text) == ('most likely: X [x]; try overrides={"learning_rate": {"start": 0.0001, "end": 0.0}, '
                                   '"max_env_steps": 200000}')


async def test_start_training_notes_name_the_overrides_argument(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path)) as client:
        failed, started = await _call(client, "start_training", {"config_id": "Blackjack-v1:ppo", "overrides": {
            "max_env_steps": 256, "n_envs": 1, "n_steps": 128, "batch_size": 64, "eval_freq": 256, "eval_episodes": 2}})
        assert not failed, started
        try:
            notes = started["started"]["config_notes"]
            assert any('overrides={"reward_threshold": ...}' in n for n in notes) and "--set" not in str(notes), notes
        finally:
            failed, waited = await _call(client, "get_run_info", {"run_id": started["run_id"], "view": "status",
                                                                  "wait_seconds": 60})
            assert not failed and waited["status"]["finished"], waited


def _unsolved_sweep(runs: Path) -> str:
    """A sweep whose study holds two completed trials that never solved, as its coordinator records them."""
    from gymnasium_solver.sweeps import launch
    from gymnasium_solver.sweeps import study as st
    from gymnasium_solver.sweeps.space import parse_space

    optuna = st.load_optuna()
    plan = launch.prepare_sweep(runs, "CartPole-v1:ppo", parse_space({"n_epochs": {"type": "int", "low": 2, "high": 8}},
                                                                     "space"), n_trials=2)
    study = st.open_study(plan.record, create=False)
    dist = optuna.distributions.IntDistribution(2, 8)
    for n_epochs, best_eval in ((3, 474.9), (5, 200.0)):
        result = st.TrialResult(run_id=None, outcome="not_solved", env_steps=100_000, best_eval=best_eval)
        study.add_trial(optuna.trial.create_trial(params={"n_epochs": n_epochs}, distributions={"n_epochs": dist},
                                                  value=st.unsolved_value(best_eval),
                                                  user_attrs={"result": result.model_dump(mode="json")}))
    return plan.record.sweep_id


async def test_get_sweep_shows_an_unsolved_best_as_unsolved_not_as_its_penalty(tmp_path: Path) -> None:
    """The best of a sweep in which no trial solved read `value: 999999999525.1`: the ranking's penalty, not a figure
    anyone measured."""
    sweep_id = _unsolved_sweep(tmp_path)
    async with Client(create_server(tmp_path)) as client:
        failed, report = await _call(client, "get_sweep", {"sweep_id": sweep_id})
    assert not failed, report
    best = report["summary"]["best"]
    assert best["solved"] is False and best["value"] is None and best["best_eval"] == 474.9, best
    assert best["result"] == "not solved: best eval 474.9", best
    assert all(row["value"] is None for row in report["summary"]["trials"]), report["summary"]["trials"]


async def test_a_sweep_whose_coordinator_dies_at_start_says_so_with_its_log(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A coordinator that exits before it opens the study left the record at 'planned; not started yet', pid null,
    for the 60 s its heartbeat takes to go stale."""
    import subprocess
    import sys

    from gymnasium_solver import launcher

    def dies_at_once(cmd: list[str], log_path: Path) -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as log:
            return subprocess.Popen([sys.executable, "-c", "raise SystemExit('ValueError: the storage is locked')"],
                                    stdout=log, stderr=subprocess.STDOUT)

    monkeypatch.setattr(launcher, "spawn_detached", dies_at_once)  # start_coordinator's
    async with Client(create_server(tmp_path)) as client:
        failed, started = await _call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "space": {"n_epochs": {"type": "int", "low": 2, "high": 8}}, "n_trials": 2})
        assert not failed, started
        for _ in range(100):  # the child exits within a second or two
            failed, report = await _call(client, "get_sweep", {"sweep_id": started["sweep_id"]})
            if report["summary"]["sweep"]["status"] != "running":
                break
            time.sleep(0.1)
    sweep = report["summary"]["sweep"]
    assert sweep["status"] == "crashed" and sweep["pid"] == started["pid"], sweep
    assert "coordinator process exited" in sweep["message"], sweep["message"]
    assert f".sweeps/{started['sweep_id']}.log in the runs folder" in sweep["message"] and "the storage is locked" in sweep["message"]


def _make_live(run_dir: Path) -> None:
    """The run's run.json as its trainer keeps it while training: status running, a live pid here, a fresh heartbeat."""
    import os
    import socket

    from gymnasium_solver.contract import run_folder as rf

    info = rf.read_run_info(run_dir)
    rf.write_run_info(run_dir, info.model_copy(update={"status": rf.RunStatus.RUNNING, "stop_reason": None,
                                                       "finished_at": None, "pid": os.getpid(),
                                                       "host": socket.gethostname(), "updated_at": rf.utc_now_iso()}))


async def test_check_run_and_promote_run_refuse_a_run_still_training(scratch_runs: RealRuns) -> None:
    """check_run judged a live run against the preset, and promote_run re-evaluated one and recorded a rejection:
    both about a run that has not finished."""
    _make_live(scratch_runs.runs_dir / scratch_runs.solved)
    async with Client(create_server(scratch_runs.runs_dir)) as client:
        for name, args in (("check_run", {"run_id": scratch_runs.solved}),
                           ("check_run", {"run_id": scratch_runs.short, "baseline": scratch_runs.solved}),
                           ("promote_run", {"run_id": scratch_runs.solved})):
            failed, text = await _call(client, name, args)
            assert failed and f"run {scratch_runs.solved} is still training" in text, (name, text)
            assert "wait_seconds" in text, text  # what to do: wait for it
        failed, text = await _call(client, "list_models", {"env_id": "CartPole-v1"})
        assert failed and "the registry is empty" in text, text  # no decision was recorded


async def test_get_run_metrics_refuses_an_empty_list_naming_the_metrics(client: Client, real_runs: RealRuns) -> None:
    """metrics=[] answered with the default curves, as if nothing had been asked: an explicit empty list is a
    mistake, said with the names to choose from (leaving metrics out still gives the defaults)."""
    failed, default = await _call(client, "get_run_metrics", {"run_id": real_runs.short})
    assert not failed and default["curves"]["series"], default
    failed, text = await _call(client, "get_run_metrics", {"run_id": real_runs.short, "metrics": []})
    assert failed and "metrics is an empty list" in text and "eval/return_mean" in text and "train/entropy" in text, text


async def test_get_config_never_shows_the_servers_preset_path(client: Client, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown variant was refused with the server's absolute path to the preset file
    (/home/.../gymnasium_solver/presets/environments/CartPole-v1.yaml), and settings_from named it too."""
    from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR

    ours = str(PACKAGE_CONFIG_DIR.resolve())
    failed, text = await _call(client, "get_config", {"config_id": "CartPole-v1:nosuch"})
    assert failed and ours not in text and str(PACKAGE_CONFIG_DIR) not in text, text
    assert "CartPole-v1" in text and "ppo, reinforce, dqn, a2c" in text, text
    failed, cfg = await _call(client, "get_config", {"config_id": "CartPole-v1:ppo"})
    assert not failed and ours not in cfg["settings_from"] and "CartPole-v1.yaml" in cfg["settings_from"], cfg
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "CartPole-v1.yaml").write_text("variants:\n  mine: {algo: ppo, n_envs: 2}\n", encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    failed, text = await _call(client, "get_config", {"config_id": "CartPole-v1:nosuch"})
    assert failed and str(tmp_path) not in text and "$GSOLVE_CONFIG_DIR" in text and "mine" in text, text


async def test_a_fix_whose_coordinator_dies_at_start_says_so_with_its_log(real_runs: RealRuns, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """As a sweep's: fix_run's record kept pid null until its coordinator wrote it, so one that died on the way
    read 'running' for the 60 s its heartbeat takes to go stale, and the crash did not say where its log is."""
    import shutil
    import subprocess
    import sys

    from gymnasium_solver import launcher

    def dies_at_once(cmd: list[str], log_path: Path) -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as log:
            return subprocess.Popen([sys.executable, "-c", "raise SystemExit('ImportError: no module named torch')"],
                                    stdout=log, stderr=subprocess.STDOUT)

    runs = tmp_path / "runs"
    shutil.copytree(real_runs.runs_dir / real_runs.short, runs / real_runs.short)
    monkeypatch.setattr(launcher, "spawn_detached", dies_at_once)  # start_coordinator's
    async with Client(create_server(runs)) as client:
        failed, started = await _call(client, "fix_run", {"run_id": real_runs.short, "max_trials": 1})
        assert not failed, started
        for _ in range(100):  # the child exits within a second or two
            failed, fix = await _call(client, "get_fix", {"experiment_id": started["experiment_id"]})
            assert not failed, fix
            if fix["status"] != "running":
                break
            time.sleep(0.1)
    assert fix["status"] == "crashed" and fix["pid"] == started["pid"], fix
    assert "coordinator process exited" in fix["message"], fix["message"]
    assert f".experiments/{started['experiment_id']}.log in the runs folder" in fix["message"]
    assert "no module named torch" in fix["message"]
