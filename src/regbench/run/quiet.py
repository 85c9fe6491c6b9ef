"""The quiet-system gate (``[noise] quiet_load``): wait before each run until the machine is quiet.

Seed 003 s.3 found other processes a source of noise, and seed 001 s.3.1 asks for a controlled
platform.  :class:`QuietGate` measures the busy share of the CPUs and the load average, with
regbench's own processes left out (:class:`OwnLoad`), and waits (or warns) until both are under
a limit; the run goes ahead either way, with what was seen noted in its stderr tail.
"""

from __future__ import annotations

import collections
import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from pathlib import Path

from ..config import NoiseControl

class OwnLoad:
    """regbench's own share of the 1-minute load average, estimated from its recent processes.

    The kernel's load average is an exponentially weighted average (time constant 60 s) of the
    number of runnable tasks, so a campaign of CPU-bound runs holds it near one by itself: a
    gate on the raw load average would wait for regbench's own runs to fade.  Each process
    regbench ran is counted as ``cpu time / wall time`` runnable tasks (1 for a single-threaded
    busy loop, about 0 for one that sleeps) over its lifetime, weighted as the kernel weights
    the past.  It is an estimate: a process that waits on a disk (state D) counts in the load
    average but not here.
    """

    TAU = 60.0

    def __init__(self, maxlen: int = 4096):
        self._runs: collections.deque = collections.deque(maxlen=maxlen)

    def add(self, start: float, end: float, cpu: float | None) -> None:
        """A process that ran from ``start`` to ``end`` (``time.monotonic``) using ``cpu`` s."""
        if cpu is None or end <= start:
            return
        self._runs.append((start, end, cpu / (end - start)))

    def estimate(self, now: float) -> float:
        """The estimated runnable tasks regbench's processes still add to the load average."""
        while self._runs and now - self._runs[0][1] > 10 * self.TAU:
            self._runs.popleft()
        return sum(tasks * (math.exp(-max(now - end, 0.0) / self.TAU) - math.exp(-max(now - start, 0.0) / self.TAU))
                   for start, end, tasks in list(self._runs))  # a snapshot: other threads may add


#: regbench's own processes (:func:`regbench.run.execute.run_process` records each one).
OWN_LOAD = OwnLoad()


@dataclass(frozen=True)
class Quietness:
    """How busy the machine is: ``busy`` share of the CPUs (0 to 1, over a short interval; of
    the pinned CPUs when pinned) and ``load``, the 1-minute load average per CPU with
    regbench's own processes left out (:class:`OwnLoad`)."""

    busy: float
    load: float

    def describe(self) -> str:
        return f"{self.busy:.0%} of the CPUs busy, load {self.load:.2f} per CPU"


@dataclass(frozen=True)
class GateResult:
    """What the quiet-system gate saw before one run.

    Attributes
    ----------
    passed : bool
        Whether the machine was quiet when the run started.
    waited : float
        Seconds from the first check to the start of the run (at least the one measurement).
    checks : int
        Measurements taken.
    last : Quietness
        The last measurement.
    limit : float
    mode : str
        ``"wait"`` or ``"warn"``.
    """

    passed: bool
    waited: float
    checks: int
    last: Quietness
    limit: float
    mode: str

    @property
    def note(self) -> str | None:
        """The ``[regbench]`` note for the run's stderr tail; None when it was quiet at once."""
        if self.passed and self.checks == 1:
            return None
        what = f"{self.last.describe()}; limit {self.limit:g}"
        if self.passed:
            return f"quiet gate: waited {self.waited:.1f} s for a quiet machine ({what})"
        if self.mode == "warn":
            return f"quiet gate: the machine was not quiet ({what}); ran anyway (quiet = \"warn\")"
        return f"quiet gate: the machine was not quiet after waiting {self.waited:.1f} s ({what}); ran anyway"


def _read_proc_stat() -> str:
    return Path("/proc/stat").read_text(encoding="ascii", errors="replace")


