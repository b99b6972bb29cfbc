"""A user's own environment classes for held-out set 76 (tests/fixtures/heldout76): written as a user would for
their own problem, pure Python/numpy, fast, each episode ending by itself.

- ``Telescope``: point a telescope at a star. The observation is the star's offset from the aim (dx, dy) and the
  star's drift per step (vx, vy), each scaled to about [-1, 1]; the action is the mount's slew rate on both axes in
  [-1, 1] (at most 0.1 of the field per step). Every step pays minus the pointing error (the distance from aim to
  star, at most about 1.4) and a small slew cost (0.01 * |action|^2). An episode is 60 steps (truncated). A policy
  that slews straight at the star and then follows its drift returns about -2; random slewing about -55.
- ``Junction``: a traffic light at a crossing of two roads. Cars arrive at random (north-south 0.30 and east-west
  0.25 per step on average) and queue up to 20 per road; while a road has green, one car of its queue passes per
  step. The observation is both queue lengths (scaled by 20) and which road has green; action 0 keeps the light,
  1 switches it, which costs one all-red step (nobody passes). Every step pays minus the number of waiting cars
  divided by 20. An episode is 150 steps (truncated). Switching at random wastes about half the steps and lets the
  queues fill up (return about -87; never switching about -122); serving a road until it empties keeps both short
  (about -11).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Telescope(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, max_steps: int = 60, slew: float = 0.1, drift: float = 0.01):
        self.max_steps, self.slew, self.drift = int(max_steps), float(slew), float(drift)
        self.observation_space = spaces.Box(-2.0, 2.0, shape=(4,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.offset = np.zeros(2)
        self.vel = np.zeros(2)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.offset, self.vel / self.drift]).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.offset = self.np_random.uniform(-1.0, 1.0, size=2)
        self.vel = self.np_random.uniform(-self.drift, self.drift, size=2)
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        self.offset = np.clip(self.offset + self.vel - self.slew * a, -2.0, 2.0)
        self.t += 1
        reward = -float(np.linalg.norm(self.offset)) - 0.01 * float(a @ a)
        return self._obs(), reward, False, self.t >= self.max_steps, {}


class Junction(gym.Env[np.ndarray, int]):
    def __init__(self, max_steps: int = 150, rates: tuple[float, float] = (0.30, 0.25), capacity: int = 20):
        self.max_steps, self.capacity = int(max_steps), int(capacity)
        self.rates = tuple(float(r) for r in rates)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.queues = [0, 0]
        self.green = 0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.queues[0] / self.capacity, self.queues[1] / self.capacity, float(self.green)],
                        dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.queues = [int(self.np_random.integers(0, 5)), int(self.np_random.integers(0, 5))]
        self.green = int(self.np_random.integers(0, 2))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if int(action) == 1:
            self.green = 1 - self.green  # an all-red step: nobody passes
        elif self.queues[self.green] > 0:
            self.queues[self.green] -= 1
        for road in (0, 1):
            if self.np_random.random() < self.rates[road]:
                self.queues[road] = min(self.queues[road] + 1, self.capacity)
        self.t += 1
        reward = -(self.queues[0] + self.queues[1]) / self.capacity
        return self._obs(), reward, False, self.t >= self.max_steps, {}
