"""Auto-dependence of the samples of one run (seed 000 s.4.1).

The precision of seed 000 s.3 assumes that the samples of a run are independent.  They often are
not: in the FFT benchmark "observing a value from a particular cluster restricts the possible
value of the next observation to a specific cluster" (seed 000 s.4.1, fig. 4), while a randomly
reordered copy of the same run shows no such pattern (fig. 5).  This module gives the tools to see
and test that:

* :func:`autocorrelation`: the autocorrelation function with confidence bands (statsmodels);
* :func:`lag_plot`: the pairs ``(x[t], x[t + k])`` of the run and of a seeded random reordering,
  the data of figs. 4 and 5;
* :func:`ljung_box`: the Ljung-Box portmanteau test (statsmodels);
* :func:`runs_test`: the Wald-Wolfowitz runs test above and below the median;
* :func:`reordering_comparison`: all of the above on the run and on its random reordering side by
  side.  Reordering keeps the distribution and destroys the order, so whatever dependence the
  run shows and its reordering does not comes from the order of the samples.

statsmodels is imported inside the functions that use it, so ``import regbench.stats`` stays light.

References
----------
seed 000 (000_833974a369fcaf36.txt), Kalibera, Bulej, Tuma, "Automated Detection of Performance
Regressions: The Mono Experience": s.4 (independence assumption), s.4.1 (lag plots, figs. 4-5).

Ljung, Box, "On a measure of lack of fit in time series models", Biometrika 65 (1978).
Wald, Wolfowitz, "On a test whether two samples are from the same population", Ann. Math.
Statist. 11 (1940).  NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.5.13 "Runs test".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from ._validate import as_1d, check_confidence, check_positive_int, make_rng


@dataclass(frozen=True)
class Autocorrelation:
    """Sample autocorrelation function (result of :func:`autocorrelation`).

    Attributes
    ----------
    lags : numpy.ndarray
        ``0 .. nlags``.
    acf : numpy.ndarray
        ``r_k = sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2`` (``acf[0] == 1``).
    ci_low, ci_high : numpy.ndarray
        Confidence interval of each ``r_k`` from statsmodels (Bartlett's variance
        ``(1 + 2 sum_{j<k} r_j^2) / n``, so the band widens with the lag).
    white_noise_band : float
        Half-width ``z / sqrt(n)`` of the band within which ``r_k`` of white noise falls with
        probability ``confidence_level`` (the dashed lines of a correlogram).
    confidence_level : float
    n : int
        Sample size.
    """

    lags: np.ndarray
    acf: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    white_noise_band: float
    confidence_level: float
    n: int

    @property
    def outside_band(self) -> np.ndarray:
        """Lags ``k >= 1`` whose ``r_k`` lies outside the white-noise band."""
        return self.lags[1:][np.abs(self.acf[1:]) > self.white_noise_band]


@dataclass(frozen=True)
class LagPlot:
    """Points of a lag plot of a run and of its random reordering (seed 000 figs. 4 and 5).

    Attributes
    ----------
    lag : int
    x, y : numpy.ndarray
        ``sample[:-lag]`` and ``sample[lag:]``: plot ``y`` against ``x``.
    reordered_x, reordered_y : numpy.ndarray
        The same for ``sample[order]``.
    order : numpy.ndarray
        The random permutation used (seeded by ``rng``), so the figure can be reproduced.
    """

    lag: int
    x: np.ndarray
    y: np.ndarray
    reordered_x: np.ndarray
    reordered_y: np.ndarray
    order: np.ndarray


@dataclass(frozen=True)
class LjungBoxResult:
    """Ljung-Box test of no autocorrelation up to each lag (result of :func:`ljung_box`).

    Attributes
    ----------
    lags : numpy.ndarray
        The lags ``h`` tested, ``1 .. max_lag``.
    statistic : numpy.ndarray
        ``Q(h) = n (n + 2) sum_{k=1..h} r_k^2 / (n - k)``.
    p_value : numpy.ndarray
        ``P(chi2_h > Q(h))``.
    """

    lags: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray

    @property
    def max_lag_p_value(self) -> float:
        """The p-value at the largest lag tested (the usual single answer)."""
        return float(self.p_value[-1])


@dataclass(frozen=True)
class RunsTestResult:
    """Wald-Wolfowitz runs test above/below the median (result of :func:`runs_test`).

    Attributes
    ----------
    n_runs : int
        ``R``, the number of maximal blocks of consecutive samples on the same side of the median.
    n_above, n_below : int
        ``n1`` and ``n2``; samples equal to the median are dropped.
    expected : float
        ``E[R] = 2 n1 n2 / (n1 + n2) + 1`` under independence.
    variance : float
        ``Var[R] = 2 n1 n2 (2 n1 n2 - n1 - n2) / ((n1 + n2)^2 (n1 + n2 - 1))``.
    statistic : float
        ``z = (R - E[R]) / sqrt(Var[R])``; negative when runs are too few (values stick together,
        positive auto-dependence), positive when too many (values alternate).
    p_value : float
        Two-sided, from the normal approximation.
    cutoff : float
        The median.
    """

    n_runs: int
    n_above: int
    n_below: int
    expected: float
    variance: float
    statistic: float
    p_value: float
    cutoff: float


@dataclass(frozen=True)
class ReorderingComparison:
    """A run next to a random reordering of it (result of :func:`reordering_comparison`).

    Attributes
    ----------
    lag1, reordered_lag1 : float
        Lag-1 autocorrelation of the run and of the reordering.
    acf, reordered_acf : Autocorrelation
    ljung_box, reordered_ljung_box : LjungBoxResult
    runs, reordered_runs : RunsTestResult
    lag_plot : LagPlot
        Lag-1 plot data of both (the reordering is the same permutation everywhere).
    """

    lag1: float
    reordered_lag1: float
    acf: Autocorrelation
    reordered_acf: Autocorrelation
    ljung_box: LjungBoxResult
    reordered_ljung_box: LjungBoxResult
    runs: RunsTestResult
    reordered_runs: RunsTestResult
    lag_plot: LagPlot

    @property
    def order_matters(self) -> bool:
        """The run's Ljung-Box test rejects independence at 1% and its reordering's does not."""
        return self.ljung_box.max_lag_p_value < 0.01 <= self.reordered_ljung_box.max_lag_p_value


def _default_lags(n: int) -> int:
    # min(10, n/5): the common recommendation for non-seasonal series (Hyndman and
    # Athanasopoulos, "Forecasting: principles and practice", 5.4); more lags dilute the test.
    return max(1, min(10, n // 5))


def _check_lag(value, name: str, n: int) -> int:
    check_positive_int(value, name)
    if value >= n:
        raise ValueError(f"`{name}` must be smaller than the sample size ({n})")
    return int(value)


def _constant(x: np.ndarray) -> bool:
    if x.size < 3 or np.ptp(x) == 0:
        warnings.warn("fewer than three samples or a constant sample: auto-dependence is undefined",
                      RuntimeWarning, stacklevel=3)
        return True
    return False


def autocorrelation(sample, *, nlags: int | None = None, confidence_level: float = 0.95) -> Autocorrelation:
    """Autocorrelation function of a run with confidence bands.

    Parameters
    ----------
    sample : array_like, 1-D
        The samples of one run, in measurement order.
    nlags : int, keyword-only
        Largest lag; default ``min(10 log10(n), n - 1)`` as statsmodels does.
    confidence_level : float, keyword-only

    Returns
    -------
    Autocorrelation
        All NaN with a :class:`RuntimeWarning` for a constant sample or fewer than 3 samples.

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.4.1; computed by ``statsmodels.tsa.stattools.acf``.
    """
    x = as_1d(sample, "sample")
    check_confidence(confidence_level)
    n = x.size
    if nlags is None:
        nlags = max(1, min(int(10 * np.log10(max(n, 1))), n - 1))
    else:
        nlags = _check_lag(nlags, "nlags", max(n, 1))
    lags = np.arange(nlags + 1)
    band = float(_st.norm.ppf(0.5 + confidence_level / 2) / np.sqrt(n)) if n else float("nan")
    if _constant(x):
        nan = np.full(lags.size, np.nan)
        return Autocorrelation(lags, nan, nan, nan.copy(), band, confidence_level, n)
    from statsmodels.tsa.stattools import acf

    kwargs = dict(nlags=nlags, alpha=1 - confidence_level, fft=True)
    try:
        r, ci = acf(x, result_object=False, **kwargs)
    except TypeError:  # statsmodels < 0.15 has no `result_object` and returns the tuple
        r, ci = acf(x, **kwargs)
    return Autocorrelation(lags, np.asarray(r), np.asarray(ci[:, 0]), np.asarray(ci[:, 1]), band,
                           confidence_level, n)


def lag_plot(sample, *, lag: int = 1, rng=None) -> LagPlot:
    """Lag-plot data of a run and of a seeded random reordering (seed 000 s.4.1, figs. 4-5).

    Parameters
    ----------
    sample : array_like, 1-D
    lag : int, keyword-only
    rng : int, numpy.random.Generator or None, keyword-only
        Seeds the permutation.

    Returns
    -------
    LagPlot
    """
    x = as_1d(sample, "sample")
    lag = _check_lag(lag, "lag", x.size)
    order = make_rng(rng).permutation(x.size)
    xr = x[order]
    return LagPlot(lag, x[:-lag], x[lag:], xr[:-lag], xr[lag:], order)


def ljung_box(sample, *, max_lag: int | None = None) -> LjungBoxResult:
    """Ljung-Box test of independence up to ``max_lag`` (statsmodels ``acorr_ljungbox``).

    Parameters
    ----------
    sample : array_like, 1-D
    max_lag : int, keyword-only
        Default ``min(10, n // 5)``.

    Returns
    -------
    LjungBoxResult
        NaN with a :class:`RuntimeWarning` for a constant sample or fewer than 3 samples.

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.4 (independence); Ljung and Box (1978).
    """
    x = as_1d(sample, "sample")
    max_lag = _default_lags(x.size) if max_lag is None else _check_lag(max_lag, "max_lag", max(x.size, 1))
    lags = np.arange(1, max_lag + 1)
    if _constant(x):
        return LjungBoxResult(lags, np.full(lags.size, np.nan), np.full(lags.size, np.nan))
    from statsmodels.stats.diagnostic import acorr_ljungbox

    df = acorr_ljungbox(x, lags=lags, return_df=True)
    return LjungBoxResult(lags, df["lb_stat"].to_numpy(dtype=float), df["lb_pvalue"].to_numpy(dtype=float))


def runs_test(sample) -> RunsTestResult:
    """Wald-Wolfowitz runs test of randomness above/below the median.

    Samples equal to the median are dropped (as R ``randtests::runs.test`` does).  The p-value is
    two-sided from the normal approximation, accurate for ``n1, n2 > 10`` or so (NIST handbook
    1.3.5.13); no continuity correction.

    Written here because no maintained library has it: scipy has none, and statsmodels' is in
    ``statsmodels.sandbox`` (``runstest_1samp``), which that project documents as unreviewed code
    without a stable API.

    Parameters
    ----------
    sample : array_like, 1-D
        The samples of one run, in measurement order.

    Returns
    -------
    RunsTestResult
        NaN statistic and p-value with a :class:`RuntimeWarning` when one side of the median is
        empty (a constant sample).
    """
    x = as_1d(sample, "sample")
    if x.size == 0:
        raise ValueError("`sample` must not be empty")
    cutoff = float(np.median(x))
    above = x[x != cutoff] > cutoff
    n1 = int(above.sum())
    n2 = int(above.size - n1)
    if n1 == 0 or n2 == 0:
        warnings.warn("no samples on one side of the median: the runs test is undefined",
                      RuntimeWarning, stacklevel=2)
        nan = float("nan")
        return RunsTestResult(1 if above.size else 0, n1, n2, nan, nan, nan, nan, cutoff)
    r = int(1 + np.count_nonzero(above[1:] != above[:-1]))
    n = n1 + n2
    mean = 2.0 * n1 * n2 / n + 1.0
    var = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n) / (n * n * (n - 1.0))
    z = (r - mean) / np.sqrt(var) if var > 0 else float("nan")
    p = float(2 * _st.norm.sf(abs(z))) if var > 0 else float("nan")
    return RunsTestResult(r, n1, n2, float(mean), float(var), float(z), p, cutoff)


def reordering_comparison(sample, *, nlags: int | None = None, max_lag: int | None = None,
                          confidence_level: float = 0.95, rng=None) -> ReorderingComparison:
    """Auto-dependence of a run against a seeded random reordering of it (seed 000 s.4.1).

    The reordering "represents the scenario where the individual measurements are independent"
    (seed 000 s.4.1, fig. 5): the same values, in random order.  Lag-1 autocorrelation, the ACF,
    Ljung-Box and the runs test are computed on both.

    Parameters
    ----------
    sample : array_like, 1-D
    nlags : int, keyword-only
        For :func:`autocorrelation`.
    max_lag : int, keyword-only
        For :func:`ljung_box`.
    confidence_level : float, keyword-only
        For the ACF bands.
    rng : int, numpy.random.Generator or None, keyword-only
        Seeds the permutation.

    Returns
    -------
    ReorderingComparison

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.4.1, figs. 4 and 5.
    """
    x = as_1d(sample, "sample")
    if x.size < 2:
        raise ValueError("`sample` must have at least two samples")
    plot = lag_plot(x, lag=1, rng=rng)
    xr = x[plot.order]
    a, ar = (autocorrelation(v, nlags=nlags, confidence_level=confidence_level) for v in (x, xr))
    lb, lbr = (ljung_box(v, max_lag=max_lag) for v in (x, xr))
    rt, rtr = runs_test(x), runs_test(xr)
    lag1 = float(a.acf[1]) if a.acf.size > 1 else float("nan")
    lag1r = float(ar.acf[1]) if ar.acf.size > 1 else float("nan")
    return ReorderingComparison(lag1, lag1r, a, ar, lb, lbr, rt, rtr, plot)
