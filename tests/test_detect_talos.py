"""The talos-ttest detector (seed 003 s.5.1): windows, the exact null of Welch's t, one report per
change, and the false-alarm rate of the paper's threshold by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect import get_detector
from regbench.detect.talos_ttest import TalosTTest, version_means, welch_null_quantile, welch_null_sf
from regbench.evaluate.synthetic import make_series
from regbench.model import Series, VersionInfo


def values_series(x, direction="lower"):
    """One run of one sample per version: the version's value is exactly ``x[k]``."""
    s = Series("bench", "default", "m1", "s", direction)
    for k, v in enumerate(x):
        s.versions.append(VersionInfo(name=f"v{k}", id=k + 1))
        s.runs.append([np.array([v])])
        s.failed.append(0)
        s.warmup.append(0)
    return s


def test_a_step_is_found_once_at_its_version_with_an_interval_holding_it():
    changes = get_detector("talos-ttest").detect(make_series([1.0] * 40 + [1.05] * 40))
    assert [(c.version, c.previous, c.kind, c.method) for c in changes] == [("v40", "v39", "regression", "talos-ttest")]
    c = changes[0]
    assert c.ci_low < 0.05 < c.ci_high
    assert c.change == pytest.approx(0.05, abs=0.005)
    assert 0 < c.p_value < 1e-10
    assert (c.benchmark, c.config, c.machine) == ("bench", "default", "m1")


def test_direction_higher_makes_a_rise_an_improvement_and_a_drop_is_negative():
    up = get_detector("talos-ttest").detect(make_series([1.0] * 40 + [1.05] * 40, direction="higher"))
    assert [(c.version, c.kind) for c in up] == [("v40", "improvement")]
    down = get_detector("talos-ttest").detect(make_series([1.0] * 40 + [0.95] * 40))
    assert [(c.version, c.kind) for c in down] == [("v40", "improvement")] and down[0].change < 0


def test_version_means_are_means_of_run_means_and_skip_versions_without_runs():
    s = Series("b", "c", "m", "s", "lower")
    s.versions = [VersionInfo("a"), VersionInfo("b"), VersionInfo("c")]
    s.runs = [[np.array([1.0, 3.0]), np.array([10.0])], [], [np.array([4.0]), np.array([], dtype=float)]]
    index, x = version_means(s)
    assert index.tolist() == [0, 2]
    assert x.tolist() == [(2.0 + 10.0) / 2, 4.0]  # runs weigh equally, whatever their length


def test_versions_without_runs_are_skipped_and_previous_bridges_them():
    s = make_series([1.0] * 40 + [1.05] * 40, runs_at={39: 0, 40: 0})
    changes = get_detector("talos-ttest").detect(s)
    assert [(c.version, c.previous) for c in changes] == [("v41", "v38")]


def test_welch_null_sf_agrees_with_monte_carlo_and_welch_satterthwaite_is_liberal():
    # Welch's T between iid normal windows of 30 and 5, 200,000 times.
    rng = np.random.default_rng(1)
    back, fore = rng.normal(size=(200_000, 30)), rng.normal(size=(200_000, 5))
    vb, vf = back.var(axis=1, ddof=1) / 30, fore.var(axis=1, ddof=1) / 5
    t = np.abs((fore.mean(axis=1) - back.mean(axis=1)) / np.sqrt(vb + vf))
    for q in (1.0, 3.0, 5.0):
        mc = np.mean(t >= q)
        assert welch_null_sf(q, 30, 5) == pytest.approx(mc, abs=4 * np.sqrt(mc * (1 - mc) / t.size))
    # The usual p-value (Welch-Satterthwaite degrees of freedom) rejects too often at 0.001.
    from scipy.special import stdtr

    df = (vb + vf) ** 2 / (vb**2 / 29 + vf**2 / 4)
    assert np.mean(2 * stdtr(df, -t) < 0.001) > 0.003
    assert np.mean(welch_null_sf(t, 30, 5) < 0.001) == pytest.approx(0.001, abs=0.0004)


def test_the_threshold_of_9_is_a_per_version_level_of_5e_6_and_quantile_inverts_sf():
    assert TalosTTest().threshold == 9.0  # seed 003 s.5.1
    assert welch_null_sf(9.0, 30, 5) == pytest.approx(5.0e-6, rel=0.01)
    q = welch_null_quantile(0.99, 30, 5)
    assert welch_null_sf(q, 30, 5) == pytest.approx(0.01, rel=1e-6)
    assert welch_null_sf(np.inf, 30, 5) == 0.0 and welch_null_sf(0.0, 30, 5) == pytest.approx(1.0)


def test_per_version_p_values_are_calibrated_on_quiet_series():
    d = get_detector("talos-ttest")
    p = np.concatenate([d.statistics(make_series([1.0] * 100, rng=seed)).p_value for seed in range(150)])
    assert p.size == 150 * 86  # versions 10 .. 95: a back window of at least 10, a full fore window
    # Neighbouring versions share windows, so the tolerance is wider than binomial; three seed
    # ranges gave 0.098-0.102 and 0.0100-0.0111.  Welch-Satterthwaite p-values would give about
    # 0.107 and 0.0167.
    assert np.mean(p < 0.1) == pytest.approx(0.1, abs=0.01)
    assert np.mean(p < 0.01) == pytest.approx(0.01, abs=0.003)


