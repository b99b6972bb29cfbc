"""Rules on how the run ended: crashed, errored, or stopped on a non-finite loss."""

from __future__ import annotations

import math

import numpy as np

from gymnasium_solver.contract.run_folder import M, RunStatus, StopReason
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import LOSS_COLUMNS, Ctx, ev
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import std_at
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.series import median
from gymnasium_solver.diagnostics.suggest import change, fmt, lr_change, start_value


@rule("run_crashed", "run_error")
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
            cause="The process is gone without recording why: killed (SIGKILL, out of memory, a machine restart) "
            "or stopped by a disk that refused writes (check free space on the runs folder's disk); the metrics "
            "end where it stopped. Not a config problem unless it keeps happening at the same step; "
            "`gsolve train --resume` continues it from its last checkpoint.",
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


@rule("eval_episodes_unfinished")
def eval_unfinished(ctx: Ctx) -> Finding | None:
    """The trainer's warning that an evaluation stopped at its bound with episodes still running (an environment
    with no time limit): the eval figures are not episode returns, so nothing judged on them holds."""
    w = ctx.warning("eval_episodes_unfinished")
    if w is None:
        return None
    ended_from = _evaluations_ended_from(ctx, w.env_steps)
    if ended_from is not None:
        return Finding(
            id="eval_episodes_unfinished",
            severity=Severity.INFO,
            score=0.3,
            title="Early evaluation episodes never ended; the later ones did",
            evidence=[Evidence(metric="run.json:warnings", env_steps_from=w.env_steps, env_steps_to=w.env_steps,
                               observed=w.message, healthy="every evaluation episode ends"),
                      ev(M.EVAL_EP_LEN_MEAN, ctx.eval_x[ctx.eval_x >= ended_from],
                         f"every evaluation from {ended_from:,} env steps on ended its episodes (the last 3 averaged "
                         f"{fmt(median(ctx.data.finite(M.EVAL_EP_LEN_MEAN)[1][-3:]))} steps)",
                         "every evaluation episode ends")],
            cause="The environment has no time limit and the early policy never reached an end, so the evaluations "
            f"before {ended_from:,} env steps ran to their step bound: their returns are not episode returns, and "
            "each cost up to the bound's steps of wall time. The later policy ends its episodes, so the run is "
            "judged on the evaluations that ended. A time limit (--set env_kwargs.max_episode_steps=N, N a few "
            "times the steps a good episode takes) makes the early evaluations cheap and their returns episodes'.",
        )
    return Finding(
        id="eval_episodes_unfinished",
        severity=Severity.CRITICAL,
        score=0.97,
        title="Evaluation episodes never ended: the eval returns are not episode returns",
        evidence=[Evidence(metric="run.json:warnings", env_steps_from=w.env_steps, env_steps_to=w.env_steps,
                           observed=w.message, healthy="every evaluation episode ends (a time limit, or the "
                           "environment ends it)")],
        cause="The environment has no time limit (its Gymnasium spec sets no max_episode_steps) and the evaluated "
        "policy never reaches an end, so each evaluation ran to its step bound and counted what its episodes "
        "had earned by then. Judge nothing by those figures (a solve is never seen); give episodes an end with "
        "--set env_kwargs.max_episode_steps=N (Gymnasium's TimeLimit), N a few times the steps a good episode "
        "takes, and train again.",
    )


def _evaluations_ended_from(ctx: Ctx, warned_at: int | None) -> int | None:
    """The env steps from which every evaluation ended all its episodes, when the last 3 did; None when not (or the
    run records no evaluation episode lengths). An evaluation with an unfinished episode averages at least the
    bound / eval_episodes steps, and the warned one at most the bound: below the warned one's mean / eval_episodes
    every episode ended."""
    lx, lens = ctx.data.finite(M.EVAL_EP_LEN_MEAN)
    episodes = ctx.eval_episodes
    if warned_at is None or len(lens) < 4 or not isinstance(episodes, int) or episodes < 1:
        return None
    warned = lens[lx == warned_at]
    if not len(warned):
        return None
    ended = lens < float(warned[0]) / episodes
    unfinished = np.flatnonzero(~ended)
    if not ended[-3:].all():
        return None
    return int(lx[int(unfinished[-1]) + 1 if len(unfinished) else 0])


