"""Processes: start one untrusted program, wait for it with a timeout, kill all it started.

The mechanics under every run and build (STYLE.md habit 11): an explicit argv and no shell, its
own session and process group, stdout and stderr to files (never pipes a straggler could hold
open), a timeout after which the *whole group* is killed, whatever the group left running killed
when the leader ends, and ``SIGKILL`` to the child if regbench itself dies (Linux).  The process
is reaped with ``wait4``, whose rusage gives its CPU time; a tiny spawner process, when asked,
also gives its own peak memory.  Nothing here knows what a benchmark or its output is: that is
:mod:`regbench.run.execute`.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from ..failures import NOTE  # where a run's stderr is read back (failure_cause) too
from .quiet import OWN_LOAD

#: Characters of stderr kept with a run (the end of it: that is where the error is).
STDERR_TAIL = 2000
#: Seconds the spawner gets to kill what a process started, once asked to stop, before its
#: process group is killed.
STOP_GRACE = 10.0
#: Longest wait for a process without returning to Python code, where a signal's handler runs.
SIGNAL_CHECK = 0.1


@dataclass(frozen=True)
class ProcessResult:
    """How a process ended (see :func:`run_process`)."""

    returncode: int | None  # None when it timed out or could not start
    timed_out: bool
    duration: float
    started_at: datetime
    start_error: str | None = None
    cpu_time: float | None = None  # user + system seconds of the process and its reaped children
    max_rss: int | None = None  # peak resident set size in bytes (the largest of them)
    left_running: int = 0  # processes it left behind that the spawner killed (see run_process)


def run_process(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
                stdout: IO[bytes], stderr: IO[bytes] | int, setup: Callable[[], None] | None = None,
                spawner: bool = False) -> ProcessResult:
    """Run ``argv`` (no shell) in its own session; kill its process group on timeout.

    ``stdout`` and ``stderr`` are files (or ``subprocess.STDOUT`` for stderr), not pipes, so
    that a descendant that keeps them open cannot make regbench wait.  When the process ends,
    whatever it left running in its process group is killed as well: stragglers must not
    disturb the next run.  On Linux the process also gets ``SIGKILL`` if regbench dies.
    ``KeyboardInterrupt`` (and any other exception while waiting) kills the group and
    propagates.  A program that cannot be started gives ``start_error``, not an exception.

    The process is reaped with ``os.wait4``; its rusage gives ``cpu_time`` (of the process and
    the descendants it waited for).  ``setup`` runs in the child between fork and exec (noise
    control: :func:`regbench.run.noise.child_setup` pins it and turns ASLR off).  Every process
    is recorded in :data:`regbench.run.quiet.OWN_LOAD`, so the quiet-system gate can leave regbench's own load
    out.

    ``max_rss`` needs ``spawner=True``: Linux starts the peak resident size of a forked process
    at its parent's resident size, and keeps it across exec, so a process forked from regbench
    (tens to hundreds of MB, with numpy and the store loaded) would report at least that.  With
    ``spawner``, the process is started by :data:`_SPAWNER`, a minimal Python (``-I -S``, about
    5 MB resident) that forks it, gives it exactly ``env``, reaps it with ``wait4`` and reports
    its exit status, rusage and wall time: ``max_rss`` then counts the spawner's few MB at most,
    and ``duration`` is the process's own, without the spawner's start-up.  Without
    ``spawner``, ``max_rss`` is None.

    The spawner also *contains* the process: a process that calls ``setsid`` (a daemon, a
    double fork) leaves the process group and would survive the group kill.  On Linux the
    spawner is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so every descendant
    whose parent ends is re-parented to it rather than to init; when the process ends, the
    spawner kills whatever of it is still running (``left_running`` counts them), and on a
    timeout, or when regbench ends, it is asked to stop (``SIGTERM``) and kills the process and
    all its descendants the same way before its group is killed.
    """
    started_at = datetime.now(UTC).replace(tzinfo=None)
    full = list(argv)
    pass_fds: tuple[int, ...] = ()
    files = contextlib.ExitStack()
    if spawner:
        env_file = files.enter_context(tempfile.TemporaryFile())
        env_file.write(b"\0".join(os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()))
        env_file.flush()
        env_file.seek(0)
        report = files.enter_context(tempfile.TemporaryFile())
        pass_fds = (env_file.fileno(), report.fileno())
        full = [sys.executable, "-I", "-S", "-c", _SPAWNER, *map(str, pass_fds), *argv]
    # The spawner gets SIGTERM, not SIGKILL, if regbench dies: it then kills its group.
    preexec = _preexec(setup, death_signal=signal.SIGTERM if spawner else signal.SIGKILL)
    with files:
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(
                full, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=stdout,
                stderr=stderr, start_new_session=True, close_fds=True, pass_fds=pass_fds, preexec_fn=preexec,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return ProcessResult(None, False, time.monotonic() - t0, started_at,
                                 cannot_start(argv, cwd, getattr(exc, "strerror", None) or str(exc)))
        try:
            exited, usage = _wait_unreaped(proc, timeout)
            if not exited and spawner:
                usage = _stop_spawner(proc)
            # The leader is still running or not yet reaped, so its pid, which is the group id,
            # cannot have been reused: killing the group cannot hit an unrelated process.
            _kill_group(proc)
            if usage is None:
                usage = _reap(proc)
        except BaseException:
            if spawner:
                _stop_spawner(proc)
            _kill_group(proc)
            _reap(proc)
            raise
        t1 = time.monotonic()
        cpu = usage.ru_utime + usage.ru_stime if usage is not None else None
        OWN_LOAD.add(t0, t1, cpu)
        said = [""]
        if spawner:
            report.seek(0)
            said = report.read().decode("utf-8", "replace").split(" ", 1)
        if not exited:
            left = int(said[1]) if said[0] == "stopped" and said[1:] and said[1].isdigit() else 0
            return ProcessResult(None, True, t1 - t0, started_at, cpu_time=cpu, left_running=left)
        if not spawner:
            return ProcessResult(proc.returncode, False, t1 - t0, started_at, cpu_time=cpu)
    if said[0] == "error" and len(said) == 2:
        return ProcessResult(None, False, t1 - t0, started_at, cannot_start(argv, cwd, said[1]))
    try:
        code, utime, stime, maxrss, wall, left_text = said[1].split()
        return ProcessResult(int(code), False, float(wall), started_at, cpu_time=float(utime) + float(stime),
                             max_rss=int(maxrss) * (1 if sys.platform == "darwin" else 1024),  # macOS: bytes
                             left_running=int(left_text))
    except (IndexError, ValueError):  # the spawner itself died (killed from outside)
        return ProcessResult(proc.returncode, False, t1 - t0, started_at, cpu_time=cpu)


def cannot_start(argv: Sequence[str], cwd: Path, reason: str) -> str:
    where = f" in {cwd}" if not Path(cwd).is_dir() else ""
    return f"cannot start {argv[0]!r}{where}: {reason}"


#: The spawner of :func:`run_process` (``python -I -S -c _SPAWNER ENV_FD REPORT_FD ARGV...``): only
#: os, signal, sys and time before the fork, so that the process starts small (ctypes, for
#: prctl, is imported after it, while the child waits on the ``go`` pipe).  It restores the
#: signals Python ignores (as subprocess does), passes the environment from ENV_FD exactly
#: (Python's start-up may add LC_CTYPE to its own), and writes ``exit CODE UTIME STIME MAXRSS
#: WALL LEFT``, ``error REASON``, or, stopped by SIGTERM, ``stopped LEFT``; LEFT counts the
#: processes it had to kill besides the one it started.  The descendants are found in
#: /proc by hand: this isolated interpreter (-I -S) cannot import psutil, and one file per
#: child is all it needs.
_SPAWNER = """\
import os, signal, sys, time
env_fd, out_fd = int(sys.argv[1]), int(sys.argv[2])
argv = sys.argv[3:]
os.set_inheritable(env_fd, False)
os.set_inheritable(out_fd, False)
data = b""
while True:
    chunk = os.read(env_fd, 65536)
    if not chunk:
        break
    data += chunk
