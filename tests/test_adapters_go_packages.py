"""``go test -bench . ./...``: the same benchmark function in two packages of one output.

A function that two packages report is named with its package, ``NAME (PACKAGE)``, in every
package that reports it (its metrics ``NAME (PACKAGE) [UNIT]``, its failures too); a function of
one package keeps its name as printed.  Before, such an output was refused ("import one package
per file"), so a ``[[benchmark]]`` running ``go test ./...`` over a module with ``BenchmarkParse``
in two packages could not be benchmarked at all.

The fixtures are what go 1.26 printed for a module ``example.com/codec`` with packages ``json``
(BenchmarkEncode/small, BenchmarkDecode, BenchmarkIndent) and ``xml`` (BenchmarkEncode/small, and
BenchmarkDecode, which calls b.Fatal on its first call), run with ``go test -run '^$' -bench .
-count 2 -cpu 2 -benchtime 100000x [-json] ./...``; the -json events are written here without
their ``Time`` and without the ``run``, ``fail`` and ``pass`` actions, which the adapter does not read.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters.base import get_adapter, without_metric
from regbench.adapters.gotest import GoJsonAdapter, GoTextAdapter
from regbench.cli.main import main
from regbench.config import BenchmarkSpec
from regbench.demo_project import git_commit, git_init
from regbench.model import ExecutionPlan
from regbench.optimize.plans import split_invocation
from regbench.store import Store
from regbench.store.plans import NewPlan, save_plans

TEXT, JSONL = GoTextAdapter(), GoJsonAdapter()
GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
JSON_PKG, XML_PKG = "example.com/codec/json", "example.com/codec/xml"

CODEC_TXT = """\
goos: linux
goarch: amd64
pkg: example.com/codec/json
cpu: Intel(R) Xeon(R) Processor
BenchmarkEncode/small-2         	  100000	        73.04 ns/op	      16 B/op	       1 allocs/op
BenchmarkEncode/small-2         	  100000	        71.75 ns/op	      16 B/op	       1 allocs/op
BenchmarkDecode-2               	  100000	        81.89 ns/op	6252.22 MB/s	      64 B/op	       1 allocs/op
BenchmarkDecode-2               	  100000	        78.11 ns/op	6554.53 MB/s	      64 B/op	       1 allocs/op
BenchmarkIndent-2               	  100000	         9.424 ns/op	       0 B/op	       0 allocs/op
BenchmarkIndent-2               	  100000	         8.983 ns/op	       0 B/op	       0 allocs/op
PASS
ok  	example.com/codec/json	0.099s
goos: linux
goarch: amd64
pkg: example.com/codec/xml
cpu: Intel(R) Xeon(R) Processor
BenchmarkEncode/small-2         	  100000	       122.7 ns/op	      64 B/op	       1 allocs/op
BenchmarkEncode/small-2         	  100000	       101.2 ns/op	      64 B/op	       1 allocs/op
--- FAIL: BenchmarkDecode
    encode_test.go:20: open testdata/feed.xml: no such file or directory
