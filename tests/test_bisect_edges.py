"""Bisect and compare --run edge cases: an unbuildable culprit, A == B, max_pairs < min_pairs."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

import pytest

from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import ConfigError
from regbench.run.bisect import bisect
from regbench.run.sequential import compare_live
from regbench.store import Store

PY = sys.executable
T0 = datetime(2024, 1, 1, 8, 0, tzinfo=UTC)
PROGRAM = ("import os, random\n"
           "level = float(open('level.txt').read())\n"
           "r = random.Random(os.environ['REGBENCH_VERSION'] + '/' + os.environ['REGBENCH_RUN_INDEX'])\n"
           "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
           "    print(level * r.lognormvariate(0, 0.01))\n")
BUILD = [PY, "-c", "import os, sys; sys.exit(1 if os.path.exists('broken') else 0)"]


def make_repo(path, *, commits=8, culprit=5, unbuildable=()):
    git_init(path)
    toml = ('[project]\nname = "p"\nbuild = ' + json.dumps(BUILD) + '\n[defaults]\nruns = 3\niterations = 5\n'
            'warmup = 0\n[[benchmark]]\nname = "b"\ncommand = ' + json.dumps([PY, "bench.py"]) + "\n")
    (path / "regbench.toml").write_text(toml)
    shas = []
    for k in range(1, commits + 1):
        files = {f"notes/{k}.txt": f"{k}\n"}
        if k == 1:
            files |= {"bench.py": PROGRAM, "level.txt": "1.0", "regbench.toml": toml}
        if k == culprit:
            files["level.txt"] = "1.2"
        if k in unbuildable:
            files["broken"] = "x"
        elif k - 1 in unbuildable:
            files["broken"] = None
        shas.append(git_commit(path, files, f"commit {k}", when=T0 + timedelta(hours=k)))
    return shas


def test_an_unbuildable_culprit_is_not_reported_as_found_on_its_successor(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=8, culprit=5, unbuildable={5})
    config = load_config(repo / "regbench.toml")
    result = bisect(config, Store(tmp_path / "r.db"), shas[0], shas[-1], benchmark="b", seed=1)
    # Commit 5 (the real culprit) cannot be built: like git bisect skip, the answer is "one of
    # commits 5 and 6", never commit 6 alone.
    assert result.status == "undecided" and result.culprit is None
    assert [c[:7] for c in result.candidates] == [shas[4][:7], shas[5][:7]]
    assert any(s.verdict == "unbuilt" for s in result.steps)


def test_compare_run_of_a_revision_with_itself_is_refused(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=2, culprit=99)
    config = load_config(repo / "regbench.toml")
    with pytest.raises(ConfigError, match="are the same commit"):
        compare_live(config, Store(tmp_path / "r.db"), shas[1], shas[1][:8], max_pairs=8, seed=1)


def test_bisect_refuses_max_pairs_below_min_pairs(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=3, culprit=2)
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    with pytest.raises(ConfigError, match="`max_pairs` must be an integer >= min_pairs"):
        bisect(config, store, shas[0], shas[-1], benchmark="b", max_pairs=2, seed=1)
    assert store.campaigns() == []  # refused before anything is written
