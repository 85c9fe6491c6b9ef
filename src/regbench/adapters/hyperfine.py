"""hyperfine's JSON export (``hyperfine --export-json FILE CMD...``).

The file is ``{"results": [...]}`` with one entry per command: ``command`` (the command line
after parameter substitution, or its ``--command-name``), ``times`` (the wall-clock seconds of
every timed run, warm-up runs excluded), the statistics hyperfine computed over them (``mean``,
``stddev``, ``median``, ``min``, ``max``), ``user`` and ``system`` (the mean CPU seconds in the
versions packaged today; per-run arrays are read too), ``exit_codes`` (one per run; ``null`` for
a run killed by a signal) and, for ``--parameter-scan``/``--parameter-list``, ``parameters``.

Mapping to runs (one invocation of hyperfine is one run, ``run`` 0):

* the benchmark is ``command``; each element of ``times`` is one sample, unit ``s``, lower is
  better;
* ``user``/``system`` given as per-run arrays become ``NAME [user]`` and ``NAME [system]`` (``s``,
  lower), ``memory_usage_byte`` ``NAME [memory_usage_byte]`` (``B``, lower); given as one number
  they are kept in ``params`` with the other statistics and ``parameters``;
* ``exit_codes`` are kept in ``params`` when one of them is not 0 (a run of ``hyperfine -i``);
* the same command given twice gives two runs of one benchmark (``run`` 0 and 1);
* results that share a ``command`` but not their ``parameters`` (``-P n 1 3 -n NAME``: the name
  is the same for every value) are each named with their parameters, ``NAME (n=1)``: they
  measured different things, and were merged into runs of one benchmark (a probe: sleeps of 1, 2
  and 3 ms read as three runs of one, 4.6 ± 4.6 ms).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._jsonstream import iter_top_level, number
from .base import Adapter, ToolRun, register
from .jsonsafe import finite_number

_HEAD = re.compile(r'\A\s*\{\s*"results"\s*:\s*\[\s*(?:\{\s*"command"\s*:|\])')
_PER_RUN = {"user": "s", "system": "s", "memory_usage_byte": "B"}
_STATS = ("mean", "stddev", "median", "min", "max")


@register
class HyperfineAdapter(Adapter):
    name = "hyperfine"
    description = "hyperfine --export-json; each timed run of a command is a sample"

    def sniff(self, head: str, path: Path) -> bool:
        return bool(_HEAD.match(head))

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        runs: list[ToolRun] = []
        seen: dict[str, int] = {}
        found = False
        entries = []
        for key, line, entry, is_element in iter_top_level(path, ("results",)):
            if key != "results":
                continue
            if not is_element:
                raise InputError("`results` is not an array", path=where, line=line)
            found = True
            entries.append((line, entry))
        # A file holds one entry per command run (small): read whole, so that names shared by
        # results of different parameters are told apart before any is named.
        kinds: dict[str, set[str]] = {}
        for _, entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                kinds.setdefault(entry["command"], set()).add(_parameters_label(entry))
        for line, entry in entries:
            shared = isinstance(entry, dict) and len(kinds.get(str(entry.get("command")), ())) > 1
            runs.extend(_runs_of(entry, where, line, seen, qualify=shared))
        if not found:
            raise InputError("no results (the `results` array is missing or empty)", path=where)
        return runs


def _parameters_label(entry: dict) -> str:
    """``n=1, m=a``: an entry's ``parameters`` (empty without any)."""
    parameters = entry.get("parameters")
    if not isinstance(parameters, dict):
        return ""
    return ", ".join(f"{k}={v}" for k, v in parameters.items())


def _runs_of(entry, where: str, line: int, seen: dict[str, int], *, qualify: bool = False) -> list[ToolRun]:
    def error(message: str) -> InputError:
        return InputError(f"result: {message}", path=where, line=line)

    if not isinstance(entry, dict):
        raise error(f"expected an object, found {type(entry).__name__}")
    name = entry.get("command")
    if not isinstance(name, str) or not name:
        raise error("`command` is missing or not a string")
    if qualify and _parameters_label(entry):
        name = f"{name} ({_parameters_label(entry)})"
    if entry.get("times") is None:
        raise error(f"`times` of {name!r} is missing")
    times = _numbers(entry["times"], "times", error, name)
    if not times.size:
        raise error(f"`times` of {name!r} is empty")
    run = seen[name] = seen.get(name, -1) + 1
    params: dict = {}
    for key in _STATS:
        value = number(entry, key, error, required=False)
        if value is not None:
            params[key] = value
    if isinstance(entry.get("parameters"), dict):
        params["parameters"] = entry["parameters"]
    codes = entry.get("exit_codes")
    if codes is not None:
        if not isinstance(codes, list) or not all(c is None or (isinstance(c, int) and not isinstance(c, bool))
                                                  for c in codes):
            raise error(f"`exit_codes` of {name!r} is not a list of integers")
        if any(c != 0 for c in codes):
            params["exit_codes"] = codes
    extra = []
    for key, unit in _PER_RUN.items():
        value = entry.get(key)
        if isinstance(value, list):
            values = _numbers(value, key, error, name)
            if values.size != times.size:
                raise error(f"`{key}` of {name!r} has {values.size} values, `times` {times.size}")
            extra.append(ToolRun(f"{name} [{key}]", values, unit, "lower", run=run, params=params))
        elif value is not None:
            params[key] = number(entry, key, error)
    return [ToolRun(name, times, "s", "lower", run=run, params=params), *extra]


def _numbers(values: object, key: str, error: Callable[[str], InputError], name: str) -> np.ndarray:
    """``values`` (the field ``key`` of command ``name``) as an array of finite numbers."""
    if not isinstance(values, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise error(f"`{key}` of {name!r} is not a list of numbers")
    if not all(map(finite_number, values)):
        raise error(f"`{key}` of {name!r} holds a value that is not finite")
    out = np.asarray(values, dtype=np.float64)
    return out
