"""Run two versions interleaved, pair after pair, until the comparison is settled.

``regbench compare A B --run`` and ``regbench bisect`` do not fix the number of runs in
advance.  They run one fresh process of A and one of B (in random order: RMIT within the pair,
seed 004 s.2), take the log ratio of the two runs' means as one observation (runs are the
replicates, seed 000 s.2; pairing cancels slow drift of the machine), and after every pair ask
the always-valid confidence sequence of :mod:`regbench.stats.sequential` whether the answer is
settled: a change (the sequence excludes 0) or no change of the threshold's size (the sequence
lies inside ``+-threshold``).  Because the sequence holds uniformly over time, looking after
every pair and stopping at the first answer keeps the error rate at ``alpha`` (seed 000 s.3
compares versions by confidence intervals; the sequence is what makes that comparison safe to
repeat).

Every run is stored as it ends, like any campaign's (a session is a campaign whose plan says
``"schedule": "sequential-pairs"``), so nothing measured is thrown away: a later
``regbench compare A B`` sees these runs too; ``regbench detect`` reads them only with
``--all-sessions`` (:mod:`regbench.store.history`: a session's runs are not a campaign's), and
a later campaign over the same version runs its own (:class:`regbench.run.campaign.RunSlots`).
"""

from __future__ import annotations

import dataclasses
import math
import secrets
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..config import BenchmarkSpec, NoiseControl, ProjectConfig
from ..errors import ConfigError
from ..model import DEFAULT_CONFIG, SESSION_SCHEDULE
from ..stats.compare import run_location
from ..stats.modepairs import ModeMatch, match_modes
from .core import (PlannedVersion, ReadyVersion, RunContext, Trial, TrialRunner, auto_warmup, campaign_status,
                   check_env_size, check_measures, default_cache_dir, prepare_version, record_versions,
                   select_benchmarks)
from .definitions import definition
from .duet import DuetCores, DuetExecutor, duet_cores
from .execute import RunOutcome
from .executor import LocalExecutor
from .fingerprint import default_machine_name, machine_fingerprint
from .noise import check_noise
from .versions import Commit, Worktrees, resolve_revisions

if TYPE_CHECKING:
    from ..stats.sequential import SequentialDecision
    from ..store import Store

SCHEDULE = SESSION_SCHEDULE
#: The defaults of ``compare --run``, which the sessions that reuse it (``detect --confirm``) share:
#: error rate, pairs at most and before any decision, and the threshold when none is given.
DEFAULT_ALPHA = 0.05
DEFAULT_MAX_PAIRS = 100
DEFAULT_MIN_PAIRS = 3
DEFAULT_THRESHOLD = 0.03
#: Stop a benchmark whose runs keep failing: more failed pairs than this (and than a fifth of
#: the pairs) mean the comparison cannot be settled by running more.
MAX_FAILED_PAIRS = 3


class SessionReporter:
    """What a sequential session tells about its progress (the CLI shows it); silent here."""

    def version_ready(self, version: str, status: str) -> None:
        pass

    def pair_done(self, benchmark: str, a: str, b: str, pairs: int, decision: SequentialDecision) -> None:
        pass

    def note(self, text: str) -> None:
        """One line about how the runs are made (duet runs, or why not)."""

    def progress(self, text: str) -> None:
        """Where a session is (a commit tried by ``bisect --failure``): replaced by the next."""


