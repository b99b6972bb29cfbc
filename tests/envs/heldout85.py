"""A user's own environment classes for held-out set heldout85 (tests/fixtures/heldout85). Pure Python/numpy, fast.

- ``ToadCrossing``: a toad crosses a road of ``LANES`` (6) lanes from the verge (row 0) to the pond (row 7). Each step
  every lane independently has a car at the toad's crossing point with probability ``car_prob`` (0.15), and the toad
  sees, before it moves, which lanes will have a car there after its move. Actions: 0 wait, 1 hop forward, 2 hop
  back. Landing or staying in a lane with a car bumps the toad back to the verge (-0.5); each row reached for the
  first time pays 0.1 and the pond pays 1 more (episode over), so a clean crossing returns 1.7. At most
  ``max_steps`` (60) steps, then truncated. Dict observation: ``row`` (Discrete(8)) and ``lanes`` (MultiBinary(6),
  the cars of lanes 1-6).
- ``GearShifter``: a cyclist rides a ``route_steps`` (100) step route whose speed (km/h) drifts with the terrain
  between 13 and 42; the rider picks one of 7 gears (0 shift down, 1 keep, 2 shift up). Cadence (rpm) = speed * 1000
  / 60 / metres per pedal turn of the gear (3.0 + 1.2 * gear); each step with cadence in 70-100 rpm pays 1. Box
  observation: speed / 45, gear / 6, cadence / 150 (capped at 1). Keeping the cadence in the band all the way
  returns close to 100; truncated at the route's end.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class ToadCrossing(gym.Env):
    LANES = 6

    def __init__(self, car_prob: float = 0.15, max_steps: int = 60):
        self.car_prob, self.max_steps = float(car_prob), int(max_steps)
        self.observation_space = spaces.Dict({
            "row": spaces.Discrete(self.LANES + 2),
            "lanes": spaces.MultiBinary(self.LANES),
        })
        self.action_space = spaces.Discrete(3)
        self.row = self.best = self.t = 0
        self.cars = np.zeros(self.LANES + 2, dtype=np.int8)  # index = row; the verge and the pond never have a car

    def _draw(self) -> None:
        self.cars[1:-1] = self.np_random.random(self.LANES) < self.car_prob

    def _obs(self) -> dict[str, Any]:
        return {"row": int(self.row), "lanes": self.cars[1:-1].copy()}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.row = self.best = self.t = 0
        self._draw()
        return self._obs(), {}

    def step(self, action: int):
        a = int(action)
        self.t += 1
        if a == 1:
            self.row = min(self.row + 1, self.LANES + 1)
        elif a == 2:
            self.row = max(self.row - 1, 0)
        reward, terminated = 0.0, False
        if self.cars[self.row]:
            reward, self.row = -0.5, 0  # bumped by a car: back to the verge
        else:
            if self.row > self.best:
                reward += 0.1 * (self.row - self.best)
                self.best = self.row
            if self.row == self.LANES + 1:
                reward += 1.0
                terminated = True
        self._draw()
        truncated = not terminated and self.t >= self.max_steps
        return self._obs(), reward, terminated, truncated, {}


class GearShifter(gym.Env):
    GEARS = 7

    def __init__(self, route_steps: int = 100):
        self.route_steps = int(route_steps)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.speed, self.gear, self.t, self.drift = 20.0, 3, 0, 0.0

    def _cadence(self) -> float:
        return self.speed * 1000.0 / 60.0 / (3.0 + 1.2 * self.gear)

    def _obs(self) -> np.ndarray:
        return np.array([self.speed / 45.0, self.gear / (self.GEARS - 1), min(self._cadence() / 150.0, 1.0)],
                        dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.speed = float(self.np_random.uniform(13.0, 42.0))
        self.gear = int(self.np_random.integers(self.GEARS))
        self.t, self.drift = 0, 0.0
        return self._obs(), {}

    def step(self, action: int):
        self.gear = int(np.clip(self.gear + int(action) - 1, 0, self.GEARS - 1))
        self.t += 1
        reward = 1.0 if 70.0 <= self._cadence() <= 100.0 else 0.0
        self.drift = 0.8 * self.drift + float(self.np_random.normal(0.0, 1.2))  # the terrain: climbs and descents
        self.speed = float(np.clip(self.speed + self.drift, 13.0, 42.0))
        truncated = self.t >= self.route_steps
        return self._obs(), reward, False, truncated, {}