def test_quiet_series_false_alarm_rate_is_that_of_the_paper_threshold():
    # 200 quiet series of 100 versions, 17,200 tested versions: at |t| > 9 the expected number of
    # firing versions is below 0.1.  A threshold of 4 (p about 0.005 per version) fires hundreds
    # of times, so the bound would catch a wrong threshold.
    series = [make_series([1.0] * 100, rng=seed) for seed in range(200)]
    assert sum(len(get_detector("talos-ttest").detect(s)) for s in series) <= 1
    assert sum(len(get_detector("talos-ttest", threshold=4.0).detect(s)) for s in series) > 20


def test_a_step_fires_at_several_versions_but_is_reported_once():
    rng = np.random.default_rng(7)
    n_reports, at_step, several = [], 0, 0
    for _ in range(100):
        x = 1 + rng.normal(0, 0.01, 120)
        x[60:] += 0.07  # 7 sd
        s = values_series(x)
        st = get_detector("talos-ttest").statistics(s)
        changes = get_detector("talos-ttest").detect(s)
        n_reports.append(len(changes))
        at_step += [c.version for c in changes] == ["v60"]
        several += np.count_nonzero(np.abs(st.t) > 9) >= 2
    assert several >= 50  # merging matters: most steps fire at two or more versions
    assert n_reports.count(1) >= 95 and sum(n_reports) <= 103
    assert at_step >= 90  # 97% measured; the largest |t| in the run gives 81%


def test_max_t_rule_reports_the_run_once_at_its_largest_statistic():
    x = np.r_[np.full(40, 1.0), np.full(40, 1.2)] + np.random.default_rng(3).normal(0, 0.01, 80)
    d = get_detector("talos-ttest", locate="max-t")
    st = d.statistics(values_series(x))
    changes = d.detect(values_series(x))
    fired = np.flatnonzero(np.abs(st.t) > 9)
    assert len(changes) == 1 and fired.size >= 1
    i = fired[np.argmax(np.abs(st.t[fired]))]
    assert changes[0].version == f"v{st.index[i]}"
    assert changes[0].p_value == pytest.approx(st.p_value[i])


def test_two_steps_fifteen_versions_apart_are_both_found():
    x = 1 + np.random.default_rng(4).normal(0, 0.01, 120)
    x[50:] += 0.15
    x[65:] -= 0.15
    changes = get_detector("talos-ttest").detect(values_series(x))
    assert [(c.version, c.kind) for c in changes] == [("v50", "regression"), ("v65", "improvement")]
    # Waiting for a full back window of 30 after a change misses the second.
    assert [c.version for c in get_detector("talos-ttest", min_back_window=30).detect(values_series(x))] == ["v50"]


def test_min_change_drops_significant_but_small_changes():
    s = make_series([1.0] * 40 + [1.02] * 40, iteration_sd=0.005, run_sd=0.001)
    assert [c.version for c in get_detector("talos-ttest").detect(s)] == ["v40"]
    assert get_detector("talos-ttest", min_change=0.03).detect(s) == []


def test_short_or_empty_histories_give_nothing_and_detect_counted_counts_tested_versions():
    d = get_detector("talos-ttest")
    assert d.detect_counted(make_series([1.0] * 14)) == ([], 0)
    assert d.detect_counted(Series("b", "c", "m", "s", "lower")) == ([], 0)
    assert d.detect_counted(make_series([1.0] * 15))[1] == 1  # version 10: back 10, fore 5
    assert d.detect_counted(make_series([1.0] * 100))[1] == 86
    assert d.statistics(make_series([1.0] * 5)).t.size == 0


def test_constant_windows_give_an_exact_answer_without_warnings():
    s = values_series([2.0] * 40 + [3.0] * 40)
    changes = get_detector("talos-ttest").detect(s)
    assert [(c.version, c.change, c.ci_low, c.ci_high, c.p_value) for c in changes] == [("v40", 0.5, 0.5, 0.5, 0.0)]
    assert get_detector("talos-ttest").detect(values_series([2.0] * 80)) == []


def test_registry_entry_and_p_value_flag():
    d = get_detector("talos-ttest", min_change=0.01, confidence_level=0.95)
    assert isinstance(d, TalosTTest) and d.p_values
    assert (d.back_window, d.fore_window, d.min_change, d.confidence_level) == (30, 5, 0.01, 0.95)


@pytest.mark.parametrize("opts, match", [
    (dict(back_window=1), "`back_window` must be an integer of at least 2"),
    (dict(fore_window=2.5), "`fore_window` must be an integer of at least 2"),
    (dict(min_back_window=31), "`min_back_window` must not exceed `back_window`"),
    (dict(threshold=0), "`threshold` must be a positive number"),
    (dict(threshold=float("nan")), "`threshold` must be a positive number"),
    (dict(locate="first"), "`locate` must be one of 'split', 'max-t'"),
    (dict(confidence_level=1.0), "`confidence_level` must be in"),
    (dict(min_change=-0.01), "`min_change` must be non-negative"),
])
def test_validation(opts, match):
    with pytest.raises(ValueError, match=match):
        get_detector("talos-ttest", **opts)
