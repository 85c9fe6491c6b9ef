"""The pull-request workflow: ``compare --base merge-base`` on a branched history, and
``--format github`` (the Markdown comment and the job summary), on a real git repository whose
versions were benchmarked by a real campaign."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import VersionError
from regbench.run.campaign import run_campaign
from regbench.run.versions import main_branch, merge_base
from regbench.store import Store

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
#: One run prints its iterations' timings: the level read from the file named on the command
#: line, with 1% noise drawn from the version and the run (so the campaign is reproducible).
BENCH = ("import os, random, sys\n"
         "level = float(open(sys.argv[1]).read())\n"
         "r = random.Random(os.environ['REGBENCH_VERSION'] + os.environ['REGBENCH_RUN_INDEX'] + sys.argv[1])\n"
         "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
         "    print(level * r.lognormvariate(0, 0.01))\n")
#: A benchmark whose name holds a `|`, which a Markdown table must escape.
PIPED = "parse | json"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, object]:
    """main: c0 -> c1; branch `feat` from c0: f1 (PIPED 20% slower) -> f2 (no further change);
    branch `ok` from c0: g1 (`fast` 20% faster); branch `late` from c1: h1.  c0, f2 and g1 are
    benchmarked (5 runs each); c1, the merge base of `late`, is not."""
    tmp = tmp_path_factory.mktemp("prflow")
    repo = tmp / "proj"
    git_init(repo)
    toml = ('[project]\nname = "p"\n[defaults]\nruns = 5\niterations = 3\nwarmup = 0\n'
            f'[[benchmark]]\nname = {json.dumps(PIPED)}\ncommand = {json.dumps([sys.executable, "bench.py", "a.txt"])}\n'
            f'[[benchmark]]\nname = "fast"\ncommand = {json.dumps([sys.executable, "bench.py", "b.txt"])}\n')
    when = iter(T0 + timedelta(hours=k) for k in range(100))
    c = {"c0": git_commit(repo, {"bench.py": BENCH, "regbench.toml": toml, ".gitignore": ".regbench/\n",
                                 "a.txt": "1.0", "b.txt": "1.0"}, "c0", when=next(when))}
    git(repo, "checkout", "-q", "-b", "feat")
    c["f1"] = git_commit(repo, {"a.txt": "1.2"}, "f1: slower parse", when=next(when))
    c["f2"] = git_commit(repo, {"notes.txt": "x"}, "f2: notes", when=next(when))
    git(repo, "checkout", "-q", "-b", "ok", c["c0"])
    c["g1"] = git_commit(repo, {"b.txt": "0.8"}, "g1: faster", when=next(when))
    git(repo, "checkout", "-q", "main")
    c["c1"] = git_commit(repo, {"a.txt": "0.5"}, "c1: main moves on", when=next(when))
    git(repo, "checkout", "-q", "-b", "late")
    c["h1"] = git_commit(repo, {"notes.txt": "y"}, "h1", when=next(when))
    store_path = tmp / "r.db"
    with Store(store_path) as store:
        run_campaign(load_config(repo / "regbench.toml"), store, revisions=",".join([c["c0"], c["f2"], c["g1"]]),
                     seed=1, cache_dir=tmp / "wt")
    return {"repo": repo, "store": store_path, "commits": c}


@pytest.fixture
def on(project, monkeypatch):
    """Check out a branch of the project and run regbench in its folder; returns the runner."""
    monkeypatch.chdir(project["repo"])
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)

    def checkout(branch: str):
        git(project["repo"], "checkout", "-q", branch)
        return lambda *args: main(["--store", str(project["store"]), "compare", *args])

    yield checkout
    git(project["repo"], "checkout", "-q", "main")


def test_the_merge_base_is_where_the_branch_left_main_not_the_previous_commit(project):
    repo, c = project["repo"], project["commits"]
    assert main_branch(repo) == "main"
    assert merge_base(repo, "main", "feat") == c["c0"]  # not f1, HEAD~1, nor c1, main's tip
    assert merge_base(repo, "main", "late") == c["c1"]
    assert main_branch(repo, "ok") == "ok"
    with pytest.raises(VersionError, match="unknown revision 'nope'"):
        main_branch(repo, "nope")


def test_main_branch_follows_origin_head_then_falls_back_to_master(tmp_path):
    repo = tmp_path / "r"
    git_init(repo)
    sha = git_commit(repo, {"f": "1"}, "one", when=T0)
    git(repo, "branch", "-m", "main", "master")
    assert main_branch(repo) == "master"
    git(repo, "update-ref", "refs/remotes/origin/trunk", sha)
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert main_branch(repo) == "origin/trunk"
    git(repo, "branch", "-m", "master", "other")
    git(repo, "symbolic-ref", "--delete", "refs/remotes/origin/HEAD")
    with pytest.raises(VersionError, match="no main branch found.*--base-branch"):
        main_branch(repo)


def test_a_regression_since_the_merge_base_is_a_github_comment_and_fails_the_gate(project, on, capsys):
    compare = on("feat")
    assert compare("--base", "merge-base", "--threshold", "0.05", "--format", "github") == 1
    out = capsys.readouterr().out
    c0, f2 = (project["commits"][k][:10] for k in ("c0", "f2"))
    lines = out.splitlines()
    assert lines[0] == "### :x: regbench: 1 regression, 0 improvements, 1 unchanged"
    assert f"{f2} against {c0}" in out  # HEAD against the merge base, not against f1
    assert "<details><summary>All 2 benchmarks, the worst change first</summary>" in lines
    rows = [ln for ln in lines if ln.startswith("| ") and not ln.startswith("| benchmark")]
    # Worst first; the `|` of the name is escaped, so each row has the header's 7 cells.
    assert rows[0].startswith("| parse \\| json | ")
    assert rows[1].startswith("| fast | ")
    header = next(ln for ln in lines if ln.startswith("| benchmark"))
    assert header == f"| benchmark | {c0} | {f2} | change | 99% CI | runs | verdict |"
    for row in rows:
        assert len(re.split(r"(?<!\\)\|", row)) == len(header.split("|"))
    assert rows[0].endswith("| 5/5 | **regression** |")
    assert re.search(r"\| \+(19|20|21)\.\d\d% \| \[\+\d+\.\d\d%, \+\d+\.\d\d%\] \|", rows[0])
    assert rows[1].endswith("| no change |")
    assert lines[-1] == "</details>"


def test_no_regression_exits_0_and_the_summary_file_is_appended(project, on, capsys, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    compare = on("ok")
    assert compare("--base", "merge-base", "--threshold", "0.05", "--format", "github") == 0
    out = capsys.readouterr().out
    assert out.startswith("### :white_check_mark: regbench: 0 regressions, 1 improvement, 1 unchanged\n")
    assert summary.read_text() == "earlier step\n" + out
    rows = [ln for ln in out.splitlines() if ln.startswith("| ") and not ln.startswith("| benchmark")]
    assert rows[0].startswith("| parse \\| json | ") and rows[1].startswith("| fast | ")  # the improvement last
    assert rows[1].endswith("| improvement |")


def test_the_head_can_be_named_and_the_main_branch_given(project, on, capsys):
    compare = on("main")
    # From main, HEAD is c1; name the branch to compare, and the main branch explicitly.
    assert compare("--base", "merge-base", "--base-branch", "main", "feat", "--threshold", "0.05",
                   "--format", "json") == 1
    got = {r["benchmark"]: r for r in json.loads(capsys.readouterr().out)}
    assert got[PIPED]["verdict"] == "regression"
    assert {r["a"] for r in got.values()} == {project["commits"]["c0"][:10]}


def test_a_merge_base_without_results_is_one_line_naming_the_commit(project, on, capsys):
    compare = on("late")
    assert compare("--base", "merge-base") == 3
    err = capsys.readouterr().err
    c1 = project["commits"]["c1"][:10]
    assert err == (f"error: the merge base of main and HEAD, commit {c1}, has no stored results "
                   f"(run it: regbench run --versions {c1})\n")


def test_wrong_uses_of_base_are_usage_errors(on, capsys):
    compare = on("feat")
    assert compare("--base", "merge-base", "HEAD~1", "HEAD") == 2
    assert "give one version" in capsys.readouterr().err
    assert compare("HEAD") == 2
    assert "Missing argument 'B'" in capsys.readouterr().err
    assert compare("--base-branch", "main", "HEAD~1", "HEAD") == 2
    assert "--base-branch needs --base merge-base" in capsys.readouterr().err
    assert compare("--base", "merge-base", "--variance", "--format", "github") == 2
    assert "--format github does not apply to --variance" in capsys.readouterr().err
    compare = on("main")
    assert compare("--base", "merge-base") == 3
    assert "HEAD is the merge base of main and HEAD" in capsys.readouterr().err


def _row(name: str, a: list[float], b: list[float], *, direction: str = "lower", machine: str = "m1"):
    """One benchmark's comparison, computed from run means as `compare` computes it."""
    import warnings

    from regbench.analysis import BenchmarkComparison
    from regbench.stats import compare_runs, verdict

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # one run a side: an undecidable interval
        cmp = compare_runs(a, b, confidence_level=0.99, n_resamples=2000, rng=0)
    return BenchmarkComparison(name, "default", machine, "s", direction, cmp,
                               verdict(cmp.ci_low, cmp.ci_high, direction=direction, threshold=0.0), "v1", "v2")


