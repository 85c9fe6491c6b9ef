"""Warm-up detection (seed 001 s.2.2): MSER-5 and the change-point search on synthetic runs with a
known warm-up, without one, and with an outlier spike; success rates over seeded series."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from regbench.run.core import auto_warmup
from regbench.stats.warmup import (
    _mser_curve,
    detect_warmup,
    warmup_changepoint,
    warmup_mser,
)

N = 1000
SD = 0.01


def run(seed, warmup=0, *, n=N, spike=None, phi=0.0):
    """A run of ``n`` iterations around 1.0 (noise sd 1%) whose first ``warmup`` iterations decay
    exponentially from 2.0 (time constant warmup / 3), then are stationary: the warm-up length is
    known exactly.  ``spike``: one iteration 20 sd slow there.  ``phi``: AR(1) noise."""
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n)
    if phi:
        for t in range(1, n):
            e[t] = phi * e[t - 1] + math.sqrt(1 - phi * phi) * e[t]
    x = 1.0 + SD * e
    if warmup:
        t = np.arange(warmup)
        x[:warmup] += np.exp(-t / (warmup / 3))
    if spike is not None:
        x[spike] += 20 * SD
    return x


SEEDS = range(60)
METHODS = {"mser": warmup_mser, "changepoint": warmup_changepoint}


def test_mser_curve_matches_hand_computation():
    z = np.array([5.0, 1.0, 2.0, 3.0])
    # d=0: mean 2.75, squares 5.0625+3.0625+0.5625+0.0625 = 8.75 over 4^2
    # d=1: mean 2, squares 1+0+1 = 2 over 3^2;  d=2: mean 2.5, 0.25+0.25 = 0.5 over 2^2
    assert _mser_curve(z, 2) == pytest.approx([8.75 / 16, 2 / 9, 0.5 / 4])


def test_mser5_batches_of_five_and_truncates_a_step():
    x = np.r_[np.full(15, 3.0), np.random.default_rng(0).normal(1.0, 0.01, 85)]
    res = warmup_mser(x, refine=False)
    assert res.candidates.tolist() == list(range(0, 55, 5))  # first half: d = 0 .. 10 batches
    assert res.n_warmup == 15 and res.steady_state
    assert res.statistic[3] == res.statistic.min()


@pytest.mark.parametrize("warmup", [10, 50, 100])
@pytest.mark.parametrize("method", ["mser", "changepoint"])
def test_known_warmup_is_found_within_ten_percent(method, warmup):
    found = np.array([METHODS[method](run(s, warmup)).n_warmup for s in SEEDS])
    within = np.abs(found - warmup) <= 0.1 * warmup
    assert np.median(found) == warmup
    # Measured over 200 seeds (benchmarks/bench_clusters.py --warmup): MSER-5 68% (L=10, where
    # +-10% is +-1 iteration), 85%, 87%; the change-point search 98-100%.  MSER's misses are
    # over-truncations by noise.
    assert within.mean() >= (0.6 if method == "mser" else 0.93)
    assert np.all(found >= 0.9 * warmup)  # never (much) short of the warm-up


def test_refinement_recovers_single_iteration_resolution():
    found = [warmup_mser(run(s, 37)).n_warmup for s in range(20)]
    coarse = [warmup_mser(run(s, 37), refine=False).n_warmup for s in range(20)]
    assert np.median(found) == 37
    assert np.median(coarse) == 40  # the next multiple of 5


@pytest.mark.parametrize("method", ["mser", "changepoint"])
def test_no_warmup_gives_about_zero(method):
    found = np.array([METHODS[method](run(s)).n_warmup for s in SEEDS])
    assert np.median(found) == 0
    # Measured over 200 seeds: MSER-5 (with its bias check) cuts nothing from 98% of them, at
    # most 12 iterations; the change-point search nothing from 97%, a false change otherwise.
    assert np.mean(found == 0) >= 0.95
    if method == "mser":
        assert found.max() <= 0.02 * N


@pytest.mark.parametrize("spike", [10, 30, 150, 300])
@pytest.mark.parametrize("method", ["mser", "changepoint"])
def test_an_outlier_spike_is_not_taken_for_the_end_of_the_warmup(method, spike):
    found = np.array([METHODS[method](run(s, spike=spike)).n_warmup for s in SEEDS])
    # A slow iteration among the first few looks like a warm-up of that length, and MSER often
    # cuts just past it; never far past it.  Measured over 200 seeds: cut more than 20 iterations
    # past the spike in at most 6.5% (MSER-5, spike at 5) and 3.5% (change-points) of runs.
    assert np.mean(found > spike + 20) <= 0.1
    if spike >= 150:  # well inside the run: not cut at all (MSER 98-99%, change-points 95-97%)
        assert np.mean(found == 0) >= 0.9
    after_warmup = np.array([METHODS[method](run(s, 50, spike=spike + 60)).n_warmup for s in range(20)])
    assert np.median(after_warmup) == 50


def test_textbook_mser_is_fooled_by_the_spike_and_by_noise():
    # Why `clip` and `bias_check` exist: one 20-sd iteration in a batch of 5 outweighs tens of
    # batches of noise, and MSER's flat start lets noise pick a truncation.
    textbook = dict(clip=None, bias_check=False, refine=False)
    fooled = np.array([warmup_mser(run(s, spike=150), **textbook).n_warmup for s in range(20)])
    assert np.mean(fooled > 150) > 0.8
    checked = np.array([warmup_mser(run(s, spike=150), clip=None).n_warmup for s in range(20)])
    assert np.mean(checked > 150) < 0.1
    noise = np.array([warmup_mser(run(s), **textbook).n_warmup for s in SEEDS])
    assert np.quantile(noise, 0.9) >= 15  # vs 0 with the check (test_no_warmup_gives_about_zero)


def test_changepoint_penalty_uses_long_run_variance_under_auto_dependence():
    # AR(1) noise with phi 0.5: a penalty from the plain variance took the wandering for changes.
    found = np.array([warmup_changepoint(run(s, 50, phi=0.5)).n_warmup for s in range(40)])
    assert np.mean(np.abs(found - 50) <= 5) >= 0.9


def test_geweke_confirms_the_retained_part_and_flags_a_drift():
    ok = warmup_mser(run(0, 50))
    assert abs(ok.geweke_z) < 3 and ok.geweke_p > 0.003
    drifting = 1.0 + np.linspace(0, 0.2, N) + np.random.default_rng(1).normal(0, SD, N)
    with pytest.warns(RuntimeWarning, match="may never reach a steady state"):
        res = warmup_mser(drifting)
    assert not res.steady_state and res.n_warmup == N // 2
    assert res.geweke_p < 1e-6


def test_detect_warmup_summarises_runs_by_a_high_quantile():
    runs = [run(s, w) for s, w in enumerate([10, 20, 30, 40, 50, 60, 70, 80, 90, 100])]
    s = detect_warmup(runs, method="changepoint")
    assert s.per_run.tolist() == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert s.n_warmup == 100 and s.largest == 100  # 0.9, "higher": the largest of ten
    assert detect_warmup(runs, method="changepoint", quantile=0.5).n_warmup == 60
    assert s.unsteady_runs.size == 0 and len(s.results) == 10
    m = detect_warmup(runs)  # MSER-5: never short, sometimes a few batches long
    assert m.method == "mser"
    assert np.all(m.per_run >= s.per_run) and np.median(m.per_run - s.per_run) == 0
    assert m.n_warmup == int(np.quantile(m.per_run, 0.9, method="higher"))


def test_too_short_run_warns_and_drops_nothing():
    with pytest.warns(RuntimeWarning, match="too short to detect a warm-up"):
        res = warmup_mser(np.ones(19))
    assert res.n_warmup == 0 and not res.steady_state
    with pytest.warns(RuntimeWarning, match="too short"):
        assert warmup_changepoint(np.ones(19)).n_warmup == 0


def test_constant_run_has_no_warmup():
    assert warmup_mser(np.ones(100)).n_warmup == 0
    assert warmup_changepoint(np.ones(100)).n_warmup == 0


# ------------------------------------------------------------- short runs (warmup = "auto")
SHAPES = ("normal", "skewed", "ar1", "outliers")


def short_run(rng, n, shape):
    """``n`` iterations without warm-up, noise about 1% of 1.0 in one of four shapes: normal;
    right-skewed with a floor, ``1 + 1% exponential delays``; AR(1) with autocorrelation 0.5
    (normal marginals); normal with 2% of iterations 10-30 sd slow."""
    if shape == "skewed":
        return 1.0 + SD * rng.exponential(size=n)
    e = rng.normal(size=n)
    if shape == "ar1":
        for t in range(1, n):
            e[t] = 0.5 * e[t - 1] + math.sqrt(0.75) * e[t]
    x = 1.0 + SD * e
    if shape == "outliers":
        hit = rng.random(n) < 0.02
        x[hit] += SD * rng.uniform(10, 30, size=int(hit.sum()))
    return x


def quiet_mser(x, **options):
    """``warmup_mser(x, **options).n_warmup`` without its warnings (short runs often reach the end
    of the search range)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return warmup_mser(x, **options).n_warmup


