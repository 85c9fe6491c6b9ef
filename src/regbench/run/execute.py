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

Every run also gets the measures of the whole process (:mod:`regbench.run.measures`): CPU time
and peak memory from ``wait4``'s rusage, wall time, and, when the benchmark declares
``instructions``, an instruction count.  Noise control (``[noise]``, :mod:`regbench.run.noise`)
is applied here: pinning and ASLR in the child, the environment's size, the ramdisk copy and the
quiet-system gate just before the process starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import numpy as np

from ..config import BenchmarkSpec, NoiseControl
from ..errors import ConfigError
from . import measures as _measures
from . import noise as _noise

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
    tool_runs : tuple
        With ``spec.format``: what the tool reported (:class:`regbench.adapters.ToolRun`).
    measures : dict of str to float
        Measures of the whole process, whatever the status: ``cpu`` (user + system CPU
        seconds), ``wall`` (seconds) and ``maxrss`` (peak resident bytes); and ``instructions``
        when declared and the run is ``ok``.  When the benchmark declares ``cpu``, ``maxrss``
        or ``wall``, the process is started by a small spawner (:func:`run_process`) so that
        they are its own; otherwise ``maxrss`` is missing and ``cpu`` includes a few ms of the
        forked copy of regbench.  Empty when the process did not start.
    measure_failures : dict of str to (str, str)
        For an ``ok`` run, the declared measures that could not be taken: ``(status, note)``,
        the status of the measuring process (or ``garbage`` for output that is not a count).
    instruction_counter : str or None
        ``"perf"`` or ``"callgrind"``: what counted ``instructions``.
    """

    status: str
    samples: np.ndarray
    exit_code: int | None
    stderr_tail: str
    duration: float
    started_at: datetime
    tool_runs: tuple = ()
    measures: dict[str, float] = field(default_factory=dict)
    measure_failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    instruction_counter: str | None = None


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
    cpu_time: float | None = None  # user + system seconds of the process and its reaped children
    max_rss: int | None = None  # peak resident set size in bytes (the largest of them)


def execute_run(spec: BenchmarkSpec, *, tree: Path, python: str, run_index: int,
                version: str, extra_env: dict[str, str] | None = None,
                noise: NoiseControl | None = None) -> RunOutcome:
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
    extra_env : dict, optional
        Variables added last (a release's virtual environment, :mod:`regbench.run.releases`).
    noise : NoiseControl, optional
        Noise control for this run (default: none).  With ``ramdisk``, a ``tree / spec.cwd``
        that is not on a tmpfs already is copied to one for this run and removed after it (a
        campaign copies each version's tree once instead, :mod:`regbench.run.campaign`).

    Returns
    -------
    RunOutcome
        Never raises for anything the benchmark does.  ``KeyboardInterrupt`` kills the process
        group and propagates.

    Raises
    ------
    ConfigError
        ``noise`` cannot be applied (the environment is larger than ``env_size``, no tmpfs, a
        ramdisk copy that does not fit), or ``instructions`` is declared and cannot be counted
        here; :func:`regbench.run.campaign.run_campaign` checks these before any run.

    Notes
    -----
    The environment is the inherited one, plus ``spec.env``, plus ``REGBENCH_ITERATIONS``
    (warm-up + measured iterations), ``REGBENCH_WARMUP``, ``REGBENCH_RUN_INDEX`` and
    ``REGBENCH_VERSION``, plus ``extra_env``, then padded to ``noise.env_size``.
    """
    noise = noise if noise is not None else NoiseControl()
    tree = Path(tree).resolve()
    env = run_environment(spec, run_index=run_index, version=version)
    env.update(extra_env or {})  # a release's virtual environment (regbench.run.releases)
    if noise.env_size is not None:
        env = _noise.pad_environment(env, noise.env_size)
    counter = None
    if "instructions" in spec.measures:
        counter = _measures.instruction_counter()
        if counter is None:
            raise ConfigError(no_counter_message(spec.name))
    # With a ramdisk, what the run writes (stdout, stderr, result files) goes there too (seed 003 s.3.2).
    scratch = _noise.find_tmpfs() if noise.ramdisk else None
    with tempfile.TemporaryDirectory(prefix="regbench-run-", dir=scratch) as tmp, \
            _run_tree(tree, spec, noise) as run_tree:
        tmp = Path(tmp)
        samples_file = tmp / "samples.jsonl"
        result_file = tmp / "result"
        argv = _argv(spec, run_tree, python, samples_file, result_file)
        if counter == "perf":
            argv = _measures.perf_argv(argv, tmp / "perf.csv")
        gate = _noise.QuietGate.from_noise(noise).check() if noise.quiet_load is not None else None
        with open(tmp / "stdout", "w+b") as out, open(tmp / "stderr", "w+b") as err:
            proc = run_process(argv, cwd=run_tree / spec.cwd, env=env, timeout=spec.timeout,
                               stdout=out, stderr=err, noise=noise,
                               spawner=bool(_SPAWNED_MEASURES.intersection(spec.measures)))
            stderr = read_tail(err, STDERR_TAIL)
            if gate is not None and gate.note is not None:
                stderr = with_note(stderr, gate.note)  # before the status note, which ends the tail
            if spec.format is not None:
                uses_file = any(OUTPUT_PLACEHOLDER in a for a in spec.command)
                outcome = _classify_tool(proc, stderr, result_file if uses_file else tmp / "stdout", spec)
            else:
                if spec.kind == "python":
                    text = samples_file.read_text("utf-8", "replace") if samples_file.exists() else ""
                    fmt = "jsonl"
                else:
                    out.seek(0)
                    text = out.read().decode("utf-8", "replace")
                    fmt = spec.output
                outcome = _classify(proc, stderr, text, fmt, spec)
        measures: dict[str, float] = {}
        if proc.start_error is None:
            measures["wall"] = proc.duration
            if proc.cpu_time is not None:
                measures["cpu"] = proc.cpu_time
            if proc.max_rss is not None:
                measures["maxrss"] = float(proc.max_rss)
        failures: dict[str, tuple[str, str]] = {}
        if counter is not None and outcome.status == "ok":
            if counter == "perf":
                count, failure = _perf_count(tmp / "perf.csv")
            else:
                count, failure = _callgrind_count(spec, run_tree=run_tree, python=python, env=env,
                                                  noise=noise, tmp=tmp, duration=proc.duration)
            if count is not None:
                measures["instructions"] = float(count)
            else:
                failures["instructions"] = failure
    return dataclasses.replace(outcome, measures=measures, measure_failures=failures,
                               instruction_counter=counter)


