"""Containment of benchmark processes: nothing a run starts outlives it.

The benchmarks here are real scripts that double-fork a grandchild into a new session
(``os.setsid``), out of the process group regbench kills, and write its pid to a file; the
grandchild would sleep for a minute.  Each test checks the grandchild is dead after the run, in
every way a run can end: normally, on a timeout, and with regbench itself killed by SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from regbench.config import BenchmarkSpec
from regbench.run.execute import execute_run

from proctools import alive, wait_dead

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux subreaper and /proc")

#: A benchmark that prints its samples and leaves a setsid'd grandchild behind; ``{after}`` is
#: what its main process does next (exit at once, or hang).
ESCAPING = """\
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        with open({pidfile!r} + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename({pidfile!r} + ".tmp", {pidfile!r})
        time.sleep(60)
    os._exit(0)
os.waitpid(pid, 0)
while not os.path.exists({pidfile!r}):
    time.sleep(0.005)
print(1.0)
print(2.0)
sys.stdout.flush()
{after}
"""


def escaping(tmp_path: Path, after: str = "") -> tuple[Path, Path]:
    """The script of :data:`ESCAPING` in ``tmp_path`` and the file its grandchild's pid goes to."""
    pidfile = tmp_path / "grandchild.pid"
    script = tmp_path / "bench.py"
    script.write_text(ESCAPING.format(pidfile=str(pidfile), after=after))
    return script, pidfile


def spec(script: Path, **kw) -> BenchmarkSpec:
    return BenchmarkSpec(name="escape", kind="command", command=(sys.executable, str(script)), **kw)


def test_a_setsid_grandchild_is_killed_when_the_run_ends_and_the_run_says_so(tmp_path):
    script, pidfile = escaping(tmp_path)
    out = execute_run(spec(script), tree=tmp_path, python=sys.executable, run_index=0, version="v")
    grandchild = int(pidfile.read_text())
    assert wait_dead(grandchild)
    assert out.status == "ok" and np.array_equal(out.samples, [1.0, 2.0])
    assert "[regbench] killed 1 process the benchmark left running" in out.stderr_tail


def test_a_run_that_leaves_nothing_behind_has_no_note(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("print(1.5)\n")
    out = execute_run(spec(script), tree=tmp_path, python=sys.executable, run_index=0, version="v")
    assert out.status == "ok" and "[regbench]" not in out.stderr_tail


def test_a_timed_out_run_kills_the_setsid_grandchild_too(tmp_path):
    script, pidfile = escaping(tmp_path, after="time.sleep(60)")
    out = execute_run(spec(script, timeout=1.0), tree=tmp_path, python=sys.executable, run_index=0, version="v")
    assert out.status == "timeout"
    assert wait_dead(int(pidfile.read_text()))
    assert "killed 1 process the benchmark left running" in out.stderr_tail
    assert out.stderr_tail.rstrip().splitlines()[-1].startswith("[regbench] killed after 1 s (timeout)")


def test_killing_regbench_kills_the_benchmark_and_its_setsid_grandchild(tmp_path):
    """regbench dies by SIGKILL in the middle of a run (nothing of it runs after): the spawner
    gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and kills what descends from it."""
    script, pidfile = escaping(tmp_path, after="time.sleep(60)")
    regbench = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from regbench.config import BenchmarkSpec
        from regbench.run.execute import execute_run
        spec = BenchmarkSpec(name="escape", kind="command", command=(sys.executable, {str(script)!r}), timeout=120)
        execute_run(spec, tree={str(tmp_path)!r}, python=sys.executable, run_index=0, version="v")
        """)], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        # The grandchild writes its pid once it runs; the benchmark is then hanging.
        deadline_ok = _wait_for(pidfile, regbench)
        assert deadline_ok, "the benchmark did not start"
        grandchild = int(pidfile.read_text())
        assert alive(grandchild)
        regbench.send_signal(signal.SIGKILL)
        regbench.wait()
        assert wait_dead(grandchild, seconds=10)
    finally:
        if regbench.poll() is None:
            regbench.kill()
            regbench.wait()


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 60.0) -> bool:
    """Wait (blocking on the process, in short steps) until ``path`` exists or ``proc`` ends."""
    import time

    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        try:
            proc.wait(timeout=0.02)
        except subprocess.TimeoutExpired:
            pass
    return True
