"""Deterministic evaluation (train/evaluation.py): one episode per sub-env. A SyncVectorEnv steps only the sub-envs
whose episode is still running, and its episodes are the ones the whole vector env would have played."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch

from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer
from gymnasium_solver.config import resolve_config
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train import evaluation


class _Counted(gym.Wrapper):
    steps = 0

    def step(self, action: Any) -> Any:
        _Counted.steps += 1
        return self.env.step(action)


def _evaluate(vectorization: str, wrap: bool = False) -> evaluation.EvalResult:
    """An untrained CartPole policy (seeded: episodes of different lengths) over 8 episodes from seed 3."""
    cfg = resolve_config("CartPole-v1:ppo", [f"vectorization={vectorization}", "n_envs=8"])
    env = make_vec_env(cfg, 8)
    if wrap:
        assert isinstance(env, gym.vector.SyncVectorEnv)
        env.envs = [_Counted(e) for e in env.envs]
    torch.manual_seed(0)
    policy = ActorCritic(space_spec(env), cfg, with_critic=True)
    try:
        return evaluation.evaluate(policy, ObsNormalizer(space_spec(env).observation_shape, False), env, seed=3)
    finally:
        env.close()


def test_an_evaluation_plays_the_same_episodes_whether_or_not_finished_sub_envs_step() -> None:
    """The async vector env steps every sub-env until the last episode ends; the sync path steps only the running
    ones: the same episodes, return for return."""
    stepping_all, stepping_running = _evaluate("async"), _evaluate("sync")
    assert stepping_running.returns == stepping_all.returns and len(set(stepping_all.returns)) > 1
    assert stepping_running.ep_len_mean == stepping_all.ep_len_mean


def test_a_sync_evaluation_steps_each_sub_env_to_its_own_episodes_end() -> None:
    _Counted.steps = 0
    result = _evaluate("sync", wrap=True)
    assert _Counted.steps == round(result.ep_len_mean * 8) < 8 * max(result.returns)  # CartPole: 1 reward a step
