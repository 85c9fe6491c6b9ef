"""`regbench screen --executor dask`: a real LocalCluster, and separate `dask scheduler` / `dask
worker` processes on loopback with a worker killed with kill -9 in the middle of the campaign."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.errors import ConfigError
from regbench.store import Store

from test_run_dask import _scheduler_address
from test_screening_campaign import project

distributed = pytest.importorskip("distributed")

PY = sys.executable


def test_screen_on_a_local_cluster_stores_every_run_once(tmp_path, capsys):
    cfg = project(tmp_path)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  resources={"benchmark": 1}, dashboard_address=":0") as cluster:
        rc = main(["--config", str(cfg), "--store", str(tmp_path / "results.db"), "screen", "--generator", "D = ABC",
                   "--runs", "2", "--seed", "1", "--executor", "dask", "--scheduler", cluster.scheduler_address])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "16 ok stored; 0 already stored" in out
    store = Store(tmp_path / "results.db")
    keys = [(r.config, r.run_index) for r in store.runs()]
    assert len(keys) == len(set(keys)) == 16
    plan = store.campaigns()[0].plan
    assert plan["executor"] == "dask"
    # The workers' machine (both on this host) is recorded with its fingerprint.
    ((name, fingerprint),) = plan["machines"].items()
    assert name and fingerprint["logical_cores"] >= 1
    lines = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] in (["a"], ["b"], ["d"])}
    assert "yes" in lines["a"] and "yes" in lines["b"] and " no " in lines["d"]
    store.close()


def test_an_unreachable_scheduler_is_a_one_line_error():
    from regbench.run.dask_executor import DaskExecutor

    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1)
    with pytest.raises(ConfigError, match="needs --scheduler"):
        DaskExecutor(None)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_a_worker_killed_mid_campaign_loses_and_duplicates_nothing(tmp_path):
    cfg = project(tmp_path, delay="import time; time.sleep(0.3)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    info = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        p = subprocess.Popen([PY, "-m", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True, cwd=tmp_path)
        procs.append(p)
        return p

    try:
        start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
              "--scheduler-file", str(info))
        deadline = time.monotonic() + 60
        while not _scheduler_address(info):  # the scheduler's file, once whole
            assert time.monotonic() < deadline, "no scheduler within 60 s"
            time.sleep(0.05)
        address = _scheduler_address(info)
        workers = [start("distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                         "--resources", "benchmark=1", "--name", f"w{i}", "--dashboard-address", ":0")
                   for i in range(2)]
        db = tmp_path / "results.db"
        store = Store(db)
        screen = subprocess.Popen([PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "screen",
                                   "--generator", "D = ABC", "--runs", "2", "--seed", "2", "--executor", "dask",
                                   "--scheduler", address], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        procs.append(screen)
        while len(store.runs()) < 3:
            assert screen.poll() is None, screen.communicate()
            assert time.monotonic() < deadline + 60, "no runs stored"
            time.sleep(0.02)  # polling the store
        os.kill(workers[0].pid, signal.SIGKILL)
        out, err = screen.communicate(timeout=180)
        assert screen.returncode == 0, err
        keys = [(r.config, r.run_index, r.status) for r in store.runs()]
        assert len(keys) == 16 and len({k[:2] for k in keys}) == 16  # nothing lost, nothing twice
        assert {k[2] for k in keys} == {"ok"}
        assert "16 ok stored; 0 already stored" in out
        store.close()
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
