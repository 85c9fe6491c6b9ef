"""``compare --location`` on stored runs: what each run contributes to the comparison (its mean,
median or low quantile), ``auto`` as detection chooses it; the bootstrap over runs unchanged.

The data have a known truth: a benchmark whose runs sit on a floor with slower interference
above it (45% of the samples delayed by an exponential time), the floor 10% higher at the last
version, beside a benchmark with symmetric noise and no change, and a throughput."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("location") / "r.db"
    rng = np.random.default_rng(5)
    records, versions = [], []
    for k in range(6):
        versions.append(VersionInfo(f"v{k}", timestamp=T0 + timedelta(days=k)))
        for r in range(4):
            floor = (1.1 if k == 5 else 1.0) * (1 + 0.003 * rng.standard_normal(20))
            delayed = (rng.random(20) < 0.45) * rng.exponential(0.8, 20)
            records += [RunRecord("floor", f"v{k}", r, floor + delayed),
                        RunRecord("plain", f"v{k}", r, 2.0 * (1 + 0.01 * rng.standard_normal(20))),
                        RunRecord("ops", f"v{k}", r, 500.0 * (1 + 0.01 * rng.standard_normal(20)))]
    with Store(path) as store:
        store.add_runs(records, versions=versions, benchmarks={"ops": {"unit": "ops/s", "direction": "higher"}})
    return path


def _json(store_path, capsys, *options: str) -> dict[str, dict]:
    status = main(["--store", str(store_path), "compare", "v4", "v5", "--format", "json", *options])
    rows = {r["benchmark"]: r for r in json.loads(capsys.readouterr().out)}
    return {"status": status, **rows}


def test_a_floor_under_interference_is_found_by_the_low_quantile_not_by_the_mean(store_path, capsys):
    by_mean = _json(store_path, capsys)
    assert by_mean["status"] == 0
    assert by_mean["floor"]["verdict"] == "no change" and by_mean["floor"]["location"] == "mean"
    low = _json(store_path, capsys, "--location", "low")
    assert low["status"] == 1
    assert low["floor"]["verdict"] == "regression" and low["floor"]["location"] == "low"
    assert 0.095 < low["floor"]["ci_low"] < low["floor"]["change"] < low["floor"]["ci_high"] < 0.105
    assert low["floor"]["location_reason"] is None
    assert low["plain"]["verdict"] == "no change" and low["ops"]["verdict"] == "no change"
    # --location mean is the default's comparison, named
    assert {k: v for k, v in _json(store_path, capsys, "--location", "mean")["floor"].items()} == by_mean["floor"]


def test_the_low_location_of_a_throughput_is_its_high_quantile(store_path, capsys):
    from regbench.stats import run_location

    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    assert run_location(x, "low") == pytest.approx(np.quantile(x, 0.1))
    assert run_location(x, "low", direction="higher") == pytest.approx(np.quantile(x, 0.9))
    assert run_location(x, "median") == 3.0 and run_location(x) == 3.0
    with pytest.raises(ValueError, match="`location` must be one of mean, median, low, got 'min'"):
        run_location(x, "min")
    with pytest.raises(ValueError, match="`direction` must be 'lower' or 'higher'"):
        run_location(x, "low", direction="up")
    assert main(["--store", str(store_path), "compare", "v4", "v5", "--location", "low"]) == 1
    table = capsys.readouterr().out
    assert "(99% CI, threshold 0.0%, location low)" in table
    rows = {ln.split()[0]: ln for ln in table.splitlines() if ln.startswith(("floor ", "ops ", "plain "))}
    assert "90% quantile" in rows["ops"] and "10% quantile" in rows["plain"] and "10% quantile" in rows["floor"]


def test_auto_takes_the_location_detection_chooses_for_each_history(store_path, capsys):
    from regbench.detect.auto import Auto
    from regbench.store import HistoryView

    auto = _json(store_path, capsys, "--location", "auto")
    assert auto["status"] == 1
    with Store(store_path, create=False) as store:
        chosen = {s.benchmark: Auto().location(s) for s in HistoryView(store).load_series()}
    assert chosen["floor"].estimator == "low"
    for name in ("floor", "plain", "ops"):
        assert (auto[name]["location"], auto[name]["location_reason"]) == (chosen[name].estimator,
                                                                           chosen[name].reason)
    assert auto["floor"]["location_reason"].startswith(
        "the 10% quantile of each run: a floor with slower interference above it")
    assert auto["floor"]["verdict"] == "regression"
    assert main(["--store", str(store_path), "compare", "v4", "v5", "--location", "auto", "--benchmark", "floor",
                 "--format", "github"]) == 1
    assert ("v5 against v4: change of the mean of the runs' 10% quantiles (as detect chooses it), 99% bootstrap "
            "interval over runs") in capsys.readouterr().out


@pytest.mark.parametrize("options, message", [
    (["--run", "--location", "auto"], "--location auto applies to stored runs, not to --run"),
    (["--variance", "--location", "low"], "--location does not apply to --variance"),
])
def test_wrong_uses_of_location_are_usage_errors(store_path, capsys, options, message):
    assert main(["--store", str(store_path), "compare", "v4", "v5", *options]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("few", [3, 1])
def test_runs_of_fewer_than_five_samples_are_compared_by_their_mean(tmp_path, capsys, few):
    """Review: the 10% quantile of a 3-sample (1-sample) run sits above that of a 20-sample run of
    the same code, so `--location low` reported +14% (+56%) between identical code."""
    rng = np.random.default_rng(1)  # `--location low` said "regression" here with 3 samples and with 1

    def run(n):  # one distribution for both versions: a floor with slower interference above it
        return 1.0 + (rng.random(n) < 0.45) * rng.exponential(0.8, n)

    path = tmp_path / "few.db"
    with Store(path) as store:
        store.add_runs([RunRecord("floor", "v1", r, run(20)) for r in range(30)]
                       + [RunRecord("floor", "v2", r, run(few)) for r in range(30)],
                       versions=[VersionInfo("v1", timestamp=T0), VersionInfo("v2", timestamp=T0 + timedelta(days=1))])
    for location in ("low", "median"):
        assert main(["--store", str(path), "compare", "v1", "v2", "--location", location, "--format", "json"]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert (row["verdict"], row["location"]) == ("no change", "mean")
        assert row["location_reason"] == (f"the mean of each run: v2 has runs of {few} sample{'s' * (few > 1)}, "
                                          "too few for a quantile (at least 5 a run)")
    assert main(["--store", str(path), "compare", "v1", "v2", "--location", "low"]) == 0
    assert "mean" in next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("floor "))
