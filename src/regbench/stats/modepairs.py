"""Mode-matched pairs: a sequential comparison of a benchmark whose runs land in two modes.

Some benchmarks' runs settle in one of two levels for the whole run (a hash seed, a memory
layout, which core's cache a process lands on: Kalibera et al. 2005, seed 000 s.2, "random
initial conditions"; seed 001 s.4, figs. 6-7, clusters of a complex benchmark).  The log ratio
of a pair of such runs is then either about 0 (same mode) or about +-the distance between the
modes, and its spread (for two levels 25% apart, about 16%) hides a 1% change for thousands of
pairs.  Seed 001 s.4 compares such benchmarks *cluster by cluster*; here that is done online:

1. after ``burn_in`` pairs, each version's run means are split into two modes where the largest
   gap between sorted log run means is at least :data:`GAP_RATIO` times the pooled spread of the
   two sides (each version on its own, so a change of any size moves the split with the runs);
   no such gap in either version means one mode, and the ordinary pairs are used; a gap in one
   version only (a mode that drew fewer than two of its runs so far) extends the burn-in by
   ``burn_in`` pairs, up to :data:`MAX_BURN_INS` times, and then means one mode; a run is in
   the upper mode when it lies above halfway between the medians of the burn-in's two sides;
2. from then on (the burn-in runs included, in their order), a run of A in mode ``k`` waits for
   the next run of B in mode ``k`` (and the other way round), and each such match gives one
   observation ``log(b / a)``.

Why the error rate stays valid: under no change, A and B are alike, each version's split is
made by the same rule from its own runs, so swapping A and B negates every observation: the
observations are symmetric about 0.  Under a change that scales every run by ``1 + e``, B's log
run means are A's shifted by ``log(1 + e)``, the gap rule is shift-invariant, so B's modes are
A's shifted and each observation's mean is exactly ``log(1 + e)``.  Matched runs are distinct
runs, so the observations are independent given the modes, and the confidence sequence of
:mod:`regbench.stats.sequential` applies to them.  The split uses the burn-in runs it also
classifies, which the argument above does not cover; ``tests/test_stats_modepairs.py`` checks
the error rate by simulation (1,000 replays, bimodal and unimodal) instead.  No decision is
taken before the burn-in ends, so only one sequence of observations is ever looked at.  Given
the two boundaries, the observations' mean is not exactly 0 under no change (each boundary is
estimated, and a run near one is counted in the other mode in one version only); that symmetry
holds over sessions, not within one, which is why the boundary is placed where it moves least
(:func:`_boundary`) and why the simulations include modes only 7 standard deviations apart and
runs midway between the modes.

What it does not see: a change of how *often* each mode occurs (the shares are reported, not
tested), and a change that moves one mode and not the other (it is averaged over the matches).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._validate import as_1d

__all__ = ["BURN_IN", "GAP_RATIO", "MAX_BURN_INS", "ModeMatch", "match_modes", "split_modes"]

#: Pairs before the modes are told apart (and before any decision): with 12 runs of a version
#: whose runs fall in either of two modes with equal chance, both modes hold two runs or more
#: 99.4% of the time (8 runs: 93%).
BURN_IN = 12
#: A gap this many pooled standard deviations wide separates two modes.  By simulation (20,000
#: samples each, seed 1; the gap also tried without the value on either of its edges, see
#: :func:`split_modes`) the rule splits a unimodal normal sample of 8, 12 and 20 values in 3.5%,
#: 0.23% and 0.01% of samples (Student t with 3 degrees of freedom: 2.5%, 0.5%, 0.2%); it finds
#: two modes 25% apart with runs spread 2% in 92%, 98.5% and 99% of samples (the misses are
#: samples with fewer than two runs in one mode), and 80%, 90% and 90% when one run lies midway
#: between the modes (without the leave-one-out: 0.5%, 0.01%, 0% split; 85%, 91%, 90% found; 0%
#: with a run midway).  A false split costs precision, not validity (the module docstring).
GAP_RATIO = 6.0
#: When one version shows two modes and the other one, the burn-in is extended (by its own
#: length) at most this many times in all: with 12 runs a version, a mode that holds 43% of the
#: runs draws fewer than two of them in 2.6% of burn-ins, and the two versions then disagree;
#: real runs of a bimodal C loop did so in about 2% of replays of A against A, which then never
#: settled (``benchmarks/bench_sequential.py``).
MAX_BURN_INS = 4
#: Each mode holds at least this share of the burn-in runs (and at least two of them).
MIN_SHARE = 0.15


@dataclass(frozen=True)
class ModeMatch:
    """The observations of a mode-matched comparison so far.

    Attributes
    ----------
    log_ratios : numpy.ndarray
        ``log(b / a)`` of each match, in the order the matches were made (empty during the
        burn-in).
    modes : int
        1 (ordinary pairs) or 2 (mode by mode); 0 during the burn-in.
    split_a, split_b : float or None
        The boundary between the modes of A's and B's log run means: halfway between the
        medians of the burn-in's two sides (None with one mode, or while burning in).
    upper_share_a, upper_share_b : float
        The share of each version's runs in the slower (upper) mode (NaN with one mode).
    unmatched : int
        Runs still waiting for a partner of their mode.
    made_at : numpy.ndarray
        For each observation, the index of the pair whose run completed it (the pairs it cost:
        ``made_at + 1``); never before the burn-in's last pair.
    burn_in : int
        The pairs the modes were split on (a multiple of the burn-in asked for, when the
        versions disagreed; see the module docstring); the burn-in asked for while it lasts.
    """

    log_ratios: np.ndarray
    modes: int
    split_a: float | None
    split_b: float | None
    upper_share_a: float
    upper_share_b: float
    unmatched: int
    made_at: np.ndarray
    burn_in: int = BURN_IN


def split_modes(log_means, *, gap_ratio: float = GAP_RATIO, min_share: float = MIN_SHARE) -> float | None:
    """Where two modes of log run means split, or None when there is one mode.

    Parameters
    ----------
    log_means : array_like, 1-D
        Log run means of one version (at least 4).
    gap_ratio : float, keyword-only
        How many pooled standard deviations of the two sides the largest gap must span.
    min_share : float, keyword-only
        Each side holds at least this share of the values, and at least two.

    Returns
    -------
    float or None
        The middle of the gap.

    Notes
    -----
    Written by hand rather than with :func:`regbench.stats.clusters.find_clusters` (Gaussian
    mixtures): this runs once per comparison but thousands of times in the simulations that
    check the error rate, and only has to tell one mode from two well-separated ones.
    """
    v = np.sort(as_1d(log_means, "log_means"))
    n = v.size
    if n < 4:
        raise ValueError("`log_means` must hold at least 4 values")
    lo = max(2, int(np.ceil(min_share * n)))
    best, where = 0.0, None
    for j in range(lo, n - lo + 1):
        # The gap between v[j - 1] and v[j], and the same gap with one of its two edge values
        # left out: a single run between the modes (a run disturbed part of its time, so its
        # mean lies between the levels) halves the gap and inflates its side's spread, and
        # with it in the burn-in both modes were missed for the whole session (real runs of a
        # bimodal C loop, benchmarks/bench_sequential.py: 14% of replays of A against A then
        # did not settle within 1,000 pairs).  See GAP_RATIO for what it costs.
        for left, right in _sides(v, j):
            ss = float(np.sum((left - left.mean()) ** 2) + np.sum((right - right.mean()) ** 2))
            gap = float(right[0] - left[-1])
            sd = np.sqrt(ss / (left.size + right.size - 2))
            ratio = gap / sd if sd > 0 else (np.inf if gap > 0 else 0.0)
            if ratio > best:
                best, where = ratio, 0.5 * (right[0] + left[-1])
    return where if best >= gap_ratio else None


def _sides(v: np.ndarray, j: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The two sides of sorted ``v`` split before ``j``: as they are, and without the value on
    either edge of the gap (when each side keeps two values)."""
    out = [(v[:j], v[j:])]
    if j >= 3:
        out.append((v[:j - 1], v[j:]))
    if v.size - j >= 3:
        out.append((v[:j], v[j + 1:]))
    return out


