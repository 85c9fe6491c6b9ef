"""The Markdown sink: a table of the alerts delivered by one notify call, for a pull-request
comment (e.g. ``gh pr comment --body-file regbench-alerts.md``).

The file is rewritten by every call, atomically; with nothing due it says so in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from ..model import Alert
from .base import Sink, pct, register
from .files import write_atomically


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")


def render(alerts: Sequence[Alert], *, title: str) -> str:
    if not alerts:
        return f"### {title}\n\nNo new performance alerts.\n"
    regressions = sum(a.kind == "regression" for a in alerts)
    lines = [f"### {title}", "",
             f"{len(alerts)} new alert(s): {regressions} regression(s), {len(alerts) - regressions} improvement(s).",
             "", "| alert | kind | benchmark | config | machine | version | previous | change | CI | methods |",
             "|---:|---|---|---|---|---|---|---:|---:|---|"]
    for a in alerts:
        mark = "**regression**" if a.kind == "regression" else "improvement"
        if a.restores is not None:
            mark += f" (fixes #{a.restores})"
        ci = f"[{pct(a.ci_low)}, {pct(a.ci_high)}]" if a.ci_low is not None and a.ci_high is not None else "—"
        lines.append("| " + " | ".join([
            f"#{a.id}", mark, cell(a.benchmark), cell(a.config), cell(a.machine), cell(a.version),
            cell(a.previous), pct(a.change), ci, cell(", ".join(a.methods))]) + " |")
    lines += ["", "Triage with `regbench alerts ack|invalid|expected ID --reason ...`."]
    return "\n".join(lines) + "\n"


@register
class MarkdownSink(Sink):
    type = "markdown"
    per_alert = False

    def __init__(self, name: str | None = None, *, path: str | Path,
                 title: str = "regbench: performance alerts", **kw):
        super().__init__(name, **kw)
        self.path = Path(path)
        self.title = title

    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        write_atomically(self.path, render(alerts, title=self.title))
