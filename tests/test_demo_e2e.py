"""`regbench demo` end to end: real git, real builds, real processes, SQLite, detection."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_demo_finds_the_planted_slowdown_and_speedup(tmp_path):
    root = tmp_path / "demo"
    out = subprocess.run([sys.executable, "-m", "regbench.cli.main", "demo", "--dir", str(root), "--seed", "7"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "both planted changes were found" in out.stdout
    assert str(root / ".regbench" / "results.db") in out.stdout

    shas = subprocess.run(["git", "-C", str(root / "repo"), "log", "--reverse", "--format=%H"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert len(shas) == 8
    detect = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", str(root / ".regbench" / "results.db"),
                             "detect", "--format", "json"],
                            capture_output=True, text=True, timeout=120)
    assert detect.returncode == 0, detect.stderr
    changes = json.loads(detect.stdout)
    # Commit 4 (index 3) makes the program slower, commit 7 (index 6) faster; nothing else moves.
    assert [(c["version"], c["previous"], c["kind"]) for c in changes] == [
        (shas[3][:10], shas[2][:10], "regression"),
        (shas[6][:10], shas[5][:10], "improvement"),
    ]
    assert changes[0]["change"] > 0.25 and changes[1]["change"] < -0.25
    for c in changes:
        assert c["ci_low"] < c["change"] < c["ci_high"] and c["method"] == "auto"

    show = subprocess.run([sys.executable, "-m", "regbench.cli.main", "show"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert "80 runs in" in show.stdout  # 8 commits x 10 runs, every one ok
    assert "Failed runs" not in show.stdout
