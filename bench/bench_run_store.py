"""Benchmark the read side through the real MCP tools (in-process client) and the real server process.

    .venv/bin/python bench/bench_run_store.py [--dir /tmp/gsolve-bench] [--rows 1000000] [--runs 10000]
    .venv/bin/python bench/bench_run_store.py --memory [--memory-runs 20] [--memory-rows 300000] [--cache-mb N]

Builds (once; reused while it exists) a runs folder with one synthetic PPO run of ``--rows``
metrics rows written exactly as the trainer writes them (full-precision floats, evaluation
columns empty on most rows) and ``--runs`` small runs, then prints a table of timings against the
targets of the run-store issue. Not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from gymnasium_solver.contract import run_folder as rf

BIG_RUN = "20260101-000000-b1b1"
WIDE_RUN = "20260101-000000-w1de"  # a metrics.csv of WIDE_COLUMNS columns (issue 26: reads were quadratic in them)
WIDE_COLUMNS = 100_000
ENVS = ("CartPole-v1", "LunarLander-v3", "Pendulum-v1")


def _info(run_id: str, i: int, max_env_steps: int) -> rf.RunInfo:
    env = ENVS[i % len(ENVS)]
    solved = i % 7 == 0
    ev = rf.EvalRecord(return_mean=float(i % 500), return_std=1.0, episodes=10, env_steps=max_env_steps,
                       wall_seconds=60.0, iteration=100)
    return rf.RunInfo(
        run_id=run_id, config_id=f"{env}:ppo", env_id=env, variant="ppo", algo="ppo" if i % 3 else "reinforce",
        seed=i, status=rf.RunStatus.COMPLETED, stop_reason=rf.StopReason.SOLVED if solved else rf.StopReason.BUDGET_EXHAUSTED,
        created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T01:00:00+00:00", max_env_steps=max_env_steps,
        reward_threshold=475.0, progress=rf.Progress(env_steps=max_env_steps, iteration=100, wall_seconds=60.0),
        best_eval=ev, last_eval=ev, solved=solved,
        solved_at=rf.SolvedAt(env_steps=max_env_steps // 2, wall_seconds=30.0, iteration=50, eval_return_mean=480.0)
        if solved else None,
    )


def build(root: Path, rows: int, runs: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    big = root / BIG_RUN
    marker = big / ".bench-rows"
    if not (marker.exists() and marker.read_text() == str(rows)):
        print(f"writing a {rows}-row metrics.csv (once) ...", file=sys.stderr)
        big.mkdir(exist_ok=True)
        rf.write_run_info(big, _info(BIG_RUN, 1, rows * 512))
        (big / rf.CONFIG_YAML).write_text("env_id: CartPole-v1\nvariant: ppo\nalgo: ppo\n")
        (big / rf.RUN_LOG).write_text("".join(f"iteration {i}: ok\n" for i in range(1000)))
        cols = rf.PPO_COLUMNS
        rng = np.random.default_rng(0)
        w = rf.MetricsWriter(big / rf.METRICS_CSV, cols)
        w._file.truncate(0)
        w._file.write(",".join(cols) + "\n")
        ev = {rf.M.EVAL_RETURN_MEAN, rf.M.EVAL_RETURN_STD, rf.M.EVAL_EP_LEN_MEAN}
        for start in range(0, rows, 50_000):
            block = rng.standard_normal((min(50_000, rows - start), len(cols)))
            for k, vals in enumerate(block.tolist()):
                i = start + k + 1
                row: dict[str, float | int | None] = dict(zip(cols, vals, strict=True))
                row[rf.M.ITERATION], row[rf.M.ENV_STEPS] = i, i * 512
                if i % 10:
                    for c in ev:
                        row[c] = None
                w.append(row)
        w.close()
        marker.write_text(str(rows))
    wide = root / WIDE_RUN
    if not (wide / rf.METRICS_CSV).exists():
        wide.mkdir(exist_ok=True)
        rf.write_run_info(wide, _info(WIDE_RUN, 2, 3 * 512))
        (wide / rf.CONFIG_YAML).write_text("env_id: CartPole-v1\nvariant: ppo\nalgo: ppo\n")
        names = [*rf.PPO_COLUMNS, *(f"x{j}" for j in range(WIDE_COLUMNS - len(rf.PPO_COLUMNS)))]
        body = "".join(",".join([str(i), str(512 * i), *("0.5" for _ in names[2:])]) + "\n" for i in (1, 2, 3))
        (wide / rf.METRICS_CSV).write_text(",".join(names) + "\n" + body)
    existing = sum(1 for p in root.iterdir() if p.is_dir() and p.name not in (BIG_RUN, WIDE_RUN))
    if existing < runs:
        print(f"writing {runs - existing} small runs (once) ...", file=sys.stderr)
        for i in range(existing, runs):
            run_id = f"2025{(i // 86400) % 12 + 1:02d}{(i // 3600) % 28 + 1:02d}-{(i // 60) % 24:02d}{i % 60:02d}{i % 60:02d}-{i:04x}"
            d = root / run_id
            d.mkdir(exist_ok=True)
            # Plain writes (no fsync): building the fixture is not what we measure.
            (d / rf.RUN_JSON).write_text(_info(run_id, i, 100_000).model_dump_json())


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    t = time.perf_counter()
    await fn()
    return time.perf_counter() - t


async def measure(root: Path) -> list[tuple[str, float, float]]:
    from mcp import Client, StdioServerParameters

    from mcp_server.server import create_server

    rows: list[tuple[str, float, float]] = []

    async def call(client: Client, name: str, args: dict[str, Any]) -> Any:
        res = await client.call_tool(name, args)
        assert not res.is_error, res.content
        return res

    one = {"run_id": BIG_RUN, "metrics": [rf.M.EVAL_RETURN_MEAN]}
    default = {"run_id": BIG_RUN}
    for label, args in (("1 metric", one), ("default 7 metrics", default)):
        async with Client(create_server(root)) as c:  # a fresh server: nothing cached
            cold = await timed(lambda a=args, c=c: call(c, "get_run_metrics", a))  # type: ignore[misc]
            warm = statistics.median([await timed(lambda a=args, c=c: call(c, "get_run_metrics", a))  # type: ignore[misc]
                                      for _ in range(5)])
        rows.append((f"get_run_metrics cold, 1M rows, {label}", cold, 1.5))
        rows.append((f"get_run_metrics repeated, 1M rows, {label}", warm, 0.05))
    async with Client(create_server(root)) as c:  # refused in one sentence, or answered: either within 1 s
        for label, tool, extra in (("get_run_metrics", "get_run_metrics", {}),
                                   ("get_run_metrics catalog", "get_run_metrics", {"catalog": True}),
                                   ("diagnose_run", "diagnose_run", {})):
            rows.append((f"{label}, {WIDE_COLUMNS // 1000}k-column metrics.csv", await timed(
                lambda c=c, tool=tool, extra=extra: c.call_tool(tool, {"run_id": WIDE_RUN, **extra})), 1.0))  # type: ignore[misc]
    async with Client(create_server(root)) as c:
        await call(c, "get_run_info", {"run_id": BIG_RUN})
        rows.append(("get_run_info repeated (1M-row run)", statistics.median(
            [await timed(lambda c=c: call(c, "get_run_info", {"run_id": BIG_RUN})) for _ in range(20)]), 0.02))  # type: ignore[misc]
        first = await timed(lambda: call(c, "list_runs", {}))
        rows.append(("list_runs, 10k runs, newest page, cold", first, 0.5))
        scan_args = {"env_id": "Pendulum-v1", "solved": True, "limit": 50}
        cold = await timed(lambda: call(c, "list_runs", scan_args))
        warm = statistics.median([await timed(lambda: call(c, "list_runs", scan_args)) for _ in range(3)])
        rows.append(("list_runs, 10k runs, filter scans all, cold", cold, 0.5))
        rows.append(("list_runs, 10k runs, filter scans all, repeated", warm, 0.5))
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "gymnasium_solver.cli.app", "mcp", "--runs-dir", str(root)])
    starts = []
    for _ in range(3):
        t = time.perf_counter()
        async with Client(params) as c:
            await call(c, "list_runs", {"limit": 1})
            starts.append(time.perf_counter() - t)
    rows.append(("server start (gsolve mcp, stdio) to first answer", statistics.median(starts), 1.0))
    return rows


def _rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def build_memory_runs(root: Path, rows: int, runs: int) -> list[str]:
    """``runs`` run folders sharing one ``rows``-row metrics.csv through hard links (no disk cost)."""
    source = root / "source"
    build(source, rows, 0)
    ids = []
    for k in range(runs):
        run_id = f"20260201-0000{k:02d}-{k:04x}"
        d = root / run_id
        if not d.exists():
            shutil.copytree(source / BIG_RUN, d, copy_function=os.link)
            rf.write_run_info(d, _info(run_id, k, rows * 512))
        ids.append(run_id)
    return ids


async def measure_memory(root: Path, ids: list[str], cache_mb: int | None) -> list[tuple[str, float]]:
    """Server RSS after reading every run's metrics through the real tools, in this (fresh) process."""
    from mcp import Client

    from mcp_server.server import create_server

    if cache_mb is not None:
        os.environ["GSOLVE_CACHE_MB"] = str(cache_mb)
    out = [("RSS at start (server built), MB", _rss_mb())]
    async with Client(create_server(root)) as c:
        out.append(("RSS after server start, MB", _rss_mb()))
        for run_id in ids:
            res = await c.call_tool("get_run_metrics", {"run_id": run_id})
            assert not res.is_error, res.content
            res = await c.call_tool("get_run_metrics", {"run_id": run_id, "catalog": True})
            assert not res.is_error, res.content
            res = await c.call_tool("diagnose_run", {"run_id": run_id})  # every column of the run
            assert not res.is_error, res.content
        out.append((f"RSS after reading {len(ids)} runs, MB", _rss_mb()))
        out.append(("peak RSS (VmHWM), MB", _rss_mb("VmHWM")))
    return out


