"""Comparisons run until settled (:mod:`regbench.run.sequential`) and bisections
(:mod:`regbench.run.bisect`): the live status line while they run, their tables, sentences and
JSON. Shown by ``compare --run``, ``bisect`` and ``detect --bisect``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..run.sequential import SessionReporter
from .console import console, emit_table, fmt_pct

if TYPE_CHECKING:
    from ..run.bisect import BisectResult, FailureBisection
    from ..run.sequential import Settled


class LiveReporter(SessionReporter):
    """A one-line live status on stderr: which comparison, how many pairs, the interval so far."""

    def __init__(self):
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False)
        self.status = None

    def __enter__(self):
        self.status = self.console.status("preparing versions")
        self.status.start()
        return self

    def __exit__(self, *exc):
        self.status.stop()

    def version_ready(self, version: str, status: str) -> None:
        if status != "ok":
            self.console.print(f"build of {version}: {status}", markup=False)
        elif self.status is not None:
            self.status.update(f"{version} ready")

    def note(self, text: str) -> None:
        self.console.print(text, markup=False)

    def progress(self, text: str) -> None:
        if self.status is not None:
            self.status.update(text)

    def pair_done(self, benchmark: str, a: str, b: str, pairs: int, decision) -> None:
        if self.status is not None:
            self.status.update(f"{benchmark}: {b} vs {a}, {pairs} observation(s), {fmt_pct(decision.change)} "
                               f"[{fmt_pct(decision.ci_low)}, {fmt_pct(decision.ci_high)}] {decision.decision}")


def settled_row(s: Settled) -> dict:
    """A :class:`~regbench.run.sequential.Settled` as JSON."""
    d = s.decision

    def num(x):
        return x if x is not None and x == x and abs(x) != float("inf") else None

    return {"benchmark": s.benchmark, "a": s.a, "b": s.b, "verdict": s.verdict, "gates": s.gates, "stopped": s.stopped,
            "decision": d.decision if d else None, "change": num(d.change) if d else None,
            "ci_low": num(d.ci_low) if d else None, "ci_high": num(d.ci_high) if d else None,
            "alpha": d.alpha if d else None, "threshold": d.threshold if d else None,
            "pairs": s.pairs, "failed_pairs": s.failed_pairs, "seconds": round(s.seconds, 3),
            "more_pairs": s.more_pairs, "pairing": s.pairing, "compared_by": s.compared_by,
            "modes": s.modes.modes if s.modes else None, "measure": s.measure, "counter": s.counter,
            "location": s.location}


def settled_text(s: Settled) -> str:
    """One sentence for a comparison that did not settle, else ''."""
    if s.stopped == "settled":
        return ""
    if s.b_broken:
        what = "did not build" if s.stopped == "unbuilt" else f"failed in every run ({s.failed_pairs}) while {s.a}'s succeeded"
        return (f"{s.benchmark}: failed: {s.b} {what} (`regbench show --version {s.b}` says why; "
                "`regbench bisect --failure` finds the commit that broke it).")
    why = {"budget": "the time budget was spent", "max-pairs": "the pair limit was reached",
           "failed": "its runs kept failing", "unbuilt": "a version did not build"}[s.stopped]
    more = f"; about {s.more_pairs} more pairs needed" if s.more_pairs else ""
    if s.decision is not None and s.decision.decision == "changed":
        return (f"{s.benchmark}: the change is certain, but not whether it reaches the threshold "
                f"({s.decision.threshold:.1%}) after {s.pairs} pair(s): {why}{more}.")
    return f"{s.benchmark}: inconclusive after {s.pairs} pair(s): {why}{more}."


def print_settled(rows: Sequence[Settled], *, title: str) -> None:
    """The table of ``compare --run``, then a sentence for each comparison that did not settle."""
    from rich.markup import escape

    style = {"regression": "red", "improvement": "green", "small regression": "yellow",
             "small improvement": "yellow", "regression (size uncertain)": "yellow",
             "improvement (size uncertain)": "yellow", "no change": "", "inconclusive": "yellow", "failed": "red"}
    table = []
    for s in rows:
        d = s.decision
        table.append([escape(s.benchmark), fmt_pct(d.change) if d else "—",
                      f"[{fmt_pct(d.ci_low)}, {fmt_pct(d.ci_high)}]" if d else "—",
                      str(s.pairs), f"{s.seconds:.1f} s",
                      f"[{style[s.verdict]}]{s.verdict}[/]" if style[s.verdict] else s.verdict])
    emit_table(title, ["benchmark", "change", "CS", "pairs", "time", "verdict"], table,
               right={"change", "CS", "pairs", "time"})
    for s in rows:
        text = settled_text(s)
        if text:
            console.print(text, markup=False)
        if s.modes is not None or s.pairing == "duet" or s.measure != "time" or s.location != "mean":
            console.print(f"{s.benchmark}: compared {s.compared_by}.", markup=False)


def live_title(rows: Sequence[Settled], *, alpha: float, threshold: float) -> str:
    """The title of the ``compare --run`` table."""
    return (f"{rows[0].b} against {rows[0].a} (run until settled: error rate {alpha:.0%} "
            f"under optional stopping, threshold {threshold:.1%})")


def bisect_json(result: BisectResult) -> dict:
    """A bisection as JSON (``regbench bisect --format json``, and ``bisect`` of ``detect --bisect``)."""
    return {"benchmark": result.benchmark, "good": result.good, "bad": result.bad, "status": result.status,
            "culprit": result.culprit, "commits": result.commits, "runs": result.runs,
            "campaign_id": result.campaign_id, "total": settled_row(result.total),
            "culprit_change": settled_row(result.culprit_change) if result.culprit_change else None,
            "steps": [{"commit": s.commit, "verdict": s.verdict, "triples": s.triples,
                       "position": s.position if s.position == s.position else None,
                       "seconds": round(s.seconds, 3)} for s in result.steps],
            "candidates": list(result.candidates), "skipped": list(result.skipped)}


def failure_bisect_json(result: FailureBisection) -> dict:
    """A bisection of a failure as JSON (``regbench bisect --failure --format json``, and the
    ``bisect`` of a failure in ``detect --bisect --json-failures``)."""
    return {"benchmark": result.benchmark, "good": result.good, "bad": result.bad, "failure": True,
            "status": result.status, "culprit": result.culprit, "error": result.error, "reason": result.reason,
            "commits": result.commits, "runs": result.runs, "campaign_id": result.campaign_id,
            "steps": [{"commit": s.commit, "verdict": s.verdict, "runs": s.runs, "error": s.error,
                       "seconds": round(s.seconds, 3)} for s in result.steps],
            "candidates": list(result.candidates), "skipped": list(result.skipped)}


def print_failure_bisect(result: FailureBisection) -> None:
    """A bisection of a failure: GOOD, BAD and each commit tried, one line each, then the first
    failing commit or why there is none."""
    from rich.markup import escape

    console.print(f"{escape(result.benchmark)}: the first failing commit of {result.good}..{result.bad} "
                  f"({result.commits} commits)")
    for k, s in enumerate(result.steps):
        who = ("GOOD " if k == 0 else "BAD " if k == 1 else "") + s.commit
        if s.verdict == "unbuilt":
            console.print(f"  {who}: skipped (its build failed)", markup=False)
        elif s.verdict == "good":
            console.print(f"  {who}: runs ({s.runs} run{'s' if s.runs > 1 else ''})", markup=False)
        else:
            console.print(f"  {who}: fails ({s.runs} runs): {s.error}", markup=False)
    if result.skipped:
        console.print(f"Skipped (did not build): {', '.join(result.skipped)}.")
    if result.status == "found":
        console.print(f"First failing commit: [bold]{result.culprit}[/]: {escape(result.error or '')}; "
                      f"{result.runs} runs in all.")
    elif result.status == "undecided":
        console.print(f"Undecided: the first failing commit is one of {', '.join(result.candidates)} (commits before "
                      "it did not build).")
    else:
        console.print(f"Nothing to bisect: {escape(result.reason or result.status)}.")


def _bisected_by(t: Settled) -> str:
    """What each run of a bisection contributed, when not its mean time."""
    if t.measure == "instructions":
        return (f"instruction counts ({t.counter or 'counter'}): instructions are not time; "
                "the commit found is the one that changed the instructions executed")
    from ..run.sequential import low_location_words

    return {"median": "run medians", "low": low_location_words(t.direction)}[t.location]


#: Why a bisection step skipped its commit, by verdict (regbench.run.bisect.SKIPPED).
_SKIP_WHY = {"unbuilt": "its build failed", "failed": "its benchmark failed in every run"}


def print_bisect(result: BisectResult) -> None:
    """A bisection: BAD against GOOD, one line per step, then the culprit or why there is none."""
    from rich.markup import escape

    t = result.total
    d = t.decision
    head = f"{escape(result.benchmark)}: {result.bad} against {result.good} ({result.commits} commits)"
    if d is not None:
        head += f": {fmt_pct(d.change)} [{fmt_pct(d.ci_low)}, {fmt_pct(d.ci_high)}] after {t.pairs} pairs"
    console.print(head)
    if t.measure != "time" or t.location != "mean":
        console.print(f"Every comparison and step on {_bisected_by(t)}.", markup=False)
    for s in result.steps:
        level = 0.0 if abs(s.position) < 0.005 else s.position  # no "-0%"
        where = f", level {level:.0%} of the way from GOOD to BAD" if s.position == s.position else ""
        if s.verdict in _SKIP_WHY:
            console.print(f"  {s.commit}: skipped ({_SKIP_WHY[s.verdict]})")
            continue
        console.print(f"  {s.commit}: like {s.verdict}" if s.verdict in ("good", "bad") else f"  {s.commit}: {s.verdict}",
                      end="")
        console.print(f" ({s.triples} triples of runs{where})")
    if result.skipped:
        console.print(f"Skipped (could not be measured): {', '.join(result.skipped)}.")
    if result.status == "found" and result.culprit_change is not None:
        c = result.culprit_change.decision
        own = (f"{fmt_pct(c.change)} [{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}] against its predecessor "
               f"({result.culprit_change.pairs} pairs, {c.decision})" if c is not None
               else "its own change against its predecessor could not be measured")
        console.print(f"First bad commit: [bold]{result.culprit}[/]: {own}; {result.runs} runs in all.")
    elif result.status == "no change" and d is not None:
        console.print(f"No change of {d.threshold:.1%} or more between GOOD and BAD: nothing to bisect.")
    elif result.status == "unbuilt":
        which = [f"{name} ({commit})" for name, commit in (("GOOD", result.good), ("BAD", result.bad))
                 if commit in result.total.unbuilt] or ["GOOD or BAD"]
        console.print(f"{' and '.join(which)} did not build: nothing to bisect (`regbench show --version "
                      f"{(result.total.unbuilt or (result.good,))[0]}` gives the builder's error).")
    else:
        unbuilt = [s.commit for s in result.steps if s.verdict in _SKIP_WHY and s.commit in result.candidates]
        if t.b_broken:
            why = (f"BAD's benchmark failed in every run ({t.failed_pairs}) while GOOD's ran: nothing to time; "
                   f"`regbench bisect --failure {result.good} {result.bad}` finds the commit that broke it")
        elif t.stopped == "failed":
            why = (f"the runs kept failing ({t.failed_pairs} pairs with a failed run): `regbench show --version "
                   f"{result.bad}` says why")
        elif t.stopped != "settled":
            why = "GOOD and BAD could not be told apart within the budget; raise --budget or --max-pairs"
        elif any(s.verdict == "undecided" for s in result.steps):
            why = "a step did not settle within its budget; raise --budget or --max-pairs"
        else:
            why = f"{', '.join(unbuilt)} could not be measured (skipped)"
        console.print(f"Undecided: the first bad commit is one of {', '.join(result.candidates)} ({why}).")
