"""Time until the dashboard's overview of 10,000 series is rendered and interactive in Chromium.

Usage::

    python benchmarks/bench_dashboard.py            # 10,000 series (500 benchmarks x 4 configs x 5 machines)
    python benchmarks/bench_dashboard.py --quick    # 1,000 series, a smoke check
    python benchmarks/bench_dashboard.py --serve    # also through `regbench serve` on loopback

A synthetic store (seeded; 8 versions x 2 runs x 5 iterations a series, 1% of the series with an
alert) is written through the store layer, then ``regbench report`` writes the static site.
Chromium (Debian's, driven by Playwright) opens ``index.html`` from ``file://``; the time printed
is from navigation start until the page marks itself ready (``body[data-ready=yes]``: the index
is loaded, the first page of rows and its sparklines are drawn), and then the time of one
interaction (a search that filters the 10,000 series and draws the new first page).  Target: under
2 s to interactive.  Data and report are cached in ``--workdir``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from regbench.detect.alerts import record_alerts
from regbench.detect.base import Change
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

TARGET = 2.0  # seconds to an interactive overview of 10,000 series


def make_store(path: Path, *, benchmarks: int, configs: int = 4, machines: int = 5, versions: int = 8,
               runs: int = 2, seed: int = 0) -> int:
    """Write the synthetic store (one transaction per benchmark); the number of series."""
    rng = np.random.default_rng(seed)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    names = [f"{k:040x}" for k in range(1, versions + 1)]
    vinfo = [VersionInfo(name=n, commit=n, timestamp=t0 + timedelta(days=k)) for k, n in enumerate(names)]
    changes = []
    with Store(path) as store:
        for b in range(benchmarks):
            records = []
            for c in range(configs):
                for m in range(machines):
                    base = rng.uniform(0.5, 2.0)
                    step = 1.15 if rng.random() < 0.01 else 1.0
                    for k, v in enumerate(names):
                        level = base * (step if k >= versions // 2 else 1.0)
                        for r in range(runs):
                            records.append(RunRecord(f"suite.bench_{b:04d}", v, r, level * (1 + 0.01 * rng.standard_normal(5)),
                                                     config=f"config{c}", machine=f"machine{m}"))
                    if step != 1.0:
                        changes.append(Change(f"suite.bench_{b:04d}", f"config{c}", f"machine{m}", names[versions // 2],
                                              names[versions // 2 - 1], 0.15, 0.13, 0.17, "regression", "synthetic"))
            store.add_runs(records, versions=vinfo)
        record_alerts(store, changes)
    return benchmarks * configs * machines


def time_overview(url: str, *, repeats: int, term: str) -> tuple[list[float], list[float]]:
    """Seconds to interactive and seconds of one search, per repetition (a fresh page each)."""
    from playwright.sync_api import sync_playwright

    ready, search = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"))
        for _ in range(repeats):
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("body[data-ready=yes]", timeout=60_000)
            # milliseconds from navigation start to the first complete render (set by app.js)
            ready.append(page.evaluate("window.__regbench_ready_at") / 1000)
            start = time.perf_counter()
            page.fill("#search", term)  # one benchmark: its 20 series
            page.wait_for_function("document.body.dataset.ready === 'yes' && "
                                   "document.querySelectorAll('#series tbody tr').length === 20")
            search.append(time.perf_counter() - start)
            page.close()
        browser.close()
    return ready, search


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1,000 series instead of 10,000")
    ap.add_argument("--serve", action="store_true", help="also time the overview served by `regbench serve`")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "regbench-bench-dashboard")
    args = ap.parse_args()
    if shutil.which("chromium") is None:
        sys.exit("chromium is not on PATH (apt-get install chromium)")
    benchmarks = 50 if args.quick else 500
    work = args.workdir / str(benchmarks)
    work.mkdir(parents=True, exist_ok=True)
    store = work / "results.db"
    if not store.exists():
        start = time.perf_counter()
        n = make_store(store, benchmarks=benchmarks)
        print(f"store of {n} series written in {time.perf_counter() - start:.1f} s")
    report = work / "report"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "regbench", "--store", str(store), "report", "--no-diagnosis", "-o",
                    str(report)], check=True, stdout=subprocess.DEVNULL)
    print(f"`regbench report` wrote the site in {time.perf_counter() - start:.1f} s "
          f"(data/index.js: {(report / 'data' / 'index.js').stat().st_size / 1024:.0f} KiB)")
    targets = [("static report, file://", (report / "index.html").as_uri())]
    server = None
    if args.serve:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from webtools import Server

        server = Server(store, work / "serve.log")
        import httpx

        httpx.get(server.base, timeout=600)  # the first request computes the payloads: not timed
        targets.append(("regbench serve", server.base))
    try:
        print("\n| front end | series | to interactive, median (min) | search, median (min) | target |")
        print("|---|---|---|---|---|")
        for label, url in targets:
            ready, search = time_overview(url, repeats=args.repeats, term=f"bench_{benchmarks // 2:04d}")
            print(f"| {label} | {benchmarks * 20} | {statistics.median(ready):.3f} s ({min(ready):.3f}) | "
                  f"{statistics.median(search):.3f} s ({min(search):.3f}) | < {TARGET:.0f} s |")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
