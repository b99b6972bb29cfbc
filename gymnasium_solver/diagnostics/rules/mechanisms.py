"""Rules that name a broken mechanism from the run's own settings and metrics, so they work where
there is no preset to revert to (an imported run, a user's own config): a critic that gets no
gradient, a value clip or a reward clip that erases the signal, value targets far out of scale,
PPO that takes one step per rollout, rollouts so long the budget holds a handful of updates,
a replay ratio near zero, an off-policy learning rate below anything tuned, a soft target network
that never moves, a TD3 actor that is almost never updated, an SAC entropy target no squashed
policy can reach (or a fixed entropy bonus that pays more than the task), and one-step GAE
advantages. Each sizes the setting against what the algorithm needs (thresholds.py gives every
bound and its source) and cites what the run logged."""

from __future__ import annotations

import math

import numpy as np

from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import Ctx, ev, late_window, late_x
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import action_dims, episode_length, horizon
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.series import median
from gymnasium_solver.diagnostics.suggest import change, fmt, round_sig, start_value
from gymnasium_solver.run_folder import M

ON_POLICY_CRITIC = ("ppo", "a2c")
SOFT_TARGET = ("sac", "td3", "tqc")
REPLAY = ("dqn", "qrdqn", "sac", "td3", "tqc")


def _failing(ctx: Ctx) -> bool:
    return not ctx.solved and not ctx.too_early


def _setting(key: str, value: object, healthy: str) -> Evidence:
    return Evidence(metric=f"config:{key}", observed=f"{key}={value}", healthy=healthy)


def _budget(ctx: Ctx) -> int:
    return int(ctx.config.get("max_env_steps") or ctx.info.max_env_steps or 0)


def _rollout(ctx: Ctx) -> int | None:
    n_steps, n_envs = ctx.setting("n_steps"), ctx.setting("n_envs", 1)
    return int(n_steps) * int(n_envs) if n_steps and n_envs else None


