"""Two-sample battery (seed 001 s.3.3, fig. 5): against scipy, on synthetic truth, by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from regbench.stats.battery import (
    CLIFF_THRESHOLDS,
    TRANSFORMS,
    compare_battery,
    cliffs_delta,
    cliffs_magnitude,
)
from regbench.stats.compare import compare_runs

FIG5_ROWS = [("Kolmogorov-Smirnov", "raw"), ("Wilcoxon rank-sum", "raw"), ("Kruskal-Wallis", "raw"),
             ("t-test", "raw"), ("t-test", "log"), ("t-test", "1/x"), ("t-test", "1/sqrt(x)")]


def test_pvalues_equal_direct_scipy_calls():
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(3.0, 0.2, 12), rng.lognormal(3.1, 0.3, 15)
    r = compare_battery(a, b, n_resamples=500, rng=0)
    expected = {
        ("Kolmogorov-Smirnov", "raw"): stats.ks_2samp(a, b),
        ("Wilcoxon rank-sum", "raw"): stats.mannwhitneyu(a, b, alternative="two-sided"),
        ("Kruskal-Wallis", "raw"): stats.kruskal(a, b),
        ("t-test", "raw"): stats.ttest_ind(a, b),
        ("t-test", "log"): stats.ttest_ind(np.log(a), np.log(b)),
        ("t-test", "1/x"): stats.ttest_ind(1 / a, 1 / b),
        ("t-test", "1/sqrt(x)"): stats.ttest_ind(1 / np.sqrt(a), 1 / np.sqrt(b)),
        ("Welch t-test", "raw"): stats.ttest_ind(a, b, equal_var=False),
        ("Levene", "raw"): stats.levene(a, b, center="mean"),
        ("Brown-Forsythe", "raw"): stats.levene(a, b, center="median"),
    }
    for (name, tr), ref in expected.items():
        t = r.test(name, tr)
        assert t.statistic == pytest.approx(ref.statistic, rel=1e-12), (name, tr)
        assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-12), (name, tr)
        assert t.note == ""
    assert [(t.name, t.transform) for t in r.tests] == FIG5_ROWS + [("Welch t-test", "raw")]
    for nr, f in zip(r.normality, (lambda x: x, np.log, lambda x: 1 / x, lambda x: 1 / np.sqrt(x))):
        assert nr.pvalue_a == pytest.approx(stats.shapiro(f(a)).pvalue, rel=1e-12)
        assert nr.pvalue_b == pytest.approx(stats.shapiro(f(b)).pvalue, rel=1e-12)
    assert [nr.transform for nr in r.normality] == list(TRANSFORMS)
    assert (r.n_a, r.n_b, r.alpha) == (12, 15, 0.05)


def test_a_table_like_figure_5_on_synthetic_versions():
    # Five versions, ten runs each (one result per run).  Truth: 1->2 is 5% slower, 2->3 is the
    # same distribution, 3->4 is 5% faster, 4->5 repeats the very same runs.
    rng = np.random.default_rng(2005)
    v1 = rng.normal(100.0, 1.0, 10)
    v2 = rng.normal(105.0, 1.0, 10)
    v3 = rng.normal(105.0, 1.0, 10)
    v4 = rng.normal(100.0, 1.0, 10)
    v5 = v4[::-1].copy()
    pairs = [(v1, v2), (v2, v3), (v3, v4), (v4, v5)]
    columns = [compare_battery(a, b, n_resamples=2000, rng=i) for i, (a, b) in enumerate(pairs)]
    table = [[c.test(name, tr).pvalue for c in columns] for name, tr in FIG5_ROWS]
    for row, (name, tr) in zip(table, FIG5_ROWS):
        shift1, same, shift2, identical = row
        # A 5-sd shift separates the samples completely: every test rejects decisively (the
        # exact two-sided KS and rank-sum p-value for complete separation of 10 vs 10 is
        # 2 / C(20, 10) = 1.1e-5).
        assert shift1 < 1e-3 and shift2 < 1e-3, (name, tr, row)
        # Same distribution (this seed): no test rejects at the paper's 0.05.
        assert same > 0.05, (name, tr, row)
        # Identical runs: nothing at all to see.
        assert identical == pytest.approx(1.0), (name, tr, row)
    assert columns[0].test("Kolmogorov-Smirnov").pvalue == pytest.approx(2 / math.comb(20, 10))
    # Effect sizes tell the direction and size: B slower by 5%, then faster by about 5%.
    assert columns[0].cliffs_delta == 1.0 and columns[0].cliffs_magnitude == "large"
    assert columns[2].cliffs_delta == -1.0
    assert columns[0].ratio_ci_low < 1.05 < columns[0].ratio_ci_high
    assert columns[0].ratio_ci_low > 1.0
    assert columns[1].ratio_ci_low < 1.0 < columns[1].ratio_ci_high
    assert columns[0].significant("t-test", "log") is True
    assert columns[1].significant("Wilcoxon rank-sum") is False


def test_rejection_rates_under_the_null_are_about_alpha():
    rng = np.random.default_rng(7)
    n_pairs = 300
    rejections: dict[tuple[str, str], int] = {}
    for _ in range(n_pairs):
        a, b = rng.lognormal(2.0, 0.3, 20), rng.lognormal(2.0, 0.3, 20)
        r = compare_battery(a, b, n_resamples=50, rng=1)
        for t in (*r.tests, r.levene, r.brown_forsythe):
            rejections[(t.name, t.transform)] = rejections.get((t.name, t.transform), 0) + (t.pvalue < 0.05)
    assert len(rejections) == 10
    for key, count in rejections.items():
        # Binomial(300, 0.05): mean 15, sd 3.8; accepted 4..30 (-2.9 to +4 sd).  The exact KS
        # and the Brown-Forsythe test are somewhat conservative, so the lower bound is loose.
        assert 4 <= count <= 30, (key, count)


def test_shapiro_picks_log_for_lognormal_data_and_1_over_x_for_reciprocal_normal_data():
    rng = np.random.default_rng(11)
    r = compare_battery(rng.lognormal(3.0, 0.8, 30), rng.lognormal(3.0, 0.8, 30), n_resamples=200, rng=0)
    assert r.best_transform == "log"
    log = next(nr for nr in r.normality if nr.transform == "log")
    raw = next(nr for nr in r.normality if nr.transform == "raw")
    assert raw.worst < 0.01 < log.worst
    # Over many pairs the choice is log nearly always (19 of 20 with these seeds).
    picks = [compare_battery(rng.lognormal(3.0, 0.8, 30), rng.lognormal(3.0, 0.8, 30),
                             n_resamples=50, rng=0).best_transform for _ in range(20)]
    assert picks.count("log") >= 16
    # Data whose reciprocal is normal (a rate measured as a duration): 1/x wins most often.
    picks = [compare_battery(1 / rng.normal(1.0, 0.15, 30), 1 / rng.normal(1.0, 0.15, 30),
                             n_resamples=50, rng=0).best_transform for _ in range(20)]
    assert picks.count("1/x") >= 10 and picks.count("raw") <= 5


def test_levene_and_brown_forsythe_detect_a_change_of_spread_only():
    rng = np.random.default_rng(3)
    # Spread as in seed 003 table 3 (a11y: sd 2.23 unmodified, 0.54 with noise control).
    noisy, quiet = rng.normal(320.0, 2.23, 30), rng.normal(320.0, 0.54, 30)
    r = compare_battery(noisy, quiet, n_resamples=200, rng=0)
    assert r.levene.pvalue < 0.001 and r.brown_forsythe.pvalue < 0.001
    assert r.test("t-test").pvalue > 0.05  # same centre
    same = compare_battery(noisy, rng.normal(320.0, 2.23, 30), n_resamples=200, rng=0)
    assert same.levene.pvalue > 0.05 and same.brown_forsythe.pvalue > 0.05


def test_cliffs_delta_by_hand_and_from_mann_whitney():
    # a = [1, 2, 3], b = [2, 4]: pairs (a, b) with b > a: (1,2) (1,4) (2,4) (3,4) = 4;
    # b < a: (3,2) = 1; tie (2,2).  delta = (4 - 1) / 6 = 0.5.
    assert cliffs_delta([1, 2, 3], [2, 4]) == pytest.approx(0.5)
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 20, 40).astype(float), rng.integers(3, 25, 33).astype(float)  # with ties
    u_a = stats.mannwhitneyu(a, b).statistic
    u_b = a.size * b.size - u_a
    assert cliffs_delta(a, b) == pytest.approx(2 * u_b / (a.size * b.size) - 1)
    brute = np.sign(b[None, :] - a[:, None]).mean()
    assert cliffs_delta(a, b) == pytest.approx(brute)
    assert cliffs_delta(b, a) == pytest.approx(-brute)


@pytest.mark.parametrize("delta, label", [
    (0.0, "negligible"), (0.146, "negligible"), (-0.147, "small"), (0.329, "small"),
    (0.33, "medium"), (-0.473, "medium"), (0.474, "large"), (1.0, "large"),
])
def test_cliffs_magnitude_thresholds(delta, label):
    assert CLIFF_THRESHOLDS == (0.147, 0.33, 0.474)
    assert cliffs_magnitude(delta) == label


def test_ratio_interval_is_the_run_level_bootstrap_of_compare_runs():
    rng = np.random.default_rng(5)
    a, b = rng.normal(10.0, 0.5, 12), rng.normal(11.0, 0.5, 12)
    r = compare_battery(a, b, n_resamples=3000, rng=9)
    c = compare_runs(a, b, confidence_level=0.95, n_resamples=3000, rng=9)
    assert r.ratio == pytest.approx(b.mean() / a.mean())
    assert (r.ratio_ci_low, r.ratio_ci_high) == pytest.approx((1 + c.ci_low, 1 + c.ci_high))
    assert r.ratio_method == c.method and c.method.startswith("BCa")


def test_non_positive_data_skip_the_transformations_with_a_warning():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    b = a + 0.5
    with pytest.warns(RuntimeWarning, match="zero or negative"):
        r = compare_battery(a, b, n_resamples=200, rng=0)
    for tr in ("log", "1/x", "1/sqrt(x)"):
        t = r.test("t-test", tr)
        assert math.isnan(t.pvalue) and "non-positive" in t.note
    assert r.test("t-test", "raw").pvalue == pytest.approx(stats.ttest_ind(a, b).pvalue)
    assert r.best_transform == "raw"


def test_degenerate_data_give_nan_and_name_the_undefined_tests():
    a = np.full(6, 2.0)
    with pytest.warns(RuntimeWarning, match="Kruskal-Wallis on raw data") as record:
        r = compare_battery(a, a.copy(), n_resamples=100, rng=0)
    assert any("t-test on log data" in str(w.message) for w in record)
    assert math.isnan(r.test("t-test").pvalue) and r.test("t-test").note
    assert math.isnan(r.levene.pvalue)
    assert r.best_transform is None
    # Rank and distribution tests are defined on ties: identical samples, p = 1.
    assert r.test("Kolmogorov-Smirnov").pvalue == 1.0
    assert r.significant("t-test") is None


def test_lookup_of_a_missing_test_raises():
    r = compare_battery([1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0], n_resamples=100, rng=0)
    with pytest.raises(KeyError, match="no test 'Welch t-test' on 'log'"):
        r.test("Welch t-test", "log")


@pytest.mark.parametrize("call, match", [
    (lambda: compare_battery([], [1.0, 2.0]), "`a` and `b` must not be empty"),
    (lambda: compare_battery([1.0, np.nan], [1.0, 2.0]), "`a` must contain only finite"),
    (lambda: compare_battery([1.0, 2.0], [[1.0, 2.0]]), "`b` must be one-dimensional"),
    (lambda: compare_battery([1.0, 2.0], [1.0, 2.0], alpha=0.0), "`alpha` must be in"),
    (lambda: compare_battery([1.0, 2.0], [1.0, 2.0], n_resamples=-1), "`n_resamples` must be a positive"),
    (lambda: cliffs_delta([], [1.0]), "must not be empty"),
    (lambda: cliffs_magnitude(1.5), "`delta` must be in"),
])
def test_validation_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()
