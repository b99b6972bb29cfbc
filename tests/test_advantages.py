"""GAE and returns-to-go against hand-computed values, including truncation bootstrapping and
the NEXT_STEP autoreset step (which must not leak into the step before it)."""

import numpy as np
import pytest

from gymnasium_solver.maths.advantages import compute_gae, compute_returns_to_go, shift_values

G, L = 0.9, 0.8


def col(*xs):
    """A [T, 1] column (one sub-environment)."""
    return np.array(xs, dtype=np.float32)[:, None]


def flags(*xs):
    return np.array(xs, dtype=bool)[:, None]


def test_gae_without_episode_end_matches_hand_computation():
    rewards, values = col(1, 1, 1), col(0.5, 0.4, 0.3)
    next_values = shift_values(values, np.array([0.2], np.float32))
    adv, ret = compute_gae(rewards, values, next_values, flags(0, 0, 0), flags(0, 0, 0), G, L)
    d2 = 1 + G * 0.2 - 0.3
    d1 = 1 + G * 0.3 - 0.4
    d0 = 1 + G * 0.4 - 0.5
    a2, a1 = d2, d1 + G * L * d2
    a0 = d0 + G * L * a1
    np.testing.assert_allclose(adv[:, 0], [a0, a1, a2], rtol=1e-6)
    np.testing.assert_allclose(ret[:, 0], [a0 + 0.5, a1 + 0.4, a2 + 0.3], rtol=1e-6)


def test_gae_termination_has_no_future_and_reset_step_does_not_leak():
    # Step 1 terminates; step 2 is the autoreset step (reward 0, its "value" is of the final obs).
    rewards, values = col(1, 1, 0, 1), col(0.5, 0.4, 7.0, 0.3)
    next_values = shift_values(values, np.array([0.2], np.float32))
    adv, _ = compute_gae(rewards, values, next_values, flags(0, 1, 0, 0), flags(0, 0, 0, 0), G, L)
    a1 = 1 - 0.4  # terminated: no bootstrap, no recursion
    a0 = (1 + G * 0.4 - 0.5) + G * L * a1
    np.testing.assert_allclose(adv[:2, 0], [a0, a1], rtol=1e-6)


def test_gae_truncation_bootstraps_from_final_observation_value():
    # Step 1 is truncated; the next row's value (7.0) is V(final observation of that episode).
    rewards, values = col(1, 1, 0, 1), col(0.5, 0.4, 7.0, 0.3)
    next_values = shift_values(values, np.array([0.2], np.float32))
    adv, _ = compute_gae(rewards, values, next_values, flags(0, 0, 0, 0), flags(0, 1, 0, 0), G, L)
    a1 = 1 + G * 7.0 - 0.4  # bootstrapped, but the recursion still stops at the episode end
    a0 = (1 + G * 0.4 - 0.5) + G * L * a1
    np.testing.assert_allclose(adv[:2, 0], [a0, a1], rtol=1e-6)


def test_gae_handles_sub_environments_independently():
    rewards = np.ones((2, 2), np.float32)
    values = np.zeros((2, 2), np.float32)
    term = np.array([[True, False], [False, False]])
    adv, _ = compute_gae(rewards, values, shift_values(values, np.zeros(2, np.float32)), term,
                         np.zeros((2, 2), bool), G, L)
    assert adv[0, 0] == pytest.approx(1.0)  # env 0 terminated at t=0
    assert adv[0, 1] == pytest.approx(1 + G * L * 1)  # env 1 continues


def test_returns_to_go_complete_episodes():
    rewards = col(1, 2, 3, 4)
    rtg = compute_returns_to_go(rewards, flags(0, 1, 0, 1), flags(0, 0, 0, 0), np.zeros_like(rewards), G)
    np.testing.assert_allclose(rtg[:, 0], [1 + G * 2, 2, 3 + G * 4, 4], rtol=1e-6)


def test_returns_to_go_truncation_bootstrap():
    rewards = col(1, 2, 0, 4)
    next_values = col(0, 10, 0, 0)  # value of the final observation after the truncated step 1
    rtg = compute_returns_to_go(rewards, flags(0, 0, 0, 1), flags(0, 1, 0, 0), next_values, G)
    np.testing.assert_allclose(rtg[:2, 0], [1 + G * (2 + G * 10), 2 + G * 10], rtol=1e-6)
    assert rtg[3, 0] == pytest.approx(4.0)


def test_returns_to_go_bootstrap_an_unfinished_episode_from_the_last_rows_next_value():
    # No episode ends in the 3 rows: G_2 = 1 + 0.5 * 7 (next_values of the LAST row), then back.
    rewards = np.ones((3, 1), dtype=np.float32)
    next_values = np.array([[5.0], [6.0], [7.0]], dtype=np.float32)
    none = np.zeros((3, 1), dtype=bool)
    g = compute_returns_to_go(rewards, none, none, next_values, gamma=0.5)
    np.testing.assert_array_equal(g[:, 0], [2.625, 3.25, 4.5])
    assert g.dtype == np.float32


def test_targets_are_float32_whatever_the_inputs_precision():
    rewards = np.ones((2, 1))  # float64 in: float32 out, as the rollout storage holds them
    none = np.zeros((2, 1), dtype=bool)
    targets = compute_gae(rewards, np.zeros((2, 1)), np.zeros((2, 1)), none, none, 0.9, 0.9)
    assert targets.advantages.dtype == np.float32
    assert compute_returns_to_go(rewards, none, none, np.zeros((2, 1)), 0.9).dtype == np.float32


def test_overflowing_rewards_pass_through_gae_silently():
    """inf/nan rewards are let through without a numpy warning: the update's finiteness check reports them."""
    import warnings

    none = np.zeros((2, 1), dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = compute_gae(np.full((2, 1), 3e38, dtype=np.float32), np.zeros((2, 1), dtype=np.float32),
                          np.zeros((2, 1), dtype=np.float32), none, none, 1.0, 1.0)
        assert np.isinf(big.advantages[0, 0])  # 3e38 + 3e38 overflows float32
        inf = np.full((2, 1), np.inf, dtype=np.float32)
        nan = compute_gae(inf, inf, inf, none, none, 1.0, 1.0)  # inf - inf
        assert np.isnan(nan.advantages).all()
