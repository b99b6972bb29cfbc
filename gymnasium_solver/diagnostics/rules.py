"""The diagnostic rules. Each is a plain function ``rule(ctx) -> Finding | None``.

A rule fires on a sustained condition (medians over windows, never one point), says what it saw
against the healthy range (thresholds.py, with sources), names the likely cause and suggests a
config change that applies as printed. ``score`` orders findings by how likely they explain the
outcome: direct mechanisms (a KL far too high, an entropy bonus that holds the policy uniform)
score above symptoms (a plateau, a collapse), which score above side observations (throughput).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange, Trend
from gymnasium_solver.diagnostics.series import RunData, median, split
from gymnasium_solver.run_folder import M, RunInfo, RunStatus, StopReason

LOSS_COLUMNS = (M.POLICY_LOSS, M.VALUE_LOSS, M.ENTROPY, M.GRAD_NORM, M.APPROX_KL)


@dataclass
class Ctx:
    """Everything a rule may look at, computed once by diagnose()."""

    info: RunInfo
    config: dict[str, Any]
    data: RunData
    status: RunStatus
    finished: bool
    threshold: float | None
    solved: bool
    eval_x: np.ndarray
    eval_y: np.ndarray
    train_x: np.ndarray
    train_y: np.ndarray
    eval_trend: Trend
    train_trend: Trend
    notes: list[str] = field(default_factory=list)

    @property
    def too_early(self) -> bool:
        """A live run too early in its budget to be judged on 'has not learned yet' rules."""
        if self.status != RunStatus.RUNNING or not self.info.max_env_steps:
            return False
        steps = int(self.data.steps[-1]) if len(self.data) else self.info.progress.env_steps
        return steps / self.info.max_env_steps < T.LIVE_MIN_PROGRESS.value

    @property
    def algo(self) -> str:
        return str(self.config.get("algo") or self.info.algo)

    @property
    def best_eval(self) -> float | None:
        return float(np.max(self.eval_y)) if len(self.eval_y) else None


# ---------------------------------------------------------------------------------------------
# formatting and suggestions
# ---------------------------------------------------------------------------------------------
def fraction_of(threshold: float, fraction: float) -> float:
    """The return that is ``fraction`` of the way to ``threshold``, for positive and negative
    thresholds alike: 0.9 of 475 is 427.5, 0.9 of -100 is -110 (returns below it are worse)."""
    return threshold - (1.0 - fraction) * abs(threshold)


def fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.3g}"


def yaml_number(v: float) -> str:
    """A number as YAML reads it back as a float (PyYAML needs a dot: '1e-05' would be a string)."""
    s = f"{v:.6g}"
    if "e" in s and "." not in s.split("e")[0]:
        m, e = s.split("e")
        s = f"{m}.0e{e}"
    elif "e" not in s and "." not in s and s not in ("inf", "-inf", "nan"):
        s += ".0"
    return s


def yaml_value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return yaml_number(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def change(key: str, current: Any, suggested: Any, direction: str, why: str) -> SuggestedChange:
    return SuggestedChange(
        key=key,
        current=current,
        suggested=suggested,
        direction=direction,  # type: ignore[arg-type]
        why=why,
        set_arg=f"{key}={yaml_value(suggested)}",
    )


def _round_sig(v: float) -> float:
    return float(f"{v:.3g}")


def scaled(value: Any, factor: float) -> Any:
    """Scale a constant or a {start, end} schedule, keeping its shape."""
    if isinstance(value, dict) and "start" in value:
        return {"start": _round_sig(float(value["start"]) * factor), "end": _round_sig(float(value["end"]) * factor)}
    return _round_sig(float(value) * factor)


def start_value(value: Any) -> float:
    if isinstance(value, dict):
        return float(value.get("start", 0.0))
    return float(value)


def lr_change(ctx: Ctx, factor: float, why: str) -> SuggestedChange:
    """Scale the learning rate (constant or schedule) by ``factor``; a full order-of-magnitude step
    also lands at least inside the sane range, so one retry can fix a rate that is off by 100x."""
    current = ctx.config.get("learning_rate", 3e-4)
    start = start_value(current)
    if start > 0 and factor <= 1 / T.LR_STEP.value:
        factor = min(factor, T.LR_SANE_MAX.value / start)
    elif start > 0 and factor >= T.LR_STEP.value:
        factor = max(factor, T.LR_SANE_MIN.value / start)
    return change("learning_rate", current, scaled(current, factor), "increase" if factor > 1 else "decrease", why)


def window(x: np.ndarray) -> tuple[int | None, int | None]:
    return (int(x[0]), int(x[-1])) if len(x) else (None, None)


def ev(metric: str, x: np.ndarray, observed: str, healthy: str) -> Evidence:
    lo, hi = window(x)
    return Evidence(metric=metric, env_steps_from=lo, env_steps_to=hi, observed=observed, healthy=healthy)


def strength(ratio: float, decades: float = 1.0) -> float:
    """0..1: how far past its threshold a value is, in decades (log10 of the ratio)."""
    if not math.isfinite(ratio) or ratio <= 1:
        return 0.0
    return min(1.0, math.log10(ratio) / decades)


def late_window(ctx: Ctx, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(all steps, all values, late values) of a metric with enough updates, else None."""
    x, y = ctx.data.finite(name)
    if len(y) < T.MIN_UPDATES.value:
        return None
    _, late = split(y, T.LATE_FRACTION.value)
    return x, y, late


