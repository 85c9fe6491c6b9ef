"""Analyses over the store: summary, comparison and variance, as plain data for any front end.

This is the analysis module of seed 001 fig. 1: it reads series from the results repository
(:class:`~regbench.store.Store`), hands arrays to :mod:`regbench.stats`, and returns dataclasses
that the CLI, reports and the web layer present.  Detection over a store has its own driver,
:func:`regbench.detect.driver.detect_changes`.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .errors import NotFoundError
from .failures import build_note
from .model import BuildInfo, Series, SeriesName
from .stats import (
    Comparison, HierarchicalSummary, compare_runs, compare_signed, components, resampled_run_stats, run_location,
    verdict,
)
from .store import Store

if TYPE_CHECKING:
    from .detect.driver import SeriesSource
    from .stats.variance import VarianceComparison


@dataclass(frozen=True)
class ExperimentSummary:
    """Result and precision of one experiment (benchmark x version x config x machine)."""

    benchmark: str
    version: str
    config: str
    machine: str
    unit: str
    direction: str
    failed_runs: int
    warmup: int
    plain: HierarchicalSummary | None  # seed 000 s.3.1
    robust: HierarchicalSummary | None  # seed 000 s.4.2
    #: The benchmark whose invocation failed at this version, leaving this series (a tool's
    #: report or a measure of it) without a run there; None for an experiment with runs.
    not_reported: str | None = None
    #: The tool's own score where it weighs its samples (a JMH sample-mode iteration by its timed
    #: invocations, :attr:`regbench.model.RunRecord.weights`): every measured sample of the ok runs,
    #: weighted (:func:`pooled_mean`); None where the samples are not weighted.  ``plain.mean``
    #: stays the mean of run means, each the plain mean of its iterations, as the statistics use.
    pooled_mean: float | None = None


def summarize_series(series_list: Iterable[Series], *, confidence_level: float = 0.99,
                     robust: bool = True, warmup_cost: int | None = None, rng=0,
                     ) -> list[ExperimentSummary]:
    """Summaries of every experiment of the given series.

    The robust variant's resampling runs once over all runs of all experiments (see
    :func:`regbench.stats.resampled_run_stats`), so thousands of experiments cost one pass.
    ``warmup_cost`` overrides the warm-up iterations ``w`` used for ``n_opt`` (otherwise the
    warm-up the runs actually discarded).
    """
    series_list = list(series_list)
    flat: list[np.ndarray] = []
    slots = []
    for s in series_list:
        for k in range(len(s)):
            slots.append((s, k, len(flat), len(flat) + len(s.runs[k])))
            flat.extend(s.runs[k])
    sizes, means, variances = run_moments(flat)
    if robust and flat:
        r_means, r_vars = resampled_run_stats(flat, rng=rng)
    out = []
    with warnings.catch_warnings():
        # Undecidable experiments (one run) are shown as such; the warning is for library users.
        warnings.simplefilter("ignore", RuntimeWarning)
        for s, k, a, b in slots:
            w = s.warmup[k] if warmup_cost is None else warmup_cost
            plain = rob = None
            if b > a:
                plain = components(means[a:b], variances[a:b], sizes[a:b],
                                   confidence_level=confidence_level, warmup=w)
                if robust:
                    rob = components(r_means[a:b], r_vars[a:b], sizes[a:b],
                                     confidence_level=confidence_level, warmup=w)
            out.append(ExperimentSummary(s.benchmark, s.versions[k].name, s.config, s.machine, s.unit,
                                         s.direction, s.failed[k], s.warmup[k], plain, rob))
    return out


def run_moments(runs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Size, mean and variance (ddof=1) of every run; runs of equal length in one numpy call."""
    sizes = np.array([a.size for a in runs], dtype=float)
    means = np.full(len(runs), np.nan)
    variances = np.full(len(runs), np.nan)
    by_len: dict[int, list[int]] = {}
    for j, a in enumerate(runs):
        by_len.setdefault(a.size, []).append(j)
    for k, idx in by_len.items():
        if k == 0:
            continue
        x = np.stack([runs[j] for j in idx])
        means[idx] = x.mean(axis=1)
        if k > 1:
            variances[idx] = x.var(axis=1, ddof=1)
    return sizes, means, variances


