"""Concurrent writers, with real processes: two `regbench` commands (the real CLI, each its own
Python process) started together on one store, a process holding the store's write lock, and
campaigns killed with ``kill -9``.

Every test here takes the store from the ``store_url`` fixture: a SQLite file by default, a fresh
PostgreSQL schema with ``pytest -m store --store-url URL`` (tests/conftest.py), as CI runs it.
``benchmarks/bench_concurrency.py`` runs the same scenarios by the hundred and counts what is lost.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.detect import Change
from regbench.detect.alerts import record_alerts
from regbench.errors import StoreError
from regbench.model import RunRecord, VersionInfo
from regbench.run import scratch
from regbench.store import Store
from regbench.store import schema as t
from regbench.store import tx
from regbench.store.alerts import deliveries, list_alerts

from proctools import wait_dead

PY = sys.executable
GOLDEN = Path(__file__).parent / "golden" / "adapters"
T0 = datetime(2024, 5, 1, 12, 0, 0)


# ------------------------------------------------------------------------------------ helpers
def regbench(*args: str) -> list[str]:
    return [PY, "-m", "regbench.cli.main", *args]


def start(argv: list[str], *, cwd: Path, log: Path, env: dict | None = None) -> subprocess.Popen:
    """Start one process, its output (both streams) to ``log``."""
    with open(log, "w") as out:
        return subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)


def together(*argvs: list[str], cwd: Path, env: dict | None = None, timeout: float = 180) -> list[tuple[int, str]]:
    """Start every command at once, wait for all: (exit status, output) of each."""
    logs = [cwd / f"together-{k}.log" for k in range(len(argvs))]
    procs = [start(argv, cwd=cwd, log=log, env=env) for argv, log in zip(argvs, logs, strict=True)]
    for p in procs:
        p.wait(timeout=timeout)
    return [(p.returncode, log.read_text()) for p, log in zip(procs, logs, strict=True)]


def assert_all_ok(results: list[tuple[int, str]]) -> None:
    for status, output in results:
        assert status == 0, output


def canonical_csv(path: Path, benchmark: str, *, versions=3, runs=3, iterations=5, seed=0) -> Path:
    rng = np.random.default_rng(seed)
    lines = ["benchmark,version,run,iteration,value"]
    lines += [f"{benchmark},v{v},{r},{i},{1 + rng.normal(0, 0.01)!r}"
              for v in range(versions) for r in range(runs) for i in range(iterations)]
    path.write_text("\n".join(lines) + "\n")
    return path


def project(folder: Path, *, benchmarks=("a", "b"), runs=3, script: str | None = None) -> Path:
    """A regbench.toml of command benchmarks printing ``REGBENCH_ITERATIONS`` samples (or
    running ``script``)."""
    folder.mkdir(parents=True, exist_ok=True)
    if script is not None:
        (folder / "bench.py").write_text(textwrap.dedent(script))
        command = [PY, str(folder / "bench.py")]
    else:
        command = [PY, "-c", "import os\nfor _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0)"]
    text = f"[project]\nname = \"p\"\n\n[defaults]\nruns = {runs}\niterations = 3\nwarmup = 0\n"
    for name in benchmarks:
        text += f"\n[[benchmark]]\nname = \"{name}\"\ncommand = {json.dumps(command)}\n"
    (folder / "regbench.toml").write_text(text)
    return folder


def run_keys(store: Store) -> list[tuple[str, str, str, int]]:
    """(benchmark, config, machine, run index) of every stored run, sorted."""
    return sorted((r.benchmark, r.config, r.machine, r.run_index) for r in store.runs())


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


# ----------------------------------------------------------------------------- the scenarios
@pytest.mark.parametrize("attempt", range(3))
def test_two_processes_creating_one_store_both_store_their_runs(store_url, tmp_path, attempt):
    # The schema's creation races: before, the second process died on "table alembic_version
    # already exists" (20 pairs of 20) and its data was not stored.
    a = canonical_csv(tmp_path / "a.csv", "fa", seed=attempt)
    b = canonical_csv(tmp_path / "b.csv", "fb", seed=attempt + 10)
    assert_all_ok(together(regbench("--store", store_url, "import", str(a)),
                           regbench("--store", store_url, "import", str(b)), cwd=tmp_path))
    with Store(store_url, create=False) as store:
        assert store.schema_revision() == t.SCHEMA_REVISION
        assert [b.name for b in store.benchmarks()] == ["fa", "fb"]
        assert len(store.runs()) == 2 * 3 * 3


def test_two_campaigns_on_a_new_machine_store_every_run(store_url, tmp_path):
    # New machine, version and benchmark rows race: before, "UNIQUE constraint failed:
    # machine.name", or a run dropped as a duplicate it was not (the campaign exiting 0).
    folder = project(tmp_path / "p")
    results = together(regbench("--store", store_url, "run", "--machine", "m1", "--configuration", "A"),
                       regbench("--store", store_url, "run", "--machine", "m1", "--configuration", "B"), cwd=folder)
    assert_all_ok(results)
    assert all("6 runs stored" in out for _, out in results)
    with Store(store_url, create=False) as store:
        assert run_keys(store) == sorted((b, c, "m1", r) for b in "ab" for c in "AB" for r in range(3))
        assert [c.status for c in store.campaigns()] == ["finished", "finished"]
        assert [m.name for m in _machines(store)] == ["m1"]


@pytest.mark.parametrize("attempt", range(3))
def test_two_imports_of_one_version_get_distinct_run_indices(store_url, tmp_path, attempt):
    # Before, each import numbered its runs after those it saw stored, both saw none, and one
    # failed with "runs already in the store would be duplicated" (7 pairs of 12).
    file = GOLDEN / "hyperfine" / "two-commands.json"
    args = ("import", str(file), "--format", "hyperfine", "--version", "v1")
    assert_all_ok(together(regbench("--store", store_url, *args), regbench("--store", store_url, *args), cwd=tmp_path))
    with Store(store_url, create=False) as store:
        runs = store.runs()
        per_benchmark = {}
        for r in runs:
            per_benchmark.setdefault(r.benchmark, []).append(r.run_index)
        n = len(runs) // (2 * len(per_benchmark))  # runs of one benchmark in one file
        assert n >= 1 and all(sorted(ix) == list(range(2 * n)) for ix in per_benchmark.values())


def test_a_campaign_and_an_import_at_once(store_url, tmp_path):
    folder = project(tmp_path / "p", benchmarks=("a",))
    csv = canonical_csv(tmp_path / "c.csv", "imported")
    assert_all_ok(together(regbench("--store", store_url, "run", "--machine", "m1"),
                           regbench("--store", store_url, "import", str(csv)), cwd=folder))
    with Store(store_url, create=False) as store:
        keys = run_keys(store)
        assert [k for k in keys if k[0] == "a"] == [("a", "default", "m1", r) for r in range(3)]
        assert len([k for k in keys if k[0] == "imported"]) == 9
        assert sorted(m.name for m in _machines(store)) == ["local", "m1"]


def test_two_notifies_at_once_tell_every_alert_once_in_the_file_sinks(store_url, tmp_path):
    # Before, each JSON sink call replaced the file: 14 of 300 alerts the outbox had recorded as
    # sent were left in it.  Now each call adds its alerts to the file, under the folder's lock.
    n = 60
    with Store(store_url) as store:
        versions = [f"v{k}" for k in range(2 * n + 2)]
        store.add_runs([RunRecord("fft", v, 0, np.array([1.0])) for v in versions],
                       versions=[VersionInfo(v, timestamp=T0 + timedelta(days=k)) for k, v in enumerate(versions)])
        record_alerts(store, [Change("fft", "default", "local", versions[2 * k + 1], versions[2 * k], 0.1, 0.05,
                                     0.15, "regression", "ci-overlap") for k in range(n)], now=T0)
        ids = sorted(a.id for a in list_alerts(store))
    (tmp_path / "regbench.toml").write_text(
        '[[notify]]\ntype = "json"\npath = "out/alerts.json"\n\n'
        '[[notify]]\ntype = "markdown"\npath = "out/alerts.md"\n')
    args = ("--store", store_url, "alerts", "notify")
    assert_all_ok(together(regbench(*args), regbench(*args), cwd=tmp_path))
    told = [a["id"] for a in json.loads((tmp_path / "out" / "alerts.json").read_text())["alerts"]]
    assert sorted(told) == ids  # every alert, once
    rows = [line for line in (tmp_path / "out" / "alerts.md").read_text().splitlines() if line.startswith("| #")]
    assert sorted(int(r.split(" | ")[0][3:]) for r in rows) == ids
    with Store(store_url, create=False) as store:
        sent = [(d.alert_id, d.sink) for d in deliveries(store) if d.state == "sent"]
    assert sorted(sent) == sorted((i, s) for i in ids for s in ("json", "markdown"))


HOLDER = """\
import sys, time
from pathlib import Path
import sqlalchemy as sa
from regbench.store import Store

