"""A tool's invocation split by optimized plan (``REGBENCH_SELECT``): each adapter's selection in
its tool's filter syntax, and ``run --plan optimized`` end to end with real processes (a small
tool printing ``go test -bench`` output, and the real ``go test`` when installed), real git and
a real store: each group runs with its plan, results are stored as before, RMIT interleaves the
groups, and running again resumes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from regbench.adapters.base import anchored_alternation, get_adapter
from regbench.cli.main import main
from regbench.config import BenchmarkSpec
from regbench.demo_project import git_commit, git_init
from regbench.model import ExecutionPlan
from regbench.optimize.plans import split_invocation
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.plans import NewPlan, save_plans

PY = sys.executable
GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


# ------------------------------------------------------------------ selection, per adapter
#: Names with every regex metacharacter; a regex of the selection must match them and only them.
TRICKY = ["a.b", "a+b*c?", "x(y)|z", "p[q]{2}", "^s$", "back\\slash", "plain"]


def _matches(pattern: str, name: str) -> bool:
    # Python's re agrees with RE2, Java and ECMAScript on what these patterns use (groups,
    # alternation, anchors, escaped punctuation).
    return re.search(pattern, name) is not None


@pytest.mark.parametrize("fmt", ["google-benchmark", "criterion"])
def test_a_regex_selection_matches_exactly_the_names_with_metacharacters(fmt):
    adapter = get_adapter(fmt)
    chosen = ["a.b", "x(y)|z", "^s$", "back\\slash"]
    pattern = adapter.render_selection([adapter.selection_unit(n) for n in chosen])
    assert pattern.startswith("^(") and pattern.endswith(")$")
    for name in TRICKY + ["axb", "a.bc", "x(y)", "z", "s", "aa.b"]:
        assert _matches(pattern, name) == (name in chosen), name
    # Only Go's QuoteMeta set is escaped: a blank or '-' stays itself (POSIX and Rust refuse `\ `).
    assert adapter.render_selection(["BM_x/threads:2 -y"]) == "^(BM_x/threads:2 -y)$"


#: Programs reading a pattern (argv[1]) and names (one per line on stdin), printing 1 or 0 per
#: name: whether the engine the tool uses finds the pattern in it.
ENGINES = {
    "go": ("main.go", """package main
import ("bufio"; "fmt"; "os"; "regexp")
func main() { re := regexp.MustCompile(os.Args[1]); s := bufio.NewScanner(os.Stdin)
  for s.Scan() { if re.MatchString(s.Text()) { fmt.Println(1) } else { fmt.Println(0) } } }
"""),
    "java": ("Main.java", """import java.io.*; import java.util.regex.*;
public class Main { public static void main(String[] a) throws IOException {
  Pattern re = Pattern.compile(a[0]); BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
  for (String l; (l = in.readLine()) != null;) System.out.println(re.matcher(l).find() ? 1 : 0); } }
"""),
    "c++": ("main.cpp", """#include <iostream>
#include <regex>
#include <regex.h>
#include <string>
int main(int, char** argv) { std::regex re(argv[1]); regex_t posix;
  if (regcomp(&posix, argv[1], REG_EXTENDED | REG_NOSUB)) return 2;
  for (std::string l; std::getline(std::cin, l);) {
    bool a = std::regex_search(l, re), b = regexec(&posix, l.c_str(), 0, nullptr, 0) == 0;
    if (a != b) return 3;
    std::cout << a << "\\n"; } }
