"""Rules on the policy's randomness: entropy collapse, entropy that never decreases."""

from __future__ import annotations

import numpy as np

from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import (
    Ctx,
    entropy_reference,
    ev,
    late_window,
    late_x,
    policy_unmoved,
)
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.series import median, split
from gymnasium_solver.diagnostics.suggest import change, fmt, lr_change, round_sig, start_value


@rule("entropy_collapse")
def entropy_collapse(ctx: Ctx) -> Finding | None:
    if ctx.solved:
        return None
    ref = entropy_reference(ctx)
    w = late_window(ctx, M.ENTROPY)
    if ref is None or w is None:
        return None
    x, _, late = w
    rel = median(late) / ref[0]
    if not rel < T.ENTROPY_COLLAPSE.value:
        return None
    ent = ctx.config.get("ent_coef", 0.0)
    cur = start_value(ent)
    suggested = 0.01 if cur <= 0 else round_sig(cur * 3)
    evidence = [ev(M.ENTROPY, late_x(x), f"late median {fmt(median(late))} = {fmt(100 * rel)}% of {ref[1]} {fmt(ref[0])}",
                   f">= {100 * T.ENTROPY_COLLAPSE.value:g}% until solved ({T.ENTROPY_COLLAPSE.source})")]
    ent_change = change("ent_coef", ent, suggested, "increase", "an entropy bonus keeps the policy exploring")
    spike = _spike_before_collapse(ctx)
    if spike is not None:
        evidence.extend(spike)
        return Finding(
            id="entropy_collapse",
            severity=Severity.WARNING,
            score=0.9,
            title="Oversized early updates made the policy deterministic (entropy collapse)",
            evidence=evidence,
            cause="The learning rate is too high: the first updates moved the policy so far that it became "
            "deterministic, and a deterministic policy gets no gradient to recover.",
            suggested_changes=[lr_change(ctx, 1 / T.LR_STEP.value, "small updates keep the policy stochastic while it learns"),
                               ent_change],
        )
    # With no reward threshold nothing says whether it had learned enough first: a converged policy is nearly
    # deterministic too (a new user's Blackjack-v1 PPO run, whose best play is a fixed rule, was told it collapsed
    # "before solving", a warning).
    judged = ctx.threshold is not None
    return Finding(
        id="entropy_collapse",
        severity=Severity.WARNING if judged else Severity.INFO,
        score=0.7 if judged else 0.3,
        title="The policy became nearly deterministic " + (
            "before solving (entropy collapse)" if judged else "(no reward threshold to say whether too early)"),
        evidence=evidence,
        cause="The policy stopped exploring and is stuck on what it knows." if judged else
        "The policy stopped exploring. With no reward threshold nothing says whether it had learned enough first: "
        "if its returns are what you expect, a deterministic policy is where learning ends; if not, it is stuck on "
        "what it knows, and an entropy bonus keeps it trying (--set reward_threshold=R has the run judged).",
        suggested_changes=[ent_change],
    )


def _spike_before_collapse(ctx: Ctx) -> list[Evidence] | None:
    """Evidence of oversized updates in the first quarter of the run (KL or clip fraction spikes)."""
    out = []
    for name, limit in ((M.APPROX_KL, T.EARLY_SPIKE_KL.value), (M.CLIP_FRACTION, T.EARLY_SPIKE_CLIP.value)):
        x, y = ctx.data.finite(name)
        if not len(y):
            continue
        early_x, early = split(x)[0], split(y)[0]
        peak = float(np.max(early))
        if peak > limit:
            out.append(ev(name, early_x, f"early max {fmt(peak)}", f"< {limit:g} ({T.EARLY_SPIKE_KL.source})"))
    return out or None


@rule("entropy_bonus_dominates", "entropy_no_decrease")
def entropy_no_decrease(ctx: Ctx) -> Finding | None:
    if ctx.solved or ctx.too_early:
        return None
    ref = entropy_reference(ctx)
    w = late_window(ctx, M.ENTROPY)
    if ref is None or w is None or not policy_unmoved(ctx):
        return None
    x, _, late = w
    rel = median(late) / ref[0]
    ent = ctx.config.get("ent_coef", 0.0)
    cur = start_value(ent)
    evidence = [ev(M.ENTROPY, late_x(x), f"late median {fmt(median(late))} = {fmt(100 * rel)}% of {ref[1]} {fmt(ref[0])}",
                   f"< {100 * T.ENTROPY_NO_DECREASE.value:g}% once learning ({T.ENTROPY_NO_DECREASE.source})")]
    # A bonus inside the range tuned configs use (0.01 on LunarLander) does not outweigh a reward the
    # policy is learning from: a policy that stays uniform under it is not updating enough.
    if cur > B.ENT_COEF_TUNED_MAX.value:
        evidence.append(Evidence(metric="config:ent_coef", observed=f"ent_coef={fmt(cur)}",
                                 healthy="small enough that the reward, not randomness, drives the policy"))
        return Finding(
            id="entropy_bonus_dominates",
            severity=Severity.WARNING,
            score=0.92,
            title="Entropy never decreases: the entropy bonus outweighs the reward",
            evidence=evidence,
            cause=f"ent_coef={fmt(cur)} rewards randomness more than the task rewards acting well, so the policy "
            "stays near uniform.",
            suggested_changes=[change("ent_coef", ent, min(round_sig(cur / 10), 0.01), "decrease",
                                      "a bonus this small still explores but lets the reward dominate")],
        )
    return Finding(
        id="entropy_no_decrease",
        severity=Severity.WARNING,
        score=0.6,
        title="Entropy never decreases: the policy is not committing to any action",
        evidence=evidence,
        cause="The policy is not learning (updates too small, or no usable advantage signal).",
        suggested_changes=[lr_change(ctx, 3.0, "larger updates let the policy commit")],
    )
