"""A user's own environment classes for the held-out set tests/fixtures/heldout72 (off-policy algorithms), written
as a user would write them for their own problem. Pure Python/numpy, no rendering, thousands of steps a second;
every episode ends inside the class.

- ``Slalom`` (continuous actions, for sac and td3): a skier goes down a slope at a constant speed through 12 gates,
  one every 5 steps (60 steps an episode, then it terminates). The action (Box(1) in [-1, 1]) is the lateral
  velocity: the skier moves ``0.25 * action`` sideways each step, within [-2, 2]. Each gate is placed at most 1.0
  from the one before, within [-1.5, 1.5], so every gate can be reached in its 5 steps. Passing a gate (within 0.25
  of its centre at the gate's step) pays 1; every step also costs ``0.05 * |distance to the next gate|`` (at most
  0.05 * 3.5). Observation (Box(4)): the skier's position, the offset of the next gate from the skier, the steps left
  to it / 5, and the offset of the gate after it from the next one. Steering straight at the next gate takes all
  12 gates (a return of about 11.8); a uniform random policy takes about 2 (a return of about -1.1 to -1.3).
- ``Orchard`` (Discrete(3) actions, for dqn and qrdqn): a basket at the bottom of a tree catches 15 apples, one at
  a time (then it terminates: 180 steps). Each apple falls from the top at a random place with a random sideways
  drift (bouncing off the sides of [0, 1]) and lands 12 steps later. Actions: move the basket left, keep it still,
  move it right (0.1 a step, within [0, 1]). An apple landing within 0.1 of the basket pays 1, else nothing.
  Observation (Box(5)): the basket's position, the apple's position (x, height), its drift per step * 10 and the
  apple's x minus the basket's. Following the apple catches all 15; a uniform random policy or a still basket
  about 3 (2.8).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Slalom(gym.Env[np.ndarray, np.ndarray]):
    def __init__(self, n_gates: int = 12, gate_every: int = 5, speed: float = 0.25, gate_half_width: float = 0.25):
        self.n_gates, self.gate_every = int(n_gates), int(gate_every)
        self.speed, self.half_width = float(speed), float(gate_half_width)
        self.observation_space = spaces.Box(-4.0, 4.0, shape=(4,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.gates = np.zeros(self.n_gates + 1)
        self.x, self.t = 0.0, 0

    def _obs(self) -> np.ndarray:
        k = min(self.t // self.gate_every, self.n_gates - 1)
        left = (self.gate_every - self.t % self.gate_every) / self.gate_every
        after = self.gates[k + 1] - self.gates[k]
        return np.array([self.x, self.gates[k] - self.x, left, after], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        g, gates = 0.0, []
        for _ in range(self.n_gates + 1):
            g = float(np.clip(g + self.np_random.uniform(-1.0, 1.0), -1.5, 1.5))
            gates.append(g)
        self.gates = np.array(gates)
        self.x, self.t = 0.0, 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        self.x = float(np.clip(self.x + self.speed * a, -2.0, 2.0))
        k = self.t // self.gate_every
        self.t += 1
        reward = -0.05 * abs(self.gates[k] - self.x)
        passed = False
        if self.t % self.gate_every == 0:
            passed = abs(self.gates[k] - self.x) <= self.half_width
            reward += 1.0 if passed else 0.0
        terminated = self.t >= self.n_gates * self.gate_every
        return self._obs(), float(reward), terminated, False, {"gate_passed": passed}


class Orchard(gym.Env[np.ndarray, int]):
    def __init__(self, n_apples: int = 15, fall_steps: int = 12, basket_speed: float = 0.1, reach: float = 0.1):
        self.n_apples, self.fall_steps = int(n_apples), int(fall_steps)
        self.basket_speed, self.reach = float(basket_speed), float(reach)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(5,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.basket = 0.5
        self.apple_x = self.apple_vx = 0.0
        self.fallen = self.caught = self.k = 0

    def _new_apple(self) -> None:
        self.apple_x = float(self.np_random.uniform(0.0, 1.0))
        self.apple_vx = float(self.np_random.uniform(-0.04, 0.04))
        self.k = 0

    def _obs(self) -> np.ndarray:
        height = 1.0 - self.k / self.fall_steps
        return np.array([self.basket, self.apple_x, height, self.apple_vx * 10.0, self.apple_x - self.basket],
                        dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.basket = float(self.np_random.uniform(0.0, 1.0))
        self.fallen = self.caught = 0
        self._new_apple()
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.basket = float(np.clip(self.basket + (int(action) - 1) * self.basket_speed, 0.0, 1.0))
        x = self.apple_x + self.apple_vx
        if x < 0.0 or x > 1.0:  # bounce off the side
            x, self.apple_vx = (-x, -self.apple_vx) if x < 0.0 else (2.0 - x, -self.apple_vx)
        self.apple_x = x
        self.k += 1
        reward = 0.0
        if self.k >= self.fall_steps:
            self.fallen += 1
            if abs(self.apple_x - self.basket) <= self.reach:
                self.caught += 1
                reward = 1.0
            self._new_apple()
        terminated = self.fallen >= self.n_apples
        return self._obs(), reward, terminated, False, {"caught": self.caught}
