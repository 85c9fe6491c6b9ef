"""`regbench diagnose`: can this benchmark be trusted, and what should change?

Gathers, for one experiment (benchmark x version, one configuration and machine), the
statistics of the papers that tell whether its results are trustworthy:

- precision over runs x iterations, impact factor, within- and between-run noise
  (seed 000 s.2, s.3.1) and the robust variant (s.4.2);
- auto-dependence of the iterations of a run against a random reordering (seed 000 s.4.1);
- clusters (modes) and the impact factor after the clustering additive filter (seed 000 s.4.1,
  seed 001 s.4.2);
- outliers by Tukey fences and MAD (seed 000 s.4.2), reported, not dropped;
- warm-up found per run by MSER-5 (seed 001 s.2.2) against the configured warm-up;
- normality of run means under the transformations of seed 001 s.3.3;
- the cheapest runs x iterations for a target precision (seed 000 s.3.1).

Pure computation over arrays from the store; :mod:`regbench.report.diagnosis` prints it and
draws its plots (with :mod:`regbench.report.plots`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError, NotFoundError
from .stats import HierarchicalSummary, hierarchical_summary, robust_summary
from .stats.hierarchical import RepetitionPlan, plan_repetitions
from .stats.levels import FastestLevel
from .stats.runs import LocationChoice
from .store import HistoryView, Store

#: The largest sample magnitudes a diagnosis computes with: their squares (variances) and sums
#: of thousands of them stay within double precision's normal range.
DIAGNOSABLE = (1e-150, 1e150)

if TYPE_CHECKING:
    from .detect.auto import Auto
    from .model import Series


@dataclass(frozen=True)
class Diagnosis:
    """Everything :func:`diagnose` found about one experiment (see the module docstring)."""

    benchmark: str
    version: str
    config: str
    machine: str
    unit: str
    raw_runs: tuple[np.ndarray, ...]  # every ok run, warm-up included
    warmups: tuple[int, ...]  # configured warm-up of each run
    failed_runs: int
    summary: HierarchicalSummary
    robust: HierarchicalSummary
    within_cv: float  # sqrt(S_sigma^2) / mean
    between_cv: float  # sqrt(rho^2) / mean
    lag1: float  # median lag-1 autocorrelation of the runs
    lag1_reordered: float  # the same after random reordering
    dependent_runs: int  # runs whose Ljung-Box rejects independence at 1% while their reordering does not
    clusters: int  # modes of the pooled measured samples (GMM, k by ICL; supported_clusters)
    cluster_centres: tuple[float, ...]
    cluster_weights: tuple[float, ...]
    impact_after_filter: float  # impact factor after the clustering additive filter
    outliers_mild: int  # Tukey: beyond 1.5 IQR, within 3 IQR
    outliers_extreme: int  # Tukey: beyond 3 IQR
    outliers_mad: int  # |modified z| > 3.5
    largest_outlier_ratio: float  # the largest sample over the median
    warmup_detected: int  # MSER-5 warm-up to drop from every run (a high quantile over runs)
    warmup_per_run: tuple[int, ...]
    normality: dict[str, float]  # Shapiro-Wilk p-value of the run means per transformation
    best_transform: str
    plan: RepetitionPlan | None
    target: float
    #: How detection summarises this benchmark's runs (over all its versions; ``auto``'s choice).
    location: LocationChoice | None = None
    advice: tuple[str, ...] = field(default=())
    #: When whole runs land at separate levels and ``auto`` follows the fastest one, that level
    #: (over all versions of the series): its runs are searched as a history of their own.
    levels: FastestLevel | None = None
    #: When whole runs each stay in one of several modes (over all versions of the series): how
    #: often a version has the two runs in each that detection needs to measure it.
    run_modes: RunModes | None = None

    @property
    def exact(self) -> bool:
        """Whether the interval has no width: every run alike to the last digit (a count, a
        constant), 0 included, where a relative width is 0 / 0."""
        return bool(self.summary.half_width == 0)

    @property
    def relative_half_width(self) -> float:
        """The interval's half-width over the mean's size; 0 for an interval of no width, also
        around 0 (as the dashboard counts a count exactly 0 in every run stable); NaN for a mean
        of 0 with an interval around it (a relative precision has no meaning there)."""
        return 0.0 if self.exact else self.summary.relative_half_width

    @property
    def trustworthy(self) -> bool:
        """Precise enough for the target, and the runs' structure does not undermine it."""
        return bool(self.relative_half_width <= self.target)


