"""Alerts, told once (seed 001 fig. 1's notification repository): de-duplication, fixed, suppression,
lifecycle, configuration, and the migration of stores created at schema revision 0001.

Changes are written by hand (their numbers are the truth); one test runs the real detectors.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.config import parse_config
from regbench.detect import Change
from regbench.detect.alerts import (AlertOutcome, candidate_span, record_alerts, restores, same_step, set_status,
                                    span_gap)
from regbench.errors import ConfigError, NotFoundError
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store
from regbench.store import schema as t
from regbench.errors import AlertError
from regbench.store.alerts import alert_history, get_alert, list_alerts

T0 = datetime(2024, 5, 1, 12, 0, 0)
VERSIONS = [f"v{k}" for k in range(8)]


def fill(store: Store, benchmarks=("fft",), *, configs=("default",), machines=("local",)) -> None:
    """One run per experiment over v0..v7 (timestamps give the history order)."""
    records = [RunRecord(b, v, 0, np.array([1.0, 1.1]), config=c, machine=m)
               for b in benchmarks for c in configs for m in machines for v in VERSIONS]
    versions = [VersionInfo(v, timestamp=T0 + timedelta(days=k)) for k, v in enumerate(VERSIONS)]
    store.add_runs(records, versions=versions)


@pytest.fixture
def store(store_url):
    """Three benchmarks over v0..v7, on SQLite or, with ``--store-url``, PostgreSQL (conftest.py)."""
    with Store(store_url) as s:
        fill(s, ("fft", "sort", "exp-io"))
        yield s


def change(version="v3", previous="v2", *, change=0.10, ci=(0.08, 0.12), kind=None, method="ci-overlap",
           benchmark="fft", config="default", machine="local", p_value=None) -> Change:
    kind = kind or ("regression" if change > 0 else "improvement")
    return Change(benchmark, config, machine, version, previous, change, ci[0], ci[1], kind, method, p_value)


def count(store: Store, table: sa.Table) -> int:
    with store.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(table)).scalar()


# -------------------------------------------------------------------------------- pure rules
def test_candidate_spans_and_gaps():
    assert candidate_span(2, 3) == (3, 3)  # consecutive versions: one candidate
    assert candidate_span(1, 4) == (2, 4)  # a series that skips versions: several
    assert span_gap((3, 3), (3, 3)) == 0
    assert span_gap((3, 3), (4, 4)) == 1 and same_step((3, 3), (4, 4))  # one version apart
    assert span_gap((3, 3), (5, 5)) == 2 and not same_step((3, 3), (5, 5))
    assert span_gap((2, 4), (3, 3)) == 0 and span_gap((2, 4), (2, 4)) == -2  # overlaps: <= 0


@pytest.mark.parametrize("earlier, later, expected", [
    (0.10, -0.0455, True),   # (1.1)(0.9545) = 1.04995: back within half of 10%
    (0.10, -0.04, False),    # 1.056: not restored
    (0.10, -0.15, False),    # 0.935: overshoots by 6.5%, more than half of 10%
    (-0.20, 0.25, True),     # an improvement undone exactly: (0.8)(1.25) = 1
    (0.01, -0.001, True),    # small changes: the 1% floor
    (0.004, 0.011, False),   # same sign: never a restoration (1.015)
])
def test_restores_rule(earlier, later, expected):
    assert restores(earlier, later) is expected


# ---------------------------------------------------------------------------------- de-dup
def test_rerunning_detection_creates_nothing_new(store):
    changes = [change(), change("v6", "v5", change=0.2, ci=(0.1, 0.3))]
    first = record_alerts(store, changes, now=T0)
    assert isinstance(first, AlertOutcome)
    assert [(a.version, a.previous, a.kind, a.status) for a in first.created] == [
        ("v3", "v2", "regression", "new"), ("v6", "v5", "regression", "new")]
    assert first.merged == () and first.fixed == () and first.suppressed == ()
    rows = {name: count(store, table) for name, table in
            (("alert", t.alert), ("event", t.alert_event), ("delivery", t.alert_delivery))}
    again = record_alerts(store, list(reversed(changes)), now=T0 + timedelta(hours=1))
    assert again.created == () and again.fixed == ()
    assert sorted(a.id for a in again.merged) == sorted(a.id for a in first.created)
    assert {name: count(store, table) for name, table in
            (("alert", t.alert), ("event", t.alert_event), ("delivery", t.alert_delivery))} == rows
    assert [a.updated_at for a in list_alerts(store)] == [T0, T0]  # not even touched


def test_two_methods_on_the_same_step_make_one_alert_with_the_tighter_interval(store):
    out = record_alerts(store, [change(ci=(0.05, 0.15), method="ci-overlap"),
                                change(change=0.11, ci=(0.09, 0.13), method="bootstrap-ci", p_value=0.001)],
                        now=T0)
    (alert,) = out.created
    assert alert.methods == ("bootstrap-ci", "ci-overlap")
    assert (alert.change, alert.ci_low, alert.ci_high, alert.p_value) == (0.11, 0.09, 0.13, 0.001)
    # a third method with a wider interval adds its name only
    later = record_alerts(store, [change(ci=(0.0, 0.2), method="talos-ttest")], now=T0 + timedelta(hours=1))
    (merged,) = later.merged
    assert merged.id == alert.id and merged.methods == ("bootstrap-ci", "ci-overlap", "talos-ttest")
    assert (merged.ci_low, merged.ci_high) == (0.09, 0.13)
    assert merged.updated_at == T0 + timedelta(hours=1)
    assert "also found by talos-ttest" in alert_history(store, alert.id)[-1].why
    assert count(store, t.alert) == 1


def test_steps_one_version_apart_are_one_alert_two_apart_are_two(store):
    (a,) = record_alerts(store, [change("v3", "v2")], now=T0).created
    shifted = record_alerts(store, [change("v4", "v3", method="edivisive")], now=T0)
    assert shifted.created == () and [m.id for m in shifted.merged] == [a.id]
    far = record_alerts(store, [change("v5", "v4", method="edivisive")], now=T0)
    assert len(far.created) == 1  # two versions later: another step
    # the alert keeps the versions it was first told with
    assert (get_alert(store, a.id).version, get_alert(store, a.id).previous) == ("v3", "v2")


def test_one_method_reporting_adjacent_versions_saw_two_steps(store):
    # +10% in one commit and another +10% in the next, found by one method (in one pass or in two
    # incremental passes): two alerts, the second not swallowed by the first.
    first = record_alerts(store, [change("v3", "v2", method="auto")], now=T0)
    second = record_alerts(store, [change("v4", "v3", method="auto")], now=T0)
    assert len(first.created) == 1 and len(second.created) == 1 and second.merged == ()
    both = record_alerts(store, [change("v6", "v5", method="auto"), change("v7", "v6", method="auto")], now=T0)
    assert len(both.created) == 2


def test_overlapping_windows_merge(store):
    (a,) = record_alerts(store, [change("v4", "v1", method="forecast")], now=T0).created  # candidates v2..v4
    out = record_alerts(store, [change("v3", "v2"), change("v2", "v1", method="x"), change("v5", "v4", method="y")],
                        now=T0)
    assert out.created == () and [m.id for m in out.merged] == [a.id]
    assert get_alert(store, a.id).methods == ("ci-overlap", "forecast", "x", "y")


def test_other_kind_or_config_is_another_alert_another_machine_is_evidence(store, tmp_path):
    fill(store, ("fft",), configs=("big",), machines=("local", "ci-1"))
    out = record_alerts(store, [change(), change(change=-0.1, ci=(-0.12, -0.08)),
                                change(config="big"), change(config="big", machine="ci-1")], now=T0)
    assert len(out.created) == 3
    assert [(a.kind, a.config, a.machines) for a in out.created] == [
        ("regression", "big", ("ci-1", "local")), ("improvement", "default", ("local",)),
        ("regression", "default", ("local",))]


def test_invalid_alerts_are_not_resurrected_by_a_rerun(store):
    (a,) = record_alerts(store, [change()], now=T0).created
    set_status(store, [a.id], "invalid", who="ana", why="noisy machine", now=T0)
    out = record_alerts(store, [change(), change("v4", "v3", method="bootstrap-ci")], now=T0 + timedelta(days=1))
    assert out.created == () and [m.status for m in out.merged] == ["invalid"]


def test_a_count_from_exactly_0_is_an_alert_and_back_to_0_fixes_it(store):
    # A count exactly 0 in every run, then above 0 (regbench.detect.zeros): +inf, no interval.
    inf = float("inf")
    (up,) = record_alerts(store, [change(change=inf, ci=(inf, inf), method="auto", p_value=1e-9)], now=T0).created
    assert (up.change, up.ci_low, up.ci_high, up.kind) == (inf, None, None, "regression")
    assert "detected by auto: +∞ at v3" in alert_history(store, up.id)[0].why
    # Stored and read back as infinity (SQLite and PostgreSQL both hold it in a float column).
    assert get_alert(store, up.id).change == inf
    # Back to exactly 0 (-100%) restores it; a smaller decrease does not.
    assert restores(inf, -1.0) and not restores(inf, -0.5) and not restores(0.1, -1.0)
    out = record_alerts(store, [change("v6", "v5", change=-1.0, ci=(-1.0, -1.0), method="auto", p_value=1e-9)],
                        now=T0 + timedelta(days=1))
    (down,) = out.created
    assert [a.id for a in out.fixed] == [up.id] and get_alert(store, up.id).fixed_by == "v6"
    assert down.change == -1.0


def test_bad_changes_write_nothing(store):
    with pytest.raises(NotFoundError, match="no version named 'v99' in the store"):
        record_alerts(store, [change(), change("v99", "v2")], now=T0)
    with pytest.raises(NotFoundError, match="no benchmark named 'nope'"):
        record_alerts(store, [change(), change(benchmark="nope")], now=T0)
    with pytest.raises(ValueError, match="`change` of a change must be a number"):
        record_alerts(store, [change(change=float("nan"))], now=T0)
    with pytest.raises(ValueError, match="`kind` of a change must be"):
        record_alerts(store, [change(kind="worse")], now=T0)
    assert count(store, t.alert) == 0 and count(store, t.alert_event) == 0


def test_nan_interval_is_stored_as_unknown_and_any_real_interval_is_tighter(store):
    (a,) = record_alerts(store, [change(ci=(float("nan"), float("nan")))], now=T0).created
    assert (a.ci_low, a.ci_high) == (None, None)
    (m,) = record_alerts(store, [change(ci=(0.0, 0.3), method="b")], now=T0).merged
    assert (m.ci_low, m.ci_high) == (0.0, 0.3)


# ------------------------------------------------------------------------------------ fixed
def test_a_later_opposite_change_that_restores_performance_fixes_the_alert(store):
    out = record_alerts(store, [change("v2", "v1", change=0.10),
                                change("v5", "v4", change=-0.095, ci=(-0.11, -0.08))], now=T0)
    regression, improvement = out.created
    assert [a.id for a in out.fixed] == [regression.id]
    fixed = get_alert(store, regression.id)
    assert fixed.status == "fixed" and fixed.fixed_by == "v5" and fixed.fixed_by_alert == improvement.id
    assert regression.status == "fixed"  # the outcome shows the alert as stored at the end
    # the restoring change is an alert too, whose history says what it restored
    assert improvement.status == "new" and improvement.kind == "improvement"
    assert "restores alert #%d" % regression.id in alert_history(store, improvement.id)[-1].why
    last = alert_history(store, regression.id)[-1]
    assert (last.status, last.who) == ("fixed", "regbench") and "restored by v5" in last.why
    # re-running changes nothing
    again = record_alerts(store, [change("v5", "v4", change=-0.095, ci=(-0.11, -0.08))], now=T0)
    assert again.fixed == () and again.created == ()


def test_an_improvement_undone_by_a_regression_is_not_fixed(store):
    out = record_alerts(store, [change("v2", "v1", change=-0.10), change("v5", "v4", change=0.11)], now=T0)
    assert out.fixed == () and [a.status for a in out.created] == ["new", "new"]


def test_partial_recovery_or_closed_alerts_are_not_fixed(store):
    out = record_alerts(store, [change("v2", "v1", change=0.10), change("v5", "v4", change=-0.03)], now=T0)
    assert out.fixed == ()
    (reg,) = [a for a in out.created if a.kind == "regression"]
    set_status(store, [reg.id], "expected", who="ana", now=T0)
    more = record_alerts(store, [change("v7", "v6", change=-0.06, benchmark="fft")], now=T0)
    assert more.fixed == ()  # an expected change is not "fixed" by a later one
    assert get_alert(store, reg.id).status == "expected"


def test_acknowledged_alert_is_fixed_and_the_latest_restored_alert_wins(store):
    first = record_alerts(store, [change("v2", "v1", change=0.10), change("v4", "v3", change=0.10)], now=T0).created
    set_status(store, [first[1].id], "acknowledged", who="ana", now=T0)
    out = record_alerts(store, [change("v7", "v6", change=-0.09)], now=T0)
    assert [a.id for a in out.fixed] == [first[1].id]  # the latest one before the fix
    assert get_alert(store, first[0].id).status == "new"


def test_a_reopened_alert_is_not_fixed_again_by_a_rerun(store):
    out = record_alerts(store, [change("v2", "v1", change=0.10), change("v5", "v4", change=-0.1)], now=T0)
    reg = out.fixed[0]
    (reopened,) = set_status(store, [reg.id], "new", who="ana", why="came back on the nightly", now=T0)
    assert reopened.status == "new" and reopened.fixed_by is None and reopened.fixed_by_alert is None
    again = record_alerts(store, [change("v2", "v1", change=0.10), change("v5", "v4", change=-0.1)], now=T0)
    assert again.fixed == () and get_alert(store, reg.id).status == "new"


# ------------------------------------------------------------------------------ suppression
def config(text: str, tmp_path: Path):
    import tomllib

    return parse_config(tomllib.loads(text), path=tmp_path / "regbench.toml")


def test_suppressed_benchmarks_are_counted_not_stored(store, tmp_path):
    cfg = config('[alerts]\nsuppress = ["exp-*"]\n\n[[benchmark]]\nname = "sort"\ncommand = ["true"]\n'
                 'alerts = false\n', tmp_path)
    assert cfg.alerts_suppressed("exp-io") and cfg.alerts_suppressed("sort") and not cfg.alerts_suppressed("fft")
    out = record_alerts(store, [change(benchmark="exp-io"), change(benchmark="sort"), change()], config=cfg, now=T0)
    assert [c.benchmark for c in out.suppressed] == ["exp-io", "sort"]
    assert [a.benchmark for a in out.created] == ["fft"]
    assert [a.benchmark for a in list_alerts(store)] == ["fft"]
    # without the config they would be alerts
    assert len(record_alerts(store, [change(benchmark="sort")], now=T0).created) == 1


@pytest.mark.parametrize("text, message", [
    ('[alerts]\nsuppress = 3\n', r"\[alerts\] `suppress` must be a list"),
    ('[alerts]\nquiet = true\n', r"\[alerts\]: unknown key `quiet`"),
    ('[[benchmark]]\nname = "a"\ncommand = ["true"]\nalerts = "no"\n', r"`alerts` must be true or false"),
    ('[[notify]]\ntype = "pager"\n', r"\[\[notify\]\] #1: `type` must be one of terminal, json, markdown"),
    ('[[notify]]\ntype = "json"\n', r"\[\[notify\]\] #1 \(json\): `path` is required"),
    ('[[notify]]\ntype = "json"\npath = "a.json"\ncolour = 1\n', r"\(json\): unknown key `colour`"),
    ('[[notify]]\ntype = "webhook"\nurl = "ftp://x"\n', r"`url` must be an http:// or https:// URL"),
    ('[[notify]]\ntype = "webhook"\n', r"give exactly one of `url` or `url_env`"),
    ('[[notify]]\ntype = "webhook"\nurl = "http://x"\ntimeout = 0\n', r"`timeout` must be a positive number"),
    ('[[notify]]\ntype = "webhook"\nurl = "http://x"\nkinds = ["bad"]\n', r"`kinds` must be a non-empty list"),
    ('[[notify]]\ntype = "json"\npath = "a"\nkinds = ["failures"]\n',
     r'`kinds` must be a non-empty list of "regression", "improvement" and "failure", got \[\'failures\'\]'),
    ('[[notify]]\ntype = "email"\nhost = "h"\nfrom = "a@b"\nto = "c@d"\nuser = "u"\n',
     r"give `user` and `password_env` together"),
    ('[[notify]]\ntype = "email"\nhost = "h"\nfrom = "a@b"\nto = []\n', r"`to` must be an e-mail address"),
    ('[[notify]]\ntype = "terminal"\n[[notify]]\ntype = "terminal"\n', r"#2 \(terminal\): another sink is named"),
    ('notify = 3\n', r"`notify` must be an array of tables"),
])
def test_bad_alert_configuration_is_one_line_with_file_and_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message) as info:
        config(text, tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'regbench.toml'}: ") and "\n" not in str(info.value)


def test_notify_tables_get_defaults_and_absolute_paths(tmp_path):
    cfg = config('[[notify]]\ntype = "markdown"\npath = "out/pr.md"\n'
                 '[[notify]]\ntype = "webhook"\nname = "slack"\nurl_env = "HOOK"\nkinds = ["regression"]\n'
                 '[[notify]]\ntype = "email"\nhost = "smtp"\nfrom = "a@b"\nto = "c@d"\nstarttls = true\nport = 587\n',
                 tmp_path)
    md, hook, mail = cfg.notify
    assert (md.name, md.options["path"]) == ("markdown", (tmp_path / "out" / "pr.md").resolve())
    # a sink told of regressions is told of benchmarks that start failing (docs/configuration.md)
    assert (hook.name, hook.kinds, hook.options) == ("slack", ("regression", "failure"), {
        "url_env": "HOOK", "timeout": 10.0, "retries": 3, "headers": {}})
    assert md.kinds == ("regression", "improvement", "failure")
    assert mail.options["sender"] == "a@b" and mail.options["to"] == ("c@d",) and mail.options["port"] == 587


# -------------------------------------------------------------------------------- lifecycle
def test_lifecycle_records_who_when_why(store):
    a, b = record_alerts(store, [change(), change("v6", "v5")], now=T0).created
    acked = set_status(store, [a.id], "acknowledged", who="Ana Lima", why="bisecting", now=T0 + timedelta(hours=2))
    assert [x.status for x in acked] == ["acknowledged"] and acked[0].updated_at == T0 + timedelta(hours=2)
    set_status(store, [a.id, b.id], "expected", who="bo", why="new TLS cipher (seed 004 s.5)",
               now=T0 + timedelta(hours=3))
    history = alert_history(store, a.id)
    assert [(e.status, e.who, e.at, e.why) for e in history] == [
        ("new", "regbench", T0, "detected by ci-overlap: +10.00% at v3 (since v2)"),
        ("acknowledged", "Ana Lima", T0 + timedelta(hours=2), "bisecting"),
        ("expected", "bo", T0 + timedelta(hours=3), "new TLS cipher (seed 004 s.5)")]
    assert [x.status for x in list_alerts(store, status="expected")] == ["expected", "expected"]


def test_invalid_transitions_are_one_line_errors_and_change_nothing(store):
    a, b = record_alerts(store, [change(), change("v6", "v5")], now=T0).created
    set_status(store, [a.id], "acknowledged", who="ana", now=T0)
    with pytest.raises(AlertError, match=rf"^alert #{a.id} is already acknowledged$"):
        set_status(store, [b.id, a.id], "acknowledged", who="ana", now=T0)
    assert get_alert(store, b.id).status == "new"  # all or nothing
    with pytest.raises(ConfigError, match="`fixed` is set by detection"):
        set_status(store, [b.id], "fixed", who="ana")
    with pytest.raises(ConfigError, match="unknown alert status 'done'"):
        set_status(store, [b.id], "done", who="ana")
    with pytest.raises(ConfigError, match="`who` must name"):
        set_status(store, [b.id], "invalid", who=" ")
    with pytest.raises(NotFoundError, match="^no alert #99 in the store$"):
        set_status(store, [b.id, 99], "invalid", who="ana")
    assert get_alert(store, b.id).status == "new"
    assert len(alert_history(store, b.id)) == 1


# ------------------------------------------------------------------- with the real detectors
def test_real_detectors_on_a_step_give_one_alert(store_url):
    from regbench.detect.driver import detect_changes

    rng = np.random.default_rng(1)
    levels = [1.0, 1.0, 1.0, 1.25, 1.25, 1.25]
    records = [RunRecord("fft", f"v{k}", r, lv * (1 + rng.normal(0, 0.003)) * (1 + rng.normal(0, 0.01, 20)))
               for k, lv in enumerate(levels) for r in range(6)]
    with Store(store_url) as store:
        store.add_runs(records)
        changes = (list(detect_changes(store, method="ci-overlap", fdr=None).changes)
                   + list(detect_changes(store, method="bootstrap-ci", min_change=0.03, fdr=None).changes))
        assert {(c.version, c.method) for c in changes} == {("v3", "ci-overlap"), ("v3", "bootstrap-ci")}
        out = record_alerts(store, changes, now=T0)
        (alert,) = out.created
        assert alert.methods == ("bootstrap-ci", "ci-overlap") and alert.kind == "regression"
        assert alert.ci_low <= 0.25 <= alert.ci_high or abs(alert.change - 0.25) < 0.02
        assert record_alerts(store, changes).created == ()


# ---------------------------------------------------------------------------------- migration
def test_a_store_created_at_revision_0001_upgrades_with_its_data(tmp_path):
    from storetools import upgrade_to

    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0001")
        conn.execute(sa.text("INSERT INTO benchmark (id, name, unit, direction) VALUES (1, 'fft', 'ms', 'lower')"))
        conn.execute(sa.text("INSERT INTO version (id, name) VALUES (1, 'v0'), (2, 'v1')"))
        conn.execute(sa.text("INSERT INTO config (id, name) VALUES (1, 'default')"))
        conn.execute(sa.text("INSERT INTO machine (id, name) VALUES (1, 'local')"))
        blob = np.array([1.5, 2.5], dtype="<f8").tobytes()
        for rid, vid in ((1, 1), (2, 2)):
            conn.execute(sa.text("INSERT INTO run (id, benchmark_id, version_id, config_id, machine_id, run_index, "
                                 "status, n_samples, encoding, samples) VALUES (:i, 1, :v, 1, 1, 0, 'ok', 2, 'f8', :b)"),
                         {"i": rid, "v": vid, "b": blob})
    engine.dispose()
    con = sqlite3.connect(path)
    assert con.execute("SELECT version_num FROM alembic_version").fetchall() == [("0001",)]
    assert "alert" not in {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()

    with Store(path, create=False) as s:  # a reading command upgrades it too
        assert s.schema_revision() == t.SCHEMA_REVISION
        (series,) = s.load_series()
        assert (series.benchmark, series.unit, [v.name for v in series.versions]) == ("fft", "ms", ["v0", "v1"])
        assert [list(r[0]) for r in series.runs] == [[1.5, 2.5], [1.5, 2.5]]
        (alert,) = record_alerts(s, [Change("fft", "default", "local", "v1", "v0", 0.1, 0.05, 0.15,
                                            "regression", "ci-overlap")], now=T0).created
        tables = set(sa.inspect(s.engine).get_table_names())
    assert {"alert", "alert_event", "alert_delivery"} <= tables
    with Store(path) as s:  # reopened at head: nothing to do, data still there
        assert [a.id for a in list_alerts(s)] == [alert.id] and len(s.runs()) == 2


def test_migration_0002_matches_the_schema_module(tmp_path):
    """The tables the migration creates have the columns schema.py declares."""
    with Store(tmp_path / "r.db") as s:
        insp = sa.inspect(s.engine)
        for table in (t.alert, t.alert_event, t.alert_delivery):
            assert [c["name"] for c in insp.get_columns(table.name)] == [c.name for c in table.columns]
        uniques = {u["name"]: u["column_names"] for u in insp.get_unique_constraints("alert_delivery")}
        assert uniques["uq_alert_delivery"] == ["alert_id", "sink"]


# ------------------------------------------------------------------------------- PostgreSQL
PG_URL = os.environ.get("REGBENCH_TEST_POSTGRES_URL")


@pytest.mark.skipif(not PG_URL, reason="REGBENCH_TEST_POSTGRES_URL is not set (no PostgreSQL server)")
def test_alerts_on_postgresql_as_on_sqlite(tmp_path, pg_url):  # pg_url: a schema of its own (tests/conftest.py)
    from regbench.notify import notify_pending
    from regbench.notify.jsonfile import JsonSink
    from regbench.store.alerts import claim

    changes = [change("v2", "v1", change=0.10, ci=(0.08, 0.12)), change("v2", "v1", ci=(0.09, 0.11), method="b"),
               change("v5", "v4", change=-0.1, ci=(-0.12, -0.08)), change("v7", "v6")]
    results = []
    for location in (pg_url, tmp_path / "r.db"):
        with Store(location) as s:
            assert s.schema_revision() == t.SCHEMA_REVISION
            fill(s)
            out = record_alerts(s, changes, now=T0)
            assert record_alerts(s, changes, now=T0).created == ()
            set_status(s, [out.created[-1].id], "acknowledged", who="ana", why="looking", now=T0)
            sink = JsonSink("json", path=tmp_path / "alerts.json")
            # The improvement, the only new one, and before it the regression it undid in the same
            # pass, never told (docs/cli.md, `alerts notify`).
            assert notify_pending(s, [sink], now=T0).sinks[0].sent == (out.created[0].id, out.created[1].id)
            assert notify_pending(s, [sink], now=T0).sent == 0
            assert claim(s, out.created[0].id, "other", now=T0, lease=timedelta(minutes=1)) == 1
            assert claim(s, out.created[0].id, "other", now=T0, lease=timedelta(minutes=1)) == 0  # taken
            results.append([(a.to_json() | {"key": None}, [(e.status, e.who, e.why) for e in alert_history(s, a.id)])
                            for a in list_alerts(s)])
    assert results[0] == results[1]
    assert [r[0]["status"] for r in results[0]] == ["fixed", "new", "acknowledged"]
    assert [r[0]["methods"] for r in results[0]] == [["b", "ci-overlap"], ["ci-overlap"], ["ci-overlap"]]
