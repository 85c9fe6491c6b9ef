"""The Markdown sink: a table of the alerts delivered to it, for a pull-request comment (e.g.
``gh pr comment --body-file regbench-alerts.md``).

Each call adds the rows of the alerts it delivers to the table already in the file (an alert
once, by its number), under the lock of the file's folder and atomically
(:func:`regbench.notify.files.update_atomically`): two notifies at once both land in the file.
Whoever posts the file takes it away; the next call starts a new one.  A call with nothing to
deliver writes "No new performance alerts." when there is no file, and leaves a file alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from ..model import Alert
from .base import Sink, pct, register, tagged
from .files import update_atomically

#: A row of the table (cells are escaped by :func:`cell`, so only rows start like this).
ROW = re.compile(r"^\| #(\d+) \| ")


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")


def row(a: Alert) -> str:
    """One alert's row of the table.  A failure has no change nor interval (``—``) and gives its
    error where a change gives its methods; one that never succeeded says so as its previous."""
    mark = {"regression": "**regression**", "failure": "**failure**"}.get(a.kind, a.kind)
    if a.restores is not None:
        mark += f" (fixes #{a.restores})"
    if a.status == "fixed" and a.fixed_by_alert is not None:
        mark += f" (already undone by #{a.fixed_by_alert})"
    ci = f"[{pct(a.ci_low)}, {pct(a.ci_high)}]" if a.ci_low is not None and a.ci_high is not None else "—"
    machines = ", ".join(a.machines) + (" (machine-specific)" if a.spread == "machine-specific" else "")
    change, last = ("—", a.error or "") if a.failure else (pct(a.change), ", ".join(a.methods))
    if a.culprit is not None:  # what detect --bisect found
        last += f"; first {'failing' if a.failure else 'bad'} commit {a.culprit}"
    version = tagged(a.version, a.version_tags)
    if a.until is not None:  # a creep: its change is spread over these versions
        version += f" .. {a.until} (a creep)"
    return "| " + " | ".join([
        f"#{a.id}", mark, cell(a.benchmark), cell(a.config), cell(machines), cell(version),
        "never succeeded" if a.never_succeeded else cell(tagged(a.previous, a.previous_tags)), change, ci,
        cell(last)]) + " |"


def render(alerts: Sequence[Alert], *, title: str) -> str:
    return page([row(a) for a in alerts], title=title)


def page(rows: Sequence[str], *, title: str) -> str:
    """The whole file: a heading, a count and the table of ``rows`` (from :func:`row`)."""
    if not rows:
        return f"### {title}\n\nNo new performance alerts.\n"
    marks = [r.split(" | ", 2)[1] for r in rows]
    regressions = sum(m.startswith("**regression**") for m in marks)
    failures = sum(m.startswith("**failure**") for m in marks)
    counted = f"{regressions} regression(s), {len(rows) - regressions - failures} improvement(s)"
    if failures:  # a benchmark that no longer runs: its row's last cell is the error
        counted += f", {failures} failing benchmark(s)"
    lines = [f"### {title}", "",
             f"{len(rows)} new alert(s): {counted}.",
             "", "| alert | kind | benchmark | config | machine | version | previous | change | CI | "
             + ("methods or error |" if failures else "methods |"),
             "|---:|---|---|---|---|---|---|---:|---:|---|", *rows,
             "", "Triage with `regbench alerts ack|invalid|expected ID --reason ...`."]
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
        def add(text: str | None) -> str | None:
            if text is not None and not alerts:
                return None
            shown = {int(m.group(1)): m.string for m in map(ROW.match, (text or "").splitlines()) if m}
            new = [row(a) for a in alerts if a.id not in shown]
            return page([*shown.values(), *new], title=self.title)

        update_atomically(self.path, add)
