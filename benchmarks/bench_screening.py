"""Speed of the screening designs against the issue's target, and how the searched designs
compare with seed 002's published ones.

Targets (issue 15): a design for k = 30 options in under 1 s; a D-optimal augmentation of a
128-run design with 20 model terms in under 10 s.

Usage::

    python benchmarks/bench_screening.py            # 5 repetitions of each
    python benchmarks/bench_screening.py --reps 1

Each case is timed with ``time.perf_counter`` (median and min over repetitions) for
``get_design(...).build(...)``, which includes the word-length pattern.  A Markdown table is
printed: the design, its resolution and word-length pattern (A_3, A_4, A_5, A_6), and the time.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from regbench.screening.base import get_design
from regbench.screening.doptimal import augment
from regbench.screening.effects import Term
from regbench.screening.terms import design_terms

SCR64 = "G = ABC, H = ABD, I = ABE, J = ACDE, K = ABF, L = ACDF, M = ACEF, N = ADEF".split(", ")
SCR32 = "F = ABC, G = ABD, H = ACD, I = BCD, J = ABE, K = ACE, L = BCE, M = ADE, N = BDE".split(", ")

CASES = [
    ("k=30, resolution IV, smallest size (searched)", 30, {"resolution": 4}),
    ("k=30, resolution III, smallest size (searched)", 30, {"resolution": 3}),
    ("k=30, 128 runs, resolution IV (searched)", 30, {"runs": 128, "resolution": 4}),
    ("k=14, 32 runs, resolution IV (searched)", 14, {"runs": 32, "resolution": 4}),
    ("k=14, Scr32 (seed 002 appendix)", 14, {"generators": SCR32}),
    ("k=14, 64 runs, resolution IV (searched)", 14, {"runs": 64, "resolution": 4}),
    ("k=14, Scr64 (seed 002 appendix)", 14, {"generators": SCR64}),
    ("k=14, 128 runs, resolution IV (searched)", 14, {"runs": 128, "resolution": 4}),
    ("k=14, 2048 runs, resolution VI (searched)", 14, {"runs": 2048, "resolution": 6}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}\n")
    print("| design | runs | resolution | A_3, A_4, A_5, A_6 | median s | min s | target |")
    print("|---|---|---|---|---|---|---|")
    for label, k, options in CASES:
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            d = get_design("fractional", **options).build([2] * k)
            times.append(time.perf_counter() - start)
        wlp = (tuple(d.word_length_pattern) + (0,) * 6)[2:6] if d.word_length_pattern else ()
        target = ("< 1 s: " + ("met" if statistics.median(times) < 1 else "MISSED")) if k == 30 else ""
        print(f"| {label} | {d.runs} | {d.resolution} | {', '.join(map(str, wlp))} | "
              f"{statistics.median(times):.3f} | {min(times):.3f} | {target} |")
    # D-optimal augmentation: the searched 128-run resolution IV design of 14 options, a model of
    # its 14 main effects and 6 two-option interactions, 16 runs added.
    d = get_design("fractional", runs=128, resolution=4).build([2] * 14)
    terms = design_terms(d, order=1) + [Term(p, "*".join(map(str, p)))
                                        for p in [(0, 1), (0, 2), (1, 2), (3, 4), (5, 6), (7, 8)]]
    times = []
    for rep in range(args.reps):
        start = time.perf_counter()
        result = augment(d.coded, terms, 16, rng=rep)
        times.append(time.perf_counter() - start)
    print(f"\nD-optimal augmentation, 128 runs + 16, 20 terms: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s (target < 10 s: {'met' if statistics.median(times) < 10 else 'MISSED'}); "
          f"D-efficiency {result.d_efficiency:.4f}")


if __name__ == "__main__":
    main()
