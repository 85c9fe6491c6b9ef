"""Bootstrap confidence intervals, vectorized over resamples, runs and benchmarks.

Resampling happens at the level the data were replicated at.  Runs of one experiment differ by
their random initial conditions (seed 000 s.2), so an interval for a benchmark's result resamples
*runs* (:func:`resample_runs`), or runs and then iterations within them
(:func:`hierarchical_bootstrap`); resampling iterations as if they were independent
(:func:`bootstrap_ci` on the pooled iterations) gives intervals that are too narrow when runs
differ.  The tests show all three.

No function loops in Python over resamples: a statistic is applied to a ``(resamples, n)``
matrix at once (it must take an ``axis`` keyword, like :func:`numpy.mean`), and large problems
are cut into chunks of at most about four million values so that memory stays bounded.

Stability metrics (CV, RMAD, RCIW1-3) are those of seed 004 s.2, with its defaults: 99%
intervals from 10,000 bootstrap resamples.

References
----------
seed 004 (004_3e2b5449efcf85e0.txt), muOpTime: s.2 "Stability Metrics" and "Estimating
Confidence Intervals" (percentile and bootstrap-t intervals, 99%, 10,000 resamples).
seed 000 (000_833974a369fcaf36.txt): s.2 random initial conditions (runs are the unit of
replication); s.3.1 the mean of run means.
Efron and Tibshirani, *An Introduction to the Bootstrap* (1993), s.14.3 (BCa, eq. 14.15) and
s.12.5 (bootstrap-t); Davison and Hinkley, *Bootstrap Methods and their Application* (1997), s.3.8
(resampling hierarchical data).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special as _sp
from scipy import stats as _st

from ._validate import as_1d, check_confidence, check_positive_int, make_rng

#: Values materialised at once by one chunk (about 32 MB of float64, plus as many indices).
MAX_CHUNK_ELEMENTS = 1 << 22
#: Values of one gathered block a generic statistic is applied to (8 MB of float64).  A statistic
#: such as ``np.std`` makes temporaries the size of its input: at 32 MB and more, the C library
#: hands each one out as fresh pages from the kernel (glibc's largest threshold for reusing freed
#: memory is 32 MiB), and faulting them in took half the time of the generic bootstrap (2.2x
#: slower measured).  The blocks only split the evaluation: the resamples drawn, and so the
#: results, do not depend on it.
GATHER_ELEMENTS = 1 << 20

Statistic = Callable[..., np.ndarray]


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap confidence interval for one statistic.

    Attributes
    ----------
    estimate : float
        The statistic of the original data.
    ci_low, ci_high : float
        Two-sided confidence interval (NaN, with a :class:`RuntimeWarning`, when undefined).
    confidence_level : float
    method : str
        ``"percentile"`` or ``"BCa"``.
    n_resamples : int
    bootstrap_distribution : numpy.ndarray
        The statistic of every resample, in the order drawn.
    """

    estimate: float
    ci_low: float
    ci_high: float
    confidence_level: float
    method: str
    n_resamples: int
    bootstrap_distribution: np.ndarray

    @property
    def standard_error(self) -> float:
        """Standard deviation of the bootstrap distribution."""
        d = self.bootstrap_distribution
        return float(d.std(ddof=1)) if d.size > 1 else float("nan")

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low