def warmup_rates(find, n, shape, *, reps=300, seed=0):
    """Rates of ``find(samples) -> iterations cut`` on seeded short runs.

    Returns ``(false_cuts, short)``: the share of runs without warm-up that lose any iteration,
    and the share of runs with a warm-up that are cut short of it by more than one batch (5).
    The warm-up multiplies the first ``L`` iterations by ``1 + A exp(-3 t / L)``, ``L`` uniform
    in 3..15 and ``A`` in [10%, 100%]: it decays to 5% of ``A`` and ends at ``L`` exactly.
    """
    rng = np.random.default_rng([seed, n, SHAPES.index(shape)])
    false_cuts = np.mean([find(short_run(rng, n, shape)) > 0 for _ in range(reps)])
    short = []
    for _ in range(reps):
        length, amplitude = int(rng.integers(3, 16)), rng.uniform(0.1, 1.0)
        x = short_run(rng, n, shape)
        t = np.arange(length)
        x[:length] *= 1 + amplitude * np.exp(-3 * t / length)
        short.append(find(x) < length - 5)
    return float(false_cuts), float(np.mean(short))


@pytest.mark.parametrize("n", [20, 30, 50])
@pytest.mark.parametrize("shape", SHAPES)
def test_auto_warmup_rates(shape, n):
    # warmup = "auto" on short runs: under 5% false cuts, and never short (within one batch of
    # the end of the warm-up in at least 95% of runs).  Measured with 300 runs of each kind
    # (docs/statistics.md, `python tests/test_stats_warmup.py`): false cuts 0-2.3%, short 0-3.7%
    # (the worst: skewed noise at 20 iterations, warm-ups longer than half the run).  The former
    # bias check (|z| > 3 against batch-means standard errors) cut 43-50% of runs of 20.
    false_cuts, short = warmup_rates(auto_warmup, n, shape)
    assert false_cuts < 0.05
    assert short <= 0.05


