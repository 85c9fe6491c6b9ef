"""Two-version comparison with runs as replicates, and the verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from regbench.stats import compare_runs, delta_ratio_interval, verdict
from regbench.stats.compare import fieller_interval


def test_change_is_the_ratio_of_means_of_run_means():
    c = compare_runs([1.0, 1.2, 0.8, 1.0], [1.1, 1.3, 0.9, 1.1], rng=0)
    assert c.change == pytest.approx(1.1 / 1.0 - 1)
    assert c.ci_low < c.change < c.ci_high
    assert c.method in ("BCa", "percentile", "BCa+Fieller", "percentile+Fieller")
    assert c.bootstrap_distribution.size == 10_000


def test_interval_agrees_with_scipy_bootstrap_percentile_reference():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1, 0.05, 12), rng.normal(1.05, 0.05, 12)
    c = compare_runs(a, b, rng=2, n_resamples=20_000)
    ref = stats.bootstrap((a, b), lambda x, y, axis=-1: y.mean(axis) / x.mean(axis) - 1, vectorized=True,
                          n_resamples=20_000, confidence_level=0.99, method="percentile", rng=3)
    assert c.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert c.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.01)


def test_identical_runs_give_an_exact_zero_interval():
    c = compare_runs([2.0, 2.0, 2.0], [2.0, 2.0, 2.0])
    assert (c.change, c.ci_low, c.ci_high) == (0.0, 0.0, 0.0)


def test_one_run_is_undecidable_not_significant():
    with pytest.warns(RuntimeWarning, match="at least two runs"):
        c = compare_runs([1.0], [2.0, 2.1])
    assert math.isnan(c.ci_low)
    assert verdict(c.ci_low, c.ci_high) == "inconclusive"


def test_coverage_of_the_run_level_interval():
    # 95% intervals on 10 + 10 runs with random run effects; the true change is +5%.
    rng = np.random.default_rng(2024)
    miss = 0
    trials = 300
    for _ in range(trials):
        a = rng.normal(1.0, 0.03, 10)
        b = rng.normal(1.05, 0.03, 10)
        c = compare_runs(a, b, confidence_level=0.95, n_resamples=2000, rng=rng)
        miss += not (c.ci_low <= 0.05 <= c.ci_high)
    # Binomial(300, 0.05): mean 15; a bootstrap on 10 runs may under-cover somewhat, not grossly.
    assert 3 <= miss <= 33


@pytest.mark.parametrize("lo, hi, direction, threshold, expected", [
    (0.02, 0.05, "lower", 0.0, "regression"),
    (-0.05, -0.02, "lower", 0.0, "improvement"),
    (-0.01, 0.02, "lower", 0.0, "no change"),
    (0.02, 0.05, "higher", 0.0, "improvement"),
    (-0.05, -0.02, "higher", 0.0, "regression"),
    (0.02, 0.04, "lower", 0.05, "no change"),       # significant but below the threshold
    (0.03, 0.08, "lower", 0.05, "inconclusive"),    # might exceed the threshold
    (0.06, 0.08, "lower", 0.05, "regression"),
    (-0.01, 0.08, "lower", 0.05, "inconclusive"),
    (float("nan"), float("nan"), "lower", 0.0, "inconclusive"),
])
def test_verdicts(lo, hi, direction, threshold, expected):
    assert verdict(lo, hi, direction=direction, threshold=threshold) == expected


def test_verdict_validation():
    with pytest.raises(ValueError, match="`threshold` must be non-negative"):
        verdict(0, 1, threshold=-1)
    with pytest.raises(ValueError, match="`direction`"):
        verdict(0, 1, direction="up")


def test_delta_interval_matches_hand_computation():
    change, lo, hi = delta_ratio_interval(2.0, 0.1, 2.2, 0.1, confidence_level=0.95)
    se = math.sqrt((0.1 / 2.0) ** 2 + (2.2 * 0.1 / 4.0) ** 2)
    z = 1.959963984540054
    assert change == pytest.approx(0.1)
    assert (lo, hi) == (pytest.approx(0.1 - z * se), pytest.approx(0.1 + z * se))


# ------------------------------------------------- counts that are exactly 0 (Go's allocs/op, B/op)
def test_runs_all_zero_compare_exactly():
    # 0 in every run of A: the ratio is undefined, the comparison is not.  A count that stays 0 is
    # no change; one that becomes positive in every run of B is an infinite increase.
    same = compare_runs([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert (same.change, same.ci_low, same.ci_high, same.method) == (0.0, 0.0, 0.0, "exact")
    assert verdict(same.ci_low, same.ci_high, threshold=0.02) == "no change"
    up = compare_runs([0.0, 0.0, 0.0], [1.0, 2.0, 1.0])
    assert up.change == up.ci_low == up.ci_high == math.inf and up.method == "exact"
    assert verdict(up.ci_low, up.ci_high, direction="lower", threshold=0.05) == "regression"
    assert verdict(up.ci_low, up.ci_high, direction="higher") == "improvement"
    down = compare_runs([0.0, 0.0], [-1.0, -3.0])
    assert down.change == -math.inf and verdict(down.ci_low, down.ci_high) == "improvement"
    # B on both sides of 0, or one run: undecidable as before.
    with pytest.warns(RuntimeWarning):
        mixed = compare_runs([0.0, 0.0], [-1.0, 1.0])
    assert math.isnan(mixed.change) and verdict(mixed.ci_low, mixed.ci_high) == "inconclusive"
    with pytest.warns(RuntimeWarning):
        assert compare_runs([0.0], [1.0, 1.0]).method == "none"


def test_an_unbounded_interval_is_inconclusive_unless_all_of_it_is_on_one_side():
    assert verdict(-math.inf, math.inf) == "inconclusive"
    assert verdict(-0.1, math.inf) == "inconclusive"  # containing 0, unbounded: not "no change"
    assert verdict(-1.0, math.inf, threshold=0.05) == "inconclusive"
    # At least +10%, with no upper bound (A's mean not told from 0): a regression all the same.
    assert verdict(0.1, math.inf) == "regression"
    assert verdict(0.1, math.inf, threshold=0.2) == "inconclusive"
    assert verdict(math.inf, math.inf, threshold=0.5) == "regression"
    assert verdict(-math.inf, -math.inf, direction="lower") == "improvement"


def test_the_gate_fails_on_a_new_allocation(tmp_path, capsys):
    # What a Go user gates a pull request on: 0 allocs/op before, 1 after, fails the comparison
    # (exit status 1); 0 B/op on both sides is no change.
    import json

    from regbench.cli.main import main

    rows = ["benchmark,version,run,iteration,value,unit"]
    for v, allocs in (("v1", 0), ("v2", 1)):
        rows += [f"{name},{v},{r},{i},{value},{unit}" for r in range(4) for i in range(3)
                 for name, value, unit in (("get [allocs/op]", allocs, "allocs/op"), ("get [B/op]", 0, "B/op"))]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    store = str(tmp_path / "s.db")
    assert main(["--store", store, "import", str(tmp_path / "r.csv")]) == 0
    capsys.readouterr()
    assert main(["--store", store, "compare", "v1", "v2", "--threshold", "0.05", "--format", "json"]) == 1
    got = {c["benchmark"]: c for c in json.loads(capsys.readouterr().out)}
    assert got["get [allocs/op]"]["verdict"] == "regression" and got["get [allocs/op]"]["change"] is None
    assert got["get [B/op]"]["verdict"] == "no change" and got["get [B/op]"]["change"] == 0.0
    assert main(["--store", store, "compare", "v1", "v2", "--threshold", "0.05"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("get [allocs/op]"))
    assert "+∞" in line and line.rstrip().endswith("regression")


def test_rows_of_two_configurations_say_which_is_which(tmp_path, capsys):
    # One benchmark measured under two configurations: compare's and summary's tables name each
    # row's configuration (they looked alike, with different verdicts); with one, no such column.
    from regbench.cli.main import main

    rows = ["benchmark,version,run,iteration,value,config"]
    for config, slower in (("fast", 1.0), ("slow", 1.5)):
        for v, scale in (("v1", 1.0), ("v2", slower)):
            rows += [f"b,{v},{r},{i},{scale * (1 + 0.01 * r)},{config}" for r in range(4) for i in range(2)]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    store = str(tmp_path / "s.db")
    assert main(["--store", store, "import", str(tmp_path / "r.csv")]) == 0
    capsys.readouterr()
    assert main(["--store", store, "compare", "v1", "v2"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["benchmark", "config"]
    assert {tuple(x.split()[:2]) + (x.split()[-1],) for x in lines[3:]} == {("b", "fast", "change"),
                                                                           ("b", "slow", "regression")}
    assert main(["--store", store, "summary"]) == 0
    out = capsys.readouterr().out
    assert "config" in out.splitlines()[1] and sum(" slow " in x for x in out.splitlines()) == 2
    assert main(["--store", store, "compare", "v1", "v2", "--configuration", "fast"]) == 0
    assert "config" not in capsys.readouterr().out.splitlines()[1]


@pytest.mark.parametrize("runs", [3, 5, 10])
def test_a_null_change_is_called_at_most_as_often_as_the_level_says_with_few_runs(runs):
    # 99% intervals, no change, run means with a 5% spread: the bootstrap alone missed 12.7% (3
    # runs), 5.7% (5) and 3.7% (10) of the time; with Fieller's interval the union holds the level.
    rng = np.random.default_rng(runs)
    trials = 400
    miss = 0
    for k in range(trials):
        a, b = 100 * (1 + 0.05 * rng.standard_normal(runs)), 100 * (1 + 0.05 * rng.standard_normal(runs))
        c = compare_runs(a, b, n_resamples=1000, rng=k)
        miss += not (c.ci_low <= 0 <= c.ci_high)
    assert miss <= 10  # Binomial(400, 0.01): mean 4; 10 or more has probability 0.8%


def test_fieller_matches_the_delta_method_with_many_runs_and_is_wider_with_few():
    rng = np.random.default_rng(3)
    a, b = rng.normal(100, 3, 400), rng.normal(105, 3, 400)
    lo, hi = fieller_interval(a, b, confidence_level=0.99)
    _, dlo, dhi = delta_ratio_interval(a.mean(), a.std(ddof=1) / 20, b.mean(), b.std(ddof=1) / 20,
                                       confidence_level=0.99)
    assert lo == pytest.approx(dlo, abs=2e-4) and hi == pytest.approx(dhi, abs=2e-4)
    few_a, few_b = a[:3], b[:3]
    lo3, hi3 = fieller_interval(few_a, few_b, confidence_level=0.99)
    _, dlo3, dhi3 = delta_ratio_interval(few_a.mean(), few_a.std(ddof=1) / np.sqrt(3), few_b.mean(),
                                         few_b.std(ddof=1) / np.sqrt(3), confidence_level=0.99)
    assert lo3 < dlo3 and hi3 > dhi3  # Student's quantile on ~4 degrees of freedom, not the normal's
    # A's mean not told from 0: unbounded, and the bootstrap's interval is kept alone (a count
    # from about 0 to a thousand is still a regression).
    assert fieller_interval([1.0, -0.7, 0.4], [1.0, 1.1, 0.9]) == (-np.inf, np.inf)
    c = compare_runs([0.5, 0.5, 20.0], [1000.0, 1010.0, 990.0], rng=0)
    assert "Fieller" not in c.method and verdict(c.ci_low, c.ci_high) == "regression"


def test_fieller_never_goes_below_minus_100_percent_for_positive_data():
    # One slow run of B (a busy machine) makes B's mean uncertain: the set of ratios reaches
    # below 0, which positive times cannot have.
    a, b = [4.0, 4.1, 4.05], [0.5, 0.6, 3.1]
    lo, hi = fieller_interval(a, b, confidence_level=0.99)
    assert lo == -1.0 and hi > 0
    assert fieller_interval([-x for x in a], b, confidence_level=0.99)[0] < -1.0  # not positive: not cut
    c = compare_runs(a, b, rng=0)
    # Cut at -100%, the interval bounds nothing below: inconclusive, not "no change".
    assert c.ci_low == -1.0 and verdict(c.ci_low, c.ci_high) == "inconclusive"