@dataclass(frozen=True)
class BootstrapBatchResult:
    """Bootstrap confidence intervals for many benchmarks at once (:func:`bootstrap_many`).

    Attributes
    ----------
    estimate, ci_low, ci_high : numpy.ndarray
        One value per benchmark (row of the input).
    confidence_level : float
    method : str
    n_resamples : int
    bootstrap_distribution : numpy.ndarray or None
        ``(n_benchmarks, n_resamples)`` when asked for with ``keep_distribution=True``.
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    confidence_level: float
    method: str
    n_resamples: int
    bootstrap_distribution: np.ndarray | None


@dataclass(frozen=True)
class StabilityMetrics:
    """Relative variability of one benchmark's samples (seed 004 s.2); lower is more stable.

    Attributes
    ----------
    cv : float
        Coefficient of variation, ``sd / mean`` (``ddof=1``).
    rmad : float
        Relative median absolute deviation, ``MAD / median`` with the unscaled MAD (the median
        distance of the data from their median, as the paper defines it).
    rciw1 : float
        Width of the bootstrap percentile interval of the mean, divided by the mean.
    rciw2 : float
        Width of the bootstrap-t interval of the mean, divided by the mean.
    rciw3 : float
        Width of the bootstrap percentile interval of the median, divided by the median.
    mean, median : float
    n : int
        Number of samples.
    confidence_level : float
    n_resamples : int
    """

    cv: float
    rmad: float
    rciw1: float
    rciw2: float
    rciw3: float
    mean: float
    median: float
    n: int
    confidence_level: float
    n_resamples: int


@dataclass(frozen=True)
class StabilityMetricsBatch:
    """:class:`StabilityMetrics` of many benchmarks: every field but the last three is an array."""

    cv: np.ndarray
    rmad: np.ndarray
    rciw1: np.ndarray
    rciw2: np.ndarray
    rciw3: np.ndarray
    mean: np.ndarray
    median: np.ndarray
    n: int
    confidence_level: float
    n_resamples: int

    def __getitem__(self, i: int) -> StabilityMetrics:
        """The metrics of benchmark ``i``."""
        return StabilityMetrics(float(self.cv[i]), float(self.rmad[i]), float(self.rciw1[i]),
                                float(self.rciw2[i]), float(self.rciw3[i]), float(self.mean[i]),
                                float(self.median[i]), self.n, self.confidence_level,
                                self.n_resamples)

    def __len__(self) -> int:
        return int(self.cv.shape[0])


# --------------------------------------------------------------------------------------------
# Validation and shared machinery
# --------------------------------------------------------------------------------------------

def _check_common(statistic, confidence_level, n_resamples, method) -> str:
    if not callable(statistic):
        raise ValueError("`statistic` must be callable and accept an `axis` keyword")
    check_confidence(confidence_level)
    check_positive_int(n_resamples, "n_resamples")
    if not isinstance(method, str) or method.lower() not in ("percentile", "bca"):
        raise ValueError("`method` must be 'percentile' or 'BCa'")
    return "BCa" if method.lower() == "bca" else "percentile"


def _as_2d(samples, name: str) -> np.ndarray:
    a = np.asarray(samples, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"`{name}` must be two-dimensional (benchmarks x samples)")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"`{name}` must contain only finite numbers")
    return a


def _as_runs(runs, name: str = "runs") -> list[np.ndarray]:
    msg = f"`{name}` must be a sequence of one-dimensional arrays"
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence | np.ndarray):
        raise ValueError(msg)
    arrays = [np.asarray(r, dtype=float) for r in runs]
    if any(a.ndim != 1 for a in arrays):
        raise ValueError(msg)
    out = [as_1d(a, name) for a in arrays]
    if any(r.size == 0 for r in out):
        raise ValueError(f"`{name}` must not contain an empty run")
    return out


def _chunk_sizes(total: int, per_item: int, limit: int | None = None):
    """Yield ``(start, stop)`` chunks of ``total`` items of ``per_item`` values each, at most
    ``limit`` values a chunk (one item at least; default :data:`MAX_CHUNK_ELEMENTS`)."""
    step = max(1, (MAX_CHUNK_ELEMENTS if limit is None else limit) // max(per_item, 1))
    for start in range(0, total, step):
        yield start, min(start + step, total)


def _replayable(gen: np.random.Generator, state: Mapping[str, Any]) -> np.random.Generator:
    """A generator that replays ``gen``'s stream from ``state`` (``gen`` itself is untouched)."""
    g = np.random.Generator(type(gen.bit_generator)())
    g.bit_generator.state = state
    return g


def _bca_levels(theta_hat: np.ndarray, theta_b: np.ndarray, jack: np.ndarray, alpha: float):
    """BCa quantile levels (Efron and Tibshirani s.14.3, eq. 14.15), row-wise.

    ``theta_hat`` (k,), ``theta_b`` (k, B), ``jack`` (k, n): jackknife values.  Returns the two
    levels (k,) each, NaN where BCa is undefined.
    """
    below = np.count_nonzero(theta_b < theta_hat[:, None], axis=1)
    below_eq = np.count_nonzero(theta_b <= theta_hat[:, None], axis=1)
    # The "mean" percentile of score, as scipy.stats.bootstrap computes it: ties count half.
    z0 = _sp.ndtri((below + below_eq) / (2.0 * theta_b.shape[1]))
    u = jack.mean(axis=1, keepdims=True) - jack
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = (u**3).sum(axis=1) / (6.0 * ((u**2).sum(axis=1)) ** 1.5)
        z_lo, z_hi = _sp.ndtri(alpha), -_sp.ndtri(alpha)
        lo = _sp.ndtr(z0 + (z0 + z_lo) / (1 - acc * (z0 + z_lo)))
        hi = _sp.ndtr(z0 + (z0 + z_hi) / (1 - acc * (z0 + z_hi)))
    return lo, hi


