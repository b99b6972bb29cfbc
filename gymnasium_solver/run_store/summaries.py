"""One-line summaries of runs: listing them with filters and pages, and finding the best."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import RunStatus
from gymnasium_solver.run_store.files import RunFileError
from gymnasium_solver.run_store.limits import MAX_LIST_LIMIT, check_limit
from gymnasium_solver.run_store.refs import RunNotFoundError, no_runs, validate_ref
from gymnasium_solver.run_store.store import RunStore

Threshold = float | str | None


def threshold(x: float | None) -> Threshold:
    """A reward threshold for an answer: JSON has no infinity, so a non-finite one is the string 'inf'."""
    if x is None or math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def run_threshold(store: RunStore, run_dir: Path, info: rf.RunInfo) -> Threshold:
    """The run's reward threshold; run.json stores an infinite one as null, so config.yaml says which."""
    if info.reward_threshold is not None:
        return threshold(info.reward_threshold)
    try:
        value = store.config(run_dir).get("reward_threshold")
    except RunFileError:
        return None
    return threshold(float(value)) if isinstance(value, int | float) and not isinstance(value, bool) else None


class EvalSummary(BaseModel):
    return_mean: float
    return_std: float
    env_steps: int
    wall_seconds: float


class RunSummary(BaseModel):
    """One run in a listing. ``problem`` is set (and most fields empty) when run.json is unreadable."""

    run_id: str
    config_id: str | None = None
    env_id: str | None = None
    algo: str | None = None
    status: str = Field(description="running, completed, failed, stopped, crashed (process gone), or unreadable")
    stop_reason: str | None = None
    created_at: str | None = None
    env_steps: int = 0
    max_env_steps: int | None = None
    progress: float | None = Field(default=None, description="env_steps / max_env_steps, 0..1")
    best_eval_return: float | None = None
    final_eval_return: float | None = Field(default=None, description="return of the latest evaluation")
    reward_threshold: Threshold = Field(default=None, description="'inf' when the run has no threshold to reach")
    solved: bool = False
    solved_at_env_steps: int | None = None
    solved_at_wall_seconds: float | None = None
    trial_of: str | None = Field(default=None, description="the fix experiment or sweep this run is a trial of; "
                                 "None for a run someone started")
    problem: str | None = None


class RunKind(StrEnum):
    """Which runs a listing shows: runs someone started, trials of a fix experiment or sweep, or both."""

    TRAIN = "train"
    TRIAL = "trial"
    ALL = "all"


def is_kind(s: RunSummary, kind: RunKind | str) -> bool:
    return kind == RunKind.ALL or (s.trial_of is not None) == (kind == RunKind.TRIAL)


def summarize_run(store: RunStore, run_dir: Path) -> RunSummary:
    """A RunSummary for one run folder; a missing/malformed run.json becomes ``problem``, not an error."""
    try:
        info = store.info(run_dir)
    except RunFileError as exc:
        return RunSummary(run_id=run_dir.name, status=RunStatus.UNREADABLE.value, problem=str(exc))
    return RunSummary(
        run_id=info.run_id,
        config_id=info.config_id,
        env_id=info.env_id,
        algo=info.algo,
        status=str(rf.effective_status(info)),
        stop_reason=None if info.stop_reason is None else str(info.stop_reason),
        created_at=info.created_at,
        env_steps=info.progress.env_steps,
        max_env_steps=info.max_env_steps,
        progress=round(min(info.progress.env_steps / info.max_env_steps, 1.0), 4) if info.max_env_steps else None,
        best_eval_return=None if info.best_eval is None else info.best_eval.return_mean,
        final_eval_return=None if info.last_eval is None else info.last_eval.return_mean,
        reward_threshold=run_threshold(store, run_dir, info),
        solved=info.solved,
        solved_at_env_steps=None if info.solved_at is None else info.solved_at.env_steps,
        solved_at_wall_seconds=None if info.solved_at is None else info.solved_at.wall_seconds,
        trial_of=rf.trial_of(info),
    )


class RunList(BaseModel):
    runs: list[RunSummary] = Field(description="newest first")
    total_runs: int = Field(description="run folders in the runs folder, before filtering")
    next_cursor: str | None = Field(
        default=None, description="pass as cursor to get the next (older) page; None when this is the last page"
    )
    hidden: int = Field(default=0, description="runs that match the other filters but not kind (e.g. fix and sweep "
                        "trials when kind='train'), on the pages read so far")
    note: str = ""


def _matches(s: RunSummary, env_id: str | None, algo: str | None, status: str | None, solved: bool | None) -> bool:
    if env_id is not None and s.env_id != env_id:
        return False
    if algo is not None and s.algo != algo:
        return False
    if status is not None and s.status != status:
        return False
    return solved is None or s.solved == solved


_STATUSES = [s.value for s in RunStatus]


def list_runs(
    store: RunStore,
    env_id: str | None = None,
    algo: str | None = None,
    status: str | None = None,
    solved: bool | None = None,
    limit: int = 20,
    cursor: str | None = None,
    kind: RunKind | str = RunKind.ALL,
) -> RunList:
    """Runs newest first, filtered, one page of at most ``limit``; ``next_cursor`` continues. ``kind``
    'train' hides fix / sweep trials (counted in ``hidden``), 'trial' shows only them."""
    check_limit("limit", limit, MAX_LIST_LIMIT)
    if status is not None and status not in _STATUSES:
        raise ValueError(f"unknown status {status!r}; use one of {', '.join(_STATUSES)}")
    ids = store.run_ids()
    if cursor is not None:
        cursor = validate_ref(cursor)
        if cursor not in ids:
            raise RunNotFoundError(f"cursor {cursor!r} is not a run id; pass the next_cursor of a previous list_runs answer")
    kind = RunKind(kind)
    candidates = [i for i in reversed(ids) if cursor is None or i < cursor]
    out: list[RunSummary] = []
    next_cursor = None
    hidden = 0
    for run_id in candidates:
        s = summarize_run(store, store.runs_dir / run_id)
        if not _matches(s, env_id, algo, status, solved):
            continue
        if not is_kind(s, kind):
            hidden += 1
            continue
        if len(out) == limit:
            next_cursor = out[-1].run_id
            break
        out.append(s)
    note = ""
    if not out:
        filters = {k: v for k, v in dict(env_id=env_id, algo=algo, status=status, solved=solved).items() if v is not None}
        if kind != RunKind.ALL:
            filters["kind"] = kind.value
        envs = sorted({s.env_id for s in (summarize_run(store, store.runs_dir / i) for i in ids[-200:]) if s.env_id})
        where = store.runs_dir.resolve()
        if not ids:
            return RunList(runs=[], total_runs=0, note=f"{no_runs(where)}; start one with start_training or "
                           "`gsolve train ENV:VARIANT`")
        note = (
            f"no runs match {filters or 'the request'} in {where} ({len(ids)} runs in total"
            + (f"; recent environments: {', '.join(envs)}" if envs else "")
            + "). Start one with start_training or `gsolve train ENV:VARIANT`."
        )
    elif next_cursor:
        note = f"showing {len(out)}; more runs match: call again with cursor={next_cursor!r}"
    return RunList(runs=out, total_runs=len(ids), next_cursor=next_cursor, hidden=hidden, note=note)
