"""Runs reduced to one value each, and the versions they make: fences, locations, outlying runs.

Runs, not iterations, are the unit of replication (seed 000, 000_833974a369fcaf36.txt, s.2), so
every run is first reduced to one value (its mean, median or a low quantile, :func:`run_locations`,
chosen per history by :func:`choose_location`), after dropping the samples that are an order of
magnitude away from their version (seed 001, 001_0c28a3a14a5fab8a.txt, s.2.1: outliers "several
orders of magnitude" long).  Each version is then summarised by the mean, the variance and the
number of its run values (:class:`VersionStats`, :func:`stats_of_runs`); runs far from the others
of their version are set aside (:func:`outlying_runs`).  The robust scale Qn
(:func:`qn_scale`) and Sarle's bimodality coefficient (:func:`bimodality_coefficient`) serve the
modules built on these: :mod:`.segments` (the two-level test of adjacent segments) and
:mod:`.levels` (the fastest level and the modes of a history).

References
----------
seed 000 (000_833974a369fcaf36.txt) s.2 (runs are the replicates).
seed 001 (001_0c28a3a14a5fab8a.txt) s.2.1 (outliers orders of magnitude away), s.4.2 (modes).
Chen and Revels, "Robust benchmarking in noisy environments", HPEC 2016 (the low end of a run's
samples where interference only adds time).
Rousseeuw and Croux, "Alternatives to the median absolute deviation", JASA 88 (1993) 1273-1283
(Qn); Croux and Rousseeuw, "Time-efficient algorithms for two highly robust estimators of scale",
Computational Statistics (1992) (its small-sample factors).
"""

from __future__ import annotations

import functools
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

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
    screen : (float, int, int) or None
        What the rule of :func:`outlying_runs` weighed over these runs, whether it left runs out
        or not: the robust spread, how many runs lay beyond the threshold, and how many runs there
        were (None when it was not asked, or given a saved scale).  An incremental pass keeps it
        to tell when new runs would change the rule's decision (:meth:`regbench.detect.auto.Auto.full_pass_needed`).
    """

    index: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    n: np.ndarray
    log: bool = False
    run_scale: float = float("nan")
    screen: tuple[float, int, int] | None = None



# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------

def check_fence(fence: float) -> None:
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
    check_fence(fence)
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
    check_fence(fence)
    bad = [c for c in candidates if c not in LOCATIONS]
    if bad or not candidates:
        raise ValueError(f"`candidates` must be some of {', '.join(LOCATIONS)}")
    flat, group, index = flatten_runs(runs)
    nonempty = [r for r in flat if r.size]
    positive = bool(nonempty) and float(np.concatenate(nonempty).min()) > 0
    skew = _median_skew(nonempty)
    per_version = np.bincount(group, minlength=index.size) if group.size else np.zeros(0, dtype=int)
    sizes = [r.size for r in nonempty]
    if not sizes or (per_version >= 2).sum() < 1 or min(sizes) < MIN_SAMPLES_FOR_QUANTILES:
        return LocationChoice("mean", positive, {}, skew,
                              "the mean of each run: too few runs or samples to compare locations")
    if "mean" in candidates and _quantized(nonempty):
        # A quantile of a run is then one of a few values (a coarse clock's ticks: "2, 2, 1, 2,
        # 3, 2, ..."): most runs of a version give the same tick, so its run-to-run spread looks
        # nearly 0, until a run's quantile jumps by a whole tick, which that spread calls
        # certain.  The mean averages the rounding away (a probe: 200 flat versions of 5 runs x
        # 10 whole-millisecond samples had a false -20% and its revert on run medians).
        return LocationChoice("mean", positive, {}, skew,
                              "the mean of each run: the samples sit on a few values (a coarse clock), where a "
                              "quantile jumps by whole steps")
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


#: A run's samples are *quantized* when at most this share of its samples above its smallest
#: are distinct values.
QUANTIZED_DISTINCT_SHARE = 0.5
#: Runs :func:`_quantized` looks at, at most (evenly spaced over the history).
QUANTIZED_RUNS_LOOKED_AT = 200


def _quantized(runs: Sequence[np.ndarray]) -> bool:
    """Whether the typical (median) run's samples above its smallest sit on a few values (at most
    :data:`QUANTIZED_DISTINCT_SHARE` of them distinct): continuous timings repeat no value, a
    coarse clock repeats a few.  The smallest value is left out because an exact floor repeats
    by itself (a count with occasional extra work, a time at the floor of its work with slower
    interference above it), and there a low quantile is the right location; it is the values
    above the floor that tell a clock's ticks from continuous delays."""
    # On every series' path: the typical run is told by an evenly spaced 200 of them, all at once
    # (sorted within runs, then counted per run: the samples above its smallest, and those that
    # start a new value).
    if len(runs) > QUANTIZED_RUNS_LOOKED_AT:
        runs = [runs[int(i)] for i in np.linspace(0, len(runs) - 1, QUANTIZED_RUNS_LOOKED_AT).round()]
    sizes = np.array([r.size for r in runs], dtype=np.int64)
    if not sizes.sum():
        return False
    values = np.concatenate([np.asarray(r, dtype=float) for r in runs])
    group = np.repeat(np.arange(sizes.size), sizes)
    finite = np.isfinite(values)
    values, group = values[finite], group[finite]
    if not values.size:
        return False
    order = np.lexsort((values, group))
    v, g = values[order], group[order]
    first = np.r_[True, g[1:] != g[:-1]]
    above = v > v[first][np.cumsum(first) - 1]
    new_value = above & (first | np.r_[True, v[1:] != v[:-1]])
    n_above = np.bincount(g, weights=above, minlength=sizes.size)
    n_distinct = np.bincount(g, weights=new_value, minlength=sizes.size)
    counted = n_above >= 2
    return bool(counted.any()) and float(np.median(n_distinct[counted] / n_above[counted])) <= QUANTIZED_DISTINCT_SHARE


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


