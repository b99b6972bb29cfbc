"""How long does `gsolve fix` take to return a verified fix for a CartPole-v1 fault? (target: <= 30 s on 2 cores)

Trains the planted fault first (untimed): ``CartPole-v1:ppo --set learning_rate=0.00001
max_env_steps=30000 seed=0``, into a temporary runs folder. Then times ``gsolve fix @last`` as a
user runs it (a subprocess, with its default parallelism = the machine's cores), from the command
to its exit: diagnosis, every trial's start-up, training and early stop, and the table.

Usage: .venv/bin/python bench/bench_fix.py [--max-trials N] [--parallel K]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAULT = ["learning_rate=0.00001", "max_env_steps=30000", "seed=0"]


def gsolve(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603 - fixed argv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-trials", default="8")
    parser.add_argument("--parallel", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fix-") as tmp:
        runs = str(Path(tmp) / "runs")
        parent = gsolve("train", "CartPole-v1:ppo", "--set", *FAULT, "--runs-dir", runs, "--quiet")
        print(f"fault run: {parent.stdout.splitlines()[0] if parent.stdout else parent.stderr}")
        extra = ["--parallel", args.parallel] if args.parallel else []
        t0 = time.perf_counter()
        fix = gsolve("fix", "@last", "--runs-dir", runs, "--max-trials", args.max_trials, *extra)
        wall = time.perf_counter() - t0
        print(fix.stdout.rstrip())
        print(f"\ngsolve fix: exit code {fix.returncode}, wall {wall:.1f} s on {os.cpu_count()} cores "
              f"(load average before: {os.getloadavg()[0]:.2f})")
        return 0 if fix.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
