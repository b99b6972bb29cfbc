"""A user's own environment classes for held-out set heldout90 (off-policy algorithms on classes with no preset,
no RL Zoo entry and no earlier run). Pure Python/numpy, fast, every episode ends inside the class.

- ``Detectorist``: a metal detectorist sweeps a square patch of beach, [-1, 1] x [-1, 1], for one buried coin
  placed at random each episode. Box actions (2,) in [-1, 1]: the walking velocity, at most 0.1 per axis per step.
  Box observation (5,): the detectorist's position (x, y), the detector's two-coil bearing signal (the coin's
  offset from the detectorist, clipped to [-1, 1] per axis) and the tone's loudness, exp(-distance). Every step
  costs the distance to the coin; the episode terminates when the detectorist stands within 0.08 of the coin (the
  coin is dug up) and is truncated after 60 steps. Walking straight at the coin returns about -7 on average, a
  uniform random walker about -60.
- ``HeadWaiter``: a head waiter seats the groups that arrive at a restaurant with four tables (2, 4, 4 and 6
  seats), one group of 1-6 guests per step. Discrete actions (5): seat the group at table 0-3, or turn it away (4).
  Box observation (9,): each table's free flag (1 if empty), each table's seats / 6, and the group's size / 6.
  Seating a group at an empty table big enough pays its size / 6 (the guests served); seating it at an occupied
  or too small table costs 0.5 (the group leaves angry); turning it away pays 0. A seated group leaves its table
  with probability 0.15 per step. Truncated after 50 steps. A uniform random waiter returns about -8, always
  turning groups away 0, best-fit seating about 11.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Detectorist(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, max_steps: int = 60, step_size: float = 0.1, dig_radius: float = 0.08):
        self.max_steps, self.step_size, self.dig_radius = int(max_steps), float(step_size), float(dig_radius)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(5,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.pos = np.zeros(2)
        self.coin = np.zeros(2)
        self.t = 0

    def _obs(self) -> np.ndarray:
        offset = np.clip(self.coin - self.pos, -1.0, 1.0)
        loud = np.exp(-np.linalg.norm(self.coin - self.pos))
        return np.array([*self.pos, *offset, loud], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1.0, 1.0, size=2)
        self.coin = self.np_random.uniform(-1.0, 1.0, size=2)
        while np.linalg.norm(self.coin - self.pos) < 3 * self.dig_radius:
            self.coin = self.np_random.uniform(-1.0, 1.0, size=2)
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        move = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0) * self.step_size
        self.pos = np.clip(self.pos + move, -1.0, 1.0)
        self.t += 1
        dist = float(np.linalg.norm(self.coin - self.pos))
        terminated = dist < self.dig_radius
        truncated = self.t >= self.max_steps and not terminated
        return self._obs(), -dist, terminated, truncated, {}


class HeadWaiter(gym.Env[np.ndarray, int]):
    SEATS = (2, 4, 4, 6)

    def __init__(self, max_steps: int = 50, leave_prob: float = 0.15):
        self.max_steps, self.leave_prob = int(max_steps), float(leave_prob)
        n = len(self.SEATS)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2 * n + 1,), dtype=np.float32)
        self.action_space = spaces.Discrete(n + 1)
        self.free = np.ones(n, dtype=bool)
        self.group = 1
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([*self.free.astype(float), *(s / 6 for s in self.SEATS), self.group / 6], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.free[:] = True
        self.group = int(self.np_random.integers(1, 7))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = int(action)
        reward = 0.0
        if a < len(self.SEATS):
            if self.free[a] and self.SEATS[a] >= self.group:
                self.free[a] = False
                reward = self.group / 6
            else:
                reward = -0.5
        leaving = self.np_random.random(len(self.SEATS)) < self.leave_prob
        self.free |= leaving & ~self.free
        self.group = int(self.np_random.integers(1, 7))
        self.t += 1
        return self._obs(), reward, False, self.t >= self.max_steps, {}