def beyond_threshold(values: np.ndarray, group: np.ndarray, *, z: float, scale: float, side: str = "both") -> int:
    """How many runs lie more than ``z`` times ``scale`` from their version's median on ``side``
    (versions of three runs or more): what :func:`outlying_runs` counts against
    :data:`OUTLYING_RUN_SHARE`."""
    return int(_beyond(values, group, z=z, scale=scale, side=side).sum())


def screens(flagged: int, runs: int) -> bool:
    """Whether :func:`outlying_runs` leaves runs out when ``flagged`` of ``runs`` lie beyond its
    threshold: bursts are rare, more than :data:`OUTLYING_RUN_SHARE` of them are the noise."""
    return not flagged > OUTLYING_RUN_SHARE * max(runs, 1)


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
              side: str = "both") -> tuple[np.ndarray, float, tuple[float, int, int] | None]:
    """:func:`outlying_runs`, the scale it used (NaN when it leaves nothing out by rule), and
    what its rule weighed (:attr:`VersionStats.screen`: the spread, the runs beyond the
    threshold, the runs; None when there was no spread to weigh with)."""
    if side not in BURST_SIDES:
        raise ValueError(f"`side` must be one of {', '.join(BURST_SIDES)}, got {side!r}")
    out = np.zeros(values.size, dtype=bool)
    if not np.isfinite(z) or values.size == 0:
        return out, float("nan"), None
    check_share = scale is None
    if scale is None:
        scale = run_spread(values, group)
    if not (np.isfinite(scale) and scale > 0):
        return out, float("nan"), None
    out = _beyond(values, group, z=z, scale=scale, side=side)
    weighed = (float(scale), int(out.sum()), int(np.isfinite(values).sum()))
    if check_share and not screens(weighed[1], weighed[2]):
        return np.zeros(values.size, dtype=bool), float("nan"), weighed
    return out, float(scale), weighed


def _beyond(values: np.ndarray, group: np.ndarray, *, z: float, scale: float, side: str) -> np.ndarray:
    """The runs more than ``z * scale`` from their version's median on ``side`` (versions of three
    runs or more: only they can tell which of their runs is the odd one)."""
    out = np.zeros(values.size, dtype=bool)
    med, n = _version_medians(values, group)
    eligible = np.isfinite(values) & (n[group] >= 3)
    deviation = values[eligible] - med[eligible]
    if side == "above":
        out[eligible] = deviation > z * scale
    elif side == "below":
        out[eligible] = deviation < -z * scale
    else:
        out[eligible] = np.abs(deviation) > z * scale
    return out


