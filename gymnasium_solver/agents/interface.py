"""The interface the training loop drives (gymnasium_solver/train/training.py), in its two shapes: an
on-policy algorithm collects a rollout, computes its targets and updates; an off-policy one learns while
it collects. Which shape an algorithm has is its row's ``on_policy`` in gymnasium_solver/contract/algorithms.py,
never a list of its own; tests/test_algorithms.py holds each agent class to its row."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from gymnasium_solver.agents.common import Rollout, UpdateStats


class Agent(Protocol):
    """What the training session needs of every algorithm: its ``policy`` (evaluation, checkpoints, the
    non-finite guard) and ``optimizer`` (what a resumable checkpoint saves). Which of the two protocols
    below drives it is its row's ``on_policy`` in gymnasium_solver/contract/algorithms.py (training.py)."""

    policy: Any  # a Policy
    optimizer: Any


class OnPolicyAgent(Agent, Protocol):
    """An algorithm that learns only from what its current policy collected (PPO, A2C, REINFORCE): one
    iteration is ``collect`` (a rollout, weights untouched) -> ``targets`` (advantages or returns) ->
    ``update`` (the gradient steps, which the session guards: weights from before it come back on a
    non-finite loss)."""

    def collect(self, collector: Any) -> Rollout: ...

    def targets(self, rollout: Rollout) -> Any: ...

    def update(self, batch: Any, progress: float) -> UpdateStats: ...


class LearnChunk(NamedTuple):
    """One off-policy iteration: the env steps taken and the seconds its gradient steps took (the rest
    of the iteration's time is acting, stepping the environments and storing transitions)."""

    env_steps: int
    gradient_seconds: float


class OffPolicyAgent(Agent, Protocol):
    """An algorithm that learns while it collects (DQN; SB3's QR-DQN, SAC, TD3, TQC through
    gymnasium_solver/agents/sb3.SB3Agent): ``learn`` takes one iteration's ``iteration_steps`` env steps with the gradient
    steps interleaved among them (every ``train_freq``), as SB3's ``learn()`` does; the session guards
    the whole call (the iteration's starting weights come back on a non-finite loss or weight).
    ``stats`` is what the iteration's gradient steps measured."""

    def learn(self, collector: Any) -> LearnChunk: ...

    def stats(self) -> UpdateStats: ...
