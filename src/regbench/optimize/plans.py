"""``regbench optimize``: optimized plans from a stored full campaign, and their upkeep.

:func:`derive_plans` reads the ``ok`` runs of one campaign, per benchmark (a tool's reported
benchmarks each on their own, as ``SPEC/NAME``), configuration and machine, on one version (the
last of the campaign in history order unless told), runs Algorithm 1 of Japke et al. 2025
(:func:`regbench.optimize.algorithm.minimal_configuration`) and stores the plans
(:mod:`regbench.store.plans`).  A benchmark that has a current plan is left alone unless
``refresh`` is given or an alert was raised on it since its plan was made (its code changed, s.3.2
of the paper: plans "must be re-determined ... for those microbenchmarks affected by software
modifications").

:func:`plans_for_campaign` turns the current plans into the runs and iterations of each configured
benchmark for ``regbench run --plan optimized``; :func:`split_invocations` splits a tool's
invocation into one per plan when its command selects benchmarks with ``REGBENCH_SELECT``.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError, NotFoundError
from ..model import DEFAULT_CONFIG, SUPERSEDED, Alert, CampaignInfo, ExecutionPlan, RunInfo, SeriesName, StoredRun
from ..run.execute import FORKS_ENV, SELECT_ENV
from . import algorithm
from .costs import Group, SuiteEstimate, ToolCost, primary, suite_estimate, tool_costs
from .forks import UNSAID, ForkLayout, fork_layout, fork_samples, run_processes

if TYPE_CHECKING:
    from ..config import BenchmarkSpec

#: Defaults of ``regbench optimize`` (docs/optimize.md says how they were chosen): of the metrics
#: and thresholds evaluated on three suites (Go, Python, JMH) in three runs on this machine, the
#: one whose worst suite kept the most results within 3% of the full configuration (RCIW3 at 1%:
#: all of them, in all nine; RMAD at 1%, the default before, 67% on the JMH suite of a quiet run)
#: and never missed a change the full configuration found.  The paper found RCIW safer for JIT
#: runtimes too (Japke et al. 2025, RQ1).
DEFAULT_METRIC = "rciw3"
DEFAULT_THRESHOLD = 0.01
DEFAULT_MIN_RUNS = 2


@dataclass(frozen=True)
class OptimizeOptions:
    """How plans are derived (the options of ``regbench optimize``)."""

    metric: str = DEFAULT_METRIC
    threshold: float = DEFAULT_THRESHOLD
    min_runs: int = DEFAULT_MIN_RUNS
    n_resamples: int = 10_000
    seed: int = 0
    #: Price each run's fixed cost, measured from stored runs of two or more lengths
    #: (:func:`regbench.optimize.algorithm.run_overhead`); False prices iterations alone.
    run_cost: bool = True


@dataclass(frozen=True)
class DerivedPlan:
    """One benchmark's new plan, with Algorithm 1's full answer."""

    plan: ExecutionPlan
    minimal: algorithm.MinimalConfiguration


@dataclass(frozen=True)
class OptimizeResult:
    """What :func:`derive_plans` did.

    Attributes
    ----------
    campaign_id : int
        The full campaign the plans come from.
    parts : tuple of int
        The campaigns whose runs were used: ``campaign_id`` and those it resumed or that resumed
        it (:func:`campaign_parts`).
    derived : tuple of DerivedPlan
        Plans stored now.
    kept : tuple of ExecutionPlan
        Current plans left as they were (no ``refresh``, no change since).
    notes : tuple of str
        Benchmarks whose slices could not be used, and why; a tool's forks kept, and the
        benchmarks whose runs could not be split into their forks, and why; those whose campaign
        has fewer ok runs than ``min_runs`` (their plans keep them all).
    """

    campaign_id: int
    derived: tuple[DerivedPlan, ...]
    kept: tuple[ExecutionPlan, ...]
    #: Why a benchmark's stored slices were not used, or its runs not split into the tool's forks
    #: (one line each); which forks a tool's plans keep.
    notes: tuple[str, ...] = ()
    parts: tuple[int, ...] = ()
    #: The suite's time per version under the plans (:func:`regbench.optimize.costs.suite_estimate`):
    #: a tool's invocations as ``run --plan optimized`` will make them, with what starting them
    #: costs; None when no plan was derived.
    suite: SuiteEstimate | None = None
    #: By the index of a plan in ``kept``, the forks of each of its runs where they are several
    #: (:func:`plan_forks`); a derived plan's are its configuration's.
    kept_forks: Mapping[int, int] = dataclasses.field(default_factory=dict)
    #: The options the plans were derived with; ``kept`` plans may have been derived with another
    #: metric or threshold (their own ``metric`` and ``threshold`` say), which ``refresh`` replaces.
    options: OptimizeOptions = OptimizeOptions()
    #: Benchmarks whose change was detected at a later version than the campaign measured them
    #: at: no plan derived from it (their stored plan, if any, is not run).
    stale: tuple[StalePlan, ...] = ()

    @property
    def time_share(self) -> float:
        """Cost of the derived plans over that of the full configuration (NaN if none): iterations,
        warm-up and each run's fixed cost where it was measured (in iterations)."""
        full = sum(d.minimal.full.cost for d in self.derived)
        return sum(d.minimal.chosen.cost for d in self.derived) / full if full else float("nan")


#: What a campaign's plan holds that decides which trials it runs: two campaigns on one machine
#: that agree on all of it are one campaign, the later resuming the earlier (``regbench run``
#: skips every trial already stored for the configuration and machine, whichever campaign stored
#: it; :mod:`regbench.run.campaign`).  The seed, the command line and the noise facts measured at
#: the start may differ between the parts.
RESUME_KEYS = ("schedule", "config", "versions", "benchmarks", "optimized", "split")


def campaign_parts(campaigns: Sequence[CampaignInfo], campaign_id: int) -> tuple[int, ...]:
    """The campaigns whose runs make up campaign ``campaign_id``: itself, and the campaigns on its
    machine with the same plan (:data:`RESUME_KEYS`), one of them resuming the other.

    A campaign interrupted (Ctrl-C, a lost lease) and run again is two stored campaigns, the
    second holding only the trials the first had not stored; merging them here, rather than
    making the run append to the interrupted campaign, leaves every stored campaign as it was
    recorded (its seed, its times, its status) and makes ``optimize`` see every run of the plan,
    as a user who resumed it expects.
    """
    chosen = next((c for c in campaigns if c.id == campaign_id), None)
    if chosen is None or chosen.plan is None:
        return (campaign_id,)
    key = _resume_key(chosen)
    return tuple(sorted({campaign_id} | {c.id for c in campaigns if c.machine == chosen.machine
                                           and c.plan is not None and _resume_key(c) == key}))


def _resume_key(c: CampaignInfo) -> tuple:
    plan = c.plan or {}
    return tuple(repr(plan.get(k)) for k in RESUME_KEYS)


@dataclass(frozen=True)
class StalePlan:
    """A benchmark whose change was detected at a later version than the one its plan comes from.

    Japke et al. 2025 (s.3.2) re-derive a plan after its benchmark's code changes; a plan derived
    from a campaign that measured the code before the change (the last full campaign, when no
    full campaign has run since) is the old code's plan again.  So a plan is derived only from a
    full campaign that measured the version of the benchmark's latest change or a later one
    (:func:`derive_plans`), and a plan older than its benchmark's change is not run
    (``run --plan optimized`` runs the benchmark at its full configuration, :func:`plans_for_campaign`).

    A plan is stale too when its benchmark was **edited** (its definition changed,
    :func:`regbench.run.definitions.changed_definitions`) since the campaign it was derived from: the
    runs it came from are superseded (or are about to be, by the campaign that first runs the new
    definition), and they measured something else.  Such a plan is not run either, and is derived
    again from a campaign that ran the new definition at its full configuration.

    Attributes
    ----------
    benchmark, config, machine : str
        The series (a tool's as ``SPEC/REPORTED``).
    changed : str or None
        The version its latest change was detected at (the alert's first version to show it);
        None for an edited benchmark's plan.
    alert_id : int or None
        The alert of that change; None for an edited benchmark's plan.
    measured : str
        The version its plan was (or would be) derived from, earlier in history than ``changed``.
    edited : int or None
        For an edited benchmark's plan, the campaign it was (or would be) derived from, whose runs
        of it measure the old definition.
    """

    benchmark: str
    config: str
    machine: str
    changed: str | None
    alert_id: int | None
    measured: str
    edited: int | None = None

    @property
    def spec(self) -> str:
        """The configured benchmark (``SPEC`` of ``SPEC/REPORTED``), for ``--benchmark``."""
        return SeriesName.parse(self.benchmark).benchmark


def latest_changes(store) -> tuple[dict[tuple[str, str, str], Alert], dict[str, int]]:
    """Per series ``(benchmark, config, machine)`` the alert of its latest change in history order
    (the first version showing it latest), on every machine that showed it; alerts triaged
    ``invalid`` (not a change) are left out.  With the versions' positions in history, by name."""
    from ..store.alerts import list_alerts

    order = {v.name: k for k, v in enumerate(store.versions())}
    out: dict[tuple[str, str, str], Alert] = {}
    for a in list_alerts(store):
        if a.status == "invalid":
            continue
        for machine, version in ((a.machine, a.version), *((e.machine, e.version) for e in a.also_on)):
            if version not in order:
                continue
            key = (a.benchmark, a.config, machine)
            have = out.get(key)
            if have is None or order[version] > order[_changed_on(have, machine)]:
                out[key] = a
    return out, order


def _changed_on(alert: Alert, machine: str) -> str:
    """The first version showing ``alert``'s change on ``machine``."""
    return next((e.version for e in alert.also_on if e.machine == machine), alert.version) \
        if machine != alert.machine else alert.version


