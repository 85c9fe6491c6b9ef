"""Histories of one run a version with interference spikes: what `auto` reports, shape by shape.

A CI job that times each commit once gives one run a version; interference slows some commits'
one run (docs/detection.md, "Histories of one run a version").  For each shape (noise, share of
commits slowed, how much they are slowed) and each seed this makes a flat history and one with a
step at its middle, runs `auto`, and counts false changes (any change in a flat history; in a
stepped one, any but the first change within 2 versions of the step) and steps found (within 2
versions, the tolerance of `regbench evaluate`).  It also counts, in quiet histories (no spikes),
how often a real one-version slowdown and its revert are both reported (the rule's cost).

    python benchmarks/one_run_spikes.py [--seeds 5000-5019] [--versions 500]

The rule was worked out on seeds 0-19 (flat) and 1000-1019 (stepped) of the first shape; report on
other seeds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from regbench.detect import get_detector
from regbench.model import Series, VersionInfo

#: (name, noise, share of commits slowed, slowdown low, high, step)
SHAPES = [
    ("probe: 3% noise, 5% slowed 20-60%, step 10%", 0.03, 0.05, 0.2, 0.6, 0.10),
    ("quiet: 1% noise, 5% slowed 10-30%, step 5%", 0.01, 0.05, 0.1, 0.3, 0.05),
    ("busy: 3% noise, 10% slowed 20-60%, step 10%", 0.03, 0.10, 0.2, 0.6, 0.10),
    ("rare: 3% noise, 2% slowed 20-60%, step 10%", 0.03, 0.02, 0.2, 0.6, 0.10),
    ("noisy: 5% noise, 5% slowed 30-100%, step 20%", 0.05, 0.05, 0.3, 1.0, 0.20),
]


def history(levels, seed: int, noise: float, rate: float, low: float, high: float) -> Series:
    rng = np.random.default_rng(seed)
    s = Series("b", "default", "m", "ms", "lower")
    for k, level in enumerate(levels):
        v = level * np.exp(rng.normal(0, noise)) * (1 + (rng.random() < rate) * rng.uniform(low, high))
        s.versions.append(VersionInfo(name=f"v{k:05d}", id=k + 1))
        s.runs.append([np.array([v])])
        s.failed.append(0)
        s.warmup.append(0)
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="5000-5019", help="a range a-b of seeds")
    ap.add_argument("--versions", type=int, default=500)
    args = ap.parse_args()
    a, b = (int(x) for x in args.seeds.split("-"))
    seeds = range(a, b + 1)
    n = args.versions
    mid = n // 2
    auto = get_detector("auto")
    print(f"{len(seeds)} seeds ({args.seeds}), {n} versions of one run each\n")
    print("| shape | false changes, flat histories | steps found (at the step / late) | false changes, stepped |"
          " seconds |")
    print("|---|---:|---:|---:|---:|")
    for name, noise, rate, low, high, step in SHAPES:
        t = time.perf_counter()
        false_flat = false_step = found = exact = 0
        for seed in seeds:
            false_flat += len(auto.detect(history([1.0] * n, seed, noise, rate, low, high)))
            s = history([1.0] * mid + [1 + step] * (n - mid), 100_000 + seed, noise, rate, low, high)
            changes = auto.detect(s)
            hit = [c for c in changes if abs(s.index(c.version) - mid) <= 2 and c.kind == "regression"]
            found += bool(hit)
            exact += bool(hit) and s.index(hit[0].version) == mid
            false_step += len(changes) - min(1, len(hit))
        print(f"| {name} | {false_flat} in {len(seeds)} | {found} of {len(seeds)} ({exact} / {found - exact}) | "
              f"{false_step} | {time.perf_counter() - t:.1f} |")
    # The cost: real one-version slowdowns in quiet one-run histories, one or two a history.
    print("\n| quiet one-run history (2% noise), real one-version slowdowns of 30% | both edges reported |")
    print("|---|---:|")
    for count in (1, 2):
        both = 0
        for seed in seeds:
            levels = [1.0] * n
            for j in range(count):
                levels[(j + 1) * n // (count + 1)] = 1.3
            changes = {c.version for c in auto.detect(history(levels, 200_000 + seed, 0.02, 0.0, 0, 0))}
            at = [(j + 1) * n // (count + 1) for j in range(count)]
            both += sum(f"v{k:05d}" in changes and f"v{k + 1:05d}" in changes for k in at)
        print(f"| {count} a history | {both} of {count * len(seeds)} |")


if __name__ == "__main__":
    main()