def stats_of_runs(values: np.ndarray, group: np.ndarray, index: np.ndarray, *, log: bool = False,
                  outlying_z: float | None = None, run_scale: float | None = None,
                  outlying_side: str = "both", count_scale: float | None = None,
                  weigh: bool = False) -> VersionStats:
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
    count_scale : float, optional, keyword-only
        With a given ``run_scale`` (a few new versions of an incremental pass): the scale the
        whole history's rule was weighed with, to count these runs beyond its threshold
        (:attr:`VersionStats.screen`).
    weigh : bool, keyword-only
        Without ``run_scale`` (a whole history): keep what the rule weighed in
        :attr:`VersionStats.screen` (what a detector saves for its incremental passes; the other
        summaries of a search need not count it).

    Returns
    -------
    VersionStats
        Versions left without any value are dropped.
    """
    if log:
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)
    scale = float("nan")
    screen = None
    if outlying_z is not None and values.size:
        drop, scale, weighed = _outlying(values, group, z=outlying_z, scale=run_scale, side=outlying_side)
        # What the rule weighed, whether it left runs out or not (VersionStats.screen): as it
        # weighed a whole history, or these runs counted at the scale a whole history had.
        if run_scale is None and weigh:
            screen = weighed
        elif count_scale is not None and np.isfinite(outlying_z) and np.isfinite(count_scale) and count_scale > 0:
            screen = (float(count_scale), beyond_threshold(values, group, z=outlying_z, scale=count_scale,
                                                           side=outlying_side), int(np.isfinite(values).sum()))
        values = np.where(drop, np.nan, values)
    ok = np.isfinite(values)
    values, group = values[ok], group[ok]
    n = np.bincount(group, minlength=index.size)
    has = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=values, minlength=index.size) / n
        dev2 = np.bincount(group, weights=(values - mean[group]) ** 2, minlength=index.size)
        var = np.where(n > 1, dev2 / np.maximum(n - 1, 1), np.nan)
    return VersionStats(index[has], mean[has], var[has], n[has], log, scale, screen)


def flatten_runs(runs: Sequence[Sequence[np.ndarray]]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Runs of the versions that have any, each run's version (as a position in ``index``), and
    ``index``, the positions of those versions."""
    counts = np.array([len(r) for r in runs], dtype=int)
    index = np.flatnonzero(counts > 0)
    flat = [r for k in index for r in runs[k]]
    return flat, np.repeat(np.arange(index.size), counts[index]), index


def given_locations(locations: np.ndarray | None, flat: Sequence[np.ndarray], *, group: np.ndarray, fence: float,
                     estimator: str, history: tuple[float, float] | None = None) -> np.ndarray:
    """The runs' locations a caller already computed (:attr:`LocationChoice.run_values`, one per
    run of ``flat``), else :func:`run_locations` of ``flat``."""
    if locations is not None and np.shape(locations) == (len(flat),):
        return np.asarray(locations, dtype=float)
    return run_locations(flat, group=group, fence=fence, estimator=estimator, history=history)


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


def tie_safe_scale(x: np.ndarray) -> float:
    """:func:`qn_scale`, or where ties make it 0 while the values differ, the mean absolute
    deviation from the median scaled to the standard deviation of normal data (``sqrt(pi / 2)``).

    Qn is the first quartile of the pairwise differences, so it *implodes* to 0 as soon as a
    quarter of the pairs are tied, which values read from a coarse clock do (one sample a
    version, whole milliseconds, most of them the same tick: "2, 2, 1, 2, 3, 2, ..."); a scale of
    0 then makes every difference of one tick certain.  The mean absolute deviation does not
    implode while any value differs, costs robustness only against the few steps a history holds
    (linearly, not squared as the standard deviation would), and with Sheppard's argument carries
    the rounding's own variance.  Rousseeuw and Croux (1993, s.2) note the implosion of
    quantile-based scales on discrete data.
    """
    x = np.asarray(x, dtype=float)
    q = qn_scale(x)
    if not q == 0:
        return q
    return float(np.mean(np.abs(x - np.median(x))) * np.sqrt(np.pi / 2))


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
