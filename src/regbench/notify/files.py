"""File writes shared by the file sinks: atomic, and one process at a time.

Two ``notify`` calls may deliver to the same file at once (two CI jobs, ``detect --notify`` beside
``alerts notify``).  A sink therefore never just replaces its file: :func:`update_atomically`
takes the lock of the file's folder (:func:`regbench.locks.locked_folder`), reads the file, adds
its alerts and writes the result through a temporary file and a rename, so that a reader sees the
old file or the new one, never half of one, and no call's alerts replace another's.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..locks import locked_folder
from .base import SinkError


def update_atomically(path: Path, update: Callable[[str | None], str | None]) -> None:
    """Replace ``path`` by ``update(its text)`` (``None`` when there is no file) while holding
    the lock of its folder; ``update`` returning None leaves the file as it is."""
    path = Path(path)
    try:
        with locked_folder(path.parent):
            try:
                old: str | None = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                old = None
            new = update(old)
            if new is not None:
                write_atomically(path, new)
    except OSError as exc:
        raise SinkError(f"cannot write {path}: {exc.strerror or exc}") from exc


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename, so a
    reader sees the old file or the new one, never half of one."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise SinkError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise SinkError(f"cannot write {path}: {exc.strerror or exc}") from exc
