"""The results store: open and migrate, write runs, read series in history order.

Every test opens its own store and closes it: the tests of files, paths and URLs on SQLite (in
``tmp_path`` or in memory), the others through the ``store`` fixture (``conftest.py``), which
``pytest --store-url URL`` moves to a PostgreSQL server.
"""

from __future__ import annotations

import sqlite3
import zlib
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.errors import DuplicateRunError, NotFoundError, StoreError
from regbench.model import BenchmarkInfo, BuildInfo, CampaignInfo, RunInfo, RunRecord, StoredRun, VersionInfo
from regbench.store import DEFAULT_LOCATION, ENV_VAR, Store, decode_samples, resolve_url, schema

# Floats that a lossy encoding would get wrong: signed zero, subnormals, extremes, and values
# whose shortest repr has 17 significant digits.
TRICKY = np.array([1.0, -0.0, 0.0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308,
                   -1.7976931348623157e308, 0.1, 1 / 3, np.pi * 1e-300, -123456789.12345679, 2.0**-1074 * 3])


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "results.db"


def run(benchmark="b", version="v1", run_index=0, samples=(1.0, 2.0, 3.0), **kw) -> RunRecord:
    return RunRecord(benchmark=benchmark, version=version, run_index=run_index,
                     samples=np.asarray(samples, dtype=float), **kw)


def n_runs(db: Path | Store) -> int:
    """Rows in the ``run`` table: of a SQLite file (read with sqlite3, not regbench), or of a store."""
    if isinstance(db, Store):
        with db.engine.connect() as conn:
            return conn.execute(sa.text("SELECT count(*) FROM run")).scalar_one()
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM run").fetchone()[0]
    finally:
        con.close()


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype="<f8"), np.asarray(b, dtype="<f8")
    return a.shape == b.shape and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------------------- open / migrate
def test_new_store_is_at_schema_revision_0001(store_url):
    with Store(store_url) as s:
        assert s.schema_revision() == schema.SCHEMA_REVISION
        tables = set(sa.inspect(s.engine).get_table_names())
    assert {"benchmark", "version", "config", "machine", "campaign", "build", "run", "alembic_version"} <= tables
    engine = sa.create_engine(store_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).all() == [(schema.SCHEMA_REVISION,)]
    finally:
        engine.dispose()


def test_reopening_a_current_store_does_not_run_alembic(store_url, monkeypatch):
    import alembic.command

    calls = []
    real_upgrade = alembic.command.upgrade

    def counting_upgrade(*args, **kwargs):
        calls.append(args)
        return real_upgrade(*args, **kwargs)

    monkeypatch.setattr(alembic.command, "upgrade", counting_upgrade)
    with Store(store_url) as s:
        s.add_run(run())
    assert len(calls) == 1  # a new store is migrated once
    with Store(store_url) as s:
        assert s.schema_revision() == schema.SCHEMA_REVISION
        assert len(s.runs()) == 1
    with Store(store_url, create=False) as s:
        assert len(s.runs()) == 1
    assert len(calls) == 1


def test_unknown_schema_revision_is_a_store_error(store_url):
    Store(store_url).close()
    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
        with pytest.raises(StoreError, match=r"schema revision 9999, newer than this regbench knows"):
            Store(store_url)
        with engine.connect() as conn:  # left as it was: no downgrade, no half migration
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).all() == [("9999",)]
    finally:
        engine.dispose()


def test_store_is_created_under_missing_directories(tmp_path):
    path = tmp_path / "a" / "b" / "c" / "results.db"
    with Store(path) as s:
        s.add_run(run())
    assert path.is_file()
    assert n_runs(path) == 1


def test_open_without_create_on_a_missing_file_is_a_store_error(tmp_path):
    path = tmp_path / "missing" / "results.db"
    with pytest.raises(StoreError, match=r"^no results store at .*missing/results\.db \(run `regbench run`"):
        Store(path, create=False)
    assert not path.exists()
    assert not path.parent.exists()


