"""A user's own environment classes for the held-out set heldout79 (tests/fixtures/heldout79). Pure Python/numpy,
no rendering; every episode ends by itself.

- ``SeasonalTrader``: hold a position in one commodity whose price moves with a seasonal cycle plus noise.
  Box observation [sin(season), cos(season), last price change * 10], Box action: the position in [-1, 1]
  (short to long). Each step pays position * next price change * 10, where the change is 0.1 * sin(season) plus
  Gaussian noise (sd 0.05) and the season advances by 2*pi/25 a step from a random start. 100 steps an episode
  (truncated). Holding the sign of the season's drift at full size earns about 64 on average; a random or flat
  position about 0.
- ``Pancake``: cook a pancake on a pan of random heat. Dict observation {"doneness": Box(2) [underside, top side],
  "heat": Box(1)}; Discrete(3) actions: 0 wait (the underside cooks by the heat, 0.06-0.14 a step), 1 flip (the two
  sides swap), 2 serve (ends the episode). Serving pays 1 - |underside - 1| - |top - 1| (down to -1); a pancake not
  served within 60 steps ends with -1. Waiting until each side reaches 1 pays about 0.9; serving at once pays -1.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class SeasonalTrader(gym.Env):
    def __init__(self, horizon: int = 100, period: int = 25, drift: float = 0.1, noise: float = 0.05):
        self.horizon, self.period, self.drift, self.noise = int(horizon), int(period), float(drift), float(noise)
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.phase = 0.0
        self.last = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([np.sin(self.phase), np.cos(self.phase), 10.0 * self.last], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.phase = float(self.np_random.uniform(0.0, 2.0 * np.pi))
        self.last = 0.0
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        position = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        change = self.drift * np.sin(self.phase) + self.noise * float(self.np_random.normal())
        reward = 10.0 * position * change
        self.last = change
        self.phase = (self.phase + 2.0 * np.pi / self.period) % (2.0 * np.pi)
        self.t += 1
        return self._obs(), float(reward), False, self.t >= self.horizon, {}


class Pancake(gym.Env):
    def __init__(self, max_steps: int = 60, min_heat: float = 0.06, max_heat: float = 0.14):
        self.max_steps, self.min_heat, self.max_heat = int(max_steps), float(min_heat), float(max_heat)
        self.observation_space = spaces.Dict({
            "doneness": spaces.Box(0.0, 10.0, shape=(2,), dtype=np.float32),
            "heat": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
        })
        self.action_space = spaces.Discrete(3)
        self.sides = np.zeros(2)
        self.heat = 0.1
        self.t = 0

    def _obs(self) -> dict[str, np.ndarray]:
        return {"doneness": np.clip(self.sides, 0.0, 10.0).astype(np.float32),
                "heat": np.array([self.heat], dtype=np.float32)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.sides = np.zeros(2)
        self.heat = float(self.np_random.uniform(self.min_heat, self.max_heat))
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        a = int(action)
        self.t += 1
        if a == 2:
            score = 1.0 - abs(self.sides[0] - 1.0) - abs(self.sides[1] - 1.0)
            return self._obs(), float(max(score, -1.0)), True, False, {}
        if a == 1:
            self.sides = self.sides[::-1].copy()
        self.sides[0] += self.heat
        if self.t >= self.max_steps:
            return self._obs(), -1.0, False, True, {}
        return self._obs(), 0.0, False, False, {}
