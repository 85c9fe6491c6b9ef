"""How the detectors do on short histories: 6 to 16 versions (docs/evaluation.md, "Short
histories").

A project that starts benchmarking has a handful of versions, and a history that short is where a
detector's estimate of the version-to-version noise has the fewest differences to come from.  The
named shapes' corpora (``regbench.evaluate.corpus.NOISE_SHAPES``) are made at 100 versions a
series as usual and each series is cut into windows of ``k`` consecutive versions, each window a
history of its own, with the true changes inside it (its first version cannot show a change, so a
change there is left out; a window that cuts a creep is dropped).  The windows keep the corpus'
mix of quiet, stepped, reverted, creeping and bimodal series, now several changes among a few
versions where a step fell close to another.

Usage::

    python benchmarks/short_histories.py                                  # k = 6, 8, 11, 16; six shapes; seed 1
    python benchmarks/short_histories.py --lengths 6 --shapes few-runs --seeds 2 --methods auto,otava-median

Prints a Markdown table: recall of relevant (>= 3%) changes, F1 and false alarms (count, and per
1,000 version pairs) per length, shape, seed and method.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from regbench.evaluate import evaluate, make_corpus
from regbench.evaluate.corpus import Corpus, LabelledSeries

SHAPES = ("default", "few-runs", "skewed", "many-iterations", "bimodal-runs", "low-impact")


def windows(corpus: Corpus, k: int) -> Corpus:
    """Every series of ``corpus`` cut into consecutive histories of ``k`` versions."""
    out: list[LabelledSeries] = []
    for ls in corpus.series:
        s = ls.series
        for start in range(0, len(s.versions) - k + 1, k):
            stop = start + k
            if any(c.index < stop and c.end_index >= start and not (start < c.index and c.end_index < stop)
                   for c in ls.truth if c.end_index > c.index):
                continue  # a creep the window cuts
            truth = tuple(dataclasses.replace(c, index=c.index - start, end_index=c.end_index - start)
                          for c in ls.truth if start < c.index and c.end_index < stop)
            cut = dataclasses.replace(s, versions=s.versions[start:stop], runs=s.runs[start:stop],
                                      failed=s.failed[start:stop], warmup=s.warmup[start:stop],
                                      benchmark=f"{s.benchmark}@{start}")
            out.append(dataclasses.replace(ls, series=cut, truth=truth))
    return dataclasses.replace(corpus, series=tuple(out), name=f"{corpus.name}, {k} versions")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", default="6,8,11,16", help="comma-separated history lengths")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--methods", default="auto")
    ap.add_argument("--series", type=int, default=100, help="series of 100 versions a corpus, before cutting")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    print("| versions | shape | seed | method | recall (>= 3%) | F1 | false alarms (per 1,000 pairs) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.shapes.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            corpus = make_corpus(shape=name, n_series=args.series, rng=seed)
            for k in (int(x) for x in args.lengths.split(",")):
                for s in evaluate(windows(corpus, k), args.methods.split(","), jobs=args.jobs).scores:
                    print(f"| {k} | {name} | {seed} | {s.method} | {s.recall_relevant:.3f} | {s.f1:.3f} | "
                          f"{s.n_false_alarms} ({s.false_alarms_per_1000:.2f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
