"""Changes found by detection: the change table (Kalibera et al. 2005, fig. 6), the notes on false-discovery-rate
control, on confirmation and on alerts, the detection JSON of DESIGN.md, and the whole account of
a :func:`regbench.pipeline.detect_and_alert` outcome (``regbench detect``).
"""

from __future__ import annotations

import math
import sys

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .console import console, emit_json, emit_table, fmt_pct, readable

if TYPE_CHECKING:
    from ..detect.driver import DetectionResult
    from ..detect.alerts import AlertOutcome
    from ..detect.base import Change
    from ..detect.notes import SeriesNote
    from ..model import Alert, Failing
    from ..pipeline import DetectedChange, DetectOutcome


def change_table(changes: Sequence[Change], *, method: str, confidence: float, min_change: float | None,
                 labels: Mapping[str, str] | None = None, show_machine: bool = False) -> None:
    """Print the change table of Kalibera et al. 2005, fig. 6: newer version, older version, change (and its CI);
    versions are shown by their ``labels`` (:func:`~regbench.report.console.version_labels`).  A
    change names its machine when ``show_machine`` (the store holds several machines) or when the
    changes are on several."""
    from rich.markup import escape

    labels = labels or {}
    rows = []
    with_p = any(c.p_value is not None for c in changes)
    machines = show_machine or len({c.machine for c in changes}) > 1

    def series(c: Change) -> str:
        where = ", ".join(x for x in (None if c.config == "default" else c.config, c.machine if machines else None) if x)
        return c.benchmark + (f" [{where}]" if where else "")

    for c in changes:
        colour = "red" if c.kind == "regression" else "green"
        row = [escape(series(c)), escape(labels.get(c.version, c.version)),
               escape(labels.get(c.previous, c.previous)), fmt_pct(c.change), f"[{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}]",
               f"[{colour}]{c.kind}[/]"]
        if with_p:
            row.append(_fmt_p(c.q_value if c.q_value is not None else c.p_value))
        rows.append(row)
    columns = ["benchmark", "newer version", "older version", "change", "CI", "kind"]
    if with_p:
        columns.append("q" if any(c.q_value is not None for c in changes) else "p")
    emit_table(f"Changes ({method}, {confidence:.0%} CI" + (f", min change {min_change:.1%}" if min_change else "") + ")",
               columns, rows, right={"change", "CI", "p", "q"})
    shown: dict[str, str] = {}
    for c in changes:
        if c.estimator:
            shown.setdefault(series(c), c.estimator)
    for name, how in shown.items():
        console.print(f"  {name}: versions compared by {readable(how)}", markup=False, highlight=False)
    for c in changes:
        if c.until:
            console.print(f"  {series(c)}: {fmt_pct(c.change)} is a creep over {labels.get(c.version, c.version)} to "
                          f"{labels.get(c.until, c.until)}, each step below the minimum change: no single commit "
                          "made it", markup=False, highlight=False)


def _fmt_p(p: float | None) -> str:
    if p is None:
        return ""
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def fdr_note(result: DetectionResult) -> str:
    """One line saying what the false-discovery-rate control did."""
    if result.fdr is None:
        return "No false-discovery-rate control (--no-fdr): every change the method found is listed."
    if not result.fdr_applied:
        return f"FDR control not applicable: {result.method} decides by intervals and gives no p-values."
    return (f"False discovery rate controlled at {result.fdr:.0%} across {result.n_series} series "
            f"(Benjamini-Hochberg over {result.n_tests} hypotheses tested); "
            f"{len(result.dropped)} candidate(s) dropped by it.")


