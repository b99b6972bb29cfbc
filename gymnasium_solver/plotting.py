"""Plots of run metrics: a matplotlib Figure of single runs (the Python API's plot) and a PNG of each
config's mean and band over seeds (gsolve plot, the MCP plot_runs), each with a text description.

matplotlib is imported lazily (it costs ~0.5 s) so the MCP server starts fast; figures are drawn
without pyplot, so plotting works without a display and never changes a notebook's backend.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, get_args

import numpy as np
from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store import MetricSeries, RunStore, first_non_finite, query_metrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_POINTS = 1000  # per curve; min/max downsampling keeps spikes visible at this density


class CurveSummary(BaseModel):
    run_id: str
    metric: str
    points_total: int
    first: float | None
    last: float | None
    min: float | None
    max: float | None
    max_at_env_steps: int | None
    non_finite_count: int
    text: str = Field(description="one paragraph describing the curve")


def _fmt(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4g}"


def describe_curve(s: MetricSeries, run_id: str, threshold: float | None = None) -> str:
    """One paragraph: range, start/end, extremes, trend over the last quarter, non-finite values."""
    if s.points_total == 0 or s.first is None:
        extra = f" ({s.non_finite_count} non-finite values only)" if s.non_finite_count else ""
        return f"{run_id}: {s.metric} was never measured{extra}."
    x, y = np.asarray(s.env_steps, dtype=float), np.asarray(s.values, dtype=float)
    parts = [
        f"{run_id}: {s.metric} over {s.points_total} points from step {int(x[0])} to {int(x[-1])}: "
        f"starts at {_fmt(s.first)}, ends at {_fmt(s.last)}; max {_fmt(s.max)} at step {s.max_at_env_steps}, "
        f"min {_fmt(s.min)} at step {s.min_at_env_steps}."
    ]
    if y.shape[0] >= 8:
        q = max(y.shape[0] // 4, 2)
        head, tail = float(np.mean(y[-2 * q : -q])), float(np.mean(y[-q:]))
        spread = (s.max or 0.0) - (s.min or 0.0)
        if spread > 0:
            change = (tail - head) / spread
            trend = "rising" if change > 0.05 else ("falling" if change < -0.05 else "flat")
            parts.append(f"Over the last quarter it is {trend} ({_fmt(head)} -> {_fmt(tail)}).")
    if threshold is not None and s.metric in (rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN):
        hit = np.flatnonzero(y >= threshold)
        parts.append(
            f"It first reaches the threshold {_fmt(threshold)} at step {int(x[hit[0]])}."
            if hit.shape[0]
            else f"It never reaches the threshold {_fmt(threshold)} (best {_fmt(s.max)})."
        )
    if s.non_finite_count:
        first_bad = first_non_finite(s)
        where = f", first at step {first_bad[0]} ({first_bad[1]})" if first_bad else ""
        parts.append(f"{s.non_finite_count} non-finite values are not drawn{where}.")
    return " ".join(parts)


def _threshold(store: RunStore, run_dir: Path) -> float | None:
    try:
        return store.info(run_dir).reward_threshold
    except ValueError:
        return None


def _curve(store: RunStore, run_dir: Path, metric: str, start: int | None, end: int | None) -> tuple[MetricSeries, CurveSummary]:
    s = query_metrics(store, run_dir, [metric], start, end, max_points=PLOT_POINTS).series[0]
    text = describe_curve(s, run_dir.name, _threshold(store, run_dir))
    return s, CurveSummary(
        run_id=run_dir.name, metric=metric, points_total=s.points_total, first=s.first, last=s.last, min=s.min,
        max=s.max, max_at_env_steps=s.max_at_env_steps, non_finite_count=s.non_finite_count, text=text,
    )


def _draw(curves: list[tuple[MetricSeries, CurveSummary]], metric: str, threshold: float | None) -> Figure:
    # A bare Figure, not pyplot: no global figure list to leak into and no backend to switch, so the
    # server draws without a display and a notebook keeps its own (inline) backend.
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    ax = fig.subplots()
    for s, c in curves:
        ax.plot(s.env_steps, s.values, label=c.run_id, linewidth=1.2)
        bad = sorted(step for steps in s.non_finite.values() for step in steps)
        if bad:
            ax.scatter(bad, [s.max if s.max is not None else 0.0] * len(bad), marker="x", color="red",
                       label=f"{c.run_id} non-finite", zorder=3)
    if threshold is not None and metric in (rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN):
        ax.axhline(threshold, color="gray", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
    ax.set_xlabel("environment steps")
    ax.set_ylabel(metric)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def _shared_threshold(store: RunStore, run_dirs: list[Path]) -> float | None:
    """The reward threshold to draw: the runs' common one, none if they differ."""
    thresholds = {t for t in (_threshold(store, d) for d in run_dirs) if t is not None}
    return thresholds.pop() if len(thresholds) == 1 else None


