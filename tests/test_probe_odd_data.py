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
    # runs above 0, though some samples are below (a timer's overhead subtracted from a tiny loop)
    path = _store(tmp_path / "r.db", {"t": ([1.0, 1.1], "lower")}, sd=0.5, iters=50, runs=40)
    assert main(["--store", str(path), "compare", "v0", "v1", "--format", "json"]) == 1
    r = json.loads(capsys.readouterr().out)[0]
    assert r["scale"] == "relative" and 0.05 < r["change"] < 0.15


# ------------------------------------------------------------------- detect: series not analysed
def _detect(path, capsys, *options: str) -> tuple[int, str]:
    status = main(["--store", str(path), "detect", "--dry-run", *options])
    return status, capsys.readouterr().out


def test_detect_names_the_series_with_values_below_zero_it_cannot_judge(tmp_path, capsys):
    path = _store(tmp_path / "r.db", {"delta": ([-5.0] * 6 + [5.0] * 6, "lower"),
                                      "plain": ([10.0] * 12, "lower")}, runs=3, iters=5)
    status, out = _detect(path, capsys)
    assert status == 0
    line = next(x for x in out.splitlines() if x.startswith("Not analysed"))
    assert "runs below 0" in line and "delta" in line and "plain" not in line


def test_detect_says_two_versions_of_one_run_each_cannot_be_tested(tmp_path, capsys):
    path = _store(tmp_path / "r.db", {"one_run": ([1.0, 2.0], "lower"), "three": ([1.0, 2.0], "lower")},
                  runs=1, iters=10, sd=0.01)
    with Store(path) as store:  # `three` gets 2 more runs of its first version
        store.add_runs([RunRecord("three", "v0", r, 1.0 + 0.01 * np.arange(10)) for r in (1, 2)])
    status, out = _detect(path, capsys)
    line = next(x for x in out.splitlines() if x.startswith("Not analysed"))
    assert "one_run: 2 runs in all, one per version" in line and "three" not in line


def test_detect_gates_a_throughput_fallen_to_zero_at_its_newest_versions(tmp_path, capsys):
    path = tmp_path / "r.db"
    rng = np.random.default_rng(3)
    versions = [VersionInfo(f"v{k}", timestamp=T0 + timedelta(hours=k)) for k in range(12)]
    records = [RunRecord("ops", f"v{k}", r, np.zeros(10) if k >= 9 else 1000 * np.exp(0.02 * rng.standard_normal(10)))
               for k in range(12) for r in range(4)]
    with Store(path) as store:
        store.add_runs(records, versions=versions, benchmarks={"ops": {"unit": "ops/s", "direction": "higher"}})
    status, out = _detect(path, capsys, "--fail-on-regression")
    assert status == 1
    assert "Throughput fallen to 0" in out and "ops from v9 on (last above 0 at v8)" in out
    # without the gate, said and not failed
    status, out = _detect(path, capsys)
    assert status == 0 and "Throughput fallen to 0" in out