"""),
}


def _engine_argv(engine: str, folder: Path) -> list[str] | None:
    name, source = ENGINES[engine]
    (folder / name).write_text(source)
    if engine == "go":
        return None if GO is None else [GO, "run", str(folder / name)]
    if engine == "java":
        java = shutil.which("java")
        return None if java is None else [java, str(folder / name)]
    cxx = shutil.which("g++")
    if cxx is None:
        return None
    subprocess.run([cxx, "-o", str(folder / "engine"), str(folder / name)], check=True, capture_output=True)
    return [str(folder / "engine")]


@pytest.mark.parametrize("engine", ["go", "java", "c++"])
def test_the_real_regex_engines_select_exactly_the_names(engine, tmp_path):
    """Go's regexp (go test -bench), Java's (JMH) and std::regex and POSIX regcomp (Google
    Benchmark's two builds) find the rendered pattern in the names selected and in no other."""
    argv = _engine_argv(engine, tmp_path)
    if argv is None:
        pytest.skip(f"no {engine} here")
    chosen = ["a.b", "x(y)|z", "^s$", "back\\slash", "BM_x/threads:2 -y#&~"]
    names = TRICKY + chosen[-1:] + ["axb", "z", "a.bc"]
    done = subprocess.run([*argv, anchored_alternation(chosen)], input="\n".join(names) + "\n", text=True,
                          capture_output=True, timeout=120, env={**os.environ, "GOTOOLCHAIN": "local"})
    assert done.returncode == 0, done.stderr
    assert dict(zip(names, done.stdout.split(), strict=True)) == {n: "1" if n in chosen else "0" for n in names}


def test_go_selects_top_level_functions_of_what_it_reported():
    go = get_adapter("go")
    assert get_adapter("go-json").selection_unit("BenchmarkA-8") == "BenchmarkA"
    units = {go.selection_unit(n) for n in ["BenchmarkA-8", "BenchmarkA-8 [B/op]", "BenchmarkX/size=10-8",
                                            "BenchmarkX/size=10-8 [allocs/op]", "BenchmarkY"]}
    assert units == {"BenchmarkA", "BenchmarkX", "BenchmarkY"}
    pattern = go.render_selection(sorted(units))
    assert pattern == "^(BenchmarkA|BenchmarkX|BenchmarkY)$"
    # go test -bench splits its pattern on '/' and matches the first part against the function.
    assert "/" not in pattern
    assert not _matches(pattern, "BenchmarkAB") and not _matches(pattern, "BenchmarkZ")


def test_jmh_selects_fully_qualified_methods_whatever_their_params_and_metrics():
    jmh = get_adapter("jmh")
    reported = ["org.ex.Bench.sort(size=10, mode=avgt)", "org.ex.Bench.sort(size=20) [gc.alloc.rate]",
                "org.ex.Inner$Bench.run"]
    units = sorted({jmh.selection_unit(n) for n in reported})
    assert units == ["org.ex.Bench.sort", "org.ex.Inner$Bench.run"]
    pattern = jmh.render_selection(units)
    assert pattern == r"^(org\.ex\.Bench\.sort|org\.ex\.Inner\$Bench\.run)$"
    assert _matches(pattern, "org.ex.Inner$Bench.run") and not _matches(pattern, "orgXex.Bench.sort")


def test_pytest_benchmark_selects_with_a_k_expression():
    pb = get_adapter("pytest-benchmark")
    units = [pb.selection_unit("tests/test_x.py::TestC::test_sorted[10-a::b]"),
             pb.selection_unit("bench/test_y.py::test_join")]
    assert units == ["tests/test_x.py::TestC::test_sorted", "bench/test_y.py::test_join"]
    assert pb.render_selection(units) == "(test_x.py and TestC and test_sorted) or (test_y.py and test_join)"
    # A name -k cannot write (a keyword, a blank) cannot be selected: the invocation is not split.
    assert pb.selection_unit("test_x.py::and") is None and pb.selection_unit("a b.py::test_q") is None


def test_pytest_collects_what_the_k_expression_selects(tmp_path):
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\nclass TestC:\n    @pytest.mark.parametrize('n', [1, 2])\n"
        "    def test_sorted(self, n):\n        pass\n\n    def test_other(self):\n        pass\n\n"
        "def test_sorted():\n    pass\n")
    (tmp_path / "test_y.py").write_text("def test_join():\n    pass\n\ndef test_split():\n    pass\n")
    pb = get_adapter("pytest-benchmark")
    units = [pb.selection_unit(n) for n in ("test_x.py::TestC::test_sorted[1]", "test_y.py::test_join")]
    done = subprocess.run([PY, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-c", os.devnull, "--rootdir", str(tmp_path), "-k", pb.render_selection(units)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    collected = sorted(line for line in done.stdout.splitlines() if "::" in line)
    assert collected == ["test_x.py::TestC::test_sorted[1]", "test_x.py::TestC::test_sorted[2]",
                         "test_y.py::test_join"]


def test_cargo_bench_names_and_formats_without_a_filter():
    cb = get_adapter("cargo-bench")
    assert cb.render_selection([cb.selection_unit("nested::sum_1000"), "copy"]) == "nested::sum_1000 copy"
    for fmt in ("hyperfine", "pyperf", "bmf", "asv"):
        adapter = get_adapter(fmt)
        assert adapter.selection == "" and adapter.selection_unit("x") is None


def _plan(name: str, runs: int, iterations: int) -> ExecutionPlan:
    return ExecutionPlan(benchmark=name, config="default", machine="m", revision=1, campaign_id=1, version="v",
                         runs=runs, iterations=iterations, warmup=0, full_runs=9, full_iterations=9, metric="rciw3",
                         threshold=0.01, stability=0.0, full_stability=0.0, stable=True, seconds=None,
                         full_seconds=None, created_at=datetime(2024, 1, 1))


def test_split_groups_units_by_plan_and_says_why_it_does_not_split():
    spec = BenchmarkSpec(name="go", kind="command", command=("sh", "-c", 'go test -bench "$REGBENCH_SELECT"'),
                         format="go", runs=7, iterations=8)
    plans = [_plan("go/BenchmarkA-2", 2, 3), _plan("go/BenchmarkA-2 [B/op]", 1, 5),
             _plan("go/BenchmarkB-2", 4, 4), _plan("go/BenchmarkD-2", 4, 4)]
    split = split_invocation(spec, plans, known=["BenchmarkC-2"])
    assert [(g.label, g.runs, g.iterations, g.units, g.planned) for g in split.groups] == [
        ("go[1]", 7, 8, ("BenchmarkC",), False),             # no plan: as configured
        ("go[2]", 4, 4, ("BenchmarkB", "BenchmarkD"), True),  # equal plans: one invocation
        ("go[3]", 2, 5, ("BenchmarkA",), True)]               # a function's metrics: their most
    assert split.groups[2].reported == ("BenchmarkA-2", "BenchmarkA-2 [B/op]")
    assert split.groups[1].select == "^(BenchmarkB|BenchmarkD)$"
    import dataclasses

    plain = dataclasses.replace(spec, command=("go", "test", "-bench", "."))
    assert split_invocation(plain, plans).reason == "its command does not use REGBENCH_SELECT"
    assert split_invocation(spec, plans[:2]).reason == "one plan for all its benchmarks"
    hf = dataclasses.replace(spec, format="hyperfine")
    assert "no filter" in (split_invocation(hf, plans).reason or "")


def test_a_tool_is_never_asked_for_fewer_repetitions_than_it_accepts():
    """Criterion refuses fewer than 10 samples (`--sample-size`): a plan of 1 iteration (what
    optimize chose for a stable benchmark) runs 10, split or not; Go takes any count."""
    from regbench.optimize.plans import CampaignPlans, planned_spec

    crit = BenchmarkSpec(name="crit", kind="command", format="criterion", runs=3, iterations=20,
                         command=("sh", "-c", 'CRITERION_HOME={output} cargo bench -- "$REGBENCH_SELECT"'))
    plans = [_plan("crit/decode", 3, 1), _plan("crit/encode/hex/64", 3, 20)]
    split = split_invocation(crit, plans)
    assert sorted((g.select, g.iterations) for g in split.groups) == [("^(decode)$", 10), ("^(encode/hex/64)$", 20)]
    one = CampaignPlans(runs={"crit": 3}, iterations={"crit": 1}, plans=(), unplanned=())
    assert planned_spec(crit, one).iterations == 10
    go = BenchmarkSpec(name="go", kind="command", format="go", command=("go", "test", "-bench", "."))
    assert planned_spec(go, CampaignPlans(runs={"go": 3}, iterations={"go": 1}, plans=(), unplanned=())).iterations == 1


# ---------------------------------------------------------------------- end to end, a tool
#: A tool printing `go test -bench` text for BenchmarkA, B and C (each with a B/op metric),
#: running those its first argument (a regex, as -bench) selects (and A too with ALWAYS_A), its
#: second argument times each (as -count); it logs what it ran, and fails when FAIL_FLAG exists
#: and it runs C.
TOOL = r"""
import json, os, re, sys
pattern, count = sys.argv[1], int(sys.argv[2])
ran = [n for n in ("BenchmarkA", "BenchmarkB", "BenchmarkC") if re.search(pattern, n)
       or (n == "BenchmarkA" and os.environ.get("ALWAYS_A"))]
with open(os.environ["LOG"], "a") as log:
    log.write(json.dumps({"select": os.environ.get("REGBENCH_SELECT"), "ran": ran, "count": count,
                          "version": os.environ["REGBENCH_VERSION"]}) + "\n")
if "BenchmarkC" in ran and os.path.exists(os.environ["FAIL_FLAG"]):
    sys.exit("C failed on purpose")
print("goos: linux\ngoarch: amd64\npkg: fake")
for name in ran:
    for k in range(count):
        print(f"{name}-2   \t    1000\t  {100 + ord(name[-1]) + k}.0 ns/op\t      16 B/op")
print("PASS")
"""

SELECTING = ["sh", "-c", 'exec "$0" tool.py "${REGBENCH_SELECT:-.}" "$REGBENCH_ITERATIONS"', PY]
NOT_SELECTING = ["sh", "-c", 'exec "$0" tool.py . "$REGBENCH_ITERATIONS"', PY]


def _project(tmp_path: Path, command: list[str], warmup: int = 0, **more: str) -> Path:
    repo = tmp_path / "proj"
    git_init(repo)
    env = {"LOG": str(tmp_path / "log.jsonl"), "FAIL_FLAG": str(tmp_path / "fail-c"), **more}
    text = ("[project]\nname = \"p\"\n\n[[benchmark]]\nname = \"tool\"\nformat = \"go\"\nruns = 3\n"
            f"iterations = 4\nwarmup = {warmup}\ncommand = {json.dumps(command)}\n"
            "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }\n")
    (repo / "regbench.toml").write_text(text)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"tool.py": TOOL, "regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    return repo


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _log(tmp_path: Path) -> list[dict]:
    path = tmp_path / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _full_then_plans(repo: Path, capsys) -> None:
    """A full campaign of the newest version, then plans for A (2 x 2) and B (4 x 6); C has none."""
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        cid = max(c.id for c in s.campaigns())
        head = s.versions()[-1].name

        def plan(name: str, runs: int, iterations: int) -> NewPlan:
            return NewPlan(f"tool/{name}", "default", "m", cid, head, runs, iterations, 0, 3, 4, "rciw3", 0.01,
                           0.004, 0.003, True, None, None)

        save_plans(s, [plan("BenchmarkA-2", 2, 2), plan("BenchmarkA-2 [B/op]", 1, 1),
                       plan("BenchmarkB-2", 4, 6), plan("BenchmarkB-2 [B/op]", 2, 2)])


def _stored(repo: Path, version_index: int = 0) -> tuple[str, dict[str, list[tuple[int, int]]], list]:
    """The version's name, per series its runs (index, samples), and the tool's own runs."""
    with Store(repo / "s.db") as s:
        version = s.versions()[version_index].name
        series: dict[str, list[tuple[int, int]]] = {}
        own = []
        for r in s.runs(version=version):
            if r.benchmark == "tool":
                own.append(r)
            else:
                series.setdefault(r.benchmark, []).append((r.run_index, r.n_samples))
        return version, series, own


def test_each_group_runs_its_plan_interleaved_and_a_second_run_resumes(tmp_path, capsys):
    repo = _project(tmp_path, SELECTING)
    _full_then_plans(repo, capsys)
    full = _log(tmp_path)
    assert len(full) == 3 and all(e["select"] is None and e["ran"] == ["BenchmarkA", "BenchmarkB", "BenchmarkC"]
                                  for e in full)  # a campaign without plans: REGBENCH_SELECT unset

    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                        "--seed", "2", capsys=capsys)
    assert rc == 0, err
    runs = _log(tmp_path)[3:]
    by_select: dict[str, list[dict]] = {}
    for e in runs:
        by_select.setdefault(e["select"], []).append(e)
    # B's plan (4 x 6), C as configured (3 x 4), A's plan (2 x 2), each invocation running its own.
    assert {s: (len(es), {e["count"] for e in es}, {tuple(e["ran"]) for e in es}) for s, es in by_select.items()} == {
        "^(BenchmarkB)$": (4, {6}, {("BenchmarkB",)}),
        "^(BenchmarkC)$": (3, {4}, {("BenchmarkC",)}),
        "^(BenchmarkA)$": (2, {2}, {("BenchmarkA",)})}
    # RMIT across the groups (spread_order): the first round holds the first run of each.
    assert {e["select"] for e in runs[:3]} == set(by_select)
    assert "tool: one invocation per plan" in out and "tool[3] 2 runs x 2 (BenchmarkA)" in out

    version, series, own = _stored(repo)
    assert own == []  # no invocation failed: the tool's runs are its benchmarks' series
    assert {name: sorted(n for _, n in rs) for name, rs in series.items()} == {
        "tool/BenchmarkA-2": [2, 2], "tool/BenchmarkA-2 [B/op]": [2, 2],
        "tool/BenchmarkB-2": [6] * 4, "tool/BenchmarkB-2 [B/op]": [6] * 4,
        "tool/BenchmarkC-2": [4] * 3, "tool/BenchmarkC-2 [B/op]": [4] * 3}
    indexes = {name.split(" ")[0]: {r for r, _ in rs} for name, rs in series.items()}
    assert sorted(indexes["tool/BenchmarkA-2"] | indexes["tool/BenchmarkB-2"] | indexes["tool/BenchmarkC-2"]) \
        == list(range(9))  # one index per invocation: the groups never share one
    with Store(repo / "s.db") as s:
        plan = max(s.campaigns(), key=lambda c: c.id).plan
    groups = plan["split"]["tool"]["groups"]
    assert [(g["label"], g["runs"], g["iterations"], g["select"], g["planned"]) for g in groups] == [
        ("tool[1]", 4, 6, "^(BenchmarkB)$", True), ("tool[2]", 3, 4, "^(BenchmarkC)$", False),
        ("tool[3]", 2, 2, "^(BenchmarkA)$", True)]
    assert plan["benchmarks"]["tool"]["runs"] == 4 and plan["benchmarks"]["tool"]["iterations"] == 6
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and re.search(r"tool\s+tool\[2\]\s+3 x 4 \(configured\)\s+\^\(BenchmarkC\)\$\s+\(unset\)\s+BenchmarkC-2, "
                                 r"BenchmarkC-2 \[B/op\]", out), out

    # The same command again resumes: nothing to run, nothing lost.
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                        "--seed", "3", capsys=capsys)
    assert rc == 0, err
    assert len(_log(tmp_path)) == 3 + 9 and "9 runs already stored were not run again" in out
    assert _stored(repo)[1] == series


