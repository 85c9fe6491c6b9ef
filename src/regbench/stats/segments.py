"""Segments of a version history: robust run means, per-version summaries and the two-level test.

A *segment* is a stretch of consecutive versions of one benchmark's history.  Runs, not
iterations, are the unit of replication (seed 000, 000_833974a369fcaf36.txt, s.2), so every run
is first reduced to one value, its mean, after dropping the samples that are an order of
magnitude away from their version (seed 001, 001_0c28a3a14a5fab8a.txt, s.2.1: outliers "several
orders of magnitude" long).  Each version is then summarised by the mean, the variance and the
number of its run means (:class:`VersionStats`), and two adjacent segments are compared by a
t test whose variance has two levels, as seed 000 s.3 has runs within an experiment:

* runs within versions: the pooled within-version variance of run means ``s2w``;
* versions within segments: a version-to-version component ``s2v`` (each version is a new
  build, and builds that differ a little are not a change), by one-way ANOVA
  (:func:`compare_segments`) or, for a whole history, robustly from successive differences
  (:func:`version_variance`).

The variance of a segment mean of ``k`` versions with ``n_j`` runs each is
``s2v / k + s2w * sum(1 / n_j) / k**2``; the t statistic of two segments gets Satterthwaite's
degrees of freedom (:func:`two_level_t`).  Segment statistics are sufficient and add up
(:class:`SegmentStats`), so a new version is tested against the whole segment before it in
constant time.  Per-mode summaries (:func:`mode_stats`) serve multimodal benchmarks, whose modes
are compared one by one (seed 001 s.4.2; screened by :func:`bimodality_coefficient`).

The change detector built on these is :mod:`regbench.detect.auto`.

References
----------
seed 000 (000_833974a369fcaf36.txt) s.2 (runs are the replicates), s.3 (precision over runs x
iterations, the two-level model this test extends by one level).
seed 001 (001_0c28a3a14a5fab8a.txt) s.2.1 (outliers orders of magnitude away), s.4.2 (modes of
complex benchmarks compared cluster by cluster).
Satterthwaite, "An approximate distribution of estimates of variance components", Biometrics
Bulletin 2 (1946) 110-114 (degrees of freedom of a sum of variance estimates).
Rousseeuw and Croux, "Alternatives to the median absolute deviation", JASA 88 (1993) 1273-1283
(the efficiency of a MAD-based variance, which sets :func:`version_variance`'s degrees of freedom).
"""

from __future__ import annotations

import functools
import numbers
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ._validate import check_confidence

#: Versions a series needs before its version-to-version variance is estimated from the whole
#: history (:func:`version_variance`); with fewer, each test estimates it from its own segments.
MIN_VERSIONS_FOR_VERSION_VAR = 6
#: The location statistics a run can be reduced to (:func:`run_locations`).
LOCATIONS = ("mean", "median", "low")
#: The quantile of the ``low`` location: where interference only adds time (a floor plus delays),
#: the low end of a run's samples moves with the code and hardly with the interference (Chen and
#: Revels 2016).  The 10th percentile rather than the minimum, whose variance grows with rare
#: fast outliers and which a single sample decides.
LOW_QUANTILE = 0.1
#: Samples a run needs before a quantile of them (``median``, ``low``) is a location worth using.
MIN_SAMPLES_FOR_QUANTILES = 5


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VersionStats:
    """Per-version summaries of a history: the versions with at least one usable run.

    Attributes
    ----------
    index : numpy.ndarray of int
        ``index[j]`` is the position, in the runs handed over, of the j-th summarised version
        (versions without runs, or whose run values are all NaN, are left out).
    mean : numpy.ndarray
        Mean of the version's run values (run means, or another location per run).
    var : numpy.ndarray
        Variance (ddof=1) of the version's run values; NaN with one run.
    n : numpy.ndarray of int
        Number of run values of the version.
    log : bool
        Whether the run values are logarithms (of positive locations): segment means are then
        log-levels, and a relative change is ``exp(right - left) - 1`` (:func:`relative_change`).
    run_scale : float
        The robust spread of runs about their version's median (:func:`run_spread`) used to leave
        out outlying runs; NaN when none were looked for.
    """

    index: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    n: np.ndarray
    log: bool = False
    run_scale: float = float("nan")


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
# Runs and versions
# --------------------------------------------------------------------------------------------

def _check_fence(fence: float) -> None:
    if not isinstance(fence, numbers.Real) or not fence > 0:
        raise ValueError("`fence` must be positive")


def _check_group(group, n: int) -> np.ndarray:
    if group is None:
        return np.zeros(n, dtype=int)
    group = np.asarray(group)
    if group.shape != (n,):
        raise ValueError("`group` must give one version per run")
    return group


def _stacked(runs: Sequence[np.ndarray], idx: np.ndarray, size: int) -> np.ndarray:
    """The runs ``idx`` (each of ``size`` samples) as the rows of one array: ``np.stack``'s result
    from one concatenation (``np.stack`` makes a view of every run first: 14% of ``auto``'s time
    on histories of 5,000 runs of 10 samples, measured with cProfile)."""
    return np.concatenate([runs[i] for i in idx]).reshape(idx.size, size)


def history_percentiles(runs: Sequence[np.ndarray]) -> tuple[float, float]:
    """The 10th and 90th percentiles (order statistics) of every sample of the positive runs of
    one history: the history's reference for :func:`fence_bounds`, NaN when it has none."""
    # The runs' minima in one pass over their concatenation (``np.minimum.reduceat``), not one
    # ``min`` call a run: on histories of 5,000 runs those calls took 27% of ``auto``'s time.
    sizes = np.fromiter((r.size for r in runs), dtype=np.intp, count=len(runs))
    full = sizes > 0
    if not full.any():
        return float("nan"), float("nan")
    flat = np.concatenate(runs)
    starts = np.cumsum(sizes) - sizes
    keep = np.zeros(len(runs), dtype=bool)
    keep[full] = np.minimum.reduceat(flat, starts[full]) > 0  # NaN compares False, as r.min() > 0 did
    if not keep.any():
        return float("nan"), float("nan")
    pooled = flat if keep.all() else flat[np.repeat(keep, sizes)]
    return float(np.quantile(pooled, 0.1, method="higher")), float(np.quantile(pooled, 0.9, method="lower"))


