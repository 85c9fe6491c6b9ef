"""Several corpora at once: worst rows, series not analysed, and ``regbench evaluate`` over shapes,
seeds and real corpora."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from realcorpustools import write_corpus

from regbench.detect import Change, Detector
from regbench.evaluate import (
    Corpus,
    Evaluation,
    LabelledSeries,
    NotAnalysed,
    TrueChange,
    evaluate,
    evaluate_corpora,
    make_corpus,
    render,
    worst_rows,
)
from regbench.evaluate.score import Score
from regbench.evaluate.runner import EvaluationResult
from regbench.evaluate.tables import notes, worst_table_rows
from regbench.model import Series, VersionInfo


def _series(name: str, levels, *, runs: int = 5) -> Series:
    rng = np.random.default_rng(len(levels))
    return Series(name, "default", "m", "ms", "lower", [VersionInfo(f"v{k:02d}") for k in range(len(levels))],
                  [[level * (1 + rng.normal(0, 0.002, 10)) for _ in range(runs)] for level in levels],
                  [0] * len(levels), [0] * len(levels))


@pytest.fixture
def short_and_long():
    """A 30-version series with a +20% step and an 8-version quiet one."""
    long = LabelledSeries(_series("long", [1.0] * 15 + [1.2] * 15), (TrueChange(15, 15, 0.2, "step", 0.2),), "step")
    short = LabelledSeries(_series("short", [1.0] * 8), (), "quiet")
    return Corpus((long, short), {"n_versions": 30}, name="hand")


def test_series_a_method_cannot_analyse_are_counted_with_the_reason(short_and_long):
    result = evaluate(short_and_long, ["perfherder-versions", "talos-ttest", "ci-overlap"])
    ph = result.score_of("perfherder-versions")
    assert ph.n_series == 1 and ph.n_not_analysed == 1
    assert ph.not_analysed == {"too short for its windows (12 values before a version, 12 from it on): "
                               "8 values in 8 versions with data": 1}
    assert ph.n_pairs == 29  # the short series' pairs are not in its false alarm rate
    talos = result.score_of("talos-ttest")  # no reason of its own: it tested no pair
    assert talos.not_analysed == {"tested no pair of versions (8 versions with data)": 1}
    assert result.score_of("ci-overlap").n_not_analysed == 0 and result.score_of("ci-overlap").n_series == 2
    assert isinstance(result.detections["perfherder-versions"][1], NotAnalysed)
    lines = notes(result)
    assert ("perfherder-versions on hand: 1 of 2 series not analysed, left out of its scores: too short for its "
            "windows (12 values before a version, 12 from it on): 8 values in 8 versions with data (1)") in lines
    assert "| 1 of 2 |" in render(result, "markdown")
    doc = result.to_json()
    scores = {s["method"]: s for s in doc["scores"]}
    assert scores["talos-ttest"]["n_not_analysed"] == 1 and scores["talos-ttest"]["not_analysed"]


class Empty(Detector):
    """Analyses nothing, whatever the series: every series is not analysed."""

    name = "empty"

    def not_analysable(self, series):
        return "never"

    def detect(self, series):
        raise AssertionError("not called")


class Late(Detector):
    """Reports every true change one version late (a match within the tolerance)."""

    name = "late"

    def detect(self, series):
        return [Change(series.benchmark, "default", "m", series.versions[16].name, series.versions[15].name, 0.2,
                       0.1, 0.3, "regression", "late")] if len(series) > 16 else []


def test_a_method_that_analyses_nothing_has_no_rates(short_and_long):
    s = evaluate(short_and_long, [Empty()]).score_of("empty")
    assert s.n_series == 0 and s.n_not_analysed == 2 and math.isnan(s.recall_relevant)
    assert s.not_analysed == {"never": 2}


def _score(method, recall, f1, fa, **kw) -> Score:
    return Score(method, recall, 0.0, 0.5, f1, fa, 0.0, 0.0, **kw)


def test_worst_rows_take_each_worst_from_its_own_corpus_and_sort_by_the_worst_f1():
    a = EvaluationResult({}, (_score("x", 0.9, 0.8, 1.0), _score("y", 0.95, 0.9, 0.5), _score("z", 1.0, 0.99, 0.1)),
                         name="A")
    b = EvaluationResult({}, (_score("x", 0.8, 0.85, 2.0), _score("y", 0.6, 0.7, 0.2),
                              Score("z", *[math.nan] * 7, error="boom")), name="B")
    x, y, z = sorted(worst_rows([a, b]), key=lambda w: w.method)
    assert (x.recall_relevant, x.recall_corpus, x.f1, x.f1_corpus, x.false_alarms_per_1000, x.false_alarms_corpus) == (
        0.8, "B", 0.8, "A", 2.0, "B")
    assert (y.recall_relevant, y.recall_corpus, y.f1, y.f1_corpus, y.false_alarms_corpus) == (0.6, "B", 0.7, "B", "A")
    assert z.failed == ("B",) and z.n_corpora == 1
    # x's worst F1 (0.80) beats y's (0.70); z failed somewhere, so it comes last whatever its scores
    assert [w.method for w in worst_rows([a, b])] == ["x", "y", "z"]
    cells = {row[0]: row for row in worst_table_rows(Evaluation((a, b), worst_rows([a, b])))}
    assert cells["x"][1:4] == ["0.800 (B)", "0.800 (A)", "2.00 (B)"] and cells["z"][5] == "1; failed on B"


def test_evaluate_corpora_reports_each_corpus_and_the_worst_rows():
    corpora = (make_corpus(shape=name, n_series=5, n_versions=22, rng=seed)
               for name in ("default", "few-runs") for seed in (0, 1))
    ev = evaluate_corpora(corpora, ["ci-overlap", "perfherder"])
    assert [r.name for r in ev.results] == ["default seed 0", "default seed 1", "few-runs seed 0", "few-runs seed 1"]
    assert {w.method for w in ev.worst} == {"ci-overlap", "perfherder"}
    for w in ev.worst:
        f1s = [r.score_of(w.method).f1 for r in ev.results]
        assert w.f1 == min(f1s) and w.n_corpora == 4
        assert ev.results[[r.name for r in ev.results].index(w.f1_corpus)].score_of(w.method).f1 == w.f1
    doc = ev.to_json()
    assert doc["format_version"] == 2 and len(doc["corpora"]) == 4 and len(doc["scores"]) == 8
    assert [c["name"] for c in doc["corpora"]] == [r.name for r in ev.results]
    assert doc["corpora"][2]["shape"] == "few-runs" and doc["corpora"][2]["n_runs"] == 3
    text = render(ev)
    assert text.count("\nCorpus ") + text.startswith("Corpus ") == 4
    assert "Worst row of each method over 4 corpora" in text and "few-runs seed 1  ci-overlap" in text
    with pytest.raises(ValueError, match="`corpora` must hold at least one corpus"):
        evaluate_corpora([], ["ci-overlap"])


# CLI ---------------------------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "regbench.cli.main", "evaluate", *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_over_shapes_and_seeds():
    out = _cli("--shape", "few-runs,skewed", "--seeds", "3,4", "--series", "5", "--versions", "22", "--methods",
               "ci-overlap,perfherder", "--jobs", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [c["name"] for c in doc["corpora"]] == ["few-runs seed 3", "few-runs seed 4", "skewed seed 3",
                                                   "skewed seed 4"]
    assert [c["n_runs"] for c in doc["corpora"]] == [3, 3, 5, 5]
    assert {s["corpus"] for s in doc["scores"]} == {c["name"] for c in doc["corpora"]}
    assert [w["method"] for w in doc["worst"]] and all(w["n_corpora"] == 4 for w in doc["worst"])
    # --seed is still understood, and --runs overrides the shape's
    one = _cli("--shape", "few-runs", "--seed", "3", "--runs", "4", "--series", "5", "--versions", "22", "--methods",
               "ci-overlap", "--jobs", "1", "--format", "json")
    assert one.returncode == 0, one.stderr
    assert [(c["name"], c["n_runs"]) for c in json.loads(one.stdout)["corpora"]] == [("few-runs seed 3", 4)]


def test_cli_on_a_real_corpus_folder_and_the_synthetic_one(tmp_path):
    folder = write_corpus(tmp_path / "measured")
    out = _cli("--corpus", str(folder), "--corpus", "synthetic", "--series", "5", "--versions", "22", "--methods",
               "ci-overlap,perfherder-versions", "--jobs", "1", "--format", "markdown")
    assert out.returncode == 0, out.stderr
    assert f"- {folder}: 3 series x 22 versions x 3 runs x 5 iterations (+2 warm-up)" in out.stdout
    assert "- default seed 0: 5 series x 22 versions" in out.stdout
    assert f"| {folder} | ci-overlap |" in out.stdout and "| method | worst recall ≥3% |" in out.stdout
    assert "perfherder-versions on " in out.stdout and "series not analysed" in out.stdout


def test_cli_first_runs_of_a_real_corpus(tmp_path):
    folder = write_corpus(tmp_path / "measured")
    out = _cli("--corpus", str(folder), "--first-runs", "2", "--methods", "ci-overlap", "--jobs", "1",
               "--format", "json")
    assert out.returncode == 0, out.stderr
    (corpus,) = json.loads(out.stdout)["corpora"]
    assert corpus["name"] == f"{folder}, first 2 of 3 runs" and corpus["n_runs"] == 2
    too_many = _cli("--corpus", str(folder), "--first-runs", "4", "--methods", "ci-overlap")
    assert too_many.returncode == 3 and too_many.stderr.count("\n") == 1
    assert too_many.stderr == f"error: --first-runs 4: {folder / 'truth.jsonl'} has 3 runs per version, fewer than 4\n"


@pytest.mark.parametrize("args, message", [
    (["--shape", "noisy"], "Error: Invalid value for '--shape': unknown shape 'noisy' (known: default, few-runs, "),
    (["--seeds", "1,x"], "Error: Invalid value for '--seeds' / '--seed': 'x' is not a non-negative integer"),
])
def test_cli_bad_option_values_are_usage_errors(args, message):
    out = _cli(*args, "--methods", "ci-overlap")
    assert out.returncode == 2  # as in tests/test_cli_usage_exits.py
    assert out.stderr.startswith("Usage: ") and out.stderr.splitlines()[-1].startswith(message)


@pytest.mark.parametrize("args, message", [
    (["--corpus", "real", "--shape", "few-runs"], "Error: --shape applies to the synthetic corpus only"),
    (["--first-runs", "3"], "Error: --first-runs applies to real corpora only"),
])
def test_cli_options_that_do_not_go_together_are_usage_errors(args, message):
    out = _cli(*args, "--methods", "ci-overlap")
    assert out.returncode == 2  # as in tests/test_cli_usage_exits.py
    assert out.stderr.startswith("Usage: ") and message in out.stderr


def test_cli_bad_real_corpus_is_one_line_naming_file_and_line(tmp_path):
    folder = write_corpus(tmp_path / "bad", truth_lines=['{"format_version": 1'])
    out = _cli("--corpus", str(folder), "--methods", "ci-overlap")
    assert out.returncode == 3 and out.stderr.count("\n") == 1
    assert out.stderr.startswith(f"error: {folder / 'truth.jsonl'}:1: not JSON: ")


def test_cli_table_has_both_tables_and_the_notes(tmp_path):
    folder = write_corpus(tmp_path / "measured")
    out = _cli("--corpus", str(folder), "--methods", "ci-overlap,perfherder-versions", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith(f"Corpus {folder}: 3 series x 22 versions")
    assert "Detectors on the labelled corpora" in text and f"{folder}  ci-overlap" in text
    assert "Worst row of each method over 1 corpus (the corpus in parentheses), sorted by the worst F1" in text
    assert "note: perfherder-versions on " in text and "3 of 3 series not analysed" in text
