"""Rules for off-policy runs (our DQN; Stable-Baselines3 QR-DQN, SAC, TD3, TQC): exploration that ends too
early or never, target-network updates too rare or too frequent, Q-value divergence, a replay buffer
too small, learning that starts too late, and a budget that ends while the agent is still learning.
Each cites the metric (or setting) it saw."""

from __future__ import annotations

import math

import numpy as np

from gymnasium_solver.contract.algorithms import EPSILON_GREEDY, MAX_ENTROPY, OFF_POLICY
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import (
    SLOWER_THAN_SOLVED,
    Ctx,
    budget_covers_solved,
    divergence,
    ev,
    late_x,
)
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.offpolicy_budget import (
    FINDING_ID,
    budget_need,
    budget_spent,
    sized_budget,
    still_learning,
)
from gymnasium_solver.diagnostics.offpolicy_budget import budget as _budget
from gymnasium_solver.diagnostics.references import action_dims
from gymnasium_solver.diagnostics.rules.offpolicy_settings import REPLAY_RATIO_FLOOR, suggested_gradient_steps
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import setting_evidence
from gymnasium_solver.diagnostics.series import median, split
from gymnasium_solver.diagnostics.suggest import change, fmt, lr_change, round_sig


@rule("exploration_ends_too_early", "exploration_never_ends")
def exploration(ctx: Ctx) -> Finding | None:
    if ctx.algo not in EPSILON_GREEDY or ctx.solved:
        return None
    x, y = ctx.data.finite(M.EXPLORATION_RATE)
    budget = _budget(ctx)
    if len(y) < 2 or budget <= 0:
        return None
    final_eps = ctx.setting("exploration_final_eps")  # 0 is a setting (pure greedy), not "unknown"
    final = float(y[-1] if final_eps is None else final_eps)  # unknown: the floor epsilon reached
    done = np.nonzero(y <= final + 1e-9)[0]
    fraction = ctx.setting("exploration_fraction", 0.1)
    if fraction is None:  # unknown: how long the annealing took, as logged
        fraction = float(x[done[0]]) / budget if len(done) else 1.0
    fraction = float(fraction)
    initial = ctx.setting("exploration_initial_eps")
    if initial is not None and float(initial) < B.EXPLORATION_INITIAL_MIN.value and not ctx.too_early:
        return Finding(
            id="exploration_ends_too_early", severity=Severity.WARNING, score=0.85,
            title="Exploration never starts: epsilon begins near its floor",
            evidence=[setting_evidence("exploration_initial_eps", initial, f">= {B.EXPLORATION_INITIAL_MIN.value:g} "
                               f"({B.EXPLORATION_INITIAL_MIN.source})"),
                      ev(M.EXPLORATION_RATE, x[:1], f"epsilon {fmt(float(y[0]))} at the first metrics row",
                         "1.0 at the start, annealed down")],
            cause=f"Starting at epsilon {initial}, the agent acts greedily on an untrained Q-network from the first "
            "step: it sees one narrow slice of the state space and the replay buffer never holds the experience "
            "the Q-values need.",
            suggested_changes=[change("exploration_initial_eps", initial, 1.0, "increase",
                                      "SB3's and the RL Zoo's starting epsilon")],
        )
    # "At once": by the first metrics row, or within twice the minimum fraction of the budget.
    early = max(2 * T.EXPLORATION_MIN_FRACTION.value * budget, float(x[0]))
    if len(done) and int(x[done[0]]) <= early and fraction < T.EXPLORATION_MIN_FRACTION.value and not ctx.too_early:
        return Finding(
            id="exploration_ends_too_early", severity=Severity.WARNING, score=0.85,
            title="Exploration ends almost at once: epsilon reaches its final value before anything is learned",
            evidence=[ev(M.EXPLORATION_RATE, x[: done[0] + 1], f"epsilon {fmt(final)} already at "
                         f"{int(x[done[0]]):,} env steps (exploration_fraction={fraction:g} of {budget:,.0f})",
                         f"annealed over >= {T.EXPLORATION_MIN_FRACTION.value:.0%} of the budget "
                         f"({T.EXPLORATION_MIN_FRACTION.source})"),
                      setting_evidence("exploration_fraction", fraction, "0.06-0.2 (RL Zoo)")],
            cause="With epsilon at its floor from the start, the agent acts greedily on an untrained "
            "Q-network: it sees one narrow slice of the state space and the replay buffer never holds the "
            "experience the Q-values need.",
            suggested_changes=[change("exploration_fraction", fraction, 0.1, "increase",
                                      "anneal epsilon over a tenth of the budget (SB3's default)")],
        )
    _, late = split(y, T.LATE_FRACTION.value)
    lm = median(late)
    if lm > T.EXPLORATION_HIGH.value and not ctx.too_early:
        changes = []
        if final > T.EXPLORATION_HIGH.value:
            changes.append(change("exploration_final_eps", final, 0.05, "decrease", "SB3's default final epsilon"))
        if fraction > 0.5:
            changes.append(change("exploration_fraction", fraction, 0.1, "decrease",
                                  "finish the annealing in the first tenth of the budget"))
        return Finding(
            id="exploration_never_ends", severity=Severity.WARNING, score=0.8,
            title="Exploration never ends: epsilon stays high to the end of the run",
            evidence=[ev(M.EXPLORATION_RATE, late_x(x), f"late median epsilon {fmt(lm)}",
                         f"<= {T.EXPLORATION_HIGH.value:g} by mid-run ({T.EXPLORATION_HIGH.source})"),
                      setting_evidence("exploration_final_eps", final, "0.01-0.1"),
                      setting_evidence("exploration_fraction", fraction, "0.06-0.2 (RL Zoo)")],
            cause="Most actions stay random, so the training episodes are short and what the replay "
            "buffer holds is mostly a random policy's experience.",
            suggested_changes=changes,
        )
    return None


