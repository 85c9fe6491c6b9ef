"""What ``regbench report``, ``serve`` and ``token`` print."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .console import console

if TYPE_CHECKING:
    from ..web.static_site import ReportResult


def print_report_written(result: ReportResult) -> None:
    """Where the report is and how to open it."""
    console.print(f"Report of {result.series} series and {result.alerts} alert(s) written to {result.directory} "
                  f"({result.files} files).", markup=False)
    console.print(f"Open {result.index.resolve().as_uri()}", markup=False)