def test_a_failed_group_is_stored_apart_and_resuming_knows_whose_run_it_was(tmp_path, capsys):
    repo = _project(tmp_path, SELECTING)
    _full_then_plans(repo, capsys)
    (tmp_path / "fail-c").touch()
    rc, out, _ = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized", "--seed", "2",
                      capsys=capsys)
    assert rc == 4 and "3 runs of tool[2]: failed (exit status 1): C failed on purpose" in out
    version, series, own = _stored(repo)
    assert len(own) == 3 and {r.status for r in own} == {"failed"}
    assert all("[regbench] split invocation tool[2] (REGBENCH_SELECT=^(BenchmarkC)$)" in r.stderr_tail for r in own)
    assert all(r.stderr_tail.endswith("[regbench] exit status 1") for r in own)  # the cause still ends it
    a_indexes = sorted(r for r, _ in series["tool/BenchmarkA-2"])
    b_indexes = {r for r, _ in series["tool/BenchmarkB-2"]}
    assert len({r.run_index for r in own} | set(a_indexes) | b_indexes) == 9  # no index shared
    assert "tool/BenchmarkC-2" not in series

    # A run of A lost (as if the campaign had been killed before it): the next campaign runs
    # exactly that one; C's failures are C's (they do not count as A's runs).
    with Store(repo / "s.db") as s:
        def work(conn):
            vid = conn.execute(sa.select(t.version.c.id).where(t.version.c.name == version)).scalar()
            conn.execute(t.run.delete().where(t.run.c.version_id == vid, t.run.c.run_index == a_indexes[0]))

        s.write(work)
    before = len(_log(tmp_path))
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized", "--seed", "3",
                        capsys=capsys)
    assert rc == 0, err
    new = _log(tmp_path)[before:]
    assert [(e["select"], e["count"]) for e in new] == [("^(BenchmarkA)$", 2)]
    assert "3 runs that failed earlier were not run again: add --retry-failed" in out

    # Once fixed, --retry-failed runs C's group again, and only it.
    (tmp_path / "fail-c").unlink()
    before = len(_log(tmp_path))
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized", "--seed", "4",
                        "--retry-failed", capsys=capsys)
    assert rc == 0, err
    new = _log(tmp_path)[before:]
    assert [(e["select"], e["count"]) for e in new] == [("^(BenchmarkC)$", 4)] * 3
    _, series, own = _stored(repo)
    assert sorted(n for _, n in series["tool/BenchmarkC-2"]) == [4, 4, 4] and len(own) == 3
    assert len({r for rs in series.values() for r, _ in rs} | {r.run_index for r in own}) == 12


