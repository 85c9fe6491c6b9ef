"""Did the variance change: the Brown-Forsythe test of seed 003 s.3.3.1 (regbench.stats.variance)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from regbench.stats.variance import F_INTERVAL, VARIANCE_VERDICTS, VarianceComparison, variance_change


# --- agreement with an independent computation ------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("center, location", [("median", np.median), ("mean", np.mean)])
def test_statistic_is_the_anova_f_on_absolute_deviations(seed, center, location):
    # Brown and Forsythe (1974): one-way ANOVA F on |x - median| of each group (Levene 1960: on
    # |x - mean|), computed here by f_oneway rather than by scipy.stats.levene.
    rng = np.random.default_rng(seed)
    a = rng.lognormal(0, 0.3, 17)
    b = rng.lognormal(0, 0.6, 23)
    ref = stats.f_oneway(np.abs(a - location(a)), np.abs(b - location(b)))
    r = variance_change(a, b, center=center)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert r.test == {"median": "Brown-Forsythe", "mean": "Levene"}[center]
    assert r.center == center


def test_descriptive_fields_by_hand():
    a = np.array([10.0, 11.0, 9.0, 10.0])
    b = np.array([20.0, 26.0, 14.0, 20.0])
    r = variance_change(a, b)
    sd_a, sd_b = math.sqrt(2 / 3), math.sqrt(72 / 3)
    assert (r.n_a, r.n_b) == (4, 4)
    assert r.sd_a == pytest.approx(sd_a) and r.sd_b == pytest.approx(sd_b)
    assert r.cv_a == pytest.approx(sd_a / 10) and r.cv_b == pytest.approx(sd_b / 20)
    assert r.ratio == pytest.approx(sd_b / sd_a)
    # mean |x - median|: (0 + 1 + 1 + 0) / 4 and (0 + 6 + 6 + 0) / 4
    assert (r.spread_a, r.spread_b) == (pytest.approx(0.5), pytest.approx(3.0))
    assert r.alpha == 0.05 and r.confidence_level == pytest.approx(0.95)


def test_ratio_interval_is_the_f_interval():
    # sigma_b^2 / sigma_a^2 in [R / F(1 - q), R / F(q)] with R = s_b^2 / s_a^2, F with (n_b - 1, n_a - 1) df.
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 12), rng.normal(0, 2, 9)
    r = variance_change(a, b, alpha=0.1)
    r2 = (np.std(b, ddof=1) / np.std(a, ddof=1)) ** 2
    lo = math.sqrt(r2 / stats.f.ppf(0.95, 8, 11))
    hi = math.sqrt(r2 / stats.f.ppf(0.05, 8, 11))
    assert (r.ratio_ci_low, r.ratio_ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert r.ratio_ci_method == F_INTERVAL == "F (assumes normality)"
    assert r.ratio_ci_low < r.ratio < r.ratio_ci_high


# --- verdicts ----------------------------------------------------------------------------------

def test_verdict_has_a_direction():
    rng = np.random.default_rng(4)
    quiet, noisy = rng.normal(100, 1, 40), rng.normal(100, 3, 40)
    up = variance_change(quiet, noisy)
    down = variance_change(noisy, quiet)
    assert up.verdict == "variance increased" and up.pvalue < 0.001 and up.ratio > 2
    assert down.verdict == "variance decreased" and down.pvalue == pytest.approx(up.pvalue)
    same = variance_change(quiet, rng.normal(100, 1, 40))
    assert same.verdict == "no evidence of a change"
    assert {up.verdict, down.verdict, same.verdict} <= set(VARIANCE_VERDICTS)


def test_alpha_decides_the_verdict():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, 20), rng.normal(0, 1.5, 20)
    p = variance_change(a, b).pvalue
    assert variance_change(a, b, alpha=min(0.99, p * 1.01)).verdict == "variance increased"
    assert variance_change(a, b, alpha=p * 0.99).verdict == "no evidence of a change"


def test_one_constant_side_is_a_valid_comparison():
    # Seed 003 table 3, v8: every result of the controlled setup was the same; Levene p = 0.008.
    rng = np.random.default_rng(6)
    r = variance_change(rng.normal(7.7, 0.11, 20), np.full(20, 7.7))
    assert r.verdict == "variance decreased" and r.pvalue < 0.001
    assert r.ratio == 0.0 and math.isnan(r.ratio_ci_low) and r.ratio_ci_method == "none"
    up = variance_change(np.full(20, 7.7), rng.normal(7.7, 0.11, 20))
    assert up.verdict == "variance increased" and math.isinf(up.ratio)


def test_result_is_a_frozen_dataclass():
    r = variance_change([1.0, 2.0, 3.0], [1.0, 3.0, 5.0])
    assert isinstance(r, VarianceComparison)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.verdict = "variance increased"


# --- degenerate data warns and is undecidable (STYLE.md habit 5) --------------------------------

@pytest.mark.parametrize("a, b, reason", [
    ([1.0], [1.0, 2.0, 3.0], "at least two values"),
    ([1.0, 2.0, 3.0], [], "at least two values"),
    ([2.0, 2.0, 2.0], [2.0, 2.0], "every value of both sides is the same"),
    ([5.0, 5.0, 5.0], [7.0, 7.0, 7.0, 7.0], "every value of both sides is the same"),
    # two values per side: |x - median| is the same for both values, so no within-side variation
    ([1.0, 3.0], [2.0, 6.0], "do not vary within either side"),
])
def test_degenerate_data_is_undecidable(a, b, reason):
    with pytest.warns(RuntimeWarning, match=f"undecidable, .*{reason}"):
        r = variance_change(a, b)
    assert r.verdict == "undecidable"
    assert math.isnan(r.statistic) and math.isnan(r.pvalue)


def test_one_value_gives_nan_sd_and_cv():
    with pytest.warns(RuntimeWarning):
        r = variance_change([3.0], [1.0, 2.0])
    assert math.isnan(r.sd_a) and math.isnan(r.cv_a) and math.isnan(r.ratio)
    assert (r.n_a, r.n_b) == (1, 2)


def test_zero_mean_gives_nan_cv_only():
    r = variance_change([-1.0, 1.0, -2.0, 2.0], [-1.0, 1.0, -1.5, 1.5, 0.5])
    assert math.isnan(r.cv_a) and r.sd_a > 0 and np.isfinite(r.pvalue)


# --- validation at the door ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"center": "trimmed"}, "`center` must be 'median' or 'mean'"),
    ({"center": ["median"]}, "`center` must be 'median' or 'mean'"),
    ({"alpha": 0}, r"`alpha` must be in \(0, 1\)"),
    ({"alpha": 1.0}, r"`alpha` must be in \(0, 1\)"),
    ({"alpha": "0.05"}, r"`alpha` must be in \(0, 1\)"),
])
def test_option_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        variance_change([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], **kwargs)


@pytest.mark.parametrize("a, b, message", [
    ([[1.0, 2.0]], [1.0, 2.0], "`a` must be one-dimensional"),
    ([1.0, 2.0], [1.0, np.nan], "`b` must contain only finite numbers"),
    ([1.0, np.inf], [1.0, 2.0], "`a` must contain only finite numbers"),
])
def test_sample_validation(a, b, message):
    with pytest.raises(ValueError, match=message):
        variance_change(a, b)


# --- behaviour by simulation -------------------------------------------------------------------

def _binomial_bounds(n: int, p: float, tail: float = 1e-4) -> tuple[int, int]:
    return int(stats.binom.ppf(tail / 2, n, p)), int(stats.binom.ppf(1 - tail / 2, n, p))


def test_size_under_equal_variances():
    # Same variance on both sides: p-values roughly uniform, so about 5% (1%, 50%) fall below
    # 0.05 (0.01, 0.5).  Bounds: the central 99.99% of Binomial(2000, level).  Brown-Forsythe is
    # slightly conservative on normal data at these sizes (76 rejections at 5% here).
    rng = np.random.default_rng(2024)
    draws = 2000
    p = np.array([variance_change(rng.normal(5, 1, 25), rng.normal(5, 1, 35)).pvalue for _ in range(draws)])
    for level in (0.01, 0.05, 0.5):
        lo, hi = _binomial_bounds(draws, level)
        assert lo <= int((p < level).sum()) <= hi, level


def test_median_keeps_its_size_on_skewed_data_where_the_mean_does_not():
    # Timings are skewed; the reason the median (Brown-Forsythe) is the default.  Exponential data
    # with equal variances: the median-centred test rejects about 5%, Levene's mean-centred test
    # about 15% (309 of 2000 with this seed).
    draws = 2000
    lo, hi = _binomial_bounds(draws, 0.05)
    rejections = {}
    for center in ("median", "mean"):
        rng = np.random.default_rng(2025)
        rejections[center] = sum(variance_change(rng.exponential(1, 25), rng.exponential(1, 35),
                                                 center=center).pvalue < 0.05 for _ in range(draws))
    assert lo <= rejections["median"] <= hi
    assert rejections["mean"] > 2 * hi


def test_pooling_iterations_of_runs_with_run_effects_finds_changes_that_are_not_there():
    # Why `compare --variance` compares run means by default: two identical setups whose runs
    # differ by random initial conditions (seed 000 s.2; run effect 1%, within-run noise 0.2%,
    # 30 runs of 10 iterations).  Run means reject at about 5%; pooled iterations, counted as
    # independent, at about 50% (260 of 500 with this seed; 22 for run means).
    rng = np.random.default_rng(9)

    def setup():
        return (1 + rng.normal(0, 0.01, 30))[:, None] * (1 + rng.normal(0, 0.002, (30, 10)))

    draws = 500
    by_runs = by_samples = 0
    for _ in range(draws):
        a, b = setup(), setup()
        by_runs += variance_change(a.mean(axis=1), b.mean(axis=1)).pvalue < 0.05
        by_samples += variance_change(a.ravel(), b.ravel()).pvalue < 0.05
    lo, hi = _binomial_bounds(draws, 0.05)
    assert lo <= by_runs <= hi
    assert by_samples > 0.3 * draws


def test_power_with_an_sd_ratio_of_two():
    rng = np.random.default_rng(11)
    draws = 1000
    verdicts = [variance_change(rng.normal(0, 1, 30), rng.normal(0, 2, 30)).verdict for _ in range(draws)]
    # about 89% with this seed; never the wrong direction
    assert verdicts.count("variance increased") > 0.8 * draws
    assert verdicts.count("variance decreased") == 0


def test_coverage_of_the_ratio_interval_on_normal_data():
    rng = np.random.default_rng(12)
    draws = 2000
    miss = 0
    for _ in range(draws):
        r = variance_change(rng.normal(0, 1, 10), rng.normal(0, 1.5, 14), alpha=0.05)
        miss += not (r.ratio_ci_low <= 1.5 <= r.ratio_ci_high)
    lo, hi = _binomial_bounds(draws, 0.05)
    assert lo <= miss <= hi


# --- layering (STYLE.md habit 1) ---------------------------------------------------------------

def test_module_imports_numpy_and_scipy_only():
    out = subprocess.run(
        [sys.executable, "-c",
         "import sys, regbench.stats.variance; "
         "print([m for m in ('sqlalchemy', 'rich', 'click', 'dask', 'pandas', 'regbench.store', 'regbench.cli') "
         "if m in sys.modules])"],
        capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
