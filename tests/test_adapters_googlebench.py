"""The ``google-benchmark`` adapter against JSON captured from the real library (Debian's
libbenchmark-dev 1.7.1).

Golden files: tests/golden/adapters/google-benchmark/ (regenerate with its make_golden.sh).  The
numbers below were read by hand from those files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters import _jsonstream
from regbench.adapters.googlebench import GoogleBenchmarkAdapter
from regbench.errors import InputError

GOLDEN = Path(__file__).parent / "golden" / "adapters"
GB = GOLDEN / "google-benchmark"
ADAPTER = GoogleBenchmarkAdapter()
HEADER = Path("/usr/include/benchmark/benchmark.h")
SINGLE_REAL_TIME = 3.7868156533039276e+01  # single.json line 49


def by_name(runs):
    out = {r.benchmark: r for r in runs}
    assert len(out) == len(runs)
    return out


def raises_at(path: Path, line: int, match: str):
    return pytest.raises(InputError, match=f"^{path}:{line}: .*{match}")


def test_repetitions_are_the_samples_and_aggregates_are_not():
    runs = ADAPTER.parse(GB / "repetitions.json")
    assert [r.benchmark for r in runs] == [
        "BM_Accumulate/64", "BM_Accumulate/64 [cpu_time]", "BM_Accumulate/64 [elements]",
        "BM_Accumulate/64 [items_per_second]",
        "BM_Accumulate/512", "BM_Accumulate/512 [cpu_time]", "BM_Accumulate/512 [elements]",
        "BM_Accumulate/512 [items_per_second]",
        "BM_StringCopy", "BM_StringCopy [cpu_time]", "BM_StringCopy [bytes_per_second]", "BM_StringCopy [rate]"]
    r = by_name(runs)
    # Lines 49, 65, 81: real_time of the three repetitions; the _mean entry (line 98) is not one.
    np.testing.assert_array_equal(r["BM_Accumulate/64"].samples,
                                  [3.2570252787297235e+01, 3.5703198178099903e+01, 4.6543342794587005e+01])
    assert all(x.samples.size == 3 for x in runs)
    assert all(x.run == 0 and x.warmup == 0 for x in runs)
    agg = r["BM_Accumulate/64"].params["aggregates"]
    assert set(agg) == {"mean", "median", "stddev", "cv"}
    assert agg["mean"] == 3.8272264586661386e+01
    assert agg["mean"] == pytest.approx(r["BM_Accumulate/64"].samples.mean(), rel=1e-12)
    np.testing.assert_array_equal(r["BM_Accumulate/64 [elements]"].samples, [64, 64, 64])
    assert r["BM_Accumulate/64"].params["iterations"] == [337161] * 3
    assert r["BM_Accumulate/64"].params["repetitions"] == 3 and r["BM_Accumulate/64"].params["threads"] == 1


def test_units_and_directions():
    r = by_name(ADAPTER.parse(GB / "repetitions.json"))
    assert (r["BM_Accumulate/64"].unit, r["BM_Accumulate/64 [cpu_time]"].unit) == ("ns", "ns")
    assert (r["BM_StringCopy"].unit, r["BM_StringCopy [cpu_time]"].unit) == ("us", "us")  # ->Unit(kMicrosecond)
    assert r["BM_Accumulate/64 [items_per_second]"].unit == "items/s"
    assert r["BM_StringCopy [bytes_per_second]"].unit == "B/s"
    assert r["BM_Accumulate/64 [elements]"].unit == "elements"
    higher = {b for b, x in r.items() if x.direction == "higher"}
    assert higher == {"BM_Accumulate/64 [items_per_second]", "BM_Accumulate/512 [items_per_second]",
                      "BM_StringCopy [bytes_per_second]"}


def test_single_repetition_has_no_aggregates():
    r = by_name(ADAPTER.parse(GB / "single.json"))
    assert list(r["BM_Accumulate/64"].samples) == [SINGLE_REAL_TIME]
    assert all(x.samples.size == 1 and "aggregates" not in x.params for x in r.values())


def test_chunk_boundaries_do_not_change_the_result(monkeypatch):
    """Numbers, strings and lines cut by the read buffer anywhere are read whole."""
    want = ADAPTER.parse(GB / "repetitions.json")
    for chunk in (1, 7, 64, 1000):
        monkeypatch.setattr(_jsonstream, "_CHUNK", chunk)
        got = ADAPTER.parse(GB / "repetitions.json")
        assert [(g.benchmark, g.samples.tolist(), g.params) for g in got] == [
            (w.benchmark, w.samples.tolist(), w.params) for w in want]


# --- synthetic variations of the golden file -----------------------------------------------


def golden() -> dict:
    return json.loads((GB / "repetitions.json").read_text())


def dump(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "out.json"
    p.write_text(json.dumps(doc, indent=2))
    return p


def entry_line(p: Path, k: int) -> int:
    """The line of the opening brace of the ``k``-th entry of ``benchmarks`` in a :func:`dump`."""
    lines = p.read_text().splitlines()
    start = lines.index('  "benchmarks": [')
    return [i + 1 for i, line in enumerate(lines) if i > start and line == "    {"][k]


def test_failed_repetition_is_not_a_sample(tmp_path):
    doc = golden()
    doc["benchmarks"][1].update(error_occurred=True, error_message="oops")
    r = by_name(ADAPTER.parse(dump(tmp_path, doc)))
    assert r["BM_Accumulate/64"].samples.size == 2 and r["BM_Accumulate/64"].params["errors"] == ["oops"]


def skipped_with_error(doc: dict, name: str, message: str) -> dict:
    """``doc`` with every entry of ``name`` replaced by what Google Benchmark 1.7.1 writes for a
    benchmark whose function calls ``state.SkipWithError(message)`` (captured from a real run:
    one entry per repetition, time 0, no aggregates)."""
    mine = [e for e in doc["benchmarks"] if e["run_name"] == name and e["run_type"] == "iteration"]
    others = [e for e in doc["benchmarks"] if e["run_name"] != name]
    failed = [{"name": name, "family_index": e["family_index"],
               "per_family_instance_index": e["per_family_instance_index"], "run_name": name,
               "run_type": "iteration", "repetitions": e["repetitions"], "repetition_index": k,
               "threads": 1, "error_occurred": True, "error_message": message, "iterations": 0,
               "real_time": 0.0, "cpu_time": 0.0, "time_unit": e["time_unit"]} for k, e in enumerate(mine)]
    return {**doc, "benchmarks": others + failed}


def test_a_benchmark_skipped_with_error_is_a_failure_with_its_message(tmp_path):
    p = dump(tmp_path, skipped_with_error(golden(), "BM_StringCopy", "cannot allocate the buffer"))
    r = by_name(ADAPTER.parse(p))
    assert not [b for b in r if b.startswith("BM_StringCopy")]  # no sample of a repetition that failed
    assert r["BM_Accumulate/64"].samples.size == 3
    (failure,) = ADAPTER.failures(p)
    assert failure.benchmark == "BM_StringCopy" and (failure.unit, failure.direction) == ("us", "lower")
    assert failure.message == "BM_StringCopy ERROR OCCURRED: 'cannot allocate the buffer'"  # said once
    assert ADAPTER.failures(GB / "repetitions.json") == []


def test_a_benchmark_with_one_failed_repetition_is_not_a_failure(tmp_path):
    doc = golden()
    doc["benchmarks"][1].update(error_occurred=True, error_message="oops")
    assert ADAPTER.failures(dump(tmp_path, doc)) == []


def test_aggregates_only_is_an_error(tmp_path):
    doc = golden()
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["run_type"] == "aggregate"]
    p = dump(tmp_path, doc)
    with raises_at(p, entry_line(p, 0), "aggregates but no repetitions"):
        ADAPTER.parse(p)


def test_two_time_units_for_one_benchmark_is_an_error(tmp_path):
    doc = golden()
    doc["benchmarks"][2]["time_unit"] = "ms"
    p = dump(tmp_path, doc)
    first, third = entry_line(p, 0), entry_line(p, 2)
    with raises_at(p, third, f"`time_unit` of 'BM_Accumulate/64' is 'ms', it was 'ns' on line {first}"):
        ADAPTER.parse(p)


@pytest.mark.parametrize(("field", "value", "match"), [
    ("real_time", "fast", "`real_time` is not a number"),
    ("time_unit", "weeks", "`time_unit` of 'BM_Accumulate/64' is 'weeks'"),
    ("cpu_time", float("inf"), "`cpu_time` is not finite"),
])
def test_bad_field_names_the_entry_line(tmp_path, field, value, match):
    doc = golden()
    doc["benchmarks"][0][field] = value
    p = dump(tmp_path, doc)
    with raises_at(p, entry_line(p, 0), match):
        ADAPTER.parse(p)


def test_truncated_file_names_the_line(tmp_path):
    lines = (GB / "repetitions.json").read_text().splitlines(keepends=True)
    assert lines[64].startswith('      "real_time"')  # line 65
    p = tmp_path / "cut.json"
    p.write_text("".join(lines[:64]) + lines[64][:25])
    with raises_at(p, 65, "invalid JSON.*truncated"):
        ADAPTER.parse(p)
    p.write_text("".join(lines[:-3]))  # cut inside the last entry
    with raises_at(p, 386, "invalid JSON.*truncated"):
        ADAPTER.parse(p)
    p.write_text("".join(lines[:-2]))  # cut after a whole entry
    with raises_at(p, 387, "expected ',' or ']', found the end of the file"):
        ADAPTER.parse(p)
    # What a crash leaves is salvaged: the benchmarks written whole before the cut.
    whole = {r.benchmark for r in ADAPTER.parse(GB / "repetitions.json")}
    assert {r.benchmark for r in ADAPTER.salvage(p)[0]} == whole
    p.write_text("".join(lines[:64]) + lines[64][:25])
    assert {r.benchmark for r in ADAPTER.salvage(p)[0]} < whole
    for empty in ("", " \n"):  # a binary that wrote nothing: said so
        p.write_text(empty)
        with raises_at(p, 1, "empty output"):
            ADAPTER.parse(p)
        assert ADAPTER.salvage(p) == ([], [])


def test_syntax_error_names_its_line(tmp_path):
    lines = (GB / "repetitions.json").read_text().splitlines(keepends=True)
    lines[99] = lines[99].replace(",", ";")  # line 100
    p = tmp_path / "bad.json"
    p.write_text("".join(lines))
    with raises_at(p, 100, "invalid JSON: Expecting ',' delimiter"):
        ADAPTER.parse(p)


@pytest.mark.parametrize(("text", "match"), [
    ('{"context": {}, "benchmarks": {}}', "`benchmarks` is not an array"),
    ('{"context": {}, "benchmarks": [1]}', "expected an object, found int"),
    ('{"context": {}, "benchmarks": []} []', "extra data"),
    ("[]", "expected '\\{'"),
    ("", "empty output"),
])
def test_not_google_benchmark_json(tmp_path, text, match):
    p = tmp_path / "x.json"
    p.write_text(text)
    with pytest.raises(InputError, match=f"^{p}:1: .*{match}"):
        ADAPTER.parse(p)


def test_no_benchmarks(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"context": {}, "benchmarks": []}')
    with pytest.raises(InputError, match=f"^{p}: no benchmark entries"):
        ADAPTER.parse(p)


def test_not_utf8(tmp_path):
    p = tmp_path / "x.json"
    p.write_bytes(b'{"context": {"host_name": "\xff"}}')
    with pytest.raises(InputError, match=f"^{p}: not UTF-8"):
        ADAPTER.parse(p)


# --- sniffing -------------------------------------------------------------------------------


def head_of(path: Path) -> str:
    return path.read_bytes()[:64 * 1024].decode("utf-8", errors="replace")


def test_sniff_claims_its_golden_files():
    for name in ("repetitions.json", "single.json"):
        assert ADAPTER.sniff(head_of(GB / name), GB / name)


def test_sniff_rejects_canonical_and_other_tools(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("benchmark,version,run,iteration,value\nBM_x,v1,0,0,1.5\n")
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"benchmark": "BM_x", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n')
    others = [csv, jsonl] + sorted(p for p in GOLDEN.glob("*/*") if p.is_file() and p.parent.name != GB.name
                                   and p.suffix in (".json", ".txt", ".csv", ".jsonl", ".log", ".out"))
    assert {"go", "hyperfine"} <= {p.parent.name for p in others}
    for p in others:
        assert not ADAPTER.sniff(head_of(p), p), p


# --- the real library -----------------------------------------------------------------------


def test_live_google_benchmark(tmp_path):
    cxx = shutil.which("g++")
    if cxx is None or not HEADER.is_file():
        pytest.skip("g++ or Google Benchmark (libbenchmark-dev) not installed")
    exe = tmp_path / "tiny"
    subprocess.run([cxx, "-O2", "-o", str(exe), str(GB / "src" / "tiny.cc"), "-lbenchmark", "-lpthread"],
                   check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe), "--benchmark_format=json", "--benchmark_repetitions=2",
                          "--benchmark_min_time=0.001"], check=True, capture_output=True, text=True, timeout=60)
    p = tmp_path / "out.json"
    p.write_text(out.stdout)
    assert ADAPTER.sniff(head_of(p), p)
    r = by_name(ADAPTER.parse(p))
    assert {"BM_Accumulate/64", "BM_Accumulate/512", "BM_StringCopy"} <= set(r)
    assert all(x.samples.size == 2 for x in r.values())  # the aggregates are not samples
    assert r["BM_StringCopy"].unit == "us" and set(r["BM_StringCopy"].params["aggregates"]) >= {"mean", "median"}
    assert list(r["BM_Accumulate/512 [elements]"].samples) == [512.0, 512.0]


def test_a_cut_short_output_keeps_the_failures_written_before_the_cut(tmp_path):
    # A benchmark skipped with error, then the binary aborted further on: the failure is kept
    # with the results the salvage keeps.
    doc = skipped_with_error(golden(), "BM_StringCopy", "no buffer")
    text = json.dumps(doc, indent=2)
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.rindex("{")])  # the last entry cut away, the array unclosed
    with pytest.raises(InputError):
        ADAPTER.parse(cut)
    runs, failures = ADAPTER.salvage(cut)
    assert runs and [f.benchmark for f in failures] == ["BM_StringCopy"]
    assert "BM_StringCopy ERROR OCCURRED: 'no buffer'" in failures[0].message


def test_import_stores_a_benchmark_skipped_with_error_as_a_failed_run(tmp_path, capsys):
    from regbench.cli.main import main
    from regbench.store import Store

    p = tmp_path / "out.json"
    p.write_text(json.dumps(skipped_with_error(golden(), "BM_StringCopy", "no buffer")))
    db = str(tmp_path / "r.db")
    assert main(["--store", db, "import", str(p), "--format", "google-benchmark", "--version", "v1"]) == 0
    assert "1 benchmark the file reports as failed is stored as a failed run" in capsys.readouterr().out
    with Store(db) as store:
        [failed] = [r for r in store.runs() if r.status != "ok"]
        assert failed.benchmark == "BM_StringCopy" and failed.n_samples == 0
        assert "BM_StringCopy ERROR OCCURRED: 'no buffer'" in failed.stderr_tail
        assert {b.name: b.unit for b in store.benchmarks()}["BM_StringCopy"] == "us"