@dataclass(frozen=True)
class RunModes:
    """Whole runs that land in one of several modes and stay there (modes between runs: a
    process's memory layout or core placement, seed 000 s.2's random initial conditions), over
    every version of a history, and what that means for the runs a version needs.

    Detection measures a mode at a version only when two of the version's runs or more lie in it
    (:func:`regbench.stats.levels.mode_stats`; docs/detection.md, point 5), and follows a mode
    or the fastest level as a history of its own only where that holds at
    :data:`regbench.detect.auto.SCAN_MODE_COVERAGE` (90%) of the versions.  With each run
    landing in the rarest mode with probability ``p`` independently, a version of ``n`` runs has
    two or more there with the binomial probability ``P(X >= 2)``, ``X ~ Binomial(n, p)``.

    Attributes
    ----------
    shares : tuple of float
        The share of the runs that lie in each mode, lowest value first in the series as detection
        searches it (:meth:`~regbench.detect.auto.Auto.oriented`: a time, or a throughput's
        reciprocal), so fastest first; modes under 5% of the runs left out, as
        :func:`regbench.detect.modes.mode_bounds` leaves them out.
    runs_per_version : int
        The median number of runs of a version with runs.
    coverage : float
        ``P(X >= 2)`` for the rarest mode with ``runs_per_version`` runs: the expected share of
        versions where detection measures it.
    needed : int or None
        The fewest runs a version for a coverage of 90% (None: more than :data:`MAX_RUNS_ADVISED`).
    """

    shares: tuple[float, ...]
    runs_per_version: int
    coverage: float
    needed: int | None


#: The most runs a version that the advice on modes between runs names.
MAX_RUNS_ADVISED = 100
#: A cluster of the pooled samples counts as a mode when it holds at least this many samples and
#: this share of them (:func:`supported_clusters`).
MIN_CLUSTER_SAMPLES = 10
MIN_CLUSTER_SHARE = 0.10


