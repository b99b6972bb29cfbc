"""The budget an off-policy run needs, and suggested changes completed to fit it.

DQN learns at the pace of its target network: each distinct target network backs the Q-values up
by one step (fitted Q-iteration), so a budget must give a couple of discount horizons 1/(1-gamma)
of target periods after learning starts. When a run ended by its budget, each change set the
diagnosis suggests is checked against the budget *the corrected config* needs (and what the run's
own curves project); a short one gains a ``max_env_steps`` raise, and, because SB3 sizes the
exploration schedule as a fraction of max_env_steps, an ``exploration_fraction`` that keeps
epsilon's anneal at the absolute length it had. Pure functions of the run's config and metrics:
they hold for runs with no preset and no solved sibling (imported runs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from gymnasium_solver.contract.algorithms import EPSILON_GREEDY, OFF_POLICY
from gymnasium_solver.contract.run_folder import M, StopReason
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import Ctx, divergence, ev
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import horizon
from gymnasium_solver.diagnostics.series import median, split, theil_sen
from gymnasium_solver.diagnostics.suggest import change, fmt, round_sig, round_up

FINDING_ID = "budget_ends_while_learning"
_MAX_HORIZON = 1000.0  # gamma ~ 1: the horizon is the episode, not 1/(1-gamma)
_MIN_RAISE = 1.5  # a projected raise smaller than this is within the noise of a linear extrapolation
_NOT_CONFIG = ("run_crashed", "run_error")


class BudgetNeed(NamedTuple):
    """What a DQN config needs: ``steps`` env steps = learning_starts + TARGET_HORIZONS horizons of
    target periods; ``periods`` is how many a given budget gives."""

    steps: int
    horizon: float
    period: int
    periods: float
    learning_starts: int

    def observed(self, budget: float) -> str:
        return (f"{self.periods:.0f} target periods in {budget:,.0f} env steps (one distinct target network per "
                f"{self.period:,} env steps = max(target_update_interval / tau, train_freq x n_envs), after "
                f"learning_starts={self.learning_starts:,})")

    def healthy(self) -> str:
        n = math.ceil(T.TARGET_HORIZONS.value * self.horizon)
        return (f">= {T.TARGET_HORIZONS.value:g} horizons 1/(1-gamma) = {n:,} periods: max_env_steps >= "
                f"{self.steps:,} ({T.TARGET_HORIZONS.source})")


def _count(value: Any, default: int) -> int | None:
    """A step count from a config value: SB3 also takes ``train_freq`` as (n, "step"|"episode"); an
    episode count (or anything unreadable) is None: its length in env steps is unknown."""
    if value is None:
        return default
    if isinstance(value, list | tuple):
        if len(value) == 2 and str(value[1]) == "episode":
            return None
        value = value[0] if value else default
    try:
        return max(int(float(value)), 0)
    except (TypeError, ValueError):
        return None


def _horizon(config: Mapping[str, Any]) -> float:
    """The discount horizon 1/(1-gamma) of a config, at most _MAX_HORIZON."""
    return min(horizon(float(config.get("gamma", 0.99))), _MAX_HORIZON)


def budget_need(config: Mapping[str, Any], budget: float, algo: str | None = None,
                settings_unknown: bool = False) -> BudgetNeed | None:
    """The budget an epsilon-greedy (DQN/QR-DQN) config needs; None for other algorithms or when the
    config does not say how often the target is copied. ``algo`` defaults to the config's.
    ``settings_unknown``: the config is an imported run's that records nothing (Ctx.settings_unknown):
    a missing target interval or train frequency is unknown, not SB3's default."""
    if str(algo or config.get("algo")) not in EPSILON_GREEDY:
        return None
    if settings_unknown and not {"target_update_interval", "train_freq"} <= set(config):
        return None
    interval = _count(config.get("target_update_interval"), 10_000)
    if not interval:
        return None
    horizon = _horizon(config)
    n_envs = _count(config.get("n_envs"), 1) or 1
    # A soft update (tau < 1) moves the target a fraction tau of the way at each copy: it takes about
    # interval / tau env steps to become a distinct network (its time constant).
    try:
        tau = float(config.get("tau", 1.0))
    except (TypeError, ValueError):
        tau = 1.0
    copy_every = math.ceil(interval / tau) if 0 < tau < 1 else interval
    period = max(copy_every, (_count(config.get("train_freq"), 4) or 1) * n_envs, 1)
    starts = _count(config.get("learning_starts"), 100) or 0
    steps = starts + math.ceil(T.TARGET_HORIZONS.value * horizon) * period
    return BudgetNeed(steps, horizon, period, max(budget - starts, 0.0) / period, starts)


