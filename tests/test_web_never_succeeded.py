"""The dashboard and the Atom feed of a failure alert of a benchmark that never succeeded (broken
from its first run, tests/test_failure_alert_never_succeeded.py): they say it never succeeded,
not "last ok at" or "since" the version it failed at (before, the alerts page said "since X",
the series page "last ok at X" and the feed "last ok at X", X being the first failing version).
A real git repository, real command benchmarks, ``regbench report`` in Debian's Chromium."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from regbench.errors import ExitStatus
from regbench.web.data import series_id

from test_failure_alert_never_succeeded import PROGRAM, alerts, cli, make_repo, toml

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def report(tmp_path, capsys):
    """A report of a store with one alert of a benchmark that never succeeded, and that alert."""
    repo = tmp_path / "repo"
    shas = make_repo(repo, [{"bench.py": PROGRAM, "regbench.toml": toml("parse"), "parse.broken": "x"},
                            {"notes/2": "2"}])
    cli(repo, capsys, "run", "--versions", f"{shas[0]},{shas[1]}", "--seed", "1", code=ExitStatus.FAILED)
    cli(repo, capsys, "detect", "--jobs", "1")
    [alert] = alerts(repo, capsys)
    assert alert["previous"] == alert["version"]  # no version worked
    cli(repo, capsys, "report", "-o", str(tmp_path / "out"))
    return tmp_path / "out", alert


def test_the_alerts_page_and_the_feed_say_it_never_succeeded(report):
    out, alert = report
    page = (out / "alerts.html").read_text()
    assert "never succeeded" in page and "since " not in page
    [entry] = ET.parse(out / "alerts.atom").getroot().findall(f"{ATOM}entry")
    summary = entry.find(f"{ATOM}summary").text
    assert f"every run failed from {alert['version']}" in summary and "it never succeeded: " in summary, summary
    assert "last ok" not in summary, summary


def test_the_series_page_says_it_never_succeeded(report, page):
    out, alert = report
    sid = series_id("parse", "default", alert["machine"])
    page.goto((out / "series.html").as_uri() + "?s=" + sid)
    page.wait_for_selector("body[data-ready=yes]", timeout=15_000)
    text = page.locator("#changes li.change").inner_text()
    assert "failing (every run) from" in text and "never succeeded" in text and "last ok" not in text, text
    assert page.console_log.errors == []
