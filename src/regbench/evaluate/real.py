"""The corpus of real measurements: histories measured on a real machine, with known work ratios.

``regbench evaluate --corpus real`` scores every method on it, next to the synthetic shapes.  It
is made by ``benchmarks/real_corpus/make_real_corpus.py``: six programs with different noise
characters (a CPU loop, dependent loads over a large table, CPython allocation, system calls,
threads, the JVM's garbage collector), each run at a work ratio per version (the program does
that much more or less work), so the true changes are known exactly while the noise is the
machine's own: every run a fresh process, in randomized interleaved order (seed 004 s.2).  A
copy is shipped in the package (:data:`DEFAULT_PATH`).

A corpus is a folder of two files:

``samples.csv.gz``
    Canonical CSV (DESIGN.md "Contracts", gzip-compressed): ``benchmark,version,run,iteration,value``,
    every iteration of every run, warm-up included, iterations numbered from 0.  ``benchmark`` is
    the series' name, versions are ``v00``, ``v01``, ... in history order.  A run that failed is
    absent (and counted as failed).
``truth.jsonl``
    JSON lines.  The first is a header object: ``format_version`` (1), ``warmup`` and
    ``iterations`` (per run), ``runs`` (per version), ``unit``, ``direction`` (``lower`` or
    ``higher``), and whatever else the maker records (machine, dates, load, seed, command).
    Each further line is one series: ``series`` (its name in the samples), ``program``, ``kind``
    (``quiet``, ``step``, ``revert`` or ``creep``), ``ratios`` (the true work ratio of every
    version, ``v00`` first: the series has that many versions) and ``changes`` (each ``index``,
    ``end_index``, ``magnitude`` and ``shape``, as :class:`~.corpus.TrueChange`).

:func:`load_real_corpus` reads a folder into the :class:`~.corpus.Corpus` the synthetic
generator returns, with the header's warm-up stripped as the pipeline strips a configured
warm-up.  Everything is checked first; the first problem is one
:class:`~regbench.errors.InputError` ``FILE:LINE: what is wrong``: a malformed CSV or JSON line,
a header field missing or wrong, a truth line naming a series the samples do not have (or
samples of a series the truth does not name), a version or run the header does not allow, a run
that is not ``warmup + iterations`` iterations long, a change whose indices are out of range,
overlapping or out of order, or whose magnitude is not what the ratios say, and ratios that move
where no change is declared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..adapters.canonical import DEFAULT_MACHINE, parse_file
from ..errors import InputError
from ..model import DEFAULT_CONFIG, DIRECTIONS, RunRecord, Series, VersionInfo
from .corpus import Corpus, LabelledSeries, TrueChange

FORMAT_VERSION = 1
#: The copy shipped in the package.
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "real"
SAMPLES = "samples.csv.gz"
TRUTH = "truth.jsonl"
MAKER = "python benchmarks/real_corpus/make_real_corpus.py"
#: Series kinds of a real corpus, and the shape of their changes.
REAL_KINDS = {"quiet": None, "step": "step", "revert": "revert", "creep": "creep"}
#: Ratios and magnitudes are written with 10 significant digits; a magnitude must match the
#: ratios to this relative precision, and a ratio that moves by less is taken not to move.
RATIO_TOLERANCE = 1e-6


def version_name(k: int) -> str:
    """The name of version ``k`` (from 0) in a real corpus: ``v00``, ``v01``, ..."""
    return f"v{k:02d}"


def load_real_corpus(path: str | Path | None = None, *, runs: int | None = None) -> Corpus:
    """Read a corpus of real measurements (layout in the module docstring).

    Parameters
    ----------
    path : str, Path or None
        The corpus folder; default :data:`DEFAULT_PATH`, the copy shipped in the package.
    runs : int, optional
        Keep only runs ``0`` to ``runs - 1`` of every version: the first ``runs`` rounds of the
        randomized interleaved order the corpus was measured in (seed 004 s.2), so the same
        measurements show what a detector would have found with fewer runs a version.  Default:
        every run.  A run missing among those counts as failed, as before.

    Returns
    -------
    Corpus
        One :class:`~.corpus.LabelledSeries` per truth line, in its order (``noise`` None), each
        series' runs without the header's warm-up (``Series.warmup``); ``failed`` counts the runs
        missing from ``runs`` per version.  Named ``real`` for the shipped copy and by its folder
        otherwise; ``params`` holds the sizes and the whole header.

    Raises
    ------
    InputError
        ``FILE:LINE: what is wrong`` for the first problem found (module docstring), or a
        missing folder or file.
    ValueError
        ``runs`` below 1, or more than the header's runs per version.
    """
    if runs is not None and not (isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1):
        raise ValueError(f"`runs` must be a positive integer, got {runs!r}")
    folder = DEFAULT_PATH if path is None else Path(path)
    if not folder.is_dir():
        hint = f" (make one with {MAKER})" if path is None else ""
        raise InputError(f"no such folder{hint}", path=str(folder))
    for name in (TRUTH, SAMPLES):
        if not (folder / name).is_file():
            raise InputError(f"no such file (a real corpus holds {SAMPLES} and {TRUTH}; made by {MAKER})",
                             path=str(folder / name))
    truth_path = str(folder / TRUTH)
    header, entries = _read_truth(folder / TRUTH)
    batch = parse_file(folder / SAMPLES, fmt="csv")
    samples_path = str(folder / SAMPLES)

    by_series: dict[str, list[RunRecord]] = {}
    for rec in batch.records:
        by_series.setdefault(rec.benchmark, []).append(rec)
    named = {e.series for e in entries}
    for name, line in sorted(batch.benchmark_line.items(), key=lambda kv: kv[1]):
        if name not in named:
            raise InputError(f"series {name!r} is not in {TRUTH}", path=samples_path, line=line)
    warmup, iterations, n_runs = header["warmup"], header["iterations"], header["runs"]
    if runs is not None and runs > n_runs:
        raise ValueError(f"`runs`: {truth_path} has {n_runs} runs per version, fewer than {runs}")
    kept = n_runs if runs is None else runs
    out = []
    for e in entries:
        records = by_series.get(e.series)
        if not records:
            raise InputError(f"series {e.series!r} has no samples in {SAMPLES}", path=truth_path, line=e.line)
        n_versions = len(e.ratios)
        where = {version_name(k): k for k in range(n_versions)}
        by_version: list[dict[int, np.ndarray]] = [{} for _ in range(n_versions)]
        for rec in records:
            line = batch.first_line[(rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index)]
            k = where.get(rec.version)
            if k is None:
                raise InputError(f"version {rec.version!r} of series {rec.benchmark!r} is not one of its "
                                 f"{n_versions} versions in {TRUTH} (v00 to {version_name(n_versions - 1)})",
                                 path=samples_path, line=line)
            if rec.config != DEFAULT_CONFIG or rec.machine != DEFAULT_MACHINE:
                raise InputError("a real corpus has no `config` or `machine` column (one series per benchmark)",
                                 path=samples_path, line=line)
            if rec.run_index >= n_runs:
                raise InputError(f"run {rec.run_index} of {rec.benchmark!r} at {rec.version}: the header of "
                                 f"{TRUTH} says {n_runs} runs per version (0 to {n_runs - 1})",
                                 path=samples_path, line=line)
            if rec.first_iteration != 0 or rec.samples.size != warmup + iterations:
                raise InputError(
                    f"run {rec.run_index} of {rec.benchmark!r} at {rec.version} has iterations {rec.first_iteration} "
                    f"to {rec.first_iteration + rec.samples.size - 1}; the header of {TRUTH} says {warmup} warm-up "
                    f"+ {iterations} measured, numbered from 0", path=samples_path, line=line)
            if rec.run_index >= kept:
                continue  # checked like the others, not used
            measured = np.array(rec.samples[warmup:], dtype=float)
            measured.setflags(write=False)  # a detector must not change the corpus under the next one
            by_version[k][rec.run_index] = measured
        series = Series(benchmark=e.series, config=DEFAULT_CONFIG, machine="real", unit=header["unit"],
                        direction=header["direction"],
                        versions=[VersionInfo(name=version_name(k), id=k + 1) for k in range(n_versions)],
                        runs=[[r[j] for j in sorted(r)] for r in by_version],
                        failed=[kept - len(r) for r in by_version],
                        warmup=[warmup] * n_versions)
        out.append(LabelledSeries(series, e.changes, e.kind))
    params = {"source": "real", "path": str(folder), "n_series": len(out),
              "n_versions": max(len(s.series) for s in out), "n_runs": kept, "n_iterations": iterations,
              "warmup": warmup, "seed": header.get("seed"), "header": header}
    name = "real" if path is None else str(path)
    if kept < n_runs:
        params["runs_measured"] = n_runs
        name = f"{name}, first {kept} of {n_runs} runs"
    return Corpus(tuple(out), params, name=name)


# ----------------------------------------------------------------------------------- truth.jsonl

@dataclass(frozen=True)
class _Entry:
    """One series line of ``truth.jsonl``, checked."""

    series: str
    program: str
    kind: str
    ratios: tuple[float, ...]
    changes: tuple[TrueChange, ...]
    line: int


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _read_truth(path: Path) -> tuple[dict, list[_Entry]]:
    """The header and the series entries (each with its ``line``), checked."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=where) from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputError("expected the header object on the first line", path=where, line=1)
    header = _header(_json_object(lines[0], where, 1), where)
    entries: list[_Entry] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        entry = _entry(_json_object(raw, where, n), where, n)
        if entry.series in seen:
            raise InputError(f"series {entry.series!r} is already on line {seen[entry.series]}", path=where, line=n)
        seen[entry.series] = n
        entries.append(entry)
    if not entries:
        raise InputError("no series after the header", path=where, line=len(lines) + 1)
    return header, entries


