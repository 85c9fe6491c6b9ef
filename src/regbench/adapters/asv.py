"""asv (airspeed velocity) result files, ``.asv/results/<machine>/<commit>-<env>.json``.

Format
------
Version 2 of asv's result file (asv >= 0.5): one JSON object; ``results`` maps each benchmark to
a row whose cells are named by ``result_columns`` (trailing empty cells are left out)::

    {"commit_hash": "45ec74d0...", "env_name": "existing-py_...", "version": 2,
     "result_columns": ["result", "params", "version", "started_at", "duration",
                        "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75",
                        "stats_number", "stats_repeat", "samples", "profile"],
     "results": {"bench.TimeSorted.time_sorted":
                     [[8.0e-07, 8.1e-07, 9.9e-06, 9.8e-06],        # result: one per combination
                      [["10", "1000"], ["'list'", "'tuple'"]],      # params: repr() of values
                      "b514...", 1795316141220, 1.87, ..., [20, 20, 20, 20], [10, 10, 10, 10],
                      [[1.1e-06, 7.6e-07, ...], ...]],              # samples (--record-samples)
                 "bench.track_answer": [[42], [], "be1f...", 1795316142643, 0.24]}}

``result``, ``samples`` and the ``stats_*`` columns hold one entry per combination of the
parameters, in ``itertools.product`` order.  ``results/benchmarks.json`` (next to the machine
directories) describes each benchmark: ``type``, ``unit`` and ``param_names``.

Mapping to runs
---------------
* Each benchmark x parameter combination is one benchmark with one run (``run`` 0): asv
  concatenates the samples of its worker processes without recording which process took which,
  so the processes cannot be told apart.  The samples are the combination's ``samples`` (time
  per call for ``time_`` benchmarks), ``warmup`` 0 (asv does not record warm-up).
* A combination that asv measured once, without statistics (``track_``, ``mem_``, ``peakmem_``
  benchmarks: their single value is the measurement), is one run of one sample, its ``result``.
* A combination with statistics but no ``samples`` (asv's default, without
  ``--record-samples``) is an error rather than an import of the median: regbench keeps raw
  samples (seed 000 s.2) and a median with a confidence interval cannot be turned back into
  samples.  The message says to re-run with ``asv run --record-samples``.
* A combination asv could not measure (``result`` null or NaN: failed or skipped) is left out.
* Names: the benchmark's name, followed for a parametrized one by its parameters with asv's
  ``repr`` of each value, ``bench.TimeSorted.time_sorted(n=10, kind='list')``.  Parameter names
  come from ``benchmarks.json`` two directories up when it exists; otherwise asv's own default
  names ``param1``, ``param2``, ... are used (so keep the results directory together to get the
  real names).
* Units come from ``benchmarks.json`` (``seconds`` written ``s``, ``bytes`` written ``B``, a
  ``track_`` benchmark's own ``unit``) or, without it, from asv's name prefixes (``time_`` s,
  ``mem_``/``peakmem_`` B, ``track_`` ``unit``).  Lower is better (asv's only direction).
* The commit hash and environment name are kept in ``params`` for people only: the version
  comes from the caller (``regbench import --version``).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np

from ..errors import InputError, shown
from . import _jsontext
from .base import Adapter, ToolRun, register

UNITS = {"seconds": "s", "bytes": "B"}
_PREFIX_UNITS = (("timeraw_", "s"), ("time_", "s"), ("peakmem_", "B"), ("mem_", "B"), ("track_", "unit"))
_STATS = ("stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number", "stats_repeat")


@register
class AsvAdapter(Adapter):
    name = "asv"
    description = "asv result file (.asv/results/MACHINE/COMMIT-ENV.json, format version 2)"

    def sniff(self, head: str, path: Path) -> bool:
        return (head.lstrip().startswith("{") and '"result_columns"' in head
                and '"commit_hash"' in head and '"results"' in head)

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        doc, text = _jsontext.load(path)

        def error(message: str, line: int | None = 1) -> InputError:
            return InputError(message, path=where, line=line)

        if not isinstance(doc, dict):
            raise error("not an asv result file: expected a JSON object")
        if "result_columns" not in doc or "results" not in doc:
            hint = ""
            if path.name in ("benchmarks.json", "machine.json"):
                hint = f" ({path.name} describes the {path.stem}; give a COMMIT-ENV.json file next to it)"
            elif "results" in doc:
                hint = " (an asv result file of format version 1: re-run with asv >= 0.5)"
            raise error("not an asv result file of format version 2: no `result_columns`" + hint)
        if doc.get("version") != 2:
            raise error(f"unsupported asv result format version {doc.get('version')!r} (expected 2)")
        columns, results = doc["result_columns"], doc["results"]
        if (not isinstance(columns, list) or not all(isinstance(c, str) for c in columns) or "result" not in columns
                or not isinstance(results, dict)):
            raise error("`result_columns` must list the columns' names (strings), with `result`, and `results` "
                        "be an object")
        described = _benchmarks_json(path)
        info = {key: doc[key] for key in ("commit_hash", "env_name") if isinstance(doc.get(key), str)}
        runs: list[ToolRun] = []
        for name, row in results.items():
            line = _jsontext.line_of(text, name)
            if not isinstance(row, list) or len(row) > len(columns):
                raise error(f"benchmark {name!r}: its row must be an array of at most {len(columns)} cells", line)
            cell = dict(zip(columns, row, strict=False))
            runs.extend(_runs_of(name, cell, described.get(name), info, lambda m, line=line: error(m, line)))
        if not runs:
            raise error("no measured benchmark in the file (every result is missing or failed)")
        return runs


def _benchmarks_json(path: Path) -> dict:
    """``results/benchmarks.json`` of the results directory holding ``path``, or {} without one."""
    candidate = path.resolve().parent.parent / "benchmarks.json"
    if not candidate.is_file():
        return {}
    doc, _ = _jsontext.load(candidate)
    return {k: v for k, v in doc.items() if isinstance(v, dict)} if isinstance(doc, dict) else {}


def _unit(name: str, described: dict | None) -> str:
    if described and isinstance(described.get("unit"), str):
        return UNITS.get(described["unit"], described["unit"])
    leaf = name.rsplit(".", 1)[-1]
    return next((unit for prefix, unit in _PREFIX_UNITS if leaf.startswith(prefix)), "unit")


def _runs_of(name: str, cell: dict, described: dict | None, info: dict, error) -> list[ToolRun]:
    result, params = cell.get("result"), cell.get("params") or []
    if not isinstance(params, list) or any(not isinstance(p, list) for p in params):
        raise error(f"benchmark {name!r}: `params` must be an array of arrays of values")
    n_combos = math.prod(len(p) for p in params)  # before making them: a hostile file may ask for 10^30
    if not isinstance(result, list) or len(result) != n_combos:
        raise error(f"benchmark {name!r}: `result` must hold one value per parameter combination "
                    f"({n_combos})")
    combos = list(itertools.product(*params)) if params else [()]
    names = (described or {}).get("param_names")
    if not isinstance(names, list) or len(names) != len(params):
        names = [f"param{j + 1}" for j in range(len(params))]
    samples = cell.get("samples")
    if samples is not None and (not isinstance(samples, list) or len(samples) != len(combos)):
        raise error(f"benchmark {name!r}: `samples` must hold one array per parameter combination")
    has_stats = any(cell.get(c) is not None for c in _STATS)
    unit = _unit(name, described)
    runs = []
    for i, combo in enumerate(combos):
        full = name if not combo else f"{name}({', '.join(f'{n}={v}' for n, v in zip(names, combo, strict=True))})"
        value = result[i]
        raw = samples[i] if samples is not None else None
        if raw:
            values = raw
        elif value is None or (isinstance(value, float) and math.isnan(value)):
            continue  # failed or skipped: asv measured nothing
        elif has_stats:
            raise error(f"benchmark {full!r} has only statistics, no raw samples: regbench keeps raw "
                        "samples; re-run with `asv run --record-samples`")
        else:
            values = [value]
        if not isinstance(values, list) or any(not _jsontext.finite(v) for v in values):
            raise error(f"benchmark {full!r}: samples must be finite numbers, got {shown(values)}")
        extra = dict(info)
        extra.update({n: v for n, v in zip(names, combo, strict=True)})
        extra["result"] = value
        for col, key in (("stats_number", "number"), ("stats_repeat", "repeat")):
            if isinstance(cell.get(col), list) and i < len(cell[col]):
                extra[key] = cell[col][i]
        runs.append(ToolRun(benchmark=full, samples=np.asarray(values, dtype=np.float64), unit=unit,
                            direction="lower", run=0, warmup=0, params=extra))
    return runs


