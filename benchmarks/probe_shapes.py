"""How the detectors do on noise shapes that ``auto`` was not tuned on (docs/evaluation.md,
"Shapes no detector was tuned on").

The corpus' named shapes (``regbench.evaluate.corpus.NOISE_SHAPES``) are the ones ``auto``'s
rules were chosen on.  These seven were drawn up afterwards, each a variation of a named shape
in one direction the named ones do not cover, and are scored on seeds not used elsewhere (3
and 4), so that they measure how the default holds on data it has not seen.

Usage::

    python benchmarks/probe_shapes.py                                   # 7 shapes x seeds 3, 4, four methods
    python benchmarks/probe_shapes.py --shapes skewed-few --seeds 3 --methods auto

Prints a Markdown table: recall of relevant (>= 3%) changes, F1 and false alarms (count, and per
1,000 version pairs) per shape, seed and method.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from regbench.evaluate import evaluate, make_corpus
from regbench.evaluate.corpus import NOISE_SHAPES


def _shape(base: str, name: str, **changes):
    return dataclasses.replace(NOISE_SHAPES[base], name=name, description=f"{base}, {changes}", **changes)


#: Each departs from a named shape in one direction (the names say which).
SHAPES = {s.name: s for s in (
    _shape("default", "five-runs-noisy", n_runs=5, n_iterations=10, run_cv=(0.01, 0.03), impact_factor=(1.0, 10.0)),
    _shape("default", "heavy-outliers", outlier_share=1.0, outlier_rate=(0.01, 0.05)),
    _shape("skewed", "skewed-few", n_runs=3, n_iterations=20, interference_hits=(0.1, 0.5)),
    _shape("default", "bimodal-close", n_runs=5, n_iterations=10, bimodal_runs_share=1.0,
           bimodal_runs_ratio=(1.04, 1.12)),
    _shape("default", "long-warmup", warmup_outlast=1.0, warmup_amplitude=(0.5, 2.0)),
    _shape("default", "high-jitter", jitter=0.006),
    _shape("default", "many-runs-quiet", n_runs=20, n_iterations=5, run_cv=(0.001, 0.005)),
)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--seeds", default="3,4")
    ap.add_argument("--methods", default="auto,otava-low,otava-median,edivisive")
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    print("| shape | seed | method | recall (>= 3%) | F1 | false alarms (per 1,000 pairs) |")
    print("|---|---|---|---|---|---|")
    for name in args.shapes.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            corpus = make_corpus(shape=SHAPES[name], n_series=args.series, rng=seed)
            for s in evaluate(corpus, args.methods.split(","), jobs=args.jobs).scores:
                print(f"| {name} | {seed} | {s.method} | {s.recall_relevant:.3f} | {s.f1:.3f} | "
                      f"{s.n_false_alarms} ({s.false_alarms_per_1000:.2f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
