"""Alerts across machines: one change seen on several machines is one alert with each machine's
evidence; a change on one machine that others measured without it is machine-specific;
``[alerts] require_machines`` holds an alert until enough machines show it.

These run on the ``store`` fixture (SQLite, or PostgreSQL with ``--store-url``).  Changes are
written by hand: their numbers are the truth the alerts must keep.
"""

from __future__ import annotations

import tomllib
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.config import parse_config
from regbench.detect import Change
from regbench.detect.alerts import known_alerts, measured_step, record_alerts, set_status
from regbench.errors import ConfigError
from regbench.model import RunRecord, VersionInfo
from regbench.notify import notify_pending
from regbench.notify.jsonfile import JsonSink
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.alerts import alert_history, get_alert, list_alerts

T0 = datetime(2024, 5, 1, 12, 0, 0)
VERSIONS = [f"v{k}" for k in range(8)]
MACHINES = ("a", "b", "c")


def fill(store: Store, benchmark: str = "fft", *, machines=MACHINES, versions=VERSIONS) -> None:
    """One run of ``benchmark`` on each machine at each of ``versions`` (timestamps order them)."""
    records = [RunRecord(benchmark, v, 0, np.array([1.0, 1.1]), machine=m) for m in machines for v in versions]
    infos = [VersionInfo(v, timestamp=T0 + timedelta(days=VERSIONS.index(v))) for v in versions]
    store.add_runs(records, versions=infos)


def change(machine: str, version: str = "v3", previous: str = "v2", *, change: float = 0.10,
           ci: tuple[float, float] = (0.08, 0.12), p_value: float | None = 0.001, method: str = "auto",
           benchmark: str = "fft") -> Change:
    kind = "regression" if change > 0 else "improvement"
    return Change(benchmark, "default", machine, version, previous, change, ci[0], ci[1], kind, method, p_value)


def config(text: str, tmp_path: Path):
    return parse_config(tomllib.loads(text), path=tmp_path / "regbench.toml")


def events(store: Store, alert_id: int) -> list[str]:
    return [e.why or "" for e in alert_history(store, alert_id)]


# ------------------------------------------------------------------------------- the rule
def test_measured_step_needs_a_version_before_and_one_at_or_after():
    assert measured_step([0, 1, 2, 3], (3, 3))       # v2 before, v3 at the step
    assert measured_step([1, 7], (3, 5))             # a machine that skipped the versions between
    assert not measured_step([0, 1, 2], (3, 3))      # nothing at or after: it has not got there
    assert not measured_step([3, 4], (3, 3))         # nothing before the step
    assert not measured_step([], (3, 3))


# ------------------------------------------------------------------------------- grouping
def test_one_change_on_three_machines_is_one_alert_with_three_machines(store):
    fill(store)
    changes = [change("a", change=0.10, ci=(0.08, 0.12), p_value=0.001),
               change("b", change=0.12, ci=(0.09, 0.15), p_value=0.002, method="ci-overlap"),
               change("c", "v4", "v1", change=0.11, ci=(0.05, 0.17), p_value=None)]  # c skipped v2, v3
    out = record_alerts(store, changes, now=T0)
    (alert,) = out.created
    assert out.merged == () and set(out.placed.values()) == {alert.id}
    assert alert.spread == "several" and alert.machines == ("a", "b", "c") and alert.unchanged_on == ()
    assert [(e.machine, e.version, e.previous, e.change, e.ci_low, e.ci_high, e.p_value, e.methods)
            for e in alert.evidence] == [
        ("a", "v3", "v2", 0.10, 0.08, 0.12, 0.001, ("auto",)),
        ("b", "v3", "v2", 0.12, 0.09, 0.15, 0.002, ("ci-overlap",)),
        ("c", "v4", "v1", 0.11, 0.05, 0.17, None, ("auto",))]
    # the alert itself keeps the first machine's numbers
    assert (alert.machine, alert.change, alert.ci_low, alert.methods) == ("a", 0.10, 0.08, ("auto",))
    doc = alert.to_json()
    assert doc["spread"] == "several" and doc["held"] is False
    assert [m["machine"] for m in doc["machines"]] == ["a", "b", "c"] and doc["machines"][1]["p_value"] == 0.002
    assert list_alerts(store)[0].machines == ("a", "b", "c")
    # a second identical detection writes nothing, not even an event
    before = events(store, alert.id)
    again = record_alerts(store, changes, now=T0 + timedelta(hours=1))
    assert again.created == () and [a.id for a in again.merged] == [alert.id]
    assert events(store, alert.id) == before
    assert get_alert(store, alert.id).updated_at == T0