with Store(sys.argv[1]) as store:
    def hold(conn):
        if conn.dialect.name == "postgresql":  # SQLite's BEGIN IMMEDIATE already holds the store
            conn.execute(sa.text("LOCK TABLE campaign, run IN EXCLUSIVE MODE"))
        Path(sys.argv[2]).write_text("locked")
        time.sleep(float(sys.argv[3]))
    store.write(hold)
"""

#: Run 0 tells the test it started, then ends only once another process holds the store's lock.
WAITING_BENCHMARK = """\
import os, time
from pathlib import Path
here = Path(__file__).parent
if os.environ["REGBENCH_RUN_INDEX"] == "0":
    (here / "started").write_text("")
    while not (here / "locked").exists():
        time.sleep(0.01)
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(1.0)
"""


@pytest.mark.slow
def test_a_write_lock_held_for_8_seconds_delays_a_campaign_and_loses_no_run(store_url, tmp_path):
    # Before, the run that finished while another writer held the lock died with "database is
    # locked" after SQLite's 5 s busy timeout, and the campaign with it.
    folder = project(tmp_path / "p", benchmarks=("a",), runs=2, script=WAITING_BENCHMARK)
    Store(store_url).close()
    campaign = start(regbench("--store", store_url, "run", "--machine", "m1"), cwd=folder, log=tmp_path / "run.log")
    wait_for(folder / "started")
    (tmp_path / "holder.py").write_text(HOLDER)
    began = time.monotonic()
    holder = start([PY, str(tmp_path / "holder.py"), store_url, str(folder / "locked"), "8"], cwd=tmp_path,
                   log=tmp_path / "holder.log")
    assert campaign.wait(timeout=120) == 0, (tmp_path / "run.log").read_text()
    assert holder.wait(timeout=60) == 0, (tmp_path / "holder.log").read_text()
    assert time.monotonic() - began > 7  # the finished run waited for the lock
    with Store(store_url, create=False) as store:
        assert run_keys(store) == [("a", "default", "m1", 0), ("a", "default", "m1", 1)]
        assert [c.status for c in store.campaigns()] == ["finished"]


#: Run 1 writes its pid and sleeps (the test kills its campaign then); run 1 of a later campaign
#: finds the mark and ends at once.
SLEEPING_BENCHMARK = """\
import os, time
from pathlib import Path
here = Path(__file__).parent
if os.environ["REGBENCH_RUN_INDEX"] == "1" and not (here / "slept").exists():
    (here / "slept").write_text("")
    (here / "pid.tmp").write_text(str(os.getpid()))
    os.replace(here / "pid.tmp", here / "pid")
    time.sleep(120)
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(1.0)
"""


def test_a_campaign_killed_with_kill_9_is_marked_interrupted_and_its_folders_removed(store_url, tmp_path):
    folder = project(tmp_path / "p", benchmarks=("a",), runs=2, script=SLEEPING_BENCHMARK)
    tmp = tmp_path / "tmp"  # the campaigns' temporary folder, to see exactly what they leave
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    argv = regbench("--store", store_url, "run", "--machine", "m1")
    campaign = start(argv, cwd=folder, log=tmp_path / "run1.log", env=env)
    wait_for(folder / "pid")
    benchmark = int((folder / "pid").read_text())
    os.kill(campaign.pid, signal.SIGKILL)
    campaign.wait(timeout=30)
    assert wait_dead(benchmark)  # the run in flight dies with regbench
    # The machine's measuring lock stays (regbench.run.exclusive: a lock file is never removed,
    # the kernel dropped the lock with the process); what the killed run used is left to remove.
    measuring_locks = {"regbench-measuring.lock"}
    left = [p.name for p in tmp.iterdir() if p.name not in measuring_locks]
    assert len(left) == 1 and left[0].startswith("regbench-run-") and left[0].endswith(".owned")
    with Store(store_url, create=False) as store:
        assert [c.status for c in store.campaigns()] == ["running"]
    # The same command again: it resumes, and tells the dead campaign from a live one.
    again = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [p.name for p in tmp.iterdir()] == ["regbench-measuring.lock"]
    with Store(store_url, create=False) as store:
        first, second = store.campaigns()
        assert (first.status, second.status) == ("interrupted", "finished")
        assert first.finished_at is not None and first.finished_at >= first.started_at
        assert run_keys(store) == [("a", "default", "m1", 0), ("a", "default", "m1", 1)]
        assert [r.campaign_id for r in store.runs()] == [first.id, second.id]
    assert list(tmp_path.glob("results.db-campaign-*")) == []  # the SQLite leases, gone with their campaigns


def test_a_live_campaign_is_not_taken_for_a_dead_one(store_url):
    with Store(store_url) as one, Store(store_url) as two:
        live = one.start_campaign(seed=1, machine="m", fingerprint={}, command="live")
        dead = two.start_campaign(seed=2, machine="m", fingerprint={}, command="dead")
        two.close()  # its process "dies": the lease goes with it
        third = one.start_campaign(seed=3, machine="m", fingerprint={}, command="third")
        status = {c.id: c.status for c in one.campaigns()}
        assert status == {live: "running", dead: "interrupted", third: "running"}
        assert one.reap_campaigns() == []
        one.finish_campaign(live, "finished")
        one.finish_campaign(third, "finished")
        assert one.reap_campaigns() == [] and [c.status for c in one.campaigns()] == \
            ["finished", "interrupted", "finished"]


def test_a_thread_never_takes_the_id_of_a_row_another_thread_has_not_committed(store_url):
    """One store, two threads (a server's requests): the first creates a benchmark and a machine
    and has not committed; the second stores a run of them.  It must wait for the rows, not take
    their ids from the store's cache: on PostgreSQL its run's foreign keys would fail (and, with
    more writers, the transactions deadlock), which is how two servers once lost a submission."""
    if sa.make_url(store_url).get_backend_name() != "postgresql":
        pytest.skip("SQLite has one writer at a time: no thread sees another's uncommitted rows")
    import threading

    with Store(store_url) as store:
        failures: list[str] = []
        sa.event.listen(store.engine, "handle_error", lambda ctx: failures.append(type(ctx.original_exception).__name__))
        inserted, go = threading.Event(), threading.Event()

        def first(conn) -> None:
            store.ensure_benchmark(conn, "fresh")
            store.ensure_machine(conn, "fresh-box")
            inserted.set()
            assert go.wait(60)

        outcome: dict[str, object] = {}

        def second() -> None:
            try:
                outcome["id"] = store.add_run(RunRecord("fresh", "v1", 0, np.array([1.0, 2.0]), machine="fresh-box"))
            except Exception as exc:  # reported below
                outcome["error"] = exc

        writer = threading.Thread(target=store.write, args=(first,))
        writer.start()
        assert inserted.wait(60)
        reader = threading.Thread(target=second)
        reader.start()
        # Only this test's database has waiters from this store (other tests' schemas share it,
        # but no other test runs at the same time in this process).
        waiting = sa.text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                          "AND datname = current_database()")
        watcher = sa.create_engine(store_url)
        seen = False
        try:
            deadline = time.monotonic() + 60
            while reader.is_alive() and time.monotonic() < deadline and not seen:
                with watcher.connect() as conn:
                    seen = bool(conn.execute(waiting).scalar_one())  # the second thread waits for the rows
        finally:
            watcher.dispose()
        go.set()
        writer.join(60)
        reader.join(60)
        assert seen and "error" not in outcome and failures == []
        assert [(r.benchmark, r.machine) for r in store.runs()] == [("fresh", "fresh-box")]


def test_ids_a_transaction_creates_are_shared_with_other_threads_only_once_it_commits(tmp_path):
    """The bookkeeping under the test above, on SQLite: while one thread's transaction has created
    a benchmark, another thread of the same store does not know its id; after the commit it does;
    and a transaction rolled back leaves no id behind, in its own thread either."""
    import threading

    with Store(tmp_path / "ids.db") as store:
        inserted, go = threading.Event(), threading.Event()
        made: list[int] = []

        def first(conn) -> None:
            made.append(store.ensure_benchmark(conn, "fresh"))
            inserted.set()
            assert go.wait(60)

        writer = threading.Thread(target=store.write, args=(first,))
        writer.start()
        assert inserted.wait(60)
        assert store._cached(("benchmark", "fresh")) is None  # this thread: not committed yet
        go.set()
        writer.join(60)
        assert store._cached(("benchmark", "fresh")) == made[0]

        def failing(conn) -> None:
            store.ensure_benchmark(conn, "rolled-back")
            assert store._cached(("benchmark", "rolled-back")) is not None  # its own thread sees it
            raise RuntimeError("stop")

        with pytest.raises(RuntimeError):
            store.write(failing)
        assert store._cached(("benchmark", "rolled-back")) is None
        assert store._cached(("benchmark", "fresh")) == made[0]  # committed ids stay
        assert [b.name for b in store.benchmarks()] == ["fresh"]


# ------------------------------------------------------------------------ waiting for the lock
def locked(code: int = 5) -> sa.exc.OperationalError:
    orig = sqlite3.OperationalError("database is locked")
    orig.sqlite_errorcode = code  # type: ignore[attr-defined]
    return sa.exc.OperationalError("INSERT ...", None, orig)


def test_a_write_runs_again_while_another_writer_holds_the_store(monkeypatch):
    monkeypatch.setattr(tx.time, "sleep", lambda s: None)
    calls = []

    def attempt():
        calls.append(1)
        if len(calls) < 4:
            raise locked()
        return "done"

    assert tx.retrying(attempt, patience=60) == "done" and len(calls) == 4

    def conflict():
        calls.append(1)
        raise sa.exc.IntegrityError("INSERT ...", None, Exception("UNIQUE constraint failed: run.benchmark_id"))

    with pytest.raises(sa.exc.IntegrityError):  # not another writer in the way: raised at once
        tx.retrying(conflict)
    assert len(calls) == 5
    assert not tx.retryable(locked(code=1)) and tx.retryable(locked(code=5 | 0x100))  # SQLITE_BUSY_RECOVERY


def test_a_write_gives_up_after_its_patience_with_a_one_line_error():
    def attempt():
        raise locked()

    with pytest.raises(StoreError, match=r"^the store X stayed locked by another writer for 0 s: database is locked$"):
        tx.retrying(attempt, patience=0.2, what="the store X")


# ------------------------------------------------------------------------ owned scratch folders
def test_scratch_folders_of_dead_processes_are_removed_and_live_ones_kept(tmp_path):
    live = scratch.make_owned_dir("regbench-run-", tmp_path)
    (live / "stdout").write_text("x")
    dead = scratch.make_owned_dir("regbench-ramdisk-", tmp_path)
    scratch.release(dead)  # as the kernel does when its process is killed
    other = tmp_path / "regbench-pg.x"  # not ours
    other.mkdir()
    with pytest.raises(ValueError, match="prefix"):
        scratch.make_owned_dir("mine-", tmp_path)
    assert scratch.remove_stale([tmp_path, None]) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
    with scratch.owned_dir("regbench-run-", tmp_path) as third:
        assert third.is_dir() and scratch.remove_stale([tmp_path]) == []
    assert not third.exists()
    scratch.remove_tree(live)
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name]


def test_a_folder_not_marked_as_owned_is_left_alone(tmp_path):
    # Made by a regbench from before owned folders, which may be running now: `regbench clean`'s
    # business (once it is old), not a campaign's.
    legacy = tmp_path / "regbench-ramdisk-old"
    legacy.mkdir()
    assert scratch.remove_stale([tmp_path]) == [] and legacy.is_dir()


def test_removing_a_folder_already_gone_leaves_the_folder_around_it_alone(tmp_path):
    # Two campaigns removing the same dead folder: the second finds it gone.  The folder it was
    # in (/tmp, /dev/shm) keeps its permissions.
    base = tmp_path / "base"
    base.mkdir()
    base.chmod(0o1777)
    scratch.remove_tree(base / "regbench-run-gone")
    assert base.stat().st_mode & 0o7777 == 0o1777
    inner = base / "regbench-run-x" / "ro"
    inner.mkdir(parents=True)
    (inner / "f").write_text("x")
    inner.chmod(0o500)  # a read-only folder a benchmark left: still removed
    scratch.remove_tree(base / "regbench-run-x")
    assert list(base.iterdir()) == [] and base.stat().st_mode & 0o7777 == 0o1777


def test_regbench_clean_keeps_an_old_folder_that_a_live_run_holds(tmp_path):
    from regbench.run.clean import clean

    live = scratch.make_owned_dir("regbench-run-", tmp_path)  # a run of three days, say
    dead = scratch.make_owned_dir("regbench-run-", tmp_path)
    scratch.release(dead)
    days_ago = time.time() - 3 * 86400
    for d in (live, dead):
        os.utime(d, (days_ago, days_ago))
    assert [x.path for x in clean(repo=None, cache_dirs=[], temp_dirs=[tmp_path]).leftovers] == [dead]
    assert live.is_dir() and not dead.exists()
    scratch.remove_tree(live)


def test_a_scratch_folder_being_made_is_left_alone_for_a_minute(tmp_path):
    young = tmp_path / (scratch.NEW_PREFIX + "abc")
    young.mkdir()
    old = tmp_path / (scratch.NEW_PREFIX + "def")
    old.mkdir()
    long_ago = time.time() - 2 * scratch.NEW_GRACE
    os.utime(old, (long_ago, long_ago))
    assert scratch.remove_stale([tmp_path]) == [old]
    assert [p.name for p in tmp_path.iterdir()] == [young.name]


def _machines(store: Store):
    with store.engine.connect() as conn:
        return conn.execute(sa.select(t.machine).order_by(t.machine.c.id)).all()
