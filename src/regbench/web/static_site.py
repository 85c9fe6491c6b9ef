"""``regbench report -o DIR``: the dashboard as static files, for ``file://`` or any static host.

No server and no network: the chart library (uPlot) is copied from the package, and every
payload of :class:`~regbench.web.data.Dashboard` is a small script of its own under ``data/``
(loaded by a ``<script>`` element when a page needs it: browsers refuse ``fetch()`` of local
files).  The alerts page is read-only: triage needs ``regbench serve`` and a token.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import RegbenchError
from . import pages
from .data import Dashboard, benchmark_id, js_payload

log = logging.getLogger(__name__)

#: Files of ``regbench/web/static`` copied into every report.
STATIC_FILES = ("app.js", "style.css", "uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE")
#: A report draws the diagnosis plots of at most this many benchmarks (each takes a second or
#: so); the live dashboard draws any benchmark's on request.
DIAGNOSIS_LIMIT = 50


@dataclass(frozen=True)
class ReportResult:
    """What :func:`write_report` wrote."""

    directory: Path
    index: Path
    series: int
    alerts: int
    files: int


def copy_static(target: Path) -> None:
    """Copy the pages' scripts and styles into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    folder = resources.files("regbench.web") / "static"
    for name in STATIC_FILES:
        (target / name).write_bytes((folder / name).read_bytes())


def write_report(dash: Dashboard, directory: str | Path, *, diagnosis: bool = True) -> ReportResult:
    """Write the static dashboard of ``dash`` into ``directory`` (created; files of an earlier
    report there are replaced, the ``data`` folder as a whole).

    Parameters
    ----------
    dash : Dashboard
        The loaded payloads (:meth:`Dashboard.load`).
    directory : path
        Where to write ``index.html`` and the rest.
    diagnosis : bool
        Draw each benchmark's diagnosis page (up to :data:`DIAGNOSIS_LIMIT` benchmarks).
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    copy_static(out / "static")
    static = sum(1 for f in (out / "static").rglob("*") if f.is_file())
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    files = 0
    for name in dash.payload_names():
        path = data / f"{name}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(js_payload(name, dash.payload(name)), encoding="utf-8")
        files += 1
    written = {
        "index.html": pages.overview_page(dash),
        "series.html": pages.series_page(dash),
        "alerts.html": pages.alerts_page(dash),
        "compare.html": pages.compare_page(dash),
        "alerts.atom": pages.alerts_feed(dash),
    }
    benchmarks = sorted({s.benchmark for s in dash.series})
    for k, name in enumerate(benchmarks):
        bid = benchmark_id(name)
        if not diagnosis or k >= DIAGNOSIS_LIMIT:
            why = ("this report has no diagnosis pages (`regbench report --diagnosis`)" if not diagnosis else
                   f"this report draws the diagnosis of its first {DIAGNOSIS_LIMIT} benchmarks only")
            written[f"diagnosis-{bid}.html"] = pages.error_page(
                pages.STATIC, 404, f"No diagnosis of {name!r}: {why}; `regbench diagnose` or `regbench serve` shows it.", dash)
            continue
        try:
            written[f"diagnosis-{bid}.html"] = pages.diagnosis_page(
                dash, pages.STATIC, name, out / "diagnosis" / bid, f"diagnosis/{bid}/")
        except RegbenchError as exc:  # too few runs, or the `diagnose` extra is not installed
            log.info("no diagnosis of %s: %s", name, exc)
            written[f"diagnosis-{bid}.html"] = pages.error_page(pages.STATIC, 404, f"No diagnosis of {name!r}: {exc}", dash)
    for name, text in written.items():
        (out / name).write_text(text, encoding="utf-8")
    # Every file this call wrote: the data, the pages, the static files and the diagnosis plots
    # (the count said 10 where 18 were written).
    plots = sum(1 for bid in map(benchmark_id, benchmarks) if (out / "diagnosis" / bid).is_dir()
                for f in (out / "diagnosis" / bid).iterdir() if f.is_file())
    return ReportResult(out, out / "index.html", len(dash.series), len(dash.alerts),
                        files + len(written) + static + plots)
