"""`regbench run --executor dask`: a real LocalCluster, and separate `dask scheduler` / `dask worker`
processes on loopback, with a worker killed with kill -9 in the middle of a campaign and another
joining late; tags (worker resources) a benchmark requires."""

from __future__ import annotations

import collections

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.config import load_config
from regbench.errors import ExitStatus
from regbench.run.campaign import run_campaign
from regbench.store import Store
from regbench.store import schema

distributed = pytest.importorskip("distributed")

from regbench.run.dask_executor import DaskExecutor  # noqa: E402

PY = sys.executable
BENCHMARKS = ("alpha", "beta", "gamma", "delta")


def project(tmp_path: Path, *, delay: float = 0.0, runs: int = 3, requires: dict[str, list[str]] | None = None
            ) -> Path:
    """Four command benchmarks (each prints 5 samples after ``delay`` seconds), ``runs`` runs each."""
    text = f'[project]\nname = "dask"\n\n[defaults]\nruns = {runs}\niterations = 5\ntimeout = 60\n'
    for name in BENCHMARKS:
        code = (f"import os, time; time.sleep({delay}); "
                "[print(1.0 + 0.01 * k) for k in range(int(os.environ['REGBENCH_ITERATIONS']))]")
        text += f'\n[[benchmark]]\nname = "{name}"\ncommand = {json.dumps([PY, "-c", code])}\n'
        if requires and name in requires:
            text += f"requires = {json.dumps(requires[name])}\n"
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def run_keys(store: Store) -> list[tuple[str, str, int, str]]:
    return [(r.benchmark, r.version, r.run_index, r.status) for r in store.runs()]


@pytest.mark.store
def test_run_on_a_local_cluster_stores_every_run_once_with_the_workers_machine(tmp_path, store_url, monkeypatch):
    cfg = project(tmp_path, requires={"delta": ["no-such-tool"]})
    monkeypatch.setenv("REGBENCH_MACHINE", "bench-7")  # the workers (processes) inherit it
    store = Store(store_url)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  resources={"benchmark": 1}, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        result = run_campaign(load_config(cfg), store, seed=3, executor=DaskExecutor(client=client, wait=0.5))
    assert result.counts["ok"] == 9 and result.counts["failed"] == 0 and not result.ok
    keys = run_keys(store)
    assert len(keys) == len({k[:3] for k in keys}) == 9  # every run once
    assert {k[3] for k in keys} == {"ok"}
    # delta, whose tag no worker offers, is left out (not hanging, not a traceback), and not
    # stored as failed runs: a later campaign with a suitable worker runs it
    ((name, reason),) = result.not_run
    assert name == "delta" and "no Dask worker offers no-such-tool (waited 0.5 s; the workers offer benchmark)" in reason
    assert {r.machine for r in store.runs()} == {"bench-7"}
    with store.engine.connect() as conn:
        (fingerprint,) = conn.execute(sa.select(schema.machine.c.fingerprint)
                                      .where(schema.machine.c.name == "bench-7")).one()
    assert fingerprint["fingerprint_version"] == 1 and fingerprint["python_version"]
    campaign = store.campaigns()[0]
    assert campaign.plan["executor"] == "dask" and campaign.plan["machines"] == ["bench-7"]
    assert campaign.machine == "bench-7" and campaign.status == "finished"

    # The same campaign again resumes: every run is stored, nothing is run twice.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  resources={"benchmark": 1}, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        again = run_campaign(load_config(cfg), store, seed=3, executor=DaskExecutor(client=client, wait=0.5))
    assert again.runs_stored == 0 and again.trials_skipped == 9 and [n for n, _ in again.not_run] == ["delta"]
    store.close()


