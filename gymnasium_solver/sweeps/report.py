"""What a sweep found: progress, the best trial, parameter importances, and how to reproduce the best.

Read from the sweep record and its Optuna study (and, for a running trial, its run folder), by
``gsolve sweep`` at the end, ``gsolve sweep-status`` and the MCP tool ``get_sweep``.
"""

from __future__ import annotations

import shlex
import warnings
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.config import env_modules
from gymnasium_solver.experiments.commands import train_command
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.check import SweepCheck, check_in_progress, read_check
from gymnasium_solver.sweeps.check import render as render_check
from gymnasium_solver.sweeps.record import SweepRecord, format_value, list_sweep_ids, read_record
from gymnasium_solver.sweeps.space import to_overrides

MAX_TRIALS_SHOWN = 40
MAX_DIAGNOSED = 8  # failed/pruned trials given a diagnosis headline (each costs a diagnosis)


class TrialRow(BaseModel):
    number: int
    state: str = Field(description="Optuna's state: RUNNING, COMPLETE, PRUNED, FAIL, WAITING")
    outcome: str = Field(description="solved, not_solved, pruned, failed, interrupted or running")
    params: dict[str, Any]
    value: float | None = Field(default=None, description="the objective (lower is better); null when unsolved: "
                                "such trials rank after the solved ones, by best_eval")
    run_id: str | None = None
    env_steps: int = 0
    solved_at_env_steps: int | None = None
    seconds: float | None = None
    best_eval: float | None = None
    detail: str = ""
    diagnosis: str | None = Field(default=None, description="failed/pruned trials: the diagnosis' one-line summary")


class BestTrial(BaseModel):
    number: int
    solved: bool
    result: str = Field(default="", description="what it achieved, e.g. 'solved at 12,288 env steps' or 'not solved: "
                        "best eval 474.9'")
    value: float | None = Field(description="the objective (lower is better); null when unsolved")
    params: dict[str, Any]
    run_id: str | None
    solved_at_env_steps: int | None
    seconds: float | None
    best_eval: float | None
    command: str = Field(description="`gsolve train ...` that reproduces the best trial")
    preset_snippet: str = Field(description="a preset variant (YAML under variants:) with the best values")


class SweepSummary(BaseModel):
    """A sweep's state: progress, best trial so far, importances, and the trials (newest last)."""

    sweep: SweepRecord
    finished: int = Field(description="trials finished (solved, not solved, pruned or failed)")
    counts: dict[str, int] = Field(description="trials by outcome")
    best: BestTrial | None = None
    importances: dict[str, float] | None = Field(
        default=None, description="Optuna's parameter importances (PED-ANOVA), summing to 1; None until computable")
    importances_note: str | None = None
    trials: list[TrialRow]
    trials_omitted: int = Field(default=0, description="older finished trials left out of 'trials'")
    check: SweepCheck | None = Field(
        default=None, description="the latest `gsolve sweep-check`: the best trials and the preset re-trained on "
        "held-out seeds (the figure that counts; the sweep itself ranks trials on its own seeds)")
    check_status: str | None = Field(
        default=None, description="a check started in the background (MCP check_sweep) that has not written its "
        "result: running, or crashed with where its log is; None otherwise")


def _row(t: Any) -> TrialRow:
    r = st.result_of(t)
    return TrialRow(number=t.number, state=t.state.name, outcome=r.outcome if t.state.name != "WAITING" else "queued",
                    params=dict(t.params), value=st.measured_value(t.value), run_id=r.run_id, env_steps=r.env_steps,
                    solved_at_env_steps=r.solved_at_env_steps, seconds=r.seconds, best_eval=r.best_eval,
                    detail=r.detail)


def variant_name(record: SweepRecord) -> str:
    return f"{record.config_id.split(':', 1)[1]}-{record.sweep_id.removeprefix('sweep-')}"


