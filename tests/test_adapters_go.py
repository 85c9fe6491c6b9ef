"""The ``go`` and ``go-json`` adapters against output captured from the real ``go test``.

Golden files: tests/golden/adapters/go/ (regenerate with its make_golden.sh).  The numbers below
were read by hand from those files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters.gotest import GoJsonAdapter, GoTextAdapter
from regbench.errors import InputError

GOLDEN = Path(__file__).parent / "golden" / "adapters"
GO = GOLDEN / "go"
PKG = "example.com/regbenchgolden"
TEXT, JSONL = GoTextAdapter(), GoJsonAdapter()


def by_name(runs):
    out = {r.benchmark: r for r in runs}
    assert len(out) == len(runs), "one run per benchmark in one invocation"
    return out


def raises_at(path: Path, line: int, match: str):
    """An InputError whose message is ``PATH:LINE: ...`` and matches ``match``."""
    return pytest.raises(InputError, match=f"^{path}:{line}: .*{match}")


# --- golden files ---------------------------------------------------------------------------


def test_text_golden_runs_samples_units():
    runs = TEXT.parse(GO / "bench.txt")
    assert [r.benchmark for r in runs] == [
        "BenchmarkJoin-2", "BenchmarkJoin-2 [B/op]", "BenchmarkJoin-2 [allocs/op]",
        "BenchmarkSum-2", "BenchmarkSum-2 [MB/s]", "BenchmarkSum-2 [bytes/iter]",
        "BenchmarkSum-2 [B/op]", "BenchmarkSum-2 [allocs/op]"]
    r = by_name(runs)
    # bench.txt lines 5-7 and 8-10: the three -count repetitions are the samples of one run.
    np.testing.assert_array_equal(r["BenchmarkJoin-2"].samples, [79.93, 95.76, 97.98])
    np.testing.assert_array_equal(r["BenchmarkSum-2"].samples, [965.5, 1634, 601.6])
    np.testing.assert_array_equal(r["BenchmarkSum-2 [MB/s]"].samples, [1060.64, 626.75, 1702.11])
    np.testing.assert_array_equal(r["BenchmarkSum-2 [bytes/iter]"].samples, [1024, 1024, 1024])
    np.testing.assert_array_equal(r["BenchmarkJoin-2 [B/op]"].samples, [16, 16, 16])
    np.testing.assert_array_equal(r["BenchmarkJoin-2 [allocs/op]"].samples, [1, 1, 1])
    assert {x.unit for x in runs} == {"ns/op", "B/op", "allocs/op", "MB/s", "bytes/iter"}
    assert r["BenchmarkJoin-2"].unit == "ns/op"
    assert r["BenchmarkSum-2 [bytes/iter]"].unit == "bytes/iter"
    assert [x.benchmark for x in runs if x.direction == "higher"] == ["BenchmarkSum-2 [MB/s]"]
    for x in runs:
        assert x.run == 0 and x.warmup == 0 and x.samples.dtype == np.float64
        assert x.params["package"] == PKG
        assert x.params["iterations"] == [2000, 2000, 2000]
        assert x.params["goos"] == "linux" and x.params["goarch"] == "amd64"


def test_json_golden_reassembles_split_lines():
    events = [json.loads(line) for line in (GO / "bench.json").read_text().splitlines()]
    # The case the reassembly exists for is in the file: a result line split over two events,
    # the second repetition's events carrying no Test.
    split = [e for e in events if e.get("Output") == "BenchmarkJoin-2   \t"]
    assert split and "Test" not in split[0]
    runs = JSONL.parse(GO / "bench.json")
    r = by_name(runs)
    assert list(r) == [x.benchmark for x in TEXT.parse(GO / "bench.txt")]
    np.testing.assert_array_equal(r["BenchmarkJoin-2"].samples, [103.4, 89.06, 90.13])
    np.testing.assert_array_equal(r["BenchmarkSum-2"].samples, [417.1, 425.5, 416.0])
    np.testing.assert_array_equal(r["BenchmarkSum-2 [MB/s]"].samples, [2454.78, 2406.65, 2461.49])
    assert r["BenchmarkSum-2 [MB/s]"].direction == "higher"
    assert all(x.params["package"] == PKG and x.run == 0 for x in runs)


def test_verbose_text_skips_bare_name_lines():
    r = by_name(TEXT.parse(GO / "bench-v.txt"))
    assert set(r) == {"BenchmarkJoin-2", "BenchmarkSum-2", "BenchmarkSum-2 [MB/s]", "BenchmarkSum-2 [bytes/iter]"}
    np.testing.assert_array_equal(r["BenchmarkJoin-2"].samples, [79.68, 108.1])
    np.testing.assert_array_equal(r["BenchmarkSum-2"].samples, [639.8, 1112])


# --- failed benchmarks (golden files of failing/src: go test exited 1, or 2 for a panic) ----------

FAILING = GO / "failing"


def failures_of(adapter, path: Path) -> dict:
    out = {f.benchmark: f for f in adapter.failures(path)}
    assert len(out) == len(adapter.failures(path)), "one failure per benchmark"
    return out


@pytest.mark.parametrize(("name", "adapter"), [("fail.txt", TEXT), ("fail-v.txt", TEXT), ("fail.json", JSONL)])
def test_failed_benchmarks_are_named_as_their_series_with_the_tools_message(name, adapter):
    path = FAILING / name
    # The benchmarks that succeeded in the same invocation are still results.
    assert {r.benchmark for r in adapter.parse(path) if "[" not in r.benchmark} == {
        "BenchmarkJoin-2", "BenchmarkSub/ok-2", "BenchmarkZ-2"}
    f = failures_of(adapter, path)
    # BenchmarkBroken failed on its first call, printed without -2: named as its series would be.
    # The parent BenchmarkSub's FAIL only repeats its sub-benchmark's: not a failure of its own.
    assert set(f) == {"BenchmarkBroken-2", "BenchmarkLate-2", "BenchmarkSub/bad-2"}
    broken = f["BenchmarkBroken-2"].message.splitlines()
    assert broken[0] == "--- FAIL: BenchmarkBroken"
    assert [line.strip() for line in broken[1:]] == ["failing_test.go:27: building the tree",
                                                     "failing_test.go:28: degree must be at least 2"]
    assert "failing_test.go:38: too many iterations: 100" in f["BenchmarkLate-2"].message
    assert f["BenchmarkSub/bad-2"].message.endswith("failing_test.go:50: wrong answer 42")
    assert all(x.unit == "ns/op" and x.direction == "lower" and x.run == 0 for x in f.values())


def test_a_failure_on_the_first_call_counts_for_every_cpu():
    # -cpu 1,2: a benchmark failing on its first call runs for neither; one failing in a
    # repetition is printed with each name it ran under.
    f = failures_of(TEXT, FAILING / "fail-cpus.txt")
    assert set(f) == {"BenchmarkBroken", "BenchmarkBroken-2", "BenchmarkLate", "BenchmarkLate-2",
                      "BenchmarkSub/bad", "BenchmarkSub/bad-2"}


def test_a_panic_is_the_failure_of_the_benchmark_it_follows():
    path = FAILING / "panic.txt"
    # Go prints "BenchmarkLate-2  0  NaN ns/op" before the panic: no result, not an error.
    assert {r.benchmark for r in TEXT.parse(path)} == {"BenchmarkJoin-2"}
    f = failures_of(TEXT, path)
    assert set(f) == {"BenchmarkBroken-2", "BenchmarkLate-2"}
    late = f["BenchmarkLate-2"].message.splitlines()
    assert late[0] == "panic: index out of range in Late"
    assert any("failing_test.go:36" in line for line in late)
    assert not any(line.startswith(("exit status", "FAIL")) for line in late)


def test_a_panic_printed_without_a_name_is_the_invocations():
    # Without -v, a panic on a benchmark's first call may come before its name is printed: it
    # would be wrong to give it to BenchmarkJoin, whose results are the line before.
    path = FAILING / "panic-first.txt"
    assert {r.benchmark for r in TEXT.parse(path)} == {"BenchmarkJoin-2"}
    (f,) = TEXT.failures(path)
    assert f.benchmark is None and f.message.startswith("panic: nil tree\n")


def test_a_failure_whose_suffix_cannot_be_told_is_the_invocations(tmp_path):
    p = write(tmp_path, HEAD.format(pkg="a") + "--- FAIL: BenchmarkX\n    x_test.go:7: bad\nFAIL\n")
    assert TEXT.parse(p) == []
    (f,) = TEXT.failures(p)
    assert f.benchmark is None and f.message == "--- FAIL: BenchmarkX\n    x_test.go:7: bad"


def test_log_lines_of_a_benchmark_that_passed_are_not_a_failures(tmp_path):
    # b.Log of a passing benchmark prints "--- BENCH:" and indented lines; the FAIL after it
    # (failed on its first call, without -v) takes only the lines that follow it.
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkA-2 \t 10\t 5.0 ns/op\n--- BENCH: BenchmarkA-2\n"
              "    a_test.go:3: hello\n--- FAIL: BenchmarkB\n    b_test.go:9: broken\nFAIL\n")
    (f,) = TEXT.failures(p)
    assert f.benchmark == "BenchmarkB-2" and f.message == "--- FAIL: BenchmarkB\n    b_test.go:9: broken"


def test_a_sub_benchmark_whose_own_name_ends_in_a_number_gets_the_suffix(tmp_path):
    # "workers-2" is the sub-benchmark's own name: failing on its first call (no -v), it is
    # printed unsuffixed, and its results would have gone to BenchmarkX/workers-2-2.
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkA-2 \t 100\t 10.0 ns/op\n"
              "BenchmarkX/workers-1-2 \t 100\t 10.0 ns/op\n--- FAIL: BenchmarkX/workers-2\n"
              "    x_test.go:10: boom\n--- FAIL: BenchmarkX\nFAIL\n")
    (f,) = TEXT.failures(p)
    assert f.benchmark == "BenchmarkX/workers-2-2" and f.message == "--- FAIL: BenchmarkX/workers-2\n    x_test.go:10: boom"
    # With -v, a later repetition's failure is printed suffixed after the bare name: kept as is.
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkA\nBenchmarkA-2 \t 100\t 10.0 ns/op\nBenchmarkX\n"
              "BenchmarkX/workers-2\n    x_test.go:10: too many\n--- FAIL: BenchmarkX/workers-2-2\n"
              "--- FAIL: BenchmarkX\nFAIL\n", "v.txt")
    (f,) = TEXT.failures(p)
    assert f.benchmark == "BenchmarkX/workers-2-2"
    # ... and a first call's failure under -v (its bare name, unsuffixed) gets the suffix.
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkA\nBenchmarkA-2 \t 100\t 10.0 ns/op\nBenchmarkX\n"
              "BenchmarkX/workers-2\n    x_test.go:10: boom\n--- FAIL: BenchmarkX/workers-2\n"
              "--- FAIL: BenchmarkX\nFAIL\n", "v1.txt")
    (f,) = TEXT.failures(p)
    assert f.benchmark == "BenchmarkX/workers-2-2"


def test_other_adapters_report_no_failures():
    from regbench.adapters.base import get_adapter

    assert get_adapter("jmh").failures(GOLDEN / "go" / "bench.txt") == []


# --- mapping rules on small inputs -----------------------------------------------------------

HEAD = "goos: linux\ngoarch: amd64\npkg: {pkg}\n"


def write(tmp_path: Path, text: str, name: str = "out.txt") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_gomaxprocs_suffix_is_part_of_the_name(tmp_path):
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkX \t 10\t 5.0 ns/op\nBenchmarkX-4 \t 10\t 2.0 ns/op\n"
              "BenchmarkX/n=8-4 \t 10\t 3.0 ns/op\t 7 widgets/s\n")
    r = by_name(TEXT.parse(p))
    assert set(r) == {"BenchmarkX", "BenchmarkX-4", "BenchmarkX/n=8-4", "BenchmarkX/n=8-4 [widgets/s]"}
    assert r["BenchmarkX/n=8-4 [widgets/s]"].direction == "higher"


def test_a_line_without_ns_op_gives_only_secondary_metrics(tmp_path):
    p = write(tmp_path, "BenchmarkNoNs-2 \t 100\t 3.000 widgets/s\n")
    (run,) = TEXT.parse(p)
    assert run.benchmark == "BenchmarkNoNs-2 [widgets/s]" and run.unit == "widgets/s"


def test_second_invocation_of_a_package_is_a_second_run(tmp_path):
    once = HEAD.format(pkg="a") + "BenchmarkX-2 \t 10\t 5.0 ns/op\nBenchmarkX-2 \t 10\t 6.0 ns/op\nPASS\n"
    runs = TEXT.parse(write(tmp_path, once + once.replace("5.0", "7.0")))
    assert [(r.run, list(r.samples)) for r in runs] == [(0, [5.0, 6.0]), (1, [7.0, 6.0])]


def test_failed_and_skipped_benchmarks_are_not_results(tmp_path):
    p = write(tmp_path, HEAD.format(pkg="a") + "--- FAIL: BenchmarkF\n    x_test.go:7: bad\n"
              "BenchmarkP-2 \tpanic: boom\nBenchmarkX-2 \t 10\t 5.0 ns/op\nFAIL\n")
    assert [r.benchmark for r in TEXT.parse(p)] == ["BenchmarkX-2"]


def test_same_name_in_two_packages_is_named_with_each_package(tmp_path):
    # It was an error ("import one package per file"); tests/test_adapters_go_packages.py has the rest.
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkX-2 \t 10\t 5.0 ns/op\n"
              + HEAD.format(pkg="b") + "BenchmarkX-2 \t 10\t 6.0 ns/op\n")
    assert [(r.benchmark, list(r.samples)) for r in TEXT.parse(p)] == [
        ("BenchmarkX-2 (a)", [5.0]), ("BenchmarkX-2 (b)", [6.0])]


# --- errors ---------------------------------------------------------------------------------


def test_truncated_text_names_the_cut_line(tmp_path):
    text = (GO / "bench.txt").read_text()
    cut = text[:text.index("1634 ns/op") + 4]  # line 9 ends in the middle of its measurements
    p = write(tmp_path, cut)
    with raises_at(p, 9, "cut short"):
        TEXT.parse(p)


@pytest.mark.parametrize(("line", "match"), [
    ("BenchmarkX-2 \t 10\t abc ns/op\n", "'abc' before 'ns/op' is not a number"),
    ("BenchmarkX-2 \t 10\t 5.0 ns/op\t 16\n", "value '16' has no unit"),
    ("BenchmarkX-2 \t 10\n", "no measurement after b.N"),
    ("BenchmarkX-2 \t 10\t NaN ns/op\n", "'NaN' before 'ns/op' is not finite"),
])
def test_corrupt_text_line(tmp_path, line, match):
    p = write(tmp_path, HEAD.format(pkg="a") + "BenchmarkY-2 \t 10\t 5.0 ns/op\n" + line + "PASS\n")
    with raises_at(p, 5, match):
        TEXT.parse(p)


def test_corrupt_json_event_names_its_line(tmp_path):
    lines = (GO / "bench.json").read_text().splitlines(keepends=True)
    lines[6] = lines[6][:30] + "\n"
    p = write(tmp_path, "".join(lines), "out.json")
    with raises_at(p, 7, "not a go test -json event"):
        JSONL.parse(p)


def test_truncated_json_names_the_last_line(tmp_path):
    text = (GO / "bench.json").read_text()
    lines = text.splitlines(keepends=True)
    p = write(tmp_path, "".join(lines[:9]) + lines[9][:-20], "out.json")
    with raises_at(p, 10, "cut short"):
        JSONL.parse(p)


def test_json_stream_that_ends_mid_result_line(tmp_path):
    # The benchmark printed its name, then the process was killed: no numbers ever came.
    lines = (GO / "bench.json").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("Output") == "BenchmarkJoin-2   \t")
    p = write(tmp_path, "".join(lines[:at]) + lines[at].replace("\\t", "\\t    2000\\t 5"), "out.json")
    with raises_at(p, at + 1, "cut short"):
        JSONL.parse(p)


def test_bad_number_in_json_output_names_the_event(tmp_path):
    lines = (GO / "bench.json").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "89.06 ns/op" in line)
    lines[at] = lines[at].replace("89.06 ns/op", "8x.06 ns/op")
    p = write(tmp_path, "".join(lines), "out.json")
    # The line starts in the event before (the name), so that is the line named.
    with raises_at(p, at, "'8x.06' before 'ns/op' is not a number"):
        JSONL.parse(p)


# --- sniffing -------------------------------------------------------------------------------


def head_of(path: Path) -> str:
    return path.read_bytes()[:64 * 1024].decode("utf-8", errors="replace")


CANONICAL_CSV = "benchmark,version,run,iteration,value\nBenchmarkX-2,v1,0,0,1.5\n"
CANONICAL_JSONL = '{"benchmark": "BenchmarkX-2", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n'


@pytest.mark.parametrize(("name", "adapter"), [("bench.txt", TEXT), ("bench-v.txt", TEXT), ("bench.json", JSONL)])
def test_sniff_claims_only_its_own(name, adapter):
    for a in (TEXT, JSONL):
        assert a.sniff(head_of(GO / name), GO / name) is (a is adapter), (a.name, name)


def test_sniff_rejects_canonical_and_other_tools(tmp_path):
    others = [write(tmp_path, CANONICAL_CSV, "c.csv"), write(tmp_path, CANONICAL_JSONL, "c.jsonl")]
    # Every other tool's golden file (Google Benchmark, hyperfine and whatever else is there).
    others += sorted(p for p in GOLDEN.glob("*/*") if p.is_file() and p.parent.name != "go"
                     and p.suffix in (".json", ".txt", ".csv", ".jsonl", ".log", ".out"))
    assert any(p.parent.name == "google-benchmark" for p in others)
    assert any(p.parent.name == "hyperfine" for p in others)
    for p in others:
        for a in (TEXT, JSONL):
            assert not a.sniff(head_of(p), p), (a.name, p)


# --- the real tool --------------------------------------------------------------------------


def test_live_go_test(tmp_path):
    go = shutil.which("go")
    if go is None:
        pytest.skip("go not installed")
    src = tmp_path / "src"
    shutil.copytree(GO / "src", src)
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}
    argv = [go, "test", "-vet=off", "-run", "^$", "-bench", ".", "-count", "2", "-benchmem", "-benchtime", "100x", "."]
    text = subprocess.run(argv, cwd=src, env=env, capture_output=True, text=True, timeout=120, check=True)
    events = subprocess.run([*argv, "-json"], cwd=src, env=env, capture_output=True, text=True, timeout=60,
                            check=True)
    (tmp_path / "out.txt").write_text(text.stdout)
    (tmp_path / "out.json").write_text(events.stdout)
    for adapter, name in ((TEXT, "out.txt"), (JSONL, "out.json")):
        p = tmp_path / name
        assert adapter.sniff(head_of(p), p)
        r = by_name(adapter.parse(p))
        join = next(b for b in r if b.startswith("BenchmarkJoin") and "[" not in b)
        assert r[join].samples.size == 2 and (r[join].samples > 0).all()
        assert r[join].params["iterations"] == [100, 100]
        assert r[f"{join} [B/op]"].samples.size == 2 and r[f"{join} [B/op]"].unit == "B/op"
        total = next(b for b in r if b.startswith("BenchmarkSum") and b.endswith("[bytes/iter]"))
        assert list(r[total].samples) == [1024.0, 1024.0]