def metric_figure(store: RunStore, run_dirs: list[Path], metric: str, start_env_steps: int | None = None,
                  end_env_steps: int | None = None) -> Figure:
    """A matplotlib Figure of one metric of one or more runs against env steps (the Python API's plot):
    the same curves as the PNG tools draw, the threshold dashed when the runs share one."""
    curves = [_curve(store, d, metric, start_env_steps, end_env_steps) for d in run_dirs]
    return _draw(curves, metric, _shared_threshold(store, run_dirs))


# ---------------------------------------------------------------------------------------------
# Curves over seeds: a mean line and a band per config (gsolve plot)
# ---------------------------------------------------------------------------------------------
Band = Literal["minmax", "iqr"]
GroupBy = Literal["config", "run"]
BANDS: tuple[str, ...] = get_args(Band)
GROUP_BY: tuple[str, ...] = get_args(GroupBy)
GRID_POINTS = 200  # per group: where the seeds' curves are interpolated to take the mean and band
MAX_SMOOTH = 1000


class GroupCurve(BaseModel):
    label: str = Field(description="the config (or run) the curve stands for")
    run_ids: list[str]
    final_mean: float | None = Field(description="the mean curve's last value")
    final_low: float | None = Field(description="the band's lower edge at the end")
    final_high: float | None = Field(description="the band's upper edge at the end")
    peak_mean: float | None = Field(description="the mean curve's highest value")
    first_at_threshold: int | None = Field(default=None, description="env steps where the mean curve first reaches "
                                           "the reward threshold (return metrics only)")
    non_finite_count: int = Field(default=0, description="nan/inf values in its runs, not drawn")
    text: str


class GroupPlotResult(BaseModel):
    """What `gsolve plot` drew: one mean line and band per group, in words (the PNG is written beside)."""

    metric: str
    title: str
    group_by: str
    band: str = Field(description="minmax (the band spans every seed) or iqr (25th-75th percentile)")
    smooth: int = Field(description="trailing moving average over this many points per run (1: none)")
    groups: list[GroupCurve]
    reward_threshold: float | None = None


class _Band(NamedTuple):
    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    measured: np.ndarray  # True where x is a step some run logged, not only a point of the even grid


def smooth_values(y: np.ndarray, n: int) -> np.ndarray:
    """Trailing moving average over ``n`` points (fewer at the start), so a curve keeps its length."""
    if n <= 1 or y.shape[0] == 0:
        return y
    c = np.cumsum(np.insert(y, 0, 0.0))
    idx = np.arange(1, y.shape[0] + 1)
    lo = np.maximum(idx - n, 0)
    return (c[idx] - c[lo]) / (idx - lo)


def seed_band(curves: list[tuple[np.ndarray, np.ndarray]], band: str) -> _Band | None:
    """Mean and band of several runs' curves on a shared grid; each run counts only over the steps it
    covers (a longer seed extends the line alone, its band then that one run)."""
    curves = [(x, y) for x, y in curves if x.shape[0]]
    if not curves:
        return None
    start, end = min(float(x[0]) for x, _ in curves), max(float(x[-1]) for x, _ in curves)
    # The runs' own steps join the even grid: a peak or a first step at the threshold between two grid points
    # would otherwise be read off a line drawn across it (a run's best 385.6 reported as 385.4).
    grid = np.union1d(np.linspace(start, end, GRID_POINTS) if end > start else np.array([start]),
                      np.concatenate([x for x, _ in curves]))
    stack = np.full((len(curves), grid.shape[0]), np.nan)
    for i, (x, y) in enumerate(curves):
        inside = (grid >= x[0]) & (grid <= x[-1])
        stack[i, inside] = np.interp(grid[inside], x, y)
    keep = ~np.all(np.isnan(stack), axis=0)
    grid, stack = grid[keep], stack[:, keep]
    if band == "iqr":
        low, high = np.nanpercentile(stack, 25, axis=0), np.nanpercentile(stack, 75, axis=0)
    else:
        low, high = np.nanmin(stack, axis=0), np.nanmax(stack, axis=0)
    measured = np.isin(grid, np.concatenate([x for x, _ in curves]))
    return _Band(grid, np.nanmean(stack, axis=0), low, high, measured)


class _RunCurve(NamedTuple):
    x: np.ndarray
    y: np.ndarray
    non_finite: int


def _run_curve(store: RunStore, run_dir: Path, metric: str, smooth: int, start: int | None = None,
               end: int | None = None) -> _RunCurve:
    s = query_metrics(store, run_dir, [metric], start, end, max_points=PLOT_POINTS).series[0]
    x, y = np.asarray(s.env_steps, dtype=float), np.asarray(s.values, dtype=float)
    ok = np.isfinite(y)
    return _RunCurve(x[ok], smooth_values(y[ok], smooth), s.non_finite_count)


def _groups(store: RunStore, run_dirs: list[Path], group_by: str) -> list[tuple[str, list[Path]]]:
    if group_by == "run":
        return [(d.name, [d]) for d in run_dirs]
    from gymnasium_solver.run_store import group_runs

    return [(g.label, [store.runs_dir / r for r in g.run_ids]) for g in group_runs(store, run_dirs)]


