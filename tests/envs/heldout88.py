"""A user's own environment classes for the held-out set heldout88 (tests/fixtures/heldout88): two small problems
written the way a user would write them for their own task. Pure Python/numpy, no rendering, episodes end by
themselves.

- ``BarTap``: pour a drink up to a random fill line. Box observation (fill level, fill line, time used), three
  actions: 0 serve the glass (ends the episode), 1 pour slowly, 2 pour fast. Each pour costs 0.01; serving pays
  ``1 - 4 * |level - line|`` (at least -1); a glass filled past 1.0 overflows (-1, ends). Truncated after 40 steps.
  Pouring fast to near the line, topping up slowly and serving scores about 0.85-0.9; a random policy mostly serves
  an empty glass or overflows it (below -0.5).
- ``ChangeMaker``: a cashier hands back change owed in 5-cent units (5 to 95 cents), one coin a step: 0 a quarter,
  1 a dime, 2 a nickel. MultiDiscrete observation (nickels still owed 0-19, coins handed so far 0-9). Each coin
  costs 0.1; paying the exact change pays 1 (ends); paying too much costs 1 (ends). Truncated after 10 coins.
  The greedy cashier scores about 0.7 on average; a random one below 0.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class BarTap(gym.Env[np.ndarray, int]):
    def __init__(self, max_steps: int = 40, slow: float = 0.03, fast: float = 0.12):
        self.max_steps, self.slow, self.fast = int(max_steps), float(slow), float(fast)
        self.observation_space = spaces.Box(low=np.array([0.0, 0.0, 0.0], dtype=np.float32),
                                            high=np.array([1.5, 1.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.level = self.line = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.level, self.line, self.t / self.max_steps], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.level, self.line, self.t = 0.0, float(self.np_random.uniform(0.5, 0.9)), 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        a = int(action)
        if a == 0:
            reward = max(-1.0, 1.0 - 4.0 * abs(self.level - self.line))
            return self._obs(), reward, True, False, {}
        flow = self.slow if a == 1 else self.fast
        self.level += flow * float(self.np_random.uniform(0.9, 1.1))
        if self.level > 1.0:
            self.level = min(self.level, 1.5)
            return self._obs(), -1.0, True, False, {}
        return self._obs(), -0.01, False, self.t >= self.max_steps, {}


class ChangeMaker(gym.Env[np.ndarray, int]):
    COINS = (5, 2, 1)  # quarter, dime, nickel in 5-cent units (a dime rounds to 2 nickels here)

    def __init__(self, max_coins: int = 10):
        self.max_coins = int(max_coins)
        self.observation_space = spaces.MultiDiscrete([20, self.max_coins])
        self.action_space = spaces.Discrete(3)
        self.owed = self.given = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.owed, min(self.given, self.max_coins - 1)], dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.owed, self.given = int(self.np_random.integers(1, 20)), 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.given += 1
        self.owed -= self.COINS[int(action)]
        if self.owed < 0:
            self.owed = 0
            return self._obs(), -1.1, True, False, {}
        if self.owed == 0:
            return self._obs(), 0.9, True, False, {}
        return self._obs(), -0.1, False, self.given >= self.max_coins, {}