@rule("non_finite_loss")
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
    culprit, changes = _non_finite_cause(ctx)
    if changes and culprit.startswith(f"{changes[0].key}="):
        # The numbers the cause quotes are evidence too.
        evidence.append(Evidence(metric=f"config:{changes[0].key}", observed=culprit,
                                 healthy=f"{changes[0].key}={changes[0].set_arg.split('=', 1)[1]} or near it"))
    return Finding(
        id="non_finite_loss",
        severity=Severity.CRITICAL,
        score=1.0,
        title="Losses or gradients became nan/inf",
        evidence=evidence,
        cause=f"{culprit}; everything after the first nan is meaningless.",
        suggested_changes=changes,
    )


def _non_finite_cause(ctx: Ctx) -> tuple[str, list[SuggestedChange]]:
    """The extreme setting that overflowed the network, most extreme first: a preset deviation when
    there is one (attribution.py puts its revert first), else the setting far outside its usual range."""
    cfg = ctx.config
    lr = start_value(cfg.get("learning_rate", 3e-4))
    scale = float(cfg.get("reward_scale", 1.0))
    log_std = float(cfg.get("log_std_init", 0.0))
    box = ctx.info.action_space is not None and ctx.info.action_space.kind == "box"
    # (how many decades outside the usual range, cause, change)
    suspects: list[tuple[float, str, SuggestedChange]] = []
    if lr > T.LR_SANE_MAX.value:
        suspects.append((math.log10(lr / T.LR_SANE_MAX.value),
                         f"learning_rate={fmt(lr)} ({fmt(lr / T.LR_SANE_MAX.value)}x the largest usual Adam rate "
                         f"{T.LR_SANE_MAX.value:g}) makes updates large enough to overflow the network",
                         lr_change(ctx, 1 / T.LR_STEP.value, "steps small enough to keep the weights finite")))
    if scale > 10:
        suspects.append((math.log10(scale),
                         f"reward_scale={fmt(scale)} makes value targets and losses overflow",
                         change("reward_scale", cfg.get("reward_scale"), 1.0, "decrease", "unscaled rewards")))
    if box and abs(log_std) > 5:
        suspects.append((abs(log_std) / 5,
                         f"log_std_init={fmt(log_std)} (action {std_at(log_std, cfg, ctx.data)}) overflows the "
                         "Gaussian log-probabilities",
                         change("log_std_init", cfg.get("log_std_init"), 0.0, "increase" if log_std < 0 else "decrease",
                                f"the usual start: {std_at(0.0, cfg, ctx.data)}")))
    if ctx.deviations:
        # Compare with what works: the preset trains with its own values, so a suspect the run
        # shares with it (CartPole's preset learning rate 0.004 is above 3e-3) is not the cause.
        own = [x for x in suspects if x[2].key in ctx.deviations]
        suspects = own or suspects
    if suspects:
        suspects.sort(key=lambda s: -s[0])
        return suspects[0][1], [s[2] for s in suspects]
    changes = []
    if cfg.get("max_grad_norm") is None:
        changes.append(change("max_grad_norm", None, 0.5, "enable",
                              "clip the gradient norm so one bad batch cannot blow up the weights"))
    changes.append(lr_change(ctx, 1 / T.LR_STEP.value, "smaller steps keep the weights and the log-probabilities finite"))
    return ("No setting is far outside its usual range; updates overflowed the network anyway (unclipped "
            "gradients or a learning rate too high for this problem)"), changes


@rule("solve_not_confirmed")
def solve_not_confirmed(ctx: Ctx) -> Finding | None:
    """The trainer's warning that an evaluation reached the threshold and confirm_episodes more episodes did not: that
    evaluation was luck (picked for being high), so its best eval says nothing about the policy. A coin flip's 3-episode
    evaluation at 1.0 of 0.9 (every policy averages 0.5); the golden CartPole-v1:dqn run's 500 over 2 episodes, 449.9
    over 50 more."""
    w = ctx.warning("solve_not_confirmed")
    if w is None or ctx.solved:
        return None
    return Finding(
        id="solve_not_confirmed", severity=Severity.WARNING, score=0.52,
        title="An evaluation reached the threshold on luck: more episodes of that policy fell short",
        evidence=[Evidence(metric="run.json:warnings", env_steps_from=w.env_steps, env_steps_to=w.env_steps,
                           observed=w.message, healthy="the episodes after an evaluation at the threshold average "
                           "it too")],
        cause="The evaluation that first reaches the threshold is picked for being high: with few episodes and "
        "returns that vary, a policy below the threshold reaches it now and then. The larger sample that checked it "
        "is the policy's return; judge the run by that and by the evaluations' trend, not by its best eval. The "
        "policy needs to get better, not luckier: more evaluation episodes (eval_episodes) only make the noise "
        "smaller.",
    )
