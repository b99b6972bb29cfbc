"""A user's own environment classes for the held-out set heldout92 (tests/fixtures/heldout92): written as a user
would write them for their own problem, not copies of a Gymnasium environment. Pure Python/numpy, fast, and every
episode ends inside the class.

- ``Archer``: an archer shoots ``arrows`` arrows at a target, one a step, in a crosswind that drifts from shot to
  shot (a slow random walk between -1 and 1, with occasional gusts). Box observation: the wind now, the wind's
  change since the last shot, and the share of arrows left. Five actions: the aim, from far left (0) to far right (4),
  of which the right one is the one that cancels the wind (aim 2 in calm air). A bullseye pays 1, the ring next to it
  0.3, a miss nothing. A uniform random aim averages about 0.32 an arrow (9.6 of 30); reading the wind scores about
  0.9 an arrow or better (27 of 30).
- ``HanoiPuzzle``: the Tower of Hanoi with ``disks`` disks on three pegs. MultiDiscrete observation: the peg of each
  disk (smallest first). Six actions: move the top disk from one peg to another (0: 0->1, 1: 0->2, 2: 1->0, 3: 1->2,
  4: 2->0, 5: 2->1); a move that is not allowed (an empty source peg, or a larger disk on a smaller one) wastes the
  step. Each step costs 0.01 and moving the whole tower onto the last peg pays 1 and ends the episode; the episode
  is truncated after ``max_steps`` steps. The shortest solution of 3 disks takes 7 moves (return 0.93).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Archer(gym.Env[np.ndarray, int]):
    def __init__(self, arrows: int = 30, drift: float = 0.25, gust_chance: float = 0.1):
        self.arrows, self.drift, self.gust_chance = int(arrows), float(drift), float(gust_chance)
        self.observation_space = spaces.Box(low=np.array([-1.0, -2.0, 0.0], dtype=np.float32),
                                            high=np.array([1.0, 2.0, 1.0], dtype=np.float32), dtype=np.float32)
        self.action_space = spaces.Discrete(5)
        self.wind = self.last_wind = 0.0
        self.left = self.arrows

    def _obs(self) -> np.ndarray:
        return np.array([self.wind, self.wind - self.last_wind, self.left / self.arrows], dtype=np.float32)

    def _blow(self) -> None:
        self.last_wind = self.wind
        if self.np_random.random() < self.gust_chance:
            self.wind = float(self.np_random.uniform(-1.0, 1.0))
        else:
            self.wind = float(np.clip(self.wind + self.np_random.normal(0.0, self.drift), -1.0, 1.0))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.wind = self.last_wind = float(self.np_random.uniform(-1.0, 1.0))
        self.left = self.arrows
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        right_aim = int(np.clip(np.rint(2 + 2 * self.wind), 0, 4))  # aim into the wind
        miss = abs(int(action) - right_aim)
        reward = 1.0 if miss == 0 else 0.3 if miss == 1 else 0.0
        self.left -= 1
        self._blow()
        return self._obs(), reward, self.left <= 0, False, {}


class HanoiPuzzle(gym.Env[np.ndarray, int]):
    MOVES = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))

    def __init__(self, disks: int = 3, max_steps: int = 100, step_cost: float = 0.01):
        self.disks, self.max_steps, self.step_cost = int(disks), int(max_steps), float(step_cost)
        self.observation_space = spaces.MultiDiscrete([3] * self.disks)
        self.action_space = spaces.Discrete(len(self.MOVES))
        self.pegs = np.zeros(self.disks, dtype=np.int64)
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.pegs = np.zeros(self.disks, dtype=np.int64)  # disk 0 is the smallest; all on peg 0
        self.t = 0
        return self.pegs.copy(), {}

    def _top(self, peg: int) -> int:
        """The smallest disk on ``peg`` (its top), or self.disks if the peg is empty."""
        on = np.flatnonzero(self.pegs == peg)
        return int(on[0]) if on.size else self.disks

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        src, dst = self.MOVES[int(action)]
        disk = self._top(src)
        if disk < self.disks and disk < self._top(dst):
            self.pegs[disk] = dst
        self.t += 1
        solved = bool(np.all(self.pegs == 2))
        reward = (1.0 if solved else 0.0) - self.step_cost
        return self.pegs.copy(), reward, solved, self.t >= self.max_steps and not solved, {}