def test_across_machines_the_versions_must_overlap_and_the_kind_agree(store):
    fill(store)
    out = record_alerts(store, [change("a"), change("b", "v4", "v3"),                       # adjacent only
                                change("c", change=-0.1, ci=(-0.12, -0.08))], now=T0)      # other kind
    assert [(a.machine, a.kind, a.machines) for a in out.created] == [
        ("a", "regression", ("a",)), ("b", "regression", ("b",)), ("c", "improvement", ("c",))]


def test_a_machine_at_another_step_is_not_the_same_change(store):
    fill(store)
    (first,) = record_alerts(store, [change("a", "v3", "v2"), change("b", "v3", "v2")], now=T0).created
    # b is evidence of the first alert at v3: its step at v6 is another change, not more evidence
    out = record_alerts(store, [change("b", "v6", "v5")], now=T0)
    (second,) = out.created
    assert second.id != first.id and second.machines == ("b",)
    assert get_alert(store, first.id).machines == ("a", "b")


def test_evidence_of_a_machine_merges_methods_and_the_narrower_interval(store):
    fill(store)
    (alert,) = record_alerts(store, [change("a"), change("b", ci=(0.05, 0.15))], now=T0).created
    out = record_alerts(store, [change("b", ci=(0.09, 0.11), method="bootstrap-ci", change=0.1)],
                        now=T0 + timedelta(hours=1))
    assert out.created == () and [a.id for a in out.merged] == [alert.id]
    (b,) = get_alert(store, alert.id).also_on
    assert b.methods == ("auto", "bootstrap-ci") and (b.ci_low, b.ci_high) == (0.09, 0.11)
    assert (b.version, b.previous) == ("v3", "v2")
    assert events(store, alert.id)[-1] == ("evidence from b: also found by bootstrap-ci; narrower interval from "
                                           "bootstrap-ci [+9.00%, +11.00%] at v3")


def test_known_alerts_sees_another_machines_alert(store):
    fill(store)
    (alert,) = record_alerts(store, [change("a")], now=T0).created
    found = known_alerts(store, [change("b"), change("b", "v6", "v5")])
    assert [a.id if a is not None else None for a in found] == [alert.id, None]


# ----------------------------------------------------------------------- machine-specific
def test_a_change_others_measured_without_is_machine_specific(store):
    fill(store)
    fill(store, machines=("d",), versions=VERSIONS[:3])   # d has not reached v3 yet
    fill(store, "sort", machines=("a",))                   # sort runs on a only
    out = record_alerts(store, [change("a"), change("a", benchmark="sort")], now=T0)
    fft, sort = sorted(out.created, key=lambda a: a.benchmark)
    assert fft.spread == "machine-specific" and fft.unchanged_on == ("b", "c")
    assert sort.spread == "single" and sort.unchanged_on == ()
    assert fft.to_json()["spread"] == "machine-specific" and fft.to_json()["unchanged_on"] == ["b", "c"]
    assert get_alert(store, fft.id).unchanged_on == ("b", "c")
    # d measures v3 later, without the change: the next detection that records it says so
    fill(store, machines=("d",), versions=VERSIONS[3:])
    record_alerts(store, [change("a")], now=T0 + timedelta(days=1))
    assert get_alert(store, fft.id).unchanged_on == ("b", "c", "d")
    assert "measured without the change on d" in events(store, fft.id)[-1]
    before = events(store, fft.id)
    record_alerts(store, [change("a"), change("a", benchmark="sort")], now=T0 + timedelta(days=2))
    assert events(store, fft.id) == before and get_alert(store, fft.id).updated_at == T0 + timedelta(days=1)


