"""Alerts (:mod:`regbench.detect.alerts`, stored by :mod:`regbench.store.alerts`): the alert table,
one alert with its history and deliveries, triage confirmations, and what each sink did when
notified (``regbench alerts``, ``regbench detect --notify``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .console import console, echo, emit_json, emit_table, fmt_pct

if TYPE_CHECKING:
    from ..notify import NotifyReport
    from ..model import Alert


def print_alert_list(alerts: Sequence[Alert], *, fmt: str = "table", labels: Mapping[str, str] | None = None) -> None:
    """The alerts, oldest first: a table (versions by their ``labels``,
    :func:`~regbench.report.console.version_labels`) and their count, or a JSON array of alert objects.
    A failure has no change, interval or spread (``—``), nor a previous version when it never
    succeeded; with failures listed, the table has an ``error`` column.  A creep's version is its
    span (``v3 .. v9``)."""
    if fmt == "json":
        emit_json([a.to_json() for a in alerts], allow_nan=False)
        return
    from rich.markup import escape

    colours = {"regression": "red", "improvement": "green", "failure": "bold red"}
    confirmed = any(a.confirmation is not None for a in alerts)
    failures = any(a.failure for a in alerts)
    bisected = any(a.bisection for a in alerts)
    labels = labels or {}
    rows = []
    for a in alerts:
        series = a.benchmark + ("" if a.config == "default" else f" [{a.config}]")
        ci = f"[{fmt_pct(a.ci_low)}, {fmt_pct(a.ci_high)}]"
        status = a.status + (f" by {a.fixed_by}" if a.status == "fixed" and a.fixed_by else
                             " (no longer run)" if a.no_longer_run else "")
        if a.held:
            status += f", held ({len(a.machines)}/{a.hold_machines} machines)"
        spread, change = ("—", "—") if a.failure else (a.spread_label, fmt_pct(a.change))
        if a.failure:
            ci = "—"
        row = [str(a.id), escape(status), f"[{colours.get(a.kind, 'default')}]{a.kind}[/]", escape(series),
               escape(", ".join(a.machines)), spread,
               escape(labels.get(a.version, a.version)
                      + (f" .. {labels.get(a.until, a.until)}" if a.until is not None else "")),
               "—" if a.never_succeeded else escape(labels.get(a.previous, a.previous)), change, ci,
               escape(", ".join(a.methods))]
        if failures:
            row.append(escape(a.error or ""))
        if confirmed:
            c = a.confirmation
            row.append("" if c is None else f"{c.status} ({c.pairs} pairs)" if c.campaign_id is not None else c.status)
        if bisected:  # the commit detect --bisect found, or that it found none
            row.append(escape(a.culprit) if a.culprit else "none found" if a.bisection else "")
        rows.append([*row, a.created_at.strftime("%Y-%m-%d %H:%M")])
    columns = ["id", "status", "kind", "benchmark", "machines", "spread", "version", "previous", "change", "CI",
               "methods"]
    emit_table("Alerts", [*columns, *(["error"] if failures else []), *(["run again"] if confirmed else []),
                          *(["culprit"] if bisected else []), "created (UTC)"], rows, right={"id", "change", "CI"})
    console.print(f"{len(alerts)} alert(s)")


def alert_json(alert: Alert, history: Sequence, deliveries: Sequence) -> dict:
    """One alert object with its ``history`` and ``deliveries`` arrays."""
    from ..model import iso

    doc = alert.to_json()
    doc["history"] = [{"status": e.status, "kind": e.kind, "who": e.who, "at": iso(e.at), "why": e.why}
                      for e in history]
    doc["deliveries"] = [{"sink": d.sink, "state": d.state, "attempts": d.attempts, "last_error": d.last_error,
                          "next_attempt_at": iso(d.next_attempt_at), "sent_at": iso(d.sent_at)} for d in deliveries]
    return doc


def print_alert(alert: Alert, history: Sequence, deliveries: Sequence, *, fmt: str = "text",
                labels: Mapping[str, str] | None = None) -> None:
    """One alert: its headline (versions by their ``labels``, as ``alerts list`` shows them) and
    details, its history, and its deliveries per sink."""
    if fmt == "json":
        emit_json(alert_json(alert, history, deliveries), allow_nan=False)
        return
    from ..notify.base import details, headline
    from ..model import iso

    echo(headline(alert, labels))
    for line in details(alert):
        echo(f"  {line}")
    echo("history:")
    for e in history:  # a note (evidence, another method...) left the status as it was
        echo(f"  {iso(e.at)}  {e.status if e.kind == 'status' else '(note)':<12} {e.who}"
             + (f": {e.why}" if e.why else ""))
    echo("deliveries:" + ("" if deliveries else " none yet"))
    for d in deliveries:
        when = f" at {iso(d.sent_at)}" if d.sent_at else ""
        err = f": {d.last_error}" if d.last_error and d.state != "sent" else ""
        echo(f"  {d.sink:<12} {d.state}{when} ({d.attempts} attempt(s)){err}")


def print_triaged(verb: str, alerts: Iterable[Alert]) -> None:
    """``acknowledged #1, #2``: which alerts a triage command changed."""
    echo(f"{verb} " + ", ".join(f"#{a.id}" for a in alerts))


def print_notify_report(report: NotifyReport, *, err: bool = False) -> None:
    """One line per sink: sent, failed (on stderr), deferred, in flight; all on stderr with
    ``err`` (a command whose standard output is a JSON document, which these lines would spoil
    for a reader such as ``jq``)."""
    for s in report.sinks:
        line = f"{s.sink} ({s.type}): {len(s.sent)} sent"
        if s.failed:
            line += f", {len(s.failed)} failed ({', '.join(f'#{i}' for i in s.failed)})"
        if s.deferred:
            line += f", {len(s.deferred)} left for the next call"
        if s.in_flight:
            line += f", {len(s.in_flight)} in flight elsewhere"
        echo(line + (f": {s.error}" if s.error else ""), err=err or not s.ok)
