"""Speed of `regbench detect --method auto` against the issue's targets: a full pass, and an
incremental re-check when one new version arrives.

Usage::

    python benchmarks/bench_detect.py            # 1000 series x 500 versions x 10 runs x 10 iterations
    python benchmarks/bench_detect.py --quick    # 50 series x 100 versions, a smoke check

The store is built once (seeded, cached in ``--workdir``; about 2.5 minutes and 780 MB at full
size) with a 5-20% step in one series of ten.  Each command runs as a real ``regbench``
subprocess, as a user would run it; wall time is the median of ``--reps`` repetitions.  The
planted steps are scored too, so that speed is not bought with misses.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _detect_data import build_store, version_names  # noqa: E402

from regbench.model import RunRecord, VersionInfo  # noqa: E402
from regbench.store import Store  # noqa: E402

FULL = dict(n_series=1000, n_versions=500, n_runs=10, n_iterations=10)
QUICK = dict(n_series=50, n_versions=100, n_runs=10, n_iterations=10)
TARGET_FULL = 60.0  # seconds on 2 cores
TARGET_INCREMENTAL = 0.01  # fraction of a full pass


def regbench(store: Path, *args: str) -> tuple[float, list[dict]]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", str(store), "detect", *args,
                          "--format", "json"], capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(out.stdout)


def timed_pass(store: Path, before: str, reps: int) -> list[float]:
    """Seconds of ``detect_changes(store, incremental=True)`` in a fresh process, timed after
    ``before`` ran there (Python code), ``reps`` times."""
    code = ("import sys, time\nfrom regbench.detect.driver import detect_changes\nfrom regbench.store import Store\n"
            + before + "s = Store(sys.argv[1], create=False)\n"
            "t = time.perf_counter(); detect_changes(s, incremental=True); print(time.perf_counter() - t)\n")
    return [float(subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(reps)]


def score(changes: list[dict], truth: dict[str, tuple[int, float]], names: list[str]) -> tuple[int, int, int]:
    """(planted steps found at their version with the right kind, planted steps, false alarms)."""
    found = 0
    false = 0
    for c in changes:
        t = truth.get(c["benchmark"])
        if t is not None and c["version"] == names[t[0]] and (c["kind"] == "regression") == (t[1] > 0):
            found += 1
        else:
            false += 1
    return found, len(truth), false


def add_version(path: Path, name: str, truth: dict[str, tuple[int, float]], *, n_series: int, n_runs: int,
                n_iterations: int, seed: int = 99) -> set[str]:
    """One new version for every series at its current level; one series in ten (other than the
    stepped ones) gets a 10% step.  Returns those."""
    rng = np.random.default_rng(seed)
    stepped = set()
    with Store(path, create=False) as store:
        records = []
        for k in range(n_series):
            bench = f"bench.{k:04d}"
            level = 1.0 + truth[bench][1] if bench in truth else 1.0
            if k % 10 == 5:
                level *= 1.10
                stepped.add(bench)
            for r in range(n_runs):
                samples = level * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.005, n_iterations))
                records.append(RunRecord(benchmark=bench, version=name, run_index=r, samples=samples))
        store.add_runs(records, versions=[VersionInfo(name, timestamp=datetime(2099, 1, 1, tzinfo=UTC))])
    return stepped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/regbench-bench-detect"))
    args = ap.parse_args()
    # An installed regbench has its modules compiled to bytecode (pip compiles them); an editable
    # install where PYTHONDONTWRITEBYTECODE is set would compile them again at every command's
    # start (about 0.25 s here), which is not what a user's command pays.
    package = importlib.util.find_spec("regbench")
    assert package is not None and package.origin is not None
    compileall.compile_dir(Path(package.origin).parent, quiet=1)
    size = QUICK if args.quick else FULL
    args.workdir.mkdir(parents=True, exist_ok=True)
    tag = "x".join(str(v) for v in size.values())
    base = args.workdir / f"detect-{tag}.db"
    truth_file = base.with_suffix(".truth.json")
    if not (base.exists() and truth_file.exists()):
        print(f"building {base} ...", file=sys.stderr)
        truth = build_store(base, **size)
        truth_file.write_text(json.dumps(truth))
    truth = {k: tuple(v) for k, v in json.loads(truth_file.read_text()).items()}
    names = version_names(size["n_versions"])

    print(f"{size['n_series']} series x {size['n_versions']} versions x {size['n_runs']} runs x "
          f"{size['n_iterations']} iterations; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
    rows = []
    full_times = []
    for jobs in ("2", "1"):
        times = []
        for _ in range(args.reps if jobs == "2" else 1):
            t, changes = regbench(base, "--jobs", jobs)
            times.append(t)
        found, planted, false = score(changes, truth, names)
        if jobs == "2":
            full_times = times
        rows.append((f"full pass, --jobs {jobs}", statistics.median(times), f"{found}/{planted} steps found, "
                     f"{false} false alarms"))
        print(rows[-1], times, flush=True)

    # Incremental: a copy of the store whose state a full pass has saved, then one new version.
    inc = args.workdir / f"detect-{tag}-incremental.db"
    shutil.copyfile(base, inc)
    regbench(inc, "--jobs", "2")  # saves each series' state
    stepped = add_version(inc, "vnew", truth, n_series=size["n_series"], n_runs=size["n_runs"],
                          n_iterations=size["n_iterations"])
    times = []
    for _ in range(args.reps):
        t, changes = regbench(inc, "--incremental", "--dry-run")
        times.append(t)
    hits = {c["benchmark"] for c in changes if c["version"] == "vnew" and c["kind"] == "regression"}
    found = f"{len(hits & stepped)}/{len(stepped)} new steps found, {len(changes) - len(hits & stepped)} false alarms"
    rows.append(("incremental, one new version (command)", statistics.median(times), found))
    # The detection work alone, in a fresh process after its imports (what the command adds to a
    # CI job that already runs Python): loading the new version and the states, and the checks.
    # The detector is loaded before the timer: its statistics import scipy.special on first use.
    work = timed_pass(inc, "from regbench.detect import get_detector\nget_detector('auto')\n", args.reps)
    rows.append(("incremental, one new version (in-process)", statistics.median(work), found))
    # The same in a process that has checked before, as `regbench serve` with `[serve] detect = true`
    # checks each submission (regbench.web.after_submit): the second pass over the same new
    # version, nothing saved in between, so its imports and first-use loads are done.
    warm = timed_pass(inc, "detect_changes(Store(sys.argv[1], create=False), incremental=True)\n", args.reps)
    rows.append(("incremental, one new version (a warm server process, [serve] detect)", statistics.median(warm), found))

    full = statistics.median(full_times)
    print("| step | wall time (median) | target | result | found |")
    print("|---|---|---|---|---|")
    for what, t, found in rows:
        if what.startswith("full"):
            target, ok = f"< {TARGET_FULL:.0f} s", t < TARGET_FULL
        else:
            target, ok = f"< {TARGET_INCREMENTAL:.0%} of a full pass", t / full < TARGET_INCREMENTAL
        ratio = "" if what.startswith("full") else f" ({t / full:.2%} of a full pass with --jobs 2)"
        print(f"| {what} | {t:.2f} s{ratio} | {target} | {'pass' if ok else 'MISS'} | {found} |")


if __name__ == "__main__":
    main()