def test_open_without_create_on_an_existing_store(store_url):
    with Store(store_url) as s:
        s.add_run(run())
    with Store(store_url, create=False) as s:
        assert [r.benchmark for r in s.runs()] == ["b"]


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path):
    # e.g. `regbench --store results.csv summary`: the CSV given where the store was meant.
    path = tmp_path / "results.csv"
    path.write_text("benchmark,version,run,iteration,value\n" + "b,v1,0,0,1.5\n" * 100)
    with pytest.raises(StoreError, match=r"^cannot open store sqlite:///.*results\.csv: "):
        Store(path)


# ------------------------------------------------------------------------------- locations / URLs
def test_store_at_a_sqlite_url(tmp_path):
    path = tmp_path / "sub" / "r.db"
    url = f"sqlite:///{path}"
    with Store(url) as s:
        assert s.url == url
        s.add_run(run(samples=[4.0, 5.0]))
    assert path.is_file()
    with Store(path, create=False) as s:  # the same file, by path
        (series,) = s.load_series("b")
        assert same_bits(series.runs[0][0], [4.0, 5.0])


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_store_in_memory(url):
    with Store(url) as s:
        assert s.schema_revision() == schema.SCHEMA_REVISION
        s.add_run(run())
        assert len(s.load_series()) == 1


def test_resolve_url_explicit_path_is_absolute_and_beats_the_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "from-env.db"))
    assert resolve_url("rel/x.db") == f"sqlite:///{tmp_path.resolve() / 'rel' / 'x.db'}"
    assert resolve_url(tmp_path / "p.db") == f"sqlite:///{tmp_path.resolve() / 'p.db'}"


def test_resolve_url_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_VAR, "envdir/e.db")
    assert resolve_url() == f"sqlite:///{tmp_path.resolve() / 'envdir' / 'e.db'}"
    monkeypatch.setenv(ENV_VAR, "postgresql+psycopg://u@h/db")
    assert resolve_url() == "postgresql+psycopg://u@h/db"


