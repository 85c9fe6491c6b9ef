"""``regbench bisect --failure`` and ``detect --bisect`` of failing benchmarks: the first commit
where a benchmark fails, found by building and running the commits between (real git
repositories, real processes, a real SQLite store)."""

from __future__ import annotations

import json
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import PRINTED_PROGRAM, git_commit, git_init
from regbench.run.bisect import bisect_failure
from regbench.run.fingerprint import default_machine_name
from regbench.store import Store

PY = sys.executable
T0 = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
#: The benchmark once it is broken: a check of its result fails, as a real regression test would.
BROKEN = "raise ValueError('checksum 41 != 42')\n"
BUILD = [PY, "-c", "import os, sys; sys.exit(1 if os.path.exists('unbuildable') else 0)"]


def failing_repo(path: Path, *, commits: int = 12, breaks: int = 8, unbuildable: tuple[int, ...] = (),
                 flaky_from: int | None = None) -> list[str]:
    """``commits`` commits (1-based); the benchmark fails in every run from commit ``breaks`` on
    (never, with 0); the commits ``unbuildable`` do not build."""
    git_init(path)
    toml = ('[project]\nname = "p"\nbuild = ' + json.dumps(BUILD) + '\n[defaults]\nruns = 2\niterations = 3\n'
            'warmup = 0\n[[benchmark]]\nname = "b"\ncommand = ' + json.dumps([PY, "bench.py"]) + "\n")
    shas = []
    for k in range(1, commits + 1):
        files: dict[str, str | None] = {f"notes/{k}.txt": f"commit {k}\n"}
        if k == 1:
            files |= {"bench.py": PRINTED_PROGRAM, "level.txt": "1.0", "regbench.toml": toml}
        if k == breaks:
            files["bench.py"] = BROKEN + PRINTED_PROGRAM
        if k in unbuildable:
            files["unbuildable"] = "x"
        elif k - 1 in unbuildable:
            files["unbuildable"] = None
        shas.append(git_commit(path, files, f"commit {k}", when=T0 + timedelta(hours=k)))
    return shas


def test_the_first_failing_commit_is_found_and_every_run_is_stored(tmp_path):
    repo = tmp_path / "repo"
    shas = failing_repo(repo)
    with Store(tmp_path / "r.db") as store:
        result = bisect_failure(load_config(repo / "regbench.toml"), store, shas[0], shas[-1], benchmark="b",
                                runs=2, seed=1, cache_dir=tmp_path / "wt")
        stored = store.runs(benchmark="b")
    assert result.status == "found" and result.culprit == shas[7][:len(result.culprit)]
    assert result.error == "failed (exit status 1): ValueError: checksum 41 != 42"
    good, bad, *steps = result.steps
    # GOOD runs at its first run; BAD fails in both; each step is like one of them.
    assert (good.verdict, good.runs, bad.verdict, bad.runs) == ("good", 1, "bad", 2)
    assert all((s.verdict, s.runs) in {("good", 1), ("bad", 2)} for s in steps)
    # log2 of 11 open commits: 3 or 4 steps, never a walk through all of them.
    assert 3 <= len(steps) <= 4
    assert len(stored) == result.runs and {r.campaign_id for r in stored} == {result.campaign_id}
    assert sum(r.status != "ok" for r in stored) == sum(s.runs for s in result.steps if s.verdict == "bad")


def test_an_unbuildable_commit_before_the_first_failing_one_leaves_both(tmp_path):
    repo = tmp_path / "repo"
    shas = failing_repo(repo, commits=8, breaks=6, unbuildable=(5,))
    with Store(tmp_path / "r.db") as store:
        result = bisect_failure(load_config(repo / "regbench.toml"), store, shas[0], shas[-1], benchmark="b",
                                runs=2, seed=1, cache_dir=tmp_path / "wt")
    # Commit 5 may be the one that broke it: like git bisect skip, the answer is the set.
    assert result.status == "undecided" and result.culprit is None
    assert [c[:7] for c in result.candidates] == [shas[4][:7], shas[5][:7]]
    assert result.skipped == (shas[4][:len(result.skipped[0])],)


