"""``diagnose``: a pure function from a run's RunInfo, resolved config and metrics to a Diagnosis."""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gymnasium_solver.config import ConfigError, build_config, error_reason
from gymnasium_solver.contract.algorithms import OFF_POLICY
from gymnasium_solver.contract.run_folder import (
    CONFIG_YAML,
    METRICS_CSV,
    PPO_COLUMNS,
    RUN_JSON,
    M,
    MetricsTable,
    RunInfo,
    RunStatus,
    StopReason,
    effective_status,
)
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.attribution import attribute, fallback
from gymnasium_solver.diagnostics.context import Ctx, fraction_of
from gymnasium_solver.diagnostics.deviations import deviations
from gymnasium_solver.diagnostics.models import (
    SEVERITY_RANK,
    Diagnosis,
    Evidence,
    Finding,
    ProgressSummary,
    References,
    ReturnSummary,
    Severity,
    SuggestedChange,
    Trend,
    Verdict,
)
from gymnasium_solver.diagnostics.offpolicy_budget import fit_budget
from gymnasium_solver.diagnostics.references import (
    ReferenceSet,
    bands,
    shipped_references,
    store_references,
)
from gymnasium_solver.diagnostics.rules import RULES
from gymnasium_solver.diagnostics.seed_sample import SeedSample, budget_line, shipped_sample, speed_line
from gymnasium_solver.diagnostics.series import MetricsArraysLike, RunData, median, theil_sen
from gymnasium_solver.diagnostics.suggest import best_of, fmt

if TYPE_CHECKING:
    from gymnasium_solver.run_store import RunStore


