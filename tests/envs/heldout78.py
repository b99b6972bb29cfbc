"""Two users' own environment classes for the held-out set heldout78 (tests/fixtures/heldout78): what a user
who brings their own problem (no preset, no RL Zoo entry, no earlier run) writes. Pure Python/numpy, fast.

- ``Pollinator``: a bee flies over a meadow (the unit square) to a flower placed at random at least 0.5 away
  and feeds there. Observation (Box, 2): the flower's offset from the bee, doubled. Action (Box, 2, in [-1, 1]):
  the flight along x and y, 0.07 per unit per step; the bee stays inside the meadow. Each step on the flower
  (within 0.1 of it) pays 1, each step off it costs the distance to it; 40 steps end the episode (truncated).
  A bee that flies straight there and stays gets about 28-30; hovering or flying at random about -29.
- ``GridBattery``: a home battery trades with the grid over two days of hourly prices (48 steps).
  The price is 1 + 0.8 * sin(2 pi (t / 24) + phase), the phase drawn at reset. Observation (Box, 5): the
  price's sine and cosine phase of the current hour, the price itself, the battery's charge (0-1, 4 units) and
  the share of the 48 hours left.
  Actions (Discrete, 3): 0 buy one unit (pay the price), 1 idle, 2 sell one unit (earn the price);
  buying when full or selling when empty does nothing and costs 0.05. The episode ends after 48 hours.
  Charging in the cheap hours and selling in the dear ones earns about 8.5; random trading loses money.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Pollinator(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, max_steps: int = 40, flower_radius: float = 0.1, speed: float = 0.07):
        self.max_steps, self.flower_radius, self.speed = int(max_steps), float(flower_radius), float(speed)
        self.observation_space = spaces.Box(-2.0, 2.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.bee = np.zeros(2)
        self.flower = np.zeros(2)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return (2.0 * (self.flower - self.bee)).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        while True:
            self.bee = self.np_random.uniform(0.0, 1.0, size=2)
            self.flower = self.np_random.uniform(0.0, 1.0, size=2)
            if np.linalg.norm(self.flower - self.bee) >= 0.5:
                break
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        self.bee = np.clip(self.bee + self.speed * a, 0.0, 1.0)
        dist = float(np.linalg.norm(self.flower - self.bee))
        self.t += 1
        reward = 1.0 if dist < self.flower_radius else -dist
        return self._obs(), reward, False, self.t >= self.max_steps, {}


class GridBattery(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, hours: int = 48, capacity: int = 4):
        self.hours, self.capacity = int(hours), int(capacity)
        self.observation_space = spaces.Box(-2.0, 2.0, shape=(5,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.phase = 0.0
        self.t = 0
        self.charge = 0

    def _angle(self) -> float:
        return 2.0 * math.pi * self.t / 24.0 + self.phase

    def _price(self) -> float:
        return 1.0 + 0.8 * math.sin(self._angle())

    def _obs(self) -> np.ndarray:
        ang = self._angle()
        return np.array([math.sin(ang), math.cos(ang), self._price(), self.charge / self.capacity,
                         1.0 - self.t / self.hours], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.phase = float(self.np_random.uniform(0.0, 2.0 * math.pi))
        self.t = 0
        self.charge = 0
        return self._obs(), {}

    def step(self, action):
        a = int(action)
        price = self._price()
        reward = 0.0
        if a == 0:
            if self.charge < self.capacity:
                self.charge += 1
                reward = -price
            else:
                reward = -0.05
        elif a == 2:
            if self.charge > 0:
                self.charge -= 1
                reward = price
            else:
                reward = -0.05
        self.t += 1
        return self._obs(), float(reward), False, self.t >= self.hours, {}
