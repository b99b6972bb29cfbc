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
