"""What `detect --fail-on-regression` answers for a commit must not depend on whether a pass ran
before (three findings of a CI probe, 2026-12-01):

- a CI job run again on the same commit (its runs stored already) passed where its first run had
  failed: the incremental pass found nothing new;
- every full pass on `main` failed for a regression reverted long ago;
- in a shallow clone (CI's default checkout) an incremental pass read a history cut short, marked
  the new versions checked, and passed a +30% step for good.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa
from test_detect_store import fill

from regbench.detect.alerts import set_status
from regbench.pipeline import detect_and_alert
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.alerts import list_alerts


def gate(s: Store, *, incremental: bool = True, dry_run: bool = False):
    return detect_and_alert(s, None, method="auto", fdr=0.05, incremental=incremental, dry_run=dry_run)


def test_a_pass_again_over_the_same_commit_fails_as_the_first_did(store_url, capsys):
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 12 + [1.3], "b": [1.0] * 13}, seed=1)  # a's step at the newest version
        first = gate(s)
        assert first.regressed and not first.standing
        (alert,) = list_alerts(s)
        again = gate(s)  # the job run again: nothing new stored
        assert not again.detection.changes and [a.id for a in again.standing] == [alert.id] and again.regressed
        assert gate(s, dry_run=True).regressed
        from regbench.report.changes import print_detection

        capsys.readouterr()
        print_detection(again, fmt="table", confidence=0.99, min_change=None)
        said = " ".join(capsys.readouterr().out.split())
        assert f"1 regression alert(s) open at the newest version v012, found by an earlier pass: #{alert.id} a +" in said
        # A person decides it is expected: it no longer gates.
        set_status(s, [alert.id], "expected", who="alice", why="a safer algorithm")
        assert not gate(s).regressed
        set_status(s, [alert.id], "new", who="alice", why="reopened")
        assert gate(s).regressed
        # A newer commit is the newest version: the regression was told at its own commit.
        fill(s, {"a": [1.3], "b": [1.0]}, start=13, seed=2)
        newer = gate(s)
        assert not newer.detection.changes and not newer.standing and not newer.regressed


def test_a_full_pass_does_not_fail_for_a_regression_a_later_change_undid(store_url):
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 10 + [1.3] * 10}, seed=1)
        assert gate(s, incremental=False).regressed  # found: it gates
        fill(s, {"a": [1.0] * 10}, start=20, seed=2)  # reverted at v020
        undone = gate(s, incremental=False)
        kinds = {e.change.kind: e for e in undone.changes}
        assert kinds["regression"].undone and kinds["regression"].alert.status == "fixed"
        assert not undone.regressed
        assert not gate(s, incremental=False).regressed  # and on every pass after
        assert not gate(s, incremental=False, dry_run=True).regressed


def test_a_regression_and_its_undoing_found_in_one_pass_still_gate(store_url):
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 10 + [1.3] * 10 + [1.0] * 10}, seed=1)
        outcome = gate(s, incremental=False)
        (regression,) = [e for e in outcome.changes if e.change.kind == "regression"]
        assert regression.alert.status == "fixed" and not regression.undone and outcome.regressed


CONFIG = ('[project]\nrepo = "."\n[defaults]\nruns = 3\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo 0.01; done"]\n')


def regbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "regbench.cli.main", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_detect_in_a_shallow_clone_that_cuts_stored_versions_is_an_error(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "regbench.toml").write_text(CONFIG)
    for k in range(4):
        (repo / "f").write_text(str(k))
        subprocess.run([*git, "-C", str(repo), "add", "."], check=True)
        # A second apart: a shallow clone's first commit is later than the ones it cut.
        subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", f"c{k}", "--date", f"2024-01-0{k + 1}T00:00:00"],
                       check=True, env={"GIT_COMMITTER_DATE": f"2024-01-0{k + 1}T00:00:00", "PATH": "/usr/bin:/bin"})
    store = tmp_path / "results.db"
    done = regbench("--store", str(store), "run", "--versions", "HEAD~3,HEAD~2,HEAD~1,HEAD", cwd=repo)
    assert done.returncode == 0, done.stderr
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True)
    out = regbench("--store", str(store), "detect", "--incremental", "--fail-on-regression", cwd=clone)
    assert out.returncode == 3, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert f"{clone} is a shallow clone: its history starts at " in line
    assert "after 3 stored versions" in line and "git fetch --unshallow" in line
    with Store(store) as s, s.engine.connect() as conn:  # nothing was marked checked
        assert conn.execute(sa.select(sa.func.count()).select_from(t.detect_state)).scalar() == 0
    # The whole history fetched: detect reads it.
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--unshallow"], check=True)
    assert regbench("--store", str(store), "detect", "--incremental", cwd=clone).returncode == 0
    # In the full clone, a shallow check costs nothing and says nothing.
    assert regbench("--store", str(store), "detect", "--dry-run", cwd=repo).returncode == 0