@dataclass(frozen=True)
class Settled:
    """The outcome of one sequential comparison of ``b`` against ``a`` for one benchmark.

    Attributes
    ----------
    benchmark, a, b : str
    direction : str
        ``"lower"`` or ``"higher"`` is better (from the benchmark's configuration).
    decision : regbench.stats.sequential.SequentialDecision or None
        The last decision (None when no pair succeeded).
    stopped : str
        ``"settled"``, ``"budget"`` (time spent), ``"max-pairs"``, ``"failed"`` (runs keep
        failing) or ``"unbuilt"`` (a version did not build).
    pairs : int
        Pairs whose two runs both succeeded (the observations).
    failed_pairs : int
    seconds : float
        Wall-clock seconds the benchmark's runs took.
    more_pairs : int or None
        When not settled: about how many more pairs would settle it, from the current estimate
        and spread (None when it cannot be told).
    log_ratios : tuple of float
        The observations, in order.
    pairing : str
        How the two runs of a pair were made: ``"interleaved"`` (one after the other, in random
        order) or ``"duet"`` (at the same time, each pinned to its own CPU:
        :mod:`regbench.run.duet`).
    modes : regbench.stats.modepairs.ModeMatch or None
        With ``by_mode``: the modes found and the matching (``log_ratios`` are then the
        mode-matched observations, fewer than the pairs); None for ordinary pairs.
    measure : str
        What settled it: ``"time"`` (the run means of the benchmark's own samples) or
        ``"instructions"`` (each run's instruction count).
    counter : str or None
        With instructions: ``"perf"`` or ``"callgrind"``.
    location : str
        With time: what of a run's samples each run contributes, ``"mean"``, ``"median"`` or
        ``"low"`` (the :data:`~regbench.stats.runs.LOW_QUANTILE` quantile; ``1 -
        LOW_QUANTILE`` where higher is better, :func:`run_value`).
    unbuilt : tuple of str
        With ``stopped == "unbuilt"``: which of ``a`` and ``b`` did not build.
    b_broken : bool
        ``b`` alone did not build, or every run of ``b`` failed while ``a``'s succeeded: the
        verdict is ``failed``, which fails a CI gate, as the stored-runs ``compare`` says of such
        runs (a pull request that breaks the benchmark is not "inconclusive").
    """

    benchmark: str
    a: str
    b: str
    direction: str
    decision: SequentialDecision | None
    stopped: str
    pairs: int
    failed_pairs: int
    seconds: float
    more_pairs: int | None = None
    log_ratios: tuple[float, ...] = field(default=(), repr=False)
    pairing: str = "interleaved"
    modes: ModeMatch | None = None
    measure: str = "time"
    counter: str | None = None
    location: str = "mean"
    unbuilt: tuple[str, ...] = ()
    b_broken: bool = False

    @property
    def compared_by(self) -> str:
        """One line: what the observations were (and how the runs were made), and, where the
        median of the observations bounded the confidence sequence, that it did."""
        d = self.decision
        by = d.cs.by if d is not None and d.cs.center == "both" else "mean"
        tail = {"mean": "", "median": "; bounded by their median (bursts widen their mean's bound)",
                "mean and median": "; bounded by their mean and their median"}.get(by, "")
        return self._observations + tail

    @property
    def _observations(self) -> str:
        how = "duet runs" if self.pairing == "duet" else "interleaved runs"
        if self.measure == "instructions":
            return (f"pairs of {how}, log ratio of the runs' instruction counts ({self.counter or 'counter'}): "
                    "instructions are not time; the verdict is about the instructions executed")
        m = self.modes
        of = {"mean": "run means", "median": "run medians", "low": low_location_words(self.direction)}[self.location]
        if m is None:
            return f"pairs of {how}, log ratio of {of}"
        if m.modes == 2:
            return (f"mode by mode ({how}): each run matched with a run of the other version in the same "
                    f"mode; the {'slower' if self.direction == 'lower' else 'faster'} mode holds "
                    f"{m.upper_share_a:.0%} of {self.a}'s runs and "
                    f"{m.upper_share_b:.0%} of {self.b}'s (shares not tested)")
        if m.modes == 1:
            return f"pairs of {how} (one mode found in the first {m.burn_in} pairs)"
        return f"mode by mode ({how}): too few pairs yet to tell the modes apart (at least {m.burn_in})"

    @property
    def gates(self) -> bool:
        """Whether this fails a CI gate: a regression not shown to be below the threshold, or B
        broken (:attr:`b_broken`)."""
        return self.verdict in ("regression", "regression (size uncertain)", "failed")

    @property
    def verdict(self) -> str:
        """What the confidence sequence says, by the benchmark's direction:

        ``regression`` / ``improvement``: a change of at least the threshold (the whole sequence
        beyond it, as the stored-runs ``compare`` requires of its interval); ``small regression``
        / ``small improvement``: a real change, all of it below the threshold; ``regression
        (size uncertain)`` / ``improvement (size uncertain)``: a real change that may or may not
        reach the threshold (the budget ran out before that was settled); ``no change``: none
        of the threshold's size; ``inconclusive``: not even the direction is settled;
        ``failed``: B did not build, or its every run failed while A's succeeded.
        """
        if self.b_broken:
            return "failed"
        d = self.decision
        if d is None or d.decision == "undecided":
            return "inconclusive"
        if d.decision == "no change":
            return "no change"
        worse = d.change > 0 if self.direction == "lower" else d.change < 0
        word = "regression" if worse else "improvement"
        size = size_settled(d)
        return word if size == "beyond" else f"small {word}" if size == "within" else f"{word} (size uncertain)"


