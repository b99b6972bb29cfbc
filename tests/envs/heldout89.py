"""A user's own environment classes for the held-out set tests/fixtures/heldout89 (off-policy: sac/td3 and
dqn/qrdqn). Written for this set as a user would write them for their own problem; pure Python/numpy, fast.

- ``PotteryWheel`` (continuous): centre a lump of clay on a spinning potter's wheel. The observation is the clay's
  off-centre offset (x, y) and the wheel's speed (radians per step, drawn per episode in [0.2, 0.5]); each step
  the offset turns with the wheel, wobbles outward by 4 % and is pushed by the potter's two hands (a Box action
  in [-1, 1]^2, scaled by 0.15). Reward is minus the distance from the centre each step; an episode lasts 50
  steps (truncated), or ends early (terminated, with -5) when the clay flies off (offset beyond 1.5). A potter
  who does nothing scores about -40 or worse; centring the clay quickly and holding it scores about -5.
- ``FerryLoader`` (discrete): load 40 cars of random weights onto a ferry's three lanes: port (0), centre (1) or
  starboard (2). The observation is the ferry's list (signed imbalance / limit), the next car's weight, the
  centre lane's fill and the fraction of cars loaded. Each car loaded pays 1 - 0.5 * |list| / limit; the centre
  lane holds only 6 cars (a car sent to a full centre lane is turned away: pays -0.5); an imbalance beyond the
  limit capsizes the ferry (terminated, -10). Loading the lighter side every time scores about 36-38; a random
  loader capsizes after about 20 cars.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class PotteryWheel(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, max_steps: int = 50, push: float = 0.15, growth: float = 1.04):
        self.max_steps, self.push, self.growth = int(max_steps), float(push), float(growth)
        self.observation_space = spaces.Box(np.array([-2.0, -2.0, 0.0], dtype=np.float32),
                                            np.array([2.0, 2.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.offset = np.zeros(2)
        self.speed = 0.3
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.offset[0], self.offset[1], self.speed], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        angle = self.np_random.uniform(0.0, 2 * np.pi)
        radius = self.np_random.uniform(0.4, 0.9)
        self.offset = radius * np.array([np.cos(angle), np.sin(angle)])
        self.speed = float(self.np_random.uniform(0.2, 0.5))
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        c, s = np.cos(self.speed), np.sin(self.speed)
        turned = np.array([c * self.offset[0] - s * self.offset[1], s * self.offset[0] + c * self.offset[1]])
        self.offset = self.growth * turned + self.push * a + self.np_random.normal(0.0, 0.01, size=2)
        self.t += 1
        dist = float(np.hypot(*self.offset))
        if dist > 1.5:
            return self._obs().clip(-2.0, 2.0), -5.0, True, False, {}
        return self._obs(), -dist, False, self.t >= self.max_steps, {}


class FerryLoader(gym.Env[np.ndarray, int]):
    def __init__(self, cars: int = 40, limit: float = 3.0, centre_capacity: int = 6):
        self.cars, self.limit, self.centre_capacity = int(cars), float(limit), int(centre_capacity)
        self.observation_space = spaces.Box(np.array([-1.5, 0.0, 0.0, 0.0], dtype=np.float32),
                                            np.array([1.5, 1.0, 1.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.imbalance = 0.0
        self.next_weight = 0.5
        self.centre = 0
        self.loaded = 0

    def _obs(self) -> np.ndarray:
        return np.array([np.clip(self.imbalance / self.limit, -1.5, 1.5), self.next_weight,
                         self.centre / self.centre_capacity, self.loaded / self.cars], dtype=np.float32)

    def _draw(self) -> float:
        return float(self.np_random.uniform(0.2, 1.0))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.imbalance, self.centre, self.loaded = 0.0, 0, 0
        self.next_weight = self._draw()
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        lane = int(action)
        self.loaded += 1
        if lane == 1:
            if self.centre >= self.centre_capacity:
                reward = -0.5
            else:
                self.centre += 1
                reward = 1.0 - 0.5 * abs(self.imbalance) / self.limit
        else:
            self.imbalance += self.next_weight * (-1.0 if lane == 0 else 1.0)
            reward = 1.0 - 0.5 * min(abs(self.imbalance) / self.limit, 1.0)
        self.next_weight = self._draw()
        if abs(self.imbalance) > self.limit:
            return self._obs(), -10.0, True, False, {}
        return self._obs(), reward, False, self.loaded >= self.cars, {}
