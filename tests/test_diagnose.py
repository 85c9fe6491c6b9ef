"""`regbench diagnose` on a store with known structure: warm-up, run effects, modes, an outlier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.diagnosis import diagnose
from regbench.model import RunRecord
from regbench.store import Store

WARMUP = 15


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    """8 runs x (15 warm-up + 200) iterations per version, with random run effects of 5%.

    v1: warm-up decaying exponentially from 3x, one extreme outlier (3x), one mode.
    v2: bimodal (30% of iterations in a fast mode 20% below the slow one), no warm-up.
    Only 2 warm-up iterations are configured, so the diagnosis must find v1's real warm-up.
    """
    rng = np.random.default_rng(42)
    path = tmp_path_factory.mktemp("diag") / "r.db"
    with Store(path) as store:
        for v in ("v1", "v2"):
            for r in range(8):
                level = 1 + rng.normal(0, 0.05)
                x = level * (1 + rng.normal(0, 0.005, WARMUP + 200))
                if v == "v1":
                    x[:WARMUP] *= 1 + 2 * np.exp(-np.arange(WARMUP) / 3)
                    if r == 3:
                        x[100] *= 3
                else:
                    x *= np.where(rng.random(WARMUP + 200) < 0.3, 0.8, 1.0)
                store.add_run(RunRecord("bench", v, r, x, warmup=2))
    return path


def test_diagnosis_finds_the_planted_structure(store_path):
    with Store(store_path) as store:
        latest = diagnose(store, "bench", target=0.01, rng=1)
        d = diagnose(store, "bench", version="v1", target=0.01, rng=1)
    assert latest.version == "v2" and latest.clusters >= 2  # the latest version; two modes per run, shifted by run
    assert latest.summary.impact_factor > 3  # run effects of 5% against within-run noise
    assert d.summary.n_runs == 8 and d.summary.n_iterations == WARMUP + 200 - 2
    assert d.outliers_extreme >= 1 and d.largest_outlier_ratio > 2.5
    assert WARMUP - 4 <= d.warmup_detected <= 2 * WARMUP  # MSER-5 minima are flat: a high quantile over runs
    assert any("set warmup" in a for a in d.advice)
    assert any("runs" in a and "impact factor" in a for a in d.advice)
    assert d.plan is not None and d.plan.predicted_relative_half_width <= 0.01
    assert not d.trustworthy  # 8 runs with 5% run effects cannot give +-1% at 99%


@pytest.fixture
def regbench(capsys):
    """``regbench(args)``: the command line run by ``main`` in this process, as a CompletedProcess
    (exit status, stdout, stderr).  `regbench diagnose` as a process of its own is run by
    test_cli_diagnose_writes_plots_and_json below and by
    tests/test_cli_display.py::test_diagnose_of_an_all_zero_count_writes_no_warning."""
    def run(args: list[str]) -> subprocess.CompletedProcess:
        capsys.readouterr()
        status = main([str(a) for a in args])
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["regbench", *args], status, out.out, out.err)
    return run


def test_cli_diagnose_writes_plots_and_json(store_path, tmp_path):
    out = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", str(store_path), "diagnose", "bench",
                          "--version", "v1", "--plots", str(tmp_path / "plots"), "--format", "json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["version"] == "v1" and report["runs"] == 8
    assert report["warmup_configured"] == 2 and report["warmup_detected"] > 2
    assert len(report["plots"]) == 3
    for p in report["plots"]:
        data = Path(p).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    text = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", str(store_path), "diagnose", "bench",
                           "--no-plots"], capture_output=True, text=True, timeout=300)
    assert text.returncode == 0 and "impact factor" in text.stdout and "What to change" in text.stdout


def test_diagnose_unknown_benchmark_is_one_line(store_path, regbench):
    out = regbench(["--store", str(store_path), "diagnose", "nope"])
    assert out.returncode == 3 and out.stderr.strip() == ("error: no benchmark named 'nope' in the store "
                                                          "(it holds 1 benchmark: `regbench show` lists them)")


def test_diagnose_says_when_runs_land_at_levels_and_detection_follows_the_fastest(tmp_path, regbench):
    # 30 versions of 6 runs; each run lands at 1x, 1.45x or 1.9x (70/20/10%): the real corpus'
    # `threads` shape.  The plain benchmark of the fixture above has no such levels.
    rng = np.random.default_rng(3)
    path = tmp_path / "levels.db"
    with Store(path) as store:
        for k in range(30):
            for r in range(6):
                ratio = (1.0, 1.45, 1.9)[rng.choice(3, p=(0.7, 0.2, 0.1))]
                store.add_run(RunRecord("threads", f"v{k:02d}", r,
                                        ratio * (1 + rng.normal(0, 0.02)) * (1 + rng.normal(0, 0.01, 20))))
        d = diagnose(store, "threads", rng=1)
    assert d.levels is not None and d.levels.n_levels == 3 and d.levels.stats.mean.size >= 27
    assert 0.02 < float(np.expm1(d.levels.cut)) < 0.45
    out = regbench(["--store", str(path), "diagnose", "threads", "--no-plots", "--format", "json"])
    assert out.returncode == 0, out.stderr
    levels = json.loads(out.stdout)["levels"]
    assert levels["n_levels"] == 3 and levels["versions"] >= 27
    text = regbench(["--store", str(path), "diagnose", "threads", "--no-plots"])
    assert text.returncode == 0 and "runs land at levels" in text.stdout


def test_diagnose_reports_no_levels_for_runs_of_one_level(store_path):
    with Store(store_path) as store:
        assert diagnose(store, "bench", rng=1).levels is None


def test_diagnose_names_the_location_detection_uses(tmp_path):
    # A skewed series whose bursts (whole runs met by interference) detection leaves out before it
    # chooses the location: diagnose said the 10% quantile while detection compared medians.
    from regbench.detect.auto import Auto
    from regbench.evaluate import make_corpus
    from regbench.stats.runs import choose_location

    series = make_corpus(shape="skewed", rng=0, n_series=100).series[75].series
    path = tmp_path / "skewed.db"
    with Store(path) as store:
        for version, runs in zip(series.versions, series.runs, strict=True):
            for r, samples in enumerate(runs):
                store.add_run(RunRecord("skewed", version.name, r, samples))
        d = diagnose(store, "skewed", rng=1)
        stored = store.load_series("skewed")[0]
    assert choose_location(stored.runs).estimator != Auto().location(stored).estimator  # the case at stake
    assert d.location.estimator == Auto().location(stored).estimator


def test_diagnose_takes_detection_s_options_and_refuses_unknown_ones(store_path, regbench):
    base = ["--store", str(store_path), "diagnose", "bench", "--no-plots",
            "--format", "json"]
    default = regbench(base)
    forced = regbench([*base, "--option", "location=median"])
    assert default.returncode == 0 and forced.returncode == 0, default.stderr + forced.stderr
    assert json.loads(default.stdout)["location"]["estimator"] != "median"  # so the option is what changed it
    assert json.loads(forced.stdout)["location"]["estimator"] == "median"
    bad = regbench([*base, "--option", "nonsense=1"])
    assert bad.returncode == 2 and bad.stderr.startswith("Usage: regbench diagnose ")  # a usage error
    assert bad.stderr.strip().splitlines()[-1].startswith("Error: --option nonsense: auto has no such option")


def _two_level_store(path, *, runs: int, slow: float = 0.3, versions: int = 30, seed: int = 5,
                     throughput: bool = False) -> None:
    """``versions`` versions of ``runs`` runs; each run lands at 1x or 1.3x (``slow`` of them) and
    stays; with ``throughput``, as operations per second (every sample inverted, higher is better)."""
    rng = np.random.default_rng(seed)
    with Store(path) as store:
        for k in range(versions):
            for r in range(runs):
                ratio = 1.3 if rng.random() < slow else 1.0
                x = ratio * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.005, 20))
                store.add_run(RunRecord("two", f"v{k:02d}", r, 1 / x if throughput else x),
                              unit="ops/s" if throughput else None, direction="higher" if throughput else None)


def _at_least_two(n: int, p: float) -> float:
    """P(X >= 2) for X ~ Binomial(n, p), from its definition (the reference for scipy's binom)."""
    return 1 - (1 - p) ** n - n * p * (1 - p) ** (n - 1)


def test_diagnose_says_how_often_a_version_measures_each_mode_of_whole_runs(tmp_path, regbench):
    # 3 runs a version, 30% of runs at the slow level: a version has two runs at it about a fifth
    # of the time, so detection measures that mode at few versions (the probe shape
    # `bimodal-three`, docs/evaluation.md); the advice names the runs that give 90%.
    path = tmp_path / "three.db"
    _two_level_store(path, runs=3)
    with Store(path) as store:
        d = diagnose(store, "two", rng=1)
    m = d.run_modes
    assert m is not None and len(m.shares) == 2 and m.runs_per_version == 3
    assert m.shares[0] > m.shares[1] and 0.2 < m.shares[1] < 0.4  # fastest first: 70% / 30%
    p = m.shares[1]
    assert m.coverage == pytest.approx(_at_least_two(3, p), rel=1e-9) and m.coverage < 0.35
    assert m.needed is not None and _at_least_two(m.needed, p) >= 0.9 > _at_least_two(m.needed - 1, p)
    advice = [a for a in d.advice if a.startswith("Whole runs land in 2 modes")]
    assert len(advice) == 1 and f"{m.needed} runs a version give 90%" in advice[0]
    out = regbench(["--store", str(path), "diagnose", "two", "--no-plots", "--format", "json"])
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["run_modes"]["runs_per_version"] == 3 and report["run_modes"]["needed"] == m.needed
    text = regbench(["--store", str(path), "diagnose", "two", "--no-plots"])
    assert text.returncode == 0 and "runs stay in modes" in text.stdout


def test_diagnose_gives_no_mode_advice_when_versions_have_runs_enough(tmp_path):
    path = tmp_path / "many.db"
    _two_level_store(path, runs=16)
    with Store(path) as store:
        d = diagnose(store, "two", rng=1)
    assert d.run_modes is not None and d.run_modes.runs_per_version == 16 and d.run_modes.coverage >= 0.9
    assert not any(a.startswith("Whole runs land") for a in d.advice)


def test_diagnose_reports_no_run_modes_where_every_run_visits_the_modes(store_path):
    # v2's iterations are bimodal inside every run (a cache hit/miss benchmark): each run measures both.
    with Store(store_path) as store:
        assert diagnose(store, "bench", rng=1).run_modes is None


def test_diagnose_counts_a_throughput_s_modes_as_detection_sees_them(tmp_path):
    # The same runs as operations per second: the modes detection follows are those of the
    # reciprocal (the time of one operation), the fast one first.
    times, rates = tmp_path / "times.db", tmp_path / "rates.db"
    _two_level_store(times, runs=3)
    _two_level_store(rates, runs=3, throughput=True)
    with Store(times) as a, Store(rates) as b:
        t, r = diagnose(a, "two", rng=1).run_modes, diagnose(b, "two", rng=1).run_modes
    assert t is not None and r is not None
    assert r.shares == pytest.approx(t.shares) and r.needed == t.needed and r.shares[0] > r.shares[1]


def test_diagnose_of_a_constant_zero_count_names_it_and_writes_strict_json(tmp_path, regbench):
    # Go's "0 allocs/op" of an allocation-free loop: the series name is not console markup (its
    # "[allocs/op]" used to vanish from the header), and the JSON is strict (no bare NaN); an
    # interval of no width is of relative width 0, also around 0 (exact, as the dashboard counts it).
    path = tmp_path / "r.db"
    with Store(path) as store:
        for r in range(4):
            store.add_run(RunRecord("get [allocs/op]", "v1", r, np.zeros(5)))
    base = ["--store", str(path), "diagnose", "get [allocs/op]", "--no-plots"]
    text = regbench(base)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].startswith("get [allocs/op] at v1")
    out = regbench([*base, "--format", "json"])
    assert out.returncode == 0, out.stderr

    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    report = json.loads(out.stdout, parse_constant=refuse)
    assert report["benchmark"] == "get [allocs/op]" and report["relative_half_width"] == 0.0
