"""Two-version comparison with runs as replicates, and the verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from regbench.stats import compare_runs, delta_ratio_interval, verdict


def test_change_is_the_ratio_of_means_of_run_means():
    c = compare_runs([1.0, 1.2, 0.8, 1.0], [1.1, 1.3, 0.9, 1.1], rng=0)
    assert c.change == pytest.approx(1.1 / 1.0 - 1)
    assert c.ci_low < c.change < c.ci_high
    assert c.method in ("BCa", "percentile")
    assert c.bootstrap_distribution.size == 10_000


def test_interval_agrees_with_scipy_bootstrap_percentile_reference():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1, 0.05, 12), rng.normal(1.05, 0.05, 12)
    c = compare_runs(a, b, rng=2, n_resamples=20_000)
    ref = stats.bootstrap((a, b), lambda x, y, axis=-1: y.mean(axis) / x.mean(axis) - 1, vectorized=True,
                          n_resamples=20_000, confidence_level=0.99, method="percentile", rng=3)
    assert c.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert c.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.01)


def test_identical_runs_give_an_exact_zero_interval():
    c = compare_runs([2.0, 2.0, 2.0], [2.0, 2.0, 2.0])
    assert (c.change, c.ci_low, c.ci_high) == (0.0, 0.0, 0.0)


def test_one_run_is_undecidable_not_significant():
    with pytest.warns(RuntimeWarning, match="at least two runs"):
        c = compare_runs([1.0], [2.0, 2.1])
    assert math.isnan(c.ci_low)
    assert verdict(c.ci_low, c.ci_high) == "inconclusive"


def test_coverage_of_the_run_level_interval():
    # 95% intervals on 10 + 10 runs with random run effects; the true change is +5%.
    rng = np.random.default_rng(2024)
    miss = 0
    trials = 300
    for _ in range(trials):
        a = rng.normal(1.0, 0.03, 10)
        b = rng.normal(1.05, 0.03, 10)
        c = compare_runs(a, b, confidence_level=0.95, n_resamples=2000, rng=rng)
        miss += not (c.ci_low <= 0.05 <= c.ci_high)
    # Binomial(300, 0.05): mean 15; a bootstrap on 10 runs may under-cover somewhat, not grossly.
    assert 3 <= miss <= 33


@pytest.mark.parametrize("lo, hi, direction, threshold, expected", [
    (0.02, 0.05, "lower", 0.0, "regression"),
    (-0.05, -0.02, "lower", 0.0, "improvement"),
    (-0.01, 0.02, "lower", 0.0, "no change"),
    (0.02, 0.05, "higher", 0.0, "improvement"),
    (-0.05, -0.02, "higher", 0.0, "regression"),
    (0.02, 0.04, "lower", 0.05, "no change"),       # significant but below the threshold
    (0.03, 0.08, "lower", 0.05, "inconclusive"),    # might exceed the threshold
    (0.06, 0.08, "lower", 0.05, "regression"),
    (-0.01, 0.08, "lower", 0.05, "inconclusive"),
    (float("nan"), float("nan"), "lower", 0.0, "inconclusive"),
])
def test_verdicts(lo, hi, direction, threshold, expected):
    assert verdict(lo, hi, direction=direction, threshold=threshold) == expected


def test_verdict_validation():
    with pytest.raises(ValueError, match="`threshold` must be non-negative"):
        verdict(0, 1, threshold=-1)
    with pytest.raises(ValueError, match="`direction`"):
        verdict(0, 1, direction="up")


def test_delta_interval_matches_hand_computation():
    change, lo, hi = delta_ratio_interval(2.0, 0.1, 2.2, 0.1, confidence_level=0.95)
    se = math.sqrt((0.1 / 2.0) ** 2 + (2.2 * 0.1 / 4.0) ** 2)
    z = 1.959963984540054
    assert change == pytest.approx(0.1)
    assert (lo, hi) == (pytest.approx(0.1 - z * se), pytest.approx(0.1 + z * se))
