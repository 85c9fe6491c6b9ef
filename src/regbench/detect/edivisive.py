"""``edivisive``: E-Divisive change points over a whole history.

Where ``ci-overlap`` and ``bootstrap-ci`` compare each version with the one before it, this
detector divides the whole history of a series into segments of constant performance
(Matteson and James 2014, s.3; :func:`regbench.stats.changepoint.e_divisive`).  It therefore also
finds creeping degradations, "a sequence of individually negligible changes over a long period
of time" (seed 001, 001_0c28a3a14a5fab8a.txt, s.2.3): no step between consecutive versions is
significant, but the versions before the creep and the versions after it differ.

The observation of a version is its central value, the mean of its run means (runs are the unit
of replication, seed 000 s.2); versions without successful runs are skipped and the comparison
bridges them.  For each change point:

* ``version`` is the first version of the new segment, ``previous`` the last one of the old;
* ``change`` is the relative change between the means of the two adjacent segments (the old
  segment from the change point before, the new one up to the change point after);
* ``ci_low``/``ci_high`` is a Welch interval for that ratio at ``confidence_level``: the delta
  method on the two segment means with the versions as replicates and a Student-t quantile with
  Welch-Satterthwaite degrees of freedom.  Versions, not runs, are the replicates here because
  the versions of one segment share a level only up to version-to-version noise (builds, code
  layout), which pooling their runs would hide;
* ``p_value`` is the permutation p-value of the change point (a multiple of
  ``1 / (n_permutations + 1)``), conditional on the change points found before it.

Changes whose magnitude is below ``min_change`` are dropped (their segments stay divided).
The permutations are seeded per series from ``rng`` and the series' identity, so a detection
is reproducible and different series do not share their permutations.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np

from ..model import Series
from ..stats.changepoint import DEFAULT_MIN_SIZE, e_divisive, validate_options
from .base import Change, Detector, kind_of, register


@register
class EDivisive(Detector):
    name = "edivisive"
    p_values = True

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.0, sig_level: float = 0.05,
                 n_permutations: int = 199, min_size: int = DEFAULT_MIN_SIZE, span: str = "end",
                 alpha: float = 1.0, rng: int | np.random.Generator | None = 0):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        validate_options(alpha=alpha, min_size=min_size, sig_level=sig_level, n_permutations=n_permutations,
                         span=span)
        self.sig_level = sig_level
        self.n_permutations = n_permutations
        self.min_size = min_size
        self.span = span
        self.alpha = alpha
        self.rng = rng

    def observations(self, series: Series) -> tuple[np.ndarray, list[int], list[np.ndarray]]:
        """Central value of every version with runs, the indices of those versions, their run means."""
        values, where, run_means = [], [], []
        for k, runs in enumerate(series.runs):
            means = np.array([float(np.mean(r)) for r in runs if np.size(r)])
            if means.size:
                values.append(float(means.mean()))
                where.append(k)
                run_means.append(means)
        return np.array(values), where, run_means

    def _generator(self, series: Series):
        if self.rng is None or isinstance(self.rng, np.random.Generator):
            return self.rng
        ident = zlib.crc32("\0".join((series.benchmark, series.config, series.machine)).encode())
        return np.random.default_rng([int(self.rng), ident])

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes and the number of hypotheses tested: one per permutation test run (each kept
        change point, plus the one that stopped the division), which is the family for
        false-discovery-rate control across series."""
        values, where, _ = self.observations(series)
        if values.size < 2 * self.min_size:
            return [], 0
        res = e_divisive(values, alpha=self.alpha, min_size=self.min_size, sig_level=self.sig_level,
                         n_permutations=self.n_permutations, span=self.span, rng=self._generator(series))
        bounds = [0, *(int(c) for c in res.change_points), values.size]
        changes = []
        for i, (cp, p) in enumerate(zip(res.change_points, res.p_values)):
            cp = int(cp)
            before, after = values[bounds[i]:cp], values[cp:bounds[i + 2]]
            change, lo, hi = _ratio_interval(before, after, self.confidence_level)
            if not np.isfinite(change):
                warnings.warn(f"{series.benchmark}: change point at version {series.versions[where[cp]].name!r} "
                              "has a segment mean of zero; its relative change is undefined and it is skipped",
                              RuntimeWarning, stacklevel=2)
                continue
            if abs(change) < self.min_change:
                continue
            changes.append(Change(
                benchmark=series.benchmark, config=series.config, machine=series.machine,
                version=series.versions[where[cp]].name, previous=series.versions[where[cp - 1]].name,
                change=change, ci_low=lo, ci_high=hi, kind=kind_of(change, series.direction),
                method=self.name, p_value=float(p)))
        return changes, len(res.tested)


def _ratio_interval(a: np.ndarray, b: np.ndarray, confidence_level: float) -> tuple[float, float, float]:
    """``mean(b) / mean(a) - 1`` with a Welch-type interval (delta method, t quantile).

    Each side needs two values or more (guaranteed by ``min_size >= 2``).  With no spread on
    either side the interval is the point.
    """
    from scipy.special import ndtri, stdtrit

    ma, mb = float(a.mean()), float(b.mean())
    if ma == 0:
        nan = float("nan")
        return nan, nan, nan
    change = mb / ma - 1.0
    # Variances of the change from each side's mean (first-order terms of the ratio).
    v_b = b.var(ddof=1) / b.size / ma**2
    v_a = a.var(ddof=1) / a.size * mb**2 / ma**4
    var = v_a + v_b
    if var == 0:
        return change, change, change
    df = var**2 / (v_b**2 / (b.size - 1) + v_a**2 / (a.size - 1))
    level = 0.5 + confidence_level / 2
    q = float(stdtrit(df, level)) if np.isfinite(df) else float(ndtri(level))
    half = q * float(np.sqrt(var))
    return change, change - half, change + half
