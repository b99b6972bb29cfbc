"""Load on the MCP server over streamable HTTP: 50 concurrent clients, mixed read calls, 20 real runs.

    .venv/bin/python bench/bench_mcp_load.py [--dir /tmp/gsolve-load] [--clients 50] [--calls 20]
    .venv/bin/python bench/bench_mcp_load.py --pad-rows 300000     # the same runs grown to 300k rows each

Builds (once; reused while it exists) a runs folder with ``--runs`` real CartPole-v1:ppo runs made by
the trainer (``reward_threshold=1000`` so none stops early: each writes ``max_env_steps / 512`` rows).
With ``--pad-rows N`` each run's metrics.csv is then grown to N rows in a copy of the folder by
appending synthetic rows (written as the trainer writes them) after its real ones, for the memory
figure of issue 8 (server RSS after reading 20 runs of 300k rows each).

It then starts ``gsolve mcp --transport http`` on a free loopback port, runs ``--clients`` asyncio
tasks, each with its own SDK streamable-HTTP client session, making ``--calls`` mixed calls each
(list_runs, get_run_info, get_run_metrics, get_run_info's status view, diagnose_run, compare_runs), back to
back (closed loop, the default) or with an exponential think time of mean ``--pace`` seconds between
calls (as an assistant, which thinks between tool calls), and prints total calls, errors, p50/p95/p99 latency (client side, per call) and the server's RSS
(/proc/<pid>/status) before and after. Not a test: timings depend on the machine and its load
(the clients share the machine's cores with the server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from gymnasium_solver.contract import run_folder as rf

# "get_run_info:status" is get_run_info(view="status"): the cheap poll that was get_training_status.
TOOLS = ("list_runs", "get_run_info", "get_run_metrics", "get_run_info:status", "diagnose_run", "compare_runs")
P95_TARGET_MS = 250.0
RSS_TARGET_MB = 300.0


def build_runs(root: Path, runs: int, max_env_steps: int) -> list[str]:
    """``runs`` real short CartPole-v1:ppo runs made by the trainer in this process (once)."""
    root.mkdir(parents=True, exist_ok=True)
    have = sorted(p.name for p in root.iterdir() if (p / rf.RUN_JSON).is_file())
    if len(have) >= runs:
        return have[:runs]
    from gymnasium_solver import config
    from gymnasium_solver.train import training

    for seed in range(len(have), runs):
        print(f"training run {seed + 1}/{runs} (once) ...", file=sys.stderr)
        cfg = config.resolve_config("CartPole-v1:ppo", [f"seed={seed}", "reward_threshold=1000",
                                                        f"max_env_steps={max_env_steps}", "eval_freq=16384",
                                                        "eval_episodes=5"])
        training.train(cfg, root)
    return sorted(p.name for p in root.iterdir() if (p / rf.RUN_JSON).is_file())[:runs]


def _padding(header: list[str], first_row: int, first_steps: int, rows: int) -> bytes:
    """Synthetic rows after a run's real ones, formatted by run_folder.MetricsWriter itself."""
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"gsolve-load-pad-{os.getpid()}.csv"
    w = rf.MetricsWriter(tmp, header)
    w._file.truncate(0)  # the writer's own header line; the real file has one already
    rng = np.random.default_rng(0)
    ev = {rf.M.EVAL_RETURN_MEAN, rf.M.EVAL_RETURN_STD, rf.M.EVAL_EP_LEN_MEAN}
    for start in range(0, rows, 50_000):
        block = rng.standard_normal((min(50_000, rows - start), len(header)))
        for k, vals in enumerate(block.tolist()):
            i = start + k
            row: dict[str, float | int | None] = dict(zip(header, vals, strict=True))
            row[rf.M.ITERATION], row[rf.M.ENV_STEPS] = first_row + i, first_steps + i * 512
            if (first_row + i) % 10:
                for c in ev:
                    row[c] = None
            w.append(row)
    w.close()
    data = tmp.read_bytes()
    tmp.unlink()
    return data


def pad_runs(src: Path, dst: Path, ids: list[str], rows: int) -> None:
    """Copy the runs to ``dst`` with every metrics.csv grown to ``rows`` rows (once)."""
    marker = dst / ".bench-rows"
    if marker.exists() and marker.read_text() == str(rows):
        return
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    padding: dict[tuple[int, int], bytes] = {}
    for run_id in ids:
        shutil.copytree(src / run_id, dst / run_id)
        path = dst / run_id / rf.METRICS_CSV
        lines = path.read_bytes().rstrip(b"\n").split(b"\n")
        header = lines[0].decode().split(",")
        last = dict(zip(header, lines[-1].decode().split(","), strict=True))
        start = (int(last[rf.M.ITERATION]) + 1, int(float(last[rf.M.ENV_STEPS])) + 512)
        if start not in padding:  # same budget, same last row: the padding is shared
            print(f"writing {rows - (len(lines) - 1)} synthetic rows (once) ...", file=sys.stderr)
            padding[start] = _padding(header, *start, rows - (len(lines) - 1))
        with open(path, "ab") as f:
            f.write(padding[start])
    marker.write_text(str(rows))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _tool_name(tool: str) -> str:
    """The MCP tool behind an entry of TOOLS (a view after ':' is an argument)."""
    return tool.split(":", 1)[0]