def fence_bounds(runs: Sequence[np.ndarray], *, group=None, fence: float = 10.0,
                 history=None) -> tuple[np.ndarray, np.ndarray]:
    """Per run, the lowest and highest sample :func:`robust_run_means` keeps.

    Parameters
    ----------
    runs : sequence of numpy.ndarray
        The samples of each run.
    group : array_like of int, optional, keyword-only
        The version of each run (0, 1, ...); default: all runs are of one version.
    fence : float, keyword-only
        How many times beyond its version's 90th (or below its 10th) percentile a sample is left
        out; ``inf`` trims nothing.  A run's percentiles are order statistics (the sample at or
        inside the percentile, never interpolated towards an extreme one), and its version's is
        the median over the version's runs.  A sample is left out only when it is also that far
        beyond the whole history's percentile: a mode holding a tenth of the history's samples
        (a cache miss, seed 001 s.4.2) lies inside the history's percentiles, so a version whose
        runs happened to draw few of its samples does not lose them, and its level does not jump
        with the luck of the draw.
    history : tuple of float or of numpy.ndarray, optional, keyword-only
        The history's ``(10th, 90th)`` percentiles (:func:`history_percentiles`), one pair or
        one array of each per run (runs of several histories at once); default: those of
        ``runs``, taken as one history.

    Returns
    -------
    lo, hi : numpy.ndarray
        Bounds per run; ``-inf``/``inf`` (no trimming) for runs of versions whose data is not
        all positive, for empty runs, or when ``fence`` is inf.

    Raises
    ------
    ValueError
        For a non-positive ``fence`` or a ``group`` of the wrong length.
    """
    _check_fence(fence)
    n = len(runs)
    group = _check_group(group, n)
    sizes = np.array([r.size for r in runs])
    q = np.full((n, 2), np.nan)
    positive = np.ones(n, dtype=bool)
    for size in np.unique(sizes):
        if size == 0:
            continue
        idx = np.flatnonzero(sizes == size)
        block = _stacked(runs, idx, int(size))
        # Order statistics, not interpolated: with few samples a run's interpolated 90th
        # percentile is pulled towards its largest sample (x[8] + 0.1 (x[9] - x[8]) of ten), so a
        # 100x outlier would raise its own fence to 10x and slip under it.
        q[idx, 0] = np.quantile(block, 0.1, axis=1, method="higher")
        q[idx, 1] = np.quantile(block, 0.9, axis=1, method="lower")
        positive[idx] = block.min(axis=1) > 0
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    if not np.isfinite(fence) or n == 0:
        return lo, hi
    # Per-version thresholds: the median of the runs' percentiles.
    order = np.argsort(group, kind="stable")
    per = np.bincount(group)
    per = per[per > 0]
    if np.all(per == per[0]):  # the same number of runs in every version: one vectorised median
        med = np.nanmedian(q[order].reshape(per.size, per[0], 2), axis=1)
        version_q = np.repeat(med, per[0], axis=0)
    else:
        version_q = np.empty((n, 2))
        for part in np.split(np.arange(n), np.cumsum(per)[:-1]):
            version_q[part] = np.nanmedian(q[order[part]], axis=0)
    lo[order] = version_q[:, 0] / fence
    hi[order] = version_q[:, 1] * fence
    h_lo, h_hi = history_percentiles(runs) if history is None else history
    # np.fmin/fmax: a history without a reference (NaN) leaves the version's bounds as they are.
    lo = np.fmin(lo, np.asarray(h_lo, dtype=float) / fence).reshape(n)
    hi = np.fmax(hi, np.asarray(h_hi, dtype=float) * fence).reshape(n)
    trim = positive & (lo > 0)
    lo[~trim] = -np.inf
    hi[~trim] = np.inf
    return lo, hi


def robust_run_means(runs: Sequence[np.ndarray], *, group=None, fence: float = 10.0, history=None) -> np.ndarray:
    """Mean of each run after dropping samples an order of magnitude away from their version.

    A sample is left out when it is more than ``fence`` times the 90th percentile of its
    version's samples, or less than the 10th percentile divided by ``fence`` (positive data
    only).  The percentile of a version is the median over its runs of the runs' percentiles,
    so a few outliers cannot move it.  Percentiles rather than quartiles, because the slow mode
    of a bimodal benchmark (a cache miss, seed 001 s.4.2) may hold only 10-25% of the samples and
    is not an outlier; seed 001 s.2.1's outliers are "several orders of magnitude" away, which a
    fence of 10 times catches.  A run with every sample fenced out has no mean (NaN): the whole
    run lies an order of magnitude beyond its version's other runs and the history, as a process
    timed once whose one sample is such an outlier does, and is left out as an outlying run is
    (:func:`outlying_runs`); kept whole, one such run moved its version's level by the outlier's
    distance (a probe of processes timed once with interference, docs/evaluation.md).

    Runs of equal length are stacked and handled at once (the usual case: a plan fixes the
    iterations), so thousands of runs cost a few numpy calls.

    Parameters
    ----------
    runs : sequence of numpy.ndarray
        The samples of each run.
    group : array_like of int, optional, keyword-only
        The version of each run (0, 1, ...); default: all runs are of one version.
    fence : float, keyword-only
        See above; ``inf`` gives the plain run means.
    history : optional, keyword-only
        The history's percentiles for the fence (see :func:`fence_bounds`).

    Returns
    -------
    numpy.ndarray
        One mean per run (NaN for an empty run).

    Raises
    ------
    ValueError
        For a non-positive ``fence`` or a ``group`` of the wrong length.

    References
    ----------
    seed 000 s.2 (runs are the replicates); seed 001 s.2.1 (outliers), s.4.2 (modes).
    """
    return _locations(runs, group=group, fence=fence, estimators=("mean",), history=history)["mean"]


def run_locations(runs: Sequence[np.ndarray], *, group=None, fence: float = 10.0,
                  estimator: str = "mean", history=None) -> np.ndarray:
    """One location per run: the mean, the median or the low quantile of its samples, after the
    outlier fences of :func:`robust_run_means`.

    Parameters
    ----------
    runs : sequence of numpy.ndarray
        The samples of each run.
    group : array_like of int, optional, keyword-only
        The version of each run (0, 1, ...); default: all runs are of one version.
    fence : float, keyword-only
        Outlier fence (see :func:`robust_run_means`).
    history : optional, keyword-only
        The history's percentiles for the fence (see :func:`fence_bounds`).
    estimator : {"mean", "median", "low"}, keyword-only
        ``low`` is the :data:`LOW_QUANTILE` quantile.

    Returns
    -------
    numpy.ndarray
        One value per run (NaN for an empty run, and for a run with every sample fenced out:
        see :func:`robust_run_means`).

    Raises
    ------
    ValueError
        For an unknown ``estimator``, a non-positive ``fence`` or a ``group`` of the wrong length.

    References
    ----------
    seed 001 s.3.2 (robust estimators of a run's location: the median beside the mean); Chen and
    Revels, "Robust benchmarking in noisy environments", arXiv:1608.04295 (2016), s.3: timing
    noise only adds time, so the low end of the samples estimates the code's own cost.
    """
    if estimator not in LOCATIONS:
        raise ValueError(f"`estimator` must be one of {', '.join(LOCATIONS)}, got {estimator!r}")
    return _locations(runs, group=group, fence=fence, estimators=(estimator,), history=history)[estimator]


def _locations(runs: Sequence[np.ndarray], *, group, fence: float, estimators: Sequence[str],
               history=None) -> dict[str, np.ndarray]:
    """:func:`run_locations` of several estimators, the fences and the stacking of runs done once."""
    n = len(runs)
    out = {name: np.full(n, np.nan) for name in estimators}
    sizes = np.array([r.size for r in runs])
    lo, hi = fence_bounds(runs, group=group, fence=fence, history=history)
    for size in np.unique(sizes):
        if size == 0:
            continue
        idx = np.flatnonzero(sizes == size)
        block = _stacked(runs, idx, int(size))
        keep = (block >= lo[idx, None]) & (block <= hi[idx, None])
        every = bool(keep.all())
        kept = keep.sum(axis=1)
        trimmed = block if every else np.where(keep, block, np.nan)
        for name in estimators:
            if name == "mean":  # a run with every sample fenced out has none (robust_run_means)
                out[name][idx] = np.where(kept > 0, np.where(keep, block, 0.0).sum(axis=1) / np.maximum(kept, 1),
                                          np.nan)
                continue
            q = 0.5 if name == "median" else LOW_QUANTILE
            if every:
                out[name][idx] = np.quantile(block, q, axis=1)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows are replaced below
                values = np.nanquantile(trimmed, q, axis=1)
            out[name][idx] = np.where(kept > 0, values, np.nan)
    return out


