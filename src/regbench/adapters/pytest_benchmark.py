"""pytest-benchmark's JSON (``pytest --benchmark-json FILE``, or a saved run with ``--benchmark-save-data``).

Format
------
One JSON object; ``benchmarks`` holds one object per benchmarked test::

    {"machine_info": {...}, "commit_info": {...},
     "benchmarks": [{"name": "test_sorted[10]", "fullname": "tests/test_x.py::test_sorted[10]",
                     "params": {"n": 10}, "param": "10", "group": null, "extra_info": {},
                     "options": {...},
                     "stats": {"min": ..., "mean": ..., "rounds": 6, "iterations": 10,
                               "data": [2.1e-06, 2.0e-06, ...]}}],
     "datetime": "...", "version": "5.3.1"}

``stats.data`` holds one value per *round*: the round's time divided by its ``iterations``
(seconds per call).  ``--benchmark-json`` always writes it; files saved with
``--benchmark-save``/``--benchmark-autosave`` have it only with ``--benchmark-save-data``.

Mapping to runs
---------------
* The file is one run of every benchmark (one ``pytest`` invocation, ``run`` 0); its rounds, in
  order, are the samples, in seconds (``s``, lower is better).  pytest-benchmark does not record
  its warm-up rounds, so ``warmup`` is 0.  A test that appears twice (unusual) gets runs 0, 1, ...
* The benchmark's name is ``fullname`` (``path::test[param]``), which is unique within a session.
* ``params`` of the run: pytest's parameters (``{"n": 10}``) as they are, plus what the tool
  says about the whole benchmark under dotted keys that cannot clash with a parameter name:
  ``stats.rounds``, ``stats.iterations``, ``stats.mean``, ``group``, ``extra_info``.
* A benchmark without ``stats.data`` (a file saved without ``--benchmark-save-data``) is an
  error, not an import of the aggregates: regbench's statistics need every round (seed 000
  s.2), and a mean and a standard deviation cannot be turned back into samples.  The message
  says to re-run with ``--benchmark-save-data`` (or to use ``--benchmark-json``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import _jsontext
from .base import Adapter, ToolRun, register

_START = re.compile(r'\A\s*\{\s*"(?:machine_info|commit_info|benchmarks)"\s*:')
#: A word of a ``pytest -k`` expression (``_pytest.mark.expression``'s ``ident``), not a keyword.
_K_IDENT = re.compile(r"[\w:+\-.\[\]\\/]+")
_K_KEYWORDS = frozenset({"and", "or", "not"})


@register
class PytestBenchmarkAdapter(Adapter):
    name = "pytest-benchmark"
    description = "pytest-benchmark --benchmark-json (or a run saved with --benchmark-save-data)"
    selection = "pytest -k (substrings of the module, class and test names): (test_x.py and test_a) or ..."

    def selection_unit(self, reported: str) -> str | None:
        # ``tests/test_x.py::TestC::test_sorted[10]``: a test function with all its parameters
        # (a -k expression cannot name one parametrization exactly), written as the module's
        # file name, class and function, which -k matches (as substrings, case aside).
        base = reported.split("[", 1)[0]
        path, *names = base.split("::")
        words = [path.rsplit("/", 1)[-1], *names]
        if not names or not all(_K_IDENT.fullmatch(w) and w.lower() not in _K_KEYWORDS for w in words):
            return None
        return "::".join([path, *names])

    def render_selection(self, units) -> str:
        terms = []
        for unit in units:
            path, *names = unit.split("::")
            terms.append("(" + " and ".join([path.rsplit("/", 1)[-1], *names]) + ")")
        return " or ".join(terms)

    def sniff(self, head: str, path: Path) -> bool:
        return bool(_START.match(head)) and '"machine_info"' in head and '"commit_info"' in head

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        doc, text = _jsontext.load(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            raise InputError("not a pytest-benchmark file: expected a JSON object with a "
                             "`benchmarks` array", path=where, line=1)
        if not doc["benchmarks"]:
            raise InputError("no benchmarks in the file", path=where, line=1)
        runs: list[ToolRun] = []
        seen: dict[str, int] = {}
        for k, bench in enumerate(doc["benchmarks"]):
            name = (bench.get("fullname") or bench.get("name")) if isinstance(bench, dict) else None
            line = _jsontext.line_of(text, name) if isinstance(name, str) else None

            def error(message: str, line=line) -> InputError:
                return InputError(message, path=where, line=line)

            if not isinstance(name, str) or not name:
                raise error(f"benchmark #{k + 1} has no `fullname`")
            stats = bench.get("stats")
            if not isinstance(stats, dict):
                raise error(f"benchmark {name!r} has no `stats` object")
            data = stats.get("data")
            if data is None:
                raise error(f"benchmark {name!r} has only aggregate statistics, no timing of each "
                            "round (`stats.data`): regbench keeps raw samples; re-run pytest with "
                            "--benchmark-save-data, or write the file with --benchmark-json")
            if not isinstance(data, list) or not data:
                raise error(f"benchmark {name!r}: `stats.data` must be a non-empty array of numbers")
            bad = [v for v in data if not _jsontext.finite(v)]
            if bad:
                raise error(f"benchmark {name!r}: `stats.data` holds {bad[0]!r}, not a finite number")
            params: dict = {}
            if isinstance(bench.get("params"), dict):
                params.update(bench["params"])
            for key in ("rounds", "iterations", "mean"):
                if key in stats:
                    params[f"stats.{key}"] = stats[key]
            for key in ("group", "extra_info"):
                if bench.get(key):
                    params[key] = bench[key]
            run = seen.get(name, 0)
            seen[name] = run + 1
            runs.append(ToolRun(benchmark=name, samples=np.asarray(data, dtype=np.float64), unit="s",
                                direction="lower", run=run, warmup=0, params=params))
        return runs