def budget(ctx: Ctx) -> float:
    return float(ctx.config.get("max_env_steps") or ctx.info.max_env_steps or 0)


def budget_spent(ctx: Ctx) -> bool:
    """The run finished because its budget ran out (not solved, not stopped, not failed)."""
    if not ctx.finished or ctx.solved:
        return False
    spent = ctx.info.progress.env_steps >= (ctx.info.max_env_steps or math.inf)
    return ctx.info.stop_reason == StopReason.BUDGET_EXHAUSTED or spent


class StillLearning(NamedTuple):
    """Evidence from the run's own curves that it was still learning when its budget ended."""

    evidence: list[Evidence]
    projected: int | None  # env steps at which the evaluation curve reaches the threshold at its slope


def _q_rising(ctx: Ctx) -> Evidence | None:
    x, q = ctx.data.finite(M.Q_MEAN)
    if len(q) < 4:
        return None
    xs, qs = split(x, T.LATE_FRACTION.value)[1], split(q, T.LATE_FRACTION.value)[1]
    fit = theil_sen(xs, qs)
    level = abs(float(qs[-1]))
    if fit is None or fit[1] <= 0 or level <= 0:
        return None
    rise = fit[0] * float(xs[-1] - xs[0])
    if rise <= T.Q_STILL_RISING.value * level or _q_stays_negligible(ctx, fit[0]):
        return None
    return ev(M.Q_MEAN, xs, f"mean Q {fmt(float(qs[0]))} -> {fmt(float(qs[-1]))} over the last half, still rising "
              f"{fmt(fit[0] * 10_000)} per 10k env steps (95% CI {fmt(fit[1] * 10_000)}..{fmt(fit[2] * 10_000)})",
              f"levels off (a rise < {T.Q_STILL_RISING.value:.0%} of its level) once the bootstrapped values have "
              f"converged ({T.Q_STILL_RISING.source})")


def _value_scale(ctx: Ctx) -> float | None:
    """The size of the values the run's own episodes imply: the late median episode return, discounted as far as
    the horizon 1/(1-gamma) reaches into the episode's length (a return per step times the shorter of the two)."""
    _, returns = ctx.data.finite(M.EP_RETURN_MEAN)
    _, lengths = ctx.data.finite(M.EP_LEN_MEAN)
    if not len(returns):
        return None
    horizon = _horizon(ctx.config)
    ret = abs(median(split(returns, T.LATE_FRACTION.value)[1]))
    length = median(split(lengths, T.LATE_FRACTION.value)[1]) if len(lengths) else horizon
    return ret * min(1.0, horizon / max(length, 1.0))


def _q_stays_negligible(ctx: Ctx, slope: float) -> bool:
    """A mean Q that rises at this slope for the largest budget the diagnosis would suggest still ends a small
    fraction of the values the returns imply: the Q-values are not learning (a gradient clipped to nothing, a
    learning rate of ~0), and more steps would not fix that. Relative to its own level such a Q can look rising."""
    scale = _value_scale(ctx)
    if not scale:
        return False
    return slope * T.BUDGET_MAX_FACTOR.value * budget(ctx) < T.Q_NEGLIGIBLE.value * scale


