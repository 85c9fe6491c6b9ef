"""``auto``: the default policy, a change-point search confirmed by a hierarchical test.

What the evaluation (``regbench evaluate``, docs/detection.md) showed works best, put together:

1. **Robust run means.**  Runs, not iterations, are the unit of replication (seed 000,
   000_833974a369fcaf36.txt, s.2), so each run is reduced to its mean; samples more than
   ``fence`` (10) times beyond the 90th (or below the 10th) percentile of their version are left
   out first, because one outlier "several orders of magnitude" long (seed 001,
   001_0c28a3a14a5fab8a.txt, s.2.1) moves a run mean more than any real change does.
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


def robust_run_means(runs: list[np.ndarray], *, group: np.ndarray | None = None, fence: float = 10.0) -> np.ndarray:
    """Mean of each run after dropping samples an order of magnitude away from their version.

    A sample is left out when it is more than ``fence`` times the 90th percentile of its version's
    samples, or less than the 10th percentile divided by ``fence`` (positive data only).  The
    percentile of a version is the median over its runs (``group`` gives each run's version) of
    the runs' percentiles, so a few outliers cannot move it.  Percentiles rather than quartiles,
    because the slow mode of a bimodal benchmark (a cache miss, seed 001 s.4.2) may hold only
    10-25% of the samples and is not an outlier; seed 001 s.2.1's outliers are "several orders of
    magnitude" away, which a fence of 10 times catches.

    Runs of equal length are stacked and handled at once (the usual case: a plan fixes the
    iterations), so a series of thousands of runs costs a few numpy calls.
    """
    n = len(runs)
    out = np.full(n, np.nan)
    sizes = np.array([r.size for r in runs])
    lo, hi = fence_bounds(runs, group=group, fence=fence)
    for size in np.unique(sizes):
        if size == 0:
            continue
        idx = np.flatnonzero(sizes == size)
        block = np.stack([runs[i] for i in idx])
        keep = (block >= lo[idx, None]) & (block <= hi[idx, None])
        kept = keep.sum(axis=1)
        out[idx] = np.where(kept > 0, np.where(keep, block, 0.0).sum(axis=1) / np.maximum(kept, 1), block.mean(axis=1))
    return out


def fence_bounds(runs: list[np.ndarray], *, group: np.ndarray | None = None, fence: float = 10.0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per run, the lowest and highest sample :func:`robust_run_means` keeps (-inf/inf: no
    trimming, for data that is not all positive or ``fence`` = inf)."""
    n = len(runs)
    group = np.zeros(n, dtype=int) if group is None else np.asarray(group)
    sizes = np.array([r.size for r in runs])
    q = np.full((n, 2), np.nan)
    positive = np.ones(n, dtype=bool)
    for size in np.unique(sizes):
        if size == 0:
            continue
        idx = np.flatnonzero(sizes == size)
        block = np.stack([runs[i] for i in idx])
        q[idx] = np.quantile(block, [0.1, 0.9], axis=1).T
        positive[idx] = block.min(axis=1) > 0
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    if not np.isfinite(fence) or n == 0:
        return lo, hi
    # Per-version thresholds: the median of the runs' percentiles.
    order = np.argsort(group, kind="stable")
    per = np.bincount(group)
    per = per[per > 0]
    if np.all(per == per[0]):  # the same number of runs in every version: one vectorised median
        med = np.nanmedian(q[order].reshape(per.size, per[0], 2), axis=1)
        version_q = np.repeat(med, per[0], axis=0)
    else:
        version_q = np.empty((n, 2))
        for part in np.split(np.arange(n), np.cumsum(per)[:-1]):
            version_q[part] = np.nanmedian(q[order[part]], axis=0)
    lo[order] = version_q[:, 0] / fence
    hi[order] = version_q[:, 1] * fence
    trim = positive & (lo > 0)
    lo[~trim] = -np.inf
    hi[~trim] = np.inf
    return lo, hi


def version_stats(series: Series, *, fence: float = 10.0) -> VersionStats:
    """Per-version summaries of the robust run means of a series."""
    counts = np.array([len(r) for r in series.runs], dtype=int)
    index = np.flatnonzero(counts > 0)
    flat = [r for k in index for r in series.runs[k]]
    group = np.repeat(np.arange(index.size), counts[index])
    if not flat:
        return stats_of_runs(np.empty(0), group, index)
    return stats_of_runs(robust_run_means(flat, group=group, fence=fence), group, index)


def version_stats_many(series_list: list[Series], *, fence: float = 10.0) -> list[VersionStats]:
    """:func:`version_stats` of many series with one call of :func:`robust_run_means`.

    For many short series (an incremental pass: one new version each) the per-call overhead of
    numpy, not the arithmetic, is the cost; pooling the runs of all series removes it.
    """
    flats, groups, indexes = [], [], []
    offset = 0
    for s in series_list:
        counts = np.array([len(r) for r in s.runs], dtype=int)
        index = np.flatnonzero(counts > 0)
        flats += [r for k in index for r in s.runs[k]]
        groups.append(np.repeat(np.arange(index.size), counts[index]) + offset)
        indexes.append(index)
        offset += index.size
    if not flats:
        return [version_stats(s, fence=fence) for s in series_list]
    group = np.concatenate(groups)
    means = robust_run_means(flats, group=group, fence=fence)
    out, start = [], 0
    base = 0
    for g, index in zip(groups, indexes, strict=True):
        part = slice(start, start + g.size)
        out.append(stats_of_runs(means[part], g - base, index))
        start += g.size
        base += index.size
    return out


def stats_of_runs(values: np.ndarray, group: np.ndarray, index: np.ndarray) -> VersionStats:
    """Summaries of one value per run (``group[i]`` = position in ``index`` of run i's version);
    NaN values are left out, and so are versions left without any."""
    ok = np.isfinite(values)
    values, group = values[ok], group[ok]
    n = np.bincount(group, minlength=index.size)
    has = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=values, minlength=index.size) / n
        dev2 = np.bincount(group, weights=(values - mean[group]) ** 2, minlength=index.size)
        var = np.where(n > 1, dev2 / np.maximum(n - 1, 1), np.nan)
    return VersionStats(index[has], mean[has], var[has], n[has])


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


