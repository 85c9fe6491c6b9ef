"""Importing files into the store: parse (pure adapter), check against the store, write once."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from .adapters import parse_file
from .adapters.canonical import ERROR_CHARS, ImportBatch
from .errors import InputError
from .model import BenchmarkInfo, RunRecord, StoredRun, VersionInfo
from .store import Store

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


@dataclass(frozen=True)
class KeptTag:
    """A tag a file gives a version while the store has it on another version, where it stays."""

    tag: str
    stored_on: str  # the version the store names by it
    file_version: str  # the version the file gives it to


@dataclass(frozen=True)
class Remeasured:
    """Runs a file holds of an experiment the store has other runs of under the same numbers (a
    re-run of the same commit on the same machine, numbered from 0 again): stored as new runs,
    numbered after the stored ones."""

    benchmark: str
    version: str
    config: str
    machine: str
    runs: int


@dataclass(frozen=True)
class ImportReport:
    samples: int
    runs: int
    benchmarks: int
    versions: int
    #: Failed runs stored: the benchmarks a tool's file reports as failed (a failed run each), or
    #: the runs of a canonical file whose ``status`` is not ``ok``.
    failed: int = 0
    #: Git tags the file's ``tags`` column added to versions.
    tags: int = 0
    #: Tags the file gives a version that the store has on another one (not moved).
    kept_tags: tuple[KeptTag, ...] = ()
    #: Runs of a canonical file already in the store (the same run again), not stored twice.
    skipped: int = 0
    #: The experiments whose runs in the file are a new measurement (:class:`Remeasured`).
    remeasured: tuple[Remeasured, ...] = ()


@dataclass(frozen=True)
class ImportPlan:
    """What importing a parsed canonical file stores (:func:`plan_import`), checked against the
    store: its runs but those already stored, the re-measured ones renumbered."""

    batch: ImportBatch
    #: The runs to store; those of :attr:`append_to` numbered 0, 1, ... to go after the stored runs.
    records: tuple[RunRecord, ...]
    #: The experiments (benchmark, version, config, machine) whose runs go after the stored ones.
    append_to: frozenset[tuple[str, str, str, str]]
    skipped: int
    remeasured: tuple[Remeasured, ...]
    new_tags: int
    kept_tags: tuple[KeptTag, ...]

    @property
    def runs(self) -> int:
        return len(self.records)

    @property
    def samples(self) -> int:
        return int(sum(rec.samples.size for rec in self.records))


def import_file(store: Store, path: str, *, fmt: str = "auto", batch: ImportBatch | None = None,
                within: Callable[[Connection], None] | None = None) -> ImportReport:
    """Import a canonical CSV / JSON-lines file in one transaction (all or nothing).

    A run already in the store is not stored again, and a new measurement of an experiment the
    store has runs of is stored after them (:func:`plan_import`); a ``timestamp`` for a version
    stored with another one is an error (``FILE:LINE``; a version stored without one gets it, as
    with :func:`import_tool_file`).  The ``tags`` column's tags are added to their versions; a
    tag the store has on another version stays there (``kept_tags``), and no stored tag is
    removed.  ``batch`` may hold the file already parsed (:func:`regbench.adapters.parse_file`);
    ``within`` is called inside the transaction first (:meth:`Store.add_runs`).
    """
    if batch is None:
        batch = parse_file(path, fmt=fmt)
    return store_import(store, plan_import(store, path, batch), within=within)


def plan_import(store: Store, path: str, batch: ImportBatch) -> ImportPlan:
    """Check a parsed canonical file against the store and sort its runs out.

    A run of the file is *the same run again* when the store has a run of its experiment
    (benchmark, version, configuration, machine) with the same status and, for a measured run,
    the same first measured iteration and the same measured samples bit for bit, or, for a
    failed run, the same error: what exporting that stored run writes (its run number is not
    compared: a server numbers a re-measurement after its stored runs).  Such runs are skipped,
    each stored run standing for one run of the file.  The other runs of an experiment are new:
    they keep their numbers when none of them is taken in the store, else they all go after the
    stored runs, in their order (a re-run of the same commit on the same machine, numbered from
    0 again).

    Raises
    ------
    InputError
        A benchmark stored with another unit or direction, a version with another timestamp
        (``FILE:LINE``).
    """
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
    have = store.experiment_runs({_experiment(rec) for rec in batch.records})
    by_experiment: dict[tuple[str, str, str, str], list[RunRecord]] = {}
    for rec in batch.records:
        by_experiment.setdefault(_experiment(rec), []).append(rec)
    records: list[RunRecord] = []
    append_to: set[tuple[str, str, str, str]] = set()
    remeasured: list[Remeasured] = []
    skipped = 0
    for key, recs in by_experiment.items():
        runs = have.get(key, [])
        if not runs:
            records += recs
            continue
        pool = Counter(_stored_signature(r) for r in runs)
        fresh = []
        for rec in recs:
            sig = _file_signature(rec)
            if pool[sig] > 0:
                pool[sig] -= 1
                skipped += 1
            else:
                fresh.append(rec)
        taken = {r.run_index for r in runs}
        if not any(rec.run_index in taken for rec in fresh):
            records += fresh
            continue
        # A new measurement numbered like the stored one: after it (Store.add_runs's append_to).
        fresh.sort(key=lambda rec: rec.run_index)
        records += [dataclasses.replace(rec, run_index=k) for k, rec in enumerate(fresh)]
        append_to.add(key)
        remeasured.append(Remeasured(*key, runs=len(fresh)))
    new_tags, kept = _new_tags(store, batch.tags)
    return ImportPlan(batch, tuple(records), frozenset(append_to), skipped, tuple(remeasured), new_tags, kept)


def store_import(store: Store, plan: ImportPlan, *, within: Callable[[Connection], None] | None = None
                 ) -> ImportReport:
    """Store what :func:`plan_import` planned, in one transaction (``within`` is called in it first)."""
    batch = plan.batch
    versions = [VersionInfo(name, **info) for name, info in batch.versions.items()]
    n = store.add_runs(plan.records, versions=versions, benchmarks=batch.benchmarks, within=within,
                       tags=batch.tags, append_to=plan.append_to)
    failed = sum(1 for rec in plan.records if rec.status != "ok")
    return ImportReport(plan.samples, n, len(batch.benchmarks), len(batch.versions), failed, tags=plan.new_tags,
                        kept_tags=plan.kept_tags, skipped=plan.skipped, remeasured=plan.remeasured)


def _experiment(rec: RunRecord) -> tuple[str, str, str, str]:
    return (rec.benchmark, rec.version, rec.config, rec.machine)


def _signature(status: str, first: int, measured: np.ndarray, error: str | None) -> tuple:
    """What a run is, as an export writes it: a measured run's first measured iteration and
    samples (bytes: bit for bit), a failed run's status and error (the end an export keeps)."""
    if status == "ok":
        return ("ok", int(first), np.ascontiguousarray(measured, dtype="<f8").tobytes())
    return (status, (error or "")[-ERROR_CHARS:])


