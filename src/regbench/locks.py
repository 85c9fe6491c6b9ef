"""A folder locked while a block runs: how processes that share a folder take turns.

``flock`` on the folder itself (no lock file is left behind); the lock is dropped by the
operating system when its process dies, however it dies.  Used where several regbench
processes write the same files: the file sinks of concurrent ``notify`` calls
(:mod:`regbench.notify.files`), and campaigns checking out and building versions in one
worktree cache (:func:`regbench.run.core.prepare_version`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked_folder(folder: str | os.PathLike) -> Iterator[Path]:
    """Create ``folder`` if needed, wait for its exclusive lock, and hold it while the block runs.

    Raises ``OSError`` when the folder cannot be made or opened.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by child processes
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder
    finally:
        os.close(fd)  # drops the lock
