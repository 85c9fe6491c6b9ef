"""Shared presentation helpers of the CLI (rich lives here and in the command modules only)."""

from __future__ import annotations

import math
import shutil

from rich.console import Console

# Tables piped to a file or a CI log are not squeezed into 80 columns.
_WIDTH = shutil.get_terminal_size((160, 24)).columns
# soft_wrap: messages with long paths stay on one line (copy-pasteable); tables still fit the width.
console = Console(highlight=False, soft_wrap=True, width=_WIDTH)
err_console = Console(stderr=True, highlight=False)


def fmt_value(x: float | None, unit: str = "") -> str:
    """A measurement with 4 significant digits and its unit."""
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:.4g}{(' ' + unit) if unit else ''}"


def fmt_pct(x: float | None, *, sign: bool = True) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x * 100:+.2f}%" if sign else f"{x * 100:.2f}%"


def fmt_num(x: float | None, digits: int = 3) -> str:
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


def emit_table(title: str, columns: list[str], rows: list[list[str]], *, right: set[str] = frozenset()) -> None:
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