@dataclass(frozen=True)
class LocationChoice:
    """Which location of a run a history is best summarised by, and why.

    Attributes
    ----------
    estimator : str
        One of :data:`LOCATIONS`.
    log : bool
        Whether every sample is positive, so that run locations are compared as logarithms
        (relative changes, and intervals inside (-100%, +inf)).
    spread : dict of str to float
        Per candidate, the pooled within-version variance of the (log) run locations: how much
        that location moves from run to run of one version, the noise every comparison of
        versions has to see through.
    skew : float
        The median over runs of ``(mean - median) / sd`` of the samples (Pearson's second
        skewness over 3): above about 0.1, samples gather at a floor with a tail of slower ones.
    reason : str
        One sentence for people (``regbench diagnose``, the change records).
    run_values : dict of str to numpy.ndarray, optional
        Per candidate, the location of every run (runs of the versions that have any, in history
        order, as :func:`run_locations` gives them), kept so that they are not computed twice.
    """

    estimator: str
    log: bool
    spread: dict[str, float]
    skew: float
    reason: str
    run_values: dict[str, np.ndarray] | None = field(default=None, repr=False, compare=False)


def choose_location(runs: Sequence[Sequence[np.ndarray]], *, fence: float = 10.0,
                    candidates: Sequence[str] = LOCATIONS, outlying_z: float | None = None,
                    direction: str | None = None) -> LocationChoice:
    """The location of a run that varies least between runs of the same version.

    Every version's runs measure one level, so the spread of a location between runs of one
    version is pure noise; the location with the smallest spread (pooled over versions) gives the
    most precise version levels, and so the most powerful comparison at the same error rate.  The
    choice depends only on the spread within versions, never on differences between versions,
    so it cannot manufacture a change.  On symmetric noise the mean wins (it is the efficient
    estimator there); under a floor with right-skewed interference (a run is never faster than
    the work allows, often slower) the low quantile wins; with heavy tails on both sides, the
    median (seed 001 s.3.2's robust estimators).  Ties go to the earlier candidate.

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        ``runs[k]``: the samples of every run of version ``k``.
    fence : float, keyword-only
        Outlier fence (see :func:`robust_run_means`).
    candidates : sequence of str, keyword-only
        Locations to choose from, in order of preference on ties.
    outlying_z : float, optional, keyword-only
        Leave out outlying runs first (:func:`outlying_runs`), as the comparison of versions will.
    direction : str, optional, keyword-only
        ``lower`` or ``higher`` is better: on which side of their version a run can be a burst
        (:func:`burst_side`; None: either side).

    Returns
    -------
    LocationChoice
        The mean when it cannot be told (no version with two runs, or fewer than
        :data:`MIN_SAMPLES_FOR_QUANTILES` samples per run).

    References
    ----------
    seed 000 s.2-3 (runs are the replicates; the precision of a result is the spread of its
    runs); seed 001 s.3.2; Chen and Revels (2016).
    """
    _check_fence(fence)
    bad = [c for c in candidates if c not in LOCATIONS]
    if bad or not candidates:
        raise ValueError(f"`candidates` must be some of {', '.join(LOCATIONS)}")
    flat, group, index = _flatten(runs)
    nonempty = [r for r in flat if r.size]
    positive = bool(nonempty) and float(np.concatenate(nonempty).min()) > 0
    skew = _median_skew(nonempty)
    per_version = np.bincount(group, minlength=index.size) if group.size else np.zeros(0, dtype=int)
    sizes = [r.size for r in nonempty]
    if not sizes or (per_version >= 2).sum() < 1 or min(sizes) < MIN_SAMPLES_FOR_QUANTILES:
        return LocationChoice("mean", positive, {}, skew,
                              "the mean of each run: too few runs or samples to compare locations")
    spread: dict[str, float] = {}
    every = _locations(flat, group=group, fence=fence, estimators=tuple(candidates))
    # Bursts are looked for on the slow side only (:func:`burst_side`), as the comparison of
    # versions will: a run far *faster* than its version's others is no burst but the one that did
    # not flip when the others' location jumped to a slower mode, and leaving it out made a
    # flipping location look steady (few-runs shape, docs/evaluation.md).
    side = burst_side(direction, positive) if direction is not None else "both"
    for name in candidates:
        values = every[name]
        if positive:
            values = np.log(values)
        else:  # relative deviations, so that locations of different size compare
            known = values[np.isfinite(values)]
            scale = float(np.abs(known.mean())) if known.size else 0.0
            # All zero (Go's 0 allocs/op): no relative spread to compare, so NaN (this location
            # is then not chosen), and no warning: the reason of the choice says so.
            values = values / scale if scale > 0 else np.full_like(values, np.nan, dtype=float)
        spread[name] = pooled_spread(stats_of_runs(values, group, index, outlying_z=outlying_z, outlying_side=side))
    finite = {k: v for k, v in spread.items() if np.isfinite(v)}
    if not finite:
        return LocationChoice("mean", positive, spread, skew, "the mean of each run: no run-to-run spread to compare")
    best = min(finite, key=lambda k: (finite[k], candidates.index(k)))
    reason = _location_reason(best, finite, skew)
    return LocationChoice(best, positive, spread, skew, reason, run_values=every)


def pooled_spread(vs: VersionStats) -> float:
    """The pooled within-version variance of the run values of ``vs`` (NaN without a version of two
    runs): how much one run's value varies about its version's level."""
    multi = vs.n > 1
    df = float((vs.n[multi] - 1).sum())
    return float(((vs.n[multi] - 1) * vs.var[multi]).sum() / df) if df > 0 else float("nan")


def _median_skew(runs: Sequence[np.ndarray]) -> float:
    """The median over runs of ``(mean - median) / sd`` (runs of equal length at once)."""
    sizes = np.array([r.size for r in runs])
    values = []
    for size in np.unique(sizes[sizes >= MIN_SAMPLES_FOR_QUANTILES]):
        block = _stacked(runs, np.flatnonzero(sizes == size), int(size))
        sd = block.std(axis=1)
        ok = sd > 0
        values.append((block.mean(axis=1)[ok] - np.median(block, axis=1)[ok]) / sd[ok])
    pooled = np.concatenate(values) if values else np.empty(0)
    return float(np.median(pooled)) if pooled.size else np.nan


#: How each of :data:`LOCATIONS` is named for people.
LOCATION_NAMES = {"mean": "mean", "median": "median", "low": f"{LOW_QUANTILE:.0%} quantile"}