def alerts_note(outcome: AlertOutcome) -> str:
    """One line saying what became of the changes, and of the benchmarks that start failing, as
    alerts."""
    parts = [f"{len(outcome.created)} new alert(s)", f"{len(outcome.merged)} already known"]
    new_failures = sum(1 for a in outcome.created if a.failure)
    if new_failures:
        parts[0] += f" ({new_failures} for a benchmark that starts failing)"
    created = {a.id for a in outcome.created}
    earlier = sum(1 for a in outcome.fixed if a.id not in created)
    if earlier:
        parts.append(f"{earlier} earlier alert(s) now fixed")
    if len(outcome.fixed) > earlier:  # a regression and its undoing found in one pass: both are told
        parts.append(f"{len(outcome.fixed) - earlier} of the new already fixed by a later change")
    if outcome.suppressed:
        regressions = sum(1 for c in outcome.suppressed if c.kind == "regression")
        parts.append(f"{len(outcome.suppressed)} suppressed by regbench.toml (not alerted"
                     + (f"; {regressions} regression(s), not gating" if regressions else "") + ")")
    if outcome.withheld:
        parts.append(f"{len(outcome.withheld)} not alerted (refuted or inconclusive when run again)")
    if outcome.held:
        parts.append(f"{len(outcome.held)} held, not notified (seen on fewer machines than [alerts] require_machines)")
    if outcome.raised:
        parts.append(f"{len(outcome.raised)} raised (now seen on enough machines)")
    if outcome.reopened:
        parts.append(f"{len(outcome.reopened)} reopened (no longer run, now failing again)")
    if outcome.suppressed_failures:
        parts.append(f"{len(outcome.suppressed_failures)} failing benchmark(s) suppressed by regbench.toml, "
                     "not gating")
    return "Alerts: " + ", ".join(parts) + " (regbench alerts list)."


def suppressed_note(outcome: DetectOutcome) -> str | None:
    """For a dry run (no :func:`alerts_note`), one line saying how many regressions and failing
    benchmarks suppressed by ``regbench.toml`` were left out of the gate; None when none were."""
    regressions, failing = len(outcome.suppressed_regressions), len(outcome.suppressed_failures)
    if not regressions and not failing:
        return None
    return (f"Suppressed by regbench.toml, not gating: {regressions} regression(s), "
            f"{failing} failing benchmark(s).")


def machine_lines(outcome: DetectOutcome) -> list[str]:
    """One sentence per alert of this detection that is seen on several machines, machine-specific
    or held: ``Alert #3 (fft): seen on 3 machines: a +10.1%, b +9.8%, c +10.4%.``"""
    from ..notify.base import machines_text

    lines = []
    seen: set[int] = set()
    for entry in outcome.changes:
        a = entry.alert
        if a is None or a.id in seen:
            continue
        seen.add(a.id)
        if a.spread == "single" and not a.held:
            continue
        series = a.benchmark + ("" if a.config == "default" else f" [{a.config}]")
        lines.append(f"Alert #{a.id} ({series}, {a.kind}): {machines_text(a)}.")
    return lines


def alert_json(a: Alert | None) -> dict | None:
    """What a change or a failing benchmark became as an alert, for the detection JSON: the
    alert's id, whether it is held, its spread over machines, the machines that show it and those
    that do not, and its status (a failure whose alert is ``invalid`` or ``expected`` does not
    fail ``--fail-on-regression``)."""
    if a is None:
        return None
    return {"id": a.id, "held": a.held, "spread": a.spread, "machines": list(a.machines),
            "unchanged_on": list(a.unchanged_on), "status": a.status}


#: Why a failing benchmark is not run again by ``--confirm``, and why one was not bisected by
#: ``--bisect`` when no other reason is known (its failure alert is marked invalid or expected).
FAILURE_NOT_CONFIRMED = "a failing benchmark: no change to run again"
FAILURE_NOT_BISECTED = "its failure alert is marked invalid or expected: it does not gate"


def failure_json(outcome: DetectOutcome, f: Failing) -> dict:
    """A failing benchmark as an object of the detection JSON, with a change's keys first
    (``kind`` is ``failure``; ``version`` the first version of its failing stretch, ``previous``
    the last with a successful run; ``change``, ``ci_low``, ``ci_high`` and ``method`` null: a
    failure has no size and no detector found it), then its ``error`` (why its runs failed, one
    line), ``newest`` (the newest version it ran at, where every run failed) and ``failed_runs``
    (there); the keys a change gets after ``--confirm``, ``--bisect`` and unless ``--dry-run``."""
    out: dict[str, object] = {
        "benchmark": f.benchmark, "config": f.config, "machine": f.machine, "version": f.first, "previous": f.since,
        "change": None, "ci_low": None, "ci_high": None, "kind": "failure", "method": None,
        "error": f.error, "newest": f.version, "failed_runs": f.failed_runs}
    if outcome.alerts is not None:
        out["alert"] = alert_json(outcome.alerts.failure_of(f))
    if outcome.confirm:
        out.update(confirmation=None, confirm_skipped=FAILURE_NOT_CONFIRMED)
    if outcome.bisect:
        if (found := outcome.failure_bisections.get(f.series)) is not None:
            from .sequential import failure_bisect_json  # with the run package: only after --bisect

            out["bisect"] = failure_bisect_json(found)
        else:
            out.update(bisect=None, bisect_skipped=outcome.failures_not_bisected.get(f.series, FAILURE_NOT_BISECTED))
    return out


