"""Classifying outliers in benchmark samples: reported with their indices, never dropped.

Measurements of real systems have outliers, and in benchmarks they can be "several orders of
magnitude longer than in most other cases" (seed 000 s.4.2): rare, but they move means a lot.
regbench keeps every measurement (DESIGN.md "Data"), so these functions only *classify*: they
return masks, indices, fences and counts, and leave the choice of a robust estimator (the median,
or the resampling preprocessing of :func:`~regbench.stats.robust_summary`) to the caller.

Two rules:

* Tukey's fences on the quartiles: beyond ``k = 1.5`` interquartile ranges from the quartiles a
  value is a *mild* outlier, beyond ``k = 3`` an *extreme* one (Tukey 1977).
* The modified z-score ``M = 0.6745 (x - median) / MAD`` with ``|M| > 3.5`` an outlier
  (Iglewicz and Hoaglin 1993); 0.6745 is the constant of their definition (the 0.75 normal
  quantile, so that ``MAD / 0.6745`` estimates the standard deviation of normal data).

References
----------
seed 000 (000_833974a369fcaf36.txt), Kalibera, Bulej, Tuma: s.4.2 "Data Preprocessing".
Tukey, *Exploratory Data Analysis* (1977), ch. 2; Iglewicz and Hoaglin, *How to Detect and Handle
Outliers* (1993), s.3.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ._validate import as_1d

#: Iglewicz and Hoaglin's constant in the modified z-score.
MODIFIED_Z_CONSTANT = 0.6745


@dataclass(frozen=True)
class TukeyOutliers:
    """Tukey's fences and the samples beyond them.

    Attributes
    ----------
    q1, q3, iqr : float
        Quartiles (numpy's default linear interpolation) and their difference.
    k_inner, k_outer : float
        Fence multipliers (1.5 and 3 by default).
    inner_low, inner_high, outer_low, outer_high : float
        ``q1 - k iqr`` and ``q3 + k iqr`` for each ``k``.
    mild : numpy.ndarray of bool
        Beyond an inner fence but not beyond the outer one.
    extreme : numpy.ndarray of bool
        Beyond an outer fence.
    low, high : numpy.ndarray of bool
        Outliers (mild or extreme) below the lower and above the upper inner fence.
    """

    q1: float
    q3: float
    iqr: float
    k_inner: float
    k_outer: float
    inner_low: float
    inner_high: float
    outer_low: float
    outer_high: float
    mild: np.ndarray
    extreme: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def outliers(self) -> np.ndarray:
        """Mask of all outliers, mild or extreme."""
        return self.mild | self.extreme

    @property
    def mild_indices(self) -> np.ndarray:
        return np.flatnonzero(self.mild)

    @property
    def extreme_indices(self) -> np.ndarray:
        return np.flatnonzero(self.extreme)

    @property
    def indices(self) -> np.ndarray:
        """Indices of all outliers, in sample order."""
        return np.flatnonzero(self.outliers)

    @property
    def n_mild(self) -> int:
        return int(self.mild.sum())

    @property
    def n_extreme(self) -> int:
        return int(self.extreme.sum())

    @property
    def n_low(self) -> int:
        return int(self.low.sum())

    @property
    def n_high(self) -> int:
        return int(self.high.sum())

    @property
    def n_outliers(self) -> int:
        return self.n_mild + self.n_extreme

    @property
    def labels(self) -> np.ndarray:
        """``"inlier"``, ``"mild"`` or ``"extreme"`` for every sample."""
        out = np.full(self.mild.shape, "inlier", dtype=object)
        out[self.mild] = "mild"
        out[self.extreme] = "extreme"
        return out


@dataclass(frozen=True)
class MadOutliers:
    """Modified z-scores and the samples they flag (Iglewicz and Hoaglin).

    Attributes
    ----------
    median : float
    mad : float
        Median absolute deviation from the median (unscaled).
    threshold : float
        ``|M|`` above which a sample is an outlier (3.5 by default).
    scores : numpy.ndarray
        ``M = 0.6745 (x - median) / MAD`` for every sample (NaN when ``MAD`` is 0).
    low_fence, high_fence : float
        ``median -/+ threshold MAD / 0.6745``: the values where ``|M|`` reaches the threshold.
    outliers, low, high : numpy.ndarray of bool
        All outliers, and those below and above the median.
    """

    median: float
    mad: float
    threshold: float
    scores: np.ndarray
    low_fence: float
    high_fence: float
    outliers: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def indices(self) -> np.ndarray:
        return np.flatnonzero(self.outliers)

    @property
    def n_outliers(self) -> int:
        return int(self.outliers.sum())

    @property
    def n_low(self) -> int:
        return int(self.low.sum())

    @property
    def n_high(self) -> int:
        return int(self.high.sum())


def _check_nonempty(sample) -> np.ndarray:
    x = as_1d(sample, "sample")
    if x.size == 0:
        raise ValueError("`sample` must not be empty")
    return x


def _check_positive(value, name: str) -> None:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not float(value) > 0:
        raise ValueError(f"`{name}` must be a positive number")


def tukey_outliers(sample, *, k_inner: float = 1.5, k_outer: float = 3.0) -> TukeyOutliers:
    """Classify samples by Tukey's inner and outer fences.

    Parameters
    ----------
    sample : array_like, 1-D
        Finite values, e.g. the iterations of one run.
    k_inner, k_outer : float, keyword-only
        Multiples of the interquartile range beyond the quartiles; ``0 < k_inner <= k_outer``.

    Returns
    -------
    TukeyOutliers
        Every sample keeps its place; nothing is removed.  With an interquartile range of 0
        (more than half the values equal, common with coarse timers) every other value is
        outside the fences: that is what the rule says, so it is reported as such.

    Raises
    ------
    ValueError
        For an empty, non-1-D or non-finite sample, or invalid multipliers.

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.4.2; Tukey (1977).
    """
    x = _check_nonempty(sample)
    _check_positive(k_inner, "k_inner")
    _check_positive(k_outer, "k_outer")
    if k_outer < k_inner:
        raise ValueError("`k_outer` must be at least `k_inner`")
    q1, q3 = (float(v) for v in np.percentile(x, [25, 75]))
    iqr = q3 - q1
    inner_low, inner_high = q1 - k_inner * iqr, q3 + k_inner * iqr
    outer_low, outer_high = q1 - k_outer * iqr, q3 + k_outer * iqr
    extreme = (x < outer_low) | (x > outer_high)
    beyond_inner = (x < inner_low) | (x > inner_high)
    return TukeyOutliers(q1, q3, iqr, float(k_inner), float(k_outer), inner_low, inner_high,
                         outer_low, outer_high, beyond_inner & ~extreme, extreme,
                         x < inner_low, x > inner_high)


def mad_outliers(sample, *, threshold: float = 3.5) -> MadOutliers:
    """Classify samples by the modified z-score ``|0.6745 (x - median) / MAD| > threshold``.

    Parameters
    ----------
    sample : array_like, 1-D
        Finite values.
    threshold : float, keyword-only
        3.5, as recommended by Iglewicz and Hoaglin.

    Returns
    -------
    MadOutliers
        When the MAD is 0 (more than half the values equal) the score is undefined: scores and
        fences are NaN, nothing is flagged, and a :class:`RuntimeWarning` says so (use
        :func:`tukey_outliers` on such data).

    Raises
    ------
    ValueError
        For an empty, non-1-D or non-finite sample, or a non-positive threshold.

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.4.2; Iglewicz and Hoaglin (1993) s.3.
    """
    x = _check_nonempty(sample)
    _check_positive(threshold, "threshold")
    median = float(np.median(x))
    mad = float(np.median(np.abs(x - median)))
    none = np.zeros(x.shape, dtype=bool)
    if mad == 0:
        warnings.warn("the MAD is zero (more than half the values are equal): modified z-scores "
                      "are undefined; use tukey_outliers", RuntimeWarning, stacklevel=2)
        nan = float("nan")
        return MadOutliers(median, mad, float(threshold), np.full(x.shape, np.nan), nan, nan,
                           none, none.copy(), none.copy())
    scores = MODIFIED_Z_CONSTANT * (x - median) / mad
    reach = threshold * mad / MODIFIED_Z_CONSTANT
    flagged = np.abs(scores) > threshold
    return MadOutliers(median, mad, float(threshold), scores, median - reach, median + reach,
                       flagged, flagged & (x < median), flagged & (x > median))