def compare_segments(left: SegmentStats, right: SegmentStats, *, version_var: tuple[float, float] | None = None
                     ) -> SegmentTest:
    """Two-level comparison of segment means: versions within segments, runs within versions.

    The variance of a segment mean is ``s2v / k + s2w * sum(1/n) / k**2``, with ``s2w`` the
    pooled within-version variance of run means and ``s2v = max(0, MS_between - s2w * mean(1/n))``
    the version-to-version component (one-way random-effects ANOVA, method of moments).  The t
    statistic gets Satterthwaite's degrees of freedom from the two variance terms.

    ``version_var`` = ``(s2v, df)`` supplies the version component instead (as
    :func:`version_variance` estimates it for a whole series, robustly to the steps that a
    segment may still contain).
    """
    kl, kr = left.k, right.k
    df_w = left.df_within + right.df_within
    s2w = (left.ss_within + right.ss_within) / df_w if df_w > 0 else 0.0
    mean_inv_n = (left.sum_inv_n + right.sum_inv_n) / (kl + kr)
    if version_var is not None:
        s2v, df_b = version_var
    else:
        # One-way ANOVA of the versions within the two segments; with fewer than 3 degrees of
        # freedom the estimate is too rough to use, and runs are the only replicates (as in
        # seed 000 s.5's comparison of two versions).
        df_b = kl + kr - 2
        s2v = max(0.0, (left.ss_between + right.ss_between) / df_b - s2w * mean_inv_n) if df_b >= 3 else 0.0
    ml, mr, var_l, var_r, t, df, p = _two_level_t(left.mean, right.mean, kl, kr, left.sum_inv_n, right.sum_inv_n,
                                                  s2w, df_w, s2v, df_b)
    return SegmentTest(float(ml), float(mr), float(np.sqrt(var_l)), float(np.sqrt(var_r)), float(t), float(df),
                       float(p))


