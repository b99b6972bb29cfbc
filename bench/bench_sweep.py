"""Sweep benchmarks (issue 10): a 32-trial CartPole-v1 PPO sweep, and the Ray backend's overhead per trial.

1. ``gsolve sweep CartPole-v1:ppo --space bench/sweep_cartpole.yaml --trials 32 --parallel 2`` timed
   as a user runs it (a subprocess, from the command to its exit; target <= 3 minutes on 2 cores).
   Then the best trial's configuration and the shipped preset are trained side by side over seeds
   (env steps and seconds to solve; target: the best at least as fast to solve as the preset).
2. Ray overhead per trial: the same tiny trials (CartPole, 2,048 env steps) run one at a time on the
   local fork backend and on a local Ray instance, in this process; per trial, the time from
   ``start()`` to the exit being seen, minus the trainer's own wall time (run.json), is the backend's
   overhead (target <= 1 s per trial for Ray). The first Ray trial (a fresh worker importing torch)
   is shown apart.

Usage: .venv/bin/python bench/bench_sweep.py [--trials 32] [--parallel 2] [--seeds 10] [--skip-sweep] [--skip-ray]
       [--compare PARAMS_JSON]
Timings move with the machine's load: the load average is printed; compare arms of one run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPACE = Path(__file__).resolve().parent / "sweep_cartpole.yaml"
FIXED = ["max_env_steps=50000"]
TINY = {"n_envs": 4, "max_env_steps": 2048, "eval_freq": 1024, "eval_episodes": 2, "batch_size": 64}


def gsolve(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603 - fixed argv


def run_sweep_bench(trials: int, parallel: int) -> dict[str, Any] | None:
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        runs = str(Path(tmp) / "runs")
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        out = gsolve("sweep", "CartPole-v1:ppo", "--space", str(SPACE), "--trials", str(trials), "--parallel",
                     str(parallel), "--seed", "0", "--runs-dir", runs, "--json",
                     *(a for p in FIXED for a in ("--set", p)))
        wall = time.perf_counter() - t0
        if out.returncode not in (0, 1):
            print(out.stdout[-2000:], out.stderr[-4000:])
            return None
        summary = json.loads(out.stdout)
        counts = summary["counts"]
        print(f"sweep: {trials} trials, {parallel} parallel: wall {wall:.1f} s (target <= 180 s), load average "
              f"before {load:.2f}; outcomes {counts}")
        best = summary["best"]
        if best:
            print(f"best: trial #{best['number']} solved={best['solved']} at {best['solved_at_env_steps']} env steps in "
                  f"{best['seconds']} s; params {best['params']}")
            print(f"reproduce: {best['command']}")
        if summary["importances"]:
            print("importances: " + ", ".join(f"{k} {v:.2f}" for k, v in summary["importances"].items()))
        return dict(best) if best and best["solved"] else None


def solve_over_seeds(arms: dict[str, dict[str, Any]], seeds: int) -> dict[str, list[tuple[bool, int, float]]]:
    """Each arm trained on each seed, the arms alternating per seed (so load hits both alike)."""
    from gymnasium_solver import config
    from gymnasium_solver.launcher import override_pairs
    from gymnasium_solver.train import training

    out: dict[str, list[tuple[bool, int, float]]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-seeds-") as tmp:
        for seed in range(seeds):
            for name, overrides in arms.items():
                cfg = config.resolve_config("CartPole-v1:ppo", override_pairs({**overrides, "seed": seed}))
                r = training.train(cfg, Path(tmp))
                steps = r.solved_at.env_steps if r.solved_at else r.env_steps
                secs = r.solved_at.wall_seconds if r.solved_at else r.wall_seconds
                out[name].append((r.solved, steps, secs))
    return out


def compare_with_preset(best: dict[str, Any], seeds: int) -> None:
    from gymnasium_solver.config import parse_overrides
    from gymnasium_solver.sweeps.space import to_overrides

    tuned = to_overrides(best["params"], parse_overrides(FIXED))  # what the trial ran: --set values included
    print(f"\nside by side over seeds 0-{seeds - 1} (one process, the two alternating per seed):")
    res = solve_over_seeds({"preset": {}, "sweep best": tuned}, seeds)
    print("seed | preset solved  steps     s | sweep best solved  steps     s")
    for s, (p, f) in enumerate(zip(res["preset"], res["sweep best"], strict=True)):
        print(f"{s:4} | {'yes' if p[0] else 'no':>13} {p[1]:6} {p[2]:5.2f} | {'yes' if f[0] else 'no':>17} "
              f"{f[1]:6} {f[2]:5.2f}")
    for name, rows in res.items():
        solved = [r for r in rows if r[0]]
        print(f"{name}: solved {len(solved)}/{len(rows)}, median env steps to solve "
              f"{statistics.median(r[1] for r in rows):,.0f}, median seconds {statistics.median(r[2] for r in rows):.2f}")


def backend_overhead(kind: str, n: int) -> list[float]:
    from gymnasium_solver.contract import run_folder as rf
    from gymnasium_solver.jobs.backend import TrialSpec, make_backend

    overheads = []
    with tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as tmp:
        backend = make_backend(Path(tmp), 1, kind)
        for i in range(n):
            spec = TrialSpec("CartPole-v1:ppo", {**TINY, "seed": i}, "", "", {})
            t0 = time.perf_counter()
            handle = backend.start(spec)
            while backend.exit_code(handle) is None:
                time.sleep(0.01)
            total = time.perf_counter() - t0
            trainer = rf.read_run_info(handle.run_dir).progress.wall_seconds
            overheads.append(total - trainer)
    return overheads


def run_overhead_bench(n: int) -> None:
    local = backend_overhead("local", n)
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    t0 = time.perf_counter()
    ray_o = backend_overhead("ray", n + 1)
    ray.shutdown()
    print(f"\nbackend overhead per trial ({n} tiny trials each, one at a time; time from start() to the exit seen, "
          f"minus the trainer's own wall time), load average {os.getloadavg()[0]:.2f}:")
    print(f"  local (fork):  median {statistics.median(local):.3f} s, max {max(local):.3f} s")
    print(f"  ray (local instance, 2 CPUs): first trial {ray_o[0]:.3f} s (a fresh worker imports the trainer), then "
          f"median {statistics.median(ray_o[1:]):.3f} s, max {max(ray_o[1:]):.3f} s (target <= 1 s)")
    print(f"  ray minus local, median: {statistics.median(ray_o[1:]) - statistics.median(local):+.3f} s "
          f"(all ray trials incl. start-up: {time.perf_counter() - t0:.1f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--overhead-trials", type=int, default=8)
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--compare", metavar="PARAMS_JSON", default=None,
                        help="skip the sweep; compare these trial params (JSON, as the sweep printed) with the preset")
    args = parser.parse_args()
    if args.compare:
        compare_with_preset({"params": json.loads(args.compare)}, args.seeds)
    elif not args.skip_sweep:
        best = run_sweep_bench(args.trials, args.parallel)
        if best is not None and args.seeds:
            compare_with_preset(best, args.seeds)
    if not args.skip_ray:
        run_overhead_bench(args.overhead_trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
