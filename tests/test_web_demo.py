"""The demo's dashboard in a real Chromium: both planted changes at the right commits."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from regbench.demo_project import DemoRepo
from webtools import ConsoleLog, Server

playwright = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "d"
    out = subprocess.run([sys.executable, "-m", "regbench", "demo", "--dir", str(root), "--seed", "7"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return root, out.stdout


def _commits(root) -> list[str]:
    return subprocess.run(["git", "-C", str(root / "repo"), "log", "--reverse", "--format=%H"], capture_output=True,
                          text=True, check=True).stdout.split()


def _check_series_page(page, url: str, commits: list[str]) -> None:
    log = ConsoleLog(page)
    page.goto(url)
    page.wait_for_selector("body[data-ready=yes]", timeout=15_000)
    markers = page.locator("#changes li.change")
    found = {markers.nth(k).get_attribute("data-kind"): markers.nth(k).get_attribute("data-commit")
             for k in range(markers.count())}
    slower, faster = DemoRepo.slower_index, DemoRepo.faster_index
    assert found == {"regression": commits[slower], "improvement": commits[faster]}
    chart = page.locator("#chart")
    assert chart.get_attribute("data-versions") == chart.get_attribute("data-intervals") == str(len(commits))
    assert log.errors == []


def test_the_demo_writes_a_report_and_serve_shows_both_planted_changes(demo, browser, tmp_path):
    """One test for the static report and the live dashboard: the demo they read takes a minute,
    and two tests of one module may run in two pytest-xdist workers, each running it."""
    root, stdout = demo
    assert "both planted changes were found" in stdout
    opened = re.search(r"^Open (file://\S+)$", stdout, re.M)
    assert opened is not None and opened.group(1) == (root / "report" / "index.html").as_uri()
    index = (root / "report" / "data" / "index.js").read_text()
    sid = json.loads(index[index.index(",") + 1:-3])["series"][0][0]
    page = browser.new_page()
    page.goto(opened.group(1))
    page.wait_for_selector("body[data-ready=yes]")
    assert page.locator("#series tbody tr[data-state=changed]").count() == 1
    _check_series_page(page, (root / "report" / "series.html").as_uri() + f"?s={sid}", _commits(root))
    page.close()

    # `regbench serve` on the same store.
    server = Server(root / ".regbench" / "results.db", tmp_path / "serve.log")
    try:
        page = browser.new_page()
        page.goto(server.base)
        page.wait_for_selector("body[data-ready=yes]")
        sid = page.locator("#series tbody tr").first.get_attribute("data-series-id")
        _check_series_page(page, server.base + f"series.html?s={sid}", _commits(root))
        page.close()
    finally:
        server.stop()
