"""bench/bench_ab_commits.py's pure parts (no training here): the seed range it takes and how it summarises
and ranks a sample, an unsolved seed last."""

from __future__ import annotations

import argparse

import pytest
from shared_util import load_bench

ab = load_bench("bench_ab_commits")


def test_seed_ranges_are_first_last_inclusive_and_bad_ones_are_refused() -> None:
    assert ab.seed_range("2000-2003") == [2000, 2001, 2002, 2003]
    assert ab.seed_range("7") == [7]
    for bad in ("2003-2000", "a-b", "1-2-3"):
        with pytest.raises(argparse.ArgumentTypeError, match="--seeds"):
            ab.seed_range(bad)


def test_an_unsolved_seed_is_the_slowest_and_counts_at_infinity_in_the_median() -> None:
    rows = [{"seed": 1, "solved": True, "env_steps": 8192}, {"seed": 2, "solved": False, "env_steps": 300000},
            {"seed": 3, "solved": True, "env_steps": 400000}]
    s = ab.summary(rows)
    assert s["solved"] == 2 and s["seeds"] == 3
    assert s["slowest_seed"] == 2 and s["slowest"] == 300000  # unsolved outranks a slow solve
    assert s["median"] == 400000  # the sorted sample is 8192, 400000, inf


def test_a_preset_this_checkout_cannot_resolve_is_refused_before_any_commit_is_exported() -> None:
    with pytest.raises(SystemExit, match="no variant 'nope'"):
        ab.check_config("CartPole-v1:nope")
    ab.check_config("CartPole-v1:ppo")  # a preset that resolves passes


def test_the_tail_counts_seeds_past_the_factor_of_the_before_median_and_every_unsolved_seed() -> None:
    def rows(steps: list[int | None]) -> list[dict[str, object]]:
        return [{"seed": i, "solved": s is not None, "env_steps": s or 300000} for i, s in enumerate(steps)]
    before = rows([8192] * 38 + [135168, None])  # median 8,192: two seeds far past 3x it
    after = rows([8192] * 39 + [24576])  # 24,576 is 3x the before median, not past it
    t = ab.tail({"before": before, "after": after}, 3.0)
    assert t["env_steps_limit"] == 3 * 8192
    assert t["seeds_past"] == {"before": [38, 39], "after": []}
    assert 0.4 < t["fisher_exact_p"] < 0.6  # 2 of 40 against 0 of 40 is no evidence on its own
    many = ab.tail({"before": rows([8192] * 280 + [135168] * 20), "after": rows([8192] * 300)}, 3.0)
    assert many["fisher_exact_p"] < 1e-4
