"""Rules on the size of each update: gradient norm, approximate KL, clip fraction, target-KL stops."""

from __future__ import annotations

import numpy as np

from gymnasium_solver.contract.algorithms import REPLAY
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import (
    Ctx,
    early_late,
    epochs_cut,
    ev,
    late_entropy_fraction,
    late_window,
    late_x,
    strength,
)
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import band_evidence
from gymnasium_solver.diagnostics.rules.config_checks import noise_swamps_the_mean
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import (
    failing,
    gradient_steps,
    ppo_steps_per_rollout,
    setting_evidence,
)
from gymnasium_solver.diagnostics.series import median, split
from gymnasium_solver.diagnostics.suggest import change, fmt, lr_change, round_sig, start_value
from gymnasium_solver.diagnostics.thresholds import Threshold


@rule("grad_norm_explosion")
def grad_norm_explosion(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.GRAD_NORM)
    if w is None:
        return None
    x = w[0]
    e, lm = early_late(w)
    limit = T.GRAD_NORM_GROWTH.value
    if not (e > 0 and lm > limit * e and lm > 1.0):
        return None
    clip = ctx.config.get("max_grad_norm")
    changes = []
    # ReLU layers where the defaults' tanh saturates: nothing bounds the hidden units, so once the critic's targets
    # move, its outputs and the gradients through them can grow without limit (heldout87 c19: A2C, grad norm 65 ->
    # 51,900, value loss 16 -> 14,500). Named only when the run chose ReLU over defaults or a preset that use tanh.
    revert = ctx.deviation("activation")
    relu = revert is not None and revert.value == "relu" and revert.revert.suggested == "tanh"
    if relu and revert is not None:
        changes.append(revert.revert.model_copy(update={"why": "bounded hidden units (tanh saturates; ReLU lets the "
                                                        "activations and the gradients through them grow without limit)"}))
    if clip is None:
        changes.append(change("max_grad_norm", None, 0.5, "enable", "clip the global gradient norm (SB3 default 0.5)"))
    changes.append(lr_change(ctx, 1 / T.LR_STEP.value, "smaller steps stop the runaway"))
    evidence = [ev(M.GRAD_NORM, late_x(x), f"late median {fmt(lm)} vs early median {fmt(e)} ({fmt(lm / e)}x)",
                   f"< {limit:g}x the early median ({T.GRAD_NORM_GROWTH.source})")]
    parts = _part_growth(ctx)
    for column, (px, pe, pl) in parts.items():
        evidence.append(ev(column, late_x(px), f"late median {fmt(pl)} vs early median {fmt(pe)} ({fmt(pl / pe)}x)",
                           f"< {limit:g}x the early median"))
    cause = "The optimisation is diverging: each update makes the next gradient larger."
    if relu:
        cause += (" Its ReLU hidden layers are unbounded where the reference's tanh saturates, so nothing stops the "
                  "activations, the outputs and the gradients growing together.")
    if parts:
        growth = {c.removeprefix(M.GRAD_NORM + "_"): pl / pe for c, (_, pe, pl) in parts.items()}
        most = max(growth, key=lambda part: growth[part])
        others = ", ".join(f"{part} {fmt(g)}x" for part, g in growth.items() if part != most)
        cause += f" It grew most in the {most}'s gradient ({fmt(growth[most])}x{'; ' + others if others else ''})."
    return Finding(
        id="grad_norm_explosion",
        severity=Severity.CRITICAL if clip is None else Severity.WARNING,
        score=0.85 + 0.1 * strength(lm / (limit * e)),
        title="Gradient norm exploded",
        evidence=evidence,
        cause=cause,
        suggested_changes=changes,
    )


_PART_COLUMNS = (M.GRAD_NORM_ACTOR, M.GRAD_NORM_CRITIC, M.GRAD_NORM_TRUNK, M.GRAD_NORM_HEAD)


def _part_growth(ctx: Ctx) -> dict[str, tuple[np.ndarray, float, float]]:
    """Each per-part gradient norm a run logged (grad_norm_parts: true): its steps, early and late medians."""
    out = {}
    for column in _PART_COLUMNS:
        w = late_window(ctx, column)
        if w is None:
            continue
        x, y, late = w
        early = median(split(y)[0])
        if early > 0:
            out[column] = (x, early, median(late))
    return out