def cpu_ticks(text: str, cpus: Iterable[int] | None = None) -> tuple[int, int]:
    """``(busy, total)`` clock ticks from ``/proc/stat``: of the ``cpu`` line, or summed over the
    ``cpuN`` lines of ``cpus``.  Idle and I/O wait are not busy; steal (a hypervisor running
    another guest) is."""
    wanted = None if cpus is None else {f"cpu{c}" for c in cpus}
    busy = total = 0
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].startswith("cpu"):
            continue
        if (wanted is None and parts[0] != "cpu") or (wanted is not None and parts[0] not in wanted):
            continue
        ticks = [int(x) for x in parts[1:9]]  # user nice system idle iowait irq softirq steal (guest is in user)
        ticks += [0] * (8 - len(ticks))
        total += sum(ticks)
        busy += sum(ticks) - ticks[3] - ticks[4]
    return busy, total


class QuietGate:
    """Wait, before a run, until the machine is quiet (seed 003 s.3: other processes are a
    source of noise; seed 001 s.3.1).

    Quiet means both the busy share of the CPUs over ``interval`` seconds (two ``/proc/stat``
    snapshots; of the pinned CPUs when ``cpus`` is given) and the 1-minute load average per CPU,
    less regbench's own processes (:class:`OwnLoad`), are at most ``limit``.  With
    ``mode="wait"`` it measures every ``poll`` seconds until quiet or ``wait`` seconds are over;
    with ``mode="warn"`` it measures once.  The run goes ahead either way: the result says what
    was seen, and a note in the run's stderr tail keeps it.

    ``clock``, ``sleep``, ``read_stat``, ``read_load`` and ``own_load`` are injectable for tests.
    """

    def __init__(self, limit: float, *, wait: float = 60.0, mode: str = "wait",
                 cpus: Iterable[int] | None = None, interval: float = 0.2, poll: float = 1.0,
                 clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None,
                 read_stat: Callable[[], str] | None = None, read_load: Callable[[], tuple] | None = None,
                 own_load: OwnLoad | None = None, ncpu: int | None = None):
        if mode not in ("wait", "warn"):
            raise ValueError(f"`mode` must be 'wait' or 'warn', got {mode!r}")
        self.limit, self.wait, self.mode = float(limit), float(wait), mode
        self.cpus = tuple(cpus) if cpus is not None else None
        self.interval, self.poll = interval, poll
        self.clock = clock or time.monotonic
        self.sleep = sleep or time.sleep
        self.read_stat = read_stat or _read_proc_stat
        self.read_load = read_load or os.getloadavg
        self.own_load = own_load if own_load is not None else OWN_LOAD
        self.ncpu = ncpu or os.cpu_count() or 1

    @classmethod
    def from_noise(cls, noise: NoiseControl, **kw: Any) -> QuietGate:
        """The gate ``[noise]`` asks for (``quiet_load`` must be set)."""
        if noise.quiet_load is None:
            raise ValueError("`quiet_load` must be set for a quiet-system gate")
        return cls(noise.quiet_load, wait=noise.quiet_wait, mode=noise.quiet, cpus=noise.pin, **kw)

    def measure(self) -> Quietness:
        b0, t0 = cpu_ticks(self.read_stat(), self.cpus)
        self.sleep(self.interval)
        b1, t1 = cpu_ticks(self.read_stat(), self.cpus)
        busy = (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0
        load = max(0.0, self.read_load()[0] - self.own_load.estimate(self.clock())) / self.ncpu
        return Quietness(busy=min(max(busy, 0.0), 1.0), load=load)

    def check(self) -> GateResult:
        """Measure (and wait) until quiet, out of time, or once for ``mode="warn"``."""
        start = self.clock()
        checks = 0
        while True:
            q = self.measure()
            checks += 1
            quiet = q.busy <= self.limit and q.load <= self.limit
            waited = self.clock() - start
            left = self.wait - waited - self.interval  # the next measurement takes `interval` too
            if quiet or self.mode == "warn" or left < 0:
                return GateResult(quiet, waited, checks, q, self.limit, self.mode)
            self.sleep(min(self.poll, left))
