"""A large store for the detection speed benchmark (seeded, with known steps).

``n_series`` benchmarks x ``n_versions`` versions x ``n_runs`` runs x ``n_iterations`` samples.
Run means carry a random run effect (seed 000 s.2); one series in ten has one step of 5-20% at a
random version, so detection has real work to do and something to find.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from regbench.model import RunRecord, VersionInfo
from regbench.store import Store


def version_names(n_versions: int) -> list[str]:
    return [f"v{k:04d}" for k in range(n_versions)]


def build_store(path: Path, *, n_series: int, n_versions: int, n_runs: int, n_iterations: int,
                seed: int = 7, progress=None) -> dict[str, tuple[int, float]]:
    """Write the store at ``path`` (replacing it) and return the true step of each stepped series."""
    if path.exists():
        path.unlink()
    rng = np.random.default_rng(seed)
    names = version_names(n_versions)
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    versions = [VersionInfo(v, timestamp=t0 + timedelta(hours=k)) for k, v in enumerate(names)]
    truth: dict[str, tuple[int, float]] = {}
    with Store(path) as store:
        store.add_runs([], versions=versions)
        for s in range(n_series):
            bench = f"bench.{s:04d}"
            level = np.ones(n_versions)
            if s % 10 == 0:
                at = int(rng.integers(20, n_versions - 20))
                size = float(rng.uniform(0.05, 0.20) * rng.choice([-1, 1]))
                level[at:] *= 1 + size
                truth[bench] = (at, size)
            run_means = level[:, None] * (1 + rng.normal(0, 0.01, size=(n_versions, n_runs)))
            samples = run_means[:, :, None] * (1 + rng.normal(0, 0.005, size=(n_versions, n_runs, n_iterations)))
            records = (RunRecord(benchmark=bench, version=names[k], run_index=r, samples=samples[k, r])
                       for k in range(n_versions) for r in range(n_runs))
            store.add_runs(records, benchmarks={bench: {"unit": "s", "direction": "lower"}})
            if progress:
                progress(s + 1)
    return truth
