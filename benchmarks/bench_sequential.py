"""Benchmark time to a correct decision: regbench's sequential comparison against fixed plans.

Usage::

    python benchmarks/bench_sequential.py               # 200 runs per version, 1000 replays per cell
    python benchmarks/bench_sequential.py --quick       # 40 runs, 200 replays: a smoke check

Real benchmarks of this machine, run by regbench's own runner (fresh processes):

* ``py-sort``: CPython sorting a fresh list of random floats (5 measured values per process,
  1 warm-up);
* ``c-hash``: a C loop (gcc -O2) hashing integers, timed with ``clock_gettime``.

Each has four versions: the base, and the work made 1%, 3% and 10% larger.  Runs of all versions are collected interleaved in random order
(so drift hits all alike), then each decision procedure is *replayed* many times on runs drawn
at random from those real runs, the time of a replay being the wall-clock time of the runs it
used (a run with fewer values is charged its start-up plus the values it keeps).  The
procedures:

``regbench``  pairs of runs until the always-valid confidence sequence settles
              (:mod:`regbench.stats.sequential`, alpha = 0.05, threshold = the effect asked
              about): "changed" or "no change of that size".  At most 1000 pairs; unsettled
              counts as wrong.  Run at alpha = 0.01 ... 0.5.
``pyperf``    pyperf's default plan, 20 processes x 3 values (+1 warm-up) per version, decided
              by pyperf's own ``is_significant`` (Student's t on all 60 values, 95%).
``asv``       asv's defaults, 2 processes x up to 5 values per version, decided by asv's own
              rule: ``_stats.is_different`` (Mann-Whitney, p < 0.002) and a ratio beyond the
              default factor 1.1.
``fixed-t``   runs as replicates (seed 000): Welch's t-test on run means, at alpha = regbench's
              measured false-alarm rate, with the fewest runs per version that miss the change
              no more often than regbench: the best fixed plan at the same accuracy, sized with
              hindsight for this one effect.

regbench and fixed-t use runs of pyperf's shape (1 warm-up + 3 values); asv its own (5 values).
A decision is correct when it says "changed" (in the right direction) for a real change, and
"no change" when the base is compared with itself (both sides drawn independently from the base's
runs: the truth is then exactly no change).  Printed: mean benchmark seconds per decision, the rate of
wrong decisions, and, for the largest alpha at which regbench is wrong no more often than pyperf
(both when the change is real and when there is none), how much less time regbench needs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from regbench.config import BenchmarkSpec
from regbench.run.execute import execute_run

EFFECTS = (0.01, 0.03, 0.10)
FACTORS = {"base": 1.0, "+1%": 1.01, "+3%": 1.03, "+10%": 1.10}
ALPHA = 0.05
ALPHAS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
MAX_PAIRS = 1000
CENTER = "both"  # what the confidence sequence bounds (--center)
RUN_VALUES = 3  # values of a run regbench and the fixed t plan use (pyperf's shape)
WARMUP, VALUES = 1, 5

PY_SORT = ("import random, sys, time\n"
           "n = int(20000 * float(sys.argv[1]))\n"
           "for _ in range(int(sys.argv[2])):\n"
           "    x = [random.random() for _ in range(n)]\n"
           "    t = time.perf_counter(); x.sort(); print(time.perf_counter() - t)\n")
C_HASH = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = (long)(3000000 * atof(argv[1]));
    int reps = atoi(argv[2]);
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        uint64_t h = 1469598103934665603ULL;
        for (long i = 0; i < n; i++) { h ^= (uint64_t)i; h *= 1099511628211ULL; }
        sink += h;
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
    }
    return sink == 42;
}
"""


# The C loop made bimodal on purpose: each run, at its start, does 25% more work with chance 1/2
# (as a hash seed or a memory layout drawn per process would make it): two levels 25% apart.
C_BIMODAL = C_HASH.replace("int reps = atoi(argv[2]);",
                           "int reps = atoi(argv[2]);\n"
                           "    struct timespec s; clock_gettime(CLOCK_MONOTONIC, &s);\n"
                           "    srand((unsigned)(s.tv_nsec ^ getpid()));\n"
                           "    if (rand() & 1) n += n / 4;").replace("#include <time.h>",
                                                                  "#include <time.h>\n#include <unistd.h>")


