"""``regbench compare A B``: version B against version A, runs as replicates; CI gate."""

from __future__ import annotations

import json
import math

import click


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option("--threshold", default=0.0, show_default=True, type=click.FloatRange(0),
              help="Relative change that counts as a regression (0.05 = 5%).")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--confidence", default=0.99, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def command(click_ctx, a, b, threshold, benchmark, confidence, seed, fmt) -> None:
    """Compare version B against version A for every benchmark.

    The change is mean(B)/mean(A) - 1 of the means of run means, with a BCa bootstrap interval
    over runs (runs, not iterations, are the unit of replication). Verdicts: regression (whole
    interval worse than --threshold), improvement, no change, inconclusive.
    Exit status 1 when any benchmark regressed, so CI can gate on it.
    """
    from rich.markup import escape

    from ..analysis import compare_versions
    from ._output import emit_table, fmt_pct, fmt_value

    store = click_ctx.obj.open_store(create=False)
    rows = compare_versions(store, a, b, benchmark=benchmark, threshold=threshold,
                            confidence_level=confidence, rng=seed)
    if fmt == "json":
        click.echo(json.dumps([{
            "benchmark": r.benchmark, "config": r.config, "machine": r.machine, "a": r.a, "b": r.b,
            "mean_a": _j(r.comparison.mean_a), "mean_b": _j(r.comparison.mean_b), "change": _j(r.comparison.change),
            "ci_low": _j(r.comparison.ci_low), "ci_high": _j(r.comparison.ci_high),
            "runs_a": r.comparison.runs_a, "runs_b": r.comparison.runs_b, "verdict": r.verdict,
            "method": f"bootstrap-{r.comparison.method}", "confidence_level": confidence,
        } for r in rows], indent=1))
    else:
        a, b = rows[0].a, rows[0].b
        style = {"regression": "red", "improvement": "green", "no change": "", "inconclusive": "yellow"}
        table = []
        for r in rows:
            c = r.comparison
            table.append([escape(r.benchmark), fmt_value(c.mean_a, r.unit), fmt_value(c.mean_b, r.unit), fmt_pct(c.change),
                          f"[{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}]", f"{c.runs_a}/{c.runs_b}",
                          f"[{style[r.verdict]}]{r.verdict}[/]" if style[r.verdict] else r.verdict])
        columns = ["benchmark", escape(a), escape(b), "change", "CI", "runs", "verdict"]
        emit_table(f"{b} against {a} ({confidence:.0%} CI, threshold {threshold:.1%})", columns, table,
                   right={escape(a), escape(b), "change", "CI", "runs"})
    if any(r.verdict == "regression" for r in rows):
        click_ctx.exit(1)


def _j(x: float):
    return x if math.isfinite(x) else None
