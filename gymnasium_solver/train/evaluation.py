"""Deterministic evaluation of a policy: N episodes in parallel, one per sub-environment."""

from __future__ import annotations

import math
from typing import NamedTuple

import gymnasium as gym
import numpy as np

from gymnasium_solver.agents.common import ObsNormalizer, Policy
from gymnasium_solver.config import Config
from gymnasium_solver.config.presets import spec_time_limit
from gymnasium_solver.envs import batch_obs
from gymnasium_solver.maths.stats import t_cdf

# Safety bound on vector steps per evaluation, for environments without a time limit (an ALE game ends its own
# episodes within 27,000 steps; CliffWalking-v1's never end while the greedy policy walks in a loop). Episodes still
# running at the bound are counted as they stand and reported as unfinished (EvalResult.unfinished).
MAX_EVAL_STEPS = 100_000


class EvalResult(NamedTuple):
    """Returns of the evaluation episodes (undiscounted, unscaled)."""

    return_mean: float
    return_std: float
    ep_len_mean: float
    episodes: int
    returns: list[float]
    unfinished: int = 0  # episodes that had not ended after MAX_EVAL_STEPS: their return is what they had earned


def evaluate(
    policy: Policy, normalizer: ObsNormalizer, env: gym.vector.VectorEnv, seed: int | None
) -> EvalResult:
    """Run exactly one episode in each of ``env``'s sub-envs with the deterministic policy
    (argmax / Gaussian mean), so a bad policy's short episodes end the evaluation early. The policy acts on
    every sub-env's observation each step (a finished one's last); a SyncVectorEnv steps only the sub-envs
    whose episode is still running (_step_running), any other vector env steps them all and the finished
    ones' steps are not counted. At most MAX_EVAL_STEPS vector steps: episodes still running then are
    unfinished."""
    n = env.num_envs
    raw, _ = env.reset(seed=seed)
    sub_envs = env.envs if isinstance(env, gym.vector.SyncVectorEnv) and isinstance(raw, np.ndarray) else None
    returns = np.zeros(n, np.float64)
    lengths = np.zeros(n, np.int64)
    running = np.ones(n, bool)
    for _ in range(MAX_EVAL_STEPS):
        obs = normalizer(batch_obs(raw, policy.spec, n))
        out = policy.act(obs, None, deterministic=True)
        if sub_envs is None:
            raw, reward, term, trunc, _ = env.step(out.env_actions)
        else:
            reward, term, trunc = _step_running(sub_envs, running, out.env_actions, raw)
        returns += np.where(running, reward, 0.0)
        lengths += running
        running &= ~(np.asarray(term, bool) | np.asarray(trunc, bool))
        if not running.any():
            break
    return EvalResult(float(returns.mean()), float(returns.std()), float(lengths.mean()), n, returns.tolist(),
                      int(running.sum()))