def _location_reason(best: str, spread: dict[str, float], skew: float) -> str:
    others = [k for k in spread if k != best and spread[best] > 0]
    ratio = max((spread[k] / spread[best] for k in others), default=np.nan)
    times = float(np.sqrt(ratio)) if np.isfinite(ratio) else np.nan
    worst = LOCATION_NAMES[max(others, key=lambda k: spread[k])] if others else ""
    amount = f"{times:.2f}" if times < 10 else f"{times:.0f}"
    gain = f", {amount}x less run-to-run spread than the {worst}" if np.isfinite(times) and times > 1 else ""
    if best == "low":
        return (f"the {LOW_QUANTILE:.0%} quantile of each run: a floor with slower interference above it"
                f" (skew {skew:+.2f}){gain}")
    if best == "median":
        return f"the median of each run: outliers or heavy tails (skew {skew:+.2f}){gain}"
    return f"the mean of each run: the least run-to-run spread (skew {skew:+.2f}){gain}"


#: How far (in robust standard deviations of runs about their version's median) a run may lie
#: before it is taken for an interference burst and left out (:func:`outlying_runs`).
OUTLYING_RUN_Z = 5.0
#: Bursts are rare: when more runs than this share lie that far out, the spread is the noise
#: itself (heavy tails, or runs in two modes) and no run is left out (:func:`outlying_runs`).
OUTLYING_RUN_SHARE = 0.05


def _version_medians(values: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each run's version median (NaN for versions without a value) and each version's count."""
    ok = np.isfinite(values)
    n = np.bincount(group[ok], minlength=int(group.max()) + 1)
    # Per-version medians at once: sort by (version, value); a version's median is the middle of
    # its stretch of the sorted values.
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((values[idx], group[idx]))]
    start = np.concatenate(([0], np.cumsum(n)[:-1]))
    sorted_values = values[order]
    has = n > 0
    med = np.full(n.size, np.nan)
    med[has] = (sorted_values[start[has] + (n[has] - 1) // 2] + sorted_values[start[has] + n[has] // 2]) / 2
    return med[group], n


def run_spread(values: np.ndarray, group: np.ndarray) -> float:
    """The robust standard deviation of runs within versions, pooled over a history.

    From every pair of runs of the same version: ``median |x_i - x_j| / (sqrt 2 * 0.6745)``, the
    median of the absolute pairwise differences scaled to a standard deviation under normal
    noise.  Pairwise differences, not deviations from each version's median, because with a
    handful of runs a version's median is one of its runs and the deviations from it understate
    the spread (by about 30% with five runs); a run far out spoils only its own version's pairs,
    which the median over the history ignores.  NaN with fewer than three pairs in all.
    """
    ok = np.isfinite(values)
    if ok.sum() < 2:
        return float("nan")
    v, g = values[ok], group[ok]
    order = np.argsort(g, kind="stable")
    v, g = v[order], g[order]
    n = np.bincount(g)
    start = np.concatenate(([0], np.cumsum(n)[:-1]))
    diffs = []
    for size in np.unique(n[n >= 2]):  # versions with the same number of runs at once
        rows = start[n == size][:, None] + np.arange(size)
        block = v[rows]
        i, j = np.triu_indices(size, 1)
        diffs.append(np.abs(block[:, i] - block[:, j]).ravel())
    if not diffs:
        return float("nan")
    d = np.concatenate(diffs)
    if d.size < 3:
        return float("nan")
    return float(np.median(d)) / (np.sqrt(2.0) * 0.6744897501960817)


def outlying_runs(values: np.ndarray, group: np.ndarray, *, z: float = OUTLYING_RUN_Z,
                  scale: float | None = None, side: str = "both") -> np.ndarray:
    """Runs whose value lies far from the other runs of their version: a burst of interference
    that lasted a whole run (another process on the CPU for that run's seconds) moves every
    location of the run, its low quantile too.

    A run is outlying when it lies more than ``z`` robust standard deviations (:func:`run_spread`,
    pooled over the whole history so that versions with few runs borrow it) from its version's
    median.  Only versions with three runs or more can tell which of their runs is the odd one.
    ``z`` = 5 leaves out about one run in 100,000 under normal noise (the deviation from the
    median of five runs has about 1.1 times the runs' standard deviation, so the threshold is
    about 4.4 of its own): never a run of the usual noise, always a run twice as slow among runs
    that agree within a few percent.  Leaving runs out is right for rare contamination only: when more than
    :data:`OUTLYING_RUN_SHARE` of the runs lie that far, they are the noise's own tails (or a
    second mode of runs), removing them would understate the noise and make changes out of it,
    and nothing is left out.  (On the real corpus of ``regbench evaluate --corpus real``, 0-2.2%
    of the runs of each series were bursts; a two-threaded program had 31-35% of its runs in a
    second mode.)

    Parameters
    ----------
    values : numpy.ndarray
        One value per run (NaN: no value).
    group : numpy.ndarray of int
        Each run's version (0, 1, ...).
    z : float, keyword-only
        The threshold, in robust standard deviations; inf leaves nothing out.
    scale : float, optional, keyword-only
        The robust standard deviation to use, saved by a pass over the whole history that found
        the runs fit for it (the share above is then not checked again on a few new versions; NaN:
        leave nothing out); default: :func:`run_spread` of ``values``, with the share checked.
    side : str, keyword-only
        Which runs can be bursts (:data:`BURST_SIDES`, :func:`burst_side`): ``above`` their
        version's median only (interference that makes a run take longer), ``below`` only, or
        ``both``.

    Returns
    -------
    numpy.ndarray of bool
        True for the runs to leave out.
    """
    return _outlying(values, group, z=z, scale=scale, side=side)[0]


#: Which side of its version's median a run may lie on to be taken for a burst
#: (:func:`outlying_runs`, :func:`burst_side`).
BURST_SIDES = ("both", "above", "below")


def burst_side(direction: str, positive: bool) -> str:
    """Where an interference burst puts a run of a benchmark: ``above`` the other runs for a
    positive measure where lower is better (a time: interference only adds time, the floor argument
    of Chen and Revels 2016), ``below`` for a positive one where higher is better (a throughput),
    ``both`` when nothing is known (values that are not all positive).

    A run *faster* than its version's others by many times their spread is not interference: in
    a benchmark whose runs land at levels it is the run that stayed at the usual level while the
    others did not, and leaving it out made a change of the version's slow runs (few-runs shape,
    docs/evaluation.md).
    """
    if direction not in ("lower", "higher"):
        raise ValueError(f"`direction` must be 'lower' or 'higher', got {direction!r}")
    if not positive:
        return "both"
    return "above" if direction == "lower" else "below"


def _outlying(values: np.ndarray, group: np.ndarray, *, z: float, scale: float | None,
              side: str = "both") -> tuple[np.ndarray, float]:
    """:func:`outlying_runs`, and the scale it used (NaN when it leaves nothing out by rule)."""
    if side not in BURST_SIDES:
        raise ValueError(f"`side` must be one of {', '.join(BURST_SIDES)}, got {side!r}")
    out = np.zeros(values.size, dtype=bool)
    if not np.isfinite(z) or values.size == 0:
        return out, float("nan")
    check_share = scale is None
    if scale is None:
        scale = run_spread(values, group)
    if not (np.isfinite(scale) and scale > 0):
        return out, float("nan")
    med, n = _version_medians(values, group)
    eligible = np.isfinite(values) & (n[group] >= 3)
    deviation = values[eligible] - med[eligible]
    if side == "above":
        out[eligible] = deviation > z * scale
    elif side == "below":
        out[eligible] = deviation < -z * scale
    else:
        out[eligible] = np.abs(deviation) > z * scale
    if check_share and out.sum() > OUTLYING_RUN_SHARE * max(int(np.isfinite(values).sum()), 1):
        return np.zeros(values.size, dtype=bool), float("nan")
    return out, float(scale)


def stats_of_runs(values: np.ndarray, group: np.ndarray, index: np.ndarray, *, log: bool = False,
                  outlying_z: float | None = None, run_scale: float | None = None,
                  outlying_side: str = "both") -> VersionStats:
    """Per-version summaries of one value per run.

    Parameters
    ----------
    values : numpy.ndarray
        One value per run (a run mean, or another location); NaN values are left out.
    group : numpy.ndarray of int
        ``group[i]`` is the position in ``index`` of run i's version.
    index : numpy.ndarray of int
        The versions' positions in the history, carried to :attr:`VersionStats.index`.
    log : bool, keyword-only
        Summarise the logarithms of the values (non-positive values are then left out).
    outlying_z : float, optional, keyword-only
        Leave out the runs :func:`outlying_runs` finds at this threshold (after the logarithm).
    run_scale : float, optional, keyword-only
        The scale for that (default: :func:`run_spread` of these values).
    outlying_side : str, keyword-only
        Which side of their version's median runs are left out on (:func:`outlying_runs`).

    Returns
    -------
    VersionStats
        Versions left without any value are dropped.
    """
    if log:
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)
    scale = float("nan")
    if outlying_z is not None and values.size:
        drop, scale = _outlying(values, group, z=outlying_z, scale=run_scale, side=outlying_side)
        values = np.where(drop, np.nan, values)
    ok = np.isfinite(values)
    values, group = values[ok], group[ok]
    n = np.bincount(group, minlength=index.size)
    has = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=values, minlength=index.size) / n
        dev2 = np.bincount(group, weights=(values - mean[group]) ** 2, minlength=index.size)
        var = np.where(n > 1, dev2 / np.maximum(n - 1, 1), np.nan)
    return VersionStats(index[has], mean[has], var[has], n[has], log, scale)


def _flatten(runs: Sequence[Sequence[np.ndarray]]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Runs of the versions that have any, each run's version (as a position in ``index``), and
    ``index``, the positions of those versions."""
    counts = np.array([len(r) for r in runs], dtype=int)
    index = np.flatnonzero(counts > 0)
    flat = [r for k in index for r in runs[k]]
    return flat, np.repeat(np.arange(index.size), counts[index]), index


