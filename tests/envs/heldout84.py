"""A user's own environment classes for the held-out set heldout84 (tests/fixtures/heldout84): two small problems
of a kind not in gsolve's presets, the RL Zoo or earlier sets, written as a user would for their own problem.
Pure Python/numpy, no rendering, thousands of steps per second, every episode ends by itself.

- ``TrailHiker``: a hiker climbs a trail of ``length`` cells to the summit with a stamina budget. Observation
  MultiDiscrete([length, max_stamina + 1]): (cell, stamina); an episode starts at cell 0 with 1 to
  ``max_stamina`` stamina (random). Actions (Discrete(3)): 0 rest (+2 stamina, capped),
  1 walk (one cell up; costs 1 stamina, 2 on the steep cells 4-6), 2 scramble (two cells up; costs 3, 4 on the
  steep cells). Trying a move without the stamina for it exhausts the hiker: the episode ends with -1. Each cell
  gained pays 0.1, each step costs 0.01, the summit pays 1 and ends the episode; truncated after ``max_steps``.
  Reaching the summit without exhaustion returns about 1.7; a uniform random policy averages well below 0.
- ``SheepHerder``: a dog pushes one sheep along a 1-D pasture [0, 1] into the pen at the right end (x >= 0.95).
  Observation Box(3): (dog x, sheep x, dog x - sheep x). Actions (Discrete(3)): dog left, stay, right (0.08 a step).
  A sheep within 0.15 of the dog flees away from it (0.04 a step), otherwise it grazes with a small random drift.
  Reward: the sheep's progress towards the pen (x gained), -0.005 a step, +1 when penned (ends the episode);
  truncated after ``max_steps``. A good dog returns about 1.2-1.5; a random one about -0.4.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class TrailHiker(gym.Env):
    STEEP = (4, 5, 6)

    def __init__(self, length: int = 10, max_stamina: int = 4, max_steps: int = 40):
        self.length, self.max_stamina, self.max_steps = int(length), int(max_stamina), int(max_steps)
        self.observation_space = spaces.MultiDiscrete([self.length, self.max_stamina + 1])
        self.action_space = spaces.Discrete(3)
        self.pos = self.t = 0
        self.stamina = self.max_stamina

    def _obs(self) -> np.ndarray:
        return np.array([self.pos, self.stamina], dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.pos, self.t = 0, 0
        self.stamina = int(self.np_random.integers(1, self.max_stamina + 1))
        return self._obs(), {}

    def step(self, action: int):
        action = int(action)
        self.t += 1
        reward = -0.01
        if action == 0:
            self.stamina = min(self.stamina + 2, self.max_stamina)
        else:
            steep = self.pos in self.STEEP
            cost = (1 if action == 1 else 3) + (1 if steep else 0)
            if self.stamina < cost:
                return self._obs(), reward - 1.0, True, False, {"exhausted": True}
            self.stamina -= cost
            gain = min(1 if action == 1 else 2, self.length - 1 - self.pos)
            self.pos += gain
            reward += 0.1 * gain
        terminated = self.pos == self.length - 1
        if terminated:
            reward += 1.0
        return self._obs(), reward, terminated, self.t >= self.max_steps and not terminated, {}


class SheepHerder(gym.Env):
    PEN, SPEED, FLEE, RADIUS = 0.95, 0.08, 0.04, 0.15

    def __init__(self, max_steps: int = 150):
        self.max_steps = int(max_steps)
        self.observation_space = spaces.Box(low=np.array([0.0, 0.0, -1.0], dtype=np.float32),
                                            high=np.array([1.0, 1.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.dog = self.sheep = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.dog, self.sheep, self.dog - self.sheep], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.dog = float(self.np_random.uniform(0.0, 1.0))
        self.sheep = float(self.np_random.uniform(0.2, 0.7))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int):
        self.t += 1
        self.dog = float(np.clip(self.dog + (int(action) - 1) * self.SPEED, 0.0, 1.0))
        before = self.sheep
        gap = self.sheep - self.dog
        if abs(gap) < self.RADIUS:
            move = self.FLEE * (1.0 if gap >= 0 else -1.0)
        else:
            move = float(self.np_random.uniform(-0.01, 0.01))
        self.sheep = float(np.clip(self.sheep + move, 0.0, 1.0))
        reward = (self.sheep - before) - 0.005
        terminated = self.sheep >= self.PEN
        if terminated:
            reward += 1.0
        return self._obs(), reward, terminated, self.t >= self.max_steps and not terminated, {}
