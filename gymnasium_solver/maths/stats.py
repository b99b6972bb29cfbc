"""The t-based tests the ops commands use, on scipy.stats (a maintained library, not our formulas).

- :func:`welch_less`: one-sided Welch t-test from summary statistics (mean, sample std, n):
  is sample A's mean below sample B's? (``gsolve check`` against a baseline run.)
- :func:`prediction_greater`: is one new observation above a reference sample, on the t-based
  prediction interval? (``gsolve check`` against the preset's reference runs.)
- :func:`lower_confidence_bound`: one-sided lower bound of a mean (the registry's evaluation).
- :func:`paired_less`: one-sided Wilcoxon signed-rank test on paired observations: is A below B on the
  same seeds? (``gsolve sweep-check``: the best arm against the preset.)
"""

from __future__ import annotations

import math
from typing import NamedTuple


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` > 0 degrees of freedom (t may be +-inf)."""
    if df <= 0 or math.isnan(df) or math.isnan(t):
        raise ValueError(f"t_cdf needs df > 0 and a number t, got t={t}, df={df}")
    # scipy.stats.t.cdf's own kernel, without importing scipy.stats (0.4-0.5 s in a process that has torch loaded:
    # the trainer's solve check calls this after every solve); here, not at import: the MCP server loads this module.
    from scipy import special

    return float(special.stdtr(df, t))


def t_ppf(q: float, df: float) -> float:
    """The q-quantile of Student's t (0 < q < 1)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"a quantile needs 0 < q < 1, got {q}")
    from scipy import stats

    return float(stats.t.ppf(q, df))


class TestResult(NamedTuple):
    """A one-sided test: the statistic, its degrees of freedom and the p-value."""

    statistic: float
    df: float
    p_value: float


def welch_less(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int) -> TestResult:
    """One-sided Welch t-test of H1: mean(A) < mean(B), from sample means, sample standard
    deviations (ddof=1) and sizes; Welch-Satterthwaite degrees of freedom.

    When both samples have zero spread the statistic is -inf/+inf (p 0/1) for different means and
    0 (p 1: no evidence either way) for equal ones: deterministic policies often return constants.
    """
    if n_a < 2 or n_b < 2:
        raise ValueError(f"a Welch t-test needs at least 2 observations per sample, got {n_a} and {n_b}")
    va, vb = sd_a * sd_a / n_a, sd_b * sd_b / n_b
    se = math.sqrt(va + vb)
    diff = mean_a - mean_b
    if se == 0.0:
        if diff == 0.0:
            return TestResult(0.0, float(n_a + n_b - 2), 1.0)
        return TestResult(math.copysign(math.inf, diff), float(n_a + n_b - 2), 0.0 if diff < 0 else 1.0)
    df = (va + vb) ** 2 / ((va * va / (n_a - 1) if va else 0.0) + (vb * vb / (n_b - 1) if vb else 0.0))
    t = diff / se
    return TestResult(t, df, t_cdf(t, df))


def prediction_greater(value: float, sample: list[float]) -> TestResult:
    """One-sided test of H1: ``value`` comes from a distribution above ``sample``'s, on the t-based
    prediction interval for one new observation: t = (value - mean) / (s * sqrt(1 + 1/n)), df = n - 1.
    Needs at least 3 observations with some spread."""
    n = len(sample)
    if n < 3:
        raise ValueError(f"a prediction test needs at least 3 reference observations, got {n}")
    mean = sum(sample) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in sample) / (n - 1))
    if sd == 0.0:
        raise ValueError("the reference observations are all equal, so their spread (and a p-value) is undefined")
    t = (value - mean) / (sd * math.sqrt(1.0 + 1.0 / n))
    return TestResult(t, float(n - 1), 1.0 - t_cdf(t, n - 1))


def paired_less(a: list[float], b: list[float]) -> TestResult:
    """One-sided Wilcoxon signed-rank test of H1: A's values are below B's, pair by pair (the same seeds).
    Pairs with no difference are dropped (Wilcoxon's zero method); with none left there is no evidence
    either way (p = 1). ``df`` is the number of pairs that differ."""
    if len(a) != len(b) or not a:
        raise ValueError(f"a paired test needs two samples of one non-zero length, got {len(a)} and {len(b)}")
    differing = sum(x != y for x, y in zip(a, b, strict=True))
    if differing == 0:
        return TestResult(0.0, 0.0, 1.0)
    from scipy import stats

    res = stats.wilcoxon(a, b, alternative="less", zero_method="wilcox")
    return TestResult(float(res.statistic), float(differing), float(res.pvalue))


def lower_confidence_bound(mean: float, sd: float, n: int, confidence: float = 0.95) -> float:
    """One-sided lower confidence bound of a mean: mean - t_{confidence, n-1} * sd / sqrt(n)
    (``sd`` the sample standard deviation, ddof=1). With n = 1 the bound is -inf."""
    if n < 2:
        return -math.inf
    return mean - t_ppf(confidence, n - 1) * sd / math.sqrt(n)


def sample_sd(population_sd: float, n: int) -> float:
    """The sample standard deviation (ddof=1) from a population one (ddof=0, what numpy's std and
    the trainer's eval/return_std report)."""
    return population_sd * math.sqrt(n / (n - 1)) if n > 1 else 0.0
