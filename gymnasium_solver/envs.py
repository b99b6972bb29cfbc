"""Vectorised Gymnasium environments and the space descriptions the rest of the trainer needs.

We rely on Gymnasium 1.x NEXT_STEP autoreset (the default for its vector envs and for
CartPole's numpy-vectorised implementation): see ``advantages.py`` for what that means for the
learning targets and ``rollout.py`` for how the reset step is masked out.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from gymnasium_solver.config import Config
from gymnasium_solver.run_folder import ActionSpaceInfo


class SpaceSpec(NamedTuple):
    """What the networks need to know about an environment's spaces."""

    obs_dim: int
    observation_shape: tuple[int, ...]
    discrete: bool
    n_actions: int  # discrete: number of actions; box: action dimension
    action_low: np.ndarray | None
    action_high: np.ndarray | None


def _has_vector_entry_point(env_id: str) -> bool:
    try:
        return gym.spec(env_id).vector_entry_point is not None
    except gym.error.Error:
        return False


def make_vec_env(cfg: Config, num_envs: int) -> gym.vector.VectorEnv:
    """Create ``num_envs`` copies of ``cfg.env_id``: numpy-vectorised where Gymnasium has one
    (``vectorization: auto``), else a sync (or ``async``) vector env. Raises ValueError for an
    unknown environment id or an unsupported space."""
    kwargs: dict[str, Any] = dict(cfg.env_kwargs)
    if cfg.vectorization == "auto" and _has_vector_entry_point(cfg.env_id):
        mode = "vector_entry_point"
    else:
        mode = "async" if cfg.vectorization == "async" else "sync"
    try:
        env = gym.make_vec(cfg.env_id, num_envs=num_envs, vectorization_mode=mode, **kwargs)
    except gym.error.Error as exc:
        raise ValueError(f"cannot create environment {cfg.env_id!r}: {exc}") from exc
    space_spec(env)  # fail early, with a clear message, on spaces we cannot learn on
    return env


def space_spec(env: gym.vector.VectorEnv) -> SpaceSpec:
    """Describe a vector env's single observation and action spaces (flat Box obs; Discrete or Box actions)."""
    obs_space = env.single_observation_space
    act_space = env.single_action_space
    if not isinstance(obs_space, gym.spaces.Box):
        raise ValueError(f"only Box observation spaces are supported, got {obs_space}")
    obs_shape = tuple(int(d) for d in obs_space.shape)
    obs_dim = int(np.prod(obs_shape))
    if isinstance(act_space, gym.spaces.Discrete):
        return SpaceSpec(obs_dim, obs_shape, True, int(act_space.n), None, None)
    if isinstance(act_space, gym.spaces.Box) and len(act_space.shape) == 1:
        low = act_space.low.astype(np.float32)
        high = act_space.high.astype(np.float32)
        return SpaceSpec(obs_dim, obs_shape, False, int(act_space.shape[0]), low, high)
    raise ValueError(f"only Discrete and 1-D Box action spaces are supported, got {act_space}")


def action_space_info(spec: SpaceSpec) -> ActionSpaceInfo:
    """The run.json description of the action space (max_entropy = log(n) for Discrete)."""
    if spec.discrete:
        return ActionSpaceInfo(kind="discrete", n=spec.n_actions, max_entropy=math.log(spec.n_actions))
    assert spec.action_low is not None and spec.action_high is not None
    return ActionSpaceInfo(
        kind="box",
        shape=[spec.n_actions],
        low=[float(x) for x in spec.action_low],
        high=[float(x) for x in spec.action_high],
    )
