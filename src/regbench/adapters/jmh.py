"""JMH's JSON result file (``java -jar benchmarks.jar -rf json -rff FILE``).

Format
------
A JSON array with one object per benchmark, parameter combination and mode::

    [{"jmhVersion": "1.37", "benchmark": "pkg.Class.method", "mode": "thrpt", "forks": 2,
      "warmupIterations": 1, "measurementIterations": 3, "params": {"size": "10"},
      "primaryMetric": {"score": ..., "scoreUnit": "ops/ms",
                        "rawData": [[fork 0's iteration scores], [fork 1's ...]]},
      "secondaryMetrics": {"gc.alloc.rate": {"scoreUnit": "MB/sec", "rawData": [[...], [...]]}}},
     ...]

Mapping to runs
---------------
* Each **fork** (a fresh JVM) is one run; its **measurement iterations** are the samples, in
  order.  JMH does not write warm-up iterations to the file, so ``warmup`` is 0.
* The benchmark's name is ``benchmark`` followed by its ``params`` in the file's order,
  ``pkg.Class.method(size=10)``.  When the file holds the same benchmark and parameters in more
  than one mode (``-bm thrpt,avgt``), the mode becomes one more parameter,
  ``pkg.Class.method(size=10, mode=avgt)``, so that the names do not collide.
* The unit is ``scoreUnit`` (``ops/ms``, ``us/op``, ...).  Throughput (``thrpt``) is better when
  higher; average time, sample time and single shot (``avgt``, ``sample``, ``ss``) when lower.
* Sample mode (``sample``) writes no ``rawData`` but ``rawDataHistogram``: per fork, per
  iteration, ``[value, count]`` pairs of the timed invocations.  Each iteration becomes one
  sample, the count-weighted mean of its histogram (the mean time of the invocations it timed);
  the number of invocations timed per iteration is kept in ``params["histogram_counts"]`` and as
  the samples' ``weights`` (stored with the run).  Expanding every invocation would turn a 100 ms
  iteration into thousands of strongly dependent values and would make iterations, not
  invocations, no longer the unit of a sample as in the other modes.  JMH's own score pools every
  timed invocation of every iteration and fork (the weighted mean), so it differs from the plain
  mean of the iteration means that the statistics use wherever the counts differ (a slow
  iteration times fewer invocations); ``regbench summary`` shows both (docs/formats.md).
* JMH's ``forks``, ``warmupIterations`` x ``warmupTime`` and ``measurementTime`` (time-based
  modes: ``thrpt``, ``avgt``, ``sample``) are each fork's :class:`~regbench.model.ToolTiming`:
  one process, the warm-up it ran and did not write, the length of an iteration, which
  ``regbench optimize`` prices the tool's runs with.  Single shot (``ss``) iterations last as
  long as one call, which the file does not say: no timing.
* Each secondary metric (a profiler's ``gc.alloc.rate``, ``@AuxCounters``) is its own benchmark,
  ``NAME [metric]`` (JMH < 1.30 prefixes names with ``·``, which is dropped), mapped the same
  way; it is better when higher only if its unit is an ``ops/TIME`` rate.  A secondary metric
  without numbers per iteration (a profiler's text output) is left out.
* ``params`` of each run keep what JMH says about the whole benchmark: mode, threads, forks,
  iteration counts, JMH's parameters, its score and score error, JMH and JDK versions.

Failures
--------
A benchmark that throws is not in the file at all: JMH prints ``<failure>`` and the exception on
its console, goes on with the next benchmark and exits with status 0 (unless ``-foe true``).
:meth:`JMHAdapter.console_failures` reads them from the console output (standard output): each
``# Benchmark: NAME`` block (with its ``# Parameters: (k = v)``) that holds a ``<failure>`` line,
or a forked VM that failed, is a failure of ``NAME(k=v)``, whose message is the exception, the
first frames of its trace and its ``Caused by:`` lines; its direction comes from ``# Benchmark
mode:``, its unit from an iteration printed before the failure (none when it failed in its first
iteration: the series then keeps the unit it is stored with, or takes its first result's).

The file is decoded one array element at a time (the C JSON scanner) and each benchmark's
numbers become arrays at once, so memory is about the file's text plus the result (a 100 MB
file: see ``benchmarks/bench_adapters.py``); a structural problem is reported at the line where
its benchmark's object starts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

import numpy as np

from ..errors import InputError
from ..model import ToolTiming
from . import jsonsafe
from ._jsonstream import skip_blanks
from .base import Adapter, ToolFailure, ToolRun, anchored_alternation, register, without_metric

#: Modes in which a higher score is better.
HIGHER_MODES = frozenset({"thrpt"})
MODES = frozenset({"thrpt", "avgt", "sample", "ss"})


@register
class JMHAdapter(Adapter):
    """JMH's ``-rf json`` output: one run per fork, one sample per measurement iteration."""

    name = "jmh"
    description = "JMH JSON (-rf json): forks as runs, measurement iterations as samples"
    forks = True
    selection = "JMH's include regex (Java, found in the fully-qualified name): ^(pkg\\.C\\.a|pkg\\.C\\.b)$"

    def selection_unit(self, reported: str) -> str | None:
        # ``pkg.Class.method(size=10, mode=avgt) [gc.alloc.rate]``: JMH's include pattern sees
        # ``pkg.Class.method`` only; its parameters and modes run together.
        name = without_metric(reported)
        return name.split("(", 1)[0] or None

    def render_selection(self, units) -> str:
        return anchored_alternation(units)

    def sniff(self, head: str, path: Path) -> bool:
        text = head.lstrip("\ufeff \t\r\n")
        if not text.startswith("["):
            return False
        return '"primaryMetric"' in text and ('"jmhVersion"' in text or '"benchmark"' in text)

    def console_failures(self, path: Path) -> list[ToolFailure]:
        return _console_failures(path)

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        # Each benchmark's numbers become arrays as soon as it is decoded (its JSON objects are
        # freed); names are final only at the end, when every benchmark's modes are known.
        parsed: list[tuple[dict, list[tuple[str, ToolRun]]]] = []
        modes_of: dict[str, set[str]] = {}
        for obj, line in _iter_entries(path):
            e = _check_entry(obj, where, line)
            base = _name(e["benchmark"], e["params"])
            modes_of.setdefault(base, set()).add(e["mode"])
            runs = [("", r) for r in _metric_runs(base, e["primary"], e, where, secondary=False)]
            for metric, data in e["secondary"].items():
                runs += [(f" [{metric}]", r) for r in _metric_runs(f"{base} [{metric}]", data, e, where,
                                                                  secondary=True)]
            parsed.append(({"benchmark": e["benchmark"], "params": e["params"], "mode": e["mode"]}, runs))
        if not parsed:
            raise InputError("no benchmarks in the file (an empty JSON array)", path=where, line=1)
        out: list[ToolRun] = []
        for e, runs in parsed:
            if len(modes_of[_name(e["benchmark"], e["params"])]) > 1:
                name = _name(e["benchmark"], {**e["params"], "mode": e["mode"]})
                out += [replace(r, benchmark=name + suffix) for suffix, r in runs]
            else:
                out += [r for _, r in runs]
        return out