def test_a_later_pass_adds_a_machine_and_keeps_the_triage(store):
    fill(store)
    (alert,) = record_alerts(store, [change("a")], now=T0).created
    assert alert.spread == "machine-specific"
    set_status(store, [alert.id], "acknowledged", who="ana", why="looking", now=T0)
    out = record_alerts(store, [change("b", "v4", "v2", ci=(0.07, 0.13))], now=T0 + timedelta(days=1))
    assert out.created == () and [a.id for a in out.merged] == [alert.id]
    now = get_alert(store, alert.id)
    assert now.status == "acknowledged" and now.machines == ("a", "b") and now.unchanged_on == ("c",)
    assert now.spread == "several"
    assert events(store, alert.id)[-1].startswith("evidence from b: +10.00% at v4 (since v2), found by auto")
    assert alert_history(store, alert.id)[-1].status == "acknowledged"
    assert alert_history(store, alert.id)[-1].kind == "note"  # the evidence did not set `acknowledged`
    # an invalid alert stays invalid when a third machine shows the change
    set_status(store, [alert.id], "invalid", who="ana", why="noisy lab", now=T0)
    record_alerts(store, [change("c")], now=T0 + timedelta(days=2))
    assert get_alert(store, alert.id).status == "invalid" and get_alert(store, alert.id).machines == ("a", "b", "c")


def test_a_fix_is_found_per_machine(store):
    fill(store)
    (reg,) = record_alerts(store, [change("a"), change("b")], now=T0).created
    out = record_alerts(store, [change("a", "v6", "v5", change=-0.1, ci=(-0.12, -0.08)),
                                change("b", "v6", "v5", change=-0.1, ci=(-0.12, -0.08))], now=T0)
    (imp,) = out.created
    assert [a.id for a in out.fixed] == [reg.id] and imp.machines == ("a", "b") and imp.restores == reg.id


def test_another_machines_evidence_is_a_note_in_the_history_not_a_status_change(store):
    """docs/realworld.md, a team's setup: a second machine's evidence of a fixed alert was
    recorded as `fixed by regbench ...: also seen on ci-b`, which the alerts page showed as a
    status change.  Histories stored that way read right too: the kind comes from the statuses."""
    fill(store)
    out = record_alerts(store, [change("a"), change("a", "v6", "v5", change=-0.1, ci=(-0.12, -0.08))], now=T0)
    reg, imp = out.created
    record_alerts(store, [change("b", ci=(0.09, 0.11))], now=T0 + timedelta(hours=1))
    history = alert_history(store, reg.id)
    assert [(e.status, e.kind, e.why.split(" (")[0]) for e in history] == [
        ("new", "status", "detected by auto: +10.00% at v3"),
        ("fixed", "status", "restored by v6"),
        ("fixed", "note", "measured without the change on b, c"),
        ("fixed", "note", "evidence from b: +10.00% at v3")]
    assert [(e.status, e.kind) for e in alert_history(store, imp.id)] == [("new", "status"), ("new", "note"),
                                                                          ("new", "note")]
    # as a history written before notes were told apart: the evidence under the status, then a triage
    with store.engine.begin() as conn:
        conn.execute(t.alert_event.insert().values(alert_id=reg.id, status="fixed", who="regbench",
                                                   at=T0 + timedelta(hours=2), why="also seen on c by auto: +10%"))
    set_status(store, [reg.id], "acknowledged", who="ana", why="still slow here", now=T0 + timedelta(hours=3))
    set_status(store, [reg.id], "new", who="ana", why="reopened", now=T0 + timedelta(hours=4))
    assert [(e.status, e.kind) for e in alert_history(store, reg.id)][4:] == [
        ("fixed", "note"), ("acknowledged", "status"), ("new", "status")]



