"""``regbench detect``: changes between versions of every series, with the false discovery rate
controlled across series."""

from __future__ import annotations

import contextlib
import json
import os
import sys

import click

from ..detect import DEFAULT_METHOD, available_methods
from ..errors import ConfigError


@click.command("detect")
@click.option("--method", type=click.Choice(available_methods()), default=DEFAULT_METHOD, show_default=True,
              help="Detection method (see docs/detection.md for each one and its evaluation).")
@click.option("--min-change", default=None, type=click.FloatRange(0),
              help="Smallest relative change worth reporting (0.03 = 3%) [default: the method's own; "
                   "3% for auto and bootstrap-ci, 0 for ci-overlap].")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--confidence", default=0.99, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--fdr", default=0.05, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="False discovery rate controlled across all series (Benjamini-Hochberg) for methods "
                   "that give p-values.")
@click.option("--no-fdr", is_flag=True, help="Report every change the method finds, without FDR control.")
@click.option("--jobs", default=None, type=click.IntRange(1),
              help="Worker processes for large stores [default: the number of CPUs].")
@click.option("--incremental", is_flag=True,
              help="Check only versions newer than the last pass (auto): cheap enough for every new commit.")
@click.option("--dry-run", is_flag=True, help="Only report: record no alerts and save no detection state.")
@click.option("--notify", is_flag=True, help="Send new alerts to the sinks of regbench.toml ([[notify]]).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--fail-on-regression", is_flag=True, help="Exit with status 1 when a regression is found.")
@click.option("--bisect", "do_bisect", is_flag=True,
              help="For each change between versions that are not adjacent commits (nightly snapshots), "
                   "build and benchmark the commits between them to find the one that made it "
                   "(`regbench bisect`, with its defaults).")
@click.pass_context
def command(click_ctx, method, min_change, benchmark, confidence, fdr, no_fdr, jobs, incremental, dry_run, notify, fmt,
            fail_on_regression, do_bisect) -> None:
    """Walk each series (benchmark x config x machine, versions in history order) and report
    significant changes, each with its magnitude, interval, first version and p-value.

    auto (default): a change-point search over the whole history confirmed by a hierarchical
    test (runs within versions within segments) and a 3% minimum change. Other methods:
    ci-overlap (seed 000 s.5), bootstrap-ci (seed 004 s.4.5), talos-ttest and forecast
    (seed 003 s.5), edivisive (E-Divisive means), clusters (seed 001 s.4.2).
    """
    from ..config import find_config
    from ..detect.driver import detect_changes, save_detection_state
    from ._output import console

    ctx = click_ctx.obj
    config = ctx.load_config() if (ctx.config_path or find_config()) else None
    if notify and dry_run:
        raise ConfigError("--dry-run records no alerts, so --notify would have nothing to send; drop one of them")
    if notify and (config is None or not config.notify):
        raise ConfigError("--notify needs [[notify]] sinks in regbench.toml (see docs/configuration.md)")
    if do_bisect and config is None:
        raise ConfigError("--bisect needs regbench.toml (the benchmarks and the repository to build)")
    store = ctx.open_store(create=False, config=config)
    common = dict(method=method, benchmark=benchmark, min_change=min_change, confidence_level=confidence,
                  fdr=None if no_fdr else fdr)
    with batch_progress("Detecting") as progress:
        result = detect_changes(store, incremental=incremental,
                                jobs=1 if incremental else jobs or os.cpu_count() or 1, progress=progress, **common)
    changes = result.changes
    outcome = None
    if not dry_run:
        from ..detect.alerts import record_alerts

        outcome = record_alerts(store, list(changes), config=config)
        save_detection_state(store, result)
    bisected, skipped = [], []
    if do_bisect and changes:
        from ..run.bisect import bisect_changes
        from ._sequential import LiveReporter, sigterm_as_interrupt

        with sigterm_as_interrupt(), LiveReporter() as reporter:
            bisected, skipped = bisect_changes(config, store, list(changes), reporter=reporter)
    if fmt == "json":
        if do_bisect:
            from .cmd_bisect import bisect_json

            by_change = {id(c): r for c, r in bisected}
            why = {id(s.change): s.reason for s in skipped}
            click.echo(json.dumps([dict(c.to_json(), bisect=bisect_json(by_change[id(c)]) if id(c) in by_change else None,
                                        **({"bisect_skipped": why[id(c)]} if id(c) in why else {}))
                                   for c in changes], indent=1))
        else:
            click.echo(json.dumps([c.to_json() for c in changes], indent=1))
    else:
        change_table(changes, method=method, confidence=confidence, min_change=min_change)
        what = "series with new versions" if result.incremental else "series"
        console.print(f"{len(changes)} change(s) in {result.n_series} {what}")
        console.print(fdr_note(result))
        if outcome is not None:
            console.print(alerts_note(outcome))
        if do_bisect:
            from rich.markup import escape

            from ._output import fmt_pct
            from .cmd_bisect import print_bisect

            for s in skipped:
                console.print(f"Not bisected: {escape(s.change.benchmark)} between {s.change.previous} and "
                              f"{s.change.version}: {escape(s.reason)}.")
            for change, result in bisected:
                console.print(f"Bisecting {escape(change.benchmark)} between {change.previous} and {change.version}:")
                print_bisect(result, console, fmt_pct, escape)
    if notify:
        from ..notify import build_sinks, notify_pending
        from .cmd_alerts import print_notify_report

        report = notify_pending(store, build_sinks(config.notify))
        print_notify_report(report)
        if not report.ok:
            click_ctx.exit(1)
    if fail_on_regression and any(c.kind == "regression" for c in changes):
        click_ctx.exit(1)


