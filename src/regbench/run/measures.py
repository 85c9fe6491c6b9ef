"""Measures of a whole run beyond its samples: CPU time, peak memory, instructions, wall time.

Seed 003 (003_17e43d4a143bef6e.txt) s.3.1.1 argues that wall time depends on what else runs, so
CPU time "is of more interest"; its s.4.1 then measured CPU time on an exclusive CPU and found it
no less variable than wall time (one test worse).  So regbench keeps wall-time samples as the
primary result and records the others beside them, to be compared on real data: CPU time
(leaves out time waiting for the CPU), peak memory, and an instruction count, which does not
depend on the clock at all (not from the seeds).  A benchmark lists what it wants in
``measures``; each is stored as its own series ``NAME:MEASURE`` with one sample per run (the
whole process):

================  ======  ==========================================================
measure           unit    from
================  ======  ==========================================================
``cpu``           s       ``ru_utime + ru_stime`` of the process (``wait4``)
``maxrss``        B       ``ru_maxrss`` (peak resident memory) of the process
``wall``          s       wall-clock seconds from start to exit
``instructions``  see     ``perf stat -e instructions:u`` around the run where the CPU's
                  below   counters work (unit ``instructions``); else one extra process
                          under ``valgrind --tool=callgrind`` (unit ``Ir``)
================  ======  ==========================================================

The rusage of ``wait4`` covers the process and the descendants it waited for; ``cpu``,
``maxrss`` and ``wall`` are taken by the small spawner process every run is started by, so that
they are the benchmark's own (see :func:`regbench.run.process.run_process`).  Virtual machines
often do not pass the performance counters through (``perf stat`` says ``<not supported>``),
hence the callgrind fallback; the samples are never taken from a callgrind run, which is 20 to
100 times slower.

This module parses the tools' output (pure functions of text), builds their command lines, and
probes once per process which counter works here (:func:`instruction_counter`).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from .scratch import owned_dir

#: Units of the measures that do not depend on the counter.
UNITS = {"cpu": "s", "maxrss": "B", "wall": "s"}
#: Unit of ``instructions`` by counter: perf counts retired user-space instructions, callgrind
#: the guest instructions it executed ("instruction reads"); close, but not the same thing.
INSTRUCTION_UNITS = {"perf": "instructions", "callgrind": "Ir"}
#: A callgrind run may last this many times the measured run (or the benchmark's timeout, if longer).
CALLGRIND_SLOWDOWN = 100.0


def measure_unit(measure: str, counter: str | None = None) -> str:
    """The unit of the series ``NAME:measure`` (``counter`` for ``instructions``)."""
    if measure == "instructions":
        if counter not in INSTRUCTION_UNITS:
            raise ValueError(f"`counter` must be one of {', '.join(INSTRUCTION_UNITS)}, got {counter!r}")
        return INSTRUCTION_UNITS[counter]
    if measure not in UNITS:
        raise ValueError(f"unknown measure {measure!r}")
    return UNITS[measure]


# ------------------------------------------------------------------------------ perf
def perf_argv(argv: Sequence[str], output: str | Path) -> list[str]:
    """``argv`` counted by ``perf stat`` in CSV (``-x,``), written to ``output`` (not stderr:
    the benchmark's stderr stays its own)."""
    return ["perf", "stat", "-x,", "-e", "instructions:u", "-o", str(output), "--", *argv]


def parse_perf_stat(text: str, event: str = "instructions") -> int:
    """The count of ``event`` in ``perf stat -x,`` output.

    Lines are ``value,unit,event,run time,percentage,...``; comments start with ``#``.  Counts of
    the event on several PMUs (``cpu_core/instructions:u/`` and ``cpu_atom/instructions:u/`` on a
    hybrid CPU) are added; ``<not counted>`` on one of them counts as zero.

    Raises
    ------
    ValueError
        No such event, or perf could not count it (``<not supported>``, ``<not counted>``).
    """
    total = 0
    found: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        name = fields[2].strip().strip("/").split("/")[-1].split(":")[0]
        if name != event:
            continue
        value = fields[0].strip()
        found.append(value)
        if value == "<not counted>":
            continue  # a PMU of a hybrid CPU the process never ran on
        try:
            total += int(float(value))
        except ValueError:
            raise ValueError(f"perf could not count {event} here ({value or 'no value'})") from None
    if not found:
        raise ValueError(f"no {event} count in perf's output")
    if all(v == "<not counted>" for v in found):
        raise ValueError(f"perf did not count {event} (<not counted>)")
    return total


@functools.cache
def perf_counts_instructions(timeout: float = 20.0) -> bool:
    """Whether ``perf stat -x, -e instructions:u true`` gives a number here (probed once)."""
    if shutil.which("perf") is None:
        return False
    try:
        done = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u", "true"], capture_output=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    try:
        return done.returncode == 0 and parse_perf_stat(done.stderr.decode("utf-8", "replace")) > 0
    except ValueError:
        return False


# ------------------------------------------------------------------------- callgrind
def callgrind_argv(argv: Sequence[str], output: str | Path) -> list[str]:
    """``argv`` under callgrind, writing ``output`` (put ``%p`` in it: one file per process).

    Children started with exec are not traced (``--trace-children=no``, valgrind's default):
    the benchmark's command must be the program itself, not a shell around it.
    """
    return ["valgrind", "--tool=callgrind", "--trace-children=no", "-q",
            f"--callgrind-out-file={output}", *argv]


def parse_callgrind(text: str, event: str = "Ir") -> int:
    """The total of ``event`` in a callgrind output file: its ``summary:`` line, else ``totals:``.

    Raises
    ------
    ValueError
        Not a callgrind file, or no such event.
    """
    events: list[str] | None = None
    summary = totals = None
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key == "events":
            events = rest.split()
        elif key == "summary":
            summary = rest.split()
        elif key == "totals":
            totals = rest.split()
    numbers = summary if summary is not None else totals
    if numbers is None:
        raise ValueError("no summary: or totals: line in callgrind's output")
    events = events or ["Ir"]
    if event not in events:
        raise ValueError(f"callgrind did not count {event} (events: {' '.join(events)})")
    k = events.index(event)
    try:
        return int(numbers[k]) if k < len(numbers) else 0  # trailing zero counts may be left out
    except ValueError:
        raise ValueError(f"callgrind's total is not a number: {numbers[k]!r}") from None


def callgrind_total(paths: Iterable[str | Path], event: str = "Ir") -> int:
    """The sum of ``event`` over callgrind's files (one per process: a benchmark that forks
    without exec is still traced, and its children's instructions are part of its work)."""
    files = sorted(Path(p) for p in paths)
    if not files:
        raise ValueError("callgrind wrote no output file")
    return sum(parse_callgrind(f.read_text(encoding="utf-8", errors="replace"), event) for f in files)


@functools.cache
def callgrind_works(timeout: float = 60.0) -> bool:
    """Whether ``valgrind --tool=callgrind`` runs ``true`` and writes a readable file (probed once)."""
    true = shutil.which("true")
    if shutil.which("valgrind") is None or true is None:
        return False
    with owned_dir("regbench-probe-") as tmp:
        out = Path(tmp) / "callgrind.out"
        try:
            done = subprocess.run(callgrind_argv([true], out), capture_output=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return False
        try:
            return done.returncode == 0 and callgrind_total([out]) > 0
        except (OSError, ValueError):
            return False


def instruction_counter() -> str | None:
    """``"perf"`` where perf counts instructions, else ``"callgrind"`` where valgrind works,
    else None (each probed once per process)."""
    if perf_counts_instructions():
        return "perf"
    if callgrind_works():
        return "callgrind"
    return None
