"""PNG plots of run metrics plus a one-paragraph text description of each curve.

matplotlib is imported lazily (it costs ~0.5 s) so the MCP server starts fast; figures are drawn
without pyplot, so plotting works without a display and never changes a notebook's backend.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field

from gymnasium_solver import run_folder as rf
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


class PlotResult(BaseModel):
    """What the plot shows, in words (the image itself is returned alongside)."""

    metric: str
    summary: str = Field(description="one paragraph describing the curve(s)")
    curves: list[CurveSummary]
    reward_threshold: float | None = None


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


def _render(curves: list[tuple[MetricSeries, CurveSummary]], metric: str, threshold: float | None) -> bytes:
    buf = io.BytesIO()
    _draw(curves, metric, threshold).savefig(buf, format="png")
    return buf.getvalue()


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


def plot_run_metric(
    store: RunStore, run_dir: Path, metric: str, start_env_steps: int | None = None, end_env_steps: int | None = None
) -> tuple[bytes, PlotResult]:
    """PNG of one metric of one run against env steps, and its description."""
    curve = _curve(store, run_dir, metric, start_env_steps, end_env_steps)
    threshold = _threshold(store, run_dir)
    png = _render([curve], metric, threshold)
    return png, PlotResult(metric=metric, summary=curve[1].text, curves=[curve[1]], reward_threshold=threshold)


def plot_compare_runs(store: RunStore, run_dirs: list[Path], metric: str) -> tuple[bytes, PlotResult]:
    """PNG of one metric for several runs on shared axes, and a description of each curve."""
    curves = [_curve(store, d, metric, None, None) for d in run_dirs]
    threshold = _shared_threshold(store, run_dirs)
    png = _render(curves, metric, threshold)
    ranked = sorted((c for _, c in curves if c.max is not None), key=lambda c: -(c.max or 0.0))
    lead = f"Highest {metric}: {ranked[0].run_id} ({_fmt(ranked[0].max)}). " if ranked else ""
    return png, PlotResult(
        metric=metric, summary=lead + " ".join(c.text for _, c in curves), curves=[c for _, c in curves],
        reward_threshold=threshold,
    )