def _given_locations(locations: np.ndarray | None, flat: Sequence[np.ndarray], *, group: np.ndarray, fence: float,
                     estimator: str, history: tuple[float, float] | None = None) -> np.ndarray:
    """The runs' locations a caller already computed (:attr:`LocationChoice.run_values`, one per
    run of ``flat``), else :func:`run_locations` of ``flat``."""
    if locations is not None and np.shape(locations) == (len(flat),):
        return np.asarray(locations, dtype=float)
    return run_locations(flat, group=group, fence=fence, estimator=estimator, history=history)


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
    flat, group, index = _flatten(runs)
    loc = _given_locations(locations, flat, group=group, fence=fence, estimator=estimator, history=fence_history)
    if log:
        with np.errstate(divide="ignore", invalid="ignore"):
            loc = np.log(loc)
    return _version_minimum(loc, group, index, log=log)


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
    scale = qn_scale(np.diff(x)) / np.sqrt(2.0)
    if not (np.isfinite(scale) and scale > 0):
        return None
    out = np.abs(x - local) > z * scale
    if out.sum() > OUTLYING_RUN_SHARE * x.size:
        return None
    return out


def _version_minimum(values: np.ndarray, group: np.ndarray, index: np.ndarray, *, log: bool) -> VersionStats:
    """Each version's smallest finite value (one value a version), for the versions that have one."""
    lowest = np.full(index.size, np.inf)
    np.minimum.at(lowest, group, np.where(np.isfinite(values), values, np.inf))
    keep = np.isfinite(lowest)
    return VersionStats(index=index[keep], mean=lowest[keep], var=np.full(int(keep.sum()), np.nan),
                        n=np.ones(int(keep.sum()), dtype=int), log=log)


def version_stats(runs: Sequence[Sequence[np.ndarray]], *, fence: float = 10.0, estimator: str = "mean",
                  log: bool = False, outlying_z: float | None = None, run_scale: float | None = None,
                  fence_history: tuple[float, float] | None = None, outlying_side: str = "both",
                  locations: np.ndarray | None = None) -> VersionStats:
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
    _check_fence(fence)
    flat, group, index = _flatten(runs)
    if not flat:
        return stats_of_runs(np.empty(0), group, index, log=log)
    loc = _given_locations(locations, flat, group=group, fence=fence, estimator=estimator, history=fence_history)
    return stats_of_runs(loc, group, index, log=log,
                         outlying_z=outlying_z, run_scale=run_scale, outlying_side=outlying_side)