def _learning_start(ctx: Ctx) -> float:
    x, n = ctx.data.finite(M.N_UPDATES)
    started = x[n > 0]
    return float(started[0]) if len(started) else -math.inf


def _eval_rising(ctx: Ctx) -> tuple[Evidence, int] | None:
    """Evaluations since the first gradient update, still rising: slope, last evaluations and the
    env steps at which that slope reaches the threshold."""
    thr = ctx.threshold
    keep = ctx.eval_x >= _learning_start(ctx)
    x, y = ctx.eval_x[keep], ctx.eval_y[keep]
    if thr is None or len(y) < 3:
        return None
    k = max(3, len(y) // 2)
    x, y = x[-k:], y[-k:]
    fit = theil_sen(x, y)
    last = median(y[-3:])
    # The slope's 95% interval must exclude 0: a noisy, flat curve projects an arbitrarily far budget.
    if fit is None or fit[1] <= 0 or last >= thr or last - float(y[0]) <= T.TREND_MATERIAL_FRACTION.value * abs(thr):
        return None
    to_go = (thr - last) / fit[0]
    end = float(ctx.info.progress.env_steps or x[-1])
    projected = int(end + to_go)
    return ev(M.EVAL_RETURN_MEAN, x, f"rising since learning started: {fmt(fit[0] * 1000)} per 1k env steps, last "
              f"evaluations {', '.join(fmt(float(v)) for v in y[-3:])}; at that slope {fmt(thr)} is reached "
              f"~{to_go:,.0f} env steps later ({projected:,} in all)",
              "at the threshold before the budget ends"), projected


def still_learning(ctx: Ctx) -> StillLearning | None:
    """Q-values still rising, evaluations rising since learning started, or a return trend still
    improving at the end of the run; None when the run's curves show none of these."""
    evidence: list[Evidence] = []
    projected = None
    q = _q_rising(ctx)
    if q is not None:
        evidence.append(q)
    rising = _eval_rising(ctx)
    if rising is not None:
        evidence.append(rising[0])
        projected = rising[1]
    trend = ctx.eval_trend if ctx.eval_trend.direction == "improving" else ctx.train_trend
    if rising is None and trend.direction == "improving" and ctx.eval_trend.direction != "declining":
        evidence.append(Evidence(metric=trend.metric, env_steps_from=trend.env_steps_from,
                                 env_steps_to=trend.env_steps_to,
                                 observed=f"improving: slope {fmt(trend.slope_per_100k_steps)} per 100k steps "
                                 f"(95% CI {fmt(trend.slope_low)}..{fmt(trend.slope_high)})",
                                 healthy="flat near the threshold when the budget ends"))
    return StillLearning(evidence, projected) if evidence else None


def sized_budget(current: float, need: BudgetNeed | None, projected: int | None) -> int:
    """The budget to suggest: what the config needs and what the curve projects, at least 1.5x and
    at most BUDGET_MAX_FACTOR x the current one; BUDGET_STEP x when nothing sizes it."""
    wanted = [v for v in (need.steps if need else None, projected) if v is not None and v > current]
    target = max(wanted) if wanted else current * T.BUDGET_STEP.value
    target = min(max(target, current * _MIN_RAISE), current * T.BUDGET_MAX_FACTOR.value)
    return round_up(target)


def _set(changes: list[SuggestedChange], new: SuggestedChange) -> list[SuggestedChange]:
    """``changes`` with ``new`` in place of the change to the same key (or appended)."""
    if any(c.key == new.key for c in changes):
        return [new if c.key == new.key else c for c in changes]
    return [*changes, new]


def _complete(ctx: Ctx, f: Finding, current: float, floor: int | None) -> Finding:
    corrected = dict(ctx.config)
    for c in reversed(f.suggested_changes):  # the first change to a key is the one that applies
        corrected[c.key] = c.suggested
    new_budget = float(corrected.get("max_env_steps") or current)
    need = budget_need(corrected, current, ctx.algo, ctx.settings_unknown)
    required = max(need.steps if need else 0, floor or 0)
    changes, evidence = list(f.suggested_changes), list(f.evidence)
    if required > new_budget:
        new_budget = float(round_up(required))
        why = (f"with these changes the config needs {new_budget:,.0f} env steps: the run's budget gives "
               f"{need.periods:.0f} of the {math.ceil(T.TARGET_HORIZONS.value * need.horizon):,} target periods "
               f"(one per {need.period:,} env steps) that {T.TARGET_HORIZONS.value:g} discount horizons need"
               if need and need.steps >= required else
               "the run was still learning when its budget ended (see the budget_ends_while_learning evidence)")
        changes = _set(changes, change("max_env_steps", int(current), int(new_budget), "increase", why))
        if need is not None and need.periods < T.TARGET_HORIZONS.value * need.horizon and f.id != FINDING_ID:
            evidence.append(Evidence(metric="config:max_env_steps", observed=f"with these changes: "
                                     f"{need.observed(current)}", healthy=need.healthy()))
    if new_budget > current and ctx.algo in EPSILON_GREEDY and not _restores_reference_budget(ctx, new_budget):
        fraction = float(corrected.get("exploration_fraction", 0.1))
        length = fraction * current
        # Never below the share exploration_ends_too_early asks for (it would flag its own fix).
        kept = round_sig(min(1.0, max(length / new_budget, T.EXPLORATION_MIN_FRACTION.value)))
        now = ctx.config.get("exploration_fraction")
        if now is None or not math.isclose(kept, float(now)):
            direction = "increase" if now is not None and kept > float(now) else "decrease"
            changes = _set(changes, change(
                "exploration_fraction", now, kept, direction,
                f"keeps epsilon's anneal at {length:,.0f} env steps ({fraction:g} of the run's {current:,.0f}): "
                f"the anneal is a fraction of max_env_steps, which these changes raise to {new_budget:,.0f}"))
    if changes == f.suggested_changes:
        return f
    return f.model_copy(update={"suggested_changes": changes, "evidence": evidence})


def _restores_reference_budget(ctx: Ctx, new_budget: float) -> bool:
    """The changes put max_env_steps back to the reference's (the preset's, the RL Zoo's) and the run kept that
    reference's exploration_fraction: the reference's anneal is its fraction of its own budget, so the fraction stays
    (keeping the run's shortened anneal instead would try a config no reference tuned, under its name)."""
    budget = ctx.deviation("max_env_steps")
    try:
        return budget is not None and float(budget.preset) == new_budget and ctx.deviation("exploration_fraction") is None
    except (TypeError, ValueError):
        return False


def fit_budget(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """A fix must fit the budget: on an off-policy run that ended by its budget, every config
    finding's changes are completed with the budget the corrected config needs (at least what the
    run's own curves project when it was still learning) and the exploration length kept."""
    if ctx.algo not in OFF_POLICY or not budget_spent(ctx) or divergence(ctx) is not None:
        return findings  # the run reached the threshold within its budget (and lost it after)
    current = budget(ctx)
    if current <= 0:
        return findings
    # What the run's own curves ask for: the projection to the threshold; without one, a DQN change
    # set is sized by what its corrected config needs, another algorithm's by BUDGET_STEP.
    learning = still_learning(ctx) if any(f.id == FINDING_ID for f in findings) else None
    floor = None
    if learning is not None and (learning.projected is not None or ctx.algo not in EPSILON_GREEDY):
        floor = sized_budget(current, None, learning.projected)
    return [f if f.severity == Severity.INFO or not f.suggested_changes or f.id in _NOT_CONFIG
            else _complete(ctx, f, current, floor) for f in findings]

