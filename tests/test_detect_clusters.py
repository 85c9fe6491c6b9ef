"""The clusters detector (seed 001 s.4.1-4.2): a mode that moves while the mean barely does, a
changed share of a mode, unimodal data, and false alarms on quiet multimodal series."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect import get_detector
from regbench.detect.clusters import ClustersDetector
from regbench.detect.talos_ttest import version_means
from regbench.model import Series, VersionInfo


def cache_series(fast, slow, *, share=0.7, runs=8, iters=50, sd=0.02, run_sd=0.005, seed=0, one_run_at=(),
                 exact_share=False):
    """A benchmark whose calls hit a cache (``fast``, a share ``share`` of the calls) or miss it
    (``slow``), like the damaged omniORB of seed 001 figs. 7-9.  ``fast``, ``slow`` and ``share``
    are per-version sequences or constants; each run has its own random factor (seed 000 s.2).
    With ``exact_share`` every run hits the cache exactly ``share * iters`` times (a fixed
    workload), else each call hits it with probability ``share``."""
    n = max(np.size(v) for v in (fast, slow, share))
    fast, slow, share = (np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in (fast, slow, share))
    rng = np.random.default_rng(seed)
    s = Series("orb", "default", "m1", "us", "lower")
    for k in range(n):
        s.versions.append(VersionInfo(name=f"v{k}", id=k + 1))
        version_runs = []
        for _ in range(1 if k in one_run_at else runs):
            hit = (rng.permutation(iters) < round(share[k] * iters)) if exact_share else (rng.random(iters) < share[k])
            noise = 1 + rng.normal(0, sd, iters)
            version_runs.append((1 + rng.normal(0, run_sd)) * np.where(hit, fast[k], slow[k]) * noise)
        s.runs.append(version_runs)
        s.failed.append(0)
        s.warmup.append(0)
    return s


def test_one_mode_moving_10_percent_is_found_though_the_mean_moves_under_3_percent():
    # 70% hits at 100 us, 30% misses at 1000 us: the hits' 10% is 1.9% of the mean.
    s = cache_series([100.0] * 4 + [110.0] * 4, 1000.0, exact_share=True)
    _, means = version_means(s)
    assert abs(means[4:].mean() / means[:4].mean() - 1) < 0.03  # the mean hides it
    # Intervals of the mean see at most the mean's own small move, never the 10% of the mode.
    assert all(abs(c.change) < 0.03 for c in get_detector("ci-overlap").detect(s))
    changes = get_detector("clusters").detect(s)
    assert [(c.version, c.previous, c.kind, c.method) for c in changes] == [("v4", "v3", "regression", "clusters")]
    c = changes[0]
    assert c.ci_low < 0.10 < c.ci_high and c.change == pytest.approx(0.10, abs=0.01)
    assert c.detail.startswith("mode 1 of 2 (centre 100") and c.detail.endswith("moved")
    assert 0 < c.p_value < 1e-6


def test_p_value_is_holm_adjusted_over_the_family():
    from regbench.stats.clusters import compare_clusters

    s = cache_series([100.0, 110.0], 1000.0, seed=1)
    (c,) = get_detector("clusters").detect(s)
    cmp = compare_clusters(s.runs[0], s.runs[1], k_max=5, rng=[0, 0, 1])
    raw = min(sh.p_value for sh in cmp.shifts)
    # The family is two locations, one weight and the mean: the smallest p-value times 4.
    assert c.p_value == pytest.approx(min(1.0, 4 * raw), rel=1e-9)


def test_a_changed_share_of_a_mode_is_a_change_of_the_mean():
    s = cache_series(100.0, 1000.0, share=[0.7] * 3 + [0.5] * 3, seed=2)
    changes = get_detector("clusters").detect(s)
    assert [(c.version, c.kind) for c in changes] == [("v3", "regression")]
    c = changes[0]
    _, means = version_means(s)
    assert c.change == pytest.approx(means[3] / means[2] - 1, rel=1e-9)
    assert c.change > 0.3 and c.ci_low < c.change < c.ci_high
    # The weights sum to one, so only the misses' share is tested: 30% -> 50% of the samples.
    assert c.detail.startswith("mode 2 of 2 (centre 99") and "share of samples 2" in c.detail


def test_unimodal_data_is_compared_by_its_run_means():
    s = cache_series(100.0, 100.0, share=1.0, seed=3)
    s2 = cache_series([100.0] * 3 + [95.0] * 3, 100.0, share=1.0, seed=3)
    assert get_detector("clusters").detect(s) == []
    changes = get_detector("clusters").detect(s2)
    assert [(c.version, c.kind) for c in changes] == [("v3", "improvement")]
    assert changes[0].detail == "unimodal: mean of run means moved"
    assert changes[0].ci_low < -0.05 < changes[0].ci_high


@pytest.mark.parametrize("scenario", ["separated", "overlapping", "unimodal", "run effects"])
def test_quiet_series_false_alarm_rate(scenario):
    # 3 seeds x 5 pairs of consecutive versions; at 99% with Holm over the family, about 0.15
    # false changes are expected per scenario (measured: 1 in 150 pairs for each).
    fast, slow, sd, run_sd = {"separated": (100.0, 1000.0, 0.02, 0.005), "overlapping": (100.0, 112.0, 0.03, 0.005),
                              "unimodal": (100.0, 100.0, 0.02, 0.005),
                              "run effects": (100.0, 1000.0, 0.02, 0.03)}[scenario]
    # No relevance floor: the tests themselves must hold their level.
    found = [get_detector("clusters", min_change=0).detect(_quiet(fast, slow, sd, run_sd, seed)) for seed in range(3)]
    assert sum(len(f) for f in found) <= 1


def _quiet(fast, slow, sd, run_sd, seed):
    return cache_series([fast] * 6, slow, sd=sd, run_sd=run_sd, seed=seed)


def test_testing_every_cluster_of_overlapping_modes_would_raise_false_alarms():
    # Each version is clustered on its own, so the cut between modes 4 sd apart moves from version
    # to version and, with runs as replicates, that alone looks significant.  Admitting every
    # cluster (separation close to 0) reported 44 false changes in 150 pairs; the default 1.
    series = [_quiet(100.0, 112.0, 0.03, 0.005, seed) for seed in range(3)]
    loose = get_detector("clusters", separation=1e-9, min_change=0)
    assert sum(len(loose.detect(s)) for s in series) >= 2


def offset_runs(seed, *, n_versions=6, runs=10, iters=20, run_sd=0.006, sd=0.0002):
    """Unimodal runs, each tight around its own random offset (impact factor about 70)."""
    rng = np.random.default_rng(seed)
    s = Series("b", "default", "m1", "s", "lower")
    for k in range(n_versions):
        s.versions.append(VersionInfo(f"v{k}", id=k + 1))
        s.runs.append([(1 + rng.normal(0, run_sd)) * (1 + rng.normal(0, sd, iters)) for _ in range(runs)])
        s.failed.append(0)
        s.warmup.append(0)
    return s


def test_clusters_made_of_whole_runs_are_not_compared_as_modes(monkeypatch):
    import regbench.detect.clusters as module
    from regbench.stats.clusters import find_clusters

    # Tight runs at random offsets: the clustering groups whole runs, which are not modes.
    runs = offset_runs(2).runs[0]
    c = find_clusters(np.concatenate(runs), k_max=5, rng=0)
    assert c.n_clusters > 1 and not module._mixed(c, runs).any()
    # Calls that hit or miss a cache inside every run are modes.
    hits = cache_series(100.0, 1000.0).runs[0]
    c = find_clusters(np.concatenate(hits), k_max=5, rng=0)
    assert c.n_clusters == 2 and module._mixed(c, hits).all()

    series = [offset_runs(seed) for seed in range(4)]
    found = [c for s in series for c in get_detector("clusters", min_change=0).detect(s)]
    assert not any(c.detail.startswith("mode") for c in found)
    monkeypatch.setattr(module, "_mixed", lambda c, runs: np.ones(c.n_clusters, dtype=bool))
    found = [c for s in series for c in get_detector("clusters", min_change=0).detect(s)]
    assert any(c.detail.startswith("mode 3 of 5") for c in found)


def test_versions_with_one_run_are_skipped_and_previous_bridges_them():
    s = cache_series([100.0] * 3 + [110.0] * 3, 1000.0, one_run_at={2, 3}, seed=4)
    d = get_detector("clusters")
    changes, n_tests = d.detect_counted(s)
    assert [(c.version, c.previous) for c in changes] == [("v4", "v1")]
    assert n_tests == 3  # v0-v1, v1-v4, v4-v5


def test_min_change_applies_to_the_moved_mode_and_defaults_to_3_percent():
    s = cache_series([100.0, 110.0], 1000.0, seed=5)
    assert len(get_detector("clusters").detect(s)) == 1
    assert get_detector("clusters", min_change=0.2).detect(s) == []
    small = cache_series([100.0, 102.0], 1000.0, seed=5, run_sd=0.001)  # the hits 2% slower
    (c,) = get_detector("clusters", min_change=0).detect(small)
    assert c.change == pytest.approx(0.02, abs=0.005) and c.detail.startswith("mode 1 of 2")
    assert get_detector("clusters").detect(small) == []


def test_large_versions_are_subsampled_reproducibly():
    s = cache_series([100.0, 110.0], 1000.0, runs=10, iters=400, seed=6)
    d = get_detector("clusters", max_samples=500)
    a = d._subsample(s.runs[0], [0, 0, 0])
    assert sum(r.size for r in a) == 500 and [r.size for r in a] == [50] * 10
    first, second = d.detect(s), d.detect(s)
    assert first == second and [c.version for c in first] == ["v1"]


def test_short_or_degenerate_histories_give_nothing_without_warnings():
    d = get_detector("clusters")
    assert d.detect_counted(cache_series([100.0], 1000.0)) == ([], 0)
    assert d.detect_counted(Series("b", "c", "m", "s", "lower")) == ([], 0)
    const = Series("b", "c", "m", "s", "lower", [VersionInfo("a"), VersionInfo("b")],
                   [[np.full(10, 5.0)] * 3, [np.full(10, 5.0)] * 3])
    assert d.detect(const) == []


def test_registry_entry_and_p_value_flag():
    d = get_detector("clusters", min_change=0.01)
    assert isinstance(d, ClustersDetector) and d.p_values and d.k_max == 5 and d.separation == 3.0
    assert ClustersDetector().min_change == 0.03


@pytest.mark.parametrize("opts, match", [
    (dict(k_max=0), "`k_max` must be an integer of at least 1"),
    (dict(max_samples=10), "`max_samples` must be an integer of at least 20"),
    (dict(min_runs=1), "`min_runs` must be an integer of at least 2"),
    (dict(separation=0), "`separation` must be positive"),
    (dict(rng=-1), "`rng` must be a non-negative integer seed"),
    (dict(confidence_level=2), "`confidence_level` must be in"),
])
def test_validation(opts, match):
    with pytest.raises(ValueError, match=match):
        get_detector("clusters", **opts)


def test_holm_agrees_with_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from regbench.detect.clusters import holm

    rng = np.random.default_rng(0)
    for m in (1, 2, 4, 9):
        p = rng.uniform(0, 0.05, m) ** 2
        p[::3] = p[0]  # ties
        assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], rel=1e-12)
