"""Two small environment classes of a user's own, for the held-out set heldout81 (tests/fixtures/heldout81).

Written by the helper that made that set, as a user would write them for their own problem: pure Python/numpy,
no rendering, each episode ending by itself within a few dozen steps.

- ``TackingDinghy``: a dinghy beats upwind to a mark straight upwind of the start line. It cannot sail into the
  wind, only on one of two tacks (up and to the left, or up and to the right); Discrete(2) actions pick the tack,
  and changing tack stalls the boat for one step. Box observation (x, y, current tack). Leaving the channel
  (|x| > 0.5) runs aground (episode ends, -1); crossing the finish line (y >= 1) ends the episode and pays
  1 - 2|x| (finishing at the mark pays most); every step costs 0.01; truncated after 120 steps.
- ``BalloonPilot``: a hot-air balloon cannot steer, only climb or sink; the wind blows one way above mid-height
  and the other way below it, so the pilot reaches a landing spot by choosing an altitude. Box(1) action in
  [-1, 1] (burner or vent: the climb rate), Box observation (offset to the spot, altitude, wind here). Each step
  pays -0.1 * |offset|; truncated after 60 steps.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class TackingDinghy(gym.Env[np.ndarray, int]):
    SPEED = 0.035  # distance sailed per step along either tack (up and across at 45 degrees)

    def __init__(self, channel: float = 0.5, max_steps: int = 120):
        self.channel, self.max_steps = float(channel), int(max_steps)
        self.observation_space = spaces.Box(np.array([-1.0, 0.0, -1.0], np.float32),
                                            np.array([1.0, 1.2, 1.0], np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(2)  # 0: port tack (up-left), 1: starboard tack (up-right)
        self.x = self.y = 0.0
        self.tack = 1
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.x, self.y, float(self.tack)], dtype=np.float32)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.x = float(self.np_random.uniform(-0.25, 0.25))
        self.y = 0.0
        self.tack = 1 if self.np_random.random() < 0.5 else -1
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        want = -1 if int(action) == 0 else 1
        self.t += 1
        if want != self.tack:  # tacking through the wind: the boat stalls for a step
            self.tack = want
        else:
            self.x += self.tack * self.SPEED
            self.y += self.SPEED
        reward, terminated = -0.01, False
        if abs(self.x) > self.channel:
            reward, terminated = -1.0, True
        elif self.y >= 1.0:
            reward, terminated = reward + 1.0 - 2.0 * abs(self.x), True
        truncated = not terminated and self.t >= self.max_steps
        return self._obs(), float(reward), terminated, truncated, {}


class BalloonPilot(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, max_steps: int = 60, wind: float = 0.08, climb: float = 0.06):
        self.max_steps, self.wind, self.climb = int(max_steps), float(wind), float(climb)
        self.observation_space = spaces.Box(np.array([-3.0, 0.0, -1.0], np.float32),
                                            np.array([3.0, 1.0, 1.0], np.float32), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.x = self.h = self.spot = 0.0
        self.t = 0

    def _wind(self) -> float:
        return self.wind * (2.0 * self.h - 1.0)  # westward below mid-height, eastward above

    def _obs(self) -> np.ndarray:
        return np.array([np.clip(self.spot - self.x, -3.0, 3.0), self.h, self._wind() / self.wind], dtype=np.float32)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.x, self.h = 0.0, 0.5
        self.spot = float(self.np_random.uniform(-1.0, 1.0))
        self.t = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        self.t += 1
        self.h = float(np.clip(self.h + self.climb * a, 0.0, 1.0))
        self.x += self._wind()
        reward = -0.1 * abs(self.spot - self.x)
        return self._obs(), float(reward), False, self.t >= self.max_steps, {}
