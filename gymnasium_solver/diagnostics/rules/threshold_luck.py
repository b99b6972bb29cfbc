"""A reward threshold that even an optimal policy passes only some of the time.

Exact for Gymnasium's tabular environments, whose dynamics are published: config/run_notes.py has the optimal
policy's distribution of one episode's return (shipped for the registered envs, computed for a run's env_kwargs), so
the chance that a perfect policy passes the run's evaluation, and the bar it passes reliably, are known rather than
guessed. Taxi-v4's registered 8 is above the optimum's expected 7.93; FrozenLake-v1's 0.7 is above the 0.64 an optimal
policy gets on the 8x8 map within v1's 100 steps.
"""

from __future__ import annotations

import numpy as np

from gymnasium_solver.config.run_notes import LUCK_BELOW, RELIABLE, Optimum, optimum_for_run
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics.context import Ctx
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import setting_evidence
from gymnasium_solver.diagnostics.suggest import change, fmt

PLAUSIBLE = 0.05  # a perfect policy misses this often in as many evaluations: luck explains the run's miss


def run_optimum(ctx: Ctx, kwargs: object) -> Optimum | None:
    """The exact optimum of the run's env made with ``kwargs`` against its threshold and evaluation sizes; None for a
    solved or too-young run, one whose settings are unknown, or an env without published dynamics."""
    if ctx.solved or ctx.too_early or ctx.threshold is None or ctx.settings_unknown or not isinstance(kwargs, dict) \
            or not isinstance(ctx.eval_episodes, int):
        return None
    confirm = int(ctx.setting("confirm_episodes", 0) or 0)
    return optimum_for_run(ctx.info.env_id, kwargs, ctx.threshold, ctx.eval_episodes, confirm)


@rule("threshold_above_optimum", "threshold_luck")
def threshold_luck(ctx: Ctx) -> Finding | None:
    """Critical when the threshold is above what an optimal policy earns on average and this run's evaluations sat at a
    perfect policy's level as long as a perfect policy needs to solve, without making a miss implausible for one: the
    bar, not the agent, is what failed. Otherwise (a close bar, a run that got there late or never, or one that missed
    more often than a perfect policy would) a side observation: what held the run back is in the other findings."""
    kwargs = ctx.setting("env_kwargs") or {}
    opt = run_optimum(ctx, kwargs)
    if opt is None or ctx.threshold is None or opt.pass_probability >= LUCK_BELOW:
        return None
    episodes, confirm = ctx.eval_episodes, int(ctx.setting("confirm_episodes", 0) or 0)
    there = int(np.count_nonzero(ctx.eval_y >= opt.reached_from - 1e-9))
    above = opt.expected < ctx.threshold - 1e-9
    env = ctx.info.env_id + (f" with env_kwargs={kwargs}" if kwargs else "")
    passes = (f"a perfect policy passes an evaluation of {episodes} episodes {opt.pass_probability:.0%} of the time"
              + (f", then its {confirm}-episode confirmation only some of the time" if confirm else ""))
    lower = change("reward_threshold", ctx.threshold, opt.reliable_threshold, "decrease",
                   f"a perfect policy passes {fmt(opt.reliable_threshold)} in >= {RELIABLE:.0%} of its evaluations"
                   + (" and confirmations" if confirm else "") + " on this task (exact, from its published dynamics)")
    # One change: a finding's changes are applied together (gsolve retry, the fix loop's candidate), and the
    # environment's default task is the other way out, said in the cause.
    other = (f" Or, if {kwargs} was not meant, train the task the registered threshold is set for (env_kwargs={{}})."
             if kwargs else "")
    evidence = [Evidence(metric="config:reward_threshold", observed=f"reward_threshold={fmt(ctx.threshold)}",
                         healthy=f"a bar an optimal policy passes reliably: its expected return on {env} is "
                         f"{opt.expected:.4g}; {passes}"),
                Evidence(metric=M.EVAL_RETURN_MEAN,
                         observed=f"best evaluation {fmt(ctx.best_eval) if ctx.best_eval is not None else 'none'}; "
                         f"{there} evaluation(s) at or above {fmt(opt.reached_from)}",
                         healthy=f"a perfect policy's {episodes}-episode mean is >= {fmt(opt.reached_from)} 95% of "
                         "the time")]
    # An optimal policy solves one evaluation (it and its confirmation pass) with probability s, so about once in 1/s
    # evaluations. The bar explains the failure when the run sat at a perfect policy's level for at least that many
    # evaluations (fewer: it got there too late to have had its chances, and learning sooner is the lever) and an
    # optimal policy would still have missed in as many with probability >= 5% (less: the run is likely short of
    # optimal, and the other findings say why).
    chances = 1 / max(opt.solve_probability, 1e-9)
    missed = (1 - opt.solve_probability) ** there
    if above and there >= chances and missed >= PLAUSIBLE:
        return Finding(
            id="threshold_above_optimum", severity=Severity.CRITICAL, score=0.99,
            title="The reward threshold is above what an optimal policy earns on this task",
            evidence=evidence,
            cause=f"An optimal policy earns {opt.expected:.4g} per episode on {env} on average, below the threshold "
            f"{fmt(ctx.threshold)}: {passes}, so it solves about once in {chances:.0f} evaluations. This run's "
            f"evaluations were at a perfect policy's level {there} times, and a perfect policy evaluated as often "
            f"fails to solve {missed:.0%} of the time: the run may have nothing wrong with it. Whether it solves is "
            "evaluation luck, and a fix judged on it would be too." + other,
            suggested_changes=[lower],
        )
    why = ("the threshold is above an optimal policy's average return" if above
           else "the threshold is close to an optimal policy's average return")
    if not there:
        held = "This run's evaluations did not get as high as a perfect policy's"
    elif there < chances:
        held = (f"This run's evaluations were at a perfect policy's level only {there} time(s), fewer than the "
                f"{chances:.0f} a perfect policy needs on average to solve once: it got there too late, and learning "
                "sooner is the lever")
    else:
        held = (f"This run's evaluations were at a perfect policy's level {there} times, in which a perfect policy "
                f"solves {1 - missed:.0%} of the time: its policy is likely short of optimal")
    return Finding(
        id="threshold_luck", severity=Severity.INFO, score=0.05,
        title="Even a perfect policy passes this reward threshold only some of the time",
        evidence=evidence,
        cause=f"On {env} {why} ({opt.expected:.4g}): {passes}. {held}; what held it back is in the other findings, "
        "and once it learns, a solve is partly luck." + other,
        suggested_changes=[lower],
    )


