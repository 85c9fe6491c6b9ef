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

import array
import contextlib
import dataclasses
import fnmatch
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from ..adapters import jsonsafe
from ..config import DEFAULT_MAX_SAMPLES, BenchmarkSpec, NoiseControl
from ..errors import ConfigError, shown
from . import measures as _measures
from .noise import child_setup, pad_environment
from .process import NOTE, STDERR_TAIL, ProcessResult, read_tail, run_process, signal_name, with_note
from .quiet import QuietGate
from .ramdisk import find_tmpfs, run_tree
from .scratch import owned_dir

if TYPE_CHECKING:
    from ..adapters.base import ToolFailure, ToolRun

WORKER = Path(__file__).with_name("worker.py")

#: Variables of regbench's own environment that a benchmark process inherits (names, or globs
#: with ``*``): where programs, the user's home, the temporary folder, the locale and language
#: toolchains are.  Nothing else leaks in (a shell's ``OMP_NUM_THREADS``, ``PYTHONHASHSEED``,
#: ``MALLOC_*`` or a CI runner's secrets change or see what a benchmark does): a benchmark
#: states what it needs with ``env`` (values) or ``pass_env`` (more names to inherit), so that
#: its runs are repeatable from its configuration (pyperf passes a whitelist for the same reason).
INHERITED_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE", "LC_*",
    "TMPDIR", "TEMP", "TMP", "XDG_*", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
    "GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "GOENV", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN",
    "JAVA_HOME", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
)


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
        With ``spec.format``: what the tool reported (:class:`regbench.adapters.base.ToolRun`),
        whatever the status: a tool that exits with an error because one benchmark failed has
        still measured the others.
    tool_failures : tuple
        With ``spec.format``: the benchmarks the tool reported as failed, with its message on
        each (:class:`regbench.adapters.base.ToolFailure`, :meth:`~regbench.adapters.base.Adapter.failures`).
    failure_attributed : bool
        With ``spec.format`` and a status other than ``ok``: the failure is wholly the failed
        benchmarks' of ``tool_failures`` (each is stored as a failed run of its series, and the
        invocation is not stored as a run of its own): the tool exited with an error status,
        its output was read, every failure it reported names a benchmark, and it said nothing
        on stderr.
    measures : dict of str to float
        Measures of the whole process, whatever the status: ``cpu`` (user + system CPU
        seconds), ``wall`` (seconds) and ``maxrss`` (peak resident bytes); and ``instructions``
        when declared and the run is ``ok``.  The process is started by a small spawner
        (:func:`run_process`), so that they are its own, and that nothing it starts outlives
        the run.  Empty when the process did not start.
    measure_failures : dict of str to (str, str)
        For an ``ok`` run, the declared measures that could not be taken: ``(status, note)``,
        the status of the measuring process (or ``garbage`` for output that is not a count).
    instruction_counter : str or None
        ``"perf"`` or ``"callgrind"``: what counted ``instructions``.
    machine : str or None
        The machine the run was made on when it is not this one (a Dask worker's,
        :mod:`regbench.run.dask_executor`); None: here.
    fingerprint : dict or None
        That machine's fingerprint (:func:`regbench.run.fingerprint.machine_fingerprint`).
    slices : numpy.ndarray or None
        A Python benchmark with ``slices`` > 1: ``(samples, slices)`` seconds per call of each
        slice of each iteration, warm-up included (:mod:`regbench.run.worker`); None otherwise.
    """

    status: str
    samples: np.ndarray
    exit_code: int | None
    stderr_tail: str
    duration: float
    started_at: datetime
    tool_runs: tuple[ToolRun, ...] = ()
    tool_failures: tuple[ToolFailure, ...] = ()
    failure_attributed: bool = False
    measures: dict[str, float] = field(default_factory=dict)
    measure_failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    instruction_counter: str | None = None
    machine: str | None = None
    fingerprint: dict | None = None
    slices: np.ndarray | None = None


#: In a command benchmark with ``format``, this argument is replaced by the path of a file the
#: tool writes its results to (JMH ``-rff {output}``, pytest-benchmark ``--benchmark-json={output}``).
OUTPUT_PLACEHOLDER = "{output}"

#: The variable that tells a tool's command which of its benchmarks to run, in the tool's filter
#: syntax, when ``run --plan optimized`` splits its invocation by plan
#: (:func:`regbench.optimize.plans.split_invocation`; set in the group's ``spec.env``).  An
#: invocation that is not split does not have it: the command runs everything
#: (``${REGBENCH_SELECT:-.}``).
SELECT_ENV = "REGBENCH_SELECT"

#: The variable that tells a tool's command how many processes of its own (JMH's ``-f`` forks) to
#: start for each benchmark, when ``run --plan optimized`` runs plans that reduce them
#: (:func:`regbench.optimize.plans.planned_spec`; set in ``spec.env``).  Otherwise unset: the
#: command's own default (``-f "${REGBENCH_FORKS:-5}"``).
FORKS_ENV = "REGBENCH_FORKS"


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
        env = pad_environment(env, noise.env_size)
    counter = None
    if "instructions" in spec.measures:
        counter = _measures.instruction_counter()
        if counter is None:
            raise ConfigError(no_counter_message(spec.name))
    # With a ramdisk, what the run writes (stdout, stderr, result files) goes there too (seed 003 s.3.2).
    scratch = find_tmpfs() if noise.ramdisk else None
    # Owned (locked) while the run lasts: the next campaign removes it if this process is killed.
    with owned_dir("regbench-run-", scratch) as scratch_dir, \
            run_tree(tree, spec, noise) as tree_used:
        tmp = Path(scratch_dir)
        samples_file = tmp / "samples.jsonl"
        result_file = tmp / "result"
        argv = _argv(spec, tree_used, python, samples_file, result_file)
        if counter == "perf":
            argv = _measures.perf_argv(argv, tmp / "perf.csv")
        gate = QuietGate.from_noise(noise).check() if noise.quiet_load is not None else None
        with open(tmp / "stdout", "w+b") as out, open(tmp / "stderr", "w+b") as err:
            # Always through the spawner: it contains the benchmark (nothing it starts outlives
            # the run) and measures the process itself.
            proc = run_process(argv, cwd=tree_used / spec.cwd, env=env, timeout=spec.timeout,
                               stdout=out, stderr=err, setup=child_setup(noise), spawner=True)
            stderr = read_tail(err, STDERR_TAIL)
            if gate is not None and gate.note is not None:
                stderr = with_note(stderr, gate.note)  # before the status note, which ends the tail
            if proc.left_running:
                stderr = with_note(stderr, left_running_note(proc.left_running))
            if spec.format is not None:
                uses_file = any(OUTPUT_PLACEHOLDER in a for a in spec.command)
                outcome = _classify_tool(proc, stderr, read_tail(out, STDERR_TAIL),
                                         result_file if uses_file else tmp / "stdout", spec, spec.format,
                                         console=tmp / "stdout" if uses_file else None)
            elif spec.kind == "python":
                if samples_file.exists():
                    with open(samples_file, "rb") as written:
                        read = read_samples(written, "jsonl", max_samples=spec.max_samples)
                else:
                    read = SampleRead(np.empty(0), None)
                outcome = _classify(proc, stderr, read, spec)
                # A plan's run of shortened iterations (``warmup_slices``) is not a full campaign's:
                # its warm-up has other slices than its iterations, and nothing is simulated from it.
                if spec.slices > 1 and not spec.warmup_slices and outcome.status == "ok":
                    outcome = dataclasses.replace(outcome, slices=read_slices(samples_file, outcome.samples,
                                                                              spec.slices))
            else:
                out.seek(0)
                outcome = _classify(proc, stderr, read_samples(out, spec.output, max_samples=spec.max_samples),
                                    spec)
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
                count, failure = _callgrind_count(spec, tree=tree_used, python=python, env=env,
                                                  noise=noise, tmp=tmp, duration=proc.duration)
            if count is not None:
                measures["instructions"] = float(count)
            elif failure is not None:
                failures["instructions"] = failure
    return dataclasses.replace(outcome, measures=measures, measure_failures=failures,
                               instruction_counter=counter)


def left_running_note(count: int) -> str:
    """The note of a run whose process left ``count`` processes running when it ended."""
    what = "process" if count == 1 else "processes"
    return (f"killed {count} {what} the benchmark left running (started in the background or with "
            "setsid): nothing a run starts outlives it")


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
        if spec.slices > 1 or spec.warmup_slices > 1:
            argv += ["--slices", str(spec.slices)]
        if spec.warmup_slices > 1 and spec.warmup:
            argv += ["--warmup-slices", str(spec.warmup_slices)]
    else:
        argv = list(spec.command)
    if spec.format is not None:
        argv = [a.replace(OUTPUT_PLACEHOLDER, str(result_file)) for a in argv]
    return argv


def read_slices(path: Path, samples: np.ndarray, slices: int) -> np.ndarray | None:
    """The ``(samples, slices)`` slices the worker wrote with its samples (:mod:`regbench.run.worker`),
    or None when they are not all there, finite numbers (JSON numbers: not strings, booleans or
    integers too large for a float), and consistent with the samples (their mean is the sample):
    a run without its slices is still a run, only not one to simulate shorter iterations from.
    The file is the benchmark process's output, untrusted: nothing in it raises."""
    rows: list[list[float]] = []
    try:
        with open(path, "rb") as written:
            for line in written:
                if not line.strip():
                    continue
                try:
                    obj = jsonsafe.loads(line.decode("utf-8"))
                except (ValueError, UnicodeDecodeError):
                    return None
                row = obj.get("slices") if isinstance(obj, dict) else None
                if not isinstance(row, list) or len(row) != slices \
                        or not all(jsonsafe.finite_number(v) for v in row):
                    return None
                rows.append([float(v) for v in row])
                if len(rows) > samples.size:
                    return None
    except OSError:
        return None
    if len(rows) != samples.size:
        return None
    out = np.asarray(rows, dtype=float).reshape(len(rows), slices)
    if not np.allclose(out.mean(axis=1), samples, rtol=1e-9, atol=0.0):
        return None
    return out