def late_x(x: np.ndarray) -> np.ndarray:
    return split(x, T.LATE_FRACTION.value)[1]


# ---------------------------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------------------------
def non_finite(ctx: Ctx) -> Finding | None:
    evidence: list[Evidence] = []
    for name in LOSS_COLUMNS:
        bad = ctx.data.non_finite_rows(name)
        if bad.size:
            steps = ctx.data.steps[bad]
            evidence.append(
                ev(name, steps, f"{bad.size} non-finite value(s), first at env step {int(steps[0])}", "always finite")
            )
    if ctx.info.stop_reason == StopReason.NON_FINITE_LOSS and not evidence:
        evidence.append(
            Evidence(
                metric=M.POLICY_LOSS,
                env_steps_from=ctx.info.failure.env_steps if ctx.info.failure else None,
                env_steps_to=ctx.info.failure.env_steps if ctx.info.failure else None,
                observed="the trainer stopped the run: stop_reason non_finite_loss"
                + (f" ({ctx.info.failure.message})" if ctx.info.failure else ""),
                healthy="always finite",
            )
        )
    if not evidence:
        return None
    changes = []
    if ctx.config.get("max_grad_norm") is None:
        changes.append(change("max_grad_norm", None, 0.5, "enable", "clip the gradient norm so one bad batch cannot blow up the weights"))
    changes.append(lr_change(ctx, 1 / T.LR_STEP.value, "smaller steps keep the weights and the log-probabilities finite"))
    return Finding(
        id="non_finite_loss",
        severity=Severity.CRITICAL,
        score=1.0,
        title="Losses or gradients became nan/inf",
        evidence=evidence,
        cause="Updates large enough to overflow the network (learning rate too high, unclipped gradients "
        "or unscaled rewards); everything after the first nan is meaningless.",
        suggested_changes=changes,
    )


