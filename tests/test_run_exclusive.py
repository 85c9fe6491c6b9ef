"""Runs of concurrent regbench commands on one machine interleave instead of overlapping
(``[noise] exclusive``, on by default, :mod:`regbench.run.exclusive`): before, two campaigns
started together (two CI jobs on one runner, a `compare --run` beside a campaign) ran their
benchmark processes at the same time, each disturbing the other's timing.  Runs pinned to
disjoint CPUs still run side by side; ``exclusive = false`` lets any overlap.  Real `regbench
run` processes on two projects with stores of their own, each benchmark process logging when it
ran."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from regbench.config import ConfigError, parse_config
from regbench.run.exclusive import measuring

PY = sys.executable
RUNS = 4
#: Logs its start and end (a shared clock across processes), taking 0.2 s of CPU between.
LOGGED = ("import os, sys, time\n"
          "log = sys.argv[1]\n"
          "with open(log, 'a') as f: f.write(f'start {time.time()}\\n')\n"
          "end = time.process_time() + 0.2\n"
          "while time.process_time() < end: pass\n"
          "for i in range(int(os.environ['REGBENCH_ITERATIONS'])): print(0.2)\n"
          "with open(log, 'a') as f: f.write(f'end {time.time()}\\n')\n")
#: Waits (up to 60 s) until the other project's benchmark is running too: it ends only if
#: the two run at the same time.
MEET = ("import os, sys, time\n"
        "mine, other = sys.argv[1], sys.argv[2]\n"
        "open(mine, 'w').close()\n"
        "deadline = time.monotonic() + 60\n"
        "while not os.path.exists(other):\n"
        "    if time.monotonic() > deadline: sys.exit('never met')\n"
        "    time.sleep(0.01)\n"  # polling for the other process's file
        "for i in range(int(os.environ['REGBENCH_ITERATIONS'])): print(0.1)\n")


def project(root: Path, command: list[str], noise: str = "", runs: int = RUNS) -> Path:
    root.mkdir()
    cfg = root / "regbench.toml"
    cfg.write_text(f'[project]\nname = "{root.name}"\nstore = "r.db"\n[defaults]\nruns = {runs}\niterations = 2\n'
                   f'warmup = 0\ntimeout = 120\n{noise}[[benchmark]]\nname = "b"\ncommand = {json.dumps(command)}\n',
                   encoding="utf-8")
    return cfg


def run_together(*configs: Path) -> None:
    procs = [subprocess.Popen([PY, "-m", "regbench.cli.main", "--config", str(c), "run", "--seed", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.parent)
             for c in configs]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, (out, err)
        assert f"{RUNS} ok" in out, out


def intervals(log: Path) -> list[tuple[float, float]]:
    marks = [line.split() for line in log.read_text().splitlines()]
    starts = [float(t) for k, t in marks if k == "start"]
    ends = [float(t) for k, t in marks if k == "end"]
    assert len(starts) == len(ends) == RUNS
    return list(zip(starts, ends))


@pytest.mark.slow
@pytest.mark.parametrize("pins", [None, (0, 0)], ids=["unpinned", "pinned-to-one-cpu"])
def test_two_commands_runs_never_overlap(tmp_path, pins):
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    noise = [f"[noise]\npin = [{c}]\n" if pins else "" for c in (pins or (None, None))]
    cfgs = [project(tmp_path / name, [PY, "-c", LOGGED, str(log)], n)
            for name, log, n in zip(("a", "b"), logs, noise)]
    run_together(*cfgs)
    spans = sorted(intervals(logs[0]) + intervals(logs[1]))
    overlaps = [(x, y) for x, y in zip(spans, spans[1:]) if y[0] < x[1]]
    assert not overlaps, overlaps


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True,
                    reason="needs two CPUs")
def test_runs_pinned_to_disjoint_cpus_run_side_by_side(tmp_path):
    cpus = sorted(os.sched_getaffinity(0))[:2]
    marks = [tmp_path / "a.here", tmp_path / "b.here"]
    cfgs = [project(tmp_path / name, [PY, "-c", MEET, str(mine), str(other)], f"[noise]\npin = [{cpu}]\n", runs=1)
            for name, mine, other, cpu in (("a", marks[0], marks[1], cpus[0]), ("b", marks[1], marks[0], cpus[1]))]
    procs = [subprocess.Popen([PY, "-m", "regbench.cli.main", "--config", str(c), "run", "--seed", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.parent) for c in cfgs]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "1 ok" in out, (out, err)


@pytest.mark.slow
def test_exclusive_false_lets_runs_of_two_commands_overlap(tmp_path):
    marks = [tmp_path / "a.here", tmp_path / "b.here"]
    cfgs = [project(tmp_path / name, [PY, "-c", MEET, str(mine), str(other)], "[noise]\nexclusive = false\n", runs=1)
            for name, mine, other in (("a", marks[0], marks[1]), ("b", marks[1], marks[0]))]
    procs = [subprocess.Popen([PY, "-m", "regbench.cli.main", "--config", str(c), "run", "--seed", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.parent) for c in cfgs]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "1 ok" in out, (out, err)
    from regbench.store import Store

    with Store(cfgs[0].parent / "r.db") as store:
        assert store.campaigns()[0].plan["noise"]["exclusive"] is False  # recorded when off


def test_an_unpinned_run_waits_for_a_pinned_one_and_the_setting_is_checked():
    """In one process, as across processes: the lock is of the open file, not of the process."""
    held, release, entered = threading.Event(), threading.Event(), threading.Event()

    def pinned() -> None:
        with measuring((0,)):
            held.set()
            release.wait(30)

    def unpinned() -> None:
        with measuring(None):
            entered.set()

    first = threading.Thread(target=pinned)
    first.start()
    assert held.wait(30)
    second = threading.Thread(target=unpinned)
    second.start()
    assert not entered.wait(0.5)  # still waiting for the pinned run
    release.set()
    assert entered.wait(30)
    first.join(30), second.join(30)
    with measuring(None, enabled=False), measuring(None, enabled=False):  # off: nothing held
        pass
    assert parse_config({"noise": {"exclusive": False}}).noise.exclusive is False
    assert parse_config({}).noise.exclusive is True
    with pytest.raises(ConfigError, match=r"\[noise\] `exclusive` must be true or false, got 'no'"):
        parse_config({"noise": {"exclusive": "no"}})


def test_a_run_that_waits_for_the_machine_says_so_then_starts(tmp_path):
    """The local executor tells its caller that a run waits for another command's run (the
    progress bar's current run then reads "waiting for another regbench run on this machine"),
    then that it starts."""
    from rich.console import Console

    from regbench.config import load_config
    from regbench.report.campaign import ProgressReporter
    from regbench.run.core import RunRequest, Trial
    from regbench.run.executor import LocalExecutor

    cfg = project(tmp_path / "p", [PY, "-c", "print(1); print(1)"])
    request = RunRequest(load_config(cfg).benchmark("b"), Trial("b", "v", 0), cfg.parent, PY)
    reporter = ProgressReporter(Console(file=io.StringIO()))
    reporter.trials_started(1, 0)
    told: list[tuple[str, str]] = []

    def started(r: RunRequest) -> None:
        told.append(("started", reporter.progress.tasks[0].fields["current"]))
        reporter.trial_started("b", "v", 0)

    def waiting(r: RunRequest) -> None:
        reporter.trial_waiting("b", "v", 0)
        told.append(("waiting", reporter.progress.tasks[0].fields["current"]))
        release.set()  # the other command's run ends

    held, release = threading.Event(), threading.Event()

    def other_command_run() -> None:
        with measuring(None):
            held.set()
            release.wait(30)

    other = threading.Thread(target=other_command_run)
    other.start()
    assert held.wait(30)
    with LocalExecutor() as executor:
        [(_, outcome)] = list(executor.map([request], started=started, waiting=waiting))
    other.join(30)
    reporter.progress.stop()
    assert outcome.status == "ok"
    assert [k for k, _ in told] == ["started", "waiting", "started"]
    assert told[1][1] == "b@v #0: waiting for another regbench run on this machine"
    # Alone on the machine: started once, no wait.
    told.clear()
    with LocalExecutor() as executor:
        list(executor.map([request], started=started, waiting=waiting))
    assert [k for k, _ in told] == ["started"]
