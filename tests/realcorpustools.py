"""Hand-made corpora of real measurements for the tests (regbench.evaluate.real's folder layout)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

HEADER = {"format_version": 1, "warmup": 2, "iterations": 5, "runs": 3, "unit": "s", "direction": "lower",
          "versions": 22, "seed": 0, "started": "2026-11-25T00:50:41+00:00", "machine": {"hostname": "box"}}
N = 22


def default_plans() -> list[dict]:
    """A quiet series, a +20% step at v10 and a creep of 4 x 1% from v08, over 22 versions."""
    step = [1.0] * 10 + [1.2] * 12
    creep = [1.0] * 8 + [1.01 ** min(v - 7, 4) for v in range(8, N)]
    return [
        {"series": "loop/quiet", "program": "loop", "kind": "quiet", "ratios": [1.0] * N, "changes": []},
        {"series": "loop/step", "program": "loop", "kind": "step", "ratios": step,
         "changes": [{"index": 10, "end_index": 10, "magnitude": 0.2, "shape": "step"}]},
        {"series": "loop/creep", "program": "loop", "kind": "creep", "ratios": creep,
         "changes": [{"index": 8, "end_index": 11, "magnitude": round(1.01 ** 4 - 1, 10), "shape": "creep"}]},
    ]


def sample_rows(plans, *, skip=()) -> list[str]:
    """CSV rows: warm-up iterations at 100 (so that a warm-up left in shows), measured ones at
    the work ratio with 0.1% noise."""
    rng = np.random.default_rng(0)
    rows = ["benchmark,version,run,iteration,value"]
    for p in plans:
        for v, ratio in enumerate(p["ratios"]):
            for r in range(HEADER["runs"]):
                if (p["series"], v, r) in skip:
                    continue
                for i in range(HEADER["warmup"] + HEADER["iterations"]):
                    value = 100.0 if i < HEADER["warmup"] else ratio * (1 + rng.normal(0, 0.001))
                    rows.append(f"{p['series']},v{v:02d},{r},{i},{value:.7g}")
    return rows


def write_corpus(folder: Path, *, header=None, plans=None, rows=None, truth_lines=None) -> Path:
    """``samples.csv.gz`` and ``truth.jsonl`` in ``folder``: of :func:`default_plans` and their :func:`sample_rows`
    unless given (``truth_lines`` replaces the whole truth file)."""
    folder.mkdir(parents=True, exist_ok=True)
    series = default_plans() if plans is None else plans
    lines = sample_rows(series) if rows is None else rows
    with gzip.open(folder / "samples.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    if truth_lines is None:
        truth_lines = [json.dumps(HEADER if header is None else header)] + [json.dumps(p) for p in series]
    (folder / "truth.jsonl").write_text("\n".join(truth_lines) + "\n", encoding="utf-8")
    return folder