#: Measures taken through the spawner of :func:`run_process`: started from regbench itself, a
#: process would report regbench's resident size as its peak, and the CPU time its forked copy of
#: regbench spent before exec.
_SPAWNED_MEASURES = frozenset({"cpu", "maxrss", "wall"})


def no_counter_message(benchmark: str) -> str:
    """The error for a benchmark that measures instructions where nothing can count them."""
    return (f"benchmark {benchmark!r} measures `instructions`, but perf cannot count instructions here "
            "(a virtual machine?) and valgrind's callgrind does not run: install valgrind "
            "(apt-get install valgrind), or remove \"instructions\" from its `measures`")


def _argv(spec: BenchmarkSpec, tree: Path, python: str, samples_file: Path, result_file: Path) -> list[str]:
    if spec.kind == "python":
        argv = [python, str(WORKER), spec.target, "--iterations", str(spec.iterations),
                "--warmup", str(spec.warmup), "--min-time", repr(float(spec.min_time)),
                "--output", str(samples_file), "--path", str(tree)]
    else:
        argv = list(spec.command)
    if spec.format is not None:
        argv = [a.replace(OUTPUT_PLACEHOLDER, str(result_file)) for a in argv]
    return argv


@contextlib.contextmanager
def _run_tree(tree: Path, spec: BenchmarkSpec, noise: NoiseControl) -> Iterator[Path]:
    """The tree the run uses: ``tree``, or with ``ramdisk`` a fresh copy of what the run needs on
    a tmpfs (unless it is on one already), removed afterwards."""
    if not noise.ramdisk or _noise.on_tmpfs(tree / spec.cwd):
        yield tree
        return
    base = _noise.find_tmpfs()
    if base is None:
        raise ConfigError("[noise] `ramdisk` (--ramdisk): no tmpfs to run in (neither /dev/shm nor "
                          "$XDG_RUNTIME_DIR is a writable tmpfs mounted without noexec)")
    copy = _noise.ramdisk_copy(tree, [ramdisk_dir(spec)], base=base)
    try:
        yield copy
    finally:
        _noise.remove_tree(copy)


