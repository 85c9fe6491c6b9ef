"""``regbench compare --variance``: did the spread change (seed 003 s.3.3.1), between versions or setups."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from regbench.analysis import compare_variance
from regbench.cli.main import _register, cli, main
from regbench.errors import ConfigError, NotFoundError
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

RUNS, ITERS = 30, 10
#: Between-run spread (relative) of each (version, config, machine) in the store; within-run
#: noise is 0.2% everywhere.  v1 on config "noisy" has 3x noisier runs than on "default".
SETUPS = {
    ("v1", "default", "box"): 0.01,
    ("v1", "noisy", "box"): 0.03,
    ("v2", "default", "box"): 0.01,
    ("v1", "default", "other"): 0.03,
    ("v2", "default", "other"): 0.03,
}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("variance") / "r.db"
    rng = np.random.default_rng(42)
    records = []
    for bench in ("fft", "sort"):
        for (version, config, machine), sd in SETUPS.items():
            for r in range(RUNS):
                level = 1.0 + rng.normal(0, sd)
                records.append(RunRecord(bench, version, r, level * (1 + rng.normal(0, 0.002, ITERS)),
                                         config=config, machine=machine))
    with Store(path) as store:
        store.add_runs(records, versions=[VersionInfo("v1"), VersionInfo("v2")])
    return path


def invoke(store_path, *args):
    _register()
    return CliRunner().invoke(cli, ["--store", str(store_path), "compare", *args])


def as_json(result):
    assert result.exit_code == 0, result.output
    # strict JSON: NaN and Infinity are not JSON
    return json.loads(result.output, parse_constant=lambda token: pytest.fail(f"not JSON: {token}"))


def test_three_times_noisier_runs_is_variance_increased(store_path):
    rows = as_json(invoke(store_path, "v1", "v1", "--variance", "--b-configuration", "noisy", "--machine", "box",
                          "--format", "json"))
    assert [r["benchmark"] for r in rows] == ["fft", "sort"]
    for r in rows:
        assert r["a"] == {"version": "v1", "config": "default", "machine": "box"}
        assert r["b"] == {"version": "v1", "config": "noisy", "machine": "box"}
        assert r["verdict"] == "variance increased" and r["p"] < 0.01
        # the true ratio of run-mean SDs is about 3 (0.002/sqrt(10) of within-run noise barely counts)
        assert r["sd_ratio_ci_low"] < 3 < r["sd_ratio_ci_high"]


def test_the_other_way_round_is_variance_decreased(store_path):
    rows = as_json(invoke(store_path, "v1", "v1", "--variance", "--configuration", "noisy", "--b-configuration", "default",
                          "--machine", "box", "--format", "json"))
    assert {r["verdict"] for r in rows} == {"variance decreased"}


def test_equal_noise_is_no_evidence(store_path):
    rows = as_json(invoke(store_path, "v1", "v2", "--variance", "--configuration", "default", "--machine", "box",
                          "--format", "json"))
    assert [r["verdict"] for r in rows] == ["no evidence of a change"] * 2
    assert all(r["p"] > 0.05 for r in rows)


def test_json_fields(store_path):
    (row,) = as_json(invoke(store_path, "v1", "v2", "--variance", "--benchmark", "fft", "--configuration", "default",
                            "--machine", "box", "--format", "json"))
    assert set(row) == {
        "benchmark", "unit", "of", "a", "b", "n_a", "n_b", "sd_a", "sd_b", "cv_a", "cv_b", "sd_ratio",
        "sd_ratio_ci_low", "sd_ratio_ci_high", "sd_ratio_ci_method", "confidence_level", "test", "center",
        "statistic", "p", "alpha", "verdict"}
    assert (row["of"], row["n_a"], row["n_b"]) == ("runs", RUNS, RUNS)
    assert (row["test"], row["center"], row["alpha"]) == ("Brown-Forsythe", "median", 0.05)
    assert row["sd_ratio_ci_method"] == "F (assumes normality)"
    assert row["cv_a"] == pytest.approx(row["sd_a"], rel=0.05)  # run means are about 1.0
    assert row["sd_ratio"] == pytest.approx(row["sd_b"] / row["sd_a"])


def test_json_agrees_with_the_statistics_on_the_run_means(store_path):
    from scipy import stats

    with Store(store_path, create=False) as store:
        (series,) = store.load_series("fft", config="default", machine="box", versions=["v1", "v2"])
        a = [r.mean() for r in series.runs[series.index("v1")]]
        b = [r.mean() for r in series.runs[series.index("v2")]]
    (row,) = as_json(invoke(store_path, "v1", "v2", "--variance", "--benchmark", "fft", "--configuration", "default",
                            "--machine", "box", "--format", "json", "--alpha", "0.1"))
    ref = stats.f_oneway(np.abs(a - np.median(a)), np.abs(b - np.median(b)))
    assert row["statistic"] == pytest.approx(ref.statistic) and row["p"] == pytest.approx(ref.pvalue)
    assert row["alpha"] == 0.1 and row["confidence_level"] == pytest.approx(0.9)


def test_variance_of_samples_pools_every_iteration(store_path):
    rows = as_json(invoke(store_path, "v1", "v1", "--variance", "--variance-of", "samples", "--b-configuration", "noisy",
                          "--machine", "box", "--format", "json"))
    assert {(r["of"], r["n_a"], r["n_b"]) for r in rows} == {("samples", RUNS * ITERS, RUNS * ITERS)}
    assert {r["verdict"] for r in rows} == {"variance increased"}


def test_b_machine_compares_two_machines(store_path):
    rows = as_json(invoke(store_path, "v1", "v1", "--variance", "--configuration", "default", "--machine", "box",
                          "--b-machine", "other", "--format", "json"))
    assert {(r["a"]["machine"], r["b"]["machine"], r["verdict"]) for r in rows} == {
        ("box", "other", "variance increased")}


def test_a_side_without_config_pairs_every_other_configuration(store_path):
    # A on every configuration, B on "noisy": v1/noisy against itself is skipped, so one row each.
    with Store(store_path, create=False) as store:
        rows = compare_variance(store, "v1", "v1", machine="box", b_config="noisy")
    assert [(r.benchmark, r.config_a, r.config_b) for r in rows] == [("fft", "default", "noisy"),
                                                                    ("sort", "default", "noisy")]


def test_table_has_the_columns_and_exits_0_even_when_variance_increased(store_path):
    result = invoke(store_path, "v1", "v1", "--variance", "--b-configuration", "noisy", "--machine", "box")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "variance of run means: v1 (noisy, box) against v1 (default, box) (alpha 0.05)"
    assert lines[1].split() == ["benchmark", "n", "A/B", "SD", "A", "SD", "B", "CV", "A", "CV", "B", "SD", "ratio",
                                "test", "p", "verdict"]
    fft = next(line for line in lines if line.startswith("fft"))
    assert f"{RUNS}/{RUNS}" in fft and "Brown-Forsythe" in fft and "variance increased" in fft
    # SDs of a few ms of a benchmark in seconds are shown in ms (as summary and compare scale),
    # to 4 significant digits, not as 0.00x s.
    sd_a, sd_b = fft.split()[2:4], fft.split()[4:6]
    assert sd_a[1] == sd_b[1] == "ms", fft
    assert 0.5 < float(sd_a[0]) < 50 and 0.5 < float(sd_b[0]) < 100, fft


def test_table_names_the_setup_when_rows_differ_in_it(store_path):
    result = invoke(store_path, "v1", "v2", "--variance")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "variance of run means: v2 (default) against v1 (default) (alpha 0.05)"
    names = [line.split("  ")[0] for line in result.output.splitlines()[3:]]
    assert names == ["fft [box]", "fft [other]", "sort [box]", "sort [other]"]
    across = invoke(store_path, "v1", "v1", "--variance", "--configuration", "default", "--b-machine", "other",
                    "--benchmark", "fft")
    # A on every machine; v1/default/other against itself is skipped, so one row, both sides in the title
    assert across.output.splitlines()[0] == ("variance of run means: v1 (default, other) against "
                                             "v1 (default, box) (alpha 0.05)")
    assert [line.split("  ")[0] for line in across.output.splitlines()[3:]] == ["fft"]


def test_undecidable_rows_are_strict_json(tmp_path):
    path = tmp_path / "r.db"
    with Store(path) as store:
        for r in range(3):
            store.add_run(RunRecord("b", "v1", r, np.array([1.0 + r / 100, 1.0])))
        store.add_run(RunRecord("b", "v2", 0, np.array([1.0, 1.01])))
    (row,) = as_json(invoke(path, "v1", "v2", "--variance", "--format", "json"))
    assert row["verdict"] == "undecidable" and row["p"] is None and row["sd_b"] is None and row["n_b"] == 1


@pytest.mark.parametrize("args, message", [
    (["v1", "nope", "--variance"], "error: no version named 'nope' in the store (a stored name, tag, branch or sha)"),
    (["v1", "v1", "--variance"], "error: the variance comparison needs two different versions, or a B side "
                                 "on another configuration or machine (--b-configuration, --b-machine)"),
    (["v1", "v1", "--variance", "--b-configuration", "nope"],
     "error: no configuration named 'nope' in the store (it holds 'default', 'noisy')"),
    (["v1", "v2", "--variance", "--configuration", "noisy"],
     "error: no benchmark has runs of both 'v1' (config 'noisy') and 'v2' (config 'noisy')"),
])
def test_errors_are_one_line(store_path, capsys, args, message):
    assert main(["--store", str(store_path), "compare", *args]) == 3
    err = capsys.readouterr().err
    assert err.strip() == message


@pytest.mark.parametrize("args, message", [
    (["v1", "v2", "--alpha", "0.1"], "--alpha needs --variance"),
    (["v1", "v1", "--b-configuration", "noisy"], "--b-configuration needs --variance"),
    (["v1", "v2", "--variance-of", "samples"], "--variance-of needs --variance"),
    (["v1", "v2", "--variance", "--threshold", "0.05"], "--threshold does not apply to --variance"),
    (["v1", "v2", "--variance", "--seed", "3"], "--seed does not apply to --variance"),
])
def test_options_of_the_other_mode_are_refused(store_path, args, message):
    result = invoke(store_path, *args)
    assert result.exit_code == 2 and message in result.output


def test_library_errors(store_path):
    with Store(store_path, create=False) as store:
        with pytest.raises(ConfigError, match="two different versions"):
            compare_variance(store, "v1", "v1", b_config="default", config="default")
        with pytest.raises(NotFoundError, match="no version named 'v9'"):
            compare_variance(store, "v9", "v1")
        with pytest.raises(ValueError, match="`of` must be 'runs' or 'samples'"):
            compare_variance(store, "v1", "v2", of="iterations")


def test_mean_comparison_accepts_config_and_machine(store_path):
    result = invoke(store_path, "v1", "v2", "--configuration", "default", "--machine", "box", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {(r["config"], r["machine"]) for r in rows} == {("default", "box")}


def test_help_describes_variance():
    _register()
    text = CliRunner().invoke(cli, ["compare", "--help"]).output
    for opt in ("--variance", "--variance-of", "--alpha", "--b-configuration", "--b-machine", "--configuration", "--machine"):
        assert opt in text
    assert "Brown-Forsythe" in text