@pytest.mark.parametrize("breaks, what", [(1, "GOOD"), (0, "BAD")])
def test_a_failure_that_does_not_happen_here_is_not_bisected(tmp_path, breaks, what):
    """A benchmark failing at GOOD too fails because of the machine or its environment, not the
    commits between; one that runs at BAD is not reproduced.  Nothing between is tried."""
    repo = tmp_path / "repo"
    shas = failing_repo(repo, commits=6, breaks=breaks)
    with Store(tmp_path / "r.db") as store:
        result = bisect_failure(load_config(repo / "regbench.toml"), store, shas[0], shas[-1], benchmark="b",
                                runs=2, seed=1, cache_dir=tmp_path / "wt")
    assert result.status == "not reproduced" and result.culprit is None
    assert result.reason.startswith(what) and len(result.steps) == 2


def test_cli_bisect_failure_prints_the_culprit_and_json_and_refuses_timing_options(tmp_path, capsys):
    repo = tmp_path / "repo"
    shas = failing_repo(repo, commits=6, breaks=4)
    base = ["--store", str(tmp_path / "r.db"), "--config", str(repo / "regbench.toml"), "bisect", shas[0], shas[-1],
            "--benchmark", "b", "--failure", "--seed", "3"]
    assert main(base + ["--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert f"First failing commit: {shas[3][:10]}" in out and "ValueError: checksum 41 != 42" in out
    assert main(base + ["--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["status"], found["culprit"], found["failure"]) == ("found", shas[3][:10], True)
    assert found["steps"][1] == {**found["steps"][1], "commit": shas[-1][:10], "verdict": "bad", "runs": 3}
    assert main(base + ["--threshold", "0.05"]) == 2
    assert "--threshold is about timing changes" in capsys.readouterr().err
    assert main(base[:-3] + ["--runs", "2"]) == 2  # --runs without --failure
    assert "--runs applies to --failure only" in capsys.readouterr().err
    # Nothing fails between GOOD and the commit before the break: exit status 1, said why.
    assert main(base[:5] + [shas[0], shas[2]] + base[7:]) == 1
    assert "Nothing to bisect: BAD" in capsys.readouterr().out


def test_detect_bisect_finds_the_commit_that_broke_a_benchmark_between_nightlies(tmp_path, capsys):
    """Nightly campaigns see the benchmark run at commit 6 and fail at commit 11: ``detect
    --bisect`` runs the commits between and names commit 8, in the text and the JSON."""
    from regbench.run.campaign import run_campaign

    repo = tmp_path / "repo"
    shas = failing_repo(repo, commits=11, breaks=8)
    config = load_config(repo / "regbench.toml")
    db = tmp_path / "r.db"
    with Store(db) as store:
        run_campaign(config, store, revisions=",".join(shas[k] for k in (0, 5, 10)), seed=7)
    args = ["--store", str(db), "--config", str(repo / "regbench.toml"), "detect", "--bisect", "--dry-run"]
    assert main(args + ["--format", "json", "--json-failures"]) == 0
    (failure,) = json.loads(capsys.readouterr().out)
    assert failure["kind"] == "failure" and failure["machine"] == default_machine_name()
    assert failure["bisect"]["status"] == "found" and failure["bisect"]["culprit"] == shas[7][:10]
    assert "bisect_skipped" not in failure
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"First failing commit: {shas[7][:10]}" in out


def test_detect_bisect_leaves_a_suppressed_benchmark_alone(tmp_path, capsys):
    """A benchmark whose alerts ``[alerts] suppress`` turns off does not fail the gate, and is
    not bisected either (building and running the commits between for nothing): listed, with
    the reason."""
    from regbench.run.campaign import run_campaign

    repo = tmp_path / "repo"
    shas = failing_repo(repo, commits=11, breaks=8)
    config = load_config(repo / "regbench.toml")
    db = tmp_path / "r.db"
    with Store(db) as store:
        run_campaign(config, store, revisions=",".join(shas[k] for k in (0, 5, 10)), seed=7)
        runs = len(store.runs())
    toml = repo / "regbench.toml"
    toml.write_text(toml.read_text() + '\n[alerts]\nsuppress = ["b"]\n')
    args = ["--store", str(db), "--config", str(toml), "detect", "--bisect", "--fail-on-regression",
            "--format", "json", "--json-failures"]
    assert main(args) == 0
    (failure,) = json.loads(capsys.readouterr().out)
    assert failure["kind"] == "failure" and failure["alert"] is None
    assert failure["bisect"] is None
    assert failure["bisect_skipped"] == "its benchmark's alerts are suppressed by regbench.toml"
    with Store(db) as store:
        assert len(store.runs()) == runs  # no commit was run


def test_detect_bisect_bisects_a_failure_once(tmp_path, capsys):
    """Every pass finds the benchmark failing until it runs again; it is bisected by the first
    pass with --bisect (its alert may be older: a server checking each push without it), and
    later passes say why not again (no new runs, no new campaign)."""
    from regbench.run.campaign import run_campaign

    repo = tmp_path / "repo"
    shas = failing_repo(repo, commits=7, breaks=5)
    config = load_config(repo / "regbench.toml")
    db = tmp_path / "r.db"
    with Store(db) as store:
        run_campaign(config, store, revisions=",".join(shas[k] for k in (0, 3, 6)), seed=7)
    args = ["--store", str(db), "--config", str(repo / "regbench.toml"), "detect", "--bisect", "--incremental",
            "--format", "json", "--json-failures"]
    assert main([a for a in args if a != "--bisect"]) == 0  # the alert is opened without --bisect
    capsys.readouterr()
    assert main(args) == 0
    (first,) = json.loads(capsys.readouterr().out)
    assert first["bisect"]["culprit"] == shas[4][:10]
    with Store(db) as store:
        runs, campaigns = len(store.runs()), len(store.campaigns())
    # Kept with the failure alert, so that `alerts show`, notifications and the API point at it.
    assert main(["--store", str(db), "alerts", "show", str(first["alert"]["id"]), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["culprit"] == shas[4][:10] and shown["bisection"].startswith(f"first failing commit {shas[4][:10]}: ")
    assert shown["history"][-1]["why"] == f"bisected: {shown['bisection']}"
    assert main(["--store", str(db), "alerts", "show", str(first["alert"]["id"])]) == 0
    text = capsys.readouterr().out
    assert f"first failing commit {shas[4][:10]}: failed (exit status 1)" in text.splitlines()[0]
    assert f"  bisected: first failing commit {shas[4][:10]}" in text
    assert main(args) == 0
    (again,) = json.loads(capsys.readouterr().out)
    assert again["bisect"] is None
    assert again["bisect_skipped"] == f"its failure alert #{first['alert']['id']} was bisected before: {shown['bisection']}"
    with Store(db) as store:
        assert (len(store.runs()), len(store.campaigns())) == (runs, campaigns)


def test_a_tool_benchmark_is_bisected_by_its_invocation(tmp_path):
    """A benchmark that reports through a tool (here the Bencher Metric Format a script prints)
    whose invocation starts failing, as a Go suite that no longer compiles does: the failure of
    the configured benchmark is bisected by whether the invocation fails."""
    repo = tmp_path / "repo"
    git_init(repo)
    bmf = ("import json, os\n"
           "print(json.dumps({'sort': {'latency': {'value': 5000.0 + int(os.environ['REGBENCH_RUN_INDEX'])}}}))\n")
    toml = ('[project]\nname = "p"\n[defaults]\nruns = 2\nwarmup = 0\n'
            '[[benchmark]]\nname = "tool"\nformat = "bmf"\ncommand = ' + json.dumps([PY, "bench.py"]) + "\n")
    shas = []
    for k in range(1, 9):
        files: dict[str, str | None] = {f"notes/{k}.txt": f"commit {k}\n"}
        if k == 1:
            files |= {"bench.py": bmf, "regbench.toml": toml}
        if k == 6:
            files["bench.py"] = "import missing_module_of_commit_6\n" + bmf
        shas.append(git_commit(repo, files, f"commit {k}", when=T0 + timedelta(hours=k)))
    with Store(tmp_path / "r.db") as store:
        result = bisect_failure(load_config(repo / "regbench.toml"), store, shas[0], shas[-1], benchmark="tool",
                                runs=2, seed=1, cache_dir=tmp_path / "wt")
    assert result.status == "found" and result.culprit == shas[5][:len(result.culprit)]
    assert "ModuleNotFoundError: No module named 'missing_module_of_commit_6'" in result.error


def test_a_bisection_stopped_by_a_build_is_not_kept_so_the_next_pass_tries_again(tmp_path):
    """A bisection whose GOOD or BAD did not build (a registry down, a full disk) is no answer:
    nothing is kept with the alert, and the next pass with --bisect bisects it; an answer is kept."""
    import numpy as np

    from regbench.detect import Change
    from regbench.detect.alerts import record_alerts
    from regbench.model import RunRecord, VersionInfo
    from regbench.pipeline import _keep_bisections
    from regbench.run.bisect import FailureBisection, FailureStep
    from regbench.store.alerts import get_alert

    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("b", v, 0, np.ones(3)) for v in ("v1", "v2")],
                       versions=[VersionInfo("v1"), VersionInfo("v2")])
        machine = store.machine_names()[0]
        (alert,) = record_alerts(store, [Change("b", "default", machine, "v2", "v1", 0.1, 0.05, 0.15,
                                                "regression", "auto")]).created
        unbuilt = FailureBisection("b", "aaa", "bbb", "unbuilt", None, None,
                                   (FailureStep("aaa", "unbuilt", 0, None, 0.0),), (), 3, 1, (), "GOOD did not build")
        assert _keep_bisections(store, [(alert.id, unbuilt)]) == {}
        assert get_alert(store, alert.id).bisection is None
        found = FailureBisection("b", "aaa", "bbb", "found", "ccc", "failed (exit status 1)",
                                 (FailureStep("ccc", "bad", 3, "failed (exit status 1)", 0.1),), ("ccc",), 3, 2)
        kept = _keep_bisections(store, [(alert.id, found)])
        assert (kept[alert.id].culprit, kept[alert.id].bisection) == ("ccc", found.summary())


GO_BENCH = '''package p

import (
	"strings"
	"testing"
)

var sink string

func BenchmarkJoin(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = strings.Join([]string{"a", "b"}, ",")
	}
}

func BenchmarkSplit(b *testing.B) {
	BROKEN
	for i := 0; i < b.N; i++ {
		sink = strings.Split("a,b", ",")[0]
	}
}
'''


GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_one_benchmark_a_go_suite_reports_failing_is_bisected_by_what_go_test_says(tmp_path, go_cache):
    """``go test -bench`` runs the suite; from commit 5 on, BenchmarkSplit calls b.Fatal while
    BenchmarkJoin goes on: its failing series (``gobench/BenchmarkSplit-2``) is bisected by what
    go test reports of it, not by the invocation (which fails from there on too, for any reason)."""
    go = GO
    repo = tmp_path / "repo"
    git_init(repo)
    toml = ('[project]\nname = "p"\n[defaults]\nruns = 1\n[[benchmark]]\nname = "gobench"\nformat = "go"\n'
            'iterations = 1\nwarmup = 0\ntimeout = 120\ncommand = '
            + json.dumps(["sh", "-c", f"{go} test -run '^$' -bench . -count $REGBENCH_ITERATIONS -benchtime 20x "
                                      "-cpu 2 ."])
            + "\n[benchmark.env]\n" + f'GOFLAGS = "-mod=mod"\nGOTOOLCHAIN = "local"\nGOCACHE = "{go_cache}"\n'
            + f'GOPATH = "{tmp_path / "gopath"}"\n')
    shas = []
    for k in range(1, 9):
        broken = 'b.Fatal("split: wrong field count")' if k >= 5 else "_ = b"
        files: dict[str, str | None] = {"bench_test.go": GO_BENCH.replace("BROKEN", broken)}
        if k == 1:
            files |= {"go.mod": "module example.com/p\n\ngo 1.18\n", "regbench.toml": toml}
        shas.append(git_commit(repo, files, f"commit {k}", when=T0 + timedelta(hours=k)))
    with Store(tmp_path / "r.db") as store:
        result = bisect_failure(load_config(repo / "regbench.toml"), store, shas[0], shas[-1],
                                benchmark="gobench/BenchmarkSplit-2", runs=1, seed=1, cache_dir=tmp_path / "wt")
        joined = [r.status for r in store.runs(benchmark="gobench/BenchmarkJoin-2")]
    assert result.status == "found" and result.culprit == shas[4][:len(result.culprit)]
    assert "split: wrong field count" in result.error
    assert joined and set(joined) == {"ok"}  # the suite's other benchmark ran at every commit tried
    # Nightlies at commits 1 and 8: detect --bisect finds the failing series and bisects it so.
    from regbench.pipeline import detect_and_alert
    from regbench.run.campaign import run_campaign

    config = load_config(repo / "regbench.toml")
    with Store(tmp_path / "nightly.db") as store:
        run_campaign(config, store, revisions=f"{shas[0]},{shas[-1]}", seed=2)
        outcome = detect_and_alert(store, config, method="auto", fdr=0.05, bisect=True, dry_run=True)
    (failing,) = outcome.failing
    assert failing.benchmark == "gobench/BenchmarkSplit-2"
    assert outcome.failure_bisections[failing.series].culprit == result.culprit
