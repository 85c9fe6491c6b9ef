"""`regbench demo` end to end: real git, real builds, real processes, SQLite, detection, and its
dashboard in a real Chromium (the static report and `regbench serve`), both planted changes at
the right commits.

One test: the demo takes about a minute, and two tests, even of one module, may run in two
pytest-xdist workers, each running it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from regbench.demo_project import DemoRepo
from webtools import ConsoleLog, Server

pytestmark = pytest.mark.slow


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


def test_demo_finds_the_planted_slowdown_and_speedup_and_its_dashboards_show_them(tmp_path, request):
    root = tmp_path / "demo"
    out = subprocess.run([sys.executable, "-m", "regbench", "demo", "--dir", str(root), "--seed", "7"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "both planted changes were found" in out.stdout
    assert str(root / ".regbench" / "results.db") in out.stdout

    shas = subprocess.run(["git", "-C", str(root / "repo"), "log", "--reverse", "--format=%H"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert len(shas) == 8
    detect = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", str(root / ".regbench" / "results.db"),
                             "detect", "--format", "json"],
                            capture_output=True, text=True, timeout=120)
    assert detect.returncode == 0, detect.stderr
    changes = json.loads(detect.stdout)
    # Commit 4 (index 3) makes the program slower, commit 7 (index 6) faster; nothing else moves.
    assert [(c["version"], c["previous"], c["kind"]) for c in changes] == [
        (shas[3][:10], shas[2][:10], "regression"),
        (shas[6][:10], shas[5][:10], "improvement"),
    ]
    assert changes[0]["change"] > 0.25 and changes[1]["change"] < -0.25
    for c in changes:
        assert c["ci_low"] < c["change"] < c["ci_high"] and c["method"] == "auto"

    show = subprocess.run([sys.executable, "-m", "regbench.cli.main", "show"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert "80 runs in" in show.stdout  # 8 commits x 10 runs, every one ok
    assert "Failed runs" not in show.stdout

    # The static report the demo wrote, then `regbench serve` on the same store, in Chromium
    # (skipped here, after everything above has passed, where Playwright or Chromium is missing).
    browser = request.getfixturevalue("browser")
    opened = re.search(r"^Open (file://\S+)$", out.stdout, re.M)
    assert opened is not None and opened.group(1) == (root / "report" / "index.html").as_uri()
    index = (root / "report" / "data" / "index.js").read_text()
    sid = json.loads(index[index.index(",") + 1:-3])["series"][0][0]
    page = browser.new_page()
    page.goto(opened.group(1))
    page.wait_for_selector("body[data-ready=yes]")
    assert page.locator("#series tbody tr[data-state=changed]").count() == 1
    _check_series_page(page, (root / "report" / "series.html").as_uri() + f"?s={sid}", shas)
    page.close()

    server = Server(root / ".regbench" / "results.db", tmp_path / "serve.log")
    try:
        page = browser.new_page()
        page.goto(server.base)
        page.wait_for_selector("body[data-ready=yes]")
        sid = page.locator("#series tbody tr").first.get_attribute("data-series-id")
        _check_series_page(page, server.base + f"series.html?s={sid}", shas)
        page.close()
    finally:
        server.stop()
