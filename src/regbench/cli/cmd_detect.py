"""``regbench detect``: changes between consecutive versions of every series."""

from __future__ import annotations

import json

import click

from ..detect import DEFAULT_METHOD, available_methods


@click.command("detect")
@click.option("--method", type=click.Choice(available_methods()), default=DEFAULT_METHOD, show_default=True,
              help="Detection method.")
@click.option("--min-change", default=None, type=click.FloatRange(0),
              help="Smallest relative change worth reporting (0.03 = 3%) [default: 0 for ci-overlap, "
                   "0.03 for bootstrap-ci].")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--confidence", default=0.99, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--fail-on-regression", is_flag=True, help="Exit with status 1 when a regression is found.")
@click.pass_context
def command(click_ctx, method, min_change, benchmark, confidence, fmt, fail_on_regression) -> None:
    """Walk each series (benchmark x config x machine, versions in history order) and report
    significant changes between consecutive versions.

    ci-overlap (seed 000 s.5): the 99% confidence intervals of two consecutive versions do not
    overlap; the change is the distance of the centres relative to the older one.
    bootstrap-ci (seed 004 s.4.5): the 99% bootstrap intervals over runs do not overlap and the
    change is at least 3%.
    """
    from ..analysis import detect_changes
    from ._output import console

    store = click_ctx.obj.open_store(create=False)
    if min_change is None:
        min_change = 0.03 if method == "bootstrap-ci" else 0.0
    changes = detect_changes(store, method=method, benchmark=benchmark, min_change=min_change,
                             confidence_level=confidence)
    if fmt == "json":
        click.echo(json.dumps([c.to_json() for c in changes], indent=1))
    else:
        change_table(changes, method=method, confidence=confidence, min_change=min_change)
        console.print(f"{len(changes)} change(s) in {len(store.series_keys())} series")
    if fail_on_regression and any(c.kind == "regression" for c in changes):
        click_ctx.exit(1)


def change_table(changes, *, method: str, confidence: float, min_change: float) -> None:
    """Print the change table of seed 000 fig. 6: newer version, older version, change (and its CI)."""
    from rich.markup import escape

    from ._output import emit_table, fmt_pct

    rows = []
    for c in changes:
        colour = "red" if c.kind == "regression" else "green"
        rows.append([escape(c.benchmark + ("" if c.config == "default" else f" [{c.config}]")), escape(c.version),
                     escape(c.previous),
                     fmt_pct(c.change), f"[{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}]", f"[{colour}]{c.kind}[/]"])
    emit_table(f"Changes ({method}, {confidence:.0%} CI" + (f", min change {min_change:.1%}" if min_change else "") + ")",
               ["benchmark", "newer version", "older version", "change", "CI", "kind"], rows,
               right={"change", "CI"})
