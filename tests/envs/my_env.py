"""A user's own environment classes, written for the test suite (issue 22: "a custom environment class
defined in a user's module trains, diagnoses and fixes end to end"). Tiny and fast: no rendering, pure Python.

- ``Corridor``: walk right along ``length`` cells; Discrete observations (the cell: one-hot encoded by
  gsolve), two actions. Reaching the end pays ``1 - 0.9 * steps / max_steps`` (MiniGrid's shape), so
  the fastest walk (length - 1 steps) is the best return; nothing else pays. A uniform random policy
  rarely scores above 0.5, the optimal one 0.85 at the defaults.
- ``CoinFlip``: one step per episode that pays 1 on heads, whatever the action: every policy averages 0.5, and a
  few-episode evaluation can still return 1.0 (a solve on luck, which confirm_episodes checks).
- ``Chatty``: observations are text (a Gymnasium Text space), which no gsolve algorithm takes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium import spaces


class Corridor(gym.Env[int, int]):
    def __init__(self, length: int = 6, max_steps: int = 30):
        self.length, self.max_steps = int(length), int(max_steps)
        self.observation_space = spaces.Discrete(self.length)
        self.action_space = spaces.Discrete(2)
        self.pos = self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.pos = self.t = 0
        return self.pos, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.pos = min(max(self.pos + (1 if int(action) == 1 else -1), 0), self.length - 1)
        self.t += 1
        terminated = self.pos == self.length - 1
        reward = 1.0 - 0.9 * self.t / self.max_steps if terminated else 0.0
        return self.pos, reward, terminated, self.t >= self.max_steps and not terminated, {}


class CoinFlip(gym.Env[int, int]):
    observation_space = spaces.Discrete(1)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        return 0, float(self.np_random.random() < 0.5), True, False, {}


class Chatty(gym.Env[str, int]):
    observation_space = spaces.Text(max_length=8)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        return "hello", {}

    def step(self, action: int) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return "hello", 0.0, True, False, {}
