"""What ``regbench report``, ``serve`` and ``token`` print."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .console import console, emit_table

if TYPE_CHECKING:
    from ..store.tokens import ApiToken
    from ..web.static_site import ReportResult


def print_report_written(result: ReportResult) -> None:
    """Where the report is and how to open it."""
    console.print(f"Report of {result.series} series and {result.alerts} alert(s) written to {result.directory} "
                  f"({result.files} files).", markup=False)
    console.print(f"Open {result.index.resolve().as_uri()}", markup=False)


def print_token_created(token: ApiToken, secret: str) -> None:
    console.print(f"Token #{token.id} {token.name!r} ({' '.join(token.scopes)}) created. Its secret, shown only now:",
                  markup=False)
    console.print(secret, markup=False)


def print_tokens(tokens: Sequence[ApiToken]) -> None:
    rows = [[str(k.id), k.name, " ".join(k.scopes), k.machine or "", k.created_at.strftime("%Y-%m-%d %H:%M"),
             k.revoked_at.strftime("%Y-%m-%d %H:%M") if k.revoked_at else ""] for k in tokens]
    emit_table("API tokens", ["id", "name", "scopes", "machine", "created", "revoked"], rows)


def print_tokens_revoked(tokens: Sequence[ApiToken]) -> None:
    for k in tokens:
        console.print(f"Token #{k.id} {k.name!r} revoked.", markup=False)
