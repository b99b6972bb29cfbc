"""Rules on whether the agent reached its reward at all: a sparse reward never found, or found too rarely to learn.
Exploration, not optimisation: named from the run's own returns and episode counts, with or without a preset."""

from __future__ import annotations

import numpy as np

from gymnasium_solver.contract.algorithms import EPSILON_GREEDY, ON_POLICY
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import Ctx, ev, eval_floor, returns_at_floor
from gymnasium_solver.diagnostics.models import Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.suggest import change, fmt, round_sig, round_up, start_value

# The findings of this module: a reward not found (or found too rarely) by exploring. Their changes are found late by
# nature (a run must first stumble on the reward), so the fix loop gives them its longest budget when nothing solved.
EXPLORING_FINDINGS = frozenset({"reward_never_found", "reward_rarely_found"})


def explore_changes(ctx: Ctx) -> list[SuggestedChange]:
    """What makes a run that (almost) never reaches its reward explore more: on-policy, twice the parallel envs (up
    to explore_max_envs) and an entropy bonus where there is none; epsilon-greedy, an anneal twice as long."""
    changes = []
    if ctx.algo in ON_POLICY:
        n_envs = ctx.setting("n_envs")
        if isinstance(n_envs, int) and 0 < n_envs and 2 * n_envs <= B.EXPLORE_MAX_ENVS.value:
            changes.append(change("n_envs", n_envs, 2 * n_envs, "increase", "twice the episodes at once: more chances "
                                  "to stumble on the reward, and each update from twice the samples"))
        ent = ctx.setting("ent_coef")
        if ent is not None and start_value(ent) <= 0:
            changes.append(change("ent_coef", ent, 0.01, "increase", "an entropy bonus keeps the policy trying "
                                  "other actions until one pays"))
    elif ctx.algo in EPSILON_GREEDY:
        fraction = ctx.setting("exploration_fraction")
        if isinstance(fraction, (int, float)) and 0 < fraction < 0.5:
            changes.append(change("exploration_fraction", fraction, round_sig(min(0.5, 2 * fraction)), "increase",
                                  "random actions for twice as long before epsilon reaches its floor"))
    return changes


def table_hint(ctx: Ctx) -> str:
    """For a policy-gradient run on one-hot states: gsolve's own defaults learn those with a table (DQN) instead."""
    if ctx.algo in EPSILON_GREEDY or ctx.info.observation_kind != "discrete":
        return ""
    return (f" On Discrete observations gsolve's own defaults learn a table with DQN instead (`gsolve train "
            f"{ctx.info.env_id}:dqn`; docs/benchmarks.md compares the two on Taxi-v4).")


@rule("reward_never_found")
def reward_never_found(ctx: Ctx) -> Finding | None:
    """No episode earned more than one floor value: every evaluation returned it, and every training episode returned
    it too, or (where the environment also charges for mistakes) the training returns rose to it from below and never
    above: the agent learned to avoid what costs but never reached what pays (a new user's Taxi-v4 PPO run: -510 to
    -200, the time limit's -1 a step, never a delivery). Exploration, not optimisation: named from the run's own
    metrics, with or without a preset to revert to. A live run is not judged: a sparse reward is often found late."""
    if ctx.solved or not ctx.finished or ctx.threshold is None:
        return None
    x, ret = ctx.data.finite(M.EP_RETURN_MEAN)
    _, std = ctx.data.finite(M.EP_RETURN_STD)
    if len(ret) < T.TREND_MIN_POINTS.value or (len(ctx.eval_y) and float(np.ptp(ctx.eval_y)) > 0):
        return None
    value = float(ctx.eval_y[0]) if len(ctx.eval_y) else float(ret[0])
    if value >= ctx.threshold:
        return None
    constant = float(np.ptp(ret)) == 0 and not (len(std) and float(np.max(std)) > 0) and float(ret[0]) == value
    # Penalties: the training mean was below the floor and climbed to it (within the trend's material fraction of the
    # way to the threshold), never above it; two evaluations at least say the greedy policy sits on it.
    penalised = (eval_floor(ctx) is not None and float(np.max(ret)) <= value and float(np.min(ret)) < value
                 and float(ret[-1]) >= value - T.TREND_MATERIAL_FRACTION.value * (ctx.threshold - value))
    if not (constant or penalised):
        return None
    if constant:
        evidence = [ev(M.EP_RETURN_MEAN, x, f"every training episode returned {fmt(value)} ({len(ret):,} metrics rows "
                       f"to {int(x[-1]):,} env steps)", "some episodes that reach the reward, so returns vary")]
    else:
        low = int(np.argmin(ret))
        evidence = [ev(M.EP_RETURN_MEAN, x, f"the training episodes' mean rose from {fmt(float(ret[low]))} at "
                       f"{int(x[low]):,} env steps to {fmt(float(ret[-1]))} and was never above {fmt(value)}",
                       f"above {fmt(value)} once episodes reach the reward")]
    if len(ctx.eval_y):
        evidence.append(ev(M.EVAL_RETURN_MEAN, ctx.eval_x, f"all {len(ctx.eval_y)} evaluations returned {fmt(value)}",
                           f"rising toward {fmt(ctx.threshold)}"))
    changes = explore_changes(ctx)
    return Finding(
        id="reward_never_found", severity=Severity.WARNING, score=0.55,
        title="The agent never found a reward: " + ("every episode returned " if constant else
                                                   "the training returns never rose above ") + fmt(value),
        evidence=evidence,
        cause=(f"No episode of the run returned anything but {fmt(value)}: the agent" if constant else
               f"The training returns climbed to {fmt(value)} and stopped there, never above it, as every "
               "evaluation did: the agent learned to avoid what the environment charges for, but")
        + " never reached what the reward pays for, so its updates had no signal to learn it from. A "
        "sparse reward has to be found by exploring before it can be learned; more steps of the same config "
        "explore the same way." + table_hint(ctx),
        suggested_changes=changes,
    )


