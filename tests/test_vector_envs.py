"""Our faster CartPole vector env gives Gymnasium's episodes bit for bit (gymnasium_solver.vector_envs)."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

from gymnasium_solver.config import resolve_config
from gymnasium_solver.envs import make_vec_env
from gymnasium_solver.vector_envs import FastCartPoleVectorEnv


@pytest.mark.parametrize("n", [1, 10, 32])
def test_the_fast_cartpole_steps_exactly_as_gymnasiums(n: int) -> None:
    """Random actions (episodes of ~20 steps, so copies reset all the time) and a stretch of one action:
    every observation, reward, termination and truncation equal, dtypes and shapes too, and the random
    generators in the same state at the end (resets draw the same numbers)."""
    ours, theirs = FastCartPoleVectorEnv(num_envs=n, max_episode_steps=60), CartPoleVectorEnv(num_envs=n,
                                                                                              max_episode_steps=60)
    a, b = ours.reset(seed=n)[0], theirs.reset(seed=n)[0]
    assert a.dtype == b.dtype and np.array_equal(a, b)
    rng = np.random.default_rng(n)
    resets = truncations = 0
    for i in range(4000):
        action = rng.integers(0, 2, n) if i % 50 < 40 else np.full(n, i % 2)
        got, want = ours.step(action), theirs.step(action)
        for x, y in zip(got[:4], want[:4], strict=True):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), i
        resets += int(want[2].sum() + want[3].sum())
        truncations += int(want[3].sum())
    assert resets > 100 and truncations > 0  # the reset path ran, through both ends of an episode
    assert ours.np_random.bit_generator.state == theirs.np_random.bit_generator.state


def test_make_vec_env_builds_the_fast_one_and_it_defers_to_gymnasium_where_it_differs() -> None:
    cfg = resolve_config("CartPole-v1:ppo", [])
    env = make_vec_env(cfg, 4)
    assert type(env) is FastCartPoleVectorEnv and env.spec is not None and env.spec.id == "CartPole-v1"
    assert env.spec.max_episode_steps == 500 and env.unwrapped.max_episode_steps == 500  # type: ignore[attr-defined]
    env.close()
    barto = FastCartPoleVectorEnv(num_envs=2, sutton_barto_reward=True)
    barto.reset(seed=0)
    assert barto.step(np.array([0, 1]))[1].tolist() == [0.0, 0.0]  # Gymnasium's step: -terminated, not 1
    two = FastCartPoleVectorEnv(num_envs=2)
    two.reset(seed=0)
    with pytest.raises(ValueError, match=r"is not one CartPole action \(0 or 1\) per copy \(2 copies\)"):
        two.step(np.zeros(3, np.int64))
