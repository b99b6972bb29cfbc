"""Deterministic evaluation of a policy: N episodes in parallel, one per sub-environment."""

from __future__ import annotations

from typing import NamedTuple

import gymnasium as gym
import numpy as np

from gymnasium_solver.agents.common import ObsNormalizer, Policy
from gymnasium_solver.envs import batch_obs

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