def _json_object(raw: str, where: str, n: int) -> dict:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg} (column {exc.colno})", path=where, line=n) from None
    if not isinstance(obj, dict):
        raise InputError("each line must be a JSON object", path=where, line=n)
    return obj


def _header(obj: Mapping, where: str, n: int = 1) -> dict:
    def need(key: str) -> object:
        if key not in obj:
            raise InputError(f"the header has no `{key}`", path=where, line=n)
        return obj[key]

    version = need("format_version")
    if version != FORMAT_VERSION:
        raise InputError(f"`format_version` {version!r} is not supported (this regbench reads {FORMAT_VERSION})",
                         path=where, line=n)
    for key, low in (("warmup", 0), ("iterations", 1), ("runs", 1)):
        value = need(key)
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= low):
            raise InputError(f"`{key}` must be an integer >= {low}, got {value!r}", path=where, line=n)
    unit = need("unit")
    if not isinstance(unit, str) or not unit.strip():
        raise InputError(f"`unit` must be a non-empty string, got {unit!r}", path=where, line=n)
    direction = need("direction")
    if direction not in DIRECTIONS:
        raise InputError(f"`direction` must be 'lower' or 'higher', got {direction!r}", path=where, line=n)
    return dict(obj)


def _entry(obj: Mapping, where: str, n: int) -> _Entry:
    def fail(message: str) -> InputError:
        return InputError(message, path=where, line=n)

    for key in ("series", "program", "kind", "ratios", "changes"):
        if key not in obj:
            raise fail(f"missing `{key}`")
    name, kind, ratios, changes = obj["series"], obj["kind"], obj["ratios"], obj["changes"]
    if not isinstance(name, str) or not name.strip():
        raise fail(f"`series` must be a non-empty string, got {name!r}")
    if not isinstance(obj["program"], str):
        raise fail(f"`program` must be a string, got {obj['program']!r}")
    if kind not in REAL_KINDS:
        raise fail(f"`kind` must be one of {', '.join(REAL_KINDS)}, got {kind!r}")
    if not isinstance(ratios, list) or len(ratios) < 2 or not all(_is_number(r) and r > 0 for r in ratios):
        raise fail("`ratios` must be a list of at least 2 positive numbers (one per version)")
    if not isinstance(changes, list):
        raise fail("`changes` must be a list")
    if (kind == "quiet") != (not changes):
        raise fail(f"a {kind} series must have {'no changes' if kind == 'quiet' else 'changes'}")
    last = len(ratios) - 1
    out = []
    previous_end = 0
    for c, change in enumerate(changes):
        label = f"`changes[{c}]`"
        if not isinstance(change, dict):
            raise fail(f"{label} must be an object")
        for key in ("index", "end_index", "magnitude", "shape"):
            if key not in change:
                raise fail(f"{label} has no `{key}`")
        index, end, magnitude, shape = change["index"], change["end_index"], change["magnitude"], change["shape"]
        if shape != REAL_KINDS[kind]:
            raise fail(f"{label}.shape must be {REAL_KINDS[kind]!r} in a {kind} series, got {shape!r}")
        if not (_is_int(index) and _is_int(end) and 1 <= index <= end <= last):
            raise fail(f"{label}: `index` and `end_index` must be integers with 1 <= index <= end_index <= {last} "
                       f"(the series has {len(ratios)} versions), got {index!r} and {end!r}")
        if (end > index) != (shape == "creep"):
            raise fail(f"{label}: only a creep spans versions (end_index > index), got {index} to {end} for a "
                       f"{shape}")
        if index <= previous_end:
            raise fail(f"{label} starts at {index}, not after the end of the change before it ({previous_end})")
        previous_end = end
        if not _is_number(magnitude) or magnitude <= -1:
            raise fail(f"{label}.magnitude must be a number above -1, got {magnitude!r}")
        moved = ratios[end] / ratios[index - 1] - 1
        if abs(moved - magnitude) > RATIO_TOLERANCE * (1 + abs(magnitude)):
            raise fail(f"{label}.magnitude is {magnitude:+.4%} but the ratios move by {moved:+.4%} from "
                       f"{version_name(index - 1)} to {version_name(end)}")
        out.append(TrueChange(index, end, float(magnitude), shape, float(magnitude)))
    covered = {k for c in out for k in range(c.index, c.end_index + 1)}
    for k in range(1, len(ratios)):
        step = ratios[k] / ratios[k - 1] - 1
        if abs(step) > RATIO_TOLERANCE and k not in covered:
            raise fail(f"`ratios` move by {step:+.4%} at {version_name(k)} (index {k}), where no change is declared")
    return _Entry(name, obj["program"], kind, tuple(float(r) for r in ratios), tuple(out), n)


__all__ = ["DEFAULT_PATH", "FORMAT_VERSION", "load_real_corpus", "version_name"]
