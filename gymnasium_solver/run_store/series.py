"""Metric series of one run: downsampled curves, non-finite points, and the list of metrics."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store.files import RunFileError, label
from gymnasium_solver.run_store.limits import (
    MAX_NON_FINITE_LISTED,
    MAX_POINTS_PER_SERIES,
    MAX_POINTS_TOTAL,
    check_limit,
)
from gymnasium_solver.run_store.store import RunStore

DEFAULT_METRICS = (
    rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN, rf.M.POLICY_LOSS, rf.M.VALUE_LOSS, rf.M.ENTROPY,
    rf.M.APPROX_KL, rf.M.EXPLAINED_VARIANCE,
)  # fmt: skip


# Curve values are rounded to this many significant digits: enough to read a curve and to tell
# 474.96 from a threshold of 475, at about half the characters of full precision.
SIGNIFICANT_DIGITS = 5


def _round(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    return float(f"{x:.{digits}g}")


NonFiniteKind = Literal["nan", "inf", "-inf"]


def _non_finite_label(x: float) -> NonFiniteKind:
    return "nan" if np.isnan(x) else ("inf" if x > 0 else "-inf")



def unknown_metric_error(names: str | list[str], available: list[str]) -> ValueError:
    """One error for every unknown name, each with its close matches, and the names that exist."""
    parts = []
    for name in [names] if isinstance(names, str) else names:
        close = difflib.get_close_matches(name, available, n=3, cutoff=0.4)
        parts.append(f"{name!r}" + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""))
    return ValueError(f"this run has no metric {', '.join(parts)}. Available: {', '.join(available)}")



class MetricSeries(BaseModel):
    """One metric against env_steps, as parallel arrays. Only rows where it was measured; nan/inf
    values are counted and located apart. What a metric means: get_run_metrics(catalog=true)."""

    metric: str
    env_steps: list[int] = Field(description="x values (environment steps)")
    values: list[float] = Field(description=f"y values at env_steps, {SIGNIFICANT_DIGITS} significant digits; finite only")
    points_total: int = Field(description="measured points in the requested range, before downsampling")
    downsampled: bool = Field(description="true when env_steps/values hold fewer than points_total points")
    first: float | None = None
    last: float | None = None
    min: float | None = None
    min_at_env_steps: int | None = None
    max: float | None = None
    max_at_env_steps: int | None = None
    non_finite_count: int = 0
    non_finite: dict[NonFiniteKind, list[int]] = Field(
        default_factory=dict, description=f"env steps where the metric was nan/inf, by kind (first {MAX_NON_FINITE_LISTED})"
    )


class MetricsResult(BaseModel):
    run_id: str
    rows_total: int = Field(description="rows in metrics.csv")
    env_steps_range: list[int] = Field(description="[first, last] env_steps of the rows considered")
    series: list[MetricSeries]
    metrics_available: int = Field(description="metric columns this run has; get_run_metrics(catalog=true) names and explains them")
    note: str = Field(default="", description="what was cut (downsampling, limits) and how to get more")


def first_non_finite(s: MetricSeries) -> tuple[int, str] | None:
    """(env_steps, kind) of the earliest listed nan/inf point of a series, or None."""
    firsts = [(steps[0], kind) for kind, steps in s.non_finite.items() if steps]
    return min(firsts) if firsts else None


def downsample_indices(y: np.ndarray, max_points: int) -> np.ndarray:
    """Indices of at most max_points points that keep the first, last, and each bucket's min and max."""
    n = y.shape[0]
    if n <= max_points:
        return np.arange(n)
    buckets = max((max_points - 2) // 2, 1)  # two points per bucket plus the first and last
    k = n // buckets
    body = y[: (buckets - 1) * k].reshape(buckets - 1, k)
    base = np.arange(buckets - 1) * k
    start = (buckets - 1) * k  # the last bucket also takes the remainder of n / buckets
    tail = y[start:]
    picks = [base + np.argmin(body, axis=1), base + np.argmax(body, axis=1), np.array([0, n - 1]),
             np.array([start + int(np.argmin(tail)), start + int(np.argmax(tail))])]
    return np.unique(np.concatenate(picks))


def _series(store: RunStore, run_dir: Path, name: str, rows: np.ndarray, x_all: np.ndarray,
            max_points: int) -> MetricSeries:
    values, missing = store.metric_column(run_dir, name)
    measured = ~missing[rows]
    y = values[rows][measured]
    x = x_all[measured]
    finite = np.isfinite(y)
    yf, xf = y[finite], x[finite]
    idx = downsample_indices(yf, max_points)
    bad = np.flatnonzero(~finite)
    non_finite: dict[NonFiniteKind, list[int]] = {}
    for i in bad[:MAX_NON_FINITE_LISTED]:
        non_finite.setdefault(_non_finite_label(float(y[i])), []).append(int(x[i]))
    s = MetricSeries(
        metric=name,
        env_steps=[int(v) for v in xf[idx]],
        values=[_round(float(v)) for v in yf[idx]],
        points_total=int(y.shape[0]),
        downsampled=len(idx) < yf.shape[0],
        non_finite_count=int(bad.shape[0]),
        non_finite=non_finite,
    )
    if yf.shape[0]:
        imin, imax = int(np.argmin(yf)), int(np.argmax(yf))
        s.first, s.last = _round(float(yf[0])), _round(float(yf[-1]))
        s.min, s.min_at_env_steps = _round(float(yf[imin])), int(xf[imin])
        s.max, s.max_at_env_steps = _round(float(yf[imax])), int(xf[imax])
    return s


def _choose_metrics(columns: list[str], available: list[str], metrics: list[str] | None) -> list[str]:
    if metrics is None:
        return [m for m in DEFAULT_METRICS if m in columns]
    if not metrics:  # asked for nothing: answering with the defaults would answer another question
        raise ValueError(f"metrics is an empty list: name at least one, or leave it out for the defaults "
                         f"({', '.join(m for m in DEFAULT_METRICS if m in columns)}). Available: {', '.join(available)}")
    unknown = [m for m in dict.fromkeys(metrics) if m not in columns]
    if unknown:
        raise unknown_metric_error(unknown, available)
    return list(dict.fromkeys(metrics))


def query_metrics(
    store: RunStore,
    run_dir: Path,
    metrics: list[str] | None = None,
    start_env_steps: int | None = None,
    end_env_steps: int | None = None,
    max_points: int = 200,
) -> MetricsResult:
    """Selected metric series over an env-step range, each downsampled to at most ``max_points``.

    Downsampling keeps every bucket's min and max (spikes stay visible) and the first and last
    point; nan/inf values are counted and located separately (JSON has no NaN). The answer is
    memoised until metrics.csv changes and shared between callers, like every memoised answer
    (RunStore.memo): read it, do not modify it.
    """
    key = ("query_metrics", None if metrics is None else tuple(metrics), start_env_steps, end_env_steps, max_points)
    return store.memo(run_dir, key, lambda: _query_metrics(store, run_dir, metrics, start_env_steps,
                                                           end_env_steps, max_points))


def _query_metrics(
    store: RunStore,
    run_dir: Path,
    metrics: list[str] | None,
    start_env_steps: int | None,
    end_env_steps: int | None,
    max_points: int,
) -> MetricsResult:
    check_limit("max_points", max_points, MAX_POINTS_PER_SERIES, minimum=10)
    columns = store.metric_columns(run_dir)
    if not columns:
        raise RunFileError(f"{label(run_dir, rf.METRICS_CSV)} has no header yet: the run is just starting (or the file is empty); try again shortly")
    available = [c for c in columns if c not in (rf.M.ENV_STEPS,)]
    chosen = _choose_metrics(columns, available, metrics)
    if start_env_steps is not None and end_env_steps is not None and start_env_steps > end_env_steps:
        raise ValueError(f"start_env_steps ({start_env_steps}) is after end_env_steps ({end_env_steps})")
    notes = []
    budget = max(MAX_POINTS_TOTAL // max(len(chosen), 1), 10)
    if budget < max_points:
        notes.append(f"max_points lowered to {budget} per metric to keep the answer small; ask for fewer metrics for more")
        max_points = budget
    store.prefetch_columns(run_dir, chosen)  # one read converts them all
    # x axis: env_steps (the contract's step counter); a file without it falls back to row numbers.
    if rf.M.ENV_STEPS in columns:
        steps = store.metric_column(run_dir, rf.M.ENV_STEPS)[0]
    else:
        steps = np.arange(store.metric_missing(run_dir, columns[0]).shape[0], dtype=float)
    n = steps.shape[0]
    rows = np.arange(n)
    if n:
        keep = np.isfinite(steps)  # a row without a usable step count cannot be placed on the x axis
        if start_env_steps is not None:
            keep &= steps >= start_env_steps
        if end_env_steps is not None:
            keep &= steps <= end_env_steps
        rows = np.flatnonzero(keep)
    x_all = steps[rows]
    series = [_series(store, run_dir, m, rows, x_all, max_points) for m in chosen]
    cut = [s.metric for s in series if s.downsampled]
    if cut:
        notes.append(
            f"downsampled to at most {max_points} points each (bucket min/max kept): {', '.join(cut)}; narrow "
            f"start_env_steps/end_env_steps or raise max_points (up to {MAX_POINTS_PER_SERIES}) for more detail"
        )
    if any(s.non_finite_count > MAX_NON_FINITE_LISTED for s in series):
        notes.append(f"only the first {MAX_NON_FINITE_LISTED} non-finite points per metric are listed")
    if empty := [s.metric for s in series if rows.shape[0] and s.points_total == 0 and s.non_finite_count == 0]:
        notes.append(f"no value in any of the {rows.shape[0]} rows for {', '.join(empty)}: an empty column, not a "
                     "read error (e.g. eval/* before the first evaluation, train/grad_norm_trunk when actor and critic "
                     "share no layer; docs/metrics.md)")
    if n == 0:
        notes.append("metrics.csv has no complete rows yet (the first iteration has not finished)")
    elif rows.shape[0] == 0:
        placed = steps[np.isfinite(steps)]
        notes.append("no rows in the requested env-step range" + (
            f"; this run's rows run from env step {int(placed.min())} to {int(placed.max())}" if placed.shape[0] else ""))
    return MetricsResult(
        run_id=run_dir.name,
        rows_total=n,
        env_steps_range=[int(x_all[0]), int(x_all[-1])] if x_all.shape[0] else [],
        series=series,
        metrics_available=len(available),
        note="; ".join(notes),
    )


class MetricInfo(BaseModel):
    name: str
    description: str | None
    measured_rows: int = Field(description="rows where the metric has a value")
    last: float | str | None = Field(default=None, description="last measured value ('nan'/'inf' if non-finite)")


class MetricList(BaseModel):
    run_id: str
    rows_total: int
    metrics: list[MetricInfo]


def available_metrics(store: RunStore, run_dir: Path) -> MetricList:
    """Every column of the run's metrics.csv with its meaning, how often it was measured and its last value."""
    arrays = store.metric_arrays(run_dir)  # one read and one pass, whatever the number of columns
    measured = ~arrays.missing
    counts = measured.sum(axis=0)
    out = []
    for j, name in enumerate(arrays.columns):
        present = np.flatnonzero(measured[:, j])
        v = float(arrays.values[present[-1], j]) if present.shape[0] else None
        last: float | str | None = v if v is None or np.isfinite(v) else _non_finite_label(v)
        out.append(MetricInfo(name=name, description=rf.METRIC_DESCRIPTIONS.get(name),
                              measured_rows=int(counts[j]), last=last))
    return MetricList(run_id=run_dir.name, rows_total=len(arrays), metrics=out)
