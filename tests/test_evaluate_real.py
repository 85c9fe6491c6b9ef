"""The corpus of real measurements (regbench.evaluate.real): loading, and one error per bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from realcorpustools import HEADER, N, write_corpus
from realcorpustools import default_plans as _plans
from realcorpustools import sample_rows as _rows

from regbench.errors import InputError
from regbench.evaluate import evaluate, load_real_corpus
from regbench.evaluate.real import DEFAULT_PATH

@pytest.fixture
def folder(tmp_path):
    return write_corpus(tmp_path / "corpus")


def test_a_corpus_folder_loads_as_the_synthetic_generator_returns(folder):
    corpus = load_real_corpus(folder)
    assert corpus.name == str(folder) and len(corpus) == 3
    assert [s.kind for s in corpus.series] == ["quiet", "step", "creep"]
    quiet, step, creep = corpus.series
    assert step.truth[0].index == 10 and step.truth[0].magnitude == 0.2 and step.truth[0].mean_change == 0.2
    assert (creep.truth[0].index, creep.truth[0].end_index, creep.truth[0].shape) == (8, 11, "creep")
    series = step.series
    assert [v.name for v in series.versions] == [f"v{k:02d}" for k in range(N)]
    assert series.warmup == [2] * N and series.failed == [0] * N and (series.unit, series.direction) == ("s", "lower")
    assert all(len(runs) == 3 and all(r.shape == (5,) for r in runs) for runs in series.runs)
    assert max(float(np.max(r)) for runs in series.runs for r in runs) < 2  # the warm-up (100) is stripped
    assert not series.runs[0][0].flags.writeable
    assert np.median(np.concatenate(series.runs[12])) == pytest.approx(1.2, rel=0.01)
    counts = corpus.counts()
    assert counts["series"] == 3 and counts["true_changes"] == 2 and counts["version_pairs"] == 3 * (N - 1)
    assert corpus.params["source"] == "real" and corpus.params["header"]["machine"] == {"hostname": "box"}
    assert (corpus.params["n_runs"], corpus.params["n_iterations"], corpus.params["warmup"]) == (3, 5, 2)


def test_the_real_corpus_is_scored_like_the_synthetic_one(folder):
    result = evaluate(load_real_corpus(folder), ["ci-overlap"])
    s = result.score_of("ci-overlap")
    assert result.name == str(folder) and s.n_series == 3
    assert s.recall_by_kind["step"] == 1.0 and s.n_relevant == 2


def test_failed_runs_are_counted_and_a_version_may_have_none(tmp_path):
    plans = _plans()
    skip = {("loop/step", 3, 1), ("loop/step", 4, 0), ("loop/step", 4, 1), ("loop/step", 4, 2)}
    corpus = load_real_corpus(write_corpus(tmp_path / "c", plans=plans, rows=_rows(plans, skip=skip)))
    series = corpus.series[1].series
    assert [len(r) for r in series.runs[2:5]] == [3, 2, 0] and series.failed[2:5] == [0, 1, 3]


def test_the_first_runs_of_each_version_only(tmp_path):
    plans = _plans()
    skip = {("loop/step", 3, 0), ("loop/step", 4, 2)}
    folder = write_corpus(tmp_path / "c", plans=plans, rows=_rows(plans, skip=skip))
    every, first = load_real_corpus(folder), load_real_corpus(folder, runs=2)
    assert first.name == f"{folder}, first 2 of 3 runs" and first.params["n_runs"] == 2
    assert first.params["runs_measured"] == 3 and "runs_measured" not in every.params
    step, kept = every.series[1].series, first.series[1].series
    # runs 0 and 1 of every version, the same arrays; a missing one among them is a failed run,
    # one missing beyond them is not
    assert [len(r) for r in kept.runs[2:5]] == [2, 1, 2] and kept.failed[2:5] == [0, 1, 0]
    assert np.array_equal(kept.runs[4][1], step.runs[4][1]) and np.array_equal(kept.runs[3][0], step.runs[3][0])
    assert first.series[1].truth == every.series[1].truth
    assert load_real_corpus(folder, runs=3).name == str(folder)
    with pytest.raises(ValueError, match=r"`runs`: .*truth.jsonl has 3 runs per version, fewer than 4"):
        load_real_corpus(folder, runs=4)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="`runs` must be a positive integer"):
            load_real_corpus(folder, runs=bad)


def _bad(tmp_path, **kwargs) -> tuple[Path, str]:
    folder = write_corpus(tmp_path / "bad", **kwargs)
    with pytest.raises(InputError) as err:
        load_real_corpus(folder)
    message = str(err.value)
    assert "\n" not in message
    return folder, message


def _truth_with(change=None, **entry) -> list[str]:
    plans = _plans()
    plans[1] = {**plans[1], **entry}
    if change is not None:
        plans[1]["changes"] = [{**plans[1]["changes"][0], **change}]
    return [json.dumps(HEADER)] + [json.dumps(p) for p in plans]


@pytest.mark.parametrize("truth, line, message", [
    (lambda: [json.dumps(HEADER), json.dumps(_plans()[0]), "{not json", json.dumps(_plans()[2])], 3, "not JSON: "),
    (lambda: [json.dumps(HEADER), "[1, 2]"], 2, "each line must be a JSON object"),
    (lambda: ["", json.dumps(_plans()[0])], 1, "expected the header object on the first line"),
    (lambda: [json.dumps({**HEADER, "format_version": 2})], 1,
     "`format_version` 2 is not supported (this regbench reads 1)"),
    (lambda: [json.dumps({k: v for k, v in HEADER.items() if k != "warmup"})], 1, "the header has no `warmup`"),
    (lambda: [json.dumps({**HEADER, "runs": 0})], 1, "`runs` must be an integer >= 1, got 0"),
    (lambda: [json.dumps({**HEADER, "direction": "up"})], 1, "`direction` must be 'lower' or 'higher', got 'up'"),
    (lambda: [json.dumps(HEADER)], 2, "no series after the header"),
    (lambda: [json.dumps(HEADER), *(json.dumps(p) for p in _plans()), json.dumps(_plans()[0])], 5,
     "series 'loop/quiet' is already on line 2"),
    (lambda: _truth_with(kind="spike"), 3, "`kind` must be one of quiet, step, revert, creep, got 'spike'"),
    (lambda: _truth_with(ratios=[1.0, -1.0]), 3, "`ratios` must be a list of at least 2 positive numbers"),
    (lambda: _truth_with(series=""), 3, "`series` must be a non-empty string"),
    (lambda: _truth_with(changes=[]), 3, "a step series must have changes"),
    (lambda: _truth_with(change={"index": 0}), 3,
     "`changes[0]`: `index` and `end_index` must be integers with 1 <= index <= end_index <= 21"),
    (lambda: _truth_with(change={"index": 10, "end_index": 22}), 3, "<= 21 (the series has 22 versions)"),
    (lambda: _truth_with(change={"end_index": 12}), 3,
     "`changes[0]`: only a creep spans versions (end_index > index), got 10 to 12 for a step"),
    (lambda: _truth_with(change={"shape": "creep"}), 3, "`changes[0]`.shape must be 'step' in a step series"),
    (lambda: _truth_with(change={"magnitude": 0.1}), 3,
     "`changes[0]`.magnitude is +10.0000% but the ratios move by +20.0000% from v09 to v10"),
    (lambda: _truth_with(change={"index": 9, "end_index": 9}), 3,
     "`changes[0]`.magnitude is +20.0000% but the ratios move by +0.0000% from v08 to v09"),
    (lambda: _truth_with(changes=[{"index": 10, "end_index": 10, "magnitude": 0.2, "shape": "step"},
                                  {"index": 10, "end_index": 10, "magnitude": 0.0, "shape": "step"}]), 3,
     "`changes[1]` starts at 10, not after the end of the change before it (10)"),
    (lambda: _truth_with(ratios=[1.0] * 10 + [1.2] * 11 + [1.3]), 3,
     "`ratios` move by +8.3333% at v21 (index 21), where no change is declared"),
    (lambda: _truth_with(change={"magnitude": "big"}), 3, "`changes[0]`.magnitude must be a number above -1"),
])
def test_a_bad_truth_file_is_one_error_naming_file_and_line(tmp_path, truth, line, message):
    folder, text = _bad(tmp_path, truth_lines=truth())
    assert text.startswith(f"{folder / 'truth.jsonl'}:{line}: ")
    assert message in text


def test_a_truth_line_naming_a_series_the_samples_do_not_have(tmp_path):
    plans = _plans()
    folder, text = _bad(tmp_path, plans=plans, rows=_rows(plans[:2]))
    assert text == f"{folder / 'truth.jsonl'}:4: series 'loop/creep' has no samples in samples.csv.gz"


def test_samples_of_a_series_the_truth_does_not_name(tmp_path):
    plans = _plans()
    rows = _rows(plans)
    folder, text = _bad(tmp_path, rows=rows, truth_lines=[json.dumps(HEADER), json.dumps(plans[0]),
                                                          json.dumps(plans[1])])
    first = next(k for k, row in enumerate(rows) if row.startswith("loop/creep,")) + 1
    assert text == f"{folder / 'samples.csv.gz'}:{first}: series 'loop/creep' is not in truth.jsonl"


@pytest.mark.parametrize("edit, message", [
    (lambda rows: rows + ["loop/quiet,v22,0,0,1.0"],
     "version 'v22' of series 'loop/quiet' is not one of its 22 versions in truth.jsonl (v00 to v21)"),
    (lambda rows: rows + [f"loop/quiet,v00,3,{i},1.0" for i in range(7)],
     "run 3 of 'loop/quiet' at v00: the header of truth.jsonl says 3 runs per version (0 to 2)"),
    (lambda rows: rows + ["loop/quiet,v00,7,0,1.0"], "run 7 of 'loop/quiet' at v00"),
    (lambda rows: [r for r in rows if r != "loop/step,v05,1,6," + r.rsplit(",", 1)[-1]],
     "run 1 of 'loop/step' at v05 has iterations 0 to 5; the header of truth.jsonl says 2 warm-up + 5 measured"),
])
def test_samples_the_header_does_not_allow(tmp_path, edit, message):
    folder, text = _bad(tmp_path, rows=edit(_rows(_plans())))
    assert text.startswith(f"{folder / 'samples.csv.gz'}:") and message in text


def test_a_malformed_samples_line_is_the_canonical_error(tmp_path):
    rows = _rows(_plans())
    rows[5] = rows[5].rsplit(",", 1)[0] + ",fast"
    folder, text = _bad(tmp_path, rows=rows)
    assert text == f"{folder / 'samples.csv.gz'}:6: `value` is not a number: 'fast'"


def test_missing_and_damaged_files(tmp_path):
    with pytest.raises(InputError, match="no such folder$"):
        load_real_corpus(tmp_path / "nowhere")
    folder = write_corpus(tmp_path / "c")
    (folder / "truth.jsonl").unlink()
    with pytest.raises(InputError, match=r"truth.jsonl: no such file \(a real corpus holds samples.csv.gz and "):
        load_real_corpus(folder)
    folder = write_corpus(tmp_path / "d")
    raw = (folder / "samples.csv.gz").read_bytes()
    (folder / "samples.csv.gz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InputError, match="samples.csv.gz: the gzip-compressed data is damaged"):
        load_real_corpus(folder)
    (folder / "samples.csv.gz").write_text("benchmark,version,run,iteration,value\n")
    with pytest.raises(InputError, match="samples.csv.gz: not a gzip-compressed file"):
        load_real_corpus(folder)


def test_the_copy_shipped_in_the_package():
    if not (DEFAULT_PATH / "samples.csv.gz").is_file():
        pytest.skip("the real corpus is not in this checkout (benchmarks/real_corpus/make_real_corpus.py makes it)")
    corpus = load_real_corpus()
    assert corpus.name == "real" and len(corpus) >= 6
    assert {s.kind for s in corpus.series} == {"quiet", "step", "revert", "creep"}
    assert corpus.counts()["relevant"] > 0
