"""Sequential comparison of two versions with an always-valid confidence sequence.

Versions A and B run interleaved in pairs (one fresh process of each, in random order); pair
``i`` gives one observation, the log ratio of its run means ``x_i = log(mean_B_i / mean_A_i)``.
Runs are the unit of replication (seed 000 s.2), so the pairs are the replicates.  A fixed-n
confidence interval (seed 000 s.3) recomputed after every pair and used to stop "as soon as it
is significant" misses far more often than its level says.  A *confidence sequence* does not:
with probability at least ``1 - alpha`` it covers the true mean at every ``n`` simultaneously, so
the comparison may be monitored after every pair and stopped at any moment, for any reason.

The confidence sequence here is the scale-invariant Gaussian-mixture t confidence sequence
(Lai 1976; Wang and Ramdas 2024).  For a candidate mean ``mu`` let ``S = sum(x_i - mu)``,
``V = sum((x_i - mu)**2)``.  Mixing the standardized effect ``theta = (mu' - mu) / sigma`` over
``N(0, 1/c)`` and ``sigma`` over the right Haar measure ``d sigma / sigma`` gives the likelihood
ratio of the maximal scale invariant of ``x - mu``::

    M_n(mu) = sqrt(c / (n + c)) * (V / (V - S**2 / (n + c)))**(n / 2)

a nonnegative martingale with ``M_0 = M_1 = 1`` when ``mu`` is the true mean, so by Ville's
inequality ``P(M_n(mu) >= 1/alpha for some n) <= alpha``.  ``{mu : M_n(mu) < 1/alpha}`` is the
interval ``xbar -+ h`` with, for ``B = sqrt((n + c) / c) / alpha``, ``q = 1 - B**(-2/n)`` and
``SS = sum((x_i - xbar)**2)``::

    h**2 = q (n + c) SS / (n (n - q (n + c)))      when n > q (n + c), else h = inf

(the interval is unbounded while ``((n + c) / c)**((n - 1) / 2) <= 1/alpha``, the supremum of
``M_n`` over ``mu``).  ``tests/test_stats_sequential.py`` checks the closed form against a direct
numerical integration of the two mixtures.

Interference on a shared machine does not make that log ratio Gaussian: a burst that hits one
run of a pair moves the ratio by tens of percent while most pairs differ by a few (measured
under a background load in ``benchmarks/bench_sequential.py``: the log ratios' standard
deviation 39%, their interquartile range that of a 4.5% Gaussian).  The mean's sequence then
widens with the bursts.  The *median* of the log ratios has a confidence sequence that needs no
model of the distribution at all, and that bursts cannot widen (:func:`sign_cs`, after Howard
and Ramdas 2022): for a candidate median ``m`` the count of observations ``<= m`` is, under the
hypothesis, at least a fair coin's count, and a mixture of Bernoulli likelihood ratios over
``q < 1/2`` is a nonnegative supermartingale, so Ville's inequality bounds it as above.  On
Gaussian data it needs about ``pi / 2`` times the pairs of the mean's.

A comparison uses both by default (``center="both"``): each at ``alpha / 2``, the interval their
intersection.  Where the log ratios' distribution is symmetric the mean and the median are the
same number, so the intersection covers it with probability at least ``1 - alpha``; it is
symmetric for A against itself whenever the two runs of a pair are exchangeable (random order,
or a duet's random CPUs), and for a B that only scales A's times.  It is as narrow as the
narrower of the two at each ``n``, less the price of halving ``alpha`` (about 10% of width).
"""

from __future__ import annotations

import bisect
import functools
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ._validate import as_1d, check_confidence, check_positive_int, make_rng

__all__ = [
    "CENTERS", "DECISIONS", "DEFAULT_C", "DEFAULT_CENTER", "NOISES", "ConfidenceSequence", "SequentialDecision",
    "SimulationResult", "centered_cs", "centered_path", "sequential_decision", "sign_cs", "sign_path", "simulate_error_rates", "t_mixture_cs",
    "t_mixture_path",
]

#: Prior precision of the standardized effect.  With ``c = 1`` the prior says "an effect of
#: about one standard deviation of a pair's log ratio"; at ``alpha = 0.05`` the interval is
#: bounded from 5 pairs on, is tightest (over all ``c``) near 13 pairs, and stays within 3% of
#: the tightest possible width for every n from 8 to 30 (11% at 200).  Benchmark comparisons
#: with a 2% pair noise and a 3% threshold settle in that range.
DEFAULT_C = 1.0

