"""A JMH score below 0 is a broken file, not a measurement (a probe: a hand-edited result with a
negative primary score was imported and analysed); a secondary metric may be a user's
@AuxCounters value, which can be below 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regbench.adapters import jmh  # noqa: F401  (register the adapter)
from regbench.adapters.base import get_adapter
from regbench.errors import InputError

THRPT = Path(__file__).parent / "golden" / "adapters" / "jmh" / "thrpt_avgt_gc.json"


def edited(tmp_path: Path, edit) -> Path:
    doc = json.loads(THRPT.read_text())
    edit(doc)
    path = tmp_path / "jmh.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_negative_primary_score_is_refused_naming_the_benchmark_and_fork(tmp_path):
    def negative(doc):
        doc[0]["primaryMetric"]["rawData"][1][2] = -3.5

    with pytest.raises(InputError) as err:
        get_adapter("jmh").parse(edited(tmp_path, negative))
    text = str(err.value)
    assert "fork 1 has a negative score (-3.5)" in text and doc_name(THRPT) in text


def test_a_negative_secondary_metric_is_kept(tmp_path):
    def negative(doc):
        name, metric = next((k, m) for e in doc for k, m in e.get("secondaryMetrics", {}).items() if m.get("rawData"))
        metric["rawData"][0][0] = -1.0
        return name

    runs = get_adapter("jmh").parse(edited(tmp_path, negative))
    assert min(float(r.samples.min()) for r in runs) == -1.0


def doc_name(path: Path) -> str:
    """The first benchmark's name in a JMH file, as the error names it."""
    return json.loads(path.read_text())[0]["benchmark"]