def detection_json(outcome: DetectOutcome, *, failures: bool = False) -> list[dict]:
    """The detection JSON (DESIGN.md "Contracts"): one object per change; after ``--confirm`` each
    also has ``confirmation`` (:meth:`regbench.model.Confirmation.to_json`, or null) and, when
    it was not run again, ``confirm_skipped``; after ``--bisect``, ``bisect`` (the bisection, or
    null) and, when it was left alone, ``bisect_skipped``; unless ``--dry-run``, ``alert``
    (:func:`alert_json`, or null for a change not recorded).  With ``failures``, after the
    changes, one object of kind ``failure`` per benchmark failing at the newest version it ran at
    (:func:`failure_json`), by name; without, the array holds changes only, whose ``kind`` is
    ``regression`` or ``improvement`` (the contract other tools rely on, DESIGN.md)."""
    def row(entry: DetectedChange) -> dict:
        change = entry.change
        out = dict(change.to_json(), **({"estimator": change.estimator} if change.estimator else {}),
                   **({"until": change.until} if change.until else {}))
        for key in ("change", "ci_low", "ci_high"):
            # From exactly 0 (a count that was 0 in every run) the relative change is infinite,
            # which JSON cannot write: the largest double stands for it, so that the contract's
            # number holds and every comparison with a threshold still says "beyond" (null broke
            # `change > 0.05` in scripts).
            if isinstance(out[key], float) and math.isinf(out[key]):
                out[key] = math.copysign(sys.float_info.max, out[key])
        if outcome.alerts is not None:
            out["alert"] = alert_json(entry.alert)
        if outcome.confirm:
            out["confirmation"] = entry.confirmation.to_json() if entry.confirmation is not None else None
            if entry.not_confirmed is not None:
                out["confirm_skipped"] = entry.not_confirmed
        if outcome.bisect:
            from .sequential import bisect_json  # with the run package: only after --bisect

            out["bisect"] = bisect_json(entry.bisection) if entry.bisection else None
            if entry.not_bisected is not None:
                out["bisect_skipped"] = entry.not_bisected
        return out

    return [row(entry) for entry in outcome.changes] + \
        ([failure_json(outcome, f) for f in outcome.failing] if failures else [])


def confirmation_line(entry: DetectedChange) -> str:
    """One sentence of what ``--confirm`` made of a change: ``Confirmed: b between v1 and v2:
    regression +10.1% [+6.0%, +14.5%] after 12 pairs (4.1 s of runs, campaign #3).``"""
    c, conf = entry.change, entry.confirmation
    where = f"{c.benchmark}" + ("" if c.config == "default" else f" [{c.config}]") + \
        f" between {c.previous} and {c.version}"
    if conf is None:
        return f"Not run again: {where}: {entry.not_confirmed}."
    head = {"confirmed": "Confirmed", "refuted": "Refuted", "inconclusive": "Inconclusive",
            "unconfirmed": "Unconfirmed"}[conf.status]
    numbers = (f"{fmt_pct(conf.change)} [{fmt_pct(conf.cs_low)}, {fmt_pct(conf.cs_high)}]"
               if conf.change is not None else "")
    cost = f"{conf.pairs} pairs ({conf.seconds:.1f} s of runs, campaign #{conf.campaign_id})"
    how = f" Compared {conf.compared_by}." if conf.compared_by else ""
    if conf.status == "confirmed":
        return f"{head}: {where}: {conf.verdict} {numbers} after {cost}.{how}"
    if conf.campaign_id is None:  # not run: it cannot be run here
        return f"{head}: {where}: {conf.reason}; alerted as before."
    fate = "alerted as before" if conf.alerts else "not alerted"
    return f"{head}: {where}: " + (f"{numbers} " if numbers else "") + f"after {cost}: {conf.reason}; {fate}.{how}"