def workloads(workdir: Path) -> dict[str, list[str]]:
    (workdir / "sort.py").write_text(PY_SORT)
    out = {"py-sort": [sys.executable, str(workdir / "sort.py")]}
    if shutil.which("gcc"):
        for name, code in (("c-hash", C_HASH), ("c-bimodal", C_BIMODAL)):
            (workdir / f"{name}.c").write_text(code)
            subprocess.run(["gcc", "-O2", "-o", str(workdir / name), str(workdir / f"{name}.c")], check=True)
            out[name] = [str(workdir / name)]
    return out


def collect(argv: list[str], runs: int, rng: np.random.Generator, tree: Path) -> dict[str, list[dict]]:
    """``runs`` runs of every version, in randomized rounds; each: samples and duration."""
    pool: dict[str, list[dict]] = {v: [] for v in FACTORS}
    for r in range(runs):
        for v in rng.permutation(list(FACTORS)):
            spec = BenchmarkSpec(name="b", kind="command", command=(*argv, repr(FACTORS[v]), str(WARMUP + VALUES)),
                                 iterations=VALUES, warmup=WARMUP, timeout=60)
            out = execute_run(spec, tree=tree, python=sys.executable, run_index=r, version=v)
            if out.status == "ok" and out.samples.size == WARMUP + VALUES:
                pool[v].append({"samples": out.samples.tolist(), "duration": out.duration})
        print(f"\r  collected round {r + 1}/{runs}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return pool


class Pool:
    """Real runs of one version, as arrays for fast replay."""

    def __init__(self, runs: list[dict]):
        s = np.array([r["samples"] for r in runs])
        self.warm = s[:, :WARMUP].sum(axis=1)
        self.values = s[:, WARMUP:]
        self.duration = np.array([r["duration"] for r in runs])
        self.startup = np.maximum(self.duration - s.sum(axis=1), 0)
        self.mean = self.values.mean(axis=1)

    def cost(self, idx: np.ndarray, k: int = VALUES) -> np.ndarray:
        """Seconds of runs ``idx`` keeping ``k`` values each."""
        return self.startup[idx] + self.warm[idx] + self.values[idx, :k].sum(axis=-1)


def replay_regbench(a: Pool, b: Pool, *, threshold: float, alpha: float, truth: str, n_rep: int,
                    max_pairs: int, rng: np.random.Generator, by_mode: bool = False,
                    location: str = "mean", center: str | None = None) -> tuple[float, float]:
    """Mean seconds to a decision and the rate of wrong (or unsettled) decisions; ``by_mode``:
    ``compare --run --by-mode`` (mode-matched pairs, regbench.stats.modepairs)."""
    from regbench.stats.modepairs import match_modes
    from regbench.stats.sequential import centered_path

    band = math.log1p(threshold)
    times, wrong = [], 0
    for _ in range(n_rep):
        ia = rng.integers(len(a.mean), size=max_pairs)
        ib = rng.integers(len(b.mean), size=max_pairs)
        # The same run shape as pyperf's plan (1 warm-up + 3 values), so that only the number
        # of runs differs.
        if location == "low":  # compare --run --location low: each run's 10% quantile
            from regbench.stats.runs import LOW_QUANTILE

            ma = np.quantile(a.values[ia, :RUN_VALUES], LOW_QUANTILE, axis=1)
            mb = np.quantile(b.values[ib, :RUN_VALUES], LOW_QUANTILE, axis=1)
        else:
            ma, mb = a.values[ia, :RUN_VALUES].mean(axis=1), b.values[ib, :RUN_VALUES].mean(axis=1)
        if by_mode:
            m = match_modes(ma, mb)
            x, made = m.log_ratios, m.made_at
        else:
            x, made = np.log(mb / ma), np.arange(max_pairs)
        if x.size < 2:
            x, made = np.zeros(2), np.full(2, max_pairs - 1)
        low, high = centered_path(x, alpha=alpha, center=center or CENTER)
        n = np.arange(1, x.size + 1)
        changed = ((low > 0) | (high < 0)) & (n >= 3)
        no_change = (low > -band) & (high < band) & (n >= 3)
        settled = changed | no_change
        k = int(np.argmax(settled)) if settled.any() else x.size - 1
        stop = int(made[k]) if settled.any() else max_pairs - 1
        times.append(float(a.cost(ia[:stop + 1], RUN_VALUES).sum() + b.cost(ib[:stop + 1], RUN_VALUES).sum()))
        if not settled.any():
            wrong += 1
        elif changed[k]:
            wrong += truth != ("up" if low[k] > 0 else "down")
        else:
            wrong += truth != "same"
    return float(np.mean(times)), wrong / n_rep


def replay_pyperf(a: Pool, b: Pool, *, truth: str, n_rep: int, rng: np.random.Generator) -> tuple[float, float]:
    from pyperf._utils import is_significant

    times, wrong = [], 0
    for _ in range(n_rep):
        ia, ib = rng.integers(len(a.mean), size=20), rng.integers(len(b.mean), size=20)
        va, vb = a.values[ia, :3].ravel(), b.values[ib, :3].ravel()
        sig, _ = is_significant(va, vb)
        said = ("up" if vb.mean() > va.mean() else "down") if sig else "same"
        wrong += said != truth
        times.append(float(a.cost(ia, 3).sum() + b.cost(ib, 3).sum()))
    return float(np.mean(times)), wrong / n_rep


def replay_asv(a: Pool, b: Pool, *, truth: str, n_rep: int, rng: np.random.Generator) -> tuple[float, float]:
    from asv import _stats
    from asv_runner.statistics import compute_stats

    times, wrong = [], 0
    for _ in range(n_rep):
        ia, ib = rng.integers(len(a.mean), size=2), rng.integers(len(b.mean), size=2)
        va, vb = a.values[ia].ravel(), b.values[ib].ravel()
        ma, mb = float(np.median(va)), float(np.median(vb))
        sa, sb = compute_stats(va.tolist(), 1)[1], compute_stats(vb.tolist(), 1)[1]
        different = _stats.is_different(va.tolist(), vb.tolist(), sa, sb)
        if different and mb > ma * 1.1:
            said = "up"
        elif different and mb < ma / 1.1:
            said = "down"
        else:
            said = "same"
        wrong += said != truth
        times.append(float(a.cost(ia).sum() + b.cost(ib).sum()))
    return float(np.mean(times)), wrong / n_rep


def fixed_t(a: Pool, b: Pool, k: int, *, alpha: float, truth: str, n_rep: int, rng) -> tuple[float, float]:
    """Welch's t-test on run means (runs as replicates, seed 000) with k runs per version."""
    from scipy import stats

    ia, ib = rng.integers(len(a.mean), size=(n_rep, k)), rng.integers(len(b.mean), size=(n_rep, k))
    ma, mb = a.values[ia, :RUN_VALUES].mean(axis=-1), b.values[ib, :RUN_VALUES].mean(axis=-1)
    p = stats.ttest_ind(mb, ma, axis=1, equal_var=False).pvalue
    said = np.where(p < alpha, np.where(mb.mean(axis=1) > ma.mean(axis=1), "up", "down"), "same")
    cost = a.cost(ia, RUN_VALUES).sum(axis=1) + b.cost(ib, RUN_VALUES).sum(axis=1)
    return float(cost.mean()), float(np.mean(said != truth))


def fixed_t_matching(base: Pool, changed: Pool, *, wrong_change: float, wrong_null: float, n_rep: int,
                     rng) -> tuple[int, float, float]:
    """The fewest runs per version for which Welch's t-test, at alpha = regbench's measured rate of
    false alarms, misses the change no more often than regbench: the best fixed plan at the same
    accuracy.  Returns (runs per version, seconds per decision, its miss rate); 0 runs if no plan
    up to 1000 runs per version matches."""
    alpha = max(wrong_null, 0.005)
    ks = [*range(2, 40), *range(40, 200, 5), *range(200, 1001, 50)]
    for k in ks:
        t, w = fixed_t(base, changed, k, alpha=alpha, truth="up", n_rep=n_rep, rng=rng)
        if w <= wrong_change + 0.01:
            return k, t, w
    return 0, math.nan, math.nan


HOG = r"""
import random, sys, time
# A bounded background load: bursts of CPU work over a 192 MB buffer (memory traffic), with
# pauses, for at most sys.argv[1] seconds.  Its bursts come and go within a run or two.
# With sys.argv[2] = N > 1 it is N processes (192/N MB each) that keep one schedule of bursts,
# drawn from one seed and counted from one start (sys.argv[3]), so their bursts take every CPU
# at once: a parallel job of a neighbour (a build with -jN), or a tenant taking the host's
# memory bandwidth, rather than one busy process.
import os
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
start = float(sys.argv[3]) if len(sys.argv) > 3 else time.time()
for _ in range(n - 1):
    if os.fork() == 0:
        break
end = start + float(sys.argv[1])
buf = bytearray(192 * 2**20 // n)
r = random.Random(7)
t = start
while t < end:
    burst, pause = r.uniform(0.02, 0.3), r.uniform(0.02, 0.3)
    k = 0
    while time.time() < t + burst:
        buf[k % 4096::4096] = bytes(len(buf[k % 4096::4096]))
        k += 97
    t += burst + pause
    time.sleep(max(0.0, t - time.time()))
"""


def collect_duet(argv: list[str], pairs: int, rng: np.random.Generator, tree: Path, cores) -> dict[str, list]:
    """Under the background load: ``pairs`` interleaved pairs and ``pairs`` duet pairs of the base
    against itself ("same") and against +3% ("change"), alternating in random order so that
    each mode sees the same load.  Each pair: log ratio of the run means (RUN_VALUES values, as
    regbench uses), its wall-clock seconds, its CPU-core seconds (both runs' durations)."""
    from regbench.run.core import RunRequest, Trial
    from regbench.run.duet import DuetExecutor

    ex = DuetExecutor(cores)
    out: dict[str, list] = {f"{m}-{t}": [] for m in ("interleaved", "duet") for t in ("same", "change")}

    def spec(v: str) -> BenchmarkSpec:
        return BenchmarkSpec(name="b", kind="command", command=(*argv, repr(FACTORS[v]), str(WARMUP + VALUES)),
                             iterations=VALUES, warmup=WARMUP, timeout=60)

    def mean(o) -> float | None:
        return float(np.mean(o.samples[WARMUP:WARMUP + RUN_VALUES])) if o.status == "ok" else None

    for r in range(pairs):
        for key in rng.permutation(list(out)):
            mode, truth = key.split("-")
            vb = "base" if truth == "same" else "+3%"
            versions = [("base", "a"), (vb, "b")]
            swapped = bool(rng.random() < 0.5)  # B first: on the first duet CPU, or run first
            if swapped:
                versions.reverse()
            reqs = [RunRequest(spec(v), Trial("b", side, r), tree, sys.executable) for v, side in versions]
            t0 = time.perf_counter()
            if mode == "duet":
                got = {req.trial.version: o for req, o in ex.map(reqs)}
            else:
                got = {req.trial.version: req.execute() for req in reqs}
            wall = time.perf_counter() - t0
            ma, mb = mean(got["a"]), mean(got["b"])
            if ma and mb:
                out[key].append((math.log(mb / ma), wall, got["a"].duration + got["b"].duration, float(swapped)))
        print(f"\r  duet section: round {r + 1}/{pairs}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def replay_gate(pairs: list, *, threshold: float, alpha: float, n_rep: int, max_pairs: int,
                rng: np.random.Generator) -> dict:
    """``compare --run`` (settle the size too) replayed on pairs drawn from real ones: the rate at
    which its gate fails (a regression not shown below the threshold), any "changed" decision,
    and the mean wall and CPU-core seconds per decision.  The confidence sequence of every prefix
    at once (``centered_path``, the bounds ``sequential_decision`` gives prefix by prefix), and
    the session's stopping rule on it: "no change", or "changed" with the size settled."""
    from regbench.stats.sequential import centered_path

    arr = np.array(pairs)
    band = math.log1p(threshold)
    gate = changed = 0
    wall, cpu, used = [], [], []
    n = np.arange(1, max_pairs + 1)
    for _ in range(n_rep):
        idx = rng.integers(len(arr), size=max_pairs)
        low, high = centered_path(arr[idx, 0], alpha=alpha, center=CENTER)
        is_changed = ((low > 0) | (high < 0)) & (n >= 3)
        no_change = ~is_changed & (low > -band) & (high < band) & (n >= 3)
        beyond = (low > band) | (high < -band)
        within = (-band < low) & (high < band)
        stop = no_change | (is_changed & (beyond | within))
        k = int(np.argmax(stop)) if stop.any() else max_pairs - 1
        changed += bool(is_changed[k])
        gate += bool(is_changed[k] and low[k] > 0 and not within[k])
        wall.append(arr[idx[:k + 1], 1].sum())
        cpu.append(arr[idx[:k + 1], 2].sum())
        used.append(k + 1)
    return {"gate_fails": gate / n_rep, "changed": changed / n_rep, "wall_s": float(np.mean(wall)),
            "cpu_s": float(np.mean(cpu)), "pairs": float(np.mean(used)), "pair_sd": float(np.std(arr[:, 0], ddof=1)),
            "center": CENTER}


def duet_section(args, rng: np.random.Generator) -> dict:
    """Duet against interleaved pairs under a bounded background load (the hog above)."""
    from regbench.run.duet import duet_cores

    cores = duet_cores()
    if not cores.usable:
        print(f"duet section skipped: {cores.reason}", flush=True)
        return {"skipped": cores.reason}
    pairs = args.duet_pairs or (40 if args.quick else 200)
    with tempfile.TemporaryDirectory() as tmp:
        argv = workloads(Path(tmp)).get("c-hash")
        if argv is None:
            return {"skipped": "no gcc"}
        if args.duet_pool and args.duet_pool.exists():
            saved = json.loads(args.duet_pool.read_text())
            return replay_duet(args, rng, {k: [tuple(p) for p in v] for k, v in saved["pools"].items()},
                               saved["cores"], pairs, saved.get("hog", args.hog))
        hog_script = Path(tmp) / "hog.py"
        hog_script.write_text(HOG)
        workers = len(cores.cores) if args.hog == "all" else 1
        hog = subprocess.Popen([sys.executable, str(hog_script), "3600", str(workers), repr(time.time())],
                               start_new_session=True)
        try:
            t0 = time.perf_counter()
            pools = collect_duet(argv, pairs, rng, Path(tmp), cores.cores)
            print(f"  duet section: {time.perf_counter() - t0:.0f} s collecting under load", file=sys.stderr)
        finally:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()
    if args.duet_pool:
        args.duet_pool.write_text(json.dumps({"cores": list(cores.cores), "hog": args.hog, "pools": pools}))
    return replay_duet(args, rng, pools, list(cores.cores), pairs, args.hog)


def replay_duet(args, rng: np.random.Generator, pools: dict, cores: list, pairs: int, hog: str) -> dict:
    """The duet section's replays of ``compare --run`` (2% gate) on the collected pairs."""
    out: dict = {"cores": cores, "pairs": pairs, "hog": hog}
    for key, pool in pools.items():
        arr = np.array(pool)
        if arr.shape[1] > 3:  # the pairs' mean log ratio by which version ran first (or on the first CPU)
            out[key + "-by-order"] = {"a-first": float(arr[arr[:, 3] == 0, 0].mean()),
                                      "b-first": float(arr[arr[:, 3] == 1, 0].mean()),
                                      "all": float(arr[:, 0].mean())}
    for key in [k for k in pools if k.startswith("duet-")]:
        # Counterbalanced duets: an observation is one duet of each assignment of the versions to
        # the two CPUs (every combination of one of each), their log ratios averaged, so that a
        # difference between the CPUs cancels instead of adding to the spread.  Charged both duets.
        arr = np.array(pools[key])
        if arr.shape[1] > 3:
            first, second = arr[arr[:, 3] == 0], arr[arr[:, 3] == 1]
            i, j = np.meshgrid(np.arange(len(first)), np.arange(len(second)), indexing="ij")
            i, j = i.ravel(), j.ravel()
            pools = {**pools, key.replace("duet", "crossover"): np.column_stack(
                [(first[i, 0] + second[j, 0]) / 2, first[i, 1] + second[j, 1], first[i, 2] + second[j, 2]]).tolist()}
    for key in [k for k in pools if k.endswith("-same")]:
        # A against itself: with the versions' order (or CPUs) drawn at random, a pair and its
        # mirror image (log ratio negated, order swapped) are equally likely, so the replay draws
        # from both.  Drawn from the pairs alone, the replay's truth is the pool's own mean, which
        # an unequal count of the two orders moves by that share times any difference between
        # them (a CPU or a place in the pair that is slower): an artefact of replaying 200 pairs,
        # not of a live session, whose every pair draws its order afresh.
        arr = np.array(pools[key])
        if arr.shape[1] > 3:
            mirror = arr.copy()
            mirror[:, 0], mirror[:, 3] = -arr[:, 0], 1 - arr[:, 3]
            pools = {**pools, key + "-mirrored": np.vstack([arr, mirror]).tolist()}
    for key, pool in pools.items():
        out[key] = replay_gate(pool, threshold=0.02, alpha=ALPHA, n_rep=args.duet_replays or (200 if args.quick else 1000),
                               max_pairs=MAX_PAIRS // 5, rng=rng)
    i, d = out["interleaved-same"], out["duet-same"]
    print(f"c-hash under a background load, 2% gate, alpha 5%, A against A: interleaved gate fails "
          f"{i['gate_fails']:.3f} (any 'changed' {i['changed']:.3f}), {i['wall_s']:.2f} s wall, {i['cpu_s']:.2f} "
          f"CPU-core s, pair sd {i['pair_sd']:.2%}; duet gate fails {d['gate_fails']:.3f} (changed {d['changed']:.3f}), "
          f"{d['wall_s']:.2f} s wall, {d['cpu_s']:.2f} CPU-core s, pair sd {d['pair_sd']:.2%}", flush=True)
    i, d = out["interleaved-change"], out["duet-change"]
    print(f"  +3% change: interleaved {i['pairs']:.1f} pairs, {i['wall_s']:.2f} s wall, gate fails "
          f"{i['gate_fails']:.3f}; duet {d['pairs']:.1f} pairs, {d['wall_s']:.2f} s wall, gate fails "
          f"{d['gate_fails']:.3f}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None, help="runs per version to collect")
    ap.add_argument("--replays", type=int, default=None)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--pool", type=Path, default=None, help="reuse (or save) collected runs here (JSON)")
    ap.add_argument("--duet-only", action="store_true", help="only the duet section (under a background load)")
    ap.add_argument("--no-duet", action="store_true", help="leave the duet section out")
    ap.add_argument("--duet-pairs", type=int, default=None, help="pairs per mode in the duet section")
    ap.add_argument("--duet-replays", type=int, default=None)
    ap.add_argument("--duet-pool", type=Path, default=None,
                    help="save the duet section's pairs here, or replay them from here if the file exists")
    ap.add_argument("--hog", choices=("one", "all"), default="one",
                    help="the duet section's background load: one bursty process (default), or one per "
                         "duet CPU on a common schedule of bursts (a neighbour's parallel job)")
    ap.add_argument("--center", choices=("both", "mean", "median"), default="both",
                    help="what regbench's confidence sequence bounds: the pairs' mean and median (the "
                         "default of compare --run), the mean alone (regbench before 2026-11-30), the median")
    args = ap.parse_args()
    global CENTER
    CENTER = args.center
    print(f"regbench's confidence sequence: center={CENTER}", file=sys.stderr)
    if args.duet_only:
        print(json.dumps(duet_section(args, np.random.default_rng(args.seed)), indent=1))
        return
    runs = args.runs or (40 if args.quick else 200)
    n_rep = args.replays or (200 if args.quick else 1000)
    rng = np.random.default_rng(args.seed)
    pools: dict[str, dict[str, list[dict]]]
    if args.pool and args.pool.exists():
        pools = json.loads(args.pool.read_text())
    else:
        pools = {}
        with tempfile.TemporaryDirectory() as tmp:
            for name, argv in workloads(Path(tmp)).items():
                print(f"{name}: collecting {runs} runs x {len(FACTORS)} versions", file=sys.stderr)
                t0 = time.perf_counter()
                pools[name] = collect(argv, runs, rng, Path(tmp))
                print(f"  {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if args.pool:
            args.pool.write_text(json.dumps(pools))
    rows = []
    for name, pool in pools.items():
        p = {v: Pool(r) for v, r in pool.items()}
        base = p["base"]
        spread = float(np.std(np.log(base.mean), ddof=1))
        print(f"{name}: {len(base.mean)} runs per version, run-to-run CV {spread:.2%}, "
              f"mean run {base.duration.mean() * 1000:.0f} ms", flush=True)
        for effect in EFFECTS:
            label = f"+{effect:.0%}"
            changed = p[label]
            real = float(np.mean(changed.mean) / np.mean(base.mean) - 1)
            row = dict(workload=name, effect=label, measured_change=real, run_cv=spread)
            # The fixed plans, each with its own rule, on the change and on no change at all (base
            # against itself: runs drawn independently from the same real runs).
            for plan, replay in (("pyperf", replay_pyperf), ("asv", replay_asv)):
                t, w = replay(base, changed, truth="up", n_rep=n_rep, rng=rng)
                _, w0 = replay(base, base, truth="same", n_rep=n_rep, rng=rng)
                row |= {f"{plan}_s": t, f"{plan}_wrong_change": w, f"{plan}_wrong_null": w0}
            # regbench at several error rates: the nominal 5%, and the largest alpha whose wrong
            # decisions are no more frequent than pyperf's (the same accuracy, measured).
            for alpha in ALPHAS:
                t, w = replay_regbench(base, changed, threshold=effect, alpha=alpha, truth="up", n_rep=n_rep,
                                       max_pairs=MAX_PAIRS, rng=rng)
                t0, w0 = replay_regbench(base, base, threshold=effect, alpha=alpha, truth="same", n_rep=n_rep,
                                         max_pairs=MAX_PAIRS, rng=rng)
                row[f"regbench_{alpha}"] = dict(s_change=t, wrong_change=w, s_null=t0, wrong_null=w0)
            nominal = row[f"regbench_{ALPHA}"]
            same = [a for a in ALPHAS if row[f"regbench_{a}"]["wrong_change"] <= row["pyperf_wrong_change"]
                    and row[f"regbench_{a}"]["wrong_null"] <= row["pyperf_wrong_null"]]
            matched = max(same) if same else None
            row["alpha_matching_pyperf"] = matched
            k, ft, fw = (fixed_t_matching(base, changed, wrong_change=nominal["wrong_change"],
                                          wrong_null=nominal["wrong_null"], n_rep=n_rep, rng=rng)
                         if nominal["wrong_change"] < 0.5 else (0, math.nan, math.nan))  # nothing to match
            row |= {"fixed_t_runs": k, "fixed_t_s": ft, "fixed_t_wrong_change": fw}
            # compare --run --by-mode (mode-matched pairs) at alpha 5%, and the best fixed plan at
            # its error rates: the ratio of the target (3x less time than the best fixed plan).
            t, w = replay_regbench(base, changed, threshold=effect, alpha=ALPHA, truth="up", n_rep=n_rep,
                                   max_pairs=MAX_PAIRS, rng=rng, by_mode=True)
            t0, w0 = replay_regbench(base, base, threshold=effect, alpha=ALPHA, truth="same", n_rep=n_rep,
                                     max_pairs=MAX_PAIRS, rng=rng, by_mode=True)
            row["by_mode"] = dict(s_change=t, wrong_change=w, s_null=t0, wrong_null=w0)
            bk, bft, bfw = (fixed_t_matching(base, changed, wrong_change=w, wrong_null=w0, n_rep=n_rep, rng=rng)
                            if w < 0.5 else (0, math.nan, math.nan))
            row |= {"by_mode_fixed_t_runs": bk, "by_mode_fixed_t_s": bft}
            t, w = replay_regbench(base, changed, threshold=effect, alpha=ALPHA, truth="up", n_rep=n_rep,
                                   max_pairs=MAX_PAIRS, rng=rng, location="low")
            t0, w0 = replay_regbench(base, base, threshold=effect, alpha=ALPHA, truth="same", n_rep=n_rep,
                                     max_pairs=MAX_PAIRS, rng=rng, location="low")
            row["low"] = dict(s_change=t, wrong_change=w, s_null=t0, wrong_null=w0)
            lk, lft, _ = (fixed_t_matching(base, changed, wrong_change=w, wrong_null=w0, n_rep=n_rep, rng=rng)
                          if w < 0.5 else (0, math.nan, math.nan))
            row |= {"low_fixed_t_runs": lk, "low_fixed_t_s": lft}
            print(f"  {label:5s} low quantile: change {t:6.2f} s wrong {w:.3f}, no change {t0:6.2f} s wrong {w0:.3f}"
                  f" | pyperf {row['pyperf_s']:.2f} s wrong {row['pyperf_wrong_change']:.3f}/"
                  f"{row['pyperf_wrong_null']:.3f}"
                  + (f" | best fixed plan (run means) at its error rates: {lk} runs/version, {lft:.2f} s: "
                     f"{lft / t:.1f}x more" if lk else " | no fixed plan to match"), flush=True)
            t, w, t0, w0 = (row["by_mode"][k] for k in ("s_change", "wrong_change", "s_null", "wrong_null"))
            rows.append(row)
            print(f"  {label:5s} by mode: change {t:6.2f} s wrong {w:.3f}, no change {t0:6.2f} s wrong {w0:.3f}"
                  + (f" | best fixed plan at its error rates: {bk} runs/version, {bft:.2f} s: "
                     f"{bft / t:.1f}x more than by mode" if bk else " | no fixed plan to match")
                  + (f"; plain pairs' fixed plan {ft / nominal['s_change']:.1f}x more than plain pairs" if k else ""),
                  flush=True)
            m = row[f"regbench_{matched}"] if matched else None
            print(f"  {label:5s} (measured {real:+.2%}): regbench(a=5%) change {nominal['s_change']:6.2f} s "
                  f"wrong {nominal['wrong_change']:.3f}, no change {nominal['s_null']:6.2f} s wrong "
                  f"{nominal['wrong_null']:.3f} | pyperf {row['pyperf_s']:5.2f} s wrong "
                  f"{row['pyperf_wrong_change']:.3f}/{row['pyperf_wrong_null']:.3f} | asv {row['asv_s']:5.2f} s wrong "
                  f"{row['asv_wrong_change']:.3f}/{row['asv_wrong_null']:.3f}"
                  + (f" | at pyperf's accuracy (a={matched}): change {m['s_change']:.2f} s "
                     f"({row['pyperf_s'] / m['s_change']:.1f}x less), no change {m['s_null']:.2f} s "
                     f"({row['pyperf_s'] / m['s_null']:.1f}x)" if m else " | no alpha matches pyperf's accuracy")
                  + (f" | best fixed plan at regbench's error rates: {k} runs/version, {ft:.2f} s" if k
                     else " | no fixed plan to match"),
                  flush=True)
    duet = {} if args.no_duet else duet_section(args, rng)
    print(json.dumps({"rows": rows, "duet": duet}, indent=1))


if __name__ == "__main__":
    main()
