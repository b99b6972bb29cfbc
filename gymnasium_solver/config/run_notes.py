"""What a resolved config implies for its run, said as notes before it trains: the evaluation grid and a rollout
longer than the budget (:func:`budget_notes`), and a reward threshold that even a perfect policy passes only some
of the time (:func:`luck_note`).

The second is exact for Gymnasium's tabular environments, whose dynamics are published: bench/threshold_reach.py
computes the optimal policy's distribution of one episode's return by value iteration over the TimeLimit and ships
it (presets/thresholds/threshold_reach.json, with its commit); the chance that the mean of N evaluation episodes
reaches the threshold is that distribution convolved N times. Taxi-v4's threshold, 8, is above the optimal policy's
expected 7.93: a run with a perfect policy passes an evaluation of 10 episodes about half the time.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from gymnasium_solver.config.build import build_config
from gymnasium_solver.config.native_models import A2CConfig, PPOConfig
from gymnasium_solver.config.presets import PACKAGE_DATA_DIR
from gymnasium_solver.config.registry import Config

MIN_EVALUATIONS = 10
THRESHOLD_REACH = PACKAGE_DATA_DIR / "thresholds" / "threshold_reach.json"
LUCK_BELOW = 0.9  # a perfect policy passing an evaluation less often than this gets the note


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


def mean_reaches(dist: dict[float, float], n: int, threshold: float) -> float:
    """P(the mean of n independent episodes >= threshold), exactly, by convolving one episode's return distribution."""
    total: dict[float, float] = {0.0: 1.0}
    for _ in range(n):
        step: dict[float, float] = {}
        for a, pa in total.items():
            for b, pb in dist.items():
                key = round(a + b, 6)
                step[key] = step.get(key, 0.0) + pa * pb
        total = step
    return float(sum(p for s, p in total.items() if s / n >= threshold - 1e-9))


@functools.cache
def _reach_table() -> dict[str, dict[str, Any]]:
    try:
        return {row["env_id"]: row for row in json.loads(THRESHOLD_REACH.read_text(encoding="utf-8"))["envs"]
                if row.get("returns")}
    except (OSError, ValueError, KeyError):
        return {}


@functools.cache
def pass_probability(env_id: str, threshold: float, episodes: int) -> float | None:
    """The chance that an optimal policy's mean over ``episodes`` evaluation episodes reaches ``threshold`` on
    ``env_id`` as Gymnasium registers it; None for an env not in the shipped table."""
    row = _reach_table().get(env_id)
    if row is None:
        return None
    return mean_reaches({float(r): float(p) for r, p in row["returns"]}, episodes, threshold)


def luck_note(cfg: Config) -> str | None:
    """Said when even a perfect policy would pass the run's evaluation less than LUCK_BELOW of the time (the env as
    registered: env_kwargs change the task the table was computed for)."""
    row = _reach_table().get(cfg.env_id)
    if row is None or cfg.env_kwargs or cfg.reward_threshold is None or cfg.eval_episodes < 1:
        return None
    p = pass_probability(cfg.env_id, float(cfg.reward_threshold), cfg.eval_episodes)
    if p is None or p >= LUCK_BELOW:
        return None
    best = float(row["optimal_expected_return"])
    where = "above" if best < cfg.reward_threshold else "close to"
    return (f"reward_threshold: {cfg.reward_threshold:g} is {where} what an optimal policy earns on {cfg.env_id} on "
            f"average ({best:.4g}): even a perfect policy passes an evaluation of {cfg.eval_episodes} episodes "
            f"{p:.0%} of the time (and its confirmation only some of the time), so when a run solves is partly "
            f"evaluation luck, and a run with a perfect policy can end unsolved (docs/benchmarks.md, threshold-reach)")
