"""Make the corpus of real measurements that ``regbench evaluate --corpus real`` scores detectors on.

Six programs with different noise characters (``programs/``), each with a work knob (the
``WORK`` variable multiplies what one iteration does):

=============  ==============================================================================
program        noise character
=============  ==============================================================================
cpu_loop       a dependent chain of integer operations: a floor, and interference above it
random_walk    dependent loads over a 64 MiB table: caches, TLB, page placement per process
alloc          allocation-heavy CPython: the allocator, the garbage collector, start-up
syscalls       pwrite/pread pairs on a file in the page cache: kernel entry costs, locks
threads        two threads started per iteration, meeting on an atomic counter: scheduling
java_gc        a map of short-lived arrays on the JVM: JIT warm-up, garbage collections
=============  ==============================================================================

Every program gets six series of ``--versions`` versions whose true work ratios are known: a
quiet one; three with four lasting steps each, together covering steps of 1, 2, 3, 5, 10 and
20%, up and down; one with two steps each undone 1-3 versions later; and one with a creeping
degradation (eight versions of +0.6% each, about +4.9% in all).  Each version is measured by
``--runs`` fresh processes of ``warmup + iterations`` iterations, all of them, over all programs,
series and versions, in RMIT order (seed 004 s.2: run ``r`` of every experiment in a shuffled
round, rounds one after another), under whatever load the machine has: real timing noise, its
floor and its right-skewed interference, is what the corpus is for.

Runs are made by regbench's own :func:`regbench.run.execute.execute_run` (a fresh process per
run, the environment regbench gives benchmarks).  The result goes to ``--out``:

- ``samples.csv.gz``: canonical CSV (``benchmark,version,run,iteration,value``), every iteration
  of every run, warm-up included, values with 7 significant digits (below the timers' resolution
  at these durations);
- ``truth.jsonl``: a header line (format version, warm-up and iterations, runs, the machine, the
  date, the load average before and after, the seed) and one line per series with its program,
  kind, the true work ratio of every version, and its changes (first and last version index,
  relative size, shape).

    python benchmarks/real_corpus/make_real_corpus.py                # about 40 minutes
    python benchmarks/real_corpus/make_real_corpus.py --quick        # a smoke check, ~1 minute

The default output is the copy shipped in the package (``src/regbench/evaluate/data/real``).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parents[1] / "src" / "regbench" / "evaluate" / "data" / "real"
PROGRAMS = ("cpu_loop", "random_walk", "alloc", "syscalls", "threads", "java_gc")
#: Signed step sizes every program's step series cover between them.
STEP_SIZES = tuple(s * m for m in (0.01, 0.02, 0.03, 0.05, 0.10, 0.20) for s in (1, -1))
CREEP_STEP, CREEP_LENGTH = 0.006, 8


@dataclass(frozen=True)
class Change:
    index: int
    end_index: int
    magnitude: float
    shape: str

    def to_json(self) -> dict:
        return {"index": self.index, "end_index": self.end_index, "magnitude": round(self.magnitude, 10),
                "shape": self.shape}


@dataclass(frozen=True)
class Plan:
    series: str
    program: str
    kind: str
    ratios: tuple[float, ...]
    changes: tuple[Change, ...]


def build(programs_dir: Path, out: Path) -> dict[str, list[str]]:
    """Compile the programs into ``out``; the argv of each."""
    def cc(name: str, *extra: str) -> str:
        exe = out / name
        subprocess.run(["gcc", "-O2", *extra, "-o", str(exe), str(programs_dir / f"{name}.c")], check=True)
        return str(exe)

    subprocess.run(["javac", "-d", str(out), str(programs_dir / "Gc.java")], check=True)
    return {
        "cpu_loop": [cc("cpu_loop")],
        "random_walk": [cc("random_walk")],
        "syscalls": [cc("syscalls")],
        "threads": [cc("threads", "-pthread")],
        "alloc": [sys.executable, str(programs_dir / "alloc.py")],
        "java_gc": [shutil.which("java") or "java", "-Xmx256m", "-cp", str(out), "Gc"],
    }


def _positions(gen: np.random.Generator, n_versions: int, count: int, *, margin: int = 5) -> list[int]:
    """``count`` change positions spread over the series, at least ``margin`` from either end."""
    edges = np.linspace(margin, n_versions - margin, count + 1)
    return [int(gen.integers(int(a) + 1, max(int(a) + 2, int(b) - 1))) for a, b in zip(edges[:-1], edges[1:])]


def plan_program(program: str, n_versions: int, gen: np.random.Generator) -> list[Plan]:
    """The six series of one program (see the module docstring)."""
    plans = [Plan(f"{program}/quiet", program, "quiet", (1.0,) * n_versions, ())]
    sizes = list(gen.permutation(np.array(STEP_SIZES)))
    for k, part in enumerate(("a", "b", "c")):
        level, ratios, changes = 1.0, [], []
        steps = dict(zip(_positions(gen, n_versions, 4), sizes[4 * k:4 * k + 4], strict=True))
        for v in range(n_versions):
            if v in steps:
                level *= 1 + float(steps[v])
                changes.append(Change(v, v, float(steps[v]), "step"))
            ratios.append(level)
        plans.append(Plan(f"{program}/steps-{part}", program, "step", tuple(ratios), tuple(changes)))
    ratios = [1.0] * n_versions
    changes = []
    for at in _positions(gen, n_versions - 4, 2):
        size = float(gen.choice([0.03, 0.05, 0.10, 0.20])) * float(gen.choice([1, -1]))
        length = int(gen.integers(1, 4))
        for v in range(at, at + length):
            ratios[v] = 1 + size
        changes += [Change(at, at, size, "revert"), Change(at + length, at + length, 1 / (1 + size) - 1, "revert")]
    plans.append(Plan(f"{program}/revert", program, "revert", tuple(ratios), tuple(changes)))
    start = int(gen.integers(min(10, n_versions // 4), n_versions - CREEP_LENGTH - min(10, n_versions // 4)))
    ratios = [(1 + CREEP_STEP) ** min(max(v - start + 1, 0), CREEP_LENGTH) for v in range(n_versions)]
    creep = Change(start, start + CREEP_LENGTH - 1, (1 + CREEP_STEP) ** CREEP_LENGTH - 1, "creep")
    plans.append(Plan(f"{program}/creep", program, "creep", tuple(ratios), (creep,)))
    return plans


def measure(plans: list[Plan], argv: dict[str, list[str]], *, runs: int, iterations: int, warmup: int,
            seed: int, tree: Path, progress: bool = True) -> dict[tuple[str, int, int], np.ndarray]:
    """Every run of every (series, version), in RMIT order; samples by (series, version, run)."""
    from regbench.config import BenchmarkSpec
    from regbench.run.execute import execute_run

    gen = np.random.default_rng([seed, 1])
    experiments = [(p, v) for p in plans for v in range(len(p.ratios))]
    out: dict[tuple[str, int, int], np.ndarray] = {}
    total, done, failed = runs * len(experiments), 0, 0
    start = time.monotonic()
    for r in range(runs):
        for k in gen.permutation(len(experiments)):
            plan, v = experiments[k]
            spec = BenchmarkSpec(name=plan.series, kind="command", command=tuple(argv[plan.program]),
                                 env={"WORK": repr(plan.ratios[v])}, iterations=iterations, warmup=warmup,
                                 timeout=120.0)
            outcome = execute_run(spec, tree=tree, python=sys.executable, run_index=r, version=f"v{v:02d}")
            if outcome.status == "ok" and outcome.samples.size == warmup + iterations:
                out[(plan.series, v, r)] = outcome.samples
            else:
                failed += 1
                print(f"run {r} of {plan.series} v{v:02d}: {outcome.status}: {outcome.stderr_tail[-200:]!r}",
                      file=sys.stderr)
            done += 1
            if progress and done % 200 == 0:
                rate = done / (time.monotonic() - start)
                print(f"{done}/{total} runs, {failed} failed, about {(total - done) / rate / 60:.0f} min left",
                      file=sys.stderr, flush=True)
    return out


def write(out_dir: Path, plans: list[Plan], samples: dict[tuple[str, int, int], np.ndarray], header: dict) -> None:
    """``samples.csv.gz`` and ``truth.jsonl`` (see the module docstring), written atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(["benchmark", "version", "run", "iteration", "value"])
    for (series, v, r), values in sorted(samples.items()):
        for i, x in enumerate(values.tolist()):
            w.writerow([series, f"v{v:02d}", r, i, f"{x:.7g}"])
    tmp = out_dir / "samples.csv.gz.tmp"
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text.getvalue())
    os.replace(tmp, out_dir / "samples.csv.gz")
    lines = [json.dumps(header, sort_keys=True)]
    for p in plans:
        lines.append(json.dumps({"series": p.series, "program": p.program, "kind": p.kind,
                                 "ratios": [round(x, 10) for x in p.ratios],
                                 "changes": [c.to_json() for c in p.changes]}, sort_keys=True))
    (out_dir / "truth.jsonl.tmp").write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(out_dir / "truth.jsonl.tmp", out_dir / "truth.jsonl")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--versions", type=int, default=45)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--quick", action="store_true", help="2 runs of 24 versions of each program, to /tmp")
    args = ap.parse_args(argv)
    if args.quick:
        args.versions, args.runs = 24, 2
        if args.out == DEFAULT_OUT:
            args.out = Path(tempfile.gettempdir()) / "regbench-real-corpus-quick"
    programs = [p.strip() for p in args.programs.split(",") if p.strip()]
    gen = np.random.default_rng(args.seed)
    plans = [plan for program in PROGRAMS for plan in plan_program(program, args.versions, gen) if program in programs]
    with tempfile.TemporaryDirectory(prefix="regbench-real-corpus-") as tmp:
        argv_of = build(HERE / "programs", Path(tmp))
        load_before = os.getloadavg()
        started = datetime.now(UTC).replace(microsecond=0)
        samples = measure(plans, argv_of, runs=args.runs, iterations=args.iterations, warmup=args.warmup,
                          seed=args.seed, tree=Path(tmp))
        load_after = os.getloadavg()
    from regbench.run.fingerprint import machine_fingerprint

    header = {"format_version": 1, "warmup": args.warmup, "iterations": args.iterations, "runs": args.runs,
              "versions": args.versions, "seed": args.seed, "started": started.isoformat(),
              "finished": datetime.now(UTC).replace(microsecond=0).isoformat(),
              "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after],
              "machine": machine_fingerprint(), "python": platform.python_version(), "unit": "s",
              "direction": "lower", "command": "python benchmarks/real_corpus/make_real_corpus.py "
              + " ".join(argv if argv is not None else sys.argv[1:])}
    write(args.out, plans, samples, header)
    size = (args.out / "samples.csv.gz").stat().st_size
    print(f"{len(samples)} runs of {len(plans)} series written to {args.out} ({size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
