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
import threading
import time
from pathlib import Path

import pytest

from projecttools import empty_commits_project, run_cli

from regbench.config import load_config
from regbench.errors import ExecutorLostError, ExitStatus
from regbench.run.campaign import run_campaign
from regbench.run.core import RunRequest, Trial
from regbench.store import Store

distributed = pytest.importorskip("distributed")

from regbench.run.dask_executor import DaskExecutor  # noqa: E402

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


def machines(tmp_path: Path, *names: str) -> Cluster:
    """A scheduler and one worker of each machine named, all connected."""
    cluster = Cluster(tmp_path)
    try:
        for name in names:
            cluster.env["REGBENCH_MACHINE"] = name
            cluster.worker(name)
        wait_for_workers(cluster.address, len(names))
    except BaseException:
        cluster.close()
        raise
    return cluster


@pytest.mark.slow
def test_each_machine_makes_the_n_runs_of_every_version_and_resumes_on_its_own_runs(tmp_path, capsys):
    cfg = project(tmp_path)
    db = tmp_path / "results.db"
    cluster = machines(tmp_path, "m1", "m2")
    try:
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
        # Each machine its own RMIT order (from the seed and its name): not the same version on
        # every machine at the same moment (the orders are drawn, not random: with seed 1 and
        # these names they differ; one seed for all gave both machines the same order).
        with Store(db) as store:
            order = {m: [(r.benchmark, r.version) for r in sorted(store.runs(), key=lambda r: r.started_at)
                         if r.machine == m] for m in ("m1", "m2")}
        assert sorted(order["m1"]) == sorted(order["m2"]) and order["m1"] != order["m2"], order

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
    makes all its runs, m2's are given up on after waiting for a worker of m2 (3 s
    here, 30 s from the command line), and the campaign is interrupted with one line naming m2;
    the same command with an m2 worker back makes only m2's runs."""
    cfg = project(tmp_path)
    db = tmp_path / "results.db"
    cluster = Cluster(tmp_path)
    try:
        cluster.env["REGBENCH_MACHINE"] = "m1"
        cluster.worker("m1")
        cluster.env["REGBENCH_MACHINE"] = "m2"
        doomed = cluster.worker("m2")
        wait_for_workers(cluster.address, 2)

        def kill_m2_after_its_first_run() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if db.exists() and any(m == "m2" for _, _, m in runs_by_machine(db)):
                    os.killpg(doomed.pid, signal.SIGKILL)
                    return
                time.sleep(0.05)  # polling the store

        killer = threading.Thread(target=kill_m2_after_its_first_run)
        killer.start()
        with Store(db) as store, pytest.raises(ExecutorLostError) as lost:
            run_campaign(load_config(cfg), store, revisions="main~1,main", runs=RUNS, seed=1,
                         executor=DaskExecutor(cluster.address, wait=3.0, stranded_after=3.0))
        killer.join()
        message = str(lost.value)
        assert len(message.splitlines()) == 1 and " runs were not made: no Dask worker of the scheduler at " in message
        assert "for 3 s (a worker of machine 'm2' (" in message and message.endswith("to resume"), message
        stored = runs_by_machine(db)
        experiments = {(b, v) for b, v, _ in stored}
        assert len(experiments) == 4
        assert {k: len(i) for k, i in stored.items() if k[2] == "m1"} == {(b, v, "m1"): RUNS for b, v in experiments}
        assert 0 < sum(len(i) for k, i in stored.items() if k[2] == "m2") < RUNS * len(experiments)
        with Store(db) as store:
            assert [c.status for c in store.campaigns()] == ["interrupted"]

        cluster.worker("m2-again")  # REGBENCH_MACHINE is still m2
        wait_for_workers(cluster.address, 2)
        again = subprocess.run([PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "run",
                                "--versions", "main~1,main", "--runs", str(RUNS), "--seed", "1", "--executor", "dask",
                                "--scheduler", cluster.address],
                               env=cluster.env, text=True, capture_output=True, cwd=tmp_path, timeout=180)
        assert again.returncode == 0, again.stderr
        now = runs_by_machine(db)
        assert {k: v for k, v in now.items() if k[2] == "m1"} == {k: v for k, v in stored.items() if k[2] == "m1"}
        assert {k: len(i) for k, i in now.items()} == {(b, v, m): RUNS for b, v in experiments for m in ("m1", "m2")}
    finally:
        cluster.close()


@pytest.mark.slow
def test_runs_of_a_machine_gone_before_they_are_sent_interrupt_the_campaign_and_are_not_failed_runs(tmp_path):
    """A run pinned to a machine that no worker offers when the runs are sent (its workers left
    while the versions were built) is not a failed run, which a resumed campaign would count as
    made: nothing is sent, the campaign is interrupted with one line naming the machine."""
    cfg = project(tmp_path)
    fine = load_config(cfg).benchmark("alpha")
    requests = [RunRequest(fine, Trial("alpha", "v", 0), tmp_path, PY, machine="here"),
                RunRequest(fine, Trial("alpha", "v", 1), tmp_path, PY, machine="gone")]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"benchmark": 1},
                                  dashboard_address=":0", env={"REGBENCH_MACHINE": "here"}) as local, \
            distributed.Client(local, set_as_default=False) as client:
        executor = DaskExecutor(client=client, wait=1.0)
        made = []
        with pytest.raises(ExecutorLostError, match=r"^1 run was not made: no Dask worker of the scheduler at .* "
                                                     r"could take it for 1 s \(a worker of machine 'gone' \(1 run\)\)"):
            made.extend(executor.map(requests))
        executor.close()
    assert made == []


@pytest.mark.slow
def test_an_adaptive_benchmark_on_several_machines_is_refused_before_anything_is_stored(tmp_path, capsys):
    """Its rounds follow one machine's runs: on two machines they would read none and never stop."""
    cfg = project(tmp_path)
    cfg.write_text(cfg.read_text().replace('name = "beta"\n', 'name = "beta"\nplan = "adaptive"\n'), encoding="utf-8")
    db = tmp_path / "results.db"
    cluster = machines(tmp_path, "m1", "m2")
    try:
        from regbench.cli.main import main

        capsys.readouterr()
        rc = main(["--config", str(cfg), "--store", str(db), "run", "--versions", "main", "--executor", "dask",
                   "--scheduler", cluster.address])
        err = capsys.readouterr().err.strip()
    finally:
        cluster.close()
    assert rc == ExitStatus.USAGE or rc == ExitStatus.ERROR, (rc, err)
    assert err.splitlines() == [err.splitlines()[-1]] and "benchmark 'beta' has plan = \"adaptive\"" in err, err
    assert "machines can run it (m1, m2)" in err, err
    if db.exists():
        with Store(db) as store:
            assert store.campaigns() == [] and store.runs() == []
