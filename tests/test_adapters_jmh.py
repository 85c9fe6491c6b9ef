"""The JMH adapter against JMH 1.37's real ``-rf json`` output (tests/golden/adapters/jmh).

The golden files come from ``tests/golden/adapters/jmh/make_golden.sh`` (the tiny Maven project
in ``src/``); the numbers checked below were read from the files by hand.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters import cargobench, criterion, jmh  # noqa: F401  (register the adapters)
from regbench.adapters.base import SNIFF_BYTES, get_adapter, sniff_format
from regbench.errors import InputError

GOLDEN = Path(__file__).parent / "golden" / "adapters"
THRPT = GOLDEN / "jmh" / "thrpt_avgt_gc.json"
SAMPLE = GOLDEN / "jmh" / "sample.json"
NAME = "regbench.golden.SumBench.sum"


def parse(path):
    return get_adapter("jmh").parse(Path(path))


def by_name(runs):
    out: dict[str, list] = {}
    for r in runs:
        out.setdefault(r.benchmark, []).append(r)
    return out


def test_golden_thrpt_forks_are_runs_iterations_are_samples():
    runs = by_name(parse(THRPT))
    primary = runs[f"{NAME}(size=10, mode=thrpt)"]
    assert [r.run for r in primary] == [0, 1]  # -f 2: two forks, two runs
    # -wi 1 -i 3: the warm-up iteration is not in the file; three measured samples per fork.
    assert all(r.warmup == 0 and r.samples.shape == (3,) for r in primary)
    np.testing.assert_array_equal(primary[0].samples, [43578.90517332093, 182043.41004912514, 187721.35806319935])
    np.testing.assert_array_equal(primary[1].samples, [99162.36725956392, 190266.9470836606, 183000.92450603753])
    assert primary[0].unit == "ops/ms" and primary[0].direction == "higher"
    p = primary[0].params
    assert p["mode"] == "thrpt" and p["forks"] == 2 and p["warmupIterations"] == 1
    assert p["measurementIterations"] == 3 and p["params"] == {"size": "10"}
    assert p["score"] == 147628.98535581792 and p["jmhVersion"] == "1.37"
    # JMH's score is the mean of every fork's iterations.
    assert np.mean(np.concatenate([r.samples for r in primary])) == pytest.approx(p["score"], rel=1e-12)


def test_golden_avgt_is_lower_is_better_and_modes_do_not_collide():
    runs = by_name(parse(THRPT))
    # -bm thrpt,avgt with @Param size={10,100}: the mode joins the parameters in the name.
    primaries = sorted(n for n in runs if "[" not in n)
    assert primaries == [f"{NAME}(size={s}, mode={m})" for s in ("10", "100") for m in ("avgt", "thrpt")]
    avgt = runs[f"{NAME}(size=100, mode=avgt)"]
    assert [r.unit for r in avgt] == ["ms/op", "ms/op"] and {r.direction for r in avgt} == {"lower"}
    raw = json.loads(THRPT.read_text())
    entry = next(e for e in raw if e["mode"] == "avgt" and e["params"] == {"size": "100"})
    for r, fork in zip(avgt, entry["primaryMetric"]["rawData"], strict=True):
        np.testing.assert_array_equal(r.samples, fork)


def test_golden_secondary_metrics_are_their_own_benchmarks():
    runs = by_name(parse(THRPT))
    base = f"{NAME}(size=10, mode=thrpt)"
    for metric, unit in (("gc.alloc.rate", "MB/sec"), ("gc.alloc.rate.norm", "B/op"), ("gc.count", "counts")):
        rs = runs[f"{base} [{metric}]"]
        assert [r.run for r in rs] == [0, 1] and {r.unit for r in rs} == {unit}
        assert {r.direction for r in rs} == {"lower"} and all(r.samples.size == 3 for r in rs)
    assert runs[f"{base} [gc.alloc.rate]"][0].params["score"] == 0.0538622155235039
    # 4 entries x (1 primary + 3 gc metrics) x 2 forks
    assert sum(len(v) for v in runs.values()) == 32


def test_golden_sample_mode_one_weighted_mean_per_iteration():
    runs = by_name(parse(SAMPLE))
    primary = runs[f"{NAME}(size=10)"]  # one mode in the file: no mode in the name
    assert [r.run for r in primary] == [0, 1] and [r.samples.size for r in primary] == [3, 3]
    assert primary[0].unit == "ms/op" and primary[0].direction == "lower" and primary[0].params["mode"] == "sample"
    hist = json.loads(SAMPLE.read_text())[0]["primaryMetric"]["rawDataHistogram"]
    first = np.array(hist[0][0])
    # Fork 0, iteration 0 starts [2.8E-5, 4], [2.9E-5, 93], [3.0E-5, 213]: 477 invocations timed.
    assert first[:3].tolist() == [[2.8e-05, 4], [2.9e-05, 93], [2.9999999999999997e-05, 213]]
    assert primary[0].params["histogram_counts"][0] == 477 == int(first[:, 1].sum())
    assert primary[0].samples[0] == pytest.approx((first[:, 0] * first[:, 1]).sum() / 477, rel=1e-12)
    # Over all forks and iterations the invocation-weighted mean is JMH's score, 9.482184397163117E-5.
    counts = np.array([r.params["histogram_counts"] for r in primary], dtype=float)
    means = np.array([r.samples for r in primary])
    assert (means * counts).sum() / counts.sum() == pytest.approx(9.482184397163117e-05, rel=1e-12)
    # JMH's per-iteration percentiles are secondary metrics.
    p0 = runs[f"{NAME}(size=10) [p0.00]"][0]
    assert p0.samples.tolist() == [2.8e-05, 2.9999999999999997e-05, 2.9999999999999997e-05]


def test_golden_each_forks_warmup_and_iteration_length_are_its_timing():
    # -wi 1 -w 100ms -r 100ms (thrpt_avgt_gc.json), -r 20ms (sample.json): what a fork costs
    # beyond its measured iterations, which `regbench optimize` prices a run with.
    from regbench.model import ToolTiming

    runs = by_name(parse(THRPT))
    for name, rs in runs.items():
        if "[" in name:  # a secondary metric is measured in its benchmark's forks: no cost of its own
            assert {r.timing for r in rs} == {None} and {r.weights is None for r in rs} == {True}
        else:
            assert {r.timing for r in rs} == {ToolTiming(processes=1, warmup_seconds=0.1, iteration_seconds=0.1)}
            assert {r.weights is None for r in rs} == {True}  # rawData: every iteration counts alike
    primary = by_name(parse(SAMPLE))[f"{NAME}(size=10)"]
    assert {r.timing for r in primary} == {ToolTiming(1, 0.1, 0.02)}
    # Sample mode: each iteration weighs its timed invocations, by which JMH pools its score.
    assert [r.weights.tolist() for r in primary] == [[float(n) for n in r.params["histogram_counts"]] for r in primary]


@pytest.mark.parametrize(("fields", "timing"), [
    ({"warmupIterations": 5, "warmupTime": "10 s", "measurementTime": "1 min"}, (1, 50.0, 60.0)),
    ({"warmupIterations": 0, "warmupTime": "200 ms", "measurementTime": "500 us"}, (1, 0.0, 0.0005)),
    ({"warmupIterations": 2, "warmupTime": "soon", "measurementTime": "1 s"}, None),
    ({"warmupTime": "1 s", "measurementTime": "1 s"}, None),
    ({"warmupIterations": 2, "warmupTime": "1 s", "measurementTime": "1 s", "mode": "ss"}, None),
])
def test_timing_is_read_from_jmhs_time_values_or_left_out(tmp_path, fields, timing):
    # Single shot (ss) iterations last one call, whatever measurementTime says: no timing.
    entry = {"benchmark": "a.B.c", "mode": "avgt", "primaryMetric": {"scoreUnit": "us/op", "rawData": [[3.0]]},
             **fields}
    p = tmp_path / "t.json"
    p.write_text(json.dumps([entry]))
    (run,) = parse(p)
    assert (None if run.timing is None else (run.timing.processes, run.timing.warmup_seconds,
                                             run.timing.iteration_seconds)) == timing


@pytest.mark.parametrize("path", [THRPT, SAMPLE])
def test_sniff_claims_jmh_files(path):
    assert sniff_format(path) == "jmh"


@pytest.mark.parametrize("text", [
    "benchmark,version,run,iteration,value\nb,v1,0,0,1.5\n",
    '{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n',
    '[{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}]\n',
    "test sum_10 ... bench:          10.60 ns/iter (+/- 3.70)\n",
])
def test_sniff_rejects_other_formats(text):
    assert not get_adapter("jmh").sniff(text, Path("x"))


def test_sniff_rejects_criterion_and_cargo_bench_golden_files():
    adapter = get_adapter("jmh")
    for path in [GOLDEN / "criterion/results/sum_plain/new/sample.json", GOLDEN / "cargo-bench/single.txt"]:
        assert not adapter.sniff(path.read_text()[:SNIFF_BYTES], path)


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def test_truncated_file_names_file_and_last_line(tmp_path):
    text = THRPT.read_text()
    cut = text[: len(text) // 2]
    p = tmp_path / "cut.json"
    p.write_text(cut)
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:(\d+): not valid JSON: the file ends") as info:
        parse(p)
    assert info.value.line == cut.count("\n") + 1


def test_syntax_error_in_a_later_benchmark_is_reported_at_its_line(tmp_path):
    text = THRPT.read_text()
    # Break the third benchmark: nothing from the first two may come back.
    third = [m.start() for m in re.finditer(r'"rawData" : \[', text)][8]
    bad = text[:third] + '"rawData" : [ oops,' + text[third + len('"rawData" : ['):]
    p = tmp_path / "bad.json"
    p.write_text(bad)
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:{_line_of(bad, 'oops')}: not valid JSON"):
        parse(p)


def test_structural_error_is_reported_at_its_benchmark(tmp_path):
    raw = json.loads(THRPT.read_text())
    raw[1]["primaryMetric"]["rawData"][1][2] = "fast"
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(raw, indent=4))
    start = [m.start() for m in re.finditer(r'\n    \{', p.read_text())][1]
    line = p.read_text()[:start].count("\n") + 2
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:{line}: benchmark "
                                         r"'regbench.golden.SumBench.sum\(size=100\)': "
                                         r"`rawData` of fork 1 must be a list of numbers"):
        parse(p)


@pytest.mark.parametrize(("text", "message"), [
    ("", r":1: empty file"),
    ("[]", r":1: no benchmarks"),
    ('{"benchmark": "x"}', r":1: not a JMH JSON result"),
    ("# JMH version: 1.37\n# VM version: JDK 21\n\nBenchmark result is saved to result.json\n",
     r":1: not a JMH JSON result but JMH's console report: have JMH write its JSON to the file regbench reads "
     r"\(`-rf json -rff \{output\}` in the command\)"),
    ('[{"benchmark": "x", "mode": "thrpt"}]', r":1: benchmark 'x': missing `primaryMetric`"),
    ('[{"benchmark": "x", "mode": "fast", "primaryMetric": {}}]', r":1: benchmark 'x': `mode` must be"),
    ('[{"benchmark": "x", "mode": "avgt", "primaryMetric": {"scoreUnit": "ns/op", "rawData": [[]]}}]',
     r":1: benchmark 'x': fork 0 has no measurement iterations"),
    ('[{"benchmark": "x", "mode": "avgt", "primaryMetric": {"scoreUnit": "ns/op", "rawData": [[NaN]]}}]',
     r":1: benchmark 'x': fork 0 has a value that is not a finite number"),
    ('[{"benchmark": "x", "mode": "sample", "primaryMetric": {"scoreUnit": "ns/op", '
     '"rawDataHistogram": [[[[1.0, -2]]]]}}]', r":1: benchmark 'x': `rawDataHistogram` of fork 0, iteration 0"),
    ('[{"benchmark": "x", "mode": "avgt", "primaryMetric": {"scoreUnit": "ns/op"}}]',
     r":1: benchmark 'x': `primaryMetric` has neither"),
    ('[\n{"benchmark": "x", "mode": "avgt", "primaryMetric": {"scoreUnit": "ns/op", "rawData": [[1]]}}\n]\n]',
     r":4: not valid JSON: extra data"),
])
def test_invalid_files(tmp_path, text, message):
    p = tmp_path / "x.json"
    p.write_text(text)
    with pytest.raises(InputError, match=re.escape(str(p)) + message):
        parse(p)


def test_minimal_file_without_params_or_secondary_metrics(tmp_path):
    p = tmp_path / "ss.json"
    p.write_text('[{"benchmark": "a.B.c", "mode": "ss", "primaryMetric": {"scoreUnit": "us/op", '
                 '"rawData": [[3, 2.5], [4]]}, "secondaryMetrics": {"\u00b7stack": {"scoreUnit": ""}}}]')
    runs = parse(p)
    assert [(r.benchmark, r.run, r.samples.tolist(), r.direction) for r in runs] == [
        ("a.B.c", 0, [3.0, 2.5], "lower"), ("a.B.c", 1, [4.0], "lower")]


def test_golden_console_failures_are_the_benchmarks_that_threw():
    # FailBench (make_golden.sh): broken(size=2) throws in its first warm-up iteration, late(size=1)
    # in its first measured one, after a warm-up iteration printed its unit.  JMH leaves both out
    # of the JSON and exits with status 0; only its console output names them.
    golden = GOLDEN / "jmh"
    adapter = get_adapter("jmh")
    assert sorted(r.benchmark for r in parse(golden / "failing.json")) == [
        "regbench.golden.FailBench.broken(size=1)", "regbench.golden.FailBench.late(size=2)"]
    assert adapter.failures(golden / "failing.json") == []
    failures = {f.benchmark: f for f in adapter.console_failures(golden / "failing.out")}
    assert sorted(failures) == ["regbench.golden.FailBench.broken(size=2)", "regbench.golden.FailBench.late(size=1)"]
    broken = failures["regbench.golden.FailBench.broken(size=2)"]
    assert (broken.unit, broken.direction, broken.run) == (None, "higher", 0)  # Throughput; no unit printed
    lines = broken.message.splitlines()
    assert lines[:2] == ["JMH: regbench.golden.FailBench.broken(size=2) failed:",
                         "java.lang.IllegalStateException: broken for size 2"]
    assert lines[2].startswith("\tat regbench.golden.FailBench.broken(FailBench.java:") and len(lines) <= 13
    late = failures["regbench.golden.FailBench.late(size=1)"]
    assert (late.unit, late.direction) == ("us/op", "lower")
    assert "java.lang.UnsupportedOperationException: late failure" in late.message
    assert "Caused by: java.lang.ArithmeticException: root cause" in late.message


def test_console_failures_of_output_without_failures(tmp_path):
    adapter = get_adapter("jmh")
    assert adapter.console_failures(tmp_path / "missing.out") == []
    text = (GOLDEN / "jmh" / "failing.out").read_text()
    quiet = tmp_path / "ok.out"
    quiet.write_text(text.replace("<failure>", "1.0 ops/ms"))
    assert adapter.console_failures(quiet) == []


# --- live: build and run the tiny project with the real JMH --------------------------------------

LIVE_DIR = Path(tempfile.gettempdir()) / "regbench-live-jmh"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None,
                    reason="needs Maven (mvn) and java on PATH to build and run the JMH project")
def test_live_jmh_run_is_imported(tmp_path):
    # Built in a cache directory under the system temp (copy2 keeps mtimes: a second run is
    # an up-to-date Maven build); the result goes to tmp_path.
    proj = LIVE_DIR / "proj"
    shutil.copytree(GOLDEN / "jmh" / "src", proj, dirs_exist_ok=True)
    subprocess.run(["mvn", "-q", "-B", "package", "-DskipTests"], cwd=proj, check=True,
                   capture_output=True, timeout=240)
    out = tmp_path / "live.json"
    # -Djmh.ignoreLock: JMH refuses to start while another JMH holds its lock file, and the
    # suite's two workers may run two live JMH tests at once.
    subprocess.run(["java", "-Djmh.ignoreLock=true", "-cp", f"target/classes{os.pathsep}target/lib/*",
                    "org.openjdk.jmh.Main",
                    "regbench.golden.SumBench", "-f", "2", "-wi", "1", "-i", "2", "-w", "50ms", "-r", "50ms",
                    "-p", "size=10", "-bm", "avgt", "-rf", "json", "-rff", str(out)],
                   cwd=proj, check=True, capture_output=True, timeout=120)
    assert sniff_format(out) == "jmh"
    runs = parse(out)
    assert [(r.benchmark, r.run, r.samples.size, r.direction) for r in runs] == [
        (f"{NAME}(size=10)", 0, 2, "lower"), (f"{NAME}(size=10)", 1, 2, "lower")]
    assert all(np.isfinite(r.samples).all() and (r.samples > 0).all() for r in runs)


# --- sample mode: summary shows JMH's own, pooled, score beside the mean of the iterations --------

def test_summary_of_an_imported_sample_mode_file_shows_jmhs_score(tmp_path, capsys):
    # JMH's sample-mode score pools every timed invocation of every iteration and fork (9.482e-5
    # ms/op in the golden file); the statistics use each iteration's mean, each weighing alike,
    # whose mean is 9.358e-5 here (iterations of 411 to 743 invocations).  `summary` shows both.
    from regbench.cli.main import main

    db = str(tmp_path / "s.db")
    assert main(["--store", db, "import", str(SAMPLE), "--format", "jmh", "--version", "v1"]) == 0
    capsys.readouterr()
    name = f"{NAME}(size=10)"
    assert main(["--store", db, "summary", "--benchmark", name, "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    means = np.concatenate([r.samples for r in by_name(parse(SAMPLE))[name]])
    assert row["tool_score"] == pytest.approx(9.482184397163117e-05, rel=1e-12)  # JMH's primaryMetric.score
    assert row["mean"] == pytest.approx(means.mean(), rel=1e-12)  # two forks of 3 iterations: the iterations' mean
    assert abs(row["mean"] - row["tool_score"]) > 1e-3 * row["tool_score"]
    # Other series (its percentiles, p0.00 ...) have no weights: no score of the tool's.
    assert main(["--store", db, "summary", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["benchmark"] for r in rows if "tool_score" in r] == [name]
    assert main(["--store", db, "summary", "--benchmark", name]) == 0
    out = capsys.readouterr().out
    assert "tool's score" in out and "94.82 ns/op" in out
    assert "JMH's own score of a sample-mode benchmark, every invocation it timed pooled" in " ".join(out.split())