def best_trial(record: SweepRecord, study: Any) -> BestTrial | None:
    complete = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE" and t.value is not None]
    if not complete:
        return None
    t = min(complete, key=lambda x: x.value)
    r = st.result_of(t)
    overrides = to_overrides(dict(t.params), record.fixed_overrides)
    variant = record.config_id.split(":", 1)[1]
    # Whole values from the resolved config: a variant's `learning_rate: {start: x}` would replace the
    # preset's schedule (end included), where `--set learning_rate.start=x` merges into it.
    resolved = config_mod.resolve_config(record.config_id, overrides, use_zoo=record.use_zoo).model_dump(mode="json")
    snippet = yaml.safe_dump({variant_name(record): {"inherits": variant, **{k: resolved[k] for k in overrides}}},
                             sort_keys=False, default_flow_style=None)
    best = BestTrial(number=t.number, solved=r.outcome == "solved", value=st.measured_value(t.value),
                     params=dict(t.params), run_id=r.run_id, solved_at_env_steps=r.solved_at_env_steps,
                     seconds=r.seconds, best_eval=r.best_eval,
                     command=train_command(record.config_id, overrides, record.use_zoo), preset_snippet=snippet)
    return best.model_copy(update={"result": best_result(record, best)})


def best_result(record: SweepRecord, b: BestTrial) -> str:
    """The best trial's outcome in words: how fast it solved, or how close it came (never the ranking penalty)."""
    if not b.solved:
        return f"not solved: best eval {b.best_eval:g}" if b.best_eval is not None else "not solved: no evaluation"
    if record.seeds_per_trial > 1 and b.value is not None:
        unit = "env steps" if record.objective == "steps" else "s"
        return f"{record.seed_statistic} {format_value(b.value, record.objective)} {unit} over {record.seeds_per_trial} seeds"
    return _solved(b.solved_at_env_steps, b.seconds)


def importances(study: Any) -> tuple[dict[str, float] | None, str | None]:
    """Optuna's parameter importances (its default evaluator, PED-ANOVA) over the completed trials,
    or None and why not; a caveat Optuna warns about (e.g. too few trials to tell) goes in the note."""
    optuna = st.load_optuna()
    complete = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    if len(complete) < 2:
        return None, f"needs at least 2 completed trials, has {len(complete)}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            found = optuna.importance.get_param_importances(study)
        except (RuntimeError, ValueError) as exc:
            return None, f"not computable yet: {exc}"
    note = "; ".join(dict.fromkeys(str(w.message) for w in caught)) or None
    return {k: round(float(v), 4) for k, v in found.items()}, note


def summarize(store: RunStore, sweep_id: str, *, diagnose: bool = False) -> SweepSummary:
    """The sweep's summary. ``diagnose`` adds the diagnosis headline of up to MAX_DIAGNOSED failed or
    pruned trials (newest first)."""
    record = read_record(store.runs_dir, sweep_id)
    study = st.open_study(record, create=False)
    trials = study.get_trials(deepcopy=False)
    rows = [_row(t) for t in trials]
    for row in rows:  # a running trial's progress comes from its run folder
        if row.outcome == "running" and row.run_id:
            _refresh_running(store, row)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    imp, note = importances(study)
    shown = rows[-MAX_TRIALS_SHOWN:]
    if diagnose:
        _add_diagnoses(store, shown)
    return SweepSummary(sweep=record, finished=sum(1 for t in trials if st.counts_toward_total(t)), counts=counts,
                        best=best_trial(record, study), importances=imp, importances_note=note, trials=shown,
                        trials_omitted=len(rows) - len(shown), check=read_check(store.runs_dir, record.sweep_id, record.seeds_per_trial),
                        check_status=check_in_progress(store.runs_dir, record.sweep_id))


def _refresh_running(store: RunStore, row: TrialRow) -> None:
    try:
        info = store.info(store.resolve(row.run_id or ""))
    except ValueError:
        return
    row.env_steps = info.progress.env_steps
    row.best_eval = info.best_eval.return_mean if info.best_eval else None


