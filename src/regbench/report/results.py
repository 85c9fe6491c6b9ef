"""Stored results: what a store holds (``regbench show``), the result and precision of every
experiment (``regbench summary``, Kalibera et al. 2005, s.3-4), and version B against version A, of the mean
(``regbench compare``) or of the spread (``compare --variance``, Larres et al. 2013, s.3.3.1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .console import console, echo, emit_json, emit_table, finite, fmt_num, fmt_pct

if TYPE_CHECKING:
    from ..analysis import BenchmarkComparison, BenchmarkVariance, ExperimentSummary
    from ..inventory import Inventory
    from .units import DisplayUnit


# ------------------------------------------------------------------------------------------ show
#: Lines of a run's stderr tail ``regbench show`` prints (``--full``: all that was kept).
STDERR_LINES = 5


def print_inventory(inv: Inventory, *, all_runs: bool = False, full: bool = False) -> None:
    """Benchmarks, versions with their builds, failed builds, and the failed runs (or every run),
    then the end of the stderr of those runs (all of what was kept with ``full``); runs whose
    stderr ends alike are printed once.

    Where an invocation stored more than one run (a tool's, one per benchmark it reports, or a
    run's measures), versions count both invocations and series-runs, and so does the last line.
    """
    from rich.markup import escape

    from ..model import iso_timestamp
    from ..failures import build_lines, failure_cause

    retried = bool(inv.retried)  # failed runs run again with success since: counted apart
    # Runs of an earlier definition of their benchmark, out of every analysis: counted apart.
    superseded = sum(b.runs_superseded for b in inv.benchmarks)
    rows = [[escape(b.name), escape(b.unit) or "—", b.direction, str(b.runs_ok), str(b.runs_failed),
             *([str(b.runs_retried)] if retried else []), *([str(b.runs_superseded)] if superseded else [])]
            for b in inv.benchmarks]
    emit_table("Benchmarks", ["benchmark", "unit", "direction", "runs ok", "runs failed",
                              *(["failed, retried since"] if retried else []),
                              *(["superseded"] if superseded else [])], rows,
               right={"runs ok", "runs failed", "failed, retried since", "superseded"})
    invocations = inv.invocations
    shared = invocations != len(inv.runs)  # some invocation stored several series-runs
    tagged = any(vc.tags for vc in inv.versions)
    rows = []
    for vc in inv.versions:
        v = vc.version
        rows.append([escape(v.name), *([escape(", ".join(vc.tags))] if tagged else []), (v.commit or "")[:10],
                     escape(v.timestamp_text or (iso_timestamp(v.timestamp) if v.timestamp else "")),
                     vc.build_status or "", *([str(vc.invocations)] if shared else []), str(vc.runs_ok),
                     str(vc.runs_failed), *([str(vc.runs_retried)] if retried else []),
                     *([str(vc.runs_superseded)] if superseded else [])])
    counts = ["invocations", "series-runs ok", "series-runs failed"] if shared else ["runs ok", "runs failed"]
    counts += ["failed, retried since"] if retried else []
    counts += ["superseded"] if superseded else []
    emit_table("Versions (history order)",
               ["version", *(["tags"] if tagged else []), "commit", "timestamp", "build", *counts], rows,
               right=set(counts))
    labels = {vc.version.name: vc.tags[0] for vc in inv.versions if vc.tags}
    for b in inv.failed_builds:
        console.print(failed_build_line(labels.get(b.version, b.version), b.exit_code, b.log_tail, variant=b.variant))
        if full and (lines := build_lines(b.log_tail)):
            console.print("\n".join("  " + escape(line) for line in lines), markup=True)
    shown = inv.runs if all_runs else inv.failed_runs
    # By benchmark, version in history order, configuration, machine and run: the store's order is
    # the order runs ended, which RMIT shuffles.
    rank = {vc.version.name: k for k, vc in enumerate(inv.versions)}
    shown = tuple(sorted(shown, key=lambda r: (r.benchmark, rank.get(r.version, len(rank)), r.config, r.machine, r.run_index)))
    if shown:
        where = _differing(shown)
        rows = []
        for r in shown:
            why = failure_cause(r.status, r.stderr_tail, width=100) if r.failed else ""
            rows.append([escape(r.benchmark), escape(labels.get(r.version, r.version)),
                         *(escape(str(getattr(r, k))) for k in where), str(r.run_index),
                         r.status + (" (retried since)" if r.id in inv.retried else ""),
                         "" if r.exit_code is None else str(r.exit_code), str(max(0, r.n_samples - r.warmup)),
                         str(r.warmup), "" if r.duration is None else f"{r.duration:.2f}", escape(why)])
        emit_table("Runs" if all_runs else "Failed runs",
                   ["benchmark", "version", *where, "run", "status", "exit", "samples", "warm-up", "seconds",
                    "why"], rows, right={"run", "exit", "samples", "warm-up", "seconds"})
        _print_stderr_tails(shown, full=full)
    if inv.retried and not all_runs:
        n = len(inv.retried)
        console.print(f"{n} failed run{'' if n == 1 else 's'} not listed: run again with success since "
                      "(--retry-failed); `show --runs` lists them.")
    if superseded:
        console.print(f"{superseded} run{'' if superseded == 1 else 's'} superseded: measured before their benchmark's "
                      "definition changed, kept in the store and out of every analysis"
                      + ("." if all_runs else "; `show --runs` lists them."))
    if shared:
        console.print(f"{invocations} invocations, {len(inv.runs)} series-runs (an invocation stores a run of each "
                      f"benchmark a tool reports, and of each measure) in {inv.location}")
    else:
        console.print(f"{len(inv.runs)} runs in {inv.location}")


def failed_build_line(version: str, exit_code: int | None, log_tail: str | None, *, variant: str = "") -> str:
    """``build failed at VERSION (exit status 2): x.c:3:5: error: ...`` in rich markup: how the
    build ended (an exit status, a command that cannot start, the timeout: regbench's note,
    :func:`~regbench.failures.build_note`), then the builder's error; ``regbench show`` and
    ``compare`` say a failed build so."""
    from rich.markup import escape

    from ..failures import build_cause, build_note

    note, cause = build_note(exit_code, log_tail), build_cause(log_tail)
    return (f"[red]build failed[/red] at {escape(version)}"
            + (f" in the build variant {escape(variant)}" if variant else "")
            + (f" ({escape(note)})" if note else "") + (f": {escape(cause)}" if cause else ""))


def _print_stderr_tails(runs, *, full: bool) -> None:
    """The end of each run's stderr (``full``: all of it that was kept), once per distinct text."""
    from rich.markup import escape

    groups: dict[str, list] = {}
    for r in runs:
        lines = (r.stderr_tail or "").rstrip().splitlines()
        if lines:
            groups.setdefault("\n".join(lines if full else lines[-STDERR_LINES:]), []).append(r)
    for text, members in groups.items():
        first = members[0]
        which = (f"{first.benchmark}@{first.version} run {first.run_index}" if len(members) == 1 else
                 f"{len(members)} runs ({', '.join(sorted({f'{m.benchmark}@{m.version}' for m in members}))}: "
                 f"runs {', '.join(str(m.run_index) for m in members[:10])}{', ...' if len(members) > 10 else ''})")
        what = "all that was kept" if full else f"last {STDERR_LINES} lines (--full: all that was kept)"
        console.print(f"\nstderr of [bold]{escape(which)}[/bold], {what}:")
        console.print("\n".join("  " + escape(line) for line in text.splitlines()), markup=True)


# --------------------------------------------------------------------------------------- summary
def summary_json(rows: Sequence[ExperimentSummary], *, confidence: float) -> list[dict]:
    """One object per experiment: its identity, then the plain and ``robust_`` estimates."""
    out = []
    for r in rows:
        d = {"benchmark": r.benchmark, "version": r.version, "config": r.config, "machine": r.machine,
             "unit": r.unit, "failed_runs": r.failed_runs}
        if r.not_reported:  # no run: the invocation of this benchmark failed at the version
            d["not_reported"] = r.not_reported
        if r.pooled_mean is not None:  # the tool's own, pooled, score (JMH's sample mode)
            d["tool_score"] = finite(r.pooled_mean)
        for label, s in (("", r.plain), ("robust_", r.robust)):
            if s is None:
                continue
            d.update({f"{label}mean": finite(s.mean), f"{label}half_width": finite(s.half_width),
                      f"{label}impact_factor": finite(s.impact_factor), f"{label}n_opt": finite(s.n_opt)})
            if not label:
                d.update(runs=s.n_runs, iterations=s.n_iterations, s2_rho=finite(s.s2_rho),
                         s2_sigma=finite(s.s2_sigma), rho2=finite(s.rho2), confidence_level=confidence)
        out.append(d)
    return out


def _differing(rows) -> list[str]:
    """``config``, ``machine``: those the rows differ in, for a column naming each row's (two rows
    of one benchmark must not look alike, with different results)."""
    return [k for k in ("config", "machine") if len({getattr(r, k) for r in rows}) > 1]


def print_summary(rows: Sequence[ExperimentSummary], *, confidence: float, fmt: str = "table",
                  labels: Mapping[str, str] | None = None) -> None:
    """The summary table (mean ± half-width, robust variant, impact factor, n_opt), or its JSON;
    versions are shown by their ``labels`` (:func:`~regbench.report.console.version_labels`)."""
    if fmt == "json":
        emit_json(summary_json(rows, confidence=confidence))
        return
    from rich.markup import escape

    from .units import display_unit, fmt_count, fmt_interval, fmt_repetitions, fmt_scaled

    # One unit per benchmark (ns, us, ms, s for times), so that its versions read against each other.
    means: dict[str, list[float]] = {}
    for r in rows:
        if r.plain is not None:
            means.setdefault(r.benchmark, []).append(r.plain.mean)
    units = {name: display_unit(values, next(r.unit for r in rows if r.benchmark == name))
             for name, values in means.items()}
    shown = _differing(rows)
    pooled = any(r.pooled_mean is not None for r in rows)
    columns = ["benchmark", "version", *shown, "runs", "iter", "mean ± hw", "±%", "robust mean ± hw", "impact",
               "n_opt", *(["tool's score"] if pooled else [])]
    table = []
    single = [r for r in rows if r.plain is not None and r.plain.n_runs < 2]
    labels = labels or {}
    for r in rows:
        p, q = r.plain, r.robust
        where = [escape(str(getattr(r, k))) for k in shown]
        version = escape(labels.get(r.version, r.version))
        if p is None:
            what = (f"[red]not reported: {escape(r.not_reported)} failed[/red]" if r.not_reported
                    else f"[red]{r.failed_runs} failed runs[/red]")
            table.append([escape(r.benchmark), version, *where, "0", "", what, "", "", "", "",
                          *([""] if pooled else [])])
            continue
        unit = units[r.benchmark]
        runs = str(p.n_runs) + (f" [red](+{r.failed_runs} failed)[/red]" if r.failed_runs else "")
        table.append([escape(r.benchmark), version, *where, runs, fmt_count(p.n_iterations),
                      escape(fmt_interval(p.mean, p.half_width, unit)),
                      fmt_pct(p.relative_half_width, sign=False),
                      escape(fmt_interval(q.mean, q.half_width, unit)) if q else "—",
                      fmt_num(p.impact_factor), fmt_repetitions(p.n_opt),
                      *([escape(fmt_scaled(r.pooled_mean, unit)) if r.pooled_mean is not None else ""]
                        if pooled else [])])
    emit_table(f"Summary ({confidence:.0%} confidence)", columns, table,
               right={c for c in columns if c not in ("benchmark", "version", *shown)})
    if single:
        console.print(single_run_note(len(single)), markup=False)
    if pooled:
        console.print(POOLED_NOTE, markup=False)


#: What the ``tool's score`` column of ``regbench summary`` is, under the table.
POOLED_NOTE = ("tool's score: JMH's own score of a sample-mode benchmark, every invocation it timed pooled (an iteration "
               "weighs by the invocations it timed). `mean` is the mean of the runs' means of their iterations, each "
               "iteration weighing alike, as in every other mode: the intervals, `compare` and `detect` use those. "
               "The two differ where the iterations timed different numbers of invocations.")


def single_run_note(n: int) -> str:
    """Why experiments with one run have no interval (``± —``), and what to do."""
    return (f"No interval (± —) for {n} experiment{'' if n == 1 else 's'} with a single run: intervals are over "
            "runs (fresh processes, the unit of replication), since the iterations inside one process share its "
            "random initial conditions. A tool's output "
            "(hyperfine, pytest-benchmark...) imported from one invocation is one run, however many times the "
            "tool measured; run the tool again and import each output with the same --version (each adds a run), "
            "or let regbench repeat it: a command benchmark with `format = \"NAME\"` in regbench.toml.")


# --------------------------------------------------------------------------------------- compare
def comparison_json(rows: Sequence[BenchmarkComparison], *, confidence: float) -> list[dict]:
    """One object per benchmark: both means, the change with its interval, runs, verdict, and
    what each run contributed (``location``, with ``location_reason`` when ``auto`` chose it)."""
    return [{
        "benchmark": r.benchmark, "config": r.config, "machine": r.machine, "a": r.a, "b": r.b,
        "unit": r.unit, "direction": r.direction, "mean_a": finite(r.comparison.mean_a), "mean_b": finite(r.comparison.mean_b),
        "change": finite(r.comparison.change), "ci_low": finite(r.comparison.ci_low),
        "ci_high": finite(r.comparison.ci_high), "runs_a": r.comparison.runs_a, "runs_b": r.comparison.runs_b,
        "verdict": r.verdict, "method": f"bootstrap-{r.comparison.method}", "confidence_level": confidence,
        "location": r.location, "location_reason": r.location_reason, "scale": r.scale,
    } for r in rows]


def change_cells(r: BenchmarkComparison, unit: DisplayUnit) -> tuple[str, str]:
    """The change of ``r`` and its interval, as shown: a percentage (``+3.40%``, ``[+2.10%,
    +4.70%]``), or where ``r`` is compared by its difference (``scale`` ``"difference"``: a metric
    not above 0) the difference in ``unit`` (``+9.962 ms``, ``[+9.5 ms, +10.4 ms]``)."""
    from .units import fmt_scaled

    c = r.comparison
    if r.scale != "difference":
        return fmt_pct(c.change), f"[{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}]"

    def signed(x: float) -> str:
        text = fmt_scaled(x, unit)
        return "+" + text if math.isfinite(x) and x > 0 else text

    return signed(c.change), f"[{signed(c.ci_low)}, {signed(c.ci_high)}]"


def location_words(r: BenchmarkComparison) -> str:
    """What each run of ``r`` contributed, for people: ``mean``, ``median``, ``10% quantile``
    (``90% quantile`` where higher is better: :func:`regbench.stats.run_location`)."""
    from ..stats.runs import LOW_QUANTILE

    if r.location != "low":
        return r.location
    return f"{LOW_QUANTILE if r.direction == 'lower' else 1 - LOW_QUANTILE:.0%} quantile"


def compared_statistic(rows: Sequence[BenchmarkComparison], location: str | None) -> str:
    """The statistic compared, in words: ``the mean of run means`` (``location`` None: not asked
    for), ``the mean of the runs' 10% quantiles``, or, where benchmarks differ (``auto``), each
    run's location named in the ``location`` column."""
    if location is None:
        return "the mean of run means"
    auto = " as detect chooses it" if location == "auto" else ""
    words = {location_words(r) for r in rows}
    if len(words) == 1:
        return f"the mean of the runs' {words.pop()}s" + (f" ({auto.strip()})" if auto else "")
    return f"the mean of each run's location{auto} (the `location` column)"


def comparison_units(rows: Sequence[BenchmarkComparison]) -> dict[str, DisplayUnit]:
    """The unit each benchmark's means are shown in: one per benchmark (its rows of every
    configuration and machine), chosen from both sides' means (:func:`~.units.display_unit`)."""
    from .units import display_unit

    means: dict[str, list[float]] = {}
    for r in rows:
        means.setdefault(r.benchmark, []).extend((r.comparison.mean_a, r.comparison.mean_b))
    return {r.benchmark: display_unit(means[r.benchmark], r.unit) for r in rows}


def print_comparison(rows: Sequence[BenchmarkComparison], *, confidence: float, threshold: float,
                     fmt: str = "table", labels: Mapping[str, str] | None = None,
                     location: str | None = None) -> None:
    """Version B against version A, one row per benchmark, or its JSON; the versions are shown by
    their ``labels`` (:func:`~regbench.report.console.version_labels`), and the means in the unit
    that suits each benchmark, as :func:`print_summary` shows them.  With ``location`` (``compare
    --location``), a column names what each run contributed, and the title the option."""
    if fmt == "json":
        emit_json(comparison_json(rows, confidence=confidence))
        return
    from rich.markup import escape

    from .units import fmt_scaled

    labels = labels or {}
    a, b = (labels.get(v, v) for v in (rows[0].a, rows[0].b))
    style = {"regression": "red", "improvement": "green", "no change": "", "inconclusive": "yellow",
             "failed": "bold red"}
    shown = _differing(rows)
    units = comparison_units(rows)
    table = []
    for r in rows:
        c = r.comparison
        unit = units[r.benchmark]
        table.append([escape(r.benchmark), *(escape(str(getattr(r, k))) for k in shown),
                      escape(fmt_scaled(c.mean_a, unit)), escape(fmt_scaled(c.mean_b, unit)),
                      *(escape(x) for x in change_cells(r, unit)), f"{c.runs_a}/{c.runs_b}",
                      *([location_words(r)] if location is not None else []),
                      f"[{style[r.verdict]}]{r.verdict}[/]" if style[r.verdict] else r.verdict])
    columns = ["benchmark", *shown, escape(a), escape(b), "change", "CI", "runs",
               *(["location"] if location is not None else []), "verdict"]
    how = "" if location is None else (", location as detect chooses it" if location == "auto"
                                       else f", location {location}")
    emit_table(f"{b} against {a} ({confidence:.0%} CI, threshold {threshold:.1%}{how})", columns, table,
               right={escape(a), escape(b), "change", "CI", "runs"})
    signed = sorted({r.benchmark for r in rows if r.scale == "difference"})
    if signed:
        echo(signed_note(signed, threshold))


def signed_note(names: Sequence[str], threshold: float) -> str:
    """Why the rows of ``names`` show a difference, not a percentage."""
    which = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    limit = f"; the threshold is {threshold:.1%} of A's mean in size" if threshold > 0 else ""
    return (f"{which}: runs below 0 (or A's mean 0), where a ratio has no direction: the change is B - A in "
            f"the benchmark's unit{limit}")


def variance_json(rows: Sequence[BenchmarkVariance]) -> list[dict]:
    """One object per benchmark: both sides, SD and CV of each, the SD ratio with its interval, the test."""
    return [{
        "benchmark": r.benchmark, "unit": r.unit, "of": r.of,
        "a": {"version": r.a, "config": r.config_a, "machine": r.machine_a},
        "b": {"version": r.b, "config": r.config_b, "machine": r.machine_b},
        "n_a": c.n_a, "n_b": c.n_b, "sd_a": finite(c.sd_a), "sd_b": finite(c.sd_b), "cv_a": finite(c.cv_a),
        "cv_b": finite(c.cv_b), "sd_ratio": finite(c.ratio), "sd_ratio_ci_low": finite(c.ratio_ci_low),
        "sd_ratio_ci_high": finite(c.ratio_ci_high), "sd_ratio_ci_method": c.ratio_ci_method,
        "confidence_level": c.confidence_level, "test": c.test, "center": c.center,
        "statistic": finite(c.statistic), "p": finite(c.pvalue), "alpha": c.alpha, "verdict": c.verdict,
    } for r in rows for c in (r.comparison,)]


def print_variance(rows: Sequence[BenchmarkVariance], *, of: str, alpha: float, fmt: str = "table") -> None:
    """``compare --variance``: one row per benchmark, as Larres et al. 2013, tables 3-4 (SD, CV, Levene p)."""
    if fmt == "json":
        emit_json(variance_json(rows))
        return
    from rich.markup import escape

    from .units import display_unit, fmt_scaled

    style = {"variance increased": "red", "variance decreased": "green", "no evidence of a change": "",
             "undecidable": "yellow"}
    # Standard deviations in the unit that suits each benchmark's (both sides', every row of it).
    sds: dict[str, list[float]] = {}
    for r in rows:
        sds.setdefault(r.benchmark, []).extend((r.comparison.sd_a, r.comparison.sd_b))
    units = {name: display_unit(values, next(r.unit for r in rows if r.benchmark == name))
             for name, values in sds.items()}
    # A row names its configuration/machine only where the rows differ in them.
    shown = [k for k, get in (("config", lambda r: (r.config_a, r.config_b)),
                              ("machine", lambda r: (r.machine_a, r.machine_b))) if len({get(r) for r in rows}) > 1]
    table = []
    for r in rows:
        c = r.comparison
        where = []
        if "config" in shown:
            where.append(r.config_a if r.config_a == r.config_b else f"{r.config_a} → {r.config_b}")
        if "machine" in shown:
            where.append(r.machine_a if r.machine_a == r.machine_b else f"{r.machine_a} → {r.machine_b}")
        name = r.benchmark + (f" [{', '.join(where)}]" if where else "")
        table.append([escape(name), f"{c.n_a}/{c.n_b}", escape(fmt_scaled(c.sd_a, units[r.benchmark])),
                      escape(fmt_scaled(c.sd_b, units[r.benchmark])),
                      fmt_num(c.cv_a), fmt_num(c.cv_b), fmt_num(c.ratio), c.test, _fmt_p(c.pvalue),
                      f"[{style[c.verdict]}]{c.verdict}[/]" if style[c.verdict] else c.verdict])
    r0 = rows[0]
    title = (f"variance of {'run means' if of == 'runs' else 'all samples'}: "
             f"{_side(r0.b, r0.config_b, r0.machine_b, rows, 'b')} against "
             f"{_side(r0.a, r0.config_a, r0.machine_a, rows, 'a')} (alpha {alpha:g})")
    columns = ["benchmark", "n A/B", "SD A", "SD B", "CV A", "CV B", "SD ratio", "test", "p", "verdict"]
    emit_table(title, columns, table, right={"n A/B", "SD A", "SD B", "CV A", "CV B", "SD ratio", "p"})


def _side(version: str, config: str, machine: str, rows, which: str) -> str:
    """A side for the title: its version, with configuration and machine when all rows share them."""
    shared = [value for attr, value in (("config", config), ("machine", machine))
              if all(getattr(r, f"{attr}_{which}") == value for r in rows)]
    return f"{version} ({', '.join(shared)})" if shared else version


def _fmt_p(p: float) -> str:
    if not math.isfinite(p):
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"