def test_without_regbench_select_in_the_command_one_invocation_runs_the_most(tmp_path, capsys):
    repo = _project(tmp_path, NOT_SELECTING)
    _full_then_plans(repo, capsys)
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                        "--seed", "2", capsys=capsys)
    assert rc == 0, err
    runs = _log(tmp_path)[3:]
    assert [(e["select"], e["count"], len(e["ran"])) for e in runs] == [(None, 6, 3)] * 4
    assert "tool: one invocation for all its plans (the most runs and iterations): its command does not use " \
           "REGBENCH_SELECT" in out
    _, series, _ = _stored(repo)
    assert {name: sorted(n for _, n in rs) for name, rs in series.items() if "[" not in name} == {
        f"tool/Benchmark{x}-2": [6] * 4 for x in "ABC"}
    with Store(repo / "s.db") as s:
        plan = max(s.campaigns(), key=lambda c: c.id).plan
    assert plan["split"] == {"tool": {"reason": "its command does not use REGBENCH_SELECT"}}
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and "not split: its command does not use REGBENCH_SELECT" in out


def test_a_benchmark_reported_outside_its_selection_is_stored_too(tmp_path, capsys):
    repo = _project(tmp_path, SELECTING, ALWAYS_A="1")
    _full_then_plans(repo, capsys)
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                      "--seed", "2", capsys=capsys)
    assert rc == 0, err
    assert len(_log(tmp_path)) == 3 + 9
    _, series, own = _stored(repo)
    # A ran in every invocation: stored in each, with that invocation's iterations.
    assert own == [] and sorted(n for _, n in series["tool/BenchmarkA-2"]) == [2] * 2 + [4] * 3 + [6] * 4
    assert sorted(n for _, n in series["tool/BenchmarkB-2"]) == [6] * 4


