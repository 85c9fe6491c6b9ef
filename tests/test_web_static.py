"""``regbench report -o DIR`` in a real Chromium over file:// (Playwright driving Debian's chromium)."""

from __future__ import annotations

import pytest

from regbench.cli.main import main
from regbench.errors import ExitStatus
from regbench.web.data import series_id
from webtools import T0, sha, synthetic_store

playwright = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    synthetic_store(root / "s.db").close()
    assert main(["--store", str(root / "s.db"), "report", "-o", str(root / "out")]) == 0
    return root / "out"


def _ready(page) -> None:
    page.wait_for_selector("body[data-ready=yes]", timeout=15_000)


def test_every_page_of_the_report_loads_without_console_errors(report, page):
    changed = series_id("b0", "default", "local")
    diagnosis = sorted(p.name for p in report.glob("diagnosis-*.html"))
    assert len(diagnosis) == 3
    for name, scripted in [("index.html", True), (f"series.html?s={changed}", True), ("alerts.html", False),
                           ("compare.html", False), (diagnosis[0], False)]:
        page.goto((report / name.split("?")[0]).as_uri() + ("?" + name.split("?")[1] if "?" in name else ""))
        if scripted:
            _ready(page)
        else:
            page.wait_for_load_state("load")
        assert page.console_log.errors == [], name
    # read-only: no form anywhere in the report
    assert not any("<form" in p.read_text() and "method=\"post\"" in p.read_text() for p in report.glob("*.html"))
    # the feed holds the alert
    import xml.etree.ElementTree as ET

    entries = ET.parse(report / "alerts.atom").getroot().findall("{http://www.w3.org/2005/Atom}entry")
    assert len(entries) == 1
    # the diagnosis page shows its plots (drawn as PNG files beside it)
    assert page.locator(".plots img").count() == 3
    assert all(page.evaluate("[...document.images].map(i => i.naturalWidth > 0)"))


def test_the_overview_filters_by_state_and_name(report, page):
    page.goto((report / "index.html").as_uri())
    _ready(page)
    rows = page.locator("#series tbody tr")
    assert rows.count() == 6
    assert page.locator("#series svg.spark polyline").count() == 6
    page.select_option("#f-state", "changed")
    _ready(page)
    assert rows.count() == 1
    assert rows.first.get_attribute("data-series-id") == series_id("b0", "default", "local")
    page.select_option("#f-state", "")
    page.fill("#search", "b2")
    _ready(page)
    assert [rows.nth(k).get_attribute("data-state") for k in range(rows.count())] == ["noisy", "noisy"]
    assert page.console_log.errors == []


def test_the_series_chart_shows_intervals_the_change_and_every_run_on_demand(report, page):
    page.goto((report / "series.html").as_uri() + "?s=" + series_id("b0", "default", "local"))
    _ready(page)
    chart = page.locator("#chart")
    assert chart.get_attribute("data-versions") == "8"
    assert chart.get_attribute("data-intervals") == "8"
    assert chart.get_attribute("data-runs") == "0"
    assert page.locator("#chart canvas").count() == 1
    marker = page.locator("#changes li.change")
    assert marker.count() == 1
    assert marker.get_attribute("data-commit") == sha(4)
    assert marker.get_attribute("data-previous") == sha(3)
    assert float(marker.get_attribute("data-change")) == pytest.approx(0.2)
    assert "+20.0% [+18.0%, +22.0%]" in marker.inner_text()
    # drag across the middle of the plot: the chart zooms in on the versions under it
    full = float(chart.get_attribute("data-xmax")) - float(chart.get_attribute("data-xmin"))
    box = page.locator("#chart .u-over").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.3, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
    page.mouse.up()
    zoomed = float(chart.get_attribute("data-xmax")) - float(chart.get_attribute("data-xmin"))
    assert zoomed == pytest.approx(0.3 * full, rel=0.1)
    page.dblclick("#chart .u-over")
    assert float(chart.get_attribute("data-xmax")) - float(chart.get_attribute("data-xmin")) == pytest.approx(full)
    page.click("#show-runs")
    page.wait_for_selector("body[data-runs=yes]")
    assert chart.get_attribute("data-runs") == str(8 * 4)
    # the configuration selector leads to the same benchmark's other series
    page.select_option("#config", "fast")
    page.wait_for_url(f"**s={series_id('b0', 'fast', 'local')}")
    _ready(page)
    assert page.locator("#changes li.change").count() == 0
    assert page.console_log.errors == []


def test_an_unknown_series_in_the_report_says_what_was_not_found(report, page):
    page.goto((report / "series.html").as_uri() + "?s=000000000000")
    _ready(page)
    assert page.locator("#error").inner_text() == "No series 000000000000 in this report."


def test_the_overview_pages_through_many_series(tmp_path, page):
    import numpy as np

    from regbench.model import RunRecord
    from regbench.store import Store

    rng = np.random.default_rng(1)
    with Store(tmp_path / "many.db") as store:
        store.add_runs([RunRecord(f"bench{b:03d}", v, r, 1 + 0.01 * rng.standard_normal(5))
                        for b in range(120) for v in ("v1", "v2") for r in range(2)])
    assert main(["--store", str(tmp_path / "many.db"), "report", "--no-diagnosis", "-o", str(tmp_path / "out")]) == 0
    assert len(list((tmp_path / "out" / "data" / "spark").glob("*.js"))) == 2  # 100 series a file
    page.goto((tmp_path / "out" / "index.html").as_uri())
    _ready(page)
    assert page.locator("#series tbody tr").count() == 50
    assert page.locator("#page-info").inner_text() == "page 1 of 3"
    page.click("#next")
    page.click("#next")
    _ready(page)
    assert page.locator("#series tbody tr").count() == 20
    assert page.locator("#series tbody tr svg.spark").count() == 20  # from the second sparkline file
    assert page.console_log.errors == []