def _two_level_t(ml, mr, kl, kr, inv_l, inv_r, s2w, df_w, s2v, df_b):
    """The core of :func:`compare_segments`, for scalars or arrays of segment pairs alike:
    segment means, their variances, t, Satterthwaite's df and the two-sided p-value."""
    from scipy.special import stdtr  # Student's t CDF, without importing all of scipy.stats

    with np.errstate(invalid="ignore", divide="ignore"):
        var_l = s2v / kl + s2w * inv_l / kl**2
        var_r = s2v / kr + s2w * inv_r / kr**2
        vv = s2v * (1 / kl + 1 / kr)
        vw = var_l + var_r - vv
        denom = np.where(np.asarray(df_b) > 0, vv**2 / np.maximum(df_b, 1e-300), 0.0) + \
            np.where(np.asarray(df_w) > 0, vw**2 / np.maximum(df_w, 1e-300), 0.0)
        df = np.where(denom > 0, (vv + vw) ** 2 / np.where(denom > 0, denom, 1.0), np.nan)
        se = np.sqrt(var_l + var_r)
        ok = (se > 0) & np.isfinite(df)
        t = np.where(ok, (mr - ml) / np.where(se > 0, se, 1.0), np.nan)
        p = np.where(ok, 2 * stdtr(np.where(ok, df, 1.0), -np.abs(np.where(ok, t, 0.0))), np.nan)
        # No noise at all (an instruction count, a constant output) and different means: the
        # difference is certain, not undecidable.
        exact = (se == 0) & (np.asarray(mr) != np.asarray(ml))
        t = np.where(exact, np.sign(np.asarray(mr) - np.asarray(ml)) * np.inf, t)
        p = np.where(exact, 0.0, p)
        df = np.where(exact & ~np.isfinite(df), np.inf, df)
    return ml, mr, var_l, var_r, t, df, p


#: Versions a series needs before its version-to-version variance is estimated (see below).
MIN_VERSIONS_FOR_VERSION_VAR = 6


def ratio_interval(res: SegmentTest, confidence_level: float) -> tuple[float, float, float]:
    """Relative change ``right / left - 1`` of a segment test and its interval.

    Delta method, with the test's Student quantile and Satterthwaite degrees of freedom (a normal
    quantile under-covers with few versions).  Only for positive levels: a ratio of levels of
    different or negative sign means nothing, and gives NaN (undecidable).
    """
    from scipy.special import stdtrit

    ml, mr = res.mean_left, res.mean_right
    if not (ml > 0 and mr > 0):
        return np.nan, np.nan, np.nan
    rel = mr / ml - 1.0
    q = float(stdtrit(res.df, (1 + confidence_level) / 2)) if np.isfinite(res.df) else 0.0
    se = float(np.sqrt(res.se_right**2 / ml**2 + mr**2 * res.se_left**2 / ml**4))
    return float(rel), float(rel - q * se), float(rel + q * se)


