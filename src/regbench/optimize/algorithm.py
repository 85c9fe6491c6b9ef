"""Algorithm 1 of Japke et al. 2025 (muOpTime): the least repetition per benchmark.

A benchmark measured with a full configuration of repetition levels, here ``R`` runs (fresh
processes) of ``w`` warm-up and ``I`` measured iterations, is simulated at every smaller
configuration ``(r, i)`` by keeping the first ``r`` runs and the first ``i`` measured iterations
of each (s.3.1: "only considering data that would have been collected in this scenario").  Where
each iteration was timed as ``N`` slices (a Python benchmark's ``slices``), the duration of an
iteration is a level too, ``(r, i, d)`` for ``d`` of the ``N`` slices (:func:`simulated`).  Where
each run is ``P`` processes of a tool's own (JMH's forks), each running the iterations it is asked
for, ``i`` counts the iterations of each process, and ``(r, i)`` keeps the first ``i`` of each
of the ``P``; the processes are a part of the run level, which a plan changes only where the
tool's command takes their number from regbench (``REGBENCH_FORKS``): then ``(r, p, i)`` keeps
the first ``p`` forks of each run too.  For
each configuration with at least 3 measurements (Algorithm 1, line 8) the chosen stability metric
(s.2: CV, RMAD, RCIW1-3, computed by :func:`regbench.stats.stability_metrics_many`) is computed
on the pooled measurements; the cheapest configuration whose metric is at most the threshold is
chosen, the smaller metric breaking ties of cost (lines 15-18).  No configuration under the
threshold keeps the full one.

Warm-up aware (s.4.4, RQ3): the warm-up iterations of a run are discarded from the samples and
are never reduced, but they are paid for in every run kept, so a configuration's cost is
``r * P * (w + i)`` iterations (``P`` = 1 but for a tool's forked runs).  Algorithm 1 prices a
configuration at its execution duration (line 12, ``calculateExecutionDuration(e, M)``); a run
also costs a fixed time of its own (a process start, imports, a loop's calibration), which
iterations do not count.  When the store
holds runs of a benchmark of two or more lengths (a full campaign and one run with plans), that
fixed time is measured (:func:`run_overhead`) and priced too: ``r * (o + w + i)``, ``o`` in
iterations (``r * (o + P * (w + i))`` with forks; ``r * (o + p * (o_f + w + i))`` where the forks
are a level, ``o_f`` what each fork pays of its own: its start and its tool's warm-up), so that a
plan of fewer, longer runs wins where starting a run is dear.

This module is pure: arrays in, records out; it imports numpy, :mod:`regbench.stats` and scipy.stats
(for the fixed cost of a run) only.

References
----------
Japke, Grambow, Laaber, Bermbach 2025 (seed 004): s.2 (repetition levels, stability metrics),
s.3.1 and Algorithm 1 (optimization), s.4.2 eq. (1) (change rate), s.4.4 (warm-up).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The stability metrics of s.2, by name; the location their results are given by (s.4.2: the
#: mean for the metrics based on the mean, the median for those based on the median).
METRICS = {"cv": "mean", "rmad": "median", "rciw1": "mean", "rciw2": "mean", "rciw3": "median"}
#: Algorithm 1, line 8: a configuration needs at least this many measurements.
MIN_MEASUREMENTS = 3
#: s.1, s.3: a level must have been recorded at least this many times to be reduced.
MIN_LEVEL = 3
#: Every count of iterations up to this many is simulated; above it, counts at most
#: :data:`COUNT_STEP` times the one before (:func:`iteration_counts`).
EVERY_COUNT_UP_TO = 100
#: The step between counts of iterations above :data:`EVERY_COUNT_UP_TO`: a plan keeps at most
#: 5% more iterations than the least count under the threshold would.
COUNT_STEP = 1.05


@dataclass(frozen=True, order=True)
class Configuration:
    """One execution configuration ``(runs, iterations, duration)``; the outermost level first (s.3.1).

    The duration of an iteration is ``slices`` of the ``full_slices`` its full configuration's
    iterations were timed as (a Python benchmark's ``slices``; 1 of 1 where they were not).
    The warm-up iterations of each run are not a level: they stay as configured (s.4.4), as many
    and as long as the full configuration's, whatever the measured iterations' length (a
    warm-up is the code's time to settle, which shorter iterations do not shorten).

    ``forks`` are the processes a tool starts in each run (JMH's ``-f``), each a fresh process
    that runs ``warmup + iterations`` (the ``-i`` it is given): ``iterations`` counts those of
    one process, and a run measures ``forks * iterations``.  They are a part of the run level
    (the paper's runs, s.2): the same in every configuration of a benchmark where the tool's
    command fixes them, a level of its own where the command reads their number from regbench
    (:func:`smaller_configurations` with ``fork_level``).
    """

    runs: int
    iterations: int
    slices: int = 1
    full_slices: int = 1
    forks: int = 1

    @property
    def duration(self) -> float:
        """The length of an iteration as a share of the full configuration's."""
        return self.slices / self.full_slices

    @property
    def measurements(self) -> int:
        """The measurements it keeps: ``runs * forks * iterations``."""
        return self.runs * self.forks * self.iterations

    def cost(self, warmup: int, overhead: float = 0.0, fork_overhead: float = 0.0) -> float:
        """Iterations of the full configuration's length executed, warm-up included, and the
        fixed cost of each run and of each fork in them: ``runs * (overhead + forks *
        (fork_overhead + warmup + iterations * duration))``."""
        return self.runs * (overhead + self.forks * (fork_overhead + warmup + self.iterations * self.duration))


@dataclass(frozen=True)
class Scored:
    """A simulated configuration of one benchmark.

    Attributes
    ----------
    configuration : Configuration
    cost : float
        Iterations it executes, warm-up included, and its runs' fixed cost in iterations.
    stability : float
        The chosen metric on its pooled measurements (NaN when undefined, and, for the RCIW
        metrics, where it could not change the answer and was not computed: a configuration
        dearer than the one chosen, or one whose result is refused, :func:`minimal_configuration`).
    result : float
        The benchmark's result under it: mean or median of the measurements, by the metric.
    """

    configuration: Configuration
    cost: float
    stability: float
    result: float


@dataclass(frozen=True)
class MinimalConfiguration:
    """Algorithm 1's answer for one benchmark.

    Attributes
    ----------
    chosen : Scored
        The cheapest configuration under the threshold, the smaller metric breaking ties; the
        full configuration when none is under it.
    full : Scored
        The full configuration, as recorded.
    stable : bool
        Whether ``chosen`` is under the threshold (False: even the full configuration is not).
    metric : str
    threshold : float
    warmup : int
    scored : tuple of Scored
        Every configuration simulated, in increasing ``(runs, iterations)``.
    overhead : float
        The fixed cost of a run priced, in iterations (0: not measured).
    fork_overhead : float
        Where the forks are a level, the fixed cost each fork adds, in iterations (0 otherwise).
    shifted : tuple of int
        Durations (slices of an iteration) refused because the whole campaign measured at that
        duration gives a result more than ``threshold`` away from the full configuration's
        (:func:`choose`).
    unsettled : tuple of int
        Counts of measured iterations (of each run, or of each fork) refused because the first
        that many iterations of every run of the campaign give a result more than ``threshold``
        away from the full configuration's: a warm-up not over by then (:func:`choose`).
    """

    chosen: Scored
    full: Scored
    stable: bool
    metric: str
    threshold: float
    warmup: int
    scored: tuple[Scored, ...]
    overhead: float = 0.0
    shifted: tuple[int, ...] = ()
    fork_overhead: float = 0.0
    unsettled: tuple[int, ...] = ()

    @property
    def time_share(self) -> float:
        """Cost of the chosen configuration over that of the full one."""
        return self.chosen.cost / self.full.cost

    @property
    def change_rate(self) -> float:
        """``|r_min - r_full| / |r_full|``, s.4.2 eq. (1); NaN, with a warning, when ``r_full`` is 0."""
        if self.full.result == 0:
            warnings.warn("the change rate is undefined: the full configuration's result is 0", RuntimeWarning,
                          stacklevel=2)
            return math.nan
        return abs(self.chosen.result - self.full.result) / abs(self.full.result)


def check_options(metric: str, threshold: float) -> None:
    """Validation at the door: the metric is one of :data:`METRICS`, the threshold in (0, 1)."""
    if metric not in METRICS:
        raise ValueError(f"`metric` must be one of {', '.join(METRICS)}, got {metric!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 1:
        raise ValueError(f"`threshold` must be in (0, 1), got {threshold!r}")


def slices_are_samples(slices: np.ndarray, samples: np.ndarray, *, warmup: int) -> bool:
    """Whether ``slices`` (runs, warmup + iterations, N) are those of ``samples`` (runs,
    iterations): the mean of each iteration's slices is its sample, to rounding."""
    return bool(np.allclose(slices[:, warmup:, :].mean(axis=2), samples, rtol=1e-9, atol=0.0))


def check_configuration(c: Configuration) -> None:
    """Validation at the door of a configuration: positive runs, iterations and forks, ``1 <=
    slices <= full_slices``, and no slices with forks (a tool's iterations are not sliced)."""
    levels = (c.runs, c.iterations, c.slices, c.full_slices, c.forks)
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1 for v in levels) \
            or c.slices > c.full_slices:
        raise ValueError(f"configuration {c}: `runs`, `iterations`, `slices`, `full_slices` and `forks` must be "
                         "positive integers with `slices` at most `full_slices`")
    if c.forks > 1 and c.full_slices > 1:
        raise ValueError(f"configuration {c}: forked runs (a tool's) have no slices")


def iteration_counts(full: int) -> list[int]:
    """The counts of iterations simulated for runs of ``full`` measured iterations: every count up
    to :data:`EVERY_COUNT_UP_TO`, then counts :data:`COUNT_STEP` apart, ``full`` last.

    Algorithm 1 tries every count; a tool that repeats as often as fits a time (pytest-benchmark's
    rounds, tens of thousands a run) makes that quadratic in the iterations (every count, each
    simulated from as many measurements), minutes for one benchmark.  Above 100 iterations a plan
    of 5% more iterations than the least is as good, and the counts tried grow as ``log(full)``."""
    counts = list(range(1, min(full, EVERY_COUNT_UP_TO) + 1))
    i = counts[-1] if counts else 0
    while i < full:
        i = min(full, max(i + 1, math.floor(i * COUNT_STEP)))
        counts.append(i)
    return counts


def smaller_configurations(full: Configuration, *, min_runs: int = 1, fork_level: bool = False) -> list[Configuration]:
    """Every configuration up to ``full`` with at least :data:`MIN_MEASUREMENTS` measurements
    (Algorithm 1, lines 3 and 8) and at least ``min_runs`` runs, ``full`` included: runs,
    iterations (of each fork, where a run is ``full.forks`` of a tool's processes; above
    :data:`EVERY_COUNT_UP_TO`, those of :func:`iteration_counts`), the forks themselves with
    ``fork_level`` (1 to ``full.forks``; kept otherwise) and, where the full configuration's
    iterations were sliced, their duration."""
    forks = range(1 if fork_level else full.forks, full.forks + 1)
    return [Configuration(r, i, d, full.full_slices, p)
            for r in range(min(min_runs, full.runs), full.runs + 1) for p in forks
            for i in iteration_counts(full.iterations) for d in range(1, full.full_slices + 1)
            if r * p * i >= MIN_MEASUREMENTS]


def _by_fork(samples: np.ndarray) -> np.ndarray:
    """``samples`` as ``(runs, forks, iterations)``: a ``(runs, iterations)`` array is one fork a run."""
    return samples[:, None, :] if samples.ndim == 2 else samples


def simulated(samples: np.ndarray, c: Configuration, *, warmup: int, slices: np.ndarray | None = None) -> np.ndarray:
    """The measurements configuration ``c`` would have kept, ``(runs, forks * iterations)``.

    ``samples`` are ``(runs, iterations)``, or ``(runs, forks, iterations)`` where each run is a
    tool's processes (at least ``c.forks`` of them), each process's measured iterations in order.
    Iterations as long as the full configuration's are the first ``c.iterations`` measured
    samples of each of the first ``c.forks`` forks of the first ``c.runs`` runs (s.3.1): a run of
    the tool asked for ``c.forks`` forks and ``c.iterations`` iterations runs that many in each
    of its processes.  Shorter ones are read from the
    slices: each run's slices, warm-up included, are one stream in the order they were timed, and a run of
    ``w`` warm-up iterations (as long as the full configuration's: ``w N`` slices) and ``i``
    iterations of ``d`` slices would have measured each ``d`` slices after its warm-up as one
    iteration (the mean of their seconds per call), as the paper simulates a shorter duration
    from the first seconds of a longer one (s.3.1).
    """
    check_configuration(c)
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError("`warmup` must be a non-negative integer")
    if samples.ndim not in (2, 3):
        raise ValueError("`samples` must be a (runs, iterations) or (runs, forks, iterations) array")
    forked = _by_fork(samples)
    if forked.shape[1] < c.forks:
        raise ValueError(f"configuration {c} has {c.forks} forks a run, the samples {forked.shape[1]}")
    if c.runs > samples.shape[0] or c.iterations > forked.shape[2]:
        raise ValueError(f"configuration {c} is larger than the samples {samples.shape}")
    if c.slices == c.full_slices:
        return forked[:c.runs, :c.forks, :c.iterations].reshape(c.runs, c.forks * c.iterations)
    if slices is None:
        raise ValueError(f"configuration {c} needs the slices of the iterations")
    # Slices of another count, or too few of them, would be cut at the wrong places without a word.
    if slices.ndim != 3 or slices.shape[2] != c.full_slices or slices.shape[0] < c.runs \
            or slices.shape[1] < warmup + c.iterations:
        raise ValueError(f"configuration {c} needs (runs, warmup + iterations, {c.full_slices}) slices of at least "
                         f"{c.runs} runs of {warmup} + {c.iterations} iterations, got shape {slices.shape}")
    stream = slices[:c.runs].reshape(c.runs, -1)
    first = warmup * c.full_slices
    kept = stream[:, first:first + c.iterations * c.slices]
    return kept.reshape(c.runs, c.iterations, c.slices).mean(axis=2)


def score_configurations(samples: np.ndarray, configurations: Sequence[Configuration], *, warmup: int,
                         metric: str, n_resamples: int = 10_000, rng=None, overhead: float = 0.0,
                         slices: np.ndarray | None = None, fork_overhead: float = 0.0) -> list[Scored]:
    """The metric and result of each configuration, simulated from the full ``samples``.

    Parameters
    ----------
    samples : array_like, ``(runs, iterations)`` or ``(runs, forks, iterations)``
        The measured iterations (warm-up removed) of each run of the full configuration, in the
        order they were measured; of each of its forks where a run is a tool's processes.
    configurations : sequence of Configuration
        Each at most ``samples.shape``, of its forks.
    warmup : int, keyword-only
        Warm-up iterations of each run (discarded, but paid for in the cost).
    metric : str, keyword-only
        One of :data:`METRICS`.
    n_resamples : int, keyword-only
        Bootstrap resamples of the RCIW metrics (10,000 in the paper, s.2).
    rng : int, numpy.random.Generator or None, keyword-only
    overhead : float, keyword-only
        The fixed cost of a run in iterations (:func:`run_overhead`), priced in every run.
    slices : array_like, ``(runs, warmup + iterations, full_slices)``, keyword-only
        Where the full configuration's iterations were timed as slices: each run's, warm-up
        included, in order (:func:`simulated`); needed by configurations of shorter iterations.
    fork_overhead : float, keyword-only
        The fixed cost of each fork in iterations, priced in every fork kept.

    Returns
    -------
    list of Scored
        In the order of ``configurations``.
    """
    from ..stats import stability_metrics_many

    x = np.asarray(samples, dtype=float)
    if x.ndim not in (2, 3) or not np.all(np.isfinite(x)):
        raise ValueError("`samples` must be a (runs, iterations) or (runs, forks, iterations) array of finite "
                         "numbers")
    gen = np.random.default_rng(rng)
    # Configurations with the same number of measurements are scored in one batch (the batch
    # function needs rows of one length); CV and RMAD are closed-form, so one resample keeps the
    # bootstrap that the batch function also computes negligible.
    resamples = n_resamples if metric.startswith("rciw") else 1
    by_size: dict[int, list[int]] = {}
    for k, c in enumerate(configurations):
        if c.runs > x.shape[0] or c.iterations > x.shape[-1] or c.forks > (x.shape[1] if x.ndim == 3 else 1):
            raise ValueError(f"configuration {c} is larger than the samples {x.shape}")
        by_size.setdefault(c.measurements, []).append(k)
    sl = None if slices is None else np.asarray(slices, dtype=float)
    constant = bool(x.size) and x.min() == x.max() and (sl is None or sl.min() == sl.max())
    out: list[Scored | None] = [None] * len(configurations)
    undefined = False
    for _, members in sorted(by_size.items()):
        rows = np.stack([simulated(x, configurations[k], warmup=warmup, slices=sl).ravel() for k in members])
        # The batch function's own warning is silenced and said once below: one per batch (the
        # block resets the once-per-location registry) printed dozens of lines per benchmark.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m = stability_metrics_many(rows, n_resamples=resamples, rng=gen)
        values = getattr(m, metric)
        undefined = undefined or not np.all(np.isfinite(values))
        where = m.mean if METRICS[metric] == "mean" else m.median
        if not constant:
            # A few measurements that happen to be identical (the first iterations of a count
            # that is 0 in most of them, of a coarse timer) have no spread, and every metric of
            # them is 0, but they say nothing of the spread the campaign measured: not chosen.
            # Where every measurement of the campaign is identical (a count exactly 0 in every
            # iteration, Go's allocs/op), no spread is the truth, and the smallest plan is right.
            values = np.where(rows.min(axis=1) == rows.max(axis=1), np.nan, values)
        for j, k in enumerate(members):
            c = configurations[k]
            out[k] = Scored(c, c.cost(warmup, overhead, fork_overhead), float(values[j]), float(where[j]))
    if undefined:
        warnings.warn(f"{metric} is undefined (zero mean or median) for some configurations; they are "
                      "not chosen", RuntimeWarning, stacklevel=2)
    return [s for s in out if s is not None]


def minimal_configuration(samples, *, warmup: int = 0, metric: str = "rmad", threshold: float = 0.01,
                          min_runs: int = 1, n_resamples: int = 10_000, rng=None,
                          overhead: float = 0.0, slices=None, fork_level: bool = False,
                          fork_overhead: float = 0.0) -> MinimalConfiguration:
    """Algorithm 1 for one benchmark: its cheapest configuration whose metric is under the threshold.

    Parameters
    ----------
    samples : array_like, ``(runs, iterations)`` or ``(runs, forks, iterations)``
        Measured iterations of every run of the full configuration (warm-up removed); at least
        :data:`MIN_LEVEL` runs and iterations.  Where each run is ``forks`` processes of a tool
        (JMH's forks), the measured iterations of each process: a configuration's iterations are
        then those of each fork (what the tool's ``-i`` asks for), the forks are kept (or reduced,
        ``fork_level``), and its cost is ``runs * (overhead + forks * (fork_overhead + warmup +
        iterations))``.
    warmup : int, keyword-only
        Warm-up iterations per run, kept in every configuration and counted in its cost.
    metric : str, keyword-only
        ``cv``, ``rmad``, ``rciw1``, ``rciw2`` or ``rciw3`` (s.2).
    threshold : float, keyword-only
        In (0, 1); the paper's is 0.01 (s.3.1).
    min_runs : int, keyword-only
        Fewest runs a configuration may have.
    n_resamples, rng : keyword-only
        Of the RCIW metrics' bootstrap.
    overhead : float, keyword-only
        The fixed cost of a run in iterations (:func:`run_overhead`; 0, the default, prices
        iterations alone, as the paper's tables do).
    slices : array_like, ``(runs, warmup + iterations, N)``, keyword-only
        The slices each iteration was timed as (warm-up included), when it was (``N`` > 1):
        then the duration of an iteration is a level too, ``1..N`` slices (s.2, s.3.1).  Not
        with forks.
    fork_level : bool, keyword-only
        With forked ``samples``: the forks are a level too, ``1..forks`` of them (the tool's
        command takes their number from the plan); kept as recorded otherwise.
    fork_overhead : float, keyword-only
        With ``fork_level``: the fixed cost of each fork in iterations (its start, its tool's
        unreported warm-up), which ``overhead`` then leaves out.

    Returns
    -------
    MinimalConfiguration
        Above :data:`EVERY_COUNT_UP_TO` iterations, the counts of :func:`iteration_counts` are
        simulated; an RCIW metric is bootstrapped cheapest configuration first, only until one is
        under the threshold (the answer is the same; the others' metric is NaN in ``scored``).

    Raises
    ------
    ValueError
        A bad option, fewer than :data:`MIN_LEVEL` runs or iterations (of a fork), or ``slices``
        not of the shape of ``samples``, not theirs (the mean of an iteration's slices is its
        sample) or given with forks.

    References
    ----------
    Japke et al. 2025 (seed 004), Algorithm 1 and s.3.1; s.4.4 (warm-up).
    """
    check_options(metric, threshold)
    x = np.asarray(samples, dtype=float)
    if x.ndim not in (2, 3) or x.ndim == 3 and x.shape[1] < 1:
        raise ValueError("`samples` must be a (runs, iterations) or (runs, forks, iterations) array")
    if x.shape[0] < MIN_LEVEL or x.shape[-1] < MIN_LEVEL:
        of = f" in each of {x.shape[1]} forks" if x.ndim == 3 else ""
        raise ValueError(f"`samples` must have at least {MIN_LEVEL} runs and {MIN_LEVEL} iterations "
                         f"to be reduced, got {x.shape[0]} runs of {x.shape[-1]} iterations{of}")
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError("`warmup` must be a non-negative integer")
    if isinstance(min_runs, bool) or not isinstance(min_runs, numbers.Integral) or min_runs < 1:
        raise ValueError("`min_runs` must be a positive integer")
    for name, value in (("overhead", overhead), ("fork_overhead", fork_overhead)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < math.inf:
            raise ValueError(f"`{name}` must be a finite number >= 0")
    n_slices = 1
    forks = x.shape[1] if x.ndim == 3 else 1
    if slices is not None and x.ndim == 3:
        raise ValueError("`slices` cannot be given with forks: a tool's iterations are not sliced")
    if slices is not None:
        slices = np.asarray(slices, dtype=float)
        if slices.ndim != 3 or slices.shape[:2] != (x.shape[0], warmup + x.shape[1]) \
                or not np.all(np.isfinite(slices)) or slices.shape[2] < 1:
            raise ValueError(f"`slices` must be a (runs, warmup + iterations, slices) array of finite numbers "
                             f"with {x.shape[0]} runs of {warmup + x.shape[1]} iterations, got shape {slices.shape}")
        if np.all(np.isfinite(x)) and not slices_are_samples(slices, x, warmup=warmup):
            # Iterations as long as the full configuration's are read from the samples, shorter
            # ones from the slices: of two different measurements, every comparison is wrong.
            raise ValueError("`slices` must be the slices of `samples`: the mean of each iteration's slices "
                             "is its sample")
        n_slices = slices.shape[2]
    full = Configuration(x.shape[0], x.shape[-1], n_slices, n_slices, forks)
    fork_level = bool(fork_level) and forks > 1
    configurations = smaller_configurations(full, min_runs=min_runs, fork_level=fork_level)
    options: dict[str, Any] = dict(warmup=warmup, metric=metric, n_resamples=n_resamples,
                                   rng=np.random.default_rng(rng), overhead=float(overhead), slices=slices,
                                   fork_overhead=float(fork_overhead))
    if metric.startswith("rciw") and np.all(np.isfinite(x)):
        scored = _score_cheapest_first(x, configurations, full, threshold=float(threshold), **options)
    else:
        scored = score_configurations(x, configurations, **options)
    return choose(scored, full, metric=metric, threshold=threshold, warmup=warmup, overhead=float(overhead),
                  fork_overhead=float(fork_overhead))


def choose(scored: Sequence[Scored], full: Configuration, *, metric: str, threshold: float,
           warmup: int, overhead: float = 0.0, fork_overhead: float = 0.0) -> MinimalConfiguration:
    """Algorithm 1, lines 15-18: filter by the threshold, keep the shortest, break ties by the
    smaller metric (then by fewer runs, so that the answer does not depend on the order given).

    Shorter iterations are a different measurement, not only fewer of the same: the median or a
    quantile of iterations of one slice dodges interference that the mean of a longer iteration
    takes in, so under right-skewed noise their result is lower however many are taken, and a
    history measured at one duration and continued at another would show a step that no code
    made.  The stability metric cannot see that (each duration is stable around its own value).
    So a duration is offered only where the whole campaign measured at it (all runs and
    iterations, ``d`` slices each) gives a result within ``threshold`` of the full
    configuration's: the bias is checked at the precision of the full campaign, and a duration
    that fails is refused (``shifted``).  This guard is regbench's, not the paper's, whose
    Algorithm 1 checks stability alone.  The mean moves least (the mean of slices is the mean of
    the iterations they make up; it moves only with the later slices of each run that a shorter
    configuration leaves out, as in a drift); the median and the quantiles move with the
    duration itself.

    Fewer iterations are the same measurement only once the code has settled: the first
    iterations of a run (of a JMH fork) after its warm-up may still be slow (a JIT not done, a
    loaded machine that stretches the warm-up), the same in every run, so a configuration that
    keeps only them is stable and biased (Japke et al. 2025, s.4.4, RQ3, found warm-up the reason
    reduced configurations stray).  So a count ``i`` of iterations is offered only where the
    first ``i`` of every run and fork of the campaign give a result within ``threshold`` of the
    full configuration's, checked as the durations are (``unsettled``).

    Fewer runs (and forks) are fresh processes like the others, centred alike on average; but
    where whole runs land at separate levels (random initial conditions: Kalibera et al. 2005;
    a JVM's JIT decisions), the first few may happen to share one level, agree closely, and so
    be "stable" while the campaign is not.  The metric sees only the spread of what it keeps.
    So a configuration is chosen only if its own result is within ``threshold`` of the full
    configuration's too (the paper's change rate, s.4.2 eq. (1), which it reports after the
    fact, held to the threshold when choosing)."""
    full_scored, refused, shifted, unsettled = _refusals(scored, full, threshold=threshold)
    under = [s for s in scored if np.isfinite(s.stability) and s.stability <= threshold and not refused(s)]
    if under:
        chosen = min(under, key=lambda s: (s.cost, s.stability, s.configuration))
    else:
        chosen = full_scored
    return MinimalConfiguration(chosen, full_scored, bool(under), metric, float(threshold), warmup,
                                tuple(sorted(scored, key=lambda s: s.configuration)), overhead, shifted,
                                fork_overhead, unsettled)


def _refusals(scored: Sequence[Scored], full: Configuration, *, threshold: float
              ) -> tuple[Scored, Callable[[Scored], bool], tuple[int, ...], tuple[int, ...]]:
    """:func:`choose`'s checks on the results alone (not the metric): the full configuration's
    score, whether a configuration is refused whatever its metric (its result strays, or its
    duration or count of iterations is refused), the durations refused (``shifted``) and the
    counts of iterations refused (``unsettled``)."""
    full_scored = next((s for s in scored if s.configuration == full), None)
    if full_scored is None:
        raise ValueError(f"`scored` must include the full configuration {full}")

    def strays(s: Scored) -> bool:
        return not abs(s.result - full_scored.result) <= threshold * abs(full_scored.result)

    shifted = tuple(sorted(
        s.configuration.slices for s in scored
        if s.configuration.runs == full.runs and s.configuration.iterations == full.iterations
        and s.configuration.slices < full.full_slices and strays(s)))
    unsettled = tuple(sorted(
        s.configuration.iterations for s in scored
        if s.configuration.runs == full.runs and s.configuration.forks == full.forks
        and s.configuration.slices == full.slices and s.configuration.iterations < full.iterations and strays(s)))

    def refused(s: Scored) -> bool:
        return s.configuration.slices in shifted or s.configuration.iterations in unsettled or strays(s)

    return full_scored, refused, shifted, unsettled


def configuration_results(samples: np.ndarray, configurations: Sequence[Configuration], *, warmup: int,
                          location: str, slices: np.ndarray | None = None) -> np.ndarray:
    """The result of each configuration (``location``: ``mean`` or ``median`` of the measurements
    it keeps, :func:`simulated`), without its metric: what :func:`choose`'s checks need."""
    x = np.asarray(samples, dtype=float)
    out = np.empty(len(configurations))
    by_size: dict[int, list[int]] = {}
    for k, c in enumerate(configurations):
        by_size.setdefault(c.measurements, []).append(k)
    for members in by_size.values():
        rows = np.stack([simulated(x, configurations[k], warmup=warmup, slices=slices).ravel() for k in members])
        out[members] = rows.mean(axis=1) if location == "mean" else np.median(rows, axis=1)
    return out


#: Configurations bootstrapped at once, cheapest first (:func:`_score_cheapest_first`).
_BATCH = 32


def _score_cheapest_first(x: np.ndarray, configurations: Sequence[Configuration], full: Configuration, *,
                          threshold: float, warmup: int, metric: str, n_resamples: int, rng: np.random.Generator,
                          overhead: float, slices: np.ndarray | None, fork_overhead: float) -> list[Scored]:
    """:func:`score_configurations` for the bootstrapped metrics (RCIW), computed only where it
    can change :func:`choose`'s answer: the full configuration, and the others that its checks
    on the results do not refuse, cheapest first, until a batch holds one under the threshold
    (every configuration as cheap as it is then scored: ties of cost included).  The others keep
    a NaN metric.  The bootstrap costs ``n_resamples`` times the measurements of a
    configuration; scoring every one of them took minutes for runs of thousands of iterations."""
    location = METRICS[metric]
    results = configuration_results(x, configurations, warmup=warmup, location=location, slices=slices)
    prelim = [Scored(c, c.cost(warmup, overhead, fork_overhead), math.nan, float(r))
              for c, r in zip(configurations, results, strict=True)]
    _, refused, _, _ = _refusals(prelim, full, threshold=threshold)
    options: dict[str, Any] = dict(warmup=warmup, metric=metric, n_resamples=n_resamples, rng=rng,
                                   overhead=overhead, slices=slices, fork_overhead=fork_overhead)
    done = {s.configuration: s for s in score_configurations(x, [full], **options)}
    candidates = sorted((s for s in prelim if s.configuration != full and not refused(s)),
                        key=lambda s: (s.cost, s.configuration))
    k = 0
    while k < len(candidates):
        j = min(k + _BATCH, len(candidates))
        while j < len(candidates) and candidates[j].cost == candidates[j - 1].cost:
            j += 1
        batch = score_configurations(x, [s.configuration for s in candidates[k:j]], **options)
        done.update((s.configuration, s) for s in batch)
        k = j
        if any(np.isfinite(s.stability) and s.stability <= threshold for s in batch):
            break
    return [done.get(s.configuration, s) for s in prelim]


def run_overhead(iterations, seconds, groups=None) -> float:
    """The fixed cost of one run, in iterations, from stored runs of two or more lengths.

    A run of ``n`` stored iterations (warm-up included) takes ``a + b n`` seconds: ``a`` is what
    a run costs whatever its length (starting a process, imports, calibration, storing), ``b``
    an iteration.  The line is :func:`robust_line`'s; the answer is ``a / b``, at least 0, and 0
    where there is no line to read (runs of one length only, as a full campaign alone, or runs
    whose lengths do not clearly explain their times): iterations alone are priced.

    Lengths may be weighed iterations (:func:`regbench.optimize.plans.experiment_overhead`
    weighs each run's by its version's cost of an iteration); with ``groups``, only pairs
    within one group (one version) are compared.

    Parameters
    ----------
    iterations, seconds : array_like
        Per run: its stored iterations and its wall seconds (finite, positive).
    groups : array_like, optional
        Per run: its group (version); default, one group.

    Returns
    -------
    float
    """
    line = robust_line(iterations, seconds, groups)
    if line is None:
        return 0.0
    intercept, slope = line
    return max(intercept / slope, 0.0)


def robust_line(x, y, groups=None) -> tuple[float, float] | None:
    """``y = a + b x`` through points of two or more ``x``, robust to a few slowed ones: ``(a, b)``.

    Theil-Sen with pairs weighed by how far apart their ``x`` are (Sievers 1978; Scholz 1978:
    ``b`` is the weighted median of the pairwise slopes, each weighed by ``|x_j - x_i|``), so that
    a point slowed by interference does not move the line and two points of nearly one ``x``,
    whose slope is all noise, count for little; ``a`` is the median of ``y - b x``.
    ``scipy.stats.theilslopes`` has neither weights nor groups, hence the few lines here.

    The line is read only when at least 90% of the weight agrees that ``y`` grows with ``x``:
    points whose ``x`` differ by one or two against a noise of a percent give slopes of either
    sign, and an intercept read from them is noise (0 to 3x the truth).  None then, and where no
    two points of one group have different ``x``.  Points that are not finite and positive are
    left out.

    Parameters
    ----------
    x, y : array_like
        One value per point.
    groups : array_like, optional
        Per point: its group; only pairs within one group are compared (default: one group).

    Returns
    -------
    tuple of float, or None
    """
    n = np.asarray(x, dtype=float)
    t = np.asarray(y, dtype=float)
    g = np.zeros(n.shape, dtype=int) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    if n.shape != t.shape or n.ndim != 1 or g.shape != n.shape:
        raise ValueError("`x`, `y` and `groups` must be 1-d arrays of one length")
    keep = np.isfinite(n) & np.isfinite(t) & (n > 0) & (t > 0)
    n, t, g = n[keep], t[keep], g[keep]
    i, j = np.triu_indices(n.size, k=1)
    pair = (g[i] == g[j]) & (n[i] != n[j])
    if not pair.any():
        return None
    i, j = i[pair], j[pair]
    slopes = (t[j] - t[i]) / (n[j] - n[i])
    order = np.argsort(slopes)
    slopes = slopes[order]
    share = np.cumsum(np.abs(n[j] - n[i])[order])
    share /= share[-1]
    if not slopes[np.searchsorted(share, 0.1)] > 0:
        return None  # larger x were not clearly larger y: no line to read
    slope = float(slopes[np.searchsorted(share, 0.5)])
    used = np.isin(np.arange(n.size), np.concatenate([i, j]))
    intercept = float(np.median(t[used] - slope * n[used]))
    return intercept, slope
