#!/usr/bin/env python3
"""Labelled corpora from a generator written apart from regbench's (a probe, 2026-12-01), in the
`--corpus PATH` folder format.  It was written without reading src/regbench/evaluate/, to score
`auto` on noise shapes nobody tuned it on (docs/evaluation.md, "Shapes from an independent
generator").

Usage:  python benchmarks/independent_shapes.py SHAPE SEED [--out DIR | --root DIR] [--series 150] [--versions 60]
        python benchmarks/independent_shapes.py --list

Writes DIR/samples.csv.gz (benchmark,version,run,iteration,value; warm-up included, iterations
from 0) and DIR/truth.jsonl (header + one line per series). DIR defaults to
ROOT/<shape>-s<seed> (ROOT: --root, default independent-shapes in the temporary folder). numpy only;
everything derives from (shape, seed).

Model of one sample (times, lower is better):
    log level[k]   = log(base) + log(ratio[k]) + drift[k] + cycle[k] + build[k]
    run[k, r]      = level[k] * exp(N(0, run_sd)) * mode_level[k, r] * (outlier run factor)
    x[k, r, i]     = run[k, r] * exp(e[k, r, i]) * (1 + interference[k, r, i])
  e is normal / Student t / AR(1) per shape; interference is Exp(interf) plus Pareto spikes;
  warm-up iterations are slower; the timer may quantize to a tick.
Per-series noise parameters actually drawn are recorded in truth.jsonl under "noise".
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import tempfile
import zlib
from pathlib import Path

import numpy as np

BASE = dict(runs=5, iters=20, warmup=3, iter_sd=0.008, interf=0.004, run_sd=0.005,
            build_sd=0.0, walk_sd=0.0, cycle_amp=0.0, t_df=None, pareto_p=0.0, pareto_alpha=1.5,
            pareto_scale=0.02, outlier_p=0.0, tick_rel=None, ar_phi=None, hetero_exp=0.0,
            stretch=None, levels=None)

SHAPES = {
    # slow machine drift, random walk of 0.25%/version in log level (not a change)
    "drift-walk": dict(walk_sd=0.0025),
    # thermal / seasonal cycle over versions, amplitude 1.5%, period 15-30 versions
    "drift-cycle": dict(cycle_amp=0.015),
    # sensitivity variants (smaller drifts)
    "drift-cycle-1pct": dict(cycle_amp=0.010),
    "drift-walk-0.15": dict(walk_sd=0.0015),
    # each version (build) its own layout offset, sd 1.5% (Mytkowicz et al. 2009)
    "layout": dict(build_sd=0.015),
    # heavy-tailed iterations: Student t with 2.5 df (scale 0.8%), symmetric
    "heavy-t": dict(t_df=2.5),
    # Pareto interference spikes (5% of iterations) + 2% of runs slowed 30-200% whole
    "pareto-outliers": dict(pareto_p=0.05, outlier_p=0.02),
    # timer tick ~1.5x the iteration spread (level 40-70 ticks, spread ~1%)
    "quantized": dict(tick_rel=True),
    # AR(1) iterations within a run, phi 0.9, marginal sd 1.5%
    "ar1": dict(ar_phi=0.9, iter_sd=0.015),
    # spread grows with the level: sd x ratio^8 (a +20% version has 4.3x the spread)
    "hetero": dict(hetero_exp=8.0, iter_sd=0.01, run_sd=0.006),
    # 2 runs a version, 50 iterations each
    "few-runs": dict(runs=2, iters=50, run_sd=0.007),
    # 20 processes a version, timed once each (no warm-up)
    "many-runs-1iter": dict(runs=20, iters=1, warmup=0, iter_sd=0.012, interf=0.008),
    # a noisy neighbour for 10 versions: 30% of iterations +Exp(10%), run sd +2%
    "noisy-stretch": dict(stretch=10),
    # runs land at one of 3 levels (1, 1+g, 1+2g; g 3-6%; probabilities .5/.3/.2)
    "trimodal-runs": dict(levels=3),
}

MAGS = [0.02, 0.03, 0.05, 0.10, 0.20]


def make_truth(rng, kind, nv):
    ratios = np.ones(nv)
    changes = []
    if kind == "step":
        n = int(rng.integers(3, 5))
        while True:
            pos = np.sort(rng.choice(np.arange(5, nv - 4), size=n, replace=False))
            if np.all(np.diff(pos) >= 7):
                break
        for p in pos:
            m = float(rng.choice(MAGS)) * (1 if rng.random() < 0.5 else -1)
            ratios[p:] *= 1 + m
            changes.append(dict(index=int(p), end_index=int(p), magnitude=m, shape="step"))
    elif kind == "revert":
        while True:
            a = int(rng.integers(5, nv // 2 - 5)); b = int(rng.integers(nv // 2, nv - 5))
            da, db = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            if a + da < b:
                break
        for p, d in ((a, da), (b, db)):
            m = float(rng.choice(MAGS)) * (1 if rng.random() < 0.5 else -1)
            ratios[p:p + d] *= 1 + m
            changes.append(dict(index=p, end_index=p, magnitude=m, shape="revert"))
            changes.append(dict(index=p + d, end_index=p + d, magnitude=1 / (1 + m) - 1, shape="revert"))
    elif kind == "creep":
        length = int(rng.integers(6, 11))
        per = float(rng.uniform(0.005, 0.008)) * (1 if rng.random() < 0.75 else -1)
        start = int(rng.integers(5, nv - length - 4))
        for j in range(length):
            ratios[start + j:] *= 1 + per
        changes.append(dict(index=start, end_index=start + length - 1,
                            magnitude=float(ratios[start + length - 1] / ratios[start - 1] - 1), shape="creep"))
    # round ratios to 10 significant digits and recompute magnitudes from them
    ratios = np.array([float(f"{r:.10g}") for r in ratios])
    for c in changes:
        c["magnitude"] = float(f"{ratios[c['end_index']] / ratios[c['index'] - 1] - 1:.10g}")
    return ratios, changes


def series_samples(rng, p, ratios, base):
    nv = len(ratios)
    R, I, W = p["runs"], p["iters"], p["warmup"]
    T = W + I
    noise = {}
    loglev = np.log(base) + np.log(ratios)
    if p["walk_sd"]:
        walk = np.cumsum(rng.normal(0, p["walk_sd"], nv)); walk -= walk[0]
        loglev += walk; noise["walk_range"] = float(walk.max() - walk.min())
    if p["cycle_amp"]:
        period = float(rng.uniform(15, 30)); phase = float(rng.uniform(0, 2 * np.pi))
        loglev += p["cycle_amp"] * np.sin(2 * np.pi * np.arange(nv) / period + phase)
        noise.update(cycle_period=period, cycle_phase=phase)
    if p["build_sd"]:
        loglev += rng.normal(0, p["build_sd"], nv)
    scale = np.ones(nv)
    if p["hetero_exp"]:
        scale = np.minimum(ratios ** p["hetero_exp"], 6.0)
    run_sd = np.full(nv, p["run_sd"]) * scale
    interf = np.full(nv, p["interf"]) * scale
    stretch_p = np.zeros(nv)
    if p["stretch"]:
        s0 = int(rng.integers(0, nv - p["stretch"]))
        run_sd[s0:s0 + p["stretch"]] += 0.02
        stretch_p[s0:s0 + p["stretch"]] = 0.3
        noise["noisy_versions"] = [s0, s0 + p["stretch"] - 1]
    runlog = loglev[:, None] + rng.normal(0, 1, (nv, R)) * run_sd[:, None]
    if p["levels"]:
        g = float(rng.uniform(0.03, 0.06))
        lv = rng.choice(3, size=(nv, R), p=[0.5, 0.3, 0.2])
        runlog += np.log1p(g * lv)
        noise["level_gap"] = g
    out_runs = []
    if p["outlier_p"]:
        mask = rng.random((nv, R)) < p["outlier_p"]
        fac = rng.uniform(0.3, 2.0, (nv, R))
        runlog += np.where(mask, np.log1p(fac), 0.0)
        out_runs = [[int(k), int(r), round(float(fac[k, r]), 3)] for k, r in zip(*np.nonzero(mask))]
        noise["outlier_runs"] = out_runs
    sd = (p["iter_sd"] * scale)[:, None, None]
    if p["t_df"]:
        e = rng.standard_t(p["t_df"], (nv, R, T)) * sd
        e = np.maximum(e, -0.3)  # a time cannot be arbitrarily fast
    elif p["ar_phi"]:
        phi = p["ar_phi"]
        z = rng.normal(0, 1, (nv, R, T)) * np.sqrt(1 - phi ** 2)
        e = np.empty_like(z); e[..., 0] = rng.normal(0, 1, (nv, R))
        for t in range(1, T):
            e[..., t] = phi * e[..., t - 1] + z[..., t]
        e *= sd
    else:
        e = rng.normal(0, 1, (nv, R, T)) * sd
    x = np.exp(runlog[:, :, None] + e)
    add = rng.exponential(1.0, (nv, R, T)) * interf[:, None, None]
    if p["pareto_p"]:
        spikes = (rng.random((nv, R, T)) < p["pareto_p"]) * (rng.pareto(p["pareto_alpha"], (nv, R, T)) + 1) * p["pareto_scale"]
        add += spikes
    if p["stretch"]:
        add += (rng.random((nv, R, T)) < stretch_p[:, None, None]) * rng.exponential(0.10, (nv, R, T))
    x *= 1 + add
    if W:
        x[:, :, :W] *= (1 + 0.25 * 0.5 ** np.arange(W))[None, None, :]
    if p["tick_rel"]:
        ticks = float(rng.uniform(40, 70))
        tick = base / ticks
        x = np.maximum(np.floor(x / tick), 1) * tick
        noise["tick"] = tick; noise["base_ticks"] = ticks
    return x, noise


def build(shape, seed, out, n_series=150, nv=60):
    p = dict(BASE); p.update(SHAPES[shape])
    rng = np.random.default_rng([seed, zlib.crc32(shape.encode())])
    kinds = ["quiet"] * 20 + ["step"] * 70 + ["revert"] * 35 + ["creep"] * 25
    kinds = kinds[:n_series] if n_series <= 150 else kinds + ["step"] * (n_series - 150)
    rng.shuffle(kinds)
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO(); buf.write("benchmark,version,run,iteration,value\n")
    lines = []
    for s, kind in enumerate(kinds):
        name = f"{shape}/{s:03d}-{kind}"
        ratios, changes = make_truth(rng, kind, nv)
        base = float(np.exp(rng.uniform(np.log(1e-4), np.log(1e-1))))
        x, noise = series_samples(rng, p, ratios, base)
        noise["base"] = base
        R, T = x.shape[1], x.shape[2]
        for k in range(nv):
            for r in range(R):
                for i in range(T):
                    buf.write(f"{name},v{k:02d},{r},{i},{x[k, r, i]:.9g}\n")
        lines.append(dict(series=name, program=shape, kind=kind, ratios=[float(v) for v in ratios],
                          changes=changes, noise=noise))
    header = dict(format_version=1, warmup=p["warmup"], iterations=p["iters"], runs=p["runs"], unit="s",
                  direction="lower", shape=shape, seed=seed, params={k: v for k, v in p.items()},
                  command=f"python benchmarks/independent_shapes.py {shape} {seed}", versions=nv)
    with gzip.open(out / "samples.csv.gz", "wt", compresslevel=6) as f:
        f.write(buf.getvalue())
    with open(out / "truth.jsonl", "w") as f:
        f.write(json.dumps(header, sort_keys=True) + "\n")
        for ln in lines:
            f.write(json.dumps(ln, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("shape", nargs="?", help="a shape of --list, or all")
    ap.add_argument("seed", nargs="?", type=int)
    ap.add_argument("--out", help="the corpus folder (one shape)")
    ap.add_argument("--root", default=str(Path(tempfile.gettempdir()) / "independent-shapes"),
                    help="where SHAPE-sSEED folders go without --out")
    ap.add_argument("--series", type=int, default=150)
    ap.add_argument("--versions", type=int, default=60)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(SHAPES))
        return
    if a.shape is None or a.seed is None:
        ap.error("give SHAPE and SEED (or --list)")
    shapes = list(SHAPES) if a.shape == "all" else [a.shape]
    for sh in shapes:
        out = a.out or str(Path(a.root) / f"{sh}-s{a.seed}")
        build(sh, a.seed, out, a.series, a.versions)
        print(out)


if __name__ == "__main__":
    main()
