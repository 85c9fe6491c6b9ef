"""Bisection over a commit whose benchmark cannot run: skipped like ``git bisect skip``."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import PRINTED_PROGRAM, git_commit, git_init
from regbench.report.sequential import bisect_json
from regbench.run.bisect import bisect
from regbench.store import Store

T0 = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


def broken_repo(path: Path, *, commits: int = 12, culprit: int = 10, broken: int = 7) -> list[str]:
    """``commits`` commits; commit ``culprit`` (1-based) makes the benchmark 50% slower and the
    benchmark of commit ``broken`` is a syntax error (fixed by the next commit)."""
    git_init(path)
    toml = ('[project]\nname = "p"\n[defaults]\nruns = 3\niterations = 5\nwarmup = 0\n'
            f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([sys.executable, "bench.py"])}\n')
    shas = []
    for k in range(1, commits + 1):
        files = {f"notes/{k}.txt": f"commit {k}\n"}
        if k == 1:
            files |= {"bench.py": PRINTED_PROGRAM, "level.txt": "1.0", "regbench.toml": toml}
        if k == culprit:
            files["level.txt"] = "1.5"
        if k == broken:
            files["bench.py"] = "def broken(:\n"
        if k == broken + 1:
            files["bench.py"] = PRINTED_PROGRAM
        shas.append(git_commit(path, files, f"commit {k}", when=T0 + timedelta(hours=k)))
    return shas


def test_a_commit_whose_benchmark_always_fails_is_skipped_and_the_culprit_found(tmp_path):
    repo = tmp_path / "repo"
    shas = broken_repo(repo)
    store = Store(tmp_path / "r.db")
    result = bisect(load_config(repo / "regbench.toml"), store, shas[0], shas[-1], benchmark="b", seed=1,
                    cache_dir=tmp_path / "wt")
    # The middle commit (the 7th) is tried first: its runs all fail, so it is skipped, not the end.
    assert result.steps[0].commit == shas[6][:10]
    assert (result.steps[0].verdict, result.steps[0].triples) == ("failed", 0)
    assert result.skipped == (shas[6][:10],)
    assert result.status == "found" and result.culprit == shas[9][:10]
    assert all(s.verdict in ("good", "bad") for s in result.steps[1:])
    found = bisect_json(result)  # what `regbench bisect --format json` prints
    assert found["skipped"] == [shas[6][:10]] and found["steps"][0]["verdict"] == "failed"


def test_a_skipped_commit_just_before_the_culprit_leaves_both_as_candidates(tmp_path):
    repo = tmp_path / "repo"
    shas = broken_repo(repo, commits=8, culprit=6, broken=5)
    result = bisect(load_config(repo / "regbench.toml"), Store(tmp_path / "r.db"), shas[0], shas[-1],
                    benchmark="b", seed=2, cache_dir=tmp_path / "wt")
    assert result.status == "undecided" and result.culprit is None
    assert result.skipped == (shas[4][:10],)
    assert set(result.candidates) == {shas[4][:10], shas[5][:10]}


def test_cli_reports_the_skipped_commit(tmp_path, capsys):
    repo = tmp_path / "repo"
    shas = broken_repo(repo)
    args = ["--store", str(tmp_path / "r.db"), "--config", str(repo / "regbench.toml"), "bisect", shas[0], shas[-1],
            "--benchmark", "b", "--seed", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"{shas[6][:10]}: skipped (its benchmark failed in every run)" in out
    assert f"Skipped (could not be measured): {shas[6][:10]}." in out
    assert f"First bad commit: {shas[9][:10]}" in out
