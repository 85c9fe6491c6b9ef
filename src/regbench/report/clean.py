"""What ``regbench clean`` removed, or would remove with ``--dry-run``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from .console import console

if TYPE_CHECKING:
    from ..run.clean import CleanResult

#: How each kind of leftover is named (regbench.run.clean.KINDS).
_WHAT = {"worktree": "git worktree", "cache": "cache folder", "temp": "stale temporary folder"}


def _mib(size: int | None) -> str:
    return "registration only" if size is None else f"{size / 2**20:.1f} MiB"


def print_clean(result: CleanResult) -> None:
    """One line per thing removed (or that would be), then the total."""
    verb = "would remove" if result.dry_run else "removed"
    for x in result.leftovers:
        console.print(f"{verb} {_WHAT[x.kind]}: {escape(str(x.path))} ({_mib(x.size)})")
    if not result.leftovers:
        console.print("Nothing to clean.")
        return
    console.print(f"{len(result.leftovers)} item(s), {_mib(result.size)} in all"
                  + (" (dry run: nothing removed)." if result.dry_run else "."))
