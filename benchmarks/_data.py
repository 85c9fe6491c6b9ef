"""Synthetic data for the store benchmarks (seeded, with known truth).

One benchmark, ``n_versions`` versions (commit-like hex names, ordered by ISO timestamps, so the
importer must sort them by time rather than by name), ``n_runs`` runs per version and
``n_samples`` iterations per run.  Runs differ by a random run effect (seed 000 s.2): run means
are ``N(1, 0.02)`` and samples ``run_mean * (1 + N(0, 0.01))``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

BENCHMARK = "bench_store.synthetic"
COLUMNS = "benchmark,version,run,iteration,value,timestamp,config,machine,unit,direction"


@dataclass(frozen=True)
class Dataset:
    """Samples ``values[version, run, iteration]`` with version names and timestamps."""

    versions: list[str]
    timestamps: list[str]
    values: np.ndarray  # shape (n_versions, n_runs, n_samples), float64

    @property
    def n_samples(self) -> int:
        return int(self.values.size)


def make_dataset(n_versions: int, n_runs: int, n_samples: int, *, seed: int = 20240101) -> Dataset:
    rng = np.random.default_rng(seed)
    run_means = rng.normal(1.0, 0.02, size=(n_versions, n_runs, 1))
    values = run_means * (1.0 + rng.normal(0.0, 0.01, size=(n_versions, n_runs, n_samples)))
    # Commit-like names: their alphabetical order is not their history order.
    names = [f"{int(x):012x}" for x in rng.integers(0, 2**48, size=n_versions)]
    if len(set(names)) != n_versions:  # pragma: no cover - 1000 draws from 2**48
        raise RuntimeError("version name collision; change the seed")
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    stamps = [(t0 + timedelta(hours=k)).isoformat().replace("+00:00", "Z") for k in range(n_versions)]
    return Dataset(names, stamps, values)


MINIMAL_COLUMNS = "benchmark,version,run,iteration,value"


def write_canonical_csv(data: Dataset, path: Path, *, minimal: bool = False) -> int:
    """Write the data as canonical CSV with every column (as ``regbench export`` does).

    With ``minimal``, only the five required columns (no timestamps: versions are then ordered
    by first appearance, which is history order here).  Rows come in history order, version by
    version and run by run, as a campaign log would.  Floats are written with ``repr`` (exact).
    Returns the file size in bytes.
    """
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write((MINIMAL_COLUMNS if minimal else COLUMNS) + "\n")
        n_versions, n_runs, _ = data.values.shape
        for v in range(n_versions):
            tail = "\n" if minimal else f",{data.timestamps[v]},default,local,s,lower\n"
            for r in range(n_runs):
                head = f"{BENCHMARK},{data.versions[v]},{r},"
                fh.write("".join([f"{head}{i},{x!r}{tail}" for i, x in enumerate(data.values[v, r].tolist())]))
    tmp.replace(path)
    return path.stat().st_size
