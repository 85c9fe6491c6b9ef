"""Temporary folders that say whether their process is alive.

Each run works in a temporary folder (``regbench-run-*``: its output, its result file) and a
ramdisk campaign copies trees to a tmpfs (``regbench-ramdisk-*``).  A process killed with
``kill -9`` cannot remove them, and on a tmpfs they hold memory.  So each such folder is *owned*:
its process holds an ``flock`` on it from before the folder gets its name until the folder is
removed, and the operating system drops the lock when the process dies, however it dies.
:func:`remove_stale` (called when a campaign or a session starts) removes every such folder
whose lock is free, and leaves those of live processes alone.

The folder is made under a temporary name (``.regbench-new-*``), locked, then renamed to
``regbench-run-XXXXXXXX.owned``: no process ever sees an owned folder that is not locked yet.
A folder without the ``.owned`` ending (made by a regbench from before owned folders, which may
be running right now) is never taken for stale here; ``regbench clean`` removes such folders
once they are old.  (The mark is in the name, not a file inside: a ramdisk copy is the
benchmark's working folder.)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

#: The prefixes of owned folders (a run's scratch folder, a ramdisk copy, a measure's probe).
PREFIXES = ("regbench-run-", "regbench-ramdisk-", "regbench-probe-")
#: The name of a folder being made (killed in the few microseconds before its rename: removed
#: once it is older than :data:`NEW_GRACE` seconds).
NEW_PREFIX = ".regbench-new-"
NEW_GRACE = 60.0
#: The ending of an owned folder's name (:func:`tempfile.mkdtemp`'s names have no dot).
OWNED = ".owned"

# The locks this process holds, by folder (a lock is held by an open file descriptor).
_held: dict[str, int] = {}


def make_owned_dir(prefix: str, base: str | os.PathLike | None = None) -> Path:
    """A new folder ``prefix*`` in ``base`` (default: the system's temporary folder), owned by
    this process until :func:`release` (see :func:`owned_dir` for the usual case)."""
    if not prefix.startswith(PREFIXES):
        raise ValueError(f"an owned folder's prefix is one of {PREFIXES}, not {prefix!r}")
    made = tempfile.mkdtemp(prefix=NEW_PREFIX, dir=base)
    fd = os.open(made, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by the benchmark
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        final = os.path.join(os.path.dirname(made), prefix + os.path.basename(made)[len(NEW_PREFIX):] + OWNED)
        os.rename(made, final)
    except BaseException:
        os.close(fd)
        shutil.rmtree(made, ignore_errors=True)
        raise
    _held[final] = fd
    return Path(final)


def release(path: str | os.PathLike) -> None:
    """Give up the lock of an owned folder (:func:`remove_tree` does, after removing it)."""
    fd = _held.pop(str(path), None)
    if fd is not None:
        os.close(fd)


@contextlib.contextmanager
def owned_dir(prefix: str, base: str | os.PathLike | None = None) -> Iterator[Path]:
    """:func:`make_owned_dir`, removed (whatever is in it) and released when the block ends."""
    path = make_owned_dir(prefix, base)
    try:
        yield path
    finally:
        remove_tree(path)


def in_use(path: str | os.PathLike) -> bool:
    """Whether a live process owns the folder ``path`` (holds its lock)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def remove_stale(bases: Iterable[str | os.PathLike | None]) -> list[Path]:
    """Remove the owned folders in ``bases`` (None are skipped) whose process is gone; return
    them.  A folder whose lock is held (a live run, here or in another campaign), or that is not
    an owned one, is left alone.
    """
    removed: list[Path] = []
    for base in dict.fromkeys(str(b) for b in bases if b is not None):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            new = entry.name.startswith(NEW_PREFIX)
            if not (new or (entry.name.startswith(PREFIXES) and entry.name.endswith(OWNED))):
                continue  # not an owned folder (or one made by a regbench without them)
            try:
                if not entry.is_dir(follow_symlinks=False) or \
                        (new and time.time() - entry.stat(follow_symlinks=False).st_mtime < NEW_GRACE):
                    continue  # not a folder, or one being made right now
            except OSError:
                continue
            if _remove_if_dead(Path(entry.path)):
                removed.append(Path(entry.path))
    return removed


def _remove_if_dead(path: Path) -> bool:
    """Remove the owned folder ``path`` if nobody holds its lock."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False  # removed meanwhile, or not ours to open
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its process is alive
        try:
            held, now = os.fstat(fd), os.stat(path, follow_symlinks=False)
        except OSError:
            return False  # another campaign removed it meanwhile
        if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
            return False  # removed and made again meanwhile: not the folder locked
        _rmtree(path)  # holding the lock: no other campaign removes it at the same time
        return True
    finally:
        os.close(fd)


def remove_tree(path: str | os.PathLike) -> None:
    """Remove ``path`` whatever a benchmark left in it (read-only folders included); an owned
    folder's lock is given up after."""
    _rmtree(Path(path))
    release(path)


def _rmtree(path: Path) -> None:
    root = os.path.abspath(path)

    def retry(func, name, exc) -> None:
        # A folder the benchmark made read-only is made writable again, but only inside ``path``:
        # never ``path``'s own parent (/dev/shm, the temporary folder), whose mode is not ours to
        # change, and not for a file already gone (removed by another process meanwhile).
        error = exc[1] if isinstance(exc, tuple) else exc
        parent = os.path.dirname(os.path.abspath(name))
        if isinstance(error, FileNotFoundError) or not (parent == root or parent.startswith(root + os.sep)):
            return
        try:
            os.chmod(parent, 0o700)
            func(name)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)
