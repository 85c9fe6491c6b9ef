"""Importing files into the store: parse (pure adapter), check against the store, write once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from .adapters import parse_file
from .errors import InputError
from .model import BenchmarkInfo, VersionInfo
from .store import Store


@dataclass(frozen=True)
class ImportReport:
    samples: int
    runs: int
    benchmarks: int
    versions: int
    #: Benchmarks the tool's file reports as failed, stored as a failed run each.
    failed: int = 0


def import_file(store: Store, path: str, *, fmt: str = "auto", batch=None, within=None) -> ImportReport:
    """Import a canonical CSV / JSON-lines file in one transaction (all or nothing).

    A run already in the store is an error (``FILE:LINE``) rather than a silent duplicate, and so
    is a ``timestamp`` for a version stored with another one (a version stored without one gets
    it, as with :func:`import_tool_file`).  ``batch`` may hold the file already parsed
    (:func:`regbench.adapters.parse_file`); ``within`` is called inside the transaction first
    (:meth:`Store.add_runs`).
    """
    if batch is None:
        batch = parse_file(path, fmt=fmt)
    stored = {b.name: b for b in store.benchmarks()}
    for name, info in batch.benchmarks.items():
        if name in stored:
            _check_stored(stored[name], info, path=str(path), line=batch.benchmark_line.get(name))
    dated = {name: info["timestamp"] for name, info in batch.versions.items() if info.get("timestamp") is not None}
    if dated:
        # Every row of a version has its timestamp (the parser refuses two values): the line to
        # name is the version's first.
        _check_timestamps(store, dated, path=str(path),
                          line=lambda version: min(line for key, line in batch.first_line.items()
                                                   if key[1] == version))
    existing: dict[tuple[str, str], set] = {}
    for rec in batch.records:
        key = (rec.config, rec.machine)
        if key not in existing:
            existing[key] = store.existing_run_keys(config=rec.config, machine=rec.machine)
        if (rec.benchmark, rec.version, rec.run_index) in existing[key]:
            line = batch.first_line[(rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index)]
            raise InputError(f"run {rec.run_index} of {rec.benchmark!r} at version {rec.version!r} is "
                             "already in the store", path=str(path), line=line)
    versions = [VersionInfo(name, **info) for name, info in batch.versions.items()]
    n = store.add_runs(batch.records, versions=versions, benchmarks=batch.benchmarks, within=within)
    return ImportReport(batch.n_samples, n, len(batch.benchmarks), len(batch.versions))


def _check_stored(stored: BenchmarkInfo, info: Mapping[str, str], *, path: str, line: int | None = None) -> None:
    """A file must not relabel a stored benchmark: another ``unit`` or ``direction`` in ``info``
    would change the meaning of every run stored under its name."""
    have = {"unit": stored.unit, "direction": stored.direction}
    for key, value in info.items():
        if have[key] != value:
            raise InputError(f"benchmark {stored.name!r} is stored with {key} {have[key]!r}, the file says "
                             f"{value!r}", path=path, line=line)


def _check_timestamps(store: Store, given: Mapping[str, datetime], *, path: str,
                      line: Callable[[str], int] | None = None) -> None:
    """A file must not move a stored version in time: a timestamp in ``given`` (version name to
    when it was made) for a version stored with another one is an error (``line`` gives the line
    that says it); a version stored without one takes it (:meth:`Store.add_runs`)."""
    stored_at = {v.name: v.timestamp for v in store.versions() if v.name in given and v.timestamp is not None}
    for name, stamp in given.items():
        if name not in stored_at:
            continue
        when = stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp  # the store's UTC
        if stored_at[name] != when:
            raise InputError(f"version {name!r} is stored with timestamp {stored_at[name].isoformat()}, "
                             f"not {when.isoformat()}", path=path, line=None if line is None else line(name))


def sniff_file(path: str) -> str:
    """The format of a file: ``csv`` or ``jsonl`` for the canonical formats, else the name of the
    one adapter that recognises it (:func:`regbench.adapters.base.sniff_format`)."""
    from pathlib import Path

    from .adapters.base import sniff_format

    p = Path(path)
    if p.is_dir():
        return "criterion"  # a target/criterion folder: the only format that is a folder
    if not p.is_file():
        raise InputError("no such file", path=str(p))
    with open(p, "rb") as fh:
        first = fh.readline(65536).decode("utf-8", errors="replace").strip()
    header = [c.strip().lower() for c in first.split(",")]
    if {"benchmark", "version", "value"} <= set(header):
        return "csv"
    if first.startswith("{") and first.endswith("}"):
        from .adapters import jsonsafe

        try:
            obj = jsonsafe.loads(first)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and {"benchmark", "version", "value"} <= set(obj):
            return "jsonl"
    return sniff_format(p)


def parse_tool_file(path: str, *, fmt: str, version: str | None) -> list:
    """Parse another tool's output with its adapter, checking what an import needs."""
    from pathlib import Path

    from .adapters.base import get_adapter

    adapter = get_adapter(fmt)  # an unknown format is said first
    _needed_version(version, fmt=fmt, path=path)
    runs = adapter.parse(Path(path))
    if not runs:
        raise InputError(f"no benchmark results in this {fmt} file", path=str(path))
    return runs


