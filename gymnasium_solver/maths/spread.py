"""A config's result over seeds: the count solved, the middle and the extremes, and intervals, on scipy (a
maintained library, not our formulas): the interquartile mean (``scipy.stats.trim_mean``, rliable's recommended
aggregate, Agarwal et al. 2021) with a percentile bootstrap interval (``scipy.stats.bootstrap``), and the lower
bound of the share of seeds solved (``scipy.stats.binomtest``'s Wilson interval). The jobs report it
(``jobs.seeds``) and the run store groups runs by it (``run_store.groups``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


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


def share_lower_bound(solved: int, n: int, confidence: float = CONFIDENCE) -> float:
    """The lower end of the Wilson interval of the share of ``n`` seeds solved: 1 of 1 is 0.21, 3 of 3 0.44."""
    from scipy import stats

    return float(stats.binomtest(solved, n).proportion_ci(confidence_level=confidence, method="wilson").low)