def _file_signature(rec: RunRecord) -> tuple:
    return _signature(rec.status, rec.first_iteration + rec.warmup, rec.samples[rec.warmup:], rec.stderr_tail)


def _stored_signature(run: StoredRun) -> tuple:
    return _signature(run.status, run.first_iteration + run.warmup, run.samples[run.warmup:], run.stderr_tail)


def _new_tags(store: Store, tags: Mapping[str, tuple[str, ...]]) -> tuple[int, tuple[KeptTag, ...]]:
    """How many of a file's ``tags`` (by version) the store does not hold yet, and those it holds
    on another version (:meth:`Store.add_runs` leaves them there: an import never moves a tag)."""
    if not tags:
        return 0, ()
    named = {alias.name: version for version, aliases in store.aliases().items() for alias in aliases}
    new = sum(1 for names in tags.values() for tag in names if tag not in named)
    kept = tuple(KeptTag(tag, named[tag], version) for version, names in tags.items() for tag in names
                 if tag in named and named[tag] != version)
    return new, kept


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


@dataclass(frozen=True)
class OrderConflict:
    """Two versions without timestamps whose order of first appearance in a file the rows of a
    benchmark contradict: ``benchmark`` measured ``before`` ahead of ``after`` (from its line
    ``line``), while ``after`` appears first in the file (in ``first_benchmark``'s rows, line
    ``first_line``), so the import orders it first."""

    benchmark: str
    before: str
    after: str
    line: int
    first_benchmark: str
    first_line: int


def order_conflict(batch: ImportBatch) -> OrderConflict | None:
    """The first pair of versions whose order the rows of some benchmark contradict, or None.

    Without timestamps, versions are ordered by first appearance (DESIGN.md).  A file grouped by
    benchmark whose first benchmark was not run at some versions lists them late, after versions
    the next benchmark measured after them: the history is reordered and a step is made up where
    the order was ambiguous.  This finds the contradiction; the order stays the documented one.
    """
    untimed = [v for v, info in batch.versions.items() if "timestamp" not in info]
    rank = {v: k for k, v in enumerate(untimed)}
    first: dict[tuple[str, str, str, str], int] = {}  # (benchmark, config, machine, version) -> line
    for (bench, version, config, machine, _run), line in batch.first_line.items():
        if version in rank:
            key = (bench, config, machine, version)
            first[key] = min(line, first.get(key, line))
    by_series: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    for (bench, config, machine, version), line in first.items():
        by_series.setdefault((bench, config, machine), []).append((line, version))
    found = []
    for (bench, _config, _machine), seen in by_series.items():
        seen.sort()
        for (_l0, a), (line, b) in zip(seen, seen[1:], strict=False):
            if rank[b] < rank[a]:
                found.append((line, bench, a, b))
                break
    if not found:
        return None
    line, bench, a, b = min(found)
    where = min((ln, key[0]) for key, ln in first.items() if key[3] == b)
    return OrderConflict(bench, a, b, line, where[1], where[0])


