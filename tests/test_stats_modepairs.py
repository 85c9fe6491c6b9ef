"""Mode-matched pairs (regbench.stats.modepairs): validation, the matching, and the error rate of
the sequential decision on them by simulation (seeded, 1,000 replays, as test_stats_sequential)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from regbench.stats.modepairs import BURN_IN, match_modes, split_modes
from regbench.stats.sequential import t_mixture_path

ALPHA = 0.05
REPLAYS = 1000
# One-sided binomial margin: the rate of wrong decisions of 1,000 replays exceeds
# alpha + 3 sd of a binomial(1000, alpha) share in about 0.1% of test runs if the bound holds.
MARGIN = 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPLAYS)


def bimodal_runs(gen, n, *, effect=0.0, gap=0.25, spread=0.01, upper=0.5, size=None, strays=0.0):
    """Run means of A and B: each run in the slower mode (``1 + gap``) with chance ``upper``,
    times log-normal run noise; B is A scaled by ``1 + effect``.  A share ``strays`` of runs lies
    midway between the modes instead (runs disturbed for part of their time)."""
    shape = (size, n) if size else (n,)

    def runs():
        mode = gen.random(shape) < upper
        level = np.where(mode, 1 + gap, 1.0)
        if strays:
            level = np.where(gen.random(shape) < strays, 1 + gap / 2, level)
        return level * np.exp(spread * gen.standard_normal(shape))
    return runs(), (1 + effect) * runs()


def first_decision(x, *, threshold, alpha=ALPHA, min_n=3):
    """(decision, sign, n) of the first settled prefix of ``x``, as compare --run decides."""
    if x.size < 2:
        return "undecided", 0, x.size
    low, high = t_mixture_path(x, alpha=alpha)
    n = np.arange(1, x.size + 1)
    band = math.log1p(threshold)
    changed = ((low > 0) | (high < 0)) & (n >= min_n)
    no_change = (low > -band) & (high < band) & (n >= min_n) & ~changed
    settled = changed | no_change
    if not settled.any():
        return "undecided", 0, x.size
    k = int(np.argmax(settled))
    return ("changed" if changed[k] else "no change"), (1 if low[k] > 0 else -1), k + 1


def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match="`a_means` and `b_means` must have the same length"):
        match_modes([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="run means must be positive"):
        match_modes([1.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="`burn_in` must be an integer >= 4"):
        match_modes([1.0], [1.0], burn_in=2)
    with pytest.raises(ValueError, match="`log_means` must hold at least 4 values"):
        split_modes([0.0, 1.0])


def test_modes_are_split_and_matched_within_their_mode():
    gen = np.random.default_rng(1)
    a, b = bimodal_runs(gen, 60, effect=0.02)
    m = match_modes(a, b)
    assert m.modes == 2 and m.split_a is not None and m.split_b is not None
    assert math.log(1.0) < m.split_a < math.log(1.25) and 0.3 < m.upper_share_a < 0.7
    # The boundary lies halfway between the modes, not anywhere in the empty gap between them.
    assert abs(m.split_a - 0.5 * math.log(1.25)) < 0.01 and abs(m.split_b - 0.5 * math.log(1.25) - math.log(1.02)) < 0.01
    # Every observation compares runs of one mode: near log(1.02), never near +-log(1.25).
    assert np.all(np.abs(m.log_ratios - math.log(1.02)) < 0.08)
    assert len(m.log_ratios) * 2 + m.unmatched == 2 * len(a)
    assert m.made_at.size == m.log_ratios.size and m.made_at[0] == BURN_IN - 1 and np.all(np.diff(m.made_at) >= 0)
    # The observations after n pairs are a prefix of those after n + 1.
    for n in range(BURN_IN, 60):
        shorter, longer = match_modes(a[:n], b[:n]).log_ratios, match_modes(a[:n + 1], b[:n + 1]).log_ratios
        assert np.array_equal(longer[:len(shorter)], shorter)
    # Nothing during the burn-in; one mode gives the ordinary pairs.
    assert match_modes(a[:BURN_IN - 1], b[:BURN_IN - 1]).modes == 0
    u = np.exp(0.01 * gen.standard_normal(40))
    one = match_modes(u, u * 1.01)
    assert one.modes == 1 and np.allclose(one.log_ratios, math.log(1.01))


def test_a_run_between_the_modes_does_not_hide_them():
    """One run midway between two modes (disturbed for part of its time) halved the largest gap and
    inflated its side's spread: both modes went unseen for the whole session."""
    gen = np.random.default_rng(3)
    found = 0
    for _ in range(200):
        x = np.log(np.where(gen.random(12) < 0.5, 1.25, 1.0) * np.exp(0.02 * gen.standard_normal(12)))
        x[gen.integers(12)] = math.log(1.12)
        if np.sum(x > math.log(1.18)) >= 2 and np.sum(x < math.log(1.06)) >= 2:
            split = split_modes(x)
            found += split is not None and math.log(1.06) < split < math.log(1.18)
    assert found >= 0.8 * 200 * 0.95  # nearly every sample with two runs in each mode