env = dict(item.split(b"=", 1) for item in data.split(b"\\0") if b"=" in item)
me = os.getpid()
pid = 0

def children():
    try:
        with open("/proc/self/task/%d/children" % me) as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pass
    kids = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return kids
    for name in names:
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == me:
                        kids.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return kids

def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return

def sweep(main):
    killed = set()
    for _ in range(100000):
        reap()
        kids = children()
        if not kids:
            break
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
                killed.add(k)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    killed.discard(main)
    return len(killed)

def stop(*_):
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os.write(out_fd, b"stopped %d" % sweep(pid))
    os._exit(137)

signal.signal(signal.SIGTERM, stop)
r, w = os.pipe()
go_r, go_w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        os.close(r)
        os.close(go_w)
        for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        if os.read(go_r, 1) != b"g":
            os._exit(127)
        os.close(go_r)
        os.execvpe(argv[0], argv, env)
    except BaseException as exc:
        os.write(w, (getattr(exc, "strerror", None) or str(exc)).encode("utf-8", "replace"))
    os._exit(127)
os.close(w)
os.close(go_r)
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except Exception:
    pass
t0 = time.monotonic()
os.write(go_w, b"g")
os.close(go_w)
error = os.read(r, 4096)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
left = sweep(pid)
if error:
    report = "error " + error.decode("utf-8", "replace")
