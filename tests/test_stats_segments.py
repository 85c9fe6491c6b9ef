"""regbench.stats.segments: validation, the pooled and vectorised paths against the plain ones, purity."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from regbench.stats.levels import mode_stats
from regbench.stats.runs import VersionStats, fence_bounds, history_percentiles, robust_run_means, run_locations
from regbench.stats.segments import (
    SegmentStats, compare_segments, compare_segments_many, ratio_interval, segment_test, two_level_t, version_stats,
    version_stats_many, version_variance
)


def history(n_versions: int, *, runs: int = 4, iters: int = 10, seed: int = 0, empty_at=()):
    rng = np.random.default_rng(seed)
    return [[] if k in empty_at else [rng.lognormal(0, 0.05, iters) * (1 + 0.1 * (k >= n_versions // 2))
                                      for _ in range(runs)]
            for k in range(n_versions)]


@pytest.mark.parametrize("call", [
    lambda: robust_run_means([np.ones(3)], fence=0),
    lambda: fence_bounds([np.ones(3)], fence=-1.0),
    lambda: version_stats([[np.ones(3)]], fence=float("nan")),
    lambda: version_stats_many([[[np.ones(3)]]], fence=0),
])
def test_fence_must_be_positive(call):
    with pytest.raises(ValueError, match="`fence` must be positive"):
        call()


def test_group_must_give_one_version_per_run():
    with pytest.raises(ValueError, match="`group` must give one version per run"):
        robust_run_means([np.ones(3), np.ones(3)], group=[0])


def test_ratio_interval_validates_the_confidence_level():
    vs = version_stats(history(10))
    with pytest.raises(ValueError, match="`confidence_level` must be in"):
        ratio_interval(segment_test(vs, 0, 5, 10), 1.5)


def test_pooled_summaries_equal_the_one_by_one_ones_bit_for_bit():
    histories = [history(12, seed=1), history(3, runs=2, seed=2, empty_at={1}), [], history(7, runs=5, iters=6, seed=3)]
    histories[3][2][0][0] = 1e4  # an outlier the fence drops
    pooled = version_stats_many(histories)
    for runs, got in zip(histories, pooled, strict=True):
        want = version_stats(runs)
        for field in ("index", "mean", "var", "n"):
            assert np.array_equal(getattr(got, field), getattr(want, field), equal_nan=True)


def test_versions_without_runs_are_left_out_and_indexed_by_position():
    vs = version_stats(history(6, empty_at={0, 3}))
    assert list(vs.index) == [1, 2, 4, 5] and list(vs.n) == [4, 4, 4, 4]


def test_the_vectorised_test_is_the_scalar_one():
    vs = version_stats(history(20, seed=4))
    vv = version_variance(vs)
    ks = np.arange(2, 18)
    left = [SegmentStats.of(vs, 0, k) for k in ks]
    right = [SegmentStats.of(vs, k, 20) for k in ks]
    df_w = np.array([a.df_within + b.df_within for a, b in zip(left, right, strict=True)])
    s2w = np.array([a.ss_within + b.ss_within for a, b in zip(left, right, strict=True)]) / df_w
    res = two_level_t(np.array([a.mean for a in left]), np.array([b.mean for b in right]),
                      np.array([a.k for a in left]), np.array([b.k for b in right]),
                      np.array([a.sum_inv_n for a in left]), np.array([b.sum_inv_n for b in right]),
                      s2_within=s2w, df_within=df_w, s2_version=vv[0], df_version=vv[1])
    for j, k in enumerate(ks):
        one = compare_segments(left[j], right[j], version_var=vv)
        assert (res.t[j], res.df[j], res.p_value[j]) == (one.t, one.df, one.p_value)
        assert one == segment_test(vs, 0, int(k), 20, version_var=vv)


def test_noiseless_different_segments_are_certain_not_undecidable():
    vs = version_stats([[np.ones(3)]] * 3 + [[np.full(3, 2.0)]] * 3)
    res = segment_test(vs, 0, 3, 6)
    assert res.p_value == 0.0 and res.t == np.inf
    assert ratio_interval(res, 0.99) == (1.0, 1.0, 1.0)


def test_mode_stats_split_the_samples_at_the_bounds():
    runs = [[np.array([1.0, 1.1, 5.0, 5.2])] * 2, [np.array([1.2, 1.3, 5.0, 5.4])] * 2]
    fast, slow = mode_stats(runs, np.array([-np.inf, 3.0, np.inf]))
    assert fast.mean == pytest.approx([1.05, 1.25]) and slow.mean == pytest.approx([5.1, 5.2])


def test_mode_floors_are_each_versions_fastest_run_in_each_mode():
    from regbench.stats.levels import mode_floors

    bounds = np.array([-np.inf, 3.0, np.inf])
    runs = [[np.array([1.0, 1.1, 5.0, 5.2]), np.array([1.4, 1.6, 6.0, 6.2])],
            [np.array([1.2, 1.3, 5.0, 5.4]), np.array([0.9, 1.1, 5.6, 5.8]), np.array([2.0, 2.2, 4.0, 4.4])],
            [],  # a version without runs is left out
            [np.array([1.0, 1.2, 1.1, 1.3]), np.array([1.5, 1.7, 1.6, 1.8])]]  # no run holds the slow mode
    fast, slow = mode_floors(runs, bounds)
    assert list(fast.index) == [0, 1, 3] and fast.mean == pytest.approx([1.05, 1.0, 1.15])
    assert list(slow.index) == [0, 1] and slow.mean == pytest.approx([5.1, 4.2])
    assert list(fast.n) == [1, 1, 1] and np.isnan(fast.var).all() and not fast.log
    # On the log scale, the logarithm of the same; the mode's runs are those mode_stats counts.
    log_fast, _ = mode_floors(runs, bounds, log=True)
    assert log_fast.mean == pytest.approx(np.log([1.05, 1.0, 1.15])) and log_fast.log
    assert list(mode_stats(runs, bounds)[1].index) == list(slow.index)


def test_the_module_imports_neither_the_store_nor_the_model():
    code = ("import sys, regbench.stats.segments as m; m.version_stats([[m.np.ones(3)]]); "
            "print([k for k in ('sqlalchemy', 'rich', 'regbench.model', 'regbench.detect', 'scipy.stats') "
            "if k in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _history(gen, sampler, versions=20, runs=5, n=30):
    return [[sampler(gen, n) for _ in range(runs)] for _ in range(versions)]


def test_the_location_with_the_least_run_to_run_spread_is_chosen_for_each_noise_shape():
    from regbench.stats.runs import choose_location, run_locations

    gen = np.random.default_rng(11)

    def symmetric(g, n):
        return 1 + g.normal(0, 0.02, n)

    def floor_and_interference(g, n):  # a run is never faster than the work allows, often slower
        return 1 + (g.random(n) < 0.4) * g.exponential(0.2, n)

    def heavy_tails(g, n):  # outliers both ways, not far enough for the fences
        return 1 + 0.01 * g.standard_t(1.2, n)

    assert choose_location(_history(gen, symmetric)).estimator == "mean"
    skewed = choose_location(_history(gen, floor_and_interference))
    assert skewed.estimator == "low" and skewed.skew > 0.1 and "floor" in skewed.reason and skewed.log
    assert skewed.spread["low"] < skewed.spread["mean"]
    assert choose_location(_history(gen, heavy_tails)).estimator == "median"
    # Too few samples per run to tell: the mean.
    tiny = choose_location(_history(gen, floor_and_interference, n=3))
    assert tiny.estimator == "mean" and "too few" in tiny.reason
    # The locations themselves: the 10% quantile and the median of each run (after the fences).
    runs = [np.arange(1.0, 11.0), np.arange(2.0, 12.0)]
    assert run_locations(runs, estimator="median").tolist() == [5.5, 6.5]
    assert run_locations(runs, estimator="low").tolist() == pytest.approx([1.9, 2.9])
    with pytest.raises(ValueError, match="`estimator` must be one of mean, median, low"):
        run_locations(runs, estimator="min")
    with pytest.raises(ValueError, match="`candidates` must be some of"):
        choose_location([runs], candidates=("min",))


def test_the_choice_never_looks_at_differences_between_versions():
    """Scaling one version (a change) leaves the within-version spread, and the choice, as they are."""
    from regbench.stats.runs import choose_location

    gen = np.random.default_rng(12)
    history = _history(gen, lambda g, n: 1 + (g.random(n) < 0.4) * g.exponential(0.2, n))
    changed = [[r * (1.5 if k >= 10 else 1.0) for r in runs] for k, runs in enumerate(history)]
    a, b = choose_location(history), choose_location(changed)
    assert a.estimator == b.estimator and a.spread == pytest.approx(b.spread)


def test_a_run_slowed_by_a_burst_is_left_out_but_heavy_tails_are_not():
    from regbench.stats.runs import OUTLYING_RUN_SHARE, outlying_runs, run_spread
    from regbench.stats.segments import version_stats

    gen = np.random.default_rng(21)
    group = np.repeat(np.arange(40), 5)
    values = np.log(1 + gen.normal(0, 0.01, group.size))
    values[[7, 123]] += np.log(1.6)  # two runs with another process on the CPU throughout
    out = outlying_runs(values, group)
    assert np.flatnonzero(out).tolist() == [7, 123]
    assert run_spread(values, group) == pytest.approx(0.01, rel=0.2)
    # Versions of two runs cannot tell which is the odd one.
    assert not outlying_runs(values[:2], group[:2]).any()
    # A second mode of runs in a third of them is the noise, not a burst: nothing is left out.
    bimodal = np.log(np.where(gen.random(group.size) < 0.33, 1.4, 1.0) * (1 + gen.normal(0, 0.01, group.size)))
    assert outlying_runs(bimodal, group).mean() == 0 and OUTLYING_RUN_SHARE < 0.33
    # The versions' levels: the burst no longer moves them.
    runs = [[np.full(10, np.exp(values[5 * k + j])) for j in range(5)] for k in range(40)]
    kept = version_stats(runs, log=True, outlying_z=5.0)
    plain = version_stats(runs, log=True)
    assert kept.n[1] == 4 and plain.n[1] == 5 and abs(kept.mean[1]) < 0.01 < plain.mean[1]
    assert kept.run_scale == pytest.approx(run_spread(values, group))


def test_qn_scale_matches_statsmodels_with_the_small_sample_factors():
    from statsmodels.robust.scale import qn_scale as reference

    from regbench.stats.runs import _QN_SMALL, qn_scale

    gen = np.random.default_rng(5)
    for n in (2, 3, 4, 5, 7, 9, 10, 11, 50, 301):
        x = gen.normal(size=n)
        factor = _QN_SMALL.get(n, n / (n + 1.4) if n % 2 else n / (n + 3.8))
        assert qn_scale(x) == pytest.approx(factor * float(reference(x)), rel=1e-3)
    # Consistent for the standard deviation, and two steps among seven differences do not break it.
    assert qn_scale(gen.normal(0, 2.0, 4000)) == pytest.approx(2.0, rel=0.05)
    d = np.array([0.01, -0.02, 0.47, 0.0, 0.015, -0.69, 0.005])
    assert qn_scale(d) < 0.05


def test_a_stray_sample_or_a_lone_run_does_not_make_a_mode_level():
    # Version 0: every run holds both modes.  Version 1: one run has a single stray sample in the
    # slow mode (an outlier short of the fences), another has three slow samples: one run holds
    # the slow mode there, which makes no version level (it was the stray's 9.0 before).
    base = np.array([1.0] * 14 + [5.0] * 6)
    stray = np.array([1.0] * 19 + [9.0])
    three = np.array([1.0] * 17 + [5.0] * 3)
    runs = [[base, base * 1.01, base * 0.99], [stray, three, np.full(20, 1.0)]]
    fast, slow = mode_stats(runs, np.array([-np.inf, 3.0, np.inf]))
    assert list(fast.index) == [0, 1] and list(fast.n) == [3, 3]
    assert list(slow.index) == [0] and list(slow.n) == [3]
    # Two runs holding it make a level, from those two runs only.
    runs[1][2] = three
    _, slow = mode_stats(runs, np.array([-np.inf, 3.0, np.inf]))
    assert list(slow.index) == [0, 1] and list(slow.n) == [3, 2] and slow.mean[1] == 5.0


def test_a_run_of_one_or_two_samples_counts_for_the_mode_its_sample_lies_in():
    # Processes timed once or twice cannot hold two samples in each of two modes: one sample
    # counts, and a version still needs two runs in the mode.
    bounds = np.array([-np.inf, 3.0, np.inf])
    runs = [[np.array([1.0]), np.array([5.0]), np.array([5.2])], [np.array([1.0]), np.array([1.1]), np.array([5.0])],
            [np.array([1.0, 5.0]), np.array([5.1, 1.0]), np.array([1.0, 1.0])]]
    fast, slow = mode_stats(runs, bounds)
    assert list(fast.index) == [1, 2] and list(fast.n) == [2, 3]
    assert fast.mean[0] == pytest.approx(1.05)
    assert list(slow.index) == [0, 2] and list(slow.n) == [2, 2]
    assert slow.mean[0] == pytest.approx(5.1) and slow.mean[1] == pytest.approx(5.05)
    # Four samples a run: a lone sample in a mode is a stray again.
    long = [[np.array([1.0, 1.0, 1.0, 5.0]), np.array([1.0, 1.0, 1.0, 5.0])]]
    _, slow = mode_stats(long, bounds)
    assert list(slow.index) == []


def test_a_run_whose_every_sample_is_fenced_out_has_no_location():
    # Processes timed once: the one whose sample is 1,000x the others' is left out, not kept whole.
    runs = [np.array([1.0]), np.array([1.02]), np.array([0.99]), np.array([1000.0]), np.array([1.01])]
    for estimator in ("mean", "median", "low"):
        values = run_locations(runs, estimator=estimator)
        assert np.isnan(values[3]) and np.allclose(values[[0, 1, 2, 4]], [1.0, 1.02, 0.99, 1.01])
    assert np.isnan(robust_run_means(runs)[3])


def test_a_run_s_own_outlier_does_not_raise_its_fence():
    # Ten iterations a run: an interpolated 90th percentile is x[8] + 0.1 (x[9] - x[8]), so a 120x
    # outlier lifted its run's percentile to 13x; with two of three runs hit, the version's fence
    # rose to 130x and kept the outliers, whose run means then made a +300% "change".
    base = np.linspace(0.99, 1.01, 10)
    runs = [np.r_[base[:9], 120.0], np.r_[base[:9], 180.0], base.copy()]
    lo, hi = fence_bounds(runs, fence=10.0)
    assert np.all(hi <= 10.0 * 1.01 + 1e-12) and np.all(lo >= 0.099 - 1e-12)
    means = robust_run_means(runs)
    assert np.allclose(means, [base[:9].mean(), base[:9].mean(), base.mean()])


def test_a_mode_of_the_history_is_not_fenced_out_of_a_version_that_drew_few_of_its_samples():
    # Hits at ~1 and misses at ~300 (a cache miss, seed 001 s.4.2), a fifth of the history's
    # samples.  Version 1's runs drew almost no misses, so its own 90th percentile is a hit: with
    # the version alone as the reference its one miss would be an outlier and left out, and the
    # version's level would jump to the hits' alone with the luck of the draw.
    rng = np.random.default_rng(3)

    def run(misses):
        return np.r_[np.full(10 - misses, 1.0), np.full(misses, 300.0)] * (1 + rng.normal(0, 0.01, 10))
    runs = [run(2), run(3), run(2), run(1), run(0), run(0), run(2), run(3), run(2)]
    group = np.repeat([0, 1, 2], 3)
    means = robust_run_means(runs, group=group)
    assert means[3] == pytest.approx(runs[3].mean())  # the miss is kept
    # A sample far from its version and from the whole history is still left out.
    runs[4][0] = 1e6
    lo, hi = fence_bounds(runs, group=group)
    assert 300.0 * 1.05 < hi[4] < 1e6
    assert robust_run_means(runs, group=group)[4] == pytest.approx(runs[4][1:].mean())


def test_history_percentiles_are_those_of_the_positive_runs_samples():
    # The definition, one run at a time: the runs with samples, all positive, pooled; the 10th and
    # 90th percentiles as order statistics.  Empty runs, runs with a zero, a negative or a NaN
    # sample, and runs of several lengths are mixed in.
    rng = np.random.default_rng(11)
    runs = [rng.lognormal(0, 0.3, rng.integers(0, 12)) for _ in range(200)]
    for k, bad in [(3, 0.0), (40, -2.0), (77, np.nan), (150, -np.inf)]:
        runs[k] = np.r_[runs[k], bad]
    kept = [r for r in runs if r.size and r.min() > 0]
    assert 150 < len(kept) < len(runs)
    flat = np.sort(np.concatenate(kept))
    # Order statistics by hand: the smallest sample with at least 10% of the samples at or below
    # it, the largest with at least 10% at or above it.
    n = flat.size
    want = (flat[int(np.ceil(0.1 * (n - 1)))], flat[int(np.floor(0.9 * (n - 1)))])
    assert history_percentiles(runs) == want
    assert history_percentiles(kept) == want
    # No usable run: NaN, not an error.
    for none in ([], [np.empty(0)], [np.array([1.0, -1.0]), np.empty(0)], [np.array([np.nan])]):
        assert all(np.isnan(history_percentiles(none)))


def test_pooled_summaries_fence_each_history_by_its_own_percentiles():
    # A history in microseconds and one in seconds, each with a 1,000x outlier: pooled in one
    # call, each is fenced by its own history's percentiles, not by the other's.
    fast = [[h * 1e-6 for h in runs] for runs in history(8, seed=5)]
    slow = history(8, seed=6)
    fast[3][1][0] *= 1e3
    slow[5][0][2] *= 1e3
    for refs in (None, [history_percentiles([r for v in fast for r in v]), (0.5, 2.0)]):
        pooled = version_stats_many([fast, slow], fence_histories=refs)
        for k, (runs, got) in enumerate(zip([fast, slow], pooled, strict=True)):
            want = version_stats(runs, fence_history=None if refs is None else refs[k])
            assert np.array_equal(got.mean, want.mean)
    # The outliers were left out.
    assert version_stats_many([fast, slow])[0].mean[3] == pytest.approx(version_stats(fast).mean[3])
    assert np.all(version_stats_many([fast, slow])[0].mean < 2e-6)


def test_one_run_a_version_and_too_few_versions_for_their_component_is_undecidable_not_certain():
    # Two versions a side, one run each: nothing measured the noise (no runs to pool, too few
    # versions for the version component), so the difference is not known, let alone certain.
    rng = np.random.default_rng(0)
    vs = version_stats([[rng.lognormal(0, 0.05, 10)] for _ in range(2)]
                       + [[1.1 * rng.lognormal(0, 0.05, 10)] for _ in range(2)], log=True)
    res = segment_test(vs, 0, 2, 4)
    assert np.isnan(res.p_value) and np.isnan(res.t)
    # Runs that agree exactly still make a difference certain (the constant count above), and
    # with enough versions the component is estimated.
    assert segment_test(version_stats([[np.ones(3)] * 2] * 2 + [[np.full(3, 2.0)] * 2] * 2), 0, 2, 4).p_value == 0.0
    many = version_stats([[rng.lognormal(0, 0.05, 10)] for _ in range(4)]
                         + [[1.1 * rng.lognormal(0, 0.05, 10)] for _ in range(4)], log=True)
    assert 0.0 < segment_test(many, 0, 4, 8).p_value < 1.0


def test_isolated_versions_are_single_versions_far_from_both_neighbours():
    from scipy.ndimage import median_filter

    from regbench.stats.runs import VersionStats, qn_scale
    from regbench.stats.segments import isolated_versions

    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0.0, 0.01, 30), rng.normal(0.2, 0.01, 30)])  # a step at 30
    x[10] += 0.3    # one version far above both neighbours
    x[40] -= 0.3    # one far below
    x[20:22] += 0.3  # two neighbouring versions: a stretch, not isolated
    x[59] += 0.3    # the newest version alone
    vs = VersionStats(np.arange(60), x, np.full(60, np.nan), np.ones(60, dtype=int), True)
    got = isolated_versions(vs)
    assert list(np.flatnonzero(got)) == [10, 40, 59]
    # The reference: scipy's running median of three inside, the median of the three versions at
    # each end, and the Qn of successive differences as a standard deviation.
    local = median_filter(x, size=3, mode="nearest")
    local[0], local[-1] = np.median(x[:3]), np.median(x[-3:])
    ref = np.abs(x - local) > 5.0 * qn_scale(np.diff(x)) / np.sqrt(2)
    assert np.array_equal(got, ref)
    # More than 5% of the versions that far: the tails are the noise itself, nothing is left out.
    x[[5, 15, 25, 45]] += 0.3
    assert isolated_versions(VersionStats(np.arange(60), x, np.full(60, np.nan), np.ones(60, dtype=int), True)) is None
    # Too short a history to judge.
    assert isolated_versions(VersionStats(np.arange(4), x[:4], np.full(4, np.nan), np.ones(4, dtype=int), True)) is None


def test_compare_segments_many_equals_compare_segments_up_to_rounding():
    # Random segments of every kind compare_segments distinguishes: with and without a saved
    # version component, with runs a version (within variance) and with one run a version (none),
    # ANOVA components of fewer than 3 degrees of freedom (taken as 0, or undecidable), noiseless
    # segments (certain), and levels that make the ANOVA's between-versions sum round below 0.
    rng = np.random.default_rng(11)
    pairs, vvs = [], []
    for _ in range(1000):
        segs = []
        for _side in range(2):
            k = int(rng.integers(1, 8))
            m = rng.normal(10, rng.choice([0.0, 0.01, 1.0]), k)
            n = rng.choice([1, 1, 3, 5], k)
            var = np.where(n > 1, rng.choice([0.0, 0.02, 0.5]), 0.0) * np.ones(k)
            multi = n > 1
            segs.append(SegmentStats(k, float(m.sum()), float((m * m).sum()), float(((n[multi] - 1) * var[multi]).sum()),
                                     float((n[multi] - 1).sum()), float((1.0 / n).sum())))
        pairs.append(tuple(segs))
        vvs.append(None if rng.random() < 0.5 else (float(rng.choice([0.0, 0.01, 0.3])), float(rng.integers(0, 40))))
    many = compare_segments_many(pairs, vvs)
    one = [compare_segments(a, b, version_var=vv) for (a, b), vv in zip(pairs, vvs, strict=True)]
    fields = ("mean_left", "mean_right", "se_left", "se_right", "t", "df", "p_value")
    values = lambda tests: np.array([[getattr(t, f) for f in fields] for t in tests])
    # Equal up to rounding (the squares: numpy multiplies, Python's ** calls pow), with NaN, 0
    # and infinity in the same places
    np.testing.assert_allclose(values(many), values(one), rtol=1e-9, atol=0)
    assert (values(many) == 0).tolist() == (values(one) == 0).tolist()
    undecidable = sum(np.isnan(t.p_value) and not np.isnan(t.mean_left) for t in one)
    certain = sum(t.p_value == 0 for t in one)
    assert undecidable >= 5 and certain >= 5, (undecidable, certain)  # both special cases were exercised
    assert compare_segments_many([], []) == []
    with pytest.raises(ValueError, match="same length"):
        compare_segments_many(pairs[:2], vvs[:1])


def test_segment_stats_of_one_version_equals_the_sums_over_a_slice():
    # The one-version path (every new version of an incremental pass) must give the sums the
    # general path gives, bit for bit: runs of one (no within variance), NaN levels, int counts.
    rng = np.random.default_rng(5)
    n = rng.choice([1, 2, 3, 10], 200)
    vs = VersionStats(np.arange(200), rng.lognormal(0, 1, 200), np.where(n > 1, rng.random(200), np.nan), n)
    vs.mean[::17] = np.nan
    for j in range(200):
        got = SegmentStats.of(vs, j, j + 1)
        m, nn, v = vs.mean[j:j + 1], vs.n[j:j + 1], vs.var[j:j + 1]
        multi = nn > 1
        want = (1, float(m.sum()), float((m * m).sum()), float(((nn[multi] - 1) * v[multi]).sum()),
                float((nn[multi] - 1).sum()), float((1.0 / nn).sum()))
        have = (got.k, got.sum_m, got.sum_m2, got.ss_within, got.df_within, got.sum_inv_n)
        assert np.array(have, dtype=float).view(np.int64).tolist() == np.array(want, dtype=float).view(np.int64).tolist()


def test_choosing_a_location_for_an_all_zero_count_does_not_warn():
    from regbench.stats.runs import choose_location

    # Go's 0 allocs/op in every run of every version: mean 0, so relative deviations are 0/0.
    # pytest turns warnings into errors (pyproject.toml): 0/0 relative deviations used to warn.
    zeros = [[np.zeros(10) for _ in range(3)] for _ in range(4)]
    choice = choose_location(zeros)
    assert choice.estimator == "mean" and choice.reason.endswith("no run-to-run spread to compare")
    assert all(np.isnan(v) for v in choice.spread.values())
