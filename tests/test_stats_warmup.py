"""Warm-up detection (seed 001 s.2.2): MSER-5 and the change-point search on synthetic runs with a
known warm-up, without one, and with an outlier spike; success rates over seeded series."""

from __future__ import annotations

import math

import numpy as np
import pytest

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


@pytest.mark.parametrize(("call", "message"), [
    (lambda: warmup_mser(np.ones(50), batch_size=0), "`batch_size` must be a positive integer"),
    (lambda: warmup_mser(np.ones(50), clip=-1), "`clip` must be positive or None"),
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
