"""Execute one *run*: one fresh, untrusted OS process of one benchmark on one version.

Runs are the unit of replication because every process starts from different random initial
conditions (seed 000 s.2), so each run is its own process, never a loop inside regbench.  The
process is treated as untrusted and slow (STYLE.md habit 11): an explicit argv and no shell, its
own session and process group, a timeout after which the *whole group* is killed, a captured
stderr tail, and the configured command is never mutated.

Whatever happens to the process is a recorded result, never an exception (DESIGN.md
"Principles"): :class:`RunOutcome.status` is one of :data:`regbench.model.RUN_STATUSES`:

``ok``       exit status 0 and at least one sample, all of them finite numbers
``failed``   non-zero exit status (or the program could not be started at all)
``crashed``  killed by a signal (``exit_code`` is then minus the signal number)
``timeout``  still running after ``spec.timeout`` seconds; its process group was killed
``garbage``  exit status 0 but the output is not samples; ``stderr_tail`` says which line

Output formats (``output`` in regbench.toml): ``lines`` is one number per line, blank lines
ignored; ``jsonl`` is one JSON value per line, an object with a numeric ``"value"`` or a bare
number.  Every sample is kept, warm-up included: the store records the warm-up count and analyses
drop those samples.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import numpy as np

from ..config import BenchmarkSpec

#: Characters of stderr kept with a run (the end of it: that is where the error is).
STDERR_TAIL = 2000
WORKER = Path(__file__).with_name("worker.py")
_NOTE = "[regbench] "


@dataclass(frozen=True)
class RunOutcome:
    """What one run produced.

    Attributes
    ----------
    status : str
        One of :data:`regbench.model.RUN_STATUSES` (see the module docstring).
    samples : numpy.ndarray
        Every sample in order, warm-up included (float64).  For a run that did not succeed,
        the samples parsed before anything went wrong (often none).
    exit_code : int or None
        The exit status; minus the signal number for ``crashed``; None for ``timeout`` and for
        a program that could not be started.
    stderr_tail : str
        The last :data:`STDERR_TAIL` characters of stderr, ending with a ``[regbench]`` line
        that explains a non-``ok`` status.
    duration : float
        Wall-clock seconds from start to exit (or kill).
    started_at : datetime
        When the process started (UTC, naive).
    """

    status: str
    samples: np.ndarray
    exit_code: int | None
    stderr_tail: str
    duration: float
    started_at: datetime
    tool_runs: tuple = ()  # with spec.format: what the tool reported (regbench.adapters.ToolRun)


#: In a command benchmark with ``format``, this argument is replaced by the path of a file the
#: tool writes its results to (JMH ``-rff {output}``, pytest-benchmark ``--benchmark-json={output}``).
OUTPUT_PLACEHOLDER = "{output}"


@dataclass(frozen=True)
class ProcessResult:
    """How a process ended (see :func:`run_process`)."""

    returncode: int | None  # None when it timed out or could not start
    timed_out: bool
    duration: float
    started_at: datetime
    start_error: str | None = None


def execute_run(spec: BenchmarkSpec, *, tree: Path, python: str, run_index: int,
                version: str, extra_env: dict[str, str] | None = None) -> RunOutcome:
    """Run one benchmark once, in a fresh process, and classify the result.

    Parameters
    ----------
    spec : BenchmarkSpec
        The benchmark as configured; it is not modified.
    tree : Path
        The version's source tree; the process runs in ``tree / spec.cwd``.
    python : str
        The interpreter of Python benchmarks (``kind == "python"``), which are run by
        :mod:`regbench.run.worker`; unused for command benchmarks.
    run_index : int
        Which run of this experiment this is (``REGBENCH_RUN_INDEX``).
    version : str
        The version's name (``REGBENCH_VERSION``).

    Returns
    -------
    RunOutcome
        Never raises for anything the benchmark does.  ``KeyboardInterrupt`` kills the process
        group and propagates.

    Notes
    -----
    The environment is the inherited one, plus ``spec.env``, plus ``REGBENCH_ITERATIONS``
    (warm-up + measured iterations), ``REGBENCH_WARMUP``, ``REGBENCH_RUN_INDEX`` and
    ``REGBENCH_VERSION``.
    """
    tree = Path(tree).resolve()
    env = run_environment(spec, run_index=run_index, version=version)
    env.update(extra_env or {})  # a release's virtual environment (regbench.run.releases)
    with tempfile.TemporaryDirectory(prefix="regbench-run-") as tmp:
        samples_file = Path(tmp) / "samples.jsonl"
        if spec.kind == "python":
            argv = [python, str(WORKER), spec.target, "--iterations", str(spec.iterations),
                    "--warmup", str(spec.warmup), "--min-time", repr(float(spec.min_time)),
                    "--output", str(samples_file), "--path", str(tree)]
        else:
            argv = list(spec.command)
        result_file = Path(tmp) / "result"
        if spec.format is not None:
            argv = [a.replace(OUTPUT_PLACEHOLDER, str(result_file)) for a in argv]
        with open(Path(tmp) / "stdout", "w+b") as out, open(Path(tmp) / "stderr", "w+b") as err:
            proc = run_process(argv, cwd=tree / spec.cwd, env=env, timeout=spec.timeout,
                               stdout=out, stderr=err)
            stderr = read_tail(err, STDERR_TAIL)
            if spec.format is not None:
                uses_file = any(OUTPUT_PLACEHOLDER in a for a in spec.command)
                return _classify_tool(proc, stderr, result_file if uses_file else Path(tmp) / "stdout", spec)
            if spec.kind == "python":
                text = samples_file.read_text("utf-8", "replace") if samples_file.exists() else ""
                fmt = "jsonl"
            else:
                out.seek(0)
                text = out.read().decode("utf-8", "replace")
                fmt = spec.output
    return _classify(proc, stderr, text, fmt, spec)


def _process_status(proc: ProcessResult, spec: BenchmarkSpec) -> tuple[str, str] | None:
    """``(status, note)`` when the process itself did not end well, else None (then its output decides)."""
    if proc.start_error is not None:
        return "failed", proc.start_error
    if proc.timed_out:
        return "timeout", f"killed after {spec.timeout:g} s (timeout); its process group was killed"
    if proc.returncode < 0:
        return "crashed", f"killed by signal {_signal_name(-proc.returncode)}"
    if proc.returncode > 0:
        return "failed", f"exit status {proc.returncode}"
    return None


def _classify(proc: ProcessResult, stderr: str, text: str, fmt: str, spec: BenchmarkSpec) -> RunOutcome:
    samples, problem = parse_samples(text, fmt)
    ended = _process_status(proc, spec)
    if ended is not None:
        status, note = ended
    elif problem is not None:
        status, note = "garbage", problem
    elif samples.size == 0:
        what = "the worker wrote no samples" if spec.kind == "python" else "no samples on stdout"
        status, note = "garbage", what
    else:
        status, note = "ok", None
    return RunOutcome(status=status, samples=samples, exit_code=proc.returncode,
                      stderr_tail=with_note(stderr, note), duration=proc.duration,
                      started_at=proc.started_at)


def _classify_tool(proc: ProcessResult, stderr: str, path: Path, spec: BenchmarkSpec) -> RunOutcome:
    """The outcome of one invocation of a benchmark tool whose output an adapter reads.

    The tool's results are parsed whatever the exit status (some tools exit non-zero when one
    benchmark fails); a status other than ``ok`` comes from the process first, then from the
    parse: output the adapter cannot read, or no results, is ``garbage`` with the adapter's
    message.
    """
    from ..adapters.base import get_adapter
    from ..errors import InputError

    runs: list = []
    problem = None
    if path.exists():
        try:
            runs = get_adapter(spec.format).parse(path)
        except InputError as exc:
            problem = f"{spec.format} output: {exc.reason}" + (f" (line {exc.line})" if exc.line else "")
    ended = _process_status(proc, spec)
    if ended is not None:
        status, note = ended
    elif problem is not None:
        status, note = "garbage", problem
    elif not runs:
        status, note = "garbage", f"no {spec.format} results in the tool's output"
    else:
        status, note = "ok", None
    return RunOutcome(status=status, samples=np.empty(0), exit_code=proc.returncode,
                      stderr_tail=with_note(stderr, note), duration=proc.duration,
                      started_at=proc.started_at, tool_runs=tuple(runs) if status == "ok" else ())


def run_environment(spec: BenchmarkSpec, *, run_index: int, version: str) -> dict[str, str]:
    """The environment of a run: inherited, plus ``spec.env``, plus the ``REGBENCH_*`` variables."""
    env = dict(os.environ)
    env.update(spec.env)
    env.update(
        REGBENCH_ITERATIONS=str(spec.warmup + spec.iterations),
        REGBENCH_WARMUP=str(spec.warmup),
        REGBENCH_RUN_INDEX=str(run_index),
        REGBENCH_VERSION=version,
    )
    return env


def parse_samples(text: str, fmt: str) -> tuple[np.ndarray, str | None]:
    """Parse a benchmark's output into samples.

    Returns the samples read before the first bad line, and ``None`` or a one-line description
    of that bad line (``"stdout line 3: not a number: 'hello'"``).
    """
    if fmt not in ("lines", "jsonl"):
        raise ValueError(f"`fmt` must be 'lines' or 'jsonl', got {fmt!r}")
    values: list[float] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        value, what = (_parse_line if fmt == "lines" else _parse_json_line)(line)
        if what is None and not math.isfinite(value):
            what = "not a finite number"
        if what is not None:
            shown = line if len(line) <= 80 else line[:77] + "..."
            return np.asarray(values, dtype=float), f"stdout line {number}: {what}: {shown!r}"
        values.append(value)
    return np.asarray(values, dtype=float), None


def _parse_line(line: str) -> tuple[float, str | None]:
    try:
        return float(line), None
    except ValueError:
        return math.nan, "not a number"


def _parse_json_line(line: str) -> tuple[float, str | None]:
    try:
        obj = json.loads(line)
    except ValueError:
        return math.nan, "not JSON"
    if isinstance(obj, dict):
        if "value" not in obj:
            return math.nan, 'JSON object without a "value"'
        obj = obj["value"]
    if isinstance(obj, bool) or not isinstance(obj, int | float):
        return math.nan, "not a number"
    return float(obj), None


# --------------------------------------------------------------------------- processes
def run_process(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
                stdout: IO[bytes], stderr: IO[bytes] | int) -> ProcessResult:
    """Run ``argv`` (no shell) in its own session; kill its process group on timeout.

    ``stdout`` and ``stderr`` are files (or ``subprocess.STDOUT`` for stderr), not pipes, so
    that a descendant that keeps them open cannot make regbench wait.  When the process ends,
    whatever it left running in its process group is killed as well: stragglers must not
    disturb the next run.  On Linux the process also gets ``SIGKILL`` if regbench dies.
    ``KeyboardInterrupt`` (and any other exception while waiting) kills the group and
    propagates.  A program that cannot be started gives ``start_error``, not an exception.
    """
    started_at = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=stdout,
            stderr=stderr, start_new_session=True, close_fds=True, preexec_fn=_death_signal(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        where = f" in {cwd}" if not Path(cwd).is_dir() else ""
        return ProcessResult(None, False, time.monotonic() - t0, started_at,
                             f"cannot start {argv[0]!r}{where}: {reason}")
    try:
        exited = _wait_unreaped(proc, timeout)
        # The leader is still running or not yet reaped, so its pid, which is the group id,
        # cannot have been reused: killing the group cannot hit an unrelated process.
        _kill_group(proc)
        proc.wait()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    duration = time.monotonic() - t0
    if not exited:
        return ProcessResult(None, True, duration, started_at)
    return ProcessResult(proc.returncode, False, duration, started_at)


def _wait_unreaped(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait up to ``timeout`` s for ``proc`` to exit, leaving it unreaped when possible.

    Returns True if it exited, False if it is still running.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = None
    if fd is None:
        # No pidfd (old kernel, not Linux): reap while waiting.  The group kill that follows
        # then relies on the pid not being reused in between, a window of microseconds.
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()  # not select.select: fd numbers may exceed FD_SETSIZE
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if poller.poll(max(1, math.ceil(left * 1000))):
                return True
    finally:
        os.close(fd)


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _death_signal():
    """A ``preexec_fn`` making the child get SIGKILL when regbench dies (Linux), else None.

    It only calls one foreign function resolved beforehand: code run between fork and exec
    must not take locks another thread may hold.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # regbench died before prctl took effect
            os._exit(1)

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
    line = _NOTE + note
    room = limit - len(line) - 1
    head = text[-room:] if room > 0 else ""
    if head and not head.endswith("\n"):
        head += "\n"
    return (head + line)[-limit:]


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return str(number)
