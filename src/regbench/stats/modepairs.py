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
   no such gap in either version (or in only one) means one mode, and the ordinary pairs are
   used;
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
taken before the burn-in ends, so only one sequence of observations is ever looked at.

What it does not see: a change of how *often* each mode occurs (the shares are reported, not
tested), and a change that moves one mode and not the other (it is averaged over the matches).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._validate import as_1d

__all__ = ["BURN_IN", "GAP_RATIO", "ModeMatch", "match_modes", "split_modes"]

#: Pairs before the modes are told apart (and before any decision): with 12 runs of a version
#: whose runs fall in either of two modes with equal chance, both modes hold two runs or more
#: 99.4% of the time (8 runs: 93%).
BURN_IN = 12
#: A gap this many pooled standard deviations wide separates two modes.  By simulation (20,000
#: normal samples each, seed 1) the rule splits a unimodal sample of 8, 12 and 20 values in 0.5%,
#: 0.02% and 0% of samples; it finds two modes 25% apart with runs spread 2% in 85% of samples of
#: 8 runs (the misses are samples with fewer than two runs in one mode).
GAP_RATIO = 6.0
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
        The split between the modes of A's and B's log run means (None with one mode).
    upper_share_a, upper_share_b : float
        The share of each version's runs in the slower (upper) mode (NaN with one mode).
    unmatched : int
        Runs still waiting for a partner of their mode.
    made_at : numpy.ndarray
        For each observation, the index of the pair whose run completed it (the pairs it cost:
        ``made_at + 1``); never before the burn-in's last pair.
    """

    log_ratios: np.ndarray
    modes: int
    split_a: float | None
    split_b: float | None
    upper_share_a: float
    upper_share_b: float
    unmatched: int
    made_at: np.ndarray


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
        left, right = v[:j], v[j:]
        ss = float(np.sum((left - left.mean()) ** 2) + np.sum((right - right.mean()) ** 2))
        gap = float(v[j] - v[j - 1])
        sd = np.sqrt(ss / (n - 2))
        ratio = gap / sd if sd > 0 else (np.inf if gap > 0 else 0.0)
        if ratio > best:
            best, where = ratio, 0.5 * (v[j] + v[j - 1])
    return where if best >= gap_ratio else None


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
    The modes are split once, on the first ``burn_in`` pairs, so the observations after ``n``
    pairs are a prefix of those after ``n + 1``: the sequence a confidence sequence monitors.
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
    if a.size < burn_in:
        return ModeMatch(np.empty(0), 0, None, None, nan, nan, 0, np.empty(0, dtype=int))
    la, lb = np.log(a), np.log(b)
    sa, sb = split_modes(la[:burn_in]), split_modes(lb[:burn_in])
    if sa is None or sb is None:
        return ModeMatch(lb - la, 1, sa, sb, nan, nan, 0, np.maximum(np.arange(a.size), burn_in - 1))
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
                made.append(max(i, burn_in - 1))
            else:
                waiting[mode][side].append(value)
    unmatched = sum(len(q) for m in waiting for q in m)
    return ModeMatch(np.asarray(out), 2, sa, sb, float(ma.mean()), float(mb.mean()), unmatched,
                     np.asarray(made, dtype=int))