def size_settled(decision: SequentialDecision) -> str | None:
    """For a "changed" decision: ``beyond`` the threshold, ``within`` it, or None (the sequence
    straddles the threshold).  A threshold of 0 makes every change ``beyond``."""
    if decision.threshold == 0:
        return "beyond"
    band = math.log1p(decision.threshold)
    low, high = decision.cs.low, decision.cs.high
    if low > band or high < -band:
        return "beyond"
    if -band < low and high < band:
        return "within"
    return None


@dataclass(frozen=True)
class SessionSetup:
    """Where and how a session's runs are made and stored (as for a campaign).

    Attributes
    ----------
    machine : str, optional
        Machine name the runs are stored under (default: the host name).
    config_name : str
        Configuration the runs are stored under.
    seed : int, optional
        Seed of the order within pairs (drawn at random, and recorded, when None).
    cache_dir : Path, optional
        Worktrees of commits (default as for campaigns: ``worktrees/`` beside a SQLite store).
    command : str, optional
        The command line recorded with the session (default: ``sys.argv``).
    rebuild : bool
        Build every version again, even if a build result is recorded.
    noise : NoiseControl, optional
        Noise control of every run (default: the ``[noise]`` table); checked before anything is
        written and recorded with the session (a RAM disk is then copied per run).
    duet : bool
        Run the versions of a pair (or of a bisection's triple) at the same time, each pinned
        to its own CPU (:mod:`regbench.run.duet`), where the machine allows; else interleaved,
        with a note saying why.
    """

    machine: str | None = None
    config_name: str = DEFAULT_CONFIG
    seed: int | None = None
    cache_dir: Path | None = None
    command: str | None = None
    rebuild: bool = False
    noise: NoiseControl | None = None
    duet: bool = False


@dataclass(frozen=True)
class StopRule:
    """When a sequential decision stops.

    ``threshold`` is the relative change of interest (0 for "any change"), ``alpha`` the error
    rate valid under stopping after every observation; it stops settled, after ``budget``
    seconds of benchmark time, or after ``max_n`` observations, and never decides before
    ``min_n``.
    """

    threshold: float
    alpha: float = 0.05
    budget: float | None = None
    max_n: int = 100
    min_n: int = 3