def _args_for(tool: str, ids: list[str], rng: random.Random) -> dict[str, Any]:
    if tool == "get_run_info:status":
        return {"run_id": rng.choice(ids), "view": "status"}
    if tool == "list_runs":
        return {"limit": rng.choice([5, 20, 50])}
    if tool == "compare_runs":
        return {"run_ids": rng.sample(ids, rng.choice([2, 3]))}
    return {"run_id": rng.choice(ids)}


class _StartLine:
    """Every client connects (initialize + tools/list) before any starts its timed calls: the figures
    are the steady state, not 50 sessions opening in the same second (reported on their own)."""

    def __init__(self, clients: int):
        self.waiting, self.go = clients, asyncio.Event()

    async def ready(self) -> None:
        self.waiting -= 1
        if self.waiting <= 0:
            self.go.set()
        await self.go.wait()


async def client_task(url: str, ids: list[str], calls: int, seed: int,
                      out: list[tuple[str, float, bool, str]], pace: float = 0.0,
                      start: _StartLine | None = None, client_kind: str = "raw") -> None:
    from mcp import Client

    rng = random.Random(seed)
    async with (RawClient(url) if client_kind == "raw" else Client(url)) as client:
        # As a real client does once at connect (and as the SDK would do lazily inside the first call
        # of each tool, to validate results against the tools' output schemas): listed, then timed.
        t = time.perf_counter()
        await client.list_tools()
        out.append(("(tools/list at connect)", time.perf_counter() - t, False, ""))
        if start is not None:
            await start.ready()
        for _ in range(calls):
            if pace:  # an assistant's think time between calls: exponential, mean `pace` seconds
                await asyncio.sleep(rng.expovariate(1.0 / pace))
            tool = rng.choice(TOOLS)
            args = _args_for(tool, ids, rng)
            t = time.perf_counter()
            try:
                if isinstance(client, RawClient):
                    failed, text = await client.call_tool(_tool_name(tool), args)
                else:
                    res = await client.call_tool(_tool_name(tool), args)
                    failed = bool(res.is_error)
                    text = " ".join(getattr(c, "text", "") for c in res.content)[:200] if failed else ""
            except Exception as exc:  # noqa: BLE001 - counted and reported, not hidden
                failed, text = True, f"{type(exc).__name__}: {exc}"
            out.append((tool, time.perf_counter() - t, failed, text))


def _jsonrpc_answer(content_type: str, body: str) -> dict[str, Any]:
    """The JSON-RPC answer in a response body: plain JSON, or (a slow answer, which the server streams
    so that it can send progress and keep-alives first) the last ``data:`` event of an SSE stream."""
    if content_type.startswith("text/event-stream"):
        events = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
        answers = [json.loads(e) for e in events if e]
        return next(a for a in reversed(answers) if "result" in a or "error" in a)
    return json.loads(body)  # type: ignore[no-any-return]