DECISIONS = ("changed", "no change", "undecided")

#: What a comparison's confidence sequence bounds: the mean log ratio (:func:`t_mixture_cs`),
#: the median (:func:`sign_cs`), or both at ``alpha / 2`` each, intersected (the module docstring).
CENTERS = ("mean", "median", "both")
DEFAULT_CENTER = "both"

NOISES = ("normal", "t5", "lognormal-runs", "bursts")

# "lognormal-runs": a run mean is exp(u) * mean of 5 iterations exp(W), u ~ N(0, 0.25**2),
# W ~ N(0, 1) (strongly skewed iterations, random initial conditions per run).  The log ratio
# of two such run means is standardized by its exact sd, sqrt(2 * 0.25**2 + 2 * v), where
# v = Var(log mean of 5 LN(0, 1)) = 0.26234 (2e7 draws, seed 20240601; a test re-checks it).
_RUN_SIGMA = 0.25
_ITER_SIGMA = 1.0
_ITERATIONS = 5
_LOG_MEAN_VAR = 0.26234
_LOGNORMAL_RUNS_SD = float(np.sqrt(2 * _RUN_SIGMA**2 + 2 * _LOG_MEAN_VAR))

# "bursts": a run's log time is 0.01 * N(0, 1) + log(1 + B), B ~ Exp(mean 0.5) with probability
# 0.2, else 0; the log ratio of two runs is standardized by its exact sd, sqrt(2 (0.01**2 + v)),
# v = Var(log(1 + B)) = 0.2 E[log(1 + E)**2] - (0.2 E[log(1 + E)])**2 for E ~ Exp(0.5), by
# quadrature (a test re-checks it by simulation).
_BURST_SHARE = 0.2
_BURST_MEAN = 0.5
_BURST_JITTER = 0.01


@functools.lru_cache(maxsize=1)
def _bursts_sd() -> float:
    return float(np.sqrt(2 * (_BURST_JITTER**2 + _burst_log_var())))


def _burst_log_var() -> float:
    from scipy import integrate

    def moment(k: int) -> float:
        return integrate.quad(lambda t: np.log1p(t) ** k * np.exp(-t / _BURST_MEAN) / _BURST_MEAN, 0, np.inf)[0]

    return _BURST_SHARE * moment(2) - (_BURST_SHARE * moment(1)) ** 2



@dataclass(frozen=True)
class ConfidenceSequence:
    """An always-valid confidence interval for the mean, on the scale of the observations.

    Attributes
    ----------
    n : int
        Observations used.
    estimate : float
        Sample mean of the observations (NaN when there are none).
    low, high : float
        The interval at ``n``; ``-inf`` and ``+inf`` while the data cannot bound it yet, NaN (with
        a :class:`RuntimeWarning`) when all observations are equal and the Gaussian model is
        degenerate.
    alpha : float
        The probability that the interval ever misses the mean, over all ``n``.
    c : float
        Prior precision of the mixture.
    center : str
        What it bounds: ``"mean"`` (the Gaussian mixture), ``"median"`` (:func:`sign_cs`), or
        ``"both"`` (their intersection, each at ``alpha / 2``; ``estimate`` is then the estimate
        of the narrower, held inside the interval).
    by : str
        For ``"both"``, which of the two gave the interval its width now: ``"mean"``,
        ``"median"`` or ``"mean and median"`` (one bound each); else ``center``.
    """

    n: int
    estimate: float
    low: float
    high: float
    alpha: float
    c: float
    center: str = "mean"
    by: str = "mean"


@dataclass(frozen=True)
class SequentialDecision:
    """The state of a sequential comparison of B against A after ``n`` pairs.

    Attributes
    ----------
    decision : str
        One of :data:`DECISIONS`.  ``"changed"``: the confidence sequence excludes 0 (B is
        slower/larger when ``change > 0``); ``"no change"``: it lies strictly inside
        ``(-log(1 + threshold), log(1 + threshold))``; ``"undecided"`` otherwise, with fewer than
        ``min_n`` pairs, or when the interval is NaN.  When both hold, the decision is
        ``"changed"``: a real change smaller than the threshold.
    n : int
        Pairs used.
    change : float
        ``exp(mean log ratio) - 1``: the relative change of the geometric mean ratio.
    ci_low, ci_high : float
        ``exp(low) - 1`` and ``exp(high) - 1``; ``-1.0`` and ``inf`` while unbounded.
    threshold : float
        Relative threshold of a change that matters (0.03 = 3%).
    alpha : float
    cs : ConfidenceSequence
        The confidence sequence of the mean log ratio.
    """

    decision: str
    n: int
    change: float
    ci_low: float
    ci_high: float
    threshold: float
    alpha: float
    cs: ConfidenceSequence


