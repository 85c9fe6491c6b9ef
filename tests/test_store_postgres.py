"""The same store operations on a real PostgreSQL server give what they give on SQLite.

Runs when ``REGBENCH_TEST_POSTGRES_URL`` names a server (``.ci/run`` starts one with
``.ci/postgres.sh``); skipped with that reason otherwise.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from regbench.analysis import summarize
from regbench.detect.driver import detect_changes
from regbench.errors import StoreError
from regbench.ingest import import_file
from regbench.model import RunRecord
from regbench.store import Store, schema

from storetools import export_csv

PG_URL = os.environ.get("REGBENCH_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not PG_URL, reason="REGBENCH_TEST_POSTGRES_URL is not set (no PostgreSQL server)")


@pytest.fixture
def pg_store(pg_url):  # pg_url: a schema of its own (tests/conftest.py)
    store = Store(pg_url)
    yield store
    store.close()


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(5)
    lines = ["benchmark,version,run,iteration,value,timestamp,unit,direction"]
    for bench in ("fft", "ping,tcp"):
        for v in range(6):
            level = 1.0 if v < 3 else 1.25
            for r in range(5):
                mu = level * (1 + rng.normal(0, 0.005))
                for i in range(20):
                    name = '"ping,tcp"' if "," in bench else bench
                    lines.append(f"{name},v{v},{r},{i},{mu * (1 + rng.normal(0, 0.01))!r},"
                                 f"2024-05-0{v + 1}T12:00:00+02:00,s,lower")
    p = tmp_path / "m.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_schema_is_migrated_to_the_current_revision(pg_store, pg_url):
    assert pg_store.schema_revision() == schema.SCHEMA_REVISION
    with Store(pg_url) as again:  # reopening is a no-op
        assert again.schema_revision() == schema.SCHEMA_REVISION


def test_import_export_summary_and_detection_agree_with_sqlite(pg_store, sqlite_store, csv_file):
    for store in (pg_store, sqlite_store):
        import_file(store, str(csv_file))
    assert export_csv(pg_store) == export_csv(sqlite_store)
    assert export_csv(pg_store).count("\n") == 1 + 2 * 6 * 5 * 20
    pg_series, lite_series = pg_store.load_series(), sqlite_store.load_series()
    assert [s.benchmark for s in pg_series] == [s.benchmark for s in lite_series] == ["fft", "ping,tcp"]
    for a, b in zip(pg_series, lite_series, strict=True):
        assert [v.name for v in a.versions] == [v.name for v in b.versions]
        for ra, rb in zip(a.runs, b.runs, strict=True):
            assert all(np.array_equal(x, y) for x, y in zip(ra, rb, strict=True))
    pg_sum = [(s.benchmark, s.version, s.plain.mean, s.plain.half_width) for s in summarize(pg_store)]
    lite_sum = [(s.benchmark, s.version, s.plain.mean, s.plain.half_width) for s in summarize(sqlite_store)]
    assert pg_sum == lite_sum
    changes = detect_changes(pg_store, method="ci-overlap", fdr=None).changes
    assert [(c.benchmark, c.version, c.previous) for c in changes] == [("fft", "v3", "v2"), ("ping,tcp", "v3", "v2")]
    assert [c.to_json() for c in changes] == [c.to_json() for c in detect_changes(sqlite_store, method="ci-overlap",
                                                                                   fdr=None).changes]


def test_a_failing_batch_leaves_nothing_behind(pg_store):
    good = RunRecord("b", "v1", 0, np.array([1.0, 2.0]))
    pg_store.add_runs([good])
    with pytest.raises(StoreError, match="duplicated"):
        pg_store.add_runs([RunRecord("b", "v2", 0, np.array([1.0])), good])
    assert [(r.version, r.run_index) for r in pg_store.runs()] == [("v1", 0)]
    pg_store.add_run(RunRecord("b", "v2", 0, np.array([3.0])))
    assert [v.name for v in pg_store.versions()] == ["v1", "v2"]


def test_the_run_mark_waits_for_runs_being_inserted(pg_store):
    """PostgreSQL draws a run's id when the row is inserted, not when it is committed: a mark read
    while another transaction holds an uncommitted run must not be below that run, or the run
    would be neither after the mark nor seen by the pass that took it (it waits for the commit)."""
    import threading

    import sqlalchemy as sa

    pg_store.add_runs([RunRecord(benchmark="fft", version="v0", run_index=0, samples=np.ones(3))])
    first = pg_store.last_run_id()
    ids = {k: v for k, v in ((r.name, r.id) for r in pg_store.versions())}
    marks: list[int] = []
    with pg_store.engine.connect() as conn:
        tx = conn.begin()
        row = conn.execute(sa.select(schema.run).where(schema.run.c.id == first)).mappings().one()
        inserted = conn.execute(schema.run.insert().values(
            {**{k: v for k, v in row.items() if k != "id"}, "run_index": 1, "version_id": ids["v0"]})
            .returning(schema.run.c.id)).scalar_one()
        reader = threading.Thread(target=lambda: marks.append(pg_store.last_run_id()))
        reader.start()
        reader.join(timeout=2)
        assert reader.is_alive() and not marks  # waiting for the inserting transaction
        tx.commit()
    reader.join(timeout=30)
    assert marks == [inserted] and inserted > first
    assert [(k, v) for k, v, _ in pg_store.runs_since(first)] == [(("fft", "default", pg_store.machine_names()[0]), "v0")]


def _hold_an_insert(store, conn):
    """Insert a run in ``conn``'s open transaction (uncommitted), as a long import does."""
    import sqlalchemy as sa

    row = conn.execute(sa.select(schema.run).order_by(schema.run.c.id.desc()).limit(1)).mappings().one()
    return conn.execute(schema.run.insert().values({**{k: v for k, v in row.items() if k != "id"},
                                                    "run_index": row["run_index"] + 100})
                        .returning(schema.run.c.id)).scalar_one()


