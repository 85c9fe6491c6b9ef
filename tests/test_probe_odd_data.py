"""Odd data a probe fed regbench: metrics that can be negative (``compare``'s direction and gate),
series ``detect`` cannot search (and must say so), a byte-order mark on an imported file, an
ambiguous order of versions without timestamps, and the words of ``diagnose`` on degenerate data."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _store(path, levels: dict[str, tuple[list[float], str]], *, runs: int = 5, iters: int = 10, sd: float = 0.5,
           seed: int = 1):
    """A store of benchmarks ``name -> (level per version, direction)``, additive normal noise."""
    rng = np.random.default_rng(seed)
    records, versions, info = [], [], {}
    n = max(len(lv) for lv, _ in levels.values())
    versions = [VersionInfo(f"v{k}", timestamp=T0 + timedelta(hours=k)) for k in range(n)]
    for name, (lv, direction) in levels.items():
        info[name] = {"unit": "ms", "direction": direction}
        for k, level in enumerate(lv):
            records += [RunRecord(name, f"v{k}", r, level + sd * rng.standard_normal(iters)) for r in range(runs)]
    with Store(path) as store:
        store.add_runs(records, versions=versions, benchmarks=info)
    return path


# ----------------------------------------------------------------------- compare: signed metrics
@pytest.fixture(scope="module")
def signed_store(tmp_path_factory):
    """Each B is worse than A by its direction: a delta crossing 0, a delta below 0 rising, a
    higher-is-better score below 0 falling; and a delta that does not move."""
    return _store(tmp_path_factory.mktemp("signed") / "r.db",
                  {"delta_cross": ([-5.0, 5.0], "lower"), "delta_neg": ([-10.0, -5.0], "lower"),
                   "score_neg": ([-10.0, -20.0], "higher"), "delta_flat": ([-3.0, -3.0], "lower")})


def test_compare_judges_a_metric_below_zero_by_its_difference_and_gates_on_it(signed_store, capsys):
    status = main(["--store", str(signed_store), "compare", "v0", "v1", "--format", "json"])
    rows = {r["benchmark"]: r for r in json.loads(capsys.readouterr().out)}
    assert status == 1
    for name, diff in (("delta_cross", 10.0), ("delta_neg", 5.0), ("score_neg", -10.0)):
        r = rows[name]
        assert r["verdict"] == "regression", name
        assert r["scale"] == "difference"
        # change is B - A in the unit, with an interval around it
        assert r["ci_low"] < r["change"] < r["ci_high"]
        assert abs(r["change"] - diff) < 0.5
        assert r["change"] == pytest.approx(r["mean_b"] - r["mean_a"])
    assert rows["delta_flat"]["verdict"] == "no change" and rows["delta_flat"]["scale"] == "difference"


def test_compare_table_shows_a_difference_in_the_unit_and_says_why(signed_store, capsys):
    assert main(["--store", str(signed_store), "compare", "v0", "v1", "--benchmark", "delta_cross"]) == 1
    out = capsys.readouterr().out
    assert "%" not in out.split("\n")[-3]  # the row: no percentage
    assert "+9.9" in out and " ms" in out and "regression" in out
    assert "B - A in the benchmark's unit" in out


def test_compare_threshold_of_a_difference_is_taken_of_a_size(signed_store, capsys):
    # -10 -> -5 is a rise of 5, half of A's size: a 60% threshold lets it pass, 40% does not
    assert main(["--store", str(signed_store), "compare", "v0", "v1", "--benchmark", "delta_neg",
                 "--threshold", "0.6", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["verdict"] == "no change"
    assert main(["--store", str(signed_store), "compare", "v0", "v1", "--benchmark", "delta_neg",
                 "--threshold", "0.4", "--format", "json"]) == 1
    capsys.readouterr()


def test_compare_of_times_above_zero_stays_relative(tmp_path, capsys):
    path = _store(tmp_path / "r.db", {"t": ([10.0, 11.0], "lower")}, sd=0.1)
    assert main(["--store", str(path), "compare", "v0", "v1", "--format", "json"]) == 1
    r = json.loads(capsys.readouterr().out)[0]
    assert r["scale"] == "relative" and 0.09 < r["change"] < 0.11
