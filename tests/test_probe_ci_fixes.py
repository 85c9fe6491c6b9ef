"""Fixes from a first-user probe of regbench in CI (/tmp/probe-ci): a reader that leaves the pipe
early, the reason of a failed build, the pull-request comment of a PR whose build fails, and
``n_opt`` as a count of iterations to make."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from regbench.model import RunRecord
from regbench.store import Store

REGBENCH = [sys.executable, "-m", "regbench"]


# ------------------------------------------------------ 1. a reader that leaves the pipe early
def _two_versions(path: Path, *, slower: float) -> Path:
    """A store of benchmark ``b`` at v1 then v2, v2 ``slower`` times as slow."""
    rng = np.random.default_rng(0)
    with Store(path) as store:
        for v, level in (("v1", 1.0), ("v2", slower)):
            store.add_runs([RunRecord("b", v, r, rng.normal(level, 0.005, 10)) for r in range(6)])
    return path


def _into_a_closed_pipe(args: list[str]) -> subprocess.CompletedProcess:
    """``regbench ARGS`` whose stdout is a pipe nobody reads any more: its read end is closed
    before the command starts, so its first write fails (EPIPE), as when ``head -1`` has gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*REGBENCH, *args], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)


@pytest.mark.parametrize(("slower", "status"), [(1.0, 0), (1.2, 1)])
def test_a_gate_whose_reader_left_gives_its_answer_and_finishes_its_work(tmp_path, slower, status):
    # A probe: `regbench detect --fail-on-regression | head -1` exited 1 with nothing on stderr
    # (click turned the EPIPE into exit 1), so `set -o pipefail` failed a clean gate.
    db = _two_versions(tmp_path / "r.db", slower=slower)
    out = _into_a_closed_pipe(["--store", str(db), "detect", "--fail-on-regression"])
    assert (out.returncode, out.stderr) == (status, "")
    # The command went on to the end: the regression found is stored as an alert, as without a pipe.
    from regbench.store.alerts import list_alerts

    with Store(db) as store:
        assert [(a.benchmark, a.version, a.kind) for a in list_alerts(store)] == (
            [("b", "v2", "regression")] if status else [])


