"""Benchmarks kept outside the project's history (``benchmark_dir``), and the worktrees regbench
leaves behind: none after a campaign, and ``regbench clean`` for those of a killed one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import ConfigError
from regbench.run.campaign import NullReporter, run_campaign
from regbench.run.clean import clean
from regbench.run.versions import prepare_tree, registered_worktrees, resolve_revisions
from regbench.store import Store

T0 = datetime(2024, 4, 1, 8, 0, tzinfo=UTC)
#: Today's benchmarks, outside the history: a Python benchmark of the library in the version's
#: tree, and a command benchmark run as a module (found through PYTHONPATH).
BENCH_PY = "import lib\n\ndef bench_work():\n    lib.work()\n"
BENCH_CMD = ("import os, sys\n"
             "assert os.environ['REGBENCH_BENCHMARK_DIR'] == os.path.dirname(os.path.abspath(__file__))\n"
             "import lib\n"
             "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
             "    print(lib.LEVEL)\n")


def worktrees(repo: Path) -> list[Path]:
    """The worktrees registered in ``repo`` (the main one left out), sorted."""
    return sorted(registered_worktrees(repo))


@pytest.fixture
def project(tmp_path) -> tuple[Path, Path, list[str]]:
    """``tmp/regbench.toml`` and ``tmp/benchmarks/`` outside the repository ``tmp/lib``, whose
    two commits have no benchmark code at all."""
    repo = tmp_path / "lib"
    git_init(repo)
    shas = [git_commit(repo, {"lib.py": f"LEVEL = {level}\n\ndef work():\n    return sum(range(100))\n"},
                       f"level {level}", when=T0 + timedelta(hours=k)) for k, level in enumerate((1.0, 2.0))]
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "bench_lib.py").write_text(BENCH_PY)
    (bench / "bench_cmd.py").write_text(BENCH_CMD)
    (tmp_path / "regbench.toml").write_text(
        '[project]\nname = "lib"\nrepo = "lib"\nbenchmark_dir = "benchmarks"\n'
        '[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
        '[[benchmark]]\nname = "work"\npython = "bench_lib:bench_work"\nmin_time = 0.001\n'
        f'[[benchmark]]\nname = "level"\ncommand = {json.dumps([sys.executable, "-m", "bench_cmd"])}\n')
    return tmp_path, repo, shas


def test_every_version_runs_todays_benchmarks_from_outside_its_history(project):
    root, repo, shas = project
    config = load_config(root / "regbench.toml")
    assert config.benchmark_dir == (root / "benchmarks").resolve()
    store = Store(root / ".regbench" / "results.db")
    result = run_campaign(config, store, revisions=f"{shas[0]},{shas[1]}", seed=1)
    assert result.counts["ok"] == 8, [r.stderr_tail for r in store.runs() if r.status != "ok"]
    levels = {s.versions[k].name: float(s.runs[k][0][0]) for s in store.load_series("level")
              for k in range(len(s.versions))}
    assert levels == {shas[0][:10]: 1.0, shas[1][:10]: 2.0}  # each version's own library
    # The campaign's worktrees are gone, and no longer registered in the user's repository.
    assert worktrees(repo) == []
    assert not any((root / ".regbench" / "worktrees").glob("*/*"))


def test_a_missing_benchmark_dir_is_a_one_line_error(project):
    root, _, _ = project
    text = (root / "regbench.toml").read_text().replace('benchmark_dir = "benchmarks"', 'benchmark_dir = "nope"')
    (root / "regbench.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"regbench.toml: \[project\] `benchmark_dir`: no such directory: .*nope"):
        load_config(root / "regbench.toml")


def test_worktrees_are_removed_when_a_campaign_is_interrupted(project):
    root, repo, shas = project

    class Interrupt(NullReporter):
        def trial_started(self, benchmark, version, run_index):
            assert worktrees(repo), "the versions are checked out while they run"
            raise KeyboardInterrupt

    store = Store(root / "r.db")
    with pytest.raises(KeyboardInterrupt):
        run_campaign(load_config(root / "regbench.toml"), store, revisions=f"{shas[0]},{shas[1]}",
                     seed=2, reporter=Interrupt())
    assert worktrees(repo) == []
    assert store.campaigns()[-1].status == "interrupted"


def test_clean_removes_worktrees_left_by_a_killed_campaign(project, capsys, monkeypatch):
    root, repo, shas = project
    cache = root / ".regbench" / "worktrees"
    # As a campaign killed with kill -9 (or an older regbench) leaves them: registered, in the cache.
    left = sorted(prepare_tree(repo, c, cache / "1234-x") for c in resolve_revisions(repo, f"{shas[0]},{shas[1]}"))
    assert worktrees(repo) == left
    monkeypatch.chdir(root)
    assert main(["clean", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would remove git worktree: {left[0]}" in out and "would remove cache folder:" in out
    assert "dry run: nothing removed" in out and worktrees(repo) == left
    assert main(["clean"]) == 0
    assert f"removed git worktree: {left[1]}" in capsys.readouterr().out
    assert worktrees(repo) == [] and not cache.exists()
    assert main(["clean"]) == 0
    assert "Nothing to clean." in capsys.readouterr().out


def test_clean_removes_only_stale_temporary_folders(tmp_path):
    temp = tmp_path / "tmp"
    old, young, other = temp / "regbench-run-old", temp / "regbench-run-young", temp / "someone-elses"
    for d in (old, young, other):
        d.mkdir(parents=True)
        (d / "stdout").write_text("x" * 10)
    day_ago = time.time() - 2 * 86400
    os.utime(old, (day_ago, day_ago))
    os.utime(other, (day_ago, day_ago))
    found = clean(repo=None, cache_dirs=[], temp_dirs=[temp], dry_run=True)
    assert [(x.kind, x.path, x.size) for x in found.leftovers] == [("temp", old, 10)]
    assert old.exists()
    clean(repo=None, cache_dirs=[], temp_dirs=[temp])
    assert not old.exists() and young.exists() and other.exists()
    with pytest.raises(ValueError, match="`older_than` must be a number of seconds >= 0"):
        clean(repo=None, cache_dirs=[], temp_dirs=[temp], older_than=-1)


def test_git_worktree_prune_forgets_dead_entries_at_the_next_campaign(project):
    root, repo, shas = project
    tree = prepare_tree(repo, resolve_revisions(repo, shas[0])[0], root / "elsewhere")
    subprocess.run(["rm", "-rf", str(tree)], check=True)
    assert worktrees(repo) == [tree]  # registered, its folder gone
    run_campaign(load_config(root / "regbench.toml"), Store(root / "r.db"), revisions=shas[1], seed=3,
                 benchmarks=["level"])
    assert worktrees(repo) == []