def _describe_group(label: str, dirs: list[Path], b: _Band | None, metric: str,
                    threshold: float | None, non_finite: int = 0, span: str = "") -> GroupCurve:
    ids = [d.name for d in dirs]
    bad = f" {non_finite} non-finite value(s) are not drawn." if non_finite else ""
    if b is None:
        when = f"not measured {span}" if span else "never measured"  # a range may hold none of the measurements
        return GroupCurve(label=label, run_ids=ids, final_mean=None, final_low=None, final_high=None, peak_mean=None,
                          non_finite_count=non_finite,
                          text=f"{label}: {metric} was {when} in its {len(dirs)} run(s).{bad}")
    hit = None
    if threshold is not None and metric in (rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN):
        above = np.flatnonzero((b.mean >= threshold) & b.measured)  # a step a run was measured at, not between
        hit = int(b.x[above[0]]) if above.shape[0] else None
    text = (f"{label}: {len(dirs)} run(s); mean {metric} ends at {_fmt(float(b.mean[-1]))} (band "
            f"{_fmt(float(b.low[-1]))}..{_fmt(float(b.high[-1]))}) at step {int(b.x[-1])}, peaks at "
            f"{_fmt(float(np.max(b.mean)))}"
            + (f"; the mean reaches the threshold {_fmt(threshold)} at step {hit}" if hit is not None else "") + "."
            + bad)
    return GroupCurve(label=label, run_ids=ids, final_mean=float(b.mean[-1]), final_low=float(b.low[-1]),
                      final_high=float(b.high[-1]), peak_mean=float(np.max(b.mean)), first_at_threshold=hit,
                      non_finite_count=non_finite, text=text)


def plot_groups(store: RunStore, run_dirs: list[Path], metric: str, group_by: str = "config", smooth: int = 1,
                band: str = "minmax", title: str | None = None, start_env_steps: int | None = None,
                end_env_steps: int | None = None) -> tuple[bytes, GroupPlotResult]:
    """PNG of one metric over env steps (optionally only from/up to an env step): per group of runs (a
    config over seeds, or each run) a mean line and a min-max or interquartile band, the shared reward
    threshold dashed, a title; and its description."""
    if band not in BANDS:
        raise ValueError(f"band must be one of {', '.join(BANDS)}, got {band!r}")
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {', '.join(GROUP_BY)}, got {group_by!r}")
    if not 1 <= smooth <= MAX_SMOOTH:
        raise ValueError(f"smooth must be between 1 and {MAX_SMOOTH} points, got {smooth}")
    if not run_dirs:
        raise ValueError("no runs to plot")
    threshold = _shared_threshold(store, run_dirs)
    drawn = []
    for label, dirs in _groups(store, run_dirs, group_by):
        curves = [_run_curve(store, d, metric, smooth, start_env_steps, end_env_steps) for d in dirs]
        drawn.append((label, dirs, seed_band([(c.x, c.y) for c in curves], band), sum(c.non_finite for c in curves)))
    envs = sorted({c.split(":")[0] for c in (_config_id(store, d) for d in run_dirs) if c})
    ranged = start_env_steps is not None or end_env_steps is not None
    title = title or (f"{metric} on {', '.join(envs) or 'runs'}: {len(drawn)} "
                      f"{'config' if group_by == 'config' else 'run'}(s), {len(run_dirs)} run(s)"
                      + (f", smoothed over {smooth}" if smooth > 1 else "")
                      + (f", env steps {start_env_steps or 0}..{'' if end_env_steps is None else end_env_steps}"
                         if ranged else ""))
    span = (f"between env steps {start_env_steps or 0} and "
            f"{'the end' if end_env_steps is None else end_env_steps}") if ranged else ""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 5), dpi=100)
    ax = fig.subplots()
    for label, dirs, b, _ in drawn:
        if b is None:
            continue
        (line,) = ax.plot(b.x, b.mean, linewidth=1.6, label=f"{label} (n={len(dirs)})")
        if len(dirs) > 1:
            ax.fill_between(b.x, b.low, b.high, color=line.get_color(), alpha=0.2, linewidth=0)
    if threshold is not None and metric in (rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN):
        ax.axhline(threshold, color="gray", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("environment steps")
    ax.set_ylabel(metric + (" (mean, band: " + ("min-max" if band == "minmax" else "25-75%") + " over seeds)"
                            if group_by == "config" else ""), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    with warnings.catch_warnings():  # a very long title or label: drawn without the tight layout, not an error
        warnings.filterwarnings("ignore", "Tight layout not applied", UserWarning)
        fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue(), GroupPlotResult(
        metric=metric, title=title, group_by=group_by, band=band, smooth=smooth, reward_threshold=threshold,
        groups=[_describe_group(label, dirs, b, metric, threshold, bad, span) for label, dirs, b, bad in drawn])


def _config_id(store: RunStore, run_dir: Path) -> str | None:
    try:
        return store.info(run_dir).config_id
    except ValueError:
        return None