def grad_norm_explosion(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.GRAD_NORM)
    if w is None:
        return None
    x, y, late = w
    early = split(y)[0]
    e, lm = median(early), median(late)
    limit = T.GRAD_NORM_GROWTH.value
    if not (e > 0 and lm > limit * e and lm > 1.0):
        return None
    clip = ctx.config.get("max_grad_norm")
    changes = []
    if clip is None:
        changes.append(change("max_grad_norm", None, 0.5, "enable", "clip the global gradient norm (SB3 default 0.5)"))
    changes.append(lr_change(ctx, 1 / T.LR_STEP.value, "smaller steps stop the runaway"))
    return Finding(
        id="grad_norm_explosion",
        severity=Severity.CRITICAL if clip is None else Severity.WARNING,
        score=0.85 + 0.1 * strength(lm / (limit * e)),
        title="Gradient norm exploded",
        evidence=[
            ev(M.GRAD_NORM, late_x(x), f"late median {fmt(lm)} vs early median {fmt(e)} ({fmt(lm / e)}x)",
               f"< {limit:g}x the early median ({T.GRAD_NORM_GROWTH.source})")
        ],
        cause="The optimisation is diverging: each update makes the next gradient larger.",
        suggested_changes=changes,
    )


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
    return Finding(
        id="approx_kl_high",
        severity=Severity.WARNING,
        score=0.8 + 0.15 * strength(med / limit),
        title="Policy moves too far per update (approximate KL sustained too high)",
        evidence=evidence,
        cause="The learning rate is too high for this problem: each update leaves the region where the "
        "rollout's advantages are valid, so progress is erratic or collapses.",
        suggested_changes=[lr_change(ctx, 1 / T.LR_STEP.value, "smaller steps (at most 3e-3) keep approx_kl near 0.01-0.02")],
    )


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


def _epochs_cut(ctx: Ctx) -> float | None:
    """Median fraction of n_epochs completed, or None when it cannot be measured."""
    n_epochs = ctx.config.get("n_epochs")
    _, y = ctx.data.finite(M.EPOCHS_COMPLETED)
    if not n_epochs or len(y) < T.MIN_UPDATES.value:
        return None
    return median(y) / float(n_epochs)


def _entropy_reference(ctx: Ctx) -> tuple[float, str] | None:
    """The entropy a uniform policy would have: log(n) for Discrete, else the initial entropy."""
    space = ctx.info.action_space
    if space is not None and space.max_entropy:
        return float(space.max_entropy), "the action space's maximum log(n)"
    _, y = ctx.data.finite(M.ENTROPY)
    if len(y) >= 3:
        ref = median(y[:3])
        if ref > 0:
            return ref, "the initial entropy"
    return None


def _late_entropy_fraction(ctx: Ctx) -> float | None:
    ref = _entropy_reference(ctx)
    w = late_window(ctx, M.ENTROPY)
    if ref is None or w is None:
        return None
    return median(w[2]) / ref[0]


def approx_kl_low(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.APPROX_KL)
    if w is None or ctx.too_early:
        return None
    x, y, _ = w
    med = median(y)
    limit = T.APPROX_KL_LOW.value
    if not med < limit:
        return None
    cut = _epochs_cut(ctx)
    if cut is not None and cut < T.EPOCHS_CUT_FRACTION.value:
        return None  # early stopping keeps the KL small; target_kl_stops_epochs explains it
    cx, cy = ctx.data.finite(M.CLIP_FRACTION)
    if len(cy) and median(cy) > T.CLIP_FRACTION_LOW.value * 10:
        return None
    rel = _late_entropy_fraction(ctx)
    if rel is not None and rel < T.ENTROPY_COLLAPSE.value:
        return None  # a deterministic policy cannot move: entropy_collapse explains the tiny KL
    if rel is not None and rel > T.ENTROPY_NO_DECREASE.value and start_value(ctx.config.get("ent_coef", 0.0)) > 0:
        return None  # the entropy bonus pins the policy: entropy_bonus_dominates explains it
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


def target_kl_stops_epochs(ctx: Ctx) -> Finding | None:
    target = ctx.config.get("target_kl")
    cut = _epochs_cut(ctx)
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
        suggested_changes=[change("target_kl", target, _round_sig(suggested), "increase",
                                  "target_kl is usually 0.01-0.05 (Spinning Up; the 37 implementation details study)")],
    )


