"""Reading a small JSON result file whole, for the adapters of Python tools and BMF.

pytest-benchmark, pyperf, asv and BMF files are small (one object per benchmark, kilobytes to a
few megabytes), so they are decoded whole by the stdlib's C decoder.  Every problem becomes an
:class:`~regbench.errors.InputError` ``FILE:LINE: what is wrong``: syntax errors carry the line
the decoder stopped at; a wrong value is reported at the line where its benchmark's name first
appears in the text (:func:`line_of`).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import jsonsafe

_GZIP_MAGIC = b"\x1f\x8b"


def read_text(path: Path) -> str:
    """The file's text; a gzip file (pyperf's ``.json.gz``) is decompressed."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=where) from None
    if raw.startswith(_GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"corrupt or truncated gzip file ({exc})", path=where) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=where) from None


def load(path: Path) -> tuple[Any, str]:
    """``(decoded JSON, text)`` of the file, or an InputError with the line of the syntax error."""
    text = read_text(path)
    if not text.strip():
        raise InputError("empty file (expected a JSON object)", path=str(path), line=1)
    try:
        return jsonsafe.loads(text), text
    except json.JSONDecodeError as exc:
        truncated = " (the file is truncated)" if exc.pos >= len(text.rstrip()) else ""
        raise InputError(f"invalid JSON: {exc.msg}{truncated}", path=str(path), line=exc.lineno) from None


def read_head(head: str, path: Path, size: int) -> str:
    """What a sniffer should look at: ``head``, or the decompressed start of a gzip file."""
    if not head.startswith("\x1f\ufffd"):
        return head
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", errors="replace")
    except (EOFError, OSError, zlib.error):
        return ""


def line_of(text: str, name: str) -> int | None:
    """The line on which the JSON string ``name`` first appears in ``text`` (None if it does not)."""
    for needle in (json.dumps(name), json.dumps(name, ensure_ascii=False)):
        i = text.find(needle)
        if i >= 0:
            return text.count("\n", 0, i) + 1
    return None


def finite(value: Any) -> bool:
    """Whether ``value`` is a JSON number (not a boolean) that is finite."""
    return jsonsafe.finite_number(value)
