"""A user's own environment classes for the held-out set tests/fixtures/heldout74 (written by the helper that made
that set, as a user would write them for their own problem). Pure Python/numpy, no rendering, fast.

- ``MoleWhack``: a whack-a-mole board of 4 holes. Each step a mole may pop up in an empty hole and stays up for 3
  steps. The observation (Box, 5 floats) is each hole's remaining up time / 3 and the fraction of the episode
  left; the action (Discrete 5) hits hole 0-3 or waits (4). Hitting a mole pays +1 and clears it, hitting an empty
  hole costs 0.25, waiting pays nothing. Every episode is 100 steps (truncated).
- ``PaintMixer``: mix a paint colour. The observation (Box, 6 floats) is the target colour and the current mix
  (3 channels each, in [0, 1]); the action (Box, 3 floats in [-1, 1]) opens each channel's pump or drain, moving
  that channel by up to 0.1 a step. Each step pays minus the distance between mix and target; the episode ends
  (terminated) with a bonus of +5 when the mix is within 0.06 of the target, else it is truncated after 60 steps.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class MoleWhack(gym.Env[np.ndarray, int]):
    def __init__(self, holes: int = 4, up_time: int = 3, pop_prob: float = 0.35, max_steps: int = 100):
        self.holes, self.up_time = int(holes), int(up_time)
        self.pop_prob, self.max_steps = float(pop_prob), int(max_steps)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.holes + 1,), dtype=np.float32)
        self.action_space = spaces.Discrete(self.holes + 1)
        self.timers = np.zeros(self.holes, dtype=np.int64)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.append(self.timers / self.up_time, 1.0 - self.t / self.max_steps).astype(np.float32)

    def _pop(self) -> None:
        empty = np.flatnonzero(self.timers == 0)
        if len(empty) and self.np_random.random() < self.pop_prob:
            self.timers[self.np_random.choice(empty)] = self.up_time

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.timers[:] = 0
        self.t = 0
        self._pop()
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = int(action)
        reward = 0.0
        if a < self.holes:
            if self.timers[a] > 0:
                reward, self.timers[a] = 1.0, 0
            else:
                reward = -0.25
        self.timers = np.maximum(self.timers - 1, 0)
        self._pop()
        self.t += 1
        return self._obs(), reward, False, self.t >= self.max_steps, {}


class PaintMixer(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, channels: int = 3, rate: float = 0.1, tolerance: float = 0.06, max_steps: int = 60):
        self.channels, self.rate = int(channels), float(rate)
        self.tolerance, self.max_steps = float(tolerance), int(max_steps)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2 * self.channels,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(self.channels,), dtype=np.float32)
        self.target = np.zeros(self.channels)
        self.mix = np.zeros(self.channels)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.target, self.mix]).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.target = self.np_random.uniform(0.0, 1.0, self.channels)
        self.mix = self.np_random.uniform(0.0, 1.0, self.channels)
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(self.channels), -1.0, 1.0)
        self.mix = np.clip(self.mix + self.rate * a, 0.0, 1.0)
        self.t += 1
        dist = float(np.linalg.norm(self.mix - self.target))
        done = dist < self.tolerance
        reward = -dist + (5.0 if done else 0.0)
        return self._obs(), reward, done, self.t >= self.max_steps and not done, {}
