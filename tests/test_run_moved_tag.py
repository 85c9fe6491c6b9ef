"""A tag that names another commit than when the store recorded it (``git tag -f``, a release
made again) is said once at the end of ``regbench run``: what it named, what it names now, and
that its results are the new commit's from now on; before, the tag moved silently and tables
showed another commit's results under the same name.  A branch moving is not said (branches
move).  A real git repository, real command benchmarks."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.store import Store

PY = sys.executable
T0 = datetime(2025, 4, 1, 9, 0, tzinfo=UTC)
TOML = ('[project]\nname = "p"\nstore = "r.db"\n[defaults]\nruns = 2\niterations = 2\nwarmup = 0\n'
        f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([PY, "-c", "print(1); print(1)"])}\n')


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def run(repo: Path, capsys, versions: str) -> str:
    capsys.readouterr()
    assert main(["--config", str(repo / "regbench.toml"), "run", "--versions", versions, "--seed", "1"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_moved_tag_is_said_once_and_a_moved_branch_not_at_all(tmp_path, capsys):
    repo = tmp_path / "repo"
    git_init(repo)
    a = git_commit(repo, {"regbench.toml": TOML}, "a", when=T0)
    b = git_commit(repo, {"x": "1"}, "b", when=T0 + timedelta(hours=1))
    git(repo, "tag", "v1", a)
    git(repo, "branch", "feat", a)
    out = run(repo, capsys, "v1,feat")
    assert "Tag moved" not in out, out

    git(repo, "tag", "-f", "v1", b)
    git(repo, "branch", "-f", "feat", b)
    out = run(repo, capsys, "v1")
    assert (f"Tag moved: v1 now names {b[:10]}, not {a[:10]} as when the store recorded it: results shown as v1 "
            f"are {b[:10]}'s from now on ({a[:10]}'s are kept under its commit).") in out, out
    assert "1 version" in out and "2 runs stored" in out  # b is measured: it had no run
    assert "Tag moved" not in run(repo, capsys, "v1"), "said again"  # the store knows it now
    assert "Tag moved" not in run(repo, capsys, "feat"), "a branch moving is not said"

    with Store(repo / "r.db") as store:
        tags = {version[:10]: [x.name for x in aliases if x.kind == "tag"] for version, aliases in store.aliases().items()}
    assert tags.get(b[:10]) == ["v1"] and not tags.get(a[:10]), tags