def sniff_file(path: str) -> str:
    """The format of a file: ``csv`` or ``jsonl`` for the canonical formats, else the name of the
    one adapter that recognises it (:func:`regbench.adapters.base.sniff_format`)."""
    from pathlib import Path

    from .adapters.base import sniff_format

    p = Path(path)
    if p.is_dir():
        return "criterion"  # a target/criterion folder: the only format that is a folder
    if not p.is_file():
        raise InputError("not a regular file (a device or a pipe: save it to a file first)" if p.exists()
                         else "no such file", path=str(p))
    from .adapters.canonical import MAX_LINE_BYTES

    if p.stat().st_size == 0:
        raise InputError("empty file: nothing to import", path=str(p))
    with open(p, "rb") as fh:
        raw = fh.readline(MAX_LINE_BYTES + 2)
    # utf-8-sig: a byte-order mark, as spreadsheets write "CSV UTF-8", is not part of the header.
    first = raw.decode("utf-8-sig", errors="replace").strip()
    if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES and p.suffix.lower() in (".csv", ".jsonl", ".ndjson"):
        # A canonical file by its name whose first line is too long (a corrupt file, or one of
        # NUL bytes): its reader says so, naming the line, rather than "not a format".  By name
        # only: a pyperf file is one long line of JSON too.
        return "csv" if p.suffix.lower() == ".csv" else "jsonl"
    header = [c.strip().lower() for c in first.split(",")]
    if {"benchmark", "version", "value"} <= set(header):
        return "csv"
    if first.startswith("{") and first.endswith("}"):
        from .adapters import jsonsafe

        try:
            obj = jsonsafe.loads(first)
        except ValueError:
            obj = None
        # A failed run's row has no `iteration` nor `value`, and says its `status`.
        if isinstance(obj, dict) and {"benchmark", "version", "run"} <= set(obj) and ("value" in obj or "status" in obj):
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
                     runs=None, within=None, directions: Sequence[tuple[str, str]] = (),
                     within_counts=None) -> ImportReport:
    """Import another tool's output (an adapter's format) as runs of one version, in one transaction.

    The file's runs are appended after the runs already stored for the same benchmark, version,
    configuration and machine, so importing a second invocation of the tool adds runs.  ``runs``
    may hold the file already parsed (:func:`parse_tool_file`); ``within`` is called inside the
    transaction first (:meth:`Store.add_runs`).  ``timestamp`` (a datetime, or ISO 8601 text kept
    as given, as a canonical file's ``timestamp``) is when the version was made: a new version, or
    a stored one without a timestamp, gets it; a stored version with another one is an error.
    ``within_counts``, instead of ``within``: called with the number of runs and of samples to be
    stored (the failed benchmarks' runs counted), it returns the ``within`` hook (the HTTP API's
    record of a submission, whose replay answers with what was stored).
    ``directions``: ``(pattern, direction)`` pairs overriding the direction the tool reports for
    the benchmarks whose names match (:func:`regbench.config.direction_for`; a user counter of
    Google Benchmark that is a rate says nothing of it in the file).
    """
    from .config import direction_for

    text = None
    if isinstance(timestamp, str):
        text, timestamp = timestamp, parse_timestamp(timestamp, path=path)

    if runs is None:
        runs = parse_tool_file(path, fmt=fmt, version=version)
    version = _needed_version(version, fmt=fmt, path=path)
    stored = {b.name: b for b in store.benchmarks()}
    benchmarks: dict[str, dict] = {}
    for r in runs:
        info = {"unit": r.unit, "direction": direction_for(directions, (r.benchmark,), r.direction)}
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
        direction = direction_for(directions, (f.benchmark,), f.direction)
        info = {"direction": direction} if f.unit is None else {"unit": f.unit, "direction": direction}
        if f.benchmark in stored:
            _check_stored(stored[f.benchmark], info, path=str(path))
        benchmarks[f.benchmark] = info
        records.append(RunRecord(benchmark=f.benchmark, version=version, run_index=0, samples=np.empty(0),
                                 config=config, machine=machine, status="failed", stderr_tail=f.message))
    made = VersionInfo(version, commit=commit, timestamp=timestamp, timestamp_text=text)
    samples = int(sum(r.samples.size for r in runs))
    if within_counts is not None:
        within = within_counts(len(records), samples)
    n = store.add_runs(records, versions=[made], benchmarks=benchmarks, append=True, within=within)
    return ImportReport(samples, n, len(benchmarks), 1, len(failed))


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