def _step_running(sub_envs: list[gym.Env], running: np.ndarray, actions: np.ndarray,
                  raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step the sub-envs whose episode is running, writing their observations into ``raw`` in place: the same
    episodes as stepping the vector env (each sub-env is stepped with its own action and state), without the
    steps of the finished ones. A LunarLander evaluation's crashes end hundreds of steps before its landings,
    and the vector env stepped every crashed lander to the last landing's end."""
    reward = np.zeros(len(sub_envs), np.float64)
    term = np.zeros(len(sub_envs), bool)
    trunc = np.zeros(len(sub_envs), bool)
    for i in np.flatnonzero(running):
        raw[i], reward[i], term[i], trunc[i], _ = sub_envs[i].step(actions[i])
    return reward, term, trunc


# A check whose sample cannot tell its mean from the threshold runs more rounds of confirm_episodes, up to this many
# in all; the test that tells them apart is scipy's one-sample t-test at CONFIRM_ALPHA.
CONFIRM_ROUNDS = 4
CONFIRM_ALPHA = 0.05


def confirm(policy: Policy, normalizer: ObsNormalizer, env: gym.vector.VectorEnv, seed: int,
            episodes: int, threshold: float | None = None) -> EvalResult:
    """At least ``episodes`` more deterministic episodes, in rounds of one episode per sub-env of ``env`` (the
    evaluation's own envs: nothing more is built), seeded from ``seed`` on: their pooled returns. What checks an
    evaluation that reached the threshold: that evaluation was picked for being high. With ``threshold``, while the
    episodes so far cannot tell their mean from it (``settled``), ``episodes`` more, up to CONFIRM_ROUNDS times as
    many: a FrozenLake-v1 DQN policy averaged 0.72 over 50 episodes and 0.62 over 200, threshold 0.7."""
    returns: list[float] = []
    lengths: list[float] = []
    unfinished = 0
    target = episodes
    while len(returns) < target:
        r = evaluate(policy, normalizer, env, seed + len(returns))
        returns += r.returns
        lengths.append(r.ep_len_mean * r.episodes)
        unfinished += r.unfinished
        if (len(returns) >= target and threshold is not None and target < CONFIRM_ROUNDS * episodes
                and not settled(returns, threshold)):
            target += episodes
    a = np.asarray(returns, np.float64)
    return EvalResult(float(a.mean()), float(a.std()), float(sum(lengths)) / len(a), len(a), returns, unfinished)


def settled(returns: list[float], threshold: float) -> bool:
    """Whether ``returns`` tell their mean from ``threshold``: all equal (nothing varies), or the one-sample t-test
    rejects a mean equal to it at CONFIRM_ALPHA. The test's p-value is ``scipy.stats.ttest_1samp``'s
    (tests/test_env_reach.py holds the two equal), from maths.stats.t_cdf, which spares a trainer the import of
    scipy.stats after a solve."""
    a = np.asarray(returns, np.float64)
    if len(a) < 2 or float(a.std()) == 0.0:
        return True
    t = (float(a.mean()) - threshold) / (float(a.std(ddof=1)) / math.sqrt(len(a)))
    return 2.0 * t_cdf(-abs(t), len(a) - 1) < CONFIRM_ALPHA


def unfinished_message(cfg: Config, result: EvalResult) -> str:
    """The run warning for an evaluation whose episodes had not ended at its bound: what its figures mean, why
    (no time limit), and the setting that gives one."""
    limit = cfg.env_kwargs.get("max_episode_steps") or spec_time_limit(cfg.env_id)
    why = (f"its time limit of {limit:,} steps is above the evaluation's bound" if limit else
           f"{cfg.env_id}'s Gymnasium spec sets no time limit (max_episode_steps) and the config none, so an episode "
           "ends only when the environment ends it, and this policy never got there")
    return (f"{result.unfinished} of {result.episodes} evaluation episodes had not ended after "
            f"{MAX_EVAL_STEPS:,} steps; the evaluation counts what they had earned by then, so its return "
            f"is not an episode's ({why}). Give episodes an end: --set env_kwargs.max_episode_steps=N (Gymnasium's "
            "TimeLimit), N a few times the steps a good episode takes")


# An evaluation that steps this many times the env steps trained between evaluations (and at least COSTLY_EVAL_MIN
# env steps) is most of the run's time: the run says so once. Counted in env steps, not seconds, so the warning is the
# same on every machine and load (a greedy policy that stands still until a long time limit: Breakout's, before
# atari_wrappers pressed FIRE, played 10 episodes to the ALE's truncation at 27,000 steps each, 270,000 env steps per
# evaluation of a 1,024-step budget).
COSTLY_EVAL_RATIO = 10
COSTLY_EVAL_MIN = 50_000


def costly_evaluation_message(result: EvalResult, trained: int) -> str | None:
    """The run warning for an evaluation that steps far more than the ``trained`` env steps since the previous
    evaluation (or the start), or None."""
    stepped = round(result.ep_len_mean * result.episodes)
    # trained == 0: a final evaluation at the previous one's env steps, which says nothing about the ratio.
    if result.unfinished or trained <= 0 or stepped < COSTLY_EVAL_MIN or stepped < COSTLY_EVAL_RATIO * trained:
        return None
    return (f"this evaluation played {result.episodes} episodes of {result.ep_len_mean:,.0f} steps on average "
            f"({stepped:,} env steps), {stepped / trained:,.0f} times the {trained:,} env steps trained since the "
            "previous evaluation, so evaluating takes most of this run's time; lower eval_episodes, raise "
            "eval_freq, or end episodes sooner (--set env_kwargs.max_episode_steps=N)")
