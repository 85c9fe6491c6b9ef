"""Whether results can be trusted: one benchmark's diagnosis with its plots (``regbench diagnose``,
:mod:`regbench.diagnosis`), and the noise sources of this machine (``regbench system check``,
:func:`regbench.run.noise.system_check`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .console import console, emit_json, emit_table, fmt_num, fmt_pct, fmt_value, readable

if TYPE_CHECKING:
    from ..diagnosis import Diagnosis
    from ..store import HistoryView, Store


# -------------------------------------------------------------------------------------- diagnose
def write_plots(store: Store, d: Diagnosis, plots_dir: str | Path | None = None, *,
                history: HistoryView | None = None) -> list[Path]:
    """Draw the diagnosis plots as PNG files and return their paths.

    Samples by run (Kalibera et al. 2005, fig. 1), a lag plot of the longest run beside its random
    reordering (figs. 4-5), and the distributions of the series' last 30 versions (Larres et al. 2013,
    fig. 4), read from ``history`` (the one the diagnosis read) when given, else from the store.
    ``plots_dir`` defaults to ``diagnose/BENCHMARK`` beside a SQLite store (else under ``.regbench``).
    """
    from .plots import plot_distributions, plot_lag, plot_samples_by_run

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
    series = (history or store).load_series(d.benchmark, config=d.config, machine=d.machine)[0]
    per_version = [(v.name, np.concatenate(r)) for v, r in zip(series.versions, series.runs, strict=True) if r]
    out.append(plot_distributions(per_version[-30:], folder / "versions.png", title=f"{d.benchmark}: samples per version",
                                  unit=d.unit, highlight=d.version))
    return out


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80]


def _j(x):
    return x if isinstance(x, (int, str)) or (isinstance(x, float) and math.isfinite(x)) else None


def diagnosis_json(d: Diagnosis, *, target: float, plots: Sequence[Path] = ()) -> dict:
    """Every number of the diagnosis, the plan for ``target``, the advice, and the plots drawn."""
    s = d.summary
    return {
        "benchmark": d.benchmark, "version": d.version, "config": d.config, "machine": d.machine,
        "runs": s.n_runs, "iterations": s.n_iterations, "failed_runs": d.failed_runs, "mean": s.mean,
        "half_width": s.half_width, "relative_half_width": _j(d.relative_half_width),
        "robust_mean": d.robust.mean, "robust_half_width": d.robust.half_width,
        "impact_factor": _j(s.impact_factor), "within_cv": _j(d.within_cv), "between_cv": _j(d.between_cv),
        "lag1": _j(d.lag1), "lag1_reordered": _j(d.lag1_reordered), "dependent_runs": d.dependent_runs,
        "clusters": d.clusters, "cluster_centres": d.cluster_centres, "cluster_weights": d.cluster_weights,
        "impact_after_filter": _j(d.impact_after_filter), "outliers_mild": d.outliers_mild,
        "outliers_extreme": d.outliers_extreme, "outliers_mad": d.outliers_mad,
        "warmup_configured": max(d.warmups), "warmup_detected": d.warmup_detected,
        "normality": {k: _j(v) for k, v in d.normality.items()}, "best_transform": d.best_transform,
        "location": None if d.location is None else {
            "estimator": d.location.estimator, "log": d.location.log, "reason": d.location.reason,
            "spread": {k: _j(v) for k, v in d.location.spread.items()}, "skew": _j(d.location.skew)},
        "levels": None if d.levels is None else {
            "n_levels": d.levels.n_levels, "fastest_within": _j(float(np.expm1(d.levels.cut))),
            "versions": int(d.levels.stats.mean.size)},
        "run_modes": None if d.run_modes is None else {
            "shares": list(d.run_modes.shares), "runs_per_version": d.run_modes.runs_per_version,
            "coverage": _j(d.run_modes.coverage), "needed": d.run_modes.needed},
        "plan": None if d.plan is None else {"runs": d.plan.runs, "iterations": d.plan.iterations,
                                             "warmup": d.plan.warmup, "cost": d.plan.cost},
        "target": target, "trustworthy": d.trustworthy, "advice": list(d.advice),
        "plots": [str(p) for p in plots]}


def print_diagnosis(d: Diagnosis, *, target: float, confidence: float, plots: Sequence[Path] = (),
                    fmt: str = "text", label: str | None = None) -> None:
    """One screen: the verdict for ``target``, the numbers behind it, what to change, the plots;
    the version shown by its ``label`` when it has one (its tag,
    :func:`~regbench.report.console.version_labels`)."""
    if fmt == "json":
        emit_json(diagnosis_json(d, target=target, plots=plots))
        return
    s = d.summary
    u = d.unit
    from rich.markup import escape  # a series such as "x [allocs/op]" is not markup

    from .units import display_unit, fmt_interval

    shown = display_unit([x for x in (s.mean, d.robust.mean) if x is not None], u)

    verdict = "[green]trustworthy[/]" if d.trustworthy else "[yellow]not precise enough[/]"
    console.print(f"[bold]{escape(d.benchmark)}[/bold] at {escape(label or d.version)} ({escape(d.config)}, "
                  f"{escape(d.machine)}): {verdict} "
                  f"for +-{target:.1%}")
    lines = [
        ("runs x iterations", f"{s.n_runs} x {fmt_num(s.n_iterations, 4)}"
         + (f"  ({d.failed_runs} failed runs not counted)" if d.failed_runs else "")),
        # In the unit summary shows (646 ± 1,180 us, not 0.000646 s +- 0.00118: a probe).
        (f"result ({confidence:.0%})", f"{fmt_interval(s.mean, s.half_width, shown)} ({fmt_pct(d.relative_half_width, sign=False)})"),
        ("robust result", fmt_interval(d.robust.mean, d.robust.half_width, shown)),
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
    if d.location is not None:
        lines.append(("detection compares", readable(d.location.reason)))
    if d.levels is not None:
        lines.append(("runs land at levels", f"{d.levels.n_levels}; detection also follows the runs within "
                                             f"{fmt_pct(float(np.expm1(d.levels.cut)))} of the floor, as a history "
                                             f"of their own ({d.levels.stats.mean.size} versions)"))
    if d.run_modes is not None:
        m = d.run_modes
        lines.append(("runs stay in modes", f"{len(m.shares)} ({' / '.join(f'{x:.0%}' for x in m.shares)} of the runs, "
                                           f"fastest first); with {m.runs_per_version} runs a version, two or more "
                                           f"in the rarest at about {m.coverage:.0%} of the versions"))
    width = max(len(k) for k, _ in lines)
    for k, v in lines:
        console.print(f"  {k.ljust(width)}  {v}")
    if d.advice:
        console.print("[bold]What to change[/bold]")
        for a in d.advice:
            console.print(f"  - {a}")
    if plots:
        console.print("Plots: " + ", ".join(str(p) for p in plots))


# ---------------------------------------------------------------------------------- system check
def print_system_check(findings: Sequence, *, fmt: str = "table") -> None:
    """One row per noise source (ok, warn with what to do, unknown with why) and the counts, or JSON."""
    if fmt == "json":
        emit_json([f.to_json() for f in findings])
        return
    from rich.markup import escape

    colour = {"ok": "green", "warn": "yellow", "unknown": "dim"}
    # What the machine says (a value read from /sys or /proc) and the advice ("[noise]") are text,
    # not markup: escaped, or rich would take their brackets for tags.
    emit_table("System check", ["check", "status", "value", "what to do"],
               [[escape(f.name), f"[{colour[f.status]}]{escape(f.status)}[/]", escape(f.value), escape(f.advice)]
                for f in findings])
    warns = sum(f.status == "warn" for f in findings)
    console.print(f"{warns} warning(s), {sum(f.status == 'unknown' for f in findings)} unknown")
