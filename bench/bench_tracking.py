"""What the tracking sinks cost a run: the same short CartPole-v1 PPO run with no sink, with
TensorBoard, with MLflow (local file store) and with both, interleaved in one process (ABAB...) so
the machine's load hits every arm alike. Reports CPU seconds (``time.process_time``, less sensitive
to other processes than wall time) and wall seconds per run, median over the repeats; the first
run of each arm pays its imports and is reported separately.

    .venv/bin/python bench/bench_tracking.py                 # 20,000 env steps, 3 repeats
    .venv/bin/python bench/bench_tracking.py --steps 50000 --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ARMS = {"none": [], "tensorboard": ["tensorboard=true"], "mlflow": ["mlflow=true"],
        "both": ["tensorboard=true", "mlflow=true"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ["GSOLVE_CONFIG"] = ""  # no user defaults: each arm is exactly what it says
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.train.training import train

    base = [f"max_env_steps={args.steps}", "reward_threshold=.inf", "eval_freq=5000", "eval_episodes=5"]
    times: dict[str, list[tuple[float, float]]] = {arm: [] for arm in ARMS}
    rows = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats + 1):  # the first round pays the imports
            for arm, sets in ARMS.items():
                cfg = resolve_config("CartPole-v1:ppo", [*base, *sets])
                cpu, wall = time.process_time(), time.perf_counter()
                result = train(cfg, Path(tmp) / "runs")
                times[arm].append((time.process_time() - cpu, time.perf_counter() - wall))
                assert result.failure is None, result.failure
                rows = len((result.run_dir / "metrics.csv").read_text().splitlines()) - 1
    print(f"CartPole-v1:ppo, {args.steps} env steps (~{rows} metrics rows), median of {args.repeats} runs per arm")
    print(f"{'arm':<12} {'cpu s':>7} {'wall s':>7} {'cpu vs none':>12}   first run (imports): cpu s, wall s")
    none_cpu = statistics.median(c for c, _ in times["none"][1:])
    for arm, samples in times.items():
        cpu = statistics.median(c for c, _ in samples[1:])
        wall = statistics.median(w for _, w in samples[1:])
        first_cpu, first_wall = samples[0]
        print(f"{arm:<12} {cpu:7.2f} {wall:7.2f} {cpu - none_cpu:+11.2f}s   {first_cpu:.2f}, {first_wall:.2f}")


if __name__ == "__main__":
    main()
