"""A creep's alert names its span (``until``), end to end.

``auto`` reports a creeping degradation (several small steps of one sign, each below the minimum
change; Bulej et al. 2005, s.2.3) as one change from ``version`` to ``until``.  Its alert used to
keep ``version`` and ``previous`` only, so every message read as if one commit made the ramp's
whole change.  Here a real creep goes through ``regbench detect --notify`` into a real SQLite
store, and the stored alert, ``regbench alerts``, every sink's message, the API and the dashboard
name the span; a re-found creep is the same alert; and a step's alert reads as before.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

from regbench.cli.main import _register, cli
from regbench.detect import Change
from regbench.detect.alerts import record_alerts
from regbench.model import RunRecord, VersionInfo
from regbench.notify.smtp import message
from regbench.notify.webhook import payload
from regbench.store import Store
from regbench.store.alerts import alert_history, get_alert, list_alerts
from webtools import Server

T0 = datetime(2024, 5, 1, 12, 0, 0)
#: 12 versions at one level, a ramp of 6 versions each 2% slower (below the 3% minimum change, so
#: no single step is a change), then 12 at the new level: `auto` finds one creep, v12 .. v17
#: (since v11), +12.6% in all, on every seed tried (0-5).
CREEP = [1.0] * 12 + [1.02 ** k for k in range(1, 7)] + [1.02 ** 6] * 12
#: The same length with one +12% step at v12: one change, no creep.
STEP = [1.0] * 12 + [1.12] * 18


def add_history(store: Store, levels, *, start: int = 0, seed: int = 0, machine: str = "local") -> None:
    """Five runs of ten samples a version (0.5% noise) at each of ``levels`` on ``machine``,
    versions ``v{start:02d}`` on, one day apart."""
    rng = np.random.default_rng(seed)
    names = [f"v{k:02d}" for k in range(start, start + len(levels))]
    store.add_runs([RunRecord("parse", name, r, level * np.exp(rng.normal(0, 0.005, 10)), machine=machine)
                    for name, level in zip(names, levels, strict=True) for r in range(5)],
                   versions=[VersionInfo(name, timestamp=T0 + timedelta(days=start + k))
                             for k, name in enumerate(names)])


@pytest.fixture
def project(tmp_path):
    """A project folder with a JSON and a Markdown sink, and its store path."""
    (tmp_path / "regbench.toml").write_text(
        '[[notify]]\ntype = "json"\npath = "out/alerts.json"\n\n'
        '[[notify]]\ntype = "markdown"\npath = "out/alerts.md"\n')
    _register()
    return tmp_path, tmp_path / "r.db"


def first_json(text: str):
    """The JSON document at the start of ``text`` (CliRunner's output holds standard error too, where
    ``detect --notify --format json`` says what each sink did)."""
    return json.JSONDecoder().raw_decode(text)[0]


def regbench(project, *args) -> str:
    root, store = project
    result = CliRunner().invoke(cli, ["--store", str(store), "--config", str(root / "regbench.toml"), *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_creep_alert_carries_its_span_to_every_reader(project):
    root, path = project
    with Store(path) as store:
        add_history(store, CREEP)
    detected = first_json(regbench(project, "detect", "--notify", "--format", "json"))
    assert [(d["version"], d["previous"], d.get("until")) for d in detected] == [("v12", "v11", "v17")]

    with Store(path, create=False) as store:
        (alert,) = list_alerts(store)
        assert (alert.version, alert.previous, alert.until) == ("v12", "v11", "v17")
        assert get_alert(store, alert.id).until == "v17"

    # regbench alerts: the JSON has `until`, the table and `show` the span in words
    (listed,) = json.loads(regbench(project, "alerts", "list", "--format", "json"))
    assert listed["until"] == "v17" and listed["version"] == "v12"
    assert "v12 .. v17" in regbench(project, "alerts", "list")
    shown = regbench(project, "alerts", "show", str(alert.id))
    assert f"in parse on {alert.machine} at v12 .. v17 (since v11; a creep, each step below the minimum change: " \
           "no single commit made it), alert #1" in shown.splitlines()[0]
    assert "  span: a creep over v12 .. v17 (since v11)" in shown
    assert json.loads(regbench(project, "alerts", "show", str(alert.id), "--format", "json"))["until"] == "v17"

    # the sinks detect --notify sent it to
    (told,) = json.loads((root / "out" / "alerts.json").read_text())["alerts"]
    assert (told["version"], told["previous"], told["until"]) == ("v12", "v11", "v17")
    assert "| v12 .. v17 (a creep) | v11 |" in (root / "out" / "alerts.md").read_text()
    # ... and what a webhook and an e-mail would carry (the messages of the stored alert)
    post = payload(alert, sink="chat")
    assert post["regbench"]["alert"]["until"] == "v17" and "at v12 .. v17 (since v11; a creep" in post["text"]
    assert "span: a creep over v12 .. v17" in post["blocks"][-1]["elements"][0]["text"]
    mail = message(alert, sender="a@b.org", to=["c@d.org"], sink="mail", now=T0)
    assert "at v12 .. v17 (a creep)" in mail["Subject"] and "at v12 .. v17 (since v11; a creep" in mail.get_content()

    # the API and the dashboard
    (root / "serve.toml").write_text("[serve]\npublic_reads = true\n")
    server = Server(path, root / "serve.log", config=root / "serve.toml")
    try:
        (api,) = httpx.get(server.base + "api/v1/alerts").json()["alerts"]
        html = httpx.get(server.base + "alerts.html").text
        feed = httpx.get(server.base + "alerts.atom").text
    finally:
        server.stop()
    assert (api["version"], api["until"]) == ("v12", "v17")
    assert "v12 .. v17<br><span class=\"creep\">a creep: no single commit made it</span>" in html
    assert "at v12 .. v17 since v11; a creep: no single commit made it" in feed


def test_a_creep_found_again_is_the_same_alert(project):
    root, path = project
    with Store(path) as store:
        add_history(store, CREEP)
    regbench(project, "detect", "--notify")
    regbench(project, "detect", "--notify")  # the same history again
    with Store(path, create=False) as store:  # ... and with later versions at the new level
        add_history(store, [1.02 ** 6] * 6, start=len(CREEP), seed=1)
    again = first_json(regbench(project, "detect", "--notify", "--format", "json"))
    again += first_json(regbench(project, "detect", "--notify", "--incremental", "--format", "json"))
    with Store(path, create=False) as store:
        (alert,) = list_alerts(store)
    assert alert.until == "v17"
    assert again and all(d["alert"]["id"] == alert.id for d in again)
    assert len(json.loads((root / "out" / "alerts.json").read_text())["alerts"]) == 1  # told once


def test_a_steps_alert_has_no_span(project):
    root, path = project
    with Store(path) as store:
        add_history(store, STEP)
    (detected,) = first_json(regbench(project, "detect", "--notify", "--format", "json"))
    assert "until" not in detected
    with Store(path, create=False) as store:
        (alert,) = list_alerts(store)
    assert (alert.version, alert.previous, alert.until) == ("v12", "v11", None)
    (told,) = json.loads((root / "out" / "alerts.json").read_text())["alerts"]
    assert "until" not in told and told["version"] == "v12"
    shown = regbench(project, "alerts", "show", str(alert.id))
    assert f"in parse on {alert.machine} at v12 (since v11), alert #1" in shown.splitlines()[0]
    assert " .. " not in shown and "creep" not in shown
    assert "creep" not in (root / "out" / "alerts.md").read_text()


def test_a_creeps_span_goes_with_the_numbers_it_came_with(tmp_path):
    """Merged into a known alert, a change's ``until`` is replaced together with its change and
    interval (the narrower interval wins): a creep's total never reads as one commit's, and a
    step's numbers never carry a creep's span."""
    with Store(tmp_path / "r.db") as store:
        add_history(store, CREEP)
        wide = Change("parse", "default", "local", "v12", "v11", 0.02, 0.001, 0.04, "regression", "ci-overlap")
        creep = Change("parse", "default", "local", "v12", "v11", 0.126, 0.12, 0.13, "regression", "auto",
                       until="v17")
        (alert,) = record_alerts(store, [wide], now=T0).created
        assert alert.until is None
        (alert,) = record_alerts(store, [creep], now=T0).merged  # narrower: its numbers and its span
        assert (alert.change, alert.until, alert.methods) == (0.126, "v17", ("auto", "ci-overlap"))
        assert "a creep over v12 .. v17" in alert_history(store, alert.id)[-1].why
        # the same creep with a wider interval changes nothing; a narrower step takes the span away
        wider = replace(creep, ci_low=0.0, ci_high=0.3, until="v19")
        assert record_alerts(store, [wider], now=T0).merged[0].until == "v17"
        narrow = Change("parse", "default", "local", "v12", "v11", 0.02, 0.019, 0.021, "regression", "ci-overlap")
        (alert,) = record_alerts(store, [narrow], now=T0).merged
        assert (alert.change, alert.until) == (0.02, None)
        assert "a step at v12, not a creep over v12 .. v17" in alert_history(store, alert.id)[-1].why
        assert len(list_alerts(store)) == 1
