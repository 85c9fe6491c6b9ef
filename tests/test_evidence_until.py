"""A creep seen on a second machine keeps its span in that machine's evidence (``until``).

An alert keeps its own machine's creep span in ``alert.until`` (schema 0021,
tests/test_alert_until.py).  The same creep seen on another machine is kept as the alert's
evidence of that machine (:class:`~regbench.model.MachineEvidence`, table ``alert_machine``),
which used to have ``version`` and ``previous`` only: the second machine's ramp read as a
one-commit step.  Here a real creep on two machines goes through ``regbench detect --notify`` into
a real SQLite store, and the stored evidence, a reopened store, ``regbench alerts``, the sinks'
messages and JSON and the dashboard's series payload name the second machine's own span; a
narrower interval replaces the span with the numbers it came with; and schema 0022 upgrades a
store of 0021 and downgrades back.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import numpy as np
import sqlalchemy as sa

from regbench.detect import Change
from regbench.detect.alerts import record_alerts
from regbench.model import RunRecord
from regbench.notify.base import machines_text
from regbench.notify.smtp import message
from regbench.notify.webhook import payload
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.alerts import alert_history, get_alert, list_alerts
from regbench.web.data import Dashboard, series_id

from storetools import downgrade_to, upgrade_to
import test_alert_until
from test_alert_until import add_history, regbench

#: The project folder with a JSON and a Markdown sink, as test_alert_until has it.
project = test_alert_until.project

T0 = datetime(2024, 5, 1, 12, 0, 0)
#: Machine a: 12 versions at one level, a ramp of 6 versions each 2% slower (below the 3% minimum
#: change), then 12 at the new level: `auto` finds one creep, v12 .. v17 (since v11).
CREEP_A = [1.0] * 12 + [1.02 ** k for k in range(1, 7)] + [1.02 ** 6] * 12
#: Machine b: the same creep, a step shorter: `auto` finds v12 .. v16 (since v11) there (seeds
#: 0-5 on b against 0-4 on a all give these spans), so b's span is not a's.
CREEP_B = [1.0] * 12 + [1.02 ** k for k in range(1, 6)] + [1.02 ** 5] * 13


def first_json(text: str):
    """The JSON document at the start of ``text`` (CliRunner's output holds standard error too)."""
    return json.JSONDecoder().raw_decode(text)[0]


def test_a_creep_on_a_second_machine_keeps_its_span_to_every_reader(project):
    root, path = project
    with Store(path) as store:
        add_history(store, CREEP_A, machine="a", seed=0)
        add_history(store, CREEP_B, machine="b", seed=1)
    detected = first_json(regbench(project, "detect", "--notify", "--format", "json"))
    assert sorted((d["machine"], d["version"], d["previous"], d.get("until")) for d in detected) == [
        ("a", "v12", "v11", "v17"), ("b", "v12", "v11", "v16")]

    # one alert: a's creep, with b's creep as its evidence, each with its own span ...
    with Store(path, create=False) as store:
        (alert,) = list_alerts(store)
        assert (alert.machine, alert.version, alert.previous, alert.until) == ("a", "v12", "v11", "v17")
        (b,) = alert.also_on
        assert (b.machine, b.version, b.previous, b.until) == ("b", "v12", "v11", "v16")
        assert [(e.machine, e.until) for e in alert.evidence] == [("a", "v17"), ("b", "v16")]
        noted = [e.why or "" for e in alert_history(store, alert.id)]
        assert any(w.startswith("evidence from b: ") and " at v12 .. v16 (since v11), found by auto" in w
                   for w in noted), noted
    # ... which a store opened again reads back
    with Store(path, create=False) as store:
        assert get_alert(store, alert.id).also_on[0].until == "v16"

    # regbench alerts: the JSON's machines have each one's span, `show` says it in words
    (listed,) = json.loads(regbench(project, "alerts", "list", "--format", "json"))
    assert [(m["machine"], m["version"], m["until"]) for m in listed["machines"]] == [
        ("a", "v12", "v17"), ("b", "v12", "v16")]
    assert list(listed["machines"][1])[-1] == "until"  # added at the end, the other keys as before
    shown = regbench(project, "alerts", "show", str(alert.id))
    (line,) = [x for x in shown.splitlines() if x.strip().startswith("machines:")]
    assert "seen on 2 machines: a +" in line and " at v12 .. v17 (since v11; a creep), " in line
    assert "; b +" in line and " at v12 .. v16 (since v11; a creep), " in line
    shown_json = json.loads(regbench(project, "alerts", "show", str(alert.id), "--format", "json"))
    assert shown_json["machines"][1]["until"] == "v16"

    # the sinks detect --notify sent it to, and what a webhook and an e-mail would carry
    (told,) = json.loads((root / "out" / "alerts.json").read_text())["alerts"]
    assert [(m["machine"], m["until"]) for m in told["machines"]] == [("a", "v17"), ("b", "v16")]
    post = payload(alert, sink="chat")
    assert post["regbench"]["alert"]["machines"][1]["until"] == "v16"
    assert " at v12 .. v16 (since v11; a creep), " in post["blocks"][-1]["elements"][0]["text"]
    mail = message(alert, sender="a@b.org", to=["c@d.org"], sink="mail", now=T0)
    assert " at v12 .. v16 (since v11; a creep), " in mail.get_content()

    # the dashboard's (and the API's) series payload of b lists b's change with b's span
    with Store(path, create=False) as store:
        dash = Dashboard(store).load()
        (on_b,) = dash.series_payload(series_id("parse", "default", "b"))["changes"]
        (on_a,) = dash.series_payload(series_id("parse", "default", "a"))["changes"]
    assert (on_b["alert"], on_b["version"], on_b["until"]) == (alert.id, "v12", "v16")
    assert on_a["until"] == "v17"


# ------------------------------------------------------------------------- the merge rule
def change(machine: str, *, change: float = 0.126, ci: tuple[float, float] = (0.12, 0.13),
           until: str | None = None, method: str = "auto") -> Change:
    return Change("parse", "default", machine, "v12", "v11", change, ci[0], ci[1], "regression", method,
                  until=until)


def test_a_machines_span_goes_with_the_numbers_it_came_with(tmp_path):
    """Merged into a machine's evidence, a change's ``until`` is replaced together with its change
    and interval (the narrower interval wins), as the alert's own (_merge)."""
    with Store(tmp_path / "r.db") as store:
        add_history(store, CREEP_A, machine="a", seed=0)
        add_history(store, CREEP_B, machine="b", seed=1)
        (alert,) = record_alerts(store, [change("a", until="v17"),
                                         change("b", change=0.02, ci=(0.001, 0.04), method="ci-overlap")],
                                 now=T0).created
        (b,) = alert.also_on
        assert (b.change, b.until) == (0.02, None)               # a step so far
        assert "until" not in alert.to_json()["machines"][1]     # and its JSON reads as before

        # a narrower creep: its numbers and its span
        (alert,) = record_alerts(store, [change("b", ci=(0.121, 0.13), until="v16")], now=T0).merged
        (b,) = alert.also_on
        assert (b.change, b.ci_low, b.until, b.methods) == (0.126, 0.121, "v16", ("auto", "ci-overlap"))
        why = alert_history(store, alert.id)[-1].why or ""
        assert why.startswith("evidence from b: ") and "at v12 .. v16; a creep over v12 .. v16" in why
        assert " at v12 .. v16 (since v11; a creep), " in machines_text(alert)

        # the same creep with a wider interval changes nothing, a narrower step takes the span away
        wider = change("b", ci=(0.0, 0.3), until="v19")
        assert record_alerts(store, [wider], now=T0).merged[0].also_on[0].until == "v16"
        (alert,) = record_alerts(store, [change("b", change=0.02, ci=(0.019, 0.021), method="ci-overlap")],
                                 now=T0).merged
        assert (alert.also_on[0].change, alert.also_on[0].until) == (0.02, None)
        assert "a step at v12, not a creep over v12 .. v16" in (alert_history(store, alert.id)[-1].why or "")
        # the alert's own span is its own machine's: untouched by b's
        assert alert.until == "v17" and len(list_alerts(store)) == 1
    with Store(tmp_path / "r.db", create=False) as store:
        assert get_alert(store, alert.id).also_on[0].until is None


# ------------------------------------------------------------------------------ schema 0022
def alert_machine_shape(url: str) -> tuple:
    engine = sa.create_engine(url)
    try:
        insp = sa.inspect(engine)
        return (sorted(c["name"] for c in insp.get_columns("alert_machine")),
                sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints("alert_machine")),
                sorted((i["name"], tuple(i["column_names"])) for i in insp.get_indexes("alert_machine")),
                sorted((tuple(f["constrained_columns"]), f["referred_table"])
                       for f in insp.get_foreign_keys("alert_machine")))
    finally:
        engine.dispose()