class RawClient:
    """A lean MCP client for load generation: the streamable-HTTP JSON-RPC exchange the SDK's Client
    makes (server/discover, tools/list, tools/call with the same headers and ``_meta``), on one
    keep-alive HTTP connection, checking each answer for a JSON-RPC error or ``isError`` but not
    validating it against the tool's output schema. The SDK client's validation costs ~28 ms of
    client CPU per call, which on a 2-core machine is taken from the server being measured."""

    def __init__(self, url: str):
        import httpx2  # the MCP SDK's own HTTP client
        from mcp.types import LATEST_PROTOCOL_VERSION

        self.url, self.version = url, LATEST_PROTOCOL_VERSION
        self.http = httpx2.AsyncClient(timeout=600.0)  # measure slow answers, do not fail them
        self.next_id = 0
        self.meta = {"io.modelcontextprotocol/protocolVersion": self.version,
                     "io.modelcontextprotocol/clientInfo": {"name": "bench_mcp_load", "version": "1"},
                     "io.modelcontextprotocol/clientCapabilities": {}}

    async def __aenter__(self) -> RawClient:
        await self.request("server/discover", {})
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def request(self, method: str, params: dict[str, Any], name: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                   "mcp-protocol-version": self.version, "mcp-method": method}
        if name is not None:
            headers["mcp-name"] = name
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": {**params, "_meta": self.meta}}
        resp = await self.http.post(self.url, json=body, headers=headers)
        if resp.status_code != 200:
            raise RuntimeError(f"HTTP {resp.status_code}: {resp.text[:200]}")
        msg = _jsonrpc_answer(resp.headers.get("content-type", ""), resp.text)
        if "error" in msg:
            raise RuntimeError(f"JSON-RPC error {msg['error']}")
        return msg["result"]  # type: ignore[no-any-return]

    async def list_tools(self) -> dict[str, Any]:
        return await self.request("tools/list", {})

    async def call_tool(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        """(failed, error text) of one tools/call."""
        result = await self.request("tools/call", {"name": tool, "arguments": args}, name=tool)
        if result.get("isError"):
            return True, " ".join(c.get("text", "") for c in result.get("content", []))[:200]
        if "structuredContent" not in result and not result.get("content"):
            return True, "an answer with no content"
        return False, ""


async def guarded_client(url: str, ids: list[str], calls: int, seed: int,
                         out: list[tuple[str, float, bool, str]], pace: float, start: _StartLine,
                         client_kind: str) -> None:
    """A client whose session itself fails (connect, transport) counts its missing calls as errors."""
    mine: list[tuple[str, float, bool, str]] = []
    try:
        await client_task(url, ids, calls, seed, mine, pace, start, client_kind)
    except Exception as exc:  # noqa: BLE001 - counted and reported, not hidden
        await start.ready()  # never leave the others waiting for a client that failed to connect
        mine.extend(("session", 0.0, True, f"{type(exc).__name__}: {exc}"[:200]) for _ in range(calls - len(mine)))
    out.extend(mine)


async def load(url: str, ids: list[str], clients: int, calls: int, pace: float = 0.0, first: int = 0,
               start: _StartLine | None = None, client_kind: str = "raw") -> tuple[list[tuple[str, float, bool, str]], float]:
    out: list[tuple[str, float, bool, str]] = []
    t = time.perf_counter()
    start = start or _StartLine(clients)
    async with asyncio.TaskGroup() as tg:
        for k in range(clients):
            tg.create_task(guarded_client(url, ids, calls, first + k, out, pace, start, client_kind))
    return out, time.perf_counter() - t


def _worker(url: str, ids: list[str], clients: int, calls: int, pace: float, first: int,
            ready: Any, go: Any, results: Any, client_kind: str) -> None:
    """One load-generating process: its clients connect, report ready, wait for all processes, call."""

    class _Cross(_StartLine):
        async def ready(self) -> None:
            self.waiting -= 1
            if self.waiting <= 0:
                ready.release()
                await asyncio.get_running_loop().run_in_executor(None, go.wait)
                self.go.set()
            await self.go.wait()

    out, _ = asyncio.run(load(url, ids, clients, calls, pace, first, _Cross(clients), client_kind))
    results.put(out)


def load_in_processes(url: str, ids: list[str], clients: int, calls: int, pace: float,
                      procs: int, client_kind: str) -> tuple[list[tuple[str, float, bool, str]], float]:
    """The clients spread over ``procs`` processes, so that the load generator's own CPU (the SDK
    client validates every result against the tool's JSON schema: ~20 ms for a metrics answer) does
    not queue the answers it measures behind one event loop."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    ready, go, results = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    shares = [clients // procs + (1 if k < clients % procs else 0) for k in range(procs)]
    firsts = [sum(shares[:k]) for k in range(procs)]
    workers = [ctx.Process(target=_worker, args=(url, ids, n, calls, pace, f, ready, go, results, client_kind))
               for n, f in zip(shares, firsts, strict=True) if n]
    for w in workers:
        w.start()
    for _ in workers:
        ready.acquire()
    t = time.perf_counter()
    go.set()
    out: list[tuple[str, float, bool, str]] = []
    for _ in workers:
        out.extend(results.get())
    wall = time.perf_counter() - t
    for w in workers:
        w.join()
    return out, wall


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early: {proc.stderr.read().decode() if proc.stderr else ''}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"server did not listen on {port} within {deadline_s}s")


def _pct(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(round(q / 100 * (len(sorted_ms) - 1))))]


async def warm_up(url: str, ids: list[str]) -> float:
    """One client calls every tool once on every run (untimed): parsed files and memoised answers in
    place, as on a server that has been up for a while. Returns the seconds it took."""
    from mcp import Client

    t = time.perf_counter()
    async with Client(url) as client:
        for tool in TOOLS:
            for k, run_id in enumerate(ids):
                args: dict[str, object] = {"limit": 50} if tool == "list_runs" else (
                    {"run_ids": [run_id, ids[(k + 1) % len(ids)]]} if tool == "compare_runs" else {"run_id": run_id})
                if tool == "get_run_info:status":
                    args["view"] = "status"
                await client.call_tool(_tool_name(tool), args)
    return time.perf_counter() - t


def run(runs_dir: Path, ids: list[str], clients: int, calls: int, pace: float = 0.0, procs: int = 1,
        warm: bool = False, client_kind: str = "raw") -> bool:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymnasium_solver.cli.app", "mcp", "--transport", "http", "--port", str(port),
         "--runs-dir", str(runs_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_for_port(port, proc)
        load_before = " ".join(_loadavg())
        rss_before = _rss_mb(proc.pid)
        url = f"http://127.0.0.1:{port}/mcp"
        if warm:
            print(f"warm-up: every tool once on every run, {asyncio.run(warm_up(url, ids)):.1f} s (untimed)")
        results, wall = (load_in_processes(url, ids, clients, calls, pace, procs, client_kind) if procs > 1
                         else asyncio.run(load(url, ids, clients, calls, pace, client_kind=client_kind)))
        server_cpu = _cpu_seconds(proc.pid)
        rss_after, rss_peak = _rss_mb(proc.pid), _rss_mb(proc.pid, "VmHWM")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    connects = sorted(r[1] * 1000 for r in results if r[0].startswith("("))
    results = [r for r in results if not r[0].startswith("(")]
    ms = sorted(r[1] * 1000 for r in results)
    errors = [r for r in results if r[2]]
    p95 = _pct(ms, 95)
    rows = sum(1 for _ in open(runs_dir / ids[0] / rf.METRICS_CSV, "rb")) - 1
    mode = (f"each waits ~{pace:g} s (exponential) between calls" if pace
            else "closed loop: each calls again as soon as it has its answer")
    print(f"runs folder {runs_dir}: {len(ids)} runs of ~{rows:,} metrics rows; {clients} clients "
          f"({client_kind} client, {procs} load process{'es' if procs > 1 else ''}) x {calls} calls "
          f"over streamable HTTP ({mode}); load average before/after: {load_before} / {' '.join(_loadavg())}")
    print(f"calls {len(results)}  errors {len(errors)}  wall {wall:.1f} s  ({len(results) / wall:.0f} calls/s)  "
          f"server CPU {server_cpu:.1f} s ({server_cpu / max(len(results), 1) * 1000:.1f} ms per call, start-up included)")
    print(f"latency ms  p50 {_pct(ms, 50):.0f}  p95 {p95:.0f}  p99 {_pct(ms, 99):.0f}  max {ms[-1]:.0f}  "
          f"(target p95 <= {P95_TARGET_MS:.0f}: {'yes' if p95 <= P95_TARGET_MS else 'NO'})")
    print(f"server RSS MB  before {rss_before:.0f}  after {rss_after:.0f}  peak {rss_peak:.0f}  "
          f"(target after <= {RSS_TARGET_MB:.0f}: {'yes' if rss_after <= RSS_TARGET_MB else 'NO'})")
    if connects:
        print(f"  tools/list at connect (not in the figures above): n {len(connects)}  p50 "
              f"{statistics.median(connects):.0f}  p95 {_pct(connects, 95):.0f} ms")
    for tool in TOOLS:
        t_ms = sorted(r[1] * 1000 for r in results if r[0] == tool)
        if t_ms:
            print(f"  {tool:<20} n {len(t_ms):4d}  p50 {statistics.median(t_ms):6.0f}  p95 {_pct(t_ms, 95):6.0f} ms")
    for tool, _, _, text in errors[:5]:
        print(f"  error in {tool}: {text}")
    return not errors


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _loadavg() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gsolve-load"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-env-steps", type=int, default=131_072, help="per real run (512 env steps per row)")
    ap.add_argument("--pad-rows", type=int, default=0, help="grow each run's metrics.csv to this many rows")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--calls", type=int, default=20, help="calls per client")
    ap.add_argument("--warm", action="store_true",
                    help="call every tool once on every run before the timed calls (a server that has been up)")
    ap.add_argument("--procs", type=int, default=1,
                    help="spread the clients over this many load-generating processes")
    ap.add_argument("--client", choices=("raw", "sdk"), default="raw",
                    help="raw: a lean JSON-RPC client (the default: the load generator's CPU stays off the server's "
                         "cores); sdk: the MCP SDK's Client, which validates every answer against its schema")
    ap.add_argument("--pace", type=float, default=0.0,
                    help="mean seconds each client waits between calls (an assistant's think time); 0 = closed loop")
    args = ap.parse_args()
    ids = build_runs(args.dir / "real", args.runs, args.max_env_steps)
    runs_dir = args.dir / "real"
    if args.pad_rows:
        runs_dir = args.dir / f"padded-{args.pad_rows}"
        pad_runs(args.dir / "real", runs_dir, ids, args.pad_rows)
    sys.exit(0 if run(runs_dir, ids, args.clients, args.calls, args.pace, args.procs, args.warm, args.client) else 1)


if __name__ == "__main__":
    main()
