"""A user's own environment classes for the held-out set tests/fixtures/heldout91 (written by the helper that made
that set, as a user would write them for their own problem). Pure Python/numpy, no rendering, fast.

- ``ScubaAscent``: a diver surfaces from 30-40 m. Box observation [depth / 40, nitrogen load], three actions:
  0 stop for a safety pause (the load falls by 0.08), 1 ascend slowly (2 m, load +0.03), 2 ascend fast (5 m, load
  +0.15). Every step costs 0.01; reaching the surface pays 1 and ends the episode, a load of 1 or more is the bends
  (-1, ends the episode); 150 steps truncate. The load starts between 0.3 and 0.6, so rising slowly all the way
  bends about half the dives: the diver must pause when the load is high. A well-timed ascent returns about 0.75-0.8;
  a uniform random policy mostly bends.
- ``NightLamplighter``: a lamplighter walks a street of 6 lamps, starting at the first; some lamps (at least one,
  each with probability 0.5) are out. MultiDiscrete observation [position (6), lamp 0 lit, ..., lamp 5 lit (2
  each)], three actions: 0 step back, 1 step on, 2 light the lamp here. Lighting an unlit lamp pays 1 / (lamps out
  at the start), lighting a lit one wastes oil (-0.1); the episode ends when every lamp is lit (terminated) or after
  12 steps (truncated). The best round (walk on, lighting each dark lamp) returns 1.0 and always fits in 12 steps.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class ScubaAscent(gym.Env[np.ndarray, int]):
    def __init__(self, max_steps: int = 150):
        self.max_steps = int(max_steps)
        self.observation_space = spaces.Box(low=np.array([0.0, 0.0], dtype=np.float32),
                                            high=np.array([1.0, 1.5], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.depth, self.load, self.t = 35.0, 0.45, 0

    def _obs(self) -> np.ndarray:
        return np.array([self.depth / 40.0, min(self.load, 1.5)], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.depth = float(self.np_random.uniform(30.0, 40.0))
        self.load = float(self.np_random.uniform(0.3, 0.6))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = int(action)
        if a == 0:
            self.load = max(0.0, self.load - 0.08)
        elif a == 1:
            self.depth, self.load = self.depth - 2.0, self.load + 0.03
        else:
            self.depth, self.load = self.depth - 5.0, self.load + 0.15
        self.t += 1
        reward, terminated = -0.01, False
        if self.load >= 1.0:
            reward, terminated = -1.0, True
        elif self.depth <= 0.0:
            self.depth, reward, terminated = 0.0, 1.0, True
        return self._obs(), reward, terminated, self.t >= self.max_steps and not terminated, {}


class NightLamplighter(gym.Env[np.ndarray, int]):
    def __init__(self, lamps: int = 6, max_steps: int = 12):
        self.lamps, self.max_steps = int(lamps), int(max_steps)
        self.observation_space = spaces.MultiDiscrete([self.lamps] + [2] * self.lamps)
        self.action_space = spaces.Discrete(3)
        self.pos, self.t, self.dark_at_start = 0, 0, 1
        self.lit = np.ones(self.lamps, dtype=np.int64)

    def _obs(self) -> np.ndarray:
        return np.concatenate([[self.pos], self.lit]).astype(np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.lit = (self.np_random.random(self.lamps) < 0.5).astype(np.int64)
        if self.lit.all():
            self.lit[int(self.np_random.integers(self.lamps))] = 0
        self.dark_at_start = int(self.lamps - self.lit.sum())
        self.pos = self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a, reward = int(action), 0.0
        if a == 0:
            self.pos = max(self.pos - 1, 0)
        elif a == 1:
            self.pos = min(self.pos + 1, self.lamps - 1)
        elif self.lit[self.pos]:
            reward = -0.1
        else:
            self.lit[self.pos], reward = 1, 1.0 / self.dark_at_start
        self.t += 1
        terminated = bool(self.lit.all())
        return self._obs(), reward, terminated, self.t >= self.max_steps and not terminated, {}
