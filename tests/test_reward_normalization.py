"""`normalize_rewards` is SB3's VecNormalize reward scaling (what the RL Zoo's `normalize: true` turns on, with
observation normalisation): the same numbers as SB3 on the same reward stream, learning rewards only."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer
from gymnasium_solver.config import resolve_config
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train.rollout import RewardNormalizer, RolloutCollector


class Scripted(gym.Env[np.ndarray, int]):
    """Rewards that vary in sign and size, episodes of 7 steps: a stream both normalisers see alike."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, offset: float = 0.0):
        self.t, self.offset = 0, offset

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        reward = 5.0 * np.sin(self.t + self.offset) + (3.0 if action else -1.0)
        return np.zeros(1, np.float32), float(reward), self.t >= 7, False, {}


def test_the_same_scaled_rewards_as_sb3s_vecnormalize() -> None:
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    venv = vec_env.VecNormalize(vec_env.DummyVecEnv([lambda: Scripted(0.0), lambda: Scripted(1.5)]),
                                norm_obs=False, norm_reward=True, gamma=0.9)
    raw_env = vec_env.DummyVecEnv([lambda: Scripted(0.0), lambda: Scripted(1.5)])
    venv.reset()
    raw_env.reset()
    ours = RewardNormalizer(2, 0.9)
    rng = np.random.default_rng(0)
    for _ in range(60):
        actions = rng.integers(0, 2, size=2)
        _, theirs, _, _ = venv.step(actions)
        _, raw, dones, _ = raw_env.step(actions)
        np.testing.assert_allclose(ours(raw.astype(np.float32), dones), theirs, rtol=1e-5, atol=1e-6)
    assert not np.allclose(theirs, raw)  # it did scale


def test_learning_rewards_are_scaled_and_episode_returns_are_not() -> None:
    cfg = resolve_config("CartPole-v1:ppo", ["n_envs=4", "batch_size=64", "normalize_rewards=true"])
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    policy = ActorCritic(spec, cfg)
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, 0, None, cfg.gamma)
    rollout = collector.collect_steps(policy, 256)
    env.close()
    assert not np.allclose(rollout.rewards, 1.0)  # CartPole's reward is 1 every step: these are divided by a std
    assert np.all(np.abs(rollout.rewards) <= RewardNormalizer.CLIP)
    summary = collector.summary()
    assert summary.episodes > 0 and summary.return_mean == summary.len_mean  # game score: 1 per step balanced


def test_the_zoos_normalize_turns_both_on_and_off_policy_algorithms_refuse_it() -> None:
    assert resolve_config("CartPole-v1:ppo", ["normalize=true"]).normalize_rewards is True
    both = resolve_config("CartPole-v1:ppo", ["normalize={norm_obs: true, norm_reward: false}"])
    assert both.normalize_observations is True and both.normalize_rewards is False
    with pytest.raises(ValueError, match="normalize_rewards"):
        resolve_config("Pendulum-v1:sac", ["normalize_rewards=true"])
