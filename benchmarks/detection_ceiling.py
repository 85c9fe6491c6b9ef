"""How much of each corpus any valid detector could find: the recall of a test told where the changes are.

Usage::

    python benchmarks/detection_ceiling.py                 # synthetic shapes (seeds 1 and 2) and the real corpus
    python benchmarks/detection_ceiling.py --seeds 1 --series 60
    python benchmarks/detection_ceiling.py --seeds --corpus benchmarks/real_corpus/heldout-2026-11-28   # real ones only

A detector searches for changes and must pay for the search (``auto`` adjusts each split's
p-value for the positions it chose from, at ``alpha`` = 0.001).  This script skips the search:
for every relevant true change (``|magnitude| >= 3%`` or a creep) it runs ``auto``'s own
two-level test (:func:`regbench.stats.segments.segment_test`, seed 000 s.3) between the true
segments on either side of the change (a creep's own versions left out), with the
version-to-version component estimated around the true change points, and counts the changes
whose unadjusted p-value is below 0.001 and below 0.05.  Each run is summarised as ``auto``
would (its chosen location) and, for comparison, by each location alone; a multimodal series
(by ``auto``'s mode screen) is also tested mode by mode (seed 001 s.4.2), with the smallest
p-value times the number of modes.

The result is an upper bound on the recall a detector with a valid error rate can reach at that
level on the same runs, not a score: a corpus where it is 0.63 cannot give 0.95 without more runs
per version (seed 004) or a confirmation (``regbench detect --confirm``), whatever the method.
"""

from __future__ import annotations

import argparse
import collections
import warnings

import numpy as np

from regbench.detect import get_detector
from regbench.detect.modes import mode_bounds
from regbench.evaluate import make_corpus
from regbench.evaluate.corpus import NOISE_SHAPES, Corpus
from regbench.evaluate.real import load_real_corpus
from regbench.stats.levels import mode_stats
from regbench.stats.runs import VersionStats
from regbench.stats.segments import segment_test, version_stats, version_variance

LEVELS = (0.001, 0.05)
VIEWS = ("auto's location", "mean", "median", "low", "+ modes")


def _without(vs: VersionStats, start: int, stop: int) -> VersionStats:
    keep = np.r_[0:start, stop:vs.mean.size]
    return VersionStats(vs.index[keep], vs.mean[keep], vs.var[keep], vs.n[keep], vs.log, vs.run_scale)


def _p(vs: VersionStats, before: int, first: int, last: int, after: int, cps: list[int]) -> float:
    """The two-level test of ``[before, first)`` against ``(last, after)`` in ``vs``, whose indices
    are positions in the series (a version without a value in ``vs`` is skipped)."""
    pos = {int(k): j for j, k in enumerate(vs.index)}

    def at(k: int) -> int:  # the first position in vs at or after series index k
        return int(np.searchsorted(vs.index, k))
    s, tau, tau_end, e = at(before), at(first), at(last + 1) if last > first else at(first), at(after)
    if tau - s < 1 or e - tau_end < 1:
        return 1.0
    vv = version_variance(vs, sorted({pos[c] for c in cps if c in pos}))
    if tau_end > tau:
        vs, e = _without(vs, tau, tau_end), e - (tau_end - tau)
    res = segment_test(vs, s, tau, e, version_var=vv)
    return float(res.p_value) if np.isfinite(res.p_value) else 1.0


def ceiling(corpus: Corpus) -> tuple[int, dict[tuple[str, float], int], dict[str, tuple[int, int]]]:
    """Relevant true changes of ``corpus``; per view and level, how many the oracle test finds; and
    per kind of change, how many there are and how many the best view finds at 0.001."""
    auto = get_detector("auto")
    found: dict[tuple[str, float], int] = collections.Counter()
    kinds: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    total = 0
    for ls in corpus.series:
        truths = sorted(ls.truth, key=lambda t: t.index)
        if not truths:
            continue
        s = ls.series
        choice = auto.location(s)
        views = {"auto's location": version_stats(s.runs, fence=auto.fence, estimator=choice.estimator,
                                                  log=choice.log, outlying_z=auto.outlying)}
        for est in ("mean", "median", "low"):
            views[est] = version_stats(s.runs, fence=auto.fence, estimator=est, log=choice.log,
                                       outlying_z=auto.outlying)
        modes = mode_bounds(s, fence=auto.fence, rng=0)
        per_mode = [] if modes is None else [m for m in mode_stats(s.runs, modes, fence=auto.fence, log=choice.log,
                                                                    outlying_z=auto.outlying) if m.mean.size >= 2]
        cps = sorted({k for t in truths for k in (t.index, t.end_index + 1 if t.end_index > t.index else t.index)})
        starts = [0] + [t.end_index + 1 if t.end_index > t.index else t.index for t in truths]
        ends = [t.index for t in truths[1:]] + [len(s.versions)]
        for k, t in enumerate(truths):
            if not t.relevant:
                continue
            total += 1
            p = {name: _p(vs, starts[k], t.index, t.end_index, ends[k], cps) for name, vs in views.items()}
            p_modes = min((_p(m, starts[k], t.index, t.end_index, ends[k], cps) for m in per_mode), default=1.0)
            p["+ modes"] = min(p["auto's location"], min(1.0, p_modes * max(1, len(per_mode))))
            for name, value in p.items():
                for level in LEVELS:
                    found[(name, level)] += value < level
            kinds[t.shape][0] += 1
            kinds[t.shape][1] += p["+ modes"] < LEVELS[0]
    return total, found, {k: (v[0], v[1]) for k, v in kinds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[1, 2], help="synthetic seeds (none: real corpora only)")
    parser.add_argument("--series", type=int, default=150, help="series per synthetic corpus")
    parser.add_argument("--corpus", action="append", default=[], metavar="PATH",
                        help="a folder of real measurements (as `regbench evaluate --corpus PATH` reads), "
                             "besides the shipped real corpus; repeatable")
    args = parser.parse_args()
    corpora = [(f"{shape} (seed {seed})", make_corpus(shape=shape, rng=seed,
                                                       n_series=60 if shape == "many-iterations" else args.series))
               for seed in args.seeds for shape in NOISE_SHAPES]
    corpora.append(("real", load_real_corpus()))
    corpora += [(path, load_real_corpus(path)) for path in args.corpus]
    head = " | ".join(f"{v} p<{lv}" for v in VIEWS for lv in LEVELS)
    print(f"| corpus | relevant changes | {head} | by kind, + modes p<0.001 |")
    print("|---|---:|" + "---:|" * (len(VIEWS) * len(LEVELS)) + "---|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, corpus in corpora:
            total, found, kinds = ceiling(corpus)
            cells = " | ".join(f"{found[(v, lv)] / total:.3f}" if total else "-" for v in VIEWS for lv in LEVELS)
            by_kind = ", ".join(f"{k} {f / n:.2f} ({f}/{n})" for k, (n, f) in sorted(kinds.items()))
            print(f"| {name} | {total} | {cells} | {by_kind} |", flush=True)


if __name__ == "__main__":
    main()