def version_stats_many(histories: Sequence[Sequence[Sequence[np.ndarray]]], *, fence: float = 10.0,
                       estimators: Sequence[str] | None = None, logs: Sequence[bool] | None = None,
                       outlying_z: float | None = None, run_scales: Sequence[float | None] | None = None,
                       fence_histories: Sequence[tuple[float, float] | None] | None = None,
                       outlying_sides: Sequence[str] | None = None) -> list[VersionStats]:
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

    Returns
    -------
    list of VersionStats
        One per history, in order.
    """
    _check_fence(fence)
    n = len(histories)
    estimators = list(estimators) if estimators is not None else ["mean"] * n
    logs = list(logs) if logs is not None else [False] * n
    scales = list(run_scales) if run_scales is not None else [None] * n
    refs = list(fence_histories) if fence_histories is not None else [None] * n
    sides = list(outlying_sides) if outlying_sides is not None else ["both"] * n
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
            flat, group, index = _flatten(histories[h])
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
                                       run_scale=scales[h], fence_history=refs[h], outlying_side=sides[h])
            continue
        values = run_locations(flats, group=np.concatenate(groups), fence=fence, estimator=name,
                               history=(np.concatenate(h_lo), np.concatenate(h_hi)))
        start = base = 0
        for h, g, index in zip(members, groups, indexes, strict=True):
            out[h] = stats_of_runs(values[start:start + g.size], g - base, index, log=logs[h],
                                   outlying_z=outlying_z, run_scale=scales[h], outlying_side=sides[h])
            start += g.size
            base += index.size
    return [vs for vs in out if vs is not None]


#: A run counts for a mode when at least this many of its samples, and this share of them, lie in
#: it (:func:`mode_stats`): a lone sample in a mode is a stray (an outlier short of the fences, the
#: tail of the next mode), and a run mean made of it moves by the stray's whole distance.
MODE_MIN_SAMPLES = 2
MODE_MIN_SHARE = 0.05


#: Versions over which the floor of :func:`fastest_level` is a running median (a version whose
#: runs all landed slow does not move it).
LEVEL_FLOOR_WINDOW = 5


def running_floor(values: np.ndarray, window: int) -> np.ndarray:
    """The running median of ``values`` over ``window`` (odd) neighbours; near the ends, where a
    window centred on a version would run past them, the median of the ``window`` values at that
    end (as Tukey's running medians treat their end points; the whole history's median when it
    is shorter than a window).

    Written out at the ends because scipy's filters pad them.  With copies of the end
    (``mode="nearest"``, used until 2026-11-29) the last version was three of the five values of
    its own window, so its floor was always its own fastest run, and a last version whose runs
    all landed at a slower level made that level its "fastest" and a false change; mirrored
    (``mode="mirror"``), the next-to-last version counted twice in its own window, and two slow
    versions next to an end did the same; a window shrunk to the values there are held only
    three values at an end, two of them slow when the last two versions were.  A whole window
    at the ends, like every window inside, needs three slow versions of five to move
    (docs/evaluation.md, "A history's ends").
    """
    from scipy.ndimage import median_filter

    values = np.asarray(values, dtype=float)
    n, half = values.size, window // 2
    if n <= window:
        return np.full(n, float(np.median(values)) if n else np.nan)
    out = median_filter(values, size=window, mode="nearest")
    out[:half] = np.median(values[:window])
    out[n - half:] = np.median(values[n - window:])
    return out

#: Histories shorter than this are not searched for levels: next to a step the running floor lags
#: by up to half its window, and in a short history those versions' runs are a large share of all
#: runs and look like a level of their own (the demo's 8 versions with two steps did).
LEVEL_MIN_VERSIONS = 4 * LEVEL_FLOOR_WINDOW

#: Two levels of run locations are told apart when Ashman's D between them exceeds this: the
#: separation of two normal components whose mixture is clearly bimodal (Ashman, Bird and Zeng
#: 1994), rather than one skewed spread cut in two.
LEVEL_SEPARATION = 2.0


@dataclass(frozen=True)
class FastestLevel:
    """The fastest of the levels that runs land at (:func:`fastest_level`).

    Attributes
    ----------
    stats : VersionStats
        Per version, the (logarithms of the) locations of its runs at the fastest level; versions
        where fewer than two runs landed there are left out.
    cut : float
        A run is at the fastest level when its location is at most ``exp(cut)`` times the floor.
    n_levels : int
        Levels found (2 or more).
    """

    stats: VersionStats
    cut: float
    n_levels: int


def fastest_level(runs: Sequence[Sequence[np.ndarray]], *, estimator: str = "mean", fence: float = 10.0,
                  outlying_z: float | None = None, rng=0, min_weight: float = 0.05,
                  locations: np.ndarray | None = None, outlying_side: str = "both") -> FastestLevel | None:
    """The runs that landed at the fastest of several levels, when runs land at levels.

    Random initial conditions (seed 000 s.2) can put a whole run at one of a few levels (a thread
    on a busy core, a memory layout), and the run means of a version then form clusters (seed 000
    s.4.1).  Each run's location is compared with the *floor* of its version (the fastest run's,
    as a running median over :data:`LEVEL_FLOOR_WINDOW` versions, so that the levels of versions
    at different speeds line up); the relative locations are clustered
    (:func:`regbench.stats.find_clusters`) when they look multimodal (Sarle's bimodality
    coefficient above 5/9), and the fastest cluster is a level of its own when Ashman's D to the
    next exceeds :data:`LEVEL_SEPARATION`.  The fastest level is the benchmark's own speed, the
    others are interference (the argument of Chen and Revels 2016 for the minimum, made at the
    level of runs).

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        ``runs[k]``: the samples of every run of version ``k``.
    estimator : str, keyword-only
        The location of a run (:func:`run_locations`).
    fence : float, keyword-only
        Outlier fence (:func:`robust_run_means`).
    outlying_z : float, optional, keyword-only
        Leave out outlying runs of the level (:func:`stats_of_runs`).
    outlying_side : str, keyword-only
        On which side of their version's median (:func:`burst_side`).
    rng : int or numpy.random.Generator, keyword-only
        For the clustering.
    min_weight : float, keyword-only
        Clusters holding fewer runs than this share are not levels.
    locations : numpy.ndarray, optional, keyword-only
        The runs' locations, already computed (:attr:`LocationChoice.run_values`).

    Returns
    -------
    FastestLevel or None
        None when the runs do not land at separate levels, the locations are not positive, or the
        history has fewer than :data:`LEVEL_MIN_VERSIONS` versions with runs.
    """
    from .clusters import find_clusters
    flat, group, index = _flatten(runs)
    if index.size < LEVEL_MIN_VERSIONS:
        return None
    loc = _given_locations(locations, flat, group=group, fence=fence, estimator=estimator)
    finite = np.isfinite(loc)
    if finite.sum() < 20 or not np.all(loc[finite] > 0):
        return None
    logs = np.where(finite, np.log(np.where(finite, loc, 1.0)), np.nan)
    lowest = np.full(index.size, np.inf)
    np.minimum.at(lowest, group, np.where(finite, logs, np.inf))
    if not np.all(np.isfinite(lowest)):
        return None
    floor = running_floor(lowest, LEVEL_FLOOR_WINDOW)
    rel = logs - floor[group]
    values = rel[finite]
    if not bimodality_coefficient(values) > 5 / 9:
        return None
    cl = find_clusters(values, rng=np.random.default_rng(rng))
    big = [j for j in range(cl.n_clusters) if cl.weights[j] >= min_weight]
    if len(big) < 2:
        return None
    fast, slow = values[cl.labels == big[0]], values[cl.labels == big[1]]
    if fast.size < 2 or slow.size < 2:
        return None
    separation = np.sqrt(2) * (slow.mean() - fast.mean()) / np.sqrt(fast.var(ddof=1) + slow.var(ddof=1))
    if not separation > LEVEL_SEPARATION:
        return None
    # A timer that rounds (or a history of rounded numbers) puts the runs' locations on a grid, and
    # runs of one level round to neighbouring ticks: two "levels" one tick apart, with no spread
    # inside each, which Ashman's D takes for perfectly separated.  Levels must lie more than one
    # tick apart (measured on a probe of rounded samples: levels found at the tick placed steps
    # two to four versions early, docs/evaluation.md).
    tick = _resolution(flat)
    if tick > 0 and slow.min() - fast.max() <= np.log1p(tick / float(np.exp(floor.min()))) * (1 + 1e-9):
        return None
    cut = float((fast.max() + slow.min()) / 2)
    at = finite & (rel <= cut)
    held = np.bincount(group[at], minlength=index.size)
    # As for modes (MODE_MIN_SAMPLES): a version counts only where two of its runs landed there.
    keep = at & (held[group] >= 2)
    stats = stats_of_runs(np.where(keep, loc, np.nan), group, index, log=True, outlying_z=outlying_z,
                          outlying_side=outlying_side)
    return FastestLevel(stats, cut, len(big))


def _resolution(flat: Sequence[np.ndarray]) -> float:
    """The smallest difference between two distinct samples: the tick of a timer that rounds (or
    of numbers stored rounded); next to nothing for samples that do not."""
    values = np.unique(np.concatenate([r for r in flat if r.size]))
    gaps = np.diff(values)
    gaps = gaps[gaps > 0]
    return float(gaps.min()) if gaps.size else 0.0


#: A run lies *wholly* in one mode when at least this share of its samples do (the rest allows for
#: outliers and left-over warm-up); see :func:`runs_in_one_mode`.
WHOLE_RUN_SHARE = 0.9


def runs_in_one_mode(runs: Sequence[Sequence[np.ndarray]], bounds: np.ndarray, *,
                     share: float = WHOLE_RUN_SHARE) -> float:
    """The share of runs whose samples lie (almost) all in one mode of ``bounds``.

    Two kinds of multimodal benchmark look alike in the pooled samples and differ here: modes
    *within* runs (cache hits and misses, seed 001 s.4.1: every run visits every mode, and a run's
    location in a mode comes from the few samples it has there), and modes *between* runs (a
    process lands at one of two levels, by memory layout or core placement, seed 000 s.2's random
    initial conditions, and stays there: each run's location in its mode comes from all its
    samples).  Only the second measures a mode's level as precisely as a unimodal benchmark's.

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        ``runs[k]``: the samples of every run of version ``k``.
    bounds : numpy.ndarray
        Mode boundaries ``[-inf, b_1, ..., inf]`` (:func:`regbench.detect.auto.mode_bounds`).
    share : float, keyword-only
        A run is in one mode when at least this share of its samples are.

    Returns
    -------
    float
        In [0, 1]; NaN without any sample.
    """
    counts, total = run_mode_counts(runs, bounds, share=share)
    return int(counts.sum()) / total if total else float("nan")


def run_mode_counts(runs: Sequence[Sequence[np.ndarray]], bounds: np.ndarray, *,
                    share: float = WHOLE_RUN_SHARE) -> tuple[np.ndarray, int]:
    """How many runs lie (almost) all in each mode of ``bounds``, and how many runs there are.

    A run is in a mode when at least ``share`` of its samples are (as :func:`runs_in_one_mode`
    counts them); a run spread over modes counts for none.

    Returns
    -------
    counts : numpy.ndarray of int
        One count per mode, ``len(bounds) - 1`` of them.
    total : int
        The runs with at least one sample.
    """
    per_version = version_mode_counts(runs, bounds, share=share)
    return per_version.sum(axis=0), sum(1 for version in runs for r in version if r.size)


def version_mode_counts(runs: Sequence[Sequence[np.ndarray]], bounds: np.ndarray, *,
                        share: float = WHOLE_RUN_SHARE) -> np.ndarray:
    """:func:`run_mode_counts` version by version: ``counts[k, j]``, the runs of version ``k``
    with at least ``share`` of their samples in mode ``j`` of ``bounds``."""
    inner = np.asarray(bounds, dtype=float)[1:-1]
    counts = np.zeros((len(runs), inner.size + 1), dtype=int)
    for k, version in enumerate(runs):
        for r in version:
            if r.size == 0:
                continue
            per_mode = np.bincount(np.searchsorted(inner, r), minlength=inner.size + 1)
            if per_mode.max() >= share * r.size:
                counts[k, int(np.argmax(per_mode))] += 1
    return counts


def mode_stats(runs: Sequence[Sequence[np.ndarray]], bounds: np.ndarray, *, fence: float = 10.0,
               log: bool = False, outlying_z: float | None = None,
               fence_history: tuple[float, float] | None = None) -> list[VersionStats]:
    """Per mode, the per-version summaries of each run's mean of its samples in that mode.

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        As for :func:`version_stats`.
    bounds : numpy.ndarray
        Boundaries between modes, ``[-inf, b_1, ..., inf]``; mode ``j`` holds the samples in
        ``(bounds[j], bounds[j + 1]]``.
    fence : float, keyword-only
        Samples outside the fences of :func:`robust_run_means` are left out first: far outliers
        would otherwise land in the slowest mode.
    log : bool, keyword-only
        Summarise the logarithms of the per-mode run means.
    outlying_z : float, optional, keyword-only
        Leave out outlying runs of each mode (:func:`outlying_runs`).
    fence_history : tuple of float, optional, keyword-only
        As for :func:`version_stats`.

    Returns
    -------
    list of VersionStats
        One per mode; a run with fewer than :data:`MODE_MIN_SAMPLES` samples (or
        :data:`MODE_MIN_SHARE` of its samples) in a mode does not count for it, and a version
        of two runs or more where only one run counts has no value for it.

    References
    ----------
    seed 001 s.4.2: complex (multimodal) benchmarks compared cluster by cluster.
    """
    flat, group, index = _flatten(runs)
    return [stats_of_runs(values, group, index, log=log, outlying_z=outlying_z)
            for values in _mode_run_means(flat, group, index, bounds, fence=fence, fence_history=fence_history)]


def mode_floors(runs: Sequence[Sequence[np.ndarray]], bounds: np.ndarray, *, fence: float = 10.0,
                log: bool = False, fence_history: tuple[float, float] | None = None) -> list[VersionStats]:
    """Per mode, each version's fastest run in it: the smallest of the run means of
    :func:`mode_stats`, one value a version (``n`` 1, ``var`` NaN).

    When runs land at levels (a process stays at one level) and a step of the whole benchmark
    has carried two levels into one mode's fixed boundaries, that mode's location is the mean of
    runs at both levels and moves with the share of runs at each, from version to version; its
    fastest run stays at the lower level.  A mode that really moved carries its fastest run
    with it.  So, as :func:`version_floors` does for the whole benchmark (Chen and Revels 2016),
    this separates a move of the mode from a change in the mix of levels inside it.
    """
    flat, group, index = _flatten(runs)
    out = []
    for values in _mode_run_means(flat, group, index, bounds, fence=fence, fence_history=fence_history):
        if log:
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)
        out.append(_version_minimum(values, group, index, log=log))
    return out


def _mode_run_means(flat: list[np.ndarray], group: np.ndarray, index: np.ndarray, bounds: np.ndarray, *,
                    fence: float, fence_history: tuple[float, float] | None) -> Iterator[np.ndarray]:
    """Per mode, each run's mean of its samples in it (NaN where it does not count: :func:`mode_stats`)."""
    f_lo, f_hi = fence_bounds(flat, group=group, fence=fence, history=fence_history)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        values = np.empty(len(flat))
        for i, (r, inside) in enumerate(zip(flat, _in_mode(flat, f_lo, f_hi, lo, hi), strict=True)):
            # A run too short to hold two samples in each of two modes (a command timed once or
            # twice a process, a CI history of one number a run) cannot tell a stray from a
            # visit: one sample counts, and strays are kept out by the version rule below (two
            # runs must hold the mode).
            enough = (max(MODE_MIN_SAMPLES, int(np.ceil(MODE_MIN_SHARE * r.size)))
                      if r.size >= 2 * MODE_MIN_SAMPLES else 1)
            values[i] = inside.mean() if inside.size >= enough else np.nan
        # A version of several runs where only one run holds the mode has no value for it: that
        # one run's samples there are strays, or the edge of a level that a step has moved across
        # the fixed boundary, and a version level from one run has no spread to judge it by.
        if group.size:
            held = np.bincount(group, weights=np.isfinite(values).astype(float), minlength=index.size)
            total = np.bincount(group, minlength=index.size)
            values[((held < 2) & (total >= 2))[group]] = np.nan
        yield values


