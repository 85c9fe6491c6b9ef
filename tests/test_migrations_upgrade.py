"""A store made by any earlier regbench is upgraded when opened, and every row survives.

For each schema revision a store is created at that revision (Alembic's migrations up to it, as
the regbench of the time made it), with rows in every table that exists there, written through
the tables as they were then; opening it with :class:`~regbench.store.Store` upgrades it to the
head revision, after which every row reads back with the values written, the columns added since
hold their documented defaults, regbench reads the data through its own API (samples decoded,
alerts with their history) and writes beside it (the ids a server's sequences hand out do not
collide with the old rows).  The tests use the ``store_url`` fixture, so ``--store-url`` runs them
on PostgreSQL too (tests/conftest.py).

The downgrades of the last revisions are checked as a round trip: down, then opened (up) again,
the rows of the tables the downgrade keeps are intact.
"""

from __future__ import annotations

import contextlib
import zlib
from datetime import datetime, timedelta

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.detect.alerts import record_alerts
from regbench.detect import Change
from regbench.model import Failing, FailureScan, RunRecord, VersionInfo
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.alerts import alert_history, get_alert, list_alerts

from storetools import downgrade_to, upgrade_to

#: Every released schema revision, oldest first (0005 was never released).
REVISIONS = ["0001", "0002", "0003", "0004", "0006", "0007", "0008", "0009", "0010", "0011", "0012", "0013", "0014", "0015", "0016", "0017", "0018", "0019", "0020", "0021", "0022", "0023"]
T0 = datetime(2024, 5, 1, 12, 0, 0)
SAMPLES = np.array([1.5, 2.25, -0.0, 1e-300, 3.0000000000000004])

#: Columns added to a table that existed before them, with the value old rows get (their
#: migration's documented default), by the revision that added them.
ADDED_COLUMNS = {"0009": {("alert", "hold_machines"): None}, "0011": {("confirmation", "compared_by"): None},
                 "0012": {("plan", "run_overhead"): None},
                 "0013": {("plan", "slices"): None, ("plan", "full_slices"): None},
                 "0015": {("alert", "error"): None}, "0016": {("detect_state", "run_mark"): None},
                 "0018": {("alert", "culprit"): None, ("alert", "bisection"): None},
                 "0019": {("plan", "forks"): None, ("plan", "fork_overhead"): None},
                 "0020": {("version", "generation"): None}, "0021": {("alert", "until"): None},
                 "0022": {("alert_machine", "until"): None},
                 "0023": {("run", "superseded_status"): None, ("run", "superseded_by"): None}}


def test_the_revisions_listed_are_the_migrations_shipped():
    from regbench.store.db import _known_revisions

    assert sorted(_known_revisions()) == REVISIONS and REVISIONS[-1] == t.SCHEMA_REVISION


def at_least(revision: str, since: str) -> bool:
    return REVISIONS.index(revision) >= REVISIONS.index(since)


