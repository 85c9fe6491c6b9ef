"""`regbench run --executor dask --runs N` on workers of several machines: each machine makes the N
runs of every (benchmark, version), each machine's runs being its own series (docs/dask.md s.2).

A probe: on two workers named m1 and m2 (``REGBENCH_MACHINE``), ``--runs 3`` stored 3 runs of each
version in all, spread over the two machines (2 on one, 1 on the other, or 3 on one and none on
the other), so neither machine's series had 3 runs of a version; and a machine added later got no
run, the runs of the others counting as its own.  Real ``dask scheduler`` and ``dask worker``
processes on loopback, real git.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from projecttools import empty_commits_project, run_cli

from regbench.store import Store

distributed = pytest.importorskip("distributed")

from test_run_dask import PY, Cluster  # noqa: E402

RUNS = 3
NAP = "import time; time.sleep(0.1); [print(0.01) for _ in range(3)]"


def project(tmp_path: Path) -> Path:
    """Two benchmarks of a git repository of two commits."""
    cfg = empty_commits_project(tmp_path, 2)
    benchmarks = "".join(f'\n[[benchmark]]\nname = "{name}"\ncommand = {json.dumps([PY, "-c", NAP])}\n'
                         for name in ("alpha", "beta"))
    cfg.write_text(f'[project]\nrepo = "r"\nbranch = "main"\n\n[defaults]\niterations = 3\nwarmup = 0\n{benchmarks}',
                   encoding="utf-8")
    return cfg


def wait_for_workers(address: str, n: int) -> None:
    client = distributed.Client(address, timeout=30, set_as_default=False)
    try:
        client.wait_for_workers(n, timeout=60)
    finally:
        client.close()


def runs_by_machine(db: Path) -> dict[tuple[str, str, str], list[int]]:
    """(benchmark, version, machine) -> the run indexes stored, every run ``ok``."""
    out: dict[tuple[str, str, str], list[int]] = collections.defaultdict(list)
    with Store(db) as store:
        for r in store.runs():
            assert r.status == "ok", (r, r.stderr_tail)
            out[(r.benchmark, r.version, r.machine)].append(r.run_index)
    return out


@pytest.mark.slow
def test_each_machine_makes_the_n_runs_of_every_version_and_resumes_on_its_own_runs(tmp_path, capsys):
    cfg = project(tmp_path)
    db = tmp_path / "results.db"
    cluster = Cluster(tmp_path)
    try:
        for name in ("m1", "m2"):
            cluster.env["REGBENCH_MACHINE"] = name
            cluster.worker(name)
        wait_for_workers(cluster.address, 2)
        run = ("--store", str(db), "run", "--versions", "main~1,main", "--runs", str(RUNS), "--seed", "1",
               "--executor", "dask", "--scheduler", cluster.address)
        run_cli(cfg, capsys, *run)

        stored = runs_by_machine(db)
        versions = {v for _, v, _ in stored}
        assert len(versions) == 2
        experiments = {(b, v) for b in ("alpha", "beta") for v in versions}
        # Each machine its own series: N runs of every version on each, none pooled.
        assert {key: len(idx) for key, idx in stored.items()} == {(b, v, m): RUNS for b, v in experiments
                                                                   for m in ("m1", "m2")}
        for b, v in experiments:  # run indexes stay distinct across the machines
            both = stored[(b, v, "m1")] + stored[(b, v, "m2")]
            assert len(set(both)) == 2 * RUNS, both

        # The same command once a third machine joined: m1 and m2 have nothing left to do (each
        # counts its own runs), and m3 makes its own N runs of each version (the others' runs
        # are not its own).
        cluster.env["REGBENCH_MACHINE"] = "m3"
        cluster.worker("m3")
        wait_for_workers(cluster.address, 3)
        run_cli(cfg, capsys, *run)
        now = runs_by_machine(db)
        assert {k: v for k, v in now.items() if k[2] != "m3"} == stored
        assert {(b, v): len(now[(b, v, "m3")]) for b, v in experiments} == dict.fromkeys(experiments, RUNS)
    finally:
        cluster.close()


@pytest.mark.slow
def test_a_machine_whose_workers_all_leave_interrupts_the_campaign_and_the_same_command_resumes(tmp_path):
    """m2's only worker is killed (``kill -9``, no nanny to restart it) once it made a run: m1
    makes all its runs, then, m2's runs having waited 30 s for a worker of m2, the command ends
    with one line, exit status 3; the same command with an m2 worker back makes only m2's runs."""
    cfg = project(tmp_path)
    db = tmp_path / "results.db"
    cluster = Cluster(tmp_path)
    try:
        cluster.env["REGBENCH_MACHINE"] = "m1"
        cluster.worker("m1")
        cluster.env["REGBENCH_MACHINE"] = "m2"
        doomed = cluster.worker("m2")
        wait_for_workers(cluster.address, 2)
        args = ["--config", str(cfg), "--store", str(db), "run", "--versions", "main~1,main", "--runs", str(RUNS),
                "--seed", "1", "--executor", "dask", "--scheduler", cluster.address]
        run = subprocess.Popen([PY, "-m", "regbench.cli.main", *args], env=cluster.env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        deadline = time.monotonic() + 120
        while not db.exists() or not any(m == "m2" for _, _, m in runs_by_machine(db)):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no run of m2 within 120 s"
            time.sleep(0.05)  # polling the store
        os.killpg(doomed.pid, signal.SIGKILL)
        out, err = run.communicate(timeout=180)
        assert run.returncode == 3, (out, err)
        assert "Traceback" not in err, err
        line = err.strip().splitlines()[-1]
        assert line.startswith("error: ") and " runs were not made: no Dask worker of the scheduler at " in line, line
        assert "for 30 s (a worker of machine 'm2' (" in line and line.endswith("then run the same command to resume"), line
        stored = runs_by_machine(db)
        experiments = {(b, v) for b, v, _ in stored}
        assert {k: len(i) for k, i in stored.items() if k[2] == "m1"} == {(b, v, "m1"): RUNS for b, v in experiments}
        assert 0 < sum(len(i) for k, i in stored.items() if k[2] == "m2") < RUNS * len(experiments)
        with Store(db) as store:
            assert [c.status for c in store.campaigns()] == ["interrupted"]

        cluster.worker("m2-again")  # REGBENCH_MACHINE is still m2
        wait_for_workers(cluster.address, 2)
        again = subprocess.run([PY, "-m", "regbench.cli.main", *args], env=cluster.env, text=True,
                               capture_output=True, cwd=tmp_path, timeout=180)
        assert again.returncode == 0, again.stderr
        now = runs_by_machine(db)
        assert {k: v for k, v in now.items() if k[2] == "m1"} == {k: v for k, v in stored.items() if k[2] == "m1"}
        assert {k: len(i) for k, i in now.items()} == {(b, v, m): RUNS for b, v in experiments for m in ("m1", "m2")}
    finally:
        cluster.close()