@contextlib.contextmanager
def batch_progress(what: str):
    """A progress bar on stderr (only on a terminal) fed by ``progress(done, total)`` calls."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield progress


def alerts_note(outcome) -> str:
    """One line saying what became of the changes as alerts."""
    parts = [f"{len(outcome.created)} new alert(s)", f"{len(outcome.merged)} already known"]
    if outcome.fixed:
        parts.append(f"{len(outcome.fixed)} earlier alert(s) now fixed")
    if outcome.suppressed:
        parts.append(f"{len(outcome.suppressed)} suppressed by regbench.toml")
    return "Alerts: " + ", ".join(parts) + " (regbench alerts list)."


def fdr_note(result) -> str:
    """One line saying what the false-discovery-rate control did."""
    if result.fdr is None:
        return "No false-discovery-rate control (--no-fdr): every change the method found is listed."
    if not result.fdr_applied:
        return f"FDR control not applicable: {result.method} decides by intervals and gives no p-values."
    return (f"False discovery rate controlled at {result.fdr:.0%} across {result.n_series} series "
            f"(Benjamini-Hochberg over {result.n_tests} hypotheses tested); "
            f"{len(result.dropped)} candidate(s) dropped by it.")


def change_table(changes, *, method: str, confidence: float, min_change: float | None) -> None:
    """Print the change table of seed 000 fig. 6: newer version, older version, change (and its CI)."""
    from rich.markup import escape

    from ._output import emit_table, fmt_pct

    rows = []
    with_p = any(c.p_value is not None for c in changes)
    machines = len({c.machine for c in changes}) > 1
    for c in changes:
        colour = "red" if c.kind == "regression" else "green"
        where = ", ".join(x for x in (None if c.config == "default" else c.config, c.machine if machines else None) if x)
        row = [escape(c.benchmark + (f" [{where}]" if where else "")), escape(c.version),
               escape(c.previous), fmt_pct(c.change), f"[{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}]",
               f"[{colour}]{c.kind}[/]"]
        if with_p:
            row.append(_fmt_p(c.q_value if c.q_value is not None else c.p_value))
        rows.append(row)
    columns = ["benchmark", "newer version", "older version", "change", "CI", "kind"]
    if with_p:
        columns.append("q" if any(c.q_value is not None for c in changes) else "p")
    emit_table(f"Changes ({method}, {confidence:.0%} CI" + (f", min change {min_change:.1%}" if min_change else "") + ")",
               columns, rows, right={"change", "CI", "p", "q"})


def _fmt_p(p: float | None) -> str:
    if p is None:
        return ""
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"