def pooled_mean(samples: Iterable[np.ndarray], weights: Iterable[np.ndarray]) -> float:
    """The weighted mean of every sample of several runs, ``sum(w x) / sum(w)``: a tool's own score
    where each of its samples pools ``w`` measurements (JMH's sample mode pools every timed
    invocation of every iteration, so an iteration weighs by its count, where the plain mean
    weighs every iteration alike).  NaN without weight."""
    x = np.concatenate([np.asarray(a, dtype=float) for a in samples] or [np.empty(0)])
    w = np.concatenate([np.asarray(a, dtype=float) for a in weights] or [np.empty(0)])
    if x.shape != w.shape:
        raise ValueError("`samples` and `weights` must hold one weight per sample")
    total = float(w.sum())
    return float(x @ w) / total if total > 0 else float("nan")


def _pooled_means(store: Store, rows: list[ExperimentSummary], *, config: str | None,
                  machine: str | None) -> list[ExperimentSummary]:
    """``rows`` with :attr:`ExperimentSummary.pooled_mean` where every ok run of the experiment
    has weights (a JMH sample-mode benchmark's), from their measured samples."""
    names = sorted({r.benchmark for r in rows if r.plain is not None})
    if not names:
        return rows
    weighted: dict[tuple[str, str, str, str], dict[int, np.ndarray]] = {}
    for info in store.run_tools(benchmarks=names if len(names) <= 500 else None, config=config, machine=machine,
                                weighted=True):
        if info.weights is not None:
            weighted.setdefault((info.benchmark, info.version, info.config, info.machine),
                                {})[info.run_index] = info.weights
    if not weighted:
        return rows
    out = []
    for r in rows:
        key = (r.benchmark, r.version, r.config, r.machine)
        if key in weighted and r.plain is not None:
            ok = [run for run in store.raw_runs(r.benchmark, r.version, config=r.config, machine=r.machine)
                  if run.status == "ok"]
            have = weighted[key]
            if ok and all(run.run_index in have and have[run.run_index].size == run.samples.size for run in ok):
                r = dataclasses.replace(r, pooled_mean=pooled_mean([run.samples[run.warmup:] for run in ok],
                                                                   [have[run.run_index][run.warmup:] for run in ok]))
        out.append(r)
    return out


def summarize(store: Store, *, benchmark: str | None = None, version: str | None = None,
              config: str | None = None, machine: str | None = None, **options) -> list[ExperimentSummary]:
    version = store.resolve_version(version) if version else None
    series = store.load_series(benchmark, config=config, machine=machine, versions=[version] if version else None)
    rows = _pooled_means(store, summarize_series(series, **options), config=config, machine=machine)
    if not store.runs(version=version, failed=True):
        return rows
    # Failed runs that --retry-failed ran again with success since are history, not failures:
    # not counted, and an experiment with nothing else (a tool's invocation that failed whole,
    # whose retry stored what the tool reports under other names) is no row.
    from .inventory import configured_benchmarks, failure_counts, runs_and_retries

    runs, retried = runs_and_retries(store, version=version)
    still = failure_counts(runs, retried)
    rows = [dataclasses.replace(r, failed_runs=still[(r.benchmark, r.version, r.config, r.machine)])
            if r.failed_runs else r for r in rows]
    rows = [r for r in rows if r.plain is not None or r.failed_runs]
    missing = _not_reported(store, runs, still, benchmark=benchmark, config=config, machine=machine,
                            configured=frozenset().union(*configured_benchmarks(store).values()))
    if not missing:
        return rows
    order = {v.name: k for k, v in enumerate(store.versions())}
    first: dict[tuple[str, str, str], int] = {}
    for k, r in enumerate(rows):  # the series keep their order; a series' versions follow history
        first.setdefault((r.benchmark, r.config, r.machine), k)
    for r in missing:  # a series with no row of its own goes after the others, by name
        first.setdefault((r.benchmark, r.config, r.machine), len(rows) + len(first))
    return sorted(rows + missing, key=lambda r: (first[(r.benchmark, r.config, r.machine)], order.get(r.version, -1)))