def _row_quantiles(sorted_rows: np.ndarray, q: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Linear-interpolation quantiles (numpy's default) at a different level per row.

    ``sorted_rows`` (k, B) sorted along axis 1 (NaN last, as :func:`numpy.sort` puts them);
    ``q`` (k,) in [0, 1] or NaN; ``valid`` (k,) the number of non-NaN values per row (all B by
    default).  Rows without a valid value or level give NaN.
    """
    k, b = sorted_rows.shape
    valid = np.full(k, b) if valid is None else valid
    out = np.full(k, np.nan)
    ok = np.isfinite(q) & (valid > 0)
    h = (valid[ok] - 1) * q[ok]
    lo = np.floor(h).astype(np.intp)
    hi = np.minimum(lo + 1, valid[ok] - 1)
    rows = np.flatnonzero(ok)
    a, c = sorted_rows[rows, lo], sorted_rows[rows, hi]
    out[ok] = a + (h - lo) * (c - a)
    return out


def _jackknife(x: np.ndarray, statistic: Statistic) -> np.ndarray:
    """Leave-one-out values of ``statistic`` for each row of ``x`` (k, n) -> (k, n)."""
    k, n = x.shape
    if statistic is np.mean:
        return (x.sum(axis=1, keepdims=True) - x) / (n - 1)
    if statistic is np.median:
        # Leaving out sorted element i shifts the order statistics at or above i by one.
        s = np.sort(x, axis=1)
        i = np.arange(n)
        k1, k2 = (n - 2) // 2, (n - 1) // 2
        return 0.5 * (s[:, k1 + (k1 >= i)] + s[:, k2 + (k2 >= i)])
    out = np.empty((k, n))
    keep = ~np.eye(n, dtype=bool)
    loo = np.broadcast_to(np.arange(n), (n, n))[keep].reshape(n, n - 1)
    for r0, r1 in _chunk_sizes(k, n * (n - 1)):
        for j0, j1 in _chunk_sizes(n, (r1 - r0) * (n - 1)):
            out[r0:r1, j0:j1] = statistic(x[r0:r1][:, loo[j0:j1]], axis=-1)
    return out


def _interval(theta_hat: np.ndarray, theta_b: np.ndarray, jack: Callable[[], np.ndarray],
              confidence_level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa interval for each row of ``theta_b`` (k, B)."""
    alpha = (1 - confidence_level) / 2
    if method == "percentile":
        q_lo, q_hi = np.full(theta_b.shape[0], alpha), np.full(theta_b.shape[0], 1 - alpha)
    else:
        q_lo, q_hi = _bca_levels(theta_hat, theta_b, jack(), alpha)
    # A full (SIMD) sort of each row is about 3x faster than np.quantile's partition here.
    s = np.sort(theta_b, axis=1)
    return _row_quantiles(s, q_lo), _row_quantiles(s, q_hi)


def _warn_undefined(n_bad: int, n_total: int, what: str, stacklevel: int = 3) -> None:
    if n_bad:
        where = "" if n_total == 1 else f" for {n_bad} of {n_total} benchmarks"
        warnings.warn(f"{what} is undefined{where} (degenerate data: too few or identical "
                      "values); its interval is NaN", RuntimeWarning, stacklevel=stacklevel)


# --------------------------------------------------------------------------------------------
# One sample
# --------------------------------------------------------------------------------------------

def _bootstrap_1d(x: np.ndarray, statistic: Statistic, confidence_level: float, n_resamples: int,
                  method: str, gen: np.random.Generator) -> BootstrapResult:
    n = x.size
    estimate = float(statistic(x, axis=-1))
    nan = float("nan")
    if n < 2:
        warnings.warn("a bootstrap interval needs at least two values; the interval is NaN",
                      RuntimeWarning, stacklevel=3)
        return BootstrapResult(estimate, nan, nan, confidence_level, method, n_resamples, np.empty(0))
    theta_b = np.empty(n_resamples)
    for b0, b1 in _chunk_sizes(n_resamples, n):
        idx = gen.integers(0, n, (b1 - b0, n))
        theta_b[b0:b1] = statistic(np.take(x, idx), axis=-1)
    lo, hi = _interval(np.array([estimate]), theta_b[None, :],
                       lambda: _jackknife(x[None, :], statistic), confidence_level, method)
    ci_low, ci_high = float(lo[0]), float(hi[0])
    _warn_undefined(int(not (np.isfinite(ci_low) and np.isfinite(ci_high))), 1, f"the {method} interval", 4)
    return BootstrapResult(estimate, ci_low, ci_high, confidence_level, method, n_resamples, theta_b)


def bootstrap_ci(sample, statistic: Statistic = np.mean, *, confidence_level: float = 0.99,
                 n_resamples: int = 10_000, method: str = "percentile", rng=None) -> BootstrapResult:
    """Bootstrap confidence interval of a statistic of one sample.

    Resamples the values with replacement ``n_resamples`` times.  The statistic is applied to a
    ``(resamples, n)`` matrix at once, in chunks of bounded size.  With the same ``rng`` seed it
    draws the same resamples as :func:`scipy.stats.bootstrap` and gives the same interval.

    Parameters
    ----------
    sample : array_like, 1-D
        Finite values, e.g. the samples of one run or the run means of one experiment.
    statistic : callable, optional
        ``statistic(x, axis=-1)``: must reduce along ``axis`` (``np.mean``, ``np.median``, ...)
        and be a symmetric function of the values.  ``np.mean`` and ``np.median`` have exact fast
        jackknifes for BCa; any other statistic costs ``n**2`` evaluations for BCa.
    confidence_level : float, keyword-only
        Two-sided level; 0.99 by default, as in seed 004 s.2.
    n_resamples : int, keyword-only
        10,000 by default (seed 004 s.2).
    method : {"percentile", "BCa"}, keyword-only
        Percentile interval, or bias-corrected and accelerated (acceleration from the jackknife).
    rng : int, numpy.random.Generator or None, keyword-only

    Returns
    -------
    BootstrapResult
        With a NaN interval and a :class:`RuntimeWarning` for fewer than two values, or for BCa
        when it is undefined (e.g. identical values).

    Raises
    ------
    ValueError
        For a sample that is not 1-D or not finite, or an invalid option.

    References
    ----------
    seed 004 (004_3e2b5449efcf85e0.txt) s.2 "Estimating Confidence Intervals"; Efron and
    Tibshirani (1993) s.13.3 (percentile) and s.14.3 (BCa).
    """
    method = _check_common(statistic, confidence_level, n_resamples, method)
    x = as_1d(sample, "sample")
    if x.size == 0:
        raise ValueError("`sample` must not be empty")
    return _bootstrap_1d(x, statistic, confidence_level, n_resamples, method, make_rng(rng))


# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------

def resample_runs(runs, statistic: Statistic = np.mean, *, run_statistic: Statistic = np.mean,
                  confidence_level: float = 0.99, n_resamples: int = 10_000,
                  method: str = "percentile", rng=None) -> BootstrapResult:
    """Bootstrap interval that resamples whole runs (the unit of replication).

    Each run is summarised once by ``run_statistic`` (its mean by default); resamples draw runs
    with replacement and apply ``statistic`` to their summaries, so by default the interval is
    that of the mean of run means (seed 000 s.3.1).  Iterations of one run share the run's
    initial conditions (seed 000 s.2) and are not resampled separately.

    Parameters
    ----------
    runs : sequence of 1-D arrays
        The measured samples of each run (warm-up removed); lengths may differ.
    statistic : callable, optional
        Applied across run summaries with an ``axis`` keyword.
    run_statistic : callable, keyword-only
        Summary of one run (``np.median`` for a robust run result, seed 001 s.3.1).
    confidence_level, n_resamples, method, rng
        As in :func:`bootstrap_ci`.

    Returns
    -------
    BootstrapResult
        NaN interval with a :class:`RuntimeWarning` for fewer than two runs.

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.2 and s.3.1; Davison and Hinkley (1997) s.3.8.
    """
    method = _check_common(statistic, confidence_level, n_resamples, method)
    if not callable(run_statistic):
        raise ValueError("`run_statistic` must be callable")
    arrays = _as_runs(runs)
    if not arrays:
        raise ValueError("`runs` must contain at least one run")
    summaries = np.array([float(run_statistic(r)) for r in arrays])
    return _bootstrap_1d(summaries, statistic, confidence_level, n_resamples, method, make_rng(rng))


def hierarchical_bootstrap(runs, statistic: Statistic = np.mean, *, confidence_level: float = 0.99,
                           n_resamples: int = 10_000, method: str = "percentile",
                           rng=None) -> BootstrapResult:
    """Two-level bootstrap: resample runs, then iterations within each resampled run.

    Each resample draws ``m`` runs with replacement and, for each drawn run of length ``k``,
    ``k`` of its iterations with replacement; the resampled run means are then reduced by
    ``statistic`` (the mean of run means by default).  All resamples of a chunk are drawn at once
    by index arithmetic on the concatenated runs (run offsets plus uniform positions below each
    run's length) and summed per run with one :func:`numpy.add.reduceat`.

    Resampling both levels counts the within-run noise twice (once inside the run means, once
    by the inner resampling), so the interval is somewhat conservative, more so with short runs
    (Davison and Hinkley 1997, s.3.8); :func:`resample_runs` is the tighter choice when the
    runs themselves are the replicates.  The BCa acceleration comes from the jackknife over runs.

    Parameters
    ----------
    runs : sequence of 1-D arrays
        The measured samples of each run; lengths may differ.
    statistic : callable, optional
        Reduces the ``(resamples, m)`` matrix of resampled run means along ``axis``.
    confidence_level, n_resamples, method, rng
        As in :func:`bootstrap_ci`.

    Returns
    -------
    BootstrapResult

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.2 and s.3.1; Davison and Hinkley (1997) s.3.8.
    """
    method = _check_common(statistic, confidence_level, n_resamples, method)
    arrays = _as_runs(runs)
    m = len(arrays)
    if m == 0:
        raise ValueError("`runs` must contain at least one run")
    gen = make_rng(rng)
    lengths = np.array([r.size for r in arrays])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    # Centred per run so the sums below lose no precision on large, nearly equal timings.
    run_means = np.array([r.mean() for r in arrays])
    values = np.concatenate([r - c for r, c in zip(arrays, run_means)])
    estimate = float(statistic(run_means, axis=-1))
    nan = float("nan")
    if m < 2:
        warnings.warn("a bootstrap interval over runs needs at least two runs; the interval is NaN",
                      RuntimeWarning, stacklevel=2)
        return BootstrapResult(estimate, nan, nan, confidence_level, method, n_resamples, np.empty(0))
    theta_b = np.empty(n_resamples)
    per_resample = int(lengths.max()) * m  # the most a resample can draw
    for b0, b1 in _chunk_sizes(n_resamples, per_resample):
        picked = gen.integers(0, m, (b1 - b0, m)).ravel()       # runs, per resample
        sizes = lengths[picked]
        run_of_draw = np.repeat(picked, sizes)
        draws = starts[run_of_draw] + gen.integers(0, lengths[run_of_draw])
        seg = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        means = np.add.reduceat(values[draws], seg) / sizes + run_means[picked]
        theta_b[b0:b1] = statistic(means.reshape(b1 - b0, m), axis=-1)
    lo, hi = _interval(np.array([estimate]), theta_b[None, :],
                       lambda: _jackknife(run_means[None, :], statistic), confidence_level, method)
    ci_low, ci_high = float(lo[0]), float(hi[0])
    _warn_undefined(int(not (np.isfinite(ci_low) and np.isfinite(ci_high))), 1, f"the {method} interval")
    return BootstrapResult(estimate, ci_low, ci_high, confidence_level, method, n_resamples, theta_b)


# --------------------------------------------------------------------------------------------
# Many benchmarks at once
# --------------------------------------------------------------------------------------------

def _count_matrix(idx: np.ndarray, n: int) -> np.ndarray:
    """Resampling counts (b, n) from resampled positions (b, n)."""
    b = idx.shape[0]
    flat = (idx + n * np.arange(b)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n)


def _median_positions(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in the sorted sample of the two middle order statistics of each resample.

    The ``k``-th order statistic (0-based) of a resample is the sorted value at the first
    position whose cumulative count exceeds ``k``.
    """
    n = counts.shape[1]
    cum = np.cumsum(counts, axis=1)
    k1, k2 = (n - 1) // 2, n // 2
    return (cum <= k1).sum(axis=1), (cum <= k2).sum(axis=1)


def _many_chunk(xs: np.ndarray, centre: np.ndarray, idx: np.ndarray, statistic: Statistic,
                pool: ThreadPoolExecutor | None) -> np.ndarray:
    """Bootstrap statistic of rows ``xs`` (r, n, sorted) for resampled positions ``idx`` (b, n)."""
    n = xs.shape[1]
    if statistic is np.mean:
        # All rows share the resamples, so their means are one matrix product with the counts.
        return (xs - centre[:, None]) @ _count_matrix(idx, n).T.astype(float) / n + centre[:, None]
    if statistic is np.median:
        p1, p2 = _median_positions(_count_matrix(idx, n))
        return 0.5 * (xs[:, p1] + xs[:, p2])
    out = np.empty((xs.shape[0], idx.shape[0]))

    def block(bounds: tuple[int, int]) -> None:
        b0, b1 = bounds
        # np.take gathers about twice as fast as the equivalent xs[:, idx] indexing.
        out[:, b0:b1] = statistic(np.take(xs, idx[b0:b1], axis=1), axis=-1)

    chunks = list(_chunk_sizes(idx.shape[0], xs.shape[0] * n, min(GATHER_ELEMENTS, MAX_CHUNK_ELEMENTS)))
    if pool is None:
        for bounds in chunks:
            block(bounds)
    else:
        list(pool.map(block, chunks))  # list(): re-raise a worker's exception here
    return out


def bootstrap_many(samples_2d, statistic: Statistic = np.mean, *, confidence_level: float = 0.99,
                   n_resamples: int = 10_000, method: str = "percentile", rng=None,
                   keep_distribution: bool = False, workers: int = 1) -> BootstrapBatchResult:
    """Bootstrap intervals for many benchmarks (rows) at once, in bounded memory.

    Every row is sorted and all rows share one stream of resampled *positions* (common random
    numbers, as :func:`~regbench.stats.resampled_run_stats` does): row ``i`` gets the interval
    ``bootstrap_ci(np.sort(samples_2d[i]), statistic, rng=<same seed>)`` gives (to rounding).
    Each row's interval is a full bootstrap of that row; only the resampling noise is shared
    between rows.  Sharing makes the common statistics cheap: for ``np.mean`` the resampled means
    of all rows are one matrix product with the resampling counts, and for ``np.median`` the
    resampled middle order statistics are found once from cumulative counts over sorted
    positions.  Other statistics are applied to gathered ``(rows, resamples, n)`` blocks of at
    most :data:`MAX_CHUNK_ELEMENTS` values.

    Parameters
    ----------
    samples_2d : array_like, shape (n_benchmarks, n_samples)
        Finite values; one benchmark per row.
    statistic : callable, optional
        As in :func:`bootstrap_ci`.
    confidence_level, n_resamples, method, rng
        As in :func:`bootstrap_ci`.
    keep_distribution : bool, keyword-only
        Keep the ``(n_benchmarks, n_resamples)`` bootstrap distribution (80 MB for 1,000
        benchmarks x 10,000 resamples); by default only the intervals are returned and memory
        stays bounded by the chunk size.
    workers : int, keyword-only
        Threads that evaluate a generic ``statistic`` on gathered blocks (numpy releases the GIL
        while gathering and reducing; 2 threads run 1.75x faster on 2 cores).  Each thread holds
        one block, so memory grows with ``workers``.  The statistic must then be thread-safe
        (numpy functions are).  Results do not depend on ``workers``.  ``np.mean`` and
        ``np.median`` ignore it: they never gather.

    Returns
    -------
    BootstrapBatchResult
        NaN intervals, with one :class:`RuntimeWarning`, where undefined.

    References
    ----------
    seed 004 (004_3e2b5449efcf85e0.txt) s.2 (99% intervals from 10,000 resamples for every
    microbenchmark of a suite).
    """
    method = _check_common(statistic, confidence_level, n_resamples, method)
    check_positive_int(workers, "workers")
    x = _as_2d(samples_2d, "samples_2d")
    k, n = x.shape
    if n == 0:
        raise ValueError("`samples_2d` must have at least one sample per benchmark")
    gen = make_rng(rng)
    xs = np.sort(x, axis=1)
    estimate = np.asarray(statistic(xs, axis=-1), dtype=float)
    ci_low = np.full(k, np.nan)
    ci_high = np.full(k, np.nan)
    dist = np.empty((k, n_resamples)) if keep_distribution else None
    if n < 2:
        warnings.warn("a bootstrap interval needs at least two values; the intervals are NaN",
                      RuntimeWarning, stacklevel=2)
        return BootstrapBatchResult(estimate, ci_low, ci_high, confidence_level, method, n_resamples,
                                    np.empty((k, 0)) if keep_distribution else None)
    start = gen.bit_generator.state
    g = gen
    resample_step = max(1, MAX_CHUNK_ELEMENTS // n)
    fast = statistic is np.mean or statistic is np.median
    pool = ThreadPoolExecutor(workers) if workers > 1 and not fast else None
    try:
        for r0, r1 in _chunk_sizes(k, n_resamples):
            g = _replayable(gen, start)     # every row chunk replays the same resamples
            rows = xs[r0:r1]
            centre = rows.mean(axis=1)
            theta_b = np.empty((r1 - r0, n_resamples))
            for b0 in range(0, n_resamples, resample_step):
                b1 = min(b0 + resample_step, n_resamples)
                idx = g.integers(0, n, (b1 - b0, n))
                theta_b[:, b0:b1] = _many_chunk(rows, centre, idx, statistic, pool)
            lo, hi = _interval(estimate[r0:r1], theta_b, lambda: _jackknife(rows, statistic),
                               confidence_level, method)
            ci_low[r0:r1], ci_high[r0:r1] = lo, hi
            if dist is not None:
                dist[r0:r1] = theta_b
    finally:
        if pool is not None:
            pool.shutdown()
    gen.bit_generator.state = g.bit_generator.state  # the caller's generator moves on as if once
    _warn_undefined(int(np.count_nonzero(~(np.isfinite(ci_low) & np.isfinite(ci_high)))), k,
                    f"the {method} interval")
    return BootstrapBatchResult(estimate, ci_low, ci_high, confidence_level, method, n_resamples, dist)


# --------------------------------------------------------------------------------------------
# Stability metrics (seed 004 s.2)
# --------------------------------------------------------------------------------------------

def _stability(xs: np.ndarray, confidence_level: float, n_resamples: int,
               gen: np.random.Generator) -> StabilityMetricsBatch:
    """All five metrics for the sorted rows ``xs`` (k, n), one set of shared resamples."""
    k, n = xs.shape
    alpha = (1 - confidence_level) / 2
    mean = xs.mean(axis=1)
    median = np.median(xs, axis=1)
    sd = xs.std(axis=1, ddof=1) if n > 1 else np.full(k, np.nan)
    mad = _st.median_abs_deviation(xs, axis=1, scale=1.0)
    nan = np.full(k, np.nan)
    if n < 2:
        warnings.warn("stability metrics need at least two samples; they are NaN",
                      RuntimeWarning, stacklevel=3)
        return StabilityMetricsBatch(nan, nan, nan, nan, nan, mean, median, n, confidence_level,
                                     n_resamples)
    start = gen.bit_generator.state
    g = gen
    rciw1, rciw2, rciw3 = nan.copy(), nan.copy(), nan.copy()
    resample_step = max(1, MAX_CHUNK_ELEMENTS // n)
    for r0, r1 in _chunk_sizes(k, 3 * n_resamples):
        g = _replayable(gen, start)
        rows = xs[r0:r1]
        c = mean[r0:r1, None]
        xc, xc2 = rows - c, (rows - c) ** 2
        r = r1 - r0
        m_b, t_b, med_b = np.empty((r, n_resamples)), np.empty((r, n_resamples)), np.empty((r, n_resamples))
        for b0 in range(0, n_resamples, resample_step):
            b1 = min(b0 + resample_step, n_resamples)
            counts = _count_matrix(g.integers(0, n, (b1 - b0, n)), n)
            cf = counts.T.astype(float)
            s1 = xc @ cf / n                       # resampled mean - sample mean
            var = np.maximum(xc2 @ cf / n - s1 * s1, 0.0) * (n / (n - 1))
            m_b[:, b0:b1] = s1 + c
            with np.errstate(divide="ignore", invalid="ignore"):
                # Studentised resampled means; a resample of identical values has no t (NaN).
                t = s1 / np.sqrt(var / n)
            # (``var`` of identical values can come out a rounding error above 0.)
            t[var <= 1e-12 * sd[r0:r1, None] ** 2] = np.nan
            t_b[:, b0:b1] = t
            p1, p2 = _median_positions(counts)
            med_b[:, b0:b1] = 0.5 * (rows[:, p1] + rows[:, p2])
        q_lo, q_hi = np.full(r, alpha), np.full(r, 1 - alpha)
        m_b.sort(axis=1)
        med_b.sort(axis=1)
        t_valid = np.count_nonzero(~np.isnan(t_b), axis=1)
        t_b.sort(axis=1)
        lo, hi = _row_quantiles(m_b, q_lo), _row_quantiles(m_b, q_hi)
        mlo, mhi = _row_quantiles(med_b, q_lo), _row_quantiles(med_b, q_hi)
        # Resamples without a t (identical values) are left out, as np.nanquantile would.
        tlo, thi = _row_quantiles(t_b, q_lo, t_valid), _row_quantiles(t_b, q_hi, t_valid)
        se = sd[r0:r1] / np.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            rciw1[r0:r1] = (hi - lo) / np.abs(mean[r0:r1])
            # Bootstrap-t interval: [mean - t_hi se, mean - t_lo se] (Efron and Tibshirani s.12.5).
            rciw2[r0:r1] = se * (thi - tlo) / np.abs(mean[r0:r1])
            rciw3[r0:r1] = (mhi - mlo) / np.abs(median[r0:r1])
    gen.bit_generator.state = g.bit_generator.state
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = sd / np.abs(mean)
        rmad = mad / np.abs(median)
    metrics = (cv, rmad, rciw1, rciw2, rciw3)
    # A row of identical values (a count exactly 0 in every iteration, as Go's allocs/op of an
    # allocation-free loop; a constant B/op) has no spread: every interval of it has no width,
    # the bootstrap-t's too (its t is undefined, but it multiplies a standard error of 0), and
    # 0 relative to any location, 0 included, is 0.  Such a benchmark is perfectly stable;
    # calling it undefined made `regbench optimize` keep it at its full configuration.
    constant = xs[:, 0] == xs[:, -1]  # the rows are sorted
    for a in metrics:
        a[constant] = 0.0
    bad = ~np.isfinite(np.vstack(metrics)).all(axis=0)
    if np.any(bad):
        where = "" if k == 1 else f" for {int(bad.sum())} of {k} benchmarks"
        warnings.warn(f"some stability metrics are undefined{where} (zero mean or median); they are NaN",
                      RuntimeWarning,
                      stacklevel=3)
        for a in metrics:
            a[~np.isfinite(a)] = np.nan
    return StabilityMetricsBatch(cv, rmad, rciw1, rciw2, rciw3, mean, median, n, confidence_level,
                                 n_resamples)


def stability_metrics(sample, *, confidence_level: float = 0.99, n_resamples: int = 10_000,
                      rng=None) -> StabilityMetrics:
    """The five stability metrics of seed 004 s.2 for one benchmark's samples.

    CV and RMAD are closed-form; RCIW1 (mean, percentile interval), RCIW2 (mean, bootstrap-t
    interval, the standard error of each resample from its own standard deviation) and RCIW3
    (median, percentile interval) share one set of resamples.  Widths are divided by the absolute
    mean or median, so metrics are non-negative; lower means more stable.

    Parameters
    ----------
    sample : array_like, 1-D
        Finite values of one benchmark (e.g. all its iterations, or its run means).
    confidence_level : float, keyword-only
        0.99 by default, as in the paper.
    n_resamples : int, keyword-only
        10,000 by default, as in the paper.
    rng : int, numpy.random.Generator or None, keyword-only

    Returns
    -------
    StabilityMetrics
        NaN metrics, with a :class:`RuntimeWarning`, where undefined (fewer than two values, zero
        mean or median).  Identical values, 0 or not, have every metric 0: no spread, intervals
        of no width.

    References
    ----------
    seed 004 (004_3e2b5449efcf85e0.txt) s.2 "Stability Metrics", "Estimating Confidence
    Intervals" and "Relevant Metrics"; Efron and Tibshirani (1993) s.12.5 (bootstrap-t).
    """
    check_confidence(confidence_level)
    check_positive_int(n_resamples, "n_resamples")
    x = as_1d(sample, "sample")
    if x.size == 0:
        raise ValueError("`sample` must not be empty")
    return _stability(np.sort(x)[None, :], confidence_level, n_resamples, make_rng(rng))[0]


def stability_metrics_many(samples_2d, *, confidence_level: float = 0.99, n_resamples: int = 10_000,
                           rng=None) -> StabilityMetricsBatch:
    """:func:`stability_metrics` for every row of a ``(n_benchmarks, n_samples)`` array.

    All rows share one stream of resampled positions over their sorted values (as in
    :func:`bootstrap_many`), so row ``i`` equals ``stability_metrics(samples_2d[i], rng=<same
    seed>)``; resampled means and variances are matrix products with the resampling counts.

    References
    ----------
    seed 004 (004_3e2b5449efcf85e0.txt) s.2.
    """
    check_confidence(confidence_level)
    check_positive_int(n_resamples, "n_resamples")
    x = _as_2d(samples_2d, "samples_2d")
    if x.shape[1] == 0:
        raise ValueError("`samples_2d` must have at least one sample per benchmark")
    return _stability(np.sort(x, axis=1), confidence_level, n_resamples, make_rng(rng))
