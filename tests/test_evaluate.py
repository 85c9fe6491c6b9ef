"""The labelled corpus, the scorer, the baselines, the runner and ``regbench evaluate``."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from regbench.detect import BUILTIN, Change, Detector
from regbench.evaluate import (
    LabelledSeries,
    PerfherderRule,
    TrueChange,
    evaluate,
    make_corpus,
    match_series,
    render,
    score,
)
from regbench.errors import MissingDependency
from regbench.evaluate import baselines
from regbench.evaluate.corpus import MARGIN, _allocate
from regbench.evaluate.runner import EvaluationResult
from regbench.evaluate.tables import table_rows
from regbench.model import Series, VersionInfo
from regbench.stats import hierarchical_summary


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(n_series=60, n_versions=40, rng=1)


@pytest.fixture(scope="module")
def tiny():
    return make_corpus(n_series=6, n_versions=30, rng=0)


# Corpus ------------------------------------------------------------------------------------------

def test_corpus_is_deterministic_for_a_seed():
    a = make_corpus(n_series=8, n_versions=25, rng=7)
    b = make_corpus(n_series=8, n_versions=25, rng=7)
    c = make_corpus(n_series=8, n_versions=25, rng=8)
    assert [s.truth for s in a.series] == [s.truth for s in b.series]
    assert [s.kind for s in a.series] == [s.kind for s in b.series]
    for sa, sb in zip(a.series, b.series, strict=True):
        for ra, rb in zip(sa.series.runs, sb.series.runs, strict=True):
            assert all(np.array_equal(x, y) for x, y in zip(ra, rb, strict=True))
    assert not np.array_equal(a.series[0].series.runs[0][0], c.series[0].series.runs[0][0])
    assert a.params["seed"] == 7 and a.params["n_versions"] == 25


def test_corpus_layout_is_what_the_store_gives(corpus):
    assert len(corpus) == 60
    counts = corpus.counts()
    assert counts["series_quiet"] == 18 and counts["series_step"] == 18 and counts["series_bimodal"] == 12
    assert counts["version_pairs"] == 60 * 39 == corpus.n_pairs
    for s in corpus.series:
        series = s.series
        assert len(series) == 40 and series.warmup == [10] * 40 and series.failed == [0] * 40
        assert [v.name for v in series.versions[:2]] == ["v000", "v001"]
        assert all(len(runs) == 10 and all(r.shape == (20,) for r in runs) for runs in series.runs)
        assert not series.runs[0][0].flags.writeable  # detectors cannot alter the corpus
        assert np.all(np.concatenate(series.runs[3]) > 0)


def test_every_kind_has_its_truth(corpus):
    shapes = {"step": {"step"}, "revert": {"revert"}, "creep": {"creep"}, "bimodal": {"mode-shift"}}
    for s in corpus.series:
        if s.kind == "quiet":
            assert s.truth == ()
            continue
        assert s.truth, s.series.benchmark
        assert {t.shape for t in s.truth} == shapes[s.kind]
        for t in s.truth:
            assert MARGIN <= t.index <= t.end_index <= 40 - 1 - MARGIN
            assert (t.end_index > t.index) == (t.shape == "creep")
        if s.kind == "revert":
            up, back = s.truth
            assert 1 <= back.index - up.index <= 5
            assert (1 + up.magnitude) * (1 + back.magnitude) == pytest.approx(1.0)
        if s.kind == "creep":
            (t,) = s.truth
            assert 5 <= t.end_index - t.index + 1 <= 15 and t.magnitude > 0


def test_step_magnitudes_cover_small_and_large_both_ways():
    c = make_corpus(n_series=200, n_versions=40, rng=2, kinds=["step"])
    mags = np.array([t.magnitude for t in c.truths])
    assert mags.min() < -0.2 and mags.max() > 0.2
    small = np.mean(np.abs(mags) < 0.03)
    assert 0.2 < small < 0.4  # log-uniform on [1%, 40%]: log(3)/log(40) = 30% below 3%
    assert np.all((np.abs(mags) >= 0.01) & (np.abs(mags) <= 0.40))


def _version_level(labelled, k):
    # medians of runs: robust to the rare huge outliers
    return float(np.mean([np.median(r) for r in labelled.series.runs[k]]))


def test_labelled_changes_agree_with_the_data(corpus):
    errors = []
    for s in corpus.series:
        if s.kind not in ("step", "revert", "creep"):
            continue
        bounds = [0, *[t.index for t in s.truth], len(s.series)]
        for n, t in enumerate(s.truth):
            # before: from the previous change (or 3 versions back) to the change; after: from the
            # end of the change to the next one (at most 3 versions)
            lo = max(bounds[n], t.index - 3)
            hi = min(bounds[n + 2], t.end_index + 3)
            before = np.mean([_version_level(s, k) for k in range(lo, t.index)])
            after = np.mean([_version_level(s, k) for k in range(t.end_index, hi)])
            errors.append(after / before - 1 - t.magnitude)
    errors = np.abs(errors)
    assert len(errors) > 20
    # version means carry run noise (run CV <= 1.5%, 10 runs) and jitter (<= 0.25%)
    assert np.median(errors) < 0.004 and errors.max() < 0.02


def test_mode_shift_moves_one_mode_only(corpus):
    checked = 0
    for s in corpus.series:
        if s.kind != "bimodal" or s.noise.mode_ratio < 1.5:
            continue
        cut = s.noise.level * np.sqrt(s.noise.mode_ratio)  # geometric middle of the two modes
        for t in s.truth:
            def modes(ks):
                x = np.concatenate([np.concatenate(s.series.runs[k]) for k in ks])
                return np.median(x[x < cut]), np.median(x[(x >= cut) & (x < 3 * cut * s.noise.mode_ratio ** 0.5)])
            fast0, slow0 = modes(range(t.index - 3, t.index))
            fast1, slow1 = modes(range(t.index, t.index + 3))
            moved = [fast1 / fast0 - 1, slow1 / slow0 - 1]
            big = int(np.argmax(np.abs(moved)))
            assert moved[big] == pytest.approx(t.magnitude, abs=0.02)
            assert abs(moved[1 - big]) < 0.02  # the other mode stays
            assert abs(t.mean_change) <= abs(t.magnitude) + 1e-12
            checked += 1
    assert checked >= 3


def test_impact_factors_span_1_to_100(corpus):
    factors = []
    for s in corpus.series:
        if s.kind == "bimodal" or s.noise.outlier_rate:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            factors.append(np.median([hierarchical_summary(r).impact_factor for r in s.series.runs]))
    assert min(factors) < 2 and max(factors) > 50


@pytest.mark.parametrize("kwargs, message", [
    ({"n_versions": 10}, "`n_versions` must be an integer >= 20"),
    ({"n_runs": 1}, "`n_runs` must be an integer >= 2"),
    ({"kinds": ["step", "spike"]}, "`kinds` has unknown kind 'spike'"),
    ({"kinds": {"step": -1}}, "`kinds` must give non-negative weights"),
])
def test_corpus_validates_its_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_corpus(n_series=2, **kwargs)


def test_allocation_gives_every_kind_a_series_when_there_is_room():
    assert _allocate({"quiet": 0.3, "step": 0.3, "revert": 0.1, "creep": 0.1, "bimodal": 0.2}, 6) == {
        "quiet": 2, "step": 1, "revert": 1, "creep": 1, "bimodal": 1}
    assert sum(_allocate({"quiet": 0.3, "step": 0.7}, 300).values()) == 300


# Scorer ------------------------------------------------------------------------------------------

def _plain_series(name: str, n: int) -> Series:
    return Series(name, "default", "m", "ms", "lower", [VersionInfo(f"v{k:02d}") for k in range(n)],
                  [[np.ones(2), np.ones(2)] for _ in range(n)], [0] * n, [0] * n)


def _change(series: Series, k: int, change: float) -> Change:
    return Change(series.benchmark, "default", "m", f"v{k:02d}", f"v{k - 1:02d}", change, change, change,
                  "regression" if change > 0 else "improvement", "hand")


@pytest.fixture
def hand_made():
    a = _plain_series("a", 20)
    b = _plain_series("b", 20)
    truth = (TrueChange(5, 5, 0.10, "step"), TrueChange(9, 9, 0.04, "step"), TrueChange(12, 12, -0.02, "step"),
             TrueChange(14, 17, 0.05, "creep"))
    la, lb = LabelledSeries(a, truth, "step"), LabelledSeries(b, (), "quiet")
    det_a = [_change(a, 5, 0.1),    # matches the step at 5, delay 0
             _change(a, 6, 0.1),    # a second report of it: false alarm
             _change(a, 13, -0.02),  # matches the small step at 12, delay 1
             _change(a, 15, 0.01),  # matches the creep 14-17, delay 1
             _change(a, 16, 0.01),  # one more step of the creep: redundant
             _change(a, 3, -0.05)]  # nothing there: false alarm
    det_b = [_change(b, 10, 0.05)]  # quiet series: false alarm
    return (la, det_a), (lb, det_b)


def test_matching_rule_on_hand_made_detections(hand_made):
    (la, det_a), (lb, det_b) = hand_made
    m = match_series(la, det_a)
    assert [(x.truth.index, x.detected_index, x.delay) for x in m.matches] == [(5, 5, 0), (12, 13, 1), (14, 15, 1)]
    assert [t.index for t in m.missed] == [9]
    assert sorted(c.version for c in m.false_alarms) == ["v03", "v06"]
    assert [c.version for c in m.redundant] == ["v16"]
    # sign matters: an improvement at the step's version is not the regression
    assert match_series(la, [_change(la.series, 5, -0.1)]).matches == ()
    # tolerance 0: the detection one version late no longer matches
    strict = match_series(la, det_a, tolerance=0)
    assert [x.truth.index for x in strict.matches] == [5, 14]
    with pytest.raises(ValueError, match="`tolerance` must be a non-negative integer"):
        match_series(la, det_a, tolerance=-1)


def test_score_numbers_computed_by_hand(hand_made):
    (la, det_a), (lb, det_b) = hand_made
    s = score("hand", [match_series(la, det_a), match_series(lb, det_b)], seconds=1.5)
    # relevant: 5 (+10%), 9 (+4%), creep (+5%) -> found 5 and the creep
    assert s.n_relevant == 3 and s.n_relevant_found == 2 and s.recall_relevant == pytest.approx(2 / 3)
    assert s.n_small == 1 and s.recall_small == 1.0
    # 3 matched detections, 3 false alarms (v06, v03, b:v10), 1 redundant
    assert s.n_false_alarms == 3 and s.n_redundant == 1 and s.n_detections == 7
    assert s.precision == pytest.approx(0.5)
    assert s.f1 == pytest.approx(4 / 7)  # 2 * 0.5 * (2/3) / (0.5 + 2/3)
    assert s.n_pairs == 38 and s.false_alarms_per_1000 == pytest.approx(3000 / 38)
    assert s.delay_mean == pytest.approx(2 / 3) and s.delay_median == 1.0
    assert s.recall_by_kind == {"step": pytest.approx(2 / 3)}
    assert s.false_alarms_by_kind == {"step": pytest.approx(2000 / 19), "quiet": pytest.approx(1000 / 19)}
    lo, hi = s.recall_relevant_ci
    assert lo < 2 / 3 < hi
    assert s.seconds == 1.5
    assert json.loads(json.dumps(s.to_json()))["f1"] == pytest.approx(4 / 7)


def test_false_alarms_just_before_a_true_change_of_their_sign_are_counted_early(hand_made):
    (la, det_a), (lb, det_b) = hand_made
    a = la.series
    # none of the hand-made false alarms is early: v06 is 3 versions before the step at 9, v03 9
    # before the step at 12, b:v10 is in a quiet series
    assert match_series(la, det_a).early == ()
    extra = [_change(a, 8, 0.04),    # one version before the missed +4% step at 9: early
             _change(a, 7, -0.04)]   # two before it, but the other sign: not early
    m = match_series(la, [*det_a, *extra])
    assert [c.version for c in m.early] == ["v08"]
    # before a change that another detection found, a detection is a false alarm, not early:
    # the -2% step at 12 is matched by v13, so v10 is noise or a second report
    also = match_series(la, [*det_a, *extra, _change(a, 10, -0.02)])
    assert "v10" in [c.version for c in also.false_alarms] and [c.version for c in also.early] == ["v08"]
    # without v13, the step at 12 is missed and v10 is its early placement
    no13 = [c for c in det_a if c.version != "v13"]
    m = match_series(la, [*no13, *extra, _change(a, 10, -0.02)])
    assert sorted(c.version for c in m.early) == ["v08", "v10"]
    assert set(m.early) <= set(m.false_alarms)
    # tolerance 1: two versions before is no longer early
    assert [c.version for c in match_series(la, [*no13, *extra, _change(a, 10, -0.02)], tolerance=1).early] == ["v08"]
    s = score("hand", [m, match_series(lb, det_b)])
    assert s.n_early == 2 and s.n_false_alarms == 6 and s.to_json()["n_early"] == 2
    assert table_rows(EvaluationResult({}, (s,), name="c"))[0][6] == f"{6000 / 38:.2f} (6; 2 early)"
    plain = score("hand", [match_series(la, det_a), match_series(lb, det_b)])
    assert table_rows(EvaluationResult({}, (plain,), name="c"))[0][6] == f"{3000 / 38:.2f} (3)"


def test_score_without_detections_has_zero_recall_and_f1(hand_made):
    (la, _), _ = hand_made
    s = score("none", [match_series(la, [])])
    assert s.recall_relevant == 0 and s.f1 == 0 and np.isnan(s.precision) and s.to_json()["precision"] is None


# Baselines ---------------------------------------------------------------------------------------

def _levels_series(levels, *, runs=10, iters=20, seed=0, run_sd=0.005):
    rng = np.random.default_rng(seed)
    s = Series("b", "default", "m", "ms", "lower")
    for k, level in enumerate(levels):
        s.versions.append(VersionInfo(f"v{k:02d}"))
        s.runs.append([level * (1 + rng.normal(0, run_sd)) * (1 + rng.normal(0, 0.01, iters)) for _ in range(runs)])
        s.failed.append(0)
        s.warmup.append(0)
    return s


@pytest.mark.parametrize("unit", ["run", "version"])
def test_perfherder_finds_a_clear_step_once_and_nothing_in_a_quiet_series(unit):
    rule = PerfherderRule(unit=unit)
    changes = rule.detect(_levels_series([1.0] * 30 + [1.1] * 30))
    assert [(c.version, c.previous, c.kind) for c in changes] == [("v30", "v29", "regression")]
    assert changes[0].change == pytest.approx(0.10, abs=0.01)
    assert changes[0].ci_low < changes[0].change < changes[0].ci_high
    assert rule.detect(_levels_series([1.0] * 60, seed=4)) == []


def test_perfherder_ignores_a_significant_change_below_2_percent():
    series = _levels_series([1.0] * 30 + [1.01] * 30, run_sd=0.001)
    assert PerfherderRule().detect(series) == []
    assert [c.version for c in PerfherderRule(min_change=0.005).detect(series)] == ["v30"]


@pytest.mark.parametrize("kwargs, message", [
    ({"unit": "job"}, "`unit` must be 'run' or 'version'"),
    ({"min_back": 0}, "`min_back` must be a positive integer"),
    ({"min_back": 12, "max_back": 6}, "`max_back` must be at least `min_back`"),
])
def test_perfherder_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PerfherderRule(**kwargs)


def test_otava_wrapper_finds_the_step():
    pytest.importorskip("otava")
    series = _levels_series([1.0] * 30 + [1.1] * 30)
    for name in ("otava-mean", "otava-median", "otava-low", "otava-tuned"):
        changes = baselines.make_baseline(name).detect(series)
        assert ("v30", "regression") in [(c.version, c.kind) for c in changes], name
        found = next(c for c in changes if c.version == "v30")
        assert found.change == pytest.approx(0.10, abs=0.01) and found.method == name


def test_asv_steps_finds_a_clear_step_once_and_nothing_in_a_quiet_series():
    pytest.importorskip("asv")
    asv = baselines.make_baseline("asv-steps")
    up = asv.detect(_levels_series([1.0] * 30 + [1.1] * 30))
    assert [(c.version, c.previous, c.kind, c.method) for c in up] == [("v30", "v29", "regression", "asv-steps")]
    assert up[0].change == pytest.approx(0.10, abs=0.01)
    down = asv.detect(_levels_series([1.0] * 30 + [0.9] * 30, seed=2))
    assert [(c.version, c.kind) for c in down] == [("v30", "improvement")]
    assert down[0].change == pytest.approx(-0.10, abs=0.01)
    assert asv.detect(_levels_series([1.0] * 60, seed=4)) == []
    # asv's default threshold is 5%: a clean 3% step is below it
    assert asv.detect(_levels_series([1.0] * 30 + [1.03] * 30, run_sd=0.001)) == []
    assert baselines.AsvSteps(threshold=0.01).detect(_levels_series([1.0] * 30 + [1.03] * 30, run_sd=0.001))


def test_asv_steps_uses_asvs_own_functions_on_version_medians(monkeypatch):
    pytest.importorskip("asv")
    from asv import step_detect

    seen = []

    def spy(y, w=None):
        seen.append((list(y), list(w)))
        return step_detect.detect_steps(y, w)

    asv = baselines.make_baseline("asv-steps")
    asv._asv = dataclasses.replace(asv._asv, detect_steps=spy)
    series = _levels_series([1.0] * 10 + [2.0] * 10, runs=3, iters=5)
    asv.detect(series)
    (y, w), = seen
    assert y == [float(np.median(np.concatenate(runs))) for runs in series.runs]
    assert all(x > 0 for x in w)  # 2 / width of the 99% interval of the median


def test_asv_steps_validates_and_says_what_it_cannot_analyse():
    pytest.importorskip("asv")
    with pytest.raises(ValueError, match="`threshold` must be in \\[0, 1\\)"):
        baselines.AsvSteps(threshold=1.5)
    one = _levels_series([1.0])
    assert baselines.make_baseline("asv-steps").not_analysable(one) == "1 version(s) with data, a step needs 2"


def test_a_missing_asv_is_a_note_with_the_install_hint(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "asv", None)  # what Python does for a package that is not there
    monkeypatch.setitem(sys.modules, "asv.step_detect", None)
    with pytest.raises(MissingDependency, match="the asv-steps baseline needs asv, which is not installed: "
                                                "pip install 'regbench\\[evaluate\\]'"):
        baselines.make_baseline("asv-steps")
    result = evaluate(tiny, ["perfherder", "asv-steps"])
    assert [s.method for s in result.scores] == ["perfherder"]
    assert result.notes == ("asv-steps: skipped, the asv-steps baseline needs asv, which is not installed: "
                            "pip install 'regbench[evaluate]'",)


def test_perfherder_says_which_series_are_too_short_for_its_windows():
    rule = PerfherderRule(unit="version")
    short = _levels_series([1.0] * 20)
    assert rule.not_analysable(short) == ("too short for its windows (12 values before a version, 12 from it on): "
                                          "20 values in 20 versions with data")
    assert rule.not_analysable(_levels_series([1.0] * 24)) is None
    assert rule.detect_counted(_levels_series([1.0] * 24)) == ([], 1)  # one version with both windows full
    assert PerfherderRule().not_analysable(_levels_series([1.0] * 4, runs=10)) is None


def test_missing_otava_is_a_note_with_the_install_hint(tiny, monkeypatch):
    def missing():
        raise MissingDependency(f"apache-otava is not installed ({baselines.INSTALL_HINT})")

    monkeypatch.setattr(baselines, "_load_otava", missing)
    result = evaluate(tiny, ["perfherder", "otava-mean"])
    assert [s.method for s in result.scores] == ["perfherder"]
    assert result.notes == ("otava-mean: skipped, apache-otava is not installed (pip install 'regbench[evaluate]')",)


# Runner ------------------------------------------------------------------------------------------

class Boom(Detector):
    name = "boom"

    def detect(self, series):
        raise ValueError("boom")


def test_a_raising_detector_is_an_error_row_and_a_missing_module_a_note(tiny, monkeypatch):
    monkeypatch.setitem(BUILTIN, "not-yet", "not_yet_written")
    result = evaluate(tiny, ["ci-overlap", Boom(), "not-yet"])
    assert [s.method for s in result.scores] == ["ci-overlap", "boom"]
    boom = result.score_of("boom")
    assert "ValueError: boom" in boom.error and "6 of 6 series failed" in boom.error
    assert result.notes == ("not-yet: skipped, not available yet (no module regbench.detect.not_yet_written)",)
    assert "error: ValueError: boom" in render(result)
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        evaluate(tiny, ["nope"])


def test_parallel_run_gives_the_same_scores(tiny):
    # asv-steps: its asv functions are imported again in each worker (a skip note, the same in
    # both runs, where asv is not installed)
    methods = ["ci-overlap", "perfherder", "asv-steps"]
    one = evaluate(tiny, methods, jobs=1)
    two = evaluate(tiny, methods, jobs=2, chunk=2)
    assert one.notes == two.notes
    for a, b in zip(one.scores, two.scores, strict=True):
        assert a.method == b.method
        assert a.to_json() | {"seconds": 0} == b.to_json() | {"seconds": 0}


def test_render_markdown_and_json(tiny):
    seen = []
    result = evaluate(tiny, ["ci-overlap", "perfherder"], progress=lambda m, d, t: seen.append((m, d, t)))
    assert seen[-1] == ("perfherder", 6, 6)
    md = render(result, "markdown")
    assert md.startswith("Corpora:\n\n- default seed 0: 6 series x 30 versions x 10 runs x 20 iterations "
                         "(+10 warm-up): 174 version pairs")
    assert "| corpus | method | recall ≥3% |" in md and "| default seed 0 | ci-overlap |" in md
    assert "| default seed 0 | perfherder |" in md and "| method | worst recall ≥3% | worst F1 |" in md
    doc = result.to_json()
    assert doc["format_version"] == 2 and doc["corpora"][0]["version_pairs"] == 6 * 29
    assert doc["corpora"][0]["name"] == "default seed 0" and doc["corpora"][0]["shape"] == "default"
    assert [(s["corpus"], s["method"]) for s in doc["scores"]] == [("default seed 0", "ci-overlap"),
                                                                   ("default seed 0", "perfherder")]
    assert {w["method"] for w in doc["worst"]} == {"ci-overlap", "perfherder"}


# CLI ---------------------------------------------------------------------------------------------

def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "regbench.cli.main", "evaluate", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_cli_json_on_a_tiny_corpus(tmp_path):
    out = _cli("--series", "6", "--versions", "30", "--methods", "ci-overlap,perfherder,otava-mean",
               "--jobs", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    (corpus,) = doc["corpora"]
    assert corpus["series"] == 6 and corpus["n_versions"] == 30 and corpus["seed"] == 0
    assert corpus["name"] == "default seed 0" and corpus["n_runs"] == 10
    methods = [s["method"] for s in doc["scores"]]
    assert methods[:2] == ["ci-overlap", "perfherder"]
    for s in doc["scores"]:
        assert s["error"] is None and 0 <= s["recall_relevant"] <= 1
    # the same options give the same table; markdown to a file
    target = tmp_path / "table.md"
    md = _cli("--series", "6", "--versions", "30", "--methods", "ci-overlap", "--jobs", "1", "--format", "markdown",
              "--output", str(target))
    assert md.returncode == 0, md.stderr
    assert md.stdout == "" and "| ci-overlap |" in target.read_text()


def test_cli_bad_method_is_a_usage_error():
    out = _cli("--methods", "ci-overlap,nope")
    assert out.returncode == 2  # as in tests/test_cli_usage_exits.py
    assert out.stderr.startswith("Usage: regbench evaluate ")
    assert out.stderr.splitlines()[-1].startswith("Error: Invalid value for '--methods': unknown method 'nope' (known: ")


def test_cli_option_scores_auto_with_its_options_beside_the_default(tmp_path):
    # A minimum change of 50%: auto with it finds fewer of the corpus' changes than auto without it,
    # so the option reached the detector (the corpus' steps are 1-40%).
    out = _cli("--series", "12", "--versions", "30", "--methods", "auto", "--jobs", "2", "--format", "json")
    tuned = _cli("--series", "12", "--versions", "30", "--methods", "auto,otava-low", "--option", "min_change=0.5",
                 "--option", "floor_search=false", "--jobs", "2", "--format", "json")
    assert out.returncode == 0 and tuned.returncode == 0, (out.stderr, tuned.stderr)
    [plain] = json.loads(out.stdout)["scores"]
    scores = {s["method"]: s for s in json.loads(tuned.stdout)["scores"]}
    assert list(scores) == ["auto (min_change=0.5, floor_search=false)", "otava-low"]
    assert scores["auto (min_change=0.5, floor_search=false)"]["recall_relevant"] < plain["recall_relevant"]


@pytest.mark.parametrize("args, message", [
    (("--methods", "otava-low", "--option", "floor=false"), "Error: --option applies to auto: add it to --methods"),
    (("--methods", "auto", "--option", "nope=1"), "Error: --option nope: auto has no such option (its options: "),
    (("--methods", "auto", "--option", "floor"), "Error: --option 'floor': expected NAME=VALUE"),
])
def test_cli_option_mistakes_are_usage_errors(args, message):
    out = _cli(*args)
    assert out.returncode == 2 and out.stderr.splitlines()[-1].startswith(message), out.stderr