class Session:
    """Versions checked out and built on demand, and runs stored under one campaign.

    Parameters
    ----------
    config : ProjectConfig
    store : Store
    setup : SessionSetup
        Where runs are stored, the seed, worktrees, noise control.
    plan : dict
        Recorded with the campaign (what the session is for).
    specs : sequence of BenchmarkSpec
        The benchmarks it runs: their definitions are recorded with it (``plan["definitions"]``,
        :func:`regbench.run.definitions.definition`), so that the next campaign knows what its
        runs measured (:func:`regbench.run.definitions.changed_definitions`).
    reporter : SessionReporter, optional
    clock : callable
        Seconds, monotonic (injectable for tests of the budget).
    """

    def __init__(self, config: ProjectConfig, store: Store, setup: SessionSetup = SessionSetup(), *,
                 plan: dict | None = None, specs: Sequence[BenchmarkSpec] = (),
                 reporter: SessionReporter | None = None, clock: Callable[[], float] = time.monotonic):
        self.config, self.store = config, store
        self.seed = int(setup.seed) if setup.seed is not None else secrets.randbits(32)
        self.rng = np.random.default_rng(self.seed)
        self.cache_dir = Path(setup.cache_dir) if setup.cache_dir is not None else default_cache_dir(config, store)
        self.rebuild = setup.rebuild
        self.reporter = reporter or SessionReporter()
        noise = setup.noise if setup.noise is not None else config.noise
        noise_facts = check_noise(noise)
        machine = setup.machine or default_machine_name()
        self.clock = clock
        self.duet: DuetCores | None = None
        if setup.duet:
            self.duet = duet_cores((), noise)
            self.reporter.note(self.duet.describe())
        self._ready: dict[str, ReadyVersion | None] = {}
        self._next_index: dict[tuple[str, str], int] = {}
        self._existing: dict[tuple[str, str], int] | None = None
        campaign_id = store.start_campaign(
            seed=self.seed, machine=machine, fingerprint=machine_fingerprint(),
            command=setup.command if setup.command is not None else shlex.join(sys.argv),
            plan=dict(plan or {}, schedule=SCHEDULE, config=setup.config_name,
                      definitions={s.name: definition(s, config.benchmark_dir) for s in specs},
                      noise={**noise.to_json(), **noise_facts},
                      duet=(list(self.duet.cores) if self.duet.usable else self.duet.reason)
                      if self.duet is not None else None))
        self.runner = TrialRunner(RunContext(store, campaign_id, machine, setup.config_name, noise, LocalExecutor()))
        self.trees = Worktrees(Path(config.repo or config.root), self.cache_dir, keep=config.build_cache)
        self._duet_runner: TrialRunner | None = None
        self._told: set[tuple[str, int]] = set()
        if self.duet is not None and self.duet.usable:
            self._duet_runner = TrialRunner(dataclasses.replace(self.runner.ctx,
                                                                executor=DuetExecutor(self.duet.cores)))
            self._duet_runner.versions = self.runner.versions  # the same ready versions, as they are added

    @property
    def campaign_id(self) -> int:
        return self.runner.ctx.campaign_id

    def close(self) -> None:
        """Remove the worktrees the session checked out (also on an error or Ctrl-C when the
        session is used as a context manager)."""
        self.trees.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ versions
    def prepare(self, commit: Commit) -> ReadyVersion | None:
        """Check out (and build) a commit once; the version ready to run, or None when its build
        failed."""
        name = commit.short
        if name in self._ready:
            return self._ready[name]
        planned = PlannedVersion.of_commit(commit)
        record_versions(self.store, self.config, [planned])
        prepared = prepare_version(self.store, self.config, planned, cache_dir=self.cache_dir, rebuild=self.rebuild,
                                   trees=self.trees)
        self._ready[name] = prepared.ready
        if prepared.ready is not None:
            self.runner.add(prepared.ready)
        self.reporter.version_ready(name, prepared.status)
        return prepared.ready

    # ---------------------------------------------------------------------- runs
    def _run_index(self, benchmark: str, version: str) -> int:
        """The next free run index of (benchmark, version): after any stored run of it."""
        if self._existing is None:
            self._existing = {}
            ctx = self.runner.ctx
            for b, v, r in self.store.existing_run_keys(config=ctx.config_name, machine=ctx.machine):
                self._existing[(b, v)] = max(self._existing.get((b, v), -1), r)
        key = (benchmark, version)
        k = self._next_index.get(key, self._existing.get(key, -1) + 1)
        self._next_index[key] = k + 1
        return k

    def attempt(self, spec: BenchmarkSpec, version: str) -> RunOutcome:
        """Run ``spec`` once on a prepared version and store the run; what it produced (its
        status, and why it failed in ``stderr_tail``)."""
        while True:
            trial = Trial(spec.name, version, self._run_index(spec.name, version))
            (result,) = self.runner.run([(trial, spec)])
            if result.stored:
                return result.outcome  # else another campaign took this index meanwhile: take the next one

    def run_once(self, spec: BenchmarkSpec, version: str, value: str | None = None) -> float | None:
        """Run ``spec`` once on a prepared version, store the run; its mean (None if it failed),
        or what ``value`` names (:func:`run_value`)."""
        return run_value(spec, self.attempt(spec, version), value)

    def duet_refused(self, spec: BenchmarkSpec, count: int) -> str | None:
        """Why ``count`` versions of ``spec`` cannot run as a duet here; None when they can, or
        when duet runs were not asked for (or are not possible at all: the session said so)."""
        if self.duet is None or not self.duet.usable:
            return None
        if spec.threads > 1:
            return duet_cores([spec]).reason
        if count > len(self.duet.cores):
            return f"{count} versions at once need {count} CPUs"
        return None

    def pairing(self, spec: BenchmarkSpec, count: int) -> str:
        """``"duet"`` when ``count`` versions of ``spec`` run at the same time, else ``"interleaved"``."""
        usable = self.duet is not None and self.duet.usable and self.duet_refused(spec, count) is None
        return "duet" if usable else "interleaved"

    def run_duet(self, spec: BenchmarkSpec, versions: Sequence[str], value: str | None = None
                 ) -> dict[str, float | None]:
        """Run ``spec`` once on each version at the same time, each pinned to its own CPU, and
        store the runs; their means (None for a failed one).  A run whose index another
        campaign took meanwhile is made again, alone (a duet partner cannot be re-made)."""
        if self._duet_runner is None:
            raise RuntimeError("the session has no duet runner")
        trials = [Trial(spec.name, v, self._run_index(spec.name, v)) for v in versions]
        means: dict[str, float | None] = {}
        for result in self._duet_runner.run([(t, spec) for t in trials]):
            v = result.trial.version
            means[v] = (run_value(spec, result.outcome, value) if result.stored
                        else self.run_once(spec, v, value))
        return means

    def settle(self, spec: BenchmarkSpec, a: Commit, b: Commit, rule: StopRule, *, resolve_size: bool = True,
               by_mode: bool = False, measure: str | None = None, location: str = "mean") -> Settled:
        """Run ``a`` and ``b`` in pairs until the comparison of ``spec`` is settled.

        Parameters
        ----------
        spec : BenchmarkSpec
            A benchmark with its own samples (not a tool ``format``: one tool invocation holds
            many benchmarks).
        a, b : Commit
        rule : StopRule
            ``threshold`` (0.03 = 3%: "no change" means none this large), the error rate, the
            budget and the bounds on the pairs.
        resolve_size : bool
            Once a change is certain, go on until it is also certain whether it reaches the
            threshold (the sequence holds at every time, so going on keeps its error rate).
            False stops at the first decision (bisection only needs the direction).
        by_mode : bool
            Compare mode by mode (:mod:`regbench.stats.modepairs`): for a benchmark whose runs
            land in two levels; no decision before its burn-in of 12 pairs.
        measure : {None, "instructions"}
            Settle on each run's instruction count instead of its samples (perf or callgrind,
            :mod:`regbench.run.measures`; the runs measure it whatever their ``measures``).
            Counts that are exactly equal in every pair are a deterministic measure: the
            decision is then taken on that one value (see :func:`exact_decision`).
        location : {"mean", "median", "low"}
            With time, what of a run's samples it contributes: ``"low"``, the
            :data:`~regbench.stats.runs.LOW_QUANTILE` quantile (``1 - LOW_QUANTILE`` where
            higher is better), is a floor that interference, which only adds time, hardly moves
            (as the detector's ``choose_location``); the
            observations are still independent pairs, so the error rate is that of the mean's.

        Returns
        -------
        Settled
        """
        if spec.format is not None:
            raise ConfigError(f"benchmark {spec.name!r} reports through a tool (format = {spec.format!r}); "
                              "a sequential comparison needs a benchmark with its own samples")
        ta, tb = self.prepare(a), self.prepare(b)
        if ta is None or tb is None:
            return Settled(spec.name, a.short, b.short, spec.direction, None, "unbuilt", 0, 0, 0.0,
                           unbuilt=tuple(v.short for v, tree in ((a, ta), (b, tb)) if tree is None),
                           b_broken=ta is not None)

        def log_ratio(means: dict[str, float]) -> float:
            return math.log(means[b.short] / means[a.short])

        def settled(d: SequentialDecision) -> bool:
            return d.decision == "no change" or (d.decision == "changed" and (
                not resolve_size or size_settled(d) is not None))

        def matched(groups: Sequence[dict[str, float]]) -> Sequence[float]:
            return [float(v) for v in match_modes([g[a.short] for g in groups], [g[b.short] for g in groups]).log_ratios]

        spec, counter, value = self.valued(spec, measure, location)
        seen = self.observe(spec, (a.short, b.short), log_ratio, settled, rule, label=(a.short, b.short),
                            observations=matched if by_mode else None, value=value)
        modes = (match_modes([g[a.short] for g in seen.groups], [g[b.short] for g in seen.groups])
                 if by_mode else None)
        more = None
        if seen.stopped != "settled":
            # With the size to settle, either way out (within the band, or beyond it) needs the
            # half-width below the distance from the estimate to the band's edge.
            more = more_pairs_needed(seen.values, threshold=rule.threshold, alpha=rule.alpha,
                                     size=resolve_size and rule.threshold > 0)
        return Settled(spec.name, a.short, b.short, spec.direction, seen.decision, seen.stopped, len(seen.groups),
                       seen.failed, seen.seconds, more, tuple(seen.values), seen.pairing, modes,
                       measure or "time", counter, location, b_broken=seen.only_failing(b.short))

    def valued(self, spec: BenchmarkSpec, measure: str | None, location: str
               ) -> tuple[BenchmarkSpec, str | None, str | None]:
        """The benchmark as it is run to be compared on ``measure`` (None: time) at ``location``,
        the instruction counter that will count (None for time), and what each run contributes
        (the ``value`` of :meth:`observe`).

        Raises
        ------
        ConfigError
            An unknown measure or location, a location given with instructions, or no counter
            here (:func:`~regbench.run.measures.check_measures`).
        """
        check_value(measure, location)
        counter = None
        if measure is not None:
            spec = dataclasses.replace(spec, measures=tuple(dict.fromkeys((*spec.measures, measure))))
            counter = check_measures(self.store, [spec])
        return spec, counter, measure if measure is not None else None if location == "mean" else location

    def observe(self, spec: BenchmarkSpec, versions: Sequence[str], observation: Callable[[dict[str, float]], float],
                settled: Callable[[SequentialDecision], bool], rule: StopRule, *, label: tuple[str, str],
                observations: Callable[[Sequence[dict[str, float]]], Sequence[float]] | None = None,
                value: str | None = None) -> Observed:
        """The loop every sequential decision shares: run ``versions`` once each, in random order
        (a pair, or the triple of a bisection step), turn their run means into one observation,
        and ask the confidence sequence after each, until ``settled(decision)``, the budget, the
        observation limit, or runs that keep failing.  With ``observations``, the observations
        are instead that function of all groups' run means so far (mode-matched pairs), and the
        limit counts groups.  ``value`` is what a run contributes (:func:`run_value`).
        """
        from ..stats.sequential import sequential_decision

        x: list[float] = []
        groups: list[dict[str, float]] = []
        failed = 0
        failures = dict.fromkeys(versions, 0)  # failed runs, per version
        start = self.clock()
        decision = None
        stopped = "max-pairs"
        duet = self.pairing(spec, len(versions)) == "duet"
        refused = self.duet_refused(spec, len(versions))
        if refused is not None and (spec.name, len(versions)) not in self._told:
            self._told.add((spec.name, len(versions)))  # once per benchmark and group size
            self.reporter.note(f"{spec.name}: duet mode cannot be used: {refused}; running interleaved "
                               f"{'pairs' if len(versions) == 2 else 'groups'} instead")
        while len(groups) < rule.max_n:
            if rule.budget is not None and self.clock() - start >= rule.budget:
                stopped = "budget"
                break
            order = [versions[k] for k in self.rng.permutation(len(versions))]
            means = (self.run_duet(spec, order, value) if duet
                     else {v: self.run_once(spec, v, value) for v in order})
            if any(m is None for m in means.values()):
                failed += 1
                for v, m in means.items():
                    failures[v] += m is None
                if failed > MAX_FAILED_PAIRS and failed > 0.2 * (len(groups) + failed):
                    stopped = "failed"
                    break
                continue
            groups.append({v: m for v, m in means.items() if m is not None})
            if observations is None:
                x.append(observation(groups[-1]))
            else:
                x = list(observations(groups))
            decision = exact_decision(x, rule) if value == "instructions" else None
            if decision is None:
                decision = sequential_decision(np.asarray(x), threshold=rule.threshold, alpha=rule.alpha,
                                               min_n=rule.min_n)
            self.reporter.pair_done(spec.name, label[0], label[1], len(groups), decision)
            if settled(decision):
                stopped = "settled"
                break
        return Observed(x, failed, decision, stopped, self.clock() - start, failures,
                        "duet" if duet else "interleaved", groups)


