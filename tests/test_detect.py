"""The ci-overlap detector (seed 000 s.5) on series with known changes, and the registry."""

from __future__ import annotations

from functools import partial

import pytest

from regbench.detect import JSON_FIELDS, Change, Detector, get_detector, register
from regbench.errors import ConfigError
from regbench.evaluate.synthetic import make_series as synthetic_series
from regbench.model import Series

# The series of this file have more runs and iterations than the helper's defaults.
make_series = partial(synthetic_series, n_runs=8, n_iterations=30)


def test_finds_a_regression_and_an_improvement_at_the_right_versions():
    levels = [1.0] * 5 + [1.10] * 5 + [0.95] * 5
    changes = get_detector("ci-overlap").detect(make_series(levels))
    assert [(c.version, c.previous, c.kind) for c in changes] == [
        ("v5", "v4", "regression"), ("v10", "v9", "improvement")]
    assert changes[0].change == pytest.approx(0.10, abs=0.01)
    assert changes[0].ci_low < changes[0].change < changes[0].ci_high
    assert changes[1].change == pytest.approx(0.95 / 1.10 - 1, abs=0.01)


def test_quiet_series_gives_no_false_alarm():
    s = make_series([1.0] * 60, rng=3)
    assert get_detector("ci-overlap").detect(s) == []


def test_direction_higher_is_better_flips_the_kind():
    changes = get_detector("ci-overlap").detect(make_series([1.0, 1.0, 1.2], direction="higher"))
    assert [c.kind for c in changes] == ["improvement"]


def test_min_change_drops_small_significant_changes():
    s = make_series([1.0, 1.0, 1.02, 1.02], run_sd=0.0005, iteration_sd=0.002, n_runs=10)
    assert [c.version for c in get_detector("ci-overlap").detect(s)] == ["v2"]
    assert get_detector("ci-overlap", min_change=0.03).detect(s) == []


def test_version_with_one_run_is_skipped_and_comparison_bridges_it():
    s = make_series([1.0, 1.0, 1.3, 1.3], runs_at={2: 1})
    changes = get_detector("ci-overlap").detect(s)
    assert [(c.version, c.previous) for c in changes] == [("v3", "v1")]


def test_json_has_exactly_the_design_fields():
    c = get_detector("ci-overlap").detect(make_series([1.0, 1.0, 1.5]))[0]
    assert list(c.to_json()) == list(JSON_FIELDS) == [
        "benchmark", "config", "machine", "version", "previous", "change", "ci_low", "ci_high", "kind", "method"]
    assert c.to_json()["method"] == "ci-overlap"


def test_registry_rejects_unknown_and_duplicate_names():
    with pytest.raises(ConfigError, match="unknown detection method 'nope'"):
        get_detector("nope")

    class Dup(Detector):
        name = "ci-overlap"

        def detect(self, series: Series) -> list[Change]:
            return []

    with pytest.raises(ValueError, match="taken"):
        register(Dup)
    assert get_detector("ci-overlap").__class__ is not Dup


def test_robust_interval_is_not_moved_by_one_outlying_iteration():
    # seed 000 s.4.2: one iteration 50x slower in one run of a quiet version moves that run's mean
    # by 2.5x; the plain interval of that version then straddles both neighbours' (or moves away),
    # the robust interval (medians of half-size resampled means) ignores it.
    import numpy as np

    s = make_series([1.0] * 6, run_sd=0.002, iteration_sd=0.01, rng=4)
    s.runs[3][0] = s.runs[3][0].copy()
    s.runs[3][0][7] = 50.0
    plain = get_detector("ci-overlap").summaries(s)
    robust = get_detector("ci-overlap", interval="robust").summaries(s)
    assert plain[3].mean > 1.1 and plain[3].half_width > 10 * plain[2].half_width
    assert robust[3].mean == pytest.approx(1.0, abs=0.01)
    assert robust[3].half_width < 3 * robust[2].half_width
    # A real step is found by both, at its version, with nearly the same magnitude.
    step = make_series([1.0] * 4 + [1.1] * 4, rng=5)
    (p,) = get_detector("ci-overlap").detect(step)
    (r,) = get_detector("ci-overlap", interval="robust").detect(step)
    assert (p.version, r.version) == ("v4", "v4") and r.change == pytest.approx(p.change, abs=0.005)
    assert r.method == "ci-overlap" and list(r.to_json()) == list(JSON_FIELDS)
    # Reproducible: the resampling has a seed.
    again = get_detector("ci-overlap", interval="robust").summaries(s)
    assert np.array_equal([x.mean for x in again if x], [x.mean for x in robust if x])
    assert get_detector("ci-overlap", interval="robust", rng=1).summaries(s)[3].mean != robust[3].mean


@pytest.mark.parametrize("opts, match", [
    (dict(confidence_level=0), "`confidence_level`"), (dict(min_change=-0.1), "`min_change`"),
    (dict(interval="median"), "`interval` must be one of 'plain', 'robust'"),
    (dict(rng=-1), "`rng` must be a non-negative integer"),
    (dict(rng=1.5), "`rng` must be a non-negative integer")])
def test_detector_validation(opts, match):
    with pytest.raises(ValueError, match=match):
        get_detector("ci-overlap", **opts)


def test_bootstrap_ci_finds_relevant_steps_and_ignores_small_ones():
    # seed 004 s.4.5: non-overlapping 99% bootstrap intervals and at least 3%.
    levels = [1.0] * 4 + [1.10] * 4 + [1.11] * 4 + [0.95] * 4
    changes = get_detector("bootstrap-ci").detect(make_series(levels, n_runs=10, run_sd=0.003, iteration_sd=0.01))
    assert [(c.version, c.previous, c.kind) for c in changes] == [
        ("v4", "v3", "regression"), ("v12", "v11", "improvement")]
    assert changes[0].change == pytest.approx(0.10, abs=0.01)
    assert changes[0].ci_low < changes[0].change < changes[0].ci_high
    assert all(c.method == "bootstrap-ci" for c in changes)


def test_bootstrap_ci_quiet_series_and_reproducibility():
    s = make_series([1.0] * 40, n_runs=10, rng=5)
    assert get_detector("bootstrap-ci").detect(s) == []
    step = make_series([1.0, 1.0, 1.2, 1.2], n_runs=10)
    a = get_detector("bootstrap-ci").detect(step)
    b = get_detector("bootstrap-ci").detect(step)
    assert a == b and len(a) == 1
