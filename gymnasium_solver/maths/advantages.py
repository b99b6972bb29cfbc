"""Advantage and return estimators shared by the algorithms: GAE (PPO) and returns-to-go (REINFORCE).

All arrays are time-major, shape ``[T, N]`` (T steps of N sub-environments), numpy float32/bool.

Gymnasium 1.x vector envs autoreset on the NEXT step: the step that reports ``terminated`` or
``truncated`` returns the episode's *final* observation, and the following step ignores the action,
resets the sub-environment and reports reward 0. So ``next_values[t]`` (the value of the
observation returned by step t) is the value of the final observation when step t ended an episode:
exactly what a truncated episode must bootstrap from. The reset step itself is not a real
transition; callers mask it out (``valid``), and the ``(1 - done)`` cut below keeps it from leaking
into the step before it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Targets(NamedTuple):
    """Per-step learning targets: advantages and the returns the value function regresses on."""

    advantages: np.ndarray
    returns: np.ndarray


def shift_values(values: np.ndarray, last_value: np.ndarray) -> np.ndarray:
    """``next_values[t] = values[t + 1]``; the last row is the value of the observation after the rollout."""
    return np.concatenate([values[1:], last_value[None]], axis=0)


def compute_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> Targets:
    """Generalised Advantage Estimation (Schulman et al. 2015, https://arxiv.org/abs/1506.02438).

    ``delta_t = r_t + gamma * (1 - terminated_t) * V(s_{t+1}) - V(s_t)``: a terminated episode has
    no future, a truncated one is bootstrapped from its final observation's value. The recursion
    ``A_t = delta_t + gamma * lambda * (1 - done_t) * A_{t+1}`` stops at every episode end.
    Returns ``Targets(advantages, returns = advantages + values)``.
    """
    not_terminated = 1.0 - terminated.astype(np.float32)
    not_done = 1.0 - np.logical_or(terminated, truncated).astype(np.float32)
    advantages = np.zeros_like(values, dtype=np.float32)
    running = np.zeros(values.shape[1], dtype=np.float32)
    # Overflowing rewards (inf/nan) are let through silently: the update's finiteness check turns
    # them into a structured non_finite_loss failure.
    with np.errstate(over="ignore", invalid="ignore"):
        deltas = rewards + gamma * not_terminated * next_values - values
        for t in range(values.shape[0] - 1, -1, -1):
            running = deltas[t] + gamma * gae_lambda * not_done[t] * running
            advantages[t] = running
        return Targets(advantages, advantages + values)


def compute_returns_to_go(
    rewards: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    next_values: np.ndarray,
    gamma: float,
) -> np.ndarray:
    """Discounted returns-to-go ``G_t = r_t + gamma * G_{t+1}`` within each episode.

    At a truncation the tail is ``gamma * next_values[t]`` (the value of the final observation;
    pass zeros for the plain Monte-Carlo estimate); at a termination it is 0. Steps of episodes that
    have not ended by the last row are bootstrapped from ``next_values`` of that row: callers that
    want complete episodes only must mask those steps out.
    """
    done = np.logical_or(terminated, truncated)
    returns = np.zeros_like(rewards, dtype=np.float32)
    # Past the last row nothing is known, so the tail starts as that row's bootstrap value.
    running = next_values[-1].astype(np.float32)
    for t in range(rewards.shape[0] - 1, -1, -1):
        # An episode ending at t has its own tail: the final observation's value if it was
        # truncated, 0 if it terminated.
        tail = np.where(truncated[t], next_values[t], 0.0)
        running = rewards[t] + gamma * np.where(done[t], tail, running)
        returns[t] = running
    return returns
