"""``plan = "adaptive"``: as many runs as the wanted precision needs, within a time budget.

A fixed plan (pyperf's 20 processes x 3 values, asv's 2 x up to 10) spends the same time on a
quiet benchmark as on a noisy one.  An adaptive experiment (one benchmark on one version):

1. runs ``pilot`` runs with the configured iterations;
2. estimates the variance components between runs and within runs from them and chooses the
   iterations of every later run by seed 000 s.3.1: the plan ``(m, n)`` of least cost
   ``(w + n) m`` reaching the target (:func:`regbench.stats.hierarchical.plan_repetitions`,
   which starts from ``n_opt = sqrt(w S_sigma^2 / rho^2)``); ``w`` is the cost a run pays
   besides its measured iterations, measured from the pilot (process start, imports and
   warm-up: the run's duration minus its measured time, in iterations) where samples are
   seconds, and the configured warm-up otherwise;
3. adds runs, round after round interleaved with the other experiments (RMIT, seed 004 s.2),
   until the confidence interval's relative half-width (formula 4, seed 000 s.3.1) is at most
   the target, or its budget is spent.

When the budget is spent first, the experiment is *inconclusive* and says about how many more
runs the target needs (from the same formula).  Stopping when an interval is narrow enough
uses the data to decide the sample size; the interval's coverage is then slightly below its
nominal level for the smallest plans, which is why the pilot has at least 3 runs and the
interval uses Student's t (the simulation in tests/test_run_adaptive.py measures it).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..config import BenchmarkSpec
from .core import Trial, TrialResult, TrialRunner


@dataclass(frozen=True)
class Assessment:
    """Where an adaptive experiment stands after its runs so far.

    Attributes
    ----------
    runs : int
        Successful runs so far.
    relative_half_width : float
        Of the interval for the mean (NaN with fewer than two runs).
    target : float
    met : bool
        Whether ``relative_half_width <= target``.
    iterations : int or None
        Iterations per run the pilot recommends for later runs (None before the pilot is done
        or when it cannot be told).
    runs_needed : int or None
        Runs in all the target needs by the plan's prediction (None when it cannot be told).
    """

    runs: int
    relative_half_width: float
    target: float
    met: bool
    iterations: int | None
    runs_needed: int | None

    @property
    def more_runs(self) -> int | None:
        """About how many more runs the target needs (0 when met)."""
        if self.met:
            return 0
        if self.runs_needed is None:
            return None
        return max(self.runs_needed - self.runs, 1)


def overhead_iterations(samples: Sequence[np.ndarray], durations: Sequence[float | None], *, warmup: int,
                        unit: str) -> int:
    """The cost ``w`` of a run beyond its measured iterations, in iterations (seed 000 s.3.1).

    ``samples`` are the measured samples of the successful runs; ``durations`` the wall-clock
    seconds of successful runs (not necessarily the same ones: only means are used).  When
    samples are seconds, ``w`` is (mean duration - mean measured time) / mean sample: process
    start, imports and warm-up all count, which is what makes one more run dearer than one more
    iteration.  Otherwise the configured ``warmup`` (at least 1: a run always costs something
    more than its iterations).
    """
    known = [d for d in durations if d is not None and math.isfinite(d)]
    runs = [s for s in samples if s.size]
    if unit == "s" and known and runs:
        per_sample = float(np.mean([s.mean() for s in runs]))
        measured = float(np.mean([s.sum() for s in runs]))
        if per_sample > 0:
            extra = (float(np.mean(known)) - measured) / per_sample
            return max(int(round(extra)), warmup, 1)
    return max(warmup, 1)


def assess(samples: Sequence[np.ndarray], durations: Sequence[float], *, target: float,
           confidence_level: float = 0.99, warmup: int = 0, unit: str = "s",
           max_iterations: int = 100_000) -> Assessment:
    """How precise an experiment's mean is, and what its next runs should be.

    Parameters
    ----------
    samples : sequence of 1-D arrays
        Measured samples (warm-up removed) of each successful run so far.
    durations : sequence of float
        Wall-clock seconds of successful runs (for the cost of a run; only their mean is used).
    target : float
        Wanted relative half-width of the interval (0.01 = +-1%).
    confidence_level : float
    warmup : int
        Warm-up iterations of each run.
    unit : str
        The samples' unit (``"s"`` lets the cost of a run be measured).

    Returns
    -------
    Assessment
    """
    from ..stats.hierarchical import hierarchical_summary, plan_repetitions

    if not 0 < target < 1:
        raise ValueError("`target` must be in (0, 1)")
    runs = [np.asarray(s, dtype=float) for s in samples if np.asarray(s).size >= 2]
    if len(runs) < 2:
        return Assessment(len(runs), math.nan, target, False, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        summary = hierarchical_summary(runs, confidence_level=confidence_level)
        rel = summary.relative_half_width
        w = overhead_iterations(runs, durations, warmup=warmup, unit=unit)
        try:
            plan = plan_repetitions(runs, target_relative_half_width=target, confidence_level=confidence_level,
                                    warmup=w, min_runs=2, max_iterations=max_iterations)
        except ValueError:
            plan = None
    met = bool(math.isfinite(rel) and rel <= target)
    if plan is None:
        return Assessment(len(runs), float(rel), target, met, None, None)
    # The runs already done have their own iterations: the runs still needed are those that, with
    # the plan's iterations, bring the half-width to the target given what is already there.
    needed = _runs_needed(summary, plan.iterations, target, confidence_level)
    return Assessment(len(runs), float(rel), target, met, int(plan.iterations), needed)


def _runs_needed(summary, n: int, target: float, confidence_level: float) -> int | None:
    """Runs in all (of ``n`` iterations) after which formula (4) predicts the target is met."""
    from ..stats.hierarchical import interval_quantile

    if not summary.mean or not math.isfinite(summary.rho2):
        return None
    goal = target * abs(summary.mean)
    v = summary.rho2 + summary.s2_sigma / n

    def ok(m: int) -> bool:  # the half-width shrinks as m grows: bisection finds the least m
        return interval_quantile(confidence_level, m, "t") * math.sqrt(v / m) <= goal

    lo = hi = max(summary.n_runs, 2)
    if ok(lo):
        return lo
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > 10_000_000:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


#: Runs of an adaptive experiment when it has no ``budget``: a bound, so that a benchmark too
#: noisy for its target cannot run forever.
MAX_RUNS = 200
#: An adaptive experiment stops when more runs failed than this (and than a fifth of its runs).
MAX_FAILED = 3


@dataclass(frozen=True)
class AdaptiveOutcome:
    """Where one adaptive experiment (benchmark x version) ended.

    ``status`` is ``met`` (the interval's relative half-width reached the target), ``budget``
    (its time was spent first: inconclusive), ``max-runs`` (:data:`MAX_RUNS` without a budget),
    or ``failed`` (its runs kept failing).  ``more_runs`` says about how many more runs the target
    needs when it was not met (None when it cannot be told).
    """

    benchmark: str
    version: str
    status: str
    runs: int
    iterations: int
    relative_half_width: float
    target: float
    seconds: float
    more_runs: int | None


def widest_run(spec: BenchmarkSpec) -> tuple[BenchmarkSpec, int]:
    """The run of an adaptive experiment with the largest environment it can reach: its rounds add
    runs and choose the iterations, so the most of both (budgets aside) is what must fit
    (:func:`regbench.run.core.check_env_size`)."""
    return dataclasses.replace(spec, iterations=max(spec.iterations, 10**6)), 10**6 if spec.budget else MAX_RUNS


@dataclass
class AdaptiveState:
    """Where one adaptive experiment (benchmark x version) is between rounds.

    ``next_index`` is the run index its next run gets; ``iterations`` the iterations of its
    later runs, ``chosen`` once the pilot has decided them (seed 000 s.3.1).
    """

    spec: BenchmarkSpec
    version: str
    next_index: int
    iterations: int
    chosen: bool = False


def run_adaptive_rounds(runner: TrialRunner, specs: Sequence[BenchmarkSpec], versions: Sequence[str], *,
                        seed: int, existing: Iterable[tuple[str, str, int]]
                        ) -> tuple[list[AdaptiveOutcome], list[TrialResult]]:
    """After the pilots (run with the campaign's other trials), add runs round by round.

    Each round holds one more run of every experiment still short of its target and within its
    budget, shuffled (RMIT, seed 004 s.2); after each round every experiment is assessed again
    from all its stored runs (a resumed campaign counts the runs stored before).

    Returns where each experiment ended, and the trials the rounds ran.
    """
    ctx = runner.ctx
    gen = np.random.default_rng([seed, 1])
    existing = list(existing)
    active: dict[tuple[str, str], AdaptiveState] = {}
    for spec in specs:
        for v in versions:
            taken = [r for b, vv, r in existing if (b, vv) == (spec.name, v)]
            active[(spec.name, v)] = AdaptiveState(spec, v, max([*taken, *range(spec.pilot)], default=-1) + 1,
                                                   spec.iterations)
    done: list[AdaptiveOutcome] = []
    ran: list[TrialResult] = []

    def measured(st: AdaptiveState) -> tuple[list[np.ndarray], int]:
        series = ctx.store.load_series(st.spec.name, config=ctx.config_name, machine=ctx.machine,
                                       versions=[st.version])
        if not series or not series[0].versions:
            return [], 0
        return series[0].runs[0], series[0].failed[0]

    def timing(st: AdaptiveState) -> tuple[float, list[float]]:
        rows = ctx.store.run_durations(st.spec.name, st.version, config=ctx.config_name, machine=ctx.machine)
        spent = float(sum(d for _, d in rows if d is not None))
        return spent, [d for status, d in rows if status == "ok" and d is not None]

    while active:
        finished = []
        for key, st in active.items():
            spec = st.spec
            runs, failed = measured(st)
            spent, ok_durations = timing(st)
            a = assess(runs, ok_durations, target=spec.target_width, warmup=spec.warmup, unit=spec.unit)
            if not st.chosen and len(runs) > spec.pilot and runs[-1].size != spec.iterations:
                # A resumed experiment keeps the iterations its earlier rounds chose.
                st.iterations, st.chosen = int(runs[-1].size), True
            if a.iterations is not None and not st.chosen and len(runs) >= spec.pilot:
                # seed 000 s.3.1: the later runs' iterations, chosen once from the pilot; kept
                # inside the timeout with room to spare.
                mean_it = float(np.mean([r.mean() for r in runs])) if spec.unit == "s" else None
                cap = int(0.3 * spec.timeout / mean_it) if mean_it and mean_it > 0 else a.iterations
                # Nor more than `max_samples` allows (each slice kept as a sample is, as the
                # configuration checks for the configured iterations): a longer run would fail.
                cap = min(cap, spec.max_samples // max(1, spec.slices) - spec.warmup)
                st.iterations, st.chosen = max(2, min(a.iterations, cap)), True
            status = None
            if a.met:
                status = "met"
            elif failed > MAX_FAILED and failed > 0.2 * (failed + len(runs)):
                status = "failed"
            elif spec.budget is not None and spent >= spec.budget:
                status = "budget"
            elif spec.budget is None and len(runs) + failed >= MAX_RUNS:
                status = "max-runs"
            if status is not None:
                done.append(AdaptiveOutcome(spec.name, st.version, status, len(runs), st.iterations,
                                            a.relative_half_width, spec.target_width, spent, a.more_runs))
                finished.append(key)
        for key in finished:
            del active[key]
        keys = list(active)
        work = []
        for k in gen.permutation(len(keys)):
            st = active[keys[k]]
            work.append((Trial(st.spec.name, st.version, st.next_index),
                         dataclasses.replace(st.spec, iterations=st.iterations)))
            st.next_index += 1
        ran += runner.run(work)
    return sorted(done, key=lambda o: (o.benchmark, versions.index(o.version))), ran