def test_a_fix_told_by_another_machine_than_the_regressions_first(store):
    """The regression was first seen on b (its alert's own machine), a showed it too; a's
    history then shows the fix first. The fix was looked for among a's own alerts only, so
    whether a regression became `fixed` depended on which machine pushed first."""
    fill(store)
    (reg,) = record_alerts(store, [change("b", change=0.9, ci=(0.85, 0.95))], now=T0).created
    out = record_alerts(store, [change("a", change=1.0, ci=(0.9, 1.1)),
                                change("a", "v6", "v5", change=-0.5, ci=(-0.55, -0.45))], now=T0)
    (imp,) = out.created
    assert [a.id for a in out.fixed] == [reg.id] and imp.restores == reg.id
    assert get_alert(store, reg.id).status == "fixed" and get_alert(store, reg.id).machines == ("b", "a")


# ---------------------------------------------------------------------------- require_machines
def test_require_machines_holds_an_alert_until_enough_machines_show_it(store, tmp_path):
    fill(store)
    cfg = config("[alerts]\nrequire_machines = 2\n", tmp_path)
    sink = JsonSink("json", path=tmp_path / "alerts.json")
    out = record_alerts(store, [change("a")], config=cfg, now=T0)
    (alert,) = out.created
    assert alert.held and alert.hold_machines == 2 and out.held == (alert,)
    assert alert.to_json()["held"] is True
    assert events(store, alert.id)[-1] == ("measured without the change on b, c; held, not notified: seen on 1 "
                                           "of the 2 machines [alerts] require_machines asks")
    assert notify_pending(store, [sink], now=T0).sent == 0            # listed, not told
    assert [a.id for a in list_alerts(store)] == [alert.id]
    out = record_alerts(store, [change("b")], config=cfg, now=T0 + timedelta(days=1))
    assert out.created == () and [a.id for a in out.raised] == [alert.id] and out.held == ()
    raised = get_alert(store, alert.id)
    assert not raised.held and raised.status == "new" and raised.machines == ("a", "b")
    assert "raised: seen on 2 machines (a, b)" in events(store, alert.id)[-1]
    assert notify_pending(store, [sink], now=T0).sinks[0].sent == (alert.id,)


def test_a_change_on_enough_machines_in_one_pass_is_told_at_once(store, tmp_path):
    fill(store)
    cfg = config("[alerts]\nrequire_machines = 2\n", tmp_path)
    out = record_alerts(store, [change("a"), change("b"), change("a", benchmark="fft", version="v6",
                                                                 previous="v5")], config=cfg, now=T0)
    both, alone = out.created
    assert not both.held and both.machines == ("a", "b") and out.raised == ()  # never held
    assert not any("held" in why for why in events(store, both.id))
    assert alone.held and alone.spread == "machine-specific" and out.held == (alone,)


def test_a_held_alert_triaged_is_not_reopened_when_raised(store, tmp_path):
    fill(store)
    cfg = config("[alerts]\nrequire_machines = 2\n", tmp_path)
    (alert,) = record_alerts(store, [change("a")], config=cfg, now=T0).created
    set_status(store, [alert.id], "invalid", who="ana", why="a's kernel", now=T0)
    record_alerts(store, [change("b")], config=cfg, now=T0 + timedelta(days=1))
    now = get_alert(store, alert.id)
    assert now.status == "invalid" and not now.held
    assert notify_pending(store, [JsonSink("json", path=tmp_path / "a.json")], now=T0).sent == 0


def test_a_raised_alert_is_not_held_again_and_a_lower_setting_raises(store, tmp_path):
    fill(store)
    (told,) = record_alerts(store, [change("a")], now=T0).created          # default 1: told
    cfg3 = config("[alerts]\nrequire_machines = 3\n", tmp_path)
    record_alerts(store, [change("a")], config=cfg3, now=T0)
    assert not get_alert(store, told.id).held
    (held,) = record_alerts(store, [change("a", "v6", "v5")], config=cfg3, now=T0).created
    assert held.hold_machines == 3
    record_alerts(store, [change("a", "v6", "v5")], config=config("[alerts]\nrequire_machines = 4\n", tmp_path),
                  now=T0)
    assert get_alert(store, held.id).hold_machines == 4
    assert "still held, now until seen on 4 machines" in events(store, held.id)[-1]
    out = record_alerts(store, [change("a", "v6", "v5")], now=T0 + timedelta(days=1))  # setting back to 1
    assert [a.id for a in out.raised] == [held.id] and not get_alert(store, held.id).held


