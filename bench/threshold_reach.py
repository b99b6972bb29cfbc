"""Can a perfect policy pass an env's reward threshold? Exact answers for Gymnasium's tabular envs.

A run counts as solved when the mean return of ``eval_episodes`` (10) evaluation episodes reaches the env's
``reward_threshold``. For an env whose threshold is near the best expected return, even the optimal policy
fails that test often, and "env steps to solve" then measures evaluation luck as much as learning. The
tabular envs publish their dynamics (``env.unwrapped.P``), so this computes, by finite-horizon value
iteration over the TimeLimit, the optimal policy's expected return from the initial-state distribution and
the exact probability that its mean over N episodes reaches the threshold (the distribution of one
episode's return under the optimal policy, convolved N times), and the highest bar it passes in >= 90% of
its evaluations (10 episodes) and confirmations (50). Writes bench/analysis/threshold_reach.json
(with the commit and the versions); bench/render_tables.py renders docs/benchmarks.md's
``threshold-reach`` block from it. It also ships each env's optimal return distribution in the package
(gymnasium_solver/presets/thresholds/threshold_reach.json): ``gsolve train`` and ``gsolve config`` note, for a
run's own eval_episodes, how often a perfect policy would pass its evaluation (config/run_notes.py).

    .venv/bin/python bench/threshold_reach.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package

from gymnasium_solver.config.run_notes import (  # noqa: E402
    RELIABLE,
    THRESHOLD_REACH,
    mean_floor,
    mean_reaches,
    optimal_returns,
)

OUT = Path(__file__).resolve().parent / "analysis" / "threshold_reach.json"
ENVS = ("FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v4")  # the tabular envs with a threshold and a TimeLimit
EPISODES = (10, 100)  # gsolve's default eval_episodes, and the classic "over 100 consecutive episodes"
JUDGED = (10, 50)  # gsolve's default eval_episodes and confirm_episodes: a solve passes both


def main() -> int:
    measured = bench_results.start_measuring()
    rows = []
    for env_id in ENVS:
        threshold = gym.spec(env_id).reward_threshold
        dist, horizon = optimal_returns(env_id)
        expected = sum(r * p for r, p in dist.items())
        row: dict[str, Any] = {"env_id": env_id, "threshold": threshold, "horizon": horizon, "optimal_expected_return": expected,
               "pass_probability": {}, "returns": sorted([r, p] for r, p in dist.items() if p > 0)}
        if threshold is not None:
            row["pass_probability"] = {str(n): mean_reaches(dist, n, threshold) for n in EPISODES}
        # The highest bar a perfect policy passes reliably by gsolve's defaults: the diagnosis's
        # threshold_above_optimum suggests it (config/run_notes.py computes it for a run's own sizes).
        row["reliable_threshold"] = min(mean_floor(dist, n, RELIABLE) for n in JUDGED)
        rows.append(row)
        print(f"{env_id}: threshold {threshold}, optimal expected return {expected:.4f}, "
              f"P(pass) {row['pass_probability']}, reliable bar {row['reliable_threshold']:g}", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"measured": bench_results.finish(measured).model_dump(), "envs": rows}, indent=1) + "\n"
    for path in (OUT, THRESHOLD_REACH):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
