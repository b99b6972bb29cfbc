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
from pydantic import BaseModel, Field

SeedStatistic = Literal["p90", "iqm", "median", "mean", "max"]
SEED_STATISTICS: tuple[str, ...] = ("p90", "iqm", "median", "mean", "max")
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


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


class Spread(BaseModel):
    """A config's result over seeds: how many solved, the middle and the extremes, and an interval."""

    seeds: int
    solved: int
    median: float | None = Field(description="over every seed, an unsolved one counting with its whole budget")
    iqm: float | None = Field(description="interquartile mean (the middle 50% of seeds)")
    low: float | None = Field(description="the fastest seed")
    high: float | None = Field(description="the slowest seed (unsolved: its budget)")
    ci_low: float | None = Field(default=None, description=f"{CONFIDENCE:.0%} bootstrap interval of the IQM, low end")
    ci_high: float | None = Field(default=None, description=f"{CONFIDENCE:.0%} bootstrap interval of the IQM, high end")


def spread(values: Sequence[float], solved: int, seed: int = 0) -> Spread:
    """The spread of ``values`` (one per seed; unsolved ones at their budget). The interval needs at
    least 3 seeds and some variation (with less there is nothing to resample: None)."""
    if not values:
        return Spread(seeds=0, solved=0, median=None, iqm=None, low=None, high=None)
    from scipy import stats

    x = np.asarray(values, dtype=float)
    out = Spread(seeds=len(x), solved=solved, median=float(np.median(x)), iqm=float(stats.trim_mean(x, 0.25)),
                 low=float(x.min()), high=float(x.max()))
    if len(x) >= 3 and float(x.min()) != float(x.max()):
        res = stats.bootstrap((x,), lambda s, axis: stats.trim_mean(s, 0.25, axis=axis), n_resamples=BOOTSTRAP_RESAMPLES,
                              confidence_level=CONFIDENCE, method="percentile", rng=np.random.default_rng(seed))
        out.ci_low, out.ci_high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return out


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