def _perf_count(path: Path) -> tuple[int | None, tuple[str, str] | None]:
    try:
        return _measures.parse_perf_stat(path.read_text("utf-8", "replace")), None
    except OSError:
        return None, ("garbage", "instructions: perf wrote no output file")
    except ValueError as exc:
        return None, ("garbage", f"instructions: {exc}")


def _callgrind_count(spec: BenchmarkSpec, *, tree: Path, python: str, env: Mapping[str, str],
                     noise: NoiseControl, tmp: Path, duration: float) -> tuple[int | None, tuple[str, str] | None]:
    """Count the instructions of one more process of the run under callgrind (its samples are
    not used: callgrind is 20 to 100 times slower than the real thing)."""
    work = tmp / "callgrind"
    work.mkdir()
    argv = _measures.callgrind_argv(_argv(spec, tree, python, work / "samples.jsonl", work / "result"),
                                    work / "callgrind.out.%p")
    timeout = max(spec.timeout, _measures.CALLGRIND_SLOWDOWN * duration)
    with open(work / "stdout", "w+b") as out, open(work / "stderr", "w+b") as err:
        proc = run_process(argv, cwd=tree / spec.cwd, env=env, timeout=timeout, stdout=out,
                           stderr=err, setup=child_setup(noise))
        tail = read_tail(err, 300).strip().splitlines()
    last = f": {tail[-1]}" if tail else ""
    if proc.start_error is not None:
        return None, ("failed", f"instructions: {proc.start_error}")
    if proc.timed_out or proc.returncode is None:
        return None, ("timeout", f"instructions: the callgrind run was killed after {timeout:g} s")
    if proc.returncode < 0:
        return None, ("crashed", f"instructions: the callgrind run was killed by signal "
                                 f"{signal_name(-proc.returncode)}{last}")
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
    if proc.timed_out or proc.returncode is None:
        return "timeout", f"killed after {spec.timeout:g} s (timeout); its process group was killed"
    if proc.returncode < 0:
        return "crashed", f"killed by signal {signal_name(-proc.returncode)}"
    if proc.returncode > 0:
        return "failed", f"exit status {proc.returncode}"
    return None