def _iter_entries(path: Path):
    """Yield ``(object, line)`` for each element of the top-level array, decoded one by one."""
    where = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=where) from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=where) from None

    def fail(msg: str, pos: int) -> NoReturn:
        raise InputError(msg, path=where, line=text.count("\n", 0, pos) + 1)

    pos = skip_blanks(text, 0)
    if pos == len(text):
        fail("empty file (expected JMH's JSON array)", pos)
    if text[pos] != "[":
        if "# JMH version" in text or "Benchmark result is saved to" in text or "# Benchmark: " in text:
            # JMH's console report (a command without `-rf json -rff {output}`, read from stdout).
            fail("not a JMH JSON result but JMH's console report: have JMH write its JSON to the file "
                 "regbench reads (`-rf json -rff {output}` in the command)", pos)
        fail("not a JMH JSON result: expected a JSON array of benchmarks", pos)
    pos = skip_blanks(text, pos + 1)
    line, counted = 1, 0
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            line += text.count("\n", counted, pos)
            counted = pos
            try:
                obj, end = jsonsafe.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
                what = "the file ends in the middle of a benchmark" if cut else exc.msg
                raise InputError(f"not valid JSON: {what}", path=where, line=exc.lineno) from None
            yield obj, line
            pos = skip_blanks(text, end)
            if pos >= len(text):
                fail("the file ends before the closing `]`", pos)
            if text[pos] == "]":
                pos += 1
                break
            if text[pos] != ",":
                fail(f"not valid JSON: expected `,` or `]` after a benchmark, found {text[pos]!r}", pos)
            pos = skip_blanks(text, pos + 1)
    pos = skip_blanks(text, pos)
    if pos < len(text):
        fail("not valid JSON: extra data after the closing `]`", pos)