@pytest.mark.parametrize("value", ["0", "-1", "1.5", '"2"', "true"])
def test_require_machines_must_be_a_positive_integer(tmp_path, value):
    with pytest.raises(ConfigError, match=r"\[alerts\] `require_machines` must be an integer of at least 1") as info:
        config(f"[alerts]\nrequire_machines = {value}\n", tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'regbench.toml'}: ") and "\n" not in str(info.value)


def test_require_machines_defaults_to_one(tmp_path):
    assert config("", tmp_path).require_machines == 1
    assert config("[alerts]\nrequire_machines = 3\n", tmp_path).require_machines == 3


# ------------------------------------------------------------------------------------ schema
def test_alert_machine_table_matches_the_schema_module(store):
    insp = sa.inspect(store.engine)
    for table in (t.alert, t.alert_machine):
        assert [c["name"] for c in insp.get_columns(table.name)] == [c.name for c in table.columns]
    uniques = {u["name"]: u["column_names"] for u in insp.get_unique_constraints("alert_machine")}
    assert uniques["uq_alert_machine"] == ["alert_id", "machine_id"]


def test_a_store_at_0007_upgrades_with_its_alerts(tmp_path):
    from storetools import upgrade_to

    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0007")
        conn.execute(sa.text("INSERT INTO benchmark (id, name, unit, direction) VALUES (1, 'fft', 's', 'lower')"))
        conn.execute(sa.text("INSERT INTO version (id, name) VALUES (1, 'v0'), (2, 'v1')"))
        conn.execute(sa.text("INSERT INTO config (id, name) VALUES (1, 'default')"))
        conn.execute(sa.text("INSERT INTO machine (id, name) VALUES (1, 'a')"))
        conn.execute(sa.text(
            "INSERT INTO alert (id, uid, benchmark_id, config_id, machine_id, version_id, previous_id, kind, change, "
            "methods, status, created_at, updated_at) VALUES (1, 'k', 1, 1, 1, 2, 1, 'regression', 0.1, '[\"auto\"]', "
            "'new', '2024-05-01 12:00:00', '2024-05-01 12:00:00')"))
    engine.dispose()
    with Store(path, create=False) as s:
        assert s.schema_revision() == t.SCHEMA_REVISION
        (alert,) = list_alerts(s)
        assert (alert.machines, alert.held, alert.spread, alert.also_on) == (("a",), False, "single", ())


# ------------------------------------------------------------------------------- concurrency
def test_two_detections_at_once_on_two_machines_make_one_alert_per_step(store, store_url):
    """Two processes' detections (threads with stores of their own here) recording the same steps
    on two machines at the same moment: no unique constraint spans machines, so each step's
    alerts are serialized per benchmark and configuration (PostgreSQL: an advisory lock)."""
    import threading

    benchmarks = [f"b{k}" for k in range(12)]
    for b in benchmarks:
        fill(store, b, machines=("a", "b"))
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def detect(machine: str) -> None:
        try:
            with Store(store_url, create=False) as mine:
                barrier.wait()
                for b in benchmarks:
                    record_alerts(mine, [change(machine, benchmark=b)], now=T0)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=detect, args=(m,)) for m in ("a", "b")]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    alerts = list_alerts(store)
    assert sorted(a.benchmark for a in alerts) == sorted(benchmarks)
    assert all(sorted(a.machines) == ["a", "b"] for a in alerts)