def _classify(proc: ProcessResult, stderr: str, read: SampleRead, spec: BenchmarkSpec) -> RunOutcome:
    samples, problem = read.samples, read.problem
    ended = _process_status(proc, spec)
    if ended is not None:
        status, note = ended
    elif read.too_many:
        status, note = "failed", problem or "too many samples"
    elif problem is not None:
        status, note = "garbage", problem
    elif samples.size == 0:
        what = "the worker wrote no samples" if spec.kind == "python" else "no samples on stdout"
        status, note = "garbage", what
    elif spec.kind == "command" and spec.format is None and not spec.warmup_auto and samples.size <= spec.warmup:
        status, note = "garbage", all_warmup_note(samples.size, spec.warmup, "the command")
    else:
        status, note = "ok", None
    return RunOutcome(status=status, samples=samples, exit_code=proc.returncode,
                      stderr_tail=with_note(stderr, note), duration=proc.duration,
                      started_at=proc.started_at)


def _classify_tool(proc: ProcessResult, stderr: str, stdout: str, path: Path, spec: BenchmarkSpec,
                   fmt: str, *, console: Path | None = None) -> RunOutcome:
    """The outcome of one invocation of a benchmark tool whose output an adapter reads.

    The tool's results, and the benchmarks it reports as failed, are read whatever the exit
    status: ``go test`` exits with status 1 when one benchmark fails, after printing the
    others' results, which are kept.  A status other than ``ok`` comes from the process first,
    then from the parse: output the adapter cannot read, or no results, is ``garbage`` with the
    adapter's message; results with failed benchmarks and exit status 0 are ``failed``.  Output
    cut short by a process that did not end well is salvaged (:meth:`Adapter.salvage`): the
    benchmarks written whole before the cut are kept.

    The stderr tail of a run that did not succeed says why in the tool's words: its stderr; when
    that is empty, the messages of its failed benchmarks, or else the end of its standard output
    (``stdout``, where ``go test``, ``cargo bench`` and pytest print their failures).

    ``console`` is the tool's whole standard output when its results went to a file of their own
    (``{output}``): the benchmarks it reports as failed there (JMH, which leaves them out of its
    JSON and exits with status 0) are failures too (:meth:`Adapter.console_failures`).
    """
    from ..adapters.base import get_adapter
    from ..errors import InputError

    adapter = get_adapter(fmt)
    runs: list[ToolRun] = []
    failures: list[ToolFailure] = []
    problem = None
    ended = _process_status(proc, spec)
    if path.exists():
        try:
            runs = adapter.parse(path)
        except InputError as exc:
            problem = f"{fmt} output: {exc.reason}" + (f" (line {exc.line})" if exc.line else "")
            if ended is not None:  # cut short by the crash: keep the benchmarks written whole
                runs, failures = adapter.salvage(path)
        if not failures:  # (a salvaged output gave its own)
            with contextlib.suppress(InputError):  # output it cannot read is said once, by parse
                failures = adapter.failures(path)
    if console is not None and console.exists():
        with contextlib.suppress(InputError):
            failures += adapter.console_failures(console)
    named = [f.benchmark for f in failures if f.benchmark is not None]
    if ended is not None:
        status, note = ended
        if problem is not None:
            note += f"; {problem}"
    elif problem is not None:
        status, note = "garbage", problem
    elif not runs and not failures:
        status, note = "garbage", f"no {fmt} results in the tool's output"
    elif failures:
        status, note = "failed", "exit status 0, but the tool reported failures"
    else:
        status, note = "ok", None
    said = any(line.strip() and not line.startswith(NOTE) for line in stderr.splitlines())
    attributed = (status == "failed" and proc.start_error is None and problem is None and bool(named)
                  and len(named) == len(failures) and not said)
    if status == "ok" and not spec.warmup_auto and (nothing := _all_warmup(runs, spec.warmup)) is not None:
        # Every sample would be dropped as warm-up (a [defaults] warmup over a tool that reports
        # one sample, or a fixed -count): a result, stored per benchmark as garbage with the reason.
        status, note, attributed = "garbage", all_warmup_note(*nothing), True
    text = stderr
    if status != "ok":
        if named:
            what = "benchmark" if len(named) == 1 else "benchmarks"
            shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
            note = f"{note}; {len(named)} {what} failed: {shown}"
        if not said and failures:
            text = _joined(stderr, "\n".join(dict.fromkeys(f.message for f in failures)))
        elif not said and stdout.strip():
            text, note = _joined(stderr, stdout), f"{note} (stderr was empty: above is the end of stdout)"
    return RunOutcome(status=status, samples=np.empty(0), exit_code=proc.returncode,
                      stderr_tail=with_note(text, note), duration=proc.duration,
                      started_at=proc.started_at, tool_runs=tuple(runs), tool_failures=tuple(failures),
                      failure_attributed=attributed)