def test_an_unreachable_scheduler_is_a_one_line_error_and_writes_nothing(tmp_path, capsys, dask_connect_timeout_1s):
    cfg = project(tmp_path)
    db = tmp_path / "results.db"
    rc = main(["--config", str(cfg), "--store", str(db), "run", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err and err.strip().count("\n") == 0
    assert not db.exists()
    # Options that do not go together are a usage error (tests/test_cli_usage_exits.py).
    assert main(["--config", str(cfg), "--store", str(db), "run", "--scheduler", "tcp://127.0.0.1:9"]) == ExitStatus.USAGE
    assert "Error: --scheduler is for --executor dask" in capsys.readouterr().err
    assert main(["--config", str(cfg), "--store", str(db), "run", "--executor", "dask", "--machine", "m",
                 "--scheduler", "tcp://127.0.0.1:9"]) == ExitStatus.USAGE
    assert "REGBENCH_MACHINE" in capsys.readouterr().err
    assert not db.exists()


def _scheduler_address(info: Path) -> str | None:
    """The address in a scheduler's file, or None while the file is not there or not yet whole."""
    try:
        return json.loads(info.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None


class Cluster:
    """A `dask scheduler` and `dask worker` processes on loopback (ports chosen by the system)."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "REGBENCH_MACHINE": "loop"}
        self.procs: list[subprocess.Popen] = []
        info = tmp_path / "scheduler.json"
        self.start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                   "--dashboard-address", ":0", "--scheduler-file", str(info))
        try:
            deadline = time.monotonic() + 120  # a loaded 2-CPU machine has taken over 60 s
            # Polling for the scheduler's file, until it holds its JSON: the scheduler creates it,
            # then writes it (a full-suite run read it empty once).
            while not _scheduler_address(info):
                assert time.monotonic() < deadline, "no scheduler within 120 s"
                time.sleep(0.05)
            self.address = _scheduler_address(info)
        except BaseException:
            self.close()  # the caller's try has not begun: nothing else would stop the scheduler
            raise

    def start(self, *args: str, stdout=subprocess.DEVNULL) -> subprocess.Popen:
        p = subprocess.Popen([PY, "-m", *args], env=self.env, stdout=stdout, stderr=subprocess.DEVNULL,
                             start_new_session=True, cwd=self.tmp_path)
        self.procs.append(p)
        return p

    def worker(self, name: str, resources: str = "benchmark=1") -> subprocess.Popen:
        return self.start("distributed.cli.dask_worker", self.address, "--nthreads", "1", "--no-nanny",
                          "--resources", resources, "--name", name, "--dashboard-address", ":0")

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_kill_9_of_a_worker_mid_campaign_loses_and_duplicates_nothing_and_a_late_worker_gets_work(tmp_path):
    cfg = project(tmp_path, delay=0.4, runs=4)
    cluster = Cluster(tmp_path)
    try:
        first = cluster.worker("w0")
        db = tmp_path / "results.db"
        store = Store(db)
        run = subprocess.Popen([PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "run",
                                "--seed", "5", "--executor", "dask", "--scheduler", cluster.address],
                               env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        cluster.procs.append(run)
        deadline = time.monotonic() + 120
        while len(store.runs()) < 3:
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no runs stored"
            time.sleep(0.02)  # polling the store
        def in_flight() -> bool:  # a run in flight: the spawner the worker's task thread started is alive
            for f in Path(f"/proc/{first.pid}/task").glob("*/children"):
                with contextlib.suppress(OSError):  # a thread that ended meanwhile
                    if f.read_text().split():
                        return True
            return False

        while not in_flight():
            assert time.monotonic() < deadline, "the worker never runs"
            time.sleep(0.005)  # polling /proc
        os.kill(first.pid, signal.SIGKILL)  # in the middle of a run: each one sleeps 0.4 s
        stored_at_kill = len(store.runs())
        assert stored_at_kill < 16
        # Another worker of the same machine (its replacement, as after a reboot) joins after
        # the campaign started: it gets the rest, the runs being pinned to the machine, not to
        # the worker (tests/test_dask_runs_per_machine.py: another machine's worker would not).
        late = cluster.worker("late")
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        keys = run_keys(store)
        assert len(keys) == 16 and len({k[:3] for k in keys}) == 16  # nothing lost, nothing twice
        assert {k[3] for k in keys} == {"ok"}
        assert "16 ok" in out, out
        assert {r.machine for r in store.runs()} == {"loop"}
        assert late.poll() is None and first.poll() is not None  # the late worker made the rest
        store.close()
    finally:
        cluster.close()


@pytest.mark.slow
def test_a_run_only_a_tagged_worker_offers_goes_to_it(tmp_path):
    cfg = project(tmp_path, requires={"alpha": ["hyperfine", "os-linux"]}, runs=2)
    cluster = Cluster(tmp_path)
    try:
        cluster.worker("plain")
        cluster.env["REGBENCH_MACHINE"] = "tagged"
        cluster.worker("tagged", "benchmark=1 hyperfine=1 os-linux=1")
        client = distributed.Client(cluster.address, timeout=30, set_as_default=False)
        client.wait_for_workers(2, timeout=60)
        client.close()
        db = tmp_path / "results.db"
        rc = main(["--config", str(cfg), "--store", str(db), "run", "--seed", "1", "--executor", "dask",
                   "--scheduler", cluster.address])
        assert rc == 0
        store = Store(db)
        machines = {(r.benchmark, r.machine) for r in store.runs()}
        assert {m for b, m in machines if b == "alpha"} == {"tagged"}
        # Each machine makes the runs of the benchmarks it can make: alpha's 2 on the tagged
        # one, the 3 others' 2 on each.
        assert collections.Counter(r.machine for r in store.runs()) == {"tagged": 8, "loop": 6}  # "plain" is machine "loop"
        store.close()
    finally:
        cluster.close()


def test_requires_must_be_a_list_of_distinct_tags(tmp_path):
    from regbench.errors import ConfigError

    for bad in ('"hyperfine"', '["a", "a"]', '["bad tag"]', "[1]"):
        cfg = tmp_path / "regbench.toml"
        cfg.write_text(f'[project]\nname = "x"\n\n[[benchmark]]\nname = "b"\ncommand = ["true"]\nrequires = {bad}\n')
        with pytest.raises(ConfigError, match=r"\[\[benchmark\]\].*`requires` must be a list of distinct tags"):
            load_config(cfg)
    cfg.write_text('[project]\nname = "x"\n\n[[benchmark]]\nname = "b"\ncommand = ["true"]\n'
                   'requires = ["hyperfine", "os-linux"]\n')
    assert load_config(cfg).benchmarks[0].requires == ("hyperfine", "os-linux")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_a_run_that_kills_every_worker_is_a_recorded_failure(tmp_path):
    """The benchmark kills the worker process that runs it (its grandparent: the worker starts a
    spawner, which starts the benchmark); the nanny restarts the worker, the scheduler gives the
    task to a worker again, and after `allowed-failures` deaths the run is recorded as failed."""
    import dask

    killer = ("import os; pid = os.getppid(); "
              "worker = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]); os.kill(worker, 9)")
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[project]\nname = "k"\n\n[defaults]\nruns = 1\niterations = 2\n\n'
                   f'[[benchmark]]\nname = "killer"\ncommand = {json.dumps([PY, "-c", killer])}\n\n'
                   f'[[benchmark]]\nname = "fine"\ncommand = {json.dumps([PY, "-c", "print(1); print(2)"])}\n',
                   encoding="utf-8")
    store = Store(tmp_path / "results.db")
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     resources={"benchmark": 1}, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        result = run_campaign(load_config(cfg), store, seed=1, executor=DaskExecutor(client=client, wait=0.5))
    runs = {r.benchmark: r for r in store.runs()}
    assert len(store.runs()) == 2 and runs["fine"].status == "ok"
    assert runs["killer"].status == "failed"
    assert "every worker that ran this run died" in (runs["killer"].stderr_tail or "")
    assert result.counts["failed"] == 1
    store.close()


def test_the_run_table_chooses_the_executor_and_the_scheduler(tmp_path, capsys, dask_connect_timeout_1s):
    """``[run] executor = "dask"`` and ``scheduler`` are the defaults of run, screen and detect;
    ``--executor local`` overrides them; a bad table is a one-line error naming the key."""
    from regbench.config import RunSettings, parse_config
    from regbench.errors import ConfigError

    assert parse_config({"run": {"executor": "dask", "scheduler": "tcp://h:8786"}}).run == RunSettings(
        executor="dask", scheduler="tcp://h:8786")
    for table, message in (({"executor": "ray"}, r"\[run\] `executor` must be one of local, dask, got 'ray'"),
                           ({"scheduler": "tcp://h:8786"}, r"\[run\] `scheduler` is for executor = \"dask\""),
                           ({"executor": "dask", "scheduler": 8786}, r"\[run\] `scheduler` must be the Dask")):
        with pytest.raises(ConfigError, match=r"^regbench.toml: " + message):
            parse_config({"run": table})
    cfg = project(tmp_path, runs=1)
    cfg.write_text(cfg.read_text() + '\n[run]\nexecutor = "dask"\nscheduler = "tcp://127.0.0.1:9"\n')
    db = tmp_path / "results.db"
    rc = main(["--config", str(cfg), "--store", str(db), "run"])
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err, err
    assert not db.exists()
    # --executor local overrides the table: the campaign runs here.
    assert main(["--config", str(cfg), "--store", str(db), "run", "--executor", "local"]) == 0
    assert {k[3] for k in run_keys(Store(db))} == {"ok"}
    capsys.readouterr()
    rc = main(["--config", str(cfg), "--store", str(db), "detect"])  # analysed on the table's scheduler
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err, err
    assert main(["--config", str(cfg), "--store", str(db), "detect", "--executor", "local", "--dry-run"]) == 0
