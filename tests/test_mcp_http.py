"""`gsolve mcp --transport http`: the streamable-HTTP server on loopback, driven by the SDK's client."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early: {proc.stderr.read().decode() if proc.stderr else ''}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"server did not listen on {port} within {deadline_s}s")


async def test_http_transport_serves_the_same_tools_on_loopback(real_runs) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymnasium_solver.cli", "mcp", "--transport", "http", "--port", str(port),
         "--runs-dir", str(real_runs.runs_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_for_port(port, proc)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"get_run_info", "diagnose_run", "start_training"} <= names
            res = await client.call_tool("get_run_info", {"run_id": real_runs.solved})
            assert not res.is_error and res.structured_content is not None
            assert res.structured_content["summary"]["run_id"] == real_runs.solved
            bad = await client.call_tool("get_run_info", {"run_id": "/etc/passwd"})
            assert bad.is_error
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