FAIL
exit status 1
FAIL	example.com/codec/xml	0.059s
FAIL
"""


def _events(package: str, outputs: list[tuple[str | None, str]]) -> list[dict]:
    return [{"Action": "start", "Package": package},
            *({"Action": "output", "Package": package, **({"Test": test} if test else {}), "Output": out}
              for test, out in outputs)]


_HEADER = [(None, "goos: linux\n"), (None, "goarch: amd64\n"), (None, "pkg: {pkg}\n"),
           (None, "cpu: Intel(R) Xeon(R) Processor\n")]

#: The -json run of the same command (other numbers: another invocation).  A result line is split
#: over two events, the name before the benchmark runs and the numbers after.
CODEC_JSON = "".join(json.dumps(e) + "\n" for e in [
    *_events(JSON_PKG, [*((t, o.format(pkg=JSON_PKG)) for t, o in _HEADER),
                        ("BenchmarkEncode", "=== RUN   BenchmarkEncode\n"), ("BenchmarkEncode", "BenchmarkEncode\n"),
                        ("BenchmarkEncode/small", "=== RUN   BenchmarkEncode/small\n"),
                        ("BenchmarkEncode/small", "BenchmarkEncode/small\n"),
                        ("BenchmarkEncode/small", "BenchmarkEncode/small-2         \t"),
                        ("BenchmarkEncode/small", "  100000\t        50.23 ns/op\t      16 B/op\t       1 allocs/op\n"),
                        (None, "BenchmarkEncode/small-2         \t"),
                        (None, "  100000\t        42.90 ns/op\t      16 B/op\t       1 allocs/op\n"),
                        ("BenchmarkDecode", "=== RUN   BenchmarkDecode\n"), ("BenchmarkDecode", "BenchmarkDecode\n"),
                        ("BenchmarkDecode", "BenchmarkDecode-2               \t  100000\t        63.94 ns/op\t"
                                            "8007.59 MB/s\t      64 B/op\t       1 allocs/op\n"),
                        (None, "BenchmarkDecode-2               \t"),
                        (None, "  100000\t        67.44 ns/op\t7591.77 MB/s\t      64 B/op\t       1 allocs/op\n"),
                        ("BenchmarkIndent", "=== RUN   BenchmarkIndent\n"), ("BenchmarkIndent", "BenchmarkIndent\n"),
                        ("BenchmarkIndent", "BenchmarkIndent-2               \t  100000\t         9.325 ns/op\t"
                                            "       0 B/op\t       0 allocs/op\n"),
                        (None, "BenchmarkIndent-2               \t  100000\t         9.409 ns/op\t"
                               "       0 B/op\t       0 allocs/op\n"),
                        (None, "PASS\n"), (None, "ok  \texample.com/codec/json\t0.087s\n")]),
    *_events(XML_PKG, [*((t, o.format(pkg=XML_PKG)) for t, o in _HEADER),
                       ("BenchmarkEncode", "=== RUN   BenchmarkEncode\n"), ("BenchmarkEncode", "BenchmarkEncode\n"),
                       ("BenchmarkEncode/small", "=== RUN   BenchmarkEncode/small\n"),
                       ("BenchmarkEncode/small", "BenchmarkEncode/small\n"),
                       ("BenchmarkEncode/small", "BenchmarkEncode/small-2         \t"),
                       ("BenchmarkEncode/small", "  100000\t        77.94 ns/op\t      64 B/op\t       1 allocs/op\n"),
                       (None, "BenchmarkEncode/small-2         \t"),
                       (None, "  100000\t        68.51 ns/op\t      64 B/op\t       1 allocs/op\n"),
                       ("BenchmarkDecode", "=== RUN   BenchmarkDecode\n"), ("BenchmarkDecode", "BenchmarkDecode\n"),
                       ("BenchmarkDecode", "    encode_test.go:20: open testdata/feed.xml: no such file or directory\n"),
                       ("BenchmarkDecode", "--- FAIL: BenchmarkDecode\n"),
                       (None, "FAIL\n"), (None, "exit status 1\n"), (None, "FAIL\texample.com/codec/xml\t0.043s\n")]),
])

#: Every series of the codec output: BenchmarkEncode and BenchmarkDecode with their package
#: (json and xml both report them, xml's Decode by its failure), BenchmarkIndent as printed.
CODEC_SERIES = [
    f"BenchmarkEncode/small-2 ({JSON_PKG})", f"BenchmarkEncode/small-2 ({JSON_PKG}) [B/op]",
    f"BenchmarkEncode/small-2 ({JSON_PKG}) [allocs/op]",
    f"BenchmarkDecode-2 ({JSON_PKG})", f"BenchmarkDecode-2 ({JSON_PKG}) [MB/s]",
    f"BenchmarkDecode-2 ({JSON_PKG}) [B/op]", f"BenchmarkDecode-2 ({JSON_PKG}) [allocs/op]",
    "BenchmarkIndent-2", "BenchmarkIndent-2 [B/op]", "BenchmarkIndent-2 [allocs/op]",
    f"BenchmarkEncode/small-2 ({XML_PKG})", f"BenchmarkEncode/small-2 ({XML_PKG}) [B/op]",
    f"BenchmarkEncode/small-2 ({XML_PKG}) [allocs/op]"]


def write(tmp_path: Path, text: str, name: str = "out.txt") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def by_name(runs):
    out = {r.benchmark: r for r in runs}
    assert len(out) == len(runs), "one run per benchmark in one invocation"
    return out


# --- naming ---------------------------------------------------------------------------------


def test_text_names_a_function_of_two_packages_with_each_package(tmp_path):
    runs = TEXT.parse(write(tmp_path, CODEC_TXT))
    assert [r.benchmark for r in runs] == CODEC_SERIES
    r = by_name(runs)
    np.testing.assert_array_equal(r[f"BenchmarkEncode/small-2 ({JSON_PKG})"].samples, [73.04, 71.75])
    np.testing.assert_array_equal(r[f"BenchmarkEncode/small-2 ({XML_PKG})"].samples, [122.7, 101.2])
    np.testing.assert_array_equal(r["BenchmarkIndent-2"].samples, [9.424, 8.983])
    for x in runs:  # each series is its own package's, and says so in its params too
        assert x.params["package"] == (XML_PKG if XML_PKG in x.benchmark else JSON_PKG)
        assert x.run == 0 and x.params["iterations"] == [100000, 100000]


def test_json_names_them_as_the_text_does(tmp_path):
    runs = JSONL.parse(write(tmp_path, CODEC_JSON, "out.json"))
    assert [r.benchmark for r in runs] == CODEC_SERIES
    r = by_name(runs)
    np.testing.assert_array_equal(r[f"BenchmarkEncode/small-2 ({JSON_PKG})"].samples, [50.23, 42.90])
    np.testing.assert_array_equal(r[f"BenchmarkEncode/small-2 ({XML_PKG})"].samples, [77.94, 68.51])
    np.testing.assert_array_equal(r[f"BenchmarkDecode-2 ({JSON_PKG}) [MB/s]"].samples, [8007.59, 7591.77])


@pytest.mark.parametrize(("adapter", "text", "name"), [(TEXT, CODEC_TXT, "out.txt"), (JSONL, CODEC_JSON, "out.json")])
def test_metrics_go_to_the_series_of_their_own_package(adapter, text, name, tmp_path):
    r = by_name(adapter.parse(write(tmp_path, text, name)))
    assert list(r[f"BenchmarkEncode/small-2 ({JSON_PKG}) [B/op]"].samples) == [16, 16]
    assert list(r[f"BenchmarkEncode/small-2 ({XML_PKG}) [B/op]"].samples) == [64, 64]
    mbs = r[f"BenchmarkDecode-2 ({JSON_PKG}) [MB/s]"]
    assert (mbs.unit, mbs.direction) == ("MB/s", "higher")
    for x in r.values():  # every metric is of a primary series of the same package
        primary = r[without_metric(x.benchmark)]
        assert primary.unit == "ns/op" and primary.params["package"] == x.params["package"]


@pytest.mark.parametrize(("adapter", "text", "name"), [(TEXT, CODEC_TXT, "out.txt"), (JSONL, CODEC_JSON, "out.json")])
def test_a_failure_is_of_the_series_of_its_own_package(adapter, text, name, tmp_path):
    # xml's BenchmarkDecode failed on its first call (printed unsuffixed): the series its results
    # would have gone to is xml's, while json's BenchmarkDecode results stay json's.
    p = write(tmp_path, text, name)
    (f,) = adapter.failures(p)
    assert f.benchmark == f"BenchmarkDecode-2 ({XML_PKG})"
    assert f.message == "--- FAIL: BenchmarkDecode\n    encode_test.go:20: open testdata/feed.xml: no such file or directory"
    assert f.benchmark not in {r.benchmark for r in adapter.parse(p)}


def test_a_failure_alone_makes_a_package_report_its_function(tmp_path):
    # b's only word of BenchmarkX is its failure: the names must still keep a and b apart, or the
    # failure would be stored as a failed run of a's series.
    head = "goos: linux\ngoarch: amd64\npkg: example.com/m/{}\ncpu: Intel(R) Xeon(R) Processor\n"
    p = write(tmp_path, head.format("a") + "BenchmarkX-4   \t    1000\t      1180 ns/op\nPASS\n"
              "ok  \texample.com/m/a\t0.012s\n" + head.format("b") + "BenchmarkY-4   \t    5000\t       212.5 ns/op\n"
              "--- FAIL: BenchmarkX\n    x_test.go:14: no fixture\nFAIL\nexit status 1\nFAIL\texample.com/m/b\t0.020s\n")
    assert [r.benchmark for r in TEXT.parse(p)] == ["BenchmarkX-4 (example.com/m/a)", "BenchmarkY-4"]
    assert [f.benchmark for f in TEXT.failures(p)] == ["BenchmarkX-4 (example.com/m/b)"]


def test_a_skipped_benchmark_and_a_bare_started_name_do_not_count(tmp_path):
    # xml's BenchmarkIndent starts (-v and -json print its bare name) and skips; the plain text
    # prints neither without -v, so neither counts: json's BenchmarkIndent keeps its name.
    skip = [("BenchmarkIndent", "=== RUN   BenchmarkIndent\n"), ("BenchmarkIndent", "BenchmarkIndent\n"),
            ("BenchmarkIndent", "    indent_test.go:9: no indentation in xml\n"),
            ("BenchmarkIndent", "--- SKIP: BenchmarkIndent\n")]
    text = CODEC_TXT.replace("FAIL\nexit status 1\n", "".join(o for _, o in skip[1:]) + "FAIL\nexit status 1\n")
    end = json.dumps({"Action": "output", "Package": XML_PKG, "Output": "FAIL\n"}) + "\n"
    events = CODEC_JSON.replace(end, "".join(json.dumps({"Action": "output", "Package": XML_PKG, "Test": t,
                                                         "Output": o}) + "\n" for t, o in skip) + end)
    assert text != CODEC_TXT and events != CODEC_JSON
    assert [r.benchmark for r in TEXT.parse(write(tmp_path, text))] == CODEC_SERIES
    assert [r.benchmark for r in JSONL.parse(write(tmp_path, events, "out.json"))] == CODEC_SERIES


# --- stability ------------------------------------------------------------------------------


def test_names_depend_on_what_the_output_reports_not_on_how_many_packages_it_holds(tmp_path):
    # A function of one package is named alike in a file of that package alone and in the whole
    # module's output; a re-run that selects BenchmarkEncode (-bench '^(BenchmarkEncode)$') runs it
    # in both packages again, so its series keep their names.
    whole = {r.benchmark for r in TEXT.parse(write(tmp_path, CODEC_TXT))}
    json_alone = CODEC_TXT[:CODEC_TXT.index("goos: linux", 10)]
    alone = {r.benchmark for r in TEXT.parse(write(tmp_path, json_alone, "json.txt"))}
    assert {n for n in alone if "Indent" in n} == {n for n in whole if "Indent" in n}
    rerun = "".join(line for line in CODEC_TXT.splitlines(keepends=True)
                    if not line.startswith(("BenchmarkDecode", "BenchmarkIndent", "--- FAIL", "    ", "FAIL",
                                            "exit status")))
    selected = {r.benchmark for r in TEXT.parse(write(tmp_path, rerun, "rerun.txt"))}
    assert selected == {n for n in whole if n.startswith("BenchmarkEncode")}


# --- selection ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["go", "go-json"])
def test_a_qualified_name_is_selected_by_its_bare_function(fmt, tmp_path):
    adapter = get_adapter(fmt)
    assert adapter.selection_unit(f"BenchmarkDecode-2 ({XML_PKG})") == "BenchmarkDecode"
    assert adapter.selection_unit(f"BenchmarkDecode-2 ({JSON_PKG}) [MB/s]") == "BenchmarkDecode"
    assert adapter.selection_unit(f"BenchmarkEncode/small-2 ({XML_PKG}) [allocs/op]") == "BenchmarkEncode"
    assert adapter.selection_unit("BenchmarkX-2 (a)") == "BenchmarkX"  # a package path without "/"
    text, name = (CODEC_TXT, "out.txt") if fmt == "go" else (CODEC_JSON, "out.json")
    units = sorted({adapter.selection_unit(r.benchmark) for r in adapter.parse(write(tmp_path, text, name))})
    assert units == ["BenchmarkDecode", "BenchmarkEncode", "BenchmarkIndent"]
    assert adapter.render_selection(units) == "^(BenchmarkDecode|BenchmarkEncode|BenchmarkIndent)$"


def _plan(name: str, runs: int, iterations: int) -> ExecutionPlan:
    return ExecutionPlan(benchmark=name, config="default", machine="m", revision=1, campaign_id=1, version="v",
                         runs=runs, iterations=iterations, warmup=0, full_runs=9, full_iterations=9, metric="rciw3",
                         threshold=0.01, stability=0.0, full_stability=0.0, stable=True, seconds=None,
                         full_seconds=None, created_at=datetime(2024, 1, 1))


def test_a_split_runs_a_function_of_two_packages_in_one_invocation_with_the_most_of_their_plans():
    # run --plan optimized: both packages' BenchmarkEncode are one unit (-bench cannot name a
    # package), run with the most runs and iterations of their plans.
    spec = BenchmarkSpec(name="codec", kind="command", format="go", runs=5, iterations=5,
                         command=("sh", "-c", 'go test -run "^$" -bench "$REGBENCH_SELECT" ./...'))
    plans = [_plan(f"codec/BenchmarkEncode/small-2 ({JSON_PKG})", 1, 3),
             _plan(f"codec/BenchmarkEncode/small-2 ({XML_PKG})", 2, 2),
             _plan(f"codec/BenchmarkEncode/small-2 ({XML_PKG}) [B/op]", 1, 1),
             _plan("codec/BenchmarkIndent-2", 4, 6)]
    split = split_invocation(spec, plans, known=[f"BenchmarkDecode-2 ({JSON_PKG})"])
    assert [(g.runs, g.iterations, g.units, g.select) for g in split.groups] == [
        (5, 5, ("BenchmarkDecode",), "^(BenchmarkDecode)$"),
        (4, 6, ("BenchmarkIndent",), "^(BenchmarkIndent)$"),
        (2, 3, ("BenchmarkEncode",), "^(BenchmarkEncode)$")]
    assert split.groups[2].reported == (f"BenchmarkEncode/small-2 ({JSON_PKG})", f"BenchmarkEncode/small-2 ({XML_PKG})",
                                        f"BenchmarkEncode/small-2 ({XML_PKG}) [B/op]")


# --- the real tool --------------------------------------------------------------------------

GO_MOD = "module example.com/tiny\n\ngo 1.21\n"
# The same BenchmarkParse in two packages: fast's does almost nothing and allocates nothing,
# slow's allocates 4 KiB per call (B/op exactly 4096 under -benchmem); OnlyFast is fast's alone.
FAST = """package fast