def test_0022_upgrades_a_0021_store_and_downgrades_back(store_url):
    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as conn:  # a store of 0021 with an alert seen on a second machine
            upgrade_to(conn, "0021")

            def add(table: sa.Table, **values) -> int:
                return conn.execute(sa.insert(table).values(**values)).inserted_primary_key[0]

            bench = add(t.benchmark, name="parse", unit="s", direction="lower")
            cfg = add(t.config, name="default", params=None)
            a, b = (add(t.machine, name=m, fingerprint=None) for m in ("a", "b"))
            v11, v12 = (add(t.version, name=v, commit_sha=None, timestamp=T0 + timedelta(days=k), timestamp_text=None)
                        for k, v in enumerate(("v11", "v12")))
            alert = add(t.alert, uid="0" * 32, benchmark_id=bench, config_id=cfg, machine_id=a, version_id=v12,
                        previous_id=v11, kind="regression", change=0.126, ci_low=0.12, ci_high=0.13, p_value=0.001,
                        methods=["auto"], status="new", fixed_by_id=None, fixed_by_alert_id=None, created_at=T0,
                        updated_at=T0, until="v17")
            add(t.alert_machine, alert_id=alert, machine_id=b, changed=True, version_id=v12, previous_id=v11,
                change=0.02, ci_low=0.001, ci_high=0.04, p_value=0.01, methods=["ci-overlap"], created_at=T0,
                updated_at=T0)
    finally:
        engine.dispose()
    at_0021 = alert_machine_shape(store_url)
    assert "until" not in at_0021[0]

    with Store(store_url, create=False) as s:  # opening it upgrades it: old evidence is a step
        assert s.schema_revision() == t.SCHEMA_REVISION  # (0022 or later)
        (b,) = get_alert(s, alert).also_on
        assert (b.machine, b.version, b.change, b.until) == ("b", "v12", 0.02, None)
        s.add_runs([RunRecord("parse", v, 0, np.array([1.0, 1.1]), machine=m) for m in ("a", "b")
                    for v in ("v11", "v12")])
        narrower = change("b", ci=(0.121, 0.13), until="v16")
        assert record_alerts(s, [narrower], now=T0).merged[0].also_on[0].until == "v16"
    assert "until" in alert_machine_shape(store_url)[0]

    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as conn:
            downgrade_to(conn, "0021")
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "0021"
            rows = conn.execute(sa.select(t.alert_machine.c.change, t.alert_machine.c.ci_low)).all()
    finally:
        engine.dispose()
    assert alert_machine_shape(store_url) == at_0021  # the column gone, constraints and indexes kept
    assert [tuple(r) for r in rows] == [(0.126, 0.121)]  # the evidence kept

    with Store(store_url) as s:  # up again: the span forgotten by the downgrade, the rest intact
        (b,) = get_alert(s, alert).also_on
        assert (b.machine, b.change, b.ci_low, b.until) == ("b", 0.126, 0.121, None)
        assert get_alert(s, alert).until == "v17"
