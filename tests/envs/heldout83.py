"""A user's own environment classes for the eighty-third held-out set (tests/fixtures/heldout83): the case where no
preset, no RL Zoo entry and no earlier run exists. Pure Python/numpy, thousands of steps per second, every
episode ending inside the class.

- ``GantryHoist``: a gantry crane's hook hangs over a yard; each step the operator drives the trolley and the
  bridge (a Box action of two velocities in [-1, 1], each moving the hook at most 0.1 of the yard per step) to
  bring it over the container's corner fitting, somewhere else in the yard each episode. Observation: the hook's
  position, the fitting's position and their difference (Box of 6). Each step costs the hook's distance to the
  fitting; the episode ends (terminates) once the hook is within 0.05 of it, or is truncated after 60 steps. A
  straight drive costs about -5.4 on average (worst start about -18); standing still or driving at random about -64.
- ``Sheepdog``: a dog (the agent) herds one sheep along a 1-D paddock of length 10 into the pen at the right end
  (sheep position >= 9). Three actions: run left, wait, run right (one unit a step). The sheep trots 0.6 units away
  from the dog when the dog is within 2 units of it (so a dog that runs at it passes it), otherwise it grazes
  (drifts at random by up to 0.2).
  Observation: the sheep's and the dog's position (divided by 10) and their difference (Box of 3). Each step pays
  0.1 x the sheep's progress toward the pen, penning it pays 1 and ends the episode; truncated after 60 steps. The
  dog must first get to the sheep's left, then drive it right without overtaking it: a good herding pens every
  sheep in about 15 steps and scores about 1.4-1.7 (mean 1.57), a random dog about 0.23, always running right 0.0.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class GantryHoist(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, speed: float = 0.1, reach: float = 0.05, max_steps: int = 60):
        self.speed, self.reach, self.max_steps = float(speed), float(reach), int(max_steps)
        self.observation_space = spaces.Box(-2.0, 2.0, shape=(6,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.hook = np.zeros(2)
        self.fitting = np.zeros(2)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.hook, self.fitting, self.fitting - self.hook]).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.hook = self.np_random.uniform(-1.0, 1.0, size=2)
        self.fitting = self.np_random.uniform(-1.0, 1.0, size=2)
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        move = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0) * self.speed
        self.hook = np.clip(self.hook + move, -1.0, 1.0)
        self.t += 1
        dist = float(np.linalg.norm(self.fitting - self.hook))
        terminated = dist < self.reach
        truncated = self.t >= self.max_steps and not terminated
        return self._obs(), -dist, terminated, truncated, {}


class Sheepdog(gym.Env[np.ndarray, int]):
    def __init__(self, length: float = 10.0, pen: float = 9.0, max_steps: int = 60):
        self.length, self.pen, self.max_steps = float(length), float(pen), int(max_steps)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.sheep = self.dog = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.sheep, self.dog, self.sheep - self.dog], dtype=np.float32) / self.length

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.sheep = float(self.np_random.uniform(2.0, 5.0))
        self.dog = float(self.np_random.uniform(0.0, self.length))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        before = self.sheep
        self.dog = min(max(self.dog + (int(action) - 1), 0.0), self.length)
        gap = self.sheep - self.dog
        if abs(gap) < 2.0:
            away = 1.0 if gap > 0 else -1.0 if gap < 0 else float(self.np_random.choice([-1.0, 1.0]))
            self.sheep += 0.6 * away
        else:
            self.sheep += float(self.np_random.uniform(-0.2, 0.2))
        self.sheep = min(max(self.sheep, 0.0), self.length)
        self.t += 1
        terminated = self.sheep >= self.pen
        reward = 0.1 * (self.sheep - before) + (1.0 if terminated else 0.0)
        truncated = self.t >= self.max_steps and not terminated
        return self._obs(), reward, terminated, truncated, {}