@dataclass(frozen=True)
class Observed:
    """What :meth:`Session.observe` saw: the observations, the groups with a failed run, the
    last decision (None before any), why it stopped (``settled``, ``budget``, ``max-pairs`` or
    ``failed``), the seconds it took, the failed runs of each version, and how the runs of a
    group were made (``duet`` or ``interleaved``)."""

    values: list[float]
    failed: int
    decision: SequentialDecision | None
    stopped: str
    seconds: float
    failures: dict[str, int] = field(default_factory=dict)
    pairing: str = "interleaved"
    groups: list[dict[str, float]] = field(default_factory=list)

    def only_failing(self, version: str) -> bool:
        """Whether the groups stopped because every run of ``version`` failed and no other
        version's did (a commit whose benchmark cannot run, as a syntax error makes it)."""
        runs = len(self.groups) + self.failed
        return (self.stopped == "failed" and runs > 0 and self.failures.get(version, 0) == runs
                and not any(n for v, n in self.failures.items() if v != version))


def more_pairs_needed(x: Sequence[float], *, threshold: float, alpha: float = 0.05, size: bool = False,
                      limit: int = 100_000, center: str | None = None) -> int | None:
    """About how many more pairs would settle a comparison, if the estimate and spread held.

    The mean's confidence sequence's half-width after ``n`` pairs is computed with the present
    mean and standard deviation; it settles when the half-width is below the distance from the
    mean to 0 (a change) or to the nearer edge of ``+-threshold`` (no change), whichever comes
    first.  With ``center="both"`` (the default, :data:`regbench.stats.sequential.DEFAULT_CENTER`)
    the mean's sequence is at ``alpha / 2``, and the intersection with the median's, at least as
    narrow, may settle sooner: the count is then at most what is needed.  None with fewer than
    two observations, no spread, or beyond ``limit``.
    """
    from ..stats.sequential import DEFAULT_CENTER, t_mixture_cs

    if (center or DEFAULT_CENTER) == "both":
        alpha = alpha / 2

    values = np.asarray(x, dtype=float)
    if values.size < 2:
        return None
    m, s = float(np.mean(values)), float(np.std(values, ddof=1))
    if not s > 0:
        return None
    band = math.log1p(threshold) if threshold > 0 else 0.0
    room = abs(abs(m) - band) if size else max(abs(m), band - abs(m))
    if room <= 0:
        return None
    # A synthetic sample of size n with exactly this mean and sd has the same interval as the
    # real one would if the estimates held: search n by doubling, then bisection.
    def width(n: int) -> float:
        z = np.full(n, m)
        z[0] -= s * math.sqrt((n - 1) / 2)
        z[1] += s * math.sqrt((n - 1) / 2)
        cs = t_mixture_cs(z, alpha=alpha)
        return (cs.high - cs.low) / 2

    lo, hi = values.size, values.size
    while width(hi) >= room:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if width(mid) >= room else (lo, mid)
    return max(hi - values.size, 1)