def test_the_table_puts_the_worst_change_first_whatever_the_direction():
    from regbench.report.github import comparison_markdown

    lvl = [1.0, 1.01, 0.99, 1.0, 1.005]
    rows = [
        _row("fast", lvl, [0.7 * x for x in lvl]),                                # -30%: the best
        _row("lat|ency", lvl, [1.3 * x for x in lvl], machine="m|2"),             # +30%: the worst
        _row("small", lvl, [1.05 * x for x in lvl]),                              # +5%
        _row("thr", [100 * x for x in lvl], [80 * x for x in lvl], direction="higher"),  # -20% of a throughput
        _row("one run", [1.0], [1.01]),                                           # inconclusive
    ]
    text = comparison_markdown(rows, confidence=0.99, threshold=0.0)
    assert text.splitlines()[0] == "### :x: regbench: 3 regressions, 1 improvement, 0 unchanged, 1 inconclusive"
    table = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| benchmark")]
    assert [ln.split(" | ")[0] for ln in table] == ["| lat\\|ency", "| thr", "| small", "| one run", "| fast"]
    # Two machines: a machine column, escaped too.
    assert table[0].startswith("| lat\\|ency | m\\|2 | ")
    assert "| benchmark | machine | v1 | v2 | change | 99% CI | runs | verdict |" in text
    assert table[3].endswith("| 1/1 | inconclusive |") and "[—, —]" in table[3]


