"""A user's own environment classes for the held-out set heldout87 (tests/fixtures/heldout87): written as a user
would write them for their own problem, with no preset, no RL Zoo entry and no earlier run. Pure Python/numpy,
fast, every episode ends inside the class.

- ``SwitchboardOperator``: a telephone operator's switchboard of 6 lines. Each step every silent line starts
  ringing with probability 0.15 and every ringing line that is not answered hangs up with probability 0.1
  (-0.5, a missed call). The observation is which lines ring (MultiBinary(6)); the action answers one line
  (Discrete(6)): a ringing line pays 2 for the two priority lines (0 and 1) and 1 for the others and goes
  silent; answering a silent line costs 0.25. 60 steps an episode (truncated). Answering a ringing priority line
  first, else any ringing line, scores about 58 (100 episodes); a uniform random choice about 17.5. The set
  trains it with reward_threshold 45.
- ``GlassBlower``: blowing a glass bubble to a target radius. The observation is (radius - target, radial
  speed, target, fraction of the episode left), Box(4); the action is the pressure in [-1, 1] (Box(1): blowing
  in or drawing air out). The radius follows a damped second-order response to the pressure; each step pays
  1 - 2 * |radius - target| (at least -1); the bubble bursts above radius 2.5 or collapses below 0.2 (episode
  terminated, -10). 50 steps an episode (truncated). Targets are drawn in [0.8, 1.8] from a start at 1.0.
  A proportional-derivative pressure scores about 47 over 100 episodes, no pressure at all about 13 and a uniform
  random pressure about 5. The set trains it with reward_threshold 44.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class SwitchboardOperator(gym.Env[np.ndarray, int]):
    LINES = 6
    PRIORITY = (0, 1)

    def __init__(self, ring_p: float = 0.15, hangup_p: float = 0.1, max_steps: int = 60):
        self.ring_p, self.hangup_p, self.max_steps = float(ring_p), float(hangup_p), int(max_steps)
        self.observation_space = spaces.MultiBinary(self.LINES)
        self.action_space = spaces.Discrete(self.LINES)
        self.ringing = np.zeros(self.LINES, dtype=np.int8)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return self.ringing.copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        self.ringing = (self.np_random.random(self.LINES) < 0.3).astype(np.int8)
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        line = int(action)
        reward = 0.0
        if self.ringing[line]:
            reward += 2.0 if line in self.PRIORITY else 1.0
            self.ringing[line] = 0
        else:
            reward -= 0.25
        rolls = self.np_random.random(self.LINES)
        hangups = (self.ringing == 1) & (rolls < self.hangup_p)
        reward -= 0.5 * float(hangups.sum())
        new = (self.ringing == 0) & (self.np_random.random(self.LINES) < self.ring_p)
        self.ringing[hangups] = 0
        self.ringing[new] = 1
        self.t += 1
        return self._obs(), reward, False, self.t >= self.max_steps, {}


class GlassBlower(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, max_steps: int = 50, dt: float = 0.1):
        self.max_steps, self.dt = int(max_steps), float(dt)
        high = np.array([3.0, 5.0, 2.0, 1.0], dtype=np.float32)
        self.observation_space = spaces.Box(-high, high, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.radius, self.speed, self.target, self.t = 1.0, 0.0, 1.0, 0

    def _obs(self) -> np.ndarray:
        left = 1.0 - self.t / self.max_steps
        return np.array([np.clip(self.radius - self.target, -3, 3), np.clip(self.speed, -5, 5), self.target, left],
                        dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.radius, self.speed, self.t = 1.0, 0.0, 0
        self.target = float(self.np_random.uniform(0.8, 1.8))
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        pressure = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        # glass pulls the bubble back toward its rest radius 1.0; viscosity damps the radial speed
        accel = 4.0 * pressure - 1.0 * (self.radius - 1.0) - 2.0 * self.speed
        self.speed += accel * self.dt
        self.radius += self.speed * self.dt
        self.t += 1
        if self.radius > 2.5 or self.radius < 0.2:
            return self._obs(), -10.0, True, False, {}
        reward = max(1.0 - 2.0 * abs(self.radius - self.target), -1.0)
        return self._obs(), reward, False, self.t >= self.max_steps, {}
