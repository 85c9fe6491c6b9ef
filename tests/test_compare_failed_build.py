"""`compare A B` where B did not build: every benchmark of A is `failed`, the gate fails (exit 1)
and the line under the table says why (a first-user probe: it said "no benchmark has runs of both"
and exited 3, as for a version that was never run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from regbench.cli.main import main

PY = sys.executable


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_a_b_that_did_not_build_fails_the_gate_and_says_why(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    (repo / "src.txt").write_text("fine\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "good")
    (repo / "src.txt").write_text("syntax error here\n")
    git(repo, "commit", "-q", "-am", "broken")
    build = ("import sys; t = open('src.txt').read(); "
             "sys.exit(print('src.txt:1: error: unknown word syntax', file=sys.stderr) or 2) if 'syntax' in t else None")
    bench = "import time; [print(0.001 + 0.00001 * i) for i in range(5)]"
    (tmp_path / "regbench.toml").write_text(
        f'[project]\nrepo = "proj"\nbuild = {json.dumps([PY, "-c", build])}\n'
        f'[defaults]\nruns = 3\nwarmup = 0\n'
        f'[[benchmark]]\nname = "work"\ncommand = {json.dumps([PY, "-c", bench])}\n')
    monkeypatch.chdir(tmp_path)
    main(["run", "--versions", "HEAD~1,HEAD"])  # HEAD's build fails: a failed campaign
    capsys.readouterr()
    assert main(["compare", "HEAD~1", "HEAD"]) == 1
    out = capsys.readouterr().out
    row = [line for line in out.splitlines() if line.startswith("work")][0]
    assert row.rstrip().endswith("failed") and "3/0" in row
    assert f"build failed at {git(repo, 'rev-parse', 'HEAD')[:10]} (exit status 2): src.txt:1: error: unknown word syntax" in out
    assert main(["compare", "HEAD~1", "HEAD", "--format", "github"]) == 1
    assert "**failed** (no run of B ok)" in capsys.readouterr().out  # not "every run of B": none ran
    assert main(["compare", "HEAD~1", "HEAD", "--format", "json"]) == 1
    (obj,) = json.loads(capsys.readouterr().out)
    assert obj["verdict"] == "failed"
