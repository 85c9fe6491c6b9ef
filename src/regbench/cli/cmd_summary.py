"""``regbench summary``: result and precision of every experiment (seed 000 s.3-4)."""

from __future__ import annotations

import json
import math

import click


@click.command("summary")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--version", "version_name", help="Only this version.")
@click.option("--confidence", default=0.99, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--warmup-cost", type=click.IntRange(0), default=None,
              help="Warm-up iterations w used for n_opt [default: what the runs discarded].")
@click.option("--no-robust", is_flag=True, help="Skip the robust (resampled) variant.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_obj
def command(ctx, benchmark, version_name, confidence, warmup_cost, no_robust, fmt) -> None:
    """Per experiment: mean of run means with its confidence interval, the robust variant,
    the impact factor of random initial conditions and the optimal iterations per run.

    \b
    mean ± hw   mean of run means, CI half-width from the between-run and within-run
                variance components (seed 000 s.3.1, formula 4)
    robust      the same on medians of resampled run means (seed 000 s.4.2)
    impact      spread of run means / spread within-run noise alone would give (~1: runs alike)
    n_opt       iterations per run minimising (w + n) m for the same precision
    """
    from rich.markup import escape

    from ..analysis import summarize
    from ._output import emit_table, fmt_num, fmt_pct, fmt_value

    store = ctx.open_store(create=False)
    rows = summarize(store, benchmark=benchmark, version=version_name, confidence_level=confidence,
                     robust=not no_robust, warmup_cost=warmup_cost)
    if fmt == "json":
        out = []
        for r in rows:
            d = {"benchmark": r.benchmark, "version": r.version, "config": r.config, "machine": r.machine,
                 "unit": r.unit, "failed_runs": r.failed_runs}
            for label, s in (("", r.plain), ("robust_", r.robust)):
                if s is None:
                    continue
                d.update({f"{label}mean": _j(s.mean), f"{label}half_width": _j(s.half_width),
                          f"{label}impact_factor": _j(s.impact_factor), f"{label}n_opt": _j(s.n_opt)})
                if not label:
                    d.update(runs=s.n_runs, iterations=s.n_iterations, s2_rho=_j(s.s2_rho),
                             s2_sigma=_j(s.s2_sigma), rho2=_j(s.rho2), confidence_level=confidence)
            out.append(d)
        click.echo(json.dumps(out, indent=1))
        return
    columns = ["benchmark", "version", "runs", "iter", "mean ± hw", "±%", "robust mean ± hw", "impact", "n_opt"]
    table = []
    for r in rows:
        p, q = r.plain, r.robust
        if p is None:
            table.append([escape(r.benchmark), escape(r.version), "0", "", f"[red]{r.failed_runs} failed runs[/red]", "", "", "", ""])
            continue
        runs = str(p.n_runs) + (f" [red](+{r.failed_runs} failed)[/red]" if r.failed_runs else "")
        table.append([escape(r.benchmark), escape(r.version), runs, fmt_num(p.n_iterations, 4),
                      f"{fmt_value(p.mean, r.unit)} ± {fmt_num(p.half_width)}",
                      fmt_pct(p.relative_half_width, sign=False),
                      f"{fmt_value(q.mean, r.unit)} ± {fmt_num(q.half_width)}" if q else "—",
                      fmt_num(p.impact_factor), fmt_num(p.n_opt)])
    emit_table(f"Summary ({confidence:.0%} confidence)", columns, table,
               right={c for c in columns if c not in ("benchmark", "version")})


def _j(x: float):
    return x if math.isfinite(x) else None