# ---------------------------------------------------------------------------- notifications
def test_the_sinks_tell_each_machine(store, tmp_path):
    import io

    from regbench.notify.markdown import MarkdownSink
    from regbench.notify.terminal import TerminalSink
    from regbench.notify.webhook import payload

    fill(store)
    fill(store, "sort")
    record_alerts(store, [change("a"), change("b", change=0.12, ci=(0.09, 0.15)), change("c", "v4", "v1"),
                          change("b", benchmark="sort")], now=T0)
    everywhere, one = sorted(list_alerts(store), key=lambda a: a.benchmark)
    screen = io.StringIO()
    sinks = [TerminalSink(stream=screen), MarkdownSink(path=tmp_path / "pr.md")]
    assert notify_pending(store, sinks, now=T0).sent == 4
    assert "in fft on a (also on b, c) at v3 (since v2)" in screen.getvalue()
    table = (tmp_path / "pr.md").read_text()
    assert "| a, b, c |" in table and "| b (machine-specific) |" in table
    context = payload(everywhere, sink="hook")["blocks"][1]["elements"][0]["text"]
    assert ("machines: seen on 3 machines: a +10.00% [+8.00%, +12.00%] at v3 (since v2), p = 0.001, auto; "
            "b +12.00% [+9.00%, +15.00%] at v3 (since v2), p = 0.001, auto; "
            "c +10.00% [+8.00%, +12.00%] at v4 (since v1), p = 0.001, auto") in context
    assert payload(one, sink="hook")["regbench"]["alert"]["unchanged_on"] == ["a", "c"]


class Measured:
    """What each machine measured, given outright (as a history other than the store's)."""

    def __init__(self, versions: dict[str, list[str]]):
        self.versions = versions

    def measured_versions(self, benchmark: str, config: str) -> dict[str, list[str]]:
        return self.versions


def test_the_coverage_given_decides_which_machines_measured_the_step(store):
    fill(store)
    (alert,) = record_alerts(store, [change("a")], coverage=Measured({"a": VERSIONS, "b": ["v1", "v5"]}),
                             now=T0).created
    assert alert.unchanged_on == ("b",)  # c's runs in the store are not in the history given
    # read as a history where b has not reached the step yet: b is no longer said to be unchanged
    record_alerts(store, [change("a")], coverage=Measured({"a": VERSIONS, "b": ["v1", "v2"]}),
                  now=T0 + timedelta(hours=1))
    now = get_alert(store, alert.id)
    assert now.unchanged_on == () and now.spread == "single" and now.updated_at == T0 + timedelta(hours=1)
    assert events(store, alert.id)[-1] == "not measured around the step in the history read: b"


def test_a_history_counts_only_the_versions_on_its_line(store):
    from regbench.store import HistoryView

    shas = {v: f"{k:040x}" for k, v in enumerate(VERSIONS)}
    infos = [VersionInfo(v, commit=shas[v], timestamp=T0 + timedelta(days=k)) for k, v in enumerate(VERSIONS)]
    store.add_runs([RunRecord("fft", v, 0, np.array([1.0]), machine=m) for m in ("a", "b") for v in VERSIONS[:3]]
                   + [RunRecord("fft", v, 0, np.array([1.0]), machine="a") for v in VERSIONS[3:]]
                   + [RunRecord("fft", "v5", 0, np.array([1.0]), machine="b")], versions=infos)
    everything = HistoryView(store)
    assert everything.measured_versions("fft", "default")["b"] == ["v0", "v1", "v2", "v5"]
    line = HistoryView(store, tuple(shas[v] for v in VERSIONS if v != "v5"), "main")  # v5: a side branch
    assert line.measured_versions("fft", "default")["b"] == ["v0", "v1", "v2"]
    (alert,) = record_alerts(store, [change("a")], coverage=line, now=T0).created
    assert alert.spread == "single"        # on the line, b has not measured v3 yet
    (other,) = record_alerts(store, [change("a", "v6", "v5")], coverage=everything, now=T0).created
    assert other.spread == "single"        # b's v5 is the step's `previous`: nothing after it on b
    assert record_alerts(store, [change("a")], coverage=everything, now=T0).merged[0].unchanged_on == ("b",)
