"""Where text goes and how numbers look: the consoles, number formats, tables, JSON and a batch
progress bar.

Every other module of :mod:`regbench.report` prints through this one, so that a table looks the
same whichever command shows it: rich box drawing in a terminal, plain aligned columns in a pipe,
a CI log, or when long (:func:`emit_table`).
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from collections.abc import Set
from typing import TYPE_CHECKING

import click
from rich.console import Console

from ..model import version_labels  # noqa: F401 - where the commands take it from

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


# Tables piped to a file or a CI log are not squeezed into 80 columns.
_WIDTH = shutil.get_terminal_size((160, 24)).columns
# soft_wrap: messages with long paths stay on one line (copy-pasteable); tables still fit the width.
console = Console(highlight=False, soft_wrap=True, width=_WIDTH)
err_console = Console(stderr=True, highlight=False)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Plain text, no markup (``click.echo``: what needs to reach the stream byte for byte)."""
    click.echo(text, err=err, nl=nl)


def emit_json(doc, *, allow_nan: bool = False) -> None:
    """A JSON document on stdout, indented by one space (the layout of every ``--format json``).

    Strict JSON: a NaN or an infinity is written as null (strict parsers, Go's or a browser's,
    refuse the bare ``NaN`` that Python writes).  ``allow_nan=True`` keeps them as Python writes."""
    click.echo(json.dumps(doc if allow_nan else _strict(doc), indent=1, allow_nan=allow_nan))


def _strict(doc):
    """``doc`` with every non-finite float replaced by None (lists, tuples and dicts walked)."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: _strict(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_strict(v) for v in doc]
    return doc


def finite(x: float):
    """``x``, or None when it is NaN or infinite (strict JSON has neither)."""
    return x if math.isfinite(x) else None


def fmt_value(x: float | None, unit: str = "") -> str:
    """A measurement with 4 significant digits and its unit."""
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:.4g}{(' ' + unit) if unit else ''}"


def fmt_pct(x: float | None, *, sign: bool = True) -> str:
    """A relative quantity as a percentage with two decimals (``+3.40%``); ``+∞`` for a change from
    exactly 0 (:func:`regbench.stats.compare_runs`), ``—`` for none."""
    if x is not None and math.isinf(x):
        return ("+∞" if x > 0 else "-∞") if sign else "∞"
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x * 100:+.2f}%" if sign else f"{x * 100:.2f}%"


def readable(text: str) -> str:
    """Words built elsewhere with a number formatted as ``+nan`` (the skew of constant runs in a
    location's reason) with that number shown as every undefined number is: ``—``."""
    import re

    return re.sub(r"(?<![\w.])[+-]?nan(?!\w)", "—", text)


def fmt_num(x: float | None, digits: int = 3) -> str:
    """A plain number with ``digits`` significant digits; ``∞`` for infinity, ``—`` for none."""
    if x is None:
        return "—"
    if math.isinf(x):
        return "∞"
    if not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


#: Above this many rows (or when stdout is not a terminal) tables are printed as plain aligned
#: text: rich measures every cell (~1 ms a row), and CI logs are better without box drawing.
RICH_MAX_ROWS = 200


def emit_table(title: str, columns: list[str], rows: list[list[str]], *, right: Set[str] = frozenset()) -> None:
    """Print a table: rich in a terminal, plain aligned columns in a pipe or when long.

    Cells may carry rich markup (``[red]...[/]``); the plain form drops it.
    """
    from rich.table import Table
    from rich.text import Text

    if console.is_terminal and len(rows) <= RICH_MAX_ROWS:
        t = Table(title=title, title_justify="left")
        for col in columns:
            t.add_column(col, justify="right" if col in right else "left")
        for row in rows:
            t.add_row(*row)
        console.print(t)
        return
    plain = [[Text.from_markup(cell).plain for cell in row] for row in rows]
    widths = [max([len(col), *(len(r[k]) for r in plain)]) for k, col in enumerate(columns)]

    def line(cells):
        return "  ".join(c.rjust(w) if columns[k] in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [title, line(columns), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in plain)
    console.file.write("\n".join(out) + "\n")


class BatchProgress:
    """A transient progress bar on stderr, fed by ``progress(done, total)`` calls.

    A context manager: the bar is drawn between entering and leaving, and only when stderr is a
    terminal; outside that, or in a pipe, calls do nothing.
    """

    def __init__(self, what: str):
        self.what = what
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> BatchProgress:
        if sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn(self.what), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                           console=Console(stderr=True), transient=True)
            bar.start()
            self._bar, self._task = bar, bar.add_task(self.what, total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total)
