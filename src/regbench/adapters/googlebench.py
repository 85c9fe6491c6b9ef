"""Google Benchmark's JSON (``--benchmark_format=json`` or ``--benchmark_out_format=json``).

The file is one object: ``context`` (machine, date, build type) and ``benchmarks``, an array with
one entry per repetition of each benchmark (``run_type: "iteration"``), followed, when
``--benchmark_repetitions`` > 1, by the aggregates the library computed over them
(``run_type: "aggregate"``: ``mean``, ``median``, ``stddev``, ``cv``, user statistics, and the
``BigO``/``RMS`` of complexity fits).  Each entry has ``real_time`` and ``cpu_time`` per
iteration of the benchmark loop in ``time_unit``, the loop's ``iterations``, and one key per
counter (``items_per_second`` and ``bytes_per_second`` from ``SetItemsProcessed`` /
``SetBytesProcessed``, and the user's ``state.counters``).

Mapping to runs (one invocation of the binary is one run, ``run`` 0):

* the benchmark is ``run_name`` (``BM_Copy/64``, with ``/threads:N`` and the like as the library
  writes them); each repetition is one sample, in the order of the file;
* ``real_time`` is the primary value, ``NAME`` in ``time_unit`` (``ns``, ``us``, ``ms``, ``s``),
  lower is better; ``cpu_time`` is ``NAME [cpu_time]``;
* every counter is ``NAME [COUNTER]`` with the counter's name as unit, except
  ``items_per_second`` (``items/s``) and ``bytes_per_second`` (``B/s``); counters per second
  (those two, or a name ending in ``_per_second``) are higher-is-better, the others lower;
* aggregates are not samples: they are kept in ``params["aggregates"]`` (``{"mean": x, ...}``,
  the value of that run's metric), with ``iterations``, ``threads`` and ``repetitions``;
* a repetition that failed (``error_occurred``, or ``skipped`` in newer versions) is not a
  sample; its message is kept in ``params["errors"]``, and a benchmark none of whose
  repetitions succeeded gives no run: it is one of :meth:`~GoogleBenchmarkAdapter.failures`
  (``state.SkipWithError``), with the library's message, so that a command benchmark stores it
  as a failed run of its series (the binary exits with status 0 all the same).

A file with aggregates but no repetitions (``--benchmark_report_aggregates_only``) is an error:
the samples are what regbench analyses.  The file is streamed (see :mod:`._jsonstream`): a
100 MB file is read in seconds with memory for its numbers only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError, shown
from ._jsonstream import iter_top_level
from .jsonsafe import finite_number
from .base import Adapter, ToolFailure, ToolRun, anchored_alternation, register, without_metric

_NOT_COUNTERS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
    "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "skipped",
    "skip_message", "label", "big_o", "real_coefficient", "cpu_coefficient", "rms",
})
_TIMES = ("real_time", "cpu_time")
_NOT_METRICS = _NOT_COUNTERS - set(_TIMES)
_TIME_UNITS = frozenset({"ns", "us", "ms", "s"})
_COUNTER_UNITS = {"items_per_second": "items/s", "bytes_per_second": "B/s"}
_HEAD = re.compile(r'\A\s*\{\s*"context"\s*:\s*\{')


@dataclass
class _Bench:
    """What the file says about one ``run_name`` so far."""

    unit: str
    line: int
    real: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    counters: dict[str, list[float]] = field(default_factory=dict)
    iterations: list[int] = field(default_factory=list)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)  # metric -> {aggregate: value}
    # Complexity fits: "BigO" or "RMS" -> their fields ("big_o" is text such as "N^2").
    complexity: dict[str, dict[str, object]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    threads: int | None = None
    repetitions: int | None = None


@register
class GoogleBenchmarkAdapter(Adapter):
    name = "google-benchmark"
    description = "Google Benchmark JSON (--benchmark_format=json); each repetition is a sample"
    selection = "--benchmark_filter (std::regex or POSIX, matched in the full name): ^(BM_A/64|BM_B)$"

    def selection_unit(self, reported: str) -> str | None:
        # The filter sees the full name, arguments included (``BM_Copy/64``), as ``run_name``.
        return without_metric(reported) or None

    def render_selection(self, units) -> str:
        return anchored_alternation(units)

    def sniff(self, head: str, path: Path) -> bool:
        return bool(_HEAD.match(head)) and '"num_cpus"' in head and '"mhz_per_cpu"' in head

    def parse(self, path: Path) -> list[ToolRun]:
        return self._runs(self._read(path), path)

    def salvage(self, path: Path) -> tuple[list[ToolRun], list[ToolFailure]]:
        # The library writes each benchmark's entries (its repetitions, then their aggregates)
        # once it has finished: a benchmark that aborts leaves the entries before it whole and
        # the array unclosed.  Those entries are kept; an entry cut in the middle is not.
        benches: dict[str, _Bench] = {}
        try:
            for key, line, entry, is_element in iter_top_level(path, ("benchmarks",)):
                if key == "benchmarks" and is_element:
                    _add_entry(benches, entry, str(path), line)
        except InputError:
            pass
        try:
            return self._runs({k: b for k, b in benches.items() if b.real}, path), self._failures(benches)
        except InputError:
            return [], []

    def _runs(self, benches: dict[str, _Bench], path: Path) -> list[ToolRun]:
        runs: list[ToolRun] = []
        for name, b in benches.items():
            if not b.real:
                # The complexity fit of a family (``->Complexity()``: ``NAME_BigO`` and ``NAME_RMS``
                # under the family's name, its instances being ``NAME/8``, ``NAME/16``...) is no
                # benchmark of its own: left aside (a probe: the whole output was refused).
                if not b.errors and b.aggregates:
                    raise InputError(f"benchmark {name!r} has aggregates but no repetitions (was it run with "
                                     "--benchmark_report_aggregates_only?); regbench needs every repetition",
                                     path=str(path), line=b.line)
                continue
            runs.extend(_runs_of(name, b))
        return runs

    def failures(self, path: Path) -> list[ToolFailure]:
        return self._failures(self._read(path))

    @staticmethod
    def _failures(benches: dict[str, _Bench]) -> list[ToolFailure]:
        # A benchmark none of whose repetitions succeeded (state.SkipWithError in each): the
        # library's own words, as its console reporter prints them.
        out = []
        for name, b in benches.items():
            if b.errors and not b.real:
                message = "\n".join(f"{name} ERROR OCCURRED: '{e}'" for e in dict.fromkeys(b.errors))
                out.append(ToolFailure(name, message, b.unit, "lower"))
        return out

    def _read(self, path: Path) -> dict[str, _Bench]:
        where = str(path)
        benches: dict[str, _Bench] = {}
        seen_array = False
        for key, line, entry, is_element in iter_top_level(path, ("benchmarks",)):
            if key != "benchmarks":
                continue
            if not is_element:
                raise InputError("`benchmarks` is not an array", path=where, line=line)
            seen_array = True
            _add_entry(benches, entry, where, line)
        if not seen_array:
            raise InputError("no benchmark entries (the `benchmarks` array is missing or empty)", path=where)
        return benches


def _add_entry(benches: dict[str, _Bench], entry, where: str, line: int) -> None:
    # Called once per entry of files with hundreds of thousands: kept to plain dict operations.
    def error(message: str) -> InputError:
        return InputError(f"benchmark entry: {message}", path=where, line=line)

    if type(entry) is not dict:
        raise error(f"expected an object, found {type(entry).__name__}")
    name = entry.get("run_name", entry.get("name"))
    if type(name) is not str or not name:
        raise error("`name` is missing or not a string")
    unit = entry.get("time_unit", "ns")  # the library leaves it out in old versions: nanoseconds
    b = benches.get(name)
    if b is None or unit != b.unit:
        if type(unit) is not str or unit not in _TIME_UNITS:
            raise error(f"`time_unit` of {shown(name)} is {shown(unit)}, not one of ns, us, ms, s")
        if b is not None:
            raise error(f"`time_unit` of {name!r} is {unit!r}, it was {b.unit!r} on line {b.line}")
        b = benches[name] = _Bench(unit=unit, line=line)
    b.threads = entry.get("threads", b.threads)
    b.repetitions = entry.get("repetitions", b.repetitions)
    if entry.get("error_occurred") or entry.get("skipped"):
        b.errors.append(str(entry.get("error_message", entry.get("skip_message", "skipped"))))
        return
    metrics = _metrics(entry, error)
    run_type = entry.get("run_type", "aggregate" if "aggregate_name" in entry else "iteration")
    if run_type == "aggregate":
        agg = str(entry.get("aggregate_name", entry.get("name", "")))
        if agg in ("BigO", "RMS"):  # complexity fits: coefficients, not per-iteration values
            b.complexity[agg] = {
                k: entry[k] for k in ("big_o", "real_coefficient", "cpu_coefficient", "rms") if k in entry}
            return
        for metric, value in metrics.items():
            b.aggregates.setdefault(metric, {})[agg] = value
        return
    if run_type != "iteration":
        raise error(f"`run_type` of {name!r} is {run_type!r}, not iteration or aggregate")
    real = metrics.pop("real_time", None)
    if real is None:
        raise error(f"`real_time` of {name!r} is missing")
    b.real.append(real)
    cpu = metrics.pop("cpu_time", None)
    if cpu is not None:
        b.cpu.append(cpu)
    counters = b.counters
    for counter, value in metrics.items():
        values = counters.get(counter)
        if values is None:
            values = counters[counter] = []
        values.append(value)
    it = entry.get("iterations")
    if type(it) is int:
        b.iterations.append(it)


def _metrics(entry: dict, error) -> dict[str, float]:
    """The numbers of an entry: ``real_time``, ``cpu_time`` and each counter, in file order."""
    out = {}
    for key, value in entry.items():
        if key in _NOT_METRICS:
            continue
        t = type(value)
        if t is float or t is int:  # not bool, whose type is bool
            if not (math.isfinite(value) if t is float else finite_number(value)):
                raise error(f"`{key}` is not finite: {shown(value)}")
            out[key] = value
        elif key in _TIMES:
            raise error(f"`{key}` is not a number: {shown(value)}")
    return out


def _runs_of(name: str, b: _Bench) -> list[ToolRun]:
    common: dict[str, object] = {"threads": b.threads, "repetitions": b.repetitions, "iterations": b.iterations}
    if b.errors:
        common["errors"] = b.errors
    if b.complexity:
        common["complexity"] = b.complexity

    def params(metric: str) -> dict:
        out = dict(common)
        if b.aggregates.get(metric):
            out["aggregates"] = b.aggregates[metric]
        return out

    runs = [ToolRun(name, np.asarray(b.real, dtype=np.float64), b.unit, "lower", params=params("real_time"))]
    if b.cpu:
        runs.append(ToolRun(f"{name} [cpu_time]", np.asarray(b.cpu, dtype=np.float64), b.unit, "lower",
                            params=params("cpu_time")))
    for counter, values in b.counters.items():
        higher = counter in _COUNTER_UNITS or counter.endswith("_per_second")
        runs.append(ToolRun(f"{name} [{counter}]", np.asarray(values, dtype=np.float64),
                            _COUNTER_UNITS.get(counter, counter), "higher" if higher else "lower",
                            params=params(counter)))
    return runs
