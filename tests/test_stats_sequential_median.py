"""The median's confidence sequence (Howard and Ramdas 2022) and the comparison that uses it
beside the mean's: checked against quadrature, order statistics by brute force, and by
simulation of coverage and error rates under continuous monitoring."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from regbench.run.sequential import Settled
from regbench.stats.sequential import (
    CENTERS, _bursts_sd, _log_sign_mixture, _noise, centered_cs, sequential_decision, sign_cs, sign_path,
    simulate_error_rates, t_mixture_cs,
)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 8), (1, 8), (3, 20), (10, 20), (2, 60), (40, 100), (5, 300)])
def test_sign_mixture_matches_quadrature(k, n):
    # The independent reference: integrate the likelihood ratio of Bernoulli(q) against a fair
    # coin over the uniform density 2 on (0, 1/2), numerically, in the linear domain.
    def integrand(q):
        return math.exp(k * math.log(2 * q) + (n - k) * math.log(2 * (1 - q))) * 2 if q > 0 else 0.0
    value, _ = integrate.quad(integrand, 0, 0.5, limit=200, epsabs=0, epsrel=1e-10)
    assert float(_log_sign_mixture(k, n)) == pytest.approx(math.log(value), rel=1e-7, abs=1e-9)


def brute_force_interval(x, alpha):
    """Every candidate between the observations tried against the two one-sided mixtures."""
    xs = np.sort(np.asarray(x, dtype=float))
    n = xs.size
    limit = math.log(2 / alpha)
    cands = np.concatenate([[xs[0] - 1], xs, (xs[:-1] + xs[1:]) / 2, [xs[-1] + 1]])
    kept = [m for m in cands
            if float(_log_sign_mixture(np.sum(xs <= m), n)) < limit or np.sum(xs <= m) >= n / 2]
    kept = [m for m in kept
            if float(_log_sign_mixture(np.sum(xs >= m), n)) < limit or np.sum(xs >= m) >= n / 2]
    return min(kept), max(kept)


@pytest.mark.parametrize("n", [3, 8, 9, 12, 25, 40, 77])
@pytest.mark.parametrize("alpha", [0.05, 0.025, 0.2])
def test_sign_cs_is_the_interval_of_the_candidates_the_mixtures_accept(n, alpha):
    x = np.random.default_rng(n).standard_normal(n)
    cs = sign_cs(x, alpha=alpha)
    lo, hi = brute_force_interval(x, alpha)
    if lo < x.min():  # the smallest candidate, below every observation, is accepted: unbounded
        assert cs.low == -np.inf and cs.high == np.inf
    else:
        assert cs.low == lo and cs.high == hi
    assert cs.estimate == np.median(x) and cs.center == "median"


def test_sign_path_equals_the_interval_of_every_prefix():
    x = np.random.default_rng(3).standard_t(2, size=(4, 60))
    low, high = sign_path(x, alpha=0.05)
    for row in range(4):
        for n in (1, 7, 8, 9, 30, 60):
            cs = sign_cs(x[row, :n], alpha=0.05)
            assert (low[row, n - 1], high[row, n - 1]) == (cs.low, cs.high)


def test_the_median_is_bounded_from_eight_observations_at_5_percent():
    assert math.isinf(sign_cs(np.arange(7.0), alpha=0.05).low)
    assert sign_cs(np.arange(8.0), alpha=0.05).low == 0.0


@pytest.mark.parametrize("noise", ["normal", "t5", "lognormal-runs", "bursts"])
@pytest.mark.parametrize("center", CENTERS)
def test_coverage_holds_under_continuous_monitoring(noise, center):
    # The sequence misses the true centre (the symmetric noise's mean and median) at some n of
    # 200 in at most alpha of the comparisons (binomial slack for 2,000 of them: 3 sd).
    r = simulate_error_rates(effect=0.0, threshold=0.03, alpha=0.05, sigma=0.05, n_sim=2000, max_n=200,
                             noise=noise, center=center, rng=11)
    assert r.coverage_miss_rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)
    assert r.wrong_rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


def test_median_coverage_needs_no_symmetry():
    # An exponential's median is log 2; the sign sequence covers it however skewed the data.
    gen = np.random.default_rng(5)
    x = gen.exponential(1.0, size=(2000, 200))
    low, high = sign_path(x, alpha=0.05)
    missed = ((low > math.log(2)) | (high < math.log(2))).any(axis=1).mean()
    assert missed <= 0.05


def test_bursts_noise_is_standardized():
    z = _noise(np.random.default_rng(2), "bursts", (400_000, 1))
    assert z.std() == pytest.approx(1.0, abs=0.01) and abs(z.mean()) < 0.01
    assert _bursts_sd() > 0


def test_under_bursts_both_settles_with_far_fewer_pairs_than_the_mean_alone():
    kw = dict(effect=0.05, threshold=0.02, alpha=0.05, sigma=0.2, n_sim=1000, max_n=400, noise="bursts", rng=4)
    mean = simulate_error_rates(center="mean", **kw)
    both = simulate_error_rates(center="both", **kw)
    assert both.wrong_rate <= 0.05
    assert both.mean_n * 2 < mean.mean_n


def test_on_gaussian_pairs_both_costs_little_over_the_mean_alone():
    kw = dict(effect=0.05, threshold=0.02, alpha=0.05, sigma=0.03, n_sim=2000, max_n=400, noise="normal", rng=6)
    mean = simulate_error_rates(center="mean", **kw)
    both = simulate_error_rates(center="both", **kw)
    assert both.mean_n <= 1.25 * mean.mean_n


def test_both_is_the_intersection_at_half_alpha_each():
    x = np.random.default_rng(8).standard_t(2, 40) * 0.05 + 0.02
    both = centered_cs(x, alpha=0.1)
    mean = t_mixture_cs(x, alpha=0.05)
    med = sign_cs(x, alpha=0.05)
    assert both.low == max(mean.low, med.low) and both.high == min(mean.high, med.high)
    assert both.low <= both.estimate <= both.high
    assert both.by in ("mean", "median", "mean and median") and both.center == "both"


def test_a_burst_widens_the_mean_not_the_combined_interval():
    x = np.concatenate([np.full(30, 0.05) + np.linspace(-0.01, 0.01, 30), [1.5, -1.2]])
    mean = sequential_decision(x, threshold=0.02, center="mean")
    both = sequential_decision(x, threshold=0.02)
    assert mean.decision == "undecided" and both.decision == "changed"
    assert both.cs.by == "median" and both.ci_low > 0.02
    settled = Settled("t", "A", "B", "lower", both, "settled", len(x), 0, 1.0)
    assert settled.compared_by.endswith("bounded by their median (bursts widen their mean's bound)")
    assert Settled("t", "A", "B", "lower", mean, "settled", len(x), 0, 1.0).compared_by \
        == "pairs of interleaved runs, log ratio of run means"


def test_all_equal_observations_stay_undecided():
    with pytest.warns(RuntimeWarning):
        d = sequential_decision([0.1] * 12, threshold=0.03)
    assert d.decision == "undecided" and math.isnan(d.ci_low)


def test_an_unknown_center_is_an_error():
    with pytest.raises(ValueError, match="`center` must be one of 'mean', 'median', 'both'"):
        sequential_decision([0.1, 0.2], threshold=0.03, center="mode")
    with pytest.raises(ValueError, match="`center`"):
        simulate_error_rates(effect=0.0, threshold=0.03, n_sim=10, max_n=10, center="x")


def test_an_empty_intersection_decides_nothing():
    # Most pairs at +5%, a long tail far below: the median's sequence lies above 0.04 while the
    # mean's lies below it: the two bound different numbers, so neither claim is made.
    x = np.concatenate([np.full(60, 0.05) + np.linspace(-0.002, 0.002, 60), np.full(15, -0.9)])
    both = centered_cs(x, alpha=0.05)
    assert both.low > both.high
    assert sequential_decision(x, threshold=0.02).decision == "undecided"
    assert sequential_decision(x, threshold=0.02, center="median").decision == "changed"
