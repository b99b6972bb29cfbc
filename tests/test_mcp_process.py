"""The server as a real process: `gsolve mcp` over stdio, no torch at start, and a full
start -> wait -> status -> stop lifecycle on a real detached training process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import kill_run_if_alive
from mcp import Client, StdioServerParameters

from gymnasium_solver.contract import run_folder as rf
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio
REPO = Path(__file__).resolve().parent.parent


def test_importing_and_creating_the_server_does_not_import_torch(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from mcp_server.server import create_server\n"
        f"create_server({str(tmp_path)!r})\n"
        "bad = sorted(m for m in ('torch', 'gymnasium', 'matplotlib', 'gymnasium_solver.agents') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "", f"server start imported {out.stdout.strip()}"


async def test_gsolve_mcp_over_stdio(real_runs: RealRuns) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gymnasium_solver.cli.app", "mcp", "--runs-dir", str(real_runs.runs_dir)],
        cwd=str(REPO),
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"get_run_info", "start_training", "plot_runs"} <= names
        res = await client.call_tool("get_run_info", {"run_id": real_runs.solved})
        assert not res.is_error and res.structured_content
        assert res.structured_content["details"]["summary"]["solved"] is True
        bad = await client.call_tool("get_run_info", {"run_id": "../../etc"})
        assert bad.is_error


async def test_start_wait_status_stop_lifecycle(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with Client(create_server(runs_dir)) as client:

        async def call(name: str, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
            res = await client.call_tool(name, args, **kw)
            assert not res.is_error, " ".join(getattr(c, "text", "") for c in res.content)
            assert res.structured_content is not None
            return res.structured_content

        # A budget and threshold far beyond reach: the run is still going when we stop it (the
        # graceful stop evaluates once more, and PPO can solve CartPole in seconds).
        started = await call("start_training", {"config_id": "CartPole-v1:ppo",
                                                "overrides": {"max_env_steps": 5_000_000, "n_envs": 4,
                                                              "batch_size": 64, "eval_freq": 1_000_000,
                                                              "reward_threshold": 1e9}})
        run_id = started["run_id"]
        run_dir = runs_dir / run_id
        try:
            new = started["started"]
            assert new["max_env_steps"] == 5_000_000 and new["pid"] > 0 and started["resumed"] is None
            assert "get_run_info" in new["note"]
            # Detached: its own session (so it outlives this server), not our process group.
            assert os.getsid(new["pid"]) == new["pid"] != os.getsid(0)
            status = (await call("get_run_info", {"run_id": run_id, "view": "status"}))["status"]
            assert status["status"] == "running"  # the placeholder run.json is there at once
            # Wait (bounded per call) until the trainer has done some iterations.
            for _ in range(12):
                waited = await call("get_run_info", {"run_id": run_id, "view": "status", "wait_seconds": 5},
                                    progress_callback=on_progress)
                assert not waited["status"]["finished"], f"run ended early: {waited}"
                if waited["status"]["env_steps"] > 0:
                    break
            assert waited["status"]["env_steps"] > 0, "trainer made no progress in 60 s"
            assert "call get_run_info again" in waited["note"]
            assert progress and progress[-1][1] == 5_000_000
            status = (await call("get_run_info", {"run_id": run_id, "view": "status"}))["status"]
            assert status["status"] == "running" and status["pid"] == new["pid"]
            stopped = await call("stop_training", {"run_id": run_id, "timeout_seconds": 30})
            assert stopped["status"] == "stopped" and stopped["stop_reason"] == "user_stopped"
            assert stopped["forced"] is False
            final = (await call("get_run_info", {"run_id": run_id, "view": "status"}))["status"]
            assert final["finished"] and final["status"] == "stopped" and final["env_steps"] > 0
            assert not rf.pid_alive(new["pid"])
            log = (run_dir / rf.RUN_LOG).read_text()
            assert "[launcher]" in log and f"--run-id {run_id}" in log
            again = await call("stop_training", {"run_id": run_id})
            assert "not running" in again["message"]
        finally:
            kill_run_if_alive(run_dir)


async def test_stop_is_forced_when_the_trainer_ignores_sigterm(real_runs: RealRuns, tmp_path: Path) -> None:
    """A trainer stuck in a blocking call would ignore SIGTERM: the stop must still end it, without
    blocking the server, and record that it was forced."""
    runs_dir = tmp_path / "runs"
    run_dir = runs_dir / real_runs.short
    import shutil

    shutil.copytree(real_runs.runs_dir / real_runs.short, run_dir)
    # Looks like a trainer to the pid-reuse guard (its argv names gymnasium_solver and train).
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
         "print('ready', flush=True); time.sleep(120)", "gymnasium_solver", "train"],
        stdout=subprocess.PIPE, start_new_session=True,
    )
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline().strip() == b"ready"
        info = rf.read_run_info(run_dir)
        now = rf.utc_now_iso()
        rf.write_run_info(run_dir, info.model_copy(update={
            "status": rf.RunStatus.RUNNING, "stop_reason": None, "pid": stubborn.pid, "updated_at": now,
            "finished_at": None}))
        async with Client(create_server(runs_dir)) as client:
            res = await client.call_tool("stop_training", {"run_id": real_runs.short, "timeout_seconds": 1})
            assert not res.is_error and res.structured_content
            assert res.structured_content["forced"] is True and res.structured_content["status"] == "stopped"
        stubborn.wait(timeout=10)
        after = rf.read_run_info(run_dir)
        assert after.status == rf.RunStatus.STOPPED and after.stop_reason == rf.StopReason.USER_STOPPED
        assert after.failure is not None and after.failure.kind == "forced_stop"
    finally:
        if stubborn.poll() is None:
            stubborn.kill()
        stubborn.wait()
