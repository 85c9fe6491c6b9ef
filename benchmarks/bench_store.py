"""Speed of the store path against the issue's targets: load, import, summary.

Usage::

    python benchmarks/bench_store.py            # 10 million samples (1000 versions x 10 runs x 1000)
    python benchmarks/bench_store.py --quick    # 100x smaller, a smoke check in seconds
    python benchmarks/bench_store.py --profile  # also cProfile every step that misses its target

Each step is timed with ``time.perf_counter`` over a few repetitions (median and min reported)
next to a naive reference implementation of the same job, and a Markdown table is printed.
Generated data is cached in ``--workdir`` (seeded, so the same bytes every time).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import io
import os
import platform
import pstats
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import BENCHMARK, Dataset, make_dataset, write_canonical_csv  # noqa: E402

from regbench.analysis import summarize  # noqa: E402
from regbench.ingest import import_file  # noqa: E402
from regbench.model import RunRecord, VersionInfo  # noqa: E402
from regbench.stats import components  # noqa: E402
from regbench.store import Store  # noqa: E402

FULL = dict(n_versions=1000, n_runs=10, n_samples=1000)
QUICK = dict(n_versions=100, n_runs=10, n_samples=100)
TARGETS = {"load": 1.0, "import": 15.0, "summary": 2.0}  # seconds, for FULL (--quick is a smoke check)


@dataclass
class Timing:
    """Wall-clock seconds per repetition, and CPU seconds (this process's threads + children)."""

    times: list[float]
    cpu: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


def _cpu_seconds() -> float:
    # CPU time is what other load on a shared machine disturbs least; children = subprocesses.
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def timeit(fn: Callable[[int], object], reps: int, *, setup: Callable[[int], object] | None = None) -> Timing:
    """Time ``fn(rep)`` ``reps`` times; ``setup(rep)`` runs before each, untimed."""
    times, cpu = [], []
    for rep in range(reps):
        if setup is not None:
            setup(rep)
        c0 = _cpu_seconds()
        t0 = time.perf_counter()
        fn(rep)
        times.append(time.perf_counter() - t0)
        cpu.append(_cpu_seconds() - c0)
    return Timing(times, cpu)


# --------------------------------------------------------------------------- the naive references
def naive_import(store: Store, path: Path) -> int:
    """``csv.reader`` over every row, then one ``Store.add_run`` (one transaction) per run."""
    runs: dict[tuple, list[float]] = {}
    info: dict[str, VersionInfo] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        col = {name: k for k, name in enumerate(header)}
        b, v, r, it, x, ts = (col[c] for c in ("benchmark", "version", "run", "iteration", "value", "timestamp"))
        for row in reader:
            key = (row[b], row[v], int(row[r]))
            runs.setdefault(key, []).append(float(row[x]))
            if row[v] not in info:
                info[row[v]] = VersionInfo(row[v], timestamp_text=row[ts])
    for (bench, ver, run), values in runs.items():
        store.add_run(RunRecord(benchmark=bench, version=ver, run_index=run, samples=np.array(values)),
                      version_info=info[ver])
    return len(runs)


def naive_blob_fetch(db_path: Path) -> int:
    """The floor of ``load_series``: fetch the sample blobs alone with ``sqlite3``."""
    con = sqlite3.connect(db_path)
    try:
        rows = con.execute("SELECT samples FROM run ORDER BY id").fetchall()
    finally:
        con.close()
    return len(rows)


def naive_summary(store: Store, *, n_resamples: int = 100, fraction: float = 0.75, rng: int = 0) -> int:
    """Load, then a per-run Python loop: mean, variance and the resampling of seed 000 s.4.2, then
    formula (4) per experiment -- what ``summarize`` computes, without its batching."""
    gen = np.random.default_rng(rng)
    n_out = 0
    for s in store.load_series():
        for k in range(len(s)):
            runs = s.runs[k]
            means, variances, r_means, r_vars = [], [], [], []
            for a in runs:
                means.append(a.mean())
                variances.append(a.var(ddof=1))
                n = max(int(round(fraction * a.size)), 2)
                m1 = a[gen.integers(0, a.size, size=(n_resamples, n))].mean(axis=1)
                v2 = a[gen.integers(0, a.size, size=(n_resamples, n))].var(axis=1, ddof=1)
                r_means.append(np.median(m1))
                r_vars.append(np.median(v2))
            sizes = np.array([a.size for a in runs], dtype=float)
            components(np.array(means), np.array(variances), sizes, confidence_level=0.99)
            components(np.array(r_means), np.array(r_vars), sizes, confidence_level=0.99)
            n_out += 1
    return n_out


# --------------------------------------------------------------------------------- the CLI command
def summary_command(store_path: Path) -> tuple[list[str], str]:
    """The argv that runs ``regbench summary``, and a note if the real console script fails."""
    exe = Path(sys.executable).with_name("regbench")
    real = [str(exe), "--store", str(store_path), "summary"]
    probe = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    if probe.returncode == 0:
        return real, ""
    last = (probe.stderr.strip().splitlines() or ["?"])[-1]
    # Register the summary command alone on the real click group: same code path after startup.
    code = ("import sys; from regbench.cli.main import cli; from regbench.cli import cmd_summary; "
            "cli.add_command(cmd_summary.command); "
            "sys.exit(cli.main(args=sys.argv[1:], prog_name='regbench'))")
    return ([sys.executable, "-c", code, "--store", str(store_path), "summary"],
            f"`regbench --help` fails ({last}); timed the real `summary` click command registered alone "
            "on `regbench.cli.main.cli` in a fresh interpreter instead")


def run_cli(argv: list[str]) -> None:
    with open(os.devnull, "w") as devnull:
        proc = subprocess.run(argv, stdout=devnull, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


# ------------------------------------------------------------------------------------------ checks
def check_loaded(series_list, data: Dataset) -> None:
    """The loaded series must be the generated data, bit for bit, in history order."""
    (s,) = series_list
    assert [v.name for v in s.versions] == data.versions, "versions not in timestamp order"
    got = np.stack([np.stack(runs) for runs in s.runs])
    assert got.shape == data.values.shape, (got.shape, data.values.shape)
    assert got.tobytes() == data.values.tobytes(), "samples differ from the generated data"


def profile(fn: Callable[[], object], out: Path, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    prof.dump_stats(out)
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


# -------------------------------------------------------------------------------------------- main
def git_head() -> str:
    """The commit of the regbench source measured, with ``+dirty`` if src/ has changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def import_times(top: int) -> str:
    """``python -X importtime`` of what ``regbench summary`` imports, largest cumulative first."""
    code = "import regbench.cli.main, regbench.cli.cmd_summary, regbench.analysis, regbench.cli._output, rich.table"
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    rows.sort(reverse=True)
    return "\n".join(f"{us / 1e6:7.3f} s  {name}" for us, name in rows[:top])


def profile_cli(db: Path, out: Path, top: int) -> str:
    """cProfile of ``regbench --store DB summary`` run in this process (modules already imported)."""
    import contextlib

    from regbench.cli.main import main as cli_main

    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        cli_main(["--help"])  # registers the commands outside the profile
        text = profile(lambda: cli_main(["--store", str(db), "summary"]), out, top)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100x smaller data (a smoke check)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each timed step [3]")
    ap.add_argument("--ref-reps", type=int, default=None, help="repetitions of the naive references [1; 3 with --quick]")
    ap.add_argument("--steps", default="import,load,summary",
                    help="comma-separated subset of import,load,summary [all]; without import, the store "
                         "of an earlier run in --workdir is used")
    ap.add_argument("--workdir", default=None, help="where data and stores go [$TMPDIR/regbench-bench]")
    ap.add_argument("--profile", action="store_true", help="cProfile each step that misses its target")
    ap.add_argument("--profile-all", action="store_true", help="cProfile every step")
    ap.add_argument("--seed", type=int, default=20240101)
    args = ap.parse_args(argv)
    steps = set(args.steps.split(","))
    if not steps <= {"import", "load", "summary"}:
        ap.error(f"unknown step in --steps: {sorted(steps - {'import', 'load', 'summary'})}")

    size = QUICK if args.quick else FULL
    ref_reps = args.ref_reps or (3 if args.quick else 1)
    work = Path(args.workdir or Path(os.environ.get("TMPDIR", "/tmp")) / "regbench-bench")
    work.mkdir(parents=True, exist_ok=True)
    tag = f"{size['n_versions']}x{size['n_runs']}x{size['n_samples']}-s{args.seed}"
    csv_path = work / f"canonical-{tag}.csv"
    min_path = work / f"canonical-{tag}-minimal.csv"
    db = work / f"store-{tag}" / "results.db"  # the imported store, used by load and summary

    load_before = os.getloadavg()
    t0 = time.perf_counter()
    data = make_dataset(**size, seed=args.seed)
    if not csv_path.exists():
        write_canonical_csv(data, csv_path)
    if not min_path.exists():
        write_canonical_csv(data, min_path, minimal=True)
    print(f"data: {data.n_samples:,} samples, {csv_path} ({csv_path.stat().st_size / 1e6:.0f} MB), "
          f"ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    def fresh(path: Path) -> Path:
        shutil.rmtree(path.parent, ignore_errors=True)
        path.parent.mkdir(parents=True)
        return path

    results: dict[str, dict] = {}
    notes: list[str] = []
    diag: dict[str, Timing] = {}

    # 1. import: `regbench import FILE` = a fresh store + ingest.import_file.
    if "import" in steps:
        t_import = timeit(lambda rep: import_file(Store(db), str(csv_path)), args.reps,
                          setup=lambda rep: fresh(db))
        ref_db = work / "import-naive" / "results.db"
        t_import_ref = timeit(lambda rep: naive_import(Store(ref_db), csv_path), ref_reps,
                              setup=lambda rep: fresh(ref_db))
        shutil.rmtree(ref_db.parent, ignore_errors=True)
        results["import"] = dict(label=f"import {data.n_samples:,}-sample CSV (all 10 columns) into a fresh "
                                       "SQLite store (`Store(path)` + `ingest.import_file`)",
                                 t=t_import, ref=t_import_ref,
                                 ref_label="`csv.reader` loop + one `Store.add_run` per run")
        db_min = work / "import-min" / "results.db"
        t_import_min = timeit(lambda rep: import_file(Store(db_min), str(min_path)), args.reps,
                              setup=lambda rep: fresh(db_min))
        shutil.rmtree(db_min.parent, ignore_errors=True)
        results["import-min"] = dict(label="the same with only the 5 required columns (no timestamps)",
                                     t=t_import_min, ref=t_import_ref, ref_label="same reference (all columns)",
                                     target_key="import")
    elif not db.exists():
        ap.error(f"no store at {db}: run the import step first")

    store = Store(db, create=False)
    check_loaded(store.load_series(BENCHMARK), data)

    # 2. load: Store.load_series of the one series, from the store just imported.
    if "load" in steps:
        t_load = timeit(lambda rep: store.load_series(BENCHMARK), args.reps + 2)
        t_load_ref = timeit(lambda rep: naive_blob_fetch(db), args.reps + 2)
        results["load"] = dict(label="`Store.load_series(benchmark)` -> numpy arrays", t=t_load, ref=t_load_ref,
                               ref_label="`sqlite3` fetch of the sample blobs alone")

    # 3. summary: the real CLI end to end, as a subprocess.
    if "summary" in steps:
        argv, note = summary_command(db)
        if note:
            notes.append(note)
        t_cli = timeit(lambda rep: run_cli(argv), args.reps)
        # Where the CLI's time goes: interpreter start + command registration, and without rich.
        if not note:
            diag["`regbench --help` (start-up floor)"] = timeit(lambda rep: run_cli([argv[0], "--help"]), args.reps)
            diag["`regbench --store X summary --format json` (no rich table)"] = timeit(
                lambda rep: run_cli([*argv, "--format", "json"]), args.reps)
            diag["`regbench --store X summary --no-robust`"] = timeit(
                lambda rep: run_cli([*argv, "--no-robust"]), args.reps)
        t_sum = timeit(lambda rep: summarize(store), args.reps)
        t_sum_ref = timeit(lambda rep: naive_summary(store), ref_reps)
        results["summary"] = dict(label="`regbench --store X summary > /dev/null` (subprocess)", t=t_cli,
                                  ref=t_sum_ref, ref_label="load + per-run Python loop of the same statistics")
        results["summarize"] = dict(label="`analysis.summarize(store)` in process (load included)", t=t_sum,
                                    ref=t_sum_ref, ref_label="same reference", target_key="summary")

    # ------------------------------------------------------------------------------ the report
    import pandas
    import sqlalchemy

    la = os.getloadavg()
    print(f"\n## regbench store benchmark ({'--quick, ' if args.quick else ''}{data.n_samples:,} samples: "
          f"{size['n_versions']} versions x {size['n_runs']} runs x {size['n_samples']} iterations)\n")
    print(f"regbench {git_head()}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"pandas {pandas.__version__}, SQLAlchemy {sqlalchemy.__version__}, SQLite {sqlite3.sqlite_version}; "
          f"{os.cpu_count()} CPUs, {platform.machine()} {platform.system()} {platform.release()}; load average "
          f"before/at end {load_before[0]:.2f}/{la[0]:.2f} (a shared machine: compare CPU s when they differ). "
          f"Median (min) of {args.reps} reps "
          f"({args.reps + 2} for load), references {ref_reps}.\n")
    print("| step | target | measured median (min) | measured/target | | CPU s | naive reference | median (min) "
          "| measured/reference |")
    print("|---|---|---|---|---|---|---|---|---|")
    missed = []
    for key, r in results.items():
        target = TARGETS[r.get("target_key", key)]
        t, ref = r["t"], r["ref"]
        ok = t.median < target
        if not ok:
            missed.append(key)
        # The targets are for the full size; --quick only checks that every step works.
        verdict = "smoke" if args.quick else ("pass" if ok else "**miss**")
        ratio = "—" if args.quick else f"{t.median / target:.2f}"
        print(f"| {r['label']} | < {target:g} s | {t.median:.3f} s ({t.min:.3f}) | {ratio} "
              f"| {verdict} | {t.cpu_median:.2f} | {r['ref_label']} | {ref.median:.3f} s ({ref.min:.3f}) "
              f"| {t.median / ref.median:.2f} |")
    for n in notes:
        print(f"\nNote: {n}")
    if diag:
        print("\n| diagnostic (where the CLI's time goes) | median (min) | CPU s |\n|---|---|---|")
        for label, t in diag.items():
            print(f"| {label} | {t.median:.3f} s ({t.min:.3f}) | {t.cpu_median:.2f} |")
    csv_mb = csv_path.stat().st_size / 1e6
    db_mb = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6  # with -wal
    print(f"\nCSV {csv_mb:.0f} MB; SQLite store {db_mb:.0f} MB; raw samples {data.values.nbytes / 1e6:.0f} MB.")

    if args.quick:
        print("\n--quick: 100x less data; the targets apply to the full size only.")
    to_profile = list(results) if args.profile_all else (missed if args.profile and not args.quick else [])
    prof_db = work / "import-prof" / "results.db"
    runners = {
        "import": lambda: import_file(Store(fresh(prof_db)), str(csv_path)),
        "import-min": lambda: import_file(Store(fresh(prof_db)), str(min_path)),
        "load": lambda: store.load_series(BENCHMARK),
        "summarize": lambda: summarize(store),
    }
    for key in to_profile:
        out = work / f"profile-{key}.pstats"
        if key == "summary":
            print(f"\n### cProfile: `regbench summary` run in process (imports excluded; {out})\n\n```")
            print(profile_cli(db, out, 22).strip())
            print("```\n\n### `python -X importtime`: what `regbench summary` imports (cumulative)\n\n```")
            print(import_times(12))
        else:
            print(f"\n### cProfile: {key} (in process; full stats in {out})\n\n```")
            print(profile(runners[key], out, 18).strip())
        print("```")
    shutil.rmtree(prof_db.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
