"""A project of empty commits beside its regbench.toml, and the CLI run in-process on it: what the
tests of whole campaigns (definitions, plans) share."""

from __future__ import annotations

import subprocess
from pathlib import Path

from regbench.cli.main import main


def empty_commits_project(tmp_path: Path, commits: int) -> Path:
    """A git repository ``tmp_path/r`` of ``commits`` empty commits on ``main``; the path of the
    regbench.toml to write beside it (``[project] repo = "r"``)."""
    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True)
    for k in range(commits):
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q",
                        "--allow-empty", "-m", f"c{k}"], check=True)
    return tmp_path / "regbench.toml"


def run_cli(cfg: Path, capsys, *args: str, code: int = 0) -> str:
    """``regbench --config CFG ARGS...`` in this process, its exit status checked; stdout and
    stderr together."""
    capsys.readouterr()
    assert main(["--config", str(cfg), *args]) == code
    out = capsys.readouterr()
    return out.out + out.err
