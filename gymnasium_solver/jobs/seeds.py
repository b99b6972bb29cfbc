"""Outcomes over seeds: the aggregate a job ranks on, and the spread and interval it reports.

RL results swing with the seed, so every job judges a config on several: a sweep trial on
``--seeds-per-trial`` seeds, a sweep check and a fix on held-out ones. An unsolved seed counts with
its whole budget (env steps or seconds spent), so a config that fails some seeds cannot hide behind
the ones it solved. Statistics come from scipy, not hand-written formulas: the interquartile mean
(``scipy.stats.trim_mean``, rliable's recommended aggregate, Agarwal et al. 2021,
https://arxiv.org/abs/2108.13264) and a percentile bootstrap interval (``scipy.stats.bootstrap``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from gymnasium_solver.maths.spread import Spread, spread  # noqa: F401 - re-exported: the jobs report it (maths/spread.py)

SeedStatistic = Literal["p90", "iqm", "median", "mean", "max"]
SEED_STATISTICS: tuple[str, ...] = ("p90", "iqm", "median", "mean", "max")


def aggregate(values: Sequence[float], statistic: str) -> float:
    """One number for a config over its seeds (lower is better: env steps or seconds to solve)."""
    if not values:
        raise ValueError("no seed finished: nothing to aggregate")
    x = np.asarray(values, dtype=float)
    if statistic == "p90":
        # The slowest seeds matter as much as the median: a preset tuned for the median can take
        # many times longer on an unlucky seed.
        return float(np.percentile(x, 90))
    if statistic == "iqm":
        from scipy import stats

        return float(stats.trim_mean(x, 0.25))
    if statistic == "median":
        return float(np.median(x))
    if statistic == "mean":
        return float(np.mean(x))
    if statistic == "max":
        return float(np.max(x))
    raise ValueError(f"unknown seed statistic {statistic!r}; use one of {', '.join(SEED_STATISTICS)}")


def seed_list(base: int, n: int) -> list[int]:
    """``n`` consecutive seeds from ``base``: the config's own seed first."""
    if n < 1:
        raise ValueError(f"need at least one seed, got {n}")
    return [base + i for i in range(n)]


def parse_seeds(text: list[str]) -> list[int]:
    """``['1', '2', '5-9']`` -> [1, 2, 5, 6, 7, 8, 9]; ValueError naming the bad item."""
    out: list[int] = []
    for item in text:
        try:
            if "-" in item.strip("-"):
                lo, hi = (int(x) for x in item.split("-", 1))
                if hi < lo:
                    raise ValueError
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(item))
        except ValueError:
            raise ValueError(f"--seeds takes integers or ranges like 1-5, got {item!r}") from None
    return out