def stale_plan(plan_key: tuple[str, str, str], version: str, changes: Mapping[tuple[str, str, str], Alert],
               order: Mapping[str, int]) -> StalePlan | None:
    """The :class:`StalePlan` of series ``plan_key`` measured at ``version`` when its latest change
    (:func:`latest_changes`) is at a later version in history; None otherwise."""
    alert = changes.get(plan_key)
    if alert is None or version not in order:
        return None
    changed = _changed_on(alert, plan_key[2])
    if order[version] >= order[changed]:
        return None
    return StalePlan(*plan_key, changed, alert.id, version)


def _spec_of(series: str) -> str:
    """The configured benchmark of a plan's series: ``SPEC`` of a tool's ``SPEC/REPORTED``, else the
    series itself (a benchmark's own name may hold ``:``; plans have no measure series)."""
    parsed = SeriesName.parse(series)
    return parsed.benchmark if parsed.reported else series


def edited_plan(plan: ExecutionPlan, runs: Sequence[RunInfo], campaigns: Sequence[CampaignInfo],
                edited_now: Mapping[str, tuple[int, ...]] | None = None) -> StalePlan | None:
    """The :class:`StalePlan` of ``plan`` when its benchmark was edited since the campaign it was
    derived from (:attr:`StalePlan.edited`); None otherwise.

    ``runs`` are the stored runs of the plan's series (any others are ignored): the plan is stale
    when those of its campaign at its version are superseded (none ok), as the campaign that
    first ran the new definition left them (:meth:`regbench.store.Store.supersede_runs`).
    ``edited_now`` names the benchmarks whose definition the campaign about to run changes (it
    supersedes their runs before it runs anything), each with the earlier campaigns whose runs it
    takes back (they ran the definition it has again, an edit reverted): a plan of one of those
    campaigns is current again, any other plan of the benchmark is stale.
    """
    parts = set(campaign_parts(campaigns, plan.campaign_id))
    spec = _spec_of(plan.benchmark)
    if edited_now is not None and spec in edited_now:
        gone = not parts & set(edited_now[spec])
    else:
        source = [r for r in runs if r.campaign_id in parts and r.version == plan.version
                  and r.benchmark == plan.benchmark and r.config == plan.config and r.machine == plan.machine]
        gone = any(r.status == SUPERSEDED for r in source) and not any(r.status == "ok" for r in source)
    return StalePlan(plan.benchmark, plan.config, plan.machine, None, None, plan.version,
                     edited=plan.campaign_id) if gone else None


def stale_plans(store, plans: Sequence[ExecutionPlan], *,
                edited_now: Mapping[str, tuple[int, ...]] | None = None) -> tuple[list[StalePlan], dict[str, int]]:
    """Those of ``plans`` that are stale, older than their benchmark's latest change
    (:func:`stale_plan`) or derived before it was edited (:func:`edited_plan`), with the versions'
    positions in history."""
    changes, order = latest_changes(store)
    campaigns = store.campaigns() if plans else []
    out = []
    for p in plans:
        st = stale_plan((p.benchmark, p.config, p.machine), p.version, changes, order)
        if st is None:
            st = edited_plan(p, store.runs(benchmark=p.benchmark, version=p.version), campaigns, edited_now)
        if st is not None:
            out.append(st)
    return out, order


def stale_line(stale: Sequence[StalePlan], order: Mapping[str, int], *, what: str,
               measured_at_change: bool = False) -> str:
    """One line naming the stale plans and the command that measures their benchmarks again:
    ``what`` says what was done with them (not derived again; run at their full configuration);
    ``order`` the versions' positions in history.  With ``measured_at_change`` (runs of a
    benchmark are stored at its changed version already, a campaign with plans' most likely),
    a full campaign of that version would only add runs to them: a later version is named.
    The plans of edited benchmarks (:attr:`StalePlan.edited`) are said in a sentence of their own
    (:func:`edited_line`)."""
    changed = [s for s in stale if s.edited is None]
    edited = [s for s in stale if s.edited is not None]
    said = [_changed_line(changed, order, what=what, measured_at_change=measured_at_change)] if changed else []
    if edited:
        said.append(edited_line(edited, what=what))
    return "; and ".join(said)


def edited_line(edited: Sequence[StalePlan], *, what: str) -> str:
    """One line naming the plans of edited benchmarks (``what``: what was done with them) and
    how they are derived again."""
    named = ", ".join(f"{s.benchmark} (its plan from campaign {s.edited}, which ran its old definition)"
                      for s in edited[:5]) + (", ..." if len(edited) > 5 else "")
    specs = " ".join(f"--benchmark {shlex.quote(n)}" for n in dict.fromkeys(s.spec for s in edited))
    one = len(edited) == 1
    return (f"{len(edited)} plan{'' if one else 's'} of {'an edited benchmark' if one else 'edited benchmarks'} "
            f"{what}: {named}; let the next `regbench run --plan optimized` run "
            f"{'it' if one else 'them'} at full configuration (or run a full campaign, `regbench run {specs}` "
            "without --plan), then `regbench optimize`")


def _changed_line(stale: Sequence[StalePlan], order: Mapping[str, int], *, what: str,
                  measured_at_change: bool = False) -> str:
    named = ", ".join(f"{s.benchmark} (change at {s.changed}, alert #{s.alert_id}; measured at {s.measured})"
                      for s in stale[:5]) + (", ..." if len(stale) > 5 else "")
    latest = max((s.changed for s in stale if s.changed is not None), key=lambda v: order.get(v, -1))
    specs = " ".join(f"--benchmark {shlex.quote(n)}" for n in dict.fromkeys(s.spec for s in stale))
    if measured_at_change:
        where = (f"a version after {latest} (its runs at {latest} are stored already: a full campaign of it would "
                 f"only add to them), as `regbench run --versions HEAD {specs}`")
    else:
        where = f"the changed version or a later one, `regbench run --versions {shlex.quote(latest)} {specs}`"
    return (f"{len(stale)} plan{'' if len(stale) == 1 else 's'} older than a change of "
            f"{'its' if len(stale) == 1 else 'their'} benchmark {what}: {named}; run a full campaign of {where} "
            "(without --plan) or let the next `regbench run --plan optimized` run it at its full configuration, "
            "then `regbench optimize`")


def full_campaign(store, campaign_id: int | None) -> int:
    """The campaign to optimize from: ``campaign_id`` (checked), or the last finished campaign that
    is neither a session (bisect, compare, confirm) nor itself run with optimized plans, and that
    stored runs (with the campaigns it resumed, :func:`campaign_parts`): a ``regbench run`` whose
    runs were all stored already is a campaign that stored none (a probe: `optimize` after it said
    "no benchmark to optimize in campaign 2")."""
    campaigns = store.campaigns()
    sessions = set(store.session_campaigns())
    stored = store.campaigns_with_runs()
    if campaign_id is not None:
        if not any(c.id == campaign_id for c in campaigns):
            raise NotFoundError(f"--campaign: no campaign {campaign_id} in the store")
        if campaign_id in sessions:
            # A bisection's or a comparison's runs are as many as its decision took, per version
            # it chose: no plan of a suite's runs (a probe: a bisect session gave a plan of 39 runs,
            # "resumed" by another bisection).
            what = next((c.command for c in campaigns if c.id == campaign_id), None) or "a session"
            raise ConfigError(f"--campaign: campaign {campaign_id} is a session ({what}), not a full campaign of "
                              "`regbench run`: its runs are those its decision needed; give a campaign of "
                              "`regbench run`")
        if not stored & set(campaign_parts(campaigns, campaign_id)):
            raise NotFoundError(f"--campaign: campaign {campaign_id} stored no run (those it was to make were "
                                "stored already, or it stopped before any)"
                                + _last_with_runs([c for c in campaigns if c.id not in sessions], stored))
        return campaign_id
    full = [c for c in campaigns if c.id not in sessions and c.status == "finished"
            and not (c.plan or {}).get("optimized")]
    if not full:
        raise NotFoundError("no finished full campaign in the store to optimize from; run `regbench run` first")
    with_runs = [c for c in full if stored & set(campaign_parts(campaigns, c.id))]
    if not with_runs:
        raise NotFoundError("no finished full campaign in the store stored a run to optimize from; run "
                            "`regbench run` first")
    return max(with_runs, key=lambda c: c.id).id


def _last_with_runs(campaigns: Sequence[CampaignInfo], stored: set[int]) -> str:
    """``; campaign N is the last that stored runs`` where there is one."""
    last = max((c.id for c in campaigns if c.id in stored), default=None)
    return "" if last is None else f"; campaign {last} is the last that stored runs"


def campaign_samples(runs: Sequence[StoredRun], *, benchmark: str, where: str = "the campaign",
                     hint: str = "") -> tuple[np.ndarray, int, float | None]:
    """The ``(runs, iterations)`` measured samples of one experiment's ok runs, cut to the shortest
    run; the warm-up per run (the most any run had); the seconds of all its runs (None if any is
    unknown).  A level recorded fewer than 3 times is a :class:`ConfigError` naming the benchmark
    and ``where`` (which campaign, at which version), with ``hint`` added to what to do."""
    ok = [r for r in runs if r.status == "ok"]
    measured = [np.asarray(r.samples[r.warmup:], dtype=float) for r in ok]
    n_iter = min((m.size for m in measured), default=0)
    if not ok:
        failed = len(runs)
        raise ConfigError(f"benchmark {benchmark!r}: {where} has no ok run ({failed} failed); at least "
                          f"{algorithm.MIN_LEVEL} ok runs of {algorithm.MIN_LEVEL} measured iterations are needed to "
                          f"optimize from it ({hint}fix it and run a full campaign, or leave the benchmark out "
                          "with --benchmark)")
    if len(ok) < algorithm.MIN_LEVEL or n_iter < algorithm.MIN_LEVEL:
        raise ConfigError(f"benchmark {benchmark!r}: {where} has {len(ok)} ok run{'' if len(ok) == 1 else 's'} "
                          f"of at least {n_iter} measured iterations; at least {algorithm.MIN_LEVEL} of each are "
                          f"needed to optimize from it ({hint}run a full campaign with more, or leave the "
                          "benchmark out with --benchmark)")
    durations = [r.duration for r in ok]
    seconds = None if any(d is None for d in durations) else float(sum(d for d in durations if d is not None))
    return np.stack([m[:n_iter] for m in measured]), max(r.warmup for r in ok), seconds