def check_environment_size(config: ProjectConfig, noise: NoiseControl | None, specs: Sequence[BenchmarkSpec],
                           versions: Sequence[str]) -> None:
    """With ``env_size``, every run a session may make fits (checked before anything is written,
    with a run index far beyond any session's)."""
    noise = noise if noise is not None else config.noise
    if noise.env_size is not None:
        check_env_size(((s, 10**6) for s in specs), {v: {} for v in versions}, noise.env_size)


def compare_live(config: ProjectConfig, store: Store, a: str, b: str, *, benchmarks: Sequence[str] | None = None,
                 threshold: float = DEFAULT_THRESHOLD, alpha: float = DEFAULT_ALPHA, budget: float | None = None,
                 max_pairs: int = DEFAULT_MAX_PAIRS, min_pairs: int = DEFAULT_MIN_PAIRS, seed: int | None = None,
                 machine: str | None = None, config_name: str = DEFAULT_CONFIG,
                 cache_dir: Path | None = None, command: str | None = None, rebuild: bool = False,
                 reporter: SessionReporter | None = None, noise: NoiseControl | None = None,
                 settle_size: bool = True, duet: bool | None = None, by_mode: bool = False,
                 measure: str | None = None, location: str = "mean") -> list[Settled]:
    """Compare revision ``b`` against ``a`` by running them, pair by pair, until settled.

    ``a`` and ``b`` are git revisions of ``config.repo``.  Every benchmark (or those named) is
    settled in turn; ``budget`` (seconds) applies to each benchmark.  With ``settle_size`` (the
    default) a certain change is followed until it is also certain whether it reaches the
    threshold; without, the first decision ends it.  ``seed`` to ``noise`` and ``duet`` (None:
    ``[run] duet`` of the configuration) are those of :class:`SessionSetup`; ``by_mode`` compares
    mode by mode, ``measure = "instructions"`` settles on instruction counts and ``location``
    chooses what of a run's samples it contributes (:meth:`Session.settle`).  See :class:`Session`.
    """
    if not 0 < alpha < 1:
        raise ConfigError(f"`alpha` must be in (0, 1), got {alpha!r}")
    specs = select_benchmarks(config, benchmarks)
    tools = [s.name for s in specs if s.format is not None]
    if tools and benchmarks:
        raise ConfigError(f"benchmark {tools[0]!r} reports through a tool; a sequential comparison "
                          "needs benchmarks with their own samples")
    specs = [s for s in specs if s.format is None]
    if not specs:
        raise ConfigError("no benchmark with its own samples to compare (tool benchmarks cannot be run sequentially)")
    if not (math.isfinite(threshold) and threshold >= 0):
        raise ConfigError(f"`threshold` must be a finite number >= 0, got {threshold!r}")
    check_pair_limits(min_pairs, max_pairs)
    check_value(measure, location)
    repo = Path(config.repo or config.root)
    ca = resolve_revisions(repo, a)
    cb = resolve_revisions(repo, b)
    if len(ca) != 1 or len(cb) != 1:
        raise ConfigError("compare --run needs two single revisions, not ranges")
    if ca[0].sha == cb[0].sha:
        raise ConfigError(f"{a!r} and {b!r} are the same commit ({ca[0].short}): nothing to compare")
    check_environment_size(config, noise, specs, [ca[0].short, cb[0].short])
    setup = SessionSetup(machine, config_name, seed, cache_dir, command, rebuild, noise,
                         duet=config.run.duet if duet is None else duet)
    rule = StopRule(threshold, alpha, budget, max_pairs, min_pairs)
    session = Session(config, store, setup, reporter=reporter, specs=specs,
                      plan={"a": ca[0].short, "b": cb[0].short, "threshold": threshold, "alpha": alpha,
                            "by_mode": by_mode, "measure": measure or "time", "location": location,
                            "budget": budget, "max_pairs": max_pairs, "benchmarks": [s.name for s in specs]})
    with session, campaign_status(store, session.campaign_id):
        return [session.settle(spec, ca[0], cb[0], rule, resolve_size=settle_size, by_mode=by_mode,
                               measure=measure, location=location) for spec in specs]