def match_modes(a_means, b_means, *, burn_in: int = BURN_IN) -> ModeMatch:
    """The mode-matched observations of pairs of run means, ``a_means[i]`` with ``b_means[i]``.

    Parameters
    ----------
    a_means, b_means : array_like, 1-D
        Run means (positive) of A and B, pair by pair, in the order they were run.
    burn_in : int, keyword-only
        Pairs before the modes are split (at least 4); before that there is no observation.

    Returns
    -------
    ModeMatch

    Raises
    ------
    ValueError
        Arrays of different lengths, non-positive or non-finite means, a burn-in below 4.

    Notes
    -----
    The modes are split once, on the first ``burn_in`` pairs (or a multiple of it, decided on
    those pairs alone, when one version shows two modes and the other one), so the observations
    after ``n`` pairs are a prefix of those after ``n + 1``: the sequence a confidence sequence
    monitors.
    See the module docstring for why the error rate holds.

    References
    ----------
    Seed 001 (Bulej, Kalibera, Tuma 2005), s.4: comparing the results of complex benchmarks
    cluster by cluster.  Seed 000 (Kalibera, Bulej, Tuma), s.2: random initial conditions make
    whole runs differ.
    """
    a = as_1d(a_means, "a_means")
    b = as_1d(b_means, "b_means")
    if a.size != b.size:
        raise ValueError("`a_means` and `b_means` must have the same length")
    if (a.size and a.min() <= 0) or (b.size and b.min() <= 0):
        raise ValueError("run means must be positive")
    if not isinstance(burn_in, numbers.Integral) or isinstance(burn_in, bool) or burn_in < 4:
        raise ValueError("`burn_in` must be an integer >= 4")
    nan = float("nan")
    la, lb = np.log(a), np.log(b)
    end = burn_in
    while True:
        if a.size < end:
            return ModeMatch(np.empty(0), 0, None, None, nan, nan, 0, np.empty(0, dtype=int), burn_in)
        sa, sb = split_modes(la[:end]), split_modes(lb[:end])
        if (sa is None) == (sb is None) or end >= MAX_BURN_INS * burn_in:
            break
        end += burn_in
    if sa is None or sb is None:
        return ModeMatch(lb - la, 1, sa, sb, nan, nan, 0, np.maximum(np.arange(a.size), end - 1), end)
    sa, sb = _boundary(la[:end], sa), _boundary(lb[:end], sb)
    ma, mb = la > sa, lb > sb
    waiting: list[list[list[float]]] = [[[], []], [[], []]]  # [mode][0 for A, 1 for B]
    out: list[float] = []
    made: list[int] = []
    for i in range(a.size):
        # A's run of the pair is matched first, then B's: a fixed order, the same for every pair.
        for side, value, mode in ((0, la[i], int(ma[i])), (1, lb[i], int(mb[i]))):
            other = waiting[mode][1 - side]
            if other:
                partner = other.pop(0)
                out.append(value - partner if side == 1 else partner - value)
                made.append(max(i, end - 1))
            else:
                waiting[mode][side].append(value)
    unmatched = sum(len(q) for m in waiting for q in m)
    return ModeMatch(np.asarray(out), 2, sa, sb, float(ma.mean()), float(mb.mean()), unmatched,
                     np.asarray(made, dtype=int), end)


def _boundary(burn: np.ndarray, split: float) -> float:
    """Where runs are told to be in one mode or the other: halfway between the medians of the
    burn-in's two sides of ``split``.

    ``split`` is the middle of the largest empty gap between the burn-in's values, which may lie
    anywhere in that gap: two sd from one mode's centre in one version and four in the other.
    Runs near it are then counted in the other mode in one version and not in the other, and
    that leans every observation of the session one way: by simulation (modes 25% apart, runs
    spread 3%), the difference between A's and B's splits correlated 0.35 with the mean of a
    session's observations, and A against itself was called "changed" in 8.6% of sessions at
    alpha 5% (runs spread 1% with 5% of runs midway: 5.2%).  Halfway between the modes'
    medians is far steadier: 4.8% and 3.5%.
    """
    lower, upper = burn[burn <= split], burn[burn > split]
    return 0.5 * float(np.median(lower) + np.median(upper))