def test_a_report_of_a_missing_store_is_a_one_line_error(tmp_path, capsys):
    assert main(["--store", str(tmp_path / "none.db"), "report", "-o", str(tmp_path / "out")]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert err.startswith("error: no results store at") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_the_report_needs_no_network_and_links_commits_when_a_url_is_set(tmp_path):
    import re

    from regbench.store import Store
    from regbench.web.data import Dashboard
    from regbench.web.static_site import write_report

    synthetic_store(tmp_path / "s.db").close()
    with Store(tmp_path / "s.db", create=False) as store:
        dash = Dashboard(store, project="demo", url="https://example.org/team/project/").load()
        write_report(dash, tmp_path / "out", diagnosis=False)
        payload = dash.series_payload(series_id("b0", "default", "local"))
    assert payload["changes"][0]["commit_url"] == f"https://example.org/team/project/commit/{sha(4)}"
    assert payload["versions"][0]["commit_url"] == f"https://example.org/team/project/commit/{sha(0)}"
    alerts = (tmp_path / "out" / "alerts.html").read_text()
    assert f'href="https://example.org/team/project/commit/{sha(4)}"' in alerts
    for html in (tmp_path / "out").glob("*.html"):
        loaded = re.findall(r'<(?:script|link|img)[^>]*(?:src|href)="([^"]*)"', html.read_text())
        assert loaded and all(not re.match(r"^[a-z]+://", u) for u in loaded if u != "data:,"), html.name


def test_project_url_is_checked():
    from regbench.config import parse_config
    from regbench.errors import ConfigError

    assert parse_config({"project": {"url": "https://example.org/team/project"}}).url == "https://example.org/team/project"
    assert parse_config({}).url is None
    with pytest.raises(ConfigError, match=r"\[project\] `url` must be the repository's web page \(https://...\), got"):
        parse_config({"project": {"url": "example.org/team"}})


def test_tagged_versions_are_shown_by_their_tags(tmp_path, page):
    """As on the command line, a version with a tag is shown by it (the alert's versions, the
    change under the chart, the version table and the compare page's choices); links keep the
    stored name."""
    from regbench.model import VersionAlias

    from webtools import T0
    from regbench.model import VersionInfo

    store = synthetic_store(tmp_path / "s.db")
    store.ensure_versions([VersionInfo(sha(k), commit=sha(k), timestamp=T0) for k in (3, 4, 7)],
                          aliases={sha(3): [VersionAlias("v1.0.3")], sha(4): [VersionAlias("v1.0.4")],
                                   sha(7): [VersionAlias("v1.1.0"), VersionAlias("main", "branch")]})
    store.close()
    assert main(["--store", str(tmp_path / "s.db"), "report", "-o", str(tmp_path / "out")]) == 0
    alerts = (tmp_path / "out" / "alerts.html").read_text()
    assert ">v1.0.4<" in alerts and "since v1.0.3" in alerts
    # The report compares the last two versions: 7 (tagged; a branch is no label) against 6.
    assert (f"B = <strong>v1.1.0</strong> against A = <strong>{sha(6)}</strong>"
            in (tmp_path / "out" / "compare.html").read_text())
    page.goto((tmp_path / "out" / "series.html").as_uri() + "?s=" + series_id("b0", "default", "local"))
    _ready(page)
    marker = page.locator("#changes li.change")
    assert marker.get_attribute("data-version") == sha(4) and "v1.0.4" in marker.inner_text()
    assert page.locator(f'tr[data-version="{sha(4)}"] td').first.inner_text() == "v1.0.4"
    assert page.locator(f'tr[data-version="{sha(5)}"] td').first.inner_text() == sha(5)[:12]
    assert page.console_log.errors == []


def test_a_change_seen_on_two_machines_marks_both_series_changed(tmp_path):
    """One alert per change across machines: the second machine's evidence is the alert's too.
    Its series was shown `too noisy to judge` (or `stable`) without the change under its chart,
    though `alerts list` names both machines."""
    from datetime import timedelta

    import numpy as np

    from regbench.detect.alerts import record_alerts
    from regbench.detect.base import Change
    from regbench.model import RunRecord, VersionInfo
    from regbench.store import Store
    from regbench.web.data import Dashboard

    rng = np.random.default_rng(1)
    versions = [VersionInfo(name=sha(k), commit=sha(k), timestamp=T0 + timedelta(days=k)) for k in range(6)]
    with Store(tmp_path / "s.db") as store:
        store.add_runs([RunRecord("b", sha(k), r, (2.0 if k >= 3 else 1.0) * (1 + 0.005 * rng.standard_normal(10)),
                                  machine=m) for m in ("m1", "m2") for k in range(6) for r in range(4)],
                       versions=versions)
        outcome = record_alerts(store, [Change("b", "default", "m1", sha(3), sha(2), 1.0, 0.9, 1.1, "regression", "t"),
                                        Change("b", "default", "m2", sha(3), sha(2), 0.95, 0.9, 1.0, "regression", "t")],
                                now=T0)
        assert [a.machines for a in outcome.created] == [("m1", "m2")]  # one alert, m2 its evidence
        dash = Dashboard(store).load()
        states = {s.machine: s.state for s in dash.series}
        assert states == {"m1": "changed", "m2": "changed"}
        [change] = dash.series_payload(series_id("b", "default", "m2"))["changes"]
    assert (change["alert"], change["version"], change["previous"], change["change"]) == (1, sha(3), sha(2), 0.95)
    assert change["index"] == 3