def _in_mode(flat: Sequence[np.ndarray], f_lo: np.ndarray, f_hi: np.ndarray, lo: float, hi: float
             ) -> Iterator[np.ndarray]:
    """Each run's samples in the mode ``(lo, hi]`` that its fences (:func:`fence_bounds`) keep."""
    for r, a, b in zip(flat, f_lo, f_hi, strict=True):
        yield r[(r > lo) & (r <= hi) & (r >= a) & (r <= b)]


def mode_samples(runs: Sequence[Sequence[np.ndarray]], lo: float, hi: float, *, fence: float = 10.0,
                 log: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """Per version, the median and the number of all its samples in the mode ``(lo, hi]``, from
    every run however few it has there, and the spread of one sample.

    :func:`mode_stats` counts a run for a mode only when it has :data:`MODE_MIN_SAMPLES` there,
    so a mode's history skips the versions whose runs drew too few of its samples.  Where exactly
    a change found in that history lies among the skipped versions is told by the samples they do
    have there (:meth:`regbench.detect.auto.Auto`, ``_place_in_gap``): one sample says on which
    side of a step of several percent it lies, though not by how much.

    Parameters
    ----------
    runs : sequence of sequences of numpy.ndarray
        As for :func:`version_stats`.
    lo, hi : float
        The mode's boundaries (see :func:`mode_stats`).
    fence : float, keyword-only
        Samples outside the fences of :func:`robust_run_means` are left out first.
    log : bool, keyword-only
        Give the logarithm of each median.

    Returns
    -------
    median : numpy.ndarray
        One value per version of ``runs`` (NaN for a version without samples there).
    count : numpy.ndarray of int
        The number of samples it is the median of.
    scale : float
        The robust standard deviation of one sample about its version's median (1.4826 times the
        median absolute deviation, pooled over versions of two samples or more; NaN without any).
    """
    flat, group, index = _flatten(runs)
    out = np.full(len(runs), np.nan)
    count = np.zeros(len(runs), dtype=int)
    if not flat:
        return out, count, float("nan")
    f_lo, f_hi = fence_bounds(flat, group=group, fence=fence)
    pools: list[list[np.ndarray]] = [[] for _ in range(index.size)]
    for i, inside in enumerate(_in_mode(flat, f_lo, f_hi, lo, hi)):
        pools[group[i]].append(inside)
    deviations = []
    for g, parts in enumerate(pools):
        pooled = np.concatenate(parts) if parts else np.empty(0)
        if pooled.size and (not log or pooled.min() > 0):
            values = np.log(pooled) if log else pooled
            out[index[g]] = float(np.median(values))
            count[index[g]] = values.size
            if values.size >= 2:
                deviations.append(np.abs(values - out[index[g]]))
    scale = 1.4826 * float(np.median(np.concatenate(deviations))) if deviations else float("nan")
    return out, count, scale


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
    from scipy.special import stdtr  # Student's t CDF, without importing all of scipy.stats

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
    carried through ``exp(.) - 1``: exact, and always inside (-100%, +inf).  Otherwise the delta
    method, NaN unless both levels are positive (a ratio of levels of different or negative sign
    means nothing).  ``q`` is Student's quantile with ``df`` degrees of freedom (0 where ``df`` is
    not finite: a difference without noise).

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
            se = np.sqrt(np.asarray(var_right) / ml**2 + mr**2 * np.asarray(var_left) / ml**4)
            out = rel, np.where(ok, rel - q * se, np.nan), np.where(ok, rel + q * se, np.nan)
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
    if d.size > 1000:
        d = d[np.linspace(0, d.size - 1, 1000).round().astype(int)]
    total = qn_scale(d) ** 2 / 2
    multi = vs.n > 1
    df_w = float((vs.n[multi] - 1).sum())
    s2w = float(((vs.n[multi] - 1) * vs.var[multi]).sum() / df_w) if df_w > 0 else 0.0
    return max(0.0, total - s2w * float(np.mean(1.0 / vs.n))), max(1.0, 0.82 * (d.size - 1))


