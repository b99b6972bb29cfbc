"""The speed-to-the-limit blocks of docs/benchmarks.md: bench/bench_loop_limit.py's file (our loop against env
steps + the policy forward, and where the rest goes) and bench/bench_update.py's (one update through numpy's
gradients against autograd's). bench/render_tables.py renders them with the others."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_results import Results  # noqa: E402 - a sibling script, not a package
from render_text import fill, provenance  # noqa: E402


def render_loop_limit(results: dict[str, Results]) -> str:
    """bench/bench_loop_limit.py's file: our loop against env steps + forward, and where the rest goes."""
    import bench_loop_limit

    r = results[bench_loop_limit.NAME]
    repeats = min(len(p.parts["total"]) for p in r.presets.values())
    intro = fill(
        f"Medians of {repeats} repeats per preset, ours and the limit alternating. **limit**: the preset's vectorised "
        f"env stepped for the env steps its solve took on the seed shown, each step's actions from its policy "
        f"network's forward (the faster of torch no_grad and our numpy forward). **ours**: `gsolve train` on that "
        f"seed, launch to exit, split by metrics.csv's `time/rollout_seconds` and `time/update_seconds`, the rest "
        f"of each iteration (evaluation on the rows that evaluated) and run.json's times; a part's share is of "
        f"ours. The limit's policy is untrained: its episodes end sooner than a learning policy's, so it resets "
        f"more often (LunarLander's reset builds a new world) and our collection can come in under it. The machine "
        f"is shared (load below): compare the ratios, not the seconds; the CPU-seconds ratio moves least with "
        f"the load.")
    return f"{intro}\n\n{bench_loop_limit.table(r.presets)}\n\n{fill(provenance(r.measured))}"


def render_update_cost(results: dict[str, Results]) -> str:
    """bench/bench_update.py's file: one update through numpy's gradients against autograd's."""
    import bench_update

    r = results[bench_update.NAME]
    intro = fill(
        "CPU milliseconds of one update (PPO and A2C: `targets` + `update` of one rollout of the preset's own shape, "
        "its untrained policy; DQN: the `gradient_steps` gradient steps after one collection, on a replay buffer of "
        "100 collections), through autograd and through `gymnasium_solver/agents/numpy_grad.py`, median of 5 blocks, the "
        "two paths alternating, one torch thread; the last column is the largest difference of the weights after "
        "one update from the same start, relative to the largest weight (float32 rounding).")
    return f"{intro}\n\n{bench_update.table(r.presets)}\n\n{fill(provenance(r.measured))}"


RENDERERS: dict[str, Callable[[dict[str, Results]], str]] = {
    "loop-limit": render_loop_limit,
    "update-cost": render_update_cost,
}