def all_warmup_note(samples: int, warmup: int, who: str = "the tool") -> str:
    """Why a run whose samples are all warm-up is ``garbage``, and what to change."""
    return (f"{samples} sample{'' if samples == 1 else 's'} reported, all of them warm-up (warmup = {warmup}): "
            f"have {who} repeat REGBENCH_ITERATIONS times (warm-up included), or set a smaller `warmup` "
            "on this benchmark" + (" (0 for a tool that warms up itself)" if who == "the tool" else ""))


def _all_warmup(runs: Sequence[ToolRun], warmup: int) -> tuple[int, int] | None:
    """``(samples, warm-up)`` of the first reported benchmark when every one the tool reported
    has no sample left once ``warmup`` more are dropped after the tool's own; else None."""
    counts: dict[str, list[int]] = {}
    for r in runs:  # a benchmark's later parts (pyperf's workers) keep their samples past their warm-up
        got = counts.setdefault(r.benchmark, [0, r.warmup])
        got[0] += r.samples.size if got[0] == 0 else r.samples.size - r.warmup
    if not counts or any(n > w + warmup for n, w in counts.values()):
        return None
    n, w = next(iter(counts.values()))
    return n, w + warmup


def _joined(first: str, second: str) -> str:
    """``first`` then ``second``, on a line of its own."""
    return first + ("\n" if first and not first.endswith("\n") else "") + second