def version_variance(vs: VersionStats) -> tuple[float, float] | None:
    """Version-to-version variance component of a series and its approximate degrees of freedom.

    Half the squared MAD-scale of successive differences of version means estimates the variance
    of a version mean about its local level; a few steps in the history barely move a median, so
    undetected changes do not inflate it the way a segment's ANOVA would (which would hide a
    second change in the segment of the first).  Subtracting the runs' share (pooled
    within-version variance / n) leaves the version component.  A MAD-based variance has about
    37% of the efficiency of the sample variance under normality (Rousseeuw and Croux, JASA 88
    (1993)), which sets the degrees of freedom.  With fewer than
    :data:`MIN_VERSIONS_FOR_VERSION_VAR` versions this estimate is not used (None): each test
    then estimates the component from its own two segments by one-way ANOVA
    (:func:`compare_segments` without ``version_var``).
    """
    k = vs.mean.size
    if k < MIN_VERSIONS_FOR_VERSION_VAR:
        return None
    d = np.diff(vs.mean)
    total = float((np.float64(1.482602218505602) * np.median(np.abs(d - np.median(d)))) ** 2 / 2)
    multi = vs.n > 1
    df_w = float((vs.n[multi] - 1).sum())
    s2w = float(((vs.n[multi] - 1) * vs.var[multi]).sum() / df_w) if df_w > 0 else 0.0
    return max(0.0, total - s2w * float(np.mean(1.0 / vs.n))), max(1.0, 0.37 * (k - 2))


def segment_test(vs: VersionStats, s: int, tau: int, e: int,
                 version_var: tuple[float, float] | None = None) -> SegmentTest:
    """Compare versions ``[s, tau)`` with ``[tau, e)`` of ``vs`` (indices into its arrays)."""
    return compare_segments(SegmentStats.of(vs, s, tau), SegmentStats.of(vs, tau, e), version_var=version_var)