@dataclass(frozen=True)
class SimulationResult:
    """Error rates of the sequential decision under continuous monitoring, by simulation.

    Attributes
    ----------
    n_sim : int
        Simulated comparisons.
    effect : float
        True relative change of B against A (the mean log ratio is ``log(1 + effect)``).
    threshold, alpha : float
    rate_changed, rate_no_change, rate_undecided : float
        Fractions of comparisons that stopped with each decision (undecided: not settled after
        ``max_n`` pairs).
    mean_n : float
        Mean number of pairs used (``max_n`` for undecided comparisons).
    wrong_rate : float
        Fraction of wrong decisions: ``"changed"`` when ``effect == 0`` or with the sign opposite
        to ``effect``; ``"no change"`` when ``|log(1 + effect)| >= log(1 + threshold)`` (which
        includes every ``|effect| >= threshold``).
    coverage_miss_rate : float
        Fraction of comparisons whose confidence sequence excluded the true mean log ratio at
        some ``n <= max_n`` (monitoring continued past the decision).
    sigma : float
        Standard deviation of one log ratio.
    noise : str
        One of :data:`NOISES`.
    max_n : int
    decisions : numpy.ndarray
        The decision of each comparison (strings of :data:`DECISIONS`).
    n_used : numpy.ndarray
        Pairs used by each comparison.
    """

    n_sim: int
    effect: float
    threshold: float
    alpha: float
    rate_changed: float
    rate_no_change: float
    rate_undecided: float
    mean_n: float
    wrong_rate: float
    coverage_miss_rate: float
    sigma: float
    noise: str
    max_n: int
    decisions: np.ndarray
    n_used: np.ndarray


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


def _check_c(c) -> float:
    if c is None:
        return DEFAULT_C
    if not isinstance(c, numbers.Real) or isinstance(c, bool) or not np.isfinite(float(c)) or float(c) <= 0:
        raise ValueError("`c` must be a positive finite number")
    return float(c)


def _check_nonnegative(value, name: str) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(float(value)) \
            or float(value) < 0:
        raise ValueError(f"`{name}` must be a non-negative finite number")
    return float(value)


def _check_min_n(min_n) -> None:
    if not isinstance(min_n, numbers.Integral) or isinstance(min_n, bool) or min_n < 2:
        raise ValueError("`min_n` must be an integer >= 2")


# ------------------------------------------------------------------------------------------
# The confidence sequence
# ------------------------------------------------------------------------------------------


def _half_width(n, ss, alpha: float, c: float):
    """Closed-form half-width; ``inf`` where the data cannot bound the interval yet."""
    n = np.asarray(n, dtype=float)
    log_b = 0.5 * np.log1p(n / c) - np.log(alpha)
    q = -np.expm1(-2.0 * log_b / n)  # 1 - B**(-2/n) without cancellation for large n
    qn = q * (n + c)
    den = n - qn
    bounded = den > 0
    h2 = np.where(bounded, qn * ss / (n * np.where(bounded, den, 1.0)), np.inf)
    return np.sqrt(h2), bounded


def _path(x: np.ndarray, alpha: float, c: float):
    """Low/high for every prefix along the last axis, with a flag of degenerate prefixes.

    Running sums of ``x - x[..., 0]`` keep ``SS = sum(d**2) - n mean(d)**2`` free of the
    cancellation the raw second moment would suffer when the mean is far from 0.
    """
    n_obs = x.shape[-1]
    k = np.arange(1, n_obs + 1, dtype=float)
    d = x - x[..., :1]
    s1 = np.cumsum(d, axis=-1)
    mean_d = s1 / k
    ss = np.maximum(np.cumsum(d * d, axis=-1) - s1 * mean_d, 0.0)
    h, bounded = _half_width(k, ss, alpha, c)
    centre = x[..., :1] + mean_d
    # All prefix values equal: the model is degenerate (zero variance); say so, never "exact".
    tied = np.maximum.accumulate(x, axis=-1) == np.minimum.accumulate(x, axis=-1)
    degenerate = tied & bounded
    low = np.where(degenerate, np.nan, centre - h)
    high = np.where(degenerate, np.nan, centre + h)
    return low, high, degenerate


def _warn_degenerate() -> None:
    warnings.warn("all observations are equal: the Gaussian model is degenerate and the confidence "
                  "sequence is undefined (NaN)", RuntimeWarning, stacklevel=3)


