"""Two small environment classes of a user's own problem, for the seventieth held-out set (tests/fixtures/heldout70).

Written for that set by the helper that made it (not a copy of a Gymnasium environment nor of tests/envs/my_env.py);
pure Python/numpy, thousands of steps per second, every episode ends inside the class.

- ``LaneKeep`` (CONTINUOUS action): a vehicle's lateral offset ``x`` in [-1, 1] must reach and hold a target lane
  offset drawn at reset (both uniform in [-1, 1]). The action is a steering value in [-1, 1] that moves ``x`` by
  ``0.1 * action`` per step (clipped to the road). Observation: ``[x, target]`` (float32). Each step pays
  ``1 - |x - target|`` (measured after the move); an episode lasts exactly 50 steps (truncated). Best attainable
  mean return: 46.98 (steering full towards the target, then exactly onto it; the per-step reward only depends on
  the distance, so closing it as fast as possible is optimal; measured over 20,000 episodes, per-episode standard
  deviation 3.7, least 31.3). Holding the wheel still (action 0) averages 16.6 (sd 23.6), a uniform random policy
  16.2 (sd 22.7). Reward threshold used by heldout70: 40 (a mean over 10 evaluation episodes).
- ``ShuttleDock`` (DISCRETE actions): a shuttle on a straight rail starts at rest at ``x`` uniform in [-1, 1] and
  must come to rest at its station, x = 0. Actions: 0 thrust left, 1 coast, 2 thrust right; a thrust changes the
  velocity by 0.01 per step (velocity capped to [-0.1, 0.1]), and ``x`` moves by the velocity. Observation:
  ``[x, velocity]`` (float32). Each step pays ``1 - |x|``; leaving the rail (|x| > 1.2) ends the episode
  (terminated, that step paying 0); otherwise it is truncated after 100 steps. Having momentum, the shuttle must
  brake before the station: always thrusting towards it (the myopic rule) overshoots and oscillates. Best attainable
  mean return: 96.25 (by dynamic programming over position and velocity from the uniform start; its policy measured
  96.24 over 3,000 episodes, sd 2.7, least 90.7). Always thrusting towards the station averages 74.1 (sd 11.4),
  coasting 50.0 (sd 29.1), a uniform random policy 25.1 (sd 19.7). Reward threshold used by heldout70: 88 (a mean
  over 10 evaluation episodes).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class LaneKeep(gym.Env[np.ndarray, np.ndarray]):
    """Steer onto a target lane offset and hold it (continuous steering in [-1, 1])."""

    def __init__(self, horizon: int = 50, rate: float = 0.1):
        self.horizon, self.rate = int(horizon), float(rate)
        self.observation_space = spaces.Box(low=-1.0, high=1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Box(low=-1.0, high=1.0, shape=(1,), dtype=np.float32)
        self.x = self.target = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.x, self.target], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.x, self.target = (float(v) for v in self.np_random.uniform(-1.0, 1.0, size=2))
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        self.x = float(np.clip(self.x + self.rate * a, -1.0, 1.0))
        self.t += 1
        reward = 1.0 - abs(self.x - self.target)
        return self._obs(), reward, False, self.t >= self.horizon, {}


class ShuttleDock(gym.Env[np.ndarray, int]):
    """Park a shuttle with momentum at its station (Discrete(3): thrust left, coast, thrust right)."""

    def __init__(self, horizon: int = 100, accel: float = 0.01, max_speed: float = 0.1):
        self.horizon, self.accel, self.max_speed = int(horizon), float(accel), float(max_speed)
        self.observation_space = spaces.Box(low=np.array([-1.2, -self.max_speed], dtype=np.float32),
                                            high=np.array([1.2, self.max_speed], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.x = self.v = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.x, self.v], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.x, self.v, self.t = float(self.np_random.uniform(-1.0, 1.0)), 0.0, 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.v = min(max(self.v + self.accel * (int(action) - 1), -self.max_speed), self.max_speed)
        self.x += self.v
        self.t += 1
        terminated = abs(self.x) > 1.2
        reward = 0.0 if terminated else 1.0 - abs(self.x)
        return self._obs(), reward, terminated, (not terminated) and self.t >= self.horizon, {}
