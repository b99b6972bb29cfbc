"""Training a Stable-Baselines3 algorithm in our loop: ``SB3Session`` is the training session
(training.py) with SB3's environments, agent and checkpoint contents. Evaluation, the metrics rows,
stop signals, failures and run.json are the session's own, so an SB3 run folder reads like any other.
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm

from gymnasium_solver.agents.common import ObsNormalizer
from gymnasium_solver.agents.sb3 import SB3Agent
from gymnasium_solver.config import SB3Config
from gymnasium_solver.envs import SpaceSpec, flat_observations
from gymnasium_solver.train.checkpoints import CheckpointState, snapshot
from gymnasium_solver.train.rollout import RECENT_EPISODES, EpisodeSummary
from gymnasium_solver.train.session import Session


class SB3Collector:
    """SB3's env-step counter and its Monitor's recent episodes, in the form our loop reads."""

    def __init__(self, model: BaseAlgorithm):
        self.model = model
        self.episodes = 0

    @property
    def env_steps(self) -> int:
        return int(self.model.num_timesteps)

    def summary(self) -> EpisodeSummary:
        infos = list(self.model.ep_info_buffer or [])[-RECENT_EPISODES:]
        if not infos:
            return EpisodeSummary(None, None, None, self.episodes)
        returns = np.array([i["r"] for i in infos], np.float64)
        lengths = np.array([i["l"] for i in infos], np.float64)
        return EpisodeSummary(float(returns.mean()), float(returns.std()), float(lengths.mean()), self.episodes)


class SB3Session(Session):
    """A training session whose agent is an SB3 model (gymnasium_solver/agents/sb3.py). Its checkpoints hold SB3's own
    .zip beside the weights; they are never resumable (no replay buffer), which resume.py says."""

    def _build(self, spec: SpaceSpec) -> None:
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        cfg = self.cfg
        assert isinstance(cfg, SB3Config)
        # SB3 steps its own VecEnv (Monitor-wrapped: its episode statistics are what we log).
        # The same observation wrapper as our env factory (Discrete one-hot, Dict flattened), so the policy SB3
        # trains sees what our evaluation and every reload feed it. With env modules, the registered spec itself
        # (its entry point is a module path): a SubprocVecEnv worker has not imported what registered the id.
        env_id = cfg.env_id if not (cfg.env_package or cfg.env_class) else partial(gym.make, gym.spec(cfg.env_id))
        self.env = make_vec_env(env_id, n_envs=cfg.n_envs, seed=cfg.seed, env_kwargs=dict(cfg.env_kwargs),
                                vec_env_cls=SubprocVecEnv if cfg.vectorization == "async" else DummyVecEnv,
                                wrapper_class=flat_observations)
        self.normalizer = ObsNormalizer((spec.obs_dim,), enabled=False)
        agent = SB3Agent(cfg, spec, self.env)
        self.agent = agent
        self.collector = SB3Collector(agent.model)

    def _snapshot(self, eval_mean: float | None, resumable: bool = False) -> CheckpointState:
        assert isinstance(self.agent, SB3Agent)
        state = snapshot(self.agent.policy, self.normalizer, env_steps=self.collector.env_steps,
                         iteration=self.iteration, wall_seconds=self.wall, eval_return_mean=eval_mean)
        return state._replace(sb3_model=self.agent.policy.saved_model())

    @property
    def at_iteration_end(self) -> bool:
        return False  # an SB3 checkpoint is never resumable: `last` is simply the latest weights
