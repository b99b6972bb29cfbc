"""bench/bench_update.py: both update paths measured on the same rollout, and a policy without a numpy path refused
(the bench itself is run by hand: docs/benchmarks.md, "The update: numpy's gradients against autograd's")."""

from __future__ import annotations

import pytest
from shared_util import load_bench


def test_both_paths_are_timed_on_one_rollout_and_end_at_the_same_weights() -> None:
    bench = load_bench("bench_update")
    blocks, steps, difference = bench.measure("CartPole-v1:a2c", 1)
    assert set(blocks) == {"autograd_ms", "numpy_ms"} and all(len(v) == 5 and min(v) >= 0 for v in blocks.values())
    assert steps == 1 and 0 < difference < 1e-5  # float32 rounding apart, and really two paths
    rows = bench.PresetRows(arms={}, parts={**blocks, "gradient_steps": [steps], "weight_difference": [difference]})
    assert bench.table({"CartPole-v1:a2c": rows}).splitlines()[-1].startswith("| `CartPole-v1:a2c` | 1 | ")


def test_a_policy_that_keeps_autograd_is_refused_with_a_sentence() -> None:
    bench = load_bench("bench_update")
    with pytest.raises(SystemExit, match="keeps autograd"):
        bench.measure("Pendulum-v1:ppo", 1)
