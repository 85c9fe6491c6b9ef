"""Criterion.rs results: ``target/criterion/**/new/sample.json`` and the files beside it.

Format
------
``cargo bench`` with Criterion writes, for every benchmark, a directory
``target/criterion/<group>/<function>/<value>/`` whose ``new/`` holds the latest run:

* ``sample.json``: ``{"sampling_mode": "Linear", "iters": [...], "times": [...]}``; sample *i*
  ran the routine ``iters[i]`` times in ``times[i]`` nanoseconds in total;
* ``benchmark.json``: the benchmark's id, ``{"group_id", "function_id", "value_str", "full_id",
  "throughput", ...}``;
* ``estimates.json``: Criterion's own statistics (mean, median, slope, std_dev, median_abs_dev,
  each a point estimate with a confidence interval).

``base/`` (and any other ``--save-baseline`` directory) holds copies of earlier runs and is not
read.

Mapping to runs
---------------
* The input is a directory (``target/criterion`` or any directory under it: every
  ``new/sample.json`` below it is read, in path order) or one ``new/sample.json`` file.
* Each ``sample.json`` is one run (``run`` 0: a Criterion invocation measures a benchmark once,
  in one process); its samples are ``times[i] / iters[i]``, nanoseconds per iteration, lower is
  better, no warm-up (Criterion discards its warm-up and writes none of it).  The unit ``ns``
  assumes Criterion's default wall-clock measurement; a custom ``Measurement`` is not recorded
  in these files.
* The name is ``full_id`` from ``benchmark.json`` (``group/function/value``), else the parts
  it has, else the benchmark's directory relative to the directory given (for a single file,
  the name of the directory holding ``new/``).
* ``params`` keep ``sampling_mode``, the throughput from ``benchmark.json`` and the point
  estimates and 95% intervals from ``estimates.json``.

Every file is read and checked before anything is returned, so a bad file anywhere under the
directory leaves nothing half-imported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import numpy as np

from ..errors import InputError
from . import jsonsafe
from .base import Adapter, ToolRun, anchored_alternation, register

SAMPLE_FILE = "sample.json"
RESULT_DIR = "new"


@register
class CriterionAdapter(Adapter):
    """Criterion.rs ``new/sample.json`` files: one run per benchmark, ns per iteration."""

    name = "criterion"
    min_iterations = 10  # Criterion panics below 10 samples (`assertion failed: num_size >= 10`)
    description = "Criterion.rs target/criterion (new/sample.json): ns per iteration of each sample"
    selection = "cargo bench -- FILTER (Rust regex, found in the benchmark's id): ^(group/f/1|g/h)$"

    def selection_unit(self, reported: str) -> str | None:
        return reported or None  # the id, group/function/value

    def render_selection(self, units) -> str:
        return anchored_alternation(units)

    def sniff(self, head: str, path: Path) -> bool:
        if path.is_dir():
            return _find_samples(path, first_only=True) != []
        text = head.lstrip("\ufeff \t\r\n")
        return (text.startswith("{") and '"sampling_mode"' in text and '"iters"' in text
                and '"times"' in text)

    def parse(self, path: Path) -> list[ToolRun]:
        path = Path(path)
        if path.is_dir():
            files = _find_samples(path)
            if not files:
                raise InputError(f"no Criterion results ({RESULT_DIR}/{SAMPLE_FILE}) under this directory",
                                 path=str(path))
            root = path
        elif path.is_file():
            files, root = [path], None
        else:
            raise InputError("no such file or directory", path=str(path))
        return [_read_benchmark(f, root) for f in files]


def _find_samples(root: Path, *, first_only: bool = False) -> list[Path]:
    found = []
    for f in root.rglob(SAMPLE_FILE):
        if f.parent.name == RESULT_DIR and f.is_file():
            found.append(f)
            if first_only:
                break
    return sorted(found)


def _load_json(path: Path):
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=where) from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=where) from None
    try:
        return jsonsafe.loads(text), text
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "the file ends in the middle of the JSON" if cut else exc.msg
        raise InputError(f"not valid JSON: {what}", path=where, line=exc.lineno) from None


def _read_benchmark(sample_path: Path, root: Path | None) -> ToolRun:
    where = str(sample_path)
    obj, text = _load_json(sample_path)
    # Criterion writes each file on one line: a problem in it is on line 1.
    line = 1 if "\n" not in text.strip() else None

    def bad(msg: str) -> NoReturn:
        raise InputError(msg, path=where, line=line)

    if not isinstance(obj, dict):
        bad("not a Criterion sample.json: expected a JSON object")
    for key in ("iters", "times"):
        if key not in obj:
            bad(f"not a Criterion sample.json: missing `{key}`")
    arrays = {}
    for key in ("iters", "times"):
        v = obj[key]
        if not isinstance(v, list) or not v or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in v):
            bad(f"`{key}` must be a non-empty list of numbers")
        if not all(map(jsonsafe.finite_number, v)):
            bad(f"`{key}` must hold finite numbers")
        arrays[key] = np.asarray(v, dtype=np.float64)
    iters, times = arrays["iters"], arrays["times"]
    if iters.size != times.size:
        bad(f"`iters` has {iters.size} values but `times` has {times.size}")
    if not (np.isfinite(iters).all() and (iters > 0).all()):
        bad("`iters` must hold positive numbers")
    if not (np.isfinite(times).all() and (times >= 0).all()):
        bad("`times` must hold non-negative finite numbers")

    params: dict = {}
    if isinstance(obj.get("sampling_mode"), str):
        params["sampling_mode"] = obj["sampling_mode"]
    name = None
    bench_file = sample_path.with_name("benchmark.json")
    if bench_file.is_file():
        info, _ = _load_json(bench_file)
        if not isinstance(info, dict):
            raise InputError("not a Criterion benchmark.json: expected a JSON object", path=str(bench_file), line=1)
        name = _name_from_info(info)
        if info.get("throughput") is not None:
            params["throughput"] = info["throughput"]
    if name is None:
        bench_dir = sample_path.parent.parent
        if root is not None and bench_dir != root:
            name = bench_dir.relative_to(root).as_posix()
        else:
            name = bench_dir.name
    est_file = sample_path.with_name("estimates.json")
    if est_file.is_file():
        est, _ = _load_json(est_file)
        params.update(_estimates(est, est_file))
    return ToolRun(benchmark=name, samples=times / iters, unit="ns", direction="lower", run=0, warmup=0,
                   params=params)


def _name_from_info(info: dict) -> str | None:
    full = info.get("full_id")
    if isinstance(full, str) and full:
        return full
    parts = [info.get(k) for k in ("group_id", "function_id", "value_str")]
    names = [str(p) for p in parts if p is not None and str(p)]
    return "/".join(names) or None


def _estimates(est, path: Path) -> dict:
    """``{stat: point estimate}`` and ``{stat_ci: [lower, upper]}`` from estimates.json."""
    if not isinstance(est, dict):
        raise InputError("not a Criterion estimates.json: expected a JSON object", path=str(path), line=1)
    out: dict = {}
    for stat, value in est.items():
        if not isinstance(value, dict):
            continue
        point = value.get("point_estimate")
        if isinstance(point, int | float) and not isinstance(point, bool):
            out[stat] = float(point)
        ci = value.get("confidence_interval")
        if isinstance(ci, dict) and {"lower_bound", "upper_bound"} <= set(ci):
            out[f"{stat}_ci"] = [ci["lower_bound"], ci["upper_bound"]]
    return out
