"""How the detectors do on noise shapes that ``auto`` was not tuned on (docs/evaluation.md,
"Shapes no detector was tuned on").

The corpus' named shapes (``regbench.evaluate.corpus.NOISE_SHAPES``) are the ones ``auto``'s
rules were chosen on.  These seven were drawn up afterwards, each a variation of a named shape
in one direction the named ones do not cover, and are scored on seeds not used elsewhere (3
and 4), so that they measure how the default holds on data it has not seen.  Seven more were
added on 2026-11-28 (seeds 7, 8 and 9): runs of one or two samples (a command timed once a process), alone
and with interference or runs at two levels, timers that round, and heavy-tailed run effects;
the generator makes at least two samples a run, so the one-sample shapes keep each run's first.
Eight more on 2026-11-29 (seeds 11, 12 and 13): two runs a version, run-to-run CV of 2-5% with ten
runs, interference over ten runs, runs at two levels with three runs a version, `few-runs` with
100 iterations, interference delays of 50-300%, and runs at two levels 1.5-2.5x apart (cores
of two speeds) with five and with three runs a version.

Usage::

    python benchmarks/probe_shapes.py                                   # every shape x seeds 3, 4, four methods
    python benchmarks/probe_shapes.py --shapes skewed-few --seeds 3 --methods auto

Prints a Markdown table: recall of relevant (>= 3%) changes, F1 and false alarms (count, and per
1,000 version pairs) per shape, seed and method.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from regbench.evaluate import evaluate, make_corpus
from regbench.evaluate.corpus import NOISE_SHAPES, Corpus


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
    # 2026-11-28
    _shape("default", "one-iteration", n_runs=10, n_iterations=2),
    _shape("default", "two-iterations", n_runs=5, n_iterations=2),
    _shape("default", "one-iter-3runs", n_runs=3, n_iterations=2),
    _shape("skewed", "one-iter-skewed", n_runs=10, n_iterations=2),
    _shape("bimodal-runs", "one-iter-bimodal", n_runs=10, n_iterations=2),
    _shape("default", "quantized"),
    _shape("default", "heavy-run"),
    # 2026-11-29, scored once on seeds 11, 12 and 13 with the code as it was, nothing changed for them
    _shape("default", "two-runs", n_runs=2, n_iterations=20),
    _shape("default", "noisy-ten-runs", run_cv=(0.02, 0.05), impact_factor=(1.0, 20.0)),
    _shape("skewed", "skewed-ten", n_runs=10, n_iterations=10, interference_hits=(0.05, 0.5)),
    _shape("bimodal-runs", "bimodal-three", n_runs=3, n_iterations=20),
    _shape("few-runs", "few-runs-many-iter", n_iterations=100),
    _shape("skewed", "skewed-wide", n_runs=5, n_iterations=30, interference_delay=(0.5, 3.0)),
    _shape("bimodal-runs", "bimodal-wide-five", n_runs=5, n_iterations=20, bimodal_runs_ratio=(1.5, 2.5)),
    _shape("bimodal-runs", "bimodal-wide-three", n_runs=3, n_iterations=20, bimodal_runs_ratio=(1.5, 2.5)),
)}


def _each_run(corpus: Corpus, per_series) -> Corpus:
    """Every run ``r`` of every series replaced by ``f(r)``, ``f = per_series(series)``."""
    out = []
    for ls in corpus.series:
        f = per_series(ls.series)
        runs = [[f(r) for r in version] for version in ls.series.runs]
        out.append(dataclasses.replace(ls, series=dataclasses.replace(ls.series, runs=runs)))
    return dataclasses.replace(corpus, series=tuple(out))


def _first_sample(corpus: Corpus, rng) -> Corpus:
    """A process timed once: each run keeps its first sample."""
    return _each_run(corpus, lambda series: lambda r: r[:1])


def _quantized(corpus: Corpus, rng) -> Corpus:
    """A timer that rounds: every sample to a resolution of 0.5-3% of the series' level."""
    def per_series(series):
        q = float(np.median(np.concatenate(series.runs[0]))) * rng.uniform(0.005, 0.03)
        return lambda r: np.round(r / q) * q
    return _each_run(corpus, per_series)


def _heavy_run(corpus: Corpus, rng) -> Corpus:
    """Run effects with heavy tails: each run times 1 + c t(2), c 0.3-1% per series."""
    def per_series(series):
        c = rng.uniform(0.003, 0.01)
        return lambda r: r * (1 + c * rng.standard_t(2))
    return _each_run(corpus, per_series)


#: What is done to a generated corpus after it is made.
POST = {
    "one-iteration": _first_sample,
    "one-iter-3runs": _first_sample,
    "one-iter-skewed": _first_sample,
    "one-iter-bimodal": _first_sample,
    "quantized": _quantized,
    "heavy-run": _heavy_run,
}


def probe_corpus(name: str, seed: int, n_series: int) -> Corpus:
    """The probe corpus ``name`` of ``seed``."""
    corpus = make_corpus(shape=SHAPES[name], n_series=n_series, rng=seed)
    post = POST.get(name)
    return corpus if post is None else post(corpus, np.random.default_rng(seed + 100))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated; default: all twenty-two")
    ap.add_argument("--seeds", default="3,4")
    ap.add_argument("--methods", default="auto,otava-low,otava-median,edivisive")
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    print("| shape | seed | method | recall (>= 3%) | F1 | false alarms (per 1,000 pairs) |")
    print("|---|---|---|---|---|---|")
    for name in args.shapes.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            corpus = probe_corpus(name, seed, args.series)
            for s in evaluate(corpus, args.methods.split(","), jobs=args.jobs).scores:
                print(f"| {name} | {seed} | {s.method} | {s.recall_relevant:.3f} | {s.f1:.3f} | "
                      f"{s.n_false_alarms} ({s.false_alarms_per_1000:.2f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