def fill(conn: sa.Connection, revision: str) -> dict[str, list[dict]]:
    """Rows in every table that exists at ``revision``, inserted without ids (as regbench did, so
    that a server's sequences move on); the rows as written, by table, with their ids."""
    written: dict[str, list[dict]] = {}

    def add(table: sa.Table, **values) -> int:
        rid = conn.execute(sa.insert(table).values(**values)).inserted_primary_key[0]
        written.setdefault(table.name, []).append({"id": rid, **values})
        return rid

    fft = add(t.benchmark, name="fft", unit="ms", direction="lower")
    ops = add(t.benchmark, name="ping,tcp \u00b5", unit="ops/s", direction="higher")
    v0 = add(t.version, name="v0", commit_sha="a" * 40, timestamp=T0, timestamp_text="2024-05-01T14:00:00+02:00")
    v1 = add(t.version, name="v1", commit_sha="b" * 40, timestamp=T0 + timedelta(days=1),
             timestamp_text="2024-05-02T12:00:00Z")
    v2 = add(t.version, name="v2", commit_sha=None, timestamp=None, timestamp_text=None)
    cfg = add(t.config, name="default", params=None)
    opt = add(t.config, name="jit=on", params={"jit": "on", "threads": [1, 2]})
    local = add(t.machine, name="local", fingerprint={"cpu": "x86_64", "cores": 8, "aslr": True})
    other = add(t.machine, name="ci-2", fingerprint=None)
    camp = add(t.campaign, started_at=T0, finished_at=T0 + timedelta(hours=1), seed=2**40 + 7, machine_id=local,
               fingerprint={"governor": "performance"}, command="regbench run", plan={"runs": 3}, status="done")
    add(t.build, version_id=v0, build_key="k" * 64, status="ok", exit_code=0, log_tail="built\n", duration=1.25,
        created_at=T0)
    raw = SAMPLES.astype("<f8").tobytes()
    runs = []
    for k, (vid, mid) in enumerate([(v0, local), (v1, local), (v0, other), (v1, other)]):
        runs.append(add(t.run, benchmark_id=fft, version_id=vid, config_id=cfg, machine_id=mid, run_index=0,
                        campaign_id=camp, status="ok", exit_code=0, stderr_tail=None, started_at=T0,
                        duration=0.5 + k, warmup=1, first_iteration=1, n_samples=len(SAMPLES),
                        encoding="f8z" if k % 2 else "f8",
                        samples=zlib.compress(raw, 6) if k % 2 else raw))
    add(t.run, benchmark_id=ops, version_id=v2, config_id=opt, machine_id=local, run_index=3, campaign_id=None,
        status="timeout", exit_code=-9, stderr_tail="killed after 60 s\n", started_at=None, duration=None,
        warmup=0, first_iteration=0, n_samples=0, encoding="f8", samples=None)
    if at_least(revision, "0002"):
        alert = add(t.alert, uid="0" * 32, benchmark_id=fft, config_id=cfg, machine_id=local, version_id=v1,
                    previous_id=v0, kind="regression", change=0.1, ci_low=0.05, ci_high=0.15, p_value=0.001,
                    methods=["ci-overlap", "bootstrap-ci"], status="acknowledged", fixed_by_id=None,
                    fixed_by_alert_id=None, created_at=T0, updated_at=T0 + timedelta(minutes=5))
        fix = add(t.alert, uid="1" * 32, benchmark_id=fft, config_id=cfg, machine_id=local, version_id=v2,
                  previous_id=v1, kind="improvement", change=-0.09, ci_low=-0.12, ci_high=-0.06, p_value=None,
                  methods=["ci-overlap"], status="new", fixed_by_id=None, fixed_by_alert_id=None, created_at=T0,
                  updated_at=T0)
        conn.execute(sa.update(t.alert).where(t.alert.c.id == alert).values(fixed_by_id=v2, fixed_by_alert_id=fix))
        written["alert"][0].update(fixed_by_id=v2, fixed_by_alert_id=fix)
        add(t.alert_event, alert_id=alert, status="new", who="regbench", at=T0, why="detected by ci-overlap")
        add(t.alert_event, alert_id=alert, status="acknowledged", who="Ana", at=T0 + timedelta(minutes=5),
            why=None)
        add(t.alert_delivery, alert_id=alert, sink="slack", state="sent", attempts=2, last_error="HTTP 503",
            next_attempt_at=None, sent_at=T0 + timedelta(minutes=1))
        add(t.alert_delivery, alert_id=fix, sink="slack", state="failed", attempts=1, last_error="timeout",
            next_attempt_at=T0 + timedelta(hours=1), sent_at=None)
    if at_least(revision, "0003"):
        add(t.detect_state, benchmark_id=fft, config_id=cfg, machine_id=local, method="bootstrap-ci",
            options="fdr=0.05", last_version_id=v1, state={"means": [1.0, 1.1], "n": 2}, updated_at=T0)
    if at_least(revision, "0004"):
        add(t.confirmation, alert_id=alert, benchmark_id=fft, config_id=cfg, machine_id=local, version_id=v1,
            previous_id=v0, kind="regression", method="ci-overlap", status="confirmed", reason=None,
            verdict="slower", stopped="settled", change=0.11, cs_low=0.04, cs_high=0.2, alpha=0.05, threshold=0.02,
            pairs=12, failed_pairs=1, seconds=3.5, campaign_id=camp, created_at=T0)
        add(t.confirmation, alert_id=None, benchmark_id=ops, config_id=opt, machine_id=local, version_id=v1,
            previous_id=v0, kind="improvement", method="ci-overlap", status="refuted", reason="no difference",
            verdict=None, stopped=None, change=None, cs_low=None, cs_high=None, alpha=None, threshold=None,
            pairs=0, failed_pairs=0, seconds=0.0, campaign_id=None, created_at=T0)
    if at_least(revision, "0006"):
        add(t.version_alias, name="v1.0.0", version_id=v1, kind="tag")
        add(t.version_alias, name="main", version_id=v2, kind="branch")
    if at_least(revision, "0007"):
        add(t.plan, benchmark_id=fft, config_id=cfg, machine_id=local, revision=1, campaign_id=camp, version_id=v0,
            runs=3, iterations=20, warmup=2, full_runs=10, full_iterations=100, metric="rciw", threshold=0.01,
            stability=0.008, full_stability=None, stable=True, seconds=1.5, full_seconds=25.0, created_at=T0)
    if at_least(revision, "0008"):
        ci_token = add(t.api_token, name="ci", token_hash="f" * 64, scopes="read submit", machine="ci-2", created_at=T0,
            revoked_at=None)
        add(t.api_token, name="old", token_hash="e" * 64, scopes="admin", machine=None, created_at=T0,
            revoked_at=T0 + timedelta(days=3))
    if at_least(revision, "0009"):
        conn.execute(sa.update(t.alert).where(t.alert.c.id == fix).values(hold_machines=2))
        written["alert"][0]["hold_machines"], written["alert"][1]["hold_machines"] = None, 2
        add(t.alert_machine, alert_id=alert, machine_id=other, changed=True, version_id=v1, previous_id=v0,
            change=0.12, ci_low=0.06, ci_high=0.18, p_value=0.01, methods=["ci-overlap"], created_at=T0,
            updated_at=T0)
        add(t.alert_machine, alert_id=fix, machine_id=other, changed=False, version_id=None, previous_id=None,
            change=None, ci_low=None, ci_high=None, p_value=None, methods=None, created_at=T0, updated_at=T0)
    if at_least(revision, "0010"):
        add(t.submission, submission_id="ci-run-41-attempt-1", body_sha256="c" * 64, token_id=ci_token,
            format="pyperf", machine="ci-2", runs=3, samples=60, created_at=T0)
        add(t.submission, submission_id="by-hand", body_sha256="d" * 64, token_id=None, format="jsonl",
            machine="local", runs=1, samples=5, created_at=T0 + timedelta(hours=1))
    if at_least(revision, "0011"):
        how = "pairs of duet runs, log ratio of runs' 10% quantiles (a floor: interference only adds time)"
        confirmed = written["confirmation"][0]["id"]
        conn.execute(sa.update(t.confirmation).where(t.confirmation.c.id == confirmed).values(compared_by=how))
        written["confirmation"][0]["compared_by"], written["confirmation"][1]["compared_by"] = how, None
    if at_least(revision, "0012"):
        conn.execute(sa.update(t.plan).values(run_overhead=7.25))
        written["plan"][0]["run_overhead"] = 7.25
    if at_least(revision, "0013"):
        conn.execute(sa.update(t.plan).values(slices=2, full_slices=5))
        written["plan"][0].update(slices=2, full_slices=5)
        add(t.run_slice, benchmark_id=fft, version_id=v0, config_id=cfg, machine_id=local, run_index=0, n_slices=5,
            slices=np.arange(25.0).astype("<f8").tobytes())
    if at_least(revision, "0014"):
        add(t.run_tool, benchmark_id=fft, version_id=v0, config_id=cfg, machine_id=local, run_index=0, processes=2,
            warmup_seconds=0.4, iteration_seconds=0.2, weights=np.arange(5.0).astype("<f8").tobytes())
        add(t.run_tool, benchmark_id=fft, version_id=v1, config_id=cfg, machine_id=local, run_index=0,
            processes=None, warmup_seconds=None, iteration_seconds=None, weights=None)
    if at_least(revision, "0015"):
        conn.execute(sa.update(t.alert).where(t.alert.c.id == alert).values(error=None))
        written["alert"][0]["error"], written["alert"][1]["error"] = None, None
        failure = add(t.alert, uid="2" * 32, benchmark_id=ops, config_id=opt, machine_id=local, version_id=v2,
                      previous_id=v1, kind="failure", change=0.0, ci_low=None, ci_high=None, p_value=None,
                      methods=[], status="new", fixed_by_id=None, fixed_by_alert_id=None, created_at=T0,
                      updated_at=T0, hold_machines=None, error="timeout (killed after 60 s)")
        add(t.alert_event, alert_id=failure, status="new", who="regbench", at=T0, why="failing at v2")
        add(t.alert_delivery, alert_id=failure, sink="slack", state="sent", attempts=1, last_error=None,
            next_attempt_at=None, sent_at=T0)
    if at_least(revision, "0016"):
        conn.execute(sa.update(t.detect_state).values(run_mark=42))
        written["detect_state"][0]["run_mark"] = 42
    if at_least(revision, "0018"):
        conn.execute(sa.update(t.alert).where(t.alert.c.id == alert).values(
            culprit="5c1b9e2a10", bisection="first bad commit 5c1b9e2a10: +10.00% [+6.00%, +14.00%] against its "
                                            "predecessor (42 runs, campaign #1)"))
        written["alert"][0].update(culprit="5c1b9e2a10", bisection="first bad commit 5c1b9e2a10: +10.00% "
                                   "[+6.00%, +14.00%] against its predecessor (42 runs, campaign #1)")
        for row in written["alert"][1:]:
            row.update(culprit=None, bisection=None)
    if at_least(revision, "0019"):
        conn.execute(sa.update(t.plan).values(forks=2, fork_overhead=3.5))
        written["plan"][0].update(forks=2, fork_overhead=3.5)
    if at_least(revision, "0020"):
        conn.execute(sa.update(t.version).where(t.version.c.id == v1).values(generation=7))
        for row in written["version"]:
            row["generation"] = 7 if row["id"] == v1 else None
    if at_least(revision, "0021"):  # a creep's span, by version name
        conn.execute(sa.update(t.alert).where(t.alert.c.id == alert).values(until="v2"))
        written["alert"][0]["until"] = "v2"
        for row in written["alert"][1:]:
            row["until"] = None
    if at_least(revision, "0022"):  # a creep's span on another machine, by version name
        changed = written["alert_machine"][0]["id"]
        conn.execute(sa.update(t.alert_machine).where(t.alert_machine.c.id == changed).values(until="v2"))
        written["alert_machine"][0]["until"] = "v2"
        written["alert_machine"][1]["until"] = None
    if at_least(revision, "0023"):  # a run superseded by an edit of its benchmark, and what it was
        for row in written["run"]:
            row.update(superseded_status=None, superseded_by=None)
        gone = written["run"][2]  # fft at v0 on ci-2 (the reads below are of local's)
        conn.execute(sa.update(t.run).where(t.run.c.id == gone["id"])
                     .values(status="superseded", superseded_status=gone["status"], superseded_by=gone["campaign_id"]))
        gone.update(superseded_status=gone["status"], superseded_by=gone["campaign_id"], status="superseded")
    return written


