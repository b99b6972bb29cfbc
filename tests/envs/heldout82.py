"""A user's own environment classes for the held-out set tests/fixtures/heldout82 (written for that set only).

Tiny and fast: pure Python/numpy, no rendering; every episode ends inside the class.

- ``DrumTapper``: keep time with a drum beat. A beat falls every 3, 4 or 5 steps (the tempo, drawn at reset);
  every fourth beat is accented. Dict observation: ``countdown`` (Discrete(6): steps until the next beat, 0 = the
  beat is now), ``accent`` (Discrete(2): 1 if the next beat is accented) and ``tempo`` (Discrete(3)). Three
  actions: 0 rest, 1 soft tap, 2 hard tap. On a beat: the right tap (hard on an accent, soft otherwise) pays +1,
  the wrong tap +0.25, resting -0.5; a tap between beats costs -0.5, resting there pays 0. The episode ends after
  16 beats (48-80 steps). Best return 16.0; a uniform random player averages about -12.
- ``HandGameRival``: 40 rounds of rock-paper-scissors against a rival who, with probability 0.8, plays the move
  that beats the player's previous move (else a uniformly random one). Box observation (7,): one-hot of the
  rival's last move, one-hot of the player's last move (zeros before the first round) and the fraction of
  rounds played. Three actions (rock, paper, scissors). A win pays +1, a draw 0, a loss -1. Countering the
  rival's habit averages about +0.8 a round (about 32 a game); any fixed or random play averages 0.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class DrumTapper(gym.Env):
    BEATS = 16
    TEMPOS = (3, 4, 5)

    def __init__(self) -> None:
        self.observation_space = spaces.Dict({
            "countdown": spaces.Discrete(6),
            "accent": spaces.Discrete(2),
            "tempo": spaces.Discrete(3),
        })
        self.action_space = spaces.Discrete(3)
        self.tempo_ix = 0
        self.countdown = 0
        self.beats_done = 0

    def _obs(self) -> dict[str, int]:
        accent = int((self.beats_done + 1) % 4 == 0)  # the 4th, 8th, ... beat
        return {"countdown": int(self.countdown), "accent": accent, "tempo": int(self.tempo_ix)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.tempo_ix = int(self.np_random.integers(len(self.TEMPOS)))
        self.countdown = self.TEMPOS[self.tempo_ix] - 1
        self.beats_done = 0
        return self._obs(), {}

    def step(self, action):
        action = int(action)
        if self.countdown == 0:  # the beat is now
            accent = (self.beats_done + 1) % 4 == 0
            if action == 0:
                reward = -0.5
            elif action == (2 if accent else 1):
                reward = 1.0
            else:
                reward = 0.25
            self.beats_done += 1
            self.countdown = self.TEMPOS[self.tempo_ix] - 1
        else:
            reward = -0.5 if action != 0 else 0.0
            self.countdown -= 1
        terminated = self.beats_done >= self.BEATS
        return self._obs(), reward, terminated, False, {}


class HandGameRival(gym.Env):
    ROUNDS = 40
    HABIT = 0.8  # how often the rival plays what beats the player's previous move

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, shape=(7,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.round = 0
        self.my_last = -1
        self.rival_last = -1

    def _obs(self) -> np.ndarray:
        obs = np.zeros(7, dtype=np.float32)
        if self.rival_last >= 0:
            obs[self.rival_last] = 1.0
        if self.my_last >= 0:
            obs[3 + self.my_last] = 1.0
        obs[6] = self.round / self.ROUNDS
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.round = 0
        self.my_last = self.rival_last = -1
        return self._obs(), {}

    def step(self, action):
        me = int(action)  # 0 rock, 1 paper, 2 scissors; (m + 1) % 3 beats m
        if self.my_last >= 0 and self.np_random.random() < self.HABIT:
            rival = (self.my_last + 1) % 3
        else:
            rival = int(self.np_random.integers(3))
        if me == rival:
            reward = 0.0
        elif me == (rival + 1) % 3:
            reward = 1.0
        else:
            reward = -1.0
        self.my_last, self.rival_last = me, rival
        self.round += 1
        return self._obs(), reward, False, self.round >= self.ROUNDS, {}