def check_value(measure: str | None, location: str) -> None:
    """``measure`` is None or ``"instructions"``, ``location`` one of the locations, and a location
    other than the mean goes with time only."""
    from ..stats.runs import LOCATIONS

    if measure not in (None, "instructions"):
        raise ConfigError(f"`measure` must be 'instructions', got {measure!r}")
    if location not in LOCATIONS:
        raise ConfigError(f"`location` must be one of {', '.join(LOCATIONS)}, got {location!r}")
    if measure is not None and location != "mean":
        raise ConfigError("`location` applies to time, not to instruction counts")


def check_pair_limits(min_pairs: int, max_pairs: int) -> None:
    """``min_pairs`` and ``max_pairs`` are integers with 2 <= min_pairs <= max_pairs."""
    if isinstance(min_pairs, bool) or not isinstance(min_pairs, int) or min_pairs < 2:
        raise ConfigError(f"`min_pairs` must be an integer >= 2, got {min_pairs!r}")
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < min_pairs:
        raise ConfigError(f"`max_pairs` must be an integer >= min_pairs ({min_pairs}), got {max_pairs!r}")


def exact_decision(x: Sequence[float], rule: StopRule) -> SequentialDecision | None:
    """The decision on a measure that did not vary at all: with at least ``min_n`` observations
    all exactly equal (instruction counts of a deterministic program), the change is that value,
    known without error; None otherwise (the confidence sequence decides).

    A Gaussian confidence sequence is undefined without spread; a count that repeats to the last
    instruction in every pair is not noisy, and more pairs would only repeat it.
    """
    from ..stats.sequential import ConfidenceSequence, SequentialDecision

    if len(x) < rule.min_n or max(x) != min(x):
        return None
    r = float(x[0])
    if r == 0 and rule.threshold == 0:
        return None  # with a threshold of 0, "no change" is never decided
    decision = "changed" if r != 0 else "no change"
    cs = ConfidenceSequence(len(x), r, r, r, rule.alpha, 0.0)
    return SequentialDecision(decision, len(x), math.expm1(r), math.expm1(r), math.expm1(r), rule.threshold,
                              rule.alpha, cs)


