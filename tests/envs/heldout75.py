"""A user's own environment classes for the held-out set tests/fixtures/heldout75 (written for that set; see its
cases.yaml). Pure Python/numpy, no rendering, every episode ends by itself.

- ``Angler``: reel in a hooked fish without snapping the line. Box observation [line left / 20, the fish's pull
  now (0..1), the pull one step before]; three actions: 0 let line out (line +1, reward -0.1), 1 hold, 2 reel in
  (line -1, reward +0.1). Reeling while the pull is above 0.5 snaps the line (reward -1, the episode ends);
  bringing the line to 0 lands the fish (reward +1, ends). 200 steps at most (truncated). The pull wanders
  (mean-reverting noise, with surges). Landing without a slip returns 3.0; a uniform random policy mostly snaps
  the line (about -1).
- ``RecyclingSorter``: a conveyor brings 60 items one by one; Dict observation {"item": Discrete(4), the item's
  material, "fill": MultiDiscrete([6]*4), how full each bin is}; five actions: 0-3 drop the item into that bin
  (+1 if it is the material's bin and the bin has room, else -1; the item is used up either way), 4 call the
  truck, which empties all four bins (-0.2; the item waits). 150 steps at most (truncated). Sorting every item
  right and calling the truck only when the item's bin is full returns about 59; random play about -32.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Angler(gym.Env):
    LINE = 20

    def __init__(self, max_steps: int = 200):
        self.max_steps = int(max_steps)
        self.observation_space = spaces.Box(low=0.0, high=1.5, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.line = self.LINE
        self.pull = self.prev = 0.4
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.line / self.LINE, self.pull, self.prev], dtype=np.float32)

    def _next_pull(self) -> float:
        surge = 0.5 if self.np_random.random() < 0.1 else 0.0
        p = self.pull + 0.3 * (0.45 - self.pull) + self.np_random.normal(0.0, 0.15) + surge
        return float(np.clip(p, 0.0, 1.0))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.line, self.t = self.LINE, 0
        self.pull = self.prev = float(self.np_random.uniform(0.2, 0.7))
        return self._obs(), {}

    def step(self, action: int):
        a = int(action)
        self.t += 1
        reward, terminated = 0.0, False
        if a == 2:
            if self.pull > 0.5:
                reward, terminated = -1.0, True
            else:
                self.line -= 1
                reward = 0.1
                if self.line <= 0:
                    reward, terminated = reward + 1.0, True
        elif a == 0:
            self.line = min(self.line + 1, 2 * self.LINE)
            reward = -0.1
        self.prev, self.pull = self.pull, self._next_pull()
        truncated = self.t >= self.max_steps and not terminated
        obs = self._obs()
        obs[0] = min(obs[0], 1.5)
        return obs, reward, terminated, truncated, {}


class RecyclingSorter(gym.Env):
    BINS, CAPACITY, ITEMS = 4, 5, 60

    def __init__(self, max_steps: int = 150):
        self.max_steps = int(max_steps)
        self.observation_space = spaces.Dict({
            "item": spaces.Discrete(self.BINS),
            "fill": spaces.MultiDiscrete([self.CAPACITY + 1] * self.BINS),
        })
        self.action_space = spaces.Discrete(self.BINS + 1)
        self.fill = np.zeros(self.BINS, dtype=np.int64)
        self.item = 0
        self.left = self.ITEMS
        self.t = 0

    def _obs(self) -> dict[str, Any]:
        return {"item": int(self.item), "fill": self.fill.copy()}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.fill[:] = 0
        self.left, self.t = self.ITEMS, 0
        self.item = int(self.np_random.integers(self.BINS))
        return self._obs(), {}

    def step(self, action: int):
        a = int(action)
        self.t += 1
        if a == self.BINS:
            self.fill[:] = 0
            reward = -0.2
        else:
            if a == self.item and self.fill[a] < self.CAPACITY:
                reward = 1.0
                self.fill[a] += 1
            else:
                reward = -1.0
            self.left -= 1
            self.item = int(self.np_random.integers(self.BINS))
        terminated = self.left <= 0
        truncated = self.t >= self.max_steps and not terminated
        return self._obs(), reward, terminated, truncated, {}