@rule("approx_kl_high")
def approx_kl_high(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.APPROX_KL)
    if w is None:
        return None
    x, y, _ = w
    med = median(y)
    limit = T.APPROX_KL_HIGH.value
    if not med > limit:
        return None
    evidence = [ev(M.APPROX_KL, x, f"median {fmt(med)} over {len(y)} updates (max {fmt(float(np.max(y)))})",
                   f"< {limit:g} ({T.APPROX_KL_HIGH.source})")]
    cx, cy = ctx.data.finite(M.CLIP_FRACTION)
    if len(cy):
        evidence.append(ev(M.CLIP_FRACTION, cx, f"median {fmt(median(cy))}", f"< {T.CLIP_FRACTION_HIGH.value:g}"))
    clip = ctx.setting("clip_range")
    lr_fix = lr_change(ctx, 1 / T.LR_STEP.value, "smaller steps (at most 3e-3) keep approx_kl near 0.01-0.02")
    if ctx.algo == "ppo" and clip is not None and start_value(clip) > B.CLIP_RANGE_MAX.value:
        # The clip is what bounds a PPO update; one this wide bounds nothing, whatever the learning rate.
        evidence.append(Evidence(metric="config:clip_range", observed=f"clip_range={clip}",
                                 healthy=f"<= {B.CLIP_RANGE_MAX.value:g} ({B.CLIP_RANGE_MAX.source})"))
        return Finding(
            id="approx_kl_high", severity=Severity.WARNING, score=0.8 + 0.15 * strength(med / limit),
            title="Policy moves too far per update: the clip range is too wide to hold it",
            evidence=evidence,
            cause=f"clip_range={clip} lets the probability ratio move far from 1 before the clip stops the gradient, "
            "so each update leaves the region where the rollout's advantages are valid.",
            suggested_changes=[change("clip_range", clip, 0.2, "decrease", "the PPO paper's 0.2"), lr_fix],
        )
    return Finding(
        id="approx_kl_high",
        severity=Severity.WARNING,
        score=0.8 + 0.15 * strength(med / limit),
        title="Policy moves too far per update (approximate KL sustained too high)",
        evidence=evidence,
        cause="The learning rate is too high for this problem: each update leaves the region where the "
        "rollout's advantages are valid, so progress is erratic or collapses.",
        suggested_changes=[lr_fix],
    )


@rule("clip_fraction_high")
def clip_fraction_high(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.CLIP_FRACTION)
    if w is None:
        return None
    x, y, _ = w
    med = median(y)
    limit = T.CLIP_FRACTION_HIGH.value
    if not med > limit:
        return None
    return Finding(
        id="clip_fraction_high",
        severity=Severity.WARNING,
        score=0.75 + 0.1 * min(1.0, (med - limit) / (1 - limit)),
        title="Most samples hit the PPO clip",
        evidence=[ev(M.CLIP_FRACTION, x, f"median {fmt(med)} over {len(y)} updates",
                     f"< {limit:g} ({T.CLIP_FRACTION_HIGH.source})")],
        cause="Updates are larger than the clip range allows, so most of each update's gradient is discarded; "
        "usually a learning rate (or number of epochs) too high.",
        suggested_changes=[lr_change(ctx, 1 / T.LR_STEP.value, "smaller updates stay inside the clip range")],
    )


@rule("approx_kl_near_zero")
def approx_kl_low(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.APPROX_KL)
    if w is None or ctx.too_early:
        return None
    x, y, _ = w
    med = median(y)
    limit = T.APPROX_KL_LOW.value
    if not med < limit:
        return None
    cut = epochs_cut(ctx)
    if cut is not None and cut < T.EPOCHS_CUT_FRACTION.value:
        return None  # early stopping keeps the KL small; target_kl_stops_epochs explains it
    cx, cy = ctx.data.finite(M.CLIP_FRACTION)
    if len(cy) and median(cy) > T.CLIP_FRACTION_LOW.value * 10:
        return None
    rel = late_entropy_fraction(ctx)
    if rel is not None and rel < T.ENTROPY_COLLAPSE.value:
        return None  # a deterministic policy cannot move: entropy_collapse explains the tiny KL
    if rel is not None and rel > T.ENTROPY_NO_DECREASE.value and start_value(ctx.config.get("ent_coef", 0.0)) > 0:
        return None  # the entropy bonus pins the policy: entropy_bonus_dominates explains it
    if noise_swamps_the_mean(ctx):
        return None  # a std of many half-ranges hides any move of the mean: action_noise_too_high explains it
    per_rollout = ppo_steps_per_rollout(ctx)
    if per_rollout is not None and per_rollout[0] == 1:
        return None  # the KL is measured before each gradient step: with one per rollout it is 0 whatever the rate
    evidence = [ev(M.APPROX_KL, x, f"median {fmt(med)} over {len(y)} updates", f"> {limit:g} ({T.APPROX_KL_LOW.source})")]
    if len(cy):
        evidence.append(ev(M.CLIP_FRACTION, cx, f"median {fmt(median(cy))}", f"> {T.CLIP_FRACTION_LOW.value:g}"))
    return Finding(
        id="approx_kl_near_zero",
        severity=Severity.WARNING,
        score=0.8 + 0.15 * strength(limit / max(med, 1e-12), 2.0),
        title="The policy barely changes between updates (approximate KL near zero)",
        evidence=evidence,
        cause="The learning rate is too low: each update moves the policy by a negligible amount, so the "
        "budget runs out long before it learns.",
        suggested_changes=[lr_change(ctx, T.LR_STEP.value, "larger steps (at least the usual 3e-4) move approx_kl toward 0.01")],
    )