def test_resolve_url_default_location(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert DEFAULT_LOCATION == ".regbench/results.db"
    assert resolve_url() == f"sqlite:///{tmp_path.resolve() / '.regbench' / 'results.db'}"
    # An empty variable counts as unset.
    monkeypatch.setenv(ENV_VAR, "")
    assert resolve_url() == f"sqlite:///{tmp_path.resolve() / '.regbench' / 'results.db'}"


def test_resolve_url_passes_urls_through_and_expands_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_url("sqlite:////abs/x.db") == "sqlite:////abs/x.db"
    assert resolve_url("postgresql://user@host:5432/bench") == "postgresql://user@host:5432/bench"
    assert resolve_url("~/s.db") == f"sqlite:///{tmp_path.resolve() / 's.db'}"


def test_store_opened_from_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env" / "results.db"))
    with Store() as s:
        s.add_run(run())
    assert n_runs(tmp_path / "env" / "results.db") == 1
    assert not (tmp_path / ".regbench").exists()


# --------------------------------------------------------------------------------- runs and series
def test_add_run_load_series_round_trip_is_bit_exact(store):
    store.add_run(run(samples=TRICKY, warmup=0), unit="ns", direction="higher")
    (s,) = store.load_series("b")
    assert (s.benchmark, s.config, s.machine, s.unit, s.direction) == ("b", "default", "local", "ns", "higher")
    assert [v.name for v in s.versions] == ["v1"]
    assert len(s.runs[0]) == 1
    assert s.runs[0][0].dtype == np.float64
    assert same_bits(s.runs[0][0], TRICKY)
    assert s.failed == [0]
    assert s.warmup == [0]


def test_load_series_removes_warmup_and_raw_runs_keep_it(store):
    samples = np.arange(10, dtype=float) + 0.5
    store.add_run(run(samples=samples, warmup=3, first_iteration=0))
    store.add_run(run(run_index=1, samples=samples * 2, warmup=3))
    (s,) = store.load_series()
    assert len(s.runs[0]) == 2
    assert same_bits(s.runs[0][0], samples[3:])
    assert same_bits(s.runs[0][1], samples[3:] * 2)
    assert s.warmup == [3]
    raw = list(store.iter_raw_runs())
    assert len(raw) == 2
    assert same_bits(raw[0].samples, samples)  # nothing thrown away
    assert [(r.run_index, r.warmup, r.n_samples) for r in store.runs()] == [(0, 3, 10), (1, 3, 10)]


def test_load_series_groups_interleaved_runs_by_series_and_version(store):
    # Runs added out of order across two benchmarks, two configurations and two versions, with
    # failed runs between good ones, warm-ups that differ run to run, and one run stored
    # compressed (as older stores may hold): every series gets its own runs, in run order.
    rng = np.random.default_rng(4)
    expected: dict[tuple[str, str, str], list[np.ndarray]] = {}
    records = []
    for r in (2, 0, 1):
        for b in ("y", "x"):
            for cfg in ("c2", "c1"):
                for v in ("v2", "v1"):
                    samples = rng.normal(10, 1, 6)
                    status = "failed" if (b, cfg, v, r) == ("x", "c1", "v2", 0) else "ok"
                    warmup = (1, 3, 0)[r]  # the largest on a run in the middle, neither first nor last
                    records.append(run(benchmark=b, version=v, run_index=r, samples=samples if status == "ok" else [],
                                       config=cfg, warmup=warmup, status=status))
                    if status == "ok":
                        expected[(b, cfg, v)] = [*expected.get((b, cfg, v), []), (r, samples[warmup:])]
    for rec in records:
        store.add_run(rec)
    with store.engine.begin() as conn:  # one run as a compressed blob
        run_id = conn.execute(sa.select(schema.run.c.id).where(schema.run.c.run_index == 1).limit(1)).scalar_one()
        blob = conn.execute(sa.select(schema.run.c.samples).where(schema.run.c.id == run_id)).scalar_one()
        conn.execute(schema.run.update().where(schema.run.c.id == run_id).values(
            samples=zlib.compress(blob), encoding="f8z"))
    series = store.load_series()
    assert [(s.benchmark, s.config) for s in series] == [("x", "c1"), ("x", "c2"), ("y", "c1"), ("y", "c2")]
    for s in series:
        assert [v.name for v in s.versions] == ["v2", "v1"]  # history order: the order versions were added
        for k, v in enumerate(s.versions):
            want = [a for _, a in sorted(expected[(s.benchmark, s.config, v.name)], key=lambda t: t[0])]
            assert len(s.runs[k]) == len(want)
            assert all(same_bits(got, w) for got, w in zip(s.runs[k], want, strict=True))
            assert s.warmup[k] == 3  # the largest of its runs'
            assert s.failed[k] == (1 if (s.benchmark, s.config, v.name) == ("x", "c1", "v2") else 0)


def test_failed_runs_are_counted_and_carry_no_samples(store):
    store.add_run(run(version="v1", run_index=0, samples=[1.0, 1.5]))
    store.add_run(run(version="v1", run_index=1, samples=[99.0, 99.0], status="crashed", exit_code=-11,
                      stderr_tail="Segmentation fault"))
    store.add_run(run(version="v1", run_index=2, samples=[], status="timeout"))
    store.add_run(run(version="v2", run_index=0, samples=[], status="failed", exit_code=2))
    store.add_run(run(version="v2", run_index=1, samples=[7.0], status="garbage"))
    (s,) = store.load_series("b")
    assert [v.name for v in s.versions] == ["v1", "v2"]
    assert s.failed == [2, 2]
    assert len(s.runs[0]) == 1 and same_bits(s.runs[0][0], [1.0, 1.5])
    assert s.runs[1] == []
    assert all(99.0 not in a and 7.0 not in a for runs in s.runs for a in runs)
    rows = {(r.version, r.run_index): r for r in store.runs()}
    assert rows[("v1", 1)].status == "crashed"
    assert rows[("v1", 1)].exit_code == -11
    assert rows[("v1", 1)].stderr_tail == "Segmentation fault"
    assert rows[("v2", 0)].status == "failed"


def test_failed_runs_are_read_through_their_index_in_stored_order(tmp_path):
    """``runs(failed=True)``, asked on every detection pass, reads the partial index of failed
    runs, not every run; its rows keep the stored order the other listings have."""
    with Store(tmp_path / "results.db") as store:
        for i, status in enumerate(["ok", "crashed", "ok", "timeout", "failed", "ok"]):
            store.add_run(run(benchmark="ba"[i % 2], version=f"v{5 - i}", run_index=i,
                              samples=[1.0] if status == "ok" else [], status=status))
        statements: list[tuple[str, object]] = []

        def seen(conn, cursor, statement, parameters, context, executemany):
            statements.append((statement, parameters))

        sa.event.listen(store.engine, "before_cursor_execute", seen)
        try:
            failed = store.runs(failed=True)
        finally:
            sa.event.remove(store.engine, "before_cursor_execute", seen)
        assert [(r.status, r.run_index) for r in failed] == [("crashed", 1), ("timeout", 3), ("failed", 4)]
        assert [r.id for r in failed] == sorted(r.id for r in failed)
        ((statement, parameters),) = [(q, p) for q, p in statements if "status" in q]
        with store.engine.connect() as conn:
            plan = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
    assert any("ix_run_failed" in row[-1] for row in plan), plan


def test_load_series_filters_and_unknown_names(store):
    store.add_run(run(benchmark="a", version="v1"))
    store.add_run(run(benchmark="a", version="v2"))
    store.add_run(run(benchmark="b", version="v1", config="fast", machine="m2"))
    assert [(s.benchmark, s.config, s.machine) for s in store.load_series()] == [
        ("a", "default", "local"), ("b", "fast", "m2")]
    assert [v.name for v in store.load_series("a", versions=["v2"])[0].versions] == ["v2"]
    assert store.load_series(config="fast")[0].benchmark == "b"
    assert store.load_series(machine="m2")[0].benchmark == "b"
    with pytest.raises(NotFoundError, match=r"^no benchmark named 'zz' in the store$"):
        store.load_series("zz")
    with pytest.raises(NotFoundError, match=r"^no version named 'v9' in the store$"):
        store.load_series(versions=["v1", "v9"])
    with pytest.raises(NotFoundError, match=r"^no configuration named 'slow' in the store$"):
        store.load_series(config="slow")
    with pytest.raises(NotFoundError, match=r"^no machine named 'm9' in the store$"):
        store.load_series(machine="m9")


# ------------------------------------------------------------------------------- version history
def names(versions) -> list[str]:
    return [v.name for v in versions]


def test_timestamps_order_versions_not_insertion(store):
    t0 = datetime(2024, 1, 1)
    for k, (name, days) in enumerate([("c", 30), ("a", 10), ("b", 20)]):
        store.add_run(run(version=name, run_index=0, samples=[float(k)]),
                      version_info=VersionInfo(name, timestamp=t0 + timedelta(days=days)))
    assert names(store.versions()) == ["a", "b", "c"]
    assert names(store.load_series("b")[0].versions) == ["a", "b", "c"]


def test_timezones_are_compared_in_utc(store):
    # 02:00 at +02:00 is 00:00 UTC: earlier than 01:00 UTC although its wall clock is later.
    store.add_run(run(version="late"), version_info=VersionInfo("late", timestamp=datetime(2024, 1, 1, 1, tzinfo=UTC)))
    store.add_run(run(version="early"), version_info=VersionInfo(
        "early", timestamp=datetime(2024, 1, 1, 2, tzinfo=timezone(timedelta(hours=2)))))
    assert names(store.versions()) == ["early", "late"]
    assert store.versions()[0].timestamp == datetime(2024, 1, 1, 0, 0)


def test_without_timestamps_first_appearance_orders_versions(store):
    for name in ["v10", "v9", "v2", "v1"]:  # neither alphabetical nor numeric order
        store.add_run(run(version=name))
    store.add_run(run(version="v9", run_index=1))  # a later run does not move its version
    assert names(store.versions()) == ["v10", "v9", "v2", "v1"]
    assert names(store.load_series()[0].versions) == ["v10", "v9", "v2", "v1"]


def test_equal_timestamps_keep_first_appearance(store):
    ts = datetime(2024, 5, 1, 12)
    for name in ["zeta", "alpha", "mid"]:
        store.add_run(run(version=name), version_info=VersionInfo(name, timestamp=ts))
    store.add_run(run(version="earliest"), version_info=VersionInfo("earliest", timestamp=datetime(2024, 4, 1)))
    assert names(store.versions()) == ["earliest", "zeta", "alpha", "mid"]
    assert names(store.load_series()[0].versions) == ["earliest", "zeta", "alpha", "mid"]


def test_add_runs_creates_versions_in_the_order_given(store):
    recs = [run(version="b2"), run(version="a1")]
    store.add_runs(recs, versions=[VersionInfo("c3"), VersionInfo("a1"), VersionInfo("b2")])
    assert names(store.versions()) == ["c3", "a1", "b2"]
    assert names(store.load_series()[0].versions) == ["a1", "b2"]


# ---------------------------------------------------------------- unique key and all-or-nothing
def test_a_run_inserted_twice_violates_the_unique_key(store):
    store.add_run(run(samples=[1.0]))
    with pytest.raises(DuplicateRunError):
        store.add_run(run(samples=[2.0]))
    assert n_runs(store) == 1
    (s,) = store.load_series()
    assert same_bits(s.runs[0][0], [1.0])
    # Another run index, config or machine is another key.
    store.add_run(run(run_index=1))
    store.add_run(run(config="other"))
    store.add_run(run(machine="other"))
    assert n_runs(store) == 4


def test_add_run_duplicate_is_a_store_error(store):
    # A RegbenchError (printed on one line by the CLI), not sqlalchemy's IntegrityError.
    store.add_run(run())
    with pytest.raises(StoreError, match=r"^run 0 of 'b' at version 'v1' \(default, local\) is already in the store$"):
        store.add_run(run())
    store.add_run(run(run_index=1))  # the store is usable afterwards
    assert len(store.runs()) == 2


def test_add_runs_duplicate_with_the_store_is_all_or_nothing(store):
    store.add_run(run(benchmark="old", version="v0", run_index=0, samples=[1.0]))
    before = n_runs(store)
    # More than one insert chunk (2000 rows), new names, and the clash in the last record.
    batch = [run(benchmark="new", version=f"n{k % 7}", run_index=k, samples=[float(k)]) for k in range(2500)]
    batch.append(run(benchmark="old", version="v0", run_index=0, samples=[2.0]))
    with pytest.raises(StoreError, match=r"^runs already in the store would be duplicated \("):
        store.add_runs(batch, versions=[VersionInfo("n_first")], benchmarks={"new": {"unit": "ms"}})
    assert n_runs(store) == before
    assert [b.name for b in store.benchmarks()] == ["old"]
    assert names(store.versions()) == ["v0"]
    # The same names can be stored afterwards (no stale cached ids).
    assert store.add_runs(batch[:-1], versions=[VersionInfo("n_first")], benchmarks={"new": {"unit": "ms"}}) == 2500
    assert n_runs(store) == before + 2500
    assert names(store.versions()) == ["v0", "n_first"] + [f"n{k}" for k in range(7)]
    new = store.load_series("new")[0]
    assert new.unit == "ms"
    assert sum(len(r) for r in new.runs) == 2500


def test_add_runs_duplicate_inside_one_batch_stores_nothing(store):
    batch = [run(version="x", run_index=0), run(version="y", run_index=0), run(version="x", run_index=0)]
    with pytest.raises(StoreError, match=r"would be duplicated"):
        store.add_runs(batch)
    assert n_runs(store) == 0
    assert store.versions() == []
    assert store.add_runs(batch[:2]) == 2
    assert names(store.versions()) == ["x", "y"]


def test_add_run_after_a_failed_add_runs_reuses_no_stale_ids(store):
    store.add_run(run(version="v0"))
    with pytest.raises(StoreError):
        store.add_runs([run(benchmark="fresh", version="fresh-v"), run(version="v0")])
    # A stale cached id of the rolled-back "fresh"/"fresh-v" rows would break the foreign key.
    store.add_run(run(benchmark="fresh", version="fresh-v"))
    (s,) = store.load_series("fresh")
    assert names(s.versions) == ["fresh-v"]


def test_existing_run_keys(store):
    store.add_run(run(benchmark="a", version="v1", run_index=0))
    store.add_run(run(benchmark="a", version="v1", run_index=3, status="crashed", samples=[]))
    store.add_run(run(benchmark="a", version="v2", run_index=0, config="c2"))
    store.add_run(run(benchmark="b", version="v1", run_index=1, machine="m2"))
    assert store.existing_run_keys(config="default", machine="local") == {("a", "v1", 0), ("a", "v1", 3)}
    assert store.existing_run_keys(config="c2", machine="local") == {("a", "v2", 0)}
    assert store.existing_run_keys(config="default", machine="m2") == {("b", "v1", 1)}
    assert store.existing_run_keys(config="c2", machine="m2") == set()
    assert store.existing_run_keys(config="nope", machine="local") == set()


def test_a_run_with_another_unit_does_not_relabel_the_benchmark(store):
    store.add_run(RunRecord("b", "v1", 0, np.array([1.0, 2.0])), unit="ms", direction="lower")
    with pytest.raises(StoreError, match="benchmark 'b' is stored with unit 'ms', not 's'"):
        store.add_run(RunRecord("b", "v2", 0, np.array([1.0])), unit="s", direction="lower")
    with pytest.raises(StoreError, match="stored with direction 'lower', not 'higher'"):
        store.add_run(RunRecord("b", "v2", 0, np.array([1.0])), unit="ms", direction="higher")
    assert [(b.unit, b.direction) for b in store.benchmarks()] == [("ms", "lower")]
    assert [r.version for r in store.runs()] == ["v1"]
    store.add_run(RunRecord("b", "v2", 0, np.array([1.0])), unit="ms", direction="lower")
    assert [r.version for r in store.runs()] == ["v1", "v2"]


def test_add_run_twice_is_a_duplicate_run_error(store):
    store.add_run(RunRecord("b", "v1", 0, np.array([1.0])))
    with pytest.raises(DuplicateRunError, match="run 0 of 'b' at version 'v1' .* is already in the store"):
        store.add_run(RunRecord("b", "v1", 0, np.array([2.0])))
    with store.engine.connect() as conn:
        blobs = [r for (r,) in conn.execute(sa.text("SELECT samples FROM run"))]
    assert [decode_samples(b, "f8").tolist() for b in blobs] == [[1.0]]


# ------------------------------------------------------------------------------------ records
def test_listings_are_typed_records(store):
    store.add_run(run(benchmark="sort", samples=[1.0]), unit="ns", direction="higher")
    (b,) = store.benchmarks()
    assert b == BenchmarkInfo(id=b.id, name="sort", unit="ns", direction="higher")
    cid = store.start_campaign(seed=3, machine="box", fingerprint={"cores": 2}, command="regbench run",
                               plan={"schedule": "x"})
    store.finish_campaign(cid, "finished")
    (c,) = store.campaigns()
    assert isinstance(c, CampaignInfo)
    assert (c.id, c.seed, c.machine, c.fingerprint, c.command, c.plan, c.status) == (
        cid, 3, "box", {"cores": 2}, "regbench run", {"schedule": "x"}, "finished")
    assert c.finished_at >= c.started_at
    store.record_build(VersionInfo("v2", commit="abc"), "k1", status="failed", exit_code=2, log_tail="oops",
                       duration=1.5)
    (bld,) = store.builds()
    assert isinstance(bld, BuildInfo)
    assert (bld.version, bld.build_key, bld.status, bld.exit_code, bld.log_tail, bld.duration) == (
        "v2", "k1", "failed", 2, "oops", 1.5)
    assert store.get_build("v2", "k1") == bld
    assert store.get_build("v2", "other") is None
    assert [v.commit for v in store.versions() if v.name == "v2"] == ["abc"]


def test_raw_runs_are_stored_runs_with_decoded_samples(store):
    store.add_run(run(samples=TRICKY, warmup=2, first_iteration=4, exit_code=0, duration=0.5),
                  version_info=VersionInfo("v1", timestamp=datetime(2024, 1, 1), timestamp_text="2024-01-01"),
                  unit="ms", direction="lower")
    store.add_run(run(run_index=1, samples=[], status="crashed", exit_code=-11, stderr_tail="boom"))
    (info, _) = store.runs()
    assert isinstance(info, RunInfo) and not isinstance(info, StoredRun)
    raw = store.raw_runs("b", "v1")
    assert [r.id for r in raw] == [r.id for r in store.iter_raw_runs()]  # the same records as export's
    ok, crashed = raw
    assert isinstance(ok, StoredRun)
    assert (ok.id, ok.run_index, ok.warmup, ok.first_iteration, ok.n_samples, ok.exit_code, ok.duration) == (
        info.id, 0, 2, 4, TRICKY.size, 0, 0.5)
    assert (ok.unit, ok.direction, ok.timestamp_text, ok.config, ok.machine) == ("ms", "lower", "2024-01-01",
                                                                                  "default", "local")
    assert same_bits(ok.samples, TRICKY)  # warm-up included, bit for bit
    assert (crashed.status, crashed.exit_code, crashed.stderr_tail, crashed.samples.size) == ("crashed", -11, "boom", 0)


def test_version_metadata_must_be_a_version_info_record(store):
    with pytest.raises(TypeError, match=r"^`versions` must be VersionInfo records, not a mapping$"):
        store.add_runs([run()], versions={"v1": {}})
    with pytest.raises(ValueError, match=r"^`version_info` describes version 'v2', not the run's version 'v1'$"):
        store.add_run(run(version="v1"), version_info=VersionInfo("v2"))
    assert store.runs() == [] and store.versions() == []


def test_many_new_versions_are_created_in_the_order_given(store):
    """add_runs creates its versions in a few statements; the order given is still first
    appearance, a stored version keeps what it has, and the first of two with one name counts."""
    store.add_run(RunRecord("b", "old", 0, np.array([1.0])))
    t0 = datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=2)))
    names = [f"v{k:04d}" for k in range(1200, 0, -1)]  # more than one batch of names; not name order
    versions = ([VersionInfo("old", commit="c" * 40)] + [VersionInfo(n) for n in names[:600]]
                + [VersionInfo(names[0], commit="d" * 40)]
                + [VersionInfo(n, timestamp=t0 if n == names[700] else None) for n in names[600:]])
    records = [RunRecord("b", n, 0, np.array([2.0])) for n in reversed(names)]
    assert store.add_runs(records, versions=versions) == len(names)
    stored = {v.name: v for v in store.versions()}
    assert stored["old"].commit is None
    assert stored[names[0]].commit is None
    assert stored[names[700]].timestamp == datetime(2024, 1, 1, 10)  # in UTC, naive
    untimed = [v.name for v in sorted(stored.values(), key=lambda v: v.id) if v.timestamp is None]
    assert untimed == ["old", *[n for n in names if n != names[700]]]


