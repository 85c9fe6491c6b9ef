"""Auto-dependence (seed 000 s.4.1): ACF against hand computation, Ljung-Box and the runs test
against their formulas and by simulation, and a run against its random reordering (figs. 4-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from regbench.stats.dependence import (
    autocorrelation,
    lag_plot,
    ljung_box,
    reordering_comparison,
    runs_test,
)


def ar1(rng, phi, n):
    e = rng.normal(size=n)
    x = np.empty(n)
    x[0] = e[0] / math.sqrt(1 - phi * phi)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    return x


def cluster_cycle(rng, n=600):
    """A run like FFT in seed 000 fig. 4: the cluster of the next sample depends on the cluster of
    this one (here a fixed cycle A A B A A B ... through two typical values), plus small noise."""
    pattern = np.array([10.0, 10.0, 11.0])
    return np.resize(pattern, n) + rng.normal(0, 0.05, n)


def test_acf_matches_hand_computation():
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0])
    # mean 3.5; deviations -2.5 -0.5 -1.5 1.5 0.5 2.5; sum of squares 17.5
    # lag 1: (-2.5)(-0.5) + (-0.5)(-1.5) + (-1.5)(1.5) + (1.5)(0.5) + (0.5)(2.5) = 1.75
    a = autocorrelation(x, nlags=2, confidence_level=0.95)
    assert a.acf[0] == 1.0
    assert a.acf[1] == pytest.approx(1.75 / 17.5)
    # lag 2: (-2.5)(-1.5) + (-0.5)(1.5) + (-1.5)(0.5) + (1.5)(2.5) = 6.0
    assert a.acf[2] == pytest.approx(6.0 / 17.5)
    assert a.white_noise_band == pytest.approx(stats.norm.ppf(0.975) / math.sqrt(6))
    # Bartlett: Var(r_1) = 1/n, Var(r_2) = (1 + 2 r_1^2)/n
    z = stats.norm.ppf(0.975)
    assert a.ci_high[1] - a.acf[1] == pytest.approx(z / math.sqrt(6))
    assert a.ci_high[2] - a.acf[2] == pytest.approx(z * math.sqrt((1 + 2 * 0.1**2) / 6))


def test_acf_of_ar1_has_lag1_near_phi_and_lags_outside_the_band():
    x = ar1(np.random.default_rng(0), 0.7, 2000)
    a = autocorrelation(x)
    assert a.acf[1] == pytest.approx(0.7, abs=0.05)
    assert a.acf[2] == pytest.approx(0.49, abs=0.07)
    assert a.lags.size == int(10 * math.log10(2000)) + 1
    assert a.outside_band[:3].tolist() == [1, 2, 3]


def test_ljung_box_rejects_ar1_and_accepts_white_noise():
    rng = np.random.default_rng(1)
    dependent = ljung_box(ar1(rng, 0.7, 500))
    white = ljung_box(rng.normal(size=500))
    assert dependent.lags.tolist() == list(range(1, 11))
    assert dependent.max_lag_p_value < 1e-10
    assert white.max_lag_p_value > 0.05


def test_ljung_box_statistic_matches_its_formula():
    x = np.random.default_rng(2).normal(size=60)
    res = ljung_box(x, max_lag=3)
    n, d = x.size, x - x.mean()
    r = [np.sum(d[k:] * d[:-k]) / np.sum(d * d) for k in (1, 2, 3)]
    q = n * (n + 2) * sum(r[k - 1] ** 2 / (n - k) for k in (1, 2, 3))
    assert res.statistic[-1] == pytest.approx(q)
    assert res.p_value[-1] == pytest.approx(stats.chi2.sf(q, 3))


def test_ljung_box_false_rejection_rate_on_white_noise_is_about_alpha():
    rng = np.random.default_rng(3)
    p = np.array([ljung_box(rng.normal(size=200)).max_lag_p_value for _ in range(300)])
    # 5% nominal; binomial sd of the rate over 300 is 1.3%.
    assert 0.01 < np.mean(p < 0.05) < 0.09


def test_runs_test_by_hand():
    # 1..10: median 5.5, below x5 then above x5: R = 2 runs, n1 = n2 = 5.
    res = runs_test(np.arange(1.0, 11.0))
    mean = 2 * 5 * 5 / 10 + 1  # 6
    var = 2 * 5 * 5 * (2 * 5 * 5 - 10) / (10**2 * 9)  # 2000 / 900
    assert (res.n_runs, res.n_above, res.n_below) == (2, 5, 5)
    assert res.expected == pytest.approx(6.0) and mean == 6.0
    assert res.variance == pytest.approx(var)
    assert res.statistic == pytest.approx((2 - 6) / math.sqrt(var))  # -2.683
    assert res.p_value == pytest.approx(2 * stats.norm.sf(4 / math.sqrt(var)))
    # Alternating: 10 runs, too many: positive z.
    alt = runs_test(np.array([1.0, 9.0] * 5))
    assert alt.n_runs == 10 and alt.statistic == pytest.approx((10 - 6) / math.sqrt(var))


def test_runs_test_drops_samples_equal_to_the_median():
    res = runs_test(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))  # 3 is the median and is dropped
    assert (res.n_below, res.n_above, res.n_runs, res.cutoff) == (2, 2, 2, 3.0)


def test_runs_test_agrees_with_statsmodels_sandbox_on_continuous_data():
    # Independent implementation (statsmodels.sandbox, not used by regbench): with an even number
    # of continuous samples no value equals the median, so the conventions agree.
    from statsmodels.sandbox.stats.runs import runstest_1samp

    for seed in range(3):
        x = ar1(np.random.default_rng(seed), 0.3 * seed, 200)
        z, p = runstest_1samp(x, cutoff="median", correction=False)
        res = runs_test(x)
        assert res.statistic == pytest.approx(z) and res.p_value == pytest.approx(p)


def test_runs_test_false_rejection_rate_on_white_noise_is_about_alpha():
    rng = np.random.default_rng(4)
    p = np.array([runs_test(rng.normal(size=200)).p_value for _ in range(1000)])
    assert 0.03 < np.mean(p < 0.05) < 0.07


def test_lag_plot_pairs_and_seeded_reordering():
    x = np.arange(10.0)
    lp = lag_plot(x, lag=2, rng=5)
    assert lp.x.tolist() == list(range(8)) and lp.y.tolist() == list(range(2, 10))
    assert sorted(lp.order.tolist()) == list(range(10))
    assert np.array_equal(lp.reordered_y, x[lp.order][2:])
    assert np.array_equal(lag_plot(x, lag=2, rng=5).order, lp.order)


def test_reordering_comparison_shows_that_the_order_carries_the_dependence():
    x = cluster_cycle(np.random.default_rng(6))
    c = reordering_comparison(x, rng=7)
    # Fig. 4: from one cluster the next sample is constrained; fig. 5: reordered, it is not.
    assert c.lag1 == pytest.approx(-0.5, abs=0.05)  # A A B cycle: lag-1 correlation -1/2
    assert abs(c.reordered_lag1) < 0.1
    assert c.ljung_box.max_lag_p_value < 1e-10
    assert c.reordered_ljung_box.max_lag_p_value > 0.01
    assert c.order_matters
    assert abs(c.reordered_runs.statistic) < 2.58 < abs(c.runs.statistic)
    assert np.array_equal(np.sort(c.lag_plot.reordered_x), np.sort(x[c.lag_plot.order][:-1]))


def test_ar1_order_matters_and_white_noise_does_not():
    rng = np.random.default_rng(8)
    assert reordering_comparison(ar1(rng, 0.7, 500), rng=1).order_matters
    white = reordering_comparison(rng.normal(size=500), rng=1)
    assert not white.order_matters and white.runs.p_value > 0.01


def test_constant_sample_warns_and_gives_nan():
    with pytest.warns(RuntimeWarning, match="constant sample"):
        a = autocorrelation(np.ones(20), nlags=3)
    assert np.isnan(a.acf).all()
    with pytest.warns(RuntimeWarning, match="constant sample"):
        lb = ljung_box(np.ones(20))
    assert np.isnan(lb.p_value).all()
    with pytest.warns(RuntimeWarning, match="no samples on one side of the median"):
        rt = runs_test(np.ones(20))
    assert math.isnan(rt.p_value)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: autocorrelation([1.0, 2.0, 3.0], nlags=3),
     r"`nlags` must be smaller than the sample size \(3\)"),
    (lambda: autocorrelation([1.0, 2.0, 3.0], confidence_level=0), "`confidence_level` must be in"),
    (lambda: ljung_box([1.0, 2.0, 3.0], max_lag=0), "`max_lag` must be a positive integer"),
    (lambda: lag_plot([1.0, 2.0], lag=2), "`lag` must be smaller than the sample size"),
    (lambda: runs_test([]), "`sample` must not be empty"),
    (lambda: runs_test([[1.0]]), "`sample` must be one-dimensional"),
    (lambda: reordering_comparison([1.0]), "`sample` must have at least two samples"),
])
def test_validation(call, message):
    with pytest.raises(ValueError, match=message):
        call()
