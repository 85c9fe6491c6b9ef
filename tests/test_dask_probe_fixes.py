"""Dask executor defects found by probing (docs/dask.md s.2, s.3 and s.5), each on a real
scheduler and real workers on loopback:

- a run queued behind one that kills its worker was recorded as failed with it;
- a cluster whose workers offer no ``benchmark`` had every run stored as failed ("no worker is
  connected" while one was), so that the same command, once the cluster was fixed, ran nothing;
  and a screen resumed over runs that all failed exited 0;
- ``--scheduler`` naming a port where something other than a Dask scheduler listens gave a
  traceback (a service that speaks first), hung (one that waits for its client) or stalled in
  the client's finalizer (a malformed address);
- dask.md said the ``[run]`` keys ``executor`` and ``scheduler`` did not exist.
"""

from __future__ import annotations

import http.server
import json
import re
import socketserver
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config, parse_config
from regbench.errors import ExitStatus
from regbench.run.core import RunRequest, Trial
from regbench.store import Store

distributed = pytest.importorskip("distributed")

from regbench.run.dask_executor import DaskExecutor

PY = sys.executable
DOCS = Path(__file__).resolve().parent.parent / "docs"

# The benchmark kills the worker process that runs it: its grandparent (the worker starts a
# spawner, which starts the benchmark), as an OOM kill of the worker would.
KILLER = ("import os; pid = os.getppid(); "
          "worker = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]); os.kill(worker, 9)")


def screen_project(tmp_path: Path, command: list[str]) -> Path:
    """Two two-level options, one benchmark, one iteration per run: a 4-run full design."""
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[project]\nname = "p"\n\n[defaults]\nruns = 1\niterations = 2\nwarmup = 0\n\n'
                   f'[[benchmark]]\nname = "bench"\ncommand = {json.dumps(command)}\n\n'
                   '[[screen.option]]\nname = "x"\nlevels = [1, 2]\nenv = "X"\n\n'
                   '[[screen.option]]\nname = "y"\nlevels = [1, 2]\nenv = "Y"\n', encoding="utf-8")
    return cfg


def screen(cfg: Path, *args: str) -> int:
    return main(["--config", str(cfg), "--store", str(cfg.parent / "results.db"), "screen", "--design", "full",
                 "--runs", "1", "--seed", "1", *args])


PRINTS = [PY, "-c", "import os; [print(0.001 * int(os.environ['X'])) for _ in range(2)]"]


# --------------------------------------------------------------------- 1: deaths of queued runs

@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_runs_queued_behind_one_that_kills_its_worker_run_again_and_only_it_fails(tmp_path):
    """One worker (restarted by its nanny), the killer first in the order and two healthy runs
    queued behind it: the scheduler counts each death against all three, and with
    allowed-failures 1 gives up on all three at the second; only the killer ran in those deaths."""
    import dask

    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[project]\nname = "k"\n\n[defaults]\nruns = 1\niterations = 2\n\n'
                   f'[[benchmark]]\nname = "killer"\ncommand = {json.dumps([PY, "-c", KILLER])}\n\n'
                   f'[[benchmark]]\nname = "fine"\ncommand = {json.dumps([PY, "-c", "print(1); print(2)"])}\n',
                   encoding="utf-8")
    config = load_config(cfg)
    killer, fine = config.benchmark("killer"), config.benchmark("fine")
    requests = [RunRequest(killer, Trial("killer", "v", 0), tmp_path, PY),
                RunRequest(fine, Trial("fine", "v", 0), tmp_path, PY),
                RunRequest(fine, Trial("fine", "v", 1), tmp_path, PY)]
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     resources={"benchmark": 1}, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        executor = DaskExecutor(client=client, wait=5)
        outcomes = {(r.trial.benchmark, r.trial.run_index): o for r, o in executor.map(requests)}
        executor.close()
    assert len(outcomes) == 3
    for k in (0, 1):  # never started on a dying worker: run again, with success
        assert outcomes[("fine", k)].status == "ok", outcomes[("fine", k)].stderr_tail
        assert outcomes[("fine", k)].samples.tolist() == [1.0, 2.0]
    assert outcomes[("killer", 0)].status == "failed"
    assert "every worker that ran this run died (2 workers" in (outcomes[("killer", 0)].stderr_tail or "")


# ------------------------------------------------------------ 2: no worker offering `benchmark`

@pytest.fixture
def dask_wait_1s(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's executor waits 30 s for a worker offering what runs need; 1 s here."""
    monkeypatch.setitem(DaskExecutor.__init__.__kwdefaults__, "wait", 1.0)


def loopback_cluster(**resources: float) -> distributed.LocalCluster:
    """A scheduler and one worker (threads of this process) on loopback TCP, as separate
    machines would be reached; the worker offers ``resources``."""
    return distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                    host="127.0.0.1", dashboard_address=":0", resources=resources or None)


