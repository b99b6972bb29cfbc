"""Limits of a server that others can reach, and failures as sentences, through the MCP client:
the live-run cap, the budget caps, a stop during start-up answered as recorded, OS errors named."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import kill_run_if_alive
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver import run_store as rs
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments.record import experiments_dir
from mcp_server.common import describe_error
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio


def _text(res: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in res.content)


def _copy_run(real_runs: RealRuns, runs_dir: Path, run_id: str) -> Path:
    run_dir = runs_dir / run_id
    shutil.copytree(real_runs.runs_dir / run_id, run_dir)
    return run_dir


async def test_live_run_cap_refuses_with_the_live_runs_and_how_to_stop_one(real_runs: RealRuns, tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    _copy_run(real_runs, runs_dir, real_runs.short)  # a finished run: not live, and a parent for fix_run
    limits = launcher.StartLimits(max_live_runs=2, max_env_steps=5_000_000, max_n_envs=8)
    started: list[str] = []
    overrides = {"max_env_steps": 5_000_000, "n_envs": 2, "batch_size": 64, "reward_threshold": 1e9}
    try:
        async with Client(create_server(runs_dir, limits)) as client:
            refused = None
            for _ in range(4):  # start until refused
                res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo", "overrides": overrides})
                if res.is_error:
                    refused = _text(res)
                    break
                assert res.structured_content is not None
                started.append(res.structured_content["run_id"])
            assert len(started) == 2 and refused is not None
            assert all(rid in refused for rid in started) and "--max-live-runs" in refused
            assert "stop_training(run_id=" in refused and "at most 2" in refused
            assert len([d for d in runs_dir.iterdir() if d.is_dir()]) == 3  # the refused start made no folder
            fix = await client.call_tool("fix_run", {"run_id": real_runs.short})
            assert fix.is_error and "--max-live-runs" in _text(fix)

            for rid in started:
                res = await client.call_tool("stop_training", {"run_id": rid, "timeout_seconds": 30})
                assert not res.is_error and res.structured_content is not None, _text(res)
                stop = res.structured_content
                after = rf.read_run_info(runs_dir / rid)
                assert stop["status"] == "stopped" == str(after.status)
                # Whether it was still importing torch or already training: the answer says what run.json says.
                recorded_forced = after.failure is not None and after.failure.kind == "forced_stop"
                assert stop["forced"] is recorded_forced, (stop, after.failure)
            res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo", "overrides": overrides})
            assert not res.is_error, _text(res)
            assert res.structured_content is not None
            started.append(res.structured_content["run_id"])
            await client.call_tool("stop_training", {"run_id": started[-1], "timeout_seconds": 30})
    finally:
        for rid in started:
            kill_run_if_alive(runs_dir / rid)


async def test_budget_and_sub_environment_caps_say_so(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    limits = launcher.StartLimits(max_live_runs=4, max_env_steps=1_000_000, max_n_envs=8)
    async with Client(create_server(runs_dir, limits)) as client:
        res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo",
                                                        "overrides": {"max_env_steps": 20_000_000}})
        assert res.is_error
        text = _text(res)
        assert "max_env_steps=20,000,000" in text and "1,000,000" in text and "--max-env-steps" in text
        assert "over MCP" in text and "gsolve train" in text
        res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo",
                                                        "overrides": {"n_envs": 16, "batch_size": 64}})
        assert res.is_error and "n_envs=16" in _text(res) and "--max-n-envs" in _text(res)
    assert not runs_dir.exists() or not any(runs_dir.iterdir())


def test_limits_from_options_fill_defaults_and_refuse_nonsense() -> None:
    limits = launcher.StartLimits.from_options()
    assert limits.max_live_runs == (os.cpu_count() or 1)
    assert limits.max_env_steps == launcher.DEFAULT_MAX_ENV_STEPS and limits.max_n_envs == launcher.DEFAULT_MAX_N_ENVS
    with pytest.raises(ValueError, match="--max-live-runs must be at least 1"):
        launcher.StartLimits.from_options(max_live_runs=0)


async def test_stop_during_start_up_answers_what_run_json_records(real_runs: RealRuns, tmp_path: Path) -> None:
    """A trainer that dies on SIGTERM before it can record a graceful stop (still importing torch):
    run.json records a forced stop, and so does the answer (it used to say 'stopped gracefully')."""
    runs_dir = tmp_path / "runs"
    run_dir = _copy_run(real_runs, runs_dir, real_runs.short)
    # Looks like a trainer to the pid-reuse guard; default SIGTERM handling, like a trainer mid-import.
    starting = subprocess.Popen(
        [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(120)", "gymnasium_solver", "train"],
        stdout=subprocess.PIPE, start_new_session=True,
    )
    try:
        assert starting.stdout is not None and starting.stdout.readline().strip() == b"ready"
        info = rf.read_run_info(run_dir)
        now = rf.utc_now_iso()
        rf.write_run_info(run_dir, info.model_copy(update={
            "status": rf.RunStatus.RUNNING, "stop_reason": None, "pid": starting.pid, "updated_at": now,
            "finished_at": None, "failure": None}))
        async with Client(create_server(runs_dir)) as client:
            res = await client.call_tool("stop_training", {"run_id": real_runs.short, "timeout_seconds": 10})
        assert not res.is_error and res.structured_content is not None, _text(res)
        after = rf.read_run_info(run_dir)
        assert after.failure is not None and after.failure.kind == "forced_stop"
        assert res.structured_content["forced"] is True
        assert not res.structured_content["message"].startswith("stopped gracefully")
        assert "forced stop" in res.structured_content["message"]
        assert res.structured_content["waited_seconds"] < 10  # it exited on the signal: no SIGKILL wait
    finally:
        if starting.poll() is None:
            starting.kill()
        starting.wait()


async def test_every_exception_reaches_the_model_as_a_sentence(
    real_runs: RealRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs_dir = real_runs.runs_dir
    rid = real_runs.short
    raised: list[BaseException] = []

    def boom(store: Any, run_dir: Path) -> Any:
        raise raised[-1]

    monkeypatch.setattr(rs, "run_details", boom)
    cases = [
        (OSError(errno.ENOSPC, "No space left on device", str(runs_dir / rid / "run.json")),
         [f"{rid}/run.json", "disk is full"]),
        (PermissionError(errno.EACCES, "Permission denied", str(runs_dir / rid / "metrics.csv")),
         [f"{rid}/metrics.csv", "permission"]),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "/etc/secret/metrics.csv"), ["metrics.csv", "directory"]),
        (RuntimeError("something inside /etc/passwd"), ["internal error (RuntimeError)", "report it"]),
        (KeyError("learning_rate"), ["unknown key 'learning_rate'"]),
    ]
    async with Client(create_server(runs_dir)) as client:
        for exc, expected in cases:
            raised.append(exc)
            res = await client.call_tool("get_run_info", {"run_id": rid})
            text = _text(res)
            assert res.is_error, text
            for part in expected:
                assert part in text, (exc, text)
            assert "/etc/" not in text and str(runs_dir) not in text and "Traceback" not in text


def test_describe_error_never_shows_a_path_outside_the_runs_folder(tmp_path: Path) -> None:
    inside = describe_error(OSError(errno.EROFS, "Read-only file system", str(tmp_path / "r1" / "run.json")), tmp_path)
    assert inside.startswith("cannot access r1/run.json:") and "read-only" in inside
    outside = describe_error(FileNotFoundError(errno.ENOENT, "No such file", "/var/lib/x/run.log"), tmp_path)
    assert "/var/lib" not in outside and "run.log" in outside
    assert describe_error(TimeoutError(), tmp_path) == "an operation timed out: retry in a moment (TimeoutError)"


async def test_your_change_to_a_fix_is_held_to_the_caps_too(real_runs: RealRuns, tmp_path: Path) -> None:
    """fix_run(changes=...) trains your change in its trials: a budget above the server's cap is refused like a
    start_training's, naming the cap, and nothing is planned."""
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    _copy_run(real_runs, runs_dir, real_runs.short)
    limits = launcher.StartLimits(max_live_runs=4, max_env_steps=1_000_000, max_n_envs=8)
    async with Client(create_server(runs_dir, limits)) as client:
        res = await client.call_tool("fix_run", {"run_id": real_runs.short, "changes": {"n_timesteps": 20_000_000}})
        assert res.is_error
        text = _text(res)
        assert "max_env_steps=20,000,000" in text and "--max-env-steps" in text and "your change" in text, text
    assert not experiments_dir(runs_dir).exists() or not any(experiments_dir(runs_dir).iterdir())