def main_memory(args: argparse.Namespace) -> None:
    ids = build_memory_runs(args.dir / "memory", args.memory_rows, args.memory_runs)
    size = (args.dir / "memory" / ids[0] / rf.METRICS_CSV).stat().st_size
    print(f"{len(ids)} runs of {args.memory_rows} metrics rows (metrics.csv {size / 1e6:.0f} MB each), "
          f"cache cap {args.cache_mb or 'default'} MB")
    for name, mb in asyncio.run(measure_memory(args.dir / "memory", ids, args.cache_mb)):
        print(f"| {name:<40} | {mb:8.0f} | {'target 300' if 'after reading' in name else ''}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gsolve-bench-runs"))
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--memory", action="store_true",
                    help="measure server RSS after reading --memory-runs runs of --memory-rows rows instead")
    ap.add_argument("--memory-runs", type=int, default=20)
    ap.add_argument("--memory-rows", type=int, default=300_000)
    ap.add_argument("--cache-mb", type=int, default=None, help="the store's cache cap ($GSOLVE_CACHE_MB)")
    args = ap.parse_args()
    if args.memory:
        main_memory(args)
        return
    build(args.dir, args.rows, args.runs)
    size = (args.dir / BIG_RUN / rf.METRICS_CSV).stat().st_size
    results = asyncio.run(measure(args.dir))
    print(f"runs folder {args.dir}: {args.runs} runs + one {args.rows}-row run (metrics.csv {size / 1e6:.0f} MB)")
    print(f"| {'measurement':<52} | {'seconds':>8} | {'target':>7} | ok |")
    print(f"|{'-' * 54}|{'-' * 10}|{'-' * 9}|----|")
    for name, secs, target in results:
        print(f"| {name:<52} | {secs:8.3f} | {target:7.2f} | {'yes' if secs <= target else 'NO'} |")
    print(json.dumps({n: round(s, 4) for n, s, _ in results}), file=sys.stderr)


if __name__ == "__main__":
    main()
