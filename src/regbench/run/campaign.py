"""A *campaign*: build every version, then run every trial in randomized interleaved order.

A trial is one run (one fresh process) of one benchmark on one version.  The trials are executed
in RMIT order (Randomized Multiple Interleaved Trials, seed 004 s.2 and fig. 1): round ``r``
holds the ``r``-th run of every experiment, shuffled, and rounds follow one another.  Every
experiment is thus spread evenly over the whole campaign, in a random position in each round, so
that drift of the machine (heat, a background job, caches) cannot masquerade as a difference
between versions.  The seed of the shuffle is recorded with the campaign: the order can be
reproduced (:func:`rmit_order`).

Every run is written to the store in its own transaction as soon as it ends (DESIGN.md "Data"),
so a campaign killed with ``kill -9`` loses at most the run in flight, and running the same
command again *resumes*: trials whose (benchmark, version, run index) is already stored for this
configuration and machine, whatever their status, are not run again.  With ``retry_failed``, an
experiment with fewer successful runs than planned gets new runs (under new run indices) for the
ones that failed: the failed runs stay stored, as history.

Failures are results (DESIGN.md "Principles"): a run that crashes, hangs or prints garbage is
stored with that status; a version that fails to build is recorded in the ``build`` table and its
trials are skipped; the campaign goes on.

Noise control (``[noise]``, seed 003 s.3) is checked before anything is written and recorded in
the campaign's plan (``plan["noise"]``), so that results carry how they were measured.  With
``ramdisk``, each version's tree is copied to a tmpfs once per campaign, after the builds and
before the first run (see :func:`run_campaign`).  A benchmark's ``measures`` are stored with
each run, in its transaction, as the series ``NAME:MEASURE`` (:func:`record_outcome`).

With optimized plans, a tool's benchmark whose command reads ``REGBENCH_SELECT`` is split into
one invocation per plan of what it reports (:func:`regbench.optimize.plans.split_invocation`):
each group is an experiment of its own (``NAME[k]``) for the schedule and for resuming
(:class:`RunSlots`), and its runs are stored under the benchmark, at run indexes the groups of a
version do not share.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import secrets
import shlex
import sys
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..config import BenchmarkSpec, NoiseControl, ProjectConfig
from ..errors import ConfigError
from ..model import DEFAULT_CONFIG, RUN_STATUSES, RunInfo, SeriesName
from . import noise as _noise
from .core import (Executor, PlannedVersion, ReadyVersion, RunContext, Trial, TrialReporter, TrialRunner,
                   Unfollowed, campaign_status, check_env_size, check_measure_units, default_cache_dir, instruction_counter_for,
                   plan_releases, plan_versions, prepare_version, record_versions, select_benchmarks, split_label,
                   store_dir, unfollowed_counts)
from .definitions import changed_definitions, definition, definition_history, supersede_changed
from .execute import FORKS_ENV, SELECT_ENV
from .executor import LocalExecutor
from .fingerprint import default_machine_name, machine_fingerprint
from .ramdisk import ramdisk_trees
from .versions import Worktrees, build_key

if TYPE_CHECKING:
    from ..optimize.plans import CampaignPlans, Split, SplitGroup
    from ..store import Store
    from .adaptive import AdaptiveOutcome

SCHEDULE = "rmit-rounds"


class CampaignReporter(TrialReporter, Protocol):
    """What a campaign tells about its progress (the CLI draws a progress bar with it)."""

    def builds_started(self, n: int) -> None: ...
    def build_done(self, version: str, status: str, cached: bool, log_tail: str | None = None) -> None: ...
    def trials_started(self, total: int, skipped: int) -> None: ...
    def finished(self) -> None: ...


class NullReporter:
    """A :class:`CampaignReporter` that says nothing (the default)."""

    def builds_started(self, n: int) -> None:
        pass

    def build_done(self, version: str, status: str, cached: bool, log_tail: str | None = None) -> None:
        pass

    def trials_started(self, total: int, skipped: int) -> None:
        pass

    def trial_started(self, benchmark: str, version: str, run_index: int) -> None:
        pass

    def trial_done(self, benchmark: str, version: str, run_index: int, status: str) -> None:
        pass

    def finished(self) -> None:
        pass


@dataclass(frozen=True)
class FailedTrial:
    """A run of this campaign that did not succeed: what the end-of-campaign account groups by
    cause."""

    trial: Trial
    status: str
    exit_code: int | None
    stderr_tail: str


@dataclass(frozen=True)
class CampaignResult:
    """What a finished campaign did.

    Attributes
    ----------
    campaign_id : int
        The campaign's id in the store.
    seed : int
        The seed of the RMIT shuffle (recorded in the store too).
    machine : str
        The machine the runs are stored under.
    counts : Mapping[str, int]
        Runs executed and stored by this campaign, by status (every status in
        :data:`regbench.model.RUN_STATUSES` is a key).
    builds_failed : tuple of str
        Versions whose build failed or timed out (now or, cached, earlier); their trials were
        not run.
    trials_skipped : int
        Trials not run because they were already stored (resume).
    trials_unbuilt : int
        Trials not run because their version did not build.
    versions : tuple of str
        Version names in history order.
    order : tuple of Trial
        The trials in the order they were executed.
    adaptive : tuple of AdaptiveOutcome
        Where each experiment of a ``plan = "adaptive"`` benchmark ended.
    failed : tuple of FailedTrial
        The runs of this campaign that did not succeed, in the order they ran.
    failed_earlier : int
        Runs stored before this campaign that failed and that ``retry_failed`` would run again
        (0 when it did): the planned runs an experiment lacks for having failed.
    retried : int
        Runs this campaign added with ``retry_failed`` for earlier runs that had failed.
    split : tuple of Split
        With optimized plans, how each tool benchmark with plans was invoked: one invocation per
        plan (its groups), or one as before (and why).
    not_run : tuple of (str, str)
        Benchmarks the executor could not run anywhere (a tag of their ``requires`` that no Dask
        worker offers), each with the reason: none of their runs was made or stored, so the
        same command runs them once a worker offers it.
    unfollowed : tuple of Unfollowed
        With optimized plans, every stored run (series) whose samples were not what
        ``REGBENCH_ITERATIONS`` asked for (:func:`regbench.run.core.unfollowed_counts`): the
        plan was not followed; each such run says so in its stderr tail too.
    """

    campaign_id: int
    seed: int
    machine: str
    counts: Mapping[str, int]
    builds_failed: tuple[str, ...]
    trials_skipped: int
    trials_unbuilt: int
    versions: tuple[str, ...]
    order: tuple[Trial, ...] = field(repr=False)
    adaptive: tuple[AdaptiveOutcome, ...] = ()
    failed: tuple[FailedTrial, ...] = ()
    failed_earlier: int = 0
    retried: int = 0
    split: tuple[Split, ...] = ()
    not_run: tuple[tuple[str, str], ...] = ()
    unfollowed: tuple[Unfollowed, ...] = ()
    #: The benchmarks whose definition (what they run) changed since the last campaign that ran
    #: them on this machine and configuration (or a session since): one sentence each
    #: (:func:`~regbench.run.definitions.changed_definitions`).
    changed: tuple[str, ...] = ()
    #: What the configuration asks that the runs cannot deliver well: one sentence each
    #: (:func:`weak_settings`).
    weak: tuple[str, ...] = ()
    #: The tags that name another commit than when the store recorded them: one sentence each
    #: (:func:`~regbench.run.core.record_versions`).
    moved_tags: tuple[str, ...] = ()

    @property
    def runs_stored(self) -> int:
        return sum(self.counts.values())

    @property
    def ok(self) -> bool:
        """True when every run of this campaign succeeded, every version built and every
        benchmark could be run."""
        return not self.failed and not self.builds_failed and not self.not_run


def rmit_order(trials: Iterable[Trial], rng: int | np.random.Generator | None) -> list[Trial]:
    """Trials in randomized interleaved order (RMIT, seed 004 s.2, fig. 1).

    Round ``r`` holds the trials with ``run_index == r``; rounds go in increasing order and each is
    shuffled.  The result depends only on the *set* of trials and the seed: trials are first put
    in a canonical order (run index, benchmark, version), so a campaign's order can be
    reproduced from its stored runs and its recorded seed.
    """
    rng = np.random.default_rng(rng)
    canonical = sorted(set(trials), key=lambda t: (t.run_index, t.benchmark, t.version))
    out: list[Trial] = []
    start = 0
    while start < len(canonical):
        stop = start
        while stop < len(canonical) and canonical[stop].run_index == canonical[start].run_index:
            stop += 1
        block = canonical[start:stop]
        out.extend(block[k] for k in rng.permutation(len(block)))
        start = stop
    return out


def spread_order(trials: Iterable[Trial], runs_of: Mapping[str, int],
                 rng: int | np.random.Generator | None) -> list[Trial]:
    """RMIT for benchmarks with different numbers of runs (optimized plans).

    With :func:`rmit_order`, a benchmark of 2 runs would sit in the first two rounds only and the
    last rounds would interleave only the few benchmarks that kept many runs: the drift RMIT
    spreads over every experiment would then fall on those alone (Japke et al. 2025 s.2 and
    s.3.2).  Here the ``k``-th of ``n`` runs goes to round ``floor(k * R / n)`` of ``R`` (the most
    runs of any benchmark), so every benchmark is spread over the whole campaign; each round is
    shuffled.  Like :func:`rmit_order`, the result depends only on the set of trials and the seed.
    """
    rng = np.random.default_rng(rng)
    canonical = sorted(set(trials), key=lambda t: (t.run_index, t.benchmark, t.version))
    widest = max((runs_of[t.benchmark] for t in canonical), default=1)
    rounds: dict[int, list[Trial]] = {}
    for t in canonical:
        n = max(runs_of[t.benchmark], t.run_index + 1)
        rounds.setdefault(t.run_index * widest // n, []).append(t)
    out: list[Trial] = []
    for r in sorted(rounds):
        block = rounds[r]
        out.extend(block[k] for k in rng.permutation(len(block)))
    return out


@dataclass(frozen=True)
class CheckedCampaign:
    """What :func:`check_campaign` found, for :func:`run_campaign` to run."""

    #: The benchmarks to run, as configured, each once, in the order given.
    specs: tuple[BenchmarkSpec, ...]
    #: The versions, in history order (releases oldest first).
    versions: tuple[PlannedVersion, ...]
    #: The noise control of every run (the ``[noise]`` table unless given).
    noise: NoiseControl
    #: What :func:`regbench.run.noise.check_noise` found, to record with the campaign.
    noise_facts: Mapping[str, Any]
    #: What counts instructions here (``perf`` or ``callgrind``), None when no benchmark measures them.
    counter: str | None


def check_campaign(config: ProjectConfig, *, revisions: str | None = None, releases: str | None = None,
                   benchmarks: Sequence[str] | None = None, runs: int | None = None,
                   noise: NoiseControl | None = None, ignore: Sequence[Path] = ()) -> CheckedCampaign:
    """The checks of :func:`run_campaign` that need no store: the benchmarks, ``runs``, the
    versions (git revisions, or a package's releases) and noise control.

    :func:`run_campaign` makes them before it opens the store; a caller that writes something
    before the campaign (the configurations of a screening suite) calls this first, so that a
    campaign refused writes nothing.  ``ignore`` are the folders the working tree's state leaves
    out (the store's and the worktrees').

    Raises
    ------
    ConfigError
        An unknown benchmark, no benchmark at all, a bad ``runs``, both ``revisions`` and
        ``releases``, noise control that cannot be applied here, or ``instructions`` to measure
        and neither perf nor callgrind to count them.
    VersionError
        A revision git cannot resolve, or an empty range.
    """
    specs = select_benchmarks(config, benchmarks)
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        raise ConfigError(f"`runs` must be a positive integer, got {runs!r}")
    if releases is not None:
        if revisions is not None:
            raise ConfigError("give --versions (git) or --releases (a package's releases), not both")
        versions = plan_releases(releases, config.root)
    else:
        versions = plan_versions(Path(config.repo or config.root), revisions, ignore=ignore)
    noise = noise if noise is not None else config.noise
    facts = _noise.check_noise(noise)
    return CheckedCampaign(tuple(specs), tuple(versions), noise, facts, instruction_counter_for(specs))


def check_environment_size(config: ProjectConfig, specs: Sequence[BenchmarkSpec], versions: Sequence[PlannedVersion],
                           noise: NoiseControl, *, runs: int | None = None,
                           groups: Mapping[str, tuple[SplitGroup, ...]] | None = None) -> None:
    """That every run of the campaign's plan fits ``noise.env_size`` (nothing to check without
    it): :func:`run_campaign` checks it before its first run, and a caller that writes something
    before the campaign (a suite's configurations, for each configuration) before that.

    Raises
    ------
    ConfigError
        A benchmark's environment at some version is larger than ``env_size``.
    """
    if noise.env_size is None:
        return
    check_env_size(_planned_runs(config, specs, runs, groups or {})[2], {v.name: {} for v in versions},
                   noise.env_size)


def _planned_runs(config: ProjectConfig, specs: Sequence[BenchmarkSpec], runs: int | None,
                  groups: Mapping[str, tuple[SplitGroup, ...]]):
    """The campaign's experiments, the runs each gets, and each one's widest run
    (:func:`_widest_runs`)."""
    experiments = _experiments(config, specs, groups)
    runs_of = {key: s.pilot if s.plan == "adaptive" else runs if runs is not None else s.runs for key, s in experiments}
    return experiments, runs_of, _widest_runs(experiments, runs_of)


def run_campaign(config: ProjectConfig, store: Store, *, revisions: str | None = None,
                 benchmarks: Sequence[str] | None = None, seed: int | None = None,
                 machine: str | None = None, config_name: str = DEFAULT_CONFIG,
                 runs: int | None = None, reporter: CampaignReporter | None = None,
                 rebuild: bool = False, command: str | None = None,
                 cache_dir: Path | None = None, releases: str | None = None,
                 noise: NoiseControl | None = None, retry_failed: bool = False,
                 optimized: CampaignPlans | None = None, executor: Executor | None = None,
                 trees: Worktrees | None = None, keep_old_runs: bool = False) -> CampaignResult:
    """Build the versions and run every missing trial, in RMIT order, storing each run at once.

    Parameters
    ----------
    config : ProjectConfig
        What to benchmark (``regbench.toml``).
    store : regbench.store.Store
        Where runs, builds and the campaign are recorded.
    revisions : str, optional
        Versions to benchmark (:func:`regbench.run.versions.resolve_revisions`: ``A..B``, a
        revision, or a comma-separated list) in ``config.repo`` (default: the config's folder).
        None benchmarks the working tree in place.
    benchmarks : sequence of str, optional
        Names of the benchmarks to run (default: all).
    seed : int, optional
        Seed of the RMIT shuffle; drawn at random (and recorded) when None.
    machine : str, optional
        Machine name (default: the host name).
    config_name : str
        Configuration the runs are stored under.
    runs : int, optional
        Runs per experiment, overriding every benchmark's ``runs``.
    reporter : CampaignReporter, optional
        Told about progress.
    rebuild : bool
        Build every version again, even if a build result is recorded.
    command : str, optional
        The command line recorded with the campaign (default: ``sys.argv``).
    cache_dir : Path, optional
        Where worktrees of commits go (default: ``worktrees/`` beside a SQLite store, else
        ``.regbench/worktrees`` in the config's folder).
    releases : str, optional
        Versions from package releases instead of git (``PACKAGE==A..B`` or ``PACKAGE==A,B``,
        :mod:`regbench.run.releases`): the working tree's benchmarks run once per release, each
        release installed in its own cached virtual environment (``venvs/`` beside the store).
    noise : NoiseControl, optional
        Noise control of every run (default: ``config.noise``, the ``[noise]`` table).  It is
        checked here, before anything is written, and recorded in the plan with what was
        found (the tmpfs used, the system's ASLR setting).  With ``ramdisk``, what the runs of
        a version need (the benchmarks' ``cwd``, the whole tree for Python benchmarks) is copied
        to the tmpfs once per version and campaign, after the builds, and removed at the end:
        copying per run would add a copy to every trial and disturb the timings around it,
        while a copy per version keeps what runs in place without a ramdisk do (runs of one
        version share its tree).  The copies of every version are held at once, RMIT
        interleaving them.
    retry_failed : bool
        Also run again, under new run indices, the runs an experiment lacks because stored runs
        failed: an experiment gets as many new runs as it has runs planned minus those that
        succeeded (and minus those not run yet).  The failed runs stay stored.
    optimized : CampaignPlans, optional
        Optimized plans (``--plan optimized``, :func:`regbench.optimize.plans.plans_for_campaign`):
        each planned benchmark runs its plan's runs and iterations (a fixed plan), the others as
        configured; runs are spread over the rounds by :func:`spread_order`.  Not with ``runs``.
        A tool's benchmark whose command reads ``REGBENCH_SELECT`` runs one invocation per plan of
        what it reports (:func:`regbench.optimize.plans.split_invocation`), each scheduled as a
        benchmark of its own (``SPEC[k]``) and stored as any invocation is, at run indexes the
        groups of a version do not share; ``plan["split"]`` records the groups.
    executor : Executor, optional
        Where the runs are made (default: here, one at a time, :class:`LocalExecutor`; the caller
        closes the one it gives).  With one whose runs are made on other machines (a Dask
        cluster, :class:`~regbench.run.dask_executor.DaskExecutor`), each run is stored under the
        machine of the worker that made it, with that machine's fingerprint; the campaign is
        recorded under the workers' machine when they share one (else this host), and resuming
        counts the runs stored on every worker's machine.  Not with ``machine``.  A benchmark
        whose runs no machine can take (a tag of its ``requires`` that no worker offers,
        :meth:`~regbench.run.core.Executor.refused`) is left out: nothing of it is run or
        stored, and the result's ``not_run`` names it when it has runs left to do.
    trees : Worktrees, optional
        The git worktrees to check versions out into (the caller closes them): campaigns that
        share them check out and build each version once (a screening suite's campaigns,
        :func:`regbench.screening.suite_file.run_suite`) [default: the campaign's own].
    keep_old_runs : bool
        Where a benchmark's definition changed since the last campaign that ran it here
        (:func:`~regbench.run.definitions.changed_definitions`), keep its stored runs in the
        analyses and do not run their versions again.  By default they are superseded
        (:meth:`regbench.store.Store.supersede_runs`): an edited benchmark measures something
        else, and comparing its old runs with its new ones reports the edit as a change.

    Returns
    -------
    CampaignResult

    Raises
    ------
    ConfigError
        An unknown benchmark, no benchmark at all, or a bad ``runs``; noise control that cannot
        be applied here; ``instructions`` to measure and neither perf nor callgrind to count
        them; a measure's series stored earlier in another unit; no benchmark that the executor
        can run (each requires a tag no worker offers), before anything is written.
    VersionError
        A revision cannot be resolved or checked out (before anything is written for the first,
        and the campaign is then marked ``failed`` for the second).
    KeyboardInterrupt
        After killing the run in flight and marking the campaign ``interrupted``.

    References
    ----------
    Seed 004 s.2 (RMIT); seed 000 s.2 (runs as the unit of replication).
    """
    reporter = reporter if reporter is not None else NullReporter()
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir(config, store)
    checked = check_campaign(config, revisions=revisions, releases=releases, benchmarks=benchmarks, runs=runs,
                             noise=noise, ignore=[p for p in (store_dir(store), cache_dir) if p is not None])
    specs = configured = list(checked.specs)
    if optimized is not None:
        if runs is not None:
            raise ConfigError("give --runs or --plan optimized, not both")
        from ..optimize.plans import planned_spec

        specs = [planned_spec(s, optimized) for s in specs]
    versions, noise, noise_facts, counter = checked.versions, checked.noise, checked.noise_facts, checked.counter
    where = executor.name if executor is not None else LocalExecutor.name
    remote = executor.machines() if executor is not None else {}
    # Benchmarks no machine can run (a tag no worker offers) are left out, not stored as failed
    # runs: the same command runs them once a worker offers it.  With none left, nothing starts.
    if where != LocalExecutor.name and machine is not None:
        raise ConfigError(f"--machine names the runs made here; with --executor {where} a run is stored "
                          "under its worker's machine (its host name, or REGBENCH_MACHINE where the worker starts)")
    refused = executor.refused(specs) if executor is not None else {}
    if refused and len(refused) == len(specs):
        raise ConfigError("; ".join(refused.values()) + ": nothing was run or stored")
    left_out = [s for s in specs if s.name in refused]
    specs = [s for s in specs if s.name not in refused]
    configured = [s for s in configured if s.name not in refused]
    machine = machine or (next(iter(remote)) if len(remote) == 1 else default_machine_name())

    splits: dict[str, Split] = {}
    if optimized is not None:
        from ..optimize.plans import split_invocations

        splits = split_invocations(store, configured, optimized, config=config_name, machine=machine,
                                   versions=[v.name for v in versions])
    groups = {name: sp.groups for name, sp in splits.items() if sp.groups}
    experiments, runs_of, widest = _planned_runs(config, specs, runs, groups)
    # On several machines, each makes every run of the benchmarks it can run: its runs are its
    # own series, never pooled with another machine's to make up the number of runs.
    assigned = executor.machines_for(specs) if executor is not None and remote else {}
    on_machines = {m: frozenset(k for k, s in experiments if m in assigned.get(s.name, ())) for m in sorted(remote)}
    several = [s.name for s in specs if s.plan == "adaptive" and len(assigned.get(s.name, ())) > 1]
    if several:
        # Its rounds read the runs of one machine to decide whether to go on (run.adaptive).
        raise ConfigError(f"benchmark {several[0]!r} has plan = \"adaptive\", whose rounds follow one machine's "
                          f"runs, and the Dask workers of {len(assigned[several[0]])} machines can run it "
                          f"({', '.join(assigned[several[0]])}): give it a fixed plan (runs = N) on a cluster, or "
                          "run it on each machine with --executor local")
    if noise.env_size is not None:
        check_env_size(widest, {v.name: {} for v in versions}, noise.env_size)
    # The store is first read here, after the checks that do not need it: a store opened at its
    # first use (the command line's) is not created for a campaign they refuse.
    check_measure_units(store, specs, counter)
    fingerprint = remote.get(machine) or machine_fingerprint()
    seed = int(seed) if seed is not None else secrets.randbits(32)
    plan = {
        "schedule": SCHEDULE,
        "config": config_name,
        "revisions": revisions,
        "releases": releases,
        "versions": [v.name for v in versions],
        "build": list(config.build) if config.build else None,
        "python": config.python,
        "benchmarks": {s.name: {"kind": s.kind, "definition": definition(s, config.benchmark_dir), "runs": _most(runs_of, s.name, groups, "runs"),
                                "iterations": _most({s.name: s.iterations}, s.name, groups, "iterations"),
                                "warmup": "auto" if s.warmup_auto else s.warmup, "timeout": s.timeout,
                                "measures": list(s.measures),
                                **({"min_time": s.min_time, "slices": s.slices} if s.kind == "python" else {}),
                                **({"plan": "adaptive", "target": s.target_width, "budget": s.budget, "pilot": s.pilot}
                                   if s.plan == "adaptive" else {})} for s in specs},
        # Every configured benchmark, whatever --benchmark selected: a failing benchmark that the
        # suite no longer names is no longer run (regbench.inventory.no_longer_run).
        "suite": [b.name for b in config.benchmarks],
        "noise": {**noise.to_json(), **noise_facts},
        "executor": where,
    }
    if remote:
        plan["machines"] = sorted(remote)
    if refused:
        plan["not_run"] = refused
    if optimized is not None:
        # A plan's shorter iterations are recorded only where planned_spec ran them (not when the
        # benchmark's `slices` changed since, nor with warmup = "auto"): run_lengths counts the
        # campaign's runs by them.
        sliced = {s.name for s in specs if s.warmup_slices}
        # Likewise a plan's forks, only where the command reads them (REGBENCH_FORKS).
        from ..optimize.plans import uses_forks

        forked = {s.name for s in configured if uses_forks(s)}
        plan["optimized"] = {p.benchmark: {"revision": p.revision, "campaign": p.campaign_id, "runs": p.runs,
                                           "iterations": p.iterations,
                                           **({"slices": p.slices, "full_slices": p.full_slices}
                                              if p.slices is not None and p.benchmark in sliced else {}),
                                           **({"forks": p.forks} if p.forks is not None
                                              and SeriesName.parse(p.benchmark).benchmark in forked else {})}
                             for p in optimized.plans}
        if optimized.stale:  # plans older than their benchmark's change, not run (at full configuration)
            plan["stale"] = {st.benchmark: {"measured": st.measured, "changed": st.changed, "alert": st.alert_id,
                                            **({"edited": st.edited} if st.edited is not None else {})}
                             for st in optimized.stale}
    if splits:
        plan["split"] = {name: sp.to_json() for name, sp in splits.items()}
    if counter is not None:
        plan["instruction_counter"] = counter
    recorded = definition_history(store, machine=machine, config_name=config_name)
    changes = changed_definitions(store, specs, machine=machine, config_name=config_name,
                                  benchmark_dir=config.benchmark_dir, history=recorded)
    campaign_id = store.start_campaign(seed=seed, machine=machine, fingerprint=fingerprint,
                                       command=command if command is not None else shlex.join(sys.argv),
                                       plan=plan)
    changed = supersede_changed(store, specs, changes, recorded, keep_old_runs=keep_old_runs,
                                config_name=config_name, machines=tuple(dict.fromkeys((machine, *remote))),
                                campaign_id=campaign_id)
    with contextlib.ExitStack() as cleanup:
        if executor is None:
            executor = cleanup.enter_context(LocalExecutor())
        ctx = RunContext(store, campaign_id, machine, config_name, noise, executor, tuple(sorted(remote)),
                         where_made=where != LocalExecutor.name)
        if trees is None:
            trees = cleanup.enter_context(Worktrees(Path(config.repo or config.root), cache_dir, keep=config.build_cache))
        campaign = _Campaign(config, ctx, tuple(specs), runs_of, tuple(widest), seed, reporter,
                             noise_facts.get("ramdisk_dir"), cleanup, trees, retry_failed, optimized is not None,
                             tuple(experiments), groups, tuple(splits.values()), on_machines)
        with campaign_status(store, campaign_id):
            result = campaign.execute(versions, cache_dir=cache_dir, rebuild=rebuild)
        if left_out:
            # Only those with runs left to do were not run: one whose runs are all stored (made
            # when a worker offered its tags) is done, as a finished campaign's benchmarks are.
            _, left_runs, _ = _planned_runs(config, left_out, runs, {})
            slots = run_slots(ctx, left_out, left_runs, retry_failed=retry_failed)
            result = dataclasses.replace(result, not_run=tuple(
                (s.name, refused[s.name]) for s in left_out
                if any(slots.have(s.name, v.name) < left_runs[s.name] for v in versions)))
    reporter.finished()
    weak = weak_settings(specs)
    return dataclasses.replace(result, changed=changed, weak=weak) if changed or weak else result


#: The fewest iterations `warmup = "auto"` was validated at (statistics.md: MSER-5 judges batches
#: of 5, and a cut needs the steady state after it to be tested against).
AUTO_WARMUP_ITERATIONS = 20


def weak_settings(specs: Sequence[BenchmarkSpec]) -> tuple[str, ...]:
    """One sentence for each benchmark whose settings its runs cannot deliver well: ``warmup =
    "auto"`` over fewer than :data:`AUTO_WARMUP_ITERATIONS` iterations (a probe: a warm-up of 3
    iterations at half speed among 12 was not cut, and the mean was 13% low, with nothing said)."""
    return tuple(f"{s.name}: warmup = \"auto\" over {s.iterations} iterations finds a warm-up poorly (MSER-5 judges "
                 f"batches of 5; it was validated from {AUTO_WARMUP_ITERATIONS} iterations on): give it "
                 f"iterations = {AUTO_WARMUP_ITERATIONS} or more, or a fixed warmup"
                 for s in specs if s.warmup_auto and s.iterations < AUTO_WARMUP_ITERATIONS)


@dataclass(frozen=True)
class _Campaign:
    """What the stages of one campaign share (built once by :func:`run_campaign`)."""

    config: ProjectConfig
    ctx: RunContext
    specs: tuple[BenchmarkSpec, ...]
    runs_of: Mapping[str, int]
    widest: tuple[tuple[BenchmarkSpec, int], ...]
    seed: int
    reporter: CampaignReporter
    ramdisk_base: str | None
    cleanup: contextlib.ExitStack
    trees: Worktrees
    retry_failed: bool = False
    spread: bool = False  # optimized plans: spread_order instead of rmit_order
    # What is scheduled, (key, spec): each benchmark under its name, or the groups of a split
    # tool benchmark under their labels (``SPEC[k]``), each with its plan and selection.
    experiments: tuple[tuple[str, BenchmarkSpec], ...] = ()
    groups: Mapping[str, tuple[SplitGroup, ...]] = field(default_factory=dict)  # by benchmark
    split: tuple[Split, ...] = ()
    # Runs made on other machines (a Dask cluster's): the experiments each machine makes all the
    # runs of, by machine; empty when the runs are made here.
    on_machines: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def execute(self, versions: Sequence[PlannedVersion], *, cache_dir: Path, rebuild: bool) -> CampaignResult:
        store = self.ctx.store
        # Version rows first, in history order, so that versions are ordered by history even
        # where timestamps tie.
        # Commits of one committer second are told apart by their generation (with_generations).
        moved = record_versions(store, self.config, versions)  # with their tags and branches, by name
        slots = self.slots()
        targets = self.targets(slots)
        adaptive = any(s.plan == "adaptive" for s in self.specs)
        # Only versions with a run to do are checked out and built: a campaign that resumes a
        # finished one builds nothing (an adaptive benchmark's rounds may run any version).
        needed = {v.name for v in versions if adaptive or any(t.missing(v.name) for t in targets.values())}
        ready, failed = self.build(versions, needed, cache_dir=cache_dir, rebuild=rebuild)
        noise = self.ctx.noise
        added = {v.name: dict(v.env) for v in ready if v.env}
        if noise.env_size is not None and added:  # a release's virtual environment adds variables
            check_env_size(self.widest, added, noise.env_size)
        result = self.run_trials(versions, ready, failed, slots, targets)
        return dataclasses.replace(result, moved_tags=tuple(moved)) if moved else result

    def build(self, versions: Sequence[PlannedVersion], needed: set[str], *, cache_dir: Path, rebuild: bool
              ) -> tuple[list[ReadyVersion], list[str]]:
        """Every version with runs to do checked out and built (releases installed) before any
        trial: a trial never waits for a build, and timing is not disturbed by one.  A version
        with nothing to do is reported with its recorded build, if any."""
        self.reporter.builds_started(len(versions) if self.config.build else 0)
        ready: list[ReadyVersion] = []
        failed: list[str] = []
        for v in versions:
            if v.name not in needed:
                recorded = (self.ctx.store.get_build(v.name, build_key(self.config.build))
                            if self.config.build and v.release is None else None)
                if recorded is not None:
                    self.reporter.build_done(v.name, recorded.status, True, recorded.log_tail)
                    if recorded.status != "ok":
                        failed.append(v.name)
                continue
            prepared = prepare_version(self.ctx.store, self.config, v, cache_dir=cache_dir, rebuild=rebuild,
                                       trees=self.trees)
            if self.config.build or v.release is not None:
                self.reporter.build_done(v.name, prepared.status, prepared.cached, prepared.log_tail)
            if prepared.ready is None:
                failed.append(v.name)
            else:
                ready.append(prepared.ready)
        return ready, failed

    def slots(self) -> RunSlots:
        """Which runs of this campaign's experiments are stored, and which indexes are free."""
        return run_slots(self.ctx, self.specs, self.runs_of, retry_failed=self.retry_failed, groups=self.groups)

    def targets(self, slots: RunSlots) -> dict[str | None, RunSlots]:
        """Where runs are counted: ``{None: slots}`` for runs made here (or wherever the
        executor makes them); on several machines, each machine's own stored runs of the
        experiments it makes (:attr:`on_machines`), so that each makes all their runs."""
        if not self.on_machines:
            return {None: slots}
        failures = StoredFailures.read(self.ctx.store)
        by_key = dict(self.experiments)
        out: dict[str | None, RunSlots] = {}
        for machine, keys in self.on_machines.items():
            names = {by_key[k].name for k in keys}
            alone = dataclasses.replace(self.ctx, machine=machine, machines=())
            out[machine] = run_slots(alone, [s for s in self.specs if s.name in names],
                                     {k: n for k, n in self.runs_of.items() if k in keys},
                                     retry_failed=self.retry_failed, failures=failures,
                                     groups={b: g for b, g in self.groups.items() if b in names})
        return out

    def run_trials(self, versions: Sequence[PlannedVersion], ready: Sequence[ReadyVersion],
                   failed: Sequence[str], slots: RunSlots, targets: Mapping[str | None, RunSlots]) -> CampaignResult:
        ctx = self.ctx
        existing = slots.taken
        built = {v.name for v in ready}
        orders: list[tuple[str | None, list[Trial]]] = []
        skipped = unbuilt = lacking = retried = 0
        for machine, mine in targets.items():
            nominal: list[Trial] = []
            for key, _ in self.experiments:
                if key not in mine.runs_of:
                    continue  # not one of this machine's (it lacks a tag the benchmark requires)
                for v in versions:
                    have = mine.have(key, v.name)
                    # Planned runs the experiment lacks because stored ones failed: run again with
                    # retry_failed (at new indexes, slots.place), counted for the hint otherwise.
                    lost = mine.lost(key, v.name)
                    if self.retry_failed and v.name in built:
                        retried += lost
                    else:
                        lacking += lost
                    for r in range(self.runs_of[key]):
                        if r < have:
                            skipped += 1
                        elif v.name not in built:
                            unbuilt += 1
                        else:
                            nominal.append(Trial(key, v.name, r))
            # RMIT rounds by the run's rank in its experiment: each machine's own order, drawn
            # from the seed and its name, so that the machines do not run the same version at the
            # same moment (a disturbance of the whole cluster would look like that version's).
            rng = self.seed if machine is None else np.random.default_rng([self.seed, zlib.crc32(machine.encode())])
            orders.append((machine, spread_order(nominal, self.runs_of, rng) if self.spread
                           else rmit_order(nominal, rng)))
        # Each run is stored at a free index (the same one unless a bisection or comparison
        # stored runs of the version first), distinct across the machines: one index, one run.
        placed = iter(slots.place([t for _, trials in orders for t in trials]))
        pinned = [[(t, machine) for t in itertools.islice(placed, len(trials))] for machine, trials in orders]
        # The machines' orders interleaved: each machine starts on its first runs at once.
        order: list[Trial] = []
        machine_of: dict[Trial, str] = {}
        for row in itertools.zip_longest(*pinned):
            for t, machine in filter(None, row):
                order.append(t)
                if machine is not None:
                    machine_of[t] = machine
        adaptive = [s for s in self.specs if s.plan == "adaptive"]
        if self.ramdisk_base is not None:
            # The versions that still have runs to do, copied before the first run: those with
            # trials, and every built version of an adaptive benchmark (its rounds may add runs
            # even when the pilot is already stored).
            needed = {t.version for t in order} | (built if adaptive else set())
            copies = ramdisk_trees({v.name: v.tree for v in ready if v.name in needed}, self.specs,
                                   Path(self.ramdisk_base), self.cleanup)
            ready = [dataclasses.replace(v, tree=copies.get(v.name, v.tree)) for v in ready]
        self.reporter.trials_started(len(order), skipped)

        runner = TrialRunner(ctx, ready, self.reporter)  # the ramdisk copies' trees
        runner.pinned.update(machine_of)
        by_name = dict(self.experiments)
        results = runner.run((t, by_name[t.benchmark]) for t in order)
        outcomes: list[AdaptiveOutcome] = []
        if adaptive:
            from .adaptive import run_adaptive_rounds

            outcomes, more = run_adaptive_rounds(runner, adaptive, [v.name for v in versions if v.name in built],
                                                 seed=self.seed,
                                                 existing=existing | {(t.benchmark, t.version, t.run_index)
                                                                      for t in order})
            results += more
        counts = dict.fromkeys(RUN_STATUSES, 0)
        for result in results:
            if result.stored:
                counts[result.outcome.status] += 1
        failures = tuple(FailedTrial(r.trial, r.outcome.status, r.outcome.exit_code, r.outcome.stderr_tail or "")
                         for r in results if r.stored and r.outcome.status != "ok")
        return CampaignResult(campaign_id=ctx.campaign_id, seed=self.seed, machine=ctx.machine, counts=counts,
                              builds_failed=tuple(failed),
                              trials_skipped=skipped + sum(not r.stored for r in results),
                              trials_unbuilt=unbuilt, versions=tuple(v.name for v in versions),
                              order=tuple(r.trial for r in results), adaptive=tuple(outcomes),
                              failed=failures, failed_earlier=lacking, retried=retried, split=self.split,
                              unfollowed=tuple(u for r in results if r.stored
                                               for u in unfollowed_counts(r.spec, r.outcome)))

@dataclass(frozen=True)
class SlotGroup:
    """A group of a split tool benchmark, for :class:`RunSlots`: the benchmark it is stored
    under, the units it selects and how the tool's reported names map to units."""

    benchmark: str
    units: frozenset[str]
    unit_of: Callable[[str], str | None]


class RunSlots:
    """The runs of a campaign's experiments already stored, and the free run indexes.

    Only the runs of the history count as done (those of campaigns and imports): runs stored by
    a session (``bisect``, ``compare --run``, ``detect --confirm``) do not make a campaign skip
    a version, and the campaign's runs go to the indexes they left free.  A tool's benchmarks
    are stored as ``SPEC/NAME``: an invocation is done when any of them is.

    The groups of a split tool benchmark (``groups``, by label) are experiments of their own: a
    group's run is done at an index where a benchmark it selects is stored, or where a failed
    invocation is stored that selected one of its units (``attributed``, by key; a failed
    invocation not listed there ran everything).  They share their benchmark's run indexes:
    :meth:`place` gives each group's runs indexes the others of the version do not use.
    """

    def __init__(self, specs: Sequence[BenchmarkSpec], runs_of: Mapping[str, int],
                 taken: set[tuple[str, str, int]], history: set[tuple[str, str, int]],
                 failed: Mapping[tuple[str, str], set[int]] | None = None, *, retry_failed: bool = False,
                 groups: Mapping[str, SlotGroup] | None = None,
                 attributed: Mapping[tuple[str, str, int], frozenset[str]] | None = None):
        self.tools = {s.name for s in specs if s.format is not None}
        self.groups = dict(groups or {})
        self._attributed = dict(attributed or {})
        self._of_spec: dict[str, list[tuple[str, SlotGroup]]] = {}
        for label, g in self.groups.items():
            self._of_spec.setdefault(g.benchmark, []).append((label, g))
        self._units: dict[tuple[str, str], str | None] = {}
        self.taken = taken
        self.runs_of = runs_of
        self.specs = specs
        self._taken = self._index(taken)
        self._history = self._index(history)
        self._failed = dict(failed or {})
        self.retry_failed = retry_failed

    def _unit(self, g: SlotGroup, reported: str) -> str | None:
        key = (g.benchmark, reported)
        if key not in self._units:
            self._units[key] = g.unit_of(reported)
        return self._units[key]

    def _index(self, keys: set[tuple[str, str, int]]) -> dict[tuple[str, str], set[int]]:
        out: dict[tuple[str, str], set[int]] = {}
        for b, v, r in keys:
            out.setdefault((b, v), set()).add(r)
            name = SeriesName.parse(b)
            if name.reported is not None and name.benchmark in self.tools:
                out.setdefault((name.benchmark, v), set()).add(r)
                for label, g in self._of_spec.get(name.benchmark, ()):
                    if self._unit(g, name.reported) in g.units:
                        out.setdefault((label, v), set()).add(r)
            elif b in self._of_spec:  # a failed invocation (an ok one stores what it reported)
                made = self._attributed.get((b, v, r))
                for label, g in self._of_spec[b]:
                    if made is None or not made or made & g.units:
                        out.setdefault((label, v), set()).add(r)
        return out

    def have(self, benchmark: str, version: str) -> int:
        """Runs of the experiment stored in the history (with ``retry_failed``, those that
        succeeded: the failed ones are to be run again)."""
        stored = self._history.get((benchmark, version), set())
        if self.retry_failed:
            return len(stored - self._failed.get((benchmark, version), set()))
        return len(stored)

    def lost(self, benchmark: str, version: str) -> int:
        """Planned runs of the experiment that were stored in the history but failed."""
        stored = self._history.get((benchmark, version), set())
        ok = len(stored - self._failed.get((benchmark, version), set()))
        return max(0, min(len(stored), self.runs_of[benchmark]) - ok)

    def missing(self, version: str) -> bool:
        """Whether any benchmark has runs to do on ``version``."""
        return any(self.have(key, version) < runs for key, runs in self.runs_of.items())

    def place(self, trials: Sequence[Trial]) -> list[Trial]:
        """``trials`` (nominal: the ``r``-th run of its experiment) at free run indexes, in order."""
        out: list[Trial] = []
        nxt: dict[tuple[str, str], int] = {}
        for t in trials:
            # A group of a split benchmark takes its benchmark's free indexes.
            group = self.groups.get(t.benchmark)
            key = (group.benchmark if group is not None else t.benchmark, t.version)
            used = self._taken.get(key, set())
            k = max(t.run_index, nxt.get(key, 0))
            while k in used:
                k += 1
            out.append(Trial(t.benchmark, t.version, k) if k != t.run_index else t)
            used = self._taken.setdefault(key, set())
            used.add(k)
        return out


@dataclass(frozen=True)
class StoredFailures:
    """The store's failed runs, and those of them that a later campaign ran again with success
    (:func:`regbench.inventory.retried_failures`): what :func:`run_slots` needs of the store
    beyond a configuration's run keys, read once by a command that runs several configurations
    (a screen's)."""

    failed: tuple[RunInfo, ...] = ()
    retried: tuple[RunInfo, ...] = ()

    @classmethod
    def read(cls, store: Store) -> StoredFailures:
        """Read from ``store``: one query when no run failed."""
        from ..inventory import runs_and_retries

        failed = store.runs(failed=True)
        if not failed:
            return cls()
        runs, ids = runs_and_retries(store)
        return cls(tuple(failed), tuple(r for r in runs if r.id in ids))


def run_slots(ctx: RunContext, specs: Sequence[BenchmarkSpec], runs_of: Mapping[str, int], *,
              retry_failed: bool = False, groups: Mapping[str, tuple[SplitGroup, ...]] | None = None,
              failures: StoredFailures | None = None) -> RunSlots:
    """Which runs of the experiments ``runs_of`` (benchmarks, or groups of a split tool
    benchmark, ``groups``) are stored for ``ctx``'s configuration and machines, and which run
    indexes are free: what a campaign resumes from, and with ``retry_failed`` what it runs again
    (:class:`RunSlots`).  ``failures``: the store's failed runs, read here when not given."""
    groups = groups or {}
    failures = failures if failures is not None else StoredFailures.read(ctx.store)
    # On a cluster, run indexes are kept distinct across the workers' machines: a run is
    # stored under the machine that made it, which is known only when it ends.
    taken: set[tuple[str, str, int]] = set()
    history: set[tuple[str, str, int]] = set()
    sessions = ctx.store.session_campaigns()
    for name in ctx.all_machines:
        mine = ctx.store.existing_run_keys(config=ctx.config_name, machine=name)
        taken |= mine
        # A superseded run keeps its index (taken) but is no run of the experiment: measured
        # under an old definition, its version runs again.
        history |= ((ctx.store.existing_run_keys(config=ctx.config_name, machine=name,
                                                 exclude_campaigns=sessions) if sessions else mine)
                    - ctx.store.existing_run_keys(config=ctx.config_name, machine=name, superseded_only=True))
    # A failed run that a later campaign ran again with success is history, not one of the
    # experiment's runs: it neither fills a slot (`--runs 8` after a retry runs up to 8 ok
    # runs) nor counts as a failure to run again; its index stays taken.
    history -= {(r.benchmark, r.version, r.run_index) for r in failures.retried
                if r.config == ctx.config_name and r.machine in ctx.all_machines}
    attributed = _attribution(ctx, groups)
    return RunSlots(specs, runs_of, taken, history,
                    _failed_indices(ctx, specs, groups, failures.failed, history, attributed),
                    retry_failed=retry_failed, groups=_slot_groups(specs, groups), attributed=attributed)


def _slot_groups(specs: Sequence[BenchmarkSpec], groups: Mapping[str, tuple[SplitGroup, ...]]
                 ) -> dict[str, SlotGroup]:
    from ..adapters.base import get_adapter

    out = {}
    for name, of_spec in groups.items():
        spec = next(s for s in specs if s.name == name)
        assert spec.format is not None  # only a tool's invocation is split
        unit_of = get_adapter(spec.format).selection_unit
        for g in of_spec:
            out[g.label] = SlotGroup(name, frozenset(g.units), unit_of)
    return out


def _attribution(ctx: RunContext, groups: Mapping[str, tuple[SplitGroup, ...]]
                 ) -> dict[tuple[str, str, int], frozenset[str]]:
    """The units each stored failed invocation of a split benchmark selected, by (benchmark,
    version, run index): the group its stderr tail names (:func:`~regbench.run.core.split_note`),
    looked up in the plan of the campaign that ran it.  A failed invocation that was not
    split is not listed (it ran every benchmark)."""
    if not groups:
        return {}
    plans = {c.id: c.plan or {} for c in ctx.store.campaigns()}
    out: dict[tuple[str, str, int], frozenset[str]] = {}
    for name in groups:
        for run in ctx.store.runs(benchmark=name):
            if run.status == "ok" or run.config != ctx.config_name or run.machine not in ctx.all_machines:
                continue
            label = split_label(run.stderr_tail)
            if label is None:
                continue
            made = (plans.get(run.campaign_id or 0, {}).get("split") or {}).get(name) or {}
            units = next((g.get("units") for g in made.get("groups") or [] if g.get("label") == label), None)
            # A note whose campaign's plan does not know the group (the plan lost?): every unit.
            out[(name, run.version, run.run_index)] = frozenset(units) if units is not None else frozenset()
    return out


def _failed_indices(ctx: RunContext, specs: Sequence[BenchmarkSpec], groups: Mapping[str, tuple[SplitGroup, ...]],
                    failed: Iterable[RunInfo], history: set[tuple[str, str, int]],
                    attributed: Mapping[tuple[str, str, int], frozenset[str]] | None = None
                    ) -> dict[tuple[str, str], set[int]]:
    """Per (benchmark, version), the run indices of ``ctx``'s configuration and machines whose
    stored run of the history failed (``failed``: the store's failed runs): a benchmark's own
    run, a tool's invocation stored as failed, or an invocation in which the tool reported a
    benchmark failed (its series ``SPEC/NAME`` has a failed run there: ``--retry-failed`` runs
    the invocation again); for a split tool benchmark, per group too (``attributed``: the units
    of the failed invocations that were split, the others count for every group; a failed
    benchmark counts for the groups that select it)."""
    from ..adapters.base import get_adapter

    attributed = attributed or {}
    by_name = {s.name: s for s in specs}
    out: dict[tuple[str, str], set[int]] = {}
    for run in failed:
        if run.config != ctx.config_name or run.machine not in ctx.all_machines:
            continue
        if (run.benchmark, run.version, run.run_index) not in history:
            continue  # a session's run
        name = SeriesName.parse(run.benchmark)
        spec = by_name.get(name.benchmark)
        if spec is None or name.measure is not None or (name.reported is not None and not spec.format):
            continue
        key = (spec.name, run.version, run.run_index)
        out.setdefault((spec.name, run.version), set()).add(run.run_index)
        of_spec = groups.get(spec.name, ())
        if name.reported is not None and of_spec:
            assert spec.format is not None
            unit = get_adapter(spec.format).selection_unit(name.reported)
            selecting = [g for g in of_spec if unit in g.units]
        else:
            made = attributed.get(key)
            selecting = [g for g in of_spec if made is None or not made or made & set(g.units)]
        for g in selecting:
            out.setdefault((g.label, run.version), set()).add(run.run_index)
    return out


def _widest_runs(experiments: Sequence[tuple[str, BenchmarkSpec]], runs_of: Mapping[str, int]
                 ) -> list[tuple[BenchmarkSpec, int]]:
    """Per experiment, the run with the largest environment it can have: its last run index
    (a split group's selection included), and for an adaptive plan the most iterations and runs
    its rounds can reach (budgets aside)."""
    from .adaptive import widest_run

    return [widest_run(s) if s.plan == "adaptive" else (s, max(runs_of[key] - 1, 0)) for key, s in experiments]


def _experiments(config: ProjectConfig, specs: Sequence[BenchmarkSpec],
                 groups: Mapping[str, tuple[SplitGroup, ...]]) -> list[tuple[str, BenchmarkSpec]]:
    """What a campaign schedules, ``(key, spec)``: each benchmark under its name, and in place of
    a split tool benchmark its groups under their labels, each with its plan and
    ``REGBENCH_SELECT`` (a label that is a configured benchmark's name is an error)."""
    names = {b.name for b in config.benchmarks}
    out: list[tuple[str, BenchmarkSpec]] = []
    for s in specs:
        for g in groups.get(s.name, ()):
            if g.label in names:
                raise ConfigError(f"--plan optimized: benchmark {s.name!r} is run in groups named {s.name}[k], but "
                                  f"{g.label!r} is a configured benchmark; rename it")
            env = {k: v for k, v in s.env.items() if k != FORKS_ENV}  # the whole invocation's, where set
            if g.forks is not None:
                env[FORKS_ENV] = str(g.forks)
            out.append((g.label, dataclasses.replace(s, runs=g.runs, iterations=g.iterations, plan="fixed",
                                                     env={**env, SELECT_ENV: g.select})))
        if s.name not in groups:
            out.append((s.name, s))
    return out


def _most(values: Mapping[str, int], name: str, groups: Mapping[str, tuple[SplitGroup, ...]], level: str) -> int:
    """A benchmark's runs or iterations in the campaign's plan: of a split one, its groups' most."""
    if name in groups:
        return max(getattr(g, level) for g in groups[name])
    return values[name]
