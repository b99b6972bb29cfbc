"""Numeric helpers for the rules: the metrics as numpy arrays, windows and a robust trend.

Kept apart from the rules so each rule reads as its condition. numpy only (no torch, no scipy).
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from gymnasium_solver.contract.run_folder import M, MetricsTable


class MetricsArraysLike(Protocol):
    """run_store.MetricsArrays: metrics.csv as a float matrix plus a mask of empty cells."""

    @property
    def columns(self) -> list[str]: ...
    @property
    def values(self) -> np.ndarray: ...
    @property
    def missing(self) -> np.ndarray: ...


# Theil-Sen slopes are O(n^2) in the number of points; longer series are binned to this many.
MAX_TREND_POINTS = 200


class RunData:
    """A MetricsTable as a float matrix (None and nan both become nan) plus what was non-finite.

    ``None`` (not measured that iteration) and ``nan`` (measured non-finite) are told apart only
    where it matters, for the loss and gradient columns, without a Python pass over every cell.
    """

    def __init__(self, table: MetricsTable | MetricsArraysLike):
        self.columns = list(table.columns)
        self._index = {c: i for i, c in enumerate(self.columns)}
        self._missing: np.ndarray | None = None
        self._rows: list[list[float | None]] = []
        if isinstance(table, MetricsTable):
            self._rows = table.rows
            if table.rows:
                self.matrix = np.array(table.rows, dtype=float)
            else:
                self.matrix = np.empty((0, len(self.columns)), dtype=float)
        else:
            # The run store's numpy form: no per-cell Python conversion at all.
            # Column-major: every rule reads whole columns (a strided column of a 100k-row
            # row-major matrix costs ~3 ms per read).
            values = np.asarray(table.values, dtype=float)
            rows = values.shape[0] if values.ndim == 2 else values.size // max(len(self.columns), 1)
            self.matrix = np.asfortranarray(values.reshape(rows, len(self.columns)))  # (0, 0): no header yet
            self._missing = np.asarray(table.missing, dtype=bool).reshape(self.matrix.shape)
        steps = self.raw(M.ENV_STEPS)
        if steps is None:
            steps = np.arange(1, len(self.matrix) + 1, dtype=float)
        elif not np.all(np.isfinite(steps)):
            # A blank/garbled step count (older or damaged file): carry the last good one forward.
            steps = np.where(np.isfinite(steps), steps, -np.inf)
            steps = np.maximum.accumulate(steps)
            steps[~np.isfinite(steps)] = 0.0
        self.steps = steps
        self._finite: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def has(self, name: str) -> bool:
        return name in self._index

    def raw(self, name: str) -> np.ndarray | None:
        """The column with nan where not measured or non-finite; None if the run lacks it."""
        i = self._index.get(name)
        return None if i is None else self.matrix[:, i]

    def finite(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(env_steps, values) of the rows where the metric was measured and finite (computed once
        per metric; read-only, as every rule shares them)."""
        hit = self._finite.get(name)
        if hit is not None:
            return hit
        col = self.raw(name)
        if col is None:
            x, y = np.empty(0), np.empty(0)
        else:
            ok = np.isfinite(col)
            x, y = self.steps[ok], col[ok]
        x.flags.writeable = False
        y.flags.writeable = False
        self._finite[name] = (x, y)
        return x, y

    def non_finite_rows(self, name: str) -> np.ndarray:
        """Row indices where the metric was measured but nan or +-inf."""
        i = self._index.get(name)
        if i is None:
            return np.empty(0, dtype=int)
        col = self.matrix[:, i]
        bad = np.flatnonzero(~np.isfinite(col))
        if bad.size == 0:
            return bad
        # nan here may be a blank cell (None): keep only the ones measured as nan/inf.
        if self._missing is not None:
            return bad[~self._missing[bad, i]]
        return np.array([j for j in bad if self._rows[j][i] is not None], dtype=int)


def split(values: np.ndarray, late_fraction: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """(early, late): the first quarter and the last ``late_fraction`` of a series."""
    n = len(values)
    if n == 0:
        return values, values
    early = values[: max(1, n // 4)]
    late = values[n - max(1, int(math.ceil(n * late_fraction))) :]
    return early, late


def median(values: np.ndarray) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def bin_series(x: np.ndarray, y: np.ndarray, max_points: int = MAX_TREND_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Downsample to at most ``max_points`` by taking the median of equal-count bins."""
    n = len(x)
    if n <= max_points:
        return x, y
    edges = np.linspace(0, n, max_points + 1).astype(int)
    # The bins differ in size by at most one: lay them out as rows padded with NaN and take
    # nanmedian per row (the same medians as bin by bin, without a Python loop over the bins).
    sizes = np.diff(edges)
    rows = np.repeat(np.arange(max_points), sizes)
    cols = np.arange(n) - edges[rows]
    grid = np.full((2, max_points, int(sizes.max())), np.nan)
    grid[0, rows, cols] = x
    grid[1, rows, cols] = y
    med = np.nanmedian(grid, axis=2)
    return med[0], med[1]


def theil_sen(x: np.ndarray, y: np.ndarray, z: float = 1.96) -> tuple[float, float, float] | None:
    """Theil-Sen slope with Sen's (1968) distribution-free confidence interval.

    Returns (slope, low, high), or None with fewer than 3 distinct x. The interval follows
    scipy.stats.theilslopes (ranks from the variance of Kendall's S, ties ignored).
    """
    x, y = bin_series(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    n = len(x)
    if n < 3:
        return None
    i, j = np.triu_indices(n, k=1)
    dx = x[j] - x[i]
    keep = dx != 0
    if keep.sum() < 2:
        return None
    slopes = np.sort((y[j] - y[i])[keep] / dx[keep])
    nt = len(slopes)
    slope = float(np.median(slopes))
    sigma = math.sqrt(n * (n - 1) * (2 * n + 5) / 18.0)
    hi = min(int(round((nt + z * sigma) / 2.0)), nt - 1)
    lo = max(int(round((nt - z * sigma) / 2.0)) - 1, 0)
    return slope, float(slopes[lo]), float(slopes[hi])