def _not_reported(store: Store, runs, still: Counter, *, benchmark: str | None, config: str | None,
                  machine: str | None, configured: frozenset[str]) -> list[ExperimentSummary]:
    """A row for each series a tool reports (or each measure) with no run at all at a version
    where the benchmark's own invocation failed (and was not run again with success since), so
    that ``summary`` says why it has no result there rather than nothing (``compare`` calls such
    a benchmark ``failed``).  Only the series the tool reported at the nearest version before
    (else after) where it reported anything: not one added later or dropped earlier."""
    failed = [key for key, n in still.items() if n]
    if not failed:
        return []
    present = {(r.benchmark, r.version, r.config, r.machine) for r in runs}
    infos = {b.name: b for b in store.benchmarks()}
    order = {v.name: k for k, v in enumerate(store.versions())}
    family: dict[tuple[str, str], list[str]] = {}  # (base, config) -> its derived series
    for name, cfg, _ in store.series_keys():
        base = SeriesName.parse(name).benchmark
        if base != name and name not in configured and name not in family.get((base, cfg), []):
            family.setdefault((base, cfg), []).append(name)
    out = []
    for b, v, c, m in failed:
        names = family.get((b, c), [])
        if not names or (config is not None and c != config) or (machine is not None and m != machine):
            continue
        reported = {n: set(store.measured_versions(n, c).get(m, ())) for n in names}
        seen = sorted({x for vs in reported.values() for x in vs if x in order}, key=order.__getitem__)
        before = [x for x in seen if order[x] < order.get(v, -1)]
        after = [x for x in seen if order[x] > order.get(v, -1)]
        near = before[-1] if before else (after[0] if after else None)
        for name in names:
            if near is None or near not in reported[name] or (name, v, c, m) in present:
                continue
            if benchmark is not None and name != benchmark:
                continue
            info = infos.get(name)
            out.append(ExperimentSummary(name, v, c, m, info.unit if info else "",
                                         info.direction if info else "lower", 0, 0, None, None,
                                         not_reported=b))
    return out


@dataclass(frozen=True)
class BenchmarkComparison:
    """Version B against version A for one series: ``verdict`` is one of
    :data:`regbench.stats.compare.VERDICTS`, or ``"failed"`` when B's runs all failed."""

    benchmark: str
    config: str
    machine: str
    unit: str
    direction: str
    comparison: Comparison
    verdict: str
    a: str
    b: str
    #: What each run contributed (:func:`regbench.stats.run_location`): ``"mean"``, ``"median"``
    #: or ``"low"``; ``comparison``'s means are the means of these over runs.
    location: str = "mean"
    #: With ``location="auto"``: why detection's choice for this benchmark fell there (the words
    #: of ``regbench diagnose``); with a median or low location asked for runs of too few samples,
    #: why the mean was compared instead; else None.
    location_reason: str | None = None
    #: ``"relative"``: ``comparison.change`` and its interval are ``mean(B) / mean(A) - 1``;
    #: ``"difference"``: they are ``mean(B) - mean(A)`` in the benchmark's unit, for a metric
    #: that is not above 0 (:func:`compare_signed`), where a ratio has no meaning.
    scale: str = "relative"


#: The ``location`` of :func:`compare_versions`: each of :data:`regbench.stats.runs.LOCATIONS`,
#: or ``"auto"``, detection's choice per benchmark.
COMPARE_LOCATIONS = ("auto", "mean", "median", "low")