@rule("target_kl_stops_epochs")
def target_kl_stops_epochs(ctx: Ctx) -> Finding | None:
    target = ctx.config.get("target_kl")
    cut = epochs_cut(ctx)
    if target is None or cut is None or not cut < T.EPOCHS_CUT_FRACTION.value:
        return None
    x, y = ctx.data.finite(M.EPOCHS_COMPLETED)
    suggested = max(T.TARGET_KL_SUGGESTED.value, float(target) * 3)
    return Finding(
        id="target_kl_stops_epochs",
        severity=Severity.WARNING,
        score=0.9 + 0.05 * (1 - cut),
        title="Target-KL early stopping cuts most epochs of every update",
        evidence=[ev(M.EPOCHS_COMPLETED, x, f"median {fmt(median(y))} of n_epochs={ctx.config.get('n_epochs')} "
                     f"({fmt(100 * cut)}%) with target_kl={fmt(float(target))}",
                     f">= {100 * T.EPOCHS_CUT_FRACTION.value:g}% of n_epochs ({T.EPOCHS_CUT_FRACTION.source})")],
        cause="target_kl is so small that updates stop after a fraction of an epoch; the policy learns far "
        "more slowly than the learning rate suggests.",
        suggested_changes=[change("target_kl", target, round_sig(suggested), "increase",
                                  "target_kl is usually 0.01-0.05 (Spinning Up; the 37 implementation details study)")],
    )


def _band_evidence(ctx: Ctx, metric: str) -> Evidence | None:
    b = ctx.bands.get(metric)
    return None if b is None else band_evidence(b)


def _lr_fix(ctx: Ctx, why: str) -> SuggestedChange:
    """Back to the preset's learning rate when the run's is higher, else a step into the sane range: for A2C
    and REINFORCE, no higher than the rate suggested for them when too low (A2C's RMSprop is tuned at
    7e-4 to 1.6e-3, a third of Adam's sane maximum)."""
    d = ctx.deviation("learning_rate", 1)
    if d is not None:
        return d.revert
    bounds = _lr_bounds(ctx.algo) if ctx.algo in NO_KL_LR_MAX else None
    return lr_change(ctx, 1 / T.LR_STEP.value, why, sane_max=bounds[1].value if bounds else None)


# Algorithms that log no KL: the learning rate above which, with a collapsed entropy, updates are too large.
NO_KL_LR_MAX = {"reinforce": T.REINFORCE_LR_MAX, "a2c": T.A2C_LR_MAX}


@rule("learning_rate_too_high")
def learning_rate_too_high(ctx: Ctx) -> Finding | None:
    """Updates too large *relative to solved runs* (PPO: KL and clip fraction above the solved band,
    even under the absolute limits), or a REINFORCE rate high enough to collapse the policy."""
    if ctx.solved or ctx.too_early:
        return None
    kl, cf = ctx.bands.get(M.APPROX_KL), ctx.bands.get(M.CLIP_FRACTION)
    hi = T.BAND_RATIO_HIGH.value
    kl_high = kl is not None and kl.observed > hi * kl.band_high
    cf_high = cf is not None and cf.observed > cf.band_high * 1.5
    evidence: list[Evidence] = []
    # Above the absolute limits approx_kl_high / clip_fraction_high already say it; this rule is for
    # updates that are large only next to what works here.
    under_abs = (kl is not None and kl.observed <= T.APPROX_KL_HIGH.value
                 and (cf is None or cf.observed <= T.CLIP_FRACTION_HIGH.value))
    if ctx.algo == "ppo" and kl_high and (cf is None or cf_high) and under_abs:
        evidence = [e for e in (_band_evidence(ctx, M.APPROX_KL), _band_evidence(ctx, M.CLIP_FRACTION)) if e]
    elif ctx.algo in NO_KL_LR_MAX:
        # No KL to show oversized updates: a rate far above tuned ones, with the entropy collapsed, does.
        lr = start_value(ctx.config.get("learning_rate", 0.0))
        rel = late_entropy_fraction(ctx)
        dev = ctx.deviation("learning_rate", 1)
        limit = NO_KL_LR_MAX[ctx.algo]
        big = lr > limit.value or (dev is not None and (dev.ratio or 0) >= T.LR_STEP.value)
        if not (big and rel is not None and rel < T.ENTROPY_COLLAPSE.value * 3):
            return None
        x, g = ctx.data.finite(M.GRAD_NORM)
        evidence = [Evidence(metric="config:learning_rate", observed=f"learning_rate={fmt(lr)}"
                             + (f" ({dev.size})" if dev else ""),
                             healthy=f"<= {limit.value:g} ({limit.source})"),
                    Evidence(metric=M.ENTROPY, observed=f"late entropy {fmt(100 * rel)}% of its reference",
                             healthy=f">= {100 * T.ENTROPY_COLLAPSE.value:g}% until solved")]
        if len(g):
            evidence.append(ev(M.GRAD_NORM, x, f"max {fmt(float(np.max(g)))}, median {fmt(median(g))}",
                               "no spikes far above the median"))
    else:
        return None
    return Finding(
        id="learning_rate_too_high", severity=Severity.WARNING, score=0.87,
        title="Updates are far larger than in runs that solve (learning rate too high)",
        evidence=evidence,
        cause="The learning rate moves the policy much further per update than in solved runs of this environment: "
        "it overshoots, turns near-deterministic and stops exploring before it finds the solution.",
        suggested_changes=[_lr_fix(ctx, "steps the size solved runs take")],
    )


