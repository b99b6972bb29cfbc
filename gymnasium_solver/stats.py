"""Student's t distribution and the two tests the ops commands use, in plain math (no scipy, no torch).

scipy is not a dependency of this project (it would be ~40 MB on the read side for a handful of
formulas; see docs/ecosystem.md), so the t distribution's CDF is computed here from the regularized
incomplete beta function, by the continued fraction of Numerical Recipes §6.4 (modified Lentz).
tests/test_ops_stats.py checks it against mpmath and against printed t tables.

- :func:`welch_less`: one-sided Welch t-test from summary statistics (mean, sample std, n):
  is sample A's mean below sample B's? (``gsolve check`` against a baseline run.)
- :func:`prediction_greater`: is one new observation above a reference sample, on the t-based
  prediction interval? (``gsolve check`` against the preset's reference runs.)
- :func:`lower_confidence_bound`: one-sided lower bound of a mean (the registry's evaluation).
"""

from __future__ import annotations

import math
from typing import NamedTuple

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 500


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not (a > 0 and b > 0 and 0.0 <= x <= 1.0):
        raise ValueError(f"betainc needs a, b > 0 and 0 <= x <= 1, got a={a}, b={b}, x={x}")
    if x in (0.0, 1.0):
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` > 0 degrees of freedom (t may be +-inf)."""
    if df <= 0 or math.isnan(df) or math.isnan(t):
        raise ValueError(f"t_cdf needs df > 0 and a number t, got t={t}, df={df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))  # P(T > |t|)
    return 1.0 - tail if t > 0 else tail


def t_ppf(q: float, df: float) -> float:
    """The q-quantile of Student's t (bisection on :func:`t_cdf`; 0 < q < 1)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"a quantile needs 0 < q < 1, got {q}")
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > q:
        lo *= 2.0
    while t_cdf(hi, df) < q:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


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
