"""``clusters``: consecutive versions compared cluster by cluster (seed 001 s.4.1-4.2).

The samples of a complex benchmark are a union of clusters, "interactions that differ in that one
hits while the other misses accessing an object cache" (seed 001 s.4.2).  A change can move one
cluster and leave the mean and median almost where they were: in seed 001 s.4.1 (figs. 7-9) an
omniORB damaged to be 10% slower on a remote call shifts the ~100 us cache-hit cluster while the
~80 ms database waits keep the averages "almost the same for the two versions".  Detectors that
compare means (``ci-overlap``, ``talos-ttest``) miss it; "results can be compared
cluster-by-cluster" (s.4.2).

For every pair of consecutive versions with at least ``min_runs`` successful runs this detector
calls :func:`regbench.stats.clusters.compare_clusters`: each version's pooled samples are
clustered (Gaussian mixtures, the number chosen by ICL, one cluster per mode), the clusters of
the two versions are matched by their centres and each matched cluster is compared with runs as
replicates (each run's mean of its members; Welch's t; seed 000 s.2).  Then:

* **The family of tests.**  The location of every matched cluster that is a clean mode in both
  versions, the weight (fraction of a run's samples) of every matched cluster when all clusters
  of both versions are clean (all but the heaviest when the weights are tied by summing to one: a
  cache whose hit rate drops changes weights, not locations), and the mean of run means of the
  whole versions, which covers whatever is not clean.  A clean mode is

  - *separated*: its centre is at least ``separation`` times ``sd_i + sd_j`` from each
    neighbour's.  Each version is clustered on its own, so where two overlapping clusters are
    cut differs from version to version, and with runs as replicates the cluster means are
    precise enough for that alone to look significant: on quiet series with two modes 4 sd
    apart, testing every matched cluster reported a false change at 29% of pairs (44 of 150),
    this family at 0.7% (1 of 150);
  - *mixed*: most runs with samples in it have samples in another cluster too.  A mode of the
    benchmark shows up inside runs; a cluster made of whole runs is the runs' random offsets
    (seed 000 s.2) grouped by the clustering, and comparing such clusters compares arbitrary
    groups of runs (a quiet series with runs 0.6% apart and 0.03% of noise within a run gave a
    false "mode 1 of 5 moved" at p = 4e-6).

  Tests that would take a cluster's samples as replicates (a cluster present in fewer than two
  runs of a version) are left out: their p-values ignore the run-to-run variation.
* **Holm.**  The p-values are adjusted by Holm's step-down method (valid under any dependence);
  the pair is a change when its smallest adjusted p-value, among tests whose change is at least
  ``min_change``, is below ``1 - confidence_level``.  That adjusted p-value is the change's
  ``p_value``: the pair is one hypothesis, "the two versions do not differ".
* **What is reported.**  A moved cluster: ``change`` is the relative shift of its centre with
  the Welch interval of :class:`~regbench.stats.clusters.ClusterShift`, and ``detail`` names the
  mode ("mode 1 of 2 (centre 99.9, 68% of samples) moved").  A changed weight or a changed mean:
  ``change`` is the relative change of the mean of run means (the central value) with Welch's
  interval over runs; for a weight change the interval may contain 0 when the share of a mode
  moved but the mean hardly did.

Relevance floor (``min_change``, 3% by default as in seed 004 s.4.5).  Runs as replicates see the
noise inside a version, not the noise between versions (a build that lays out code a little
differently, a machine state that lasts a version): two versions of one quiet benchmark can
differ for real by a fraction of a percent, and every test here calls that significant.  On 24
series of the evaluation corpus (``regbench.evaluate``, quiet, step and bimodal series, 936
version pairs) the detector found 38% of the mode shifts of the bimodal series, which
``ci-overlap``, ``bootstrap-ci``, ``talos-ttest`` and ``forecast`` all missed, and 12 of the 20
relevant changes with 68 false alarms per 1,000 pairs without a floor, 12 with 9.6 at 1%, and
11 with 1.1 (precision 0.92, the best F1 of the five) at 3%.

Unimodal data (one cluster in each version) is the special case where the one test is Welch's t
on the run means: a plain comparison of consecutive versions (``detail`` says "unimodal").

Speed: two mixtures of 1 to ``k_max`` components per pair of versions (each version is
clustered once as the newer and once as the older of a pair).  Versions with more than
``max_samples`` samples are sub-sampled (the same fraction of every run, seeded): 0.1-0.2 s per
pair with ``k_max=5`` and 1,000 samples.  Clustering and sub-sampling are seeded by ``rng``
and the versions' positions, so results are reproducible.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ..model import Series
from .base import Change, Detector, kind_of, register


@register
class ClustersDetector(Detector):
    """Cluster-by-cluster comparison of consecutive versions (seed 001 s.4.1-4.2).

    Parameters
    ----------
    confidence_level : float, keyword-only
        A pair is a change when its smallest Holm-adjusted p-value is below
        ``1 - confidence_level``; also the level of the intervals.
    min_change : float, keyword-only
        Smallest relative change (of the cluster's centre, or of the mean) reported: 3%, the
        relevance threshold of seed 004 s.4.5 (see the module docstring for why not 0).
    k_max : int, keyword-only
        Largest number of mixture components tried per version (5; 9, Mclust's and
        :func:`~regbench.stats.clusters.find_clusters`' default, takes twice the time).
    separation : float, keyword-only
        A cluster is tested on its own only when its centre is at least ``separation`` times
        ``sd_i + sd_j`` from each neighbour's centre in both versions (3: under 0.2% of a normal
        cluster's samples lie past the cut between them, so where each clustering puts the cut
        hardly moves the cluster's mean).
    max_samples : int, keyword-only
        Samples per version above which the version is sub-sampled (1,000).
    min_runs : int, keyword-only
        Versions with fewer successful runs are skipped (2: runs are the replicates).
    rng : int, keyword-only
        Seed of clustering and sub-sampling.
    """

    name = "clusters"
    p_values = True

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.03, k_max: int = 5,
                 separation: float = 3.0, max_samples: int = 1000, min_runs: int = 2, rng: int = 0):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        for value, label, low in ((k_max, "k_max", 1), (max_samples, "max_samples", 20), (min_runs, "min_runs", 2)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
                raise ValueError(f"`{label}` must be an integer of at least {low}")
        if not isinstance(separation, numbers.Real) or not separation > 0:
            raise ValueError("`separation` must be positive")
        if not isinstance(rng, numbers.Integral) or isinstance(rng, bool) or rng < 0:
            raise ValueError("`rng` must be a non-negative integer seed")
        # Annotated: after the isinstance checks against numbers.* above, mypy cannot infer these
        # attributes' types in time for the methods that read them ([has-type]).
        self.k_max: int = int(k_max)
        self.separation: float = float(separation)
        self.max_samples: int = int(max_samples)
        self.min_runs: int = int(min_runs)
        self.rng: int = int(rng)

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes and the number of pairs compared (one hypothesis each)."""
        usable = [k for k, runs in enumerate(series.runs) if sum(1 for r in runs if len(r)) >= self.min_runs]
        changes: list[Change] = []
        for prev, k in zip(usable[:-1], usable[1:], strict=True):
            change = self._compare(series, prev, k)
            if change is not None:
                changes.append(change)
        return changes, max(0, len(usable) - 1)

    def _compare(self, series: Series, prev: int, k: int) -> Change | None:
        from ..stats.clusters import compare_clusters

        a = self._subsample(series.runs[prev], [self.rng, prev, 0])
        b = self._subsample(series.runs[k], [self.rng, k, 1])
        with warnings.catch_warnings():
            # Degenerate versions (constant samples, a cluster with one replicate) warn and give
            # NaN p-values, which are left out of the family.
            warnings.simplefilter("ignore", RuntimeWarning)
            cmp = compare_clusters(a, b, k_max=self.k_max, confidence_level=self.confidence_level,
                                   rng=[self.rng, prev, k])
            mean = _mean_test(a, b, self.confidence_level)
        tests = self._family(cmp, mean, a, b)
        if not tests:
            return None
        adjusted = holm([t.p_value for t in tests])
        relevant = [(float(p), t) for p, t in zip(adjusted, tests, strict=True)
                    if np.isfinite(t.change) and abs(t.change) >= self.min_change]
        if not relevant:
            return None
        p_adj, t = min(relevant, key=lambda pt: pt[0])  # ties: the first, cluster tests before the mean
        if not p_adj < 1 - self.confidence_level:
            return None
        return Change(
            benchmark=series.benchmark, config=series.config, machine=series.machine,
            version=series.versions[k].name, previous=series.versions[prev].name,
            change=t.change, ci_low=t.ci_low, ci_high=t.ci_high, kind=kind_of(t.change, series.direction),
            method=self.name, p_value=p_adj, detail=_describe(t, cmp))

    def _family(self, cmp, mean: _Test, a: list[np.ndarray], b: list[np.ndarray]) -> list[_Test]:
        """The honest tests of one comparison (see the module docstring)."""
        ca, cb = cmp.clusters_a, cmp.clusters_b
        if ca.n_clusters == cb.n_clusters == 1:
            s = cmp.shifts[0]  # one cluster on both sides: its location is the mean of run means
            one = _Test(s.p_value, "location", 0, s.change, s.ci_low, s.ci_high, s.weight_a, s.weight_b)
            return [one] if np.isfinite(s.p_value) else []
        ok_a = _separated(ca, self.separation) & _mixed(ca, a)
        ok_b = _separated(cb, self.separation) & _mixed(cb, b)
        by_runs = [s for s in cmp.shifts if s.replicates == "runs"]
        tests = [_Test(s.p_value, "location", s.index_a, s.change, s.ci_low, s.ci_high, s.weight_a, s.weight_b)
                 for s in by_runs if np.isfinite(s.p_value) and ok_a[s.index_a] and ok_b[s.index_b]]
        if ok_a.all() and ok_b.all():
            weighted = [s for s in by_runs if np.isfinite(s.weight_p_value)]
            if len(weighted) == len(cmp.shifts) == ca.n_clusters == cb.n_clusters:
                # The weights sum to one on both sides: the heaviest cluster's change is minus
                # the sum of the others', so its test would add nothing but multiplicity.
                heaviest = max(weighted, key=lambda s: s.weight_a)
                weighted = [s for s in weighted if s is not heaviest]
            tests += [_Test(s.weight_p_value, "weight", s.index_a, mean.change, mean.ci_low, mean.ci_high,
                            s.weight_a, s.weight_b) for s in weighted]
        if np.isfinite(mean.p_value):
            tests.append(mean)
        return tests

    def _subsample(self, runs: list[np.ndarray], seed) -> list[np.ndarray]:
        arrays = [np.asarray(r, dtype=float) for r in runs if len(r)]
        total = sum(r.size for r in arrays)
        if total <= self.max_samples:
            return arrays
        gen = np.random.default_rng(seed)
        keep = self.max_samples / total
        return [r[np.sort(gen.choice(r.size, size=max(1, round(r.size * keep)), replace=False))] for r in arrays]


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the order given (Holm, Scand. J. Stat. 6, 1979).

    The i-th smallest of m p-values becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``; rejecting
    the adjusted p-values below ``alpha`` controls the family-wise error rate at ``alpha`` under
    any dependence between the tests.  By hand because statsmodels' ``multipletests`` runs the
    garbage collector on every call (90 ms, a third of a comparison).
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(p.size)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((p.size - np.arange(p.size)) * p[order]))
    return adjusted


@dataclass(frozen=True)
class _Test:
    p_value: float
    aspect: str  # "location", "weight" or "mean"
    mode: int | None  # index into the older version's clusters
    change: float
    ci_low: float
    ci_high: float
    weight_a: float = float("nan")
    weight_b: float = float("nan")


def _describe(t: _Test, cmp) -> str:
    ca = cmp.clusters_a
    if ca.n_clusters == 1 and cmp.clusters_b.n_clusters == 1:
        return "unimodal: mean of run means moved"
    if t.aspect == "mean":
        return f"mean of run means moved ({ca.n_clusters} modes, {cmp.clusters_b.n_clusters} after)"
    assert t.mode is not None  # location and weight tests always name their cluster; only "mean" has none
    mode = f"mode {t.mode + 1} of {ca.n_clusters} (centre {ca.centres[t.mode]:.4g}"
    if t.aspect == "location":
        return f"{mode}, {t.weight_a:.0%} of samples) moved"
    return f"{mode}) share of samples {t.weight_a:.0%} -> {t.weight_b:.0%}"


def _separated(c, separation: float) -> np.ndarray:
    """Whether each cluster's centre is ``separation`` (sd_i + sd_j) or more from its neighbours'."""
    ok = np.ones(c.n_clusters, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.diff(c.centres) / (c.sds[:-1] + c.sds[1:])
    close = ~(gap >= separation)  # NaN sd (a one-sample cluster): not known to be separated
    ok[:-1] &= ~close
    ok[1:] &= ~close
    return ok


def _mixed(c, runs: list[np.ndarray]) -> np.ndarray:
    """Whether most runs with samples in each cluster also have samples in another cluster.

    A mode of the benchmark (a cache hit or miss) shows up inside runs; a cluster made of whole
    runs is the runs' random offsets (seed 000 s.2) grouped by the clustering, and comparing such
    clusters across versions compares arbitrary groups of runs.
    """
    if c.n_clusters == 1:
        return np.ones(1, dtype=bool)
    owner = np.repeat(np.arange(len(runs)), [r.size for r in runs])
    present = np.zeros((len(runs), c.n_clusters), dtype=bool)
    present[owner, c.labels] = True
    with_members = present.sum(axis=0)
    mixed = (present & (present.sum(axis=1, keepdims=True) > 1)).sum(axis=0)
    return 2 * mixed >= with_members


def _mean_test(a: list[np.ndarray], b: list[np.ndarray], confidence_level: float) -> _Test:
    """Welch's t on the run means of the whole versions; change and interval relative to A's mean."""
    from ..stats.clusters import welch_difference

    ra = np.array([r.mean() for r in a])
    rb = np.array([r.mean() for r in b])
    centre = float(ra.mean())
    nan = float("nan")
    if centre == 0 or ra.size < 2 or rb.size < 2:
        return _Test(nan, "mean", None, nan, nan, nan)
    w = welch_difference(ra, rb, confidence_level)
    lo, hi = sorted((w.low / centre, w.high / centre))
    return _Test(w.p, "mean", None, float(rb.mean() / centre - 1), lo, hi)