def test_a_password_in_the_store_url_is_never_shown():
    """`--store postgresql+psycopg://bench:SECRET@host/db` (or REGBENCH_STORE in a CI job): the
    password was printed in every error about the store and in `show`'s last line."""
    from regbench.errors import StoreError
    from regbench.store.db import shown_url

    url = "postgresql+psycopg://bench:s3cret-pw@127.0.0.1:1/results"
    assert shown_url(url) == "postgresql+psycopg://bench:***@127.0.0.1:1/results"
    assert shown_url("sqlite:////tmp/x/results.db") == "sqlite:////tmp/x/results.db"
    with pytest.raises(StoreError) as refused:
        Store(url, create=False, patience=0.1).close()
    assert "s3cret-pw" not in str(refused.value) and "bench:***@127.0.0.1:1/results" in str(refused.value)


def test_a_short_password_is_masked_only_where_a_message_quotes_it():
    """Review: every occurrence of the password was replaced, anywhere: with the password `o`,
    PostgreSQL's `connection failed` read `c***nnecti***n failed`; one equal to the user or
    database name masked those."""
    with pytest.raises(StoreError) as refused:  # a closed port: the driver's own message
        Store("postgresql+psycopg://bench:o@127.0.0.1:1/results", create=False, patience=0.1).close()
    assert 'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused' in str(
        refused.value)
    assert "bench:***@127.0.0.1:1/results" in str(refused.value)
    from regbench.store.db import masked_password

    # what psycopg says of a URL it cannot parse quotes it whole: the password goes, however short
    said = ('end of string reached when looking for matching "]" in IPv6 host address in URI: '
            '"postgresql://bench:{}@[::1/results"')
    for pw in ("o", "pw", "hunter22", "p%40ss"):
        assert masked_password(said.format(pw), f"postgresql+psycopg://bench:{pw}@h/results") == said.format("***")
    # elsewhere, a password is masked as a whole word of at least 4 characters
    url = "postgresql+psycopg://bench:hunter22@h/results"
    assert masked_password('invalid value "hunter22" (password=hunter22)', url) == 'invalid value "***" (password=***)'
    assert masked_password("hunter222 xhunter22", url) == "hunter222 xhunter22"
    assert masked_password("connection to server failed: 'p@ss'", "postgresql://u:p%40ss@h/db") == (
        "connection to server failed: '***'")
    # a short one is not, nor one that is also the user, host or database name, which the
    # message names in their own right (and shown_url shows)
    assert masked_password('role "postgres" failed to pw', "postgresql://postgres:postgres@h/db") == (
        'role "postgres" failed to pw')
    assert masked_password("connect to pw failed", "postgresql://u:pw@h/db") == "connect to pw failed"
    assert masked_password('database "results" does not exist', "postgresql://u:results@h/results") == (
        'database "results" does not exist')


