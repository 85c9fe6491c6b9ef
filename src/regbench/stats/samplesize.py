"""Observations needed to estimate a quantile to a given proportion precision (Chen and Kelton).

Seed 001 s.3.2 estimates the median operation duration of a run by order statistics and sizes
the run with the fixed-sample-size rule of Chen and Kelton, which bounds the *proportion*
half-width ``eps'``: with confidence ``1 - alpha`` the estimated ``p`` quantile lies between the
true ``p - eps'`` and ``p + eps'`` quantiles, whatever the unit and scale of the data::

    n_p >= z_{1 - alpha/2}^2 * p * (1 - p) / eps'^2

For the median at 95% with ``eps' = 0.005`` the paper needs 38,416 observations, and it uses
65,536 "for which the confidence level borders with 99%".

References
----------
seed 001 (001_0c28a3a14a5fab8a.txt), Bulej, Kalibera, Tuma: s.3.2 "Collecting Observations";
Chen and Kelton, "Simulation-based estimation of quantiles", Winter Simulation Conference 1999
(reference [3] of seed 001).
"""

from __future__ import annotations

import math
import numbers

from scipy import stats as _st

from ._validate import check_confidence, check_positive_int


def _check_p_and_width(p: float, half_width: float) -> None:
    if not isinstance(p, numbers.Real) or not 0 < p < 1:
        raise ValueError("`p` must be in (0, 1)")
    if not isinstance(half_width, numbers.Real) or not 0 < half_width < 1:
        raise ValueError("`half_width` must be in (0, 1)")


def _z(confidence_level: float, z_decimals: int | None) -> float:
    z = float(_st.norm.ppf(0.5 + confidence_level / 2))
    return z if z_decimals is None else round(z, z_decimals)


def quantile_sample_size(p: float = 0.5, *, confidence_level: float = 0.95, half_width: float = 0.005,
                         z_decimals: int | None = 2) -> int:
    """Smallest number of i.i.d. observations for a ``p`` quantile with proportion half-width.

    ``n = ceil(z^2 p (1 - p) / half_width^2)`` with ``z`` the ``1 - alpha/2`` normal quantile
    (Chen and Kelton, as used by seed 001 s.3.2).

    Parameters
    ----------
    p : float
        The quantile (0.5: the median).
    confidence_level : float, keyword-only
        ``1 - alpha``.
    half_width : float, keyword-only
        ``eps'``: the maximum *proportion* half-width, a distance in probability, not in the
        unit of the data (0.005: the estimate lies between the true 0.495 and 0.505 quantiles).
    z_decimals : int or None, keyword-only
        Decimals ``z`` is rounded to before use.  The default 2 rounds it as printed tables do,
        as the paper did: ``z = 1.96`` at 95% gives its 38,416 exactly.  ``None`` uses the exact
        quantile 1.959964, which gives 38,415.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        For ``p`` or ``half_width`` outside (0, 1), an invalid ``confidence_level`` or
        ``z_decimals``.

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.3.2; Chen and Kelton (1999).
    """
    _check_p_and_width(p, half_width)
    check_confidence(confidence_level)
    if z_decimals is not None:
        if not isinstance(z_decimals, numbers.Integral) or isinstance(z_decimals, bool) or z_decimals < 0:
            raise ValueError("`z_decimals` must be a non-negative integer or None")
    z = _z(confidence_level, z_decimals)
    n = z * z * p * (1 - p) / (half_width * half_width)
    # With rounded z the bound is often an exact integer (1.96^2 * 0.25 / 0.005^2 = 38,416) that
    # floating point lands a hair above or below (38415.99999999999 here): round it before ceil.
    return max(1, math.ceil(round(n, 6)))


def quantile_confidence(n: int, p: float = 0.5, *, half_width: float = 0.005) -> float:
    """Confidence level that ``n`` observations give a ``p`` quantile (the inverse rule).

    ``1 - alpha = 2 Phi(half_width * sqrt(n / (p (1 - p)))) - 1``.  For the paper's 65,536
    observations of the median with ``half_width = 0.005``, ``z = 2.56`` and the level is
    0.9895: it "borders with 99%" (seed 001 s.3.2).

    Parameters
    ----------
    n : int
        Number of observations.
    p : float
        The quantile.
    half_width : float, keyword-only
        The proportion half-width ``eps'``.

    Returns
    -------
    float

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.3.2; Chen and Kelton (1999).
    """
    check_positive_int(n, "n")
    _check_p_and_width(p, half_width)
    z = half_width * math.sqrt(n / (p * (1 - p)))
    return float(2 * _st.norm.cdf(z) - 1)