def t_mixture_cs(x, *, alpha: float = 0.05, c: float | None = None) -> ConfidenceSequence:
    """Always-valid confidence interval for the mean of iid Gaussian data with unknown variance.

    Parameters
    ----------
    x : array_like, 1-D
        The observations so far (for a comparison, the log ratios of the pairs' run means).
    alpha : float, keyword-only
        The probability that the sequence of intervals ever misses the mean, over all ``n``.
    c : float or None, keyword-only
        Prior precision of the standardized effect; :data:`DEFAULT_C` when None.  It moves the
        ``n`` where the interval is tightest (larger ``c``, later), never its validity.

    Returns
    -------
    ConfidenceSequence
        Unbounded (``-inf``, ``+inf``) while ``((n + c) / c)**((n - 1) / 2) <= 1/alpha``, which
        includes ``n <= 1`` (one observation carries no scale).  NaN bounds with a
        :class:`RuntimeWarning` when all observations are equal and the interval would be bounded.

    Raises
    ------
    ValueError
        When ``alpha`` is not in (0, 1), ``c`` is not a positive finite number, or ``x`` is not
        one-dimensional and finite.

    Notes
    -----
    The interval at ``n`` is ``{mu : M_n(mu) < 1/alpha}`` for the mixture martingale ``M_n`` of
    the module docstring, solved in closed form.  Because ``P(exists n: mu not in CS_n) <=
    alpha``, the interval stays valid at a data-dependent stopping time.

    References
    ----------
    T. L. Lai, "On confidence sequences", Ann. Statist. 4(2), 265-280, 1976.
    H. Wang and A. Ramdas, "Anytime-valid t-tests and confidence sequences for Gaussian means
    with unknown variance", Sequential Analysis (arXiv:2310.03722, v4 2024): the Gaussian mixture
    over the standardized mean with the right Haar mixture over the scale, a test martingale in
    the scale-invariant filtration.
    """
    check_confidence(alpha, "alpha")
    c = _check_c(c)
    a = as_1d(x, "x")
    n = a.size
    if n == 0:
        return ConfidenceSequence(0, float("nan"), -np.inf, np.inf, float(alpha), c)
    xbar = float(np.mean(a))
    ss = float(np.sum((a - xbar) ** 2))
    h, bounded = _half_width(n, ss, alpha, c)
    if bounded and np.ptp(a) == 0:
        _warn_degenerate()
        return ConfidenceSequence(n, xbar, float("nan"), float("nan"), float(alpha), c)
    h = float(h)
    return ConfidenceSequence(n, xbar, xbar - h, xbar + h, float(alpha), c)


