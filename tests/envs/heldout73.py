"""A user's own environment classes for held-out set heldout73 (tests/fixtures/heldout73): written as a user would
write them for their own problem, with no preset, no RL Zoo entry and no earlier run. Pure Python/numpy, fast, each
episode ending by itself.

- ``FruitCatch``: fruit drops one at a time from the top of a 7-column orchard row, 7 rows up; a basket at the bottom
  moves left, stays or moves right (Discrete(3)) one column per step, while the fruit falls one row per step. The
  observation is a Box of 3 floats in [0, 1]: the basket's column, the fruit's column and the fruit's height (each
  scaled by its range). A caught fruit pays +1, a missed one -1; an episode is 10 fruits (70 steps), so returns run
  from -10 to 10. The basket can always reach the fruit's column in time, so the best return is 10; a uniform random
  policy averages about -7.
- ``ShopShelf``: a small shop restocks one product each morning. The observation is MultiDiscrete([7, 7]): the stock
  on the shelf (0-6) and the weekday (0-6). Actions (Discrete(4)) order 0, 1, 2 or 3 units, which arrive at once (the
  shelf holds 6 at most; more is lost). Then the day's demand is served: 1, 1, 2, 2, 3, 3, 0 units from Monday to
  Sunday. Each unit sold pays 1, each unit of demand not met costs 1, and each unit left on the shelf overnight costs
  0.2. An episode is 28 days (4 weeks, truncated); ordering exactly the day's demand earns 48, a uniform random order
  policy about 22.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class FruitCatch(gym.Env[np.ndarray, int]):
    COLUMNS, HEIGHT, FRUITS = 7, 7, 10

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.basket = self.fruit_x = self.fruit_y = self.dropped = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.basket / (self.COLUMNS - 1), self.fruit_x / (self.COLUMNS - 1),
                         self.fruit_y / self.HEIGHT], dtype=np.float32)

    def _drop(self) -> None:
        self.fruit_x = int(self.np_random.integers(self.COLUMNS))
        self.fruit_y = self.HEIGHT
        self.dropped += 1

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.basket = int(self.np_random.integers(self.COLUMNS))
        self.dropped = 0
        self._drop()
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.basket = min(max(self.basket + int(action) - 1, 0), self.COLUMNS - 1)
        self.fruit_y -= 1
        reward = 0.0
        terminated = False
        if self.fruit_y == 0:
            reward = 1.0 if self.basket == self.fruit_x else -1.0
            if self.dropped >= self.FRUITS:
                terminated = True
            else:
                self._drop()
        return self._obs(), reward, terminated, False, {}


class ShopShelf(gym.Env[np.ndarray, int]):
    CAPACITY, DAYS = 6, 28
    DEMAND = (1, 1, 2, 2, 3, 3, 0)

    def __init__(self) -> None:
        self.observation_space = spaces.MultiDiscrete([self.CAPACITY + 1, 7])
        self.action_space = spaces.Discrete(4)
        self.stock = self.day = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.stock, self.day % 7], dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.stock = int(self.np_random.integers(3))
        self.day = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.stock = min(self.stock + int(action), self.CAPACITY)
        demand = self.DEMAND[self.day % 7]
        sold = min(self.stock, demand)
        self.stock -= sold
        reward = sold - (demand - sold) - 0.2 * self.stock
        self.day += 1
        return self._obs(), float(reward), False, self.day >= self.DAYS, {}