@register
class Auto(Detector):
    """Change-point search plus hierarchical confirmation and a minimum relevant change."""

    name = "auto"
    p_values = True

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.03, alpha: float = 0.001,
                 fence: float = 10.0, clusters: bool = True, ramp: int = 10, excursion: int = 5, rng: int = 0):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        if not 0 < alpha < 1:
            raise ValueError("`alpha` must be in (0, 1)")
        if not fence > 0:
            raise ValueError("`fence` must be positive")
        self.alpha = alpha
        self.fence = fence
        self.clusters = clusters
        self.rng = rng
        self.ramp = ramp
        self.excursion = excursion

    # ------------------------------------------------------------------ search
    def change_points(self, vs: VersionStats, *, factor: int = 1, excursions: bool = True
                      ) -> tuple[list[int], int, dict[int, int]]:
        """Split points (indices into ``vs``), the number of tests run, and for each split the
        number of positions it was chosen from (its Bonferroni factor).

        Binary segmentation: each segment's candidate is the split maximising E-Divisive's energy
        statistic (:func:`regbench.stats.best_split`, at least two versions a side), or its
        first or last version alone, which the energy statistic cannot isolate (so a change in
        the latest commit is found by a full pass, as by an incremental one); the candidate with
        the smallest p-value, Bonferroni-adjusted for the positions it was chosen from, is kept
        when below ``alpha``, and both halves are searched again.  Each candidate tested is one
        hypothesis of the count.  Kept splits are then moved, within two versions and between
        their neighbours, to where the t statistic is largest (the energy statistic can sit a
        version or two off a step).
        """
        from ..stats.changepoint import best_split

        found: dict[int, int] = {}
        tests = 0
        vv = version_variance(vs)
        stack = [(0, vs.mean.size)]
        while stack:
            s, e = stack.pop()
            # Candidates: the energy statistic's best split (two versions a side, chosen from
            # e - s - 3 positions), and the segment's first and last version alone (which the
            # energy statistic cannot isolate; no search, one position each).
            candidates = []
            split = best_split(vs.mean, s, e, min_size=2) if e - s >= 4 else None
            if split is not None:
                candidates.append((split.index, max(1, e - s - 3)))
            if e - s >= 3:
                candidates += [(e - 1, 1), (s + 1, 1)]
            best = None
            for tau, positions in candidates:
                tests += 1
                res = segment_test(vs, s, tau, e, vv)
                p = min(1.0, res.p_value * positions * factor)  # Bonferroni over the positions searched
                if np.isfinite(p) and p < self.alpha and (best is None or p < best[0]):
                    best = (p, tau, positions)
            if best is not None:
                found[best[1]] = best[2]
                stack.append((s, best[1]))
                stack.append((best[1], e))
        found = self._refine(vs, found, vv)
        if excursions and vv is not None:
            extra, n = self._excursions(vs, sorted(found), vv, factor)
            tests += n
            found = {**extra, **found}
        return sorted(found), tests, found

    def _refine(self, vs: VersionStats, found: dict[int, int], vv, *, reach: int = 2) -> dict[int, int]:
        taus = sorted(found)
        out: dict[int, int] = {}
        for i, tau in enumerate(taus):
            s = taus[i - 1] if i else 0
            e = taus[i + 1] if i + 1 < len(taus) else vs.mean.size
            best, best_t = tau, -1.0
            for cand in range(max(s + 1, tau - reach), min(e - 1, tau + reach) + 1):
                res = segment_test(vs, s, cand, e, vv)
                if abs(res.t) > best_t:  # NaN compares False and is never chosen
                    best, best_t = cand, abs(res.t)
            taus[i] = best
            out[best] = max(out.get(best, 0), found[tau])
        return out

    def _excursions(self, vs: VersionStats, cps: list[int], vv: tuple[float, float], factor: int
                    ) -> tuple[dict[int, int], int]:
        """Short excursions inside the segments: a step undone 1 to ``excursion`` versions later.

        Binary segmentation looks for one split at a time, and a short excursion in the middle of
        a long segment moves neither side's mean (Matteson and James's search over ``kappa``
        handles it at seven times the cost, see :mod:`regbench.stats.changepoint`).  So every
        stretch of 1-``excursion`` versions of a segment, with two versions or more on either
        side, is compared with up to 10 versions around it (the same two-level test, vectorised
        over positions); the best one per segment is kept when its p-value, Bonferroni-adjusted
        for all the stretches tried, is below ``alpha``, and both its edges become splits (a
        revert, seed 003 s.5.3).  One hypothesis per segment scanned.
        """
        if self.excursion < 1 or vs.mean.size < 5:
            return {}, 0
        m, n, var = vs.mean, vs.n, vs.var
        multi = n > 1
        cols = {"k": np.ones(m.size), "m": m, "inv": 1.0 / n,
                "ssw": np.where(multi, (n - 1) * np.nan_to_num(var), 0.0), "dfw": np.where(multi, n - 1, 0.0)}
        pre = {key: np.concatenate(([0.0], np.cumsum(col))) for key, col in cols.items()}

        def seg(a, b):
            return {key: pre[key][b] - pre[key][a] for key in pre}

        s2v, df_b = vv
        out: dict[int, int] = {}
        tests = 0
        bounds = [0, *cps, m.size]
        for s, e in zip(bounds[:-1], bounds[1:], strict=True):
            best = None
            positions = 0
            for width in range(1, self.excursion + 1):
                ks = np.arange(s + 2, e - width - 1)
                if ks.size == 0:
                    continue
                positions += ks.size
                inside = seg(ks, ks + width)
                before, after = seg(np.maximum(s, ks - 10), ks), seg(ks + width, np.minimum(e, ks + width + 10))
                around = {key: before[key] + after[key] for key in before}
                ml, mr = around["m"] / around["k"], inside["m"] / inside["k"]
                dfw = around["dfw"] + inside["dfw"]
                s2w = np.where(dfw > 0, (around["ssw"] + inside["ssw"]) / np.where(dfw > 0, dfw, 1), 0.0)
                _, _, _, _, tt, _, pp = _two_level_t(ml, mr, around["k"], inside["k"], around["inv"], inside["inv"],
                                                     s2w, dfw, s2v, df_b)
                rel = mr / ml - 1.0
                pp = np.where(np.isfinite(pp) & (np.abs(rel) >= self.min_change), pp, np.inf)
                j = int(np.argmin(pp))
                if np.isfinite(pp[j]) and (best is None or pp[j] < best[0]):
                    best = (float(pp[j]), int(ks[j]), width)
            if positions == 0:
                continue
            tests += 1
            if best is not None and min(1.0, best[0] * positions * factor) < self.alpha:
                out[best[1]] = out[best[1] + best[2]] = positions
        return out, tests

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes and the number of hypotheses tested: one per split the search tried."""
        changes, n_tests, _ = self.detect_with_state(series)
        return changes, n_tests

    incremental = True

    def detect_with_state(self, series: Series) -> tuple[list[Change], int, dict | None]:
        """Changes, hypotheses tested, and the state of the last segment for :meth:`check_new`."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            vs = version_stats(series, fence=self.fence)
            if vs.mean.size == 0 or not np.all(np.isfinite(vs.mean)):
                return [], 0, None
            if vs.mean.size < 2:
                return [], 0, self._state(series, vs, 0)
            modes = mode_bounds(series, fence=self.fence, rng=self.rng) if self.clusters else None
            changes, n_tests, cps = self._search(series, vs, with_cps=True, excursions=modes is None)
            state = self._state(series, vs, cps[-1] if cps else 0)
            if modes is not None:
                for j, per_mode in enumerate(mode_stats(series, modes, fence=self.fence)):
                    if per_mode.mean.size < 2:
                        continue
                    detail = f"mode {j + 1} of {len(modes) - 1} ({modes[j]:.4g} to {modes[j + 1]:.4g})"
                    found, tests = self._search(series, per_mode, factor=len(modes) - 1, detail=detail,
                                                excursions=False)
                    n_tests += tests
                    taken = {series.index(c.version) for c in changes}
                    changes += [c for c in found if not taken & {series.index(c.version) + d for d in (-1, 0, 1)}]
                changes.sort(key=lambda c: series.index(c.version))
        return changes, n_tests, state

    def _state(self, series: Series, vs: VersionStats, start: int) -> dict:
        seg = SegmentStats.of(vs, start, vs.mean.size)
        return {"last_version": series.versions[int(vs.index[-1])].name,
                "segment_start": series.versions[int(vs.index[start])].name,
                "segment": dict(vars(seg)), "version_var": _listed(version_variance(vs))}

    def check_new(self, state: dict, series: Series, *, stats: VersionStats | None = None
                  ) -> tuple[list[Change], int, dict]:
        """Test each new version, in history order, against the segment since the last change.

        One hypothesis per new version (no search, so no Bonferroni factor): the hierarchical
        test of :func:`compare_segments` between the saved segment's sufficient statistics and
        the new version, and the minimum relevant change.  A change starts a new segment; a
        version without one joins the current segment.  Creeping degradations and moved modes
        are left to the next full pass, which alerts de-duplicate against this one.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            vs = stats if stats is not None else version_stats(series, fence=self.fence)
            seg = SegmentStats(**state["segment"])
            last, start = state["last_version"], state["segment_start"]
            changes, n_tests = [], 0
            for j in range(vs.mean.size):
                new = SegmentStats.of(vs, j, j + 1)
                name = series.versions[int(vs.index[j])].name
                vv = state.get("version_var")
                res = compare_segments(seg, new, version_var=tuple(vv) if vv else None)
                n_tests += 1
                rel, lo, hi = ratio_interval(res, self.confidence_level)
                if np.isfinite(rel) and np.isfinite(res.p_value) and res.p_value < self.alpha \
                        and abs(rel) >= self.min_change:
                    changes.append(Change(
                        benchmark=series.benchmark, config=series.config, machine=series.machine,
                        version=name, previous=last, change=rel, ci_low=lo, ci_high=hi,
                        kind=kind_of(rel, series.direction), method=self.name, p_value=float(res.p_value)))
                    seg, start = new, name
                else:
                    seg = seg + new
                last = name
        return changes, n_tests, {"last_version": last, "segment_start": start, "segment": dict(vars(seg)),
                                  "version_var": state["version_var"]}

    def _search(self, series: Series, vs: VersionStats, *, factor: int = 1, detail: str | None = None,
                with_cps: bool = False, excursions: bool = True):
        # Excursions are looked for in the means of unimodal benchmarks only: in a multimodal one
        # the mean jumps with the share of each mode from run to run, and in the location of one
        # mode, measured from few samples per run, short stretches raised false alarms
        # (measured with `regbench evaluate`).
        cps, n_tests, positions = self.change_points(vs, factor=factor, excursions=excursions)
        changes = []
        for first, last in self._groups(vs, cps):
            c = self._change(series, vs, cps, first, last, factor=factor * positions[cps[first]], detail=detail)
            if c is not None:
                changes.append(c)
        return (changes, n_tests, cps) if with_cps else (changes, n_tests)

    def _groups(self, vs: VersionStats, cps: list[int]) -> list[tuple[int, int]]:
        """Change points to report, as ``(first, last)`` positions in ``cps``.

        A creeping degradation (seed 001 s.2.3) is found by the search as several nearby splits
        of the same sign, each below the minimum relevant change.  Such neighbours (at most
        ``ramp`` versions apart) are reported once, as one change from the segment before the
        first to the segment after the last; every other change point stands alone.
        """
        bounds = [0, *cps, vs.mean.size]
        small, sign = [], []
        vv = version_variance(vs)
        for i, tau in enumerate(cps):
            res = segment_test(vs, bounds[i], tau, bounds[i + 2], vv)
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

    def _change(self, series: Series, vs: VersionStats, cps: list[int], first: int, last: int, *,
                factor: int = 1, detail: str | None = None) -> Change | None:
        """The change at split ``cps[first]`` (through ``cps[last]`` for a ramp); ``factor`` is its
        Bonferroni factor (positions searched x modes)."""
        bounds = [0, *cps, vs.mean.size]
        s, tau, tau_end, e = bounds[first], cps[first], cps[last], bounds[last + 2]
        vv = version_variance(vs)
        if first == last:
            res = segment_test(vs, s, tau, e, vv)
        else:  # a ramp: the segment before it against the segment after it, the ramp left out
            res = segment_test(_without(vs, tau, tau_end), s, tau, e - (tau_end - tau), vv)
        p = min(1.0, res.p_value * factor)
        rel, lo, hi = ratio_interval(res, self.confidence_level)
        if not (np.isfinite(rel) and np.isfinite(p)) or abs(rel) < self.min_change or p >= self.alpha:
            return None
        return Change(
            benchmark=series.benchmark, config=series.config, machine=series.machine,
            version=series.versions[int(vs.index[tau])].name,
            previous=series.versions[int(vs.index[tau - 1])].name,
            change=rel, ci_low=lo, ci_high=hi,
            kind=kind_of(rel, series.direction), method=self.name, p_value=float(p), detail=detail)


def bimodality_coefficient(x: np.ndarray) -> float:
    """Sarle's bimodality coefficient; above 5/9 suggests more than one mode (SAS/STAT manual,
    PROC CLUSTER; Pfister et al., Front. Psychol. 4 (2013) 700).

    From the bias-corrected sample skewness G1 and excess kurtosis G2 (the formulas of scipy's
    ``skew``/``kurtosis`` with ``bias=False``, which the tests use as the reference), written out
    because this screen runs on every series and scipy's wrappers cost more than the arithmetic.
    """
    n = x.size
    if n < 4:
        return 0.0
    d = x - x.mean()
    m2 = float(np.mean(d * d))
    if m2 == 0:
        return 0.0
    g1 = float(np.mean(d**3)) / m2**1.5
    g2 = float(np.mean(d**4)) / m2**2 - 3
    G1 = np.sqrt(n * (n - 1)) / (n - 2) * g1
    G2 = ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3))
    return float((G1**2 + 1) / (G2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


def mode_bounds(series: Series, *, fence: float = 10.0, rng=0, max_samples: int = 4000,
                n_versions: int = 8) -> np.ndarray | None:
    """Boundaries between the modes of a multimodal series, or None when it has one mode.

    Up to ``n_versions`` versions spread over the history are screened, each on its own (a
    seeded subsample of at most ``max_samples`` of its samples, far outliers dropped as in
    :func:`robust_run_means`), by a cheap statistic, the bimodality coefficient; when most of them
    look multimodal, the clustering of seed 000 s.4.1 / seed 001 s.4.2
    (:func:`regbench.stats.find_clusters`) runs on the most clearly multimodal one.  Modes holding under 5% of the samples are ignored.  The boundaries are
    ``[-inf, b_1, ..., inf]``, each ``b`` halfway between neighbouring modes.
    """
    from ..stats import find_clusters

    have = [k for k, r in enumerate(series.runs) if r]
    if len(have) < 2:
        return None
    picks = sorted({have[int(i)] for i in np.linspace(0, len(have) - 1, min(n_versions, len(have)))})
    gen = np.random.default_rng(rng)
    pools, coefficients = [], []
    for k in picks:  # one version at a time: pooling versions across a step would make two modes
        pool = np.concatenate(series.runs[k])
        if pool.size > max_samples:
            pool = gen.choice(pool, max_samples, replace=False)
        if pool.size and pool.min() > 0:
            q10, q90 = np.quantile(pool, [0.1, 0.9])
            pool = pool[(pool >= q10 / fence) & (pool <= q90 * fence)]
        pools.append(pool)
        coefficients.append(bimodality_coefficient(pool) if pool.size >= 20 else 0.0)
    if np.median(coefficients) <= 5 / 9:
        return None
    pool = pools[int(np.argmax(coefficients))]
    cl = find_clusters(pool, rng=gen)
    big = [j for j in range(cl.n_clusters) if cl.weights[j] >= 0.05]
    if len(big) < 2:
        return None
    cuts = []
    for a, b in zip(big[:-1], big[1:], strict=True):
        hi_a = pool[cl.labels == a].max()
        lo_b = pool[cl.labels == b].min()
        cuts.append(float(np.sqrt(hi_a * lo_b)) if cl.log_scale and hi_a > 0 else (hi_a + lo_b) / 2)
    return np.array([-np.inf, *cuts, np.inf])


def mode_stats(series: Series, bounds: np.ndarray, *, fence: float = 10.0) -> list[VersionStats]:
    """Per mode, the per-version summaries of each run's mean of its samples in that mode.

    Samples outside the fences of :func:`robust_run_means` are left out first: far outliers
    would otherwise land in the slowest mode.
    """
    counts = np.array([len(r) for r in series.runs], dtype=int)
    index = np.flatnonzero(counts > 0)
    flat = [r for k in index for r in series.runs[k]]
    group = np.repeat(np.arange(index.size), counts[index])
    f_lo, f_hi = fence_bounds(flat, group=group, fence=fence)
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        values = np.empty(len(flat))
        for i, r in enumerate(flat):
            inside = r[(r > lo) & (r <= hi) & (r >= f_lo[i]) & (r <= f_hi[i])]
            values[i] = inside.mean() if inside.size else np.nan
        out.append(stats_of_runs(values, group, index))
    return out


def _listed(vv: tuple[float, float] | None) -> list[float] | None:
    return None if vv is None else [float(vv[0]), float(vv[1])]


def _without(vs: VersionStats, start: int, stop: int) -> VersionStats:
    """``vs`` without the versions ``[start, stop)`` (the inside of a ramp)."""
    keep = np.r_[0:start, stop:vs.mean.size]
    return VersionStats(vs.index[keep], vs.mean[keep], vs.var[keep], vs.n[keep])