def test_textbook_mser_cuts_most_short_runs():
    # The simulation above can fail: MSER-5 alone (no bias check) cuts half the runs of 20.
    false_cuts, short = warmup_rates(lambda x: quiet_mser(x, bias_check=False), 20, "normal",
                                     reps=100)
    assert false_cuts > 0.3 and short <= 0.05


def test_bias_check_level_under_its_null():
    from regbench.stats.warmup import _bias_critical

    # The critical value is the 99% quantile of max |T_c| for AR(1) noise with autocorrelation
    # 0.5: on fresh draws of that null (another seed), about 1% of runs exceed it, wherever
    # MSER cuts; on independent noise, far fewer.
    rng = np.random.default_rng(7)
    for phi, most in ((0.5, 0.025), (0.0, 0.005)):
        hits = 0
        for _ in range(400):
            e = rng.normal(size=30)
            for t in range(1, 30):
                e[t] = phi * e[t - 1] + math.sqrt(1 - phi * phi) * e[t]
            hits += quiet_mser(1.0 + SD * e) > 0
        assert hits / 400 <= most
    assert _bias_critical(30, 0.01) == _bias_critical(30, 0.01) > _bias_critical(30, 0.05)


def test_bias_check_is_reported_and_alpha_trades_false_cuts_for_sensitivity():
    res = warmup_mser(run(0, 50))
    assert res.n_warmup == 50 and res.bias_statistic > res.bias_critical > 0
    quiet = warmup_mser(run(3))
    assert quiet.n_warmup == 0 and quiet.steady_state
    assert np.isnan(warmup_mser(run(0, 50), bias_check=False).bias_statistic)
    # A faint warm-up (+3% decaying over 8 of 20 iterations, noise 1%) is kept at alpha = 0.2
    # more often than at 0.01.
    faint = [run(s, 0, n=20) for s in range(40)]
    for x in faint:
        x[:8] += 0.03 * np.exp(-np.arange(8) / 2.7)
    kept = {a: np.mean([quiet_mser(x, alpha=a) > 0 for x in faint]) for a in (0.01, 0.2)}
    assert kept[0.2] > kept[0.01]


