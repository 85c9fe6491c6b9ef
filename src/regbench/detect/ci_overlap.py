"""``ci-overlap``: non-overlapping confidence intervals of consecutive versions.

seed 000 (000_833974a369fcaf36.txt) s.5: "A performance change is reported whenever the
confidence intervals for the mean operation durations of two consecutive versions of the tested
software do not overlap"; the magnitude is the distance between the centres relative to the
centre of the older version.  The intervals are the hierarchical ones of s.3.1, formula (4)
(:func:`regbench.stats.hierarchical_summary`), at 99% as in the paper.  An optional minimum
relevant change drops significant but negligible differences.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..model import Series
from ..stats import HierarchicalSummary, delta_ratio_interval, hierarchical_summary
from .base import Change, Detector, kind_of, register


@register
class CIOverlap(Detector):
    name = "ci-overlap"

    def summaries(self, series: Series) -> list[HierarchicalSummary | None]:
        out: list[HierarchicalSummary | None] = []
        for runs in series.runs:
            if len(runs) < 2 or any(r.size < 2 for r in runs):
                out.append(None)  # undecidable: fewer than two runs (or a one-sample run)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out.append(hierarchical_summary(runs, confidence_level=self.confidence_level))
        return out

    def detect(self, series: Series) -> list[Change]:
        summ = self.summaries(series)
        changes = []
        prev: tuple[int, HierarchicalSummary] | None = None  # the last version with an interval
        for k, s in enumerate(summ):
            if s is None or not np.isfinite(s.half_width):
                continue
            if prev is not None:
                prev_k, p = prev
                overlap = s.ci_low <= p.ci_high and p.ci_low <= s.ci_high
                rel = s.mean / p.mean - 1.0 if p.mean else float("nan")
                if not overlap and np.isfinite(rel) and abs(rel) >= self.min_change:
                    change, lo, hi = delta_ratio_interval(p.mean, _se(p), s.mean, _se(s),
                                                          confidence_level=self.confidence_level)
                    changes.append(Change(
                        benchmark=series.benchmark, config=series.config, machine=series.machine,
                        version=series.versions[k].name, previous=series.versions[prev_k].name,
                        change=change, ci_low=lo, ci_high=hi, kind=kind_of(change, series.direction),
                        method=self.name))
            prev = (k, s)
        return changes


def _se(s: HierarchicalSummary) -> float:
    # Standard error of the mean of run means from the same variance components as the interval.
    return float(np.sqrt((s.n_iterations * s.rho2 + s.s2_sigma) / (s.n_runs * s.n_iterations)))