def campaign_slices(runs: Sequence[StoredRun], stored: Mapping[int, np.ndarray], *, iterations: int,
                    warmup: int) -> np.ndarray | None:
    """The ``(runs, warmup + iterations, N)`` slices of one experiment's ok runs (in the order of
    :func:`campaign_samples`), cut as its samples are; None unless every ok run has ``N`` > 1
    slices of one count and the same warm-up (then the duration of an iteration is not a level)."""
    return _slices_and_problem(runs, stored, iterations=iterations, warmup=warmup)[0]


def _slices_and_problem(runs: Sequence[StoredRun], stored: Mapping[int, np.ndarray], *, iterations: int,
                        warmup: int) -> tuple[np.ndarray | None, str | None]:
    """:func:`campaign_slices`, and why they cannot be used where some runs have slices (in
    words; None when no run has any, or when they can be)."""
    ok = [r for r in runs if r.status == "ok"]
    have = [stored.get(r.run_index) for r in ok]
    present = [h for h in have if h is not None]
    if not present:
        return None, None
    if len(present) < len(have):
        return None, (f"{len(have) - len(present)} of its {len(ok)} ok runs have no slices (`slices` changed "
                      "during the campaign?)")
    counts = sorted({h.shape[1] for h in present})
    if len(counts) > 1:
        return None, f"its runs were timed in {' and '.join(map(str, counts))} slices"
    if any(r.warmup != warmup for r in ok):
        return None, "its runs have different warm-ups"
    if counts[0] < 2 or any(h.shape[0] < warmup + iterations for h in present):
        return None, None
    sliced = np.stack([h[:warmup + iterations] for h in present])
    # What regbench's worker wrote was checked when the run was stored (run.execute.read_slices);
    # slices stored through the Python API were not, and the simulation reads iterations of the
    # full length from the samples and shorter ones from the slices: they must be one measurement.
    if not np.all(np.isfinite(sliced)):
        return None, "its slices are not all finite numbers"
    measured = np.stack([np.asarray(r.samples[warmup:warmup + iterations], dtype=float) for r in ok])
    if not algorithm.slices_are_samples(sliced, measured, warmup=warmup):
        return None, "its slices are not those of its samples (their mean is not the sample)"
    return sliced, None


#: Units whose samples are an iteration's time, so that an iteration costs in proportion to them.
_TIME_UNITS = frozenset({"s", "ms", "us", "ns"})


def iteration_costs(series) -> dict[str, float] | None:
    """What an iteration of each version of a series costs, relatively: the median of its
    measured samples where they are times (lower is better), its inverse where they are rates
    (higher is better); None for any other unit, where samples say nothing of an iteration's cost."""
    if series.direction == "lower" and series.unit not in _TIME_UNITS:
        return None
    costs = {}
    for info, runs in zip(series.versions, series.runs, strict=True):
        if not runs:
            continue
        level = float(np.median(np.concatenate(runs)))
        if not (np.isfinite(level) and level > 0):
            return None
        costs[info.name] = level if series.direction == "lower" else 1.0 / level
    return costs


def experiment_overhead(store, runs: Sequence[RunInfo], *, version: str, campaigns=None) -> float:
    """The fixed cost of a run of one experiment, in iterations of ``version``, from its stored
    ok runs of every campaign (:func:`regbench.optimize.algorithm.run_overhead`; 0 unless they
    have two lengths or more).

    Runs of different lengths are usually of different versions (the full campaign's of the old
    ones, a campaign with plans' of the new ones), and a new version may have changed what an
    iteration costs: a version twice as fast an iteration, with runs of 4 against the old ones'
    11, would read as a fixed cost of 106 iterations where it is 39.  So each run's iterations
    are weighed by its version's cost of an iteration (:func:`iteration_costs`) before the line
    is fitted; where the samples are not times or rates, only runs of one version are compared.
    A run of a campaign whose plan shortened its iterations to ``d`` of ``N`` slices counts its
    measured iterations at ``d / N`` of their number (:func:`run_lengths`; ``campaigns``: the
    store's, if the caller has read them already).
    """
    timed = [r for r in runs if r.status == "ok" and r.duration is not None]
    lengths = run_lengths(store, timed, campaigns=campaigns)
    if len(set(lengths)) < 2:
        return 0.0
    n = np.array(lengths, dtype=float)
    seconds = np.array([r.duration for r in timed], dtype=float)
    versions = [r.version for r in timed]
    first = timed[0]
    loaded = store.load_series(first.benchmark, config=first.config, machine=first.machine,
                               versions=set(versions) | {version})
    costs = iteration_costs(loaded[0]) if loaded else None
    if costs is None or version not in costs or not all(v in costs for v in versions):
        return algorithm.run_overhead(n, seconds, versions)
    weighed = n * np.array([costs[v] for v in versions])
    return algorithm.run_overhead(weighed, seconds) / costs[version]


def run_lengths(store, runs: Sequence[RunInfo], *, campaigns=None) -> list[float]:
    """Each run's length in iterations of the full campaign's duration: its stored samples, the
    measured ones counted at ``d / N`` where its campaign ran the benchmark's plan with
    iterations of ``d`` of the full campaign's ``N`` slices (``plan["optimized"]``, warm-up at
    full length), so that a run of short iterations is not taken for a short run; at full
    length where the campaign had the plan but did not shorten the iterations by it
    (:func:`_planned_duration`)."""
    duration: dict[tuple[int, str], float] = {}
    wanted = {r.campaign_id for r in runs if r.campaign_id is not None}
    if wanted:
        by_id = {c.id: c for c in (store.campaigns() if campaigns is None else campaigns)}
        for cid in wanted:
            plan = (by_id[cid].plan or {}) if cid in by_id else {}
            for bench, p in (plan.get("optimized") or {}).items():
                if isinstance(p, dict) and p.get("slices") and p.get("full_slices"):
                    duration[(cid, bench)] = _planned_duration(bench, p, plan, by_id)
    out = []
    for r in runs:
        share = duration.get((r.campaign_id, r.benchmark), 1.0) if r.campaign_id is not None else 1.0
        out.append(r.warmup + (r.n_samples - r.warmup) * share)
    return out


def _planned_duration(bench: str, planned: Mapping, plan: Mapping, campaigns: Mapping[int, CampaignInfo]) -> float:
    """How long the iterations of ``bench`` lasted in a campaign run with its plan of ``d`` of
    ``N`` slices (``planned``, from the campaign's ``plan["optimized"]``), as a share of the full
    campaign's.  The campaign records the plan whether or not :func:`planned_spec` shortened the
    iterations by it (not when ``slices`` was configured otherwise since, nor with ``warmup =
    "auto"``): what it ran is its ``plan["benchmarks"]`` entry, a Python benchmark timed as
    ``d`` slices, its iterations as long as its ``min_time`` against the full campaign's."""
    share = float(planned["slices"]) / float(planned["full_slices"])
    ran = plan.get("benchmarks")
    ran = ran.get(bench) if isinstance(ran, dict) else None
    if not isinstance(ran, dict):
        return share  # what ran is not recorded: the plan's length
    if ran.get("kind") != "python" or ran.get("slices") != planned["slices"] or ran.get("warmup") == "auto":
        return 1.0  # the plan's shorter iterations were not run: as long as configured
    source = campaigns.get(planned["campaign"]) if isinstance(planned.get("campaign"), int) else None
    full = source.benchmark_plans.get(bench) if source is not None else None
    now, then = _min_time(ran), _min_time(full)
    if now is not None and then is not None:
        # An iteration lasts about its min_time: d / N of the full campaign's where the plan
        # shortened it, as long where `slices` was set to d since (then not shortened).
        return now / then
    return share


