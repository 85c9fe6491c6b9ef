"""Bencher Metric Format (BMF) JSON, the interchange format of https://bencher.dev.

Format
------
One JSON object: benchmark name -> measure -> metric; a metric has a ``value`` and optionally
``lower_value`` and ``upper_value`` (bounds the producing tool computed)::

    {"sort/1000": {"latency": {"value": 5120.0, "lower_value": 5001.5, "upper_value": 5240.2},
                   "throughput": {"value": 195312.5}},
     "my_binary": {"file-size": {"value": 1048576}}}

Mapping to runs
---------------
* A BMF file carries one value per benchmark and measure, so the file is one run (``run`` 0)
  and each benchmark x measure is one benchmark with a single sample, ``value``.  Replication
  needs several files (one per repetition of the benchmark command).
* Names: the ``latency`` measure keeps the benchmark's name as it is; any other measure is
  ``NAME [measure]`` (the secondary-metric convention of the other adapters).
* Units and directions of Bencher's built-in measures: ``latency`` ns, lower is better;
  ``throughput`` ops/s, higher is better; ``build-time`` s and ``file-size`` B, lower is
  better.  BMF does not carry the unit of any other measure: the measure's name is used as the
  unit and lower is better.
* ``lower_value`` and ``upper_value`` are kept in ``params`` for people, not as samples.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import _jsontext
from .base import Adapter, ToolRun, register

#: Bencher's built-in measures: slug -> (unit, direction).
MEASURES = {
    "latency": ("ns", "lower"),
    "throughput": ("ops/s", "higher"),
    "build-time": ("s", "lower"),
    "file-size": ("B", "lower"),
}
_STR = r'"(?:[^"\\]|\\.)*"'
_START = re.compile(rf'\A\s*\{{\s*{_STR}\s*:\s*\{{\s*{_STR}\s*:\s*\{{\s*"(?:value|lower_value|upper_value)"\s*:')


@register
class BmfAdapter(Adapter):
    name = "bmf"
    description = "Bencher Metric Format JSON ({benchmark: {measure: {value, lower_value, upper_value}}})"

    def sniff(self, head: str, path: Path) -> bool:
        return bool(_START.match(head))

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        doc, text = _jsontext.load(path)
        if not isinstance(doc, dict):
            raise InputError("not a BMF file: expected a JSON object {benchmark: {measure: {value: ...}}}",
                             path=where, line=1)
        if not doc:
            raise InputError("no benchmarks in the file", path=where, line=1)
        runs: list[ToolRun] = []
        for bench, measures in doc.items():
            line = _jsontext.line_of(text, bench)
            if not bench:
                raise InputError("a benchmark name is empty", path=where, line=line)
            if not isinstance(measures, dict) or not measures:
                raise InputError(f"benchmark {bench!r} must be an object of measures", path=where, line=line)
            for measure, metric in measures.items():
                what = f"benchmark {bench!r}, measure {measure!r}"
                if not isinstance(metric, dict) or "value" not in metric:
                    raise InputError(f"{what}: expected an object with `value`", path=where, line=line)
                for key in ("value", "lower_value", "upper_value"):
                    if key in metric and not _jsontext.finite(metric[key]):
                        raise InputError(f"{what}: `{key}` must be a finite number, got {metric[key]!r}",
                                         path=where, line=line)
                unit, direction = MEASURES.get(measure, (measure, "lower"))
                name = bench if measure == "latency" else f"{bench} [{measure}]"
                params = {k: metric[k] for k in ("lower_value", "upper_value") if k in metric}
                runs.append(ToolRun(benchmark=name, samples=np.array([metric["value"]], dtype=np.float64),
                                    unit=unit, direction=direction, run=0, warmup=0, params=params))
        return runs
