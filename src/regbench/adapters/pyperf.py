"""pyperf's JSON result file (``python bench.py -o FILE.json``, ``python -m pyperf timeit -o ...``).

Format
------
One JSON object (gzip-compressed when the name ends in ``.gz``); metadata common to every
benchmark is factored out to the top level::

    {"benchmarks": [{"metadata": {"name": "sorted_1000", "loops": 128},
                     "runs": [{"metadata": {"calibrate_loops": 128, ...},
                               "warmups": [[1, 9.3e-06], [2, 6.4e-06], ...]},
                              {"metadata": {...}, "warmups": [[128, 6.2e-06]],
                               "values": [6.0e-06, 6.0e-06, 5.8e-06]}]}],
     "metadata": {"unit": "second", "perf_version": "2.10.0", ...}, "version": "1.0"}

Each run is one worker process; ``values`` and the second element of each ``warmups`` pair
``[loops, value]`` are already divided by the number of loops (time per loop).

Mapping to runs
---------------
* Each pyperf **run** (worker process) with ``values`` is one regbench run, numbered from 0 in
  file order.  Calibration runs (only ``warmups``, no ``values``: pyperf computing the number
  of loops) measure with changing loop counts and are skipped.
* Samples are the run's warm-up values followed by its values; ``warmup`` is the number of
  warm-ups, so analyses leave them out but they are kept (the ToolRun contract: every value the
  tool reported).
* The benchmark's name is its ``name`` metadata; the unit its ``unit`` metadata (benchmark or
  top level, default ``second``), written ``s`` for ``second`` and ``B`` for ``byte``
  (``--track-memory``); lower is better for every pyperf unit.
* ``params`` of a run: the benchmark's own metadata (not the top-level, machine-wide one)
  except ``name`` and ``unit``, and the run's ``loops``/``inner_loops`` when the run has them.
* A benchmark with no run holding values is an error (nothing would be imported for it).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import _jsontext
from .base import SNIFF_BYTES, Adapter, ToolRun, register

_START = re.compile(r'\A\s*\{\s*"benchmarks"\s*:\s*\[\s*\{\s*"(?:metadata|runs)"\s*:')
UNITS = {"second": "s", "byte": "B"}


@register
class PyperfAdapter(Adapter):
    name = "pyperf"
    description = "pyperf JSON (-o FILE.json, or FILE.json.gz)"

    def sniff(self, head: str, path: Path) -> bool:
        return bool(_START.match(_jsontext.read_head(head, path, SNIFF_BYTES)))

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        doc, text = _jsontext.load(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            raise InputError("not a pyperf file: expected a JSON object with a `benchmarks` array",
                             path=where, line=1)
        version = doc.get("version")
        if not isinstance(version, str) or not version.startswith("1."):
            raise InputError(f"unsupported pyperf file format version {version!r} (expected 1.x)",
                             path=where, line=_jsontext.line_of(text, "version"))
        common = doc.get("metadata") or {}
        if not isinstance(common, dict):
            raise InputError("`metadata` must be an object", path=where, line=_jsontext.line_of(text, "metadata"))
        if not doc["benchmarks"]:
            raise InputError("no benchmarks in the file", path=where, line=1)
        result: list[ToolRun] = []
        for k, bench in enumerate(doc["benchmarks"]):
            own = (bench.get("metadata") or {}) if isinstance(bench, dict) else None
            if not isinstance(own, dict):
                raise InputError(f"benchmark #{k + 1} is not an object with a `metadata` object", path=where)
            meta = {**common, **own}
            name = meta.get("name")
            line = _jsontext.line_of(text, name) if isinstance(name, str) else None

            def error(message: str, line=line) -> InputError:
                return InputError(message, path=where, line=line)

            if not isinstance(name, str) or not name:
                raise error(f"benchmark #{k + 1} has no `name` metadata")
            runs = bench.get("runs")
            if not isinstance(runs, list):
                raise error(f"benchmark {name!r} has no `runs` array")
            unit = meta.get("unit", "second")
            if not isinstance(unit, str):
                raise error(f"benchmark {name!r}: `unit` must be a string, got {unit!r}")
            base = {key: v for key, v in own.items() if key not in ("name", "unit")}
            n_before = len(result)
            index = sum(1 for r in result if r.benchmark == name)  # a name repeated by --append
            for j, run in enumerate(runs):
                if not isinstance(run, dict):
                    raise error(f"benchmark {name!r}: run #{j + 1} is not an object")
                values = run.get("values")
                if not values:  # a calibration run
                    continue
                warmups = run.get("warmups") or []
                if not isinstance(values, list) or not isinstance(warmups, list):
                    raise error(f"benchmark {name!r}: run #{j + 1}: `values` and `warmups` must be arrays")
                if any(not (isinstance(w, list) and len(w) == 2) for w in warmups):
                    raise error(f"benchmark {name!r}: run #{j + 1}: each warm-up must be a [loops, value] pair")
                samples = [w[1] for w in warmups] + values
                bad = [v for v in samples if not _jsontext.finite(v)]
                if bad:
                    raise error(f"benchmark {name!r}: run #{j + 1} holds {bad[0]!r}, not a finite number")
                params = dict(base)
                run_meta = run.get("metadata")
                if not isinstance(run_meta, dict):
                    run_meta = {}
                for key in ("loops", "inner_loops"):
                    if key in run_meta:
                        params[key] = run_meta[key]
                result.append(ToolRun(benchmark=name, samples=np.asarray(samples, dtype=np.float64),
                                      unit=UNITS.get(unit, unit), direction="lower", run=index,
                                      warmup=len(warmups), params=params))
                index += 1
            if len(result) == n_before:
                raise error(f"benchmark {name!r} has no run with values (only calibration runs)")
        return result
