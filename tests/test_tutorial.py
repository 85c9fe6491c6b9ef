"""docs/tutorial.md's flow on a small synthetic library, so that its commands stay true: tags,
benchmarks outside the history, a campaign over the tags, a compare by tag, a bisection that
skips a commit that does not import, detect, and nothing left behind."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2024, 6, 1, 8, 0, tzinfo=UTC)
#: The library: ``factor()`` sleeps for its ``COST`` (deterministic, so the steps are certain).
LIB = "import time\n\nCOST = {cost}\n\n\ndef factor(n):\n    time.sleep(COST)\n    return [n]\n"
BENCH = "from minilib import factor\n\n\ndef time_factor():\n    factor(35)\n"
TOML = ('[project]\nname = "minilib"\nrepo = "minilib"\nbenchmark_dir = "benchmarks"\nbranch = "main"\n'
        '[defaults]\nruns = 5\niterations = 4\nwarmup = 0\n'
        '[[benchmark]]\nname = "factor"\npython = "bench_mi:time_factor"\nmin_time = 0.0005\n')


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout


def make_project(root: Path) -> list[str]:
    """``root/minilib``: 9 commits, tags v1.0 (1st) and v1.1 (9th); the 7th makes ``factor`` 4x
    faster; the 5th (the middle one, which bisection tries first) does not import (an
    IndentationError), the 6th fixes it."""
    repo = root / "minilib"
    git_init(repo)
    shas = []
    for k in range(1, 10):
        cost = 0.004 if k < 7 else 0.001
        files = {"minilib.py": LIB.format(cost=cost), f"notes/{k}": "x"}
        if k == 5:
            files["minilib.py"] = LIB.format(cost=cost).replace("COST = ", "  COST = ")
        shas.append(git_commit(repo, files, f"commit {k}", when=T0 + timedelta(hours=k)))
    git(repo, "tag", "v1.0", shas[0])
    git(repo, "tag", "-a", "v1.1", "-m", "v1.1", shas[-1])
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "bench_mi.py").write_text(BENCH)
    (root / "regbench.toml").write_text(TOML)
    return shas


def test_the_tutorials_flow(tmp_path, monkeypatch, capsys):
    shas = make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    short = [s[:10] for s in shas]

    assert main(["run", "--versions", "v1.0,v1.1", "--seed", "1"]) == 0
    assert "10 runs stored (10 ok) over 2 versions" in capsys.readouterr().out

    assert main(["compare", "v1.0", "v1.1"]) == 0  # an improvement: exit status 0
    out = capsys.readouterr().out
    assert "v1.1 against v1.0" in out and re.search(r"factor .* improvement", out)  # by their tags

    assert main(["bisect", "v1.0", "v1.1", "--benchmark", "factor", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{short[4]}: skipped (its benchmark failed in every run)" in out
    assert f"Skipped (could not be measured): {short[4]}." in out
    assert f"First bad commit: {short[6]}" in out

    # The culprit's parent, named as a git revision, was measured by the bisection.
    assert main(["compare", f"{short[6]}^", short[6], "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["a"], row["b"], row["verdict"]) == (short[5], short[6], "improvement")

    assert main(["detect", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "History: versions on the first-parent line of main" in out
    assert "the runs of 1 session(s) of compare --run, bisect or confirm left out" in out

    assert git(tmp_path / "minilib", "worktree", "list").count("\n") == 1  # only the clone itself
    assert main(["clean", "--dry-run"]) == 0
    assert "would remove git worktree" not in capsys.readouterr().out


def test_the_tutorial_is_linked_and_uses_only_existing_commands():
    text = (ROOT / "docs" / "tutorial.md").read_text()
    assert "git clone https://github.com/more-itertools/more-itertools.git" in text
    used = set(re.findall(r"^\$ regbench (\w+)", text, re.M))
    assert used == {"run", "show", "compare", "detect", "bisect", "clean"}
    from regbench.cli.main import COMMAND_MODULES

    assert {f"cmd_{c}" for c in used} <= set(COMMAND_MODULES)
    assert "docs/tutorial.md" in (ROOT / "README.md").read_text()