def without_failures(written: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The rows of ``written`` but the failure alerts and the rows that name them, which a
    downgrade below 0015 deletes (a store at 0014 cannot hold them)."""
    gone = {row["id"] for row in written.get("alert", []) if row["kind"] == "failure"}
    return {name: [row for row in rows if (row["id"] if name == "alert" else row.get("alert_id")) not in gone]
            for name, rows in written.items()}


def old_store(url: str, revision: str) -> dict[str, list[dict]]:
    """A store at ``revision`` at ``url``, filled by :func:`fill`; the rows written."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            upgrade_to(conn, revision)
            written = fill(conn, revision)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == revision
            tables = set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()
    assert set(written) | {"alembic_version"} == tables, "fill() must write every table of the revision"
    return written


def expected_rows(written: dict[str, list[dict]], revision: str) -> dict[str, list[dict]]:
    """The rows as they must read at head: as written, plus the defaults of the columns added later."""
    added = {key: value for rev, cols in ADDED_COLUMNS.items() if not at_least(revision, rev)
             for key, value in cols.items()}
    out = {}
    for table, rows in written.items():
        defaults = {col: value for (tab, col), value in added.items() if tab == table}
        out[table] = [{**row, **defaults} for row in rows]  # a round trip down and up forgets the values
    return out


def assert_rows(engine: sa.Engine, expected: dict[str, list[dict]]) -> None:
    """Every table of ``expected`` holds exactly those rows, every column of the head schema
    compared (a column the old store could not have written is in ``expected`` by its default)."""
    with engine.connect() as conn:
        for name, rows in expected.items():
            table = t.metadata.tables[name]
            got = [dict(r._mapping) for r in conn.execute(sa.select(table).order_by(table.c.id))]
            assert [set(g) for g in got] == [set(r) for r in rows], f"{name}: columns"
            assert got == rows, f"{name}: rows changed by the upgrade"


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_store_at_every_revision_upgrades_with_every_row(store_url, revision):
    written = old_store(store_url, revision)
    with Store(store_url, create=False) as s:  # a reading command upgrades it too
        assert s.schema_revision() == t.SCHEMA_REVISION
        assert_rows(s.engine, expected_rows(written, revision))

        # regbench reads the old rows through its own API ...
        (fft,) = s.load_series("fft", machine="local")
        assert [v.name for v in fft.versions] == ["v0", "v1"] and fft.unit == "ms"
        for runs in fft.runs:
            (samples,) = runs
            assert np.array_equal(samples, SAMPLES[1:])  # warmup=1: the first sample is a warm-up
        assert [(r.version, r.status) for r in s.runs(benchmark="ping,tcp \u00b5")] == [("v2", "timeout")]
        if at_least(revision, "0002"):
            first = get_alert(s, 1)
            assert (first.status, first.change, first.methods) == ("acknowledged", 0.1, ("ci-overlap",
                                                                                         "bootstrap-ci"))
            assert [(e.status, e.who) for e in alert_history(s, 1)] == [("new", "regbench"), ("acknowledged", "Ana")]
        if at_least(revision, "0006"):
            assert s.resolve_version("v1.0.0") == "v1"

        # ... and writes beside them: new ids do not collide with the old rows' (server sequences).
        s.add_runs([RunRecord("fft", "v3", 0, np.array([2.0, 2.1]))],
                   versions=[VersionInfo("v3", timestamp=T0 + timedelta(days=3))])
        created = record_alerts(s, [Change("fft", "default", "local", "v3", "v1", 0.3, 0.2, 0.4, "regression",
                                           "ci-overlap")], now=T0 + timedelta(days=3)).created
        assert len(created) == 1 and created[0].id > len(written.get("alert", []))
        # 0015: a failure alert, with its error and no change (stored as 0, read as none)
        failing = Failing("fft", "default", "local", "v3", 1, "v1", "v3", "failed (exit status 1): boom")
        (failure,) = record_alerts(s, [], failures=FailureScan((failing,)), now=T0 + timedelta(days=3)).created
        assert (failure.kind, failure.change, failure.error) == ("failure", None, "failed (exit status 1): boom")
        assert len(list_alerts(s)) == len(written.get("alert", [])) + 2
    with Store(store_url) as s:  # reopened at head: nothing to do
        assert s.schema_revision() == t.SCHEMA_REVISION and len(s.runs()) == 5 + 1


#: Revisions whose downgrade is checked by a round trip from head (the tables each one drops lose
#: their rows, by design; every other row must survive down and up again).
ROUND_TRIPS = ["0021", "0020", "0015", "0014", "0013", "0012", "0011", "0010", "0009", "0008", "0007", "0006"]


@pytest.mark.parametrize("down_to", ROUND_TRIPS)
def test_downgrade_then_upgrade_keeps_the_rows_of_the_kept_tables(store_url, down_to):
    written = old_store(store_url, t.SCHEMA_REVISION)
    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as conn:
            downgrade_to(conn, down_to)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == down_to
            tables = set(sa.inspect(conn).get_table_names()) - {"alembic_version"}
            columns = {c["name"] for c in sa.inspect(conn).get_columns("alert")}
            confirmation_columns = {c["name"] for c in sa.inspect(conn).get_columns("confirmation")}
            plan_columns = ({c["name"] for c in sa.inspect(conn).get_columns("plan")}
                            if at_least(down_to, "0007") else set())
            version_columns = {c["name"] for c in sa.inspect(conn).get_columns("version")}
            run_columns = {c["name"] for c in sa.inspect(conn).get_columns("run")}
            machine_columns = ({c["name"] for c in sa.inspect(conn).get_columns("alert_machine")}
                               if at_least(down_to, "0009") else set())
    finally:
        engine.dispose()
    dropped = set(written) - tables
    assert dropped == {"submission", "alert_machine", "api_token", "plan", "version_alias", "run_slice",
                       "run_tool"} & {
        name for name, since in (("submission", "0010"), ("alert_machine", "0009"), ("api_token", "0008"),
                                 ("plan", "0007"), ("version_alias", "0006"), ("run_slice", "0013"),
                                 ("run_tool", "0014"))
        if not at_least(down_to, since)}
    assert ("hold_machines" in columns) == at_least(down_to, "0009")
    assert ("error" in columns) == at_least(down_to, "0015")
    assert ("compared_by" in confirmation_columns) == at_least(down_to, "0011")
    assert ("run_overhead" in plan_columns) == at_least(down_to, "0012")
    assert ("slices" in plan_columns) == at_least(down_to, "0013")
    assert ("forks" in plan_columns) == at_least(down_to, "0019")
    assert ("generation" in version_columns) == at_least(down_to, "0020")
    assert ("until" in columns) == at_least(down_to, "0021")
    assert ("until" in machine_columns) == at_least(down_to, "0022")
    assert ("superseded_by" in run_columns) == ("superseded_status" in run_columns) == at_least(down_to, "0023")
    kept = {name: rows for name, rows in written.items() if name not in dropped}
    if not at_least(down_to, "0023"):  # a superseded run went back to the status it had
        kept["run"] = [{**r, "status": r["superseded_status"]} if r["status"] == "superseded" else r
                       for r in kept["run"]]
    if not at_least(down_to, "0015"):
        kept = without_failures(kept)
    with Store(store_url) as s:
        assert s.schema_revision() == t.SCHEMA_REVISION
        # Up again: the kept rows are intact, the re-added column is back at its default.
        assert_rows(s.engine, expected_rows(kept, down_to))
        with s.engine.connect() as conn:
            for name in dropped:
                assert conn.execute(sa.select(sa.func.count()).select_from(t.metadata.tables[name])).scalar() == 0


def shape(engine: sa.Engine) -> dict[str, tuple]:
    """Per table: its columns, unique constraints (by columns), indexes and foreign keys."""
    insp = sa.inspect(engine)
    return {name: (sorted(c["name"] for c in insp.get_columns(name)),
                   sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(name)),
                   sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in insp.get_indexes(name)
                          if not i["name"].startswith("sqlite_autoindex")),
                   sorted((tuple(f["constrained_columns"]), f["referred_table"]) for f in insp.get_foreign_keys(name)))
            for name in insp.get_table_names()}


@pytest.fixture
def new_store(request, tmp_path):
    """A store made at head on the same database as ``store_url``'s (another schema on a server)."""
    from conftest import fresh_schema

    server = request.config.getoption("--store-url")
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(fresh_schema(server)) if server else tmp_path / "new" / "results.db"
        yield stack.enter_context(Store(url))


@pytest.mark.parametrize("revision", ["0001", "0008"])
def test_an_upgraded_store_has_the_schema_of_a_new_one(store_url, new_store, revision):
    """Constraints and indexes too: an upgraded store refuses duplicates as a new one does."""
    old_store(store_url, revision)
    with Store(store_url) as upgraded:
        assert shape(upgraded.engine) == shape(new_store.engine)


def test_a_round_trip_through_0008_keeps_the_constraints_of_alert(store_url, new_store):
    """0009's downgrade rebuilds ``alert`` on SQLite (batch mode): its constraints come back."""
    old_store(store_url, t.SCHEMA_REVISION)
    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as conn:
            downgrade_to(conn, "0008")
    finally:
        engine.dispose()
    with Store(store_url) as s:
        assert shape(s.engine) == shape(new_store.engine)