def compare_versions(store: Store, a: str, b: str, *, benchmark: str | None = None,
                     config: str | None = None, machine: str | None = None, threshold: float = 0.0,
                     confidence_level: float = 0.99, n_resamples: int = 10_000, rng=0,
                     location: str = "mean", history: SeriesSource | None = None,
                     ) -> list[BenchmarkComparison]:
    """Compare two versions of every benchmark that has runs of both (runs are the replicates).

    A benchmark whose runs of B all failed (and were not run again with success since) while A's
    succeeded has the verdict ``"failed"``: it no longer runs, which gates as a regression does.
    So has a benchmark a tool reported on A but not on B when the tool's invocation failed on B
    (a Go panic that ends ``go test`` before the benchmarks after it ran).

    ``location`` is what each run contributes (:func:`regbench.stats.run_location`): its mean
    (the default), median, or ``"low"`` quantile, a floor that interference hardly moves; the
    bootstrap over runs is the same.  ``"auto"`` takes, per benchmark, the location ``regbench
    detect`` chooses for it (:meth:`regbench.detect.auto.Auto.location`, as ``regbench diagnose``
    reports it), from its runs in ``history`` (default: every version of the store, as
    :class:`~regbench.store.HistoryView` reads it), else from the two versions' runs.  Where
    either version has runs of fewer than :data:`~regbench.stats.runs.MIN_SAMPLES_FOR_QUANTILES`
    samples, a benchmark is compared by its run means whatever ``location`` asks, and its
    ``location_reason`` says why, as detection does (:func:`regbench.stats.runs.choose_location`).
    """
    if location not in COMPARE_LOCATIONS:
        raise ValueError(f"`location` must be one of {', '.join(COMPARE_LOCATIONS)}, got {location!r}")
    a, b = store.resolve_version(a), store.resolve_version(b)
    if a == b:
        raise NotFoundError("compare needs two different versions")
    out = []

    @functools.cache  # read once, when a series first needs it
    def histories() -> dict[tuple[str, str, str], Series]:
        from .store import HistoryView

        source = history if history is not None else HistoryView(store)
        return {(h.benchmark, h.config, h.machine): h
                for h in source.load_series(benchmark, config=config, machine=machine)}

    def located(s: Series) -> tuple[str, str | None]:
        """What each run of ``s`` contributes, and why (``auto``)."""
        if location != "auto":
            return location, None
        from .detect.auto import Auto

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # as detection chooses it
            choice = Auto().location(histories().get((s.benchmark, s.config, s.machine), s))
        return choice.estimator, choice.reason

    @functools.cache  # read from the store once, when a series first needs it
    def open_failures() -> Counter:
        from .inventory import open_failures

        return open_failures(store)

    @functools.cache
    def configured_names() -> frozenset[str]:
        from .inventory import configured_benchmarks

        return frozenset().union(*configured_benchmarks(store).values())

    def failing(name: str, version: str, s: Series) -> bool:
        """Whether ``name`` has failed runs on ``version`` (of ``s``'s setup) not retried since."""
        return open_failures()[(name, version, s.config, s.machine)] > 0

    def configured(name: str) -> bool:
        """Whether a campaign's configuration named a benchmark ``name`` (so it is no tool's report)."""
        return name in configured_names()

    @functools.cache
    def build_failed(version: str) -> bool:
        return unbuilt(store, version) is not None

    for s in store.load_series(benchmark, config=config, machine=machine, versions=[a, b]):
        names = [v.name for v in s.versions]
        if a not in names:
            continue
        where, why = located(s)
        if where != "mean" and (few := _too_few_for_quantiles(s, (a, b))) is not None:
            where, why = "mean", few
        ra = [run_location(r, where, direction=s.direction) for r in s.runs[names.index(a)]]
        rb = [run_location(r, where, direction=s.direction) for r in s.runs[names.index(b)]] if b in names else []
        failed = False
        if b not in names:
            # Not run on B at all: B's build failed (a pull request that breaks the build fails
            # the gate as "failed", where it said "no benchmark has runs of both", exit 3), or a
            # tool's report is missing because its invocation failed there.
            base = SeriesName.parse(s.benchmark).benchmark
            if not ra or not (build_failed(b) or (base != s.benchmark and not configured(s.benchmark)
                                                  and failing(base, b, s))):
                continue
            failed = True
        elif not rb:  # only failed runs on B: "failed" where A ran; left out if retried since
            if not ra and not (failing(s.benchmark, a, s) or failing(s.benchmark, b, s)):
                continue
            failed = bool(ra) and failing(s.benchmark, b, s)
        scale = "difference" if _signed(ra, rb) else "relative"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if scale == "relative":
                cmp = compare_runs(ra, rb, confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
                limit = threshold
            else:
                cmp = compare_signed(ra, rb, confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
                # --threshold is relative: taken of A's size, the scale a difference has.
                limit = threshold * abs(cmp.mean_a) if np.isfinite(cmp.mean_a) else 0.0
        out.append(BenchmarkComparison(s.benchmark, s.config, s.machine, s.unit, s.direction, cmp,
                                       "failed" if failed else verdict(cmp.ci_low, cmp.ci_high, direction=s.direction,
                                                                       threshold=limit), a, b, where, why, scale))
    if not out:
        raise NotFoundError(f"no benchmark has runs of both {a!r} and {b!r}" + _missing_hint(store, benchmark, (a, b)))
    return out


def _missing_hint(store: Store, benchmark: str | None, versions: Sequence[str]) -> str:
    """Why a comparison has no benchmark with runs of both ``versions``: one did not build (B's
    failed build is a "failed" verdict, but A's left nothing to compare, and nothing said so), or
    their runs were superseded by an edit of their benchmark (and the command that measures them
    again); else nothing."""
    from .model import SUPERSEDED

    for v in versions:
        if (build := unbuilt(store, v)) is not None:
            how = build_note(build.exit_code, build.log_tail) or build.status
            return f" ({v!r} did not build: {how}; `regbench show --version {v}` gives the builder's error)"

    gone = [v for v in versions if any(r.status == SUPERSEDED and (benchmark is None or r.benchmark == benchmark)
                                       for r in store.runs(version=v))]
    if not gone:
        return ""
    return (f" (the runs of {', '.join(map(repr, gone))} are superseded: measured before their benchmark's "
            f"definition changed; `regbench run --versions {','.join(gone)}` measures "
            f"{'it' if len(gone) == 1 else 'them'} again)")


def unbuilt(store: Store, version: str) -> BuildInfo | None:
    """The last build recorded of ``version`` when every one failed (its benchmarks never ran
    there; a screen's build variant that failed beside one that built is not this), else None."""
    builds = [bi for bi in store.builds() if bi.version == version]
    return builds[-1] if builds and all(bi.status != "ok" for bi in builds) else None


def _signed(ra: list[float], rb: list[float]) -> bool:
    """Whether a series is compared by its difference rather than its ratio: some run of either
    version is below 0 where it is located (a metric that can be negative: a latency delta, a
    score), or A's mean is 0 without every run of A being exactly 0 (which
    :func:`~regbench.stats.compare_runs` decides for a count).

    A ratio of values that are not above 0 has no direction: ``-10 -> -5`` is ``-50%`` and
    ``-5 -> +5`` is ``-200%``, both read as an improvement where lower is better.  Runs, not
    samples: a time with a negative sample (a timer's overhead subtracted from a tiny
    benchmark) has runs above 0, whose ratio is a time's.
    """
    if any(v < 0 for v in (*ra, *rb)):
        return True
    a = np.asarray(ra, dtype=float)
    return bool(a.size and np.isfinite(a).all() and a.mean() == 0 and np.any(a))


def _too_few_for_quantiles(s: Series, versions: Iterable[str]) -> str | None:
    """Why the runs of ``versions`` in ``s`` are compared by their mean whatever location was
    asked, or None when each has enough samples for a quantile.

    A quantile of a few samples is biased against one of many: the 10% quantile of 3 samples of
    a floor with slower interference above it sits above the floor, that of 20 samples on it, so
    identical code compared by the low quantile of runs of 3 against runs of 20 samples read as a
    regression of 5-15% (of 50% with 1 sample).
    """
    from .stats.runs import MIN_SAMPLES_FOR_QUANTILES

    names = [v.name for v in s.versions]
    for version in versions:
        if version not in names:
            continue
        sizes = [r.size for r in s.runs[names.index(version)] if r.size]
        if sizes and (n := min(sizes)) < MIN_SAMPLES_FOR_QUANTILES:
            return (f"the mean of each run: {version} has runs of {n} sample{'s' * (n > 1)}, too few for "
                    f"a quantile (at least {MIN_SAMPLES_FOR_QUANTILES} a run)")
    return None


#: What :func:`compare_variance` compares: one mean per run, or every measured iteration pooled.
VARIANCE_DATA = ("runs", "samples")


@dataclass(frozen=True)
class BenchmarkVariance:
    """Spread of side B against side A for one benchmark (seed 003 s.3.3.1, tables 3-4).

    A side is a version measured on one configuration and machine; the sides may be the same
    version under two setups.  ``of`` says what was compared: ``"runs"`` (run means) or
    ``"samples"`` (all measured iterations pooled).
    """

    benchmark: str
    unit: str
    of: str
    a: str
    config_a: str
    machine_a: str
    b: str
    config_b: str
    machine_b: str
    comparison: VarianceComparison  # regbench.stats.variance (imported at run time in compare_variance)


def compare_variance(store: Store, a: str, b: str, *, benchmark: str | None = None,
                     config: str | None = None, machine: str | None = None,
                     b_config: str | None = None, b_machine: str | None = None,
                     of: str = "runs", center: str = "median", alpha: float = 0.05,
                     ) -> list[BenchmarkVariance]:
    """Whether the variance of every benchmark changed from side A to side B.

    Side A is version ``a`` on ``config`` and ``machine`` (None: every one); side B is version
    ``b`` on ``b_config`` and ``b_machine``, which default to A's.  ``a`` and ``b`` may be the
    same version when B's configuration or machine differs: that is the noise-control experiment
    of seed 003 s.3 (one version, setup X against setup Y).  Series are paired by benchmark and by
    the configuration and machine that B does not override.

    ``of="runs"`` compares the run means (runs are the replicates, seed 000 s.2): the variance
    that decides how many runs a result needs; ``of="samples"`` pools every measured iteration,
    as seed 003 tables 3-4 do, and so mixes between-run and within-run variance.

    Raises
    ------
    ConfigError
        When both sides are the same (same version, configuration and machine).
    NotFoundError
        For an unknown version, benchmark, configuration or machine, or when no benchmark has
        runs on both sides.
    ValueError
        For an invalid ``of``, ``center`` or ``alpha``.
    """
    from .errors import ConfigError
    from .stats.variance import variance_change

    if of not in VARIANCE_DATA:
        raise ValueError("`of` must be 'runs' or 'samples'")
    a, b = store.resolve_version(a), store.resolve_version(b)
    cfg_b = config if b_config is None else b_config
    mach_b = machine if b_machine is None else b_machine
    if a == b and cfg_b == config and mach_b == machine:
        raise ConfigError("the variance comparison needs two different versions, or a B side on another "
                          "configuration or machine (--b-configuration, --b-machine)")
    if cfg_b == config and mach_b == machine:
        pairs = [(s, s) for s in store.load_series(benchmark, config=config, machine=machine, versions=[a, b])]
    else:
        side_b: dict[tuple, list[Series]] = {}
        for s in store.load_series(benchmark, config=cfg_b, machine=mach_b, versions=[b]):
            side_b.setdefault(_variance_key(s, b_config, b_machine), []).append(s)
        pairs = [(sa, sb) for sa in store.load_series(benchmark, config=config, machine=machine, versions=[a])
                 for sb in side_b.get(_variance_key(sa, b_config, b_machine), [])
                 if (a, sa.config, sa.machine) != (b, sb.config, sb.machine)]

    out = []
    for sa, sb in pairs:
        names_a, names_b = [v.name for v in sa.versions], [v.name for v in sb.versions]
        if a not in names_a or b not in names_b:
            continue
        runs_a = [r for r in sa.runs[names_a.index(a)] if r.size]
        runs_b = [r for r in sb.runs[names_b.index(b)] if r.size]
        if of == "runs":
            xa = np.array([r.mean() for r in runs_a], dtype=float)
            xb = np.array([r.mean() for r in runs_b], dtype=float)
        else:
            xa = np.concatenate(runs_a) if runs_a else np.empty(0)
            xb = np.concatenate(runs_b) if runs_b else np.empty(0)
        with warnings.catch_warnings():
            # An undecidable comparison is reported as such; the warning is for library users.
            warnings.simplefilter("ignore", RuntimeWarning)
            cmp = variance_change(xa, xb, center=center, alpha=alpha)
        out.append(BenchmarkVariance(sa.benchmark, sa.unit, of, a, sa.config, sa.machine,
                                     b, sb.config, sb.machine, cmp))
    if not out:
        raise NotFoundError(f"no benchmark has runs of both {_side(a, config, machine)} "
                            f"and {_side(b, cfg_b, mach_b)}")
    out.sort(key=lambda r: (r.benchmark, r.config_a, r.machine_a, r.config_b, r.machine_b))
    return out


def _side(version: str, config: str | None, machine: str | None) -> str:
    where = [f"{k} {v!r}" for k, v in (("config", config), ("machine", machine)) if v is not None]
    return f"{version!r}" + (f" ({', '.join(where)})" if where else "")


def _variance_key(s: Series, b_config: str | None, b_machine: str | None) -> tuple:
    """What pairs a series of side A with one of side B: what B's side does not override."""
    return (s.benchmark, s.config if b_config is None else None, s.machine if b_machine is None else None)
