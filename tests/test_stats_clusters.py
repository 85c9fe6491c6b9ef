"""Clusters (seed 000 s.4.1, seed 001 s.4.1-4.2): number of clusters, the clustering additive
filter, and the damaged-omniORB comparison of seed 001 figs. 7-9, on synthetic data with known truth."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from regbench.stats import compare_runs, hierarchical_summary
from regbench.stats.clusters import (
    welch_difference,
    clustering_additive_filter,
    compare_clusters,
    find_clusters,
)


def mixture(rng, centres, sds, weights, n):
    """``n`` samples of a normal mixture and their true component."""
    comp = rng.choice(len(centres), size=n, p=weights)
    return rng.normal(np.asarray(centres)[comp], np.asarray(sds)[comp]), comp


def fft_like(rng, n_runs=20, n=500, modes=(10.0, 10.8, 12.0), sd=0.05):
    """Runs of a benchmark like FFT in seed 000 fig. 1: a few typical values (clusters) shared by
    all runs, each run falling into them in its own proportions (the random initial conditions),
    iid noise within a cluster."""
    runs = []
    for _ in range(n_runs):
        w = rng.dirichlet([0.5] * len(modes))
        runs.append(mixture(rng, modes, [sd] * len(modes), w, n)[0])
    return runs


def damaged_orb(rng, n_runs, n, fast):
    """Seed 001 figs. 7-9: ~30% of calls hit a cache (~100 us, here ``fast``), ~70% wait for a
    database object (~80 ms, the median 79910 us of fig. 8)."""
    runs = []
    for _ in range(n_runs):
        hit = rng.random(n) < 0.3
        runs.append(np.where(hit, rng.normal(fast, 0.02 * fast, n), rng.normal(79910.0, 800.0, n)))
    return runs


# ------------------------------------------------------------------------------------------
# number of clusters


SETS = {
    1: ([10.0], [0.3], [1.0]),
    2: ([10.0, 14.0], [0.3, 0.5], [0.3, 0.7]),
    3: ([10.0, 13.0, 17.0], [0.3, 0.3, 0.4], [0.2, 0.5, 0.3]),
}


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize(("criterion", "seed"), [("bic", 0), ("bic", 1), ("icl", 0)])
def test_gmm_finds_the_number_of_well_separated_normals(k, criterion, seed):
    centres, sds, weights = SETS[k]
    x, comp = mixture(np.random.default_rng(seed), centres, sds, weights, 3000)
    c = find_clusters(x, criterion=criterion, rng=seed)
    assert c.n_clusters == c.n_components == k
    assert c.method == "gmm" and np.isnan(c.gap).all()
    assert c.ks.tolist() == list(range(1, 10))
    assert int(np.argmin(getattr(c, criterion))) + 1 == k
    # Centres within 3 standard errors, weights within 3 binomial standard errors.
    se = np.asarray(sds) / np.sqrt(3000 * np.asarray(weights))
    assert np.all(np.abs(c.centres - centres) < 3 * se + 1e-12)
    w = np.asarray(weights)
    assert np.all(np.abs(c.weights - w) < 3 * np.sqrt(w * (1 - w) / 3000) + 1e-12)
    assert c.sds == pytest.approx(sds, rel=0.1)
    # Well separated: every sample lands in its own component.
    assert np.array_equal(c.labels, comp)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_kmeans_with_gap_statistic_agrees_with_gmm(k):
    centres, sds, weights = SETS[k]
    x, _ = mixture(np.random.default_rng(10 + k), centres, sds, weights, 2000)
    g = find_clusters(x, rng=1)
    km = find_clusters(x, method="kmeans", rng=1)
    assert km.n_clusters == g.n_clusters == k
    assert np.isnan(km.bic).all() and np.isnan(km.icl).all() and km.n_components == k
    assert np.array_equal(km.labels, g.labels)
    assert km.centres == pytest.approx(g.centres)


def test_gap_first_se_rule_would_miss_three_equally_spaced_clusters():
    # On the log scale 10, 13, 17 are nearly equally spaced: splitting them in two reduces the
    # dispersion by the same factor (4) as splitting a uniform sample, so gap(2) ~ gap(1) and
    # Tibshirani's first-SE rule stops at 1.  The global-SE rule used here finds 3.
    x, _ = mixture(np.random.default_rng(3), [10.0, 13.0, 17.0], [0.3] * 3, [1 / 3] * 3, 2000)
    c = find_clusters(x, method="kmeans", rng=0)
    gap, se = c.gap, c.gap_se
    first_se = next(i for i in range(gap.size - 1) if gap[i] >= gap[i + 1] - se[i + 1]) + 1
    assert first_se == 1
    assert c.n_clusters == 3


def test_icl_keeps_a_skewed_cluster_whole_where_bic_splits_it():
    # Benchmark timings: a floor plus exponential delays.  BIC spends components on the shape.
    x = 10.0 + np.random.default_rng(12).exponential(1.0, 4096)
    icl = find_clusters(x, rng=0)
    bic = find_clusters(x, criterion="bic", rng=0)
    assert icl.n_clusters == icl.n_components == 1
    assert bic.n_components >= 3 and bic.n_clusters >= 2
    assert int(np.argmin(icl.icl)) == 0 and int(np.argmin(icl.bic)) >= 2  # same fits, both scores
    mclust = find_clusters(x, criterion="bic", modes=False, rng=0)
    assert mclust.n_clusters == bic.n_components > bic.n_clusters  # modes merge components


def test_modes_merge_components_that_share_a_peak():
    # A skewed (Gumbel) cluster: BIC puts several overlapping components under its one peak.
    x = 100.0 + np.random.default_rng(13).gumbel(0.0, 2.0, 4096)
    c = find_clusters(x, criterion="bic", rng=1)
    assert c.n_components >= 2 and c.n_clusters == 1
    assert c.labels.max() == 0 and c.centres[0] == pytest.approx(x.mean())


def test_quantised_samples_are_one_cluster_not_one_per_timer_tick():
    x = np.round(np.random.default_rng(14).normal(100.0, 2.0, 5000))  # 15 distinct values
    assert find_clusters(x, rng=0).n_clusters == 1
    raw = find_clusters(x, dequantise=False, rng=0)
    assert raw.n_clusters >= 5
    rng = np.random.default_rng(15)
    two = np.round(np.r_[rng.normal(100, 1, 3000), rng.normal(110, 1, 2000)])
    c = find_clusters(two, rng=0)
    assert c.n_clusters == 2 and c.centres == pytest.approx([100.0, 110.0], abs=0.1)
    assert set(np.unique(two[c.labels == 0])) < set(range(90, 106))  # unjittered members


def test_labels_weights_and_sds_are_those_of_the_assignment():
    x, _ = mixture(np.random.default_rng(4), [5.0, 9.0], [0.2, 0.4], [0.4, 0.6], 500)
    c = find_clusters(x, rng=2)
    for j in range(c.n_clusters):
        members = x[c.labels == j]
        assert c.centres[j] == pytest.approx(members.mean())
        assert c.sds[j] == pytest.approx(members.std(ddof=1))
        assert c.weights[j] == pytest.approx(members.size / x.size)
    assert np.all(np.diff(c.centres) > 0)
    assert c.weights.sum() == pytest.approx(1.0)


def test_large_sample_is_fitted_on_a_seeded_subsample_and_all_samples_assigned():
    x, comp = mixture(np.random.default_rng(5), [100.0, 130.0], [2.0, 3.0], [0.3, 0.7], 20_000)
    c = find_clusters(x, max_fit=1000, rng=7)
    assert c.n_fit == 1000 and c.labels.size == x.size
    assert np.array_equal(c.labels, comp)
    again = find_clusters(x, max_fit=1000, rng=7)
    assert np.array_equal(again.icl, c.icl)  # same seed, same fit
    full = find_clusters(x[:1000], rng=7)
    assert full.n_fit == 1000


def test_log_scale_is_automatic_for_positive_samples_only():
    x, _ = mixture(np.random.default_rng(6), [100.0, 80_000.0], [2.0, 800.0], [0.3, 0.7], 2000)
    c = find_clusters(x, rng=0)
    assert c.log_scale and c.n_clusters == 2
    assert c.centres[0] == pytest.approx(100.0, rel=0.01) and c.centres[1] == pytest.approx(79910, rel=0.01)
    shifted = find_clusters(np.concatenate([x, [-1.0]]), rng=0)
    assert not shifted.log_scale
    with pytest.raises(ValueError, match="`log` needs positive samples"):
        find_clusters(np.array([1.0, -1.0]), log=True)


def test_constant_sample_warns_and_gives_one_cluster_with_nan_criterion():
    with pytest.warns(RuntimeWarning, match="fewer than two distinct values"):
        c = find_clusters(np.full(10, 3.0))
    assert c.n_clusters == 1 and c.centres.tolist() == [3.0] and c.sds.tolist() == [0.0]
    assert np.isnan(c.bic).all() and np.isnan(c.icl).all() and np.isnan(c.gap).all()
    with pytest.warns(RuntimeWarning, match="fewer than two distinct values"):
        one = find_clusters([7.0])
    assert np.isnan(one.sds[0]) and one.labels.tolist() == [0]


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(sample=[]), "`sample` must not be empty"),
    (dict(sample=[1.0, np.nan]), "`sample` must contain only finite numbers"),
    (dict(sample=[[1.0, 2.0]]), "`sample` must be one-dimensional"),
    (dict(sample=[1.0, 2.0], method="dbscan"), "`method` must be one of 'gmm', 'kmeans'"),
    (dict(sample=[1.0, 2.0], criterion="aic"), "`criterion` must be one of 'icl', 'bic'"),
    (dict(sample=[1.0, 2.0], k_max=0), "`k_max` must be a positive integer"),
    (dict(sample=[1.0, 2.0], max_fit=1.5), "`max_fit` must be a positive integer"),
    (dict(sample=[1.0, 2.0], n_references=0), "`n_references` must be a positive integer"),
    (dict(sample=[1.0, 2.0], log="yes"), "`log` must be True, False or None"),
])
def test_find_clusters_validation(kwargs, message):
    sample = kwargs.pop("sample")
    with pytest.raises(ValueError, match=message):
        find_clusters(sample, **kwargs)


# ------------------------------------------------------------------------------------------
# clustering additive filter


def test_clustering_additive_filter_brings_fft_impact_factor_to_about_one():
    runs = fft_like(np.random.default_rng(3))
    res = clustering_additive_filter(runs, rng=1)
    assert res.clusters.n_clusters == 3
    assert res.clusters.centres == pytest.approx([10.0, 10.8, 12.0], abs=0.01)
    # Runs differ by which clusters they fall into: run means differ far more than within-run
    # noise explains (seed 000 fig. 2: tens to hundreds).
    assert res.impact_before > 10
    # Within a cluster, runs are alike (seed 000 fig. 3): about 1 (chi2_19 / 19 spread).
    assert 0.5 < res.impact_after < 1.5
    assert res.before.impact_factor == pytest.approx(hierarchical_summary(runs).impact_factor)
    # The filter subtracted each cluster's mean from its members.
    pooled = np.concatenate(res.filtered)
    for j in range(3):
        assert abs(pooled[res.clusters.labels == j].mean()) < 1e-9
    assert [f.size for f in res.filtered] == [r.size for r in runs]


def test_additive_filter_with_one_run_warns_like_hierarchical_summary():
    with pytest.warns(RuntimeWarning, match="fewer than two runs"):
        res = clustering_additive_filter([np.random.default_rng(0).normal(10, 1, 50)], rng=0)
    assert math.isnan(res.impact_after)


def test_additive_filter_validation():
    with pytest.raises(ValueError, match="`runs` must be a sequence of runs"):
        clustering_additive_filter(np.arange(5.0))
    with pytest.raises(ValueError, match="`runs` must contain at least one run"):
        clustering_additive_filter([])
    with pytest.raises(ValueError, match="`runs` must not contain an empty run"):
        clustering_additive_filter([[1.0, 2.0], []])
    with pytest.raises(ValueError, match="`confidence_level` must be in"):
        clustering_additive_filter([[1.0, 2.0]], confidence_level=1.5)


# ------------------------------------------------------------------------------------------
# cluster-by-cluster comparison


def test_damaged_orb_is_invisible_to_mean_and_median_but_found_cluster_by_cluster():
    rng = np.random.default_rng(7)
    original = damaged_orb(rng, 4, 5000, fast=100.0)
    damaged = damaged_orb(rng, 4, 5000, fast=110.0)  # remote calls 10% slower (seed 001 s.4.1)

    # Fig. 8: averages and medians are the same; the mean comparison sees no change.
    plain = compare_runs([r.mean() for r in original], [r.mean() for r in damaged], rng=1)
    assert plain.ci_low < 0 < plain.ci_high
    assert abs(plain.change) < 0.002
    median_change = np.median(np.concatenate(damaged)) / np.median(np.concatenate(original)) - 1
    assert abs(median_change) < 0.001

    # Fig. 9: cluster by cluster, the fast cluster moved by +10%, the slow one did not.
    cmp = compare_clusters(original, damaged, rng=3)
    assert cmp.clusters_a.n_clusters == cmp.clusters_b.n_clusters == 2
    assert cmp.appeared == () and cmp.disappeared == ()
    fast, slow = cmp.shifts
    assert fast.replicates == "runs" and (fast.n_a, fast.n_b) == (4, 4)
    assert fast.change == pytest.approx(0.10, abs=0.005)
    assert 0.09 < fast.ci_low < fast.change < fast.ci_high < 0.11
    assert fast.p_value < 1e-4
    assert slow.ci_low < 0 < slow.ci_high and slow.p_value > 0.01
    assert cmp.significant == (fast,)
    # The weights did not change (30% / 70%).
    assert fast.weight_a == pytest.approx(0.3, abs=0.01) and fast.weight_p_value > 0.01


def test_a_cluster_that_appears_and_one_whose_weight_changes():
    rng = np.random.default_rng(11)
    a = [mixture(rng, [10.0, 20.0], [0.2, 0.4], [0.5, 0.5], 2000)[0] for _ in range(4)]
    b = [mixture(rng, [10.0, 20.0, 50.0], [0.2, 0.4, 1.0], [0.3, 0.5, 0.2], 2000)[0] for _ in range(4)]
    cmp = compare_clusters(a, b, rng=2)
    assert cmp.appeared == (2,) and cmp.disappeared == ()
    assert cmp.clusters_b.centres[2] == pytest.approx(50.0, abs=0.1)
    first = cmp.shifts[0]
    assert first.weight_change == pytest.approx(-0.2, abs=0.02) and first.weight_p_value < 1e-4
    assert all(s.p_value > 0.01 for s in cmp.shifts)  # locations unchanged
    back = compare_clusters(b, a, rng=2)
    assert back.disappeared == (2,) and back.appeared == ()


def test_single_runs_fall_back_to_iterations_as_replicates():
    rng = np.random.default_rng(8)
    a = damaged_orb(rng, 1, 3000, fast=100.0)
    b = damaged_orb(rng, 1, 3000, fast=110.0)
    cmp = compare_clusters(a, b, rng=0)
    fast = cmp.shifts[0]
    assert fast.replicates == "iterations" and fast.n_a == pytest.approx(900, abs=60)
    assert 0.09 < fast.ci_low < fast.ci_high < 0.11


def test_welch_by_hand_agrees_with_scipy():
    rng = np.random.default_rng(9)
    a, b = rng.normal(10, 1, 7), rng.normal(11, 3, 5)
    w = welch_difference(a, b, 0.95)
    ref = stats.ttest_ind(b, a, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert w.p == pytest.approx(ref.pvalue)
    assert (w.low, w.high) == pytest.approx((ci.low, ci.high))
    same = welch_difference(np.ones(3), np.ones(3), 0.95)
    assert (same.diff, same.p) == (0.0, 1.0)


def test_compare_clusters_validation():
    with pytest.raises(ValueError, match="`b_runs` must contain at least one run"):
        compare_clusters([[1.0, 2.0]], [])
    with pytest.raises(ValueError, match="`max_distance` must be positive"):
        compare_clusters([[1.0, 2.0]], [[1.0, 2.0]], max_distance=0)


def test_importing_the_modules_does_not_import_sklearn_or_statsmodels():
    code = ("import sys, regbench.stats.clusters, regbench.stats.dependence, regbench.stats.warmup; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'statsmodels'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
