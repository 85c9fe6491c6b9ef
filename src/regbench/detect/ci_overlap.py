"""``ci-overlap``: non-overlapping confidence intervals of consecutive versions.

seed 000 (000_833974a369fcaf36.txt) s.5: "A performance change is reported whenever the
confidence intervals for the mean operation durations of two consecutive versions of the tested
software do not overlap"; the magnitude is the distance between the centres relative to the
centre of the older version.  The intervals are the hierarchical ones of s.3.1, formula (4)
(:func:`regbench.stats.hierarchical_summary`), at 99% as in the paper.  An optional minimum
relevant change drops significant but negligible differences.

``interval="robust"`` builds the same interval from resampled run statistics instead (seed 000
s.4.2, :func:`regbench.stats.resampled_run_stats`): each run's mean and variance become the
medians of those of 100 random half-size sub-selections of its samples, so that a single
outlying iteration, "several orders of magnitude" longer than the rest, does not move its run's
mean (the paper's preprocessing against outliers).  The evaluation on the synthetic corpus
(docs/detection.md) gives both rows.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..model import Series
from ..stats import HierarchicalSummary, components, delta_ratio_interval, hierarchical_summary, resampled_run_stats
from .base import Change, Detector, kind_of, register

#: The intervals ``ci-overlap`` can compare.
INTERVALS = ("plain", "robust")


@register
class CIOverlap(Detector):
    """Non-overlapping hierarchical confidence intervals of consecutive versions (seed 000 s.5).

    Parameters
    ----------
    confidence_level : float, keyword-only
        Of every version's interval (0.99 as in the paper) and of the change's interval.
    min_change : float, keyword-only
        Smallest relative change reported (0: the paper has none).
    interval : {"plain", "robust"}, keyword-only
        ``"plain"`` (default): formula (4) on run means and variances (seed 000 s.3.1);
        ``"robust"``: formula (4) on resampled run statistics (seed 000 s.4.2).
    rng : int, keyword-only
        Seed of the robust variant's resampling (the same seed gives the same intervals).
    """

    name = "ci-overlap"

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.0, interval: str = "plain",
                 rng: int = 0):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        if interval not in INTERVALS:
            raise ValueError(f"`interval` must be one of {', '.join(map(repr, INTERVALS))}")
        if not isinstance(rng, numbers.Integral) or isinstance(rng, bool) or rng < 0:
            raise ValueError("`rng` must be a non-negative integer")
        # Annotated: after the isinstance check against numbers.Integral above, mypy cannot infer
        # these attributes' types in time for the methods that read them ([has-type]).
        self.interval: str = interval
        self.rng: int = int(rng)

    def summaries(self, series: Series) -> list[HierarchicalSummary | None]:
        """Each version's summary; None where undecidable (fewer than two runs, or a one-sample run)."""
        usable = [len(runs) >= 2 and all(r.size >= 2 for r in runs) for runs in series.runs]
        if self.interval == "robust":
            # One resampling pass over every run of the series, as analysis.summarize_series does.
            flat = [r for ok, runs in zip(usable, series.runs, strict=True) if ok for r in runs]
            r_means, r_vars = resampled_run_stats(flat, rng=self.rng) if flat else (np.empty(0), np.empty(0))
        out: list[HierarchicalSummary | None] = []
        start = 0
        for ok, runs in zip(usable, series.runs, strict=True):
            if not ok:
                out.append(None)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                if self.interval == "robust":
                    stop = start + len(runs)
                    sizes = np.array([r.size for r in runs], dtype=float)
                    out.append(components(r_means[start:stop], r_vars[start:stop], sizes,
                                          confidence_level=self.confidence_level))
                    start = stop
                else:
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