#: Qn's small-sample correction factors for 2 to 9 values (Croux and Rousseeuw 1992, table 1).
_QN_SMALL = {2: 0.399, 3: 0.994, 4: 0.512, 5: 0.844, 6: 0.611, 7: 0.857, 8: 0.669, 9: 0.872}


#: Sizes up to which Qn's pair indices are kept (8 sizes at most: 8 MB each at this size).
_PAIRS_KEPT = 1024


@functools.lru_cache(maxsize=8)
def _kept_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(n, 1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(n, 1)``, kept for histories of up to :data:`_PAIRS_KEPT` versions: one
    history's Qn is taken several times at the same size, and building the indices cost as much
    as the differences (cProfile, 500 versions); larger ones are not kept (memory)."""
    return _kept_pairs(n) if n <= _PAIRS_KEPT else np.triu_indices(n, 1)


def qn_scale(x: np.ndarray) -> float:
    """Rousseeuw and Croux's Qn estimator of scale: the first quartile of the pairwise absolute
    differences, consistent for the standard deviation of normal data.

    ``Qn = d_n * 2.2191 * {|x_i - x_j|; i < j}_(k)`` with ``k = C(h, 2)``, ``h = n // 2 + 1``, and
    ``d_n`` the small-sample correction (``n / (n + 1.4)`` for odd ``n`` above 9, ``n / (n +
    3.8)`` for even).  50% breakdown point and 82% efficiency under normality.  Written here
    (O(n^2) memory, meant for at most a few thousand values) because neither numpy nor scipy has
    it, and :mod:`regbench.stats` does not depend on statsmodels (whose ``qn_scale`` the tests
    use as the reference).

    References
    ----------
    Rousseeuw and Croux, "Alternatives to the median absolute deviation", JASA 88 (1993)
    1273-1283; Croux and Rousseeuw, "Time-efficient algorithms for two highly robust estimators
    of scale", Computational Statistics (1992).
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    if n < 2:
        return float("nan")
    i, j = _pairs(n)
    diffs = np.abs(x[i] - x[j])
    h = n // 2 + 1
    k = h * (h - 1) // 2
    q = float(np.partition(diffs, k - 1)[k - 1])
    factor = _QN_SMALL.get(n, n / (n + 1.4) if n % 2 else n / (n + 3.8))
    return factor * q / (np.sqrt(2.0) * 0.31863936396437514)  # 1 / (sqrt 2 * Phi^-1(5/8)) = 2.2191


def bimodality_coefficient(x: np.ndarray) -> float:
    """Sarle's bimodality coefficient; above 5/9 suggests more than one mode.

    From the bias-corrected sample skewness G1 and excess kurtosis G2 (the formulas of scipy's
    ``skew``/``kurtosis`` with ``bias=False``, which the tests use as the reference), written
    out because this screen runs on every history and scipy's wrappers cost more than the
    arithmetic.

    Parameters
    ----------
    x : numpy.ndarray
        One-dimensional sample.

    Returns
    -------
    float
        ``(G1**2 + 1) / (G2 + 3 (n - 1)**2 / ((n - 2)(n - 3)))``; 0 for fewer than 4 values or
        a constant sample.

    References
    ----------
    SAS/STAT User's Guide, PROC CLUSTER; Pfister et al., "Good things peak in pairs", Front.
    Psychol. 4 (2013) 700.  seed 001 s.4.2 for why modes matter.
    """
    n = x.size
    if n < 4:
        return 0.0
    d = x - x.mean()
    m2 = float(np.mean(d * d))
    if m2 == 0:
        return 0.0
    g1 = float(np.mean(d**3)) / m2**1.5
    g2 = float(np.mean(d**4)) / m2**2 - 3
    G1 = np.sqrt(n * (n - 1)) / (n - 2) * g1
    G2 = ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3))
    return float((G1**2 + 1) / (G2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))