def explained_variance(ctx: Ctx) -> Finding | None:
    # PPO only: a REINFORCE baseline fitted to Monte-Carlo returns explains ~1-2% of their variance
    # even on healthy solving runs (measured on our corpus), so the thresholds do not transfer.
    w = late_window(ctx, M.EXPLAINED_VARIANCE)
    if w is None or ctx.algo != "ppo":
        return None
    x, y, late = w
    cut = _epochs_cut(ctx)
    if cut is not None and cut < T.EPOCHS_CUT_FRACTION.value:
        return None  # early stopping also cuts the critic's epochs; target_kl_stops_epochs explains it
    lm = median(late)
    peak = float(np.max(np.convolve(y, np.ones(5) / 5, mode="valid"))) if len(y) >= 5 else float(np.max(y))
    collapsed = (peak > T.EXPLAINED_VARIANCE_COLLAPSE_FROM.value and lm < T.EXPLAINED_VARIANCE_COLLAPSE_TO.value
                 and len(y) >= T.EXPLAINED_VARIANCE_MIN_UPDATES.value)
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
    if not starved and len(y) < T.EXPLAINED_VARIANCE_MIN_UPDATES.value:
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


def value_loss_exploding(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.VALUE_LOSS)
    if w is None:
        return None
    x, y, late = w
    e, lm = median(split(y)[0]), median(late)
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
        suggested_changes=[change("reward_scale", current, _round_sig(current * 0.1), "decrease",
                                  "smaller value targets keep the value loss in range")],
    )