def _check_entry(obj, where: str, line: int) -> dict:
    """The fields of one benchmark object that the mapping needs, validated."""
    if not isinstance(obj, dict):
        raise InputError("each element of the array must be a JSON object (a JMH benchmark)", path=where, line=line)
    bench = obj.get("benchmark")
    if not isinstance(bench, str) or not bench:
        raise InputError("benchmark without a `benchmark` name", path=where, line=line)

    def bad(msg: str) -> NoReturn:
        raise InputError(f"benchmark {bench!r}: {msg}", path=where, line=line)

    mode = obj.get("mode")
    if mode not in MODES:
        bad(f"`mode` must be one of {', '.join(sorted(MODES))}, got {mode!r}")
    params = obj.get("params") or {}
    if not isinstance(params, dict):
        bad("`params` must be an object")
    primary = obj.get("primaryMetric")
    if not isinstance(primary, dict):
        bad("missing `primaryMetric`")
    secondary = obj.get("secondaryMetrics") or {}
    if not isinstance(secondary, dict):
        bad("`secondaryMetrics` must be an object")
    info = {k: obj[k] for k in ("threads", "forks", "warmupIterations", "measurementIterations",
                                "jmhVersion", "jdkVersion", "vmName", "warmupTime", "measurementTime") if k in obj}
    return {"benchmark": bench, "mode": mode, "params": {str(k): str(v) for k, v in params.items()},
            "primary": primary, "secondary": {str(k).lstrip("\u00b7"): v for k, v in secondary.items()},
            "info": info, "line": line, "timing": _fork_timing(obj, mode)}


#: Seconds per unit of JMH's ``TimeValue`` text (``"200 ms"``, ``"10 s"``, ``"1 min"``).
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "hr": 3600.0,
               "day": 86400.0}


def _seconds(text) -> float | None:
    """JMH's ``TimeValue`` text as seconds; None if it is not one."""
    if not isinstance(text, str):
        return None
    number, _, unit = text.strip().partition(" ")
    try:
        value = float(number) * _TIME_UNITS[unit.strip()]
    except (ValueError, KeyError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _fork_timing(obj: dict, mode: str) -> ToolTiming | None:
    """One fork's :class:`ToolTiming` from a benchmark object: JMH's warm-up iterations times their
    length, and the length of a measured iteration; None in single-shot mode (an iteration lasts
    one call) or when the file does not say them."""
    if mode == "ss":
        return None
    warmups = obj.get("warmupIterations")
    warmup, measured = _seconds(obj.get("warmupTime")), _seconds(obj.get("measurementTime"))
    if (isinstance(warmups, bool) or not isinstance(warmups, int) or warmups < 0 or warmup is None
            or measured is None or measured <= 0):
        return None
    return ToolTiming(processes=1, warmup_seconds=warmups * warmup, iteration_seconds=measured)


def _name(benchmark: str, params: dict) -> str:
    if not params:
        return benchmark
    return benchmark + "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


def _metric_runs(name: str, metric, entry: dict, where: str, *, secondary: bool) -> list[ToolRun]:
    line = entry["line"]
    label = f"benchmark {name!r}"

    def bad(msg: str) -> NoReturn:
        raise InputError(f"{label}: {msg}", path=where, line=line)

    if not isinstance(metric, dict):
        bad("a metric must be a JSON object")
    unit = metric.get("scoreUnit")
    if not isinstance(unit, str) or (not unit and not secondary):
        bad("missing `scoreUnit`")
    if "rawData" in metric:
        forks = _forks(metric["rawData"], bad)
        counts = None
    elif "rawDataHistogram" in metric:
        forks, counts = _histogram_forks(metric["rawDataHistogram"], bad)
    elif secondary:
        return []  # a profiler's text-only result: no numbers per iteration
    else:
        bad("`primaryMetric` has neither `rawData` nor `rawDataHistogram`")
    if secondary:
        if not forks or all(np.isnan(f).all() for f in forks):
            return []
        direction = "higher" if unit.startswith("ops/") else "lower"
    else:
        if not forks:
            bad("`rawData` holds no forks")
        direction = "higher" if entry["mode"] in HIGHER_MODES else "lower"
    runs = []
    base = {"mode": entry["mode"], **entry["info"]}
    if entry["params"]:
        base["params"] = entry["params"]
    for key, out in (("score", "score"), ("scoreError", "score_error")):
        v = metric.get(key)
        if v is not None and jsonsafe.finite_number(v):  # an integer past the float range has no float
            base[out] = float(v)
    for k, samples in enumerate(forks):
        if samples.size == 0:
            bad(f"fork {k} has no measurement iterations")
        if not np.isfinite(samples).all():
            bad(f"fork {k} has a value that is not a finite number")
        if not secondary and (samples < 0).any():
            # Every mode's score is a time or a rate, never below 0 (a secondary metric may be a
            # user's @AuxCounters value, which can be anything).
            bad(f"fork {k} has a negative score ({float(samples.min()):g}): a time or a rate is never below 0")
        params = dict(base)
        weights = None
        if counts is not None:
            params["histogram_counts"] = counts[k]
            weights = np.asarray(counts[k], dtype=np.float64)
        # A secondary metric is measured in its benchmark's forks: their cost is the primary's.
        runs.append(ToolRun(benchmark=name, samples=samples, unit=unit, direction=direction, run=k,
                            warmup=0, params=params, timing=None if secondary else entry["timing"],
                            weights=weights))
    return runs


def _forks(raw, bad: Callable[[str], NoReturn]) -> list[np.ndarray]:
    if not isinstance(raw, list) or not all(isinstance(f, list) for f in raw):
        bad("`rawData` must be a list of forks, each a list of iteration scores")
    out = []
    for k, fork in enumerate(raw):
        # One C call: a list of JSON numbers becomes an int or float array; text, null, lists
        # or objects do not (true/false alone make a bool array, also refused).
        try:
            arr = np.array(fork)
        except ValueError:  # ragged nested lists
            arr = None
        if arr is None or arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iuf"):
            bad(f"`rawData` of fork {k} must be a list of numbers")
        out.append(arr.astype(np.float64, copy=False))
    return out


def _histogram_forks(raw, bad: Callable[[str], NoReturn]) -> tuple[list[np.ndarray], list[list[int]]]:
    """Per fork, the count-weighted mean of each iteration's ``[value, count]`` histogram."""
    if not isinstance(raw, list) or not all(isinstance(f, list) for f in raw):
        bad("`rawDataHistogram` must be a list of forks, each a list of iterations")
    forks, counts = [], []
    for k, fork in enumerate(raw):
        means, ns = [], []
        for i, it in enumerate(fork):
            try:
                pairs = np.array(it, dtype=np.float64)
            except (TypeError, ValueError, OverflowError):  # OverflowError: an integer beyond floats
                pairs = None
            if pairs is None or pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] == 0:
                bad(f"`rawDataHistogram` of fork {k}, iteration {i} must be a non-empty list of "
                    "[value, count] pairs")
            values, weights = pairs[:, 0], pairs[:, 1]
            if (not np.isfinite(weights).all() or (weights < 0).any() or (weights != np.floor(weights)).any()
                    or not 0 < weights.sum() < math.inf):
                bad(f"`rawDataHistogram` of fork {k}, iteration {i}: counts must be non-negative "
                    "integers, not all zero")
            total = float(weights.sum())
            means.append(float(values @ weights) / total if math.isfinite(total) else math.nan)
            ns.append(int(total))
        forks.append(np.array(means, dtype=np.float64))
        counts.append(ns)
    return forks, counts


