"""The edivisive detector: steps, a creeping degradation that consecutive comparisons miss,
skipped versions, intervals (coverage by simulation), reproducibility and validation."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from regbench.detect import JSON_FIELDS, get_detector
from regbench.evaluate.synthetic import make_series as synthetic_series

# A version effect is always drawn (0 unless a test asks for more), so a seed gives the same runs whatever
# version_sd is.
make_series = partial(synthetic_series, version_sd=0.0)


def test_finds_steps_at_the_right_versions_with_magnitude_interval_and_p_value():
    levels = [1.0] * 20 + [1.10] * 20 + [0.95] * 20
    changes = get_detector("edivisive").detect(make_series(levels, rng=1))
    # (At sig_level 0.05 about one quiet segment in 20 gets a spurious division: seed 0 has one.)
    assert [(c.version, c.previous, c.kind) for c in changes] == [
        ("v20", "v19", "regression"), ("v40", "v39", "improvement")]
    assert changes[0].change == pytest.approx(0.10, abs=0.01)
    assert changes[1].change == pytest.approx(0.95 / 1.10 - 1, abs=0.01)
    for c in changes:
        assert c.ci_low < c.change < c.ci_high
        assert c.p_value == pytest.approx(1 / 200)  # the smallest a 199-shuffle test can give
        assert c.method == "edivisive"
    assert list(changes[0].to_json()) == list(JSON_FIELDS)


def test_quiet_series_gives_no_false_alarm():
    for seed in range(5):
        s = make_series([1.0] * 60, version_sd=0.01, rng=seed)
        assert get_detector("edivisive").detect(s) == [], seed


def test_creeping_degradation_is_found_where_consecutive_versions_show_nothing():
    # seed 001 s.2.3: ten consecutive +0.5% steps between 30 quiet versions on each side; the
    # central value of a version (5 runs with 3.4% run-to-run noise) varies by 1.5%, three times
    # a step, so the 99% intervals of consecutive versions always overlap.
    levels = [1.0] * 30 + [1.005 ** k for k in range(1, 11)] + [1.005 ** 10] * 30
    s = make_series(levels, run_sd=0.034, rng=4)
    assert get_detector("ci-overlap").detect(s) == []
    changes = get_detector("edivisive").detect(s)
    assert changes, "the creep was not found"
    inside = [c for c in changes if 28 <= s.index(c.version) <= 42]
    assert inside and all(c.kind == "regression" for c in inside)
    assert all(c.change > 0.01 for c in inside)  # the creep's total (5%) in one or two changes
    flipped = get_detector("edivisive").detect(make_series(levels, run_sd=0.034, rng=4, direction="higher"))
    assert [c.kind for c in flipped if 28 <= s.index(c.version) <= 42] == ["improvement"] * len(inside)


def test_versions_without_runs_are_skipped_and_bridged():
    levels = [1.0] * 15 + [1.2] * 15
    changes = get_detector("edivisive").detect(make_series(levels, runs_at={15: 0, 16: 0}, failed_at={15: 5, 16: 5}))
    assert [(c.version, c.previous) for c in changes] == [("v17", "v14")]


def test_min_change_drops_significant_but_small_changes():
    levels = [1.0] * 20 + [1.02] * 20
    s = make_series(levels, run_sd=0.001, iteration_sd=0.004, rng=1)
    assert [c.version for c in get_detector("edivisive").detect(s)] == ["v20"]
    assert get_detector("edivisive", min_change=0.03).detect(s) == []


def test_short_series_has_nothing_to_divide():
    assert get_detector("edivisive").detect(make_series([1.0] * 4 + [2.0] * 5)) == []
    three = get_detector("edivisive", min_size=3).detect(make_series([1.0] * 4 + [2.0] * 5))
    assert [c.version for c in three] == ["v4"]


def test_interval_covers_the_true_change_at_its_level():
    # 200 series, one 10% step after 12 versions, 2% version-to-version noise: the 90% interval
    # should miss the true change about 10% of the time (sd of the miss rate 2.1%).
    cover = n = 0
    for seed in range(200):
        s = make_series([1.0] * 12 + [1.1] * 12, version_sd=0.02, n_runs=3, n_iterations=10, rng=seed)
        for c in get_detector("edivisive", confidence_level=0.90, n_permutations=49).detect(s):
            if c.version == "v12":
                n += 1
                cover += c.ci_low <= 0.1 <= c.ci_high
    assert n >= 185  # the others put the change one version off
    assert 0.84 <= cover / n <= 0.96


def test_reproducible_per_series_and_seeded_by_series_identity():
    levels = [1.0] * 20 + [1.003 ** k for k in range(1, 16)] + [1.003 ** 15] * 10
    a = make_series(levels, version_sd=0.01, rng=9)
    b = make_series(levels, version_sd=0.01, rng=9, benchmark="other")
    det = get_detector("edivisive")
    first = det.detect(a)
    assert first == det.detect(a) == get_detector("edivisive").detect(a)
    assert det._generator(a).random() != det._generator(b).random()  # series do not share shuffles
    gen_changes = get_detector("edivisive", rng=np.random.default_rng(1)).detect(a)
    assert [c.version for c in gen_changes] == [c.version for c in first]


def test_zero_mean_segment_warns_and_is_skipped():
    levels = [1.0] * 10 + [5.0] * 10
    s = make_series(levels, run_sd=0, iteration_sd=0)
    for runs in s.runs[:10]:  # mean exactly zero before the change
        for r in runs:
            r[:] = np.where(np.arange(r.size) % 2, 1.0, -1.0)
    with pytest.warns(RuntimeWarning, match="relative change is undefined"):
        assert get_detector("edivisive").detect(s) == []


@pytest.mark.parametrize("opts, match", [
    (dict(confidence_level=1), "`confidence_level`"),
    (dict(min_change=-1), "`min_change`"),
    (dict(sig_level=0), "`sig_level`"),
    (dict(n_permutations=0), "`n_permutations`"),
    (dict(min_size=1), "`min_size`"),
    (dict(span="all"), "`span`"),
    (dict(alpha=3), "`alpha`"),
])
def test_detector_validation(opts, match):
    with pytest.raises(ValueError, match=match):
        get_detector("edivisive", **opts)


def test_a_lone_change_survives_the_default_false_discovery_rate_control():
    # One permutation test per split tried is the family, not one per version pair: a 20% step in a
    # long history must survive Benjamini-Hochberg at 5% with 199 permutations (p >= 1/200).
    from regbench.detect.driver import detect_changes

    res = detect_changes([make_series([1.0] * 30 + [1.2] * 30)], method="edivisive")
    assert [c.version for c in res.changes] == ["v30"]
    assert res.n_tests == 2 and res.fdr_applied
