"""Defects a probe of the CI loop found (2026-12-02), fixed and pinned here:

- `compare --run` called a pull request that breaks the benchmark (B crashes in every run, or B
  does not build) `inconclusive` and exited 0, so the gate passed, where the stored `compare` of
  the same runs says `failed` and exits 1;
- `bisect` whose BAD crashes in every run said GOOD and BAD "could not be told apart within the
  budget" (raise --budget), where nothing could be timed, and did not point to `bisect --failure`.

Real git repositories, real processes (tests/test_bisect_edges.py's program)."""

from __future__ import annotations

import json
import sys
from datetime import timedelta

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init

from test_bisect_edges import BUILD, PROGRAM, T0

PY = sys.executable


def repo(path, *, crash_last: bool = False, unbuildable_last: bool = False) -> list[str]:
    git_init(path)
    toml = ('[project]\nname = "p"\nbuild = ' + json.dumps(BUILD) + '\nstore = "r.db"\n[defaults]\nruns = 3\n'
            'iterations = 5\nwarmup = 0\n[[benchmark]]\nname = "b"\ncommand = ' + json.dumps([PY, "bench.py"]) + "\n")
    shas = [git_commit(path, {"bench.py": PROGRAM, "level.txt": "1.0", "regbench.toml": toml}, "one", when=T0)]
    last = {"notes.txt": "2\n"}
    if crash_last:
        last["bench.py"] = "raise RuntimeError('boom')\n" + PROGRAM
    if unbuildable_last:
        last["broken"] = "x"
    shas.append(git_commit(path, last, "two", when=T0 + timedelta(hours=1)))
    return shas


def cli(path, capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--config", str(path / "regbench.toml"), *args])
    out = capsys.readouterr()
    return code, " ".join(out.out.split()), out.err


def test_compare_run_fails_the_gate_when_b_crashes_in_every_run(tmp_path, capsys):
    path = tmp_path / "repo"
    a, b = repo(path, crash_last=True)
    code, out, _ = cli(path, capsys, "compare", a, b, "--run", "--max-pairs", "10", "--seed", "1")
    assert code == 1, out
    assert "failed" in out and f"b: failed: {b[:10]} failed in every run" in out and "bisect --failure" in out
    code, out, _ = cli(path, capsys, "compare", a, b, "--run", "--max-pairs", "10", "--seed", "2", "--format", "json")
    [row] = json.loads(out)
    assert code == 1 and (row["verdict"], row["gates"], row["stopped"]) == ("failed", True, "failed")
    # The stored runs say the same.
    code, out, _ = cli(path, capsys, "compare", a, b)
    assert code == 1 and "failed" in out


def test_compare_run_fails_the_gate_when_b_does_not_build(tmp_path, capsys):
    path = tmp_path / "repo"
    a, b = repo(path, unbuildable_last=True)
    code, out, _ = cli(path, capsys, "compare", a, b, "--run", "--max-pairs", "10", "--seed", "1", "--format", "json")
    [row] = json.loads(out)
    assert code == 1 and (row["verdict"], row["gates"], row["stopped"]) == ("failed", True, "unbuilt")


def test_compare_run_of_a_broken_a_is_inconclusive_not_failed(tmp_path, capsys):
    path = tmp_path / "repo"
    a, b = repo(path, crash_last=True)
    # B against A the other way round: the base is the broken one, nothing to gate the change on.
    code, out, _ = cli(path, capsys, "compare", b, a, "--run", "--max-pairs", "10", "--seed", "1", "--format", "json")
    [row] = json.loads(out)
    assert code == 0 and (row["verdict"], row["gates"]) == ("inconclusive", False)


def test_bisect_of_a_bad_that_crashes_points_to_bisect_failure(tmp_path, capsys):
    path = tmp_path / "repo"
    good, bad = repo(path, crash_last=True)
    code, out, _ = cli(path, capsys, "bisect", good, bad, "--benchmark", "b", "--seed", "1")
    assert code == 1
    assert "BAD's benchmark failed in every run" in out and f"regbench bisect --failure {good[:10]}" in out, out
    assert "within the budget" not in out
