"""A store like the probe's of 2026-11-30 (docs/optimize.md, "Runs of thousands of iterations"):
a pytest-benchmark suite run with --benchmark-min-rounds alone, so each run stored as many rounds
as fit a second, RUNS runs of 4 tests of ROUNDS to 1.1 x ROUNDS rounds each, at one version.

    python benchmarks/make_long_runs_store.py /tmp/long.db 3 5000
    time regbench --store sqlite:////tmp/long.db optimize --metric cv --threshold 0.1
"""
import sys
from datetime import datetime

import numpy as np

from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

path, runs, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(1)
with Store(f"sqlite:///{path}") as s:
    cid = s.start_campaign(seed=1, machine="m", fingerprint={}, command="x",
                           plan={"benchmarks": {"pyb": {"kind": "command", "runs": runs, "iterations": 6, "warmup": 0}}})
    for k, level in enumerate((2e-6, 5e-6, 1e-5, 4e-5)):
        for r in range(runs):
            n = rounds + int(rng.integers(0, rounds // 10))
            x = level * (1 + 0.01 * rng.standard_normal()) * rng.lognormal(0, 0.05, n)
            s.add_runs([RunRecord(f"pyb/test_x.py::test_{k}", "v1", r, x, machine="m", campaign_id=cid,
                                  duration=1.3)],
                       versions=[VersionInfo("v1", timestamp=datetime(2024, 1, 1))],
                       benchmarks={f"pyb/test_x.py::test_{k}": {"unit": "s", "direction": "lower"}})
    s.finish_campaign(cid, "finished")
