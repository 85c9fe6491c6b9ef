"""Quantile sample size (seed 001 s.3.2) and outlier classification (seed 000 s.4.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from regbench.stats.outliers import MODIFIED_Z_CONSTANT, mad_outliers, tukey_outliers
from regbench.stats.samplesize import quantile_confidence, quantile_sample_size

# ------------------------------------------------------------------------------------------
# Chen and Kelton sample size
# ------------------------------------------------------------------------------------------


def test_the_papers_numbers():
    # Median, 95%, proportion half-width 0.005: the paper's 38,416 (z = 1.96 as tabulated).
    assert quantile_sample_size() == 38_416
    assert quantile_sample_size(0.5, confidence_level=0.95, half_width=0.005) == 38_416
    # The exact z = 1.959964 gives one observation fewer.
    assert quantile_sample_size(z_decimals=None) == 38_415
    # 65,536 observations: the confidence level "borders with 99%" (z = 2.56, 98.95%).
    assert quantile_confidence(65_536) == pytest.approx(2 * stats.norm.cdf(2.56) - 1)
    assert 0.989 < quantile_confidence(65_536) < 0.99


def test_formula_by_hand_and_symmetry_in_p():
    # 99%: z rounds to 2.58; p = 0.9, eps = 0.01: 2.58^2 * 0.09 / 1e-4 = 5990.76 -> 5991.
    assert quantile_sample_size(0.9, confidence_level=0.99, half_width=0.01) == 5991
    assert quantile_sample_size(0.1, confidence_level=0.99, half_width=0.01) == 5991
    # An exact integer bound, 2.58^2 * 0.25 / 0.001^2 = 1,664,100, computes as 1664100.0000000002
    # in floating point: it must not become 1,664,101.
    assert quantile_sample_size(0.5, confidence_level=0.99, half_width=0.001) == 1_664_100
    exact = stats.norm.ppf(0.995) ** 2 * 0.09 / 1e-4
    n = quantile_sample_size(0.9, confidence_level=0.99, half_width=0.01, z_decimals=None)
    assert n == math.ceil(exact)


def test_sample_size_and_confidence_are_inverse():
    for p, level, eps in [(0.5, 0.95, 0.005), (0.9, 0.99, 0.01), (0.25, 0.9, 0.02)]:
        n = quantile_sample_size(p, confidence_level=level, half_width=eps, z_decimals=None)
        assert quantile_confidence(n, p, half_width=eps) >= level
        assert quantile_confidence(n - 1, p, half_width=eps) < level


@pytest.mark.parametrize("n, p", [(38_416, 0.5), (65_536, 0.5), (10_000, 0.9)])
def test_promised_confidence_matches_the_exact_order_statistic_distribution(n, p):
    # For uniform data F(x) = x, so the proportion precision is exact: the k-th order statistic
    # of n uniforms is Beta(k, n + 1 - k).  The normal approximation of Chen and Kelton is
    # within 0.001 of the exact probability at these sizes.
    k = math.ceil(n * p)
    d = stats.beta(k, n + 1 - k)
    exact = d.cdf(p + 0.005) - d.cdf(p - 0.005)
    assert quantile_confidence(n, p) == pytest.approx(exact, abs=1e-3)


@pytest.mark.parametrize("call, match", [
    (lambda: quantile_sample_size(0.0), "`p` must be in"),
    (lambda: quantile_sample_size(1.2), "`p` must be in"),
    (lambda: quantile_sample_size(half_width=0), "`half_width` must be in"),
    (lambda: quantile_sample_size(confidence_level=1.0), "`confidence_level` must be in"),
    (lambda: quantile_sample_size(z_decimals=-1), "`z_decimals` must be"),
    (lambda: quantile_sample_size(z_decimals=1.5), "`z_decimals` must be"),
    (lambda: quantile_confidence(0), "`n` must be a positive integer"),
    (lambda: quantile_confidence(100, 0.5, half_width=2), "`half_width` must be in"),
])
def test_sample_size_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------------------------
# Outliers
# ------------------------------------------------------------------------------------------

PLANTED = {7: 1e5, 42: 102.3, 120: 97.7, 150: 90.0}


def _planted_sample() -> np.ndarray:
    # 196 evenly spread values in [99, 101] in a shuffled order, and four planted values:
    # sorted, the sample is 90, 97.7, the base, 102.3, 1e5.  Quartiles (numpy's linear rule) at
    # sorted positions 49.75 and 149.25, i.e. base positions 47.75 and 147.25:
    # q1 = 99 + 47.75 * 2/195 = 99.4897, q3 = 99 + 147.25 * 2/195 = 100.5103, IQR = 1.0205;
    # inner fences 97.959 and 102.041, outer fences 96.428 and 103.572.
    x = np.empty(200)
    others = np.setdiff1d(np.arange(200), list(PLANTED))
    x[others] = np.random.default_rng(0).permutation(np.linspace(99.0, 101.0, 196))
    for i, v in PLANTED.items():
        x[i] = v
    return x


def test_tukey_fences_on_planted_outliers():
    x = _planted_sample()
    before = x.copy()
    t = tukey_outliers(x)
    q1, q3 = 99 + 47.75 * 2 / 195, 99 + 147.25 * 2 / 195
    assert (t.q1, t.q3, t.iqr) == pytest.approx((q1, q3, q3 - q1))
    assert (t.inner_low, t.inner_high) == pytest.approx((q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)))
    assert (t.outer_low, t.outer_high) == pytest.approx((q1 - 3 * (q3 - q1), q3 + 3 * (q3 - q1)))
    assert t.mild_indices.tolist() == [42, 120]
    assert t.extreme_indices.tolist() == [7, 150]
    assert t.indices.tolist() == [7, 42, 120, 150]
    assert np.flatnonzero(t.low).tolist() == [120, 150] and np.flatnonzero(t.high).tolist() == [7, 42]
    assert (t.n_mild, t.n_extreme, t.n_low, t.n_high, t.n_outliers) == (2, 2, 2, 2, 4)
    assert t.labels[7] == "extreme" and t.labels[42] == "mild" and t.labels[0] == "inlier"
    # Reported, never dropped: one flag per sample, and the sample is untouched.
    assert t.mild.shape == t.extreme.shape == x.shape
    np.testing.assert_array_equal(x, before)


def test_mad_rule_on_planted_outliers():
    x = _planted_sample()
    m = mad_outliers(x)
    assert m.median == pytest.approx(100.0)
    assert m.mad == pytest.approx(np.median(np.abs(x - np.median(x))))
    np.testing.assert_allclose(m.scores, MODIFIED_Z_CONSTANT * (x - m.median) / m.mad)
    # The fence is 3.5 MAD / 0.6745 (about 2.6) from the median: 97.7 and 102.3 stay in.
    assert m.indices.tolist() == [7, 150]
    assert (m.n_outliers, m.n_low, m.n_high) == (2, 1, 1)
    reach = 3.5 * m.mad / 0.6745
    assert (m.low_fence, m.high_fence) == pytest.approx((100 - reach, 100 + reach))
    assert m.low_fence < 97.7 and 102.3 < m.high_fence


def test_small_sample_by_hand():
    x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 100]
    # q1 = 3.25, q3 = 7.75 (positions 2.25 and 6.75), IQR 4.5: fences -3.5/14.5 and -10.25/21.25.
    t = tukey_outliers(x)
    fences = (t.inner_low, t.inner_high, t.outer_low, t.outer_high)
    assert fences == pytest.approx((-3.5, 14.5, -10.25, 21.25))
    assert t.extreme_indices.tolist() == [9] and t.n_mild == 0
    # median 5.5; absolute deviations 4.5 3.5 2.5 1.5 .5 .5 1.5 2.5 3.5 94.5 -> MAD 2.5;
    # M(100) = 0.6745 * 94.5 / 2.5 = 25.5, M(1) = -1.21.
    m = mad_outliers(x)
    assert m.mad == 2.5
    assert m.scores[9] == pytest.approx(0.6745 * 94.5 / 2.5)
    assert m.scores[0] == pytest.approx(-0.6745 * 4.5 / 2.5)
    assert m.indices.tolist() == [9]
    # Wider fences: 7.75 + 15 * 4.5 = 75.25 < 100 < 7.75 + 25 * 4.5 = 120.25, so 100 is mild.
    wide = tukey_outliers(x, k_inner=15, k_outer=25)
    assert wide.mild_indices.tolist() == [9] and wide.n_extreme == 0
    assert tukey_outliers(x, k_inner=25, k_outer=30).n_outliers == 0


def test_zero_mad_warns_and_flags_nothing_while_tukey_still_reports():
    x = [5.0] * 7 + [5000.0]
    with pytest.warns(RuntimeWarning, match="MAD is zero"):
        m = mad_outliers(x)
    assert m.n_outliers == 0 and np.isnan(m.scores).all() and math.isnan(m.high_fence)
    t = tukey_outliers(x)
    assert t.iqr == 0 and t.extreme_indices.tolist() == [7]


@pytest.mark.parametrize("call, match", [
    (lambda: tukey_outliers([]), "`sample` must not be empty"),
    (lambda: tukey_outliers([1.0, np.nan]), "`sample` must contain only finite"),
    (lambda: tukey_outliers([[1.0]]), "`sample` must be one-dimensional"),
    (lambda: tukey_outliers([1.0], k_inner=0), "`k_inner` must be a positive number"),
    (lambda: tukey_outliers([1.0], k_inner=3, k_outer=1.5), "`k_outer` must be at least `k_inner`"),
    (lambda: mad_outliers([1.0], threshold=-1), "`threshold` must be a positive number"),
])
def test_outlier_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()