def test_workers_without_the_benchmark_resource_are_a_one_line_error_and_store_nothing(tmp_path, capsys,
                                                                                        dask_wait_1s):
    cfg = screen_project(tmp_path, PRINTS)
    with loopback_cluster() as cluster:  # the worker forgot --resources "benchmark=1"
        (address, info), = cluster.scheduler_info["workers"].items()
        rc = screen(cfg, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    captured = capsys.readouterr()
    assert rc == ExitStatus.ERROR, captured.out + captured.err
    err = captured.err.strip()
    assert err.count("\n") == 0, err
    # It names the worker connected and what it offers (no longer "no worker is connected").
    assert (f"error: no Dask worker offers benchmark (waited 1 s; 1 worker connected: {info['name']} at {address} "
            'offers no resources): start the worker of each benchmark machine with --nthreads 1 --resources '
            '"benchmark=1"') in err
    db = tmp_path / "results.db"
    assert not db.exists() or Store(db).runs() == []  # no run stored as failed
    # Once a worker offers it, the same command makes every run (none is stored as done).
    with loopback_cluster(benchmark=1) as cluster:
        rc = screen(cfg, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "4 ok stored; 0 already stored" in out
    assert {r.status for r in Store(db).runs()} == {"ok"}


def test_a_screen_whose_stored_runs_all_failed_does_not_exit_0_when_resumed(tmp_path, capsys):
    cfg = screen_project(tmp_path, [PY, "-c", "import sys; sys.exit(3)"])
    assert screen(cfg) == ExitStatus.FAILED
    assert "4 failed stored" in capsys.readouterr().out
    # Resumed: nothing to run, and no successful run to estimate from.
    assert screen(cfg) == ExitStatus.FAILED
    out = capsys.readouterr().out
    assert "no run stored; 4 already stored" in out and "worktree: no effects (no successful run)" in out


# ----------------------------------------------------- 3: --scheduler names something else


class _Banner(socketserver.BaseRequestHandler):
    def handle(self) -> None:  # as sshd: speaks first, then waits for the client
        self.request.sendall(b"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\r\n")
        while self.request.recv(4096):
            pass


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up mid-request


@pytest.fixture
def not_a_scheduler(request: pytest.FixtureRequest) -> Iterator[str]:
    """The address of a TCP service that is not Dask: an sshd-like banner, an HTTP server."""
    import threading

    kind = request.param
    if kind == "banner":
        server = _Server(("127.0.0.1", 0), _Banner)
    else:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
        server.daemon_threads = True
        server.handle_error = lambda *a: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


# The CLI as a process (a client's finalizer speaks at exit), connecting for 2 s instead of 10.
CLI = ("import sys; from regbench.run import dask_executor as d; "
       "d.DaskExecutor.__init__.__kwdefaults__['timeout'] = 2.0; "
       "from regbench.cli.main import main; sys.exit(main(sys.argv[1:]))")


def cli_screen(cfg: Path, scheduler: str) -> tuple[int, str, float]:
    start = time.monotonic()
    try:
        done = subprocess.run([PY, "-c", CLI, "--config", str(cfg), "--store", str(cfg.parent / "results.db"),
                               "screen", "--runs", "1", "--executor", "dask", "--scheduler", scheduler],
                              capture_output=True, text=True, timeout=60, cwd=cfg.parent, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"--scheduler {scheduler}: still running after 60 s")
    return done.returncode, done.stderr, time.monotonic() - start


@pytest.mark.parametrize("not_a_scheduler", ["banner", "http"], indirect=True)
def test_a_scheduler_address_where_another_service_listens_is_a_one_line_error(tmp_path, not_a_scheduler):
    cfg = screen_project(tmp_path, PRINTS)
    rc, err, elapsed = cli_screen(cfg, not_a_scheduler)
    assert rc == ExitStatus.ERROR, err
    assert re.fullmatch(rf"error: cannot reach the Dask scheduler at {re.escape(not_a_scheduler)}: [^\n]+\n", err), err
    assert elapsed < 30
    assert not (tmp_path / "results.db").exists()


def test_a_malformed_scheduler_address_is_a_one_line_error_without_a_stall(tmp_path):
    cfg = screen_project(tmp_path, PRINTS)
    rc, err, elapsed = cli_screen(cfg, "localhost")
    assert rc == ExitStatus.ERROR, err
    assert err == "error: cannot reach the Dask scheduler at localhost: missing port number in address 'localhost'\n"
    assert elapsed < 15  # not the client's 20 s finalizer
    assert not (tmp_path / "results.db").exists()


def test_a_worker_address_is_not_taken_for_the_scheduler(tmp_path, capsys, dask_connect_timeout_1s):
    cfg = screen_project(tmp_path, PRINTS)
    with loopback_cluster(benchmark=1) as cluster:
        (worker, _), = cluster.scheduler_info["workers"].items()
        rc = screen(cfg, "--executor", "dask", "--scheduler", worker)
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR
    assert (f"cannot reach the Dask scheduler at {worker}: what answers there is a Dask server but not the "
            "scheduler") in err


# ------------------------------------------------------------------------ 4: dask.md s.5


def test_dask_md_does_not_say_the_run_table_keys_are_missing():
    text = (DOCS / "dask.md").read_text(encoding="utf-8")
    # The [run] table dask.md shows is one regbench reads ...
    block = re.search(r"```toml\n(\[run\]\n.*?)```", text, re.DOTALL)
    assert block is not None
    import tomllib

    settings = parse_config(tomllib.loads(block.group(1))).run
    assert settings is not None and settings.executor == "dask" and settings.scheduler
    # ... so the list of what is not done yet does not name its keys.
    not_done = text.split("## 5. Not done yet", 1)[1]
    assert "executor" not in not_done and "`scheduler`" not in not_done
