"""Clusters of observations: finding them, filtering them out, comparing versions cluster by cluster.

The samples of a benchmark are often a union of clusters: a run of the FFT benchmark yields "a
small number of different operation times" (seed 000 s.2, fig. 1) and a complex benchmark mixes
interactions that hit or miss a cache (seed 001 s.4.2, fig. 7).  This module

* finds the clusters of a 1-D sample without being told how many (:func:`find_clusters`):
  Gaussian mixtures with the number of components chosen by an information criterion, as the
  Mclust algorithm used by seed 000 s.4.1 does (ICL by default, BIC on request), merged into the
  modes of the mixture density; or k-means (the algorithm of seed 001 s.4.2) with the number of
  clusters chosen by the gap statistic instead of by hand;
* applies the clustering additive filter of seed 000 s.4.1 and the impact factor after it
  (:func:`clustering_additive_filter`);
* compares two versions cluster by cluster (:func:`compare_clusters`), which finds the damaged
  omniORB of seed 001 s.4.1 (figs. 7-9) that means and medians miss.

scikit-learn is imported inside the functions that use it, so ``import regbench.stats`` stays
light.

References
----------
seed 000 (000_833974a369fcaf36.txt), Kalibera, Bulej, Tuma, "Automated Detection of Performance
Regressions: The Mono Experience": s.2 impact factor; s.4.1 clusters, the clustering additive
filter (fig. 3).

seed 001 (001_0c28a3a14a5fab8a.txt), Bulej, Kalibera, Tuma, "Repeated Results Analysis for
Middleware Regression Benchmarking": s.4.1 comparing results of a complex benchmark (figs. 7-9);
s.4.2 clusters of observations, k-means.

Fraley, Raftery, "Model-based clustering, discriminant analysis and density estimation", JASA 97
(2002) (Mclust, BIC).  Biernacki, Celeux, Govaert, "Assessing a mixture model for clustering with
the integrated completed likelihood", IEEE TPAMI 22 (2000) (ICL).  Tibshirani, Walther, Hastie,
"Estimating the number of clusters in a data set via the gap statistic", JRSS B 63 (2001).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._validate import as_1d, check_confidence, check_positive_int, make_rng
from .hierarchical import HierarchicalSummary, hierarchical_summary

METHODS = ("gmm", "kmeans")
CRITERIA = ("icl", "bic")


@dataclass(frozen=True)
class Clusters:
    """Clusters of a 1-D sample (result of :func:`find_clusters`).

    Clusters are numbered by increasing centre.  ``centres``, ``weights`` and ``sds`` are computed
    from the hard assignment of *all* samples (``labels``), in the sample's units, whatever
    subsample or scale the model was fitted on.

    Attributes
    ----------
    method : str
        ``"gmm"`` (Gaussian mixture) or ``"kmeans"`` (k-means, k by the gap statistic).
    n_clusters : int
        The number of clusters found: the modes of the chosen mixture (``"gmm"`` with
        ``modes``), else its components or the k-means clusters; any left without a sample is
        dropped.
    centres : numpy.ndarray
        Mean of each cluster's members, ascending.
    weights : numpy.ndarray
        Fraction of the samples in each cluster (sums to 1).
    sds : numpy.ndarray
        Standard deviation (ddof=1) of each cluster's members; NaN for a cluster of one sample.
    labels : numpy.ndarray
        Cluster index (0 .. ``n_clusters - 1``) of every sample, in input order.
    n_components : int
        The number of mixture components chosen (``"gmm"``), or the k of k-means.
    ks : numpy.ndarray
        The numbers of components tried, ``1 .. k_max`` (fewer if the sample has fewer distinct
        values).
    bic, icl : numpy.ndarray
        ``"gmm"``: BIC and ICL of each k with scikit-learn's sign (lower is better; Mclust
        reports the negative), on the fitted (sub)sample in the fitted scale, so only
        differences between k are meaningful.  NaN for ``"kmeans"``.
    gap, gap_se : numpy.ndarray
        ``"kmeans"``: the gap statistic of each k and its simulation error ``s_k``.  NaN for
        ``"gmm"``.
    n_fit : int
        How many samples the model was fitted on (a seeded subsample when the sample is larger
        than ``max_fit``); every sample is then assigned to a cluster.
    log_scale : bool
        Whether the model was fitted to ``log(sample)``.
    """

    method: str
    n_clusters: int
    centres: np.ndarray
    weights: np.ndarray
    sds: np.ndarray
    labels: np.ndarray
    n_components: int
    ks: np.ndarray
    bic: np.ndarray
    icl: np.ndarray
    gap: np.ndarray
    gap_se: np.ndarray
    n_fit: int
    log_scale: bool


@dataclass(frozen=True)
class AdditiveFilterResult:
    """Result of :func:`clustering_additive_filter`.

    Attributes
    ----------
    filtered : tuple of numpy.ndarray
        Each run with the mean of its sample's cluster subtracted from every sample.
    clusters : Clusters
        The clusters of all samples pooled over runs (``labels`` in the order of the runs,
        concatenated).
    before, after : HierarchicalSummary
        :func:`regbench.stats.hierarchical_summary` of the raw and of the filtered runs.
    """

    filtered: tuple[np.ndarray, ...]
    clusters: Clusters
    before: HierarchicalSummary
    after: HierarchicalSummary

    @property
    def impact_before(self) -> float:
        """Impact factor of the raw runs, ``sqrt(S_rho^2 / (S_sigma^2 / n))`` (seed 000 s.2)."""
        return self.before.impact_factor

    @property
    def impact_after(self) -> float:
        """Impact factor after the clustering additive filter (seed 000 s.4.1, fig. 3)."""
        return self.after.impact_factor


@dataclass(frozen=True)
class ClusterShift:
    """One cluster present in both versions (an element of :attr:`ClusterComparison.shifts`).

    Attributes
    ----------
    index_a, index_b : int
        The cluster's index in ``clusters_a`` and ``clusters_b``.
    centre_a, centre_b : float
        Mean of the replicate means of the cluster in each version.
    change : float
        Relative shift of the cluster's location, ``centre_b / centre_a - 1`` (0.1 = +10%).
    ci_low, ci_high : float
        Confidence interval of ``change``: Welch's interval for ``centre_b - centre_a`` divided by
        ``centre_a`` (so that it excludes 0 exactly when ``p_value < 1 - confidence_level``).
    p_value : float
        Two-sided Welch t-test of equal locations.
    weight_a, weight_b : float
        Mean fraction of a run's samples that fall in the cluster.
    weight_change : float
        ``weight_b - weight_a`` (absolute, 0.05 = five percentage points).
    weight_p_value : float
        Two-sided test of equal weights: Welch on per-run fractions when replicates are runs, the
        two-proportion z-test otherwise.
    replicates : str
        ``"runs"`` when both versions have at least two runs with members in the cluster (each
        run's cluster mean is one replicate, as runs are the unit of replication, seed 000 s.2);
        otherwise ``"iterations"``: the cluster's samples are taken as independent replicates, as
        seed 001 s.4.2 does, which is optimistic when runs differ or samples are auto-dependent.
    n_a, n_b : int
        Replicates on each side.
    """

    index_a: int
    index_b: int
    centre_a: float
    centre_b: float
    change: float
    ci_low: float
    ci_high: float
    p_value: float
    weight_a: float
    weight_b: float
    weight_change: float
    weight_p_value: float
    replicates: str
    n_a: int
    n_b: int


@dataclass(frozen=True)
class ClusterComparison:
    """Cluster-by-cluster comparison of two versions (result of :func:`compare_clusters`).

    Attributes
    ----------
    clusters_a, clusters_b : Clusters
        The clusters of each version (all its runs pooled).
    shifts : tuple of ClusterShift
        The clusters matched across versions, by increasing ``centre_a``.
    disappeared : tuple of int
        Indices into ``clusters_a`` of clusters without a counterpart in B.
    appeared : tuple of int
        Indices into ``clusters_b`` of clusters without a counterpart in A.
    confidence_level : float
    """

    clusters_a: Clusters
    clusters_b: Clusters
    shifts: tuple[ClusterShift, ...]
    disappeared: tuple[int, ...]
    appeared: tuple[int, ...]
    confidence_level: float

    @property
    def significant(self) -> tuple[ClusterShift, ...]:
        """Matched clusters whose location changed at ``confidence_level`` (no multiplicity
        adjustment: with many clusters, adjust the ``p_value`` fields, e.g. by Holm)."""
        alpha = 1 - self.confidence_level
        return tuple(s for s in self.shifts if s.p_value < alpha)


# --------------------------------------------------------------------------------------------
# finding clusters


def find_clusters(sample, *, method: str = "gmm", criterion: str = "icl", k_max: int = 9,
                  max_fit: int = 4096, log: bool | None = None, modes: bool = True,
                  dequantise: bool = True, n_references: int = 10, rng=None) -> Clusters:
    """Find the clusters (modes) of a 1-D sample without being told how many.

    Parameters
    ----------
    sample : array_like, 1-D
        Finite measurements, e.g. all samples of one run or of several runs pooled.
    method : {"gmm", "kmeans"}, keyword-only
        ``"gmm"`` (default): Gaussian mixtures with ``k = 1 .. k_max`` components, each fitted by
        EM (scikit-learn ``GaussianMixture``, k-means++ start, seeded), keeping the best k by
        ``criterion``, as Mclust does (seed 000 s.4.1; Mclust's default range is also 1..9).
        Mixtures let clusters have their own spread, which benchmark clusters do (a fast cache
        hit is narrower than a slow database wait, seed 001 fig. 7).

        ``"kmeans"``: k-means (scikit-learn ``KMeans``, the algorithm of seed 001 s.4.2) with k
        chosen by the gap statistic (Tibshirani et al. 2001) against ``n_references`` uniform
        reference samples on the range of the data.  The gap statistic is chosen over the
        silhouette because it can answer k = 1 (a unimodal sample, the common case), which the
        silhouette, undefined for one cluster, cannot.  The rule is the "global SE max" of
        Dudoit and Fridlyand (2002, also R ``cluster::clusGap``): the smallest k with
        ``gap(k) >= max gap - s`` at the maximum.  Tibshirani's own first-SE rule stops at k = 1
        on three equally spaced clusters, because splitting them in two reduces the
        within-cluster dispersion by the same factor (4) as splitting a uniform sample: the
        tests show it.  k-means assumes clusters of similar spread; prefer ``"gmm"`` when they
        differ a lot.
    criterion : {"icl", "bic"}, keyword-only
        How ``"gmm"`` chooses k.  ``"bic"`` is the Bayesian information criterion, Mclust's
        default: a consistent estimate of the number of *components* of a mixture, which it
        spends on the shape of a cluster as readily as on separate clusters.  ``"icl"``
        (default), the integrated completed likelihood (Biernacki, Celeux, Govaert 2000;
        Mclust's ``mclustICL``), adds to BIC twice the entropy of the assignment of samples to
        components, so overlapping components that only model a skewed or heavy-tailed shape
        cost more than they gain.  Benchmark timings are skewed (a floor plus delays), and there
        the difference decides everything (``python benchmarks/bench_clusters.py --accuracy``,
        20 seeded samples of 4096 per shape): on shifted exponential, gamma, Weibull and
        half-normal samples BIC found 2 to 8 clusters (3 to 9 components) in every sample and
        ICL found the one cluster in every sample; both found the 2 or 3 clusters of the
        damaged-omniORB and FFT data, of normals 4 sd apart (70/30) and 6 sd apart (90/10), and
        ICL the three clusters of a sample of three skewed ones in 18 of 20 (BIC in none).  ICL
        takes two equal normals only 3 sd apart for one cluster, which BIC with ``modes`` splits
        correctly.  Both criteria are reported per k.
    k_max : int, keyword-only
        Largest number of clusters tried.
    max_fit : int, keyword-only
        The model is fitted on a seeded random subsample of at most this many samples, then every
        sample is assigned to a cluster.  A subsample of 4096 keeps a cluster of 1% weight at
        about 40 points, and takes a 65,536-sample run (seed 001 s.3.2) from 1.5-2.7 s (a
        mixture per k on all points; 6-9 s on a loaded machine) to 0.14-0.22 s
        (``benchmarks/bench_clusters.py``).  The criteria on a subsample penalise as for
        ``max_fit`` samples, so they are slightly more reluctant to add a component than on the
        full sample.
    log : bool or None, keyword-only
        Fit the model to ``log(sample)``.  ``None`` (default) does so when every sample is
        positive: timings vary multiplicatively, and on the log scale a 100 us cluster and an
        80 ms cluster (seed 001 fig. 7) have comparable spreads instead of five orders of
        magnitude between their variances.  The fitted scale is also standardised (median,
        standard deviation), so the covariance regularisation is relative.
    modes : bool, keyword-only
        ``"gmm"`` only: one cluster per mode of the fitted mixture density rather than per
        component.  Components whose means climb to the same peak of the mixture density are
        one cluster, and each sample goes to the peak whose basin (the interval between the
        neighbouring density minima) holds it; the clusters are then the peaks a person sees
        in a histogram, which is what seed 001 s.4.2 compares.  ``False`` gives the components
        themselves (most probable component per sample), as Mclust does.
    dequantise : bool, keyword-only
        Samples read from a coarse timer take few distinct values, and a mixture then puts a
        component on each of them (a normal sample of sd 2 rounded to whole units gave 9
        "clusters").  When the sample has ties, the model is fitted to the samples plus seeded
        triangular jitter on +- the smallest gap between distinct values (one timer tick),
        which makes a quantised sample continuous again: normal samples of sd 0.3 to 5 ticks,
        rounded, then gave 1 cluster in 50 of 50 fits (Gaussian jitter of sd half a tick
        leaves ripples of about 4% that a mixture of 4096 points resolves, and gave 9).
        Clusters closer than about a tick cannot be told from quantisation.  ``centres``,
        ``sds`` and ``weights`` are computed from the unjittered samples.
    n_references : int, keyword-only
        Reference samples of the gap statistic (``"kmeans"`` only).
    rng : int, numpy.random.Generator or None, keyword-only
        Seeds the subsample, the jitter, the EM / k-means starts and the gap references.

    Returns
    -------
    Clusters
        A constant sample (or one of a single value) gives one cluster and NaN criteria with a
        :class:`RuntimeWarning`.

    Raises
    ------
    ValueError
        On an empty or non-finite sample, an unknown ``method`` or ``criterion``, a non-positive
        ``k_max``, ``max_fit`` or ``n_references``, or ``log=True`` with non-positive samples.

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.4.1 (Mclust); seed 001 (001_0c28a3a14a5fab8a.txt)
    s.4.2 (k-means, clusters of observations).
    """
    x = as_1d(sample, "sample")
    if x.size == 0:
        raise ValueError("`sample` must not be empty")
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, METHODS))}")
    if criterion not in CRITERIA:
        raise ValueError(f"`criterion` must be one of {', '.join(map(repr, CRITERIA))}")
    check_positive_int(k_max, "k_max")
    check_positive_int(max_fit, "max_fit")
    check_positive_int(n_references, "n_references")
    if log is None:
        use_log = bool(np.all(x > 0))
    elif isinstance(log, bool | np.bool_):
        use_log = bool(log)
        if use_log and not np.all(x > 0):
            raise ValueError("`log` needs positive samples")
    else:
        raise ValueError("`log` must be True, False or None")
    gen = make_rng(rng)

    if x.size < 2 or np.ptp(x) == 0:
        warnings.warn("fewer than two distinct values: one cluster, no model fitted",
                      RuntimeWarning, stacklevel=2)
        scores = _Scores(np.array([1]), *(np.full(1, np.nan) for _ in range(4)))
        return _summarise(x, np.zeros(x.size, dtype=np.intp), method, scores, n_fit=int(x.size),
                          log_scale=use_log, n_components=1)
    xf = _dequantise(x, use_log, gen) if dequantise else x
    y = np.log(xf) if use_log else xf
    z = (y - float(np.median(y))) / float(y.std())
    fit = z if z.size <= max_fit else gen.choice(z, size=max_fit, replace=False)
    ks = np.arange(1, int(min(k_max, np.unique(fit).size)) + 1)
    if method == "gmm":
        labels, n_comp, scores = _gmm(z, fit, ks, gen, criterion, modes)
    else:
        labels, n_comp, scores = _kmeans_gap(z, fit, ks, n_references, gen)
    return _summarise(x, labels, method, scores, n_fit=int(fit.size), log_scale=use_log,
                      n_components=n_comp)


@dataclass(frozen=True)
class _Scores:
    ks: np.ndarray
    bic: np.ndarray
    icl: np.ndarray
    gap: np.ndarray
    gap_se: np.ndarray


def _dequantise(x: np.ndarray, positive: bool, gen: np.random.Generator) -> np.ndarray:
    """Break ties by triangular jitter on +- the smallest gap between distinct values."""
    u = np.unique(x)
    if u.size == x.size:
        return x
    tick = float(np.diff(u).min())
    # The triangle (two uniforms of one tick) turns the comb of quantised values into the
    # linear interpolation of their frequencies: continuous, without the ripples a Gaussian
    # jitter leaves (4% for sd half a tick) or the steps of a uniform one.
    out = x + gen.triangular(-tick, 0.0, tick, size=x.size)
    if positive:  # stay positive for the log (only for values within a few ticks of 0)
        out = np.where(out > 0, out, x)
    return out


def _seed(gen: np.random.Generator) -> int:
    # scikit-learn takes an int seed; drawn from the one Generator so everything follows `rng`.
    return int(gen.integers(2**31 - 1))


def _one_thread():
    # Fits of a few thousand 1-D points gain nothing from threads, and under load OpenMP's
    # spin-waiting turned 10 ms k-means fits into 1 s stalls on the 2-core test machine.
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def _gmm(z: np.ndarray, fit: np.ndarray, ks: np.ndarray, gen: np.random.Generator, criterion: str,
         modes: bool):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    f = fit[:, None]
    models, bic, icl = [], np.empty(ks.size), np.empty(ks.size)
    for i, k in enumerate(ks):
        gm = GaussianMixture(n_components=int(k), covariance_type="full", reg_covar=1e-6,
                             max_iter=200, n_init=1, init_params="k-means++",
                             random_state=_seed(gen))
        with warnings.catch_warnings(), _one_thread():
            # A k that EM cannot fit well has a poor likelihood and loses anyway; the chosen
            # model's convergence is checked below.
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(f)
            tau = gm.predict_proba(f)
        models.append(gm)
        bic[i] = gm.bic(f)
        entropy = -float(np.sum(tau * np.log(np.maximum(tau, np.finfo(float).tiny))))
        icl[i] = bic[i] + 2 * entropy  # scikit-learn's BIC sign: -2 log L + p log n
    best = models[int(np.argmin(icl if criterion == "icl" else bic))]
    if not best.converged_:
        warnings.warn(f"the Gaussian mixture chosen by {criterion.upper()} did not converge in 200 EM "
                      "steps", RuntimeWarning, stacklevel=3)
    if modes:
        labels = np.searchsorted(_antimodes(best, float(z.min()), float(z.max())), z)
    else:
        with _one_thread():
            labels = best.predict(z[:, None])
    nan = np.full(ks.size, np.nan)
    return labels, best.n_components, _Scores(ks, bic, icl, nan, nan.copy())


def _antimodes(gm, lo: float, hi: float) -> np.ndarray:
    """Minima of a 1-D mixture density between its consecutive modes, on ``[lo, hi]``.

    The density is evaluated on a grid four times finer than the narrowest component (at most
    200,001 points); a mode is a local maximum, an antimode the lowest point between two modes.
    Points between two antimodes climb to the same mode: they are one cluster.
    """
    w = gm.weights_
    mu = gm.means_[:, 0]
    sd = np.sqrt(gm.covariances_.reshape(-1))
    if w.size == 1 or hi <= lo:
        return np.empty(0)
    n = int(min(max((hi - lo) / (sd.min() / 4), 2048), 200_000)) + 1
    grid = np.linspace(lo, hi, n)
    dens = np.zeros(n)
    for wj, mj, sj in zip(w, mu, sd, strict=True):
        dens += wj / sj * np.exp(-0.5 * ((grid - mj) / sj) ** 2)
    d = np.diff(dens)
    peaks = [int(i) + 1 for i in np.flatnonzero((d[:-1] > 0) & (d[1:] <= 0))]
    if d[0] < 0:  # falling from the left end: a mode at (or below) the smallest sample
        peaks.insert(0, 0)
    if d[-1] > 0:
        peaks.append(n - 1)
    return np.array([grid[p + int(np.argmin(dens[p:q + 1]))]
                     for p, q in zip(peaks[:-1], peaks[1:], strict=True)])


def _kmeans_gap(z: np.ndarray, fit: np.ndarray, ks: np.ndarray, n_references: int,
                gen: np.random.Generator):
    from sklearn.cluster import KMeans

    def fit_k(data: np.ndarray, k: int, n_init: int = 3):
        with _one_thread():
            km = KMeans(n_clusters=int(k), n_init=n_init, random_state=_seed(gen)).fit(data[:, None])
        return km, max(float(km.inertia_), np.finfo(float).tiny)

    models, log_w = [], np.empty(ks.size)
    for i, k in enumerate(ks):
        km, w = fit_k(fit, k)
        models.append(km)
        log_w[i] = np.log(w)
    lo, hi = float(fit.min()), float(fit.max())
    ref_log_w = np.empty((n_references, ks.size))
    for b in range(n_references):
        ref = gen.uniform(lo, hi, size=fit.size)
        for i, k in enumerate(ks):
            # One k-means++ start suffices on a uniform sample; the mean over references
            # absorbs the rest.
            ref_log_w[b, i] = np.log(fit_k(ref, k, 1)[1])
    gap = ref_log_w.mean(axis=0) - log_w
    se = ref_log_w.std(axis=0) * np.sqrt(1 + 1 / n_references)
    top = int(np.argmax(gap))
    choice = int(np.flatnonzero(gap >= gap[top] - se[top])[0])
    centres = np.sort(models[choice].cluster_centers_[:, 0])
    # 1-D nearest centre: the boundaries are the midpoints between sorted centres.
    labels = np.searchsorted((centres[1:] + centres[:-1]) / 2, z)
    return labels, int(ks[choice]), _Scores(ks, np.full(ks.size, np.nan), np.full(ks.size, np.nan), gap, se)


def _summarise(x: np.ndarray, labels: np.ndarray, method: str, scores: _Scores, *, n_fit: int,
               log_scale: bool, n_components: int) -> Clusters:
    labels = np.asarray(labels, dtype=np.intp)
    n_comp = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=n_comp).astype(float)
    sums = np.bincount(labels, weights=x, minlength=n_comp)
    used = counts > 0  # a component may win no sample at all: it is not a cluster
    means = sums[used] / counts[used]
    order = np.argsort(means, kind="stable")
    # Relabel: old index -> rank of its centre among the used ones.
    remap = np.full(n_comp, -1, dtype=np.intp)
    remap[np.flatnonzero(used)[order]] = np.arange(order.size)
    new = remap[labels]
    k = order.size
    counts = counts[used][order]
    centres = means[order]
    dev = x - centres[new]
    ss = np.bincount(new, weights=dev * dev, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        sds = np.where(counts > 1, np.sqrt(ss / np.maximum(counts - 1, 1)), np.nan)
    return Clusters(method, k, centres, counts / x.size, sds, new, int(n_components), scores.ks,
                    scores.bic, scores.icl, scores.gap, scores.gap_se, n_fit, log_scale)


# --------------------------------------------------------------------------------------------
# clustering additive filter


def _as_runs(runs, name: str) -> list[np.ndarray]:
    if isinstance(runs, np.ndarray) and runs.ndim == 1:
        raise ValueError(f"`{name}` must be a sequence of runs (1-D arrays), not one run")
    arrays = [as_1d(r, name) for r in runs]
    if not arrays:
        raise ValueError(f"`{name}` must contain at least one run")
    if any(a.size == 0 for a in arrays):
        raise ValueError(f"`{name}` must not contain an empty run")
    return arrays


def clustering_additive_filter(runs: Sequence[np.ndarray], *, method: str = "gmm", criterion: str = "icl",
                               k_max: int = 9, max_fit: int = 4096, log: bool | None = None,
                               confidence_level: float = 0.99, rng=None) -> AdditiveFilterResult:
    """The clustering additive filter of seed 000 s.4.1 and the impact factor after it.

    All samples of all runs are pooled and split into clusters (:func:`find_clusters`); "then,
    for each cluster, the average of durations from the cluster is subtracted from each duration
    in the cluster" (seed 000 s.4.1).  The impact factor of the random initial conditions,
    ``sqrt(S_rho^2 / (S_sigma^2 / n))`` of :func:`regbench.stats.hierarchical_summary`, is
    computed before and after.  When runs differ mainly by which clusters they fall into (the
    FFT benchmark, seed 000 figs. 1 and 3), the impact factor drops from tens or hundreds to about
    1: within each cluster the runs fit the additive model of seed 000 s.3.1.

    Parameters
    ----------
    runs : sequence of 1-D arrays
        The measured samples (warm-up removed) of each run.
    method, criterion, k_max, max_fit, log, rng : keyword-only
        As in :func:`find_clusters`.
    confidence_level : float, keyword-only
        Passed to :func:`hierarchical_summary` (the paper's 0.99).

    Returns
    -------
    AdditiveFilterResult
        Fewer than two runs give NaN impact factors with a :class:`RuntimeWarning` (from
        :func:`hierarchical_summary`).

    References
    ----------
    seed 000 (000_833974a369fcaf36.txt) s.2 (impact factor), s.4.1 (clustering additive filter,
    fig. 3).
    """
    arrays = _as_runs(runs, "runs")
    check_confidence(confidence_level)
    pooled = np.concatenate(arrays)
    clusters = find_clusters(pooled, method=method, criterion=criterion, k_max=k_max, max_fit=max_fit,
                             log=log, rng=rng)
    residual = pooled - clusters.centres[clusters.labels]
    bounds = np.cumsum([a.size for a in arrays])[:-1]
    filtered = tuple(np.split(residual, bounds))
    before = hierarchical_summary(arrays, confidence_level=confidence_level)
    after = hierarchical_summary(filtered, confidence_level=confidence_level)
    return AdditiveFilterResult(filtered, clusters, before, after)


# --------------------------------------------------------------------------------------------
# cluster-by-cluster comparison


@dataclass(frozen=True)
class WelchDifference:
    """Welch's comparison of two means: ``diff = mean(b) - mean(a)``, its interval
    ``[low, high]`` and the two-sided p-value."""

    diff: float
    low: float
    high: float
    p: float


def welch_difference(a: np.ndarray, b: np.ndarray, confidence_level: float) -> WelchDifference:
    """Welch's two-sample t for ``mean(b) - mean(a)``, by hand so that zero spread on both
    sides is an exact answer instead of a scipy precision warning."""
    diff = float(b.mean() - a.mean())
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se2 = va + vb
    if se2 == 0:
        return WelchDifference(diff, diff, diff, 1.0 if diff == 0 else 0.0)
    df = se2**2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    # scipy.stats costs 0.5-0.7 s to import, in every worker of a detection whose first search
    # finds modes (find_clusters, above, needs none of it): only when comparing clusters.
    from scipy import stats as _st

    se = np.sqrt(se2)
    t = diff / se
    q = _st.t.ppf(0.5 + confidence_level / 2, df)
    return WelchDifference(diff, float(diff - q * se), float(diff + q * se), float(2 * _st.t.sf(abs(t), df)))


def _two_proportions(ka: int, na: int, kb: int, nb: int) -> float:
    pool = (ka + kb) / (na + nb)
    se = np.sqrt(pool * (1 - pool) * (1 / na + 1 / nb))
    if se == 0:
        return 1.0
    from scipy import stats as _st

    return float(2 * _st.norm.sf(abs(kb / nb - ka / na) / se))


def _match(ca: np.ndarray, cb: np.ndarray, max_distance: float) -> list[tuple[int, int]]:
    from scipy.optimize import linear_sum_assignment

    scale = np.maximum(np.abs(ca)[:, None], np.abs(cb)[None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        cost = np.abs(cb[None, :] - ca[:, None]) / scale
    cost = np.where(np.isfinite(cost), cost, 0.0)  # both centres 0: the same place
    big = 1e6  # forbidden pairs: linear_sum_assignment needs finite costs
    rows, cols = linear_sum_assignment(np.where(cost <= max_distance, cost, big))
    return sorted((int(i), int(j)) for i, j in zip(rows, cols, strict=True) if cost[i, j] <= max_distance)


def _per_run(arrays: list[np.ndarray], labels: np.ndarray, c: int):
    """Per run: number of members of cluster ``c``, their mean, and the run's length."""
    bounds = np.cumsum([0] + [a.size for a in arrays])
    counts, means, members = [], [], []
    for j, a in enumerate(arrays):
        mask = labels[bounds[j]:bounds[j + 1]] == c
        counts.append(int(mask.sum()))
        means.append(float(a[mask].mean()) if mask.any() else np.nan)
        members.append(a[mask])
    return np.array(counts), np.array(means), np.array([a.size for a in arrays]), members


def compare_clusters(a_runs: Sequence[np.ndarray], b_runs: Sequence[np.ndarray], *, method: str = "gmm",
                     criterion: str = "icl", k_max: int = 9, max_fit: int = 4096,
                     log: bool | None = None, max_distance: float = 0.5,
                     confidence_level: float = 0.99, rng=None) -> ClusterComparison:
    """Compare two versions cluster by cluster (seed 001 s.4.1-4.2).

    When a change touches only some clusters of a multimodal benchmark, it can be invisible in the
    mean and the median: in seed 001 figs. 7-9 an omniORB damaged to be 10% slower on a remote
    call shifts the ~100 us cache-hit cluster, but the ~80 ms cluster of database waits dominates
    the mean and holds the median.  Here

    1. each version's runs are pooled and clustered separately (:func:`find_clusters`; pooling
       both versions would split a shifted cluster into two);
    2. clusters are matched across versions by their centres (optimal assignment minimising the
       relative distance ``|c_b - c_a| / max(|c_a|, |c_b|)``; pairs farther apart than
       ``max_distance`` are not matched);
    3. each matched cluster's location is compared with runs as replicates (each run's mean of
       its members in the cluster; Welch's t) when both versions have two or more runs with
       members in it, else with the cluster's samples as replicates, as seed 001 s.4.2 does;
    4. each matched cluster's weight (fraction of a run's samples) is compared the same way, and
       unmatched clusters are reported as appeared or disappeared.

    Parameters
    ----------
    a_runs, b_runs : sequences of 1-D arrays
        The measured samples (warm-up removed) of each run of versions A and B.
    method, criterion, k_max, max_fit, log : keyword-only
        As in :func:`find_clusters`.
    max_distance : float, keyword-only
        Largest relative distance between matched centres (0.5: up to a factor of 2).
    confidence_level : float, keyword-only
        Of the intervals of the shifts.
    rng : int, numpy.random.Generator or None, keyword-only
        Seeds both clusterings.

    Returns
    -------
    ClusterComparison
        A matched cluster with fewer than two replicates on a side gets NaN interval and p-values
        with a :class:`RuntimeWarning`.

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.4.1 (figs. 7-9), s.4.2; seed 000
    (000_833974a369fcaf36.txt) s.2 (runs are the unit of replication).
    """
    a_arrays = _as_runs(a_runs, "a_runs")
    b_arrays = _as_runs(b_runs, "b_runs")
    check_confidence(confidence_level)
    if not isinstance(max_distance, numbers.Real) or not max_distance > 0:
        raise ValueError("`max_distance` must be positive")
    gen = make_rng(rng)
    options = dict(method=method, criterion=criterion, k_max=k_max, max_fit=max_fit, log=log, rng=gen)
    ca = find_clusters(np.concatenate(a_arrays), **options)
    cb = find_clusters(np.concatenate(b_arrays), **options)
    pairs = _match(ca.centres, cb.centres, float(max_distance))
    shifts = tuple(_compare_one(a_arrays, ca, i, b_arrays, cb, j, confidence_level) for i, j in pairs)
    disappeared = tuple(sorted(set(range(ca.n_clusters)) - {i for i, _ in pairs}))
    appeared = tuple(sorted(set(range(cb.n_clusters)) - {j for _, j in pairs}))
    return ClusterComparison(ca, cb, shifts, disappeared, appeared, confidence_level)


def _compare_one(a_arrays, ca: Clusters, i: int, b_arrays, cb: Clusters, j: int,
                 confidence_level: float) -> ClusterShift:
    na_k, a_means, a_sizes, a_members = _per_run(a_arrays, ca.labels, i)
    nb_k, b_means, b_sizes, b_members = _per_run(b_arrays, cb.labels, j)
    a_frac, b_frac = na_k / a_sizes, nb_k / b_sizes
    nan = float("nan")
    if (na_k > 0).sum() >= 2 and (nb_k > 0).sum() >= 2:
        replicates = "runs"
        ra, rb = a_means[na_k > 0], b_means[nb_k > 0]
        w_p = welch_difference(a_frac, b_frac, confidence_level).p
    else:
        replicates = "iterations"
        ra, rb = np.concatenate(a_members), np.concatenate(b_members)
        w_p = _two_proportions(int(na_k.sum()), int(a_sizes.sum()), int(nb_k.sum()), int(b_sizes.sum()))
    centre_a, centre_b = float(ra.mean()), float(rb.mean())
    change = centre_b / centre_a - 1 if centre_a != 0 else nan
    if ra.size < 2 or rb.size < 2 or centre_a == 0:
        warnings.warn(f"cluster {i} of A / {j} of B has fewer than two replicates on a side or a zero "
                      "centre: its shift is undecidable", RuntimeWarning, stacklevel=3)
        lo = hi = p = nan
    else:
        w = welch_difference(ra, rb, confidence_level)
        lo, hi, p = w.low / centre_a, w.high / centre_a, w.p
        if centre_a < 0:
            lo, hi = hi, lo
    return ClusterShift(i, j, centre_a, centre_b, float(change), float(lo), float(hi), float(p),
                        float(a_frac.mean()), float(b_frac.mean()), float(b_frac.mean() - a_frac.mean()),
                        float(w_p), replicates, int(ra.size), int(rb.size))