@pytest.mark.parametrize("command", [SELECTING, NOT_SELECTING])
def test_a_tools_configured_warmup_is_warmup_under_a_plan_too(tmp_path, capsys, command):
    # warmup = 1: the full campaign asks for 1 + 4 iterations and the tool reports 5 samples, the
    # first of each benchmark marked as warm-up, so plans count 4 measured iterations at the full
    # level.  A plan of 4 asks the tool for 1 + 4 again; a plan of 1 asks for 1 + 1; C without a
    # plan runs as configured (1 + 4).
    repo = _project(tmp_path, command, warmup=1)
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    assert {e["count"] for e in _log(tmp_path)} == {5}
    with Store(repo / "s.db") as s:
        cid = max(c.id for c in s.campaigns())
        head = s.versions()[-1].name
        assert {(r.n_samples, r.warmup) for r in s.runs()} == {(5, 1)}

        def plan(name: str, runs: int, iterations: int) -> NewPlan:
            return NewPlan(f"tool/{name}", "default", "m", cid, head, runs, iterations, 0, 3, 5, "rciw3", 0.01,
                           0.004, 0.003, True, None, None)

        save_plans(s, [plan("BenchmarkA-2", 2, 1), plan("BenchmarkA-2 [B/op]", 2, 1), plan("BenchmarkB-2", 3, 4)])
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                      "--seed", "2", capsys=capsys)
    assert rc == 0, err
    runs = _log(tmp_path)[3:]
    if command is SELECTING:
        assert sorted((e["select"], e["count"]) for e in runs) == sorted(
            [("^(BenchmarkB|BenchmarkC)$", 5)] * 3 + [("^(BenchmarkA)$", 2)] * 2)
    else:  # one invocation of the most: B's 3 x 4, as the full campaign's 1 + 4
        assert [(e["select"], e["count"]) for e in runs] == [(None, 5)] * 3
    _, series, _ = _stored(repo)
    assert max(n for rs in series.values() for _, n in rs) == 5


