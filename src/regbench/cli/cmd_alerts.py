"""``regbench alerts``: list, show, triage and send the alerts that detection recorded."""

from __future__ import annotations

import getpass
import json
import os
import subprocess

import click

from ..model import ALERT_STATUSES


def default_actor() -> str:
    """Who is deciding: ``git config user.name``, else ``$USER``, else the login name."""
    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5,
                             check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return os.environ.get("USER") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@click.group("alerts")
def command() -> None:
    """Alerts: every change found by `regbench detect` is told once, with a lifecycle.

    \b
    Statuses: new, acknowledged, invalid (noise), expected (an intended change), and fixed
    (a later change restored performance; set by detection).
    """


@command.command("list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(ALERT_STATUSES),
              help="Only alerts with this status (repeatable) [default: all].")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_obj
def list_command(ctx, statuses, benchmark, fmt) -> None:
    """List alerts, oldest first."""
    from ..store.alerts import list_alerts

    store = ctx.open_store(create=False)
    alerts = list_alerts(store, status=statuses or None, benchmark=benchmark)
    if fmt == "json":
        click.echo(json.dumps([a.to_json() for a in alerts], indent=1, allow_nan=False))
        return
    _alert_table(alerts)


def _alert_table(alerts) -> None:
    from rich.markup import escape

    from ._output import console, emit_table, fmt_pct

    colours = {"regression": "red", "improvement": "green"}
    rows = []
    for a in alerts:
        series = a.benchmark + ("" if a.config == "default" else f" [{a.config}]")
        ci = f"[{fmt_pct(a.ci_low)}, {fmt_pct(a.ci_high)}]"
        status = a.status + (f" by {a.fixed_by}" if a.status == "fixed" and a.fixed_by else "")
        rows.append([str(a.id), escape(status), f"[{colours[a.kind]}]{a.kind}[/]", escape(series), escape(a.machine),
                     escape(a.version), escape(a.previous), fmt_pct(a.change), ci, escape(", ".join(a.methods)),
                     a.created_at.strftime("%Y-%m-%d %H:%M")])
    emit_table("Alerts", ["id", "status", "kind", "benchmark", "machine", "version", "previous", "change", "CI",
                          "methods", "created (UTC)"], rows, right={"id", "change", "CI"})
    console.print(f"{len(alerts)} alert(s)")


@command.command("show")
@click.argument("alert_id", metavar="ID", type=int)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_obj
def show_command(ctx, alert_id, fmt) -> None:
    """Show one alert with its history and deliveries."""
    from ..model import iso
    from ..store.alerts import alert_history, deliveries, get_alert

    store = ctx.open_store(create=False)
    alert = get_alert(store, alert_id)
    history = alert_history(store, alert_id)
    sent = deliveries(store, alert_id=alert_id)
    if fmt == "json":
        doc = alert.to_json()
        doc["history"] = [{"status": e.status, "who": e.who, "at": iso(e.at), "why": e.why} for e in history]
        doc["deliveries"] = [{"sink": d.sink, "state": d.state, "attempts": d.attempts, "last_error": d.last_error,
                              "next_attempt_at": iso(d.next_attempt_at), "sent_at": iso(d.sent_at)} for d in sent]
        click.echo(json.dumps(doc, indent=1, allow_nan=False))
        return
    from ..notify.base import details, headline

    click.echo(headline(alert))
    for line in details(alert):
        click.echo(f"  {line}")
    click.echo("history:")
    for e in history:
        click.echo(f"  {iso(e.at)}  {e.status:<12} {e.who}" + (f": {e.why}" if e.why else ""))
    click.echo("deliveries:" + ("" if sent else " none yet"))
    for d in sent:
        when = f" at {iso(d.sent_at)}" if d.sent_at else ""
        err = f": {d.last_error}" if d.last_error and d.state != "sent" else ""
        click.echo(f"  {d.sink:<12} {d.state}{when} ({d.attempts} attempt(s)){err}")


def _triage(status: str, verb: str):
    @click.argument("ids", metavar="ID...", nargs=-1, required=True, type=int)
    @click.option("--by", "who", metavar="NAME", help="Who decides [default: git config user.name, or $USER].")
    @click.option("--reason", metavar="TEXT", help="Why, kept in the alert's history.")
    @click.pass_obj
    def triage(ctx, ids, who, reason) -> None:
        from ..detect.alerts import set_status

        store = ctx.open_store(create=False)
        done = set_status(store, ids, status, who=who or default_actor(), why=reason)
        click.echo(f"{verb} " + ", ".join(f"#{a.id}" for a in done))

    return triage


command.command("ack", help="Acknowledge alerts: someone is looking into them.")(_triage("acknowledged", "acknowledged"))
command.command("invalid", help="Mark alerts invalid: noise or a broken benchmark, not a real change.")(
    _triage("invalid", "marked invalid"))
command.command("expected", help="Mark alerts expected: an intended change (seed 004 s.5), e.g. a costlier but "
                                 "safer algorithm.")(_triage("expected", "marked expected"))
command.command("reopen", help="Set alerts back to new (a fixed alert loses its fix).")(_triage("new", "reopened"))


@command.command("notify")
@click.pass_context
def notify_command(click_ctx) -> None:
    """Send the alerts not yet sent to the sinks of regbench.toml ([[notify]]), each alert once per
    sink; report what was sent and what failed (failed ones are tried again by the next call).
    Exits with status 1 when a sink failed."""
    from ..notify import build_sinks, notify_pending

    ctx = click_ctx.obj
    config = ctx.load_config()
    if not config.notify:
        click.echo(f"no sinks configured: add a [[notify]] table to {config.path}")
        return
    store = ctx.open_store(create=False, config=config)
    report = notify_pending(store, build_sinks(config.notify))
    print_notify_report(report)
    if not report.ok:
        click_ctx.exit(1)


def print_notify_report(report) -> None:
    """One line per sink: sent, failed (on stderr), deferred, in flight."""
    for s in report.sinks:
        line = f"{s.sink} ({s.type}): {len(s.sent)} sent"
        if s.failed:
            line += f", {len(s.failed)} failed ({', '.join(f'#{i}' for i in s.failed)})"
        if s.deferred:
            line += f", {len(s.deferred)} left for the next call"
        if s.in_flight:
            line += f", {len(s.in_flight)} in flight elsewhere"
        click.echo(line + (f": {s.error}" if s.error else ""), err=not s.ok)
