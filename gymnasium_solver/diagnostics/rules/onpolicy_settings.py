"""Settings rules for the on-policy algorithms (PPO, A2C, REINFORCE), named from the run's own settings
and metrics so they work with no preset to revert to: a critic with no gradient, a value clip far below
the critic's errors, a reward clip that flattens the rewards, value targets out of scale, PPO with one
or two gradient steps per rollout or far too many passes over it, rollouts too long for the budget, one-step advantages, and REINFORCE
with more envs than episodes per update. Each sizes a setting against what the algorithm needs
(setting_bounds.py gives every bound and its source) and cites what the run logged."""

from __future__ import annotations

import math

from gymnasium_solver.contract.algorithms import GAE, ONE_STEP_UPDATE
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import Ctx, early_late, ev, late_window, late_x
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import episode_length, horizon
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import (
    budget_steps,
    failing,
    ppo_steps_per_rollout,
    reward_per_step,
    rollout_size,
    setting_evidence,
    value_scale,
)
from gymnasium_solver.diagnostics.series import median
from gymnasium_solver.diagnostics.suggest import change, fmt, round_sig


@rule("critic_not_trained")
def critic_not_trained(ctx: Ctx) -> Finding | None:
    # PPO's starved critic is explained_variance_low (rules/value.py), which also sees the metric.
    vf = ctx.setting("vf_coef")
    if ctx.algo != "a2c" or vf is None or not failing(ctx) or float(vf) >= B.VF_COEF_MIN.value:
        return None
    evidence = [setting_evidence("vf_coef", vf, f">= {B.VF_COEF_MIN.value:g} ({B.VF_COEF_MIN.source})")]
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
    if ctx.algo != "ppo" or clip is None or error is None or not failing(ctx):
        return None
    if not float(clip) < B.VALUE_CLIP_ERROR_FRACTION.value * error[0]:
        return None
    evidence = [setting_evidence("clip_range_vf", clip, f">= {B.VALUE_CLIP_ERROR_FRACTION.value:.0%} of the critic's typical "
                         f"error ({B.VALUE_CLIP_ERROR_FRACTION.source})"),
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
    if clip is None or per is None or not failing(ctx) or float(clip) <= 0:
        return None
    scaled = per * float(ctx.setting("reward_scale", 1.0) or 1.0)
    if not scaled > B.REWARD_CLIP_RATIO.value * float(clip):
        return None
    return Finding(
        id="reward_clip_erases_signal", severity=Severity.WARNING, score=0.9,
        title="Reward clipping flattens the rewards: good and bad steps look alike",
        evidence=[setting_evidence("reward_clip", clip, f"typical |reward| per step <= {B.REWARD_CLIP_RATIO.value:g}x "
                           f"the clip ({B.REWARD_CLIP_RATIO.source})"),
                  Evidence(metric=M.EP_RETURN_MEAN, observed=f"typical |reward| per step after reward_scale "
                           f"{fmt(scaled)} = {fmt(scaled / float(clip))}x reward_clip",
                           healthy=f"<= {B.REWARD_CLIP_RATIO.value:g}x")],
        cause=f"Nearly every reward is clipped to +-{clip}, so the learner sees almost the same reward whatever "
        "it does: the shaping that tells a good step from a bad one is cut off.",
        suggested_changes=[change("reward_clip", clip, None, "disable", "learn from the rewards as they are "
                                  "(scale them with reward_scale instead)")],
    )


@rule("value_targets_too_large")
def value_targets_too_large(ctx: Ctx) -> Finding | None:
    if ctx.algo not in GAE or not failing(ctx):  # the actor-critics: a critic fitted to the value loss
        return None
    scale = value_scale(ctx)
    w = late_window(ctx, M.VALUE_LOSS)
    early, loss = early_late(w) if w is not None else (None, None)
    # Two views of one mechanism: the targets' size from the rewards (|reward| per step x scale x horizon, which
    # shaping rewards that cancel over an episode understate: heldout84 c03's SheepHerder, 148 from the returns
    # with value losses of 2,000-12,000), and the critic's own squared error, measured.
    big_scale = scale is not None and scale[0] > B.VALUE_SCALE_MAX.value
    # Large from the start, not grown there: a value loss that climbed 100x or more is a critic diverging
    # (value_loss_exploding, grad_norm_explosion), whatever the rewards' scale (heldout87 c19: ReLU layers, A2C's
    # value loss 16 -> 14,500 with a value scale of 6).
    grew = early is not None and loss is not None and early > 0 and loss > T.VALUE_LOSS_GROWTH.value * early
    big_loss = loss is not None and loss > B.VALUE_LOSS_MAX.value and not grew
    if not (big_scale or big_loss):
        return None
    gamma = ctx.setting("gamma")
    ep = episode_length(ctx.data)
    evidence = []
    if scale is not None:
        evidence.append(Evidence(metric=M.EP_RETURN_MEAN, observed=f"value scale {scale[1]}",
                                 healthy=f"<= {B.VALUE_SCALE_MAX.value:g} ({B.VALUE_SCALE_MAX.source})"))
    if w is not None and loss is not None and loss > 100:  # cited only when it shows the scale (w: for its steps)
        evidence.append(ev(M.VALUE_LOSS, late_x(w[0]), f"late median {fmt(loss)}",
                           f"<= {B.VALUE_LOSS_MAX.value:g} ({B.VALUE_LOSS_MAX.source})" if big_loss else "of order 1-100"))
    rs = float(ctx.setting("reward_scale", 1.0) or 1.0)
    if big_scale and gamma is not None and ep is not None and horizon(float(gamma)) > 2 * ep:
        # The horizon is longer than the episodes: values sum (bootstrapped) rewards the episodes never show.
        target_h = max(10.0, ep / 4)
        changes = [change("gamma", float(gamma), round(1 - 1 / target_h, 4), "decrease",
                          f"a horizon of {fmt(target_h)} steps, a quarter of the ~{fmt(ep)}-step episodes")]
        cause = (f"gamma={gamma} looks {fmt(horizon(float(gamma)))} steps ahead in ~{fmt(ep)}-step episodes: the critic must "
                 "predict discounted sums far longer than any episode, which it can only learn from its own "
                 "bootstrapped guesses at the time limit, so the values and the advantages built on them stay "
                 "noisy for most of the run.")
    else:
        if big_scale and scale is not None:
            changes = [change("reward_scale", rs, round_sig(rs * B.VALUE_SCALE_TARGET.value / scale[0]), "decrease",
                              f"value targets near {B.VALUE_SCALE_TARGET.value:g}")]
        elif rs > 1:  # the user scaled the rewards up: the environment's own rewards are the first thing to try
            changes = [change("reward_scale", rs, 1.0, "decrease", "the environment's own rewards")]
        else:  # the critic's error e = sqrt(loss): scale it to a few units
            err = math.sqrt(loss or 1.0)
            changes = [change("reward_scale", rs, round_sig(rs * 3.0 / err), "decrease",
                              f"critic errors of a few units instead of ~{fmt(err)}")]
        shared = (ctx.algo == "a2c" or ctx.setting("shared_network", False)
                  or ctx.setting("max_grad_norm") is not None)
        cause = ("The critic's targets are in the hundreds or more: the value loss is their square, "
                 + ("it dominates the gradient (one global norm clip over actor and critic, or a shared trunk), and "
                    "the policy's share of each update shrinks to nothing while the critic chases the scale." if shared
                    else "and the critic spends most of the run fitting the scale, so the advantages stay noisy."))
    return Finding(id="value_targets_too_large", severity=Severity.WARNING, score=0.9 if big_loss else 0.85,
                   title="Value targets are far too large for the critic to fit", evidence=evidence, cause=cause,
                   suggested_changes=changes)


@rule("reward_scale_shrinks_gradient")
def reward_scale_shrinks_gradient(ctx: Ctx) -> Finding | None:
    # A2C and REINFORCE step along advantages x grad log-prob: with the advantages not normalised, a reward scaled
    # down 100x or more scales every policy step down with it (heldout88 c17: A2C, reward_scale=0.001, the gradient
    # norm 0.21 -> 0.005, the greedy policy at its first behaviour for 120,000 env steps). PPO normalises them.
    rs = float(ctx.setting("reward_scale", 1.0) or 1.0)
    if ctx.algo not in ONE_STEP_UPDATE or not failing(ctx) or ctx.setting("normalize_advantages", False) \
            or not 0 < rs <= B.REWARD_SCALE_SHRINKS.value:
        return None
    scale = value_scale(ctx)
    if scale is not None and scale[0] >= B.VALUE_SCALE_SMALL.value:
        return None  # the environment's rewards are large enough that the scaled ones are of a normal size
    evidence = [setting_evidence("reward_scale", rs, f"> {B.REWARD_SCALE_SHRINKS.value:g} with advantages not "
                                 f"normalised ({B.REWARD_SCALE_SHRINKS.source})")]
    if scale is not None:
        evidence.append(Evidence(metric=M.EP_RETURN_MEAN, observed=f"value scale {scale[1]}",
                                 healthy=f">= {B.VALUE_SCALE_SMALL.value:g} ({B.VALUE_SCALE_SMALL.source})"))
    w = late_window(ctx, M.GRAD_NORM)
    if w is not None:
        evidence.append(ev(M.GRAD_NORM, late_x(w[0]), f"late median {fmt(median(w[2]))}",
                           "the size the unscaled rewards give"))
    return Finding(
        id="reward_scale_shrinks_gradient", severity=Severity.WARNING, score=0.9,
        title="The reward scale shrinks every policy step (advantages not normalised)",
        evidence=evidence,
        cause=f"reward_scale={rs:g} multiplies the advantages, and {ctx.algo.upper()} follows advantages times "
        "the log-probability's gradient without normalising them: its policy gradient is "
        f"{fmt(1 / rs)}x smaller than the environment's own rewards give. The optimiser's running scale (RMSprop, "
        "Adam) makes up for that only down to its epsilon, and not at all against an entropy bonus or the critic's "
        "share of the update, so the policy barely moves in the budget.",
        suggested_changes=[change("reward_scale", rs, 1.0, "increase", "the environment's own rewards")],
    )


@rule("ppo_one_step_per_rollout")
def ppo_one_step_per_rollout(ctx: Ctx) -> Finding | None:
    per_rollout = ppo_steps_per_rollout(ctx)
    if per_rollout is None or not failing(ctx):
        return None
    steps, minibatches = per_rollout
    rollout, epochs, batch = rollout_size(ctx) or 0, ctx.setting("n_epochs"), ctx.setting("batch_size")
    if steps > B.PPO_STEPS_PER_ROLLOUT_MIN.value:
        return None
    changes = [change("n_epochs", epochs, 10, "increase", "SB3's default 10 passes over each rollout")]
    if minibatches < 4:
        changes.append(change("batch_size", batch, max(32, rollout // 16), "decrease", "16 minibatches per epoch"))
    return Finding(
        id="ppo_one_step_per_rollout", severity=Severity.WARNING, score=0.88,
        title="PPO takes only one or two gradient steps per rollout",
        evidence=[setting_evidence("n_epochs", epochs, f"n_epochs x minibatches > {B.PPO_STEPS_PER_ROLLOUT_MIN.value:g} "
                           f"({B.PPO_STEPS_PER_ROLLOUT_MIN.source})"),
                  setting_evidence("batch_size", batch, f"{minibatches} minibatch(es) of the {rollout:,}-sample rollout: "
                           f"{steps} gradient step(s) per rollout")],
        cause=f"{steps} gradient step(s) per {rollout:,}-sample rollout use each sample {epochs} time(s): the policy "
        "moves a tiny step per rollout, and the budget runs out long before it has moved far enough to solve.",
        suggested_changes=changes,
    )


@rule("ppo_too_many_epochs")
def ppo_too_many_epochs(ctx: Ctx) -> Finding | None:
    epochs = ctx.setting("n_epochs")
    if ctx.algo != "ppo" or not epochs or not failing(ctx) or not int(epochs) > B.PPO_EPOCHS_MAX.value:
        return None
    evidence = [setting_evidence("n_epochs", epochs, f"<= {B.PPO_EPOCHS_MAX.value:g} ({B.PPO_EPOCHS_MAX.source})")]
    x, kl = ctx.data.finite(M.APPROX_KL)
    if len(kl):
        evidence.append(ev(M.APPROX_KL, x, f"median {fmt(median(kl))} per update", f"< {T.APPROX_KL_HIGH.value:g} "
                           f"({T.APPROX_KL_HIGH.source})"))
    return Finding(
        id="ppo_too_many_epochs", severity=Severity.WARNING, score=0.96,
        title="PPO passes over each rollout far too many times",
        evidence=evidence,
        cause=f"n_epochs={epochs} fits the policy to one rollout's samples {epochs} times over: it drifts far from the "
        "policy that collected them (the clip stops the gradient of samples already moved, while the others keep "
        "pulling), so each update overfits one batch and the policy lurches instead of improving. A smaller "
        "learning rate would only slow the same drift.",
        suggested_changes=[change("n_epochs", epochs, int(B.PPO_EPOCHS_SUGGESTED.value), "decrease",
                                  B.PPO_EPOCHS_SUGGESTED.source)],
    )


# algo -> (longest usual n_steps, fewest updates a budget should hold, shortest n_steps to suggest)
ROLLOUT_BOUNDS = {"a2c": (B.A2C_N_STEPS_MAX, B.A2C_UPDATES_MIN, 5), "ppo": (B.PPO_N_STEPS_MAX, B.PPO_UPDATES_MIN, 32)}


@rule("rollout_too_long")
def rollout_too_long(ctx: Ctx) -> Finding | None:
    rollout, n_steps = rollout_size(ctx), ctx.setting("n_steps")
    if ctx.algo not in ROLLOUT_BOUNDS or not rollout or not failing(ctx):
        return None
    longest, fewest, shortest = ROLLOUT_BOUNDS[ctx.algo]
    updates = budget_steps(ctx) / rollout
    if int(n_steps) <= longest.value or not updates < fewest.value:
        return None
    n_envs = int(ctx.setting("n_envs", 1))
    # A power of two that leaves ~4x the minimum updates in this budget, within the usual rollouts.
    want = budget_steps(ctx) / (n_envs * 4 * fewest.value)
    new = int(min(longest.value, max(shortest, 2 ** int(math.log2(max(want, 1))))))
    return Finding(
        id="rollout_too_long", severity=Severity.WARNING, score=0.88,
        title="Rollouts so long the budget holds only a handful of updates",
        evidence=[setting_evidence("n_steps", n_steps, f"<= {longest.value:g} ({longest.source})"),
                  Evidence(metric="run.json:max_env_steps", observed=f"{budget_steps(ctx):,} env steps / ({n_envs} envs x "
                           f"{n_steps} steps) = {updates:.1f} updates", healthy=f">= {fewest.value:g} "
                           f"({fewest.source})")],
        cause=f"{ctx.algo.upper()} updates once per rollout; these rollouts spend {rollout:,} env steps on each "
        "update, so the run ends after a few updates however good each one is.",
        suggested_changes=[change("n_steps", n_steps, new, "decrease",
                                  f"{budget_steps(ctx) // (n_envs * new):,} updates in this budget")],
    )


# The n_steps a one-step rollout is raised to: SB3's A2C default, a short PPO rollout.
USUAL_N_STEPS = {"a2c": 5, "ppo": 128}


@rule("gae_one_step")
def gae_one_step(ctx: Ctx) -> Finding | None:
    """Advantages that look one step ahead: from GAE lambda ~0, or from one-step rollouts (GAE cannot
    look past the rollout's end, where it bootstraps from the critic)."""
    gamma, lam, n_steps = ctx.setting("gamma"), ctx.setting("gae_lambda"), ctx.setting("n_steps")
    if ctx.algo not in GAE or gamma is None or lam is None or not failing(ctx):
        return None
    if horizon(float(gamma)) <= T.HORIZON_MIN_STEPS.value:
        return None  # a short discount horizon is the cause: horizon_too_short names it
    credit = horizon(float(gamma) * float(lam))
    if n_steps is not None and int(n_steps) < B.GAE_CREDIT_MIN.value:
        return Finding(
            id="gae_one_step", severity=Severity.WARNING, score=0.88,
            title="One-step rollouts make every advantage a one-step TD error",
            evidence=[setting_evidence("n_steps", n_steps, f">= {B.GAE_CREDIT_MIN.value:g} steps per rollout, so the "
                               f"advantage can look past the next state ({B.GAE_CREDIT_MIN.source})")],
            cause=f"With n_steps={n_steps} each rollout ends after one step per env and every advantage bootstraps "
            "from the critic's estimate of the next state, whatever gae_lambda says: the credit for an action "
            "reaches back only through a critic that lags the policy, and each update follows a handful of "
            "single transitions.",
            suggested_changes=[change("n_steps", n_steps, USUAL_N_STEPS[ctx.algo], "increase",
                                      "a rollout long enough for multi-step advantages")],
        )
    if not credit < B.GAE_CREDIT_MIN.value:
        return None
    return Finding(
        id="gae_one_step", severity=Severity.WARNING, score=0.88,
        title="GAE lambda makes every advantage a one-step TD error",
        evidence=[setting_evidence("gae_lambda", lam, f"credit horizon 1/(1 - gamma x lambda) = {fmt(credit)} step(s); >= "
                           f"{B.GAE_CREDIT_MIN.value:g} ({B.GAE_CREDIT_MIN.source})")],
        cause=f"With gae_lambda={lam} every advantage is a one-step TD error: the credit for an action reaches "
        "back only through the critic's estimate of the next state, which describes the old policy and lags every "
        "change, so the policy gradient is short-sighted and biased where the payoff comes steps later.",
        suggested_changes=[change("gae_lambda", lam, 0.95, "increase", "the GAE paper's and SB3's 0.95")],
    )


@rule("reinforce_envs_outnumber_episodes")
def reinforce_envs_outnumber_episodes(ctx: Ctx) -> Finding | None:
    n_envs, episodes = ctx.setting("n_envs", 1), ctx.setting("episodes_per_update")
    if ctx.algo != "reinforce" or episodes is None or not failing(ctx) or not int(n_envs) > int(episodes):
        return None
    return Finding(
        id="reinforce_envs_outnumber_episodes", severity=Severity.WARNING, score=0.88,
        title="More environments than episodes per update: each update learns only from the shortest episodes",
        evidence=[setting_evidence("n_envs", n_envs, f"<= episodes_per_update={episodes} (every env's episode is used)")],
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
    if episodes < B.EPISODES_PER_UPDATE_MIN.value and n_envs <= 4 * B.EPISODES_PER_UPDATE_MIN.value:
        return [change("episodes_per_update", episodes, n_envs, "increase",
                       f"one episode from each of the {n_envs} envs per update")]
    return [change("n_envs", n_envs, episodes, "decrease", "one episode per env per update: every step is learned from")]