@rule("reward_rarely_found")
def reward_rarely_found(ctx: Ctx) -> Finding | None:
    """A few training episodes reached the (sparse) reward, too few to learn from: every evaluation returned the same
    value (the greedy policy never reaches it) and the training return's best window stayed near that floor. The
    same mechanism as reward_never_found one step later (a new user's MiniGrid-Empty-16x16 A2C run with 20,000 env
    steps: one paid episode in about 20, every evaluation 0, and nothing but "return has plateaued" said)."""
    floor = eval_floor(ctx)
    if ctx.solved or not ctx.finished or floor is None or ctx.threshold is None or not returns_at_floor(ctx):
        return None  # paid often enough that exploring is not what is missing (or an evaluation paid)
    x, ret = ctx.data.finite(M.EP_RETURN_MEAN)
    if len(ret) < T.TREND_MIN_POINTS.value or float(np.min(ret)) < floor:
        return None
    best = float(np.max(ret))
    if not best > floor:
        return None  # never paid: reward_never_found
    k = int(np.argmax(ret))
    evidence = [ev(M.EP_RETURN_MEAN, x, f"the training episodes' best mean {fmt(best)} at {int(x[k]):,} env steps, "
                   f"{fmt(100 * (best - floor) / (ctx.threshold - floor))}% of the way from {fmt(floor)} to the "
                   f"threshold {fmt(ctx.threshold)}",
                   f"more than {fmt(100 * T.RARE_REWARD_FRACTION.value)}% of the way ({T.RARE_REWARD_FRACTION.source})"),
                ev(M.EVAL_RETURN_MEAN, ctx.eval_x, f"all {len(ctx.eval_y)} evaluations returned {fmt(floor)}",
                   f"rising toward {fmt(ctx.threshold)}")]
    ex, episodes = ctx.data.finite(M.EPISODES)
    few = len(episodes) > 0 and float(episodes[-1]) < T.RARE_REWARD_MIN_EPISODES.value
    changes = [] if few else explore_changes(ctx)
    if few:
        # Episodes that run to their time limit: the budget, not the envs, sets how many tries there are (twice the
        # envs at the same budget gives each half the steps); an entropy bonus on a policy still near uniform only
        # keeps it there. A new user's MiniGrid-Empty-16x16 A2C seed 0: 16 episodes in 20,000 env steps; the same
        # config solved at 120,000 of 128,000, where 16 envs and ent_coef=0.01 failed 80,000 and 128,000.
        evidence.append(ev(M.EPISODES, ex, f"{int(episodes[-1]):,} training episodes finished in the whole run",
                           f">= {T.RARE_REWARD_MIN_EPISODES.value:g} ({T.RARE_REWARD_MIN_EPISODES.source})"))
        budget = ctx.info.max_env_steps
        _, ep_len = ctx.data.finite(M.EP_LEN_MEAN)
        per_episode = float(ep_len[-1]) if len(ep_len) else budget / max(float(episodes[-1]), 1.0)
        needed = round_up(T.RARE_REWARD_MIN_EPISODES.value * per_episode)
        if budget and needed > budget:
            changes.append(change("max_env_steps", budget, int(max(needed, 2 * budget)), "increase",
                                  f"room for {T.RARE_REWARD_MIN_EPISODES.value:g} episodes of "
                                  f"{per_episode:,.0f} env steps each, as long as this run's last ones (those "
                                  "that miss the reward run to the time limit)"))
    return Finding(
        id="reward_rarely_found", severity=Severity.WARNING, score=0.5,
        title="The agent rarely found the reward: a few paid episodes, every evaluation at the floor",
        evidence=evidence,
        cause=f"Only a few training episodes earned more than {fmt(floor)} and the greedy policy never did: the "
        "agent reached what the reward pays for too rarely for its updates to learn the way there. A sparse "
        "reward has to be found often before it can be learned"
        + (f"; in {int(episodes[-1]):,} episodes the run had few tries at it." if few else ".") + table_hint(ctx),
        suggested_changes=changes,
    )