@rule("threshold_set_for_default_task")
def threshold_set_for_default_task(ctx: Ctx) -> Finding | None:
    """env_kwargs made a task whose optimum is below the threshold, while the env's default task's optimum is at or
    above it: the threshold (Gymnasium registers one per env id) was set for the task the run no longer trains. Its own
    finding, ranked below threshold_above_optimum, so the fix loop tries the default task as a candidate of its own."""
    kwargs = ctx.setting("env_kwargs") or {}
    here = run_optimum(ctx, kwargs) if kwargs else None
    default = run_optimum(ctx, {}) if here is not None else None
    if here is None or default is None or ctx.threshold is None \
            or not here.expected < ctx.threshold - 1e-9 <= default.expected:
        return None
    return Finding(
        id="threshold_set_for_default_task", severity=Severity.WARNING, score=0.9,
        title="env_kwargs made a task whose best average return is below the threshold; the default task's is not",
        evidence=[setting_evidence("env_kwargs", kwargs, f"the default task, where an optimal policy earns "
                                   f"{default.expected:.4g} on average (>= the threshold {fmt(ctx.threshold)})"),
                  Evidence(metric="config:reward_threshold", observed=f"an optimal policy earns {here.expected:.4g} "
                           f"on average with env_kwargs={kwargs}", healthy=f">= {fmt(ctx.threshold)}")],
        cause=f"The threshold {fmt(ctx.threshold)} is one an optimal policy reaches on {ctx.info.env_id}'s default task "
        f"({default.expected:.4g} on average) but not on the task env_kwargs={kwargs} makes ({here.expected:.4g}): it "
        "was set for the task this run does not train. If the env_kwargs were meant, set a threshold for them (a "
        f"perfect policy passes {fmt(here.reliable_threshold)} in >= {RELIABLE:.0%} of its evaluations there); if not, "
        "train the default task.",
        suggested_changes=[change("env_kwargs", kwargs, {}, "disable", "the task the threshold was set for")],
    )