def test_show_piped_into_head_exits_0(tmp_path):
    # A real pipeline, `regbench show --runs | head -1`: head reads one line and leaves while
    # regbench still has far more than a pipe holds (64 KiB) to write.
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("b", "v1", r, np.array([1.0, 1.1])) for r in range(3000)])
    with subprocess.Popen([*REGBENCH, "--store", str(tmp_path / "r.db"), "show", "--runs"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as regbench:
        assert regbench.stdout is not None and regbench.stderr is not None
        head = subprocess.run(["head", "-1"], stdin=regbench.stdout, capture_output=True, text=True, timeout=120)
        regbench.stdout.close()  # head had the only other reading end, and it is gone
        err = regbench.stderr.read().decode()
        assert regbench.wait(timeout=120) == 0, err
    assert err == "" and head.stdout == "Benchmarks\n"


# ------------------------------------------------------------------- 2. why a build failed
def _build_project(tmp_path: Path, build: list[str], *, more: str = "") -> Path:
    """A repository of two empty commits and its regbench.toml: one benchmark, built with
    ``build``."""
    import json

    from projecttools import empty_commits_project

    cfg = empty_commits_project(tmp_path, 2)
    bench = [sys.executable, "-c", "[print(0.01) for _ in range(3)]"]
    cfg.write_text(f'[project]\nrepo = "r"\nbuild = {json.dumps(build)}\n{more}'
                   '[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
                   f'[[benchmark]]\nname = "b"\ncommand = {json.dumps(bench)}\n')
    return cfg


def _sha(cfg: Path, rev: str) -> str:
    return subprocess.run(["git", "-C", str(cfg.parent / "r"), "rev-parse", "--short=10", rev], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_a_build_command_that_cannot_start_is_said_wherever_the_build_is_reported(tmp_path, capsys):
    # A probe: `build = ["nosuchtool"]` was `build failed at X (exit None)` in show (--full too)
    # and `(failed)` in compare, though the store held "cannot start 'nosuchtool': ...".
    from projecttools import run_cli

    cfg = _build_project(tmp_path, [sys.executable, "-c", "pass"])
    run_cli(cfg, capsys, "run", "--versions", "HEAD~1")
    cfg.write_text(cfg.read_text().replace(f'build = ["{sys.executable}", "-c", "pass"]', 'build = ["nosuchtool"]'))
    why = "cannot start 'nosuchtool': No such file or directory"
    out = run_cli(cfg, capsys, "run", "--versions", "HEAD", code=4)
    head = _sha(cfg, "HEAD")
    # the line as the build ends (stderr, wrapped to the terminal's width), and the campaign's account (stdout)
    assert f"build of {head}: failed ({why}); its runs are skipped" in " ".join(out.split())
    assert f"\nBuild of {head}: failed ({why})\n" in out
    for full in ([], ["--full"]):
        out = run_cli(cfg, capsys, "show", *full)
        assert f"build failed at {head} ({why})\n" in out and "None" not in out
    out = run_cli(cfg, capsys, "compare", "HEAD~1", "HEAD", code=1)
    assert f"build failed at {head} ({why}); `regbench show --full` has the build's log." in out
    # A, not B, did not build: the one-line error says how, not "exit status None".
    out = run_cli(cfg, capsys, "compare", "HEAD", "HEAD~1", code=3)
    assert f"'{head}' did not build: {why}; `regbench show --version {head}`" in out


def test_a_build_killed_at_its_timeout_says_so(tmp_path, capsys):
    # A probe: a build killed at build_timeout was `(exit None): compiling`, the timeout not named.
    from projecttools import run_cli

    build = [sys.executable, "-c", "import time; print('compiling', flush=True); time.sleep(60)"]
    cfg = _build_project(tmp_path, build, more="build_timeout = 1\n")
    out = run_cli(cfg, capsys, "run", "--versions", "HEAD", code=4)
    head = _sha(cfg, "HEAD")
    assert f"\nBuild of {head}: timeout (killed after 1 s (timeout)): compiling\n" in out
    out = run_cli(cfg, capsys, "show", "--full")
    assert f"build failed at {head} (killed after 1 s (timeout)): compiling\n  compiling\n" in out
    assert "None" not in out


@pytest.mark.parametrize(("status", "code", "log", "said"), [
    ("failed", 2, "x.c:3:5: error: expected ';'\nmake: *** [x] Error 1\n[regbench] build exit status 2",
     "failed (exit status 2): x.c:3:5: error: expected ';'"),
    ("failed", None, "[regbench] cannot start 'cmake': No such file or directory",
     "failed (cannot start 'cmake': No such file or directory)"),
    ("timeout", None, "[ 40%] Building\n[regbench] build killed after 600 s (timeout)",
     "timeout (killed after 600 s (timeout)): [ 40%] Building"),
    ("failed", 1, "broken\n", "failed (exit status 1): broken"),  # recorded without regbench's note
    ("failed", None, "pip: no matching distribution\n", "failed: pip: no matching distribution"),  # a release's venv
], ids=["exit status", "cannot start", "timeout", "no note", "release"])
def test_build_failure_cause_says_a_build_as_failure_cause_says_a_run(status, code, log, said):
    from regbench.failures import build_failure_cause

    assert build_failure_cause(status, code, log) == said


# ------------------------------------------ 3. the pull-request comment of a PR whose build fails
def test_the_github_comment_says_why_b_did_not_build(tmp_path, capsys):
    # A probe: the comment said `**failed** (no run of B ok)` and left out the builder's error line
    # that the table prints under it.
    from projecttools import run_cli

    ok = [sys.executable, "-c", "pass"]
    cfg = _build_project(tmp_path, ok)
    run_cli(cfg, capsys, "run", "--versions", "HEAD~1")
    # The builder's line holds what Markdown would read: a backtick, a |, emphasis and a tag.
    broken = [sys.executable, "-c", "import sys; sys.exit(print('src.c:12: error: `x` | *y* <b>', file=sys.stderr) or 2)"]
    cfg.write_text(cfg.read_text().replace(json_list(ok), json_list(broken)))
    run_cli(cfg, capsys, "run", "--versions", "HEAD", code=4)
    head = _sha(cfg, "HEAD")
    out = run_cli(cfg, capsys, "compare", "HEAD~1", "HEAD", "--format", "github", code=1)
    lines = out.splitlines()
    said = f"{head} did not build: ``failed (exit status 2): src.c:12: error: `x` | *y* <b>``."
    assert said in lines
    assert lines.index(said) < lines.index("<details><summary>All 1 benchmark, the worst change first</summary>")
    assert "**failed** (no run of B ok)" in out  # the benchmark's row as before
    # Once B builds, the line goes.
    cfg.write_text(cfg.read_text().replace(json_list(broken), json_list(ok)))
    run_cli(cfg, capsys, "run", "--versions", "HEAD", "--rebuild")
    out = run_cli(cfg, capsys, "compare", "HEAD~1", "HEAD", "--format", "github")
    assert "did not build" not in out and "**failed**" not in out


def json_list(argv: list[str]) -> str:
    import json

    return json.dumps(argv)


@pytest.mark.parametrize(("text", "span"), [
    ("plain", "`plain`"),
    ("a `b` c", "``a `b` c``"),
    ("``x``", "``` ``x`` ```"),  # a text that starts or ends with a backtick is padded
    ("*a* | <b>\n  _c_", "`*a* | <b> _c_`"),  # one line; nothing in it is read as Markdown
])
def test_code_span_shows_any_text_as_it_is(text, span):
    from regbench.report.github import code_span

    assert code_span(text) == span


# --------------------------------------------------- 4. n_opt is a count of iterations to make
def test_summary_shows_n_opt_rounded_up_and_at_least_1_and_json_the_real_optimum(tmp_path, capsys):
    # A probe: `sort ... impact 11.3, n_opt 0`: an optimum below 0.5 was rounded to 0 iterations.
    import json

    from regbench.cli.main import main

    rng = np.random.default_rng(1)
    with Store(tmp_path / "r.db") as store:
        # Runs far apart, iterations alike: n_opt = sqrt(w S_sigma^2 / rho^2) is about 0.015.
        store.add_runs([RunRecord("wide", "v1", r, rng.normal(1.0 + 0.5 * r, 0.01, 10)) for r in range(4)])
        # Runs about as apart as their iterations predict: n_opt is about 1.9.
        store.add_runs([RunRecord("mid", "v1", r, rng.normal(1.0 + 0.02 * (r % 2), 0.03, 10)) for r in range(4)])
    args = ["--store", str(tmp_path / "r.db"), "summary", "--warmup-cost", "1"]
    capsys.readouterr()
    assert main([*args, "--format", "json"]) == 0
    exact = {d["benchmark"]: d["n_opt"] for d in json.loads(capsys.readouterr().out)}
    assert exact["wide"] < 0.5 and 1 < exact["mid"] < 2  # the real optima, full precision
    assert main(args) == 0
    shown = {line.split()[0]: line.split()[-1] for line in capsys.readouterr().out.splitlines()
             if line.split()[:1] in (["wide"], ["mid"])}
    assert shown == {"wide": "1", "mid": "2"}
    assert all(shown[b] == str(max(1, math.ceil(n))) for b, n in exact.items())


@pytest.mark.parametrize(("n_opt", "shown"), [
    (0.01, "1"), (0.49, "1"), (1.0, "1"), (1.2, "2"), (2.3, "3"), (3.0000000000000004, "3"), (1234.5, "1,235"),
    (math.inf, "∞"), (math.nan, "—"), (None, "—"),
])
def test_fmt_repetitions_rounds_up_to_at_least_1(n_opt, shown):
    from regbench.report.units import fmt_repetitions

    assert fmt_repetitions(n_opt) == shown