import "testing"

var sink int

func BenchmarkParse(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += i
	}
}

func BenchmarkOnlyFast(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink ^= i
	}
}
"""
SLOW = """package slow

import "testing"

var sink []byte

func BenchmarkParse(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = make([]byte, 4096)
	}
}
"""
FAST_PKG, SLOW_PKG = "example.com/tiny/fast", "example.com/tiny/slow"


def _module(repo: Path, command: list[str], go_cache: Path, runs: int) -> str:
    """A git repository holding the module and a regbench.toml running ``command`` as ``gob``."""
    env = {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOCACHE": str(go_cache),
           "GOPATH": str(repo.parent / "gopath")}
    text = ('[project]\nname = "tiny"\n\n[[benchmark]]\nname = "gob"\nformat = "go"\n'
            f"runs = {runs}\niterations = 3\ntimeout = 300\ncommand = {json.dumps(command)}\n"
            "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }\n")
    git_init(repo)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"go.mod": GO_MOD, "fast/parse_test.go": FAST, "slow/parse_test.go": SLOW,
                      "regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    return text


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    return rc, capsys.readouterr().err


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_go_test_over_a_module_with_the_same_benchmark_in_two_packages(tmp_path, capsys, go_cache):
    repo = tmp_path / "proj"
    assert GO is not None
    _module(repo, [GO, "test", "-vet=off", "-run", "^$", "-bench", ".", "-count", "3", "-benchtime", "100x",
                   "-cpu", "2", "-benchmem", "./..."], go_cache, runs=2)
    rc, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as store:
        runs = store.runs()
        assert {r.status for r in runs} == {"ok"}
        series = {s.benchmark: s for s in store.load_series()}
        fast, slow = f"gob/BenchmarkParse-2 ({FAST_PKG})", f"gob/BenchmarkParse-2 ({SLOW_PKG})"
        assert sorted(series) == sorted([fast, f"{fast} [B/op]", f"{fast} [allocs/op]",
                                         slow, f"{slow} [B/op]", f"{slow} [allocs/op]",
                                         "gob/BenchmarkOnlyFast-2", "gob/BenchmarkOnlyFast-2 [B/op]",
                                         "gob/BenchmarkOnlyFast-2 [allocs/op]"])
        for s in series.values():
            assert [len(r) for r in s.runs] == [2]  # two invocations, two runs of each series
            assert all(r.size == 3 for r in s.runs[0])  # -count 3
        # Two series, each with its own package's numbers: slow allocates 4 KiB a call, fast nothing
        # (B/op averages over b.N calls, 100 here, so the runtime's own allocations during a
        # repetition can add a few dozen bytes: one suite run saw 53 B/op for fast).
        slow_bytes = [float(x) for r in series[f"{slow} [B/op]"].runs[0] for x in r]
        fast_bytes = [float(x) for r in series[f"{fast} [B/op]"].runs[0] for x in r]
        assert all(4096 <= b < 4096 + 512 for b in slow_bytes), slow_bytes
        assert all(0 <= b < 512 for b in fast_bytes), fast_bytes
        ns_fast = np.concatenate(series[fast].runs[0])
        ns_slow = np.concatenate(series[slow].runs[0])
        assert (ns_fast > 0).all() and np.isfinite(ns_slow).all()
        assert np.median(ns_slow) > np.median(ns_fast)


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_an_optimized_plan_selects_the_function_in_both_packages_and_keeps_their_names(tmp_path, capsys, go_cache):
    # REGBENCH_SELECT of BenchmarkParse's group is ^(BenchmarkParse)$: go test runs it in both
    # packages, which report it as in the full run, so the same two series get their runs.
    repo = tmp_path / "proj"
    assert GO is not None
    command = ["sh", "-c", 'exec "$0" test -vet=off -run "^$" -bench "${REGBENCH_SELECT:-.}" '
               '-count "$REGBENCH_ITERATIONS" -benchtime 100x -cpu 2 -benchmem ./...', GO]
    _module(repo, command, go_cache, runs=2)
    rc, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    fast, slow = f"gob/BenchmarkParse-2 ({FAST_PKG})", f"gob/BenchmarkParse-2 ({SLOW_PKG})"
    with Store(repo / "s.db") as s:
        cid = max(c.id for c in s.campaigns())
        head = s.versions()[-1].name
        names = {b.name for b in s.benchmarks()}
        assert {fast, slow, "gob/BenchmarkOnlyFast-2"} <= names
        # A plan for every series, metrics too (one without a plan would run as configured).
        levels = {fast: (1, 4), slow: (1, 2), "gob/BenchmarkOnlyFast-2": (1, 1)}
        save_plans(s, [NewPlan(n, "default", "m", cid, head, *levels[without_metric(n)], 0, 2, 3, "rciw3", 0.01,
                               0.0, 0.0, True, None, None) for n in names if n != "gob"])
    rc, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized", "--seed", "2",
                   capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        v1 = s.versions()[0].name
        got: dict[str, list[int]] = {}
        for r in s.runs(version=v1):
            assert r.status == "ok", (r.benchmark, r.stderr_tail)
            got.setdefault(r.benchmark, []).append(r.n_samples)
    # BenchmarkParse's group ran 1 x 4 (the most of its two plans), in both packages; OnlyFast 1 x 1.
    assert {b: n for b, n in got.items() if "[" not in b} == {fast: [4], slow: [4], "gob/BenchmarkOnlyFast-2": [1]}
    assert got[f"{slow} [B/op]"] == [4]