def test_reading_the_run_mark_never_holds_back_other_writers(pg_store):
    """While a long transaction inserts runs, the mark is not read, but it does not queue for the
    table's lock either: a queued SHARE lock would make every later insert wait behind it."""
    import threading

    pg_store.add_runs([RunRecord(benchmark="fft", version="v0", run_index=0, samples=np.ones(3))])
    pg_store.run_mark_wait = 60.0
    marks: list[int] = []
    with pg_store.engine.connect() as conn:
        tx = conn.begin()
        held = _hold_an_insert(pg_store, conn)
        reader = threading.Thread(target=lambda: marks.append(pg_store.last_run_id()))
        reader.start()
        writer = threading.Thread(target=lambda: pg_store.add_runs(
            [RunRecord(benchmark="fft", version="v0", run_index=1, samples=np.ones(3))]))
        writer.start()
        writer.join(timeout=30)
        assert not writer.is_alive() and reader.is_alive() and not marks  # stored; the mark still waits
        tx.commit()
    reader.join(timeout=60)
    assert marks and marks[0] >= held


def test_the_run_mark_is_0_when_the_table_stays_busy_or_may_only_be_read(pg_store, pg_url):
    """0 is the safe mark (every run counts as late): what a pass that could not read the mark
    while nothing was inserting, or may not lock the table at all, saves."""
    import uuid

    import sqlalchemy as sa

    pg_store.add_runs([RunRecord(benchmark="fft", version="v0", run_index=0, samples=np.ones(3))])
    assert pg_store.last_run_id() > 0
    pg_store.run_mark_wait = 0.2
    with pg_store.engine.connect() as conn:
        tx = conn.begin()
        _hold_an_insert(pg_store, conn)
        assert pg_store.last_run_id() == 0
        tx.rollback()
    role = f"regbench_ro_{uuid.uuid4().hex[:8]}"
    url = sa.make_url(pg_url)
    admin = sa.create_engine(url)
    search_path = url.query["options"].split("=", 1)[1]
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE ROLE "{role}" LOGIN'))
            conn.execute(sa.text(f'GRANT USAGE ON SCHEMA "{search_path}" TO "{role}"'))
            conn.execute(sa.text(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{search_path}" TO "{role}"'))
        with Store(url.set(username=role).render_as_string(hide_password=False), create=False) as reader:
            assert reader.last_run_id() == 0
            assert [s.benchmark for s in reader.load_series()] == ["fft"]  # and it reads
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP OWNED BY "{role}"'))
            conn.execute(sa.text(f'DROP ROLE "{role}"'))
        admin.dispose()
