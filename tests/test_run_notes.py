"""The notes a resolved config carries about its run: how often a perfect policy passes the reward threshold of a
tabular env (config/run_notes.py, from the optimal return distributions bench/threshold_reach.py ships)."""

from __future__ import annotations

import json

import pytest
from shared_util import load_bench

from gymnasium_solver.config import resolve_config
from gymnasium_solver.config.chain import resolve_with_origin
from gymnasium_solver.config.run_notes import THRESHOLD_REACH, luck_note, pass_probability


def test_taxi_notes_that_a_perfect_policy_passes_about_half_its_evaluations() -> None:
    notes = resolve_with_origin("Taxi-v4", {}).origin.notes
    luck = [n for n in notes if n.startswith("reward_threshold:")]
    assert luck == [luck_note(resolve_config("Taxi-v4", []))]
    assert "8 is above what an optimal policy earns on Taxi-v4 on average (7.93)" in luck[0]
    assert "passes an evaluation of 10 episodes 48% of the time" in luck[0]
    # the confirmation too (what the diagnosis's threshold rules read), and the change: the bar it passes reliably
    assert "and that evaluation and its 50-episode confirmation together 21%" in luck[0]
    assert luck[0].endswith("a bar it passes reliably: reward_threshold=6.9 (docs/benchmarks.md, threshold-reach)")


def test_env_kwargs_that_make_the_bar_unreachable_are_said() -> None:
    """FrozenLake-v1 on the 8x8 map keeps v1's 100-step limit: its optimum, computed at resolution, is 0.64, under
    the 0.7 threshold (heldout61 c20 and heldout62 c05 planted this map; neither the diagnosis nor the fix could say
    why a perfect policy would not pass)."""
    notes = resolve_with_origin("FrozenLake-v1:dqn", {"env_kwargs": {"map_name": "8x8"}}).origin.notes
    luck = [n for n in notes if n.startswith("reward_threshold:")]
    assert len(luck) == 1 and "0.7 is above what an optimal policy earns on FrozenLake-v1 with its env_kwargs on " \
        "average (0.6407)" in luck[0]
    assert "together 12%" in luck[0] and "reward_threshold=0.4 (" in luck[0]


def test_without_a_confirmation_the_note_says_the_evaluation_alone() -> None:
    note = luck_note(resolve_config("FrozenLake-v1:dqn", ["confirm_episodes=0", "reward_threshold=0.8"]))
    assert note is not None and "51% of the time, so when a run solves" in note and "confirmation" not in note


@pytest.mark.parametrize(("config_id", "overrides"), [
    ("CartPole-v1:ppo", {}),  # not a tabular env: no table
    ("FrozenLake-v1:dqn", {"env_kwargs": {"is_slippery": False}}),  # computed for its env_kwargs: always reached
    ("FrozenLake-v1:dqn", {"eval_episodes": 1000}),  # 1,000 episodes: a perfect policy passes 99% of the time
    ("FrozenLake-v1:dqn", {"reward_threshold": 0.5}),  # a bar it clears
])
def test_no_note_where_a_perfect_policy_passes_or_the_table_does_not_apply(config_id: str,
                                                                          overrides: dict[str, object]) -> None:
    notes = resolve_with_origin(config_id, overrides).origin.notes
    assert not [n for n in notes if n.startswith("reward_threshold:")], notes


def test_the_shipped_distribution_is_what_the_bench_computes() -> None:
    """FrozenLake-v1's optimal return distribution, recomputed by bench/threshold_reach.py's value iteration, is the
    one the package ships (written by that command, not typed), and its pass probabilities follow from it."""
    dist, _ = load_bench("threshold_reach").optimal_returns("FrozenLake-v1")
    shipped = {row["env_id"]: row for row in json.loads(THRESHOLD_REACH.read_text(encoding="utf-8"))["envs"]}
    assert {float(r): p for r, p in shipped["FrozenLake-v1"]["returns"]} == pytest.approx(dist)
    p10 = pass_probability("FrozenLake-v1", 0.7, 10)
    assert p10 == pytest.approx(shipped["FrozenLake-v1"]["pass_probability"]["10"])
    assert 0.7 < p10 < 0.8