def trend(metric: str, x: np.ndarray, y: np.ndarray, threshold: float | None, horizon: float | None = None) -> Trend:
    """Direction of the last half of a return curve from its Theil-Sen slope and 95% interval.

    ``improving``/``declining`` need the interval to exclude zero AND the change the slope
    projects over ``horizon`` env steps (the run's budget; at least the window) to be material:
    thresholds.TREND_MATERIAL_FRACTION of the threshold. Otherwise ``flat``.
    """
    n_min = int(T.TREND_MIN_POINTS.value)
    if len(y) < n_min:
        return Trend(metric=metric, direction="unknown", n_points=len(y),
                     note=f"{len(y)} point(s); a trend needs at least {n_min}")
    start = len(y) - max(n_min, len(y) // 2)
    xs, ys = x[start:], y[start:]
    fit = theil_sen(xs, ys)
    base = Trend(metric=metric, direction="unknown", n_points=len(ys),
                 env_steps_from=int(xs[0]), env_steps_to=int(xs[-1]))
    if fit is None:
        return base.model_copy(update={"note": "too few distinct env steps for a slope"})
    slope, lo, hi = fit
    span = max(float(xs[-1] - xs[0]), float(horizon or 0.0))
    if threshold:
        material = T.TREND_MATERIAL_FRACTION.value * abs(threshold)
    else:
        material = T.TREND_MATERIAL_FRACTION.value * max(float(np.ptp(y)), 1e-12)
    change = slope * span
    significant = lo > 0 or hi < 0
    if lo > 0 and change > material:
        direction = "improving"
    elif hi < 0 and -change > material:
        direction = "declining"
    else:
        direction = "flat"
    why = None
    if direction == "flat" and significant:
        why = (f"the 95% interval excludes 0, but the change it projects over the budget is too small to "
               f"matter ({'up' if lo > 0 else 'down'} {fmt(abs(change))} < {fmt(material)})")
    per100k = 100_000.0
    return base.model_copy(update={
        "direction": direction,
        "slope_per_100k_steps": round(slope * per100k, 4),
        "slope_low": round(lo * per100k, 4),
        "slope_high": round(hi * per100k, 4),
        "note": f"Theil-Sen over the last {len(ys)} points; projected change over {span:.0f} steps "
        f"{fmt(change)} vs material {fmt(material)}" + (f"; flat although {why}" if why else ""),
        "why_flat": why,
    })


def _progress(info: RunInfo, data: RunData, running: bool) -> ProgressSummary:
    steps = int(data.steps[-1]) if len(data) else info.progress.env_steps
    steps = max(steps, info.progress.env_steps)
    _, fps = data.finite(M.FPS)
    fps_recent = median(fps[-10:]) if len(fps) else None
    eta = None
    if running and fps_recent and fps_recent > 0:
        eta = round(max(info.max_env_steps - steps, 0) / fps_recent, 1)
    return ProgressSummary(
        env_steps=steps,
        max_env_steps=info.max_env_steps,
        fraction=round(steps / info.max_env_steps, 4) if info.max_env_steps else 0.0,
        fps_recent=None if fps_recent is None else round(fps_recent, 1),
        eta_seconds=eta,
    )


def _returns(info: RunInfo, ctx: Ctx) -> ReturnSummary:
    thr = ctx.threshold
    best = ctx.best_eval
    best_steps = int(ctx.eval_x[int(np.argmax(ctx.eval_y))]) if len(ctx.eval_y) else None
    if info.best_eval is not None and (best is None or info.best_eval.return_mean > best):
        best, best_steps = info.best_eval.return_mean, info.best_eval.env_steps
    gap = gap_pct = None
    if thr is not None and best is not None:
        gap = round(thr - best, 4)
        gap_pct = round(100 * gap / abs(thr), 2) if thr else None
    return ReturnSummary(
        reward_threshold=thr,
        solved=ctx.solved,
        best_eval_return=best,
        best_eval_env_steps=best_steps,
        last_eval_return=float(ctx.eval_y[-1]) if len(ctx.eval_y) else None,
        last_train_return=float(ctx.train_y[-1]) if len(ctx.train_y) else None,
        gap_abs=gap,
        gap_pct=gap_pct,
    )


def _cap_if_solved(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """A run that solved and stayed solved is healthy: its side observations are only info.

    Non-finite losses stay critical: a solved run that later produced nan is still broken.
    """
    if not ctx.solved or len(ctx.eval_y) == 0 or ctx.threshold is None:
        return findings
    if float(ctx.eval_y[-1]) < fraction_of(ctx.threshold, T.NEAR_SOLVED_FRACTION.value):
        return findings
    out = []
    for f in findings:
        if f.id not in ("non_finite_loss", "run_error", "run_crashed") and f.severity != Severity.INFO:
            f = f.model_copy(update={"severity": Severity.INFO})
        out.append(f)
    return out


def _trainable(config: Mapping[str, Any], changes: list[SuggestedChange]) -> str | None:
    """None when the run's config with ``changes`` is one the trainer accepts, else the reason it is not."""
    try:
        build_config({**config, **{c.key: c.suggested for c in changes}}, "with this change")
    except ConfigError as exc:
        return error_reason(exc, "with this change")
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def _completed(ctx: Ctx, changes: list[SuggestedChange]) -> SuggestedChange | None:
    """The revert of one of the run's other deviations that makes ``changes`` trainable (largest deviation
    first): the run moved two keys that must move together (n_steps=2048 with batch_size=2048), and the finding
    reverts only one of them. None when no single revert does."""
    keys = {c.key for c in changes}
    for d in ctx.deviations.values():
        if d.key not in keys and _trainable(ctx.config, [*changes, d.revert]) is None:
            return d.revert
    return None


def _applicable(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """A change is offered only when the run's config with it is a config the trainer accepts. One it
    refuses (a batch larger than this run's rollout, after the run shrank the rollout) is completed with the
    revert of another of the run's deviations when that makes it trainable (both keys the run changed go back
    together), and says so; else it stays in the finding's evidence with the reason, and the finding suggests
    nothing (`gsolve fix` does not try it). A config that does not validate as it is (an imported run's, an
    older trainer's) is not checked."""
    if ctx.info.source is not None:
        return findings
    try:
        build_config(ctx.config, "the run's config")
    except (ConfigError, TypeError, ValueError):
        return findings
    out = []
    for f in findings:
        why = _trainable(ctx.config, f.suggested_changes) if f.suggested_changes else None
        if why is not None:
            args = " ".join(f"--set {c.set_arg}" for c in f.suggested_changes)
            metric = "config:" + ",".join(c.key for c in f.suggested_changes)
            extra = _completed(ctx, f.suggested_changes)
            if extra is not None:
                note = Evidence(metric=metric, observed=f"{args} alone is not a config this run can train ({why}); "
                                f"with {extra.set_arg} too it is: {extra.why}",
                                healthy="a change the trainer accepts with the run's other settings")
                f = f.model_copy(update={"suggested_changes": [*f.suggested_changes, extra],
                                         "evidence": [*f.evidence, note]})
            else:
                note = Evidence(metric=metric, observed=f"not suggested: {args} is not a config this run can train "
                                f"({why})", healthy="a change the trainer accepts with the run's other settings")
                f = f.model_copy(update={"suggested_changes": [], "evidence": [*f.evidence, note]})
        out.append(f)
    return out


def _undoes_parent(info: RunInfo, findings: list[Finding]) -> list[str]:
    """A retry (`gsolve retry`, try_fix) records the changes its parent's diagnosis suggested; a top change that sets
    one of them back undoes that advice. Said, so the two diagnoses read as a question for `gsolve fix`, not a loop."""
    top = next((f for f in findings if f.severity != Severity.INFO and f.suggested_changes), None)
    if top is None or not info.applied_changes or info.parent_run_id is None:
        return []
    undone = [c.key for c in top.suggested_changes if c.key in info.applied_changes]
    if not undone:
        return []
    return [f"This run is a retry of {info.parent_run_id} with {', '.join(undone)} as that run's diagnosis suggested; "
            f"the top change here sets {'it' if len(undone) == 1 else 'them'} back. Neither diagnosis has run the "
            f"other's change: `gsolve fix {info.parent_run_id}` trains both over seeds and says which solves."]


def _notes(ctx: Ctx, n_updates: int) -> list[str]:
    notes = []
    if ctx.status == RunStatus.RUNNING:
        notes.append("The run is still running: the data is partial and findings may change.")
    if ctx.too_early:
        notes.append(f"Early in a live run (< {100 * T.LIVE_MIN_PROGRESS.value:g}% of the budget): plateau, "
                     "entropy-never-decreasing, KL-near-zero and low-explained-variance checks start later.")
    if ctx.status == RunStatus.CRASHED:
        notes.append("The trainer process is gone without finishing (crashed): the data ends where it died.")
    if n_updates < T.MIN_UPDATES.value and ctx.algo in OFF_POLICY:
        # A row is an iteration of many gradient steps here, not one update: say what was counted.
        _, steps = ctx.data.finite(M.N_UPDATES)
        done = f", {int(steps[-1]):,} gradient steps in all" if len(steps) else ""
        notes.append(f"Only {n_updates} metrics row(s) with a loss (one per training iteration of "
                     f"{ctx.config.get('iteration_steps', '?')} env steps{done}); the trend rules need at least "
                     f"{int(T.MIN_UPDATES.value)} rows.")
    elif n_updates < T.MIN_UPDATES.value:
        notes.append(f"Only {n_updates} update(s) recorded; optimisation rules need at least "
                     f"{int(T.MIN_UPDATES.value)}.")
    box = ctx.info.action_space is not None and ctx.info.action_space.kind == "box"
    missing = [c for c in PPO_COLUMNS if ctx.algo == "ppo" and not ctx.data.has(c) and (box or c != M.ACTION_STD)]
    if ctx.algo != "ppo":
        notes.append(f"{ctx.algo} writes no approx_kl/clip_fraction/epochs: the KL and clipping rules do not apply; "
                     "the explained-variance rules are PPO-only (a REINFORCE baseline's explained variance is "
                     "near 0 even on healthy runs).")
    elif missing:
        notes.append(f"metrics.csv lacks {', '.join(missing)}: rules on them were skipped.")
    if ctx.threshold is None:
        notes.append("No reward threshold: solved/gap and plateau checks are not available.")
    if ctx.info.source is not None:
        notes.append(f"Imported from {ctx.info.source.framework} ({ctx.info.source.kind}): no preset to compare with "
                     "or revert to; rules use the metrics the source logged (get_run_info lists what it could not "
                     "record); a suggested change is a setting to change in that framework.")
    if ctx.preset_drift:
        notes.append(f"The preset {ctx.info.config_id} has changed since this run: {', '.join(ctx.preset_drift)} now differ "
                     "from it although the run did not set them, so they are not counted as the run's changes "
                     "(get_run_info lists every difference from today's preset).")
    if len(ctx.eval_y) == 0:
        notes.append("No evaluation yet: trends use the training return only.")
    if (costly := ctx.warning("evaluation_costly")) is not None:
        notes.append(f"The run warned at {costly.env_steps or 0:,} env steps: {costly.message}")
    return notes


def _summary(d_status: str, ctx: Ctx, returns: ReturnSummary, findings: list[Finding]) -> str:
    luck = ctx.warning("solve_not_confirmed")
    if ctx.solved:
        head = f"Solved: best eval {fmt(returns.best_eval_return)} >= {fmt(ctx.threshold)}"
    elif luck is not None:
        head = f"Not solved ({d_status}): {luck.message.split(': not solved')[0]}"
    elif returns.best_eval_return is not None and ctx.threshold is not None:
        head = (f"Not solved ({d_status}): {best_of(returns.best_eval_return, ctx.threshold)} "
                f"(gap {fmt(returns.gap_abs)}, {fmt(returns.gap_pct)}%)")
    elif returns.best_eval_return is not None:
        head = f"Not solved ({d_status}): best eval {fmt(returns.best_eval_return)}, no reward threshold to hold it to"
    else:
        head = f"Not solved ({d_status}): no evaluation yet"
    t = ctx.eval_trend
    if not ctx.solved and t.direction != "unknown":
        head += f"; eval trend {t.direction} ({fmt(t.slope_per_100k_steps)} per 100k steps"
        head += ", significant but too slow to matter)" if t.why_flat else ")"
    top = next((f for f in findings if f.severity != Severity.INFO), None)
    if top is None:
        return head + "; no problems found."
    # Quoted as `try (all together)` quotes it: a schedule {start: a, end: b} pasted unquoted is three arguments.
    fix = "; try " + " ".join(f"--set {shlex.quote(c.set_arg)}" for c in top.suggested_changes) if top.suggested_changes else ""
    if fix and ctx.info.source is not None:
        fix = f"; try {_in_source(ctx, top)} in the {ctx.info.source.framework} config"
    return f"{head}; most likely: {top.title} [{top.id}]{fix}"


def _solved_source(refs: ReferenceSet, ctx: Ctx, returns: ReturnSummary) -> str:
    """Where the solved references come from; a run that solved is itself one, even with no other."""
    if refs.runs or not ctx.solved:
        return refs.source
    at = ctx.info.solved_at.env_steps if ctx.info.solved_at else returns.best_eval_env_steps
    when = f" at {at:,} env steps" if at is not None else ""
    return f"this run itself (solved{when}); {refs.source.removeprefix('none: ')}"


def _in_source(ctx: Ctx, f: Finding) -> str:
    """A finding's changes (they go together) to an imported run's config, under the names its
    framework gives the settings."""
    from gymnasium_solver.imports.mapping import source_setting

    assert ctx.info.source is not None
    return " and ".join(source_setting(ctx.info.source.framework, c.set_arg) for c in f.suggested_changes)


def _next_step(ctx: Ctx, findings: list[Finding]) -> str | None:
    """For a finished run that did not solve (or solved and lost it): the experiment that verifies (or
    finds) the fix, or the checkpoint that already holds it."""
    rid = ctx.info.run_id
    top = next((f for f in findings if f.severity != Severity.INFO), None)
    if top is not None and top.id == "diverged_after_solving" and ctx.info.source is None:
        return (f"The solved policy is in the best checkpoint: `gsolve eval {rid} --checkpoint best` (`gsolve "
                f"checkpoints {rid}` lists them); train again with the suggested changes only to keep training "
                "past solving.")
    if ctx.solved or not ctx.finished or ctx.status == RunStatus.CRASHED:
        return None
    if ctx.info.source is not None:
        change = f" with {_in_source(ctx, top)}" if top is not None and top.suggested_changes else ""
        return (f"This run was imported from {ctx.info.source.framework} and is read-only (gsolve fix/retry cannot "
                f"re-run it): train it again there{change} to verify, or train our preset for {ctx.info.env_id} "
                "(list_environments) and compare_runs with this one.")
    if top is not None and top.id == "unexplained_failure":
        return (f"No rule explains this run: `gsolve fix {rid}` (MCP fix_run) runs candidate changes side by side "
                "and reports which one solves; compare_runs with a solved run of the same preset shows what differs.")
    if top is not None and top.id in ("run_error",):
        return "Read the traceback (get_run_logs level=WARNING); this is not a config problem."
    if ctx.threshold is None:  # gsolve fix refuses it: no trial could solve
        return ("With no reward threshold nothing can be verified as solved: train it again with one (--set "
                "reward_threshold=R, the return you call solved), then `gsolve fix` that run (MCP fix_run).")
    return (f"Verify before trusting it: `gsolve fix {rid}` (MCP fix_run) runs the suggested changes and each "
            "revert to the preset side by side, and reports which one solves and how fast.")


def diagnose(
    info: RunInfo,
    config: Mapping[str, Any],
    metrics: MetricsTable | MetricsArraysLike,
    now: float | None = None,
    status: RunStatus | None = None,
    references: ReferenceSet | None = None,
) -> Diagnosis:
    """Diagnose one run. Pure: reads only its arguments (``now`` for live-run status and ETA).

    ``metrics`` is the parsed metrics.csv: a MetricsTable, or the run store's numpy
    ``MetricsArrays`` (same content, no per-cell conversion; what the adapters pass).
    ``references``: solved runs to compare with (the store's, see ``diagnose_run_dir``); default the
    references shipped for the run's preset. The preset itself is resolved from ``info.config_id``.
    ``status`` is the effective status when the caller already knows it (the run store's crash
    detection); otherwise it is derived from ``info`` with ``run_folder.effective_status``.
    """
    now = time.time() if now is None else now
    status = status or effective_status(info, now=now)
    if info.source is not None:  # an imported run: its source's names for our settings, read as ours
        from gymnasium_solver.imports.mapping import config_view

        config = config_view(dict(config), info.source.framework)
    data = RunData(metrics)
    threshold = info.reward_threshold if info.reward_threshold is not None else config.get("reward_threshold")
    ex, ey = data.finite(M.EVAL_RETURN_MEAN)
    tx, ty = data.finite(M.EP_RETURN_MEAN)
    refs = references if references is not None else shipped_references(info.config_id)
    held = deviations(config, info.config_id, info, data, refs)
    devs = held.deviations
    # An evaluation at the threshold is a solve, unless the run is ours and checked each such evaluation on
    # confirm_episodes more episodes: then run.json's verdict stands (a failed check is the evaluation's luck).
    checked = info.source is None and bool(config.get("confirm_episodes"))
    solved = bool(info.solved) or (not checked and threshold is not None and len(ey) > 0
                                   and float(np.max(ey)) >= float(threshold))
    ctx = Ctx(
        info=info, config=dict(config), data=data, status=status,
        finished=status not in (RunStatus.RUNNING,),
        threshold=None if threshold is None else float(threshold), solved=solved,
        eval_x=ex, eval_y=ey, train_x=tx, train_y=ty,
        eval_trend=trend(M.EVAL_RETURN_MEAN, ex, ey, threshold, info.max_env_steps),
        train_trend=trend(M.EP_RETURN_MEAN, tx, ty, threshold, info.max_env_steps),
        deviations={d.key: d for d in devs}, preset_drift=held.drift, bands=bands(data, refs), steps_to_solve=refs.steps_to_solve,
    )
    findings = [f for f in (rule(ctx) for rule in RULES) if f is not None]
    findings = _applicable(ctx, fit_budget(ctx, fallback(ctx, attribute(ctx, findings))))
    findings = _cap_if_solved(ctx, findings)
    # Critical first (the run is broken: nan, crash, error), then warnings by score, then info.
    findings.sort(key=lambda f: (SEVERITY_RANK[f.severity], f.score), reverse=True)
    worst = max((SEVERITY_RANK[f.severity] for f in findings), default=0)
    verdict = {0: Verdict.HEALTHY, 1: Verdict.WARNING, 2: Verdict.CRITICAL}[worst]
    # An update is an iteration that logged a training loss: PPO/REINFORCE/A2C's policy loss, DQN's TD
    # loss, SAC/TD3's critic loss (counting the policy loss alone said "0 updates" of every DQN run).
    updates = np.unique(np.concatenate([data.finite(m)[0] for m in (M.POLICY_LOSS, M.TD_LOSS, M.CRITIC_LOSS)]))
    returns = _returns(info, ctx)
    return Diagnosis(
        run_id=info.run_id,
        config_id=info.config_id,
        algo=ctx.algo,
        status=str(status),
        stop_reason=None if info.stop_reason is None else str(info.stop_reason),
        partial=status == RunStatus.RUNNING,
        verdict=verdict,
        summary=_summary(str(status), ctx, returns, findings),
        returns=returns,
        progress=_progress(info, data, status == RunStatus.RUNNING),
        speed=_speed(info, ctx, bool(devs) or bool(held.drift)),  # drift: the run is not today's preset either
        eval_trend=ctx.eval_trend,
        train_trend=ctx.train_trend,
        findings=findings,
        references=References(preset=held.preset, compared_with=held.compared_with, deviations=devs,
                              unranked=held.unranked, solved_runs=[r.run_id for r in refs.runs[:5]],
                              solved_source=_solved_source(refs, ctx, returns), steps_to_solve=refs.steps_to_solve,
                              bands=[b for b in ctx.bands.values() if b.position != "inside"],
                              bands_inside=sorted(m for m, b in ctx.bands.items() if b.position == "inside")),
        next_step=_next_step(ctx, findings),
        notes=[*_notes(ctx, len(updates)), *_undoes_parent(info, findings)],
        imported_from=None if info.source is None else f"{info.source.framework} ({info.source.kind})",
    )


def _speed(info: RunInfo, ctx: Ctx, differs: bool) -> str | None:
    """A run of one of our presets with a seed sample at its threshold: where its solve falls among the preset's
    seeds, or for a run that spent its budget unsolved, how many of them needed as many env steps."""
    if ctx.threshold is None or info.source is not None:
        return None
    sample = shipped_sample(info.config_id, ctx.threshold)
    if not isinstance(sample, SeedSample):
        return None
    if info.solved_at is not None:
        return speed_line(info.solved_at.env_steps, sample, differs)
    if info.stop_reason == StopReason.BUDGET_EXHAUSTED and info.progress.env_steps > 0:
        return budget_line(info.progress.env_steps, sample, differs)
    return None


def diagnose_run_dir(store: RunStore, run_dir: Path) -> Diagnosis:
    """Diagnose one run folder through the run store: cached reads, numpy metrics, crash-aware status.

    The CLI and the MCP tools call this; resolve a reference first with ``store.resolve(ref)``.
    A finished run's diagnosis is memoised until one of its files or its set of references changes
    (a live run's is computed every time: its ETA moves with the clock). Shared: do not change it.
    """
    info = store.info(run_dir)
    status = store.status(run_dir)
    refs = store_references(store, run_dir, info)

    def compute() -> Diagnosis:
        return diagnose(info, store.config(run_dir), store.metric_arrays(run_dir), status=status, references=refs)

    if status == RunStatus.RUNNING:
        return compute()
    key = ("diagnosis", str(status), refs.source, tuple(r.run_id for r in refs.runs))
    return store.memo(run_dir, key, compute, files=(RUN_JSON, CONFIG_YAML, METRICS_CSV))