def _min_time(entry: object) -> float | None:
    """The ``min_time`` of a campaign's ``plan["benchmarks"]`` entry, if it is a positive number."""
    value = entry.get("min_time") if isinstance(entry, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf"):
        return float(value)
    return None


def derive_plans(store, *, campaign_id: int | None = None, benchmarks: Sequence[str] | None = None,
                 version: str | None = None, options: OptimizeOptions = OptimizeOptions(),
                 refresh: bool = False, specs: Sequence[BenchmarkSpec] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> OptimizeResult:
    """Derive and store the optimized plan of every benchmark of a full campaign.

    ``progress(done, total)`` is called before each of the campaign's series and at the end
    (``regbench optimize`` draws a progress bar with it on a terminal).

    A tool benchmark's series are priced with what the tool said of their runs and the measured
    start of its invocations (:mod:`regbench.optimize.costs`); ``specs`` (regbench.toml's
    benchmarks) say how ``run --plan optimized`` will invoke it, for the suite's time under the
    plans (:attr:`OptimizeResult.suite`).

    Raises
    ------
    ConfigError
        A bad metric or threshold, or a benchmark with fewer than 3 runs or iterations.
    NotFoundError
        No such campaign or version, or a named benchmark that the campaign did not run.
    """
    from ..store.alerts import list_alerts
    from ..store.plans import NewPlan, load_plans, save_plans

    try:
        algorithm.check_options(options.metric, options.threshold)
    except ValueError as exc:
        raise ConfigError(str(exc).replace("`metric`", "--metric").replace("`threshold`", "--threshold")) from None
    if options.min_runs < 1:
        raise ConfigError(f"--min-runs must be a positive integer, got {options.min_runs}")
    cid = full_campaign(store, campaign_id)
    if version is not None:  # named as show, summary and compare take it (a unique prefix, a git revision)
        version = store.resolve_version(version)
    campaigns = store.campaigns()
    sessions = set(store.session_campaigns())
    parts = set(campaign_parts(campaigns, cid))
    all_runs = store.runs()
    infos = [r for r in all_runs if r.campaign_id in parts]
    order = {v.name: k for k, v in enumerate(store.versions())}
    experiments: dict[tuple[str, str, str], set[str]] = {}
    for r in infos:
        experiments.setdefault((r.benchmark, r.config, r.machine), set()).add(r.version)
    if benchmarks is not None and specs is not None:
        gone = [b for b in benchmarks if SeriesName.parse(b).benchmark not in {s.name for s in specs}]
        if gone:
            raise NotFoundError(f"--benchmark {gone[0]!r}: no such benchmark in regbench.toml (any more); a plan of "
                                "it would make `run --plan optimized` refuse to run")
    if benchmarks is not None:
        missing = [b for b in benchmarks if not any(e[0] == b or SeriesName.parse(e[0]).benchmark == b
                                                    for e in experiments)]
        if missing:
            raise NotFoundError(f"--benchmark {missing[0]!r}: campaign {cid} did not run it")
        experiments = {e: v for e, v in experiments.items()
                       if e[0] in benchmarks or SeriesName.parse(e[0]).benchmark in benchmarks}
    # Without --benchmark, only what regbench.toml configures now: a plan of a benchmark removed
    # from it makes `run --plan optimized` refuse to run, and --forget would not hold (the old
    # full campaign would give it a plan again at the next `optimize`).
    unconfigured: list[str] = []
    if specs is not None and benchmarks is None:
        configured = {s.name for s in specs}
        unconfigured = sorted({SeriesName.parse(e[0]).benchmark for e in experiments} - configured)
        experiments = {e: v for e, v in experiments.items() if SeriesName.parse(e[0]).benchmark in configured}
    if version is not None and not any(version in v for v in experiments.values()):
        raise NotFoundError(f"--version {version!r}: campaign {cid} has no run of it")
    current = {(p.benchmark, p.config, p.machine): p for p in load_plans(store)}
    # Warm-ups found per run (`warmup = "auto"`): a plan run has no warm-up to keep at full length
    # before short iterations, so the duration is not reduced for them.
    source = next((c for c in campaigns if c.id == cid), None)
    auto_warmup = {name for name, b in (source.benchmark_plans if source else {}).items()
                   if b.get("warmup") == "auto"}
    every_run: dict[tuple[str, str, str], list[RunInfo]] = {}
    for r in all_runs:
        every_run.setdefault((r.benchmark, r.config, r.machine), []).append(r)
    changed = {(a.benchmark, a.config, a.machine): a.created_at for a in list_alerts(store)}
    changes, _ = latest_changes(store)
    stale: list[StalePlan] = []
    edited: list[StalePlan] = []  # benchmarks edited since the campaign ran them (edited_plan)
    later_campaigns: set[int] = set()  # full campaigns that did measure a stale benchmark's change
    tool_cost: dict[tuple[str, str, str], ToolCost] = {}
    tool_version: dict[tuple[str, str, str], str] = {}
    by_name = {s.name: s for s in specs} if specs is not None else None
    forks_kept: dict[str, set[int]] = {}
    fork_warmups: dict[str, set[int]] = {}
    rng = np.random.default_rng(options.seed)
    new: list[NewPlan] = []
    notes: list[str] = []
    minimal: list[algorithm.MinimalConfiguration] = []
    fixed_costs: list[float] = []
    kept: list[ExecutionPlan] = []
    few_runs: list[str] = []  # benchmarks whose campaign has fewer ok runs than min_runs
    not_asked: list[str] = []  # benchmarks whose runs did not repeat REGBENCH_ITERATIONS times
    # Benchmarks the campaign has too few repetitions of: the error, and what it has in words.
    too_few: list[tuple[ConfigError, str, str]] = []
    for done, ((bench, cfg, mach), versions) in enumerate(sorted(experiments.items())):
        if progress is not None:
            progress(done, len(experiments))
        if SeriesName.parse(bench).measure is not None:
            continue  # a measure (one sample per run) has no iterations to reduce
        have = current.get((bench, cfg, mach))
        if have is not None and not refresh and not (changed.get((bench, cfg, mach)) or have.created_at) > have.created_at \
                and stale_plan((bench, cfg, mach), have.version, changes, order) is None \
                and edited_plan(have, every_run.get((bench, cfg, mach), []), campaigns) is None:
            kept.append(have)
            continue
        ver = version if version is not None else max(versions, key=lambda v: order[v])
        if ver not in versions:
            continue
        src_id, src_parts = cid, parts
        source_runs = [r for r in every_run.get((bench, cfg, mach), []) if r.campaign_id in parts and r.version == ver]
        if any(r.status == SUPERSEDED for r in source_runs) and not any(r.status == "ok" for r in source_runs):
            # The benchmark was edited since the campaign ran it: its runs measure the old
            # definition.  Derived instead from the last campaign that ran the definition it has
            # now at its full configuration (a full one, or one with plans that ran it so because
            # its plan was stale), unless a campaign or version was asked for; else not derived.
            later = None
            if campaign_id is None and version is None and SeriesName.parse(bench).reported is None:
                later = _later_source(campaigns, sessions, every_run.get((bench, cfg, mach), []), bench,
                                      since=-1, order=order)
            if later is None:
                edited.append(StalePlan(bench, cfg, mach, None, None, ver, edited=cid))
                continue
            src_id, ver = later
            src_parts = set(campaign_parts(campaigns, src_id))
            notes.append(f"{bench}: derived from campaign {src_id} at version {ver}, which ran its definition as it "
                         f"is now; the runs of campaign {cid} measure the one before its edit (superseded)")
        outdated = stale_plan((bench, cfg, mach), ver, changes, order)
        if outdated is not None:
            # The campaign measured the code before the benchmark's change: a plan from it is the
            # old code's plan.  Derived instead from the last campaign that ran the benchmark at
            # its full configuration on the changed code (a full one, or one with plans that ran
            # it so for its stale plan) unless a campaign or version was asked for; else not
            # derived, and the plan stored (if any) stays and is not run.
            later = None
            if campaign_id is None and version is None and SeriesName.parse(bench).reported is None:
                later = _later_source(campaigns, sessions, every_run.get((bench, cfg, mach), []), bench,
                                      since=order[outdated.changed], order=order)
            if later is None:
                stale.append(outdated)
                later_campaigns |= {r.campaign_id for r in every_run.get((bench, cfg, mach), [])
                                    if r.status == "ok" and r.campaign_id is not None and r.campaign_id not in parts
                                    and order.get(r.version, -1) >= order[outdated.changed]}
                continue
            src_id, ver = later
            src_parts = set(campaign_parts(campaigns, src_id))
            notes.append(f"{bench}: derived from campaign {src_id} at version {ver}, which measured it after its "
                         f"change at {outdated.changed} (alert #{outdated.alert_id}); campaign {cid} measured it "
                         "before")
        runs = [r for r in store.raw_runs(bench, ver, config=cfg, machine=mach) if r.campaign_id in src_parts]
        if not any(r.status == "ok" for r in runs) and _tool_series_of(bench, cfg, mach, experiments):
            # A tool's invocations that failed as a whole are stored under its configured name, its
            # measurements under the series it reports, which get the plans.  Any other benchmark
            # without an ok run is refused below, named, as one with too few.
            continue
        where = (f"campaign {src_id}" + ("" if campaign_id is not None or src_id != cid else ", the last finished one,")
                 + f" at version {ver}")
        others = [c.id for c in campaigns if c.id != cid and c.status == "finished" and c.id not in sessions
                  and not (c.plan or {}).get("optimized") and c.id not in parts]
        hint = _other_campaigns_hint(others)
        parsed = SeriesName.parse(bench)
        tool = parsed.reported is not None
        try:
            samples, warmup, seconds = campaign_samples(runs, benchmark=bench, where=where, hint=hint)
        except ConfigError as exc:
            too_few.append((exc, bench, _shortfall(runs)))
            continue
        if too_few and not tool:
            continue  # refused all the same: only the sizes of the others are checked, to name them
        if samples.shape[0] < options.min_runs:
            few_runs.append(f"{bench}: {samples.shape[0]}")
        fork_level, run_part, fork_part = False, 0.0, 0.0
        if tool:
            layout = fork_layout(runs, run_processes(store, bench, version=ver, config=cfg, machine=mach))
            # The forks are a level of the plan where the command takes their number from regbench.
            fork_level = layout.forked and by_name is not None and parsed.benchmark in by_name \
                and uses_forks(by_name[parsed.benchmark])
            if layout.forked:
                try:
                    samples = forked_samples(runs, layout, benchmark=bench, where=where, hint=hint)
                except ConfigError as exc:
                    too_few.append((exc, bench, f"runs of {layout.processes} forks of {layout.iterations} measured "
                                         "iterations each"))
                    continue
                if not fork_level:
                    forks_kept.setdefault(parsed.benchmark, set()).add(layout.processes)
                if layout.warmup:
                    fork_warmups.setdefault(parsed.benchmark, set()).add(layout.warmup)
            elif layout.reason is not None and (layout.reason != UNSAID or _forking_tool(by_name, parsed.benchmark)):
                notes.append(f"{bench}: its runs were not split into the tool's processes, {layout.reason}: each "
                             "run's samples are reduced as one stream of iterations, and a plan's iterations "
                             "(REGBENCH_ITERATIONS) run in each process")
            if too_few:
                continue
            # A tool's run is one invocation shared by all it reports (and by a split group's
            # benchmarks): its seconds are not this benchmark's.  Priced from what the tool said
            # of it and the measured start of the invocations (costs.py), where measured.
            key = (parsed.benchmark, cfg, mach)
            if key not in tool_cost:
                tool_cost[key] = tool_costs(store, parsed.benchmark, config=cfg, machine=mach, version=ver, parts=parts,
                                            runs=all_runs)
                tool_version[key] = ver
            measured = tool_cost[key].fixed_iterations(parsed.reported or "") or 0.0
            if fork_level:
                run_part, fork_part = tool_cost[key].fork_fixed_iterations(parsed.reported or "") or (0.0, 0.0)
        else:
            measured = experiment_overhead(store, every_run.get((bench, cfg, mach), []), version=ver,
                                           campaigns=campaigns)
        ran_from = source if src_id == cid else next((c for c in campaigns if c.id == src_id), None)
        unasked = _unasked_counts(runs, ran_from.benchmark_plans.get(parsed.benchmark)
                                  if ran_from is not None else None,
                                  layout.processes if tool and layout.forked else 1)
        if unasked is not None:
            not_asked.append(f"{bench} ({unasked})")
        # --no-run-cost chooses by iterations alone; the suite's time is estimated with what a run
        # really costs all the same.
        overhead = measured if options.run_cost else 0.0
        fork_overhead = 0.0
        if fork_level and options.run_cost:
            overhead, fork_overhead = run_part, fork_part
        fixed_costs.append(measured)
        stored_slices = {} if tool else store.run_slices(bench, ver, config=cfg, machine=mach)
        sliced, why = _slices_and_problem(runs, stored_slices, iterations=samples.shape[-1], warmup=warmup)
        if stored_slices and bench in auto_warmup:
            sliced, why = None, 'its warm-up is found per run (`warmup = "auto"`)'
        if why:
            notes.append(f"{bench}: its slices were not used, {why}: runs and iterations reduced only")
        found = algorithm.minimal_configuration(samples, warmup=warmup, metric=options.metric,
                                                threshold=options.threshold, min_runs=options.min_runs,
                                                n_resamples=options.n_resamples, rng=rng, overhead=overhead,
                                                slices=sliced, fork_level=fork_level, fork_overhead=fork_overhead)
        c = found.chosen.configuration
        full_seconds = None if tool else seconds  # a tool's invocation is shared by its benchmarks
        new.append(NewPlan(bench, cfg, mach, src_id, ver, c.runs, c.iterations, warmup, samples.shape[0],
                           samples.shape[-1], options.metric, float(options.threshold), found.chosen.stability,
                           found.full.stability, found.stable,
                           None if full_seconds is None else full_seconds * found.time_share, full_seconds,
                           overhead, *((c.slices, c.full_slices) if sliced is not None else (None, None)),
                           *((c.forks, fork_overhead) if fork_level else (None, None))))
        minimal.append(found)
    if progress is not None:
        progress(len(experiments), len(experiments))
    if too_few:
        # All of them in one line, not the first alone: the next campaign is to fix them all.
        first, more = too_few[0][0], too_few[1:]
        if not more:
            raise first
        names = ", ".join(f"{name!r} ({what})" for _, name, what in more[:5])
        raise ConfigError(f"{first}; and too few of {len(more)} more benchmark{'' if len(more) == 1 else 's'}: "
                          f"{names}{', ...' if len(more) > 5 else ''}")
    if unconfigured:
        planned = sorted(name for name in unconfigured
                         if any(SeriesName.parse(p.benchmark).benchmark == name for p in current.values()))
        notes.append(f"{len(unconfigured)} benchmark{'' if len(unconfigured) == 1 else 's'} of the campaign "
                     f"left out, no longer in regbench.toml: {', '.join(unconfigured[:5])}"
                     + (", ..." if len(unconfigured) > 5 else "")
                     + (f" (`regbench optimize --forget {planned[0]}` deletes its stored plans"
                        + (f"; so for {', '.join(planned[1:])}" if planned[1:] else "") + ")" if planned else ""))
    if stale:
        full_ids = {c.id for c in campaigns if c.status == "finished" and c.id not in sessions
                    and not (c.plan or {}).get("optimized")}
        measured_later = sorted(later_campaigns & full_ids)
        at_change = any(r.version == st.changed and r.config == st.config and r.machine == st.machine
                        for st in stale for r in every_run.get((st.benchmark, st.config, st.machine), []))
        notes.append(stale_line(stale, order, what=f"not derived from campaign {cid}, which measured the code "
                                                    "before it", measured_at_change=at_change)
                     + (f" (or `regbench optimize --campaign {measured_later[-1]}`: that full campaign measured "
                        "the changed code)" if measured_later else ""))
    if edited:
        one = len(edited) == 1
        notes.append(edited_line(edited, what=f"not derived from campaign {cid}, whose runs of "
                                              f"{'it' if one else 'them'} measure the definition before "
                                              f"{'its' if one else 'their'} edit (superseded)"))
    if few_runs:
        # A floor, not a demand: a plan cannot have more runs than the campaign measured.
        one = len(few_runs) == 1
        notes.append(f"--min-runs {options.min_runs} is more than the campaign's ok runs of {len(few_runs)} "
                     f"benchmark{'' if one else 's'}: {'its plan keeps' if one else 'their plans keep'} all of "
                     f"them ({', '.join(few_runs[:5])}{', ...' if len(few_runs) > 5 else ''})")
    if not_asked:
        one = len(not_asked) == 1
        notes.append(f"{len(not_asked)} benchmark{'' if one else 's'} did not repeat as many times as "
                     f"REGBENCH_ITERATIONS asked in the campaign: {', '.join(not_asked[:5])}"
                     f"{', ...' if len(not_asked) > 5 else ''}; {'its plan is' if one else 'their plans are'} "
                     "derived and priced from what ran, but a run under a plan will not follow the plan's "
                     "iterations either (make the command repeat exactly REGBENCH_ITERATIONS times: for "
                     "pytest-benchmark, --benchmark-max-time=0; docs/configuration.md)")
    for spec_name, counts in sorted(forks_kept.items()):
        notes.append(f"{spec_name}: its runs' forks ({', '.join(map(str, sorted(counts)))} a run) are kept, as its "
                     f"command sets them (it does not read {FORKS_ENV}): its plans reduce its runs and the "
                     "iterations of each fork (REGBENCH_ITERATIONS, JMH's -i), and are priced at forks x iterations")
    for spec_name, warmups in sorted(fork_warmups.items()):
        w = max(warmups)
        notes.append(f"{spec_name}: warmup = {w} leaves out the first {w} samples of each fork in the simulation, "
                     "as REGBENCH_ITERATIONS gives every fork its warm-up, but a stored run marks the first fork's "
                     "alone: analyses count the other forks' as measured (set warmup = 0 and let the tool warm up, "
                     "JMH's -wi)")
    stored = save_plans(store, new)
    derived = tuple(DerivedPlan(p, m) for p, m in zip(stored, minimal, strict=True))
    suite = None
    if derived:
        now_current = load_plans(store)
        layouts: dict[tuple[str, str, str], list[Group]] = {}
        tool_seconds: dict[tuple[str, str, str], float | None] = {}
        measured_splits: dict[tuple[str, str, str], MeasuredSplit] = {}
        for key, ver in tool_version.items():
            spec_name, cfg, mach = key
            mine = [p for p in now_current if p.config == cfg and p.machine == mach
                    and SeriesName.parse(p.benchmark).benchmark == spec_name and SeriesName.parse(p.benchmark).reported]
            spec = None if by_name is None else by_name.get(spec_name)
            if mine:
                split = None
                if spec is not None and spec.format is not None:
                    split, found_split = decided_split(store, spec, mine, config=cfg, machine=mach,
                                                       campaigns=campaigns, runs=all_runs)
                    if found_split is not None:
                        measured_splits[key] = found_split
                layouts[key] = invocation_groups(spec, mine, split)
            tool_seconds[key] = invocation_seconds(all_runs, spec_name, config=cfg, machine=mach, version=ver,
                                                   parts=parts)
        suite = suite_estimate([(d.plan, d.minimal, o) for d, o in zip(derived, fixed_costs, strict=True)],
                               now_current, costs=tool_cost, full_seconds=tool_seconds, layouts=layouts,
                               measured_shares={k: m.ratio for k, m in measured_splits.items() if m.ratio < 1})
        for m in measured_splits.values():
            notes.append(m.line() + ("; `run --plan optimized` runs it as one invocation of the most runs and "
                                     "iterations, each invocation starting the tool again costing more than "
                                     "the split saves" if m.ratio >= 1 else "; the suite's time counts it as measured"))
        if specs is None and layouts:
            suite = dataclasses.replace(suite, notes=(
                *suite.notes, ("no regbench.toml found: a tool's invocations are counted as one for all its "
                               "benchmarks, as for a command that does not read REGBENCH_SELECT")))
    return OptimizeResult(cid, derived, tuple(kept), tuple(notes), tuple(sorted(parts)), suite,
                          plan_forks(store, kept), options, tuple(stale) + tuple(edited))


def _later_source(campaigns: Sequence[CampaignInfo], sessions: set[int], runs: Sequence[RunInfo], bench: str, *,
                  since: int, order: Mapping[str, int]) -> tuple[int, str] | None:
    """The campaign to derive the plan of ``bench`` (not a tool's) from after its change, at
    position ``since`` in history: the last finished campaign, not a session, that ran it at its
    full configuration (a full campaign, or one with plans that ran it so because its plan was
    stale, ``plan["stale"]``) with ok ``runs`` at that version or a later one; with the last such
    version.  None if there is none."""
    for c in sorted(campaigns, key=lambda c: -c.id):
        plan = c.plan or {}
        if c.status != "finished" or c.id in sessions or (plan.get("optimized") and bench not in (plan.get("stale") or {})):
            continue
        parts = set(campaign_parts(campaigns, c.id))
        later = {r.version for r in runs if r.campaign_id in parts and r.status == "ok"
                 and order.get(r.version, -1) >= since}
        if later:
            return c.id, max(later, key=lambda v: order[v])
    return None


def _unasked_counts(runs: Sequence[StoredRun], ran: object, processes: int) -> str | None:
    """Where the ok ``runs`` of a command or tool benchmark (of ``processes`` forks each) have
    other counts of samples than the ``warmup + iterations`` that ``REGBENCH_ITERATIONS`` asked
    of them (``ran``: the benchmark's entry in the campaign's ``plan["benchmarks"]``), those
    counts in words (``12,345-51,002 samples a run, 10 asked``); None where they match, for a
    Python benchmark (regbench's worker repeats as asked) and where it is not known."""
    if not isinstance(ran, dict) or ran.get("kind") != "command":
        return None
    warmup, iterations = ran.get("warmup"), ran.get("iterations")
    if not isinstance(warmup, int) or not isinstance(iterations, int) or isinstance(warmup, bool):
        return None  # warmup = "auto", or a campaign of an older regbench
    asked = (warmup + iterations) * processes
    counts = sorted({len(r.samples) for r in runs if r.status == "ok"})
    if not counts or counts == [asked]:
        return None
    shown = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
    each = "a run" if processes == 1 else f"a run of {processes} forks"
    return f"{shown} samples {each}, {asked:,} asked"


def _other_campaigns_hint(others: Sequence[int]) -> str:
    """What to do about too few repetitions in a campaign where the store holds other finished
    full campaigns (``others``, by id): the start of the error's parenthesis."""
    if not others:
        return ""
    if len(others) == 1:
        return f"`--campaign {others[0]}` optimizes from the other finished full campaign; "
    return f"`--campaign ID` optimizes from another finished full campaign ({', '.join(map(str, others))}); "


def _shortfall(runs: Sequence[StoredRun]) -> str:
    """The repetitions one experiment's runs have, in words: ``2 ok runs of 3 measured iterations``."""
    ok = [r for r in runs if r.status == "ok"]
    if not ok:
        return f"no ok run, {len(runs)} failed"
    n_iter = min(len(r.samples) - r.warmup for r in ok)
    return f"{len(ok)} ok run{'' if len(ok) == 1 else 's'} of {n_iter} measured iterations"


def _tool_series_of(bench: str, config: str, machine: str, experiments: Iterable[tuple[str, str, str]]) -> bool:
    """Whether ``bench`` is a tool benchmark's own series (the invocations that failed as a whole)
    beside series it reports (``bench/REPORTED``) on ``config`` and ``machine``."""
    return any(b != bench and c == config and m == machine and SeriesName.parse(b).benchmark == bench
               for b, c, m in experiments)


def plan_forks(store, plans: Sequence[ExecutionPlan]) -> dict[int, int]:
    """By the index of each plan in ``plans`` derived from runs split into a tool's forks
    (:func:`regbench.optimize.forks.fork_layout`), the forks of each of its runs, which its
    iterations and warm-up run in each of: read again from the stored runs of its full campaign
    at its version.  A plan derived before forks were counted (before 2026-11-30: its full
    iterations are those of a whole run) or from runs read as one stream is not in it."""
    out: dict[int, int] = {}
    campaigns = None
    for k, p in enumerate(plans):
        if SeriesName.parse(p.benchmark).reported is None:
            continue
        if campaigns is None:
            campaigns = store.campaigns()
        parts = set(campaign_parts(campaigns, p.campaign_id))
        runs = [r for r in store.runs(benchmark=p.benchmark, version=p.version)
                if r.campaign_id in parts and r.config == p.config and r.machine == p.machine]
        layout = fork_layout(runs, run_processes(store, p.benchmark, version=p.version, config=p.config,
                                                 machine=p.machine))
        if layout.forked and layout.iterations == p.full_iterations:
            out[k] = layout.processes
    return out


def _forking_tool(specs: Mapping[str, BenchmarkSpec] | None, name: str) -> bool:
    """Whether the configured tool benchmark ``name`` runs its benchmarks in processes of the
    tool's own (:attr:`regbench.adapters.base.Adapter.forks`); False when not known."""
    from ..adapters.base import get_adapter

    spec = specs.get(name) if specs is not None else None
    return spec is not None and spec.format is not None and get_adapter(spec.format).forks


def forked_samples(runs: Sequence[StoredRun], layout: ForkLayout, *, benchmark: str, where: str,
                   hint: str = "") -> np.ndarray:
    """The ``(runs, forks, iterations)`` measured samples of one experiment's ok runs split into
    the tool's forks (:func:`regbench.optimize.forks.fork_samples`); a :class:`ConfigError`, as
    :func:`campaign_samples`'s, when a fork has fewer than 3 measured iterations (the iteration
    level of a fork must have been recorded 3 times to be reduced)."""
    if layout.iterations < algorithm.MIN_LEVEL:
        raise ConfigError(f"benchmark {benchmark!r}: {where} has runs of {layout.processes} forks of "
                          f"{layout.iterations} measured iterations each; at least {algorithm.MIN_LEVEL} iterations "
                          f"a fork are needed to optimize from it ({hint}run a full campaign with more, "
                          "REGBENCH_ITERATIONS as JMH's -i, or leave the benchmark out with --benchmark)")
    return fork_samples(runs, layout)


def invocation_seconds(runs: Sequence[RunInfo], spec: str, *, config: str, machine: str, version: str,
                       parts: Iterable[int]) -> float | None:
    """The wall seconds of the tool benchmark ``spec``'s invocations at ``version`` in the campaigns
    ``parts`` (each invocation once, however many series it stored); None if one is not known."""
    parts = set(parts)
    seen: dict[int, float | None] = {}
    for r in runs:
        if (r.campaign_id in parts and r.version == version and r.config == config and r.machine == machine
                and (r.benchmark == spec or r.benchmark.startswith(spec + "/"))):
            seen.setdefault(r.run_index, r.duration)
    if not seen or any(d is None for d in seen.values()):
        return None
    return float(sum(d for d in seen.values() if d is not None))


def invocation_groups(spec: BenchmarkSpec | None, plans: Sequence[ExecutionPlan], split: Split | None = None
                      ) -> list[Group]:
    """The invocations ``run --plan optimized`` makes of the tool benchmark ``spec`` under its
    series' ``plans`` (``split``, default :func:`split_invocation`), each with the benchmarks it
    runs in processes of their own (primary series, by reported name): one per group, or one for
    all of the most runs and iterations.  Without ``spec`` (no regbench.toml), one for all."""
    from ..adapters.base import get_adapter

    reported = sorted({n for p in plans if (n := SeriesName.parse(p.benchmark).reported) is not None
                       and primary(n)})
    if split is None and spec is not None:
        split = split_invocation(spec, plans)
    if spec is None or split is None or not split.groups:
        floor = get_adapter(spec.format).min_iterations if spec is not None and spec.format else 1
        forks = plans_forks(plans) if spec is not None and uses_forks(spec) else None
        return [Group(max(p.runs for p in plans), max(max(p.iterations for p in plans), floor),
                      tuple(reported), forks)]
    adapter = get_adapter(spec.format or "")
    return [Group(g.runs, g.iterations, tuple(n for n in reported if adapter.selection_unit(n) in g.units), g.forks)
            for g in split.groups]


@dataclass(frozen=True)
class CampaignPlans:
    """What ``regbench run --plan optimized`` runs of each configured benchmark.

    Attributes
    ----------
    runs, iterations : Mapping[str, int]
        By configured benchmark name.  A tool's benchmark (``format = ...``) gets the most runs
        and iterations of the plans of its reported benchmarks: what one invocation for all of
        them runs, unless :func:`split_invocations` splits it into one invocation per plan.
    slices : Mapping[str, tuple[int, int]]
        The Python benchmarks whose plans shorten their iterations: ``(slices, full_slices)``
        (:meth:`regbench.model.ExecutionPlan.duration`; :func:`planned_spec`).
    plans : tuple of ExecutionPlan
        The plans used.
    unplanned : tuple of str
        Configured benchmarks without a plan: they run as configured.
    forks : Mapping[str, int]
        The tool benchmarks whose plans all set their forks (:attr:`ExecutionPlan.forks`): the
        most of them, which one invocation for all runs (``REGBENCH_FORKS``).
    stale : tuple of StalePlan
        Plans older than their benchmark's latest change (:func:`stale_plan`): not used; the
        benchmark runs at its full configuration (as configured), a tool's reported benchmark in
        the invocation of the benchmarks without a plan, or in one invocation of at least the
        configured runs and iterations.
    notes : tuple of str
        What to tell before the campaign (one line naming the stale plans).
    """

    runs: Mapping[str, int]
    iterations: Mapping[str, int]
    plans: tuple[ExecutionPlan, ...]
    unplanned: tuple[str, ...]
    slices: Mapping[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    forks: Mapping[str, int] = dataclasses.field(default_factory=dict)
    stale: tuple[StalePlan, ...] = ()
    notes: tuple[str, ...] = ()


def planned_spec(spec: BenchmarkSpec, plans: CampaignPlans) -> BenchmarkSpec:
    """``spec`` as ``run --plan optimized`` runs it: its plan's runs and iterations, and, where the
    plan shortens its iterations to ``d`` of the full campaign's ``N`` slices, ``min_time`` times
    ``d / N`` timed as ``d`` slices, so that the worker calibrates a slice as the full campaign did
    and each iteration is the ``d`` consecutive slices that the plan's simulation kept
    (:func:`regbench.optimize.algorithm.simulated`); its warm-up iterations stay ``N`` slices long.
    A tool benchmark whose plans set its forks, and whose command reads them, gets them in
    ``REGBENCH_FORKS``.
    Not when the benchmark's configured ``slices`` is no longer the plan's ``N``, nor with
    ``warmup = "auto"``, nor with fewer warm-up iterations than the plan was derived with: its
    iterations then last as configured."""
    if spec.name not in plans.runs:
        return spec
    iterations, runs = plans.iterations[spec.name], plans.runs[spec.name]
    if spec.format is not None:  # never fewer repetitions than the tool accepts
        from ..adapters.base import get_adapter

        iterations = max(iterations, get_adapter(spec.format).min_iterations)
    # A reported benchmark whose plan is stale runs at its full configuration: one invocation for
    # all runs at least that (the split groups it with the benchmarks without a plan).
    full = any(st.spec == spec.name for st in plans.stale)
    if full:
        iterations, runs = max(iterations, spec.iterations), max(runs, spec.runs)
    out = dataclasses.replace(spec, iterations=iterations, runs=runs, plan="fixed", planned=True)
    if spec.name in plans.forks and uses_forks(spec) and not full:
        out = dataclasses.replace(out, env={**spec.env, FORKS_ENV: str(plans.forks[spec.name])})
    warmed = max((p.warmup for p in plans.plans if p.benchmark == spec.name), default=0)
    if spec.name in plans.slices and shortening_refused(spec, full_slices=plans.slices[spec.name][1],
                                                        warmup=warmed) is None:
        d, n = plans.slices[spec.name]
        out = dataclasses.replace(out, min_time=spec.min_time * d / n, slices=d, warmup_slices=n)
    return out


def shortening_refused(spec: BenchmarkSpec, *, full_slices: int, warmup: int) -> str | None:
    """Why a plan that shortens the iterations of ``spec`` to some of ``full_slices`` slices (derived
    with ``warmup`` warm-up iterations) cannot do so as the benchmark is configured now, or None
    when it can (what :func:`planned_spec` runs and ``regbench show --plans`` says).

    Only while the benchmark is configured with the slices the plan was derived from: a plan of 1
    of 5 slices says nothing of an iteration configured since as one slice (or with a warm-up found
    per run); then its iterations run at full length (more precise). Nor with less warm-up than the
    plan's simulation kept before its short iterations: they would measure the slow start that it
    left out.
    """
    if spec.kind != "python":
        return "not a Python benchmark"
    if spec.warmup_auto:
        return 'warmup = "auto"'
    if spec.slices != full_slices:
        return f"slices = {spec.slices} now, {full_slices} when derived"
    if spec.warmup < warmup:
        return f"warmup = {spec.warmup} now, {warmup} when derived"
    return None


def plans_for_campaign(store, spec_names: Sequence[str], *, configured: Sequence[str] | None = None,
                       config: str = DEFAULT_CONFIG, machine: str | None = None,
                       edited: Callable[[], Mapping[str, tuple[int, ...]]] | None = None) -> CampaignPlans:
    """The current plans of the benchmarks ``spec_names`` (those to run) on this configuration and
    machine; ``configured`` (default: ``spec_names``) are all benchmarks of regbench.toml.
    ``edited`` gives the benchmarks whose definition the campaign changes (:func:`edited_plan`),
    asked once plans are found (a store without them is refused as it is).

    Raises
    ------
    ConfigError
        A stored plan names a benchmark that is no longer configured (one line naming it), or
        there is no plan at all.
    """
    from ..store.plans import count_plans_unopened, load_plans

    # Counted before the store is opened (a lazy one): an older store holding no plan of this
    # configuration and machine is refused as it is, not upgraded first.  (A database that is no
    # store of this regbench's, none at all or a newer one, is refused as such when it is opened.)
    plans = [] if count_plans_unopened(store, config=config, machine=machine) == 0 else [
        p for p in load_plans(store, config=config) if machine is None or p.machine == machine]
    if not plans:
        raise ConfigError(f"--plan optimized: no optimized plan is stored for configuration {config!r}"
                          + (f" on machine {machine!r}" if machine else "") + "; run `regbench optimize` first")
    names = set(spec_names)
    known = set(configured) if configured is not None else names
    runs: dict[str, int] = {}
    iterations: dict[str, int] = {}
    slices: dict[str, tuple[int, int]] = {}
    forks: dict[str, int | None] = {}
    used: list[ExecutionPlan] = []
    asked = []
    for p in plans:
        spec = _spec_of(p.benchmark)
        if spec not in known:
            raise ConfigError(f"plan of benchmark {p.benchmark!r}: no such benchmark in regbench.toml any more "
                              f"(`regbench optimize --forget {spec}` removes its plans)")
        if spec in names:
            asked.append(p)
    stale, order = stale_plans(store, asked, edited_now=edited() if edited is not None else None)
    outdated_keys = {(st.benchmark, st.config, st.machine) for st in stale}
    for p in asked:
        spec = _spec_of(p.benchmark)
        if (p.benchmark, p.config, p.machine) in outdated_keys:
            continue
        runs[spec] = max(runs.get(spec, 0), p.runs)
        iterations[spec] = max(iterations.get(spec, 0), p.iterations)
        # One plan of the tool's that keeps the command's forks keeps them for one invocation of all.
        forks[spec] = _most_forks(forks.get(spec, 0), p.forks)
        if p.slices and p.full_slices and p.slices < p.full_slices and spec == p.benchmark:
            slices[spec] = (p.slices, p.full_slices)
        used.append(p)
    # A tool whose every plan is stale runs as configured (unplanned); one with some plans left
    # runs them, and its stale reported benchmarks at their full configuration (planned_spec).
    notes = (stale_line(stale, order, what="run at its full configuration" if len(stale) == 1
                        else "run at their full configuration"),) if stale else ()
    return CampaignPlans(runs, iterations, tuple(used), tuple(n for n in spec_names if n not in runs), slices,
                         {name: f for name, f in forks.items() if f is not None}, tuple(stale), notes)


@dataclass(frozen=True)
class SplitGroup:
    """One invocation of a tool's benchmark under ``run --plan optimized``: the benchmarks of
    one plan, run on their own.

    Attributes
    ----------
    label : str
        ``SPEC[k]`` (k from 1): what the campaign schedules and reports it as.  Its runs are
        stored as every invocation's are: the series ``SPEC/REPORTED``, a failed invocation
        under ``SPEC``, at run indexes no other group of the version uses.
    runs, iterations : int
        Its plan: the most runs and iterations of the plans of what it selects (the configured
        ones for a benchmark without a plan).
    units : tuple of str
        What the tool's filter selects (:meth:`regbench.adapters.base.Adapter.selection_unit`).
    reported : tuple of str
        The reported benchmarks (``REPORTED`` of ``SPEC/REPORTED``) known to belong to it.
    select : str
        ``REGBENCH_SELECT``: ``units`` in the tool's filter syntax.
    planned : bool
        False for the group of benchmarks without a plan (run as configured).
    forks : int or None
        ``REGBENCH_FORKS``: the most forks of its plans, where they all set them (None: the
        command's own).
    """

    label: str
    runs: int
    iterations: int
    units: tuple[str, ...]
    reported: tuple[str, ...]
    select: str
    planned: bool = True
    forks: int | None = None

    def to_json(self) -> dict:
        return {"label": self.label, "runs": self.runs, "iterations": self.iterations, "select": self.select,
                "units": list(self.units), "benchmarks": list(self.reported), "planned": self.planned,
                **({"forks": self.forks} if self.forks is not None else {})}


@dataclass(frozen=True)
class Split:
    """How ``run --plan optimized`` runs one tool's benchmark: ``groups`` (two or more
    invocations per run), or one invocation as before and the ``reason``."""

    benchmark: str
    groups: tuple[SplitGroup, ...] = ()
    reason: str | None = None

    def to_json(self) -> dict:
        return {"groups": [g.to_json() for g in self.groups]} if self.groups else {"reason": self.reason}


def uses_forks(spec: BenchmarkSpec) -> bool:
    """Whether the tool benchmark's command reads :data:`FORKS_ENV` (the user's consent to have
    plans set the tool's forks): an argument mentions it (``-f "${REGBENCH_FORKS:-5}"``)."""
    return spec.format is not None and any(FORKS_ENV in a for a in spec.command)


def uses_selection(spec: BenchmarkSpec) -> bool:
    """Whether the benchmark's command reads :data:`SELECT_ENV` (the user's consent to split it):
    an argument mentions it (``["sh", "-c", "go test -bench \"${REGBENCH_SELECT:-.}\" ..."]``)."""
    return any(SELECT_ENV in a for a in spec.command)


def split_invocation(spec: BenchmarkSpec, plans: Sequence[ExecutionPlan], known: Iterable[str] = ()) -> Split:
    """The invocations of the tool benchmark ``spec`` under its reported benchmarks' ``plans``.

    ``known`` are reported benchmarks (``REPORTED`` of ``SPEC/REPORTED``) without a plan that
    should run too: they run as configured (``spec.runs`` x ``spec.iterations``).  Reported
    benchmarks the tool selects together (Go's sub-benchmarks and metrics of one function, the
    parameters of a JMH method) share the most runs and iterations of their plans; the units
    with equal plans make one group.  Not split (``reason`` given, one invocation of the most
    runs and iterations, as before): a command that does not mention ``REGBENCH_SELECT``, a
    format without a filter, a benchmark the filter cannot name, or a single plan for all.
    """
    from ..adapters.base import get_adapter

    if spec.format is None:
        return Split(spec.name, reason="not a tool's benchmark")
    if not uses_selection(spec):
        return Split(spec.name, reason=f"its command does not use {SELECT_ENV}")
    adapter = get_adapter(spec.format)
    if not adapter.selection:
        return Split(spec.name, reason=f"{spec.format} has no filter to run some of its benchmarks")
    # reported -> (runs, iterations, forks); forks None: the command's own, which a plan that
    # keeps them (or a benchmark without a plan) asks of the invocation it is in.
    levels: dict[str, tuple[int, int, int | None]] = {}
    reads_forks = uses_forks(spec)
    for p in plans:
        name = SeriesName.parse(p.benchmark).reported
        if name is not None:
            r, i, f = levels.get(name, (0, 0, 0))
            levels[name] = (max(r, p.runs), max(i, p.iterations, adapter.min_iterations),
                            _most_forks(f, p.forks if reads_forks else None))
    configured: dict[str, tuple[int, int, int | None]] = {name: (spec.runs, spec.iterations, None)
                                                          for name in known if name not in levels}
    unit_of: dict[str, str] = {}
    for name in [*levels, *configured]:
        unit = adapter.selection_unit(name)
        if unit is None:
            return Split(spec.name, reason=f"{spec.format}'s filter cannot select {name!r}")
        unit_of[name] = unit
    by_unit: dict[str, tuple[int, int, int | None, bool]] = {}
    for name, unit in unit_of.items():
        r, i, f = levels.get(name) or configured[name]
        have = by_unit.get(unit, (0, 0, 0, True))
        by_unit[unit] = (max(have[0], r), max(have[1], i), _most_forks(have[2], f), have[3] and name in levels)
    # A unit with a benchmark without a plan runs as configured at least; units of equal runs and
    # iterations make one invocation, planned or not, with the most forks of its units (the
    # command's own where one keeps them): an invocation saved is a tool's start saved, and more
    # forks than planned only measure more.
    levels_of: dict[tuple[int, int], list[tuple[str, bool, int | None]]] = {}
    for unit, (r, i, f, planned) in by_unit.items():
        levels_of.setdefault((r, i), []).append((unit, planned, f))
    if len(levels_of) < 2:
        return Split(spec.name, reason="one plan for all its benchmarks")
    groups = []
    for k, ((r, i), members) in enumerate(sorted(levels_of.items(), key=lambda kv: (-kv[0][0], -kv[0][1])), 1):
        units = tuple(sorted(u for u, _, _ in members))
        reported = tuple(sorted(n for n, u in unit_of.items() if u in units))
        forks = _most_of(f for _, _, f in members)
        groups.append(SplitGroup(f"{spec.name}[{k}]", r, i, units, reported, adapter.render_selection(units),
                                 all(planned for _, planned, _ in members), forks))
    return Split(spec.name, tuple(groups))


def _most_forks(have: int | None, new: int | None) -> int | None:
    """The forks of one invocation running two plans' benchmarks: the most, or None (the
    command's own, the most there is) where either keeps the command's."""
    return None if have is None or new is None else max(have, new)


def _most_of(forks: Iterable[int | None]) -> int | None:
    """:func:`_most_forks` of them all (0 for none)."""
    out: int | None = 0
    for f in forks:
        out = _most_forks(out, f)
    return out


def plans_forks(plans: Sequence[ExecutionPlan]) -> int | None:
    """The forks one invocation of all ``plans``' benchmarks runs (:func:`_most_forks`)."""
    return _most_of(p.forks for p in plans)


@dataclass(frozen=True)
class MeasuredSplit:
    """What a split of a tool benchmark's invocation cost when a campaign ran it.

    Attributes
    ----------
    benchmark : str
        The configured tool benchmark.
    campaign_id : int
        The last finished campaign that ran exactly this split (the same groups).
    seconds : float
        Its invocations' wall seconds per version (the mean over its versions).
    full_campaign_id : int
        The full campaign the plans come from.
    full_seconds : float
        That campaign's invocations' wall seconds per version.
    groups : int
        Invocations a run under the split.
    versions : tuple of str
        The versions that campaign was asked to run (its ``plan["versions"]``).
    """

    benchmark: str
    campaign_id: int
    seconds: float
    full_campaign_id: int
    full_seconds: float
    groups: int
    versions: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        """The split's wall time over the full campaign's."""
        return self.seconds / self.full_seconds

    def line(self) -> str:
        """What was measured, in words."""
        return (f"{self.benchmark}: split into {self.groups} invocations a run, campaign {self.campaign_id} took "
                f"{self.ratio:.2f}x the wall time of full campaign {self.full_campaign_id} "
                f"({self.seconds:.3g} s a version against {self.full_seconds:.3g} s; measured)")


def measured_split(store, split: Split, plans: Sequence[ExecutionPlan], *, config: str, machine: str,
                   runs: Sequence[RunInfo] | None = None, campaigns: Sequence[CampaignInfo] | None = None
                   ) -> MeasuredSplit | None:
    """The wall time of the last finished campaign on ``config`` and ``machine`` that ran the split
    ``split`` of a tool benchmark (its ``plan["split"]`` the same groups) against that of the full
    campaign its ``plans`` come from; None where no such campaign, or a duration, is stored.

    Each invocation of a split pays the tool's start (a process, pytest's collection, a JVM) again,
    which a tool that does not say its timing leaves unpriced (:mod:`regbench.optimize.costs`):
    the campaign's wall time is then the only measure of what the split costs."""
    if not split.groups or not plans:
        return None
    campaigns = store.campaigns() if campaigns is None else campaigns
    wanted = split.to_json()
    ran = [c for c in campaigns if c.status == "finished" and c.machine == machine and c.plan is not None
           and c.plan.get("config") == config and (c.plan.get("split") or {}).get(split.benchmark) == wanted]
    if not ran:
        return None
    last = max(ran, key=lambda c: c.id)
    full_id = max(p.campaign_id for p in plans)
    runs = store.runs() if runs is None else runs

    def per_version(parts: set[int]) -> float | None:
        versions = {r.version for r in runs if r.campaign_id in parts
                    and (r.benchmark == split.benchmark or r.benchmark.startswith(split.benchmark + "/"))}
        seconds = [invocation_seconds(runs, split.benchmark, config=config, machine=machine, version=v, parts=parts)
                   for v in sorted(versions)]
        if not seconds or any(x is None for x in seconds):
            return None
        return float(np.mean([x for x in seconds if x is not None]))

    now = per_version(set(campaign_parts(campaigns, last.id)))
    full = per_version(set(campaign_parts(campaigns, full_id)))
    if now is None or full is None or not full > 0:
        return None
    return MeasuredSplit(split.benchmark, last.id, now, full_id, full, len(split.groups),
                         tuple(map(str, (last.plan or {}).get("versions") or ())))


def unsplit(split: Split, measured: MeasuredSplit) -> Split:
    """``split`` run as one invocation of the most runs and iterations, for the reason measured:
    split, its invocations took at least as long as the full campaign's one (each started the
    tool again), so one invocation at the largest plan, which runs no more than the full
    campaign's, costs less."""
    return Split(split.benchmark, reason=f"split by plan into {measured.groups} invocations a run, campaign "
                                         f"{measured.campaign_id} took {measured.ratio:.2f}x the wall time of full "
                                         f"campaign {measured.full_campaign_id} (each invocation starts the tool again)")


def split_invocations(store, specs: Sequence[BenchmarkSpec], plans: CampaignPlans, *, config: str,
                      machine: str, versions: Sequence[str] | None = None) -> dict[str, Split]:
    """:func:`split_invocation` of every tool benchmark among ``specs`` (as configured) that has
    plans; the reported benchmarks without a plan are those of the full campaigns the plans
    come from that ``optimize`` gave none (stored on ``config`` and ``machine``), and those whose
    plan is stale (run at their full configuration).  A split that a campaign measured at least
    as long as the full campaign is not made (:func:`decided_split`), unless this campaign, of
    ``versions``, resumes that one."""
    out: dict[str, Split] = {}
    stored = [b.name for b in store.benchmarks()]
    campaigns = store.campaigns()
    for spec in specs:
        mine = [p for p in plans.plans if SeriesName.parse(p.benchmark).benchmark == spec.name
                and SeriesName.parse(p.benchmark).reported is not None]
        if spec.format is None or not mine:
            continue
        out[spec.name] = decided_split(store, spec, mine, plans.stale, config=config, machine=machine,
                                       stored=stored, campaigns=campaigns, versions=versions)[0]
    return out


def decided_split(store, spec: BenchmarkSpec, mine: Sequence[ExecutionPlan], stale: Sequence[StalePlan] = (), *,
                  config: str, machine: str, stored: Sequence[str] | None = None,
                  campaigns: Sequence[CampaignInfo] | None = None, versions: Sequence[str] | None = None,
                  runs: Sequence[RunInfo] | None = None) -> tuple[Split, MeasuredSplit | None]:
    """How ``run --plan optimized`` invokes the tool benchmark ``spec`` under its series' plans
    ``mine``, and what a campaign measured of that split (:func:`measured_split`).

    Each invocation of a split pays the tool's start again; where a campaign that ran these
    very groups took as long as the full campaign or longer, the split costs more than it saves
    and is not made: one invocation of the most runs and iterations, which runs no more than
    the full campaign (:func:`unsplit`).  Except for a campaign of the same ``versions`` as
    that one, which resumes it (the same command run again): its stored runs were made split,
    and are counted so."""
    stored = [b.name for b in store.benchmarks()] if stored is None else stored
    campaigns = store.campaigns() if campaigns is None else campaigns
    sources = {part for p in mine for part in campaign_parts(campaigns, p.campaign_id)}
    planned = {p.benchmark for p in mine}
    # A stale plan's benchmark runs at its full configuration, with those without a plan.
    known = [r for st in stale if st.spec == spec.name and st.config == config and st.machine == machine
             and (r := SeriesName.parse(st.benchmark).reported) is not None]
    for name in stored:
        parsed = SeriesName.parse(name)
        if parsed.benchmark != spec.name or parsed.reported is None or name in planned:
            continue
        if parsed.reported not in known and any(r.campaign_id in sources and r.config == config
                                                and r.machine == machine for r in store.runs(benchmark=name)):
            known.append(parsed.reported)
    split = split_invocation(spec, mine, known)
    measured = measured_split(store, split, mine, config=config, machine=machine, campaigns=campaigns, runs=runs)
    if measured is not None and measured.ratio >= 1 and (versions is None or tuple(versions) != measured.versions):
        return unsplit(split, measured), measured
    return split, measured
