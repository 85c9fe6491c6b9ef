"""``regbench diagnose BENCHMARK``: can this benchmark be trusted, and what should change?"""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
import numpy as np


@click.command("diagnose")
@click.argument("benchmark")
@click.option("--version", "version_name", help="Version to diagnose [default: the latest with two runs].")
@click.option("--target", default=0.01, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Wanted relative CI half-width (0.01 = +-1%) for the recommended plan.")
@click.option("--confidence", default=0.99, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the PNG plots [default: diagnose/BENCHMARK in the store's folder].")
@click.option("--no-plots", is_flag=True, help="Do not draw plots.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_obj
def command(ctx, benchmark, version_name, target, confidence, plots_dir, no_plots, fmt) -> None:
    """One screen that says whether BENCHMARK can be trusted and what to change.

    \b
    Impact factor and within/between-run noise (seed 000 s.2-3), auto-dependence against a
    random reordering (seed 000 s.4.1), clusters and the impact factor after the clustering
    additive filter, outliers (Tukey, MAD), warm-up found by MSER-5 (seed 001 s.2.2), normality of
    run means (seed 001 s.3.3), and the cheapest runs x iterations for --target (seed 000 s.3.1).
    Plots: samples by run (seed 000 fig. 1), lag plot beside its random reordering (figs. 4-5),
    distributions per version (seed 003 fig. 4).
    """
    from ..diagnosis import diagnose
    from ._output import console, fmt_num, fmt_pct, fmt_value

    store = ctx.open_store(create=False)
    d = diagnose(store, benchmark, version=version_name, target=target, confidence_level=confidence)
    written: list[Path] = []
    if not no_plots:
        written = _plots(store, d, plots_dir)
    if fmt == "json":
        s = d.summary
        click.echo(json.dumps({
            "benchmark": d.benchmark, "version": d.version, "config": d.config, "machine": d.machine,
            "runs": s.n_runs, "iterations": s.n_iterations, "failed_runs": d.failed_runs, "mean": s.mean,
            "half_width": s.half_width, "relative_half_width": s.relative_half_width,
            "robust_mean": d.robust.mean, "robust_half_width": d.robust.half_width,
            "impact_factor": _j(s.impact_factor), "within_cv": _j(d.within_cv), "between_cv": _j(d.between_cv),
            "lag1": _j(d.lag1), "lag1_reordered": _j(d.lag1_reordered), "dependent_runs": d.dependent_runs,
            "clusters": d.clusters, "cluster_centres": d.cluster_centres, "cluster_weights": d.cluster_weights,
            "impact_after_filter": _j(d.impact_after_filter), "outliers_mild": d.outliers_mild,
            "outliers_extreme": d.outliers_extreme, "outliers_mad": d.outliers_mad,
            "warmup_configured": max(d.warmups), "warmup_detected": d.warmup_detected,
            "normality": {k: _j(v) for k, v in d.normality.items()}, "best_transform": d.best_transform,
            "plan": None if d.plan is None else {"runs": d.plan.runs, "iterations": d.plan.iterations,
                                                 "warmup": d.plan.warmup, "cost": d.plan.cost},
            "target": target, "trustworthy": d.trustworthy, "advice": list(d.advice),
            "plots": [str(p) for p in written]}, indent=1))
        return
    s = d.summary
    u = d.unit
    verdict = "[green]trustworthy[/]" if d.trustworthy else "[yellow]not precise enough[/]"
    console.print(f"[bold]{d.benchmark}[/bold] at {d.version} ({d.config}, {d.machine}): {verdict} "
                  f"for +-{target:.1%}")
    lines = [
        ("runs x iterations", f"{s.n_runs} x {fmt_num(s.n_iterations, 4)}"
         + (f"  ({d.failed_runs} failed runs not counted)" if d.failed_runs else "")),
        (f"result ({confidence:.0%})", f"{fmt_value(s.mean, u)} +- {fmt_num(s.half_width)} ({fmt_pct(s.relative_half_width, sign=False)})"),
        ("robust result", f"{fmt_value(d.robust.mean, u)} +- {fmt_num(d.robust.half_width)}"),
        ("noise within / between runs", f"{fmt_pct(d.within_cv, sign=False)} / {fmt_pct(d.between_cv, sign=False)} of the mean"),
        ("impact factor", f"{fmt_num(s.impact_factor)}  (1 = runs alike; after cluster filter {fmt_num(d.impact_after_filter)})"),
        ("auto-dependence", f"lag-1 autocorrelation {fmt_num(d.lag1, 2)} (reordered {fmt_num(d.lag1_reordered, 2)}); "
                            f"{d.dependent_runs} of {s.n_runs} runs dependent"),
        ("clusters", f"{d.clusters}: " + ", ".join(f"{fmt_value(c, u)} ({w:.0%})"
                                                   for c, w in zip(d.cluster_centres, d.cluster_weights, strict=True))),
        ("outliers", f"{d.outliers_mild} mild, {d.outliers_extreme} extreme (Tukey); {d.outliers_mad} by MAD"),
        ("warm-up", f"{max(d.warmups)} configured, {d.warmup_detected} detected (MSER-5)"),
        ("normality of run means", ", ".join(f"{k} p={fmt_num(v, 2)}" for k, v in d.normality.items())),
    ]
    width = max(len(k) for k, _ in lines)
    for k, v in lines:
        console.print(f"  {k.ljust(width)}  {v}")
    if d.advice:
        console.print("[bold]What to change[/bold]")
        for a in d.advice:
            console.print(f"  - {a}")
    if written:
        console.print("Plots: " + ", ".join(str(p) for p in written))


def _plots(store, d, plots_dir) -> list[Path]:
    from ..report.plots import plot_distributions, plot_lag, plot_samples_by_run

    if plots_dir is None:
        base = Path(store.url[len("sqlite:///"):]).parent if store.url.startswith("sqlite:///") else Path(".regbench")
        plots_dir = base / "diagnose" / _safe(d.benchmark)
    folder = Path(plots_dir)
    folder.mkdir(parents=True, exist_ok=True)
    tag = _safe(d.version)
    title = f"{d.benchmark} at {d.version}"
    out = [plot_samples_by_run(list(d.raw_runs), list(d.warmups), folder / f"{tag}-samples.png",
                               title=title + ": samples by run", unit=d.unit)]
    longest = max(range(len(d.raw_runs)), key=lambda j: d.raw_runs[j].size - d.warmups[j])
    out.append(plot_lag(d.raw_runs[longest][d.warmups[longest]:], folder / f"{tag}-lag.png",
                        title=title + f": lag plot of run {longest}", unit=d.unit))
    series = store.load_series(d.benchmark, config=d.config, machine=d.machine)[0]
    per_version = [(v.name, np.concatenate(r)) for v, r in zip(series.versions, series.runs, strict=True) if r]
    out.append(plot_distributions(per_version[-30:], folder / "versions.png", title=f"{d.benchmark}: samples per version",
                                  unit=d.unit, highlight=d.version))
    return out


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80]


def _j(x):
    return x if isinstance(x, (int, str)) or (isinstance(x, float) and math.isfinite(x)) else None