def _add_diagnoses(store: RunStore, rows: list[TrialRow]) -> None:
    from gymnasium_solver.diagnostics import diagnose_run_dir

    todo = [r for r in reversed(rows) if r.outcome in ("failed", "pruned") and r.run_id][:MAX_DIAGNOSED]
    for row in todo:
        try:
            row.diagnosis = diagnose_run_dir(store, Path(store.resolve(row.run_id or ""))).summary
        except (ValueError, OSError) as exc:
            row.diagnosis = f"no diagnosis: {exc}"


class SweepListItem(BaseModel):
    sweep_id: str
    config_id: str
    status: str
    objective: str
    n_trials: int
    created_at: str
    message: str


def list_sweeps(runs_dir: Path, limit: int = 50) -> list[SweepListItem]:
    """The sweeps of a runs folder, newest first (records only: no study is opened)."""
    out = []
    for sweep_id in reversed(list_sweep_ids(runs_dir)):
        try:
            r = read_record(runs_dir, sweep_id)
        except ValueError:
            continue
        out.append(SweepListItem(sweep_id=r.sweep_id, config_id=r.config_id, status=r.status, objective=r.objective,
                                 n_trials=r.n_trials, created_at=r.created_at, message=r.message))
        if len(out) >= limit:
            break
    return out


def _solved(env_steps: int | None, seconds: float | None) -> str:
    """A solved trial's line; a multi-seed trial stopped mid-way can be solved with no single env-step count."""
    steps = f" at {env_steps:,} env steps" if env_steps is not None else ""
    return f"solved{steps}" + (f" in {seconds}s" if seconds is not None else "")


def render(summary: SweepSummary) -> str:
    """The summary for a person: a table of trials, the best, importances, and the reproduction."""
    rec = summary.sweep
    lines = [f"Sweep {rec.sweep_id} ({rec.config_id}, objective {rec.objective}): {summary.finished}/{rec.n_trials} "
             f"trials finished, status {rec.status}; " + ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items()))]
    # A trial over several seeds: its detail (seeds solved, the statistic, each seed's value); its first seed's
    # solve and the sum of its seconds would read as one run's.
    multi = rec.seeds_per_trial > 1
    for row in summary.trials:
        if row.outcome == "solved":
            what = row.detail if multi and row.detail else _solved(row.solved_at_env_steps, row.seconds)
        else:
            what = f"{row.outcome}: {row.detail}"
        params = " ".join(f"{k}={_short(v)}" for k, v in row.params.items())
        lines.append(f"  #{row.number:<3} {params}  -> {what}" + (f"  [run {row.run_id}]" if row.run_id else ""))
    b = summary.best
    if b is None:
        lines.append("No trial completed yet.")
    else:
        lines.append(f"Best: trial #{b.number} {best_result(rec, b)} [run {b.run_id}]")
        lines.append(f"Reproduce: {b.command}")
        lines.append("As a preset variant (add under variants: in the preset file):")
        lines += ["  " + ln for ln in b.preset_snippet.rstrip().splitlines()]
    if summary.importances:
        lines.append("Parameter importances: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.importances.items())
                     + (f" ({summary.importances_note})" if summary.importances_note else ""))
    elif summary.importances_note:
        lines.append(f"Parameter importances: {summary.importances_note}")
    if summary.check_status is not None:
        lines.append(f"Held-out check: {summary.check_status}")
    if summary.check is not None:
        lines.append("Held-out check (gsolve sweep-check):")
        lines += ["  " + ln for ln in render_check(summary.check).splitlines()]
    elif b is not None and b.solved and summary.check_status is None:
        ranked = f"{rec.seeds_per_trial} seeds of its own" if multi else "one seed"
        # With the --env-package/--env-class its trials were made with, as the Reproduce line: a command to copy.
        command = " ".join(["gsolve", "sweep-check", rec.sweep_id, *map(shlex.quote, env_modules.env_flags(rec.config_id))])
        lines.append(f"The best trial is ranked on {ranked}: {command} re-trains the best "
                     "trials and the preset on held-out seeds.")
    return "\n".join(lines)


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)