def note_lines(notes: Sequence[SeriesNote], labels: Mapping[str, str]) -> list[str]:
    """The driver's notes (:mod:`regbench.detect.notes`), one line per kind: the series not
    analysed, with why, and the throughputs fallen to 0 at their newest versions."""
    from ..detect.notes import NOTE_KINDS

    def name(n: SeriesNote) -> str:
        where = [x for x in (n.config if n.config != "default" else "", n.machine if n.machine != "local" else "") if x]
        return n.benchmark + (f" [{', '.join(where)}]" if where else "")

    def shown(items: list[str]) -> str:
        return "; ".join(items[:10]) + (f"; and {len(items) - 10} more" if len(items) > 10 else "")

    out = []
    for kind in NOTE_KINDS:
        of_kind = [n for n in notes if n.kind == kind]
        if not of_kind:
            continue
        if kind == "fell to zero":
            items = [f"{name(n)} from {labels.get(n.zero_from or '', n.zero_from)} on (last above 0 at "
                     f"{labels.get(n.last_above or '', n.last_above)})" for n in of_kind]
            n0 = of_kind[0]
            out.append(f"Throughput fallen to 0 at its newest versions, which detection leaves out as no "
                       f"measurement: {shown(items)}. If the operation stopped completing, that is the worst "
                       f"regression: it fails --fail-on-regression (`regbench compare "
                       f"{labels.get(n0.last_above or '', n0.last_above)} {labels.get(n0.zero_from or '', n0.zero_from)}` "
                       "shows it as -100%).")
        elif kind == "one run":
            from ..detect.lone import ADVICE

            out.append(f"One run a version ({len(of_kind)} series), not reported as changes: "
                       + shown([f"{name(n)}: {n.reason}" for n in of_kind]) + f". Why: {ADVICE}.")
        elif kind == "zero step":
            out.append(f"A step from or to exactly 0 that too few runs show to be sure ({len(of_kind)} series): "
                       + shown([f"{name(n)}: {n.reason}" for n in of_kind]) + ".")
        elif kind in ("detector", "too few runs"):
            out.append(f"Not analysed ({len(of_kind)} series): " + shown([f"{name(n)}: {n.reason}" for n in of_kind]))
        else:
            out.append(f"Not analysed ({len(of_kind)} series), {of_kind[0].reason}: "
                       + shown([name(n) for n in of_kind]))
    return out


