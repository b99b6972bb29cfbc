"""Rules on how the run ended: crashed, errored, or stopped on a non-finite loss."""

from __future__ import annotations

from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import LOSS_COLUMNS, Ctx, ev
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.suggest import change, lr_change
from gymnasium_solver.run_folder import M, RunStatus, StopReason


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
