"""Latency of the Prometheus endpoint (`gsolve serve-metrics`) with 50 live runs.

    .venv/bin/python bench/bench_telemetry.py [--live 50] [--finished 200] [--scrapes 100]

Builds a runs folder (in a temporary directory) from one real CartPole-v1:ppo run made by the
trainer (50,000 env steps, ~100 metrics rows): ``--live`` copies made live-looking (status
running, pid of this process, fresh heartbeat) and ``--finished`` copies finished hours ago (read
on every scrape to learn their status, not exported). It then starts `gsolve serve-metrics` as its
own process on a free loopback port and, ``--scrapes`` times, does what live trainers do between
two scrapes (every live run appends one metrics row and rewrites its run.json) and scrapes
/metrics over HTTP, checking the answer parses and lists every live run. Prints p50 / p95 / max
latency (client side, after one cold scrape) and the server's CPU time per scrape (from /proc, the
figure that other processes' load barely moves). Not a test: timings depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gymnasium_solver.contract import run_folder as rf

TARGET_MS = 50.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build(root: Path, live: int, finished: int) -> tuple[list[str], int]:
    """One real run, copied ``live`` + ``finished`` times; returns the live ids and the rows per run."""
    from gymnasium_solver import config
    from gymnasium_solver.train import training

    seed_dir = root / "_seed"
    cfg = config.resolve_config("CartPole-v1:ppo", ["reward_threshold=1000", "max_env_steps=50000", "eval_freq=5000"])
    result = training.train(cfg, seed_dir)
    src = result.run_dir
    rows = len(rf.parse_metrics_text((src / rf.METRICS_CSV).read_text()).rows)
    runs = root / "runs"
    runs.mkdir()
    base = datetime.now(UTC) - timedelta(hours=3)
    ids = []
    for i in range(live + finished):
        rid = rf.new_run_id(base + timedelta(seconds=i))
        dst = runs / rid
        shutil.copytree(src, dst)
        info = rf.read_run_info(dst)
        if i < live:
            info = info.model_copy(update={"run_id": rid, "status": rf.RunStatus.RUNNING, "pid": os.getpid(),
                                           "host": socket.gethostname(), "updated_at": rf.utc_now_iso(),
                                           "finished_at": None, "stop_reason": None})
            ids.append(rid)
        else:
            info = info.model_copy(update={"run_id": rid, "updated_at": (base + timedelta(seconds=i)).isoformat(),
                                           "finished_at": (base + timedelta(seconds=i)).isoformat()})
        rf.write_run_info(dst, info, durable=False)
    shutil.rmtree(seed_dir)
    return ids, rows


def tick(runs: Path, ids: list[str], step: int) -> None:
    """What live trainers do between scrapes: one metrics row each, and a run.json heartbeat."""
    for rid in ids:
        d = runs / rid
        with open(d / rf.METRICS_CSV, encoding="utf-8") as f:
            header = f.readline().strip().split(",")
        row = {c: 0.5 for c in header}
        row[rf.M.ITERATION], row[rf.M.ENV_STEPS] = 10_000 + step, 50_000 + 512 * step
        w = rf.MetricsWriter(d / rf.METRICS_CSV, header)
        w.append(row)
        w.close()
        info = rf.read_run_info(d)
        info.progress.env_steps = 50_000 + 512 * step
        info.updated_at = rf.utc_now_iso()
        rf.write_run_info(d, info, durable=False)


def cpu_seconds(pid: int) -> float:
    """user + system CPU time of a process (/proc/<pid>/stat): unlike wall time, barely moved by
    other processes competing for the cores."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scrape(url: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=10) as resp:
        body = resp.read().decode("utf-8")
    return (time.perf_counter() - t0) * 1000.0, body


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--live", type=int, default=50)
    ap.add_argument("--finished", type=int, default=200)
    ap.add_argument("--scrapes", type=int, default=100)
    args = ap.parse_args()
    from prometheus_client.parser import text_string_to_metric_families

    with tempfile.TemporaryDirectory(prefix="gsolve-telemetry-") as tmp:
        root = Path(tmp)
        print(f"building {args.live} live + {args.finished} finished runs ...", file=sys.stderr)
        ids, rows = build(root, args.live, args.finished)
        port = _free_port()
        gsolve = Path(sys.executable).with_name("gsolve")
        proc = subprocess.Popen([str(gsolve), "serve-metrics", "--port", str(port), "--runs-dir", str(root / "runs")],
                                stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/metrics"
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            times = []
            scrape(url)  # cold: run.json and metrics parsed once; not in the CPU figure
            cpu0 = cpu_seconds(proc.pid)
            for i in range(args.scrapes):
                tick(root / "runs", ids, i)
                ms, body = scrape(url)
                times.append(ms)
                fams = {f.name: f for f in text_string_to_metric_families(body)}
                exported = {s.labels["run"] for s in fams["gsolve_run_env_steps"].samples}
                assert exported == set(ids), f"scrape {i} exported {len(exported)} runs, expected {len(ids)}"
            cpu_ms = (cpu_seconds(proc.pid) - cpu0) * 1000.0 / args.scrapes
        finally:
            proc.terminate()
            proc.wait(10)
    warm = sorted(times)
    p95 = warm[min(len(warm) - 1, int(0.95 * len(warm)))]
    print(json.dumps({"live_runs": args.live, "finished_runs": args.finished, "rows_per_run": rows,
                      "scrapes": args.scrapes, "server_cpu_ms_per_scrape": round(cpu_ms, 1),
                      "load_average_1min": os.getloadavg()[0],
                      "p50_ms": round(statistics.median(warm), 1), "p95_ms": round(p95, 1),
                      "max_ms": round(warm[-1], 1), "target_ms": TARGET_MS}))
    print(f"{args.live} live runs (+{args.finished} finished): p50 {statistics.median(warm):.1f} ms, p95 {p95:.1f} ms, "
          f"max {warm[-1]:.1f} ms (target <= {TARGET_MS:g} ms); server CPU {cpu_ms:.1f} ms per scrape; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