def _lr_bounds(algo: str) -> tuple[Threshold, Threshold] | None:
    """(the floor below which a learning rate is below anything tuned, the rate to suggest) per algorithm;
    PPO's is approx_kl_near_zero (its KL shows the policy not moving)."""
    if algo == "reinforce":
        return B.REINFORCE_LR_MIN, B.REINFORCE_LR_SUGGESTED
    if algo in REPLAY or algo == "a2c":
        return B.OFFPOLICY_LR_MIN, B.OFFPOLICY_LR_SUGGESTED
    return None


@rule("learning_rate_below_tuned")
def learning_rate_below_tuned(ctx: Ctx) -> Finding | None:
    lr, bounds = ctx.setting("learning_rate"), _lr_bounds(ctx.algo)
    if bounds is None or lr is None or not failing(ctx):
        return None
    floor, suggested = bounds
    start = start_value(lr)
    if not 0 < start < floor.value:
        return None
    done = gradient_steps(ctx)
    return Finding(
        id="learning_rate_below_tuned", severity=Severity.WARNING, score=0.86,
        title="The learning rate is below anything tuned for this algorithm",
        evidence=[setting_evidence("learning_rate", lr, f">= {floor.value:g} ({floor.source})")]
        + ([Evidence(metric=M.N_UPDATES, observed=f"{done:,} gradient steps, each moving a weight by about "
                     f"{fmt(start)} (Adam's step is about the learning rate)",
                     healthy="enough steps x rate to move the weights")] if done is not None else []),
        cause=f"With learning_rate={lr} every gradient step moves the weights so little that the networks "
        "stay near their initialisation over the budget: the agent learns, but far too slowly to solve.",
        suggested_changes=[change("learning_rate", lr, suggested.value, "increase",
                                  f"the middle of the tuned range ({suggested.source})")],
    )


@rule("learning_rate_above_tuned")
def learning_rate_above_tuned(ctx: Ctx) -> Finding | None:
    """An off-policy learning rate far above any tuned one (the KL-free algorithms with a policy entropy to show
    overshooting are learning_rate_too_high's)."""
    lr = ctx.setting("learning_rate")
    if ctx.algo not in REPLAY or lr is None or not failing(ctx):
        return None
    start = start_value(lr)
    if not start > B.OFFPOLICY_LR_MAX.value:
        return None
    loss = next((m for m in (M.TD_LOSS, M.CRITIC_LOSS) if ctx.data.has(m)), None)
    evidence = [setting_evidence("learning_rate", lr, f"<= {B.OFFPOLICY_LR_MAX.value:g} ({B.OFFPOLICY_LR_MAX.source})")]
    if loss is not None:
        x, y = ctx.data.finite(loss)
        if len(y) >= 2:
            early, late = split(y)
            evidence.append(ev(loss, x, f"early median {fmt(median(early))}, late median {fmt(median(late))}",
                               "falls as the values fit"))
    return Finding(
        id="learning_rate_above_tuned", severity=Severity.WARNING, score=0.89,
        title="The learning rate is far above anything tuned for this algorithm",
        evidence=evidence,
        cause=f"With learning_rate={lr} each gradient step moves the Q-network (or critic) further than the error "
        "it corrects: the values overshoot the Bellman targets they regress on, the targets move with them, and "
        "the policy that acts on those values never settles.",
        suggested_changes=[change("learning_rate", lr, B.OFFPOLICY_LR_SUGGESTED.value, "decrease",
                                  f"the middle of the tuned range ({B.OFFPOLICY_LR_SUGGESTED.source})")],
    )