def test_a_benchmark_that_no_longer_runs_and_a_rise_from_0_lead_the_table(tmp_path):
    import numpy as np

    from regbench.analysis import compare_versions
    from regbench.model import RunRecord
    from regbench.report.github import comparison_markdown
    from regbench.store import Store

    units = {n: {"unit": "allocs/op", "direction": "lower"} for n in ("zero", "better", "broken", "same")}
    with Store(tmp_path / "r.db") as store:
        c = store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench run")
        recs = []
        for r in range(3):
            recs += [RunRecord("zero", "v1", r, np.zeros(4), machine="m", campaign_id=c),
                     RunRecord("zero", "v2", r, np.ones(4), machine="m", campaign_id=c),
                     RunRecord("better", "v1", r, np.full(4, 10.0) + r * 0.01, machine="m", campaign_id=c),
                     RunRecord("better", "v2", r, np.full(4, 5.0) + r * 0.01, machine="m", campaign_id=c),
                     RunRecord("same", "v1", r, np.full(4, 2.0) + r * 0.01, machine="m", campaign_id=c),
                     RunRecord("same", "v2", r, np.full(4, 2.0) + r * 0.01, machine="m", campaign_id=c),
                     RunRecord("broken", "v1", r, np.full(4, 3.0) + r * 0.01, machine="m", campaign_id=c),
                     RunRecord("broken", "v2", r, np.empty(0), status="failed", exit_code=1, machine="m",
                               campaign_id=c)]
        store.add_runs(recs, benchmarks=units)
        store.finish_campaign(c, "finished")
        text = comparison_markdown(compare_versions(store, "v1", "v2"), confidence=0.99, threshold=0.0)
    assert text.splitlines()[0] == "### :x: regbench: 1 failed, 1 regression, 1 improvement, 1 unchanged"
    table = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| benchmark")]
    assert [ln.split(" | ")[0] for ln in table] == ["| broken", "| zero", "| same", "| better"]


def test_a_comparison_where_nothing_could_be_decided_does_not_look_green(tmp_path, capsys, monkeypatch):
    """A 4-run comparison where every benchmark was inconclusive (`sort` +76% [-38%, +265%]) was
    headed `:white_check_mark:`, as if the pull request had been checked and found fine. The
    gate passes (no regression was shown) but the comment says that nothing was decided."""
    import numpy as np

    from regbench.model import RunRecord

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    levels = {"sort": ([1.0, 1.6, 0.8, 1.1], [1.9, 1.1, 2.6, 1.4]),      # +56% [-57%, +319%]
              "checksum": ([10, 14, 9, 12], [13, 9, 16, 11])}            # +9% [-45%, +98%]
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord(name, version, r, np.full(5, float(level)) * (1 + 0.001 * np.arange(5)))
                        for name, sides in levels.items() for version, runs in zip(("v1", "v2"), sides)
                        for r, level in enumerate(runs)])
    assert main(["--store", str(tmp_path / "r.db"), "compare", "v1", "v2", "--threshold", "0.05",
                 "--format", "github"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "### :grey_question: regbench: inconclusive: 0 regressions, 0 improvements, 0 unchanged, " \
                       "2 inconclusive"
    assert lines[2].startswith("No benchmark could be decided: more runs of each version narrow the intervals")
    assert lines[2].endswith("No regression was shown, so the gate passes.")


def test_some_benchmarks_undecided_is_a_warning_and_a_regression_still_a_cross():
    from regbench.report.github import comparison_markdown

    lvl = [1.0, 1.01, 0.99, 1.0, 1.005]
    same, undecided = _row("same", lvl, lvl), _row("one run", [1.0], [1.01])
    text = comparison_markdown([same, undecided], confidence=0.99, threshold=0.0).splitlines()
    assert text[0] == "### :warning: regbench: 0 regressions, 0 improvements, 1 unchanged, 1 inconclusive"
    assert text[2].startswith("1 benchmark could not be decided: more runs")
    worse = _row("worse", lvl, [1.3 * x for x in lvl])
    text = comparison_markdown([same, undecided, worse], confidence=0.99, threshold=0.0).splitlines()
    assert text[0] == "### :x: regbench: 1 regression, 0 improvements, 1 unchanged, 1 inconclusive"
    assert text[2].startswith("v2 against v1: ")
    text = comparison_markdown([same], confidence=0.99, threshold=0.0).splitlines()
    assert text[0] == "### :white_check_mark: regbench: 0 regressions, 0 improvements, 1 unchanged"