def t_mixture_path(x, *, alpha: float = 0.05, c: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The confidence sequence for every prefix ``x[:1], x[:2], ..., x``, vectorised.

    Parameters
    ----------
    x : array_like, 1-D
    alpha, c : keyword-only
        As in :func:`t_mixture_cs`.

    Returns
    -------
    low, high : numpy.ndarray
        ``low[n - 1]``, ``high[n - 1]`` equal ``t_mixture_cs(x[:n])``'s bounds (running sums
        instead of two passes, so to rounding).  One :class:`RuntimeWarning` when some bounded
        prefix has all observations equal (its bounds are NaN).

    Raises
    ------
    ValueError
        As :func:`t_mixture_cs`.
    """
    check_confidence(alpha, "alpha")
    c = _check_c(c)
    a = as_1d(x, "x")
    if a.size == 0:
        return np.empty(0), np.empty(0)
    low, high, degenerate = _path(a, alpha, c)
    if degenerate.any():
        _warn_degenerate()
    return low, high


# ------------------------------------------------------------------------------------------
# The median's confidence sequence (distribution-free)
# ------------------------------------------------------------------------------------------
#
# Written here, not imported: the reference implementation (the ``confseq`` package of Howard
# and Ramdas) is published only as C++ source that needs Boost and a compiler to install, and
# the construction below is a few lines of scipy.special.


def _log_sign_mixture(k, n):
    """Log of the one-sided sign mixture after ``n`` observations of which ``k`` fall on the
    hypothesis' short side: ``int_0^(1/2) (2q)**k (2(1 - q))**(n - k) 2 dq`` (a uniform mixture
    over ``q < 1/2`` of the likelihood ratio of Bernoulli(q) against a fair coin), in closed form
    with the regularized incomplete beta function."""
    from scipy.special import betainc, betaln  # here: importing the module stays light

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore"):
        return (n + 1) * np.log(2.0) + betaln(k + 1, n - k + 1) + np.log(betainc(k + 1, n - k + 1, 0.5))


@functools.lru_cache(maxsize=64)
def _sign_ranks(max_n: int, alpha: float) -> np.ndarray:
    """``r[n - 1]``: the rank of the order statistic that is the median's lower bound after
    ``n`` observations (0 while unbounded): the fewest observations at or below a candidate that
    the one-sided mixture, held under ``2 / alpha``, still accepts.  The mixture falls as ``k``
    grows, so the accepted counts are those from the first accepted one on."""
    limit = np.log(2.0 / alpha)
    ranks = np.zeros(max_n, dtype=np.int64)
    for n in range(1, max_n + 1):
        k = np.arange(n // 2 + 1)
        rejected = _log_sign_mixture(k, n) >= limit
        ranks[n - 1] = int(np.argmin(rejected)) if not rejected.all() else n // 2
    ranks.flags.writeable = False
    return ranks


def sign_cs(x, *, alpha: float = 0.05) -> ConfidenceSequence:
    """Always-valid confidence interval for the median of iid data, whatever their distribution.

    Parameters
    ----------
    x : array_like, 1-D
        The observations so far (for a comparison, the log ratios of the pairs).
    alpha : float, keyword-only
        The probability that the sequence of intervals ever misses the median, over all ``n``
        (``alpha / 2`` on each side).

    Returns
    -------
    ConfidenceSequence
        ``[x_(r), x_(n - r + 1)]``, two order statistics, with ``estimate`` the sample median
        and ``c`` 0 (no prior scale); unbounded (``-inf``, ``+inf``) while ``r`` is 0, which at
        ``alpha = 0.05`` is up to 8 observations, at ``0.025`` up to 9.

    Raises
    ------
    ValueError
        When ``alpha`` is not in (0, 1) or ``x`` is not one-dimensional and finite.

    Notes
    -----
    For a median ``m``, ``Y_i = 1{x_i <= m}`` has ``P(Y_i = 1) >= 1/2`` (ties included).  For
    each ``q <= 1/2`` the product of ``(2q)**Y_i (2(1 - q))**(1 - Y_i)`` is then a nonnegative
    supermartingale (its factor's mean is ``1 - (2p - 1)(1 - 2q) <= 1``), so is its uniform
    mixture over ``q``, and by Ville's inequality it ever reaches ``2 / alpha`` with probability
    at most ``alpha / 2``.  A candidate is excluded from below when it does, and from above by
    the same argument on ``1{x_i >= m}``.  The mixture depends on the candidate only through the
    count at or below it, which gives the two order statistics.

    References
    ----------
    S. R. Howard and A. Ramdas, "Sequential estimation of quantiles with applications to
    A/B-testing and best-arm identification", Bernoulli 28(3), 1704-1728, 2022 (confidence
    sequences for quantiles from mixtures of the Bernoulli likelihood ratio of the empirical
    distribution function); J. Ville, "Etude critique de la notion de collectif", 1939.
    """
    check_confidence(alpha, "alpha")
    a = np.sort(as_1d(x, "x"))
    n = a.size
    if n == 0:
        return ConfidenceSequence(0, float("nan"), -np.inf, np.inf, float(alpha), 0.0, "median", "median")
    r = int(_sign_ranks(n, float(alpha))[n - 1])
    low, high = (float(a[r - 1]), float(a[n - r])) if r > 0 else (-np.inf, np.inf)
    return ConfidenceSequence(n, float(np.median(a)), low, high, float(alpha), 0.0, "median", "median")


def sign_path(x, *, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sign_cs`'s bounds for every prefix along the last axis (any leading shape).

    Returns
    -------
    low, high : numpy.ndarray
        ``low[..., n - 1]``, ``high[..., n - 1]`` equal ``sign_cs(x[..., :n])``'s bounds.
    """
    check_confidence(alpha, "alpha")
    a = np.asarray(x, dtype=float)
    if a.ndim == 0 or not np.isfinite(a).all():
        raise ValueError("`x` must be at least one-dimensional and contain only finite values")
    return _sign_path(a, float(alpha))


