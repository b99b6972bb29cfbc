"""Two small environment classes of a user's own problems, written for the held-out set heldout69
(tests/fixtures/heldout69): the case where no preset, no RL Zoo entry and no earlier run exists. Pure Python and
numpy, fast, every episode ends inside the class.

- ``Thermostat``: keep a room's temperature near its setpoint. Box observation of two floats: the room's
  deviation from the setpoint (degrees, clipped to +-2) and the outside temperature's deviation / 10 (drawn per
  episode from [-8, -2]: the room always loses heat, faster on colder days). Three actions: 0 heater and cooler
  off, 1 heater on (+0.5 degrees a step), 2 cooler on (-0.5). Each step the room drifts by 0.05 * (outside -
  room) plus Gaussian noise (sd 0.05). Every step with the room within +-1 degree of the setpoint pays 1; the
  episode terminates when the room leaves that band and truncates after ``max_steps`` (200) steps. The best
  attainable return is 200 on every episode (e.g. heater on whenever the room is below the setpoint, off
  otherwise, keeps it within about +-0.6 degrees); a uniform random policy leaves the band within a few steps
  (mean return about 4). Threshold used in the set: 180.
- ``Courier``: carry a parcel across a small warehouse grid (``width`` x ``height``, 4 x 4 by default).
  Discrete observation: the courier's cell (row * width + column) plus width * height while it carries the
  parcel (32 states). Five actions: 0 up, 1 down, 2 left, 3 right (walls hold the courier in place), 4 pick up
  / hand over (picks the parcel up on the pickup cell, hands it over on the drop cell while carrying, else
  nothing). The courier starts at cell (0, 0), the parcel waits at (row 1, column 3) and goes to (row 3, column
  0). Every step costs 0.04; the hand-over pays 1 and terminates; ``max_steps`` (100) truncates. Deterministic:
  the fastest delivery takes 11 steps (4 moves, pick up, 5 moves, hand over), so the best attainable return is
  1 - 11 * 0.04 = 0.56 on every episode; a uniform random policy mostly truncates (about -3.7 on average).
  Threshold used in the set: 0.4 (a delivery within 15 steps).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Thermostat(gym.Env[np.ndarray, int]):
    def __init__(self, max_steps: int = 200, band: float = 1.0, power: float = 0.5, leak: float = 0.05,
                 noise: float = 0.05):
        self.max_steps, self.band, self.power, self.leak, self.noise = int(max_steps), band, power, leak, noise
        self.observation_space = spaces.Box(low=np.array([-2.0, -1.0], dtype=np.float32),
                                            high=np.array([2.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.room = self.outside = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([np.clip(self.room, -2.0, 2.0), self.outside / 10.0], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.room = float(self.np_random.uniform(-0.5, 0.5))
        self.outside = float(self.np_random.uniform(-8.0, -2.0))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        heat = (0.0, self.power, -self.power)[int(action)]
        self.room += self.leak * (self.outside - self.room) + heat + float(self.np_random.normal(0.0, self.noise))
        self.t += 1
        inside = abs(self.room) < self.band
        return self._obs(), 1.0 if inside else 0.0, not inside, inside and self.t >= self.max_steps, {}


class Courier(gym.Env[int, int]):
    def __init__(self, width: int = 4, height: int = 4, max_steps: int = 100, step_cost: float = 0.04):
        self.width, self.height, self.max_steps, self.step_cost = int(width), int(height), int(max_steps), step_cost
        self.pickup = (1, self.width - 1)
        self.drop = (self.height - 1, 0)
        self.observation_space = spaces.Discrete(2 * self.width * self.height)
        self.action_space = spaces.Discrete(5)
        self.pos = (0, 0)
        self.carrying = False
        self.t = 0

    def _obs(self) -> int:
        return self.pos[0] * self.width + self.pos[1] + (self.width * self.height if self.carrying else 0)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        self.pos, self.carrying, self.t = (0, 0), False, 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        a = int(action)
        self.t += 1
        reward, delivered = -self.step_cost, False
        if a < 4:
            dr, dc = ((-1, 0), (1, 0), (0, -1), (0, 1))[a]
            self.pos = (min(max(self.pos[0] + dr, 0), self.height - 1), min(max(self.pos[1] + dc, 0), self.width - 1))
        elif not self.carrying and self.pos == self.pickup:
            self.carrying = True
        elif self.carrying and self.pos == self.drop:
            delivered = True
            reward += 1.0
        return self._obs(), reward, delivered, not delivered and self.t >= self.max_steps, {}