# --------------------------------------------------------------------- end to end, go test
GO_BENCH = """package tiny

import (
	"strings"
	"testing"
)

var sink string

func BenchmarkA(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = strings.Repeat("a", 8)
	}
}

func BenchmarkB(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = strings.ToUpper("bb")
	}
}

func BenchmarkC(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(strings.Repeat("x", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = strings.Repeat("c", n)
			}
		})
	}
}
"""


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_go_test_runs_one_invocation_per_plan(tmp_path, capsys):
    repo = tmp_path / "proj"
    git_init(repo)
    command = ["sh", "-c", 'exec "$0" test -run "^$" -bench "${REGBENCH_SELECT:-.}" -count "$REGBENCH_ITERATIONS" '
               '-benchtime 100x -cpu 2 .', GO]
    text = ("[project]\nname = \"g\"\n\n[[benchmark]]\nname = \"gob\"\nformat = \"go\"\nruns = 2\niterations = 2\n"
            f"timeout = 300\ncommand = {json.dumps(command)}\n"
            'env = { GOFLAGS = "-mod=mod", GOTOOLCHAIN = "local" }\n')
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"go.mod": "module example.com/tiny\n\ngo 1.18\n", "tiny_test.go": GO_BENCH,
                      "regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        cid = max(c.id for c in s.campaigns())
        head = s.versions()[-1].name
        names = sorted(b.name for b in s.benchmarks())
        assert names == ["gob/BenchmarkA-2", "gob/BenchmarkB-2", "gob/BenchmarkC/x-2", "gob/BenchmarkC/xx-2"]
        save_plans(s, [NewPlan(f"gob/{n}", "default", "m", cid, head, r, i, 0, 2, 2, "rciw3", 0.01, 0.0, 0.0, True,
                               None, None) for n, r, i in [("BenchmarkA-2", 1, 3), ("BenchmarkB-2", 1, 1)]])
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                        "--seed", "2", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        v1 = s.versions()[0].name
        got = {}
        for r in s.runs(version=v1):
            got.setdefault(r.benchmark, []).append((r.run_index, r.n_samples))
    # go test ran each group's benchmarks only: A 1 x 3, B 1 x 1, C's sub-benchmarks (no plan)
    # 2 x 2 as configured, each invocation under its own run index.
    assert {b: sorted(n for _, n in rs) for b, rs in got.items()} == {
        "gob/BenchmarkA-2": [3], "gob/BenchmarkB-2": [1], "gob/BenchmarkC/x-2": [2, 2], "gob/BenchmarkC/xx-2": [2, 2]}
    assert {r for r, _ in got["gob/BenchmarkA-2"]} | {r for r, _ in got["gob/BenchmarkB-2"]} \
        | {r for r, _ in got["gob/BenchmarkC/x-2"]} == {0, 1, 2, 3}
