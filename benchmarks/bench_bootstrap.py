"""Speed of the batched bootstrap against the issue's target, next to a per-benchmark loop.

Target: 10,000 resamples for each of 1,000 benchmarks x 100 samples, under 5 s on a 2-core
machine.

Usage::

    python benchmarks/bench_bootstrap.py             # full size, 3 repetitions of each
    python benchmarks/bench_bootstrap.py --quick     # 100 benchmarks: a smoke check in seconds
    python benchmarks/bench_bootstrap.py --ref-reps 1  # time the slow references once

Each job is timed with ``time.perf_counter`` (median and min over repetitions) for
``regbench.stats.bootstrap_many`` / ``stability_metrics_many`` and for the straightforward
reference: a Python loop over benchmarks calling ``scipy.stats.bootstrap`` (vectorized over
resamples) once per benchmark.  Peak memory of the batched engine is measured in a separate,
untimed run with ``tracemalloc``.  The two sides draw different resamples, so their intervals
agree within resampling noise: the table reports the mean endpoint difference in interval widths.
A Markdown table is printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy
from scipy import stats

from regbench.stats.bootstrap import bootstrap_many, stability_metrics_many

TARGET_SECONDS = 5.0


def _std(x, axis=-1):
    """A statistic without a fast path in the engine (the generic gathered code)."""
    return np.std(x, axis=axis, ddof=1)


@dataclass
class Row:
    job: str
    ours: list[float]
    ref: list[float]
    peak_mb: float
    agreement: float  # mean |endpoint difference| / interval width


def timed(fn: Callable[[int], object], reps: int) -> tuple[list[float], object]:
    times, out = [], None
    for rep in range(reps):
        t0 = time.perf_counter()
        out = fn(rep)
        times.append(time.perf_counter() - t0)
    return times, out


def peak_mb(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------------------ the references
def scipy_loop(x: np.ndarray, statistic, method: str, n_resamples: int, level: float, seed: int):
    """One ``scipy.stats.bootstrap`` call per benchmark."""
    rng = np.random.default_rng(seed)
    lo, hi = np.empty(len(x)), np.empty(len(x))
    for i, row in enumerate(x):
        ci = stats.bootstrap((row,), statistic, n_resamples=n_resamples, confidence_level=level,
                             method=method, vectorized=True, rng=rng).confidence_interval
        lo[i], hi[i] = ci.low, ci.high
    return lo, hi


def stability_loop(x: np.ndarray, n_resamples: int, level: float, seed: int):
    """Per benchmark: scipy percentile intervals of mean and median, and a bootstrap-t for RCIW2."""
    rng = np.random.default_rng(seed)
    out = np.empty((len(x), 3))
    a = (1 - level) / 2
    for i, row in enumerate(x):
        m, med = row.mean(), np.median(row)
        ci1 = stats.bootstrap((row,), np.mean, n_resamples=n_resamples, confidence_level=level,
                              method="percentile", vectorized=True, rng=rng).confidence_interval
        ci3 = stats.bootstrap((row,), np.median, n_resamples=n_resamples, confidence_level=level,
                              method="percentile", vectorized=True, rng=rng).confidence_interval
        r = row[rng.integers(0, row.size, (n_resamples, row.size))]
        t = (r.mean(axis=1) - m) / (r.std(axis=1, ddof=1) / np.sqrt(row.size))
        t_lo, t_hi = np.quantile(t, [a, 1 - a])
        se = row.std(ddof=1) / np.sqrt(row.size)
        out[i] = ((ci1.high - ci1.low) / m, se * (t_hi - t_lo) / m, (ci3.high - ci3.low) / med)
    return out


def agreement(lo1, hi1, lo2, hi2) -> float:
    width = hi2 - lo2
    return float(np.mean((np.abs(lo1 - lo2) + np.abs(hi1 - hi2)) / (2 * width)))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


# ------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 benchmarks instead of 1,000")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the batched engine")
    ap.add_argument("--ref-reps", type=int, default=3, help="repetitions of the loop references")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20240501)
    args = ap.parse_args(argv)

    k = 100 if args.quick else 1000
    n, b, level = args.samples, args.resamples, 0.99
    # Timings of benchmarks: lognormal noise around a per-benchmark scale (seeded: same data).
    data_rng = np.random.default_rng(args.seed)
    x = data_rng.lognormal(0.0, 0.1, (k, n)) * data_rng.uniform(1e-6, 1e-2, (k, 1))

    rows: list[Row] = []
    jobs = [
        ("mean, percentile", np.mean, "percentile", 1),
        ("mean, BCa", np.mean, "BCa", 1),
        ("median, percentile", np.median, "percentile", 1),
        ("median, BCa", np.median, "BCa", 1),
        ("sd (generic statistic), percentile", _std, "percentile", 1),
        ("sd (generic statistic), percentile, workers=2", _std, "percentile", 2),
    ]
    ref_cache: dict[tuple, tuple] = {}
    for name, statistic, method, workers in jobs:
        def ours(rep, statistic=statistic, method=method, workers=workers):
            return bootstrap_many(x, statistic, confidence_level=level, n_resamples=b, method=method,
                                  rng=rep, workers=workers)

        def ref(rep, statistic=statistic, method=method):
            return scipy_loop(x, statistic, method, b, level, 1000 + rep)

        t_ours, res = timed(ours, args.reps)
        key = (statistic, method)  # the same reference serves both thread counts
        if key not in ref_cache:
            ref_cache[key] = timed(ref, args.ref_reps)
        t_ref, (lo, hi) = ref_cache[key]
        mem = peak_mb(lambda: ours(0))
        rows.append(Row(name, t_ours, t_ref, mem, agreement(res.ci_low, res.ci_high, lo, hi)))
        print(f"  {name}: {statistics.median(t_ours):.2f} s vs {statistics.median(t_ref):.2f} s",
              file=sys.stderr)

    def ours_stab(rep):
        return stability_metrics_many(x, confidence_level=level, n_resamples=b, rng=rep)

    t_ours, res = timed(ours_stab, args.reps)
    t_ref, ref_out = timed(lambda rep: stability_loop(x, b, level, 1000 + rep), args.ref_reps)
    mem = peak_mb(lambda: ours_stab(0))
    mine = np.column_stack([res.rciw1, res.rciw2, res.rciw3])
    rows.append(Row("stability metrics (CV, RMAD, RCIW1-3)", t_ours, t_ref, mem,
                    float(np.mean(np.abs(mine - ref_out) / ref_out))))
    print(f"  stability: {statistics.median(t_ours):.2f} s vs {statistics.median(t_ref):.2f} s",
          file=sys.stderr)

    cmd = "python benchmarks/bench_bootstrap.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
    print(f"`{cmd}`: {k:,} benchmarks x {n} samples, {b:,} resamples, {level:.0%} intervals; "
          f"median of {args.reps} (regbench) and {args.ref_reps} (reference) repetitions.\n")
    print(f"Machine: {platform.machine()}, {cpu_model()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}.\n")
    print("| job | regbench median (min) s | reference: scipy.stats.bootstrap per benchmark, median s "
          "| speed-up | peak MB | agreement | target 5 s |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        mo, mr = statistics.median(r.ours), statistics.median(r.ref)
        met = "met" if mo < TARGET_SECONDS else f"missed by {mo / TARGET_SECONDS:.1f}x"
        print(f"| {r.job} | {mo:.2f} ({min(r.ours):.2f}) | {mr:.2f} | {mr / mo:.0f}x | {r.peak_mb:.0f} "
              f"| {r.agreement:.3f} | {met if not args.quick else 'n/a (--quick)'} |")
    print("\nagreement: mean |endpoint difference| in interval widths (relative RCIW difference for "
          "the stability row); both sides use independent resamples, so this is resampling noise.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
