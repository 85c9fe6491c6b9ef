"""The demo repository: its history, its configuration, and the performance truth it plants."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from regbench.config import load_config
from regbench.demo_project import BENCHMARK, create_demo_repo
from regbench.run.campaign import run_campaign
from regbench.store import Store


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return create_demo_repo(tmp_path_factory.mktemp("demo") / "d")


def git(demo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(demo.path), *args], capture_output=True, text=True,
                          check=True).stdout


def test_eight_commits_with_increasing_dates_and_a_clean_tree(demo):
    assert len(demo.commits) == 8
    assert git(demo, "rev-list", "--reverse", "HEAD").split() == list(demo.commits)
    stamps = [int(s) for s in git(demo, "log", "--reverse", "--format=%ct").split()]
    assert stamps == sorted(stamps) and len(set(stamps)) == 8
    assert git(demo, "status", "--porcelain") == ""
    assert (demo.slower_index, demo.faster_index) == (3, 6)
    assert "Simplify first_views" in git(demo, "log", "-1", "--format=%s", demo.commits[3])
    assert "Counter" in git(demo, "log", "-1", "--format=%s", demo.commits[6])
    assert git(demo, "log", "-1", "--format=%an <%ae>") == "Regbench Demo <demo@regbench.invalid>\n"


def test_refuses_a_folder_that_is_not_empty(demo):
    with pytest.raises(FileExistsError):
        create_demo_repo(demo.root)


def test_the_command_refuses_a_folder_that_is_not_empty_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "regbench", "demo", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().count("\n") == 0 and "not empty" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_config_runs_the_program_with_this_interpreter(demo):
    config = load_config(demo.config_path)
    assert config.repo == demo.path
    assert config.build == (sys.executable, "-m", "compileall", "-q", ".")
    [bench] = config.benchmarks
    assert bench.name == BENCHMARK and bench.command == (sys.executable, "pageviews.py")
    assert (bench.runs, bench.iterations, bench.warmup, bench.timeout) == (10, 20, 3, 60.0)
    assert os.path.isabs(bench.command[0])


def test_program_prints_one_timing_per_iteration_and_its_test_passes(demo):
    env = dict(os.environ, REGBENCH_ITERATIONS="4")
    out = subprocess.run([sys.executable, "pageviews.py"], cwd=demo.path, env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    assert len(out) == 4
    assert all(0 < float(x) < 1 for x in out)
    default = subprocess.run([sys.executable, "pageviews.py"], cwd=demo.path, capture_output=True,
                             text=True, check=True, env={k: v for k, v in env.items() if k != "REGBENCH_ITERATIONS"})
    assert len(default.stdout.split()) == 20
    test = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=demo.path,
                          capture_output=True, text=True)
    assert test.returncode == 0, test.stderr


def test_the_planted_changes_are_measurable(demo, tmp_path):
    """A short campaign (5 runs a commit, interleaved) sees the slowdown and the speed-up.

    Planted: commit 4 is about +40..100% per iteration, commit 7 about -55% against the
    original at the same level; the bounds here are looser than that so that a noisy machine does not fail them.
    Each commit is represented by its fastest run: the program's runs land at two levels about
    1.8x apart (measured 2026-11-28: the original at 7.1-7.6 or 12.7-13.5 ms a run, commit 6 at
    12.5-16 or 23 ms), and with 3 runs a commit the share of slow runs, not the code, moved the
    pooled medians enough to fail the test once (the slow group +11% where +25% was asked).
    With 3 runs a commit, all nine runs of the three original commits landed at the slow level
    once (a fresh-clone CI run beside a PostgreSQL server, 2026-11-29: the original's fastest run
    7.8 ms, the slow code's 9.3 ms, +19%, where on a quiet machine they were 5.4 and 9.4 ms): the
    planted slowdown (about 1.7x) is as large as the gap between the levels, so it is measurable
    only when a commit group has a run at the fast level. With 5 runs a commit each group has 15,
    and that is far likelier.
    """
    config = load_config(demo.config_path)
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(config, store, revisions=",".join(demo.commits), runs=5, seed=2024,
                              cache_dir=tmp_path / "worktrees")
        assert result.counts["ok"] == 40 and not result.builds_failed
        [series] = store.load_series(BENCHMARK)
    assert [v.commit for v in series.versions] == list(demo.commits)
    medians = [min(float(np.median(run)) for run in runs) for runs in series.runs]  # each commit's fastest run
    assert all(0.0005 < m < 0.05 for m in medians), medians  # milliseconds, not seconds or microseconds
    # The slow code stays until commit 7: compare the three slow commits (and then the two fast
    # ones) as a group, as a change-point method would, by the group's fastest run: one commit's
    # three runs can all land at the slow level (the original at 13 ms, as fast as the slow code's
    # fast level), which failed the test once when each commit's fastest run was compared.
    # The bound of the speed-up allows for the levels: the Counter code takes 0.45x the original's
    # time at the same level (3.1-3.4 ms against 7.1 ms, measured 2026-11-28), but all six of its
    # runs can land at the slow level (about 1.7x) while one of the original's lands fast, which
    # makes 0.77x (5.3 ms against 6.97 ms, a fresh-clone run of the suite, failing the 0.75 bound
    # this test had). The same code's fastest runs at the fast level are within about 5% (6.98-7.25 ms).
    # The slow group by its slowest commit's fastest run: on 2026-12-01 a suite run measured every
    # run of the three original commits at their slow level (12.6-13.0 ms) and two slow commits'
    # fastest runs at their fast level (13.6-13.9 ms, 1.08x), the third at 22.6 ms (1.80x): the
    # regression is measurable, but not by every commit's fastest run.
    base = min(medians[:3])
    assert max(medians[3:6]) > 1.25 * base, medians
    assert min(medians[6:8]) < 0.9 * base, medians
    assert max(medians[3:6]) > max(medians[6:8]), medians
