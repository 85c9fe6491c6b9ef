"""A branch named on the command line or as ``[project] branch`` that only a remote has (a CI
checkout of one commit: ``origin/main``, no local ``main``) is a one-line error that says so and
what to name instead; before, it said only "unknown revision 'main'".  Real git repositories."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.errors import ExitStatus

PY = sys.executable


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A clone of a two-commit repository on a detached HEAD, with no local branch."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    for k in range(2):
        git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", f"c{k}")
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "--detach", "HEAD")
    git(clone, "branch", "-q", "-D", "main")
    assert git(clone, "branch", "--list").strip().startswith("* (HEAD detached")
    return clone


def config(repo: Path, branch: str | None = None) -> Path:
    cfg = repo / "regbench.toml"
    cfg.write_text('[project]\nname = "p"\n' + (f'branch = "{branch}"\n' if branch else "")
                   + f'[defaults]\nruns = 2\niterations = 2\nwarmup = 0\n[[benchmark]]\nname = "b"\n'
                   f'command = ["{PY}", "-c", "print(1); print(1)"]\n', encoding="utf-8")
    return cfg


def error(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(list(args))
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return rc, err


@pytest.mark.parametrize("versions", ["main", "main~1..main", "main^,main"])
def test_a_branch_only_the_remote_has_is_named_with_what_to_give_instead(checkout, capsys, versions):
    cfg = config(checkout)
    db = checkout / "r.db"
    rc, err = error(capsys, "--config", str(cfg), "--store", str(db), "run", "--versions", versions)
    assert rc == ExitStatus.ERROR, err
    assert "unknown revision 'main" in err, err
    assert "there is no local branch 'main', only the remote-tracking branch origin/main: name origin/main" in err
    assert "git branch main origin/main" in err, err
    assert not db.exists()
    # What it says to name works.
    assert main(["--config", str(cfg), "--store", str(db), "run", "--versions",
                 versions.replace("main", "origin/main"), "--seed", "1"]) == ExitStatus.OK


def test_a_revision_no_remote_has_either_gets_no_hint(checkout, capsys):
    cfg = config(checkout)
    for rev in ("nope", "origin/nope"):
        rc, err = error(capsys, "--config", str(cfg), "--store", str(checkout / "r.db"), "run", "--versions", rev)
        assert rc == ExitStatus.ERROR and err.endswith(f"unknown revision {rev!r}"), err


def test_the_project_branch_only_the_remote_has_is_named_too(checkout, capsys):
    cfg = config(checkout, branch="main")
    db = checkout / "r.db"
    assert main(["--config", str(cfg), "--store", str(db), "run", "--versions", "origin/main", "--seed", "1"]) == 0
    rc, err = error(capsys, "--config", str(cfg), "--store", str(db), "detect")
    assert rc == ExitStatus.ERROR, err
    assert "[project] `branch`: no branch 'main'" in err and "only the remote-tracking branch origin/main" in err, err
