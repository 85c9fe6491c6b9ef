"""Precision of a benchmark result measured over runs x iterations.

A benchmark experiment is ``m`` runs (fresh processes, each with its own random initial
conditions) of ``n`` measured iterations.  The result is the mean of run means and its precision
the half-width of a confidence interval built from two variance components: between runs
(``rho^2``) and within runs (``sigma^2``).

References
----------
seed 000 (000_833974a369fcaf36.txt), Kalibera, Bulej, Tuma, "Automated Detection of Performance
Regressions: The Mono Experience":
  s.2 impact factor of random initial conditions; s.3.1 result, formula (4) and ``n_opt``;
  s.4.2 data preprocessing by resampling (the robust variant).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._validate import check_confidence, check_positive_int, make_rng


@dataclass(frozen=True)
class HierarchicalSummary:
    """Result of one experiment and its precision (seed 000 s.3.1).

    Attributes
    ----------
    mean : float
        The result: the mean of the run means, ``M_m`` (equal to the grand mean when runs are
        balanced).
    half_width : float
        Half-width of the confidence interval for the mean, formula (4) with the between-run
        variance component estimated without truncation: ``q * sqrt((n*(S_rho^2 - S_sigma^2/n)
        + S_sigma^2) / (m*n)) = q * sqrt(S_rho^2 / m)``, or ``q * sqrt(S_sigma^2 / (m*n))`` when
        the run means agree exactly (see :func:`components`).
    confidence_level : float
        Confidence level of ``half_width``.
    n_runs : int
        ``m``, the number of runs.
    n_iterations : float
        ``n``, the number of measured iterations per run (the mean when runs differ).
    run_means : numpy.ndarray
        ``M_j``, one per run.
    s2_rho : float
        ``S_rho^2``: the sample variance of the run means.
    s2_sigma : float
        ``S_sigma^2``: the pooled within-run variance.
    rho2 : float
        The between-run variance component, ``max(S_rho^2 - S_sigma^2 / n, 0)`` (the one-way
        random-effects estimator, McCulloch and Searle, cited by seed 000 s.3.1).
    impact_factor : float
        Observed spread of the run means against the spread that within-run noise alone would
        give, ``sqrt(S_rho^2 / (S_sigma^2 / n))``: about 1 when runs are alike (seed 000 s.2).
    n_opt : float
        Iterations per run that minimise the cost ``(w + n) m`` for a given precision,
        ``sqrt(w * S_sigma^2 / rho2)`` (seed 000 s.3.1); ``inf`` when ``rho2`` is 0 (then more
        iterations in fewer runs is always cheaper) and NaN without warm-up cost.
    """

    mean: float
    half_width: float
    confidence_level: float
    n_runs: int
    n_iterations: float
    run_means: np.ndarray
    s2_rho: float
    s2_sigma: float
    rho2: float
    impact_factor: float
    n_opt: float

    @property
    def ci_low(self) -> float:
        return self.mean - self.half_width

    @property
    def ci_high(self) -> float:
        return self.mean + self.half_width

    @property
    def relative_half_width(self) -> float:
        return self.half_width / abs(self.mean) if self.mean else float("nan")


@functools.lru_cache(maxsize=4096)  # one scipy ppf per (level, runs), not one per experiment
def interval_quantile(confidence_level: float, m: int, quantile: str = "t") -> float:
    """The quantile of an interval for the mean of ``m`` run means: Student's t with ``m - 1``
    degrees of freedom (``"t"``) or the normal one of seed 000 s.3.1 (``"normal"``)."""
    # scipy.special costs 0.25-0.6 s to import (it loads all of numpy's submodules through its
    # array API layer), so it is imported on the first call, not by every command.
    from scipy import special as _special

    if quantile == "normal":
        # The paper's u_{1-alpha/2}: right for large m.
        return float(_special.ndtri(0.5 + confidence_level / 2))
    if quantile == "t":
        # With few runs the variance of the run means is estimated with m-1 degrees of freedom,
        # so Student's t keeps the coverage the normal quantile promises only asymptotically.
        return float(_special.stdtrit(m - 1, 0.5 + confidence_level / 2))
    raise ValueError("`quantile` must be 't' or 'normal'")


def components(run_means: np.ndarray, run_vars: np.ndarray, run_sizes: np.ndarray, *,
               confidence_level: float = 0.99, warmup: int = 0, quantile: str = "t",
               ) -> HierarchicalSummary:
    """Summary from per-run means, variances (ddof=1) and sizes (the shared core).

    Degenerate inputs give NaN where the quantity is undefined, with a :class:`RuntimeWarning`:
    with fewer than two runs everything but the mean; with a run of one sample the within-run
    variance and what rests on it (the between-run component, the impact factor, ``n_opt``),
    while the interval still rests on the run means, the replicates (seed 000 s.2), as
    ``compare`` gives one (a command timed once a process, five processes: ``summary`` showed no
    interval at all).
    """
    m = int(run_means.size)
    n = float(run_sizes.mean()) if m else float("nan")
    mean = float(run_means.mean()) if m else float("nan")
    nan = float("nan")
    if m < 2:
        warnings.warn("fewer than two runs: precision is undefined", RuntimeWarning, stacklevel=3)
        return HierarchicalSummary(mean, nan, confidence_level, m, n, run_means, nan, nan, nan, nan, nan)
    if np.any(run_sizes < 2):
        warnings.warn("a run with fewer than two samples: the within-run variance is undefined, the interval "
                      "rests on the run means alone", RuntimeWarning, stacklevel=3)
        s2_rho = float(run_means.var(ddof=1))
        half = interval_quantile(confidence_level, m, quantile) * np.sqrt(s2_rho / m) if s2_rho > 0 else nan
        return HierarchicalSummary(mean, float(half), confidence_level, m, n, run_means, s2_rho, nan, nan, nan, nan)
    s2_rho = float(run_means.var(ddof=1))
    dof = float((run_sizes - 1).sum())
    s2_sigma = float(((run_sizes - 1) * run_vars).sum() / dof)
    rho2 = max(s2_rho - s2_sigma / n, 0.0)
    q = interval_quantile(confidence_level, m, quantile)
    # Formula (4) with the unbiased estimate of the between-run component, rho2 + S_sigma^2 / n =
    # S_rho^2, not the truncated one reported as `rho2`: truncating at 0 adds S_sigma^2 / n
    # whenever the run means happen to spread less than their iterations would predict, so the
    # 99% interval missed 0.0-0.3% of the time instead of 1% at impact factors of 1-3 (measured
    # by simulation, tests/test_stats_hierarchical.py): width lost as power.  S_rho^2 / m is the
    # variance of the mean of m independent run means whatever happens inside a run (auto-
    # dependence included), and Student's t with m - 1 degrees of freedom its exact quantile
    # under normality (seed 000 s.2: runs are the replicates).  Run means that agree exactly
    # (quantised timers) say nothing of their spread: the interval then rests on the within-run
    # noise, sigma^2 / n being the least a run mean can vary.
    half = q * np.sqrt((s2_rho if s2_rho > 0 else s2_sigma / n) / m)
    impact = np.sqrt(s2_rho / (s2_sigma / n)) if s2_sigma > 0 else (np.inf if s2_rho > 0 else np.nan)
    if warmup <= 0:
        n_opt = float("nan")
    elif rho2 == 0:
        n_opt = float("inf")
    else:
        n_opt = float(np.sqrt(warmup * s2_sigma / rho2))
    return HierarchicalSummary(mean, float(half), confidence_level, m, n, run_means, s2_rho, s2_sigma,
                               rho2, float(impact), n_opt)


def hierarchical_summary(runs: Sequence[np.ndarray], *, confidence_level: float = 0.99,
                         warmup: int = 0, quantile: str = "t") -> HierarchicalSummary:
    """Result and precision of one experiment from its runs (seed 000 s.3.1, formula 4).

    Parameters
    ----------
    runs : sequence of 1-D arrays
        The measured samples (warm-up already removed) of each run.
    confidence_level : float, keyword-only
        Confidence level of the interval (the paper uses 0.99).
    warmup : int, keyword-only
        Warm-up iterations per run ``w``, the cost term of ``n_opt``.
    quantile : {"t", "normal"}, keyword-only
        Student's t with ``m - 1`` degrees of freedom (default) or the paper's normal quantile.

    Returns
    -------
    HierarchicalSummary
    """
    check_confidence(confidence_level)
    arrays = [np.asarray(r, dtype=float) for r in runs]
    sizes = np.array([a.size for a in arrays], dtype=float)
    if np.any(sizes == 0):
        raise ValueError("`runs` must not contain an empty run")
    means = np.array([a.mean() for a in arrays])
    variances = np.array([a.var(ddof=1) if a.size > 1 else np.nan for a in arrays])
    return components(means, variances, sizes, confidence_level=confidence_level, warmup=warmup,
                      quantile=quantile)


def resampled_run_stats(runs: Sequence[np.ndarray], *, n_resamples: int = 100, fraction: float = 0.5,
                        rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Per run, the median of resampled means and the median of resampled variances.

    This is the data preprocessing of seed 000 s.4.2: for each run, ``n_resamples`` random
    sub-selections of size ``fraction * k`` drawn with replacement; ``M_j`` is the median of their
    means and ``S^2_sigma_j`` the median of the variances of a second, independent set.

    Hand-written because no library resamples thousands of runs at once fast enough: runs of the
    same length share one matrix of resampling counts ``C`` (``k x B``), so the resampled sums
    of every run are one matrix product ``X @ C``.  The resampling noise is then shared across
    runs, which does not matter for its purpose (a median over 100 resamples per run).

    The paper suggests ``n = 0.75 k`` as an example.  With it, a single outlier stays in more
    than half of the sub-selections (it is left out of one with probability
    ``(1 - 1/k)^(0.75 k) ~ e^-0.75 = 0.47``), so the median of means still carries it; the default
    ``fraction = 0.5`` leaves it out with probability ``e^-0.5 = 0.61`` and the median is then
    free of it.  The tests show both.
    """
    check_positive_int(n_resamples, "n_resamples")
    if not 0 < fraction <= 1:
        raise ValueError("`fraction` must be in (0, 1]")
    # With a seed, each run length draws its counts from a stream of its own (the seed and the
    # length), so a run's resampled statistics do not depend on which other runs are summarised
    # with it: `summary` of every benchmark, `summary` of one and `diagnose` agree (they differed
    # by up to 2.5x in the robust interval with three runs).
    seeded = isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)
    gen = make_rng(rng)
    arrays = [np.asarray(r, dtype=float) for r in runs]
    means = np.full(len(arrays), np.nan)
    variances = np.full(len(arrays), np.nan)
    by_len: dict[int, list[int]] = {}
    for j, a in enumerate(arrays):
        by_len.setdefault(a.size, []).append(j)
    for k, idx in sorted(by_len.items()):
        if k == 0:
            continue
        n = max(int(round(fraction * k)), 2 if k > 1 else 1)
        x = np.stack([arrays[j] for j in idx])
        centre = x.mean(axis=1, keepdims=True)
        xc = x - centre  # centred: the sum-of-squares identity below stays accurate
        g = np.random.default_rng([int(rng), k]) if seeded else gen
        c1 = _count_matrix(g, k, n, n_resamples)
        c2 = _count_matrix(g, k, n, n_resamples)
        m1 = (xc @ c1) / n
        means[idx] = np.median(m1, axis=1) + centre[:, 0]
        if n > 1:
            s1 = (xc @ c2) / n
            s2 = ((xc * xc) @ c2) / n
            v = (s2 - s1 * s1) * (n / (n - 1))
            variances[idx] = np.median(np.maximum(v, 0.0), axis=1)
    return means, variances


