"""A user's own environment classes for the held-out set tests/fixtures/heldout71 (faults planted into ppo and a2c
runs of environments nobody wrote a preset, an RL Zoo entry or an earlier run for). Pure Python/numpy, no rendering,
each episode ends by itself.

- ``Elevator``: one elevator car in a building of ``floors`` floors; a passenger waits on one floor at a time (the
  call). DICT observations: {"car": Box(1) the car's floor scaled to [0, 1], "call": Discrete(floors) the floor
  called from}; three actions: 0 down, 1 up, 2 open the doors. Opening on the called floor serves the passenger
  (+1) and a new call comes from another floor drawn at random; opening anywhere else wastes the step (it costs
  ``wrong_open_cost``, 0 at the default: with 0.2, a2c at gsolve's defaults learned never to serve anyone).
  Truncated after ``max_steps`` steps (60). Serving every call by the shortest way scores about 20 at the defaults;
  a uniform random policy about 1.
- ``FruitCatch``: fruit falls one at a time down a column of ``height`` rows onto a ``width``-cell floor, where a
  basket moves. Box observations (basket column, fruit column, fruit row, each scaled to [0, 1]); three actions:
  0 left, 1 stay, 2 right. A fruit that reaches the bottom row pays +1 if it lands in the basket, -1 if not; the
  episode terminates after ``drops`` fruits (10 drops of ``height - 1`` steps: 70 steps at the defaults). The best
  policy catches every fruit (10); a uniform random one about -6 (at most 2 in 300 episodes).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Elevator(gym.Env):
    def __init__(self, floors: int = 5, max_steps: int = 60, wrong_open_cost: float = 0.0):
        self.floors, self.max_steps, self.wrong_open_cost = int(floors), int(max_steps), float(wrong_open_cost)
        self.observation_space = spaces.Dict({
            "car": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
            "call": spaces.Discrete(self.floors),
        })
        self.action_space = spaces.Discrete(3)
        self.car = self.call = self.t = 0

    def _obs(self) -> dict[str, Any]:
        return {"car": np.array([self.car / (self.floors - 1)], dtype=np.float32), "call": int(self.call)}

    def _new_call(self) -> int:
        other = int(self.np_random.integers(self.floors - 1))
        return other if other < self.car else other + 1  # any floor but the car's

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.t = 0
        self.car = int(self.np_random.integers(self.floors))
        self.call = self._new_call()
        return self._obs(), {}

    def step(self, action: int):
        action = int(action)
        reward = 0.0
        if action == 0:
            self.car = max(self.car - 1, 0)
        elif action == 1:
            self.car = min(self.car + 1, self.floors - 1)
        elif self.car == self.call:
            reward = 1.0
            self.call = self._new_call()
        else:
            reward = -self.wrong_open_cost
        self.t += 1
        return self._obs(), reward, False, self.t >= self.max_steps, {}


class FruitCatch(gym.Env):
    def __init__(self, width: int = 5, height: int = 8, drops: int = 10):
        self.width, self.height, self.drops = int(width), int(height), int(drops)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.basket = self.fruit_x = self.fruit_y = self.dropped = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.basket / (self.width - 1), self.fruit_x / (self.width - 1),
                         self.fruit_y / (self.height - 1)], dtype=np.float32)

    def _drop(self) -> None:
        self.fruit_x, self.fruit_y = int(self.np_random.integers(self.width)), 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.basket, self.dropped = int(self.np_random.integers(self.width)), 0
        self._drop()
        return self._obs(), {}

    def step(self, action: int):
        self.basket = min(max(self.basket + int(action) - 1, 0), self.width - 1)
        self.fruit_y += 1
        reward, terminated = 0.0, False
        if self.fruit_y >= self.height - 1:
            reward = 1.0 if self.basket == self.fruit_x else -1.0
            self.dropped += 1
            terminated = self.dropped >= self.drops
            if not terminated:
                self._drop()
        return self._obs(), reward, terminated, False, {}
