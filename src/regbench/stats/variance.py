"""Did the variance change?  Levene's test with the median (Brown-Forsythe) on two samples.

Seed 003 s.3.3.1 shows that controlling noise sources (quiet system, no address-space
randomisation, CPU pinning, RAM disk) changed the spread of Firefox's measurements with the Levene
test for equality of variances in the Brown and Forsythe variant, which centres each sample on its
median and so stays valid when the measurements are not normal (tables 3 and 4: standard
deviation and coefficient of variation of both setups, and the p-value).  :func:`variance_change`
gives that row for two samples (two versions, or one version measured under two setups), with a
direction: "variance increased" or "variance decreased" when the test rejects at ``alpha``.

The test is :func:`scipy.stats.levene`.  The ratio of standard deviations also gets an
F-based confidence interval; that interval assumes both samples normal (the test does not), so
its method is labelled as such.

References
----------
seed 003 (003_17e43d4a143bef6e.txt), Larres, Potanin, Hirose, "A Study of Performance Variations
in the Mozilla Firefox Web Browser": s.3.3.1 "The Levene Test", tables 3 and 4.
Levene, "Robust tests for equality of variances" (1960); Brown and Forsythe, "Robust tests for
the equality of variances", JASA 69(346), 1974.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ._validate import as_1d, check_confidence

#: Verdicts of :func:`variance_change`.
VARIANCE_VERDICTS = ("variance decreased", "variance increased", "no evidence of a change", "undecidable")

#: Name of the test for each ``center``.
TEST_NAMES = {"median": "Brown-Forsythe", "mean": "Levene"}

#: ``ratio_ci_method`` of an interval computed from the F distribution.
F_INTERVAL = "F (assumes normality)"


@dataclass(frozen=True)
class VarianceComparison:
    """Whether the spread of B differs from the spread of A.

    Attributes
    ----------
    n_a, n_b : int
        Sample sizes.
    sd_a, sd_b : float
        Standard deviations (``ddof=1``); NaN with fewer than two values.
    cv_a, cv_b : float
        Coefficients of variation ``sd / |mean|``; NaN when the mean is 0 or ``sd`` is NaN.
    ratio : float
        ``sd_b / sd_a`` (``inf`` when only A is constant; NaN when both are).
    ratio_ci_low, ratio_ci_high : float
        Two-sided interval of the ratio of population standard deviations at level
        ``confidence_level``, from the F distribution of the variance ratio.  It is exact for
        normal samples only (``ratio_ci_method``); NaN when a side is constant or too small.
    ratio_ci_method : str
        :data:`F_INTERVAL`, or ``"none"`` when the interval is NaN.
    confidence_level : float
        ``1 - alpha``.
    spread_a, spread_b : float
        Mean absolute deviation from the ``center`` of each sample: the quantities the test
        compares, and what decides the direction of the verdict.
    statistic, pvalue : float
        Levene's W (an ANOVA F on the absolute deviations) and its p-value; NaN when undecidable.
    center : str
        ``"median"`` or ``"mean"``.
    test : str
        ``"Brown-Forsythe"`` (median) or ``"Levene"`` (mean).
    alpha : float
        Significance level of the verdict.
    verdict : str
        One of :data:`VARIANCE_VERDICTS`: ``"variance increased"`` / ``"variance decreased"``
        when ``pvalue < alpha`` (B's spread larger / smaller than A's), ``"no evidence of a
        change"`` otherwise, ``"undecidable"`` when the test is undefined on these data.
    """

    n_a: int
    n_b: int
    sd_a: float
    sd_b: float
    cv_a: float
    cv_b: float
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    ratio_ci_method: str
    confidence_level: float
    spread_a: float
    spread_b: float
    statistic: float
    pvalue: float
    center: str
    test: str
    alpha: float
    verdict: str


def _check_options(center, alpha) -> None:
    if not isinstance(center, str) or center not in TEST_NAMES:
        raise ValueError("`center` must be 'median' or 'mean'")
    check_confidence(alpha, "alpha")


def _sd_cv(x: np.ndarray) -> tuple[float, float]:
    if x.size < 2:
        return float("nan"), float("nan")
    # np.std of a constant sample can be 1e-15, not 0 (rounding of the mean): make it exact.
    sd = 0.0 if np.ptp(x) == 0 else float(np.std(x, ddof=1))
    mean = float(np.mean(x))
    return sd, (sd / abs(mean) if mean != 0 else float("nan"))


def _spread(x: np.ndarray, center: str) -> float:
    if x.size == 0:
        return float("nan")
    c = np.median(x) if center == "median" else np.mean(x)
    return float(np.mean(np.abs(x - c)))


def _ratio_interval(sd_a: float, sd_b: float, n_a: int, n_b: int, level: float) -> tuple[float, float]:
    """Interval of sigma_b / sigma_a: (s_b^2/s_a^2) / (sigma_b^2/sigma_a^2) ~ F(n_b - 1, n_a - 1)."""
    from scipy.stats import f as _f

    if not (n_a >= 2 and n_b >= 2 and sd_a > 0 and sd_b > 0):
        return float("nan"), float("nan")
    r2 = (sd_b / sd_a) ** 2
    q = (1 - level) / 2
    lo_f, hi_f = _f.ppf(np.array([q, 1 - q]), n_b - 1, n_a - 1)
    return float(np.sqrt(r2 / hi_f)), float(np.sqrt(r2 / lo_f))


def variance_change(a, b, *, center: str = "median", alpha: float = 0.05) -> VarianceComparison:
    """Compare the spread of sample ``b`` with that of sample ``a``.

    Parameters
    ----------
    a, b : array_like, 1-D
        Finite measurements of side A (before) and side B (after): one value per run (run means)
        or every measured iteration, of two versions or of one version under two setups.
    center : {"median", "mean"}, keyword-only
        Centre of the absolute deviations: ``"median"`` is the Brown-Forsythe test that seed 003
        uses (robust to non-normal data, the default); ``"mean"`` is Levene's original test.
    alpha : float, keyword-only
        Significance level of the verdict, in (0, 1); the ratio interval has level ``1 - alpha``.

    Returns
    -------
    VarianceComparison
        With NaN statistic and p-value, verdict ``"undecidable"`` and a :class:`RuntimeWarning`
        when a side has fewer than two values, when every value of both sides is the same, or
        when the test is otherwise undefined (no variation of the absolute deviations within
        either side, as with two values per side and ``center="median"``).  A side that is
        constant while the other is not is a valid comparison (seed 003 table 3, v8).

    Raises
    ------
    ValueError
        When a sample is not 1-D or not finite, or an option is invalid.

    References
    ----------
    seed 003 (003_17e43d4a143bef6e.txt) s.3.3.1 and tables 3-4; Brown and Forsythe (1974).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> r = variance_change(rng.normal(10, 1, 30), rng.normal(10, 3, 30))
    >>> r.test, r.verdict
    ('Brown-Forsythe', 'variance increased')
    """
    x = as_1d(a, "a")
    y = as_1d(b, "b")
    _check_options(center, alpha)
    nan = float("nan")
    sd_a, cv_a = _sd_cv(x)
    sd_b, cv_b = _sd_cv(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = float(np.float64(sd_b) / np.float64(sd_a))
    level = 1.0 - float(alpha)
    lo, hi = _ratio_interval(sd_a, sd_b, x.size, y.size, level)
    method = F_INTERVAL if np.isfinite(lo) else "none"
    stat = p = nan
    why = ""
    if x.size < 2 or y.size < 2:
        why = "each side needs at least two values"
    elif np.ptp(x) == 0 and np.ptp(y) == 0:
        why = "every value of both sides is the same"
    else:
        from scipy import stats as _st  # here: scipy.stats costs ~1 s of CLI start-up

        with warnings.catch_warnings():
            # Division by a zero within-side variation of the deviations: undefined, handled below.
            warnings.simplefilter("ignore", RuntimeWarning)
            # ``center`` was checked to be one of the two; levene's signature wants the literal.
            res = _st.levene(x, y, center="median" if center == "median" else "mean")
        stat, p = float(res.statistic), float(res.pvalue)
        if not (np.isfinite(stat) and np.isfinite(p)):
            stat = p = nan
            why = "the absolute deviations do not vary within either side"
    if why:
        warnings.warn(f"variance_change: undecidable, {why}", RuntimeWarning, stacklevel=2)
        verdict = "undecidable"
    spread_a, spread_b = _spread(x, center), _spread(y, center)
    if not why:
        if p < alpha:
            verdict = "variance increased" if spread_b > spread_a else "variance decreased"
        else:
            verdict = "no evidence of a change"
    return VarianceComparison(
        n_a=int(x.size), n_b=int(y.size), sd_a=sd_a, sd_b=sd_b, cv_a=cv_a, cv_b=cv_b, ratio=ratio,
        ratio_ci_low=lo, ratio_ci_high=hi, ratio_ci_method=method, confidence_level=level,
        spread_a=spread_a, spread_b=spread_b, statistic=stat, pvalue=p, center=center,
        test=TEST_NAMES[center], alpha=float(alpha), verdict=verdict,
    )
