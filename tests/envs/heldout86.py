"""Two small environment classes of a user's own, for the held-out set tests/fixtures/heldout86 (off-policy
algorithms on a user's own classes, each trained with a user's own tuned config). Pure Python/numpy, fast.

- ``LaserEngraver`` (continuous): a laser head over a square plate must stay on a pattern point that traces a
  Lissajous figure across the plate. Observation (Box, 4): the offset from head to point (x, y) and the point's
  velocity (x, y), scaled to about [-1, 1]. Action (Box, 2, in [-1, 1]): the head's velocity, up to 0.1 plate
  units a step in each axis. Reward each step: minus the head-to-point distance (plate units). An episode is
  60 steps (truncated). Head starts at the plate's centre, the point somewhere on its figure: a head that
  follows the point scores about -1.1, one that stays put about -34.5, a random one about -41.
- ``PitStrategist`` (discrete): a race of 40 laps where the driver chooses each lap to cruise, push or pit.
  Pushing is faster but wears the tyres two and a half times as fast; worn tyres are slower; pitting costs a lap's
  worth of time but puts on fresh tyres; tyres worn through burst and end the race. Observation (Box, 2): tyre
  wear (0 fresh, 1 burst) and the fraction of the race left. Actions (Discrete, 3): 0 cruise, 1 push, 2 pit.
  Reward: the lap's distance (1.0 or 1.4 times the tyres' grip 1 - wear), -0.5 for a pit lap, -5 for a burst.
  Pushing until the wear reaches 0.25-0.5, then pitting, scores about 33-35, cruising to a burst about 5.4, a
  random driver about 20.5, pitting every lap -20.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class LaserEngraver(gym.Env):
    SPEED = 0.1
    HORIZON = 60

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.5, 1.5, shape=(4,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.head = np.zeros(2)
        self.phase = 0.0
        self.t = 0

    def _point(self, t: int) -> np.ndarray:
        s = 0.05 * t + self.phase
        return np.array([0.6 * np.sin(s), 0.6 * np.sin(2.0 * s + 0.5 * self.phase)])

    def _obs(self) -> np.ndarray:
        p = self._point(self.t)
        v = self._point(self.t + 1) - p
        return np.concatenate([p - self.head, v / 0.06]).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.head = np.zeros(2)
        self.phase = float(self.np_random.uniform(0.0, 2.0 * np.pi))
        self.t = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        self.head = np.clip(self.head + self.SPEED * a, -1.0, 1.0)
        self.t += 1
        reward = -float(np.linalg.norm(self._point(self.t) - self.head))
        return self._obs(), reward, False, self.t >= self.HORIZON, {}


class PitStrategist(gym.Env):
    LAPS = 40
    WEAR = (0.04, 0.1)  # per lap: cruise, push
    PACE = (1.0, 1.4)

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.wear = 0.0
        self.lap = 0

    def _obs(self) -> np.ndarray:
        return np.array([min(self.wear, 1.0), 1.0 - self.lap / self.LAPS], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.wear = float(self.np_random.uniform(0.0, 0.2))
        self.lap = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = int(action)
        self.lap += 1
        terminated = False
        if a == 2:
            reward = -0.5
            self.wear = 0.0
        else:
            reward = self.PACE[a] * (1.0 - self.wear)
            self.wear += self.WEAR[a]
            if self.wear >= 1.0 - 1e-9:
                reward, terminated = -5.0, True
        truncated = not terminated and self.lap >= self.LAPS
        return self._obs(), float(reward), terminated, truncated, {}