def print_detection(outcome: DetectOutcome, *, fmt: str, confidence: float, min_change: float | None,
                    labels: Mapping[str, str] | None = None, machines: Sequence[str] = (),
                    failures: bool = False) -> None:
    """What ``regbench detect`` shows of an outcome before any sink is notified: the changes as
    JSON, or the change table (versions by their ``labels``; each change with its machine when
    the store has several ``machines``, even if this pass found changes on one) with its notes
    and each change's bisection, and the benchmarks that fail at their newest version
    (``outcome.failing``), which no detector sees, each with its failure alert, and those no
    longer run (``outcome.no_longer_run``) whose alert this pass fixed.  The detection JSON lists the changes, then,
    with ``failures``, the failing benchmarks (:func:`detection_json`)."""
    if fmt == "json":
        emit_json(detection_json(outcome, failures=failures))
        return
    from rich.markup import escape

    result = outcome.detection
    change_table(result.changes, method=result.method, confidence=confidence, min_change=min_change, labels=labels,
                 show_machine=len(machines) > 1)
    what = "series with new versions" if result.incremental else "series"
    console.print(f"{len(result.changes)} change(s) in {result.n_series} {what}")
    again = sum(e.told_before for e in outcome.changes)
    if again:
        console.print(f"{again} of them reported again, not found anew: runs of versions checked before came late, "
                      "their series were searched again, and these steps went into their alerts (they do not fail "
                      "--fail-on-regression nor are they bisected or told again).", markup=False, highlight=False)
    if outcome.standing:
        tip = outcome.standing[0].version
        shown = ", ".join(f"#{a.id} {a.benchmark}" + (f" {a.change:+.1%}" if a.change is not None else "")
                          for a in outcome.standing[:5]) + (", ..." if len(outcome.standing) > 5 else "")
        console.print(f"{len(outcome.standing)} regression alert(s) open at the newest version "
                      f"{(labels or {}).get(tip, tip)}, found by an earlier pass: {shown}; they fail "
                      "--fail-on-regression on every pass over it, as when they were found (`regbench alerts "
                      "expected ID` or `invalid ID` if they are not to).", markup=False, highlight=False)
    if outcome.history is not None:
        console.print(outcome.history, markup=False, highlight=False)
    console.print(fdr_note(result))
    for line in note_lines(result.notes, labels or {}):
        console.print(line, markup=False, highlight=False)
    failing = outcome.failing
    if failing:
        labels = labels or {}

        def alert(f: Failing) -> str:
            a = outcome.alerts.failure_of(f) if outcome.alerts is not None else None
            if a is None:
                return "" if outcome.alerts is None else ", not alerted: suppressed by regbench.toml"
            return f", alert #{a.id}" + ("" if a.status == "new" else f" ({a.status})")

        shown = "; ".join(f"{f.benchmark}" + ("" if f.config == "default" else f" [{f.config}]") + f" on {f.machine} "
                          f"at {labels.get(f.version, f.version)} ({f.failed_runs} failed run"
                          f"{'' if f.failed_runs == 1 else 's'}, last ok at {labels.get(f.since, f.since)}{alert(f)})"
                          for f in failing[:10])
        more = f"; and {len(failing) - 10} more" if len(failing) > 10 else ""
        console.print(f"[red]Failing at the newest version they ran at, which no detector sees:[/red] "
                      f"{escape(shown)}{more} (see `regbench show` and `regbench alerts list`; "
                      "`regbench compare` calls them failed).")
    # Said once, by the pass that fixes their alerts: they stay no longer run on every pass after.
    fixed_now = {a.series for a in outcome.alerts.fixed if a.no_longer_run} if outcome.alerts is not None else set()
    gone = [g for g in outcome.no_longer_run if g.series in fixed_now]
    labels = labels or {}
    for why, told in (("removed from the suite, or renamed", [g for g in gone if g.retired is None]),
                      ("its machine or configuration retired", [g for g in gone if g.retired is not None])):
        if not told:
            continue
        shown = "; ".join(f"{g.benchmark}" + ("" if g.config == "default" else f" [{g.config}]") + f" on {g.machine} "
                          f"(failing at {labels.get(g.version, g.version)}, "
                          + (g.silence(labels) or f"not run at {labels.get(g.by, g.by)}") + ")" for g in told[:10])
        more = f"; and {len(told) - 10} more" if len(told) > 10 else ""
        console.print(f"No longer run ({why}), so no longer failing: {escape(shown)}"
                      f"{more} (`regbench alerts show ID` says why).")
    if outcome.confirm:
        for entry in outcome.changes:
            if entry.confirmation is not None:
                console.print(confirmation_line(entry), markup=False, highlight=False)
        known = sum(1 for e in outcome.changes if e.confirmation is None)
        if known:
            console.print(f"{known} change(s) not run again (already alerts, or suppressed).")
    if outcome.alerts is not None:
        console.print(alerts_note(outcome.alerts), markup=False, highlight=False)
        for line in machine_lines(outcome):
            console.print(line, markup=False, highlight=False)
    elif (note := suppressed_note(outcome)) is not None:
        console.print(note, markup=False, highlight=False)
    if outcome.bisect:
        for entry in outcome.changes:
            if entry.not_bisected is not None:
                c = entry.change
                console.print(f"Not bisected: {escape(c.benchmark)} between {escape(labels.get(c.previous, c.previous))} "
                              f"and {escape(labels.get(c.version, c.version))}: {escape(entry.not_bisected)}.")
        for entry in outcome.changes:
            if entry.bisection is not None:
                c = entry.change
                console.print(f"Bisecting {escape(c.benchmark)} between {escape(labels.get(c.previous, c.previous))} "
                              f"and {escape(labels.get(c.version, c.version))}:")
                from .sequential import print_bisect

                print_bisect(entry.bisection)
        for f in outcome.failing:
            if (reason := outcome.failures_not_bisected.get(f.series)) is not None:
                console.print(f"Not bisected: the failure of {escape(f.benchmark)} between "
                              f"{escape(labels.get(f.since, f.since))} and {escape(labels.get(f.first, f.first))}: "
                              f"{escape(reason)}.")
        for f in outcome.failing:
            if (found := outcome.failure_bisections.get(f.series)) is not None:
                console.print(f"Bisecting the failure of {escape(f.benchmark)} between "
                              f"{escape(labels.get(f.since, f.since))} and {escape(labels.get(f.first, f.first))}:")
                from .sequential import print_failure_bisect

                print_failure_bisect(found)
