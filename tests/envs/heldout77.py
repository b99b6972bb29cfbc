"""A user's own environment classes for the seventy-seventh held-out set (tests/fixtures/heldout77): two small
problems a user might write for themselves, with no preset, no RL Zoo entry and no earlier run. Pure Python/numpy,
thousands of steps per second, every episode ending inside the class.

- ``SafeCracker``: a dial of ``positions`` numbers and a fixed three-number combination (3, 6, 1 at the
  defaults). Observation MultiDiscrete([positions, 3]): the number under the pointer and how many numbers of the
  combination are already entered. Actions: 0 turn the dial one step left, 1 one step right, 2 try the number
  under the pointer. A right try pays 1/3 and moves on to the next number (the third opens the safe and ends the
  episode); a wrong try changes nothing. Every step costs 0.01. The dial starts at a random number;
  ``max_steps`` (40) truncates. The best policy opens the safe in about 11 steps (a return of about 0.89); a
  uniform random policy averages about -0.1.
- ``PuttingGreen``: a golf ball ``distance`` metres short of the hole (2-9 m at random). Observation Box(2,): the
  signed distance to the hole over 10 m (negative once the ball has rolled past it) and the strokes used over
  ``max_strokes``. Actions: four clubs that roll the ball about 0.5, 1, 2 or 4 m toward the hole (a few per cent
  of noise); the ball drops when it stops within 0.3 m of the hole, paying 1.0 and ending the episode. Every stroke
  costs 0.05; ``max_strokes`` (10) truncates. A good policy sinks it in 2-4 strokes (a return of about 0.85).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class SafeCracker(gym.Env[np.ndarray, int]):
    def __init__(self, positions: int = 8, combination: tuple[int, ...] = (3, 6, 1), max_steps: int = 40):
        self.positions, self.combination, self.max_steps = int(positions), tuple(combination), int(max_steps)
        self.observation_space = spaces.MultiDiscrete([self.positions, len(self.combination)])
        self.action_space = spaces.Discrete(3)
        self.dial = self.stage = self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.dial, self.stage], dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.dial, self.stage, self.t = int(self.np_random.integers(self.positions)), 0, 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        reward, terminated = -0.01, False  # every turn or try takes a moment
        a = int(action)
        if a == 0:
            self.dial = (self.dial - 1) % self.positions
        elif a == 1:
            self.dial = (self.dial + 1) % self.positions
        elif self.dial == self.combination[self.stage]:  # a right try (a wrong one changes nothing)
            reward += 1.0 / len(self.combination)
            self.stage += 1
            if self.stage == len(self.combination):
                terminated, self.stage = True, len(self.combination) - 1  # opened (obs keeps the last stage)
        truncated = self.t >= self.max_steps and not terminated
        return self._obs(), reward, terminated, truncated, {}


class PuttingGreen(gym.Env[np.ndarray, int]):
    CLUBS = (0.5, 1.0, 2.0, 4.0)

    def __init__(self, max_strokes: int = 10, cup: float = 0.3, noise: float = 0.04):
        self.max_strokes, self.cup, self.noise = int(max_strokes), float(cup), float(noise)
        self.observation_space = spaces.Box(low=np.array([-1.0, 0.0], dtype=np.float32),
                                            high=np.array([1.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(len(self.CLUBS))
        self.d = 0.0
        self.strokes = 0

    def _obs(self) -> np.ndarray:
        return np.array([np.clip(self.d / 10.0, -1.0, 1.0), self.strokes / self.max_strokes], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.d, self.strokes = float(self.np_random.uniform(2.0, 9.0)), 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.strokes += 1
        roll = self.CLUBS[int(action)] * (1.0 + self.noise * float(self.np_random.standard_normal()))
        self.d = self.d - roll if self.d > 0 else self.d + roll  # always toward the hole
        self.d = float(np.clip(self.d, -10.0, 10.0))
        sunk = abs(self.d) <= self.cup
        reward = (1.0 if sunk else 0.0) - 0.05
        truncated = self.strokes >= self.max_strokes and not sunk
        return self._obs(), reward, sunk, truncated, {}