def supported_clusters(n: int, centres: tuple[float, ...], weights: tuple[float, ...]
                       ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The clusters of ``n`` pooled samples that count as modes: those holding at least
    ``max(MIN_CLUSTER_SAMPLES, MIN_CLUSTER_SHARE * n)`` samples; ``((), ())`` when fewer than
    two do (one mode).

    A Gaussian mixture fitted to a few samples finds clusters of one or two samples in a plain
    unimodal sample (8-9 clusters in 15 lognormal samples, each of 7-33%), and the advice to
    compare versions cluster by cluster followed.  A component estimated from fewer than 10
    samples has a standard deviation known to about a quarter (``1 / sqrt(2 (n - 1))``), too
    loosely to tell a second mode from the skewed tail of one; a cluster under 10% of the
    samples is a tail or outliers, which Tukey's and the MAD's counts report.
    """
    need = max(MIN_CLUSTER_SAMPLES, MIN_CLUSTER_SHARE * n)
    kept = [(c, w) for c, w in zip(centres, weights, strict=True) if w * n >= need]
    if len(kept) < 2:
        return (), ()
    return tuple(c for c, _ in kept), tuple(w for _, w in kept)


def run_modes(series: Series, auto: Auto) -> RunModes | None:
    """:class:`RunModes` of ``series`` with the modes ``auto`` (an :class:`~regbench.detect.auto.Auto`)
    finds, or None when its runs do not each stay in one of several modes."""
    from scipy.stats import binom

    from .detect.auto import SCAN_MODE_COVERAGE, WHOLE_RUNS
    from .detect.modes import mode_bounds
    from .stats.levels import run_mode_counts

    if not auto.clusters:
        return None
    bounds = mode_bounds(series, fence=auto.fence, rng=auto.rng)
    if bounds is None:
        return None
    counts, total = run_mode_counts(series.runs, bounds)
    if not total or counts.sum() < WHOLE_RUNS * total:
        return None  # modes within runs (every run visits them): each run measures each mode
    shares = counts / counts.sum()
    shares = shares[shares >= 0.05]
    if shares.size < 2:
        return None
    n = int(np.median([len(v) for v in series.runs if len(v)]))
    p = float(shares.min())
    coverage = float(binom.sf(1, n, p))
    needed = next((m for m in range(2, MAX_RUNS_ADVISED + 1) if binom.sf(1, m, p) >= SCAN_MODE_COVERAGE), None)
    return RunModes(tuple(float(x) for x in shares / shares.sum()), n, coverage, needed)


def diagnose(source: Store | HistoryView, benchmark: str, *, version: str | None = None, config: str | None = None,
             machine: str | None = None, target: float = 0.01, confidence_level: float = 0.99,
             rng=0, detector_options: Mapping[str, Any] | None = None) -> Diagnosis:
    """Diagnose one experiment (default: the latest version of the history with at least two ok runs).

    ``source`` is read as detection reads it: a :class:`~regbench.store.HistoryView` (``regbench
    diagnose`` gives the one ``regbench detect`` reads: the first-parent line of the branch, the
    runs of sessions left out, or centred with ``--all-sessions``), or a store, read as
    ``HistoryView(store)`` (every version, the runs of ``compare --run``, ``bisect`` and
    ``--confirm`` sessions left out).  The diagnosed version's runs are those of the history too.
    ``detector_options`` are keyword arguments of the ``auto`` detector (``regbench detect
    --option``): the location and levels reported are the ones detection with them uses."""
    history = source if isinstance(source, HistoryView) else HistoryView(source)
    store = history.store
    series = history.load_series(benchmark, config=config, machine=machine)
    sessions = set(store.session_campaigns()) if history.sessions == "exclude" else set()
    if not series:
        if sessions and store.load_series(benchmark, config=config, machine=machine):
            raise NotFoundError(f"benchmark {benchmark!r} has no runs but those of sessions of compare --run, "
                                "bisect or confirm, which detection leaves out (--all-sessions includes them)")
        where = " and ".join(f"{k} {v!r}" for k, v in (("configuration", config), ("machine", machine)) if v)
        raise NotFoundError(f"benchmark {benchmark!r} has no runs" + (f" on {where}" if where else ""))
    s = series[0]
    # The versions it can diagnose: two ok runs of two measured iterations or more (a version
    # measured with a 1-iteration plan has neither within-run noise nor a warm-up to find).
    usable = [k for k in range(len(s)) if sum(r.size >= 2 for r in s.runs[k]) >= 2]
    if version is None:
        if not usable:
            raise NotFoundError(f"no version of {benchmark!r} has two successful runs of two measured "
                                f"iterations to diagnose ({_where(s)})")
        version = s.versions[usable[-1]].name
    else:
        version = store.resolve_version(version)
    raw = [r for r in store.raw_runs(benchmark, version, config=s.config, machine=s.machine)
           if r.campaign_id not in sessions]
    ok = [(r.warmup, r.samples) for r in raw if r.status == "ok" and r.samples.size - r.warmup >= 2]
    failed = sum(1 for r in raw if r.failed)
    if len(ok) < 2:
        left_out = " outside sessions of compare --run, bisect or confirm (--all-sessions includes them)" \
            if sessions else ""
        instead = next((s.versions[k].name for k in reversed(usable) if s.versions[k].name != version), None)
        hint = f"; the latest that can be is {instead!r} (--version {instead})" if instead else ""
        raise NotFoundError(f"{benchmark!r} at {version!r} ({_where(s)}) needs at least two successful runs of two "
                            f"measured samples{left_out} to be diagnosed ({len(ok)} found){hint}")
    warmups = tuple(w for w, _ in ok)
    raw_runs = tuple(x for _, x in ok)
    runs = [x[w:] for w, x in ok]
    size = max(float(np.max(np.abs(x))) for x in runs)
    if size > 0 and not DIAGNOSABLE[0] <= size <= DIAGNOSABLE[1]:
        # Squares of such samples leave double precision: variances underflow to 0 or overflow,
        # and a probe's samples of 1e-200 ended in a ZeroDivisionError, then a singular matrix.
        raise InputError(f"{benchmark!r} at {version!r} has samples of magnitude {size:.3g}, outside what the "
                         f"statistics compute with ({DIAGNOSABLE[0]:g} to {DIAGNOSABLE[1]:g}): store them in "
                         "another unit to diagnose them")
    gen = np.random.default_rng(rng)
    seed = int(gen.integers(2**31))

    summary = hierarchical_summary(runs, confidence_level=confidence_level, warmup=max(warmups))
    # The resampling of `summary` (its seed, 0 by default): the two show the same robust result.
    robust = robust_summary(runs, confidence_level=confidence_level, warmup=max(warmups),
                            rng=rng if isinstance(rng, int) else seed)
    mean = summary.mean

    from .extras import require

    require("statsmodels", what="regbench diagnose (its auto-dependence test)")
    from .stats.clusters import clustering_additive_filter
    from .stats.dependence import reordering_comparison
    from .stats.outliers import mad_outliers, tukey_outliers
    from .stats.warmup import detect_warmup

    with warnings.catch_warnings():
        # Constant or tiny runs make some tests undefined; the diagnosis reports NaN for them.
        warnings.simplefilter("ignore", RuntimeWarning)
        deps = [reordering_comparison(r, rng=seed + j) for j, r in enumerate(runs) if r.size >= 8]
        lag1 = float(np.median([d.acf.acf[1] for d in deps])) if deps else float("nan")
        lag1_r = float(np.median([d.reordered_acf.acf[1] for d in deps])) if deps else float("nan")
        dependent = sum(d.order_matters for d in deps)
        filt = clustering_additive_filter(runs, rng=seed, confidence_level=confidence_level)
        pooled = np.concatenate(runs)
        tukey = tukey_outliers(pooled)
        mad = mad_outliers(pooled)
        wu = detect_warmup(list(raw_runs))
        normality = _normality(summary.run_means)

    centres, weights = supported_clusters(pooled.size, tuple(map(float, filt.clusters.centres)),
                                          tuple(map(float, filt.clusters.weights)))
    one_mode = not centres  # the filter's clusters are not modes: nothing to filter
    med = float(np.median(pooled))
    ratio = float(pooled.max() / med) if med > 0 else float("nan")
    best = max(normality, key=lambda k: (np.nan_to_num(normality[k], nan=-1.0), k == "raw"))
    try:
        plan = plan_repetitions(runs, target_relative_half_width=target, confidence_level=confidence_level,
                                warmup=max(max(warmups), int(wu.n_warmup)))
    except ValueError:
        plan = None
    from .detect.auto import Auto

    auto = Auto(**dict(detector_options or {}))
    location = auto.location(s)  # the location detection compares this series by, chosen by the same rule
    searched = auto.oriented(s)[0]  # the series as detection searches it (a throughput's reciprocal)
    d = Diagnosis(
        benchmark=s.benchmark, version=version, config=s.config, machine=s.machine, unit=s.unit,
        raw_runs=raw_runs, warmups=warmups, failed_runs=failed, summary=summary, robust=robust,
        within_cv=float(np.sqrt(summary.s2_sigma) / abs(mean)) if mean else float("nan"),
        between_cv=float(np.sqrt(summary.rho2) / abs(mean)) if mean else float("nan"),
        lag1=lag1, lag1_reordered=lag1_r, dependent_runs=int(dependent),
        clusters=1 if one_mode else len(centres), cluster_centres=(mean,) if one_mode else centres,
        cluster_weights=(1.0,) if one_mode else weights,
        impact_after_filter=summary.impact_factor if one_mode else filt.impact_after,
        outliers_mild=int(tukey.mild.sum()), outliers_extreme=int(tukey.extreme.sum()),
        outliers_mad=int(mad.outliers.sum()), largest_outlier_ratio=ratio,
        warmup_detected=int(wu.n_warmup), warmup_per_run=tuple(int(x) for x in wu.per_run),
        normality=normality, best_transform=best, plan=plan, target=target,
        location=location, levels=auto.followed_level(searched, location, sum(1 for r in s.runs if r)),
        run_modes=run_modes(searched, auto))
    return _with_advice(d, n_runs=len(runs))


def _where(s: Series) -> str:
    """``configuration NAME, machine NAME`` of the series diagnosed."""
    return f"configuration {s.config!r}, machine {s.machine!r}"


def _normality(run_means: np.ndarray) -> dict[str, float]:
    """Shapiro-Wilk p-values of the run means, raw and transformed (seed 001 s.3.3)."""
    from scipy import stats

    out = {}
    x = np.asarray(run_means, dtype=float)
    for name, f in (("raw", lambda v: v), ("log", np.log), ("1/x", lambda v: 1 / v),
                    ("1/sqrt(x)", lambda v: 1 / np.sqrt(v))):
        if x.size < 3 or (name != "raw" and np.any(x <= 0)) or np.ptp(x) == 0:
            out[name] = float("nan")
            continue
        out[name] = float(stats.shapiro(f(x)).pvalue)
    return out


def _with_advice(d: Diagnosis, *, n_runs: int) -> Diagnosis:
    from .detect.auto import SCAN_MODE_COVERAGE

    advice = []
    s = d.summary
    if d.exact and s.mean == 0:
        advice.append("Every sample is exactly 0 (a count such as allocations of a loop that makes none): the "
                      "result is exact, and a change is a step to above 0, which detect and compare find from "
                      "any run.")
    elif not np.isfinite(d.relative_half_width):
        advice.append(f"The mean is 0 within its interval (+-{s.half_width:.3g} {d.unit}): a relative precision "
                      f"has no meaning there, so +-{d.target:.1%} cannot be met; judge the interval in "
                      f"{d.unit or 'the unit'}, and compare versions by their difference (as compare does).")
    if s.impact_factor > 2:
        advice.append(f"Runs differ {s.impact_factor:.1f}x more than their iterations would explain (impact "
                      "factor): precision comes from more runs, not more iterations per run.")
    if d.clusters > 1:
        advice.append(f"The samples form {d.clusters} clusters; after the clustering additive filter the impact "
                      f"factor is {d.impact_after_filter:.2g}: compare versions cluster by cluster when one mode moves.")
    if d.dependent_runs:
        advice.append(f"{d.dependent_runs} of {n_runs} runs show auto-dependence (Ljung-Box at 1%, gone after "
                      "random reordering): iterations are not independent, so only runs count as replicates.")
    if d.outliers_extreme:
        advice.append(f"{d.outliers_extreme} extreme outliers (beyond 3 IQR; the largest is {d.largest_outlier_ratio:.3g}x "
                      "the median): prefer the robust result, and look for their cause.")
    configured = max(d.warmups)
    if d.warmup_detected > configured:
        advice.append(f"Runs reach a steady state only after about {d.warmup_detected} iterations (MSER-5), but "
                      f"only {configured} are discarded as warm-up: set warmup = {d.warmup_detected}.")
    m = d.run_modes
    if m is not None and m.coverage < SCAN_MODE_COVERAGE:
        shares = " / ".join(f"{x:.0%}" for x in m.shares)
        more = (f"{m.needed} runs a version give 90%" if m.needed is not None
                else f"even {MAX_RUNS_ADVISED} runs a version give less than 90%")
        advice.append(f"Whole runs land in {len(m.shares)} modes ({shares} of the runs, fastest first): detection "
                      f"measures a mode at a version only with two of its runs there, which {m.runs_per_version} "
                      f"runs a version give the rarest mode at about {m.coverage:.0%} of the versions, so a change "
                      f"of that mode is found late or not at all; {more}.")
    if d.plan is not None and not d.exact and np.isfinite(d.relative_half_width):
        cur = (configured + s.n_iterations) * n_runs
        advice.append(f"For +-{d.target:.1%} at {s.confidence_level:.0%}: {d.plan.runs} runs x {d.plan.iterations} "
                      f"iterations (+{d.plan.warmup} warm-up), {d.plan.cost} iterations in all against {cur:.0f} now.")
    if np.isfinite(d.normality.get("raw", np.nan)) and d.normality["raw"] < 0.05 and d.best_transform != "raw":
        best = d.normality[d.best_transform]
        # "Look normal" only where the transform passes the same test; else it is only the least
        # far from normal (a probe: "under 1/x they look normal (p = 0.039)").
        advice.append(f"Run means are not normal (Shapiro-Wilk p = {d.normality['raw']:.2g}); under "
                      + (f"{d.best_transform} they look normal (p = {best:.2g})." if best >= 0.05 else
                         f"{d.best_transform} they are the least far from normal, and still not (p = {best:.2g}): "
                         "compare them by ranks or the robust result."))
    return Diagnosis(**{**d.__dict__, "advice": tuple(advice)})
