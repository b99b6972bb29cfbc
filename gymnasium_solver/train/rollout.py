"""Rollout collection: steps the vector env with the current policy into time-major buffers.

Gymnasium 1.x NEXT_STEP autoreset: the step after an episode ends is a reset step (action ignored,
reward 0, new first observation). It is recorded with ``valid = False`` so no update trains on it,
and the observation it is given (the episode's final observation) still gets a value, which is
what a truncated episode bootstraps from (see ``advantages.py``).
"""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium.wrappers.utils import RunningMeanStd

# Rollout (the record) lives with the algorithms that consume it: agents never import this machinery.
from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer, Rollout
from gymnasium_solver.envs import SpaceSpec, batch_obs

RECENT_EPISODES = 100


class EpisodeSummary(NamedTuple):
    """Training-episode statistics over the most recent RECENT_EPISODES finished episodes."""

    return_mean: float | None
    return_std: float | None
    len_mean: float | None
    episodes: int


class RewardNormalizer:
    """SB3's VecNormalize reward scaling (``norm_reward``), which the RL Zoo's ``normalize: true`` turns on: each
    sub-env's discounted return is tracked, and rewards are divided by the running std of those returns
    (Gymnasium's RunningMeanStd), then clipped to +-CLIP. The return restarts where an episode ended."""

    CLIP = 10.0
    EPS = 1e-8

    def __init__(self, n_envs: int, gamma: float):
        self.gamma = gamma
        self.returns = np.zeros(n_envs, np.float64)
        self.stats = RunningMeanStd(shape=())

    def __call__(self, reward: np.ndarray, done: np.ndarray) -> np.ndarray:
        self.returns = self.returns * self.gamma + reward
        self.stats.update(self.returns)
        out = np.clip(reward / np.sqrt(self.stats.var + self.EPS), -self.CLIP, self.CLIP).astype(np.float32)
        self.returns[done] = 0.0
        return out