def import_tool_file(store: Store, path: str, *, fmt: str, version: str | None, config: str = "default",
                     machine: str = "local", timestamp: datetime | str | None = None, commit: str | None = None,
                     runs=None, within=None) -> ImportReport:
    """Import another tool's output (an adapter's format) as runs of one version, in one transaction.

    The file's runs are appended after the runs already stored for the same benchmark, version,
    configuration and machine, so importing a second invocation of the tool adds runs.  ``runs``
    may hold the file already parsed (:func:`parse_tool_file`); ``within`` is called inside the
    transaction first (:meth:`Store.add_runs`).  ``timestamp`` (a datetime, or ISO 8601 text kept
    as given, as a canonical file's ``timestamp``) is when the version was made: a new version, or
    a stored one without a timestamp, gets it; a stored version with another one is an error.
    """
    from .model import RunRecord

    text = None
    if isinstance(timestamp, str):
        text, timestamp = timestamp, parse_timestamp(timestamp, path=path)

    if runs is None:
        runs = parse_tool_file(path, fmt=fmt, version=version)
    version = _needed_version(version, fmt=fmt, path=path)
    stored = {b.name: b for b in store.benchmarks()}
    benchmarks: dict[str, dict] = {}
    for r in runs:
        info = {"unit": r.unit, "direction": r.direction}
        if benchmarks.setdefault(r.benchmark, info) != info:
            raise InputError(f"benchmark {r.benchmark!r} has two units or directions in the file", path=str(path))
        if r.benchmark in stored:
            _check_stored(stored[r.benchmark], info, path=str(path))
    if timestamp is not None:
        _check_timestamps(store, {version: timestamp}, path=str(path))
    # Numbered after the stored runs inside the import's transaction (append): another import of
    # the same version at the same moment gets the indices after these, never the same ones.
    records = [RunRecord(benchmark=r.benchmark, version=version, run_index=r.run, samples=r.samples, config=config,
                         machine=machine, warmup=r.warmup, timing=r.timing, weights=r.weights) for r in runs]
    # A benchmark the file reports as failed, with no result (Google Benchmark's SkipWithError, a
    # Go benchmark's --- FAIL): a failed run of its series with the tool's message, as a campaign
    # stores it, rather than nothing.
    failed = [f for f in _tool_failures(path, fmt) if f.benchmark is not None and f.benchmark not in benchmarks]
    for f in failed:
        info = {"direction": f.direction} if f.unit is None else {"unit": f.unit, "direction": f.direction}
        if f.benchmark in stored:
            _check_stored(stored[f.benchmark], info, path=str(path))
        benchmarks[f.benchmark] = info
        records.append(RunRecord(benchmark=f.benchmark, version=version, run_index=0, samples=np.empty(0),
                                 config=config, machine=machine, status="failed", stderr_tail=f.message))
    made = VersionInfo(version, commit=commit, timestamp=timestamp, timestamp_text=text)
    n = store.add_runs(records, versions=[made], benchmarks=benchmarks, append=True, within=within)
    return ImportReport(int(sum(r.samples.size for r in runs)), n, len(benchmarks), 1, len(failed))


def _tool_failures(path: str, fmt: str) -> list:
    """The benchmarks a tool's file reports as failed (:meth:`Adapter.failures`); none when it
    cannot say."""
    from pathlib import Path

    from .adapters.base import get_adapter

    try:
        return get_adapter(fmt).failures(Path(path))
    except InputError:
        return []


def parse_timestamp(text: str, *, path: str) -> datetime:
    """``--timestamp``'s ISO 8601 text as a datetime (aware when the text has an offset or ``Z``)."""
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--timestamp {text!r} is not ISO 8601", path=str(path)) from None


def _needed_version(version: str | None, *, fmt: str, path: str) -> str:
    if not version:
        raise InputError(f"--version is needed: a {fmt} file does not say which version it measured", path=str(path))
    return version