def ramdisk_dir(spec: BenchmarkSpec) -> str:
    """What of a version's tree a ramdisk run needs: its ``cwd``, or the whole tree for a Python
    benchmark (the worker imports the benchmark from the tree)."""
    return "." if spec.kind == "python" else spec.cwd


def _perf_count(path: Path) -> tuple[int | None, tuple[str, str] | None]:
    try:
        return _measures.parse_perf_stat(path.read_text("utf-8", "replace")), None
    except OSError:
        return None, ("garbage", "instructions: perf wrote no output file")
    except ValueError as exc:
        return None, ("garbage", f"instructions: {exc}")


def _callgrind_count(spec: BenchmarkSpec, *, run_tree: Path, python: str, env: Mapping[str, str],
                     noise: NoiseControl, tmp: Path, duration: float) -> tuple[int | None, tuple[str, str] | None]:
    """Count the instructions of one more process of the run under callgrind (its samples are
    not used: callgrind is 20 to 100 times slower than the real thing)."""
    work = tmp / "callgrind"
    work.mkdir()
    argv = _measures.callgrind_argv(_argv(spec, run_tree, python, work / "samples.jsonl", work / "result"),
                                    work / "callgrind.out.%p")
    timeout = max(spec.timeout, _measures.CALLGRIND_SLOWDOWN * duration)
    with open(work / "stdout", "w+b") as out, open(work / "stderr", "w+b") as err:
        proc = run_process(argv, cwd=run_tree / spec.cwd, env=env, timeout=timeout, stdout=out,
                           stderr=err, noise=noise)
        tail = read_tail(err, 300).strip().splitlines()
    last = f": {tail[-1]}" if tail else ""
    if proc.start_error is not None:
        return None, ("failed", f"instructions: {proc.start_error}")
    if proc.timed_out:
        return None, ("timeout", f"instructions: the callgrind run was killed after {timeout:g} s")
    if proc.returncode < 0:
        return None, ("crashed", f"instructions: the callgrind run was killed by signal "
                                 f"{_signal_name(-proc.returncode)}{last}")
    if proc.returncode > 0:
        return None, ("failed", f"instructions: the callgrind run ended with exit status {proc.returncode}{last}")
    try:
        return _measures.callgrind_total(work.glob("callgrind.out.*")), None
    except (OSError, ValueError) as exc:
        return None, ("garbage", f"instructions: {exc}")


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
                stdout: IO[bytes], stderr: IO[bytes] | int, noise: NoiseControl | None = None,
                spawner: bool = False) -> ProcessResult:
    """Run ``argv`` (no shell) in its own session; kill its process group on timeout.

    ``stdout`` and ``stderr`` are files (or ``subprocess.STDOUT`` for stderr), not pipes, so
    that a descendant that keeps them open cannot make regbench wait.  When the process ends,
    whatever it left running in its process group is killed as well: stragglers must not
    disturb the next run.  On Linux the process also gets ``SIGKILL`` if regbench dies.
    ``KeyboardInterrupt`` (and any other exception while waiting) kills the group and
    propagates.  A program that cannot be started gives ``start_error``, not an exception.

    The process is reaped with ``os.wait4``; its rusage gives ``cpu_time`` (of the process and
    the descendants it waited for).  ``noise`` pins it and turns ASLR off
    (:func:`regbench.run.noise.child_setup`).  Every process is recorded in
    :data:`regbench.run.noise.OWN_LOAD`, so the quiet-system gate can leave regbench's own load
    out.

    ``max_rss`` needs ``spawner=True``: Linux starts the peak resident size of a forked process
    at its parent's resident size, and keeps it across exec, so a process forked from regbench
    (tens to hundreds of MB, with numpy and the store loaded) would report at least that.  With
    ``spawner``, the process is started by :data:`_SPAWNER`, a minimal Python (``-I -S``, about
    5 MB resident) that forks it, gives it exactly ``env``, reaps it with ``wait4`` and reports
    its exit status, rusage and wall time: ``max_rss`` then counts the spawner's few MB at most,
    and ``duration`` is the process's own, without the spawner's start-up.  Without
    ``spawner``, ``max_rss`` is None.
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
    preexec = _preexec(_noise.child_setup(noise), death_signal=signal.SIGTERM if spawner else signal.SIGKILL)
    with files:
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(
                full, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=stdout,
                stderr=stderr, start_new_session=True, close_fds=True, pass_fds=pass_fds, preexec_fn=preexec,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return ProcessResult(None, False, time.monotonic() - t0, started_at,
                                 _cannot_start(argv, cwd, getattr(exc, "strerror", None) or str(exc)))
        try:
            exited, usage = _wait_unreaped(proc, timeout)
            # The leader is still running or not yet reaped, so its pid, which is the group id,
            # cannot have been reused: killing the group cannot hit an unrelated process.
            _kill_group(proc)
            if usage is None:
                usage = _reap(proc)
        except BaseException:
            _kill_group(proc)
            _reap(proc)
            raise
        t1 = time.monotonic()
        cpu = usage.ru_utime + usage.ru_stime if usage is not None else None
        _noise.OWN_LOAD.add(t0, t1, cpu)
        if not exited:
            return ProcessResult(None, True, t1 - t0, started_at, cpu_time=cpu)
        if not spawner:
            return ProcessResult(proc.returncode, False, t1 - t0, started_at, cpu_time=cpu)
        report.seek(0)
        said = report.read().decode("utf-8", "replace").split(" ", 1)
    if said[0] == "error" and len(said) == 2:
        return ProcessResult(None, False, t1 - t0, started_at, _cannot_start(argv, cwd, said[1]))
    try:
        code, utime, stime, maxrss, wall = said[1].split()
        return ProcessResult(int(code), False, float(wall), started_at, cpu_time=float(utime) + float(stime),
                             max_rss=int(maxrss) * (1 if sys.platform == "darwin" else 1024))  # macOS: bytes
    except (IndexError, ValueError):  # the spawner itself died (killed from outside)
        return ProcessResult(proc.returncode, False, t1 - t0, started_at, cpu_time=cpu)


def _cannot_start(argv: Sequence[str], cwd: Path, reason: str) -> str:
    where = f" in {cwd}" if not Path(cwd).is_dir() else ""
    return f"cannot start {argv[0]!r}{where}: {reason}"


#: The spawner of :func:`run_process` (``python -I -S -c _SPAWNER ENV_FD REPORT_FD ARGV...``): only
#: os, signal, sys and time, so it stays small.  It restores the signals Python ignores (as
#: subprocess does), passes the environment from ENV_FD exactly (Python's start-up may add
#: LC_CTYPE to its own), and writes ``exit CODE UTIME STIME MAXRSS WALL`` or ``error REASON``.
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
signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
r, w = os.pipe()
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.close(r)
        for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        os.execvpe(argv[0], argv, env)
    except BaseException as exc:
        os.write(w, (getattr(exc, "strerror", None) or str(exc)).encode("utf-8", "replace"))
    os._exit(127)
os.close(w)
error = os.read(r, 4096)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
if error:
    report = "error " + error.decode("utf-8", "replace")
else:
    code = os.waitstatus_to_exitcode(status)
    report = "exit %d %r %r %d %r" % (code, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, wall)
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
            if poller.poll(max(1, math.ceil(left * 1000))):
                return True, None
    finally:
        os.close(fd)


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
