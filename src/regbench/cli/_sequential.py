"""What `compare --run`, `bisect` and `detect --bisect` share: progress, durations, result tables."""

from __future__ import annotations

import contextlib
import re
import signal
import threading

import click

from ..run.sequential import SessionReporter

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")


class DurationType(click.ParamType):
    """``90``, ``90s``, ``10m`` or ``1.5h`` as seconds."""

    name = "DURATION"

    def convert(self, value, param, ctx):
        if isinstance(value, int | float):
            return float(value)
        m = _DURATION.match(str(value))
        if not m or float(m.group(1)) <= 0:
            self.fail(f"{value!r} is not a duration such as 90s, 10m or 1h", param, ctx)
        factor = {"m": 60, "min": 60, "h": 3600}.get(m.group(2) or "s", 1)
        return float(m.group(1)) * factor


DURATION = DurationType()


@contextlib.contextmanager
def sigterm_as_interrupt():
    # `kill PID` then cleans up like Ctrl-C: the run's process group is killed and the campaign
    # is marked interrupted.
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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

    def pair_done(self, benchmark: str, a: str, b: str, pairs: int, decision) -> None:
        from ._output import fmt_pct

        if self.status is not None:
            self.status.update(f"{benchmark}: {b} vs {a}, {pairs} observation(s), {fmt_pct(decision.change)} "
                               f"[{fmt_pct(decision.ci_low)}, {fmt_pct(decision.ci_high)}] {decision.decision}")


def settled_row(s) -> dict:
    """A :class:`~regbench.run.sequential.Settled` as JSON."""
    d = s.decision

    def num(x):
        return x if x is not None and x == x and abs(x) != float("inf") else None

    return {"benchmark": s.benchmark, "a": s.a, "b": s.b, "verdict": s.verdict, "gates": s.gates, "stopped": s.stopped,
            "decision": d.decision if d else None, "change": num(d.change) if d else None,
            "ci_low": num(d.ci_low) if d else None, "ci_high": num(d.ci_high) if d else None,
            "alpha": d.alpha if d else None, "threshold": d.threshold if d else None,
            "pairs": s.pairs, "failed_pairs": s.failed_pairs, "seconds": round(s.seconds, 3),
            "more_pairs": s.more_pairs}


def settled_text(s) -> str:
    """One sentence for a comparison that did not settle, else ''."""
    if s.stopped == "settled":
        return ""
    why = {"budget": "the time budget was spent", "max-pairs": "the pair limit was reached",
           "failed": "its runs kept failing", "unbuilt": "a version did not build"}[s.stopped]
    more = f"; about {s.more_pairs} more pairs needed" if s.more_pairs else ""
    if s.decision is not None and s.decision.decision == "changed":
        return (f"{s.benchmark}: the change is certain, but not whether it reaches the threshold "
                f"({s.decision.threshold:.1%}) after {s.pairs} pair(s): {why}{more}.")
    return f"{s.benchmark}: inconclusive after {s.pairs} pair(s): {why}{more}."


def print_settled(rows, *, title: str) -> None:
    from rich.markup import escape

    from ._output import console, emit_table, fmt_pct

    style = {"regression": "red", "improvement": "green", "small regression": "yellow",
             "small improvement": "yellow", "regression (size uncertain)": "yellow",
             "improvement (size uncertain)": "yellow", "no change": "", "inconclusive": "yellow"}
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
