"""The dashboard's HTML pages, rendered from :class:`~regbench.web.data.Dashboard` with Jinja2.

The static report and the live dashboard render the same templates; ``live`` adds what needs a
server (log in, triage forms, any two versions to compare).  Every link is relative, so that a
report works from ``file://`` and from any folder of any static host.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import jinja2

from ..model import TRIAGE_STATUSES, Alert
from .data import CONFIDENCE, Dashboard, series_id


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    # Autoescape: benchmark, configuration and machine names come from users' files.
    return jinja2.Environment(loader=jinja2.PackageLoader("regbench.web", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined)


@dataclass(frozen=True)
class Viewer:
    """Who looks at a page: on the live dashboard or in a static report, logged in or not."""

    live: bool = False
    user: str | None = None
    csrf: str = ""
    base: str = ""  # the live dashboard's root URL path: relative links work from any page path


STATIC = Viewer()


def render(template: str, dash: Dashboard | None, viewer: Viewer, **values) -> str:
    base = {"project": dash.project if dash else "regbench", "generated": dash.generated if dash else "",
            "live": viewer.live, "user": viewer.user, "csrf": viewer.csrf, "base": viewer.base}
    return environment().get_template(template).render(**base, **values)


def overview_page(dash: Dashboard, viewer: Viewer = STATIC) -> str:
    return render("overview.html", dash, viewer, page="overview")


def series_page(dash: Dashboard, viewer: Viewer = STATIC, sid: str | None = None) -> str:
    """The series page; ``sid`` None reads the series from the URL (``series.html?s=ID``)."""
    return render("series.html", dash, viewer, page="series", series_id=sid)


def error_page(viewer: Viewer, status: int, message: str, dash: Dashboard | None = None) -> str:
    heading = {400: "Bad request", 401: "Not logged in", 403: "Not allowed", 404: "Not found",
               503: "Store unavailable"}.get(status, "Error")
    return render("error.html", dash, viewer, page="error", status=status, heading=heading, message=message)


def login_page(dash: Dashboard | None, viewer: Viewer, message: str | None = None) -> str:
    return render("login.html", dash, viewer, page="login", message=message)


def _pct(x: float | None) -> str:
    if x is not None and math.isinf(x):  # a count from exactly 0 (regbench.detect.zeros)
        return "+∞" if x > 0 else "-∞"
    return "?" if x is None or not math.isfinite(x) else f"{x:+.1%}"


def alert_rows(dash: Dashboard, *, history: bool = True) -> list[dict]:
    """The alerts, newest first, with what the alerts page shows of each."""
    from ..store.alerts import alert_history

    links = {v["name"]: v["commit_url"] for v in dash.versions}
    rows = []
    for a in sorted(dash.alerts, key=lambda a: a.id, reverse=True):
        events = alert_history(dash.store, a.id) if history else []
        rows.append({"id": a.id, "benchmark": a.benchmark, "config": a.config, "machine": a.machine,
                     # as `regbench alerts list`: every machine that shows it, each to its series
                     "machines": [{"name": m, "series_id": series_id(a.benchmark, a.config, m)} for m in a.machines],
                     "spread": a.spread, "spread_text": _spread_text(a),
                     "series_id": series_id(a.benchmark, a.config, a.machine), "version": a.version,
                     "previous": a.previous, "version_label": dash.labels.get(a.version, a.version[:10]),
                     "previous_label": dash.labels.get(a.previous, a.previous[:10]),
                     "commit_url": links.get(a.version), "kind": a.kind,
                     # a failure has no size: its cells say it fails, and why
                     "change_text": "" if a.failure else _pct(a.change),
                     "interval_text": f"[{_pct(a.ci_low)}, {_pct(a.ci_high)}]" if not a.failure else "",
                     "error": a.error if a.failure else None,
                     "never_succeeded": a.never_succeeded,  # no version it worked at to name
                     "fixed_by": a.fixed_by,
                     "fixed_by_label": dash.labels.get(a.fixed_by, a.fixed_by[:10]) if a.fixed_by else None,
                     # what `detect --bisect` found: the commit, and what it said
                     "culprit": a.culprit, "bisection": a.bisection,
                     # a creep: the change is spread over version .. until
                     "until_label": dash.labels.get(a.until, a.until[:10]) if a.until else None,
                     "status": a.status,
                     "history": [{"status": e.status, "kind": e.kind, "who": e.who,
                                  "at": e.at.strftime("%Y-%m-%d %H:%M"), "why": e.why} for e in events]})
    return rows


def _spread_text(a: Alert) -> str:
    """How far an alert reaches across machines, as the ``spread`` column of ``regbench alerts
    list`` says it (``2 machines``, ``machine-specific``, ``single machine``), with the machines
    that measured the step without it and the hold."""
    if a.failure:  # seen on its own machine: no other machine is asked about it
        return f"failing on {a.machine}"
    text = a.spread_label
    if a.unchanged_on:
        text += f"; measured without it on {', '.join(a.unchanged_on)}"
    if a.held:
        text += f"; held ({len(a.machines)}/{a.hold_machines} machines)"
    return text


def alerts_page(dash: Dashboard, viewer: Viewer = STATIC, notice: str | None = None) -> str:
    return render("alerts.html", dash, viewer, page="alerts", alerts=alert_rows(dash), notice=notice,
                  statuses=TRIAGE_STATUSES)


def compare_page(dash: Dashboard, viewer: Viewer = STATIC, a: str | None = None, b: str | None = None) -> str:
    """Version ``b`` against ``a`` (default: the last two versions) for every series, sorted by
    change, with bootstrap intervals (:func:`regbench.analysis.compare_versions`).

    ``a`` and ``b`` are named as ``regbench compare`` takes them (:meth:`Store.resolve_version`):
    a stored name, a tag or branch recorded, a unique prefix, or a git revision (``v0.2``,
    ``HEAD~1``) when the dashboard's store has the project's repository to ask.

    Raises
    ------
    NotFoundError
        ``a`` or ``b`` names no stored version.
    """
    from ..analysis import compare_versions
    from ..errors import NotFoundError
    from ..report.results import change_cells, comparison_units

    names = [v["name"] for v in dash.versions]
    rows: list[dict] = []
    message = None
    if a is None and b is None and len(names) >= 2:
        a, b = names[-2], names[-1]
    if a is not None and b is not None:
        a, b = dash.store.resolve_version(a), dash.store.resolve_version(b)
        try:
            # a bootstrap per series (a second per thousand series): once per state of the store
            key = ("compare", a, b)
            if key not in dash.cache:
                dash.cache[key] = compare_versions(dash.store, a, b, confidence_level=CONFIDENCE)
            found = dash.cache[key]
        except NotFoundError as exc:  # the same version twice, or no benchmark has runs of both
            found, message = [], str(exc)
        units = comparison_units(found) if found else {}
        for c in found:
            cmp = c.comparison
            change_text, interval_text = change_cells(c, units[c.benchmark])
            # A difference (a metric not above 0) is sorted by its size against A's mean.
            size = cmp.change / abs(cmp.mean_a) if c.scale == "difference" and cmp.mean_a else cmp.change
            rows.append({"benchmark": c.benchmark, "config": c.config, "machine": c.machine,
                         "series_id": series_id(c.benchmark, c.config, c.machine), "change": size,
                         "change_text": change_text, "interval_text": interval_text,
                         "verdict": c.verdict})
        rows.sort(key=lambda r: -abs(r["change"]) if math.isfinite(r["change"]) else 0.0)
        a, b = (found[0].a, found[0].b) if found else (a, b)
    return render("compare.html", dash, viewer, page="compare", rows=rows, a=a, b=b, versions=dash.versions,
                  a_label=dash.labels.get(a, a) if a else a, b_label=dash.labels.get(b, b) if b else b,
                  message=message, confidence_text=f"{CONFIDENCE:.0%}")


def alerts_feed(dash: Dashboard, *, base_url: str = "") -> str:
    """The alerts as an Atom feed (RFC 4287), newest first, one entry per alert.

    Written with the standard library's escaping: a feed library (feedgen) would bring lxml for
    one flat document of a few fields per entry; the tests parse the result as XML.
    """
    from xml.sax.saxutils import escape

    def when(a: Alert) -> str:
        return (a.updated_at or a.created_at).strftime("%Y-%m-%dT%H:%M:%SZ")

    alerts = sorted(dash.alerts, key=lambda a: a.id, reverse=True)
    updated = max((when(a) for a in alerts), default="1970-01-01T00:00:00Z")
    entries = []
    for a in alerts:
        link = f"{base_url}series.html?s={series_id(a.benchmark, a.config, a.machine)}"
        if a.failure:
            title = f"failure of {a.benchmark} at {a.version[:10]}"
            summary = (f"{a.benchmark} ({a.config}, {a.machine}): every run failed from {a.version} on, "
                       + ("it never succeeded" if a.never_succeeded else f"last ok at {a.previous}")
                       + f": {a.error or 'no error stored'}; status {a.status}")
        else:
            span = f" .. {a.until}" if a.until else ""
            title = (f"{a.kind} of {_pct(a.change)} in {a.benchmark} at {a.version[:10]}"
                     + (f" .. {a.until[:10]} (a creep)" if a.until else ""))
            summary = (f"{a.benchmark} ({a.config}, {', '.join(a.machines)}): {a.kind} of {_pct(a.change)} "
                       f"[{_pct(a.ci_low)}, {_pct(a.ci_high)}] at {a.version}{span} since {a.previous}"
                       + ("; a creep: no single commit made it" if a.until else "") + f"; status {a.status}")
        entries.append(f"<entry><id>urn:regbench:alert:{escape(a.uid)}</id><title>{escape(title)}</title>"
                       f"<updated>{when(a)}</updated><link href=\"{escape(link)}\"/>"
                       f"<summary>{escape(summary)}</summary></entry>")
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"
            f"<id>urn:regbench:{escape(dash.project)}:alerts</id><title>{escape(dash.project)}: regbench alerts</title>"
            f"<updated>{updated}</updated><author><name>regbench</name></author>"
            + "".join(entries) + "</feed>\n")


def diagnosis_page(dash: Dashboard, viewer: Viewer, benchmark: str, plots_dir, src_prefix: str) -> str:
    """The verdicts and plots of ``regbench diagnose`` for ``benchmark`` (its first series, latest
    version with two runs), the plots written as PNG files into ``plots_dir`` and linked as
    ``src_prefix + name``.

    Raises
    ------
    NotFoundError
        No such benchmark, or nothing in it to diagnose.
    """
    from pathlib import Path

    from ..diagnosis import diagnose
    from ..errors import MissingDependency
    from ..report.diagnosis import diagnosis_json, write_plots
    from ..store import HistoryView

    history = HistoryView(dash.store)  # as a detection reads it: the runs of sessions left out
    d = diagnose(history, benchmark)
    try:
        plots = write_plots(dash.store, d, plots_dir, history=history)
    except MissingDependency:
        plots = []
    j = diagnosis_json(d, target=d.target, plots=plots)

    def show(x) -> str:
        if isinstance(x, float):
            return f"{x:.4g}"
        return "–" if x is None else str(x)

    verdicts = [("trustworthy for a 1% target", "yes" if j["trustworthy"] else "no"),
                ("runs × iterations", f"{j['runs']} × {show(j['iterations'])}"),
                ("mean", f"{show(j['mean'])} {d.unit} ± {show(j['half_width'])}"),
                ("relative half-width", "–" if j["relative_half_width"] is None else f"{j['relative_half_width']:.2%}"),
                ("impact factor (between runs)", show(j["impact_factor"])),
                ("lag-1 autocorrelation (reordered)", f"{show(j['lag1'])} ({show(j['lag1_reordered'])})"),
                ("modes", str(j["clusters"])),
                ("outliers mild / extreme", f"{j['outliers_mild']} / {j['outliers_extreme']}"),
                ("warm-up configured / detected", f"{j['warmup_configured']} / {j['warmup_detected']}"),
                ("best transform for normality", str(j["best_transform"]))]
    if j["plan"]:
        verdicts.append(("plan for the target", f"{j['plan']['runs']} runs × {j['plan']['iterations']} iterations"))
    figures = [{"src": src_prefix + Path(p).name, "name": Path(p).stem} for p in plots]
    return render("diagnosis.html", dash, viewer, page="diagnosis", benchmark=benchmark,
                  where=f"{d.config} · {d.machine} · version {d.version}", verdicts=verdicts,
                  advice=list(d.advice), plots=figures)
