"""What a plan costs: a tool's runs priced from what the tool says, and the suite's time under plans.

A tool's benchmark (``format = ...``) runs as invocations of the tool, each running everything it
selects; the tool reports each benchmark's measured iterations, and a run of one of them costs
more than those.  JMH's JSON says part of it, per benchmark (:class:`regbench.model.ToolTiming`,
stored with each run): the forks it started, the warm-up iterations each ran and did not report,
the length of an iteration.  The rest of an invocation's wall time is what starting the tool and
its processes costs: ``H`` per invocation (JMH's own JVM, its benchmark list, regbench reading
and storing the results) and ``F`` per process (a fork's JVM).  Invocations of one layout (a full
campaign's: each runs every benchmark) give only ``H + P F`` (``P`` processes an invocation);
invocations of two layouts or more (a campaign with plans whose invocation was split into groups)
tell them apart (:func:`regbench.optimize.algorithm.robust_line`).

Each benchmark's run is priced at its fixed seconds, ``warm-up + P_b F + H P_b / P``, in its own
iterations (:func:`fixed_iterations`: Algorithm 1's ``o``), and at its ``P_b`` forks' iterations
(a plan's iterations are those of each fork, :mod:`regbench.optimize.forks`), so that its plan
trades runs against iterations at their real cost; the suite's time under the plans counts each invocation as ``run
--plan optimized`` makes it (one per split group and run, each paying ``H``: :func:`suite_estimate`).
Where ``H`` and ``F`` are not told apart and the plans split an invocation, the suite's time is a
range: from all of the start in ``F`` to all of it in ``H``.  A tool that says nothing of its
timing (``go test``) is priced at its iterations alone, and the estimate says that it is then a
lower bound.

Pure but for :func:`tool_costs`, which reads what the store holds of a tool benchmark's runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..adapters.base import without_metric
from ..model import ExecutionPlan, RunInfo, SeriesName, ToolTiming
from . import algorithm


@dataclass(frozen=True)
class Invocation:
    """One stored invocation of a tool benchmark whose every benchmark said its timing.

    Attributes
    ----------
    version : str
    run_index : int
    seconds : float
        Its wall time.
    processes : int
        The processes the tool started in it (JMH's forks of all its benchmarks).
    timed : float
        The seconds the tool accounts for: each benchmark's unreported warm-up and stored
        iterations times their length.
    """

    version: str
    run_index: int
    seconds: float
    processes: int
    timed: float

    @property
    def start(self) -> float:
        """What the tool does not account for: starting it and its processes (at least 0)."""
        return max(self.seconds - self.timed, 0.0)


@dataclass(frozen=True)
class StartCost:
    """What starting a tool's invocation and its processes costs, measured from stored invocations.

    Attributes
    ----------
    per_invocation : float or None
        ``H``, seconds each invocation pays once; None where the stored invocations all had one
        layout, so that ``H`` cannot be told from ``F``.
    per_process : float
        ``F``, seconds each process pays; where ``per_invocation`` is None, ``F + H / P`` (the
        invocation's start spread over its processes).
    processes : int
        ``P``, the processes of one invocation of the full campaign (every benchmark).
    start : float
        The median start (``H + P F``) of the invocations of the full campaign's layout.
    invocations : int
        How many stored invocations it was measured from.
    """

    per_invocation: float | None
    per_process: float
    processes: int
    start: float
    invocations: int

    def bounds(self) -> list[tuple[float, float]]:
        """``(H, F)`` to price a layout with: the measured pair, or, when not told apart, the two
        extremes that agree with the full campaign: all of the start per process, all of it per
        invocation."""
        if self.per_invocation is not None:
            return [(self.per_invocation, self.per_process)]
        return [(0.0, self.start / self.processes), (self.start, 0.0)]


@dataclass(frozen=True)
class ToolCost:
    """A tool benchmark's cost model, or why it has none.

    Attributes
    ----------
    benchmark : str
        The configured benchmark (``jmh``).
    timings : Mapping[str, ToolTiming]
        Per reported benchmark in processes of its own (``REPORTED`` of a primary series
        ``SPEC/REPORTED``), what the tool said a run of it costs at the derived version.
    start : StartCost or None
        None when not measured: ``missing`` says why.
    missing : str or None
    """

    benchmark: str
    timings: Mapping[str, ToolTiming]
    start: StartCost | None
    missing: str | None = None

    def fixed_iterations(self, reported: str) -> float | None:
        """Algorithm 1's ``o`` for the series ``SPEC/reported``: the fixed seconds of one of its runs
        (its unreported warm-up, its processes' starts and its share of the invocation's) in its
        iterations; a secondary metric's are its benchmark's.  None when not measured."""
        timing = self.timings.get(without_metric(reported))
        if self.start is None or timing is None:
            return None
        h, f = (self.start.per_invocation or 0.0), self.start.per_process
        fixed = timing.warmup_seconds + timing.processes * f + h * timing.processes / self.start.processes
        return fixed / timing.iteration_seconds

    def fork_fixed_iterations(self, reported: str) -> tuple[float, float] | None:
        """:meth:`fixed_iterations` of ``SPEC/reported`` split where its forks are a level of its
        plans: ``(run, fork)``, what a run pays once (its share of the invocation's start, ``H
        P_b / P``, which does not depend on its own forks) and what each of its forks pays (its
        start ``F`` and its share of the unreported warm-up), in its iterations, so that ``o =
        run + P_b fork``.  None when not measured."""
        timing = self.timings.get(without_metric(reported))
        if self.start is None or timing is None:
            return None
        h, f = (self.start.per_invocation or 0.0), self.start.per_process
        run = h * timing.processes / self.start.processes
        fork = timing.warmup_seconds / timing.processes + f
        return run / timing.iteration_seconds, fork / timing.iteration_seconds


def primary(reported: str) -> bool:
    """Whether a reported benchmark runs in processes of its own (not a secondary metric, ``X [m]``)."""
    return without_metric(reported) == reported


def invocations(runs: Iterable[RunInfo], timings: Mapping[tuple[str, str, int], ToolTiming | None]
                ) -> list[Invocation]:
    """The complete invocations among the series runs of one tool benchmark on one configuration
    and machine: its runs grouped by version and run index (one invocation each: a split group's
    runs have run indexes of their own), kept where every run is ok with a duration and every
    primary series has its timing (``timings`` by ``(series, version, run index)``)."""
    grouped: dict[tuple[str, int], list[RunInfo]] = {}
    for r in runs:
        grouped.setdefault((r.version, r.run_index), []).append(r)
    out = []
    for (version, index), members in sorted(grouped.items()):
        durations = {r.duration for r in members}
        if any(r.status != "ok" for r in members) or len(durations) != 1 or None in durations:
            continue
        processes, timed, complete = 0, 0.0, True
        for r in members:
            reported = SeriesName.parse(r.benchmark).reported
            if reported is None or not primary(reported):
                continue
            timing = timings.get((r.benchmark, version, index))
            if timing is None:
                complete = False
                break
            processes += timing.processes
            timed += timing.warmup_seconds + r.n_samples * timing.iteration_seconds
        (seconds,) = durations
        if complete and processes > 0 and seconds is not None:
            out.append(Invocation(version, index, float(seconds), processes, timed))
    return out


def start_cost(found: Sequence[Invocation], *, processes: int) -> StartCost | None:
    """``H`` and ``F`` from stored invocations (:class:`StartCost`); the full campaign's invocations
    have ``processes`` each.  None without one of that layout."""
    full = [v for v in found if v.processes == processes]
    if not full:
        return None
    start = float(np.median([v.start for v in full]))
    line = algorithm.robust_line([v.processes for v in found], [v.start for v in found])
    if line is None:
        return StartCost(None, start / processes, processes, start, len(found))
    h, f = line
    if h < 0:  # the line's intercept is noise around 0: the start is all per process
        h, f = 0.0, float(np.median([v.start / v.processes for v in found]))
    return StartCost(float(h), float(f), processes, start, len(found))


def tool_costs(store, spec: str, *, config: str, machine: str, version: str, parts: Iterable[int],
               runs: Sequence[RunInfo]) -> ToolCost:
    """The cost model of the tool benchmark ``spec`` on ``config`` and ``machine``, its benchmarks'
    timing read from the full campaign's runs at ``version`` (its campaigns ``parts``), its start
    from every stored invocation (``runs``: the store's runs of the series ``spec/...``)."""
    prefix = spec + "/"
    mine = [r for r in runs if r.benchmark.startswith(prefix) and r.config == config and r.machine == machine]
    stored = {(i.benchmark, i.version, i.run_index): i.timing
              for i in store.run_tools(prefix=prefix, config=config, machine=machine)}
    parts = set(parts)
    full = [r for r in mine if r.campaign_id in parts and r.version == version and r.status == "ok"]
    timings: dict[str, ToolTiming] = {}
    seen: set[str] = set()
    for r in full:
        reported = SeriesName.parse(r.benchmark).reported
        if reported is None or not primary(reported):
            continue
        seen.add(reported)
        timing = stored.get((r.benchmark, r.version, r.run_index))
        if timing is not None:
            timings.setdefault(reported, timing)
    untimed = sorted(seen - set(timings))
    if untimed or not timings:
        what = f"{len(untimed)} of its benchmarks" if timings else "it"
        return ToolCost(spec, timings, None, f"{spec}: the tool does not say how long {what} ran beyond the "
                                             "iterations it reported (warm-up, process starts)")
    layout = {(r.version, r.run_index) for r in full}
    found = invocations(mine, stored)
    processes = sorted(v.processes for v in found if (v.version, v.run_index) in layout)
    if not processes:
        return ToolCost(spec, timings, None, f"{spec}: none of its full campaign's invocations at {version} "
                                             "stored every benchmark it ran ok with its timing")
    start = start_cost(found, processes=processes[len(processes) // 2])
    return ToolCost(spec, timings, start, None if start is not None else f"{spec}: its start is not measured")


@dataclass(frozen=True)
class Group:
    """One invocation per run of a tool benchmark under plans: ``runs`` of ``iterations`` each,
    running the benchmarks ``reported`` (primary series, by their reported names) in ``forks``
    processes each (None: as many as the full campaign's, the command's own)."""

    runs: int
    iterations: int
    reported: tuple[str, ...]
    forks: int | None = None


def layout_seconds(groups: Sequence[Group], cost: ToolCost, *, warmup: int, per_invocation: float,
                   per_process: float, measured: bool = True) -> float:
    """Seconds per version of a tool benchmark's invocations ``groups``: each run of a group pays
    ``H`` once, and each of its benchmarks its warm-up, its processes' ``F`` and ``warmup +
    iterations`` stored iterations in each of its processes (JMH's ``-i`` is iterations of each
    fork), its processes the group's ``forks`` where it sets them (the warm-up the tool said of
    the full campaign's processes, by process).  With ``measured`` False (the tool said nothing), every benchmark is one process of
    iterations of one second and no fixed cost: iterations alone."""
    total = 0.0
    for g in groups:
        each = per_invocation if measured else 0.0
        for name in g.reported:
            said = cost.timings.get(name)
            timing = said if measured else None
            if timing is None:  # iterations alone, in each of its forks (the full campaign's where known)
                each += (g.forks or (said.processes if said is not None else 1)) * (warmup + g.iterations)
            else:
                p = g.forks or timing.processes
                each += p * (timing.warmup_seconds / timing.processes + per_process
                             + (warmup + g.iterations) * timing.iteration_seconds)
        total += g.runs * each
    return total


@dataclass(frozen=True)
class SuiteEstimate:
    """The suite's time per version under the plans, as a share of the full configuration's.

    Attributes
    ----------
    low, high : float
        The share; a range where a tool's start per invocation and per process are not told apart
        and its plans split its invocation (NaN where nothing could be estimated).
    lower_bound : bool
        Some of it is priced at iterations alone (a tool that does not say its timing) or left out
        (a benchmark whose runs have no durations): the true share may be higher.
    seconds_low, seconds_high, full_seconds : float
        Per version, under the plans (at ``low`` and ``high``) and under the full configuration
        (measured), of what is counted.
    priced : int
        Derived plans whose runs' fixed cost is measured (and counted).
    notes : tuple of str
        What is not priced, or priced as a range, and why (one line each).
    """

    low: float
    high: float
    lower_bound: bool
    seconds_low: float
    seconds_high: float
    full_seconds: float
    priced: int = 0
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        def fin(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {"low": fin(self.low), "high": fin(self.high), "lower_bound": self.lower_bound,
                "seconds_low": fin(self.seconds_low), "seconds_high": fin(self.seconds_high),
                "full_seconds": fin(self.full_seconds), "priced": self.priced, "notes": list(self.notes)}


def suite_estimate(derived: Sequence[tuple[ExecutionPlan, algorithm.MinimalConfiguration, float]],
                   current: Sequence[ExecutionPlan], *, costs: Mapping[tuple[str, str, str], ToolCost],
                   full_seconds: Mapping[tuple[str, str, str], float | None],
                   layouts: Mapping[tuple[str, str, str], Sequence[Group]],
                   measured_shares: Mapping[tuple[str, str, str], float] | None = None) -> SuiteEstimate:
    """The suite's time under the ``derived`` plans (each with Algorithm 1's answer and the fixed
    cost of a run measured for it, in iterations) against the full configuration's, per
    version, in seconds.

    A benchmark of its own counts its full campaign's seconds (``plan.full_seconds``) and the
    share its plan's cost is of the full configuration's, its runs' fixed cost counted where
    measured (whether or not the plan was chosen with it, ``--no-run-cost``).  A
    tool benchmark ``(spec, config, machine)`` with a derived plan counts its full campaign's
    invocations (``full_seconds``) and the share :func:`layout_seconds` gives its invocations
    under its plans (``layouts``: as ``run --plan optimized`` will make them,
    :func:`regbench.optimize.plans.invocation_groups`) against one invocation of everything at
    the full configuration of its ``current`` plans (the derived and those kept), with its
    measured ``costs``.  A tool benchmark in ``measured_shares`` counts the share that a campaign
    which ran its invocations as these plans split them measured in wall time
    (:func:`regbench.optimize.plans.measured_split`): what the model leaves out (each
    invocation's start, where the tool does not say its timing) is in it.
    """
    measured_shares = measured_shares or {}
    seconds = [0.0, 0.0]
    full = 0.0
    lower = False
    notes: list[str] = []
    untimed_own: list[str] = []
    tools: set[tuple[str, str, str]] = set()
    priced = 0
    for plan, found, fixed in derived:
        priced += fixed > 0
        parsed = SeriesName.parse(plan.benchmark)
        if parsed.reported is not None:
            tools.add((parsed.benchmark, plan.config, plan.machine))
            continue
        if plan.full_seconds is None:
            untimed_own.append(plan.benchmark)
            continue
        share = (found.chosen.configuration.cost(found.warmup, fixed)
                 / found.full.configuration.cost(found.warmup, fixed))
        full += plan.full_seconds
        for k in (0, 1):
            seconds[k] += plan.full_seconds * share
    if untimed_own:
        lower = True
        notes.append(f"not counted: {', '.join(untimed_own[:3])}{', ...' if len(untimed_own) > 3 else ''} "
                     "(the durations of the runs are not stored)")
    for key in sorted(tools):
        spec_name, cfg, mach = key
        mine = [p for p in current if p.config == cfg and p.machine == mach
                and SeriesName.parse(p.benchmark).benchmark == spec_name and SeriesName.parse(p.benchmark).reported]
        measured_full = full_seconds.get(key)
        cost = costs.get(key)
        groups = layouts.get(key)
        if not mine or measured_full is None or cost is None or not groups:
            lower = True
            notes.append(f"not counted: {spec_name} (its invocations' durations are not stored)")
            continue
        if key in measured_shares:
            full += measured_full
            seconds[0] += measured_full * measured_shares[key]
            seconds[1] += measured_full * measured_shares[key]
            continue
        reported = sorted({n for g in groups for n in g.reported})
        warmup = max(p.warmup for p in mine)
        whole = [Group(max(p.full_runs for p in mine), max(p.full_iterations for p in mine), tuple(reported))]
        measured = cost.start is not None
        bounds = cost.start.bounds() if cost.start is not None else [(0.0, 0.0)]
        shares = [layout_seconds(groups, cost, warmup=warmup, per_invocation=h, per_process=f, measured=measured)
                  / layout_seconds(whole, cost, warmup=warmup, per_invocation=h, per_process=f, measured=measured)
                  for h, f in bounds]
        low, high = min(shares), max(shares)
        full += measured_full
        seconds[0] += measured_full * low
        seconds[1] += measured_full * high
        if not measured:
            lower = True
            extra = len(groups) - 1
            notes.append(f"priced at its iterations alone: {cost.missing}; its share is a lower bound"
                         + (f", leaving out what starting the tool costs in each of the {extra} more invocation"
                            f"{'' if extra == 1 else 's'} a run the plans split it into (a process, pytest's "
                            "collection): the split may cost more than it saves; a campaign with the plans "
                            "measures it, and `regbench optimize --refresh` then prices it as measured"
                            if extra > 0 else ""))
        elif high - low > 1e-9:
            notes.append(f"{spec_name}: {len(groups)} invocations a run under the plans; what starting one costs is "
                         f"not told apart from what each of its {cost.start.processes if cost.start else 0} processes "
                         "costs (every stored invocation ran all its benchmarks): the share is a range, narrowed by "
                         "`regbench optimize --refresh` after a campaign with the plans")
    if not full:
        return SuiteEstimate(float("nan"), float("nan"), lower, 0.0, 0.0, 0.0, priced, tuple(notes))
    return SuiteEstimate(seconds[0] / full, seconds[1] / full, lower, seconds[0], seconds[1], full, priced,
                         tuple(notes))
