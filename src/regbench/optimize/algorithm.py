"""Algorithm 1 of Japke et al. 2025 (muOpTime): the least repetition per benchmark.

A benchmark measured with a full configuration of repetition levels, here ``R`` runs (fresh
processes) of ``w`` warm-up and ``I`` measured iterations, is simulated at every smaller
configuration ``(r, i)`` by keeping the first ``r`` runs and the first ``i`` measured iterations
of each (s.3.1: "only considering data that would have been collected in this scenario").  For
each configuration with at least 3 measurements (Algorithm 1, line 8) the chosen stability metric
(s.2: CV, RMAD, RCIW1-3, computed by :func:`regbench.stats.stability_metrics_many`) is computed
on the pooled measurements; the cheapest configuration whose metric is at most the threshold is
chosen, the smaller metric breaking ties of cost (lines 15-18).  No configuration under the
threshold keeps the full one.

Warm-up aware (s.4.4, RQ3): the warm-up iterations of a run are discarded from the samples and
are never reduced, but they are paid for in every run kept, so a configuration's cost is
``r * (w + i)`` iterations.

This module is pure: arrays in, records out; it imports numpy and :mod:`regbench.stats` only.

References
----------
Japke, Grambow, Laaber, Bermbach 2025 (seed 004): s.2 (repetition levels, stability metrics),
s.3.1 and Algorithm 1 (optimization), s.4.2 eq. (1) (change rate), s.4.4 (warm-up).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The stability metrics of s.2, by name; the location their results are given by (s.4.2: the
#: mean for the metrics based on the mean, the median for those based on the median).
METRICS = {"cv": "mean", "rmad": "median", "rciw1": "mean", "rciw2": "mean", "rciw3": "median"}
#: Algorithm 1, line 8: a configuration needs at least this many measurements.
MIN_MEASUREMENTS = 3
#: s.1, s.3: a level must have been recorded at least this many times to be reduced.
MIN_LEVEL = 3


@dataclass(frozen=True, order=True)
class Configuration:
    """One execution configuration ``(runs, iterations)``; the outermost level first (s.3.1).

    The warm-up iterations of each run are not a level: they stay as configured (s.4.4).
    """

    runs: int
    iterations: int

    def cost(self, warmup: int) -> int:
        """Iterations executed, warm-up included: ``runs * (warmup + iterations)``."""
        return self.runs * (warmup + self.iterations)


@dataclass(frozen=True)
class Scored:
    """A simulated configuration of one benchmark.

    Attributes
    ----------
    configuration : Configuration
    cost : int
        Iterations it executes, warm-up included.
    stability : float
        The chosen metric on its pooled measurements (NaN when undefined).
    result : float
        The benchmark's result under it: mean or median of the measurements, by the metric.
    """

    configuration: Configuration
    cost: int
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
    """

    chosen: Scored
    full: Scored
    stable: bool
    metric: str
    threshold: float
    warmup: int
    scored: tuple[Scored, ...]

    @property
    def time_share(self) -> float:
        """Cost of the chosen configuration over that of the full one."""
        return self.chosen.cost / self.full.cost

    @property
    def change_rate(self) -> float:
        """``|r_min - r_full| / |r_full|``, s.4.2 eq. (1)."""
        return abs(self.chosen.result - self.full.result) / abs(self.full.result)