def low_location_words(direction: str) -> str:
    """What ``location="low"`` compares, in words, for a benchmark of ``direction``
    (:func:`run_value`)."""
    from ..stats.runs import LOW_QUANTILE

    if direction == "lower":
        return f"runs' {LOW_QUANTILE:.0%} quantiles (a floor: interference only adds time)"
    return (f"runs' {1 - LOW_QUANTILE:.0%} quantiles (the floor of the time a throughput inverts: "
            "interference only lowers it)")


def run_value(spec: BenchmarkSpec, outcome: RunOutcome, value: str | None = None) -> float | None:
    """What one run contributes to a sequential comparison; None if it failed or is not positive.

    ``value`` None: the mean of its measured samples (after warm-up); ``"median"`` or ``"low"``:
    their median or :data:`~regbench.stats.runs.LOW_QUANTILE` quantile; ``"instructions"``:
    the run's instruction count.  ``"low"`` is the floor that interference hardly moves, so for a
    benchmark where higher is better (a throughput) it is the ``1 - LOW_QUANTILE`` quantile: the
    floor of the time it inverts, as detection searches a throughput (docs/detection.md, point
    0); its 10% quantile would be the slow tail, which moves with the interference.
    """
    if outcome.status != "ok":
        return None
    if value == "instructions":
        count = outcome.measures.get(value)
        return float(count) if count is not None and count > 0 and math.isfinite(count) else None
    warm = auto_warmup(outcome.samples) if spec.warmup_auto else spec.warmup
    measured = outcome.samples[warm:]
    if measured.size == 0:
        return None
    result = run_location(measured, value or "mean", direction=spec.direction)
    return result if result > 0 and math.isfinite(result) else None