@rule("target_updates_too_rare", "target_updates_too_frequent")
def target_updates(ctx: Ctx) -> Finding | None:
    if ctx.algo not in OFF_POLICY or ctx.solved or ctx.too_early:
        return None
    budget = _budget(ctx)
    if ctx.algo in EPSILON_GREEDY:
        settings = [ctx.setting(k, d) for k, d in (("target_update_interval", 10_000), ("train_freq", 4),
                                                     ("gradient_steps", 1))]
        if any(not isinstance(v, int | float) for v in settings):
            return None  # not recorded (or SB3's (n, "episode") form): nothing to count copies with
        interval, train_freq, gradient_steps = (float(v) for v in settings)
        per_copy = _updates_per_copy(interval, train_freq, gradient_steps)
        copies = budget / interval if interval > 0 else 0.0
        if budget > 0 and copies < T.TARGET_COPIES_MIN.value:
            return Finding(
                id="target_updates_too_rare", severity=Severity.WARNING, score=0.8,
                title="The target network is almost never updated",
                evidence=[setting_evidence("target_update_interval", int(interval),
                                   f">= {T.TARGET_COPIES_MIN.value:g} copies over the budget "
                                   f"({T.TARGET_COPIES_MIN.source})"),
                          Evidence(metric="config:max_env_steps",
                                   observed=f"max_env_steps={int(budget)}: {copies:.1f} target copies in the whole run",
                                   healthy=f">= {T.TARGET_COPIES_MIN.value:g} copies")],
                cause="The bootstrapped targets come from a network that is copied only a handful of times, so "
                "the Q-values chase a stale target and improve only at each rare copy.",
                suggested_changes=[change("target_update_interval", int(interval),
                                          max(1, int(budget // 50)), "decrease", "about 50 copies over the budget")],
            )
        if per_copy < T.TARGET_UPDATES_PER_COPY_MIN.value:
            return _too_frequent(ctx, "target_update_interval", int(interval),
                                 f"{per_copy:.2g} gradient updates per target copy", int(max(train_freq, 1) * 250))
        return None
    tau = ctx.setting("tau", 0.005)
    if isinstance(tau, int | float) and tau > 0.5:
        return _too_frequent(ctx, "tau", tau, f"tau={tau:g}: the target is {tau:.0%} the online network after "
                             "every update", 0.005)
    return None


def _updates_per_copy(interval: float, train_freq: float, gradient_steps: float) -> float:
    """Gradient updates between two hard target copies: SB3 copies every ``interval`` env steps and trains
    ``gradient_steps`` (-1: one per env step) every ``train_freq`` steps."""
    return interval / max(train_freq, 1.0) * (gradient_steps if gradient_steps > 0 else train_freq)


def _too_frequent(ctx: Ctx, key: str, current: object, observed: str, suggested: object) -> Finding:
    x, y = ctx.data.finite(M.Q_MEAN)
    evidence = [Evidence(metric=f"config:{key}", observed=f"{key}={current}: {observed}",
                         healthy=f">= {T.TARGET_UPDATES_PER_COPY_MIN.value:g} update(s) per copy, or "
                         f"tau <= 0.5 ({T.TARGET_UPDATES_PER_COPY_MIN.source})")]
    if len(y) >= 2:
        evidence.append(ev(M.Q_MEAN, x, f"mean Q from {fmt(float(y[0]))} to {fmt(float(y[-1]))} "
                           f"(max |Q| {fmt(float(np.max(np.abs(y))))})", "tracks the returns"))
    return Finding(
        id="target_updates_too_frequent", severity=Severity.WARNING, score=0.7,
        title="The target network is updated so often that there is effectively no target network",
        evidence=evidence,
        cause="The regression target moves with the network being trained, which makes "
        "Q-learning unstable (the deadly triad); returns oscillate or collapse.",
        suggested_changes=[change(key, current, suggested, "increase" if key != "tau" else "decrease",
                                  "a target that stays put for a while")],
    )


def _largest_return(ctx: Ctx) -> float:
    candidates = [abs(float(v)) for v in (ctx.best_eval, ctx.threshold) if v is not None]
    _, y = ctx.data.finite(M.EP_RETURN_MEAN)
    if len(y):
        candidates.append(float(np.max(np.abs(y))))
    return max(candidates, default=0.0)


def _temperature_runaway(ctx: Ctx, unreachable: bool = False) -> Evidence | None:
    """SAC/TQC's learned entropy temperature grew by orders of magnitude over the run, or None. With an
    ``unreachable`` target (above what a squashed policy's entropy can be: entropy_target_unreachable) the
    temperature can only rise, so any rise is the runaway in its first steps (heldout78 c02: 1.15 -> 75 in a
    15,000-step run, target_entropy=2.0 on 2 action dims)."""
    x, coef = ctx.data.finite(M.ENT_COEF)
    if ctx.algo not in MAX_ENTROPY or len(coef) < 3 or not coef[0] > 0:
        return None
    growth = float(np.max(coef[len(coef) // 2:]) / coef[0])
    bar = 1.0 if unreachable else B.TEMPERATURE_RUNAWAY.value
    if not growth > bar:
        return None
    healthy = ("settles or falls once the entropy meets its target, which this one cannot" if unreachable else
               f"settles or falls once the entropy meets its target (<= {B.TEMPERATURE_RUNAWAY.value:g}x; "
               f"{B.TEMPERATURE_RUNAWAY.source})")
    return ev(M.ENT_COEF, x, f"{fmt(float(coef[0]))} -> {fmt(float(coef[-1]))} ({fmt(growth)}x)", healthy)


@rule("q_value_divergence")
def q_value_divergence(ctx: Ctx) -> Finding | None:
    if ctx.algo not in OFF_POLICY:
        return None
    x, y = ctx.data.finite(M.Q_MEAN)
    scale = _largest_return(ctx)
    if len(y) < 3 or scale <= 0:
        return None
    _, late = split(y, T.LATE_FRACTION.value)
    peak = float(np.max(np.abs(late)))
    limit = T.Q_DIVERGENCE_FACTOR.value * scale
    if peak <= limit:
        return None
    target, dims = ctx.setting("target_entropy"), action_dims(ctx.info) or 1
    runaway = _temperature_runaway(ctx, unreachable=target is not None and float(target) > dims * math.log(2))
    if runaway is not None and target is not None and float(target) > -dims:
        # SAC's soft Q-values carry the entropy bonus alpha x entropy / (1 - gamma): they follow the temperature.
        return Finding(
            id="q_value_divergence", severity=Severity.WARNING, score=0.6,
            title="The Q-values grow without bound because the entropy temperature does",
            evidence=[ev(M.Q_MEAN, late_x(x), f"late max |mean Q| {fmt(peak)}",
                         f"<= {T.Q_DIVERGENCE_FACTOR.value:g}x the largest return seen ({fmt(scale)})"), runaway],
            cause="The soft Q-values include the entropy bonus, and the automatic temperature keeps rising because "
            "the policy's entropy stays below target_entropy: the values grow with the temperature, not from "
            "bootstrapping on their own errors.",
            suggested_changes=[change("target_entropy", target, float(-dims), "decrease",
                                      "-(action dims), SAC's automatic target")],
        )
    starved = _target_is_the_network(ctx)
    if starved is not None:
        # No learning rate tames a regression onto itself: more gradient steps per copy bring the target back
        # and end the starvation with one change (the RL Zoo pairs a copy every 10 env steps with 128 steps a call).
        evidence, fix = starved
        return Finding(
            id="q_value_divergence", severity=Severity.CRITICAL, score=0.9,
            title="The Q-values diverge: the target network is copied before every gradient step",
            evidence=[ev(M.Q_MEAN, late_x(x), f"late max |mean Q| {fmt(peak)}",
                         f"<= {T.Q_DIVERGENCE_FACTOR.value:g}x the largest return seen ({fmt(scale)}) "
                         f"({T.Q_DIVERGENCE_FACTOR.source})"), evidence],
            cause="Each gradient step regresses the Q-network onto a target copied from it a moment before, so "
            "there is in effect no target network and the values bootstrap from their own errors; and with so "
            "few gradient steps per env step the network never fits the returns either.",
            suggested_changes=[fix],
        )
    changes = [lr_change(ctx, 0.1, "smaller steps keep the Q-regression from running away")]
    clip = ctx.setting("max_grad_norm", 10.0)  # SB3's DQN default
    if ctx.algo in EPSILON_GREEDY and clip is not None and float(clip or 1e9) > 100:
        changes.append(change("max_grad_norm", ctx.config.get("max_grad_norm"), 10, "decrease",
                              "SB3's DQN default clip"))
    return Finding(
        id="q_value_divergence", severity=Severity.CRITICAL, score=0.9,
        title="The Q-values diverge: they grow far beyond any return the agent sees",
        evidence=[ev(M.Q_MEAN, late_x(x), f"late max |mean Q| {fmt(peak)}",
                     f"<= {T.Q_DIVERGENCE_FACTOR.value:g}x the largest return seen ({fmt(scale)}) "
                     f"({T.Q_DIVERGENCE_FACTOR.source})")],
        cause="Bootstrapping from its own overestimates, the critic feeds on itself (off-policy data, function "
        "approximation and bootstrapping together): a learning rate too high, no gradient clip or a target "
        "network that moves too fast.",
        suggested_changes=changes,
    )


def _target_is_the_network(ctx: Ctx) -> tuple[Evidence, SuggestedChange] | None:
    """DQN whose target is copied at least once per gradient step while its gradient steps per env step are below
    the replay floor: the evidence, and the gradient_steps that gives the suggested replay ratio (and many updates
    per copy). None otherwise."""
    if ctx.algo not in EPSILON_GREEDY:
        return None
    settings = [ctx.setting(k, d) for k, d in (("target_update_interval", 10_000), ("train_freq", 4),
                                                 ("gradient_steps", 1), ("n_envs", 1))]
    if any(not isinstance(v, int) or v <= 0 for v in settings):
        return None  # SB3's (n, "episode") form, or gradient_steps -1 (one per env step): not starved
    interval, train_freq, grad, n_envs = (int(v) for v in settings)  # type: ignore[call-overload]
    per_copy = _updates_per_copy(interval, train_freq, grad)
    per_call = train_freq * n_envs
    floor = REPLAY_RATIO_FLOOR[ctx.algo]
    if per_copy >= T.TARGET_UPDATES_PER_COPY_MIN.value or grad / per_call >= floor.value:
        return None
    new = suggested_gradient_steps(per_call)
    evidence = Evidence(metric="config:target_update_interval",
                        observed=f"target copied every {interval} env steps, {grad} gradient step(s) every "
                        f"{per_call} env steps: {per_copy:.2g} gradient steps per copy",
                        healthy=f">= {T.TARGET_UPDATES_PER_COPY_MIN.value:g} per copy, and >= "
                        f"{fmt(floor.value)} gradient steps per env step ({floor.source})")
    return evidence, change("gradient_steps", grad, new, "increase",
                            f"{fmt(B.REPLAY_RATIO_SUGGESTED.value)} gradient steps per env step, "
                            f"{new * interval / train_freq:.3g} per target copy ({B.REPLAY_RATIO_SUGGESTED.source})")


@rule("replay_buffer_too_small")
def replay_buffer_too_small(ctx: Ctx) -> Finding | None:
    if ctx.algo not in OFF_POLICY or ctx.solved or ctx.too_early:
        return None
    x, y = ctx.data.finite(M.REPLAY_FILL)
    budget = _budget(ctx)
    size = ctx.config.get("buffer_size")
    if len(y) < 2 or budget <= 0 or size is None:
        return None
    full = np.nonzero(y >= 1.0 - 1e-9)[0]
    if not len(full) or int(size) >= T.REPLAY_MIN_TRANSITIONS.value:
        return None
    at = int(x[full[0]])
    if at > max(T.REPLAY_FILLED_EARLY.value * budget, float(x[0])):  # full by the first row counts as early
        return None
    return Finding(
        id="replay_buffer_too_small", severity=Severity.WARNING, score=0.8,
        title="The replay buffer is too small: it is full almost at once and then forgets",
        evidence=[ev(M.REPLAY_FILL, x[: full[0] + 1], f"full at {at:,} env steps ({at / budget:.1%} of the budget)",
                     f"full after >= {T.REPLAY_FILLED_EARLY.value:.0%} of the budget ({T.REPLAY_FILLED_EARLY.source})"),
                  setting_evidence("buffer_size", int(size), f">= {T.REPLAY_MIN_TRANSITIONS.value:,.0f} transitions "
                           f"({T.REPLAY_MIN_TRANSITIONS.source})")],
        cause="Updates sample only the last few episodes: consecutive, correlated transitions of the current "
        "policy, so the Q-network overfits them and forgets what it learned before (returns rise and fall).",
        suggested_changes=[change("buffer_size", int(size), int(round_sig(min(budget, 100_000))), "increase",
                                  "hold many episodes' experience")],
    )


@rule("learning_starts_too_late")
def learning_starts_too_late(ctx: Ctx) -> Finding | None:
    if ctx.algo not in OFF_POLICY or ctx.solved:
        return None
    starts = ctx.config.get("learning_starts")
    budget = _budget(ctx)
    if starts is None or budget <= 0 or float(starts) < T.LEARNING_STARTS_LATE.value * budget:
        return None
    x, y = ctx.data.finite(M.N_UPDATES)
    evidence = [Evidence(metric="config:learning_starts",
                         observed=f"learning_starts={int(starts):,}: {float(starts) / budget:.0%} of the budget",
                         healthy=f"< {T.LEARNING_STARTS_LATE.value:.0%} of max_env_steps={budget:,.0f} "
                         f"({T.LEARNING_STARTS_LATE.source})")]
    if len(y):
        idle = x[y <= 0]
        if len(idle):
            evidence.append(ev(M.N_UPDATES, idle, f"0 gradient updates until {int(idle[-1]):,} env steps",
                               "updates from the first few thousand steps"))
    return Finding(
        id="learning_starts_too_late", severity=Severity.WARNING, score=0.85,
        title="Learning starts too late: most of the budget is spent acting at random",
        evidence=evidence,
        cause="No gradient step is taken before learning_starts env steps: the agent acts at random until "
        "then, so little of the budget is left to learn in.",
        suggested_changes=[change("learning_starts", int(starts), int(round_sig(max(100.0, 0.01 * budget))),
                                  "decrease", "start learning after ~1% of the budget")],
    )


@rule(FINDING_ID)
def budget_ends_while_learning(ctx: Ctx) -> Finding | None:
    """Off-policy runs only (budget_exhausted_improving covers the others): the budget ran out while
    the Q-values or the returns were still rising; the raise is sized from the run's own evidence."""
    if ctx.algo not in OFF_POLICY or not budget_spent(ctx) or divergence(ctx) is not None:
        return None  # Q-values that keep rising after the run solved and lost it are divergence, not learning
    learning = still_learning(ctx)
    current = _budget(ctx)
    if learning is None or current <= 0:
        return None
    need = budget_need(ctx.config, current, ctx.algo, ctx.settings_unknown)
    evidence = list(learning.evidence)
    if need is not None and need.periods < T.TARGET_HORIZONS.value * need.horizon:
        evidence.append(Evidence(metric="config:max_env_steps", observed=need.observed(current),
                                 healthy=need.healthy()))
    target = sized_budget(current, need, learning.projected)
    raise_ = change("max_env_steps", int(current), target, "increase",
                    "sized from the evidence: what the config needs and what the curve projects")
    covered = budget_covers_solved(ctx, current)
    if covered is not None:  # as budget_exhausted_improving: a symptom, not the cause
        return Finding(
            id=FINDING_ID, severity=Severity.WARNING, score=0.4,
            title="The budget ended while the agent was still learning, but solved runs needed less",
            evidence=[*evidence, covered], cause=SLOWER_THAN_SOLVED, suggested_changes=[raise_],
        )
    return Finding(
        id=FINDING_ID, severity=Severity.WARNING, score=0.7,
        title="The budget ended while the agent was still learning",
        evidence=evidence,
        cause="The run stopped at max_env_steps while its values or returns were still climbing: a fix of any "
        "other setting also needs the steps to finish learning, or it is cut short the same way.",
        suggested_changes=[raise_],
    )