class RolloutCollector:
    """Owns the training vector env's state between rollouts (current observation, which
    sub-envs reset next step, unfinished episode returns) and the training-episode statistics."""

    def __init__(
        self,
        env: gym.vector.VectorEnv,
        spec: SpaceSpec,
        normalizer: ObsNormalizer,
        reward_scale: float,
        seed: int,
        reward_clip: float | None = None,
        reward_gamma: float | None = None,
    ):
        """``reward_gamma``: normalise learning rewards by the running std of the return discounted with it
        (config ``normalize_rewards``); None leaves them as scaled."""
        self.env, self.spec, self.normalizer, self.reward_scale = env, spec, normalizer, reward_scale
        self.reward_clip = reward_clip
        self.reward_normalizer = RewardNormalizer(env.num_envs, reward_gamma) if reward_gamma is not None else None
        self.rng = np.random.default_rng(seed)  # action sampling
        self.n = env.num_envs
        raw, _ = env.reset(seed=seed)
        self._raw_obs = self._flat(raw)
        self.normalizer.update(self._raw_obs)
        self._prev_done = np.zeros(self.n, bool)
        self._ep_return = np.zeros(self.n, np.float64)
        self._ep_len = np.zeros(self.n, np.int64)
        self._recent_returns: deque[float] = deque(maxlen=RECENT_EPISODES)
        self._recent_lens: deque[int] = deque(maxlen=RECENT_EPISODES)
        self.episodes = 0
        self.env_steps = 0

    def _flat(self, obs: np.ndarray) -> np.ndarray:
        return batch_obs(obs, self.spec, self.n)

    def reset(self) -> None:
        """Start fresh episodes in every sub-env (REINFORCE learns from complete episodes only)."""
        raw, _ = self.env.reset()
        self._raw_obs = self._flat(raw)
        self.normalizer.update(self._raw_obs)
        self._prev_done[:] = False
        self._ep_return[:] = 0.0
        self._ep_len[:] = 0

    def _step(self, policy: ActorCritic) -> tuple[np.ndarray, ...]:
        """One vector step. Returns (obs, actions, rewards, terminated, truncated, valid)."""
        obs = self.normalizer(self._raw_obs)
        out = policy.act(obs, self.rng)
        raw, reward, term, trunc, _ = self.env.step(out.env_actions)
        valid = ~self._prev_done
        reward = np.asarray(reward, np.float64)
        term, trunc = np.asarray(term, bool), np.asarray(trunc, bool)
        done = term | trunc
        self._ep_return += reward
        self._ep_len += valid
        for i in np.flatnonzero(done & valid):
            self._recent_returns.append(float(self._ep_return[i]))
            self._recent_lens.append(int(self._ep_len[i]))
            self.episodes += 1
        # Accumulators restart at the reset step (which has reward 0 and is not counted).
        self._ep_return[done] = 0.0
        self._ep_len[done] = 0
        self._prev_done = done
        self._raw_obs = self._flat(raw)
        self.normalizer.update(self._raw_obs)
        self.env_steps += self.n
        scaled = (reward * self.reward_scale).astype(np.float32)
        if self.reward_normalizer is not None:
            scaled = self.reward_normalizer(scaled, done)
        if self.reward_clip is not None:
            # Only what the update learns from is clipped; the episode returns above stay in game score.
            np.clip(scaled, -self.reward_clip, self.reward_clip, out=scaled)
        return obs, out.actions, scaled, term, trunc, valid

    def _alloc(self, steps: int) -> list[np.ndarray]:
        act_shape = (steps, self.n) if self.spec.discrete else (steps, self.n, self.spec.n_actions)
        # Pixels are stored as uint8 frame stacks (a 128-step x 8-env Atari rollout is 29 MB, not 116 MB).
        obs = (np.zeros((steps, self.n, *self.spec.observation_shape), np.uint8) if self.spec.pixels
               else np.zeros((steps, self.n, self.spec.obs_dim), np.float32))
        return [
            obs,
            np.zeros(act_shape, np.int64 if self.spec.discrete else np.float32),
            np.zeros((steps, self.n), np.float32),
            np.zeros((steps, self.n), bool),
            np.zeros((steps, self.n), bool),
            np.zeros((steps, self.n), bool),
        ]

    def collect_steps(self, policy: ActorCritic, n_steps: int) -> Rollout:
        """``n_steps`` steps of every sub-env into preallocated buffers (PPO)."""
        start = self.env_steps
        bufs = self._alloc(n_steps)
        for t in range(n_steps):
            for buf, value in zip(bufs, self._step(policy), strict=True):
                buf[t] = value
        return self._rollout(bufs, start)

    def collect_episodes(self, policy: ActorCritic, n_episodes: int, max_steps: int) -> Rollout:
        """Step from fresh resets until ``n_episodes`` episodes have finished (or ``max_steps``
        vector steps passed); only steps of finished episodes are ``valid`` (REINFORCE)."""
        self.reset()
        start = self.env_steps
        chunk = 64
        bufs = self._alloc(chunk)
        finished, t = 0, 0
        while finished < n_episodes and t < max_steps:
            if t == bufs[0].shape[0]:
                bufs = [np.concatenate([b, np.zeros_like(b)]) for b in bufs]
            step = self._step(policy)
            for buf, value in zip(bufs, step, strict=True):
                buf[t] = value
            finished += int(np.count_nonzero((step[3] | step[4]) & step[5]))
            t += 1
        bufs = [b[:t] for b in bufs]
        # Steps after a sub-env's last episode end belong to an unfinished episode: not valid.
        done = bufs[3] | bufs[4]
        ended_later = np.flip(np.logical_or.accumulate(np.flip(done, 0), 0), 0)
        bufs[5] &= ended_later
        return self._rollout(bufs, start)

    def _rollout(self, bufs: list[np.ndarray], start_steps: int) -> Rollout:
        obs, actions, rewards, terminated, truncated, valid = bufs
        return Rollout(
            obs=obs, actions=actions, rewards=rewards, terminated=terminated, truncated=truncated, valid=valid,
            last_obs=self.normalizer(self._raw_obs), env_steps=self.env_steps - start_steps,
        )

    def state_dict(self) -> dict[str, Any]:
        """The counters and the sampling RNG a resume restores (the envs themselves restart fresh
        episodes: their in-episode state is not saved)."""
        return {"rng": self.rng.bit_generator.state, "env_steps": self.env_steps, "episodes": self.episodes,
                "recent_returns": list(self._recent_returns), "recent_lens": list(self._recent_lens)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.env_steps, self.episodes = int(state["env_steps"]), int(state["episodes"])
        self._recent_returns.clear()
        self._recent_returns.extend(state["recent_returns"])
        self._recent_lens.clear()
        self._recent_lens.extend(state["recent_lens"])

    def summary(self) -> EpisodeSummary:
        if not self._recent_returns:
            return EpisodeSummary(None, None, None, self.episodes)
        returns = np.asarray(self._recent_returns)
        return EpisodeSummary(
            float(returns.mean()), float(returns.std()), float(np.mean(self._recent_lens)), self.episodes
        )
