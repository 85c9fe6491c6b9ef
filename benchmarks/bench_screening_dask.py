"""The issue's Dask target: the 64-run screening of the real case (examples/screening-sqlite, a
32-configuration resolution IV design with 2 runs each) on two local Dask workers against one.

Usage::

    python benchmarks/bench_screening_dask.py          # about 3 minutes of wall time, mostly fsync

Each setting runs ``regbench screen --size 32 --runs 2 --executor dask`` on a fresh copy of the
example and a fresh store, against a ``LocalCluster`` of 1 or 2 worker processes, each with the
resource ``benchmark=1`` (one run at a time per worker).  Reported: the wall time, the speed-up,
and the overhead per task: wall time with one worker minus the runs' own durations (as stored),
divided by the runs.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from distributed import LocalCluster

from regbench.cli.main import main
from regbench.store import Store

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "screening-sqlite"


def one(workers: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-screen-dask-") as tmp:
        folder = Path(tmp) / "example"
        shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("results.db", "plots", "screen-files"))
        # Two workers on this one host stand for two machines: their runs may overlap (on real
        # machines they do not share a machine's measuring lock, regbench.run.exclusive).
        config = folder / "regbench.toml"
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("[noise]\n", "[noise]\nexclusive = false\n") if "[noise]\n" in text
                          else text + "\n[noise]\nexclusive = false\n", encoding="utf-8")
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, resources={"benchmark": 1},
                          dashboard_address=None) as cluster:
            start = time.perf_counter()
            rc = main(["--config", str(folder / "regbench.toml"), "--store", str(folder / "results.db"), "screen",
                       "--size", "32", "--runs", "2", "--seed", "2026", "--executor", "dask",
                       "--scheduler", cluster.scheduler_address])
            wall = time.perf_counter() - start
        assert rc == 0
        with Store(folder / "results.db") as store:
            runs = store.runs()
            busy = sum(r.duration or 0.0 for r in runs)
        return wall, busy, len(runs)


def main_() -> None:
    w1, busy1, n1 = one(1)
    w2, busy2, n2 = one(2)
    print("| workers | runs | wall s | sum of run durations s |")
    print("|---|---|---|---|")
    print(f"| 1 | {n1} | {w1:.1f} | {busy1:.1f} |")
    print(f"| 2 | {n2} | {w2:.1f} | {busy2:.1f} |")
    print(f"\nspeed-up {w1 / w2:.2f}x; overhead per task with one worker {(w1 - busy1) / n1 * 1000:.0f} ms "
          "(wall time minus the runs' durations, per run: scheduling, transfer, storing, the analysis at the end)")


if __name__ == "__main__":
    main_()