def entropy_collapse(ctx: Ctx) -> Finding | None:
    if ctx.solved:
        return None
    ref = _entropy_reference(ctx)
    w = late_window(ctx, M.ENTROPY)
    if ref is None or w is None:
        return None
    x, _, late = w
    rel = median(late) / ref[0]
    if not rel < T.ENTROPY_COLLAPSE.value:
        return None
    ent = ctx.config.get("ent_coef", 0.0)
    cur = start_value(ent)
    suggested = 0.01 if cur <= 0 else _round_sig(cur * 3)
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
    return Finding(
        id="entropy_collapse",
        severity=Severity.WARNING,
        score=0.7,
        title="The policy became nearly deterministic before solving (entropy collapse)",
        evidence=evidence,
        cause="The policy stopped exploring and is stuck on what it knows.",
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


def entropy_no_decrease(ctx: Ctx) -> Finding | None:
    if ctx.solved or ctx.too_early:
        return None
    ref = _entropy_reference(ctx)
    w = late_window(ctx, M.ENTROPY)
    if ref is None or w is None:
        return None
    x, y, late = w
    rel = median(late) / ref[0]
    if not rel > T.ENTROPY_NO_DECREASE.value or len(y) < T.ENTROPY_MIN_UPDATES.value:
        return None
    ent = ctx.config.get("ent_coef", 0.0)
    cur = start_value(ent)
    evidence = [ev(M.ENTROPY, late_x(x), f"late median {fmt(median(late))} = {fmt(100 * rel)}% of {ref[1]} {fmt(ref[0])}",
                   f"< {100 * T.ENTROPY_NO_DECREASE.value:g}% once learning ({T.ENTROPY_NO_DECREASE.source})")]
    if cur > 0:
        return Finding(
            id="entropy_bonus_dominates",
            severity=Severity.WARNING,
            score=0.92,
            title="Entropy never decreases: the entropy bonus outweighs the reward",
            evidence=evidence,
            cause=f"ent_coef={fmt(cur)} rewards randomness more than the task rewards acting well, so the policy "
            "stays near uniform.",
            suggested_changes=[change("ent_coef", ent, min(_round_sig(cur / 10), 0.01), "decrease",
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


def _material(ctx: Ctx, y: np.ndarray) -> float:
    if ctx.threshold is not None and ctx.threshold != 0:
        return T.TREND_MATERIAL_FRACTION.value * abs(ctx.threshold)
    span = float(np.max(y) - np.min(y)) if len(y) else 0.0
    return T.TREND_MATERIAL_FRACTION.value * span


def return_plateau(ctx: Ctx) -> Finding | None:
    if ctx.solved or ctx.threshold is None or ctx.too_early:
        return None
    if "improving" in (ctx.eval_trend.direction, ctx.train_trend.direction):
        return None
    trend = ctx.eval_trend if ctx.eval_trend.direction != "unknown" else ctx.train_trend
    if trend.direction != "flat":
        return None
    best = ctx.best_eval
    return Finding(
        id="return_plateau",
        severity=Severity.WARNING,
        score=0.35,
        title="Return has plateaued below the threshold",
        evidence=[Evidence(metric=trend.metric, env_steps_from=trend.env_steps_from, env_steps_to=trend.env_steps_to,
                           observed=f"flat: slope {fmt(trend.slope_per_100k_steps)} per 100k steps "
                           f"(95% CI {fmt(trend.slope_low)}..{fmt(trend.slope_high)}), best eval {fmt(best)}",
                           healthy=f"rising toward {fmt(ctx.threshold)}")],
        cause="Learning has stalled; more steps of the same config are unlikely to solve it. Look at the "
        "other findings for the mechanism.",
    )


def rolling_median3(y: np.ndarray) -> np.ndarray:
    """Median of each point and its neighbours (vectorised: evals can number in the thousands)."""
    if len(y) < 3:
        return y.copy()
    a, b, c = y[:-2], y[1:-1], y[2:]
    mid = np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    return np.concatenate([[(y[0] + y[1]) / 2], mid, [(y[-2] + y[-1]) / 2]])


def return_collapse(ctx: Ctx) -> Finding | None:
    y, x = ctx.eval_y, ctx.eval_x
    if len(y) < T.TREND_MIN_POINTS.value:
        return None
    smooth = rolling_median3(y)
    k = int(np.argmax(smooth))
    peak, base, last = float(smooth[k]), float(y[0]), median(y[-3:])
    _, kl = ctx.data.finite(M.APPROX_KL)
    if len(kl) and median(kl) < T.APPROX_KL_LOW.value:
        return None  # the policy barely moved: a drop in evaluation is noise, not a collapse
    min_gain = T.COLLAPSE_MIN_GAIN.value * abs(ctx.threshold) if ctx.threshold else _material(ctx, y)
    if k >= len(y) - 2 or peak - base <= min_gain:
        return None
    drop = (peak - last) / (peak - base)
    if not drop > T.COLLAPSE_PEAK_FRACTION.value:
        return None
    return Finding(
        id="return_collapse",
        severity=Severity.WARNING,
        score=0.6,
        title="Evaluation return collapsed after a peak",
        evidence=[ev(M.EVAL_RETURN_MEAN, x[k:], f"peak {fmt(peak)} at step {int(x[k])}, last evaluations {fmt(last)} "
                     f"({fmt(100 * drop)}% of the gain lost)",
                     f"keeps > {100 * (1 - T.COLLAPSE_PEAK_FRACTION.value):g}% of its gain ({T.COLLAPSE_PEAK_FRACTION.source})")],
        cause="Late updates destroyed a good policy (steps too large once the policy is sharp).",
        suggested_changes=[lr_change(ctx, 1 / 3, "smaller late updates keep the good policy (or decay it to 0)")],
    )


def budget_exhausted_improving(ctx: Ctx) -> Finding | None:
    if ctx.solved or not ctx.finished:
        return None
    spent = ctx.info.stop_reason == StopReason.BUDGET_EXHAUSTED or ctx.info.progress.env_steps >= ctx.info.max_env_steps
    if not spent:
        return None
    improving = "improving" in (ctx.eval_trend.direction, ctx.train_trend.direction)
    near = (ctx.threshold is not None and ctx.best_eval is not None
            and ctx.best_eval >= fraction_of(ctx.threshold, T.NEAR_SOLVED_FRACTION.value))
    budget = int(ctx.config.get("max_env_steps", ctx.info.max_env_steps))
    _, updates = ctx.data.finite(M.POLICY_LOSS)
    if not (improving or near) and 0 < len(updates) < T.MIN_UPDATES.value:
        # Too few updates to see any trend: the budget itself is the problem.
        return Finding(
            id="budget_exhausted_improving",
            severity=Severity.WARNING,
            score=0.75,
            title="The budget allowed too few updates to learn anything",
            evidence=[Evidence(metric=M.POLICY_LOSS, env_steps_from=0, env_steps_to=ctx.info.progress.env_steps,
                               observed=f"{len(updates)} update(s) in a {budget}-step budget; best eval "
                               f"{fmt(ctx.best_eval)} of {fmt(ctx.threshold)}",
                               healthy=f">= {int(T.MIN_UPDATES.value)} updates before judging a config")],
            cause="max_env_steps is too small for this config's rollout size: the run stopped before learning "
            "could show.",
            suggested_changes=[change("max_env_steps", budget, int(budget * T.BUDGET_STEP.value), "increase",
                                      f"{T.BUDGET_STEP.value:g}x the budget")],
        )
    if not (improving or near):
        return None
    trend = ctx.eval_trend if ctx.eval_trend.direction == "improving" else ctx.train_trend
    return Finding(
        id="budget_exhausted_improving",
        severity=Severity.WARNING,
        score=0.75,
        title="The budget ran out while the return was still improving",
        evidence=[Evidence(metric=trend.metric, env_steps_from=trend.env_steps_from, env_steps_to=trend.env_steps_to,
                           observed=f"{trend.direction}: slope {fmt(trend.slope_per_100k_steps)} per 100k steps "
                           f"(95% CI {fmt(trend.slope_low)}..{fmt(trend.slope_high)}); best eval {fmt(ctx.best_eval)} "
                           f"of {fmt(ctx.threshold)} at the end of a {budget}-step budget",
                           healthy="flat near the threshold when the budget ends")],
        cause="max_env_steps is too small for this config: the run was still learning when it stopped.",
        suggested_changes=[change("max_env_steps", budget, int(budget * T.BUDGET_STEP.value), "increase",
                                  f"{T.BUDGET_STEP.value:g}x the budget at the current rate of progress")],
    )


def train_eval_mismatch(ctx: Ctx) -> Finding | None:
    if ctx.threshold is None or len(ctx.train_y) < T.TREND_MIN_POINTS.value or ctx.best_eval is None:
        return None
    late_train = median(split(ctx.train_y)[1])
    thr = ctx.threshold
    far = fraction_of(thr, T.EVAL_TRAIN_GAP_FRACTION.value)
    if late_train >= thr and not ctx.solved and ctx.best_eval < far:
        return Finding(
            id="train_solved_eval_not",
            severity=Severity.WARNING,
            score=0.5,
            title="Training return reaches the threshold but evaluation does not",
            evidence=[ev(M.EP_RETURN_MEAN, late_x(ctx.train_x), f"late median {fmt(late_train)}", f">= {fmt(thr)}"),
                      ev(M.EVAL_RETURN_MEAN, ctx.eval_x, f"best {fmt(ctx.best_eval)}", f">= {fmt(thr)}")],
            cause="The deterministic (argmax) evaluation policy behaves differently from the stochastic one "
            "that is trained, or evaluation uses different environment settings.",
        )
    rel = _late_entropy_fraction(ctx)
    # The training return is a lagging mean over 100 episodes, so it trails any improving run;
    # only a sampled policy that is still near-uniform makes the gap a finding.
    if ctx.solved and late_train < far and rel is not None and rel > T.ENTROPY_NO_DECREASE.value:
        ent = ctx.config.get("ent_coef", 0.0)
        changes = []
        if start_value(ent) > 0:
            changes.append(change("ent_coef", ent, 0.0, "decrease", "less randomness in the behaviour policy"))
        return Finding(
            id="eval_solved_train_not",
            severity=Severity.INFO,
            score=0.3,
            title="Evaluation solves it but the training (stochastic) policy does not",
            evidence=[ev(M.EP_RETURN_MEAN, late_x(ctx.train_x), f"late median {fmt(late_train)}", f">= {fmt(far)}"),
                      Evidence(metric=M.ENTROPY, observed=f"late entropy {fmt(100 * rel)}% of the maximum",
                               healthy=f"< {100 * T.ENTROPY_NO_DECREASE.value:g}% once learning")],
            cause="The greedy policy is good but the sampled one is still near-uniform.",
            suggested_changes=changes,
        )
    return None


def throughput_drop(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.FPS)
    if w is None:
        return None
    x, y, late = w
    e, lm = median(split(y)[0]), median(late)
    if not (e > 0 and lm < T.FPS_DROP.value * e):
        return None
    return Finding(
        id="throughput_drop",
        severity=Severity.INFO,
        score=0.15,
        title="Throughput dropped during the run",
        evidence=[ev(M.FPS, late_x(x), f"late median {fmt(lm)} fps vs early {fmt(e)} fps",
                     f">= {100 * T.FPS_DROP.value:g}% of early ({T.FPS_DROP.source})")],
        cause="Other processes competing for the CPU, or episodes/evaluations that got slower; not a learning "
        "problem by itself.",
    )


def run_failed(ctx: Ctx) -> Finding | None:
    """The run did not end by itself: the trainer raised, or its process died (crashed)."""
    if ctx.status == RunStatus.CRASHED:
        p = ctx.info.progress
        return Finding(
            id="run_crashed",
            severity=Severity.CRITICAL,
            score=0.98,
            title="The trainer process died without finishing (crashed)",
            evidence=[Evidence(metric="run.json:status", env_steps_from=p.env_steps, env_steps_to=p.env_steps,
                               observed=f"status 'running' but the process is gone or silent since {ctx.info.updated_at}; "
                               f"last progress {p.env_steps} env steps",
                               healthy="a finished run records completed/failed/stopped")],
            cause="The process was killed (out of memory, SIGKILL, machine restart) before it could record why; "
            "the metrics end where it died. Not a config problem unless it keeps happening at the same step.",
        )
    if ctx.info.stop_reason != StopReason.ERROR:
        return None
    f = ctx.info.failure
    return Finding(
        id="run_error",
        severity=Severity.CRITICAL,
        score=0.99,
        title="The trainer stopped on an error",
        evidence=[Evidence(metric="run.json:failure", env_steps_from=f.env_steps if f else None,
                           env_steps_to=f.env_steps if f else None,
                           observed=f"{f.kind}: {f.message}" if f else "stop_reason 'error' without a failure record",
                           healthy="no failure")],
        cause="An exception in the trainer or the environment, not a learning problem; run.log has the "
        "traceback (get_run_logs with level=WARNING).",
    )


RULES: tuple[Callable[[Ctx], Finding | None], ...] = (
    run_failed,
    non_finite,
    grad_norm_explosion,
    approx_kl_high,
    clip_fraction_high,
    approx_kl_low,
    target_kl_stops_epochs,
    explained_variance,
    value_loss_exploding,
    entropy_collapse,
    entropy_no_decrease,
    return_plateau,
    return_collapse,
    budget_exhausted_improving,
    train_eval_mismatch,
    throughput_drop,
)

# Every id a rule can produce, for docs and tests.
RULE_IDS: tuple[str, ...] = (
    "run_crashed",
    "run_error",
    "non_finite_loss",
    "grad_norm_explosion",
    "approx_kl_high",
    "clip_fraction_high",
    "approx_kl_near_zero",
    "target_kl_stops_epochs",
    "explained_variance_collapse",
    "explained_variance_low",
    "value_loss_exploding",
    "entropy_collapse",
    "entropy_bonus_dominates",
    "entropy_no_decrease",
    "return_plateau",
    "return_collapse",
    "budget_exhausted_improving",
    "train_solved_eval_not",
    "eval_solved_train_not",
    "throughput_drop",
)
