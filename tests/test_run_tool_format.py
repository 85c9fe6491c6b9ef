"""Command benchmarks that run a real benchmark tool (`format = "NAME"`): each invocation is one
run, every benchmark the tool reports is its own series, resume knows what is done."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from regbench.config import load_config
from regbench.errors import ConfigError
from regbench.run.campaign import run_campaign
from regbench.store import Store

from test_run_campaign import write_config

GOLDEN = Path(__file__).parent / "golden" / "adapters"
GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_go_test_as_a_command_benchmark(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(GOLDEN / "go" / "src", proj)
    cfg = write_config(proj, 'name = "tiny"\n', [{
        "name": "gobench", "format": "go", "runs": 2, "timeout": 120,
        "command": [GO, "test", "-run", "^$", "-bench", ".", "-count", "3", "-benchmem", "-benchtime", "200x", "."],
        "env": {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"},
    }])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["ok"] == 2
        series = {s.benchmark: s for s in store.load_series()}
        assert any(name.startswith("gobench/BenchmarkJoin") and "[" not in name for name in series)
        assert any(name.endswith("[allocs/op]") for name in series)
        for s in series.values():
            assert [len(runs) for runs in s.runs] == [2]  # two invocations = two runs
            assert all(r.size == 3 for r in s.runs[0])  # -count 3: three samples each
        again = run_campaign(load_config(cfg), store, seed=2)  # resume: both invocations are done
        assert again.trials_skipped == 2 and sum(again.counts.values()) == 0


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_a_failed_go_benchmark_is_a_result_and_the_others_are_kept(tmp_path, go_cache):
    # A real go test package (golden/adapters/go/failing/src) where BenchmarkBroken calls b.Fatal,
    # BenchmarkSub/bad b.Errorf and BenchmarkLate fails in its timed repetitions, beside benchmarks
    # that succeed: go test prints their results, then exits with status 1.
    proj = tmp_path / "proj"
    shutil.copytree(GOLDEN / "go" / "failing" / "src", proj)
    cfg = write_config(proj, 'name = "tiny"\n', [{
        "name": "gobench", "format": "go", "runs": 2, "timeout": 120, "iterations": 2, "warmup": 1,
        "command": ["sh", "-c", f"{GO} test -run '^$' -bench . -count $REGBENCH_ITERATIONS -benchmem "
                                "-benchtime 50x -cpu 2 ."],
        "env": {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOCACHE": str(go_cache),
                "GOPATH": str(tmp_path / "gopath")},
    }])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["failed"] == 2  # the two invocations exited with status 1
        # The campaign's account of them quotes the tool, not only "exit status 1".
        assert all("degree must be at least 2" in f.stderr_tail for f in result.failed)
        assert "3 benchmarks failed: BenchmarkBroken-2" in result.failed[0].stderr_tail
        runs = {(r.benchmark, r.run_index): r for r in store.runs()}
        assert not [k for k in runs if k[0] == "gobench"]  # wholly the failed benchmarks': no run of its own
        for i in (0, 1):
            for ok in ("BenchmarkJoin-2", "BenchmarkJoin-2 [allocs/op]", "BenchmarkSub/ok-2", "BenchmarkZ-2"):
                run = runs[(f"gobench/{ok}", i)]
                # -count warmup + iterations; the first sample is the warm-up, stored and marked.
                assert (run.status, run.exit_code, run.n_samples, run.warmup) == ("ok", 1, 3, 1)
            broken = runs[("gobench/BenchmarkBroken-2", i)]
            assert (broken.status, broken.exit_code, broken.n_samples) == ("failed", 1, 0)
            assert broken.stderr_tail.startswith("--- FAIL: BenchmarkBroken\n")
            assert "failing_test.go:28: degree must be at least 2" in broken.stderr_tail
            assert broken.stderr_tail.endswith("[regbench] the tool reported this benchmark failed, "
                                               "its invocation exited with status 1")
            assert "wrong answer 42" in runs[("gobench/BenchmarkSub/bad-2", i)].stderr_tail
            assert runs[("gobench/BenchmarkLate-2", i)].status == "failed"
        series = {s.benchmark: s for s in store.load_series()}
        # Analyses see the measured samples only: the warm-up sample of each run is left out.
        assert [r.size for r in series["gobench/BenchmarkJoin-2"].runs[0]] == [2, 2]
        assert series["gobench/BenchmarkBroken-2"].failed == [2]

        again = run_campaign(load_config(cfg), store, seed=2)  # the failed invocations are not redone...
        assert sum(again.counts.values()) == 0 and again.failed_earlier == 2
        retried = run_campaign(load_config(cfg), store, seed=3, retry_failed=True)  # ...unless asked
        assert retried.retried == 2 and dict(retried.counts)["failed"] == 2
        assert sorted(r.run_index for r in store.runs(benchmark="gobench/BenchmarkBroken-2")) == [0, 1, 2, 3]
        assert sorted(r.run_index for r in store.runs(benchmark="gobench/BenchmarkJoin-2")) == [0, 1, 2, 3]


def test_a_failed_tool_keeps_its_results_and_says_what_it_printed(tmp_path):
    # Tools without failures of their own (pytest-benchmark writes its JSON, then exits 1 for a
    # failed test) keep their results, and a tool that says why it failed only on stdout is
    # quoted: the invocation's failed run has the end of stdout when stderr is empty.
    golden = GOLDEN / "pytest-benchmark"
    result_json = golden / "benchmark-json.json"
    proj = tmp_path / "proj"
    proj.mkdir()
    script = ("import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2]); "
              "print('FAILED bench_tiny.py::test_broken - AssertionError: checksum 41 != 42'); sys.exit(1)")
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "pyb", "format": "pytest-benchmark", "runs": 1,
         "command": [sys.executable, "-c", script, str(result_json), "{output}"]},
        {"name": "dead", "format": "go", "runs": 1,
         "command": [sys.executable, "-c", "print('panic: cannot open testdata/tree.bin'); raise SystemExit(2)"]},
        {"name": "killed", "format": "go", "runs": 1,
         "command": [sys.executable, "-c", "import os, signal\nprint('BenchmarkA-2 \\t 10\\t 5.0 ns/op', "
                     "flush=True)\nos.kill(os.getpid(), signal.SIGKILL)"]},
    ])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts) == {**dict.fromkeys(result.counts, 0), "failed": 2, "crashed": 1}
        runs = {r.benchmark: r for r in store.runs()}
        own = runs.pop("pyb")
        assert own.status == "failed" and own.exit_code == 1
        assert "checksum 41 != 42" in own.stderr_tail
        assert own.stderr_tail.endswith("[regbench] exit status 1 (stderr was empty: above is the end of stdout)")
        reported = [r for name, r in runs.items() if name.startswith("pyb/")]
        assert reported and all(r.status == "ok" and r.n_samples > 0 for r in reported)
        dead = runs["dead"]
        assert dead.status == "failed" and "panic: cannot open testdata/tree.bin" in dead.stderr_tail
        # Killed after printing one result: the result is kept, and the invocation is stored as crashed.
        assert runs["killed/BenchmarkA-2"].status == "ok" and runs["killed/BenchmarkA-2"].n_samples == 1
        assert runs["killed"].status == "crashed"
        again = run_campaign(load_config(cfg), store, seed=2, retry_failed=True)
        assert again.retried == 3  # the invocations stored as failed are run again


def test_a_google_benchmark_skipped_with_error_is_a_failed_run_of_its_series(tmp_path):
    # Google Benchmark exits with status 0 when a benchmark calls state.SkipWithError; its JSON
    # says so (error_occurred) and the others' results are there. Before, the benchmark vanished:
    # no run of its series, nothing failed, the campaign all `ok`.
    from test_adapters_googlebench import golden, skipped_with_error
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "out.json").write_text(json.dumps(skipped_with_error(golden(), "BM_StringCopy", "no buffer")))
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "gb", "format": "google-benchmark", "runs": 2, "iterations": 3, "warmup": 0,
         "command": [sys.executable, "-c", "print(open('out.json').read())"]}])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["failed"] == 2
        assert all("BM_StringCopy ERROR OCCURRED: 'no buffer'" in f.stderr_tail for f in result.failed)
        runs = {(r.benchmark, r.run_index): r for r in store.runs()}
        assert not [k for k in runs if k[0] == "gb"]  # wholly the failed benchmark's
        for i in (0, 1):
            failed = runs[("gb/BM_StringCopy", i)]
            assert (failed.status, failed.exit_code, failed.n_samples) == ("failed", 0, 0)
            assert failed.stderr_tail.startswith("BM_StringCopy ERROR OCCURRED: 'no buffer'")
            assert runs[("gb/BM_Accumulate/64", i)].status == "ok"
        series = {s.benchmark: s for s in store.load_series()}
        assert series["gb/BM_StringCopy"].unit == "us" and series["gb/BM_StringCopy"].failed == [2]


def test_a_tool_writing_a_file_and_a_tool_writing_garbage(tmp_path):
    pytest.importorskip("pytest_benchmark")
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(GOLDEN / "pytest-benchmark" / "src" / "bench_tiny.py", proj / "bench_tiny.py")
    cfg = write_config(proj, 'name = "tiny"\n', [
        {"name": "pyb", "format": "pytest-benchmark", "runs": 2, "timeout": 120,
         "command": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "/dev/null",
                     "--rootdir", ".", "--benchmark-min-time=0.00005", "--benchmark-max-time=0.002",
                     "--benchmark-min-rounds=5", "--benchmark-json={output}", "bench_tiny.py"]},
        {"name": "junk", "format": "go", "runs": 1, "command": [sys.executable, "-c", "print('hello')"]},
    ])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["ok"] == 2 and dict(result.counts)["garbage"] == 1
        runs = {(r.benchmark, r.run_index): r for r in store.runs()}
        assert runs[("junk", 0)].status == "garbage" and "no go results" in runs[("junk", 0)].stderr_tail
        names = {s.benchmark for s in store.load_series()}
        assert len(names - {"junk"}) == 4 and all(n.startswith("pyb/") for n in names - {"junk"})


def test_format_is_checked_in_the_config(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "b", "format": "nope", "command": ["true"]}])
    with pytest.raises(ConfigError, match="`format` must be one of"):
        load_config(cfg)
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "b", "format": "go", "output": "lines",
                                                   "command": ["true"]}])
    with pytest.raises(ConfigError, match="not both"):
        load_config(cfg)


def test_pyperf_worker_processes_join_one_run_without_their_warmups(tmp_path):
    from regbench.adapters.base import get_adapter

    golden = GOLDEN / "pyperf" / "suite.json"
    parts = get_adapter("pyperf").parse(golden)
    first = parts[0].benchmark
    mine = [r for r in parts if r.benchmark == first]
    assert len(mine) >= 2 and all(r.warmup >= 1 for r in mine)
    proj = tmp_path / "proj"
    proj.mkdir()
    command = [sys.executable, "-c", f"import sys; sys.stdout.write(open({str(golden)!r}).read())"]
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "pp", "format": "pyperf", "runs": 1, "command": command},
        # A configured warm-up: the first measured samples after the tool's own warm-up.
        {"name": "pp2", "format": "pyperf", "runs": 1, "warmup": 2, "command": command}])
    with Store(tmp_path / "r.db") as store:
        run_campaign(load_config(cfg), store, seed=1)
        [row] = [r for r in store.runs() if r.benchmark == f"pp/{first}"]
        assert row.warmup == mine[0].warmup
        assert row.n_samples == mine[0].samples.size + sum(r.samples.size - r.warmup for r in mine[1:])
        [row2] = [r for r in store.runs() if r.benchmark == f"pp2/{first}"]
        assert (row2.warmup, row2.n_samples) == (mine[0].warmup + 2, row.n_samples)


def test_a_format_benchmark_name_cannot_hold_a_slash(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "a/b", "format": "go", "command": ["true"]}])
    with pytest.raises(ConfigError, match="cannot contain '/'"):
        load_config(cfg)


def test_auto_warmup_of_a_tool_is_found_per_reported_benchmark(tmp_path):
    # warmup = "auto": each benchmark's run gets the warm-up MSER finds in its own samples (A has
    # three slow first repetitions, B none), as a command benchmark's run does.
    lines = [f"BenchmarkA-2 \t 10\t {v} ns/op" for v in [900.0] * 3 + [10.0 + 0.1 * (i % 3) for i in range(17)]]
    lines += [f"BenchmarkB-2 \t 10\t {10.0 + 0.1 * (i % 3)} ns/op" for i in range(20)]
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = write_config(proj, 'name = "x"\n', [{
        "name": "t", "format": "go", "runs": 1, "warmup": "auto",
        "command": [sys.executable, "-c", f"print({chr(10).join(lines)!r})"]}])
    with Store(tmp_path / "r.db") as store:
        run_campaign(load_config(cfg), store, seed=1)
        warmups = {r.benchmark: r.warmup for r in store.runs()}
        assert warmups == {"t/BenchmarkA-2": 3, "t/BenchmarkB-2": 0}


def test_a_warmup_that_leaves_no_sample_is_a_garbage_result_that_says_why(tmp_path):
    """``[defaults] warmup = 2`` (as `regbench init` writes it) over a tool that reports one sample
    per invocation (bmf), and over a command printing as many samples as its warm-up: every sample
    would be dropped, so each run is ``garbage`` with the reason, not an ``ok`` run with nothing
    to analyse; the campaign counts it as such."""
    import json

    bmf = json.dumps({"sort": {"latency": {"value": 5120.0}}})
    cfg = write_config(tmp_path, 'name = "x"\n', [
        {"name": "b", "format": "bmf", "command": [sys.executable, "-c", f"print({bmf!r})"]},
        {"name": "short", "command": [sys.executable, "-c", "print(1.0); print(2.0)"]},
        {"name": "kept", "format": "bmf", "warmup": 0, "command": [sys.executable, "-c", f"print({bmf!r})"]},
    ], defaults="runs = 2\niterations = 5\nwarmup = 2\n")
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["garbage"] == 4 and dict(result.counts)["ok"] == 2
        runs = store.runs()
        assert {(r.benchmark, r.status) for r in runs} == {("b/sort", "garbage"), ("short", "garbage"),
                                                           ("kept/sort", "ok")}
        tail = next(r for r in runs if r.benchmark == "b/sort").stderr_tail
        assert "1 sample reported, all of them warm-up (warmup = 2)" in tail
        assert "2 samples reported, all of them warm-up (warmup = 2)" in next(
            r for r in runs if r.benchmark == "short").stderr_tail


def test_a_series_a_tool_reports_is_named_to_its_benchmark_when_asked_to_run(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [
        {"name": "crit", "format": "criterion", "command": ["sh", "-c", "CRITERION_HOME={output} cargo bench"]},
        {"name": "plain", "command": [sys.executable, "-c", "print(1)"]}])
    config = load_config(cfg)
    with pytest.raises(ConfigError, match=r"no benchmark named 'crit/encode/hex/64': it is reported by the "
                                          r"criterion benchmark 'crit', .*--benchmark crit"):
        config.benchmark("crit/encode/hex/64")
    with pytest.raises(ConfigError, match=r"no benchmark named 'plain/x' \(did you mean 'plain'\?\)$"):
        config.benchmark("plain/x")  # not a tool's: nothing reports it
    with pytest.raises(ConfigError, match=r"no benchmark named 'crti' \(did you mean 'crit'\?\)$"):
        config.benchmark("crti")
    # A name the tool reports, without the tool's prefix: the tool's benchmark is named.
    with pytest.raises(ConfigError, match=r"no benchmark named 'encode_hex_4096' \(a benchmark a tool reports "
                                          r"is run by the tool's benchmark: --benchmark crit\)$"):
        config.benchmark("encode_hex_4096")


ABORTS = r"""
#include <benchmark/benchmark.h>
#include <cstdlib>
#include <string>
static void BM_Sum(benchmark::State& state) {
  for (auto _ : state) { long s = 0; for (int i = 0; i < state.range(0); ++i) s += i; benchmark::DoNotOptimize(s); }
}
BENCHMARK(BM_Sum)->Arg(64)->Arg(512);
static void BM_Copy(benchmark::State& state) {
  std::string a(256, 'x');
  for (auto _ : state) { std::string b = a; benchmark::DoNotOptimize(b); }
}
BENCHMARK(BM_Copy);
static void BM_ZAborts(benchmark::State& state) {
  for (auto _ : state) { std::abort(); }
}
BENCHMARK(BM_ZAborts);
BENCHMARK_MAIN();
"""


def test_a_google_benchmark_that_aborts_keeps_the_benchmarks_before_it(tmp_path):
    # A benchmark that aborts ends the binary in the middle of its JSON: the benchmarks written
    # whole before it are kept, and the invocation is stored as crashed, with why.
    cxx = shutil.which("g++")
    if cxx is None or not Path("/usr/include/benchmark/benchmark.h").is_file():
        pytest.skip("g++ or Google Benchmark (libbenchmark-dev) not installed")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "b.cc").write_text(ABORTS)
    import subprocess
    subprocess.run([cxx, "-O1", "-o", str(proj / "bench"), str(proj / "b.cc"), "-lbenchmark", "-lpthread"],
                   check=True, capture_output=True, timeout=180)
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "gb", "format": "google-benchmark", "runs": 2, "iterations": 3, "warmup": 0,
         "command": ["sh", "-c", "exec ./bench --benchmark_format=json --benchmark_repetitions=\"$REGBENCH_ITERATIONS\" "
                     "--benchmark_min_time=0.001"]}])
    with Store(tmp_path / "r.db") as store:
        run_campaign(load_config(cfg), store, seed=1)
        runs = {(r.benchmark, r.run_index): r for r in store.runs()}
        for i in (0, 1):
            own = runs[("gb", i)]
            assert own.status == "crashed" and "truncated" in own.stderr_tail
            for name in ("gb/BM_Sum/64", "gb/BM_Sum/512", "gb/BM_Copy"):
                assert runs[(name, i)].status == "ok" and runs[(name, i)].n_samples == 3
        assert not any(b.startswith("gb/BM_ZAborts") for b, _ in runs)


def test_a_jmh_benchmark_that_throws_is_a_failed_run_of_its_series(tmp_path):
    # JMH prints a benchmark that threw on its console only (`<failure>` and the exception),
    # leaves it out of its -rf json file and exits with status 0: the golden console output and
    # JSON of golden/adapters/jmh/src's FailBench (make_golden.sh) stand for one invocation.
    golden = GOLDEN / "jmh"
    proj = tmp_path / "proj"
    proj.mkdir()
    script = ("import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2]); "
              "sys.stdout.write(open(sys.argv[3]).read())")
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "jmh", "format": "jmh", "runs": 1, "warmup": 0,
         "command": [sys.executable, "-c", script, str(golden / "failing.json"), "{output}",
                     str(golden / "failing.out")]},
    ])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["failed"] == 1 and dict(result.counts)["ok"] == 0
        runs = {r.benchmark: r for r in store.runs()}
        assert "jmh" not in runs  # wholly the failed benchmarks': no run of the invocation's own
        ok = ["jmh/regbench.golden.FailBench.broken(size=1)", "jmh/regbench.golden.FailBench.late(size=2)"]
        assert all(runs[n].status == "ok" and runs[n].n_samples == 2 for n in ok)
        broken = runs["jmh/regbench.golden.FailBench.broken(size=2)"]
        assert (broken.status, broken.exit_code, broken.n_samples) == ("failed", 0, 0)
        assert "java.lang.IllegalStateException: broken for size 2" in broken.stderr_tail
        assert broken.stderr_tail.endswith("[regbench] the tool reported this benchmark failed")
        late = runs["jmh/regbench.golden.FailBench.late(size=1)"]
        assert late.status == "failed" and "Caused by: java.lang.ArithmeticException: root cause" in late.stderr_tail
        units = {b.name: (b.unit, b.direction) for b in store.benchmarks()}
        # late printed its unit before failing; broken(size=2) failed in its first iteration.
        assert units["jmh/regbench.golden.FailBench.late(size=1)"] == ("us/op", "lower")
        assert units["jmh/regbench.golden.FailBench.broken(size=2)"][1] == "higher"
        # The account quotes the exception, not the last frame of its trace.
        from regbench.report.campaign import failure_cause
        assert failure_cause("failed", result.failed[0].stderr_tail).endswith(
            "2 benchmarks failed: regbench.golden.FailBench.broken(size=2), regbench.golden.FailBench.late(size=1)): "
            "java.lang.IllegalStateException: broken for size 2")
        assert failure_cause("failed", late.stderr_tail) == (
            "failed (the tool reported this benchmark failed): Caused by: java.lang.ArithmeticException: root cause")


def test_a_series_stored_only_as_failed_takes_the_unit_of_its_first_result(tmp_path):
    # A JMH benchmark that failed before it ever reported a result is stored without the tool's
    # unit (JMH does not print it); its first result gives the series its unit.
    from regbench.model import RunRecord

    with Store(tmp_path / "r.db") as store:
        store.add_run(RunRecord(benchmark="jmh/B.a", version="v1", run_index=0, samples=(), status="failed"),
                      direction="higher")
        store.add_run(RunRecord(benchmark="jmh/B.a", version="v2", run_index=0, samples=(1.0, 2.0)),
                      unit="ops/ms", direction="higher")
        assert {b.name: b.unit for b in store.benchmarks()}["jmh/B.a"] == "ops/ms"
        with pytest.raises(Exception, match="stored with unit 'ops/ms'"):  # a measured series keeps its unit
            store.add_run(RunRecord(benchmark="jmh/B.a", version="v3", run_index=0, samples=(1.0,)), unit="us/op")


def test_a_jmh_invocations_forks_join_one_run_with_their_timing_and_weights(tmp_path):
    # Golden sample.json (make_golden.sh: -f 2 -wi 1 -w 100ms -r 20ms -bm sample) as one invocation:
    # its two forks are one run, which keeps what JMH said it cost (2 forks, their 2 x 100 ms of
    # warm-up, 20 ms iterations) and each iteration's timed invocations (its weight), so that
    # `summary` can give JMH's own, pooled, score.
    from regbench.analysis import summarize
    from regbench.model import ToolTiming

    proj = tmp_path / "proj"
    proj.mkdir()
    script = "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])"
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "jmh", "format": "jmh", "runs": 2, "warmup": 0,
         "command": [sys.executable, "-c", script, str(GOLDEN / "jmh" / "sample.json"), "{output}"]}])
    name = "jmh/regbench.golden.SumBench.sum(size=10)"
    with Store(tmp_path / "r.db") as store:
        run_campaign(load_config(cfg), store, seed=1)
        tools = {(t.benchmark, t.run_index): t for t in store.run_tools(prefix="jmh/")}
        hist = json.loads((GOLDEN / "jmh" / "sample.json").read_text())[0]["primaryMetric"]["rawDataHistogram"]
        counts = [float(sum(n for _, n in it)) for fork in hist for it in fork]
        for i in (0, 1):
            assert tools[(name, i)].timing == ToolTiming(2, 0.2, 0.02)
            assert tools[(name, i)].weights.tolist() == counts == [477, 743, 697, 601, 411, 596]
            # A percentile (a secondary metric) costs nothing of its own and weighs nothing.
            assert (name + " [p0.00]", i) not in tools
        (row,) = summarize(store, benchmark=name)
        assert row.pooled_mean == pytest.approx(9.482184397163117e-05, rel=1e-12)  # JMH's score
        assert row.plain.mean == pytest.approx(9.358266903606605e-05, rel=1e-12)  # the iterations' mean


def test_run_checks_a_name_a_tool_reports_against_what_it_reported_in_the_store(tmp_path, capsys):
    # `run --benchmark jmh/probe.Lang3Bench.joinn` (a typo) said that jmh reports it without
    # looking; where the store holds what jmh reported, the name is checked against it.
    from regbench.cli.main import main
    from regbench.model import RunRecord

    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = write_config(proj, 'name = "x"\n', [
        {"name": "jmh", "format": "jmh", "command": [sys.executable, "-c", "pass", "{output}"]},
        {"name": "plain", "command": [sys.executable, "-c", "print(1)"]}])
    db = tmp_path / "s.db"

    def run(name: str) -> tuple[int, str]:
        rc = main(["--store", str(db), "--config", str(cfg), "run", "--versions", "HEAD", "--benchmark", name])
        return rc, capsys.readouterr().err

    # No store yet: nothing to check against, the name is taken for what the tool would report,
    # and no store is made by the refusal.
    rc, err = run("jmh/probe.Lang3Bench.joinn")
    assert rc == 3 and "it is reported by the jmh benchmark 'jmh'" in err and not db.exists()
    with Store(db) as store:
        store.add_runs([RunRecord(f"jmh/probe.Lang3Bench.{m}", "v1", 0, (1.0, 2.0)) for m in ("join", "split")]
                       + [RunRecord("jmh:maxrss", "v1", 0, (1.0,))])
    rc, err = run("jmh/probe.Lang3Bench.joinn")
    assert rc == 3 and err.count("\n") == 1
    assert err.rstrip().endswith("no benchmark named 'jmh/probe.Lang3Bench.joinn': the jmh benchmark 'jmh' has not "
                                 "reported it in the store (did you mean 'jmh/probe.Lang3Bench.join'?)")
    rc, err = run("jmh/other.Thing.x")
    assert rc == 3 and "has not reported it in the store (it has reported 2: `regbench show` lists them)" in err
    # A series it did report is run by its tool's benchmark, as before.
    rc, err = run("jmh/probe.Lang3Bench.split")
    assert rc == 3 and "it is reported by the jmh benchmark 'jmh', which runs all its command selects" in err