else:
    code = os.waitstatus_to_exitcode(status)
    report = "exit %d %r %r %d %r %d" % (code, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, wall, left)
os.write(out_fd, report.encode())
"""


def _reap(proc: subprocess.Popen):
    """Reap ``proc`` with ``os.wait4``; its rusage, or None if it was reaped already."""
    if proc.returncode is not None:
        return None
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:  # reaped elsewhere: Popen then knows its status
        proc.wait()
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)  # so that Popen never waits for it again
    return usage


def _wait_unreaped(proc: subprocess.Popen, timeout: float):
    """Wait up to ``timeout`` s for ``proc`` to exit, leaving it unreaped when possible.

    Returns ``(exited, rusage)``: rusage is None unless the process had to be reaped while
    waiting.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = None
    if fd is None:
        # No pidfd (old kernel, not Linux): reap while waiting, polling wait4 (a few ms late at
        # worst).  The group kill that follows then relies on the pid not being reused in
        # between, a window of microseconds.
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                return True, usage
            left = deadline - time.monotonic()
            if left <= 0:
                return False, None
            time.sleep(min(delay, left))
            delay = min(2 * delay, 0.005)
    try:
        poller = select.poll()  # not select.select: fd numbers may exceed FD_SETSIZE
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False, None
            # In slices: a signal (Ctrl-C) that the kernel delivers to another thread of this
            # process (a progress display's, a connection pool's) does not interrupt this
            # thread's poll, and Python runs its handler, which raises KeyboardInterrupt, only
            # when this thread next runs Python code: a poll of the whole timeout could keep
            # Ctrl-C waiting for the benchmark's timeout.
            if poller.poll(max(1, math.ceil(min(left, SIGNAL_CHECK) * 1000))):
                return True, None
    finally:
        os.close(fd)


def _stop_spawner(proc: subprocess.Popen):
    """Ask the spawner to kill its process and everything that descends from it (``SIGTERM``),
    and wait up to :data:`STOP_GRACE` seconds for it to end, unreaped when possible; the rusage
    of :func:`_wait_unreaped` (None unless it had to reap)."""
    if proc.returncode is not None:
        return None
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, signal.SIGTERM)
    return _wait_unreaped(proc, STOP_GRACE)[1]


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _preexec(setup=None, death_signal: int = signal.SIGKILL):
    """A ``preexec_fn`` making the child get ``death_signal`` when regbench dies (Linux), then
    calling ``setup`` (noise control, :func:`regbench.run.noise.child_setup`); None if there is
    nothing to do.

    It only calls foreign functions resolved beforehand: code run between fork and exec must
    not take locks another thread may hold.
    """
    prctl = _prctl() if sys.platform.startswith("linux") else None
    if prctl is None:
        return setup
    parent = os.getpid()
    kill = int(death_signal)

    def preexec() -> None:
        prctl(1, kill, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # regbench died before prctl took effect
            os._exit(1)
        if setup is not None:
            setup()

    return preexec


@functools.cache
def _prctl():
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return fn


# ----------------------------------------------------------------------------- text
def read_tail(f: IO[bytes], limit: int) -> str:
    """The last ``limit`` characters of a binary file (decoded as UTF-8, errors replaced)."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - 4 * limit))  # UTF-8 needs at most 4 bytes a character
    return f.read().decode("utf-8", "replace")[-limit:]


def with_note(text: str, note: str | None, limit: int = STDERR_TAIL) -> str:
    """``text`` cut to fit ``limit`` characters with a final ``[regbench] note`` line."""
    if note is None:
        return text[-limit:]
    line = NOTE + note
    room = limit - len(line) - 1
    head = text[-room:] if room > 0 else ""
    if head and not head.endswith("\n"):
        head += "\n"
    return (head + line)[-limit:]


def signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return str(number)
