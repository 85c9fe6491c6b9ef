"""The worker process of a Python benchmark (``python = "module:function"`` in regbench.toml).

One worker is one *run*: a fresh interpreter that imports the function from the version's tree,
calibrates an inner loop count like :mod:`timeit` and pyperf (double the number of calls until one
timed batch lasts at least ``--min-time`` seconds; the calibration batches are not samples), then
times ``warmup + iterations`` batches with :func:`time.perf_counter` and writes the mean seconds per
call of each batch, in order, as JSON lines to ``--output``::

    {"value": 1.93e-05, "loops": 512}

With ``--slices N`` (N > 1), each batch is timed as N consecutive slices of ``loops`` calls, the
loop calibrated to ``min_time / N``, and the line also holds each slice's seconds per call::

    {"value": 1.93e-05, "loops": 128, "slices": [1.95e-05, 1.92e-05, 1.93e-05, 1.92e-05]}

``value`` is then the mean of the slices (the batch is their sum).  A stored slice is what an
iteration ``N`` times shorter would have measured, so that ``regbench optimize`` can simulate
shorter iterations from a full campaign (Japke et al. 2025, s.3.1: the duration level).
``--warmup-slices K`` times each warm-up batch as K slices instead: a plan of shorter iterations
keeps its warm-up as long as the full campaign's (``regbench run --plan optimized``).

Results go to a file rather than stdout so that whatever the measured function prints does not
matter.  A failure (the module does not import, the function raises) exits non-zero with the
traceback on stderr, and the run is recorded as ``failed``.

This module uses the standard library only and keeps to syntax old interpreters accept, because
:mod:`regbench.run.execute` starts it *by path* with the project's interpreter (``[project]
python``), which need not have regbench installed.  ``python -m regbench.run.worker`` works too.

References
----------
Seed 004 s.2: repetition levels (runs, iterations, and the benchmark duration of each iteration).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import json
import os
import sys
import time

#: Calibration stops doubling here even if ``min_time`` is not reached (a function that does
#: nothing at all would otherwise double forever).
MAX_LOOPS = 2**32
#: The most slices a batch is timed as (``--slices``, ``--warmup-slices``): ten times the most
#: regbench.toml allows, so that any configured benchmark runs.
MAX_SLICES = 1000


def load_target(target: str, path: str | None = None):
    """Import ``module:function`` (``function`` may be dotted: ``module:Class.method``; an
    instance method is bound to an instance of its class made with no arguments).

    ``path`` goes first on :data:`sys.path`, so the version's tree wins over anything installed.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError("target must look like 'module:function', got %r" % (target,))
    if path is not None:
        sys.path.insert(0, os.path.abspath(path))
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        if inspect.isclass(obj) and inspect.isfunction(inspect.getattr_static(obj, part, None)):
            # An instance method (asv-style benchmark classes): bound to one instance, made with
            # no arguments before timing starts (getattr on the class gave an unbound function
            # that every call failed with "missing 'self'").
            obj = obj()
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError("%s is not callable" % (target,))
    return obj


def time_batch(func, loops: int, timer=time.perf_counter) -> float:
    """Seconds taken by ``loops`` calls of ``func`` (one timed batch)."""
    it = itertools.repeat(None, loops)
    t0 = timer()
    for _ in it:
        func()
    return timer() - t0


def calibrate(func, min_time: float, timer=time.perf_counter) -> tuple[int, float]:
    """Smallest power-of-two call count whose batch lasts at least ``min_time`` seconds.

    Returns ``(loops, seconds of the last calibration batch)``.  Like pyperf's calibration, the
    count doubles from 1; a function slower than ``min_time`` gets one call per batch.
    """
    loops = 1
    while True:
        dt = time_batch(func, loops, timer)
        if dt >= min_time or loops >= MAX_LOOPS:
            return loops, dt
        loops *= 2


def measure(func, *, iterations: int, warmup: int, min_time: float,
            timer=time.perf_counter) -> tuple[int, list[float]]:
    """Calibrate, then time ``warmup + iterations`` batches; return (loops, seconds per call)."""
    loops, _ = calibrate(func, min_time, timer)
    values = [time_batch(func, loops, timer) / loops for _ in range(warmup + iterations)]
    return loops, values


def measure_slices(func, *, iterations: int, warmup: int, min_time: float, slices: int,
                   warmup_slices: int | None = None, timer=time.perf_counter) -> tuple[int, list[list[float]]]:
    """Calibrate a slice to ``min_time / slices``, then time ``warmup`` batches of
    ``warmup_slices`` (default ``slices``) and ``iterations`` batches of ``slices`` consecutive
    slices; return (loops of a slice, seconds per call of each slice of each batch)."""
    loops, _ = calibrate(func, min_time / slices, timer)
    lengths = [warmup_slices or slices] * warmup + [slices] * iterations
    values = [[time_batch(func, loops, timer) / loops for _ in range(n)] for n in lengths]
    return loops, values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="regbench-worker", description=__doc__.split("\n")[0])
    parser.add_argument("target", help="module:function to call without arguments")
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--min-time", type=float, default=0.01)
    parser.add_argument("--slices", type=int, default=1, help="time each batch as this many slices")
    parser.add_argument("--warmup-slices", type=int, default=None,
                        help="time each warm-up batch as this many slices (default: --slices)")
    parser.add_argument("--output", required=True, help="file receiving the JSON lines")
    parser.add_argument("--path", default=None, help="directory put first on sys.path (the tree)")
    args = parser.parse_args(argv)
    # An infinite --min-time would calibrate for 2**32 calls; more than MAX_SLICES slices per
    # batch is no duration level (regbench.toml allows 100) but a list that fills memory.
    if args.iterations < 1 or args.warmup < 0 or not 0 < args.min_time < float("inf") or args.slices < 1 \
            or (args.warmup_slices is not None and args.warmup_slices < 1):
        parser.error("--iterations must be >= 1, --warmup >= 0, --min-time > 0 and finite and --slices and "
                     "--warmup-slices >= 1")
    if max(args.slices, args.warmup_slices or 1) > MAX_SLICES:
        parser.error("--slices and --warmup-slices must be at most %d" % MAX_SLICES)

    # Started by path, sys.path[0] is this file's folder (regbench/run); started with -m it is
    # the working directory.  Neither may shadow the benchmark's own modules.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    func = load_target(args.target, args.path)
    lines: list[dict] = []
    if args.slices == 1 and args.warmup_slices in (None, 1):
        loops, values = measure(func, iterations=args.iterations, warmup=args.warmup,
                                min_time=args.min_time)
        lines = [{"value": v, "loops": loops} for v in values]
    else:
        loops, sliced = measure_slices(func, iterations=args.iterations, warmup=args.warmup,
                                       min_time=args.min_time, slices=args.slices,
                                       warmup_slices=args.warmup_slices)
        lines = [{"value": sum(s) / len(s), "loops": loops, "slices": s} for s in sliced]
    with open(args.output, "w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
