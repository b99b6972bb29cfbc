"""MCP tools start_sweep / get_sweep (no id: the list) / check_sweep through the in-process client: the sweep starts
detached and returns its id at once, get_sweep follows it to the best trial, errors are sentences,
and the server's live-run cap is respected."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.sweeps import check
from mcp_server.server import create_server

MAX_WAIT_SECONDS = 240.0  # a bound so a broken coordinator fails the test instead of hanging it
TINY = {"n_envs": 4, "eval_freq": 512, "eval_episodes": 2, "batch_size": 64, "max_env_steps": 2048,
        "reward_threshold": 30}
SPACE = {"n_epochs": {"type": "int", "low": 2, "high": 4}, "gae_lambda": {"type": "uniform", "low": 0.8, "high": 0.95}}


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any, str]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return bool(res.is_error), res.structured_content, text


@pytest.mark.anyio
async def test_start_sweep_returns_at_once_and_get_sweep_follows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    async with Client(create_server(runs)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["start_sweep"].annotations.read_only_hint is False  # type: ignore[union-attr]
        assert tools["get_sweep"].annotations.read_only_hint is True  # type: ignore[union-attr]

        t0 = time.monotonic()
        is_error, started, text = await call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "space": SPACE, "n_trials": 2, "overrides": TINY})
        assert not is_error, text
        assert time.monotonic() - t0 < 15  # it returned before any trial could have trained
        sweep_id = started["sweep_id"]
        assert "get_sweep" in started["note"]

        deadline = time.monotonic() + MAX_WAIT_SECONDS
        while True:
            is_error, report, text = await call(client, "get_sweep", {"sweep_id": sweep_id})
            assert not is_error, text
            summary = report["summary"]
            if summary["sweep"]["status"] != "running" or time.monotonic() > deadline:
                break
            await anyio.sleep(1.0)
        assert summary["sweep"]["status"] == "done", summary["sweep"]["message"]
        assert summary["sweep"]["resumes"] == 0 and summary["sweep"]["pid"] == started["pid"]  # its first run
        assert summary["finished"] == 2 and summary["best"] is not None
        assert summary["best"]["command"].startswith("gsolve train CartPole-v1:ppo")
        assert "inherits: ppo" in summary["best"]["preset_snippet"]
        for row in summary["trials"]:
            assert rf.read_run_info(runs / row["run_id"]).sweep_id == sweep_id

        is_error, listed, text = await call(client, "get_sweep", {})  # no id: the list of sweeps
        assert not is_error and listed["summary"] is None
        assert [s["sweep_id"] for s in listed["sweeps"]] == [sweep_id] and listed["sweeps"][0]["status"] == "done"

        is_error, _, text = await call(client, "get_sweep", {"sweep_id": sweep_id[:-1] + "x"})
        assert is_error and f"did you mean {sweep_id}" in text

        # check_sweep: the best trial and the preset on a held-out seed, in the background.
        assert summary["best"]["solved"] and summary["check"] is None
        t0 = time.monotonic()
        is_error, started, text = await call(client, "check_sweep", {"sweep_id": sweep_id, "top": 1, "seeds": [7]})
        assert not is_error, text
        assert time.monotonic() - t0 < 15 and started["runs"] == 2 and started["seeds"] == [7]
        assert started["arms"] == [f"trial #{summary['best']['number']}", "preset"] and "get_sweep" in started["note"]
        _, report, _ = await call(client, "get_sweep", {"sweep_id": sweep_id})  # it trains 2 runs: not done yet
        assert report["summary"]["check_status"].startswith(f"a held-out check is running (pid {started['pid']},")
        deadline = time.monotonic() + MAX_WAIT_SECONDS
        while True:
            _, report, _ = await call(client, "get_sweep", {"sweep_id": sweep_id})
            summary = report["summary"]
            if summary["check"] is not None or time.monotonic() > deadline:
                break
            await anyio.sleep(1.0)
        checked = summary["check"]
        assert checked is not None, Path(started["log"]).read_text(encoding="utf-8")[-2000:]
        assert checked["seeds"] == [7] and checked["held_out"] and [a["name"] for a in checked["arms"]] == started["arms"]
        for arm in checked["arms"]:
            (run,) = arm["runs"]
            assert rf.read_run_info(runs / run["run_id"]).overrides["seed"] == 7
        assert summary["check_status"] is None  # its result is written: nothing in progress

        # A check whose process dies before it writes a result said nothing at all (the old result, or none):
        # get_sweep now says it crashed, where its log is and what it said last.
        def dies_at_once(cmd: list[str], log_path: Path) -> subprocess.Popen[bytes]:
            with open(log_path, "ab") as log:
                return subprocess.Popen([sys.executable, "-c", "raise SystemExit('OSError: disk full')"],
                                        stdout=log, stderr=subprocess.STDOUT)

        monkeypatch.setattr(check, "spawn_detached", dies_at_once)
        is_error, started, text = await call(client, "check_sweep", {"sweep_id": sweep_id, "top": 1, "seeds": [8]})
        assert not is_error, text
        for _ in range(100):
            _, report, _ = await call(client, "get_sweep", {"sweep_id": sweep_id})
            status = report["summary"]["check_status"] or ""
            if "crashed" in status:
                break
            await anyio.sleep(0.1)
        assert "its process exited before it wrote a result" in status and "disk full" in status, status
        assert f".sweeps/{sweep_id}.check.log in the runs folder" in status
        assert report["summary"]["check"]["seeds"] == [7]  # the last result is kept beside it


@pytest.mark.anyio
async def test_start_sweep_errors_are_sentences_and_caps_hold(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    async with Client(create_server(runs)) as client:
        is_error, _, text = await call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "space": {"gama": {"type": "uniform", "low": 0.9, "high": 0.99}}})
        assert is_error and "did you mean 'gamma'" in text
        is_error, _, text = await call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "space": {"gamma": {"type": "uniform", "low": 0.9, "high": 2}}})
        assert is_error and "gamma=2" in text
    capped = launcher.StartLimits(max_live_runs=0, max_env_steps=1000, max_n_envs=64)
    async with Client(create_server(runs, capped)) as client:
        is_error, _, text = await call(client, "start_sweep", {"config_id": "CartPole-v1:ppo", "space": SPACE})
        assert is_error and "--max-env-steps" in text
        is_error, _, text = await call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "space": SPACE, "overrides": {"max_env_steps": 1000}})
        assert is_error and "--max-live-runs" in text
    assert not (runs / ".sweeps").exists() or not list((runs / ".sweeps").glob("*.json"))
    async with Client(create_server(runs)) as client:
        is_error, _, text = await call(client, "check_sweep", {"sweep_id": "sweep-20260101-000000-abcd"})
        assert is_error and "no sweep 'sweep-20260101-000000-abcd'" in text
        is_error, _, text = await call(client, "check_sweep", {"sweep_id": "x", "top": 0})
        assert is_error and "top" in text


@pytest.mark.anyio
async def test_start_sweep_runs_each_trial_on_several_seeds(tmp_path: Path) -> None:
    """seeds_per_trial=2 and seed_statistic reach the sweep: its one trial trains on seeds 3 and 4 and its
    result counts both; out-of-range values are refused before anything starts."""
    from gymnasium_solver.sweeps import study as st
    from gymnasium_solver.sweeps.record import read_record

    runs = tmp_path / "runs"
    async with Client(create_server(runs)) as client:
        for bad in ({"seeds_per_trial": 0}, {"seeds_per_trial": 51}, {"seed_statistic": "p50"}):
            is_error, _, text = await call(client, "start_sweep", {
                "config_id": "CartPole-v1:ppo", "space": SPACE, "n_trials": 1, "overrides": TINY, **bad})
            assert is_error and next(iter(bad)) in text, text
        assert not (runs / ".sweeps").exists() or not list((runs / ".sweeps").glob("*.json"))

        is_error, started, text = await call(client, "start_sweep", {
            "config_id": "CartPole-v1:ppo", "space": SPACE, "n_trials": 1, "overrides": {**TINY, "seed": 3},
            "seeds_per_trial": 2, "seed_statistic": "iqm"})
        assert not is_error, text
        sweep_id = started["sweep_id"]
        record = read_record(runs, sweep_id)
        assert (record.seeds_per_trial, record.seed_statistic) == (2, "iqm")
        deadline = time.monotonic() + MAX_WAIT_SECONDS
        while True:
            _, report, _ = await call(client, "get_sweep", {"sweep_id": sweep_id})
            summary = report["summary"]
            if summary["sweep"]["status"] != "running" or time.monotonic() > deadline:
                break
            await anyio.sleep(1.0)
        assert summary["sweep"]["status"] == "done", summary["sweep"]["message"]
    (trial,) = st.open_study(read_record(runs, sweep_id), create=False).get_trials()
    result = st.result_of(trial)
    assert result.seeds_run == 2 and len(result.run_ids) == 2, result
    assert [rf.read_run_info(runs / r).seed for r in result.run_ids] == [3, 4]
