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
