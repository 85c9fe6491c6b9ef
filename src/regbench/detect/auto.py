"""``auto``: the default policy, a change-point search confirmed by a hierarchical test.

What the evaluation (``regbench evaluate``, docs/detection.md) showed works best, put together:

1. **Robust run means.**  Runs, not iterations, are the unit of replication (seed 000,
   000_833974a369fcaf36.txt, s.2), so each run is reduced to its mean; samples beyond very wide
   Tukey fences of their run (``fence`` x IQR, 10 by default) are left out first, because one
   outlier "several orders of magnitude" long (seed 001, 001_0c28a3a14a5fab8a.txt, s.2.1) moves a
   run mean more than any real change does.
2. **Change-point search over the whole history.**  Binary segmentation with the energy
   statistic of E-Divisive (Matteson and James 2014; seed 001 s.2.3 for why a whole-history
   search matters: it also finds a creeping degradation whose steps are each negligible) on the
   per-version means.  The search only proposes where a change could be.
3. **Hierarchical confirmation.**  Each proposed split is tested by comparing the segment before
   with the segment after it, with the variance of a segment mean taken from a two-level model:
   runs within versions (the within-version variance of run means, as in seed 000 s.3) and
   versions within segments (a version-to-version variance component, estimated by one-way
   ANOVA, so that builds that differ a little do not count as a change).  The t statistic uses
   Satterthwaite's degrees of freedom and its p-value is Bonferroni-adjusted for the positions
   the search chose from, so it stays a valid p-value after the search.  A split is kept when that
   p-value is below ``alpha``; binary segmentation then searches both halves.
4. **A minimum relevant change** (3% by default, seed 004, 004_3e2b5449efcf85e0.txt, s.4.5): the
   change between the neighbouring segments' means must be at least that large.  When it is not,
   but a multimodal benchmark has one mode that moved by at least that much (seed 001 s.4.2, the
   cache hit/miss case), the cluster-by-cluster comparison of the versions next to the split
   decides instead (``regbench.stats.compare_clusters``).

Each change carries the relative change of the segment means, its interval at
``confidence_level`` by the delta method, and the adjusted p-value, which ``regbench detect``
feeds to Benjamini-Hochberg across all series (:mod:`regbench.detect.fdr`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..model import Series
from .base import Change, Detector, kind_of, register


@dataclass(frozen=True)
class VersionStats:
    """Per-version summaries of a series: the versions with at least one successful run.

    ``index[j]`` is the position in ``series.versions`` of the j-th summarised version; ``mean``
    is the mean of its run means, ``var`` the variance of its run means (NaN with one run) and
    ``n`` its number of runs.
    """

    index: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    n: np.ndarray


def robust_run_means(runs: list[np.ndarray], *, fence: float = 10.0) -> np.ndarray:
    """Mean of each run after dropping samples beyond ``fence`` x IQR from its quartiles.

    Runs of equal length are stacked and handled at once (the usual case: a plan fixes the
    iterations), so a series of thousands of runs costs a few numpy calls.
    """
    out = np.empty(len(runs))
    by_len: dict[int, list[int]] = {}
    for i, r in enumerate(runs):
        by_len.setdefault(r.size, []).append(i)
    for size, idx in by_len.items():
        if size == 0:
            out[idx] = np.nan
            continue
        block = np.stack([runs[i] for i in idx])
        if size >= 4 and np.isfinite(fence):
            q1, q3 = np.quantile(block, [0.25, 0.75], axis=1)
            iqr = q3 - q1
            keep = (block >= (q1 - fence * iqr)[:, None]) & (block <= (q3 + fence * iqr)[:, None])
            out[idx] = np.where(keep, block, 0.0).sum(axis=1) / keep.sum(axis=1)
        else:
            out[idx] = block.mean(axis=1)
    return out


def version_stats(series: Series, *, fence: float = 10.0) -> VersionStats:
    counts = np.array([len(r) for r in series.runs], dtype=int)
    index = np.flatnonzero(counts > 0)
    flat = [r for k in index for r in series.runs[k]]
    if not flat:
        empty = np.empty(0)
        return VersionStats(index, empty, empty, np.empty(0, dtype=int))
    rm = robust_run_means(flat, fence=fence)
    n = counts[index]
    group = np.repeat(np.arange(index.size), n)
    mean = np.bincount(group, weights=rm) / n
    dev2 = np.bincount(group, weights=(rm - mean[group]) ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n > 1, dev2 / np.maximum(n - 1, 1), np.nan)
    return VersionStats(index, mean, var, n)


@dataclass(frozen=True)
class SegmentStats:
    """Sufficient statistics of a segment of versions for :func:`segment_test`.

    ``k`` versions; ``sum_m`` and ``sum_m2`` the sum and sum of squares of their means;
    ``ss_within`` the sum over versions of ``(n - 1) * var`` of run means and ``df_within`` the
    sum of ``n - 1`` over versions with two or more runs; ``sum_inv_n`` the sum of ``1 / n``.
    Two segments' statistics add up, which makes the incremental check O(1) per new version.
    """

    k: int
    sum_m: float
    sum_m2: float
    ss_within: float
    df_within: float
    sum_inv_n: float

    @classmethod
    def of(cls, vs: VersionStats, start: int, stop: int) -> SegmentStats:
        m, n, v = vs.mean[start:stop], vs.n[start:stop], vs.var[start:stop]
        multi = n > 1
        return cls(int(m.size), float(m.sum()), float((m * m).sum()), float(((n[multi] - 1) * v[multi]).sum()),
                   float((n[multi] - 1).sum()), float((1.0 / n).sum()))

    def __add__(self, other: SegmentStats) -> SegmentStats:
        return SegmentStats(self.k + other.k, self.sum_m + other.sum_m, self.sum_m2 + other.sum_m2,
                            self.ss_within + other.ss_within, self.df_within + other.df_within,
                            self.sum_inv_n + other.sum_inv_n)

    @property
    def mean(self) -> float:
        return self.sum_m / self.k

    @property
    def ss_between(self) -> float:
        """Sum of squared deviations of the version means from the segment mean."""
        return max(0.0, self.sum_m2 - self.sum_m**2 / self.k)


@dataclass(frozen=True)
class SegmentTest:
    """Hierarchical comparison of two adjacent segments of versions (see the module docstring)."""

    mean_left: float
    mean_right: float
    se_left: float
    se_right: float
    t: float
    df: float
    p_value: float


def compare_segments(left: SegmentStats, right: SegmentStats) -> SegmentTest:
    """Two-level comparison of segment means: versions within segments, runs within versions.

    The variance of a segment mean is ``s2v / k + s2w * sum(1/n) / k**2``, with ``s2w`` the
    pooled within-version variance of run means and ``s2v = max(0, MS_between - s2w * mean(1/n))``
    the version-to-version component (one-way random-effects ANOVA, method of moments).  The t
    statistic gets Satterthwaite's degrees of freedom from the two variance terms.
    """
    from scipy import stats as st

    kl, kr = left.k, right.k
    df_w = left.df_within + right.df_within
    s2w = (left.ss_within + right.ss_within) / df_w if df_w > 0 else 0.0
    mean_inv_n = (left.sum_inv_n + right.sum_inv_n) / (kl + kr)
    df_b = kl + kr - 2
    if df_b > 0:
        ms_b = (left.ss_between + right.ss_between) / df_b
        s2v = max(0.0, ms_b - s2w * mean_inv_n)
    else:
        s2v = 0.0
    var_l = s2v / kl + s2w * left.sum_inv_n / kl**2
    var_r = s2v / kr + s2w * right.sum_inv_n / kr**2
    vv = s2v * (1 / kl + 1 / kr)
    vw = var_l + var_r - vv
    denom = (vv**2 / df_b if df_b > 0 else 0.0) + (vw**2 / df_w if df_w > 0 else 0.0)
    df = (vv + vw) ** 2 / denom if denom > 0 else np.nan
    se = np.sqrt(var_l + var_r)
    ml, mr = left.mean, right.mean
    if not (se > 0 and np.isfinite(df)):
        t, p = np.nan, np.nan
    else:
        t = (mr - ml) / se
        p = float(2 * st.t.sf(abs(t), df))
    return SegmentTest(float(ml), float(mr), float(np.sqrt(var_l)), float(np.sqrt(var_r)), float(t), float(df), p)


def segment_test(vs: VersionStats, s: int, tau: int, e: int) -> SegmentTest:
    """Compare versions ``[s, tau)`` with ``[tau, e)`` of ``vs`` (indices into its arrays)."""
    return compare_segments(SegmentStats.of(vs, s, tau), SegmentStats.of(vs, tau, e))


@register
class Auto(Detector):
    """Change-point search plus hierarchical confirmation and a minimum relevant change."""

    name = "auto"

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.03, alpha: float = 0.001,
                 fence: float = 10.0, clusters: bool = True, cluster_versions: int = 3, ramp: int = 10,
                 rng: int = 0):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        if not 0 < alpha < 1:
            raise ValueError("`alpha` must be in (0, 1)")
        if not fence > 0:
            raise ValueError("`fence` must be positive")
        self.alpha = alpha
        self.fence = fence
        self.clusters = clusters
        self.cluster_versions = cluster_versions
        self.rng = rng
        self.ramp = ramp

    # ------------------------------------------------------------------ search
    def change_points(self, vs: VersionStats) -> tuple[list[int], int]:
        """Binary segmentation: split points (indices into ``vs``) and the number of tests run."""
        found: list[int] = []
        tests = 0
        stack = [(0, vs.mean.size)]
        while stack:
            s, e = stack.pop()
            if e - s < 2:
                continue
            tau = _best_split(vs.mean, s, e)
            if tau is None:
                continue
            tests += 1
            res = segment_test(vs, s, tau, e)
            p = min(1.0, res.p_value * (e - s - 1))  # Bonferroni over the positions searched
            if np.isfinite(p) and p < self.alpha:
                found.append(tau)
                stack.append((s, tau))
                stack.append((tau, e))
        return sorted(found), tests

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes and the number of hypotheses tested: one per split the search tried."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            vs = version_stats(series, fence=self.fence)
            if vs.mean.size < 2 or not np.all(np.isfinite(vs.mean)):
                return [], 0
            cps, n_tests = self.change_points(vs)
            changes = []
            for first, last in self._groups(vs, cps):
                c = self._change(series, vs, cps, first, last)
                if c is not None:
                    changes.append(c)
        return changes, n_tests
        return changes

    def _groups(self, vs: VersionStats, cps: list[int]) -> list[tuple[int, int]]:
        """Change points to report, as ``(first, last)`` positions in ``cps``.

        A creeping degradation (seed 001 s.2.3) is found by the search as several nearby splits
        of the same sign, each below the minimum relevant change.  Such neighbours (at most
        ``ramp`` versions apart) are reported once, as one change from the segment before the
        first to the segment after the last; every other change point stands alone.
        """
        bounds = [0, *cps, vs.mean.size]
        small, sign = [], []
        for i, tau in enumerate(cps):
            res = segment_test(vs, bounds[i], tau, bounds[i + 2])
            rel = res.mean_right / res.mean_left - 1.0
            small.append(abs(rel) < self.min_change)
            sign.append(np.sign(rel))
        groups: list[tuple[int, int]] = []
        i = 0
        while i < len(cps):
            j = i
            while (small[i] and j + 1 < len(cps) and small[j + 1] and sign[j + 1] == sign[i]
                   and cps[j + 1] - cps[j] <= self.ramp):
                j += 1
            groups.append((i, j))
            i = j + 1
        return groups

    def _change(self, series: Series, vs: VersionStats, cps: list[int], first: int, last: int) -> Change | None:
        from ..stats import delta_ratio_interval

        bounds = [0, *cps, vs.mean.size]
        s, tau, tau_end, e = bounds[first], cps[first], cps[last], bounds[last + 2]
        if first == last:
            res = segment_test(vs, s, tau, e)
        else:  # a ramp: the segment before it against the segment after it, the ramp left out
            res = segment_test(_without(vs, tau, tau_end), s, tau, e - (tau_end - tau))
        p = min(1.0, res.p_value * (e - s - 1))
        rel = res.mean_right / res.mean_left - 1.0
        change, lo, hi = delta_ratio_interval(res.mean_left, res.se_left, res.mean_right, res.se_right,
                                              confidence_level=self.confidence_level)
        if not (np.isfinite(rel) and np.isfinite(p)):
            return None
        if abs(rel) < self.min_change or p >= self.alpha:
            mode = self._mode_shift(series, vs, s, tau, e) if (self.clusters and first == last) else None
            if mode is None:
                return None
            change, lo, hi, p = mode
        return Change(
            benchmark=series.benchmark, config=series.config, machine=series.machine,
            version=series.versions[int(vs.index[tau])].name,
            previous=series.versions[int(vs.index[tau - 1])].name,
            change=float(change), ci_low=float(lo), ci_high=float(hi),
            kind=kind_of(change, series.direction), method=self.name, p_value=float(p))

    def _mode_shift(self, series: Series, vs: VersionStats, s: int, tau: int, e: int):
        """A mode that moved by at least ``min_change`` across the split (seed 001 s.4.2), or None."""
        from ..stats import compare_clusters

        w = self.cluster_versions
        left = [r for k in vs.index[max(s, tau - w):tau] for r in series.runs[k]]
        right = [r for k in vs.index[tau:min(e, tau + w)] for r in series.runs[k]]
        if len(left) < 2 or len(right) < 2:
            return None
        try:
            cmp = compare_clusters(left, right, confidence_level=self.confidence_level, rng=self.rng)
        except (ValueError, np.linalg.LinAlgError):
            return None
        best = None
        for shift in cmp.shifts:
            rel, p = shift.change, shift.p_value
            if not (np.isfinite(rel) and np.isfinite(p)):
                continue
            p_adj = min(1.0, p * max(1, len(cmp.shifts)) * (e - s - 1))
            if abs(rel) >= self.min_change and p_adj < self.alpha and (best is None or abs(rel) > abs(best[0])):
                best = (float(rel), float(shift.ci_low), float(shift.ci_high), p_adj)
        return best


def _without(vs: VersionStats, start: int, stop: int) -> VersionStats:
    """``vs`` without the versions ``[start, stop)`` (the inside of a ramp)."""
    keep = np.r_[0:start, stop:vs.mean.size]
    return VersionStats(vs.index[keep], vs.mean[keep], vs.var[keep], vs.n[keep])


def _best_split(x: np.ndarray, s: int, e: int) -> int | None:
    """TEMPORARY: E-statistic (alpha=1) argmax over splits of x[s:e]; to be replaced by stats.changepoint."""
    y = x[s:e]
    n = y.size
    if n < 2:
        return None
    d = np.abs(y[:, None] - y[None, :])
    p = np.zeros((n + 1, n + 1))
    p[1:, 1:] = d.cumsum(0).cumsum(1)
    taus = np.arange(1, n)
    tot = p[n, n]
    within_l = p[taus, taus] / 2
    within_r = (tot - 2 * p[taus, n] + p[taus, taus]) / 2
    between = p[taus, n] - p[taus, taus]
    m, k = taus, n - taus
    with np.errstate(invalid="ignore", divide="ignore"):
        wl = np.where(m > 1, within_l / (m * (m - 1) / 2), 0.0)
        wr = np.where(k > 1, within_r / (k * (k - 1) / 2), 0.0)
        q = m * k / n * (2 * between / (m * k) - wl - wr)
    return s + int(taus[np.argmax(q)])
