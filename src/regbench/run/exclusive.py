"""One measuring run at a time on a machine, whatever regbench process starts it.

Two runs that overlap on one machine disturb each other's timing: they share the CPUs, the
caches, the memory bandwidth and the disk (Larres et al. 2013, s.3: other processes are a noise
source to control).  A campaign's own runs never overlap (its executor makes one at a time), but
two commands can: a campaign and a `compare --run` started beside it, two CI jobs on one runner,
two Dask workers on one host.  Each run therefore holds a lock of the machine while it lasts
(``[noise] exclusive``, on by default), taken just before its process starts: the runs of
concurrent commands interleave, each alone on the machine, instead of overlapping; none waits
for a whole campaign, only for the run in progress.

A run pinned to CPUs (``[noise] pin``) shares the machine's lock with other pinned runs and
holds one lock per CPU it is pinned to, so that runs pinned to disjoint CPUs may run side by
side (what pinning them apart is for) while an unpinned run still waits for all of them.  The
locks are taken in one order (the machine's, then the CPUs' by number), so two runs never wait
for each other.

Written here on :func:`fcntl.flock` (no library offers a reader-writer lock of the machine
across unrelated processes): the kernel drops a lock when its process dies, whatever kills it,
so a crashed run never leaves the machine locked.  The lock files live in the system's
temporary folder, shared by every user and store of the machine.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

#: The lock of the whole machine (exclusive for an unpinned run, shared for a pinned one).
MACHINE_LOCK = "regbench-measuring.lock"


def lock_dir() -> Path:
    """Where the lock files are: the system's temporary folder (``TMPDIR``)."""
    return Path(tempfile.gettempdir())


@contextlib.contextmanager
def measuring(pin: Sequence[int] | None = None, *, enabled: bool = True,
              waiting: Callable[[], None] | None = None,
              resumed: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold this machine's measuring lock while the block runs (a run): exclusively, or with
    ``pin``, shared with other pinned runs and exclusively for each of its CPUs.  Waits for the
    runs of other processes in the way, calling ``waiting`` once first if it has to and
    ``resumed`` once it holds the lock after waiting (a progress display says so, then names
    the run again); does nothing when ``enabled`` is false or where :mod:`fcntl` does not
    exist."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, as with `exclusive = false`
        enabled = False
    if not enabled:
        yield
        return
    held: list[int] = []
    waited = False

    def wait() -> None:
        nonlocal waited
        if not waited and waiting is not None:
            waiting()
        waited = True

    try:
        if pin:
            held.append(_lock(lock_dir() / MACHINE_LOCK, fcntl.LOCK_SH, wait))
            for cpu in sorted(set(pin)):
                held.append(_lock(lock_dir() / f"regbench-measuring-cpu{cpu}.lock", fcntl.LOCK_EX, wait))
        else:
            held.append(_lock(lock_dir() / MACHINE_LOCK, fcntl.LOCK_EX, wait))
        if waited and resumed is not None:
            resumed()
        yield
    finally:
        for fd in reversed(held):
            os.close(fd)  # closing the descriptor drops its lock


def _lock(path: Path, how: int, waiting: Callable[[], None]) -> int:
    """A descriptor of ``path`` (created, readable by every user) holding the lock ``how``;
    ``waiting`` is called before waiting for it when another process holds it."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:  # another user's file: a lock needs only a read descriptor
        fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(fd, how)
    except BaseException:  # interrupted while waiting (Ctrl-C): nothing held
        os.close(fd)
        raise
    return fd