def test_long_runs_allow_for_strong_auto_dependence():
    # From 200 iterations on, the check's error uses the second half's long-run variance when it
    # is larger: AR(1) noise with autocorrelation 0.9 (beyond the null's 0.5) cut 4 of 200 runs
    # of 1000 iterations (benchmarks/README.md), 21% without it; with the warm-up still found.
    quiet = np.array([quiet_mser(run(s, phi=0.9)) for s in range(60)])
    assert np.mean(quiet > 0) <= 0.05
    warm = np.array([quiet_mser(run(s, 50, phi=0.9)) for s in range(20)])
    assert np.all(warm >= 45)


def test_long_run_is_tested_on_batch_means():
    # 5000 iterations: the check runs on batch means of 5 (the null is simulated up to 1000).
    res = warmup_mser(run(1, 200, n=5000))
    assert res.n_warmup >= 200 and res.bias_statistic > res.bias_critical
    assert warmup_mser(run(2, n=5000)).n_warmup == 0


@pytest.mark.parametrize(("call", "message"), [
    (lambda: warmup_mser(np.ones(50), batch_size=0), "`batch_size` must be a positive integer"),
    (lambda: warmup_mser(np.ones(50), clip=-1), "`clip` must be positive or None"),
    (lambda: warmup_mser(np.ones(50), alpha=0), r"`alpha` must be in \(0, 1\)"),
    (lambda: warmup_mser(np.ones(50), alpha=1.5), r"`alpha` must be in \(0, 1\)"),
    (lambda: warmup_mser([[1.0]]), "`series` must be one-dimensional"),
    (lambda: warmup_changepoint(np.ones(50), penalty=0), "`penalty` must be positive"),
    (lambda: detect_warmup([np.ones(50)], method="eyeball"), "`method` must be one of 'mser', 'changepoint'"),
    (lambda: detect_warmup([np.ones(50)], quantile=1.5), r"`quantile` must be in \[0, 1\]"),
    (lambda: detect_warmup(np.ones(50)), "`runs` must be a sequence of runs"),
    (lambda: detect_warmup([]), "`runs` must contain at least one run"),
])
def test_validation(call, message):
    with pytest.raises(ValueError, match=message):
        call()


if __name__ == "__main__":  # the table of docs/statistics.md (warm-up); see there for the command
    print("| iterations | noise | false cuts (no warm-up) | short (warm-up of 10-100%, 3-15 iterations) |")
    print("|---|---|---|---|")
    for n_ in (20, 30, 50):
        for shape_ in SHAPES:
            f, s = warmup_rates(auto_warmup, n_, shape_)
            print(f"| {n_} | {shape_} | {f:.1%} | {s:.1%} |")