def reward_per_step(ctx: Ctx) -> float | None:
    """Typical |reward| per env step (before reward_scale): |episode return| / episode length over the
    last half of the run (metrics log the environment's own returns)."""
    _, ret = ctx.data.finite(M.EP_RETURN_MEAN)
    length = episode_length(ctx.data)
    if not len(ret) or not length:
        return None
    return abs(median(ret[len(ret) // 2:])) / length


def value_scale(ctx: Ctx) -> tuple[float, str] | None:
    """How large the critic's targets get: |reward| per step x reward_scale x the discount horizon
    (a bound on |V| that the time-limit bootstrap reaches), with how it was computed."""
    per, gamma = reward_per_step(ctx), ctx.setting("gamma")
    if per is None or gamma is None or float(gamma) >= 1:
        return None
    scale = float(ctx.setting("reward_scale", 1.0) or 1.0)
    h = horizon(float(gamma))
    return per * scale * h, (f"|reward| per step {fmt(per)} x reward_scale {fmt(scale)} x horizon 1/(1-gamma) "
                             f"{fmt(h)} = {fmt(per * scale * h)}")


def gradient_steps(ctx: Ctx) -> int | None:
    """Gradient steps an off-policy run made (its logged counter), else None."""
    _, n = ctx.data.finite(M.N_UPDATES)
    return int(n[-1]) if len(n) else None


@rule("critic_not_trained")
def critic_not_trained(ctx: Ctx) -> Finding | None:
    # PPO's starved critic is explained_variance_low (rules/value.py), which also sees the metric.
    vf = ctx.setting("vf_coef")
    if ctx.algo != "a2c" or vf is None or not _failing(ctx) or float(vf) >= T.VF_COEF_MIN.value:
        return None
    evidence = [_setting("vf_coef", vf, f">= {T.VF_COEF_MIN.value:g} ({T.VF_COEF_MIN.source})")]
    w = late_window(ctx, M.EXPLAINED_VARIANCE)
    if w is not None:
        evidence.append(ev(M.EXPLAINED_VARIANCE, late_x(w[0]), f"late median {fmt(median(w[2]))}",
                           f">= {T.EXPLAINED_VARIANCE_LOW.value:g} once the critic learns"))
    return Finding(
        id="critic_not_trained", severity=Severity.WARNING, score=0.9,
        title="The critic gets no gradient: vf_coef is (almost) zero",
        evidence=evidence,
        cause=f"vf_coef={vf} removes the value loss from the update, so the critic keeps its random initial "
        "values: every advantage is a return bootstrapped from a random value minus another random value, "
        "biased by them and without the variance reduction a baseline gives, so the policy gradient is "
        "mostly noise.",
        suggested_changes=[change("vf_coef", vf, T.VF_COEF_SUGGESTED.value, "increase",
                                  f"{T.VF_COEF_SUGGESTED.source}")],
    )


def value_error(ctx: Ctx) -> tuple[float, str] | None:
    """The critic's typical error while it learns: sqrt of the median value loss over the first quarter of
    the updates (the loss is a mean squared error), else the value scale."""
    _, loss = ctx.data.finite(M.VALUE_LOSS)
    if len(loss) >= 4:
        early = float(median(loss[: max(1, len(loss) // 4)]))
        return math.sqrt(max(early, 0.0)), f"sqrt(early median value loss {fmt(early)})"
    scale = value_scale(ctx)
    return None if scale is None else (scale[0], f"value scale {scale[1]}")


@rule("value_clip_too_tight")
def value_clip_too_tight(ctx: Ctx) -> Finding | None:
    clip, error = ctx.setting("clip_range_vf"), value_error(ctx)
    if ctx.algo != "ppo" or clip is None or error is None or not _failing(ctx):
        return None
    if not float(clip) < T.VALUE_CLIP_ERROR_FRACTION.value * error[0]:
        return None
    evidence = [_setting("clip_range_vf", clip, f">= {T.VALUE_CLIP_ERROR_FRACTION.value:.0%} of the critic's typical "
                         f"error ({T.VALUE_CLIP_ERROR_FRACTION.source})"),
                Evidence(metric=M.VALUE_LOSS, observed=f"typical value error {fmt(error[0])} ({error[1]}) = "
                         f"{fmt(error[0] / float(clip))}x clip_range_vf", healthy="a clip near the size of the errors")]
    return Finding(
        id="value_clip_too_tight", severity=Severity.WARNING, score=0.9,
        title="The value clip is far smaller than the critic's errors: the critic learns slowly",
        evidence=evidence,
        cause=f"A sample stops contributing to the value loss once its value moves clip_range_vf={clip} from the "
        "rollout's, a tiny fraction of its error: the critic learns mostly through the samples not yet "
        "clipped and the optimiser's momentum, so for much of the run the advantages rest on an inaccurate baseline "
        "and the policy learns slowly.",
        suggested_changes=[change("clip_range_vf", clip, None, "disable",
                                  "no value clip (SB3's default); 37 details found it does not help")],
    )


@rule("reward_clip_erases_signal")
def reward_clip_erases_signal(ctx: Ctx) -> Finding | None:
    clip, per = ctx.setting("reward_clip"), reward_per_step(ctx)
    if clip is None or per is None or not _failing(ctx) or float(clip) <= 0:
        return None
    scaled = per * float(ctx.setting("reward_scale", 1.0) or 1.0)
    if not scaled > T.REWARD_CLIP_RATIO.value * float(clip):
        return None
    return Finding(
        id="reward_clip_erases_signal", severity=Severity.WARNING, score=0.9,
        title="Reward clipping flattens the rewards: good and bad steps look alike",
        evidence=[_setting("reward_clip", clip, f"typical |reward| per step <= {T.REWARD_CLIP_RATIO.value:g}x "
                           f"the clip ({T.REWARD_CLIP_RATIO.source})"),
                  Evidence(metric=M.EP_RETURN_MEAN, observed=f"typical |reward| per step after reward_scale "
                           f"{fmt(scaled)} = {fmt(scaled / float(clip))}x reward_clip",
                           healthy=f"<= {T.REWARD_CLIP_RATIO.value:g}x")],
        cause=f"Nearly every reward is clipped to +-{clip}, so the learner sees almost the same reward whatever "
        "it does: the shaping that tells a good step from a bad one is cut off.",
        suggested_changes=[change("reward_clip", clip, None, "disable", "learn from the rewards as they are "
                                  "(scale them with reward_scale instead)")],
    )


@rule("value_targets_too_large")
def value_targets_too_large(ctx: Ctx) -> Finding | None:
    scale = value_scale(ctx)
    if ctx.algo != "ppo" or scale is None or not _failing(ctx) or not scale[0] > T.VALUE_SCALE_MAX.value:
        return None
    gamma = float(ctx.setting("gamma"))
    ep = episode_length(ctx.data)
    evidence = [Evidence(metric=M.EP_RETURN_MEAN, observed=f"value scale {scale[1]}",
                         healthy=f"<= {T.VALUE_SCALE_MAX.value:g} ({T.VALUE_SCALE_MAX.source})")]
    w = late_window(ctx, M.VALUE_LOSS)
    if w is not None and median(w[2]) > 100:  # cited only when it shows the scale
        evidence.append(ev(M.VALUE_LOSS, late_x(w[0]), f"late median {fmt(median(w[2]))}", "of order 1-100"))
    if ep is not None and horizon(gamma) > 2 * ep:
        # The horizon is longer than the episodes: values sum (bootstrapped) rewards the episodes never show.
        target_h = max(10.0, ep / 4)
        changes = [change("gamma", gamma, round(1 - 1 / target_h, 4), "decrease",
                          f"a horizon of {fmt(target_h)} steps, a quarter of the ~{fmt(ep)}-step episodes")]
        cause = (f"gamma={gamma} looks {fmt(horizon(gamma))} steps ahead in ~{fmt(ep)}-step episodes: the critic must "
                 "predict discounted sums far longer than any episode, which it can only learn from its own "
                 "bootstrapped guesses at the time limit, so the values and the advantages built on them stay "
                 "noisy for most of the run.")
    else:
        rs = float(ctx.setting("reward_scale", 1.0) or 1.0)
        changes = [change("reward_scale", rs, round_sig(rs * T.VALUE_SCALE_TARGET.value / scale[0]), "decrease",
                          f"value targets near {T.VALUE_SCALE_TARGET.value:g}")]
        shared = ctx.setting("shared_network", False) or ctx.setting("max_grad_norm") is not None
        cause = ("The critic's targets are in the hundreds or more: the value loss is their square, "
                 + ("it dominates the gradient (one global norm clip over actor and critic, or a shared trunk), and "
                    "the policy's share of each update shrinks to nothing while the critic chases the scale." if shared
                    else "and the critic spends most of the run fitting the scale, so the advantages stay noisy."))
    return Finding(id="value_targets_too_large", severity=Severity.WARNING, score=0.85,
                   title="Value targets are far too large for the critic to fit", evidence=evidence, cause=cause,
                   suggested_changes=changes)


@rule("ppo_one_step_per_rollout")
def ppo_one_step_per_rollout(ctx: Ctx) -> Finding | None:
    rollout, epochs, batch = _rollout(ctx), ctx.setting("n_epochs"), ctx.setting("batch_size")
    if ctx.algo != "ppo" or not rollout or not epochs or not batch or not _failing(ctx):
        return None
    minibatches = max(1, round(rollout / int(batch)))
    steps = int(epochs) * minibatches
    if steps > T.PPO_STEPS_PER_ROLLOUT_MIN.value:
        return None
    changes = [change("n_epochs", epochs, 10, "increase", "SB3's default 10 passes over each rollout")]
    if minibatches < 4:
        changes.append(change("batch_size", batch, max(32, rollout // 16), "decrease", "16 minibatches per epoch"))
    return Finding(
        id="ppo_one_step_per_rollout", severity=Severity.WARNING, score=0.88,
        title="PPO takes only one or two gradient steps per rollout",
        evidence=[_setting("n_epochs", epochs, f"n_epochs x minibatches > {T.PPO_STEPS_PER_ROLLOUT_MIN.value:g} "
                           f"({T.PPO_STEPS_PER_ROLLOUT_MIN.source})"),
                  _setting("batch_size", batch, f"{minibatches} minibatch(es) of the {rollout:,}-sample rollout: "
                           f"{steps} gradient step(s) per rollout")],
        cause=f"{steps} gradient step(s) per {rollout:,}-sample rollout use each sample {epochs} time(s): the policy "
        "moves a tiny step per rollout, and the budget runs out long before it has moved far enough to solve.",
        suggested_changes=changes,
    )


# algo -> (longest usual n_steps, fewest updates a budget should hold, shortest n_steps to suggest)
ROLLOUT_BOUNDS = {"a2c": (T.A2C_N_STEPS_MAX, T.A2C_UPDATES_MIN, 5), "ppo": (T.PPO_N_STEPS_MAX, T.PPO_UPDATES_MIN, 32)}


@rule("rollout_too_long")
def rollout_too_long(ctx: Ctx) -> Finding | None:
    rollout, n_steps = _rollout(ctx), ctx.setting("n_steps")
    if ctx.algo not in ROLLOUT_BOUNDS or not rollout or not _failing(ctx):
        return None
    longest, fewest, shortest = ROLLOUT_BOUNDS[ctx.algo]
    updates = _budget(ctx) / rollout
    if int(n_steps) <= longest.value or not updates < fewest.value:
        return None
    n_envs = int(ctx.setting("n_envs", 1))
    # A power of two that leaves ~4x the minimum updates in this budget, within the usual rollouts.
    want = _budget(ctx) / (n_envs * 4 * fewest.value)
    new = int(min(longest.value, max(shortest, 2 ** int(math.log2(max(want, 1))))))
    return Finding(
        id="rollout_too_long", severity=Severity.WARNING, score=0.88,
        title="Rollouts so long the budget holds only a handful of updates",
        evidence=[_setting("n_steps", n_steps, f"<= {longest.value:g} ({longest.source})"),
                  Evidence(metric="run.json:max_env_steps", observed=f"{_budget(ctx):,} env steps / ({n_envs} envs x "
                           f"{n_steps} steps) = {updates:.1f} updates", healthy=f">= {fewest.value:g} "
                           f"({fewest.source})")],
        cause=f"{ctx.algo.upper()} updates once per rollout; these rollouts spend {rollout:,} env steps on each "
        "update, so the run ends after a few updates however good each one is.",
        suggested_changes=[change("n_steps", n_steps, new, "decrease",
                                  f"{_budget(ctx) // (n_envs * new):,} updates in this budget")],
    )


# The fewest gradient steps per env step a replay algorithm should take: 8x below SB3's default.
REPLAY_RATIO_FLOOR = {"dqn": T.REPLAY_RATIO_MIN_DQN, "qrdqn": T.REPLAY_RATIO_MIN_DQN, "sac": T.REPLAY_RATIO_MIN_AC,
                    "td3": T.REPLAY_RATIO_MIN_AC, "tqc": T.REPLAY_RATIO_MIN_AC}


@rule("replay_ratio_too_low")
def replay_ratio_too_low(ctx: Ctx) -> Finding | None:
    freq, grad, n_envs = ctx.setting("train_freq"), ctx.setting("gradient_steps"), ctx.setting("n_envs", 1)
    if ctx.algo not in REPLAY or not isinstance(freq, int) or not isinstance(grad, int) or grad < 0 or not n_envs:
        return None  # gradient_steps -1 = one per env step collected
    # SB3 trains every train_freq steps of the vector env, i.e. every train_freq x n_envs env steps.
    per_call = freq * int(n_envs)
    ratio = grad / per_call
    floor = REPLAY_RATIO_FLOOR[ctx.algo]
    if not _failing(ctx) or not ratio < floor.value:
        return None
    new = max(1, round(per_call * T.REPLAY_RATIO_SUGGESTED.value))
    done = gradient_steps(ctx)
    envs = f" x {n_envs} envs" if int(n_envs) > 1 else ""
    return Finding(
        id="replay_ratio_too_low", severity=Severity.WARNING, score=0.88,
        title="Too few gradient steps per env step: the network barely trains",
        evidence=[_setting("gradient_steps", grad, f"gradient_steps / (train_freq x n_envs) >= {fmt(floor.value)} "
                           f"({floor.source})"),
                  Evidence(metric=M.N_UPDATES, observed=f"{grad} gradient step(s) per {freq} step(s){envs} = "
                           f"{per_call} env steps (ratio {fmt(ratio)})"
                           + (f"; {done:,} in the whole run" if done is not None else ""),
                           healthy=f">= {fmt(floor.value)}")],
        cause=f"The network takes one gradient step per {fmt(1 / ratio)} env steps" + (f", {done:,} in the whole run"
        if done is not None else "") + ": too few to fit the values (tuned runs take one per 1-4 env steps), so the "
        "Q-network (or critic) stays near its initialisation for most of the budget.",
        suggested_changes=[change("gradient_steps", grad, new, "increase",
                                  f"{fmt(T.REPLAY_RATIO_SUGGESTED.value)} gradient steps per env step "
                                  f"({T.REPLAY_RATIO_SUGGESTED.source})")],
    )


def _lr_bounds(algo: str) -> tuple[T.Threshold, T.Threshold] | None:
    """(the floor below which a learning rate is below anything tuned, the rate to suggest) per algorithm;
    PPO's is approx_kl_near_zero (its KL shows the policy not moving)."""
    if algo == "reinforce":
        return T.REINFORCE_LR_MIN, T.REINFORCE_LR_SUGGESTED
    if algo in (*REPLAY, "a2c"):
        return T.OFFPOLICY_LR_MIN, T.OFFPOLICY_LR_SUGGESTED
    return None


@rule("learning_rate_below_tuned")
def learning_rate_below_tuned(ctx: Ctx) -> Finding | None:
    lr, bounds = ctx.setting("learning_rate"), _lr_bounds(ctx.algo)
    if bounds is None or lr is None or not _failing(ctx):
        return None
    floor, suggested = bounds
    start = start_value(lr)
    if not 0 < start < floor.value:
        return None
    done = gradient_steps(ctx)
    return Finding(
        id="learning_rate_below_tuned", severity=Severity.WARNING, score=0.86,
        title="The learning rate is below anything tuned for this algorithm",
        evidence=[_setting("learning_rate", lr, f">= {floor.value:g} ({floor.source})")]
        + ([Evidence(metric=M.N_UPDATES, observed=f"{done:,} gradient steps, each moving a weight by about "
                     f"{fmt(start)} (Adam's step is about the learning rate)",
                     healthy="enough steps x rate to move the weights")] if done is not None else []),
        cause=f"With learning_rate={lr} every gradient step moves the weights so little that the networks "
        "stay near their initialisation over the budget: the agent learns, but far too slowly to solve.",
        suggested_changes=[change("learning_rate", lr, suggested.value, "increase",
                                  f"the middle of the tuned range ({suggested.source})")],
    )


def _target_updates(ctx: Ctx) -> float | None:
    done = gradient_steps(ctx)
    if done is None:
        return None
    every = ctx.setting("policy_delay", 2) if ctx.algo == "td3" else ctx.setting("target_update_interval", 1)
    return done / max(1, int(every or 1))


@rule("target_network_frozen")
def target_network_frozen(ctx: Ctx) -> Finding | None:
    tau = ctx.setting("tau")
    if ctx.algo not in SOFT_TARGET or tau is None or not _failing(ctx) or float(tau) >= 0.005:
        return None
    tau = float(tau)
    updates = _target_updates(ctx)
    half_life = math.inf if tau <= 0 else math.log(0.5) / math.log(1 - tau)
    if updates is not None and tau > 0 and not half_life > T.TARGET_LAG_FRACTION.value * updates:
        return None
    if updates is None and tau > 0:
        return None
    moved = "never moves" if tau <= 0 else f"half-life {fmt(half_life)} target updates"
    return Finding(
        id="target_network_frozen", severity=Severity.WARNING, score=0.9,
        title="The target networks barely move: tau is too small",
        evidence=[_setting("tau", tau, f"a half-life <= {T.TARGET_LAG_FRACTION.value:.0%} of the run's target "
                           f"updates ({T.TARGET_LAG_FRACTION.source})"),
                  Evidence(metric=M.N_UPDATES, observed=f"the target {moved}" + (
                      f" over {updates:,.0f} target updates in the run" if updates is not None else ""),
                           healthy="a target that follows the critic within a small part of the run")],
        cause=f"tau={tau} keeps the target critics at (or near) their random initialisation: every Bellman target "
        "is the reward plus a fixed random function, so the critic never learns values beyond one step and the "
        "actor cannot find behaviour that pays off later.",
        suggested_changes=[change("tau", tau, 0.005, "increase", "SB3's default (TD3 and SAC papers)")],
    )


@rule("actor_updates_starved")
def actor_updates_starved(ctx: Ctx) -> Finding | None:
    delay, done = ctx.setting("policy_delay"), gradient_steps(ctx)
    if ctx.algo != "td3" or delay is None or done is None or not _failing(ctx) or int(delay) <= 2:
        return None
    actor = done / int(delay)
    if not actor < T.ACTOR_UPDATES_MIN.value:
        return None
    return Finding(
        id="actor_updates_starved", severity=Severity.WARNING, score=0.9,
        title="The actor is almost never updated: policy_delay is too long",
        evidence=[_setting("policy_delay", delay, "2 (TD3 paper)"),
                  Evidence(metric=M.N_UPDATES, observed=f"{done:,} critic steps / policy_delay {delay} = "
                           f"{actor:,.0f} actor (and target) updates", healthy=f">= {T.ACTOR_UPDATES_MIN.value:g} "
                           f"({T.ACTOR_UPDATES_MIN.source})")],
        cause=f"TD3 updates its actor and its target networks once every policy_delay={delay} critic steps: the "
        "deterministic policy gets a handful of gradient steps in the whole run and stays near its random start.",
        suggested_changes=[change("policy_delay", delay, 2, "decrease", "the TD3 paper's delay")],
    )


@rule("entropy_target_unreachable")
def entropy_target_unreachable(ctx: Ctx) -> Finding | None:
    target, dims = ctx.setting("target_entropy"), action_dims(ctx.info)
    if ctx.algo not in ("sac", "tqc") or target is None or dims is None or not _failing(ctx):
        return None
    ceiling = dims * math.log(2)
    if not float(target) > ceiling:
        return None
    evidence = [_setting("target_entropy", target, f"<= {fmt(ceiling)} nats: {dims} dim(s) x log 2, the entropy of "
                         "a uniform action in [-1, 1], the most a tanh-squashed policy has")]
    x, coef = ctx.data.finite(M.ENT_COEF)
    if len(coef) >= 2:
        evidence.append(ev(M.ENT_COEF, x, f"{fmt(float(coef[0]))} -> {fmt(float(coef[-1]))}",
                           "settles once the entropy meets its target"))
    return Finding(
        id="entropy_target_unreachable", severity=Severity.WARNING, score=0.92,
        title="SAC's entropy target is higher than any squashed policy can reach",
        evidence=evidence,
        cause=f"The automatic temperature rises while the entropy is below target_entropy={target}; no policy "
        "on a bounded action space can get there, so the entropy bonus grows until it swamps the reward and the "
        "policy stays close to uniform noise.",
        suggested_changes=[change("target_entropy", target, float(-dims), "decrease",
                                  "-(action dims), SAC's automatic target (null sets it too)")],
    )


# The n_steps a one-step rollout is raised to: SB3's A2C default, a short PPO rollout.
USUAL_N_STEPS = {"a2c": 5, "ppo": 128}


@rule("gae_one_step")
def gae_one_step(ctx: Ctx) -> Finding | None:
    """Advantages that look one step ahead: from GAE lambda ~0, or from one-step rollouts (GAE cannot
    look past the rollout's end, where it bootstraps from the critic)."""
    gamma, lam, n_steps = ctx.setting("gamma"), ctx.setting("gae_lambda"), ctx.setting("n_steps")
    if ctx.algo not in ON_POLICY_CRITIC or gamma is None or lam is None or not _failing(ctx):
        return None
    if horizon(float(gamma)) <= T.HORIZON_MIN_STEPS.value:
        return None  # a short discount horizon is the cause: horizon_too_short names it
    credit = horizon(float(gamma) * float(lam))
    if n_steps is not None and int(n_steps) < T.GAE_CREDIT_MIN.value:
        return Finding(
            id="gae_one_step", severity=Severity.WARNING, score=0.88,
            title="One-step rollouts make every advantage a one-step TD error",
            evidence=[_setting("n_steps", n_steps, f">= {T.GAE_CREDIT_MIN.value:g} steps per rollout, so the "
                               f"advantage can look past the next state ({T.GAE_CREDIT_MIN.source})")],
            cause=f"With n_steps={n_steps} each rollout ends after one step per env and every advantage bootstraps "
            "from the critic's estimate of the next state, whatever gae_lambda says: the credit for an action "
            "reaches back only through a critic that lags the policy, and each update follows a handful of "
            "single transitions.",
            suggested_changes=[change("n_steps", n_steps, USUAL_N_STEPS[ctx.algo], "increase",
                                      "a rollout long enough for multi-step advantages")],
        )
    if not credit < T.GAE_CREDIT_MIN.value:
        return None
    return Finding(
        id="gae_one_step", severity=Severity.WARNING, score=0.88,
        title="GAE lambda makes every advantage a one-step TD error",
        evidence=[_setting("gae_lambda", lam, f"credit horizon 1/(1 - gamma x lambda) = {fmt(credit)} step(s); >= "
                           f"{T.GAE_CREDIT_MIN.value:g} ({T.GAE_CREDIT_MIN.source})")],
        cause=f"With gae_lambda={lam} every advantage is a one-step TD error: the credit for an action reaches "
        "back only through the critic's estimate of the next state, which describes the old policy and lags every "
        "change, so the policy gradient is short-sighted and biased where the payoff comes steps later.",
        suggested_changes=[change("gae_lambda", lam, 0.95, "increase", "the GAE paper's and SB3's 0.95")],
    )


@rule("reinforce_envs_outnumber_episodes")
def reinforce_envs_outnumber_episodes(ctx: Ctx) -> Finding | None:
    n_envs, episodes = ctx.setting("n_envs", 1), ctx.setting("episodes_per_update")
    if ctx.algo != "reinforce" or episodes is None or not _failing(ctx) or not int(n_envs) > int(episodes):
        return None
    return Finding(
        id="reinforce_envs_outnumber_episodes", severity=Severity.WARNING, score=0.88,
        title="More environments than episodes per update: each update learns only from the shortest episodes",
        evidence=[_setting("n_envs", n_envs, f"<= episodes_per_update={episodes} (every env's episode is used)")],
        cause=f"A REINFORCE update collects until {episodes} episode(s) have ended across the {n_envs} envs: those are "
        f"the ones that ended first, the shortest, and the steps of the other {int(n_envs) - int(episodes)} envs are "
        "spent and thrown away. Where failing ends an episode early (CartPole, LunarLander) the policy learns "
        "mostly from failures, at several times the env steps per update.",
        suggested_changes=_match_envs_and_episodes(int(n_envs), int(episodes)),
    )


def _match_envs_and_episodes(n_envs: int, episodes: int) -> list[SuggestedChange]:
    """One episode per env per update (a finding's changes go together, so one of the two): raise a
    small update to the env count (a policy gradient from a few episodes is mostly noise), else lower
    the env count to the update size."""
    if episodes < T.EPISODES_PER_UPDATE_MIN.value and n_envs <= 4 * T.EPISODES_PER_UPDATE_MIN.value:
        return [change("episodes_per_update", episodes, n_envs, "increase",
                       f"one episode from each of the {n_envs} envs per update")]
    return [change("n_envs", n_envs, episodes, "decrease", "one episode per env per update: every step is learned from")]


@rule("fixed_entropy_bonus_too_large")
def fixed_entropy_bonus_too_large(ctx: Ctx) -> Finding | None:
    coef, dims, per = ctx.setting("ent_coef"), action_dims(ctx.info), reward_per_step(ctx)
    if ctx.algo not in ("sac", "tqc") or ctx.setting("ent_coef_auto", True) or coef is None or dims is None:
        return None
    if per is None or not _failing(ctx) or float(coef) <= 0:
        return None
    bonus = float(coef) * dims * math.log(2)  # the most a tanh-squashed policy's entropy pays per step
    if not bonus > T.ENTROPY_BONUS_REWARD_RATIO.value * per:
        return None
    return Finding(
        id="fixed_entropy_bonus_too_large", severity=Severity.WARNING, score=0.9,
        title="A fixed entropy coefficient pays more for randomness than the task pays for acting well",
        evidence=[_setting("ent_coef", coef, "learned (ent_coef_auto: true), or small next to the rewards"),
                  Evidence(metric=M.EP_RETURN_MEAN, observed=f"entropy bonus up to {fmt(bonus)} per step (ent_coef x "
                           f"{dims} dim(s) x log 2) vs |reward| per step {fmt(per)}",
                           healthy=f"<= {T.ENTROPY_BONUS_REWARD_RATIO.value:g}x the reward per step "
                           f"({T.ENTROPY_BONUS_REWARD_RATIO.source})")],
        cause=f"With ent_coef={coef} fixed, the soft values reward a uniform policy about as much as a good one, "
        "so the actor stays close to random noise.",
        suggested_changes=[change("ent_coef_auto", False, True, "enable",
                                  "SAC's learned temperature, which falls as the policy reaches its entropy target")],
    )


@rule("minibatch_too_small")
def minibatch_too_small(ctx: Ctx) -> Finding | None:
    batch = ctx.setting("batch_size")
    if ctx.algo not in REPLAY or batch is None or not _failing(ctx) or not int(batch) < T.MINIBATCH_MIN.value:
        return None
    return Finding(
        id="minibatch_too_small", severity=Severity.WARNING, score=0.88,
        title="Replay minibatches of a few transitions: every gradient step is mostly noise",
        evidence=[_setting("batch_size", batch, f">= {T.MINIBATCH_MIN.value:g} ({T.MINIBATCH_MIN.source})")],
        cause=f"Each gradient step regresses the values on {batch} sampled transition(s): the step follows "
        "whichever transitions were drawn, so the Q-values (or critic) wander instead of converging.",
        suggested_changes=[change("batch_size", batch, 64, "increase", "the RL Zoo's classic-control minibatch")],
    )


def best_possible_return(ctx: Ctx) -> tuple[float, str] | None:
    """The most any episode can return when the reward is the same every step (returns a linear function
    of episode length: CartPole +1, Acrobot -1 until the goal), with how it was found; else None.
    A positive reward per step needs the time limit, known once evaluation episodes all run to it."""
    ret, length = ctx.data.raw(M.EP_RETURN_MEAN), ctx.data.raw(M.EP_LEN_MEAN)
    if ret is None or length is None:
        return None
    both = np.isfinite(ret) & np.isfinite(length)
    r, n = ret[both], length[both]
    if len(r) < 5:
        return None
    if float(np.ptp(n)) < T.RETURN_FIT_MIN_SPREAD.value:
        return None
    c, b = np.polyfit(n, r, 1)
    if float(np.max(np.abs(r - (c * n + b)))) > T.RETURN_FIT_TOLERANCE.value * max(float(np.ptp(r)), 1e-9):
        return None
    how = f"returns = {fmt(c)} x episode length {'+' if b >= 0 else '-'} {fmt(abs(b))} over {len(r)} rows"
    if c < 0:
        return c + b, how + ": the shortest episode (1 step) returns the most"
    # A time limit shows as evaluations whose every episode ran the same, longest length.
    _, eval_len = ctx.data.finite(M.EVAL_EP_LEN_MEAN)
    cap = float(np.max(eval_len)) if len(eval_len) else 0.0
    at_cap = int(np.count_nonzero(eval_len == cap)) if len(eval_len) else 0
    if at_cap >= T.TIME_LIMIT_EVALS.value and cap >= float(np.max(n)):
        return c * cap + b, how + f"; {at_cap} evaluations ran every episode to the same {fmt(cap)} steps (the time limit)"
    return None


@rule("threshold_unreachable")
def threshold_unreachable(ctx: Ctx) -> Finding | None:
    if ctx.solved or ctx.threshold is None:
        return None
    best = best_possible_return(ctx)
    if best is None or not ctx.threshold > best[0] + 1e-6:
        return None
    from gymnasium_solver.config.presets import spec_reward_threshold

    registered = spec_reward_threshold(ctx.info.env_id)
    target = registered if registered is not None and registered <= best[0] else round_sig(
        best[0] - 0.05 * abs(best[0]))
    why = (f"Gymnasium's registered threshold for {ctx.info.env_id}" if target == registered
           else "95% of the best return this reward allows")
    return Finding(
        id="threshold_unreachable", severity=Severity.CRITICAL, score=0.99,
        title="The reward threshold is above the best return this environment allows",
        evidence=[Evidence(metric=M.EP_RETURN_MEAN, observed=f"{best[1]}: at most {fmt(best[0])}",
                           healthy=f">= reward_threshold {fmt(ctx.threshold)}"),
                  Evidence(metric=M.EVAL_RETURN_MEAN, observed=f"best evaluation {fmt(ctx.best_eval)}",
                           healthy=f"reaches {fmt(ctx.threshold)} only if the threshold can be reached")],
        cause=f"No policy can return {fmt(ctx.threshold)} here: the reward is the same every step, so a return "
        f"is fixed by the episode's length and the best any episode gets is {fmt(best[0])}. The run cannot "
        "solve whatever it learns; the threshold is wrong, not the agent.",
        suggested_changes=[change("reward_threshold", ctx.threshold, target, "decrease", why)],
    )
