"""Rules on the critic: explained variance and value loss."""

from __future__ import annotations

import numpy as np

from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import (
    Ctx,
    early_late,
    epochs_cut,
    ev,
    late_window,
    late_x,
    returns_at_floor,
)
from gymnasium_solver.diagnostics.models import Finding, Severity
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.series import median
from gymnasium_solver.diagnostics.suggest import change, fmt, lr_change, round_sig


@rule("explained_variance_collapse", "explained_variance_low")
def explained_variance(ctx: Ctx) -> Finding | None:
    # PPO only: a REINFORCE baseline fitted to Monte-Carlo returns explains ~1-2% of their variance
    # even on healthy solving runs (measured on our corpus), so the thresholds do not transfer.
    w = late_window(ctx, M.EXPLAINED_VARIANCE)
    if w is None or ctx.algo != "ppo":
        return None
    # Returns at one floor (the reward never or rarely found) leave the explained variance nothing to measure: a new
    # user's MiniGrid-DoorKey-8x8 PPO run was told its critic collapsed. A critic starved by vf_coef is still named.
    floor = returns_at_floor(ctx)
    x, y, late = w
    cut = epochs_cut(ctx)
    if cut is not None and cut < T.EPOCHS_CUT_FRACTION.value:
        return None  # early stopping also cuts the critic's epochs; target_kl_stops_epochs explains it
    lm = median(late)
    peak = float(np.max(np.convolve(y, np.ones(5) / 5, mode="valid"))) if len(y) >= 5 else float(np.max(y))
    collapsed = (peak > T.EXPLAINED_VARIANCE_COLLAPSE_FROM.value and lm < T.EXPLAINED_VARIANCE_COLLAPSE_TO.value
                 and len(y) >= T.EXPLAINED_VARIANCE_MIN_UPDATES.value and not floor)
    if collapsed:
        return Finding(
            id="explained_variance_collapse",
            severity=Severity.WARNING,
            score=0.65,
            title="The value function collapsed after it had learned",
            evidence=[ev(M.EXPLAINED_VARIANCE, late_x(x), f"late median {fmt(lm)} after a peak of {fmt(peak)}",
                         f"stays above {T.EXPLAINED_VARIANCE_COLLAPSE_TO.value:g} once learned")],
            cause="Value updates became unstable (often a learning rate too high, or returns whose scale "
            "jumped when the policy improved).",
            suggested_changes=[lr_change(ctx, 1 / 3, "smaller updates keep the critic stable")],
        )
    if not lm < T.EXPLAINED_VARIANCE_LOW.value or ctx.too_early:
        return None
    vf_coef = ctx.config.get("vf_coef")
    starved = ctx.algo == "ppo" and vf_coef is not None and float(vf_coef) < T.VF_COEF_SUGGESTED.value / 5
    if not starved and (floor or len(y) < T.EXPLAINED_VARIANCE_MIN_UPDATES.value):
        return None
    changes = []
    if starved:
        changes.append(change("vf_coef", vf_coef, T.VF_COEF_SUGGESTED.value, "increase",
                              f"the value loss barely reaches the gradient; {T.VF_COEF_SUGGESTED.value:g} is the "
                              f"{T.VF_COEF_SUGGESTED.source}"))
    word = "negative" if lm < 0 else "low"
    return Finding(
        id="explained_variance_low",
        severity=Severity.WARNING,
        score=0.9 if starved else 0.5,
        title=f"The value function explains little of the returns (explained variance {word})",
        evidence=[ev(M.EXPLAINED_VARIANCE, late_x(x), f"late median {fmt(lm)} (peak {fmt(peak)})",
                     f">= {T.EXPLAINED_VARIANCE_LOW.value:g} ({T.EXPLAINED_VARIANCE_LOW.source})")],
        cause=(f"vf_coef={vf_coef} starves the critic: advantages are mostly noise, so the policy gradient "
               "is too." if starved else
               "The critic does not track the returns; advantages are noisy, which slows or stalls learning."),
        suggested_changes=changes,
    )


@rule("value_loss_exploding")
def value_loss_exploding(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.VALUE_LOSS)
    if w is None:
        return None
    x = w[0]
    e, lm = early_late(w)
    limit = T.VALUE_LOSS_GROWTH.value
    if not (e > 0 and lm > limit * e):
        return None
    current = float(ctx.config.get("reward_scale", 1.0))
    return Finding(
        id="value_loss_exploding",
        severity=Severity.WARNING,
        score=0.55,
        title="Value loss keeps growing",
        evidence=[ev(M.VALUE_LOSS, late_x(x), f"late median {fmt(lm)} vs early median {fmt(e)} ({fmt(lm / e)}x)",
                     f"< {limit:g}x ({T.VALUE_LOSS_GROWTH.source})")],
        cause="Value targets grow faster than the critic can follow (large, unscaled returns).",
        suggested_changes=[change("reward_scale", current, round_sig(current * 0.1), "decrease",
                                  "smaller value targets keep the value loss in range")],
    )
