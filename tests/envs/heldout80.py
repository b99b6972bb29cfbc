"""A user's own environment classes for held-out set heldout80 (tests/fixtures/heldout80): small, pure Python/numpy,
fast, each episode ending by itself. Written for that set only; see its cases.yaml header.

- ``Forager``: a bee flies along a 1-D meadow (x in [-1, 1], 0.1 a step: left, hover, right) between three flowers
  at -0.8, 0 and 0.8; one flower is in bloom at a time, and the bloom moves to another flower every 20 steps. The
  observation is a Tuple: which flower blooms (Discrete(3)) and a Box of [x, fraction of the episode gone]. Each
  step within 0.15 of the blooming flower pays 1 (nectar); an episode is 100 steps (truncated).
- ``Wildfire``: a ridge of 8 forest cells, each burning or not (MultiBinary(8) observation); each step the crew
  douses one cell (Discrete(8)), then each burning cell may set an unburnt neighbour alight (probability 0.12).
  Each step costs 0.1 per cell still burning; putting the last fire out pays 2 and ends the episode; at most 60
  steps (truncated).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Forager(gym.Env):
    FLOWERS = (-0.8, 0.0, 0.8)

    def __init__(self, horizon: int = 100, bloom_steps: int = 20):
        self.horizon, self.bloom_steps = int(horizon), int(bloom_steps)
        self.observation_space = spaces.Tuple((spaces.Discrete(3),
                                               spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)))
        self.action_space = spaces.Discrete(3)
        self.x, self.bloom, self.t = 0.0, 0, 0

    def _obs(self) -> tuple[int, np.ndarray]:
        return self.bloom, np.array([self.x, self.t / self.horizon], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.x, self.t = 0.0, 0
        self.bloom = int(self.np_random.integers(3))
        return self._obs(), {}

    def step(self, action: int):
        self.x = float(np.clip(round(self.x + 0.1 * (int(action) - 1), 2), -1.0, 1.0))
        self.t += 1
        reward = 1.0 if abs(self.x - self.FLOWERS[self.bloom]) <= 0.15 else 0.0
        if self.t % self.bloom_steps == 0:
            self.bloom = int((self.bloom + 1 + self.np_random.integers(2)) % 3)
        return self._obs(), reward, False, self.t >= self.horizon, {}


class Wildfire(gym.Env):
    def __init__(self, cells: int = 8, spread: float = 0.12, max_steps: int = 60):
        self.cells, self.spread, self.max_steps = int(cells), float(spread), int(max_steps)
        self.observation_space = spaces.MultiBinary(self.cells)
        self.action_space = spaces.Discrete(self.cells)
        self.fire = np.zeros(self.cells, dtype=np.int8)
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.t = 0
        self.fire = np.zeros(self.cells, dtype=np.int8)
        start = int(self.np_random.integers(self.cells))
        self.fire[start] = 1
        self.fire[min(start + 1, self.cells - 1)] = 1
        return self.fire.copy(), {}

    def step(self, action: int):
        self.t += 1
        self.fire[int(action)] = 0
        burning = np.flatnonzero(self.fire)
        for i in burning:
            for j in (i - 1, i + 1):
                if 0 <= j < self.cells and not self.fire[j] and self.np_random.random() < self.spread:
                    self.fire[j] = 1
        n = int(self.fire.sum())
        terminated = n == 0
        reward = 2.0 if terminated else -0.1 * n
        return self.fire.copy(), reward, terminated, self.t >= self.max_steps and not terminated, {}
