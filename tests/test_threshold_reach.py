"""bench/threshold_reach.py: exact pass probabilities of an optimal policy on the tabular envs."""

from __future__ import annotations

import pytest
from shared_util import load_bench


@pytest.fixture(scope="module")
def reach():  # type: ignore[no-untyped-def]
    return load_bench("threshold_reach")


def test_the_mean_of_n_episodes_is_convolved_exactly(reach) -> None:  # type: ignore[no-untyped-def]
    coin = {0.0: 0.5, 1.0: 0.5}
    assert reach.mean_reaches(coin, 1, 0.5) == pytest.approx(0.5)
    assert reach.mean_reaches(coin, 2, 0.5) == pytest.approx(0.75)  # 1+1, 1+0, 0+1 of four
    assert reach.mean_reaches(coin, 3, 1.0) == pytest.approx(0.125)


def test_taxi_is_deterministic_and_its_threshold_is_above_the_best_average(reach) -> None:  # type: ignore[no-untyped-def]
    dist, horizon = reach.optimal_returns("Taxi-v4")
    assert horizon == 200 and sum(dist.values()) == pytest.approx(1.0)
    expected = sum(r * p for r, p in dist.items())
    assert expected == pytest.approx(7.93, abs=1e-9)  # 300 start states, each solved optimally: 8 is above it
    assert min(dist) >= 3 and max(dist) <= 15  # no failed episode: every start is served
    assert 0.3 < reach.mean_reaches(dist, 10, 8.0) < 0.6


def test_frozenlake_succeeds_three_times_in_four(reach) -> None:  # type: ignore[no-untyped-def]
    dist, horizon = reach.optimal_returns("FrozenLake-v1")
    assert horizon == 100 and set(dist) == {0.0, 1.0}  # reward 1 at the goal only
    assert 0.74 < dist[1.0] < 0.75  # the slippery lake: even the best policy falls in or runs out of time