def check_options(metric: str, threshold: float) -> None:
    """Validation at the door: the metric is one of :data:`METRICS`, the threshold in (0, 1)."""
    if metric not in METRICS:
        raise ValueError(f"`metric` must be one of {', '.join(METRICS)}, got {metric!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 1:
        raise ValueError(f"`threshold` must be in (0, 1), got {threshold!r}")


def smaller_configurations(full: Configuration, *, min_runs: int = 1) -> list[Configuration]:
    """Every configuration up to ``full`` with at least :data:`MIN_MEASUREMENTS` measurements
    (Algorithm 1, lines 3 and 8) and at least ``min_runs`` runs, ``full`` included."""
    return [Configuration(r, i) for r in range(min(min_runs, full.runs), full.runs + 1)
            for i in range(1, full.iterations + 1) if r * i >= MIN_MEASUREMENTS]


def score_configurations(samples: np.ndarray, configurations: Sequence[Configuration], *, warmup: int,
                         metric: str, n_resamples: int = 10_000, rng=None) -> list[Scored]:
    """The metric and result of each configuration, simulated from the full ``samples``.

    Parameters
    ----------
    samples : array_like, ``(runs, iterations)``
        The measured iterations (warm-up removed) of each run of the full configuration, in the
        order they were measured.
    configurations : sequence of Configuration
        Each at most ``samples.shape``.
    warmup : int, keyword-only
        Warm-up iterations of each run (discarded, but paid for in the cost).
    metric : str, keyword-only
        One of :data:`METRICS`.
    n_resamples : int, keyword-only
        Bootstrap resamples of the RCIW metrics (10,000 in the paper, s.2).
    rng : int, numpy.random.Generator or None, keyword-only

    Returns
    -------
    list of Scored
        In the order of ``configurations``.
    """
    from ..stats import stability_metrics_many

    x = np.asarray(samples, dtype=float)
    if x.ndim != 2 or not np.all(np.isfinite(x)):
        raise ValueError("`samples` must be a (runs, iterations) array of finite numbers")
    gen = np.random.default_rng(rng)
    # Configurations with the same number of measurements are scored in one batch (the batch
    # function needs rows of one length); CV and RMAD are closed-form, so one resample keeps the
    # bootstrap that the batch function also computes negligible.
    resamples = n_resamples if metric.startswith("rciw") else 1
    by_size: dict[int, list[int]] = {}
    for k, c in enumerate(configurations):
        if c.runs > x.shape[0] or c.iterations > x.shape[1]:
            raise ValueError(f"configuration {c} is larger than the samples {x.shape}")
        by_size.setdefault(c.runs * c.iterations, []).append(k)
    out: list[Scored | None] = [None] * len(configurations)
    for _, members in sorted(by_size.items()):
        rows = np.stack([x[:configurations[k].runs, :configurations[k].iterations].ravel() for k in members])
        with warnings.catch_warnings():
            if resamples == 1:  # its warning would be about the unused bootstrap metrics
                warnings.simplefilter("ignore", RuntimeWarning)
            m = stability_metrics_many(rows, n_resamples=resamples, rng=gen)
        values = getattr(m, metric)
        if resamples == 1 and not np.all(np.isfinite(values)):
            warnings.warn(f"{metric} is undefined (zero mean or median) for some configurations; they are "
                          "not chosen", RuntimeWarning, stacklevel=2)
        where = m.mean if METRICS[metric] == "mean" else m.median
        for j, k in enumerate(members):
            c = configurations[k]
            out[k] = Scored(c, c.cost(warmup), float(values[j]), float(where[j]))
    return [s for s in out if s is not None]


def minimal_configuration(samples, *, warmup: int = 0, metric: str = "rmad", threshold: float = 0.01,
                          min_runs: int = 1, n_resamples: int = 10_000, rng=None) -> MinimalConfiguration:
    """Algorithm 1 for one benchmark: its cheapest configuration whose metric is under the threshold.

    Parameters
    ----------
    samples : array_like, ``(runs, iterations)``
        Measured iterations of every run of the full configuration (warm-up removed); at least
        :data:`MIN_LEVEL` runs and iterations.
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

    Returns
    -------
    MinimalConfiguration

    Raises
    ------
    ValueError
        A bad option, or fewer than :data:`MIN_LEVEL` runs or iterations.

    References
    ----------
    Japke et al. 2025 (seed 004), Algorithm 1 and s.3.1; s.4.4 (warm-up).
    """
    check_options(metric, threshold)
    x = np.asarray(samples, dtype=float)
    if x.ndim != 2:
        raise ValueError("`samples` must be a (runs, iterations) array")
    if x.shape[0] < MIN_LEVEL or x.shape[1] < MIN_LEVEL:
        raise ValueError(f"`samples` must have at least {MIN_LEVEL} runs and {MIN_LEVEL} iterations "
                         f"to be reduced, got {x.shape[0]} runs of {x.shape[1]} iterations")
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError("`warmup` must be a non-negative integer")
    if isinstance(min_runs, bool) or not isinstance(min_runs, numbers.Integral) or min_runs < 1:
        raise ValueError("`min_runs` must be a positive integer")
    full = Configuration(*x.shape)
    scored = score_configurations(x, smaller_configurations(full, min_runs=min_runs), warmup=warmup,
                                  metric=metric, n_resamples=n_resamples, rng=rng)
    return choose(scored, full, metric=metric, threshold=threshold, warmup=warmup)


def choose(scored: Sequence[Scored], full: Configuration, *, metric: str, threshold: float,
           warmup: int) -> MinimalConfiguration:
    """Algorithm 1, lines 15-18: filter by the threshold, keep the shortest, break ties by the
    smaller metric (then by fewer runs, so that the answer does not depend on the order given)."""
    full_scored = next(s for s in scored if s.configuration == full)
    under = [s for s in scored if np.isfinite(s.stability) and s.stability <= threshold]
    if under:
        chosen = min(under, key=lambda s: (s.cost, s.stability, s.configuration.runs))
    else:
        chosen = full_scored
    return MinimalConfiguration(chosen, full_scored, bool(under), metric, float(threshold), warmup,
                                tuple(sorted(scored, key=lambda s: s.configuration)))
