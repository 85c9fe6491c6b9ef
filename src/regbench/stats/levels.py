"""The fastest level and the modes of a history: per-mode and fastest-run summaries of its versions.

A benchmark whose samples fall in several modes (cache hit or miss, a fast or a slow path) is
compared mode by mode (seed 001, 001_0c28a3a14a5fab8a.txt, s.4.2): :func:`mode_stats` summarises
each version's runs within one mode's bounds as :func:`.segments.version_stats` does for whole
runs, :func:`mode_floors` their low quantile, :func:`mode_samples` the samples themselves.
Where whole runs land at one of several levels (a fresh process draws its layout once, seed 000
s.2), :func:`runs_in_one_mode` and the counts of runs per mode say so, and :func:`fastest_level`
follows the versions' fastest runs against a running floor, which interference above the floor
does not move.

References
----------
seed 000 (000_833974a369fcaf36.txt) s.2 (random initial conditions of each run).
seed 001 (001_0c28a3a14a5fab8a.txt) s.4.2 (modes of complex benchmarks compared cluster by cluster).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .runs import (
    VersionStats,
    bimodality_coefficient,
    fence_bounds,
    flatten_runs,
    given_locations,
    stats_of_runs,
)
from .segments import version_minimum

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
    flat, group, index = flatten_runs(runs)
    if index.size < LEVEL_MIN_VERSIONS:
        return None
    loc = given_locations(locations, flat, group=group, fence=fence, estimator=estimator)
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
        Mode boundaries ``[-inf, b_1, ..., inf]`` (:func:`regbench.detect.modes.mode_bounds`).
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
    flat, group, index = flatten_runs(runs)
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
    flat, group, index = flatten_runs(runs)
    out = []
    for values in _mode_run_means(flat, group, index, bounds, fence=fence, fence_history=fence_history):
        if log:
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)
        out.append(version_minimum(values, group, index, log=log))
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
    have there (:func:`regbench.detect.modes.place_in_gap`): one sample says on which
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
    flat, group, index = flatten_runs(runs)
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


