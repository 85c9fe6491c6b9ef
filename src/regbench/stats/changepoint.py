"""E-Divisive: multiple change points by energy statistics and a permutation test.

Matteson and James (2014) find change points in a sequence by hierarchical (binary) division.
For a segment ``z[start:end]`` and a split ``tau`` the energy statistic of the two sides
``X = z[start:tau]`` (``n`` values) and ``Y = z[tau:kappa]`` (``m`` values) is (s.2, s.3)::

    Q(tau, kappa) = n m / (n + m) * (  2/(n m)          sum |X_i - Y_j|^alpha
                                     - 1/binom(n, 2)    sum_{i<k} |X_i - X_k|^alpha
                                     - 1/binom(m, 2)    sum_{j<k} |Y_j - Y_k|^alpha )

with ``0 < alpha <= 2`` (``alpha < 2`` characterises any difference of distributions, ``alpha = 2``
only a difference of means).  The segment's candidate is the split that maximises ``Q``; the
candidate of the whole sequence is the best one over all current segments.  It is kept when a
permutation test says it is significant: the values are shuffled within every current segment,
the same search is run on the shuffled sequence, and the p-value is the share of the
``n_permutations`` shuffles (plus the observed sequence itself) whose best statistic is at
least the observed one (s.3, "hierarchical significance testing").  Division stops at the first
candidate whose p-value exceeds ``sig_level``.

Two searches over ``kappa`` are offered (``span``):

``"end"`` (the default)
    ``kappa`` is the end of the segment: ``Y`` is everything after the split.  This is the
    "E-divisive means" of MongoDB's signal-processing-algorithms (Daly et al. 2020).
``"best"``
    ``kappa`` is searched too, as in the paper, in the R package ``ecp`` and in Apache Otava:
    ``Y`` may stop before the segment ends, which isolates a short excursion (a regression
    fixed a few versions later) inside a long quiet segment.

Both find steps and creeping degradations equally well (tests: recall of 1-3 steps, a creep of
ten 0.5% steps); on an excursion of 8 versions by 8% (4 noise sd) in the middle of 120 versions
``"best"`` found both edges in 20 of 20 series and ``"end"`` either edge in 3.  ``"end"`` is the
default because it costs seven times less: measured (CPU time, this module, 199 permutations)
on 500 versions with 3 steps, 0.18 s against 1.3 s, and on 500 quiet versions 0.08 s against
0.8 s.  Other detectors compare consecutive versions and see a sharp excursion's two edges.

Speed.  A segment's statistics for all splits come from prefix sums: ``P(tau, kappa)``, the sum
of ``|z_i - z_j|^alpha`` over ``i < tau, j < kappa``, is the 2-D cumulative sum of the distance
matrix, and every within- and between-sum of the formula is a combination of ``P`` at
``(tau, tau)``, ``(tau, kappa)`` and ``(kappa, kappa)``: ``O(L^2)`` work per segment and
permutation (``span="best"``).  For ``span="end"`` only the diagonal of ``P`` and its last
column are needed: the last column is the cumulative sum of the (permutation invariant) row sums
of the distance matrix, and the diagonal needs ``h_t = sum_{i<t} |z_i - z_t|``, which for
``alpha = 1`` follows from the number and the sum of the earlier values below ``z_t``; those are
counted in blocks of about ``sqrt(L)`` positions (pairwise within a block, from a rank-space
table across blocks), ``O(L^1.5)`` per permutation.  Permutations are processed in batches.
A segment's permutation maxima are drawn once and reused by every later test in which the
segment is still whole: the null distribution of a test is the element-wise maximum over the
current segments of their own permutation maxima.  That is the permutation distribution of the
paper (segments are shuffled independently of each other), drawn once per segment instead of
once per test.

References
----------
Matteson and James, "A nonparametric approach for multiple change point analysis of
multivariate data", JASA 109 (2014) 334-345: s.2 (the energy divergence and its sample
statistic), s.3 (E-Divisive: the maximisation over ``tau`` and ``kappa``, hierarchical division,
hierarchical significance testing with permutations within clusters; ``min_size`` and
``alpha`` as in the ``ecp`` package).
Daly, Brown, Ingo, O'Leary, Bradford, "Change Point Detection in Software Performance Testing",
ICPE 2020 (E-divisive means on performance histories; ``kappa`` = end of the segment).
Phipson and Smyth, "Permutation p-values should never be zero", SAGMB 9 (2010): the p-value
``(1 + #exceedances) / (n_permutations + 1)``.
seed 001 (001_0c28a3a14a5fab8a.txt) s.2.3: creeping degradations, sequences of individually
negligible changes, which a test of consecutive versions misses and a division of the whole
history finds.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from functools import lru_cache
from typing import overload

import numpy as np

from ._validate import as_1d, check_positive_int, make_rng

SPANS = ("end", "best")

#: Default smallest number of observations in a segment.  Five versions give a segment mean and
#: its interval some stability; the paper's ``ecp`` uses 30, too many for version histories.  A
#: change in the last ``min_size - 1`` versions cannot be found yet.
DEFAULT_MIN_SIZE = 5

#: Values materialised at once by one batch of permutations (about 32 MB of float64).
MAX_CHUNK_ELEMENTS = 1 << 22


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SplitCandidate:
    """The best split of one segment ``x[start:end]``.

    Attributes
    ----------
    index : int
        First index of the new segment (``x[start:index]`` and ``x[index:...]`` differ).
    statistic : float
        The maximised energy statistic ``Q`` (same units as ``|x|**alpha``).
    start, end : int
        The segment that was searched.
    kappa : int
        End (exclusive) of the right-hand sample ``Y`` at the maximum: ``end`` for
        ``span="end"``, possibly smaller for ``span="best"``.
    """

    index: int
    statistic: float
    start: int
    end: int
    kappa: int


@dataclass(frozen=True)
class EDivisiveResult:
    """Change points found by :func:`e_divisive`.

    Attributes
    ----------
    change_points : numpy.ndarray
        Sorted indices; each is the first index of a new segment.
    statistics, p_values : numpy.ndarray
        The energy statistic and the permutation p-value of each change point (same order).
        p-values are multiples of ``1 / (n_permutations + 1)``.
    order : numpy.ndarray
        The change points in the order they were found (strongest division first).
    tested : tuple of SplitCandidate
        Every candidate that was tested, in order; when the last one is not a change point it is
        the candidate that stopped the division.
    tested_p_values : numpy.ndarray
        The p-value of each tested candidate.
    null_distributions : tuple of numpy.ndarray
        For each test, the permutation maxima it was compared with (``n_permutations`` values).
    alpha, min_size, sig_level, n_permutations, span
        The options used.
    n : int
        Number of observations.
    """

    change_points: np.ndarray
    statistics: np.ndarray
    p_values: np.ndarray
    order: np.ndarray
    tested: tuple[SplitCandidate, ...]
    tested_p_values: np.ndarray
    null_distributions: tuple[np.ndarray, ...] = field(repr=False)
    alpha: float
    min_size: int
    sig_level: float
    n_permutations: int
    span: str
    n: int

    @property
    def segments(self) -> list[tuple[int, int]]:
        """``(start, end)`` of every segment between consecutive change points."""
        bounds = [0, *(int(c) for c in self.change_points), self.n]
        return list(zip(bounds[:-1], bounds[1:]))


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------

def _check_options(alpha, min_size, span) -> None:
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not 0 < float(alpha) <= 2:
        raise ValueError("`alpha` must be in (0, 2]")
    if not isinstance(min_size, numbers.Integral) or isinstance(min_size, bool) or min_size < 2:
        raise ValueError("`min_size` must be an integer of at least 2")
    if not isinstance(span, str) or span not in SPANS:
        raise ValueError(f"`span` must be one of {', '.join(map(repr, SPANS))}")


def validate_options(*, alpha: float = 1.0, min_size: int = DEFAULT_MIN_SIZE, sig_level: float = 0.05,
                     n_permutations: int = 199, span: str = "end") -> None:
    """Raise :class:`ValueError` naming the first invalid option of :func:`e_divisive`.

    For callers that take the options long before they have data (detectors).
    """
    _check_options(alpha, min_size, span)
    if not isinstance(sig_level, numbers.Real) or isinstance(sig_level, bool) or not 0 < sig_level < 1:
        raise ValueError("`sig_level` must be in (0, 1)")
    check_positive_int(n_permutations, "n_permutations")


# --------------------------------------------------------------------------------------------
# Statistics of all splits of a segment, for a batch of permutations of it
# --------------------------------------------------------------------------------------------

class _Segment:
    """One segment's values and the permutation-invariant parts of its statistics."""

    def __init__(self, z: np.ndarray, alpha: float, min_size: int, span: str):
        # Distances do not depend on the location; centring keeps the rank formula of
        # _earlier_abs_sums (products of values and counts) free of cancellation.
        z = z - np.median(z) if z.size else z
        self.z = z
        self.L = z.size
        self.alpha = float(alpha)
        self.ms = min_size
        self.span = span
        self.fast = self.alpha == 1.0 and span == "end"
        # Pairwise distances, kept only off the fast path (which needs row sums alone).
        self.D: np.ndarray | None
        order = np.argsort(z, kind="stable")
        self.rank = np.empty(self.L, dtype=np.intp)
        self.rank[order] = np.arange(self.L)
        if self.fast:
            # Row sums of |z_i - z_j| from the sorted values: sum_j |s_k - s_j| in O(L log L).
            s = z[order]
            pre = np.concatenate(([0.0], np.cumsum(s)))
            k = np.arange(self.L)
            row = s * k - pre[:-1] + (pre[-1] - pre[1:]) - s * (self.L - 1 - k)
            self.row = np.empty(self.L)
            self.row[order] = row
            self.D = None
        else:
            self.D = _distances(z[:, None], z[None, :], self.alpha)
            self.row = self.D.sum(axis=1)
        self.total = float(self.row.sum())
        # Magnitude of the sums in Q: rounding in Q is relative to it.
        self.scale = self.total / max(self.L, 1)

    def splittable(self) -> bool:
        return self.L >= 2 * self.ms

    @overload
    def profile(self, perms: None) -> tuple[np.ndarray, np.ndarray]: ...

    @overload
    def profile(self, perms: np.ndarray) -> tuple[np.ndarray, None]: ...

    def profile(self, perms: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """Per split ``tau`` (``ms..L-ms``): the best ``Q`` over ``kappa`` and that ``kappa``.

        ``perms`` is a ``(B, L)`` array of index permutations, or None for the observed order
        (then ``B = 1`` and the ``kappa`` of each maximum is returned too; for permutations only
        the maxima are computed and the second array is None).
        """
        observed = perms is None
        if perms is None:
            perms = np.arange(self.L)[None, :]
        if self.span == "end":
            q = self._profile_end(perms)
            return q, (np.full(q.shape, self.L, dtype=np.intp) if observed else None)
        return self._profile_best(perms, observed)

    # -- span="end" ----------------------------------------------------------------------------
    def _profile_end(self, perms: np.ndarray) -> np.ndarray:
        L, ms = self.L, self.ms
        B = perms.shape[0]
        if self.D is None:  # the fast path (alpha 1, span "end"): no distance matrix
            h = _earlier_abs_sums(self.rank[perms], self.z[perms])
        else:
            h = np.empty((B, L))
            tril = np.tri(L, k=-1)
            step = max(1, MAX_CHUNK_ELEMENTS // (L * L))
            for a in range(0, B, step):
                p = perms[a:a + step]
                h[a:a + step] = np.einsum("btj,tj->bt", self.D[p[:, :, None], p[:, None, :]], tril)
        # Sd[t] = sum over i, j < t; P[t] = sum over i < t, all j (both for t = 0..L).
        Sd = np.zeros((B, L + 1))
        np.cumsum(2.0 * h, axis=1, out=Sd[:, 1:])
        P = np.zeros((B, L + 1))
        np.cumsum(self.row[perms], axis=1, out=P[:, 1:])
        tau = np.arange(ms, L - ms + 1)
        n = tau.astype(float)
        m = L - n
        Sd, P = Sd[:, tau], P[:, tau]
        cross: np.ndarray = P - Sd
        tail = self.total - 2.0 * P + Sd
        return (2.0 / L) * cross - (m / (L * (n - 1))) * Sd - (n / (L * (m - 1))) * tail

    # -- span="best" ---------------------------------------------------------------------------
    def _profile_best(self, perms: np.ndarray, with_kappa: bool) -> tuple[np.ndarray, np.ndarray | None]:
        L, ms = self.L, self.ms
        cS, cT, cK, valid = _best_coefficients(L, ms)
        K = L - 2 * ms + 1
        B = perms.shape[0]
        best = np.empty((B, K))
        arg = np.empty((B, K), dtype=np.intp) if with_kappa else None
        # Small batches: the (B, L, L) work array then stays in cache, which is faster than large
        # batches (measured at L = 500: 2 MB batches about 30% faster than 32 MB ones).
        step = min(B, max(1, (MAX_CHUNK_ELEMENTS >> 4) // (L * L)))
        # Rows of Q are formed in blocks of rb, each from its first valid column on (valid pairs
        # are the upper triangle kappa - 2 ms >= tau - ms), so half of Q is never computed.
        rb = min(K, max(1, (MAX_CHUNK_ELEMENTS >> 6) // (step * L)))
        work = np.empty((step, L, L))
        qbuf = np.empty((step, rb, K))
        tbuf = np.empty((step, rb, K))
        for a in range(0, B, step):
            zp = self.z[perms[a:a + step]]
            nb = zp.shape[0]
            P = work[:nb]
            np.subtract(zp[:, :, None], zp[:, None, :], out=P)
            _power_in_place(P, self.alpha)
            np.cumsum(P, axis=1, out=P)
            np.cumsum(P, axis=2, out=P)
            # Q(tau, kappa) = cS P(tau, kappa) + cT P(tau, tau) + cK P(kappa, kappa), where
            # P(u, v) = P[:, u - 1, v - 1] is the sum of the distances over i < u, j < v.
            d = np.diagonal(P, axis1=1, axis2=2)
            dt, dk = d[:, ms - 1:L - ms], d[:, 2 * ms - 1:L]
            for r0 in range(0, K, rb):
                r1 = min(K, r0 + rb)
                Q = qbuf[:nb, :r1 - r0, :K - r0]
                tmp = tbuf[:nb, :r1 - r0, :K - r0]
                np.multiply(P[:, ms - 1 + r0:ms - 1 + r1, 2 * ms - 1 + r0:L], cS[r0:r1, r0:], out=Q)
                np.multiply(cT[r0:r1, r0:], dt[:, r0:r1, None], out=tmp)
                Q += tmp
                np.multiply(cK[r0:r1, r0:], dk[:, None, r0:], out=tmp)
                Q += tmp
                if arg is not None:  # with_kappa
                    np.copyto(Q, -np.inf, where=~valid[r0:r1, r0:])
                    j = Q.argmax(axis=2)
                    arg[a:a + nb, r0:r1] = j + r0 + 2 * ms
                    best[a:a + nb, r0:r1] = np.take_along_axis(Q, j[:, :, None], axis=2)[:, :, 0]
                else:
                    np.max(Q, axis=2, where=valid[r0:r1, r0:], initial=-np.inf, out=best[a:a + nb, r0:r1])
        return best, arg


def _power_in_place(d: np.ndarray, alpha: float) -> None:
    """``d <- |d| ** alpha`` in place."""
    np.abs(d, out=d)
    if alpha == 2.0:
        np.multiply(d, d, out=d)
    elif alpha != 1.0:
        np.power(d, alpha, out=d)


def _distances(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    d = np.subtract(a, b)
    _power_in_place(d, alpha)
    return d


@lru_cache(maxsize=32)
def _best_coefficients(L: int, ms: int):
    """Coefficients of ``Q(tau, kappa)`` in ``P(tau, kappa)``, ``P(tau, tau)``, ``P(kappa, kappa)``.

    Rows are ``tau = ms..L-ms``, columns ``kappa = 2 ms..L``; ``valid`` marks ``kappa - tau >= ms``.
    With ``n = tau``, ``m = kappa - tau``, between ``= P(t,k) - P(t,t)``, within X ``= P(t,t) / 2``,
    within Y ``= (P(k,k) - 2 P(t,k) + P(t,t)) / 2``.
    """
    tau = np.arange(ms, L - ms + 1, dtype=float)[:, None]
    kap = np.arange(2 * ms, L + 1, dtype=float)[None, :]
    n, m = tau, kap - tau
    valid = m >= ms
    with np.errstate(divide="ignore", invalid="ignore"):
        cS = np.where(valid, 2 / kap + 2 * n / (kap * (m - 1)), 0.0)
        cT = np.where(valid, -2 / kap - m / (kap * (n - 1)) - n / (kap * (m - 1)), 0.0)
        cK = np.where(valid, -n / (kap * (m - 1)), 0.0)
    for a in (cS, cT, cK, valid):
        a.flags.writeable = False
    return cS, cT, cK, valid


def _earlier_abs_sums(rank: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``h[b, t] = sum_{i < t} |z[b, i] - z[b, t]|`` for every row, in ``O(L^1.5)`` per row.

    ``rank`` holds distinct ranks of ``z`` within each row (ties in any order: they contribute
    zero either way).  With ``c`` the number and ``s`` the sum of the earlier values of lower rank,
    ``h = z (2 c - t) + sum_{i<t} z_i - 2 s``.  ``c`` and ``s`` come from pairs within blocks of
    ``b ~ sqrt(L)`` positions and, across blocks, from a table of counts (and sums) of the values
    of the earlier blocks below each rank, cumulated over blocks and ranks.
    """
    B, L = z.shape
    b = max(4, int(np.sqrt(L)))
    nb = -(-L // b)
    Lp = nb * b
    rk = np.empty((B, Lp), dtype=np.intp)
    rk[:, :L] = rank
    rk[:, L:] = np.arange(L, Lp)  # padding: later and larger than everything real
    val = np.zeros((B, Lp))
    val[:, :L] = z
    r3 = rk.reshape(B, nb, b)
    lower = (r3[:, :, None, :] < r3[:, :, :, None]) & np.tri(b, k=-1, dtype=bool)
    c = lower.sum(axis=3, dtype=np.float64).reshape(B, Lp)
    s = np.matmul(lower.astype(np.float64), val.reshape(B, nb, b, 1)).reshape(B, Lp)
    blk = np.repeat(np.arange(1, nb + 1), b)
    rows = np.arange(B)[:, None]
    cnt = np.zeros((B, nb + 1, Lp + 1))
    sm = np.zeros((B, nb + 1, Lp + 1))
    cnt[rows, blk, rk + 1] = 1.0
    sm[rows, blk, rk + 1] = val
    for a in (cnt, sm):
        np.cumsum(a, axis=1, out=a)
        np.cumsum(a, axis=2, out=a)
    c += cnt[rows, blk - 1, rk]
    s += sm[rows, blk - 1, rk]
    earlier = np.zeros((B, L))
    np.cumsum(z[:, :-1], axis=1, out=earlier[:, 1:])
    return z * (2.0 * c[:, :L] - np.arange(L)) + earlier - 2.0 * s[:, :L]


# --------------------------------------------------------------------------------------------
# Candidate search
# --------------------------------------------------------------------------------------------

def _candidate(seg: _Segment, start: int) -> SplitCandidate | None:
    if not seg.splittable():
        return None
    q, kap = seg.profile(None)
    k = int(np.argmax(q[0]))
    return SplitCandidate(index=start + seg.ms + k, statistic=float(q[0, k]), start=start,
                          end=start + seg.L, kappa=start + int(kap[0, k]))


def best_split(x, start: int = 0, end: int | None = None, *, min_size: int = DEFAULT_MIN_SIZE,
               alpha: float = 1.0, span: str = "end") -> SplitCandidate | None:
    """The split of ``x[start:end]`` that maximises the energy statistic.

    Parameters
    ----------
    x : array_like
        One-dimensional finite observations in order.
    start, end : int
        The segment to search (``end=None``: to the end of ``x``).
    min_size : int, keyword-only
        Fewest observations on either side of the split (at least 2).
    alpha : float, keyword-only
        Exponent of the distances, in ``(0, 2]``.
    span : {"end", "best"}, keyword-only
        Whether the right-hand sample reaches the end of the segment or the best ``kappa``
        (see the module documentation).

    Returns
    -------
    SplitCandidate or None
        None when the segment is shorter than ``2 * min_size``.  Ties go to the earliest split.

    Raises
    ------
    ValueError
        For invalid options or a segment outside ``x``.

    References
    ----------
    Matteson and James (2014), s.3: the maximisation of ``Q`` over ``tau`` (and ``kappa``).
    """
    a = as_1d(x, "x")
    _check_options(alpha, min_size, span)
    end = a.size if end is None else end
    if not (isinstance(start, numbers.Integral) and isinstance(end, numbers.Integral) and 0 <= start < end <= a.size):
        raise ValueError("`start` and `end` must satisfy 0 <= start < end <= len(x)")
    return _candidate(_Segment(a[start:end], alpha, min_size, span), int(start))


def edivisive_candidates(x, *, min_size: int = DEFAULT_MIN_SIZE, alpha: float = 1.0, span: str = "end",
                         max_candidates: int | None = None) -> tuple[SplitCandidate, ...]:
    """Candidate change points by hierarchical division, without significance tests.

    The division of :func:`e_divisive` (at each step the best split over all current segments),
    run until no segment can be split or ``max_candidates`` are found.  Cheap: one search per
    new segment and no permutations (on 500 values, ten candidates take about 5 ms with
    ``span="end"`` and 12 ms with ``span="best"``).  The statistics are not p-values: another
    test must decide which candidates are changes.

    Parameters
    ----------
    x : array_like
        One-dimensional finite observations in order.
    min_size, alpha, span : keyword-only
        As in :func:`best_split`.
    max_candidates : int or None, keyword-only
        Stop after this many.

    Returns
    -------
    tuple of SplitCandidate
        In the order found: the first is the best split of the whole series, each later one the
        best split of any segment left by the earlier ones.

    References
    ----------
    Matteson and James (2014), s.3 (hierarchical division).
    """
    a = as_1d(x, "x")
    _check_options(alpha, min_size, span)
    if max_candidates is not None:
        check_positive_int(max_candidates, "max_candidates")
    cands: dict[tuple[int, int], SplitCandidate | None] = {
        (0, a.size): _candidate(_Segment(a, alpha, min_size, span), 0)}
    found: list[SplitCandidate] = []
    while max_candidates is None or len(found) < max_candidates:
        live = [c for c in cands.values() if c is not None]
        if not live:
            break
        best = max(live, key=lambda c: c.statistic)
        found.append(best)
        del cands[(best.start, best.end)]
        for s, e in ((best.start, best.index), (best.index, best.end)):
            cands[(s, e)] = _candidate(_Segment(a[s:e], alpha, min_size, span), s)
    return tuple(found)


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------

def _null_maxima(seg: _Segment, n_permutations: int, gen: np.random.Generator) -> np.ndarray:
    """The best statistic of ``n_permutations`` random shuffles of the segment."""
    if not seg.splittable():
        return np.full(n_permutations, -np.inf)
    perms = gen.permuted(np.broadcast_to(np.arange(seg.L), (n_permutations, seg.L)), axis=1)
    # The per-batch work is O(L^2) values ("best", or alpha != 1) or O(L^1.5): chunk accordingly.
    per = seg.L * seg.L if not seg.fast else seg.L * (int(np.sqrt(seg.L)) + 2) * 4
    step = max(1, MAX_CHUNK_ELEMENTS // per)
    out = np.empty(n_permutations)
    for a in range(0, n_permutations, step):
        q, _ = seg.profile(perms[a:a + step])
        out[a:a + step] = q.max(axis=1)
    return out


def e_divisive(x, *, alpha: float = 1.0, min_size: int = DEFAULT_MIN_SIZE, sig_level: float = 0.05,
               n_permutations: int = 199, span: str = "end", rng=None) -> EDivisiveResult:
    """Multiple change points by E-Divisive with a permutation test.

    Parameters
    ----------
    x : array_like
        One-dimensional finite observations in order (for regbench: one central value per
        version, in history order).
    alpha : float, keyword-only
        Exponent of the distances, in ``(0, 2]``; 1 (the default) detects any change of
        distribution, 2 only changes of the mean.
    min_size : int, keyword-only
        Fewest observations in a segment (at least 2).  A change in the last ``min_size - 1``
        observations cannot be found yet.
    sig_level : float, keyword-only
        Division stops at the first candidate whose p-value exceeds it.
    n_permutations : int, keyword-only
        Shuffles per test; p-values have a resolution of ``1 / (n_permutations + 1)``, so
        ``sig_level`` below ``1 / (n_permutations + 1)`` finds nothing.
    span : {"end", "best"}, keyword-only
        Search of the right-hand sample's end (module documentation).
    rng : int, numpy.random.Generator or None, keyword-only
        Seed or generator of the shuffles; the same seed gives the same p-values.

    Returns
    -------
    EDivisiveResult

    Raises
    ------
    ValueError
        For invalid options (the message names the parameter) or non-finite data.

    Notes
    -----
    The p-value of the ``k``-th change point is computed given the ``k - 1`` found before it (as in
    the paper): it tests "no further change inside the current segments".  For the first test
    and exchangeable observations it is exact, ``P(p <= a) <= a`` (the tests check this on
    quiet series).  Later tests take the earlier divisions as given although they were chosen
    on the same data; like the paper, they ignore that selection, so after a spurious division a
    second one is somewhat more likely than ``sig_level``.  The observations are assumed
    independent: autocorrelated histories give too many divisions.

    References
    ----------
    Matteson and James (2014), s.3 (E-Divisive and its hierarchical permutation test); Phipson and
    Smyth (2010) (the ``+1`` in the p-value).
    """
    a = as_1d(x, "x")
    validate_options(alpha=alpha, min_size=min_size, sig_level=sig_level, n_permutations=n_permutations,
                     span=span)
    gen = make_rng(rng)

    segs: dict[tuple[int, int], tuple[_Segment, SplitCandidate | None]] = {}
    nulls: dict[tuple[int, int], np.ndarray] = {}

    def add(s: int, e: int) -> None:
        seg = _Segment(a[s:e], alpha, min_size, span)
        segs[(s, e)] = (seg, _candidate(seg, s))

    add(0, a.size)
    found: list[tuple[SplitCandidate, float]] = []
    tested: list[SplitCandidate] = []
    tested_p: list[float] = []
    null_list: list[np.ndarray] = []
    while True:
        live = [c for _, c in segs.values() if c is not None]
        if not live:
            break
        cand = max(live, key=lambda c: c.statistic)
        for key, (seg, _) in segs.items():
            if key not in nulls:
                nulls[key] = _null_maxima(seg, n_permutations, gen)
        null = np.max(np.stack([nulls[k] for k in segs]), axis=0)
        scale = max(seg.scale for seg, _ in segs.values())
        tol = 1e-9 * max(abs(cand.statistic), scale, np.finfo(float).tiny)
        p = (1 + int(np.count_nonzero(null >= cand.statistic - tol))) / (n_permutations + 1)
        tested.append(cand)
        tested_p.append(p)
        null_list.append(null)
        if p > sig_level:
            break
        found.append((cand, p))
        key = (cand.start, cand.end)
        del segs[key]
        nulls.pop(key, None)
        add(cand.start, cand.index)
        add(cand.index, cand.end)

    by_index = sorted(found, key=lambda cp: cp[0].index)
    return EDivisiveResult(
        change_points=np.array([c.index for c, _ in by_index], dtype=np.intp),
        statistics=np.array([c.statistic for c, _ in by_index]),
        p_values=np.array([p for _, p in by_index]),
        order=np.array([c.index for c, _ in found], dtype=np.intp),
        tested=tuple(tested), tested_p_values=np.array(tested_p), null_distributions=tuple(null_list),
        alpha=float(alpha), min_size=int(min_size), sig_level=float(sig_level),
        n_permutations=int(n_permutations), span=span, n=int(a.size))