def test_a_port_that_is_no_number_is_one_clean_line(capsys):
    """Review: `--store postgresql+psycopg://u:pw@host:abc/db` printed SQLAlchemy's ValueError as
    a 47-line traceback, exit 1."""
    from regbench.cli.main import main

    assert main(["--store", "postgresql+psycopg://bench:s3cret-pw@db.example:abc/results", "summary"]) == 3
    err = capsys.readouterr().err
    assert err == ("error: cannot open store postgresql+psycopg://bench:***@db.example:abc/results: "
                   "its port 'abc' is not a number\n")
    assert main(["--store", "postgresql+psycopg://bench:pw@[::1/results", "summary"]) == 3
    assert capsys.readouterr().err == ("error: cannot open store postgresql+psycopg://bench:***@[::1/results: "
                                       "its host '[::1' has no closing ']'\n")


def test_a_database_server_that_refuses_is_one_clean_line(capsys):
    """PostgreSQL's message has a line break and a tab before its hint (`Connection refused\\n\\tIs
    the server running ...`): it was quoted with a literal `\\n` and the tab. The command's error
    is one line, the store named with its password masked."""
    from regbench.cli.main import main

    url = "postgresql+psycopg://bench:s3cret-pw@127.0.0.1:1/results"
    assert main(["--store", url, "show"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    assert err.startswith("error: cannot open store postgresql+psycopg://bench:***@127.0.0.1:1/results: ")
    assert "Connection refused Is the server running" in err
    assert "\\n" not in err and "\t" not in err and "  " not in err and "s3cret-pw" not in err
