"""Analyses over the store: summary, comparison and detection, as plain data for any front end.

This is the analysis module of seed 001 fig. 1: it reads series from the results repository
(:class:`~regbench.store.Store`), hands arrays to :mod:`regbench.stats` and :mod:`regbench.detect`,
and returns dataclasses that the CLI, reports and the web layer present.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .detect import Change, get_detector
from .errors import NotFoundError
from .model import Series
from .stats import Comparison, HierarchicalSummary, compare_runs, components, resampled_run_stats, verdict
from .store import Store


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


def summarize(store: Store, *, benchmark: str | None = None, version: str | None = None,
              config: str | None = None, machine: str | None = None, **options) -> list[ExperimentSummary]:
    series = store.load_series(benchmark, config=config, machine=machine,
                               versions=[store.resolve_version(version)] if version else None)
    return summarize_series(series, **options)


@dataclass(frozen=True)
class BenchmarkComparison:
    """Version B against version A for one series."""

    benchmark: str
    config: str
    machine: str
    unit: str
    direction: str
    comparison: Comparison
    verdict: str
    a: str
    b: str


def compare_versions(store: Store, a: str, b: str, *, benchmark: str | None = None,
                     config: str | None = None, machine: str | None = None, threshold: float = 0.0,
                     confidence_level: float = 0.99, n_resamples: int = 10_000, rng=0,
                     ) -> list[BenchmarkComparison]:
    """Compare two versions of every benchmark that has runs of both (runs are the replicates)."""
    a, b = store.resolve_version(a), store.resolve_version(b)
    if a == b:
        raise NotFoundError("compare needs two different versions")
    out = []
    for s in store.load_series(benchmark, config=config, machine=machine, versions=[a, b]):
        names = [v.name for v in s.versions]
        if a not in names or b not in names:
            continue
        ra = [r.mean() for r in s.runs[names.index(a)]]
        rb = [r.mean() for r in s.runs[names.index(b)]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            cmp = compare_runs(ra, rb, confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
        out.append(BenchmarkComparison(s.benchmark, s.config, s.machine, s.unit, s.direction, cmp,
                                       verdict(cmp.ci_low, cmp.ci_high, direction=s.direction,
                                               threshold=threshold), a, b))
    if not out:
        raise NotFoundError(f"no benchmark has runs of both {a!r} and {b!r}")
    return out


def detect_changes(store: Store, *, method: str = "ci-overlap", benchmark: str | None = None,
                   config: str | None = None, machine: str | None = None, min_change: float = 0.0,
                   confidence_level: float = 0.99) -> list[Change]:
    """Changes between consecutive versions of every series (benchmark x config x machine)."""
    detector = get_detector(method, min_change=min_change, confidence_level=confidence_level)
    changes: list[Change] = []
    for s in store.load_series(benchmark, config=config, machine=machine):
        changes.extend(detector.detect(s))
    return changes
