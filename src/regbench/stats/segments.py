"""Segments of a version history: per-version summaries and the two-level test.

A *segment* is a stretch of consecutive versions of one benchmark's history.  Runs, not
iterations, are the unit of replication (seed 000, 000_833974a369fcaf36.txt, s.2), so every run
is first reduced to one value (:mod:`.runs`: its mean, median or a low quantile, after dropping
the samples that are an order of magnitude away from their version, seed 001,
001_0c28a3a14a5fab8a.txt, s.2.1).  Each version is then summarised by the mean, the variance and
the number of its run values (:class:`~.runs.VersionStats`, :func:`version_stats`), and two
adjacent segments are compared by a t test whose variance has two levels, as seed 000 s.3 has
runs within an experiment:

* runs within versions: the pooled within-version variance of run means ``s2w``;
* versions within segments: a version-to-version component ``s2v`` (each version is a new
  build, and builds that differ a little are not a change), by one-way ANOVA
  (:func:`compare_segments`) or, for a whole history, robustly from successive differences
  (:func:`version_variance`).

The variance of a segment mean of ``k`` versions with ``n_j`` runs each is
``s2v / k + s2w * sum(1 / n_j) / k**2``; the t statistic of two segments gets Satterthwaite's
degrees of freedom (:func:`two_level_t`).  Segment statistics are sufficient and add up
(:class:`SegmentStats`), so a new version is tested against the whole segment before it in
constant time.  A short history is also cut by its best segmentations (:func:`segment_neighbourhood`,
Auger and Lawrence 1989) and each split tested against the spread of the version means within all
the segments (:func:`within_segments_mean_square`, :func:`mean_square_test`).  Per-mode summaries (:func:`.levels.mode_stats`) serve multimodal benchmarks, whose
modes are compared one by one (seed 001 s.4.2; screened by :func:`.runs.bimodality_coefficient`).

The change detector built on these is :mod:`regbench.detect.auto`.

References
----------
seed 000 (000_833974a369fcaf36.txt) s.2 (runs are the replicates), s.3 (precision over runs x
iterations, the two-level model this test extends by one level).
seed 001 (001_0c28a3a14a5fab8a.txt) s.2.1 (outliers orders of magnitude away), s.4.2 (modes of
complex benchmarks compared cluster by cluster).
Satterthwaite, "An approximate distribution of estimates of variance components", Biometrics
Bulletin 2 (1946) 110-114 (degrees of freedom of a sum of variance estimates).
Auger and Lawrence, "Algorithms for the optimal identification of segment neighborhoods",
Bulletin of Mathematical Biology 51 (1989) 39-54 (:func:`segment_neighbourhood`).
Montgomery, *Design and Analysis of Experiments*, 8th ed., Wiley (2013), s.14.1 (the two-stage
nested design, :func:`mean_square_test`).
Rousseeuw and Croux, "Alternatives to the median absolute deviation", JASA 88 (1993) 1273-1283
(the efficiency of a MAD-based variance, which sets :func:`version_variance`'s degrees of freedom).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import math

import numpy as np

from ._validate import check_confidence
from .compare import fieller_bounds
from .runs import (
    OUTLYING_RUN_SHARE,
    OUTLYING_RUN_Z,
    VersionStats,
    check_fence,
    flatten_runs,
    given_locations,
    history_percentiles,
    tie_safe_scale,
    run_locations,
    stats_of_runs,
)

#: Versions a series needs before its version-to-version variance is estimated from the whole
#: history (:func:`version_variance`); with fewer, each test estimates it from its own segments.
MIN_VERSIONS_FOR_VERSION_VAR = 6

# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SegmentStats:
    """Sufficient statistics of a segment of versions for :func:`compare_segments`.

    Two segments' statistics add up (``a + b``), which makes testing a new version against the
    segment before it constant-time.

    Attributes
    ----------
    k : int
        Number of versions.
    sum_m, sum_m2 : float
        Sum and sum of squares of the version means.
    ss_within : float
        Sum over versions of ``(n - 1) * var`` of their run means.
    df_within : float
        Sum of ``n - 1`` over versions with two runs or more.
    sum_inv_n : float
        Sum over versions of ``1 / n``.
    """

    k: int
    sum_m: float
    sum_m2: float
    ss_within: float
    df_within: float
    sum_inv_n: float

    @classmethod
    def of(cls, vs: VersionStats, start: int, stop: int) -> SegmentStats:
        """The statistics of versions ``[start, stop)`` of ``vs`` (indices into its arrays)."""
        if stop - start == 1:  # one version (each new one of an incremental pass): the same sums, on floats
            mj, nj, vj = float(vs.mean[start]), float(vs.n[start]), float(vs.var[start])
            multi1 = nj > 1
            return cls(1, mj, mj * mj, (nj - 1) * vj if multi1 else 0.0, nj - 1 if multi1 else 0.0, 1.0 / nj)
        m, n, v = vs.mean[start:stop], vs.n[start:stop], vs.var[start:stop]
        multi = n > 1
        return cls(int(m.size), float(m.sum()), float((m * m).sum()), float(((n[multi] - 1) * v[multi]).sum()),
                   float((n[multi] - 1).sum()), float((1.0 / n).sum()))

    def __add__(self, other: SegmentStats) -> SegmentStats:
        return SegmentStats(self.k + other.k, self.sum_m + other.sum_m, self.sum_m2 + other.sum_m2,
                            self.ss_within + other.ss_within, self.df_within + other.df_within,
                            self.sum_inv_n + other.sum_inv_n)

    @property
    def mean(self) -> float:
        """Mean of the version means."""
        return self.sum_m / self.k

    @property
    def ss_between(self) -> float:
        """Sum of squared deviations of the version means from the segment mean."""
        return max(0.0, self.sum_m2 - self.sum_m**2 / self.k)


@dataclass(frozen=True)
class SegmentTest:
    """Two-level comparison of two adjacent segments of versions (:func:`compare_segments`).

    Attributes
    ----------
    mean_left, mean_right : float
        The segment means (means of their version means).
    se_left, se_right : float
        Standard errors of the segment means under the two-level model.
    t : float
        ``(mean_right - mean_left) / sqrt(se_left**2 + se_right**2)``; +-inf when both segments
        are noiseless and differ, NaN when undecidable.
    df : float
        Satterthwaite's degrees of freedom (inf when the difference is exact).
    p_value : float
        Two-sided p-value of ``t`` (0 when the difference is exact, NaN when undecidable).
    """

    mean_left: float
    mean_right: float
    se_left: float
    se_right: float
    t: float
    df: float
    p_value: float


@dataclass(frozen=True)
class TwoLevelT:
    """The two-level t test of :func:`two_level_t`, for one pair of segments or arrays of pairs.

    Every attribute is a float (a 0-d array) for scalar input and an array of the broadcast
    shape for array input.

    Attributes
    ----------
    mean_left, mean_right
        The segment means, as given.
    var_left, var_right
        Variances of the segment means: ``s2v / k + s2w * sum(1/n) / k**2``.
    t
        ``(mean_right - mean_left) / sqrt(var_left + var_right)``; +-inf when there is no noise at
        all and the means differ, NaN when undecidable.
    df
        Satterthwaite's degrees of freedom of the two variance terms (inf for an exact
        difference, NaN when undecidable).
    p_value
        Two-sided p-value of ``t`` on ``df`` degrees of freedom (0 for an exact difference).
    """

    mean_left: float | np.ndarray
    mean_right: float | np.ndarray
    var_left: float | np.ndarray
    var_right: float | np.ndarray
    t: float | np.ndarray
    df: float | np.ndarray
    p_value: float | np.ndarray


# --------------------------------------------------------------------------------------------
# Versions
# --------------------------------------------------------------------------------------------

def version_floors(runs: Sequence[Sequence[np.ndarray]], *, estimator: str = "low", fence: float = 10.0,
                   log: bool = False, locations: np.ndarray | None = None,
                   fence_history: tuple[float, float] | None = None) -> VersionStats:
    """Each version's fastest run: the smallest run location of every version with runs.

    Where timing noise only adds time (a floor with slower interference above it: Chen and Revels
    2016, s.3, the argument for the minimum), a version's fastest run is the nearest any of its
    runs came to the code's own cost.  A real slowdown raises it with every other run; bursts of
    interference that slowed most runs of a version (two of three) leave it at the floor, while
    the version's mean location moves with them.  :class:`regbench.detect.auto.Auto` asks a change
    found on a floor to show in these too.

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        ``runs[k]`` holds the samples of every run of version ``k``.
    estimator, fence : keyword-only
        The location of a run (:func:`run_locations`).
    log : bool, keyword-only
        Logarithms of the locations (all must then be positive).
    locations : numpy.ndarray, optional, keyword-only
        The runs' locations, already computed (:attr:`LocationChoice.run_values`, one per run of
        the versions with runs, in history order).
    fence_history : tuple of float, optional, keyword-only
        The history's percentiles for the fence (:func:`history_percentiles`).

    Returns
    -------
    VersionStats
        One value a version (``n`` 1, ``var`` NaN), with the ``index`` of :func:`version_stats`
        for the versions whose runs have a finite location.
    """
    flat, group, index = flatten_runs(runs)
    loc = given_locations(locations, flat, group=group, fence=fence, estimator=estimator, history=fence_history)
    if log:
        with np.errstate(divide="ignore", invalid="ignore"):
            loc = np.log(loc)
    return version_minimum(loc, group, index, log=log)


def isolated_versions(vs: VersionStats, *, z: float = OUTLYING_RUN_Z) -> np.ndarray | None:
    """Versions whose value stands alone, far from both neighbours: more than ``z`` robust standard
    deviations from the median of itself and the versions on either side.

    The median of three (Tukey's running median, Tukey 1977, ch. 7) follows a step and a stretch
    of two versions or more that moved together, and leaves only a single version apart: in a
    history of each version's fastest run (:func:`version_floors`), a version whose every run
    was slowed by interference, or whose one run was far faster than the others (a lucky memory
    placement, one in a hundred runs of a memory-bound program).  The scale is that of
    :func:`version_variance`, half the squared Qn of successive differences, as a standard
    deviation; the first and last versions are compared with the median of the three versions
    at their end.

    Returns
    -------
    numpy.ndarray of bool or None
        True for the isolated versions; None when more than :data:`OUTLYING_RUN_SHARE` of them
        are (then they are the noise's own tails, as for :func:`outlying_runs`, and leaving them
        out would understate it) or when there are too few versions (fewer than
        :data:`MIN_VERSIONS_FOR_VERSION_VAR`) to judge.
    """
    x = np.asarray(vs.mean, dtype=float)
    if x.size < MIN_VERSIONS_FOR_VERSION_VAR:
        return None
    local = np.empty_like(x)
    local[1:-1] = np.median(np.stack([x[:-2], x[1:-1], x[2:]]), axis=0)
    # An end version has one neighbour; with it alone the median of three would be the version
    # itself (repeating the end value) and the newest version could never be told apart, so
    # it is compared with the three versions at its end.
    local[0], local[-1] = np.median(x[:3]), np.median(x[-3:])
    scale = difference_scale(np.diff(x)) / np.sqrt(2.0)
    if not (np.isfinite(scale) and scale > 0):
        return None
    out = np.abs(x - local) > z * scale
    if out.sum() > max(1.0, OUTLYING_RUN_SHARE * x.size):
        return None
    return out


def version_minimum(values: np.ndarray, group: np.ndarray, index: np.ndarray, *, log: bool) -> VersionStats:
    """Each version's smallest finite value (one value a version), for the versions that have one."""
    lowest = np.full(index.size, np.inf)
    np.minimum.at(lowest, group, np.where(np.isfinite(values), values, np.inf))
    keep = np.isfinite(lowest)
    return VersionStats(index=index[keep], mean=lowest[keep], var=np.full(int(keep.sum()), np.nan),
                        n=np.ones(int(keep.sum()), dtype=int), log=log)


def version_stats(runs: Sequence[Sequence[np.ndarray]], *, fence: float = 10.0, estimator: str = "mean",
                  log: bool = False, outlying_z: float | None = None, run_scale: float | None = None,
                  fence_history: tuple[float, float] | None = None, outlying_side: str = "both",
                  locations: np.ndarray | None = None, count_scale: float | None = None,
                  weigh: bool = False) -> VersionStats:
    """Per-version summaries of one location per run of a history.

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        ``runs[k]`` holds the samples of every run of version ``k`` (in history order); a
        version may have none.
    fence : float, keyword-only
        Outlier fence of :func:`robust_run_means`.
    estimator : str, keyword-only
        The location of each run (:func:`run_locations`): the robust mean by default.
    log : bool, keyword-only
        Summarise the logarithms of the locations (see :class:`VersionStats`).
    outlying_z, run_scale : float, optional, keyword-only
        Leave out outlying runs (:func:`outlying_runs`, see :func:`stats_of_runs`).
    fence_history : tuple of float, optional, keyword-only
        The whole history's percentiles for the fence (:func:`history_percentiles`), saved by
        a full pass for the few new versions of an incremental one; default: those of ``runs``.
    outlying_side : str, keyword-only
        Which side of their version's median runs are left out on (:func:`burst_side`).
    locations : numpy.ndarray, optional, keyword-only
        The runs' ``estimator`` locations, already computed with this ``fence`` and
        ``fence_history`` (:attr:`LocationChoice.run_values`, one per run of the versions with
        runs, in history order), as for :func:`version_floors`; default: computed here.
    count_scale, weigh : optional
        See :func:`stats_of_runs`.

    Returns
    -------
    VersionStats
        Of the versions with runs; ``index`` refers to positions in ``runs``.

    Raises
    ------
    ValueError
        For a non-positive ``fence`` or an unknown ``estimator``.

    See Also
    --------
    version_stats_many : the same for many histories at once.
    choose_location : which ``estimator`` (and whether ``log``) suits a history.
    """
    check_fence(fence)
    flat, group, index = flatten_runs(runs)
    if not flat:
        return stats_of_runs(np.empty(0), group, index, log=log)
    loc = given_locations(locations, flat, group=group, fence=fence, estimator=estimator, history=fence_history)
    return stats_of_runs(loc, group, index, log=log, outlying_z=outlying_z, run_scale=run_scale,
                         outlying_side=outlying_side, count_scale=count_scale, weigh=weigh)


def version_stats_many(histories: Sequence[Sequence[Sequence[np.ndarray]]], *, fence: float = 10.0,
                       estimators: Sequence[str] | None = None, logs: Sequence[bool] | None = None,
                       outlying_z: float | None = None, run_scales: Sequence[float | None] | None = None,
                       fence_histories: Sequence[tuple[float, float] | None] | None = None,
                       outlying_sides: Sequence[str] | None = None,
                       count_scales: Sequence[float | None] | None = None) -> list[VersionStats]:
    """:func:`version_stats` of many histories with one call of :func:`run_locations` per
    estimator.

    For many short histories (an incremental detection pass: one new version each) the
    per-call overhead of numpy, not the arithmetic, is the cost; pooling the runs of all
    histories that share an estimator removes it.  The results equal those of
    :func:`version_stats` one by one.

    Parameters
    ----------
    histories : sequence
        One ``runs`` argument of :func:`version_stats` per history.
    fence : float, keyword-only
        Outlier fence of :func:`robust_run_means`.
    estimators, logs : sequences, optional, keyword-only
        Per history, its ``estimator`` and ``log`` (default: ``"mean"`` and False for all).
    outlying_z, run_scales : optional, keyword-only
        Leave out outlying runs, with each history's scale (see :func:`stats_of_runs`).
    fence_histories : sequence, optional, keyword-only
        Per history, its ``fence_history`` (see :func:`version_stats`; None: its own runs').
    outlying_sides : sequence of str, optional, keyword-only
        Per history, its ``outlying_side`` (see :func:`version_stats`; default ``both``).
    count_scales : sequence, optional, keyword-only
        Per history, its ``count_scale`` (see :func:`stats_of_runs`; default None).

    Returns
    -------
    list of VersionStats
        One per history, in order.
    """
    check_fence(fence)
    n = len(histories)
    estimators = list(estimators) if estimators is not None else ["mean"] * n
    logs = list(logs) if logs is not None else [False] * n
    scales = list(run_scales) if run_scales is not None else [None] * n
    refs = list(fence_histories) if fence_histories is not None else [None] * n
    sides = list(outlying_sides) if outlying_sides is not None else ["both"] * n
    counts = list(count_scales) if count_scales is not None else [None] * n
    if len(counts) != n:
        raise ValueError("`count_scales` must give one value per history")
    if len(estimators) != n or len(logs) != n or len(scales) != n or len(refs) != n or len(sides) != n:
        raise ValueError("`estimators`, `logs`, `run_scales`, `fence_histories` and `outlying_sides` must give one "
                         "value per history")
    out: list[VersionStats | None] = [None] * n
    for name in dict.fromkeys(estimators):
        members = [h for h in range(n) if estimators[h] == name]
        flats: list[np.ndarray] = []
        groups, indexes, h_lo, h_hi = [], [], [], []
        offset = 0
        for h in members:
            flat, group, index = flatten_runs(histories[h])
            flats += flat
            groups.append(group + offset)
            indexes.append(index)
            offset += index.size
            given = refs[h]
            ref = given if given is not None else history_percentiles(flat)
            h_lo.append(np.full(len(flat), ref[0]))
            h_hi.append(np.full(len(flat), ref[1]))
        if not flats:
            for h in members:
                out[h] = version_stats(histories[h], fence=fence, estimator=name, log=logs[h], outlying_z=outlying_z,
                                       run_scale=scales[h], fence_history=refs[h], outlying_side=sides[h],
                                       count_scale=counts[h])
            continue
        values = run_locations(flats, group=np.concatenate(groups), fence=fence, estimator=name,
                               history=(np.concatenate(h_lo), np.concatenate(h_hi)))
        start = base = 0
        for h, g, index in zip(members, groups, indexes, strict=True):
            out[h] = stats_of_runs(values[start:start + g.size], g - base, index, log=logs[h],
                                   outlying_z=outlying_z, run_scale=scales[h], outlying_side=sides[h],
                                   count_scale=counts[h])
            start += g.size
            base += index.size
    return [vs for vs in out if vs is not None]


# --------------------------------------------------------------------------------------------
# Segments
# --------------------------------------------------------------------------------------------

def two_level_t(mean_left, mean_right, k_left, k_right, inv_n_left, inv_n_right, *, s2_within, df_within,
                s2_version, df_version) -> TwoLevelT:
    """The two-level t test of two segment means, for scalars or arrays of segment pairs alike.

    Parameters
    ----------
    mean_left, mean_right : float or numpy.ndarray
        Segment means (means of their version means).
    k_left, k_right : float or numpy.ndarray
        Versions in each segment.
    inv_n_left, inv_n_right : float or numpy.ndarray
        Sum over each segment's versions of ``1 / n`` (``n`` runs each).
    s2_within, df_within : float or numpy.ndarray, keyword-only
        Pooled within-version variance of run means and its degrees of freedom.
    s2_version, df_version : float or numpy.ndarray, keyword-only
        Version-to-version variance component and its degrees of freedom.

    Returns
    -------
    TwoLevelT
        Vectorised over the broadcast shape of the arguments.

    Notes
    -----
    With no noise at all (an instruction count, a constant output) and different means, the
    difference is certain, not undecidable: ``t = +-inf``, ``p = 0``.

    References
    ----------
    seed 000 s.3 (the variance of a mean over runs x iterations, here versions x runs);
    Satterthwaite (1946).
    """
    from scipy.special import (
        stdtr,  # Student's t CDF, without importing all of scipy.stats
    )

    ml, mr, kl, kr = mean_left, mean_right, k_left, k_right
    s2w, df_w, s2v, df_b = s2_within, df_within, s2_version, df_version
    with np.errstate(invalid="ignore", divide="ignore"):
        var_l = s2v / kl + s2w * inv_n_left / kl**2
        var_r = s2v / kr + s2w * inv_n_right / kr**2
        vv = s2v * (1 / kl + 1 / kr)
        vw = var_l + var_r - vv
        denom = np.where(np.asarray(df_b) > 0, vv**2 / np.maximum(df_b, 1e-300), 0.0) + \
            np.where(np.asarray(df_w) > 0, vw**2 / np.maximum(df_w, 1e-300), 0.0)
        df = np.where(denom > 0, (vv + vw) ** 2 / np.where(denom > 0, denom, 1.0), np.nan)
        se = np.sqrt(var_l + var_r)
        ok = (se > 0) & np.isfinite(df)
        t = np.where(ok, (mr - ml) / np.where(se > 0, se, 1.0), np.nan)
        p = np.where(ok, 2 * stdtr(np.where(ok, df, 1.0), -np.abs(np.where(ok, t, 0.0))), np.nan)
        exact = (se == 0) & (np.asarray(mr) != np.asarray(ml))
        t = np.where(exact, np.sign(np.asarray(mr) - np.asarray(ml)) * np.inf, t)
        p = np.where(exact, 0.0, p)
        df = np.where(exact & ~np.isfinite(df), np.inf, df)
    return TwoLevelT(ml, mr, var_l, var_r, t, df, p)


def compare_segments(left: SegmentStats, right: SegmentStats, *, version_var: tuple[float, float] | None = None
                     ) -> SegmentTest:
    """Two-level comparison of segment means: versions within segments, runs within versions.

    The variance of a segment mean is ``s2v / k + s2w * sum(1/n) / k**2``, with ``s2w`` the
    pooled within-version variance of run means and ``s2v = max(0, MS_between - s2w * mean(1/n))``
    the version-to-version component (one-way random-effects ANOVA, method of moments).  The t
    statistic gets Satterthwaite's degrees of freedom from the two variance terms.

    Parameters
    ----------
    left, right : SegmentStats
        The segments before and after the split.
    version_var : (float, float), optional, keyword-only
        ``(s2v, df)``: the version component, instead of the two segments' ANOVA (as
        :func:`version_variance` estimates it for a whole history, robustly to the steps that a
        segment may still contain).  Without it, and with fewer than 3 degrees of freedom
        between versions, the component is taken as 0: runs are the only replicates, as in
        seed 000 s.5's comparison of two versions.

    Returns
    -------
    SegmentTest

    References
    ----------
    seed 000 s.3 (two levels of replication), s.5 (two versions compared); Satterthwaite (1946).
    """
    kl, kr = left.k, right.k
    df_w = left.df_within + right.df_within
    s2w = (left.ss_within + right.ss_within) / df_w if df_w > 0 else 0.0
    mean_inv_n = (left.sum_inv_n + right.sum_inv_n) / (kl + kr)
    if version_var is not None:
        s2v, df_b = version_var
    else:
        df_b = kl + kr - 2
        if df_b < 3 and not df_w > 0:
            # One run a version and too few versions for the version component: nothing measured
            # the noise, which is not the same as measuring none (a constant count, whose runs
            # agree).  Taking the component as 0 here called every difference certain (p = 0,
            # an interval of zero width) in histories of one run a version.
            nan = float("nan")
            return SegmentTest(float(left.mean), float(right.mean), nan, nan, nan, nan, nan)
        s2v = max(0.0, (left.ss_between + right.ss_between) / df_b - s2w * mean_inv_n) if df_b >= 3 else 0.0
    res = two_level_t(left.mean, right.mean, kl, kr, left.sum_inv_n, right.sum_inv_n,
                      s2_within=s2w, df_within=df_w, s2_version=s2v, df_version=df_b)
    return SegmentTest(float(res.mean_left), float(res.mean_right), float(np.sqrt(res.var_left)),
                       float(np.sqrt(res.var_right)), float(res.t), float(res.df), float(res.p_value))


def compare_segments_many(pairs: Sequence[tuple[SegmentStats, SegmentStats]],
                          version_vars: Sequence[tuple[float, float] | None]) -> list[SegmentTest]:
    """:func:`compare_segments` of many pairs of segments at once: the same arithmetic on arrays,
    each result equal to the pair's own :func:`compare_segments` up to rounding (numpy squares
    by multiplying, Python's ``**`` by the C library's ``pow``, which can differ in the last bit;
    tested to a relative 1e-9, with the same undecidable and certain cases).

    An incremental pass tests one new version of each of thousands of series against its saved
    segment (:meth:`regbench.detect.auto.Auto.check_new_many`); one call a pair cost more in
    numpy's per-call overhead than in arithmetic.

    Parameters
    ----------
    pairs : sequence of (SegmentStats, SegmentStats)
        The segments before and after each split.
    version_vars : sequence of (float, float) or None
        Each pair's ``version_var`` (:func:`compare_segments`).
    """
    if len(pairs) != len(version_vars):
        raise ValueError("`pairs` and `version_vars` must have the same length")
    if not pairs:
        return []
    cols = np.array([(a.k, a.sum_m, a.sum_m2, a.ss_within, a.df_within, a.sum_inv_n,
                      b.k, b.sum_m, b.sum_m2, b.ss_within, b.df_within, b.sum_inv_n) for a, b in pairs], dtype=float).T
    kl, sml, sm2l, sswl, dfwl, invl, kr, smr, sm2r, sswr, dfwr, invr = cols
    given = np.array([vv is not None for vv in version_vars])
    vv_s2v = np.array([vv[0] if vv is not None else 0.0 for vv in version_vars], dtype=float)
    vv_df = np.array([vv[1] if vv is not None else 0.0 for vv in version_vars], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        df_w = dfwl + dfwr
        s2w = np.where(df_w > 0, (sswl + sswr) / np.where(df_w > 0, df_w, 1.0), 0.0)
        mean_inv_n = (invl + invr) / (kl + kr)
        df_anova = kl + kr - 2

        def positive(x):  # max(0.0, x) of the scalar code: NaN and -0.0 give 0.0
            return np.where(x > 0, x, 0.0)

        ss_between = positive(sm2l - sml**2 / kl) + positive(sm2r - smr**2 / kr)
        s2v_anova = np.where(df_anova >= 3, positive(ss_between / np.where(df_anova >= 3, df_anova, 1.0)
                                                     - s2w * mean_inv_n), 0.0)
        s2v = np.where(given, vv_s2v, s2v_anova)
        df_b = np.where(given, vv_df, df_anova)
        undecidable = ~given & (df_anova < 3) & ~(df_w > 0)  # compare_segments' case of nothing measured
        ml, mr = sml / kl, smr / kr
        res = two_level_t(ml, mr, kl, kr, invl, invr, s2_within=s2w, df_within=df_w, s2_version=s2v,
                          df_version=df_b)
        se_l, se_r = np.sqrt(res.var_left), np.sqrt(res.var_right)
    t, df, p = np.asarray(res.t), np.asarray(res.df), np.asarray(res.p_value)
    nan = float("nan")
    return [SegmentTest(float(ml[i]), float(mr[i]), nan, nan, nan, nan, nan) if undecidable[i] else
            SegmentTest(float(ml[i]), float(mr[i]), float(se_l[i]), float(se_r[i]), float(t[i]), float(df[i]),
                        float(p[i]))
            for i in range(len(pairs))]


def segment_test(vs: VersionStats, start: int, split: int, stop: int, *,
                 version_var: tuple[float, float] | None = None) -> SegmentTest:
    """Compare versions ``[start, split)`` with ``[split, stop)`` of ``vs`` (indices into its
    arrays) by :func:`compare_segments`."""
    return compare_segments(SegmentStats.of(vs, start, split), SegmentStats.of(vs, split, stop),
                            version_var=version_var)


def relative_change(mean_left, mean_right, *, log: bool = False):
    """``right / left - 1`` of two segment levels (of log-levels: ``exp(right - left) - 1``);
    scalars or arrays alike."""
    if log:
        return np.expm1(np.asarray(mean_right) - np.asarray(mean_left))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(mean_right) / np.asarray(mean_left) - 1.0


def relative_interval(mean_left, mean_right, var_left, var_right, df, confidence_level: float, *,
                      log: bool = False):
    """Relative change ``right / left - 1`` of two segment levels and its interval, for scalars or
    arrays of segment pairs alike.

    With ``log`` (the levels are log-levels), the interval of the difference ``d +- q se`` is
    carried through ``exp(.) - 1``: exact, and always inside (-100%, +inf).  Otherwise (a level
    of 0 somewhere: a count, or a time that read 0) Fieller's interval
    (:func:`~regbench.stats.compare.fieller_bounds`), cut to ratios of at least 0, so also inside
    (-100%, +inf) and unbounded above where the left level is not told from 0; the delta method
    it replaces ran below -100% (a probe: "-90.62% [-136.81%, -44.42%]" for a 10x speed-up
    with one sample that read 0).  NaN unless both levels are positive (a ratio of levels of
    different or negative sign means nothing).  ``q`` is Student's quantile with ``df`` degrees
    of freedom (0 where ``df`` is not finite: a difference without noise).

    Returns
    -------
    change, low, high : float or numpy.ndarray
    """
    from scipy.special import stdtrit

    check_confidence(confidence_level)
    ml, mr = np.asarray(mean_left, dtype=float), np.asarray(mean_right, dtype=float)
    df = np.asarray(df, dtype=float)
    finite = np.isfinite(df)
    q = np.where(finite, stdtrit(np.where(finite, df, 1.0), (1 + confidence_level) / 2), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if log:
            d = mr - ml
            se = np.sqrt(np.asarray(var_left) + np.asarray(var_right))
            out = np.expm1(d), np.expm1(d - q * se), np.expm1(d + q * se)
        else:
            ok = (ml > 0) & (mr > 0)
            rel = np.where(ok, mr / ml - 1.0, np.nan)
            low, high = fieller_bounds(ml, mr, np.asarray(var_left, dtype=float),
                                       np.asarray(var_right, dtype=float), q, positive=True)
            out = rel, np.where(ok, low, np.nan), np.where(ok, high, np.nan)
    if np.ndim(out[0]) == 0:
        return float(out[0]), float(out[1]), float(out[2])
    return out


def ratio_interval(res: SegmentTest, confidence_level: float, *, log: bool = False) -> tuple[float, float, float]:
    """Relative change ``right / left - 1`` of a segment test and its interval
    (:func:`relative_interval` with the test's variances and Satterthwaite degrees of freedom: a
    normal quantile under-covers with few versions).

    Parameters
    ----------
    res : SegmentTest
    confidence_level : float
        In (0, 1).
    log : bool, keyword-only
        Whether ``res`` compares log-levels.

    Returns
    -------
    change, ci_low, ci_high : float

    Raises
    ------
    ValueError
        For a ``confidence_level`` outside (0, 1).
    """
    rel, lo, hi = relative_interval(res.mean_left, res.mean_right, res.se_left**2, res.se_right**2, res.df,
                                    confidence_level, log=log)
    return float(rel), float(lo), float(hi)


#: Successive differences a history's scale is taken from, at most (evenly spaced beyond).
SCALE_DIFFERENCES = 1000


def difference_scale(d: np.ndarray) -> float:
    """The robust scale of a history's successive differences ``d`` (:func:`tie_safe_scale`), from
    an evenly spaced :data:`SCALE_DIFFERENCES` of them when there are more: Qn holds every pair
    of its values in memory, and 20,000 versions took 6.4 GB (a probe); 1,000 differences give a
    precise scale anyway."""
    d = np.asarray(d, dtype=float)
    if d.size > SCALE_DIFFERENCES:
        d = d[np.linspace(0, d.size - 1, SCALE_DIFFERENCES).round().astype(int)]
    return tie_safe_scale(d)


def version_variance(vs: VersionStats, splits: Sequence[int] = ()) -> tuple[float, float] | None:
    """Version-to-version variance component of a history and its approximate degrees of freedom.

    Half the squared robust scale of successive differences of version means estimates the
    variance of a version mean about its local level; a few steps in the history barely move a
    median, so undetected changes do not inflate it the way a segment's ANOVA would (which would
    hide a second change in the segment of the first).  Subtracting the runs' share (pooled
    within-version variance / n) leaves the version component.  The scale is Rousseeuw and
    Croux's Qn (:func:`qn_scale`): 82% of the efficiency of the sample standard deviation under
    normality, and like the MAD a breakdown point of 50% (a short history with two steps among
    seven differences does not break it), against 37% efficiency for the MAD this used before,
    which left a ten-version history about 3 degrees of freedom for the component and a 25% step
    undetected; the efficiency sets the degrees of freedom.  Beyond 1,000 differences an evenly
    spaced 1,000 of them are used (the estimate is then precise anyway; the degrees of freedom
    say so).

    Parameters
    ----------
    vs : VersionStats
    splits : sequence of int
        Changes already found (indices into ``vs``: a split ``tau`` lies between versions
        ``tau - 1`` and ``tau``): the differences across them are left out, so that the steps
        found do not count as version-to-version noise when the next is looked for (in a short
        history two steps among seven differences would double the estimate).

    Returns
    -------
    (float, float) or None
        ``(s2v, df)``; None with fewer than :data:`MIN_VERSIONS_FOR_VERSION_VAR` versions, when
        each test should estimate the component from its own two segments
        (:func:`compare_segments` without ``version_var``).
    """
    k = vs.mean.size
    if k < MIN_VERSIONS_FOR_VERSION_VAR:
        return None
    d = np.diff(vs.mean)
    if len(splits):
        keep = np.ones(d.size, dtype=bool)
        keep[[tau - 1 for tau in splits if 0 < tau <= d.size]] = False
        d = d[keep]
    if d.size < 2:
        return None
    total, df, runs_share = _difference_noise(d, vs.n, vs.var)
    return max(0.0, total - runs_share), df


def segment_neighbourhood(y: np.ndarray, max_changes: int, *, min_size: int = 1) -> dict[int, list[int]]:
    """For each number of changes ``m`` from 1 to ``max_changes``, the splits of ``y`` into
    ``m + 1`` segments of at least ``min_size`` values with the least sum of squared deviations
    from the segment means (the numbers of changes that fit).

    The segment neighbourhood search of Auger and Lawrence (1989), Bellman's dynamic programme
    over the end of the last segment: exact, in ``O(max_changes * n**2)`` time, which is nothing
    for the short histories it serves (:meth:`regbench.detect.search.SegmentSearch.change_points`).
    Written here rather than taken from ``ruptures`` (its ``Dynp``, against which the tests check
    this): importing ``ruptures`` imports all of ``scipy.stats``, 0.25 s more for every command
    that detects, which the rest of detection avoids.  A split ``tau`` lies between ``y[tau - 1]``
    and ``y[tau]``, as everywhere in this module.

    References
    ----------
    Auger and Lawrence, "Algorithms for the optimal identification of segment neighborhoods",
    Bulletin of Mathematical Biology 51 (1989) 39-54.
    """
    y = np.asarray(y, dtype=float)
    k = y.size
    max_changes = min(int(max_changes), k // max(1, min_size) - 1)
    if max_changes < 1:
        return {}
    y = y - y.mean()  # centred, so that the sums of squares below do not cancel
    c1 = np.concatenate([[0.0], np.cumsum(y)])
    c2 = np.concatenate([[0.0], np.cumsum(y * y)])
    i, j = np.triu_indices(k + 1, 1)
    cost = np.full((k + 1, k + 1), np.inf)  # cost[a, b]: the segment [a, b); empty ones impossible
    cost[i, j] = np.maximum(0.0, (c2[j] - c2[i]) - (c1[j] - c1[i]) ** 2 / (j - i))
    cost[i[j - i < min_size], j[j - i < min_size]] = np.inf
    best = cost[0].copy()  # best[t]: the least cost of [0, t) in m + 1 segments, here m = 0
    back: list[np.ndarray] = []
    out: dict[int, list[int]] = {}
    for m in range(1, max_changes + 1):
        total = best[:, None] + cost  # total[s, t]: [0, s) in m segments, then [s, t)
        arg = np.argmin(total, axis=0)
        best = total[arg, np.arange(k + 1)]
        back.append(arg)
        splits, t = [], k
        for b in reversed(back):
            t = int(b[t])
            splits.append(t)
        out[m] = sorted(splits)
    return out


def within_segments_mean_square(vs: VersionStats, splits: Sequence[int]) -> tuple[float, float] | None:
    """The variance of a version mean about its segment's mean, when ``splits`` cut ``vs`` into
    segments: the version means' sum of squares within their segments over
    ``k - len(splits) - 1`` degrees of freedom (the within-groups mean square of a one-way
    ANOVA); None when no segment has two versions.  It holds
    the runs' noise and the builds' alike and is never taken apart (see
    :func:`mean_square_test`), but it is never less than the runs' share alone (their pooled
    variance times the mean of ``1 / n``), which it estimates too: the version means of a count
    that is sometimes taken repeat exactly by chance while its runs vary (0.06, 0.06, 0.1 from runs
    of 0 and 0.1-0.3), and a mean square of 0 called eight differences of a quiet 16-version
    history certain.  For the same reason a mean square of 0 in a history of one run a version,
    where nothing else measured the noise, is None too (counts of 1 to 3 a run, one run a version,
    repeat their means too): only runs that agree exactly make a difference certain."""
    k = vs.mean.size
    edges = [0, *sorted(splits), k]
    df_b = k - len(edges) + 1
    if df_b < 1:
        return None
    # Deviations from each segment's mean, and exactly 0 for a segment of equal values: the sums
    # of squares of SegmentStats cancel to a few 1e-17 there, a spread that made 1.9, 1.9, 1.9
    # (counts, one run a version) a certain change from 2.0.
    within = sum(float(((seg - seg.mean()) ** 2).sum()) for seg in (vs.mean[a:b] for a, b in zip(edges[:-1], edges[1:]))
                 if seg.size > 1 and np.ptp(seg) > 0)
    runs_share = _runs_share(vs.n, vs.var)
    if not within > 0 and not bool((vs.n > 1).any()):
        return None
    return max(within / df_b, runs_share), float(df_b)


def mean_square_test(vs: VersionStats, start: int, split: int, stop: int, mean_square: tuple[float, float]
                     ) -> SegmentTest:
    """Compare versions ``[start, split)`` with ``[split, stop)`` of ``vs`` by Student's t on the
    variance of a version mean ``mean_square = (ms, df)`` (:func:`within_segments_mean_square`):
    ``se**2 = ms / k`` a side, ``df`` degrees of freedom.

    The test of the upper factor of a two-stage nested design against the mean square of the
    factor nested in it (Montgomery, *Design and Analysis of Experiments*, 8th ed., 2013, s.14.1):
    the version means are the replicates, whatever part of their spread the runs make, and under
    normal noise the test is exact.  The two-level test (:func:`compare_segments`) subtracts the
    runs' share to estimate the builds' component and gives Satterthwaite's degrees of freedom to
    the sum; with one to three degrees of freedom between versions that estimate is 0 often
    enough that the test then compares builds with the runs' noise alone, and a test used at
    levels of 1e-5 cannot afford it (builds 30 times a version mean's runs apart, three segments
    of two versions: 0.28% of quiet draws significant at 1e-3, 1.25% at 1e-4, twelve times the
    level; this test 0.05% and 0.025%; 70 of 200 quiet 11-version histories with builds 1% apart
    and runs 0.5% raised a false alarm with the two-level test in the search of
    :meth:`regbench.detect.search.SegmentSearch._short_history`).  With no spread at all (a count
    that never varies) a difference is certain.
    """
    from scipy.special import stdtr  # Student's t CDF, without importing all of scipy.stats

    ms, df = mean_square
    left, right = vs.mean[start:split], vs.mean[split:stop]
    ml, mr = float(left.mean()), float(right.mean())
    se_l, se_r = float(np.sqrt(ms / left.size)), float(np.sqrt(ms / right.size))
    se = float(np.hypot(se_l, se_r))
    if se > 0 and df >= 1:
        t = (mr - ml) / se
        return SegmentTest(ml, mr, se_l, se_r, t, df, float(2 * stdtr(df, -abs(t))))
    if se == 0 and mr != ml:
        return SegmentTest(ml, mr, 0.0, 0.0, float(np.sign(mr - ml) * np.inf), float("inf"), 0.0)
    nan = float("nan")
    return SegmentTest(ml, mr, se_l, se_r, nan, nan, nan)


def _difference_noise(d: np.ndarray, n: np.ndarray, var: np.ndarray) -> tuple[float, float, float]:
    """From successive differences ``d`` of version means and the versions' run counts ``n`` and
    within-version variances ``var``: the variance of a version mean (half the squared robust scale
    of ``d``), its degrees of freedom (Qn's efficiency, 0.82, of ``d.size - 1``), and the runs'
    share of it (the pooled within-version variance times the mean of ``1 / n``)."""
    return difference_scale(d) ** 2 / 2, max(1.0, 0.82 * (d.size - 1)), _runs_share(n, var)


def _runs_share(n: np.ndarray, var: np.ndarray) -> float:
    """The runs' share of the variance of a version mean: the pooled within-version variance of
    versions with ``n`` runs and variances ``var``, times the mean of ``1 / n``."""
    multi = n > 1
    df_w = float((n[multi] - 1).sum())
    s2w = float(((n[multi] - 1) * var[multi]).sum() / df_w) if df_w > 0 else 0.0
    return s2w * float(np.mean(1.0 / n))


#: The level of the test that a stretch of a history is noisier from version to version than the
#: whole (:func:`noisier_variance`).
NOISIER_LEVEL = 0.01


def noisier_variance(vs: VersionStats, s: int, e: int, whole: tuple[float, float] | None,
                     splits: Sequence[int] = (), *, level: float = NOISIER_LEVEL) -> tuple[float, float] | None:
    """The version component of versions ``[s, e)`` of ``vs`` where they vary from version to
    version significantly more than the whole history (``whole``, :func:`version_variance` with
    ``splits``); else ``whole``.

    :func:`version_variance` takes one scale for the whole history, robust to its steps.  A change
    can bring a different noise with it: a benchmark made 5x faster is timed over a fifth of the
    time, and with the same absolute jitter its relative noise grows (a probe: 3% before a 5x
    speed-up, 25% after).  Qn of the successive differences of such a history sits between the two
    regimes, below the noisy one, and the short excursions and splits the search tested in the
    noisy stretch against it were false (pairs in 2 of 3 seeds).  So a stretch bounded by the
    changes found is tested with its own scale when the variance of a version mean there (Qn of
    its successive differences, halved) exceeds the whole history's by more than the
    ``1 - level`` quantile of Fisher's F on their degrees of freedom (Snedecor and Cochran 1989,
    s.6.12, the variance-ratio test; the degrees of freedom are Qn's, as for the whole).  Only a
    noisier stretch takes its own: a quieter one keeps the whole history's, as before, so the
    rule can only make the search more cautious where the noise is demonstrably larger.
    """
    if whole is None or e - s < MIN_VERSIONS_FOR_VERSION_VAR or (s == 0 and e == vs.mean.size):
        return whole  # (the whole history is the whole: no Qn computed again, 8 ms at 500 versions)
    d = np.diff(vs.mean[s:e])
    cut = [tau - s - 1 for tau in splits if s < tau < e]
    if cut:
        d = np.delete(d, cut)
    if d.size < MIN_VERSIONS_FOR_VERSION_VAR - 1:
        return whole
    total, df, runs_share = _difference_noise(d, vs.n[s:e], vs.var[s:e])
    whole_total = whole[0] + runs_share  # the whole history's, on the same footing
    if not (np.isfinite(total) and whole_total > 0):
        return whole
    from scipy.special import fdtri  # Fisher's F quantile, without importing all of scipy.stats

    if total / whole_total <= float(fdtri(df, whole[1], 1.0 - level)):
        return whole
    return max(0.0, total - runs_share), df


#: The fewest degrees of freedom of a segment's runs' variance for :func:`runs_differ` to call that
#: segment the noisier one: one version of two runs (1 degree of freedom) has a variance whose 95%
#: range spans 0.001 to 5 times the true one, so the variance-ratio test calls it noisier on
#: chance alone, and Welch's test on one degree of freedom then needs t = 318 for p = 0.001 (on
#: the independent shape `few-runs`, 2 runs a version, recall fell 0.973 -> 0.958 with 1 allowed).
MIN_OWN_DF = 3


def runs_differ(left: SegmentStats, right: SegmentStats, *, level: float = NOISIER_LEVEL) -> bool:
    """Whether one segment's runs spread significantly more than the other's: the ratio of their
    pooled within-version variances beyond the ``1 - level`` quantile of Fisher's F on their
    degrees of freedom, either way (the variance-ratio test, Snedecor and Cochran 1989, s.6.12).
    False where a segment has no two runs of a version to measure it, and where the noisier one's
    variance has fewer than :data:`MIN_OWN_DF` degrees of freedom."""
    if not (left.df_within > 0 and right.df_within > 0):
        return False
    s2l, s2r = left.ss_within / left.df_within, right.ss_within / right.df_within
    if not math.isfinite(s2l + s2r) or s2l == s2r:
        return False
    df_noisier = left.df_within if s2l > s2r else right.df_within
    if df_noisier < MIN_OWN_DF:
        return False
    if not (s2l > 0 and s2r > 0):
        return True
    from scipy.special import fdtri  # Fisher's F quantile, without importing all of scipy.stats

    ratio, df_num, df_den = (s2l / s2r, left.df_within, right.df_within) if s2l >= s2r else \
        (s2r / s2l, right.df_within, left.df_within)
    return bool(ratio > float(fdtri(df_num, df_den, 1.0 - level)))


#: The level of the variance-ratio test that makes :func:`unequal_runs_test` take each segment's own
#: runs' variance: a pretest, whose level trades the pooled test's power where the runs are as noisy
#: on both sides against the calibration where they are not.  One version of five runs spreading 5x
#: wider than twenty quiet ones, no change (tests/test_detect_noisy_neighbour.py): rejected at 1%
#: 43% of the time by the pooled test; with this pretest at 0.01, 2.3%; at 0.05, 1.6%; at 0.1,
#: 1.35%; at equal noise 1.0% at each level.
UNEQUAL_RUNS_LEVEL = 0.05


def unequal_runs_test(left: SegmentStats, right: SegmentStats, version_var: tuple[float, float], *,
                      level: float = UNEQUAL_RUNS_LEVEL) -> SegmentTest | None:
    """:func:`compare_segments` with each segment's own within-version variance, where one
    segment's runs spread significantly more than the other's; else None (the pooled test holds).

    :func:`compare_segments` pools the runs' variance of the two segments, which is right when
    the runs are as noisy on both sides.  Another process on the machine for a few versions
    spreads their runs five times wider; a segment of one such version against thirty quiet ones
    then borrows the quiet runs' variance, and its mean, a few runs that spread 2.5%, was a
    certain change (p < 1e-20) where its own runs say it is not (the independent shape
    `noisy-stretch`, docs/evaluation.md).  So where the variance ratio of the two segments'
    within-version variances exceeds the ``1 - level`` quantile of Fisher's F on their degrees of
    freedom (either way; Snedecor and Cochran 1989, s.6.12), each segment mean's variance takes
    its own runs' variance, and the t statistic gets Satterthwaite's degrees of freedom from the
    three terms (the version component's and each segment's runs'): Welch's test, with the
    version component of the two-level model (seed 000 s.3) beside it.

    Parameters
    ----------
    left, right : SegmentStats
    version_var : (float, float)
        ``(s2v, df)``: the version component, as :func:`compare_segments` takes it.
    level : float, keyword-only
        The level of the variance-ratio test.
    """
    if not runs_differ(left, right, level=level):
        return None
    from scipy.special import stdtr  # Student's t CDF, without importing all of scipy.stats

    df_p = left.df_within + right.df_within
    s2p = (left.ss_within + right.ss_within) / df_p
    # Each side's own variance where it is the larger, else the pooled one: a side whose runs
    # happen to agree closely (a version of five runs) must not make its mean look more precise
    # than the pooled test did (with its own variance there and the pretest at 0.1, one version
    # against twenty at equal noise was rejected at 1% 2.25% of the time, not 1%).
    (s2l, df_l), (s2r, df_r) = ((max(s2, s2p), df if s2 > s2p else df_p) for s2, df in (
        (left.ss_within / left.df_within, left.df_within), (right.ss_within / right.df_within, right.df_within)))
    s2v, df_b = version_var
    kl, kr = left.k, right.k
    wl, wr = s2l * left.sum_inv_n / kl**2, s2r * right.sum_inv_n / kr**2
    vv = s2v * (1 / kl + 1 / kr)
    var_l, var_r = s2v / kl + wl, s2v / kr + wr
    denom = (vv**2 / df_b if df_b > 0 else 0.0) + wl**2 / df_l + wr**2 / df_r
    se = math.sqrt(var_l + var_r)
    if not (se > 0 and denom > 0):
        return None
    df = (vv + wl + wr) ** 2 / denom
    t = (right.mean - left.mean) / se
    p = float(2 * stdtr(df, -abs(t)))
    return SegmentTest(float(left.mean), float(right.mean), math.sqrt(var_l), math.sqrt(var_r), float(t), float(df), p)
