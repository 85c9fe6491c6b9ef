"""Many writers on one store at once: campaigns, imports, detections and triage, as a shared
PostgreSQL store sees them (several machines' campaigns, server workers importing, a detection
job, people triaging alerts).

Every command is the real CLI in its own process.  The test takes its store from the
``store_url`` fixture (a SQLite file; a fresh PostgreSQL schema with ``pytest -m store
--store-url URL``, as CI runs it).  ``benchmarks/bench_concurrency.py --crowds N`` runs the same
crowd N times and counts what is lost, duplicated or failed.

A deadlock is provoked on purpose too: two write transactions taking two rows in opposite orders.
PostgreSQL aborts one of them (SQLSTATE 40P01); :func:`regbench.store.tx.write` runs it again, so
both writes are done and nobody sees the error.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.detect import Change
from regbench.detect.alerts import record_alerts
from regbench.model import RunRecord
from regbench.store import Store
from regbench.store import schema as t
from regbench.store import tx
from regbench.store.alerts import alert_history, list_alerts

PY = sys.executable
HYPERFINE = Path(__file__).parent / "golden" / "adapters" / "hyperfine" / "two-commands.json"
T0 = datetime(2024, 5, 1, 12, 0, 0)
#: What a writer must never show the user: a transaction the store should have run again.
SURFACED = ("deadlock", "could not serialize", "database is locked", "concurrent writers?", "Traceback")


def regbench(*args: str) -> list[str]:
    return [PY, "-m", "regbench.cli.main", *args]


def project(folder: Path) -> Path:
    """Two command benchmarks of two runs each, printing ``REGBENCH_ITERATIONS`` samples."""
    folder.mkdir(parents=True)
    command = [PY, "-c", "import os\nfor _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0)"]
    text = '[project]\nname = "p"\n\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
    for name in ("a", "b"):
        text += f'\n[[benchmark]]\nname = "{name}"\ncommand = {json.dumps(command)}\n'
    (folder / "regbench.toml").write_text(text)
    return folder


def canonical_csv(path: Path, benchmark: str, *, seed: int) -> Path:
    """Versions w0..w3 (shared by every file: their rows are created by whichever import is
    first) on machine ``m9``, three runs of five iterations each."""
    rng = np.random.default_rng(seed)
    lines = ["benchmark,version,run,iteration,value,machine"]
    lines += [f"{benchmark},w{v},{r},{i},{1 + rng.normal(0, 0.01)!r},m9"
              for v in range(4) for r in range(3) for i in range(5)]
    path.write_text("\n".join(lines) + "\n")
    return path


def stepped_store(url: str) -> None:
    """``step``: a 25% regression at v3 (six runs per version) that ci-overlap finds; ``old``:
    an alert waiting for triage."""
    rng = np.random.default_rng(1)
    levels = [1.0, 1.0, 1.0, 1.25, 1.25, 1.25]
    records = [RunRecord("step", f"v{k}", r, lv * (1 + rng.normal(0, 0.003)) * (1 + rng.normal(0, 0.01, 20)))
               for k, lv in enumerate(levels) for r in range(6)]
    records += [RunRecord("old", f"v{k}", 0, np.array([1.0])) for k in range(2)]
    with Store(url) as store:
        store.add_runs(records)
        record_alerts(store, [Change("old", "default", "local", "v1", "v0", 0.2, 0.1, 0.3, "regression",
                                     "ci-overlap")], now=T0)


def crowd(url: str, folder: Path) -> list[tuple[list[str], subprocess.Popen, Path]]:
    """Start the crowd: two campaigns, four imports (two of one version), two detections, a triage."""
    proj = project(folder / "p")
    csvs = [canonical_csv(folder / f"i{k}.csv", f"i{k}", seed=k) for k in range(2)]
    argvs = [
        *(regbench("--store", url, "run", "--machine", "m1", "--configuration", c) for c in "AB"),
        *(regbench("--store", url, "import", str(csv)) for csv in csvs),
        *[regbench("--store", url, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v9")] * 2,
        *[regbench("--store", url, "detect", "--method", "auto", "--benchmark", "step",
                   "--incremental")] * 2,
        regbench("--store", url, "alerts", "ack", "1", "--by", "Ana", "--reason", "looking"),
    ]
    started = []
    for k, argv in enumerate(argvs):
        log = folder / f"writer-{k}.log"
        with open(log, "w") as out:
            started.append((argv, subprocess.Popen(argv, cwd=proj, stdout=out, stderr=subprocess.STDOUT), log))
    return started


def test_a_crowd_of_writers_loses_and_duplicates_nothing(store_url, tmp_path):
    stepped_store(store_url)
    started = crowd(store_url, tmp_path)
    for argv, proc, log in started:
        proc.wait(timeout=300)
        output = log.read_text()
        assert proc.returncode == 0, f"{' '.join(argv[3:])}:\n{output}"
        assert not any(s in output for s in SURFACED), output

    with Store(store_url, create=False) as store:
        keys = Counter((r.benchmark, r.version, r.config, r.machine, r.run_index) for r in store.runs())
        assert max(keys.values()) == 1
        by_bench = Counter(k[0] for k in keys)
        # Campaigns: 2 benchmarks x 2 configurations x 2 runs, each exactly once.
        assert sorted((b, c, m, r) for b, _, c, m, r in keys if b in "ab") == sorted(
            (b, c, "m1", r) for b in "ab" for c in "AB" for r in range(2))
        # Imports of other files: every run under its own key, the shared versions created once.
        for k in range(2):
            assert sorted(key[1:] for key in keys if key[0] == f"i{k}") == sorted(
                (f"w{v}", "default", "m9", r) for v in range(4) for r in range(3))
        assert [v.name for v in store.versions()].count("w0") == 1
        # Two imports of one version: distinct run indices 0..2n-1 per benchmark, none twice.
        hyper = {k for k in keys if k[1] == "v9"}
        n = len(hyper) // (2 * len({k[0] for k in hyper}))
        assert n >= 1 and all(sorted(k[4] for k in hyper if k[0] == b) == list(range(2 * n))
                              for b in {k[0] for k in hyper})
        assert by_bench["step"] == 36 and by_bench["old"] == 2
        # Two detections: one alert for the step, told once; one saved state per method.
        step = [a for a in list_alerts(store) if a.benchmark == "step"]
        assert [(a.version, a.previous, a.kind) for a in step] == [("v3", "v2", "regression")]
        assert [e.status for e in alert_history(store, step[0].id)] == ["new"]
        with store.engine.connect() as conn:
            states = conn.execute(sa.select(t.detect_state.c.method)).scalars().all()
        assert states == ["auto"]
        # The triage of the older alert, beside them all.
        assert [(e.status, e.who) for e in alert_history(store, 1)] == [("new", "regbench"), ("acknowledged", "Ana")]


def test_a_deadlock_is_run_again_not_shown(store_url):
    """Two writers taking two rows in opposite orders: PostgreSQL aborts one (40P01), which
    :func:`tx.write` runs again; both writes end up done.  (SQLite's ``BEGIN IMMEDIATE`` takes
    the whole store first: the second writer waits, and there is no deadlock to provoke.)"""
    with Store(store_url) as store:
        store.add_runs([RunRecord(name, "v0", 0, np.array([1.0])) for name in ("x", "y")])
        if store.engine.dialect.name != "postgresql":
            pytest.skip("SQLite serializes writers with BEGIN IMMEDIATE: no deadlock to provoke")
        both_hold_one = threading.Barrier(2, timeout=30)
        attempts: Counter = Counter()
        errors: list[BaseException] = []

        def writer(first: str, second: str) -> None:
            def work(conn: sa.Connection) -> None:
                attempts[first] += 1
                for name in (first, second):
                    conn.execute(sa.update(t.benchmark).where(t.benchmark.c.name == name)
                                 .values(unit=t.benchmark.c.unit + "+"))
                    if name == first and attempts[first] == 1:
                        both_hold_one.wait()  # each holds its first row: the second update deadlocks

            try:
                tx.write(store.engine, work, patience=60)
            except BaseException as exc:  # reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=pair) for pair in (("x", "y"), ("y", "x"))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        assert errors == []
        assert sorted(attempts.values()) == [1, 2]  # one of them was the deadlock's victim, run again
        with store.engine.connect() as conn:
            units = dict(conn.execute(sa.select(t.benchmark.c.name, t.benchmark.c.unit)).all())
        assert units == {"x": "s++", "y": "s++"}  # each row updated once by each writer, none lost


def test_postgresql_errors_worth_a_retry_are_retried():
    """The SQLSTATEs :func:`tx.retryable` runs again, on psycopg's own exception classes."""
    psycopg = pytest.importorskip("psycopg")

    def wrapped(exc: BaseException) -> sa.exc.DBAPIError:
        return sa.exc.OperationalError("UPDATE ...", None, exc)

    assert tx.retryable(wrapped(psycopg.errors.DeadlockDetected("deadlock detected")))
    assert tx.retryable(wrapped(psycopg.errors.SerializationFailure("could not serialize access")))
    assert not tx.retryable(wrapped(psycopg.errors.UndefinedTable("no such table")))
    assert not tx.retryable(sa.exc.IntegrityError("INSERT ...", None, psycopg.errors.UniqueViolation("dup")))


def test_a_dozen_imports_of_one_version_at_once_all_store_their_runs(store_url):
    """Writers numbering their runs after the stored ones (``add_runs(append=True)``, a tool
    import of one version) take turns: on PostgreSQL each read the same highest index, and with
    a dozen at once one of them could fail every attempt ("cannot store the runs (concurrent
    writers?)", 2 commands of 36 in a measurement before :func:`tx.lock_appends`)."""
    n = 12
    Store(store_url).close()
    stores = [Store(store_url) for _ in range(n)]
    ready = threading.Barrier(n, timeout=60)
    errors: list[BaseException] = []

    def importer(store: Store, k: int) -> None:
        ready.wait()
        try:
            store.add_runs([RunRecord("x", "v1", r, np.array([float(k)])) for r in range(2)], append=True)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=importer, args=(s, k)) for k, s in enumerate(stores)]
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
    finally:
        for s in stores:
            s.close()
    assert errors == []
    with Store(store_url, create=False) as store:
        runs = store.runs()
    assert sorted(r.run_index for r in runs) == list(range(2 * n))
