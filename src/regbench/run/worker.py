"""The worker process of a Python benchmark (``python = "module:function"`` in regbench.toml).

One worker is one *run*: a fresh interpreter that imports the function from the version's tree,
calibrates an inner loop count like :mod:`timeit` and pyperf (double the number of calls until one
timed batch lasts at least ``--min-time`` seconds; the calibration batches are not samples), then
times ``warmup + iterations`` batches with :func:`time.perf_counter` and writes the mean seconds per
call of each batch, in order, as JSON lines to ``--output``::

    {"value": 1.93e-05, "loops": 512}

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
import itertools
import json
import os
import sys
import time

#: Calibration stops doubling here even if ``min_time`` is not reached (a function that does
#: nothing at all would otherwise double forever).
MAX_LOOPS = 2**32


def load_target(target: str, path: str | None = None):
    """Import ``module:function`` (``function`` may be dotted: ``module:Class.method``).

    ``path`` goes first on :data:`sys.path`, so the version's tree wins over anything installed.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError("target must look like 'module:function', got %r" % (target,))
    if path is not None:
        sys.path.insert(0, os.path.abspath(path))
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="regbench-worker", description=__doc__.split("\n")[0])
    parser.add_argument("target", help="module:function to call without arguments")
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--min-time", type=float, default=0.01)
    parser.add_argument("--output", required=True, help="file receiving the JSON lines")
    parser.add_argument("--path", default=None, help="directory put first on sys.path (the tree)")
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.warmup < 0 or not args.min_time > 0:
        parser.error("--iterations must be >= 1, --warmup >= 0 and --min-time > 0")

    # Started by path, sys.path[0] is this file's folder (regbench/run); started with -m it is
    # the working directory.  Neither may shadow the benchmark's own modules.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    func = load_target(args.target, args.path)
    loops, values = measure(func, iterations=args.iterations, warmup=args.warmup,
                            min_time=args.min_time)
    with open(args.output, "w", encoding="utf-8") as out:
        for v in values:
            out.write(json.dumps({"value": v, "loops": loops}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