def run_environment(spec: BenchmarkSpec, *, run_index: int, version: str,
                    inherited: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a run.

    The variables of ``inherited`` (default: regbench's own environment) that match
    :data:`INHERITED_ENV` or the benchmark's ``pass_env``, then ``spec.env``, then
    ``REGBENCH_ITERATIONS`` (warm-up + measured iterations), ``REGBENCH_WARMUP``,
    ``REGBENCH_RUN_INDEX`` and ``REGBENCH_VERSION``.
    """
    source = os.environ if inherited is None else inherited
    env = {k: v for k, v in source.items() if _inherited(k, spec.pass_env)}
    env.update(spec.env)
    env.update(
        REGBENCH_ITERATIONS=str(spec.warmup + spec.iterations),
        REGBENCH_WARMUP=str(spec.warmup),
        REGBENCH_RUN_INDEX=str(run_index),
        REGBENCH_VERSION=version,
    )
    return env


def _inherited(name: str, extra: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for patterns in (INHERITED_ENV, extra) for pattern in patterns)


#: Longest line of a benchmark's output, in bytes: a sample is a number or a small JSON object.
MAX_LINE_BYTES = 64 * 1024


@dataclass(frozen=True)
class SampleRead:
    """What :func:`read_samples` found in a benchmark's output.

    Attributes
    ----------
    samples : numpy.ndarray
        The samples read before the first bad line (float64); empty when there were too many.
    problem : str or None
        One line describing the bad line (``"stdout line 3: not a number: 'hello'"``) or the
        excess of samples; None if the whole output was samples.
    too_many : bool
        The output held more than ``max_samples`` samples: it was not read further.
    """

    samples: np.ndarray
    problem: str | None
    too_many: bool = False


def read_samples(stream: IO[bytes], fmt: str, *, max_samples: int = DEFAULT_MAX_SAMPLES) -> SampleRead:
    """Read a benchmark's output (``lines`` or ``jsonl``) into samples, line by line.

    Memory stays bounded whatever the benchmark printed: the output is read one line of at most
    :data:`MAX_LINE_BYTES` at a time, samples are kept as packed doubles, and reading stops at
    the first bad line or at sample ``max_samples + 1`` (then the samples read are dropped: the
    run is failed, and its samples would only fill the store).
    """
    if fmt not in ("lines", "jsonl"):
        raise ValueError(f"`fmt` must be 'lines' or 'jsonl', got {fmt!r}")
    parse = _parse_line if fmt == "lines" else _parse_json_line
    values = array.array("d")
    number = 0
    while raw := stream.readline(MAX_LINE_BYTES + 2):
        # bytes.splitlines, as str.splitlines did for the text: \r alone ends a line too.
        for piece in raw.splitlines() if b"\r" in raw else (raw,):
            number += 1
            if len(piece.rstrip(b"\r\n")) > MAX_LINE_BYTES:
                return SampleRead(np.asarray(values, dtype=float),
                                  f"stdout line {number}: longer than {MAX_LINE_BYTES} bytes")
            line = piece.strip()
            if not line:
                continue
            value, what = parse(line)
            if what is None and not math.isfinite(value):
                what = "not a finite number"
            if what is not None:
                text = line.decode("utf-8", "replace")
                return SampleRead(np.asarray(values, dtype=float), f"stdout line {number}: {what}: {shown(text)}")
            if len(values) == max_samples:
                return SampleRead(np.empty(0), f"more than {max_samples} samples (`max_samples`): the output "
                                  "was not read further", too_many=True)
            values.append(value)
    # frombuffer shares the packed doubles (no copy): the array keeps them alive.
    return SampleRead(np.frombuffer(values, dtype=float) if values else np.empty(0), None)


def parse_samples(text: str, fmt: str) -> tuple[np.ndarray, str | None]:
    """Parse a benchmark's output held in ``text`` into samples (:func:`read_samples`).

    Returns the samples read before the first bad line, and ``None`` or a one-line description
    of that bad line (``"stdout line 3: not a number: 'hello'"``).
    """
    read = read_samples(io.BytesIO(text.encode("utf-8", "surrogateescape")), fmt)
    return read.samples, read.problem


def _parse_line(line: bytes) -> tuple[float, str | None]:
    try:
        return float(line), None
    except ValueError:
        return math.nan, "not a number"


def _parse_json_line(line: bytes) -> tuple[float, str | None]:
    try:
        obj = jsonsafe.loads(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return math.nan, "not JSON"
    if isinstance(obj, dict):
        if "value" not in obj:
            return math.nan, 'JSON object without a "value"'
        obj = obj["value"]
    if isinstance(obj, bool) or not isinstance(obj, int | float):
        return math.nan, "not a number"
    if not jsonsafe.finite_number(obj):
        return math.nan, "not a finite number"
    return float(obj), None
