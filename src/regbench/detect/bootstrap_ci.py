"""``bootstrap-ci``: non-overlapping 99% bootstrap percentile intervals and a 3% relevance floor.

seed 004 (004_3e2b5449efcf85e0.txt) s.4.5: a performance change is detected when the 99%
bootstrap percentile confidence intervals of the two versions do not overlap and the change is at
least 3%.  The intervals resample whole runs (:func:`regbench.stats.bootstrap.resample_runs`),
since runs, not iterations, are the unit of replication (seed 000 s.2).  Like ``ci-overlap`` it
compares consecutive versions that have at least two successful runs.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..model import Series
from .base import Change, Detector, kind_of, register

if TYPE_CHECKING:
    from ..stats.bootstrap import BootstrapResult


@register
class BootstrapCI(Detector):
    name = "bootstrap-ci"

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.03, n_resamples: int = 10_000,
                 rng: int = 0):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        self.n_resamples = n_resamples
        self.rng = rng

    def detect(self, series: Series) -> list[Change]:
        from ..stats.bootstrap import resample_runs

        intervals: list[BootstrapResult | None] = []  # None: fewer than two runs
        for k, runs in enumerate(series.runs):
            if len(runs) < 2:
                intervals.append(None)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                interval = resample_runs(runs, confidence_level=self.confidence_level,
                                         n_resamples=self.n_resamples, method="percentile", rng=[self.rng, k])
            intervals.append(interval)
        changes = []
        prev: tuple[int, BootstrapResult] | None = None  # the last version with an interval
        for k, res in enumerate(intervals):
            if res is None or not np.isfinite(res.ci_low):
                continue
            if prev is not None:
                prev_k, p = prev
                rel = res.estimate / p.estimate - 1.0 if p.estimate else float("nan")
                apart = res.ci_low > p.ci_high or p.ci_low > res.ci_high
                if apart and np.isfinite(rel) and abs(rel) >= self.min_change:
                    # The change's interval: the bootstrap distributions of the two versions are
                    # independent, so their ratio, resample by resample, is a bootstrap of the change.
                    ratio = res.bootstrap_distribution / p.bootstrap_distribution - 1.0
                    lo, hi = np.quantile(ratio, [(1 - self.confidence_level) / 2, (1 + self.confidence_level) / 2])
                    changes.append(Change(
                        benchmark=series.benchmark, config=series.config, machine=series.machine,
                        version=series.versions[k].name, previous=series.versions[prev_k].name,
                        change=float(rel), ci_low=float(lo), ci_high=float(hi),
                        kind=kind_of(rel, series.direction), method=self.name))
            prev = (k, res)
        return changes
