"""What a resolved config implies for its run, said as notes before it trains: the evaluation grid and a rollout
longer than the budget (:func:`budget_notes`), and a reward threshold that even a perfect policy passes only some
of the time (:func:`luck_note`).

The second is exact for Gymnasium's tabular environments, whose dynamics are published: bench/threshold_reach.py
computes the optimal policy's distribution of one episode's return by value iteration over the TimeLimit and ships
it (presets/thresholds/threshold_reach.json, with its commit), and a run whose env_kwargs make another task
(FrozenLake-v1's 8x8 map, with v1's 100-step limit) gets the same computation at resolution when the env is
small enough; the chance that the mean of N evaluation episodes reaches the threshold is that distribution
convolved N times. Taxi-v4's threshold, 8, is above the optimal policy's
expected 7.93: a run with a perfect policy passes an evaluation of 10 episodes about half the time.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from gymnasium_solver.config.build import build_config
from gymnasium_solver.config.native_models import A2CConfig, PPOConfig
from gymnasium_solver.config.presets import PACKAGE_DATA_DIR
from gymnasium_solver.config.registry import Config
from gymnasium_solver.config.spaces import env_spaces

MIN_EVALUATIONS = 10
THRESHOLD_REACH = PACKAGE_DATA_DIR / "thresholds" / "threshold_reach.json"
LUCK_BELOW = 0.9  # a perfect policy passing an evaluation less often than this gets the note
MAX_WORK = 200_000  # states x actions x TimeLimit: an env with env_kwargs is solved at resolution up to this size


def budget_notes(cfg: Config, eval_freq_set: bool, notes: list[str], where: str) -> Config:
    """The config with what its budget implies, each said in ``notes``: at least MIN_EVALUATIONS evaluations when
    nothing set eval_freq; and a PPO or A2C budget smaller than one rollout, which is collected and trained whole
    (as SB3 does), so the run trains more env steps than asked (BipedalWalker-v3's Zoo rollout is 65,536)."""
    every = max(cfg.max_env_steps // MIN_EVALUATIONS, 1)
    rollout = cfg.n_envs * cfg.n_steps if isinstance(cfg, PPOConfig | A2CConfig) else None
    if not eval_freq_set and cfg.eval_freq > every:
        note = (f"eval_freq: {every:,} env steps, 1/{MIN_EVALUATIONS} of the {cfg.max_env_steps:,}-step budget "
                f"(the default {cfg.eval_freq:,} would evaluate fewer than {MIN_EVALUATIONS} times, and a solve "
                "is only seen at an evaluation)")
        # An evaluation waits for the rollout (off-policy: the iteration_steps chunk) it falls in to be trained.
        chunk, kind = (rollout, "rollout") if rollout is not None else (getattr(cfg, "iteration_steps", None),
                                                                         "iteration")
        if chunk is not None and chunk > every:
            rounds = -(-cfg.max_env_steps // chunk)
            note += (f"; evaluations happen between {kind}s, so with {kind}s of {chunk:,} env steps this run "
                     f"evaluates {f'{rounds:,} times' if rounds > 1 else 'once'}")
        notes.append(note)
        cfg = build_config({**cfg.model_dump(mode="json"), "eval_freq": every}, where)
    if isinstance(cfg, PPOConfig | A2CConfig) and rollout is not None and cfg.max_env_steps < rollout:
        notes.append(f"max_env_steps: the {cfg.max_env_steps:,}-step budget is less than one rollout ({cfg.n_envs} "
                     f"envs x {cfg.n_steps:,} steps = {rollout:,} env steps), which is collected and trained whole: "
                     f"the run trains {rollout:,} env steps; raise max_env_steps, or shorten the rollout (n_steps, "
                     "n_envs)")
    return cfg


def sum_distribution(dist: dict[float, float], n: int) -> dict[float, float]:
    """The distribution of the sum of n independent episodes' returns, exactly, by convolving one episode's."""
    total: dict[float, float] = {0.0: 1.0}
    for _ in range(n):
        step: dict[float, float] = {}
        for a, pa in total.items():
            for b, pb in dist.items():
                key = round(a + b, 6)
                step[key] = step.get(key, 0.0) + pa * pb
        total = step
    return total


def mean_reaches(dist: dict[float, float], n: int, threshold: float, total: dict[float, float] | None = None) -> float:
    """P(the mean of n independent episodes >= threshold); ``total``: their sum's distribution, when already made."""
    total = sum_distribution(dist, n) if total is None else total
    return float(sum(p for s, p in total.items() if s / n >= threshold - 1e-9))


def mean_floor(dist: dict[float, float], n: int, level: float, total: dict[float, float] | None = None) -> float:
    """The highest value that the mean of n independent episodes reaches with probability >= ``level``."""
    reach = 0.0
    for s, p in sorted((sum_distribution(dist, n) if total is None else total).items(), reverse=True):
        reach += p
        if reach >= level - 1e-12:
            return s / n
    return min(dist)


def optimal_returns(env_id: str, env_kwargs: dict[str, Any] | None = None,
                    max_work: int | None = None) -> tuple[dict[float, float], int]:
    """The distribution of one episode's undiscounted return under an optimal finite-horizon policy (returns
    rounded to 1e-9 -> probability), and the horizon (the TimeLimit). ValueError for an env without published
    dynamics (``unwrapped.P``), without a TimeLimit, or larger than ``max_work`` states x actions x steps."""
    import gymnasium as gym  # here, not at import: importing the config package stays cheap (tests/test_api.py)

    env = gym.make(env_id, **(env_kwargs or {}))
    u: Any = env.unwrapped
    limit = env.spec.max_episode_steps if env.spec is not None else None
    if limit is None or not hasattr(u, "P") or not hasattr(u, "initial_state_distrib"):
        env.close()
        raise ValueError(f"{env_id} publishes no dynamics or has no TimeLimit: no exact optimum")
    horizon = int(limit)
    n_states, n_actions = u.observation_space.n, u.action_space.n
    if max_work is not None and n_states * n_actions * horizon > max_work:
        env.close()
        raise ValueError(f"{env_id}: {n_states} states x {n_actions} actions x {horizon} steps is past {max_work:,}")
    values = [np.zeros(n_states)]  # values[h][s]: the best expected return with h steps left
    policy: list[np.ndarray] = []
    for _ in range(horizon):
        q = np.zeros((n_states, n_actions))
        for s in range(n_states):
            for a in range(n_actions):
                q[s, a] = sum(p * (r + (0.0 if done else values[-1][s2])) for p, s2, r, done in u.P[s][a])
        policy.append(q.argmax(1))
        values.append(q.max(1))
    # Forward: the joint distribution of (state, return so far) under that policy, horizon steps.
    live: dict[tuple[int, float], float] = {(int(s), 0.0): float(p) for s, p in enumerate(u.initial_state_distrib) if p > 0}
    ended: dict[float, float] = {}
    for h in range(horizon, 0, -1):
        nxt: dict[tuple[int, float], float] = {}
        for (s, ret), p in live.items():
            for q_, s2, r, done in u.P[s][int(policy[h - 1][s])]:
                key = round(ret + r, 9)
                if done:
                    ended[key] = ended.get(key, 0.0) + p * q_
                else:
                    nxt[(int(s2), key)] = nxt.get((int(s2), key), 0.0) + p * q_
        live = nxt
    for (_, ret), p in live.items():  # truncated by the TimeLimit
        ended[ret] = ended.get(ret, 0.0) + p
    env.close()
    return ended, horizon


@functools.cache
def _reach_table() -> dict[str, dict[str, Any]]:
    try:
        return {row["env_id"]: row for row in json.loads(THRESHOLD_REACH.read_text(encoding="utf-8"))["envs"]
                if row.get("returns")}
    except (OSError, ValueError, KeyError):
        return {}


@functools.cache
def _optimum(env_id: str, kwargs_json: str) -> tuple[dict[float, float], float] | None:
    """(one episode's optimal return distribution, its expected value) for the env as the run makes it: the shipped
    table's for a registered env as it is, computed here for one with env_kwargs (FrozenLake-v1's 8x8 map keeps v1's
    100-step limit, which the table's FrozenLake8x8-v1 does not) when its spaces are Discrete (the resolution's
    cached spaces say so without making the env) and it is small; None otherwise."""
    row = _reach_table().get(env_id)
    if row is not None and kwargs_json == "{}":
        return {float(r): float(p) for r, p in row["returns"]}, float(row["optimal_expected_return"])
    kwargs = json.loads(kwargs_json)
    try:
        spaces = env_spaces(env_id, kwargs)
        if (spaces.observation_kind, spaces.action_kind) != ("discrete", "discrete"):
            return None
        dist, _ = optimal_returns(env_id, kwargs, MAX_WORK)
    except Exception:  # noqa: BLE001 - any env that cannot say: no note, never a failed resolution
        return None
    return dist, sum(r * p for r, p in dist.items())


@dataclass(frozen=True)
class Optimum:
    """What an optimal policy earns on an env as a run makes it: its expected return per episode, the chance it
    passes one evaluation, and the highest threshold it passes every evaluation of the run's sizes reliably."""
    expected: float
    pass_probability: float
    solve_probability: float  # one evaluation passes and so does its confirmation (its first confirm_episodes)
    reached_from: float  # an optimal policy's evaluation mean is at least this 95% of the time
    reliable_threshold: float  # passed with probability >= RELIABLE by an evaluation and by the confirmation


RELIABLE = 0.9


@functools.cache
def _optimum_for_run(env_id: str, kwargs_json: str, threshold: float, episodes: int, confirm: int) -> Optimum | None:
    found = _optimum(env_id, kwargs_json)
    if found is None:
        return None
    dist, expected = found
    totals = {n: sum_distribution(dist, n) for n in {episodes, confirm} if n > 0}  # each convolved once
    reliable = min(mean_floor(dist, n, RELIABLE, total) for n, total in totals.items())
    passes = mean_reaches(dist, episodes, threshold, totals[episodes])
    confirmed = mean_reaches(dist, confirm, threshold, totals[confirm]) if confirm > 0 else 1.0
    return Optimum(expected, passes, passes * confirmed, mean_floor(dist, episodes, 0.95, totals[episodes]), reliable)


def optimum_for_run(env_id: str, env_kwargs: dict[str, Any] | None, threshold: float, episodes: int,
                    confirm_episodes: int) -> Optimum | None:
    """The exact optimum of a tabular env (None for any other) against a run's threshold and evaluation sizes."""
    if episodes < 1:
        return None
    return _optimum_for_run(env_id, _kwargs_json(env_kwargs), float(threshold), int(episodes), int(confirm_episodes))


def _kwargs_json(env_kwargs: dict[str, Any] | None) -> str:
    return json.dumps(env_kwargs or {}, sort_keys=True, default=str)


def pass_probability(env_id: str, threshold: float, episodes: int, env_kwargs: dict[str, Any] | None = None
                     ) -> float | None:
    """The chance that an optimal policy's mean over ``episodes`` evaluation episodes reaches ``threshold``; None for
    an env with no exact optimum (not tabular, too large, or unknown)."""
    found = optimum_for_run(env_id, env_kwargs, threshold, episodes, 0)
    return None if found is None else found.pass_probability


def luck_note(cfg: Config) -> str | None:
    """Said when even a perfect policy would pass the run's evaluation less than LUCK_BELOW of the time, on the env as
    the run makes it (its env_kwargs included): how often it passes, how often it solves (its confirmation too), and
    the bar it would pass reliably, the change to make (the diagnosis's threshold rules read the same Optimum)."""
    if cfg.reward_threshold is None:
        return None
    opt = optimum_for_run(cfg.env_id, cfg.env_kwargs, float(cfg.reward_threshold), cfg.eval_episodes,
                          cfg.confirm_episodes)
    if opt is None or opt.pass_probability >= LUCK_BELOW:
        return None
    where = "above" if opt.expected < cfg.reward_threshold else "close to"
    env = cfg.env_id + (" with its env_kwargs" if cfg.env_kwargs else "")
    confirmed = (f", and that evaluation and its {cfg.confirm_episodes}-episode confirmation together "
                 f"{opt.solve_probability:.0%}" if cfg.confirm_episodes > 0 else "")
    return (f"reward_threshold: {cfg.reward_threshold:g} is {where} what an optimal policy earns on {env} on "
            f"average ({opt.expected:.4g}): even a perfect policy passes an evaluation of {cfg.eval_episodes} episodes "
            f"{opt.pass_probability:.0%} of the time{confirmed}, so when a run solves is partly evaluation luck, and "
            f"a run with a perfect policy can end unsolved; a bar it passes reliably: "
            f"reward_threshold={opt.reliable_threshold:g} (docs/benchmarks.md, threshold-reach)")