#: Lines of a failure's message kept: the exception and the first frames of its trace, then its
#: ``Caused by:`` lines, at most ``_FAILURE_LINES`` in all.
_TRACE_HEAD = 6
_FAILURE_LINES = 12
_ITERATION_UNIT = re.compile(r"^(?:# Warmup )?Iteration\s+\d+:\s+[-+0-9.,eE]+\s+(\S+/\S+)\s*$")


def _console_failures(path: Path) -> list[ToolFailure]:
    """The benchmarks JMH's console output (``path``) reports as failed, one per benchmark."""
    found: dict[str, ToolFailure] = {}
    bench = params = unit = None
    direction = "lower"
    message: list[str] | None = None

    def close() -> None:
        nonlocal message
        if message is not None and bench is not None and (name := _name(bench, params or {})) not in found:
            text = "\n".join(message).strip() or "<failure>"
            found[name] = ToolFailure(benchmark=name, message=f"JMH: {name} failed:\n{text}", unit=unit,
                                      direction=direction)
        message = None

    try:
        lines = path.open(encoding="utf-8", errors="replace")
    except OSError:
        return []
    with lines:
        for raw in lines:
            line = raw.rstrip("\r\n")
            if message is not None:  # the exception and its trace, after a `<failure>` line
                if not line.strip():
                    if message:
                        close()
                    continue
                if not line.startswith("# "):
                    # The exception, the head of its trace and its causes: the tail a failed
                    # run keeps is short, and an invocation's may hold several failures.
                    if len(message) < _FAILURE_LINES and (len(message) < _TRACE_HEAD
                                                          or line.startswith("Caused by: ")):
                        message.append(line)
                    continue
                close()
            if line.startswith("# Benchmark: "):
                # ``# Benchmark mode:`` comes before it in each block's header, and stays.
                bench, params, unit = line[len("# Benchmark: "):].strip(), None, None
            elif line.startswith("# Parameters: (") and line.rstrip().endswith(")"):
                inner = line.strip()[len("# Parameters: ("):-1]
                params = dict(p.split(" = ", 1) for p in inner.split(", ") if " = " in p)
            elif line.startswith("# Benchmark mode: "):
                direction = "higher" if line[len("# Benchmark mode: "):].startswith("Throughput") else "lower"
            elif (m := _ITERATION_UNIT.match(line)) is not None:
                unit = m.group(1)
            elif bench is not None and ("<failure>" in line or line.startswith("<forked VM failed")):
                message = [] if "<failure>" in line else [line]
        close()
    return list(found.values())
