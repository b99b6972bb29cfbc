"""gymnasium_solver.maths.stats against printed t tables, hand-computed Welch tests and mpmath."""

from __future__ import annotations

import math

import pytest

from gymnasium_solver.maths import stats


@pytest.mark.parametrize(("df", "q", "t"), [
    # Two-sided 5% / one-sided 2.5% critical values, and one-sided 5%, from any printed t table.
    (1, 0.975, 12.706), (2, 0.975, 4.303), (5, 0.975, 2.571), (10, 0.975, 2.228), (30, 0.975, 2.042),
    (10, 0.95, 1.812), (99, 0.95, 1.660),
])
def test_t_quantiles_match_the_printed_table(df: int, q: float, t: float) -> None:
    assert stats.t_ppf(q, df) == pytest.approx(t, abs=1e-3)
    assert stats.t_cdf(t, df) == pytest.approx(q, abs=2e-4)
    assert stats.t_cdf(-t, df) == pytest.approx(1 - q, abs=2e-4)


def test_t_cdf_matches_mpmath_on_a_grid() -> None:
    mpmath = pytest.importorskip("mpmath")
    for df in (1.0, 2.5, 7.0, 31.3, 400.0):
        for t in (-25.0, -3.1, -0.4, 0.0, 0.9, 2.2, 8.0):
            x = df / (df + t * t)
            tail = 0.5 * float(mpmath.betainc(df / 2, 0.5, 0, x, regularized=True))
            want = 1 - tail if t > 0 else tail
            assert stats.t_cdf(t, df) == pytest.approx(want, rel=1e-9, abs=1e-14)


def test_welch_by_hand() -> None:
    # a: mean 10, sd 2, n 10; b: mean 12, sd 3, n 12. se^2 = 0.4 + 0.75 = 1.15; t = -2 / sqrt(1.15).
    res = stats.welch_less(10, 2, 10, 12, 3, 12)
    assert res.statistic == pytest.approx(-2 / math.sqrt(1.15))
    df = 1.15**2 / (0.4**2 / 9 + 0.75**2 / 11)
    assert res.df == pytest.approx(df)
    assert res.p_value == pytest.approx(stats.t_cdf(res.statistic, df))
    assert 0.03 < res.p_value < 0.05  # significant at 5%, one-sided


def test_welch_with_constant_samples_is_decided_by_the_means() -> None:
    assert stats.welch_less(500, 0, 10, 500, 0, 10).p_value == 1.0
    worse = stats.welch_less(200, 0, 10, 500, 0, 10)
    assert worse.p_value == 0.0 and worse.statistic == -math.inf
    assert stats.welch_less(500, 0, 10, 200, 0, 10).p_value == 1.0
    with pytest.raises(ValueError, match="at least 2"):
        stats.welch_less(1, 1, 1, 2, 1, 5)


def test_prediction_test_and_lower_bound() -> None:
    ref = [10.0, 11.0, 12.0, 13.0, 14.0]  # mean 12, sd sqrt(2.5)
    res = stats.prediction_greater(20.0, ref)
    assert res.statistic == pytest.approx(8 / (math.sqrt(2.5) * math.sqrt(1.2)))
    assert res.df == 4 and res.p_value < 0.01
    assert stats.prediction_greater(12.0, ref).p_value == pytest.approx(0.5)
    with pytest.raises(ValueError, match="all equal"):
        stats.prediction_greater(1.0, [2.0, 2.0, 2.0])
    assert stats.lower_confidence_bound(100.0, 10.0, 100) == pytest.approx(100 - 1.6604 * 1.0, abs=1e-3)
    assert stats.lower_confidence_bound(5.0, 1.0, 1) == -math.inf
    assert stats.sample_sd(2.0, 4) == pytest.approx(2.0 * math.sqrt(4 / 3))


def test_paired_less_is_wilcoxons_signed_rank_test() -> None:
    """Five pairs all lower, by distinct amounts: W+ = 0, whose exact one-sided p is 1/2^5. All higher: p = 1.
    No pair differs: no evidence (p 1, 0 pairs). The sweep-check case of CartPole-v1:a2c trial 27 against its
    preset on seeds 3000-3019 (docs/presets.md): p 0.37, a lead that was luck."""
    low = stats.paired_less([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert (low.statistic, low.df) == (0.0, 5.0) and low.p_value == pytest.approx(1 / 32)
    assert stats.paired_less([2, 4, 6, 8, 10], [1, 2, 3, 4, 5]).p_value == pytest.approx(1.0)
    assert stats.paired_less([3.0, 3.0], [3.0, 3.0]) == (0.0, 0.0, 1.0)
    trial = [6016, 2048, 6016, 16000, 10112, 10112, 4096, 26112, 6016, 10112, 16000, 6016, 22016, 22016, 14080,
             8064, 4096, 6016, 14080, 12032]
    preset = [8000, 44000, 6016, 8000, 4000, 4000, 16000, 2016, 16000, 2016, 14016, 2016, 26016, 2016, 18016, 22016,
              22016, 22016, 18016, 4000]
    assert stats.paired_less(trial, preset).p_value == pytest.approx(0.3737, abs=1e-3)
    with pytest.raises(ValueError, match="one non-zero length"):
        stats.paired_less([1.0], [1.0, 2.0])
