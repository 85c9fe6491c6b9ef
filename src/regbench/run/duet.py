"""Duet runs: the two versions of a pair run at the same time, each pinned to its own CPU.

Interleaved pairs (one run of A, then one of B) cancel slow drift of the machine, but not what
changes from one second to the next: a neighbour's build, a cron job, another tenant of a shared
machine.  Such interference hits the run of A and leaves the run of B alone, or the other way
round, and the log ratio of the pair carries it whole.  *Duet benchmarking* (L. Bulej, V.
Horky, P. Tuma, F. Farquet, A. Prokopec: "Duet Benchmarking: Improving Measurement Accuracy in
the Cloud", ICPE 2020, s.3) runs the two versions simultaneously on two cores instead, so that
interference arriving during the pair hits both alike and largely cancels in their ratio; the
paper measured 2.3x to 12.5x smaller spread of the comparison on Java suites in the cloud.

Here a pair's two runs start together (a barrier releases both), each pinned with
``sched_setaffinity`` in the child between fork and exec (the ``pin`` of
:class:`~regbench.config.NoiseControl`, :func:`regbench.run.noise.child_setup`), and are paired
by that common start.  It needs two CPUs regbench may use (of ``[noise] pin`` when given), the
right to set affinities, and single-threaded benchmarks (a benchmark declared ``threads > 1``
would compete with its partner for the cores); :func:`duet_cores` says which, and why not.

Limits (also in ``docs/measuring.md``): the two runs share caches, memory bandwidth and the
package's frequency budget, so duet trades some accuracy of the absolute time for the accuracy of
the ratio; on SMT siblings (two hyper-threads of one core) they would share the core itself,
which is why two CPUs of different cores are chosen when the topology says so.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config import BenchmarkSpec, NoiseControl
from .core import Executor, RunRequest, Started
from .exclusive import measuring
from .execute import RunOutcome

__all__ = ["DuetCores", "DuetExecutor", "duet_cores"]


@dataclass(frozen=True)
class DuetCores:
    """Whether duet runs can be made here, and on which CPUs.

    Attributes
    ----------
    cores : tuple of int
        The two CPUs (empty when duet runs cannot be made).
    reason : str or None
        Why not, in a few words (None when they can).
    """

    cores: tuple[int, ...]
    reason: str | None = None
    #: CPUs of the machine the duet leaves to everything else (None: unknown).
    spare: int | None = None

    @property
    def usable(self) -> bool:
        return self.reason is None

    def describe(self) -> str:
        """One line: how the pairs are run (and, where the duet takes every CPU, what that costs)."""
        if self.usable:
            line = f"duet: A and B run at the same time, pinned to CPUs {self.cores[0]} and {self.cores[1]}"
            if self.spare == 0:
                # Measured on a 2-CPU machine (benchmarks/bench_sequential.py --duet-only): under one
                # bursty process, duet pairs were 6x as spread as interleaved ones; under a load on
                # both CPUs at once, 0.61x (docs/measuring.md, "Duet runs").
                line += ("; it takes every CPU of this machine, so another busy process slows one run of a "
                         "pair and is not cancelled (interleaved pairs are safer here unless the "
                         "interference takes every CPU at once)")
            return line
        return f"duet mode cannot be used: {self.reason}; running interleaved pairs instead"


def _core_id(cpu: int) -> tuple[str, str] | None:
    """(package, core) of a CPU from sysfs, None when unknown."""
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
    try:
        return ((base / "physical_package_id").read_text().strip(), (base / "core_id").read_text().strip())
    except OSError:
        return None


def _choose(allowed: Sequence[int]) -> tuple[int, int]:
    """Two CPUs of different physical cores when the topology tells (SMT siblings share a core)."""
    cpus = sorted(allowed)
    first = cpus[0]
    for other in cpus[1:]:
        a, b = _core_id(first), _core_id(other)
        if a is None or b is None or a != b:
            return first, other
    return cpus[0], cpus[1]


def _affinity_error(cores: Sequence[int]) -> str | None:
    """Try pinning a throw-away thread to each CPU (Linux affinity is per thread, so regbench's
    own threads are untouched); the error when that is refused."""
    error: list[str] = []

    def probe() -> None:
        try:
            for c in cores:
                os.sched_setaffinity(0, {c})
        except OSError as exc:
            error.append(exc.strerror or str(exc))

    t = threading.Thread(target=probe, name="regbench-affinity-probe")
    t.start()
    t.join()
    return error[0] if error else None


def duet_cores(specs: Sequence[BenchmarkSpec] = (), noise: NoiseControl | None = None) -> DuetCores:
    """Whether the pairs of ``specs`` can run as duets here, and on which two CPUs.

    Parameters
    ----------
    specs : sequence of BenchmarkSpec
        The benchmarks to compare: one declared multi-threaded (``threads > 1``) rules duets out.
    noise : NoiseControl, optional
        With ``pin``, the CPUs to choose from (else every CPU regbench may run on).

    Returns
    -------
    DuetCores
        ``reason`` says why not: one CPU only, affinity not settable, a multi-threaded benchmark.
    """
    threaded = [s for s in specs if s.threads > 1]
    if threaded:
        return DuetCores((), f"benchmark {threaded[0].name!r} is declared multi-threaded "
                             f"(threads = {threaded[0].threads})")
    if not hasattr(os, "sched_setaffinity"):
        return DuetCores((), "CPU affinity cannot be set on this platform")
    allowed = set(os.sched_getaffinity(0))
    if noise is not None and noise.pin is not None:
        allowed &= set(noise.pin)
    if len(allowed) < 2:
        only = f"CPU {min(allowed)}" if allowed else "no CPU"
        return DuetCores((), f"only one CPU is available to regbench ({only})")
    cores = _choose(sorted(allowed))
    error = _affinity_error(cores)
    if error is not None:
        return DuetCores((), f"setting CPU affinity is not permitted: {error}")
    return DuetCores(cores, spare=max(0, (os.cpu_count() or len(allowed)) - 2))


class DuetExecutor(Executor):
    """Runs the requests of each :meth:`map` call at the same time, request ``i`` pinned to
    ``cores[i]``; yields each outcome as its run ends.

    Each run is made in its own thread (the wait for a process is a blocking call); a barrier
    starts them together.  The pin replaces any ``[noise] pin`` of the request, the rest of its
    noise control is kept.  On ``KeyboardInterrupt`` the runs in flight are left to end (or to
    their timeout); they are killed with regbench if it exits (their parent-death signal).
    """

    name = "duet"

    def __init__(self, cores: Sequence[int]):
        if len(cores) < 2:
            raise ValueError("`cores` must name at least two CPUs")
        self.cores = tuple(cores)

    def map(self, requests: Iterable[RunRequest], *, started: Started | None = None,
            waiting: Started | None = None) -> Iterator[tuple[RunRequest, RunOutcome]]:
        batch = list(requests)
        if len(batch) > len(self.cores):
            raise ValueError(f"a duet runs at most {len(self.cores)} requests at once, got {len(batch)}")
        pinned = [dataclasses.replace(r, noise=dataclasses.replace(r.noise, pin=(c,)))
                  for r, c in zip(batch, self.cores)]
        if started is not None:
            for r in pinned:
                started(r)
        barrier = threading.Barrier(len(pinned))
        done: queue.Queue[tuple[RunRequest, RunOutcome | BaseException]] = queue.Queue()

        def work(request: RunRequest) -> None:
            try:
                barrier.wait()
                done.put((request, request.execute()))
            except BaseException as exc:  # handed to the caller's thread, raised there
                done.put((request, exc))

        # The pair runs side by side on purpose; together they hold the whole machine's measuring
        # lock (regbench.run.exclusive), so no other regbench command's run joins them.
        results: list[tuple[RunRequest, RunOutcome]] = []

        def each(tell: Started | None) -> Callable[[], None] | None:
            """``tell`` of both runs of the pair, or None."""
            if tell is None:
                return None

            def both() -> None:
                for r in pinned:
                    tell(r)
            return both

        with measuring(enabled=all(r.noise.exclusive for r in batch), waiting=each(waiting), resumed=each(started)):
            for r in pinned:
                threading.Thread(target=work, args=(r,), name="regbench-duet", daemon=True).start()
            for _ in pinned:
                request, outcome = done.get()
                if isinstance(outcome, BaseException):
                    raise outcome
                results.append((request, outcome))
        yield from results
