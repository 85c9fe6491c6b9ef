"""Fixes from a first-user probe of regbench in CI (/tmp/probe-ci): a reader that leaves the pipe
early, the reason of a failed build, the pull-request comment of a PR whose build fails, and
``n_opt`` as a count of iterations to make."""

from __future__ import annotations

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
