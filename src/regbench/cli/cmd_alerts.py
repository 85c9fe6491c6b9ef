"""``regbench alerts``: list, show, triage and send the alerts that detection recorded."""

from __future__ import annotations

import getpass
import os
import subprocess

import click

from ._common import one_benchmark_option

from ..errors import ExitStatus
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
    """Alerts: every change found by `regbench detect`, and every benchmark that starts failing,
    is told once, with a lifecycle.

    \b
    Statuses: new, acknowledged, invalid (noise, a broken benchmark), expected (an intended
    change), and fixed (a later change restored performance, or the failing benchmark runs
    again; set by detection).
    """


@command.command("list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(ALERT_STATUSES),
              help="Only alerts with this status (repeatable) [default: all].")
@one_benchmark_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_obj
def list_command(ctx, statuses, benchmark, fmt) -> None:
    """List alerts, oldest first."""
    from ..report.alerts import print_alert_list
    from ..report.console import version_labels
    from ..store.alerts import list_alerts, with_tags

    store = ctx.open_store(create=False)
    print_alert_list(with_tags(store, list_alerts(store, status=statuses or None, benchmark=benchmark)), fmt=fmt,
                     labels=version_labels(store.aliases()))


@command.command("show")
@click.argument("alert_id", metavar="ID", type=int)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_obj
def show_command(ctx, alert_id, fmt) -> None:
    """Show one alert with its history and deliveries."""
    from ..report.alerts import print_alert
    from ..report.console import version_labels
    from ..store.alerts import alert_history, deliveries, get_alert, with_tags

    store = ctx.open_store(create=False)
    [alert] = with_tags(store, [get_alert(store, alert_id)])
    print_alert(alert, alert_history(store, alert_id), deliveries(store, alert_id=alert_id), fmt=fmt,
                labels=version_labels(store.aliases()))


def _triage(status: str, verb: str):
    @click.argument("ids", metavar="ID...", nargs=-1, required=True, type=int)
    @click.option("--by", "who", metavar="NAME", help="Who decides [default: git config user.name, or $USER].")
    @click.option("--reason", metavar="TEXT", help="Why, kept in the alert's history.")
    @click.pass_obj
    def triage(ctx, ids, who, reason) -> None:
        from ..detect.alerts import set_status
        from ..report.alerts import print_triaged

        store = ctx.open_store(create=False)
        print_triaged(verb, set_status(store, ids, status, who=who or default_actor(), why=reason))

    return triage


command.command("ack", help="Acknowledge alerts: someone is looking into them.")(_triage("acknowledged", "acknowledged"))
command.command("invalid", help="Mark alerts invalid: noise or a broken benchmark, not a real change.")(
    _triage("invalid", "marked invalid"))
command.command("expected", short_help="Mark alerts expected: an intended change, not a regression to fix.",
                help="Mark alerts expected: an intended change (Japke et al. 2025, s.5), e.g. a costlier but "
                     "safer algorithm.")(_triage("expected", "marked expected"))
command.command("reopen", help="Set alerts back to new (a fixed alert loses its fix).")(_triage("new", "reopened"))


@command.command("notify")
@click.pass_context
def notify_command(click_ctx) -> None:
    """Send the alerts not yet sent to the sinks of regbench.toml ([[notify]]), each alert once per
    sink; report what was sent and what failed (failed ones are tried again by the next call).
    Exits with status 4 when a sink failed."""
    from ..notify import build_sinks, notify_pending
    from ..report.alerts import print_notify_report

    ctx = click_ctx.obj
    config = ctx.load_config()
    if not config.notify:
        click.echo(f"no sinks configured: add a [[notify]] table to {config.path}")
        return
    store = ctx.open_store(create=False, config=config)
    report = notify_pending(store, build_sinks(config.notify))
    print_notify_report(report)
    if not report.ok:
        click_ctx.exit(ExitStatus.FAILED)

