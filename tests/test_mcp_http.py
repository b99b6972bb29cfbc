"""`gsolve mcp --transport http`: the streamable-HTTP server on loopback, driven by the SDK's client."""

from __future__ import annotations

import os
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
        [sys.executable, "-m", "gymnasium_solver.cli.app", "mcp", "--transport", "http", "--port", str(port),
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
            assert res.structured_content["details"]["summary"]["run_id"] == real_runs.solved
            bad = await client.call_tool("get_run_info", {"run_id": "/etc/passwd"})
            assert bad.is_error
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _start_http(runs_dir: object, port: int, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gymnasium_solver.cli.app", "mcp", "--transport", "http", "--port", str(port),
         "--runs-dir", str(runs_dir), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )


async def test_http_with_a_token_refuses_requests_without_it(real_runs) -> None:
    """With GSOLVE_MCP_TOKEN set, a request without (or with a wrong) bearer token gets 401; the SDK's
    streamable-HTTP client sending the header works as before."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    token = "s3cret-" + "x" * 32
    port = _free_port()
    env = {**os.environ, "GSOLVE_MCP_TOKEN": token}
    proc = _start_http(real_runs.runs_dir, port, env=env)
    url = f"http://127.0.0.1:{port}/mcp"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}
    accept = {"accept": "application/json, text/event-stream"}
    try:
        _wait_for_port(port, proc)
        async with httpx2.AsyncClient() as http:
            for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": token},
                            {"authorization": f"Basic {token}"}):
                res = await http.post(url, json=init, headers={**accept, **headers})
                assert res.status_code == 401, (headers, res.status_code)
                assert "bearer token" in res.json()["error_description"]
        transport = streamable_http_client(url, http_client=create_mcp_http_client(
            headers={"Authorization": f"Bearer {token}"}))
        async with Client(transport) as client:
            res = await client.call_tool("get_run_info", {"run_id": real_runs.solved})
            assert not res.is_error and res.structured_content is not None
        with pytest.raises(Exception):  # noqa: B017 - the SDK's error type for an HTTP 401 is its own business
            async with Client(url) as client:
                await client.list_tools()
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_http_off_loopback_without_a_token_is_refused(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GSOLVE_MCP_TOKEN"}
    proc = _start_http(tmp_path, _free_port(), "--host", "0.0.0.0", env=env)  # noqa: S104 - must be refused
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    text = err.decode()
    assert "without a token" in text and "GSOLVE_MCP_TOKEN" in text and "Traceback" not in text


def test_a_short_token_is_refused_with_a_sentence(tmp_path) -> None:
    """Issue 26: a 1-character token was accepted, even on 0.0.0.0."""
    env = {**os.environ, "GSOLVE_MCP_TOKEN": "x"}
    proc = _start_http(tmp_path, _free_port(), env=env)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    text = err.decode()
    assert "the MCP token has 1 characters, fewer than the 16" in text and "Traceback" not in text


def test_a_non_loopback_host_is_served_with_a_warning(tmp_path) -> None:
    port = _free_port()
    env = {**os.environ, "GSOLVE_MCP_TOKEN": "t" * 32}
    proc = _start_http(tmp_path, port, "--host", "0.0.0.0", env=env)  # noqa: S104 - the case under test
    try:
        _wait_for_port(port, proc)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "WARNING" in err.decode() and "which other machines can reach" in err.decode()


async def test_idle_sessions_are_reaped_and_their_number_is_bounded(tmp_path) -> None:
    """Issue 26: sessions were never reaped (+80 MB per 2,000). At most --max-sessions are open (one
    more is answered 503) and a session idle for --session-idle-timeout is closed, making room again."""
    import anyio
    import httpx2

    port = _free_port()
    proc = _start_http(tmp_path, port, "--max-sessions", "3", "--session-idle-timeout", "2")
    url = f"http://127.0.0.1:{port}/mcp"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"accept": "application/json, text/event-stream"}
    try:
        _wait_for_port(port, proc)
        async with httpx2.AsyncClient() as http:
            opened = [await http.post(url, json=init, headers=headers) for _ in range(3)]
            assert [r.status_code for r in opened] == [200, 200, 200]
            assert len({r.headers["mcp-session-id"] for r in opened}) == 3
            assert (await http.post(url, json=init, headers=headers)).status_code == 503
            await anyio.sleep(3.5)  # every session is idle past the timeout: reaped
            gone = await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                   headers={**headers, "mcp-session-id": opened[0].headers["mcp-session-id"]})
            assert gone.status_code == 404
            again = [await http.post(url, json=init, headers=headers) for _ in range(3)]
            assert [r.status_code for r in again] == [200, 200, 200]
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