def test_the_burn_in_is_extended_while_only_one_version_shows_two_modes():
    """A drew one fast run in its first 12 (one mode to the rule), B both modes: rather than
    falling back to ordinary pairs for the whole session, the burn-in goes on."""
    gen = np.random.default_rng(4)
    noise = lambda n: np.exp(0.01 * gen.standard_normal(n))  # noqa: E731
    a = np.concatenate(([1.0], np.full(11, 1.25), np.where(np.arange(48) % 2 == 0, 1.0, 1.25))) * noise(60)
    b = np.where(np.arange(60) % 2 == 0, 1.0, 1.25) * 1.02 * noise(60)
    assert split_modes(np.log(a[:BURN_IN])) is None and split_modes(np.log(b[:BURN_IN])) is not None
    assert match_modes(a[:2 * BURN_IN - 1], b[:2 * BURN_IN - 1]).modes == 0  # still burning in
    m = match_modes(a, b)
    assert m.modes == 2 and m.burn_in == 2 * BURN_IN and m.made_at[0] == 2 * BURN_IN - 1
    assert np.all(np.abs(m.log_ratios - math.log(1.02)) < 0.06)
    for n in range(2 * BURN_IN, 60):  # still a prefix of the longer sequence
        shorter, longer = match_modes(a[:n], b[:n]).log_ratios, match_modes(a[:n + 1], b[:n + 1]).log_ratios
        assert np.array_equal(longer[:len(shorter)], shorter)


@pytest.mark.parametrize(("upper", "strays", "spread"),
                         [(0.5, 0.0, 0.01), (0.2, 0.0, 0.01), (0.0, 0.0, 0.01), (0.43, 0.05, 0.01), (0.5, 0.0, 0.03)])
def test_error_rate_holds_under_no_change_at_any_stop(upper, strays, spread):
    """A against itself: a "changed" decision is wrong; bimodal (shares 50% and 20%; 43% with 5% of
    runs midway between the modes, as real runs of a bimodal C loop; modes only 7 standard
    deviations apart, where a boundary in the wrong place counts runs in the other mode) and
    unimodal."""
    gen = np.random.default_rng(20261125 + int(upper * 100))
    wrong = 0
    for _ in range(REPLAYS):
        a, b = bimodal_runs(gen, 300, upper=upper, strays=strays, spread=spread)
        decision, _, _ = first_decision(match_modes(a, b).log_ratios, threshold=0.01)
        wrong += decision == "changed"
    assert wrong / REPLAYS <= ALPHA + MARGIN


@pytest.mark.parametrize("effect", [0.01, 0.03])
def test_error_rate_holds_for_a_real_change_and_a_1pct_change_settles_in_1000_pairs(effect):
    """B is 1% (3%) slower in both modes: a "changed" decision with the wrong sign, or "no change"
    of the effect's size, is wrong; unsettled after 1,000 pairs counts as wrong too (a 1% change
    in a benchmark whose modes lie 25% apart must settle)."""
    gen = np.random.default_rng(int(effect * 1000))
    wrong, used = 0, []
    for _ in range(REPLAYS):
        a, b = bimodal_runs(gen, 1000, effect=effect)
        decision, sign, n = first_decision(match_modes(a, b).log_ratios, threshold=effect)
        wrong += decision != "changed" or sign < 0
        used.append(n)
    assert wrong / REPLAYS <= ALPHA + MARGIN
    # The ordinary pairs of the same runs do not settle a 1% change in 1,000 pairs.
    if effect == 0.01:
        a, b = bimodal_runs(np.random.default_rng(5), 1000, effect=effect)
        assert first_decision(np.log(b / a), threshold=effect)[0] == "undecided"


def interfered_runs(gen, n, *, effect=0.0, samples=5, share=0.3, size=None):
    """Runs of ``samples`` values: a floor (run noise 0.3%, B's scaled by ``1 + effect``) plus,
    for a ``share`` of samples, interference that only adds time (exponential, mean 20%)."""
    shape = (size, n) if size else (n,)

    def runs(scale):
        floor = scale * np.exp(0.003 * gen.standard_normal(shape))[..., None]
        hit = gen.random((*shape, samples)) < share
        return floor * (1 + hit * gen.exponential(0.2, (*shape, samples)))
    return runs(1.0), runs(1 + effect)


@pytest.mark.parametrize("effect", [0.0, 0.03])
def test_the_low_quantile_keeps_the_error_rate_and_needs_fewer_pairs_than_the_mean(effect):
    """compare --run --location low: log ratios of each run's 10% quantile (numpy's default
    quantile, as regbench.run.sequential.run_value) under interference that only adds time."""
    from regbench.stats.runs import LOW_QUANTILE

    gen = np.random.default_rng(777 + int(effect * 100))
    wrong, used = {"low": 0, "mean": 0}, {"low": [], "mean": []}
    for _ in range(REPLAYS):
        a, b = interfered_runs(gen, 300, effect=effect)
        for loc, f in (("low", lambda r: np.quantile(r, LOW_QUANTILE, axis=-1)), ("mean", lambda r: r.mean(axis=-1))):
            decision, sign, n = first_decision(np.log(f(b) / f(a)), threshold=0.02)
            wrong[loc] += (decision == "changed") if effect == 0 else (decision != "changed" or sign < 0)
            used[loc].append(n)
    assert wrong["low"] / REPLAYS <= ALPHA + MARGIN
    assert np.mean(used["low"]) < 0.5 * np.mean(used["mean"])


def test_the_split_agrees_with_the_mixture_clustering_of_stats_clusters():
    """An independent reference: Gaussian mixtures chosen by ICL (find_clusters, Mclust's method)
    find two clusters where split_modes splits, one where it does not, and put the same runs
    on each side."""
    from regbench.stats.clusters import find_clusters

    gen = np.random.default_rng(12)
    for _ in range(10):
        a, _ = bimodal_runs(gen, 30, spread=0.01)
        x = np.log(a)
        split = split_modes(x)
        ref = find_clusters(x, log=False, rng=1)
        assert split is not None and ref.n_clusters == 2
        assert np.array_equal(x > split, ref.labels == np.argmax(ref.centres))
        u = 0.01 * gen.standard_normal(30)
        assert split_modes(u) is None and find_clusters(u, log=False, rng=1).n_clusters == 1
