"""Comparing two versions of a benchmark with runs as the unit of replication.

Runs of one version differ by their random initial conditions (seed 000 s.2), so the iterations
of one run are not independent replicates of the version: a comparison resamples *runs*.  The
relative change of the mean of run means, ``mean(B) / mean(A) - 1``, gets a bootstrap interval
over runs (BCa, falling back to percentile when BCa is undefined), computed by
:func:`scipy.stats.bootstrap`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validate import check_confidence, check_positive_int, make_rng

VERDICTS = ("regression", "improvement", "no change", "inconclusive")


@dataclass(frozen=True)
class Comparison:
    """Relative change from version A to version B.

    Attributes
    ----------
    change : float
        ``mean(B) / mean(A) - 1`` of the means of run means (0.034 = +3.4%).
    ci_low, ci_high : float
        Bootstrap confidence interval of ``change`` (NaN when undecidable).
    confidence_level : float
    method : str
        ``"BCa"`` or ``"percentile"``: the bootstrap interval actually used.
    mean_a, mean_b : float
        The means of run means.
    runs_a, runs_b : int
        Runs on each side.
    bootstrap_distribution : numpy.ndarray
        The resampled changes (empty when undecidable).
    """

    change: float
    ci_low: float
    ci_high: float
    confidence_level: float
    method: str
    mean_a: float
    mean_b: float
    runs_a: int
    runs_b: int
    bootstrap_distribution: np.ndarray


def _ratio(a, b, axis=-1):
    return np.mean(b, axis=axis) / np.mean(a, axis=axis) - 1.0


def compare_runs(a_run_means: ArrayLike, b_run_means: ArrayLike, *,
                 confidence_level: float = 0.99, n_resamples: int = 10_000, rng=None) -> Comparison:
    """Relative change of B against A with a bootstrap interval over runs.

    Parameters
    ----------
    a_run_means, b_run_means : array_like of float, 1-D
        The mean of each run (its measured samples) of versions A and B.
    confidence_level : float, keyword-only
    n_resamples : int, keyword-only
    rng : int, numpy.random.Generator or None, keyword-only

    Returns
    -------
    Comparison
        With NaN interval and a :class:`RuntimeWarning` when either side has fewer than two
        runs: such a comparison is undecidable, never "significant" (STYLE.md habit 5).
    """

    check_confidence(confidence_level)
    check_positive_int(n_resamples, "n_resamples")
    a = np.asarray(a_run_means, dtype=float)
    b = np.asarray(b_run_means, dtype=float)
    mean_a = float(a.mean()) if a.size else float("nan")
    mean_b = float(b.mean()) if b.size else float("nan")
    change = mean_b / mean_a - 1.0 if a.size and b.size and mean_a != 0 else float("nan")
    nan = float("nan")
    if a.size >= 2 and b.size >= 2 and not np.any(a) and np.all(np.isfinite(b)):
        # Every run of A is exactly 0 (a count such as Go's allocs/op of an allocation-free
        # loop): the ratio is not defined, but the comparison is certain.  B all 0 too is no
        # change; B's runs all above 0 (all below) is an infinite increase (decrease) in every
        # resample.  B on both sides of 0 is left undecidable, below.
        if not np.any(b):
            return Comparison(0.0, 0.0, 0.0, confidence_level, "exact", mean_a, mean_b, a.size, b.size,
                              np.zeros(1))
        if np.all(b > 0) or np.all(b < 0):
            inf = float(np.inf if b[0] > 0 else -np.inf)
            return Comparison(inf, inf, inf, confidence_level, "exact", mean_a, mean_b, a.size, b.size,
                              np.full(1, inf))
    if a.size < 2 or b.size < 2 or not np.isfinite(change):
        warnings.warn("each version needs at least two runs with a non-zero mean to be compared",
                      RuntimeWarning, stacklevel=2)
        return Comparison(change, nan, nan, confidence_level, "none", mean_a, mean_b, a.size, b.size,
                          np.empty(0))
    gen = make_rng(rng)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        # No spread at all: every resample gives the same ratio; the interval is that point.
        return Comparison(change, change, change, confidence_level, "exact", mean_a, mean_b,
                          a.size, b.size, np.full(1, change))
    res, method = _bootstrap(a, b, _ratio, n_resamples=n_resamples, confidence_level=confidence_level, rng=gen)
    lo, hi = res.confidence_interval
    # The bootstrap's interval is too narrow for few runs (a 99% BCa interval missed a null change
    # 12.7% of the time with 3 runs a side, 5.7% with 5, 3.7% with 10, in simulation): the
    # resampled means of 3 values take only 10 values.  Fieller's interval, exact for normal run
    # means, is right for few runs; the union of the two is valid where either is (a skewed
    # run mean that the bootstrap follows, normal ones that Fieller's t quantile does).
    f_lo, f_hi = fieller_interval(a, b, confidence_level=confidence_level)
    low, high = float(lo), float(hi)
    if np.isfinite(f_lo) and np.isfinite(f_hi):
        if f_lo < low or f_hi > high:
            low, high, method = min(low, f_lo), max(high, f_hi), method + "+Fieller"
    else:
        # A's mean is not told from 0 at this level, so Fieller's set is unbounded.  The
        # bootstrap's interval alone was kept here, and with 3 noisy runs of A it called a
        # change of untouched code a +69% regression (a first-user probe: [+8%, +222%], where
        # Welch's t on the run means gives p = 0.08).  The bound that stays valid: each mean in
        # its own t interval at 1 - alpha/2 (Bonferroni: both hold with at least the level), so
        # the ratio is at least B's lower bound over A's upper one, with no upper bound at all
        # (A's interval reaches 0).  A count of [0, 0, 1] against B's thousand is still a
        # regression; the noisy one is inconclusive.
        b_lo, a_hi = _bonferroni_bounds(a, b, confidence_level)
        floor = b_lo / a_hi - 1.0 if b_lo > 0 and a_hi > 0 else (-1.0 if np.all(a >= 0) and np.all(b >= 0) else -np.inf)
        low, high, method = min(low, floor), np.inf, method + "+Bonferroni"
    return Comparison(change, low, high, confidence_level, method, mean_a, mean_b,
                      a.size, b.size, res.bootstrap_distribution)


def _bonferroni_bounds(a: np.ndarray, b: np.ndarray, confidence_level: float) -> tuple[float, float]:
    """B's lower and A's upper bound of their means' two-sided Student t intervals, each at level
    ``1 - (1 - confidence_level) / 2``: both hold together with at least ``confidence_level``
    (Bonferroni's inequality)."""
    from scipy.special import stdtrit

    q = 0.5 + (1 - (1 - confidence_level) / 2) / 2
    b_lo = float(b.mean() - stdtrit(b.size - 1, q) * b.std(ddof=1) / np.sqrt(b.size))
    a_hi = float(a.mean() + stdtrit(a.size - 1, q) * a.std(ddof=1) / np.sqrt(a.size))
    return b_lo, a_hi


def run_location(samples: ArrayLike, location: str = "mean", *, direction: str = "lower") -> float:
    """What one run contributes to a comparison of versions: a location of its measured samples.

    Parameters
    ----------
    samples : array_like of float, 1-D
        The run's measured samples (warm-up left out).
    location : {"mean", "median", "low"}
        ``"mean"`` (the run mean of :func:`compare_runs`), ``"median"``, or ``"low"``: the
        :data:`~regbench.stats.runs.LOW_QUANTILE` (10%) quantile, a floor that interference,
        which only adds time, hardly moves.  Where higher is better (a throughput), ``"low"`` is the
        ``1 - LOW_QUANTILE`` quantile: the floor of the time it inverts, as detection searches a
        throughput as its reciprocal; its 10% quantile would be the slow tail, which moves with
        the interference.
    direction : {"lower", "higher"}, keyword-only
        Whether lower or higher values are better.

    Returns
    -------
    float
        NaN for a run without samples.

    References
    ----------
    Chen and Revels, "Robust benchmarking in noisy environments", arXiv:1608.04295 (2016), s.3.
    """
    from .runs import LOCATIONS, LOW_QUANTILE

    if location not in LOCATIONS:
        raise ValueError(f"`location` must be one of {', '.join(LOCATIONS)}, got {location!r}")
    if direction not in ("lower", "higher"):
        raise ValueError("`direction` must be 'lower' or 'higher'")
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1:
        raise ValueError("`samples` must be one-dimensional")
    if x.size == 0:
        return float("nan")
    if location == "mean":
        return float(np.mean(x))
    q = 0.5 if location == "median" else LOW_QUANTILE if direction == "lower" else 1 - LOW_QUANTILE
    return float(np.quantile(x, q))


def _bootstrap(a: np.ndarray, b: np.ndarray, statistic, *, n_resamples: int, confidence_level: float, rng):
    """scipy's two-sample bootstrap of ``statistic`` over runs: BCa, or the percentile interval
    where BCa is undefined (degenerate resamples).  Returns the result and the method's name."""
    from scipy import stats as _st  # imported here: scipy.stats costs ~1 s of CLI start-up

    with warnings.catch_warnings():
        warnings.simplefilter("error", _st.DegenerateDataWarning)
        try:
            res = _st.bootstrap((a, b), statistic, n_resamples=n_resamples, confidence_level=confidence_level,
                                method="BCa", vectorized=True, rng=rng)
            lo, hi = res.confidence_interval
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise _st.DegenerateDataWarning("BCa undefined")
            return res, "BCa"
        except _st.DegenerateDataWarning:
            pass
    return _st.bootstrap((a, b), statistic, n_resamples=n_resamples, confidence_level=confidence_level,
                         method="percentile", vectorized=True, rng=rng), "percentile"


def compare_signed(a_run_means, b_run_means, *, confidence_level: float = 0.99, n_resamples: int = 10_000,
                   rng=None) -> Comparison:
    """Difference ``mean(B) - mean(A)`` of the means of run means, with a bootstrap interval over
    runs (BCa, else percentile), widened to Welch's t interval where that is wider, as
    :func:`~regbench.stats.compare_runs` widens its ratio's to Fieller's (the bootstrap alone is
    too narrow with few runs).  For metrics that can be 0 or below, where a relative change has
    no meaning; the returned :class:`~regbench.stats.Comparison`'s ``change``, ``ci_low`` and
    ``ci_high`` are in the metric's unit.

    Returns NaN interval (undecidable) when either side has fewer than two runs.

    References
    ----------
    Welch, B. L. (1947), "The generalization of Student's problem when several different
    population variances are involved", Biometrika 34: 28-35.
    """
    from scipy import stats as _st

    a = np.asarray(a_run_means, dtype=float)
    b = np.asarray(b_run_means, dtype=float)
    mean_a = float(a.mean()) if a.size else float("nan")
    mean_b = float(b.mean()) if b.size else float("nan")
    diff = mean_b - mean_a
    nan = float("nan")
    if a.size < 2 or b.size < 2 or not np.isfinite(diff):
        return Comparison(diff, nan, nan, confidence_level, "none", mean_a, mean_b, a.size, b.size, np.empty(0))
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return Comparison(diff, diff, diff, confidence_level, "exact", mean_a, mean_b, a.size, b.size,
                          np.full(1, diff))

    def statistic(x, y, axis=-1):
        return np.mean(y, axis=axis) - np.mean(x, axis=axis)

    res, method = _bootstrap(a, b, statistic, n_resamples=n_resamples, confidence_level=confidence_level,
                             rng=make_rng(rng))
    lo, hi = res.confidence_interval
    low, high = float(lo), float(hi)
    welch = _st.ttest_ind(b, a, equal_var=False).confidence_interval(confidence_level)
    w_lo, w_hi = float(welch.low), float(welch.high)
    if np.isfinite(w_lo) and np.isfinite(w_hi) and (w_lo < low or w_hi > high):
        low, high, method = min(low, w_lo), max(high, w_hi), method + "+Welch"
    return Comparison(diff, low, high, confidence_level, method, mean_a, mean_b, a.size, b.size,
                      res.bootstrap_distribution)


def fieller_interval(a_run_means: ArrayLike, b_run_means: ArrayLike, *,
                     confidence_level: float = 0.99) -> tuple[float, float]:
    """Fieller's interval for ``mean(B) / mean(A) - 1`` of two independent samples with unequal
    variances (Welch's degrees of freedom at the estimated ratio).

    The ratio ``r`` is in the interval where ``(mean_b - r mean_a)^2 <= t^2 (v_b + r^2 v_a)``,
    ``v = s^2 / n``: a quadratic in ``r``.  When A's mean is not significantly different from 0
    at this level the set is unbounded, and ``(-inf, inf)`` is returned.  Written here because
    neither scipy nor statsmodels offers Fieller's interval for two independent samples; checked
    by simulation (coverage at 3, 5 and 10 runs) and against the delta method for many runs
    (tests/test_compare.py).

    References
    ----------
    Fieller, E. C. (1954), "Some problems in interval estimation", JRSS B 16(2): 175-185;
    Welch, B. L. (1947) for the degrees of freedom.
    """
    from scipy.special import stdtrit

    check_confidence(confidence_level)
    a = np.asarray(a_run_means, dtype=float)
    b = np.asarray(b_run_means, dtype=float)
    if a.size < 2 or b.size < 2:
        return float("nan"), float("nan")
    ma, mb = float(a.mean()), float(b.mean())
    va, vb = float(a.var(ddof=1)) / a.size, float(b.var(ddof=1)) / b.size
    r = mb / ma if ma != 0 else 0.0
    num = (vb + r * r * va) ** 2
    den = vb**2 / (b.size - 1) + (r * r * va) ** 2 / (a.size - 1)
    df = num / den if den > 0 else float(a.size + b.size - 2)
    t = float(stdtrit(df, 0.5 + confidence_level / 2))
    low, high = fieller_bounds(ma, mb, va, vb, t, positive=bool(np.all(a > 0) and np.all(b > 0)))
    return float(low), float(high)


def fieller_bounds(mean_a, mean_b, var_a, var_b, t, *, positive=False):
    """Fieller's set for ``mean_b / mean_a - 1`` from the two means, the variances of the means
    and the quantile ``t`` (scalars or arrays alike): where ``(mean_b - r mean_a)^2 <= t^2 (var_b
    + r^2 var_a)``, a quadratic in ``r``; ``(-inf, inf)`` where A's mean is not told from 0 (the
    set is then unbounded).  ``positive`` (where the data cannot be below 0: times, counts): the
    set is cut to ratios of at least 0, so a change is never below -100%; intersecting a
    confidence set with the parameter space keeps its coverage."""
    ma, mb = np.asarray(mean_a, dtype=float), np.asarray(mean_b, dtype=float)
    va, vb = np.asarray(var_a, dtype=float), np.asarray(var_b, dtype=float)
    t2 = np.asarray(t, dtype=float) ** 2
    qa = ma * ma - t2 * va
    qb = ma * mb
    qc = mb * mb - t2 * vb
    # The discriminant cannot be negative when qa > 0 (the point estimate is inside): guard rounding.
    root = np.sqrt(np.maximum(qb * qb - qa * qc, 0.0))
    bounded = qa > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(bounded, (qb - root) / np.where(bounded, qa, 1.0) - 1.0, -np.inf)
        high = np.where(bounded, (qb + root) / np.where(bounded, qa, 1.0) - 1.0, np.inf)
    low = np.where(np.asarray(positive), np.maximum(low, -1.0), low)
    if np.ndim(low) == 0:
        return float(low), float(high)
    return low, high


def verdict(ci_low: float, ci_high: float, *, direction: str = "lower", threshold: float = 0.0) -> str:
    """Classify a relative change by its interval.

    ``regression``: the whole interval is worse than ``threshold``; ``improvement``: the whole
    interval is better than ``-threshold``, either of them also when its far end is infinite (a
    change at least this large, :func:`compare_runs` where A's mean is not told from 0, or one
    infinite point, from 0 in every run to more); ``no change``: a bounded interval within
    ``[-threshold, threshold]``, or containing 0 when ``threshold`` is 0 and not reaching -100%;
    otherwise (or when the interval is undefined) ``inconclusive``.  An interval that reaches -100% (a ratio bound at or below 0, cut there) bounds
    nothing below: with 0 in it, it is ``inconclusive``, not ``no change`` (a probe: three runs of
    B at 4.8-12.8 ms against A's 1.2-1.6 ms gave [-100.00%, +1956.15%], "no change").
    ``direction`` says whether lower or higher values are better.
    """
    if threshold < 0:
        raise ValueError("`threshold` must be non-negative")
    if direction not in ("lower", "higher"):
        raise ValueError("`direction` must be 'lower' or 'higher'")
    if np.isnan(ci_low) or np.isnan(ci_high):
        return "inconclusive"  # undefined
    sign = 1.0 if direction == "lower" else -1.0
    worse_lo, worse_hi = sorted((sign * ci_low, sign * ci_high))
    if worse_lo > threshold:
        return "regression"
    if worse_hi < -threshold:
        return "improvement"
    if not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        return "inconclusive"  # unbounded, and not all of it on one side
    if -threshold <= worse_lo and worse_hi <= threshold:
        return "no change"
    if threshold == 0 and worse_lo <= 0 <= worse_hi and ci_low > -1.0:
        return "no change"
    return "inconclusive"


def delta_ratio_interval(mean_a: float, se_a: float, mean_b: float, se_b: float, *,
                         confidence_level: float = 0.99) -> tuple[float, float, float]:
    """Relative change ``b / a - 1`` and its interval by the delta method.

    A first-order interval for a ratio of two independent estimates with standard errors
    ``se_a`` and ``se_b``; used where a bootstrap per pair would be too slow (detection over long
    histories).  Returns ``(change, low, high)``.
    """
    from scipy.special import ndtri

    check_confidence(confidence_level)
    change = mean_b / mean_a - 1.0
    se = np.sqrt((se_b / mean_a) ** 2 + (mean_b * se_a / mean_a**2) ** 2)
    z = ndtri(0.5 + confidence_level / 2)
    return float(change), float(change - z * se), float(change + z * se)