# ------------------------------------------------------------------------------------- import
BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("name, content", [
    ("excel.csv", BOM + b"benchmark,version,run,iteration,value\r\na,v1,0,0,1.0\r\n"),
    ("bom.csv", BOM + b"benchmark,version,run,iteration,value\na,v1,0,0,1.0\n"),
    ("bom.jsonl", BOM + b'{"benchmark":"a","version":"v1","run":0,"iteration":0,"value":1.5}\n'),
    ("bom.txt", BOM + b'{"benchmark":"a","version":"v1","run":0,"iteration":0,"value":1.5}\n'),
])
def test_import_sniffs_a_file_that_starts_with_a_byte_order_mark(tmp_path, capsys, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    assert main(["--store", str(tmp_path / "r.db"), "import", str(f)]) == 0
    assert "imported 1 samples in 1 runs of 1 benchmarks" in capsys.readouterr().out


def _rows(bench: str, versions: list[str], level: float = 1.0) -> list[str]:
    return [f"{bench},{v},{r},{i},{level + 0.01 * i}" for v in versions for r in range(2) for i in range(3)]


def test_import_warns_when_benchmarks_disagree_on_the_order_of_versions_without_timestamps(tmp_path, capsys):
    # grouped by benchmark; `first` was not run at v2, so v2 appears after v3 in the file
    lines = ["benchmark,version,run,iteration,value", *_rows("first", ["v0", "v1", "v3"]),
             *_rows("full", ["v0", "v1", "v2", "v3"])]
    f = tmp_path / "h.csv"
    f.write_text("\n".join(lines) + "\n")
    assert main(["--store", str(tmp_path / "r.db"), "import", str(f)]) == 0
    warning = [x for x in capsys.readouterr().out.splitlines() if x.startswith("warning:")]
    assert len(warning) == 1
    assert "'full' measured 'v2' before 'v3'" in warning[0] and "benchmark 'first'" in warning[0]
    assert "add a timestamp column" in warning[0]


def test_import_does_not_warn_when_the_order_of_versions_agrees_or_timestamps_give_it(tmp_path, capsys):
    lines = ["benchmark,version,run,iteration,value", *_rows("first", ["v0", "v1", "v3"]),
             *_rows("full", ["v0", "v1", "v3"])]
    f = tmp_path / "h.csv"
    f.write_text("\n".join(lines) + "\n")
    assert main(["--store", str(tmp_path / "a.db"), "import", str(f)]) == 0
    when = {"v0": "2024-01-01", "v1": "2024-01-02", "v2": "2024-01-03", "v3": "2024-01-04"}
    timed = ["benchmark,version,run,iteration,value,timestamp"] + [
        f"{row},{when[row.split(',')[1]]}" for row in [*_rows("first", ["v0", "v1", "v3"]),
                                                      *_rows("full", ["v0", "v1", "v2", "v3"])]]
    f.write_text("\n".join(timed) + "\n")
    assert main(["--store", str(tmp_path / "b.db"), "import", str(f)]) == 0
    assert "warning" not in capsys.readouterr().out


# ------------------------------------------------------------------------- diagnose: degenerate data
def _const_store(path, name: str, level: float, *, unit: str = "allocs/op"):
    versions = [VersionInfo(f"v{k}", timestamp=T0 + timedelta(hours=k)) for k in range(3)]
    with Store(path) as store:
        store.add_runs([RunRecord(name, f"v{k}", r, np.full(10, level)) for k in range(3) for r in range(5)],
                       versions=versions, benchmarks={name: {"unit": unit}})
    return path


def test_diagnose_calls_a_count_exactly_zero_exact_and_says_so(tmp_path, capsys):
    path = _const_store(tmp_path / "r.db", "zeros", 0.0)
    assert main(["--store", str(path), "diagnose", "zeros", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "trustworthy for +-1.0%" in out and "not precise enough" not in out
    assert "Every sample is exactly 0" in out
    assert main(["--store", str(path), "diagnose", "zeros", "--no-plots", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["relative_half_width"] == 0.0 and doc["trustworthy"] is True


def test_diagnose_and_detect_show_the_skew_of_constant_runs_as_undefined_not_nan(tmp_path, capsys):
    path = _const_store(tmp_path / "r.db", "const", 5.0, unit="ms")
    assert main(["--store", str(path), "diagnose", "const", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower() and "(skew —)" in out
    with Store(path) as store:  # a constant that steps: detect names the location it compared
        store.add_runs([RunRecord("step", f"v{k}", r, np.full(10, 5.0 if k < 2 else 10.0))
                        for k in range(3) for r in range(5)])
    status, out = _detect(path, capsys, "--benchmark", "step")
    assert "versions compared by" in out and "nan" not in out.lower()


def test_plots_of_a_name_the_font_lacks_do_not_warn(tmp_path):
    pytest.importorskip("matplotlib")
    from regbench.report.plots import plot_distributions

    # filterwarnings = error: matplotlib's "Glyph ... missing" would fail the test
    plot_distributions([("v0", np.arange(5.0)), ("v1", np.arange(5.0) + 1)], tmp_path / "d.png",
                       title="parse \N{ROCKET} fast", unit="ms")
    assert (tmp_path / "d.png").stat().st_size > 0


# ------------------------------------------------------------------------ diagnose: clusters of few samples
def test_diagnose_finds_one_mode_in_fifteen_unimodal_samples_and_gives_no_cluster_advice(tmp_path):
    pytest.importorskip("statsmodels")
    from regbench.diagnosis import diagnose

    path = tmp_path / "r.db"
    with Store(path) as store:
        for seed in (0, 1, 4):  # seeds where the mixture found 8-9 clusters in 15 samples
            rng = np.random.default_rng(seed)
            store.add_runs([RunRecord(f"u{seed}", "v1", r, np.exp(rng.normal(0, 0.2, 5))) for r in range(3)])
        for seed in (0, 1, 4):
            d = diagnose(store, f"u{seed}", rng=0)
            assert d.clusters == 1 and d.cluster_weights == (1.0,)
            assert not any("cluster by cluster" in a for a in d.advice)


def test_supported_clusters_keeps_modes_of_ten_samples_and_a_tenth():
    from regbench.diagnosis import supported_clusters

    # 1000 samples, 70/25/5%: the 5% cluster (50 samples) is under a tenth, a tail
    assert supported_clusters(1000, (1.0, 1.2, 2.0), (0.70, 0.25, 0.05)) == ((1.0, 1.2), (0.70, 0.25))
    # 40 samples, 80/20%: 8 samples are too few for a mode
    assert supported_clusters(40, (1.0, 1.2), (0.8, 0.2)) == ((), ())
    assert supported_clusters(100, (1.0, 1.2), (0.7, 0.3)) == ((1.0, 1.2), (0.7, 0.3))


def test_detect_does_not_name_a_count_that_is_zero_throughout(tmp_path, capsys):
    path = _const_store(tmp_path / "r.db", "zeros", 0.0)
    status, out = _detect(path, capsys)
    assert status == 0 and "Not analysed" not in out


def test_compare_signed_interval_covers_a_null_difference_with_few_runs():
    # 3 runs a side, normal run means around -5 (a signed metric), no change: the 99% interval
    # (bootstrap widened to Welch's) should miss about 1% of the time; the bootstrap alone missed
    # ~13% with 3 runs a side for the ratio (docs/statistics.md)
    from regbench.stats import compare_signed

    rng = np.random.default_rng(11)
    misses = 0
    trials = 200
    for _ in range(trials):
        a, b = rng.normal(-5, 0.5, 3), rng.normal(-5, 0.5, 3)
        c = compare_signed(a, b, confidence_level=0.99, n_resamples=2000, rng=rng)
        misses += not (c.ci_low <= 0 <= c.ci_high)
    assert misses / trials <= 0.03


def test_an_incremental_detect_gates_a_throughput_whose_new_versions_fell_to_zero(tmp_path, capsys):
    path = tmp_path / "r.db"
    rng = np.random.default_rng(3)
    info = {"ops": {"unit": "ops/s", "direction": "higher"}}

    def add(versions: range, level: float):
        with Store(path) as store:
            store.add_runs([RunRecord("ops", f"v{k}", r, level * np.exp(0.02 * rng.standard_normal(10)))
                            for k in versions for r in range(4)],
                           versions=[VersionInfo(f"v{k}", timestamp=T0 + timedelta(hours=k)) for k in versions],
                           benchmarks=info)

    add(range(10), 1000.0)
    assert main(["--store", str(path), "detect", "--incremental"]) == 0
    add(range(10, 13), 0.0)
    capsys.readouterr()
    assert main(["--store", str(path), "detect", "--incremental", "--fail-on-regression"]) == 1
    assert "ops from v10 on (last above 0 at v9)" in capsys.readouterr().out
