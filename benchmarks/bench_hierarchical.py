"""Speed of the hierarchical summary (seed 000 s.3.1, s.4.2) of 10 million samples.

Usage::

    python benchmarks/bench_hierarchical.py           # 1000 experiments x 10 runs x 1000 samples
    python benchmarks/bench_hierarchical.py --quick   # 100x less

Times :func:`regbench.analysis.summarize_series` (formula-4 summary of every experiment, plus the
robust variant's resampling) on in-memory series, next to a straightforward loop implementation of
the same statistics (one experiment at a time, one run at a time, 100 resamples per run drawn with
``rng.choice``), and prints a Markdown table.  Target (issue 3): the summary under 1 s on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy import special

from regbench.analysis import summarize_series
from regbench.model import Series, VersionInfo


def make_series(n_versions: int, n_runs: int, n_samples: int, seed: int = 1) -> Series:
    rng = np.random.default_rng(seed)
    s = Series("bench", "default", "m", "s", "lower")
    for v in range(n_versions):
        s.versions.append(VersionInfo(f"v{v}", id=v + 1))
        means = 1 + rng.normal(0, 0.02, (n_runs, 1))
        s.runs.append(list(means * (1 + rng.normal(0, 0.01, (n_runs, n_samples)))))
        s.failed.append(0)
        s.warmup.append(5)
    return s


def loop_reference(series: Series, *, robust: bool, rng=0) -> list[tuple[float, float]]:
    """The same statistics written plainly: per experiment, per run, per resample."""
    gen = np.random.default_rng(rng)
    out = []
    for runs in series.runs:
        m = len(runs)
        n = float(np.mean([r.size for r in runs]))
        means = np.array([r.mean() for r in runs])
        variances = np.array([r.var(ddof=1) for r in runs])
        s2_rho = means.var(ddof=1)
        s2_sigma = variances.mean()
        rho2 = max(s2_rho - s2_sigma / n, 0.0)
        q = special.stdtrit(m - 1, 0.995)
        out.append((means.mean(), q * np.sqrt((n * rho2 + s2_sigma) / (m * n))))
        if robust:
            for r in runs:
                k = r.size // 2
                np.median([gen.choice(r, k).mean() for _ in range(100)])
                np.median([gen.choice(r, k).var(ddof=1) for _ in range(100)])
    return out


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    shape = (10, 10, 1000) if args.quick else (1000, 10, 1000)
    series = make_series(*shape)
    total = shape[0] * shape[1] * shape[2]
    ours = summarize_series([series], robust=False)
    ref = loop_reference(series, robust=False)
    assert np.allclose([o.plain.half_width for o in ours], [r[1] for r in ref])  # the same numbers
    rows = []
    for robust in (False, True):
        t = timed(lambda: summarize_series([series], robust=robust), 5)
        r = timed(lambda: loop_reference(series, robust=robust), 1)
        rows.append((robust, statistics.median(t), min(t), r[0]))
    print(f"{total:,} samples ({shape[0]} experiments x {shape[1]} runs x {shape[2]} samples)\n")
    print("| summary | target | regbench median (min) | loop reference | reference / regbench |")
    print("|---|---|---|---|---|")
    for robust, med, mn, ref_t in rows:
        label = "formula (4) + robust resampling (s.4.2)" if robust else "formula (4) only"
        target = "< 1 s" if not args.quick else "-"
        print(f"| {label} | {target} | {med:.3f} s ({mn:.3f}) | {ref_t:.2f} s | {ref_t / med:.0f}x |")


if __name__ == "__main__":
    main()
