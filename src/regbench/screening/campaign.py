"""``regbench screen``: run a design as a campaign, then estimate the options' effects.

Every row of the design is a configuration of the space (``[screen]``), stored as a regbench
configuration named after its levels (:func:`configuration_name`), so that the same
configuration in two designs (a fraction, then the full factorial) is one configuration in the
store and its runs are not made twice.  The runs go through the run core
(:class:`~regbench.run.core.TrialRunner`) like a campaign's:

- RMIT across configurations and versions (seed 004 s.2): round ``r`` holds the ``r``-th run of
  every (configuration, version), shuffled with the recorded seed, and rounds follow one another;
- every run is stored in its own transaction as it ends; a run that fails is stored with its
  status and left out of the estimates (a point that lost every run is left out of the fit);
- running the same command again resumes: the runs already stored for a configuration, version
  and machine are not run again, whatever their status; with ``retry_failed``, those that failed
  are (at new run indices, the failed runs staying stored), as a campaign's are: the slots are
  the run core's (:func:`regbench.run.campaign.run_slots`);
- a configuration that breaks a constraint is never run: it is reported, and the effects are
  fitted to the others (least squares, :mod:`regbench.screening.effects`).

How an option reaches the benchmark: ``env`` sets a variable, ``arg`` appends an argument to the
command, ``template`` renders the ``[screen] template`` file per configuration (its path in the
template's variable), ``build`` appends an argument to the ``[project] build`` command: each
combination of the build options' levels (a *build variant*) gets its own checkout of every
version and its own build, recorded under its own command, and the configurations of that
variant run in it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import secrets
import shlex
import string
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..config import BenchmarkSpec, NoiseControl, ProjectConfig
from ..errors import ConfigError
from ..model import RUN_STATUSES
from ..run import noise as _noise
from ..run.campaign import RunSlots, StoredFailures, run_slots
from ..run.core import (Executor, PlannedVersion, ReadyVersion, RunContext, Trial, TrialReporter, TrialRunner,
                        campaign_status, default_cache_dir, plan_versions, prepare_version, record_versions,
                        store_dir)
from ..run.executor import LocalExecutor
from ..run.fingerprint import default_machine_name, machine_fingerprint
from ..run.versions import Worktrees, build_key
from .base import DesignMatrix
from .effects import (EffectsResult, Term, Type3Result, confounded_with, estimable_terms, estimate_effects,
                      type3_anova)
from .levels import LevelAnova, level_anova
from .recalibrate import EffectChange, compare_effects
from .space import ConfigurationSpace, Level, configurations, name_level
from .suite import SuiteValidation
from .terms import design_terms

if TYPE_CHECKING:
    from ..store import Store

SCHEDULE = "screen-rmit-rounds"
#: Longest configuration name made of levels; a longer one is named by its hash.
MAX_NAME = 200


@dataclass(frozen=True)
class ScreenPoint:
    """One row of the design as a configuration.

    ``violated`` lists the constraints it breaks (it is then never run).
    """

    row: int
    levels: Mapping[str, Level]
    name: str
    violated: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.violated


@dataclass(frozen=True)
class VersionEffects:
    """The effects estimated from one version's runs (None with the reason when they cannot be),
    and the Type III analysis of the same model (None when no residual is left).  For a design
    with an option of more than two levels, ``effects`` is None and ``levels`` holds the analysis
    of variance with the options as categorical factors (:mod:`regbench.screening.levels`).
    ``measured`` is False when no run of the design succeeded at the version (all failed, now or
    in an earlier invocation): the screen found nothing there.  ``missing`` names the
    configurations without a run because their build variant did not build at the version (each
    with the variant's label, :attr:`FailedBuild.label`): the effects are estimated from the
    others, and ``reason`` names those no longer estimable and what they are confounded with.
    ``configurations`` are the configurations with a successful run the estimates come from."""

    version: str
    effects: EffectsResult | None
    reason: str = ""
    anova: Type3Result | None = None
    levels: LevelAnova | None = None
    measured: bool = True
    missing: tuple[tuple[str, str], ...] = ()
    configurations: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Recalibration:
    """The effects of one version against the previous one's (seed 002 s.4.8)."""

    before: str
    after: str
    changes: tuple[EffectChange, ...]


@dataclass(frozen=True)
class FailedBuild:
    """A version that did not build in one build variant: the configurations of that variant
    were not run at that version.

    Attributes
    ----------
    version : str
    variant : tuple of (str, str)
        The build options' levels of the variant, rendered (``(("opt", "-fbogus"),)``); empty
        without build options.
    status : str
        The build's status (``failed``, ``timeout``).
    cached : bool
        The failure was recorded by an earlier command and not tried again (``rebuild`` does).
    log_tail : str or None
        The end of the build's log.
    """

    version: str
    variant: tuple[tuple[str, str], ...] = ()
    status: str = "failed"
    cached: bool = False
    log_tail: str | None = None

    @property
    def label(self) -> str:
        """``80faee2d33 (opt=-fbogus)``: the version, and the variant when there are build options."""
        levels = ",".join(f"{name}={name_level(level)}" for name, level in self.variant)
        return f"{self.version} ({levels})" if levels else self.version


@dataclass(frozen=True)
class ScreenResult:
    """What ``regbench screen`` did and found.

    Attributes
    ----------
    design : DesignMatrix
    points : tuple of ScreenPoint
        Every row, valid or not.
    benchmark : str
    campaign_id, seed : int
    machine : str
    counts : Mapping[str, int]
        Runs stored by this campaign, by status.
    trials_skipped : int
        Runs not made because they were stored before (resume, or another design).
    builds_failed : tuple of str
        Versions that did not build (not run), in one build variant at least.
    effects : tuple of VersionEffects
        Per version that built in one build variant at least, in history order (a version that
        did not build in some variants has the effects of the others' configurations).
    recalibration : tuple of Recalibration
        Each version with effects against the previous one with effects.
    build_failures : tuple of FailedBuild
        Each version and build variant that did not build.
    failed_earlier : int
        Runs stored before this campaign that failed and that ``retry_failed`` would run again
        (0 when it did).
    retried : int
        Runs this campaign added with ``retry_failed`` for earlier runs that had failed.
    """

    design: DesignMatrix
    points: tuple[ScreenPoint, ...]
    benchmark: str
    campaign_id: int
    seed: int
    machine: str
    counts: Mapping[str, int]
    trials_skipped: int
    builds_failed: tuple[str, ...]
    effects: tuple[VersionEffects, ...]
    recalibration: tuple[Recalibration, ...] = ()
    build_failures: tuple[FailedBuild, ...] = ()
    failed_earlier: int = 0
    retried: int = 0

    @property
    def failed_runs(self) -> int:
        return sum(n for status, n in self.counts.items() if status != "ok")

    @property
    def ok(self) -> bool:
        """True when every run of this invocation succeeded, every version built, and every
        version has a successful run to estimate from (a resumed screen whose stored runs all
        failed found nothing: not ok)."""
        return not self.failed_runs and not self.builds_failed and all(ve.measured for ve in self.effects)


def configuration_name(levels: Mapping[str, Level], space: ConfigurationSpace) -> str:
    """``journal=wal,sync=off`` (options in the space's order; a level containing ``,`` or ``=``
    quoted, :func:`~regbench.screening.space.name_level`, so that two configurations are never
    written alike); a name longer than :data:`MAX_NAME` is ``screen-`` and 16 hex digits of its
    hash (the levels are kept with the configuration in the store either way)."""
    name = ",".join(f"{o.name}={name_level(levels[o.name])}" for o in space.options)
    if len(name) <= MAX_NAME:
        return name
    return "screen-" + hashlib.sha256(name.encode()).hexdigest()[:16]


def plan_points(space: ConfigurationSpace, design: DesignMatrix) -> list[ScreenPoint]:
    """The design's rows as configurations, each with the constraints it breaks."""
    if design.k != len(space.options):
        raise ConfigError(f"the design has {design.k} factors but [screen] has {len(space.options)} options")
    return [ScreenPoint(row=i, levels=levels, name=configuration_name(levels, space), violated=space.violated(levels))
            for i, levels in enumerate(configurations(space, design.levels))]


def applied_spec(spec: BenchmarkSpec, space: ConfigurationSpace, point: ScreenPoint, *,
                 template_dir: Path | None, root: Path) -> BenchmarkSpec:
    """``spec`` as it runs in ``point``'s configuration (a new spec; the configured one is never
    changed): variables set, arguments appended, the template rendered."""
    env = dict(spec.env)
    command = list(spec.command)
    placeholders: dict[str, str] = {}
    for o in space.options:
        value = o.render(point.levels[o.name])
        if o.apply == "env":
            env[o.target] = value
        elif o.apply == "arg":
            command.append(o.target.replace("{value}", value))
        elif o.apply == "template":
            placeholders[o.name] = value
        # ``build`` options reach the build command instead (:func:`build_args`)
    if space.template is not None:
        assert template_dir is not None
        env[space.template.env] = str(_render(space, placeholders, point, template_dir, root))
    return dataclasses.replace(spec, env=env, command=tuple(command))


def variant_levels(space: ConfigurationSpace, point: ScreenPoint) -> tuple[tuple[str, str], ...]:
    """The levels of ``point``'s build options, rendered: its build variant, as people name it
    (``(("opt", "-O2"),)``; empty without build options)."""
    return tuple((o.name, o.render(point.levels[o.name])) for o in space.options if o.apply == "build")


def build_args(space: ConfigurationSpace, point: ScreenPoint) -> tuple[str, ...]:
    """The arguments ``point``'s build options add to the ``[project] build`` command, in the
    options' order: its build variant (empty without build options)."""
    return tuple(o.target.replace("{value}", o.render(point.levels[o.name])) for o in space.options
                 if o.apply == "build")


def _render(space: ConfigurationSpace, placeholders: Mapping[str, str], point: ScreenPoint,
            template_dir: Path, root: Path) -> Path:
    assert space.template is not None
    source = root / space.template.source
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"[screen] `template`: cannot read {source}: {exc}") from None
    try:
        rendered = string.Template(text).substitute(placeholders)
    except KeyError as exc:
        raise ConfigError(f"[screen] `template` {source.name}: ${{{exc.args[0]}}} is not an option applied "
                          "through the template") from None
    except ValueError as exc:
        raise ConfigError(f"[screen] `template` {source.name}: {exc}") from None
    folder = template_dir / hashlib.sha256(point.name.encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / source.name.removesuffix(".in")
    path.write_text(rendered, encoding="utf-8")
    return path


def run_screen(config: ProjectConfig, store: Store, design: DesignMatrix, *, benchmark: str | None = None,
               revisions: str | None = None, runs: int = 3, seed: int | None = None, machine: str | None = None,
               noise: NoiseControl | None = None, order: int = 2, alias_order: int = 3,
               confidence_level: float = 0.95, reporter: TrialReporter | None = None,
               command: str | None = None, cache_dir: Path | None = None,
               terms: Sequence[Term] | None = None, executor: Executor | None = None,
               retry_failed: bool = False, rebuild: bool = False) -> ScreenResult:
    """Run every valid configuration of ``design`` ``runs`` times per version, then estimate
    the effects per version (``terms``: the model, default every effect up to ``order`` the
    design estimates, :func:`regbench.screening.terms.design_terms`; ``executor``: where the runs
    are made, default one at a time here, :class:`~regbench.run.executor.LocalExecutor`; the
    caller closes one it gives).  ``retry_failed`` and ``rebuild`` mean what they mean to
    :func:`regbench.run.campaign.run_campaign`: run again, at new run indices, the runs of a
    configuration and version that failed earlier (they stay stored); build again every version
    of every build variant that has runs to do, even where a build (a failed one) is recorded
    (only those are checked out and built, ``rebuild`` or not).

    Raises
    ------
    ConfigError
        No ``[screen]`` table, an unknown or ambiguous benchmark, a benchmark of a tool's format,
        an option applied as a build flag without a ``[project] build`` command or without git
        versions to check out, an unreadable template, a benchmark requiring a tag that no worker
        of the executor offers (:meth:`~regbench.run.core.Executor.refused`); before anything is
        written.
    """
    space = config.screen
    if space is None:
        raise ConfigError(f"{config.path or 'regbench.toml'}: no [screen] table: `regbench screen` needs a "
                          "configuration space ([[screen.option]] tables)")
    spec = screened_benchmark(config, benchmark)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ConfigError(f"`runs` must be a positive integer, got {runs!r}")
    points = plan_points(space, design)
    valid = [p for p in points if p.valid]
    if not valid:
        raise ConfigError("every configuration of the design breaks a constraint: nothing to run")
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir(config, store)
    template_dir = cache_dir.parent / "screen-files"
    specs = {p.name: applied_spec(spec, space, p, template_dir=template_dir, root=config.root) for p in valid}
    ignore = [q for q in (store_dir(store), cache_dir) if q is not None]
    versions = plan_versions(Path(config.repo or config.root), revisions, ignore=ignore)
    variants = list(dict.fromkeys(build_args(space, p) for p in valid))
    flagged = [o.name for o in space.options if o.apply == "build"]
    if flagged and not config.build:
        raise ConfigError(f"[[screen.option]] {flagged[0]!r} is applied as a build flag (`build`), but "
                          "[project] has no `build` command to add it to")
    if flagged and any(v.commit is None for v in versions):
        raise ConfigError(f"[[screen.option]] {flagged[0]!r} is applied as a build flag: each build variant needs "
                          "its own checkout, so give --versions (git revisions), not the working tree")
    noise = noise if noise is not None else config.noise
    noise_facts = _noise.check_noise(noise)
    remote = executor.machines() if executor is not None else {}
    # On a Dask cluster whose workers are one machine, the runs are stored under it, where they
    # are made (as a campaign's); on several, under this one (docs/screening.md: not blocked by
    # machine), with the machines named in the plan.
    machine = machine or (next(iter(remote)) if len(remote) == 1 else default_machine_name())
    seed = int(seed) if seed is not None else secrets.randbits(32)
    plan = {
        "schedule": SCHEDULE, "benchmark": spec.name, "runs": runs, "design": design.label(),
        "generators": list(design.generator_texts()), "configurations": [p.name for p in valid],
        "excluded": [p.name for p in points if not p.valid], "versions": [v.name for v in versions],
        "executor": executor.name if executor is not None else "local",
        "noise": {**noise.to_json(), **noise_facts},
    }
    if flagged:
        plan["builds"] = [list((*(config.build or ()), *v)) for v in variants]
    # A screen measures one benchmark: if no machine can run it (a tag of its `requires` that
    # no Dask worker offers), nothing starts and nothing is stored.
    refused = executor.refused([spec]) if executor is not None else {}
    if refused:
        raise ConfigError(refused[spec.name] + ": nothing was run or stored")
    if remote:
        # The workers' machines, with their fingerprints: the runs are stored under ``machine``
        # (the effects are estimated on one series per configuration), and this says where they
        # were made (seed 002 s.2: Skoll's clients report what they run on).
        plan["machines"] = {name: remote[name] for name in sorted(remote)}
    campaign_id = store.start_campaign(seed=seed, machine=machine, fingerprint=remote.get(machine) or machine_fingerprint(),
                                       command=command if command is not None else shlex.join(sys.argv), plan=plan)
    with contextlib.ExitStack() as cleanup, campaign_status(store, campaign_id):
        if executor is None:
            executor = cleanup.enter_context(LocalExecutor())
        # The versions with their tags and branches (and generations where committer dates tie),
        # as a campaign records them.
        record_versions(store, config, versions)

        def named(conn) -> None:
            for p in valid:  # the levels travel with the configuration's name
                store.ensure_config(conn, p.name, params={k: v for k, v in p.levels.items()})

        store.write(named)  # waits for other writers of the store
        contexts = {p.name: RunContext(store, campaign_id, machine, p.name, noise, executor) for p in valid}
        failures = StoredFailures.read(store)  # once, for every configuration
        slots = {p.name: run_slots(contexts[p.name], [specs[p.name]], {spec.name: runs}, retry_failed=retry_failed,
                                   failures=failures) for p in valid}
        # One checkout and build of every version per build variant: a build made with other
        # flags in the same tree would be overwritten by the next.  Only where a configuration
        # of the variant has runs to do at the version, as a campaign builds (with --rebuild
        # too): a screen that resumes a finished one builds nothing.
        ready: dict[tuple[str, ...], list[ReadyVersion]] = {}
        build_failures: list[FailedBuild] = []
        for variant in variants:
            members = [p for p in valid if build_args(space, p) == variant]
            needed = [v for v in versions if any(slots[p.name].have(spec.name, v.name) < runs for p in members)]
            built = dataclasses.replace(config, build=(*(config.build or ()), *variant)) if variant else config
            levels = variant_levels(space, members[0])
            trees = cleanup.enter_context(Worktrees(Path(config.repo or config.root), cache_dir, keep=config.build_cache))
            ready[variant], lost = _prepare(store, built, needed, cache_dir, trees, rebuild=rebuild, variant=levels)
            build_failures.extend(lost)
            if built.build:
                # A version with nothing to do is reported with its recorded build, if any.
                for v in versions:
                    recorded = store.get_build(v.name, build_key(built.build)) if v not in needed else None
                    if recorded is not None and recorded.status != "ok":
                        build_failures.append(FailedBuild(v.name, levels, recorded.status, True, recorded.log_tail))
        failed = list(dict.fromkeys(f.version for f in build_failures))
        # By version, the configurations whose build variant did not build there (not run).
        unbuilt: dict[str, dict[str, str]] = {}
        for f in build_failures:
            for p in valid:
                if variant_levels(space, p) == f.variant:
                    unbuilt.setdefault(f.version, {})[p.name] = f.label
        rounds = _run_rounds(contexts, slots, spec.name, valid, specs,
                             {p.name: ready[build_args(space, p)] for p in valid}, [v.name for v in versions], runs,
                             seed, reporter, executor, retry_failed=retry_failed)
    if terms is None:
        terms = (design_terms(design, space.names, order=order, alias_order=alias_order)
                 if all(n == 2 for n in design.level_counts) else [])
    # A version that did not build in some variants still has the effects of the others'
    # configurations (least squares on the runs made); one that built in none has none.
    effects = tuple(version_effects(store, design, points, terms, benchmark=spec.name, version=v.name,
                                    machine=machine, confidence_level=confidence_level, order=order,
                                    space=space, unbuilt=unbuilt.get(v.name))
                    for v in versions if len(unbuilt.get(v.name, ())) < len(valid))
    with_effects = [ve for ve in effects if ve.effects is not None]
    recalibration = tuple(r for a, b in zip(with_effects, with_effects[1:])
                          if (r := _recalibrate(store, design, points, terms, a, b, benchmark=spec.name,
                                                machine=machine, confidence_level=confidence_level)) is not None)
    return ScreenResult(design=design, points=tuple(points), benchmark=spec.name, campaign_id=campaign_id,
                        seed=seed, machine=machine, counts=rounds.counts, trials_skipped=rounds.skipped,
                        builds_failed=tuple(failed), effects=effects, recalibration=recalibration,
                        build_failures=tuple(build_failures), failed_earlier=rounds.failed_earlier,
                        retried=rounds.retried)


def _recalibrate(store: Store, design: DesignMatrix, points: Sequence[ScreenPoint], terms: Sequence[Term],
                 a: VersionEffects, b: VersionEffects, *, benchmark: str, machine: str,
                 confidence_level: float) -> Recalibration | None:
    """``b``'s effects against ``a``'s, both estimated from the configurations measured at both:
    where one version lacks configurations (a build variant that did not build, runs that all
    failed), its estimate of ``x`` can be ``x`` minus ``x*b`` where the other's is ``x``, and
    their difference a change of the model, not of the software.  None when the configurations
    in common estimate no effect."""
    assert a.effects is not None and b.effects is not None
    if a.configurations == b.configurations:
        return Recalibration(a.version, b.version, compare_effects(a.effects, b.effects))
    common = a.configurations & b.configurations
    again = [version_effects(store, design, points, terms, benchmark=benchmark, version=ve.version,
                             machine=machine, confidence_level=confidence_level, only=common).effects
             for ve in (a, b)]
    if again[0] is None or again[1] is None:
        return None
    try:
        return Recalibration(a.version, b.version, compare_effects(again[0], again[1]))
    except ConfigError:  # no effect in common
        return None


def screened_benchmark(config: ProjectConfig, name: str | None) -> BenchmarkSpec:
    """The benchmark a screen measures: ``name``, or the only one configured; a one-line
    ConfigError for none, several without a name, a tool's, or a Python benchmark where options
    are command-line arguments."""
    if name is None:
        if len(config.benchmarks) != 1:
            raise ConfigError(f"{config.path or 'regbench.toml'}: give --benchmark NAME: screening measures one "
                              f"benchmark ({len(config.benchmarks)} are configured)")
        spec = config.benchmarks[0]
    else:
        spec = config.benchmark(name)
    if spec.format is not None:
        raise ConfigError(f"benchmark {spec.name!r}: screening needs a benchmark with its own samples, "
                          "not a tool `format`")
    if spec.kind != "command" and config.screen is not None and any(o.apply == "arg" for o in config.screen.options):
        raise ConfigError(f"benchmark {spec.name!r} is a Python benchmark: options applied as command-line "
                          "arguments (`arg`) need a command benchmark")
    return spec


def _prepare(store: Store, config: ProjectConfig, versions: Sequence[PlannedVersion], cache_dir: Path,
             trees: Worktrees, *, rebuild: bool, variant: tuple[tuple[str, str], ...]
             ) -> tuple[list[ReadyVersion], list[FailedBuild]]:
    """Every version checked out and built in one build variant (``config``'s build command is
    the variant's); the versions ready, and those that did not build."""
    ready: list[ReadyVersion] = []
    failed: list[FailedBuild] = []
    for v in versions:
        prepared = prepare_version(store, config, v, cache_dir=cache_dir, rebuild=rebuild, trees=trees)
        if prepared.ready is None:
            failed.append(FailedBuild(v.name, variant, prepared.status, prepared.cached, prepared.log_tail))
        else:
            ready.append(prepared.ready)
    return ready, failed


@dataclass(frozen=True)
class _Rounds:
    """What :func:`_run_rounds` did (the fields of :class:`ScreenResult` of the same names)."""

    counts: dict[str, int]
    skipped: int
    failed_earlier: int
    retried: int


def _run_rounds(contexts: Mapping[str, RunContext], slots: Mapping[str, RunSlots], benchmark: str,
                points: Sequence[ScreenPoint], specs: Mapping[str, BenchmarkSpec],
                ready: Mapping[str, Sequence[ReadyVersion]], versions: Sequence[str], runs: int, seed: int,
                reporter: TrialReporter | None, executor: Executor, *, retry_failed: bool = False) -> _Rounds:
    """RMIT rounds over (configuration, version) pairs, all handed to the executor at once (a
    Dask cluster runs them in parallel); each run stored as it comes back.  ``ready``: by
    configuration, the versions built for it (its build variant's: those with runs to do).

    What is stored is counted as a campaign counts it (``slots``, by configuration:
    :func:`regbench.run.campaign.run_slots`): a (configuration, version) lacks the runs it has
    fewer than ``runs`` of, a failed one counting as done unless ``retry_failed``; round ``r``
    holds the ``r``-th run of each, stored at the first free run index."""
    runners = {p.name: TrialRunner(contexts[p.name], ready[p.name], reporter) for p in points}
    todo: list[tuple[int, str, str, int]] = []  # (round, configuration, version, run index)
    skipped = lacking = retried = 0
    for p in points:
        built = {v.name for v in ready[p.name]}
        nominal: list[Trial] = []
        for version in versions:
            have = slots[p.name].have(benchmark, version)
            lost = slots[p.name].lost(benchmark, version)
            if not retry_failed:
                lacking += lost
            elif version in built:
                retried += lost
            skipped += min(have, runs)
            if version in built:
                nominal.extend(Trial(benchmark, version, r) for r in range(have, runs))
        todo.extend((t.run_index, p.name, t.version, placed.run_index)
                    for t, placed in zip(nominal, slots[p.name].place(nominal), strict=True))
    rng = np.random.default_rng(seed)
    # Canonical order first, so the shuffle depends only on the set of trials and the seed.
    todo.sort()
    ordered: list[tuple[int, str, str, int]] = []
    for r in sorted({t[0] for t in todo}):
        block = [t for t in todo if t[0] == r]
        ordered.extend(block[k] for k in rng.permutation(len(block)))
    counts = dict.fromkeys(RUN_STATUSES, 0)
    requests = [runners[name].request(Trial(benchmark, version, index), specs[name])
                for _, name, version, index in ordered]
    owner = {id(req): name for req, (_, name, _, _) in zip(requests, ordered, strict=True)}
    for request, outcome in executor.map(requests, started=_started(reporter)):
        # The configuration's own runner stores it (its RunContext names the configuration).
        runner = runners[owner[id(request)]]
        if runner.store_outcome(request, outcome):
            counts[outcome.status] += 1
        else:
            skipped += 1
    return _Rounds(counts, skipped, lacking, retried)


def _started(reporter: TrialReporter | None):
    if reporter is None:
        return None

    def started(request) -> None:
        t = request.trial
        reporter.trial_started(t.benchmark, t.version, t.run_index)

    return started


def version_effects(store: Store, design: DesignMatrix, points: Sequence[ScreenPoint], terms: Sequence[Term], *,
                    benchmark: str,
                    version: str, machine: str, confidence_level: float = 0.95, order: int = 2,
                    space: ConfigurationSpace | None = None, unbuilt: Mapping[str, str] | None = None,
                    only: Collection[str] | None = None) -> VersionEffects:
    """The effects of one version from the stored runs of the design's valid points: each
    successful run is one response, the mean of its measured samples (runs are the unit of
    replication, seed 000 s.2).  A design with an option of more than two levels is analysed
    by :func:`regbench.screening.levels.level_anova` (options as factors, two-option
    interactions at ``order`` 2 and above; ``space`` names the options and their levels).

    ``unbuilt``: the configurations whose build variant did not build at ``version`` (each with
    the variant's label); those without runs are named in the result's ``missing``, and the
    effects are fitted to the others (least squares on the remaining runs: the terms they still
    estimate, the others named with what they are confounded with).  ``only``: the
    configurations to use (recalibration compares two versions on those both measured)."""
    names = {p.name for p in points if p.valid and (only is None or p.name in only)}
    per_config: dict[str, list[float]] = {}
    for series in store.load_series(benchmark, machine=machine, versions=[version]):
        if series.config in names and series.runs:
            runs = [float(np.mean(r)) for r in series.runs[0] if r.size]
            if runs:
                per_config[series.config] = runs
    responses = [per_config.get(p.name, []) for p in points]
    missing = tuple((name, label) for name, label in (unbuilt or {}).items() if name not in per_config)
    measured = frozenset(per_config)
    if not any(responses):
        return VersionEffects(version, None, "no successful run", measured=False, missing=missing)
    if any(n != 2 for n in design.level_counts):
        if space is None:
            raise ValueError("a design with more than two levels needs the space to name the levels")
        try:
            levels = level_anova(design.levels, responses, space.names,
                                 [[o.render(x) for x in o.levels] for o in space.options],
                                 order=min(order, 2), confidence_level=confidence_level)
        except ConfigError as exc:
            return VersionEffects(version, None, str(exc), missing=missing, configurations=measured)
        return VersionEffects(version, None, levels=levels, missing=missing, configurations=measured)
    with_runs = np.array([bool(r) for r in responses])
    kept = estimable_terms(design.coded[with_runs], terms)
    lost = [t for t in terms if t not in kept]
    reason = ""
    if lost:
        confounded = confounded_with(design.coded[with_runs], kept, lost)
        # What the configurations run no longer separate: the estimate of a kept term is its
        # effect plus or minus theirs, so they join its aliases.
        kept = [dataclasses.replace(t, aliases=(*t.aliases, *(n for n, c in confounded.items() if c == t.name)))
                for t in kept]
        reason = (f"{len(lost)} effects not estimable from the configurations run: "
                  + ", ".join(f"{n} (confounded with {c})" for n, c in confounded.items()))
    try:
        anova = type3_anova(design.coded, responses, kept)
    except ConfigError:
        anova = None
    try:
        return VersionEffects(version, estimate_effects(design.coded, responses, kept,
                                                        confidence_level=confidence_level),
                              reason, anova, missing=missing, configurations=measured)
    except ConfigError as exc:
        return VersionEffects(version, None, str(exc), missing=missing, configurations=measured)


def plan_json(points: Sequence[ScreenPoint]) -> str:
    """The design's configurations as JSON lines (``--dry-run``)."""
    return "\n".join(json.dumps({"row": p.row, "configuration": p.name, "levels": dict(p.levels),
                                 "valid": p.valid, "violated": list(p.violated)}) for p in points)


def parse_terms(texts: Sequence[str], space: ConfigurationSpace) -> list[Term]:
    """``["journal*sync", ...]`` as terms over ``space``'s options (one-line error for an unknown
    option, a repeated one, or an interaction given twice)."""
    out = []
    given: dict[tuple[int, ...], str] = {}
    for text in texts:
        names = [n.strip() for n in text.split("*")]
        factors = tuple(sorted(space.names.index(space.option(n).name) for n in names))
        if len(set(factors)) != len(factors):
            raise ConfigError(f"term {text!r}: an option appears twice")
        if len(factors) == 1:
            # It was taken, and made the model singular (D-efficiency 0.000), with nothing said.
            raise ConfigError(f"term {text!r} is a main effect, always in the model: --term names an interaction "
                              f"(such as {space.names[factors[0]]}*OTHER)")
        if factors in given:
            # Two equal columns made the model singular, said as "not estimable (D-efficiency 0)".
            raise ConfigError(f"term {text!r} is the interaction {given[factors]!r} again (the order of the options "
                              "does not matter): give each --term once")
        given[factors] = text
        out.append(Term(factors, "*".join(space.names[f] for f in factors)))
    return out


def augmented_design(space: ConfigurationSpace, base: DesignMatrix, terms: Sequence[Term], n_add: int, *,
                     seed: int = 0) -> DesignMatrix:
    """``base``'s valid rows followed by ``n_add`` rows chosen D-optimal for ``terms`` under the
    constraints (seed 002 s.3.5 and s.4.5: a follow-up that separates aliased effects).  The same
    seed gives the same rows, so the same command resumes the same design."""
    from .doptimal import augment, first_of_each, free_configurations

    if any(n != 2 for n in base.level_counts):
        raise ConfigError("a D-optimal follow-up needs two-level options")
    valid_rows = np.array([space.valid(p.levels) for p in plan_points(space, base)])

    def valid(row: np.ndarray) -> bool:
        return space.valid({o.name: o.levels[int(v > 0)] for o, v in zip(space.options, row, strict=True)})

    # Distinct configurations: runs are stored by configuration, so an added row that repeats one
    # would count that configuration's runs twice in the analysis (a probe: 16 runs "already
    # stored" of 12, 12 residual degrees of freedom of 6, and an effect's p-value 0.126 -> 0.031).
    valid_rows &= first_of_each(base.coded)
    free = free_configurations(base.coded[valid_rows], valid)
    if free is None:
        pass  # too many options to count them: augment says so if it finds too few distinct ones
    elif free == 0:
        raise ConfigError(f"--augment {n_add}: every valid configuration is in the design already "
                          f"({int(valid_rows.sum())}); a follow-up has none to add")
    elif free < n_add:
        raise ConfigError(f"--augment {n_add}: the constraints leave {free} valid configuration"
                          f"{'' if free == 1 else 's'} outside the design: give --augment {free} at most")
    interactions = [t.name for t in terms if len(t.factors) > 1]
    model = f"{', '.join(interactions)} beside the main effects" if interactions else "the main effects"
    have, parameters = int(valid_rows.sum()), 1 + len(terms)  # the mean is always in the model
    if have + n_add < parameters:
        # Fewer configurations than parameters: no choice of rows could estimate the model.
        raise ConfigError(f"--augment {n_add}: the model ({model}) has {parameters} parameters with the mean, more "
                          f"than the design's {have} valid configuration{'' if have == 1 else 's'} and {n_add} more: "
                          f"give --augment {parameters - have} at least")
    result = augment(base.coded[valid_rows], terms, n_add, valid=valid, rng=seed, distinct=True)
    if not result.estimable:
        raise ConfigError(f"--augment {n_add}: the model ({model}) is not estimable from the design and {n_add} more "
                          f"configuration{'' if n_add == 1 else 's'} under the constraints (D-efficiency 0): a term is "
                          "confounded by them; " + ("drop it, or add more" if interactions else "add more"))
    return DesignMatrix(design="d-optimal", levels=((result.coded + 1) // 2).astype(np.int64),
                        level_counts=base.level_counts,
                        note=f"{int(valid_rows.sum())} valid runs of {base.label()} + {n_add} added, D-optimal for "
                             f"{len(terms)} terms (D-efficiency {result.d_efficiency:.3f})")


def config_means(store: Store, benchmark: str, *, version: str, machine: str) -> dict[str, float]:
    """Per stored configuration, the mean of its successful runs' means at ``version``."""
    out: dict[str, float] = {}
    for s in store.load_series(benchmark, machine=machine, versions=[version]):
        values = [float(np.mean(r)) for r in (s.runs[0] if s.runs else []) if r.size]
        if values:
            out[s.config] = float(np.mean(values))
    return out


@dataclass(frozen=True)
class SuiteCheck:
    """A suite's validation at one version (None with the reason when the full set is missing)."""

    version: str
    validation: SuiteValidation | None
    full_configurations: int
    reason: str = ""


def check_suite(store: Store, space: ConfigurationSpace, result: ScreenResult, *, samples: int = 1000,
                seed: int = 0) -> list[SuiteCheck]:
    """Validate the suite just run against the full set of valid configurations stored for the
    same benchmark, version and machine (run ``--design full`` first; seed 002 s.4.6-4.7)."""
    from .full_factorial import FullFactorial
    from .suite import validate_suite

    full = FullFactorial().build([len(o.levels) for o in space.options])
    names = [p.name for p in plan_points(space, full) if p.valid]
    suite_names = [p.name for p in result.points if p.valid]
    out = []
    for ve in result.effects:
        means = config_means(store, result.benchmark, version=ve.version, machine=result.machine)
        full_values = [means[n] for n in names if n in means]
        suite_values = [means[n] for n in suite_names if n in means]
        if len(full_values) < len(names):
            out.append(SuiteCheck(ve.version, None, len(full_values),
                                  f"{len(full_values)} of the {len(names)} valid configurations are measured: "
                                  "run `regbench screen --design full` first"))
            continue
        out.append(SuiteCheck(ve.version, validate_suite(suite_values, full_values, samples=samples, rng=seed),
                              len(full_values)))
    return out
