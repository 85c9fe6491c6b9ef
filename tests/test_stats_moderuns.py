"""A location change of a benchmark whose runs each stay in one mode, held to its modes
(:mod:`regbench.stats.moderuns`)."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest

from regbench.stats.moderuns import ALPHA, ModeRuns, held, mode_change_p
from regbench.stats.segments import version_floors

BOUNDS = np.array([-np.inf, 1.1, np.inf])


def _runs(levels_per_version, rng, iters=20, noise=0.003):
    """Versions of runs whose samples sit at the given level each, with a little noise."""
    return [[level * (1 + rng.normal(0, noise, iters)) for level in levels] for levels in levels_per_version]


def _mode_runs(runs, bounds=BOUNDS):
    fastest = version_floors(runs, estimator="mean", log=True)
    return ModeRuns.of(runs, bounds, fence=10.0, log=True, fastest=fastest)


def _fisher_two_sided(a, b, c, d):
    """Fisher's exact test of [[a, b], [c, d]] by enumerating the hypergeometric distribution
    (an independent reference for scipy's)."""
    row1, col1, n = a + b, a + c, a + b + c + d
    def prob(x):
        return comb(col1, x) * comb(n - col1, row1 - x) / comb(n, row1)
    observed = prob(a)
    lo, hi = max(0, row1 + col1 - n), min(row1, col1)
    return min(1.0, sum(prob(x) for x in range(lo, hi + 1) if prob(x) <= observed * (1 + 1e-7)))


def test_the_shares_of_runs_per_mode_are_tested_by_fishers_exact_test():
    rng = np.random.default_rng(0)
    # Left: 12 fast runs and 3 slow over five versions; right: 0 fast and 3 slow in one.
    left = [[1.0, 1.0, 1.25], [1.0, 1.0, 1.0], [1.0, 1.25, 1.0], [1.0, 1.0, 1.0], [1.25, 1.0, 1.0]]
    right = [[1.25, 1.25, 1.25]]
    before, after = _mode_runs(_runs(left, rng)), _mode_runs(_runs(right, rng))
    assert before.counts.sum(axis=0).tolist() == [12, 3] and after.counts.sum(axis=0).tolist() == [0, 3]
    shares, _, _ = mode_change_p(before, after)
    assert shares == pytest.approx(_fisher_two_sided(12, 3, 0, 3), rel=1e-9)
    assert 0.01 < shares < 0.05  # 3 slow of 3 after 3 of 15: binomial noise at the 1% level


def test_share_noise_is_not_held_but_a_step_of_every_run_is():
    rng = np.random.default_rng(1)
    quiet = slow = 0
    for _ in range(300):
        levels = np.where(rng.random((10, 3)) < 0.3, 1.25, 1.0)
        runs = _runs(levels, rng)
        m = _mode_runs(runs)
        quiet += held(m.window(0, 5), m.window(5, 10))
        stepped = _runs(levels[5:] * 1.05, rng)  # +5% of every run, both modes
        m2 = _mode_runs(runs[:5] + stepped)
        slow += held(m2.window(0, 5), m2.window(5, 10))
    # Under no change each of the three tests errs at most ALPHA of the time (a union bound).
    assert quiet / 300 <= 3 * ALPHA + 0.01
    assert slow == 300


def test_a_step_that_carries_runs_across_the_mode_boundary_is_held_by_the_fastest_runs():
    # Runs at two levels 22% apart and a +11.5% step of both (series 49 of the probe shape
    # `bimodal-three`, seed 11): the modes found over the whole history put both old levels in
    # one mode and the new slow level in the next, so the first mode's level mixes two levels
    # before the step and holds one after, and the shares barely move; each version's fastest
    # run moves by 11.5%.
    rng = np.random.default_rng(2)
    bounds = np.array([-np.inf, 0.073, np.inf])
    left = [[0.0566, 0.0692, 0.0692], [0.0693, 0.0567, 0.0692], [0.0569, 0.0694, 0.0694], [0.0566, 0.0689, 0.0566],
            [0.0688, 0.0563, 0.0567]]
    right = [[0.0631, 0.0630, 0.0769], [0.0770, 0.0771, 0.0768], [0.0632, 0.0631, 0.0634],
             [0.0631, 0.0770, 0.0633], [0.0631, 0.0633, 0.0631]]
    m = _mode_runs(_runs(left + right, rng, noise=0.002), bounds)
    shares, levels, floor = mode_change_p(m.window(0, 5), m.window(5, 10))
    assert shares > ALPHA and levels > ALPHA
    assert floor < ALPHA  # one version of five after the step drew all its runs slow: not far below
    assert held(m.window(0, 5), m.window(5, 10))
    # Without the fastest runs (not times), nothing holds it.
    bare = ModeRuns(m.counts, m.modes, None)
    assert not held(bare.window(0, 5), bare.window(5, 10))


def test_builds_that_differ_a_little_are_not_a_change_of_a_rare_modes_level():
    # Every run of a version moved alike by 0.5% (builds differ), runs slow a third of the time:
    # the slow mode has a value (two of three runs there) at only a few versions of a window, too
    # few to estimate that component, which without the history's estimate counts as none.
    rng = np.random.default_rng(4)
    with_history = without = 0
    for _ in range(300):
        levels = np.where(rng.random((10, 3)) < 0.33, 1.25, 1.0) * (1 + rng.normal(0, 0.005, (10, 1)))
        m = _mode_runs(_runs(levels, rng))
        _, levels_p, _ = mode_change_p(m.window(0, 5), m.window(5, 10), version_var=(0.005 ** 2, 100))
        with_history += levels_p < ALPHA
        _, levels_p, _ = mode_change_p(m.window(0, 5), m.window(5, 10))
        without += levels_p < ALPHA
    assert with_history / 300 <= 2 * ALPHA
    assert without / 300 > 5 * ALPHA


def test_a_change_nothing_can_be_asked_about_is_held():
    rng = np.random.default_rng(5)
    m = _mode_runs(_runs([[1.0, 1.0, 1.25]] * 3, rng))
    empty = m.window(0, 0)
    assert all(np.isnan(mode_change_p(empty, m)))
    assert held(empty, m)


def test_mode_runs_survive_a_saved_state_and_join_in_order():
    rng = np.random.default_rng(3)
    runs = _runs([[1.0, 1.25, 1.0], [1.0, 1.0], [], [1.25, 1.25, 1.0]], rng)
    m = _mode_runs(runs)
    state = json.loads(json.dumps(m.to_state(), allow_nan=False))  # NaN (one run: no variance) as null
    back = ModeRuns.from_state(state)
    assert back.counts.tolist() == m.counts.tolist() == [[2, 1], [2, 0], [0, 0], [1, 2]]
    for a, b in zip([*back.modes, back.fastest], [*m.modes, m.fastest], strict=True):
        assert a.index.tolist() == b.index.tolist() and a.n.tolist() == b.n.tolist()
        np.testing.assert_allclose(a.mean, b.mean)
        np.testing.assert_allclose(a.var, b.var, equal_nan=True)
    joined = m.window(0, 2) + m.window(2, 4)
    assert joined.counts.tolist() == m.counts.tolist()
    assert joined.modes[1].index.tolist() == m.modes[1].index.tolist() == [3]  # two runs must hold a mode
    assert joined.fastest is not None and joined.fastest.index.tolist() == [0, 1, 3]
    assert m.window(3, 9).size == 1 and m.window(3, 9).modes[1].index.tolist() == [0]
    taken = m.take(np.array([0, 3]))  # the versions with runs on either side of the empty one
    assert taken.counts.tolist() == [[2, 1], [1, 2]] and taken.modes[1].index.tolist() == [1]
    assert taken.fastest is not None and taken.fastest.index.tolist() == [0, 1]
