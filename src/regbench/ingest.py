"""Importing files into the store: parse (pure adapter), check against the store, write once."""

from __future__ import annotations

from dataclasses import dataclass

from .adapters import parse_file
from .errors import InputError
from .store import Store


@dataclass(frozen=True)
class ImportReport:
    samples: int
    runs: int
    benchmarks: int
    versions: int


def import_file(store: Store, path: str, *, fmt: str = "auto") -> ImportReport:
    """Import a canonical CSV / JSON-lines file in one transaction (all or nothing).

    A run already in the store is an error (``FILE:LINE``) rather than a silent duplicate.
    """
    batch = parse_file(path, fmt=fmt)
    stored = {b["name"]: b for b in store.benchmarks()}
    for name, info in batch.benchmarks.items():
        for key, value in info.items():
            if name in stored and stored[name][key] != value:
                raise InputError(f"benchmark {name!r} is stored with {key} {stored[name][key]!r}, the file says "
                                 f"{value!r}", path=str(path), line=batch.benchmark_line.get(name))
    existing: dict[tuple[str, str], set] = {}
    for rec in batch.records:
        key = (rec.config, rec.machine)
        if key not in existing:
            existing[key] = store.existing_run_keys(config=rec.config, machine=rec.machine)
        if (rec.benchmark, rec.version, rec.run_index) in existing[key]:
            line = batch.first_line[(rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index)]
            raise InputError(f"run {rec.run_index} of {rec.benchmark!r} at version {rec.version!r} is "
                             "already in the store", path=str(path), line=line)
    n = store.add_runs(batch.records, versions=batch.versions, benchmarks=batch.benchmarks)
    return ImportReport(batch.n_samples, n, len(batch.benchmarks), len(batch.versions))