def _sign_path(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    n_obs = x.shape[-1]
    low = np.full(x.shape, -np.inf)
    high = np.full(x.shape, np.inf)
    if n_obs == 0:
        return low, high
    ranks = _sign_ranks(n_obs, alpha)
    if x.ndim == 1:  # one sequence: keep its prefix sorted, one insertion a step
        seen: list[float] = []
        lows, highs = [-np.inf] * n_obs, [np.inf] * n_obs
        values = [float(v) for v in x]
        rank_list = [int(v) for v in ranks]
        for i in range(n_obs):
            bisect.insort(seen, values[i])
            r = rank_list[i]
            if r:
                lows[i], highs[i] = seen[r - 1], seen[i + 1 - r]
        return np.array(lows), np.array(highs)
    for n in (int(v) + 1 for v in np.nonzero(ranks)[0]):  # a partial sort of each bounded prefix of every row
        r = int(ranks[n - 1])
        part = np.partition(x[..., :n], (r - 1, n - r), axis=-1)
        low[..., n - 1] = part[..., r - 1]
        high[..., n - 1] = part[..., n - r]
    return low, high


def _combine(mean_low, mean_high, med_low, med_high):
    """The intersection of the two sequences (each at ``alpha / 2``), elementwise; NaN where the
    mean's is NaN (its model degenerate: all observations equal)."""
    low = np.maximum(mean_low, med_low)
    high = np.minimum(mean_high, med_high)
    nan = np.isnan(mean_low) | np.isnan(mean_high)
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def _check_center(center) -> None:
    if center not in CENTERS:
        raise ValueError(f"`center` must be one of {', '.join(map(repr, CENTERS))}")


def _centered_path(x: np.ndarray, alpha: float, c: float, center: str):
    """The bounds of every prefix along the last axis (any leading shape), with the flag of the
    prefixes where the mean's model is degenerate."""
    if center == "median":
        low, high = _sign_path(x, alpha)
        return low, high, np.zeros(x.shape, dtype=bool)
    mean_low, mean_high, degenerate = _path(x, alpha if center == "mean" else alpha / 2, c)
    if center == "mean":
        return mean_low, mean_high, degenerate
    return (*_combine(mean_low, mean_high, *_sign_path(x, alpha / 2)), degenerate)


def centered_path(x, *, alpha: float = 0.05, c: float | None = None,
                  center: str = DEFAULT_CENTER) -> tuple[np.ndarray, np.ndarray]:
    """:func:`centered_cs`'s bounds for every prefix of ``x`` (1-D), vectorised; one
    :class:`RuntimeWarning` where the mean's model is degenerate, as :func:`t_mixture_path`."""
    _check_center(center)
    check_confidence(alpha, "alpha")
    a = as_1d(x, "x")
    if a.size == 0:
        return np.empty(0), np.empty(0)
    low, high, degenerate = _centered_path(a, float(alpha), _check_c(c), center)
    if degenerate.any():
        _warn_degenerate()
    return low, high


def centered_cs(x, *, alpha: float = 0.05, c: float | None = None,
                center: str = DEFAULT_CENTER) -> ConfidenceSequence:
    """The confidence sequence a comparison uses: of the mean, of the median, or both at
    ``alpha / 2`` each, intersected (see the module docstring for when that is valid)."""
    _check_center(center)
    if center == "mean":
        return t_mixture_cs(x, alpha=alpha, c=c)
    if center == "median":
        return sign_cs(x, alpha=alpha)
    check_confidence(alpha, "alpha")
    mean = t_mixture_cs(x, alpha=alpha / 2, c=c)
    med = sign_cs(x, alpha=alpha / 2)
    lo, hi = _combine(np.float64(mean.low), np.float64(mean.high), np.float64(med.low), np.float64(med.high))
    low, high = float(lo), float(hi)
    if np.isnan(low):
        by = "mean"
    else:
        from_mean = (mean.low >= med.low, mean.high <= med.high)
        by = "mean" if all(from_mean) else "median" if not any(from_mean) else "mean and median"
    narrower = mean if (mean.high - mean.low) <= (med.high - med.low) else med
    estimate = narrower.estimate
    if np.isfinite(low) and np.isfinite(high) and low <= high:
        estimate = min(max(estimate, low), high)
    return ConfidenceSequence(mean.n, float(estimate), low, high, float(alpha), mean.c, "both", by)


# ------------------------------------------------------------------------------------------
# The decision
# ------------------------------------------------------------------------------------------


def _decide(low, high, n, *, band: float, min_n: int):
    """The decision rule on arrays: (changed, no_change), both False where undecided."""
    # An empty interval (the mean's and the median's sequences disagree: the log ratios are not
    # symmetric, so they bound two different numbers) decides nothing.
    enough = (n >= min_n) & ~(low > high)
    changed = enough & ((low > 0) | (high < 0))  # NaN compares False: undecided
    no_change = enough & ~changed & (low > -band) & (high < band)
    return changed, no_change


def sequential_decision(log_ratios, *, threshold: float, alpha: float = 0.05, min_n: int = 3,
                        c: float | None = None, center: str = DEFAULT_CENTER) -> SequentialDecision:
    """Decide, after each pair, whether B changed against A, with error rates valid at any stop.

    Parameters
    ----------
    log_ratios : array_like, 1-D
        ``log(mean_B_i / mean_A_i)`` of each pair of interleaved runs so far.
    threshold : float, keyword-only
        Relative change that matters (0.03 = 3%).  0 means "no change" is never decided.
    alpha : float, keyword-only
        Bound on the probability of a wrong decision (see Notes), however often it is consulted.
    min_n : int, keyword-only
        Fewer pairs give ``"undecided"`` whatever the interval says.
    c : float or None, keyword-only
        Prior precision of the mean's confidence sequence (:data:`DEFAULT_C`).
    center : {"both", "mean", "median"}, keyword-only
        What the confidence sequence bounds (:data:`CENTERS`); ``"both"``, the default, holds
        where the log ratios are symmetric (the module docstring), and is as narrow as the
        narrower of the mean's and the median's.

    Returns
    -------
    SequentialDecision

    Raises
    ------
    ValueError
        When ``threshold`` is negative or not finite, ``alpha`` not in (0, 1), ``min_n`` not an
        integer >= 2, ``c`` not positive, ``center`` not one of :data:`CENTERS`, or
        ``log_ratios`` not one-dimensional and finite.

    Notes
    -----
    ``"changed"`` when the confidence sequence of the mean log ratio excludes 0; ``"no change"``
    when it lies strictly inside ``(-log(1 + threshold), log(1 + threshold))``; ``"changed"``
    wins when both hold (the change is real, only smaller than the threshold).  Either decision
    is wrong only if the confidence sequence misses the true mean at the moment it is taken, so
    with the confidence sequence's guarantee the probability of ever deciding wrongly is at most
    ``alpha``, under any stopping rule.

    References
    ----------
    Seed 000 s.3 and s.5 (confidence intervals and their comparison); Lai (1976); Wang and
    Ramdas (2024), see :func:`t_mixture_cs`; Howard and Ramdas (2022), see :func:`sign_cs`.
    """
    threshold = _check_nonnegative(threshold, "threshold")
    check_confidence(alpha, "alpha")
    _check_min_n(min_n)
    cs = centered_cs(as_1d(log_ratios, "log_ratios"), alpha=alpha, c=c, center=center)
    changed, no_change = _decide(np.float64(cs.low), np.float64(cs.high), cs.n,
                                 band=float(np.log1p(threshold)), min_n=min_n)
    decision = "changed" if changed else "no change" if no_change else "undecided"
    with np.errstate(over="ignore"):
        change, lo, hi = (float(np.expm1(v)) for v in (cs.estimate, cs.low, cs.high))
    return SequentialDecision(decision, cs.n, change, lo, hi, threshold, float(alpha), cs)


# ------------------------------------------------------------------------------------------
# Error rates by simulation
# ------------------------------------------------------------------------------------------


def _noise(gen: np.random.Generator, noise: str, shape: tuple[int, int]) -> np.ndarray:
    """Standardized noise (mean 0, sd 1) of the given shape."""
    if noise == "normal":
        return gen.standard_normal(shape)
    if noise == "t5":
        return gen.standard_t(5, shape) / np.sqrt(5.0 / 3.0)
    if noise == "bursts":
        def log_run():
            burst = np.where(gen.random(shape) < _BURST_SHARE, gen.exponential(_BURST_MEAN, shape), 0.0)
            return _BURST_JITTER * gen.standard_normal(shape) + np.log1p(burst)
        return (log_run() - log_run()) / _bursts_sd()
    # lognormal-runs: the log ratio of two run means, each exp(u) * mean of skewed iterations.
    def log_run_mean():
        u = _RUN_SIGMA * gen.standard_normal(shape)
        iterations = np.exp(_ITER_SIGMA * gen.standard_normal((*shape, _ITERATIONS)))
        return u + np.log(iterations.mean(axis=-1))
    return (log_run_mean() - log_run_mean()) / _LOGNORMAL_RUNS_SD


def _simulate_log_ratios(gen: np.random.Generator, *, effect: float, sigma: float, n_sim: int,
                         max_n: int, noise: str) -> np.ndarray:
    # A and B differ only by the scale 1 + effect, so the noise is symmetric about 0 and the
    # true mean log ratio is exactly log(1 + effect).
    return np.log1p(effect) + sigma * _noise(gen, noise, (n_sim, max_n))


def simulate_error_rates(*, effect: float, threshold: float, alpha: float = 0.05, sigma: float = 0.02,
                         max_n: int = 200, n_sim: int = 2000, min_n: int = 3, noise: str = "normal",
                         c: float | None = None, center: str = DEFAULT_CENTER, rng=None) -> SimulationResult:
    """Error rates and pairs used by :func:`sequential_decision` under continuous monitoring.

    Each of ``n_sim`` comparisons draws ``max_n`` log ratios ``log(1 + effect) + sigma * z``,
    applies the decision rule after every pair and stops at the first decision.

    Parameters
    ----------
    effect : float, keyword-only
        True relative change of B against A (> -1).
    threshold, alpha, min_n, c, center : keyword-only
        As in :func:`sequential_decision`.
    sigma : float, keyword-only
        Standard deviation of one log ratio (0.02: a pair's ratio varies by about 2%).
    max_n : int, keyword-only
        Pairs after which an unsettled comparison is reported undecided.
    n_sim : int, keyword-only
    noise : str, keyword-only
        ``"normal"``; ``"t5"``, Student t with 5 degrees of freedom scaled to sd ``sigma``
        (heavy tails); ``"lognormal-runs"``, the log ratio of two run means, each ``exp(u)``
        times the mean of 5 iterations ``exp(W)``, ``u ~ N(0, 0.25**2)``, ``W ~ N(0, 1)``,
        standardized to sd ``sigma``; ``"bursts"``, the log ratio of two runs each slowed, one
        time in five, by an exponential burst of mean 50% of its time (interference that comes
        and goes), over a 1% Gaussian jitter, standardized to sd ``sigma``.
    rng : int, numpy.random.Generator or None, keyword-only

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        For an invalid argument, naming it.
    """
    if not isinstance(effect, numbers.Real) or isinstance(effect, bool) or not np.isfinite(effect) \
            or effect <= -1:
        raise ValueError("`effect` must be a finite number > -1")
    threshold = _check_nonnegative(threshold, "threshold")
    check_confidence(alpha, "alpha")
    if not isinstance(sigma, numbers.Real) or isinstance(sigma, bool) or not np.isfinite(sigma) or sigma <= 0:
        raise ValueError("`sigma` must be a positive finite number")
    check_positive_int(max_n, "max_n")
    check_positive_int(n_sim, "n_sim")
    _check_min_n(min_n)
    if noise not in NOISES:
        raise ValueError(f"`noise` must be one of {', '.join(map(repr, NOISES))}")
    c = _check_c(c)
    gen = make_rng(rng)

    x = _simulate_log_ratios(gen, effect=float(effect), sigma=float(sigma), n_sim=n_sim, max_n=max_n,
                             noise=noise)
    _check_center(center)
    low, high, _ = _centered_path(x, float(alpha), c, center)
    n = np.arange(1, max_n + 1)
    changed, no_change = _decide(low, high, n, band=float(np.log1p(threshold)), min_n=min_n)
    decided = changed | no_change
    settled = decided.any(axis=1)
    first = np.argmax(decided, axis=1)
    rows = np.arange(n_sim)
    is_changed = settled & changed[rows, first]
    is_no_change = settled & no_change[rows, first]
    n_used = np.where(settled, first + 1, max_n)
    decisions = np.where(is_changed, "changed", np.where(is_no_change, "no change", "undecided"))

    mu = float(np.log1p(effect))
    estimate_up = low[rows, first] > 0  # a "changed" CS lies wholly above or wholly below 0
    if effect == 0:
        wrong_changed = is_changed
    else:
        wrong_changed = is_changed & (estimate_up != (mu > 0))
    wrong_no_change = is_no_change & (abs(mu) >= np.log1p(threshold))
    missed = ((low > mu) | (high < mu)).any(axis=1)
    return SimulationResult(
        n_sim=n_sim, effect=float(effect), threshold=threshold, alpha=float(alpha),
        rate_changed=float(is_changed.mean()), rate_no_change=float(is_no_change.mean()),
        rate_undecided=float((~settled).mean()), mean_n=float(n_used.mean()),
        wrong_rate=float((wrong_changed | wrong_no_change).mean()),
        coverage_miss_rate=float(missed.mean()), sigma=float(sigma), noise=noise, max_n=max_n,
        decisions=decisions, n_used=n_used,
    )