def _count_matrix(gen: np.random.Generator, k: int, n: int, n_resamples: int) -> np.ndarray:
    draws = gen.integers(0, k, size=(n_resamples, n))
    flat = (draws + k * np.arange(n_resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * k).reshape(n_resamples, k).T.astype(float)


def robust_summary(runs: Sequence[np.ndarray], *, confidence_level: float = 0.99, warmup: int = 0,
                   n_resamples: int = 100, fraction: float = 0.5, quantile: str = "t",
                   rng=None) -> HierarchicalSummary:
    """The robust variant: formula (4) on resampled run statistics (seed 000 s.4.2).

    ``M_j`` and ``S^2_sigma_j`` come from :func:`resampled_run_stats`; the result is their mean
    and the interval is built as in :func:`hierarchical_summary`, with ``n`` the run length ``k``
    (``M_j`` estimates the mean of ``k`` measurements).
    """
    check_confidence(confidence_level)
    arrays = [np.asarray(r, dtype=float) for r in runs]
    means, variances = resampled_run_stats(arrays, n_resamples=n_resamples, fraction=fraction, rng=rng)
    sizes = np.array([a.size for a in arrays], dtype=float)
    return components(means, variances, sizes, confidence_level=confidence_level, warmup=warmup,
                      quantile=quantile)


@dataclass(frozen=True)
class RepetitionPlan:
    """Runs x iterations that reach a target precision at the least cost (seed 000 s.3.1).

    Attributes
    ----------
    runs, iterations, warmup : int
        ``m``, ``n`` and ``w`` of the recommended plan.
    cost : int
        Iterations executed, warm-up included: ``(w + n) m``.
    predicted_half_width, predicted_relative_half_width : float
        Half-width of the interval the plan is expected to give (absolute, and relative to the
        pilot mean).
    target_relative_half_width : float
    n_opt : float
        The continuous optimum ``sqrt(w S_sigma^2 / rho^2)`` the integer search started from.
    pilot : HierarchicalSummary
        The pilot's summary whose variance components the plan rests on.
    """

    runs: int
    iterations: int
    warmup: int
    cost: int
    predicted_half_width: float
    predicted_relative_half_width: float
    target_relative_half_width: float
    n_opt: float
    pilot: HierarchicalSummary


def plan_repetitions(pilot_runs: Sequence[np.ndarray], *, target_relative_half_width: float = 0.01,
                     confidence_level: float = 0.99, warmup: int = 0, min_runs: int = 3,
                     max_iterations: int = 100_000, quantile: str = "t") -> RepetitionPlan:
    """Recommend runs x iterations for a target relative CI half-width at minimal cost.

    From pilot runs, the variance components ``rho^2`` (between runs) and ``S_sigma^2`` (within
    runs) predict the half-width of a plan ``(m, n)`` by formula (4):
    ``q * sqrt(rho^2 / m + S_sigma^2 / (m n))``.  The cost of a plan is ``(w + n) m`` iterations
    (seed 000 s.3.1), minimised over integer ``n`` (starting from the paper's
    ``n_opt = sqrt(w S_sigma^2 / rho^2)``) with, for each ``n``, the fewest runs that reach the
    target; ``q`` is Student's t with ``m - 1`` degrees of freedom, so ``m`` is found by a
    bisection.

    Parameters
    ----------
    pilot_runs : sequence of 1-D arrays
        Measured samples (warm-up removed) of at least two pilot runs.
    target_relative_half_width : float, keyword-only
        Wanted half-width relative to the mean (0.01 = +-1%).
    confidence_level : float, keyword-only
    warmup : int, keyword-only
        Warm-up iterations ``w`` every run pays.
    min_runs : int, keyword-only
        Never fewer runs than this (at least 2: the between-run variance needs them).
    max_iterations : int, keyword-only
        Upper bound of ``n``.
    quantile : {"t", "normal"}, keyword-only

    Returns
    -------
    RepetitionPlan
    """
    check_confidence(confidence_level)
    if not 0 < target_relative_half_width < 1:
        raise ValueError("`target_relative_half_width` must be in (0, 1)")
    check_positive_int(max_iterations, "max_iterations")
    if not isinstance(min_runs, int) or min_runs < 2:
        raise ValueError("`min_runs` must be an integer >= 2")
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError("`warmup` must be a non-negative integer")
    pilot = hierarchical_summary(pilot_runs, confidence_level=confidence_level, warmup=warmup,
                                 quantile=quantile)
    if not np.isfinite(pilot.half_width) or pilot.mean == 0:
        raise ValueError("`pilot_runs` must hold at least two runs of two samples with a non-zero mean")
    target = target_relative_half_width * abs(pilot.mean)
    rho2, s2 = pilot.rho2, pilot.s2_sigma

    def runs_for(n: int) -> int:
        # The fewest runs m with m >= q(m)^2 (rho^2 + S_sigma^2/n) / target^2: the right side
        # shrinks as m grows (q is t with m-1 degrees of freedom), so bisect between min_runs
        # and the bound the right side gives at min_runs.
        # As a ratio of standard deviations: target**2 underflows to 0 for samples of 1e-160 and
        # less (a probe's diagnose of 1e-200 s samples raised ZeroDivisionError).
        v = (math.sqrt(rho2 + s2 / n) / target) ** 2

        def ok(m: int) -> bool:
            return m >= interval_quantile(confidence_level, m, quantile) ** 2 * v

        lo, hi = min_runs, max(min_runs, int(np.ceil(interval_quantile(confidence_level, min_runs, quantile) ** 2 * v)))
        if ok(lo):
            return lo
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi

    if rho2 > 0 and warmup > 0:
        n_opt = float(np.sqrt(warmup * s2 / rho2))
    else:
        n_opt = float("inf") if rho2 == 0 else 1.0
    # The cost (w + n) m(n) is unimodal in n up to the integer steps of m: scan a geometric grid
    # around n_opt, then every n near the best grid point.
    centre = int(min(max(n_opt, 2), max_iterations)) if np.isfinite(n_opt) else max_iterations
    grid = sorted({int(x) for x in np.unique(np.geomspace(2, max_iterations, 60).astype(int))} | {centre})
    best = min(grid, key=lambda n: ((warmup + n) * runs_for(n), n))
    lo, hi = max(2, int(best / 1.5)), min(max_iterations, int(best * 1.5) + 1)
    best = min(range(lo, hi + 1), key=lambda n: ((warmup + n) * runs_for(n), n))
    m = runs_for(best)
    hw = interval_quantile(confidence_level, m, quantile) * float(np.sqrt(rho2 / m + s2 / (m * best)))
    return RepetitionPlan(runs=m, iterations=best, warmup=warmup, cost=(warmup + best) * m,
                          predicted_half_width=hw, predicted_relative_half_width=hw / abs(pilot.mean),
                          target_relative_half_width=target_relative_half_width, n_opt=n_opt, pilot=pilot)
