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
configuration and machine, whatever their status, are not run again.

Failures are results (DESIGN.md "Principles"): a run that crashes, hangs or prints garbage is
stored with that status; a version that fails to build is recorded in the ``build`` table and its
trials are skipped; the campaign goes on.

Noise control (``[noise]``, seed 003 s.3) is checked before anything is written and recorded in
the campaign's plan (``plan["noise"]``), so that results carry how they were measured.  With
``ramdisk``, each version's tree is copied to a tmpfs once per campaign, after the builds and
before the first run (see :func:`run_campaign`).  A benchmark's ``measures`` are stored with
each run, in its transaction, as the series ``NAME:MEASURE`` (:func:`record_outcome`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shlex
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from ..config import BenchmarkSpec, NoiseControl, ProjectConfig
from ..errors import ConfigError, DuplicateRunError
from ..model import DEFAULT_CONFIG, RUN_STATUSES, RunRecord, VersionInfo
from . import measures as _measures
from . import noise as _noise
from .execute import _NOTE, execute_run, no_counter_message, ramdisk_dir, run_environment
from .fingerprint import default_machine_name, machine_fingerprint
from .versions import Commit, build_version, prepare_tree, resolve_revisions, working_tree_version

SCHEDULE = "rmit-rounds"


class CampaignReporter(Protocol):
    """What a campaign tells about its progress (the CLI draws a progress bar with it)."""

    def builds_started(self, n: int) -> None: ...
    def build_done(self, version: str, status: str, cached: bool) -> None: ...
    def trials_started(self, total: int, skipped: int) -> None: ...
    def trial_started(self, benchmark: str, version: str, run_index: int) -> None: ...
    def trial_done(self, benchmark: str, version: str, run_index: int, status: str) -> None: ...
    def finished(self) -> None: ...


class NullReporter:
    """A :class:`CampaignReporter` that says nothing (the default)."""

    def builds_started(self, n: int) -> None:
        pass

    def build_done(self, version: str, status: str, cached: bool) -> None:
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
class Trial:
    """One run to do: the ``run_index``-th run of ``benchmark`` on ``version``."""

    benchmark: str
    version: str
    run_index: int


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
    adaptive: tuple = ()

    @property
    def runs_stored(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class _Version:
    name: str
    info: dict
    commit: Commit | None  # None: the working tree, used in place
    tree: Path | None  # the working tree's path, or None until checked out
    reusable_build: bool  # whether a recorded build result can describe this tree
    release: object = None  # a regbench.run.releases.Release: run in its own virtual environment


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


def run_campaign(config: ProjectConfig, store, *, revisions: str | None = None,
                 benchmarks: Sequence[str] | None = None, seed: int | None = None,
                 machine: str | None = None, config_name: str = DEFAULT_CONFIG,
                 runs: int | None = None, reporter: CampaignReporter | None = None,
                 rebuild: bool = False, command: str | None = None,
                 cache_dir: Path | None = None, releases: str | None = None,
                 noise: NoiseControl | None = None) -> CampaignResult:
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

    Returns
    -------
    CampaignResult

    Raises
    ------
    ConfigError
        An unknown benchmark, no benchmark at all, or a bad ``runs``; noise control that cannot
        be applied here; ``instructions`` to measure and neither perf nor callgrind to count
        them; a measure's series stored earlier in another unit.
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
    specs = _select(config, benchmarks)
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        raise ConfigError(f"`runs` must be a positive integer, got {runs!r}")
    repo = Path(config.repo or config.root)
    store_dir = _store_dir(store)
    cache_dir = Path(cache_dir) if cache_dir is not None else (store_dir or config.root / ".regbench") / "worktrees"
    if releases is not None:
        if revisions is not None:
            raise ConfigError("give --versions (git) or --releases (a package's releases), not both")
        from .releases import resolve_releases

        versions = [_Version(r.name, {"timestamp": r.uploaded}, None, config.root, False, r)
                    for r in resolve_releases(releases)]
    else:
        versions = _versions(repo, revisions, ignore=[p for p in (store_dir, cache_dir) if p is not None])

    noise = noise if noise is not None else config.noise
    noise_facts = _noise.check_noise(noise)
    counter = _instruction_counter(specs)
    _check_measure_units(store, specs, counter)
    runs_of = {s.name: s.pilot if s.plan == "adaptive" else runs if runs is not None else s.runs for s in specs}
    if noise.env_size is not None:
        _check_env_size(specs, versions, runs_of, noise.env_size)

    machine = machine or default_machine_name()
    seed = int(seed) if seed is not None else secrets.randbits(32)
    plan = {
        "schedule": SCHEDULE,
        "config": config_name,
        "revisions": revisions,
        "releases": releases,
        "versions": [v.name for v in versions],
        "build": list(config.build) if config.build else None,
        "python": config.python,
        "benchmarks": {s.name: {"kind": s.kind, "runs": runs_of[s.name], "iterations": s.iterations,
                                "warmup": "auto" if s.warmup_auto else s.warmup, "timeout": s.timeout,
                                "measures": list(s.measures),
                                **({"plan": "adaptive", "target": s.target_width, "budget": s.budget, "pilot": s.pilot}
                                   if s.plan == "adaptive" else {})} for s in specs},
        "noise": {**noise.to_json(), **noise_facts},
    }
    if counter is not None:
        plan["instruction_counter"] = counter
    campaign_id = store.start_campaign(seed=seed, machine=machine, fingerprint=machine_fingerprint(),
                                       command=command if command is not None else shlex.join(sys.argv),
                                       plan=plan)
    try:
        result = _execute(config, store, campaign_id=campaign_id, seed=seed, machine=machine,
                          config_name=config_name, specs=specs, runs_of=runs_of, versions=versions,
                          repo=repo, cache_dir=cache_dir, reporter=reporter, rebuild=rebuild,
                          noise=noise, ramdisk_base=noise_facts.get("ramdisk_dir"))
    except KeyboardInterrupt:
        _finish_quietly(store, campaign_id, "interrupted")
        raise
    except BaseException:
        _finish_quietly(store, campaign_id, "failed")
        raise
    store.finish_campaign(campaign_id, "finished")
    reporter.finished()
    return result


def _execute(config: ProjectConfig, store, *, campaign_id: int, seed: int, machine: str,
             config_name: str, specs: Sequence[BenchmarkSpec], runs_of: Mapping[str, int],
             versions: Sequence[_Version], repo: Path, cache_dir: Path, reporter: CampaignReporter,
             rebuild: bool, noise: NoiseControl, ramdisk_base: str | None) -> CampaignResult:
    # Version rows first, in history order, so that versions are ordered by history even where
    # timestamps tie.
    with store.engine.begin() as conn:
        for v in versions:
            store.ensure_version(conn, VersionInfo(v.name, **v.info))

    # Builds before trials: a trial never waits for a build, and timing is not disturbed by one.
    reporter.builds_started(len(versions) if config.build else 0)
    trees: dict[str, Path] = {}
    failed: list[str] = []
    envs: dict[str, Path] = {}
    for v in versions:
        if v.release is not None:
            from .releases import release_environment

            env, log = release_environment(v.release, cache_dir.parent / "venvs", python=config.python)
            store.record_build(VersionInfo(v.name, **v.info), "release-venv", status="ok" if env else "failed",
                               exit_code=None, log_tail=log or None, duration=None)
            reporter.build_done(v.name, "ok" if env else "failed", False)
            if env is None:
                failed.append(v.name)
                continue
            envs[v.name] = env
            trees[v.name] = v.tree
            continue
        if v.commit is None:
            tree, reusable = v.tree, v.reusable_build
        else:
            reusable = (cache_dir / v.commit.sha).is_dir()  # a fresh checkout has no build yet
            tree = prepare_tree(repo, v.commit, cache_dir)
        if config.build:
            built = build_version(store, version=v.name, tree=tree, argv=config.build,
                                  timeout=config.build_timeout, version_info=v.info,
                                  rebuild=rebuild, use_cache=reusable)
            reporter.build_done(v.name, built.status, built.cached)
            if built.status != "ok":
                failed.append(v.name)
                continue
        trees[v.name] = tree

    if noise.env_size is not None and envs:  # a release's virtual environment adds variables
        _check_env_size(specs, [v for v in versions if v.name in envs], runs_of, noise.env_size, envs)
    with contextlib.ExitStack() as cleanup:
        return _run_trials(config, store, campaign_id=campaign_id, seed=seed, machine=machine,
                           config_name=config_name, specs=specs, runs_of=runs_of, versions=versions,
                           reporter=reporter, noise=noise, trees=trees, envs=envs, failed=failed,
                           ramdisk_base=ramdisk_base, cleanup=cleanup)


def _run_trials(config: ProjectConfig, store, *, campaign_id: int, seed: int, machine: str,
                config_name: str, specs: Sequence[BenchmarkSpec], runs_of: Mapping[str, int],
                versions: Sequence[_Version], reporter: CampaignReporter, noise: NoiseControl,
                trees: Mapping[str, Path], envs: Mapping[str, Path], failed: Sequence[str],
                ramdisk_base: str | None, cleanup: contextlib.ExitStack) -> CampaignResult:
    existing = store.existing_run_keys(config=config_name, machine=machine)
    # A tool's benchmarks are stored as SPEC/NAME: an invocation is done when any of them is.
    tool_specs = [s.name for s in specs if s.format is not None]
    done = set(existing) | {(name, v, r) for b, v, r in existing for name in tool_specs if b.startswith(name + "/")}
    todo: list[Trial] = []
    skipped = unbuilt = 0
    for spec in specs:
        for v in versions:
            for r in range(runs_of[spec.name]):
                if v.name not in trees:
                    unbuilt += 1
                elif (spec.name, v.name, r) in (done if spec.format else existing):
                    skipped += 1
                else:
                    todo.append(Trial(spec.name, v.name, r))
    order = rmit_order(todo, seed)
    if ramdisk_base is not None:
        # The versions that still have runs to do, copied before the first run: those with trials,
        # and every built version of an adaptive benchmark (its rounds may add runs even when
        # the pilot is already stored).
        needed = {t.version for t in order}
        if any(s.plan == "adaptive" for s in specs):
            needed |= set(trees)
        trees = _ramdisk_trees({v: trees[v] for v in trees if v in needed}, specs, Path(ramdisk_base), cleanup)
    reporter.trials_started(len(order), skipped)

    by_name = {s.name: s for s in specs}
    info = {v.name: v.info for v in versions}
    counts = dict.fromkeys(RUN_STATUSES, 0)
    executed: list[Trial] = []

    def run_trial(trial: Trial, spec: BenchmarkSpec):
        """Run and store one trial; its outcome, or None when another campaign stored it first."""
        nonlocal skipped
        executed.append(trial)
        reporter.trial_started(trial.benchmark, trial.version, trial.run_index)
        env = envs.get(trial.version)
        if env is not None:
            from .releases import environment_variables, interpreter

            outcome = execute_run(spec, tree=trees[trial.version], python=interpreter(env),
                                  run_index=trial.run_index, version=trial.version,
                                  extra_env=environment_variables(env), noise=noise)
        else:
            outcome = execute_run(spec, tree=trees[trial.version], python=config.python,
                                  run_index=trial.run_index, version=trial.version, noise=noise)
        try:
            record_outcome(store, spec, trial, outcome, config_name=config_name, machine=machine,
                           campaign_id=campaign_id, version_info=info[trial.version])
        except DuplicateRunError:
            # Another campaign on the same store stored this trial meanwhile: keep the first.
            skipped += 1
            reporter.trial_done(trial.benchmark, trial.version, trial.run_index, "already stored")
            return None
        counts[outcome.status] += 1
        reporter.trial_done(trial.benchmark, trial.version, trial.run_index, outcome.status)
        return outcome

    for trial in order:
        run_trial(trial, by_name[trial.benchmark])

    adaptive = [s for s in specs if s.plan == "adaptive"]
    outcomes = ()
    if adaptive:
        from .adaptive import run_adaptive_rounds

        outcomes = run_adaptive_rounds(store, adaptive, [v.name for v in versions if v.name in trees],
                                       run_trial=run_trial, config_name=config_name, machine=machine,
                                       seed=seed, existing=existing)

    return CampaignResult(campaign_id=campaign_id, seed=seed, machine=machine, counts=counts,
                          builds_failed=tuple(failed), trials_skipped=skipped,
                          trials_unbuilt=unbuilt, versions=tuple(v.name for v in versions),
                          order=tuple(executed), adaptive=tuple(outcomes))


def record_outcome(store, spec: BenchmarkSpec, trial: Trial, outcome, *, config_name: str, machine: str,
                   campaign_id: int | None, version_info: dict) -> None:
    """Store what one run produced, in one transaction.

    Parameters
    ----------
    store : regbench.store.Store
    spec : BenchmarkSpec
        The benchmark that ran.
    trial : Trial
        Its benchmark (``spec.name``), version and run index.
    outcome : regbench.run.execute.RunOutcome
        What :func:`regbench.run.execute.execute_run` returned.
    config_name, machine : str
        The configuration and machine the run is stored under.
    campaign_id : int or None
        The campaign (or session) it belongs to.
    version_info : dict
        The version's ``commit``/``timestamp``/``timestamp_text``.

    Notes
    -----
    What is stored:

    - a benchmark tool's ``ok`` invocation (``spec.format``): one run per benchmark it reported,
      the series ``SPEC/NAME``, with the tool's unit and direction;
    - otherwise the run itself, with its samples and status (a failed tool invocation too);
    - each of ``spec.measures``: the series ``SPEC:MEASURE`` (unit from
      :func:`regbench.run.measures.measure_unit`, lower is better) with one sample, the value
      of the whole process.  When the run did not succeed, its measures are stored with the
      run's status and no sample (a failure shows in every series of the benchmark, and
      analyses count it); when the run succeeded but a measure could not be taken (a callgrind
      run that failed), that measure is stored with the measuring process's status and a note.

    Raises
    ------
    DuplicateRunError
        A run with the same key is already stored (nothing of this run is then written).
    """
    records: list[RunRecord] = []
    benchmarks: dict[str, dict] = {}
    if spec.format is not None and outcome.status == "ok":
        records, benchmarks = _tool_records(spec, trial, outcome, config_name=config_name, machine=machine,
                                            campaign_id=campaign_id)
    else:
        records.append(RunRecord(
            benchmark=spec.name, version=trial.version, run_index=trial.run_index,
            samples=outcome.samples, config=config_name, machine=machine, status=outcome.status,
            exit_code=outcome.exit_code, stderr_tail=outcome.stderr_tail or None,
            started_at=outcome.started_at, duration=outcome.duration,
            warmup=auto_warmup(outcome.samples) if spec.warmup_auto and outcome.status == "ok" else spec.warmup,
            campaign_id=campaign_id))
        benchmarks[spec.name] = {"unit": spec.unit, "direction": spec.direction}
    for m in spec.measures:
        name = f"{spec.name}:{m}"
        if m == "instructions" and outcome.instruction_counter is None:
            continue  # nothing counted them (the outcome does not come from execute_run)
        benchmarks[name] = {"unit": _measures.measure_unit(m, outcome.instruction_counter), "direction": "lower"}
        exit_code = outcome.exit_code
        if outcome.status != "ok":
            status, samples = outcome.status, ()
            note = f"the run of {spec.name!r} was {outcome.status}: see its stderr tail"
        elif m in outcome.measures:
            status, note, samples = "ok", None, (outcome.measures[m],)
        else:  # the run was fine; the process that measures it was not (its status and note)
            status, note = outcome.measure_failures.get(m, ("failed", f"{m} was not measured"))
            samples, exit_code = (), None
        records.append(RunRecord(
            benchmark=name, version=trial.version, run_index=trial.run_index,
            samples=np.asarray(samples, dtype=float), config=config_name, machine=machine, status=status,
            exit_code=exit_code, stderr_tail=_NOTE + note if note else None,
            started_at=outcome.started_at, duration=outcome.duration, warmup=0, campaign_id=campaign_id))
    store.add_runs(records, versions=[VersionInfo(trial.version, **version_info)], benchmarks=benchmarks)


def _tool_records(spec: BenchmarkSpec, trial: Trial, outcome, *, config_name: str, machine: str,
                  campaign_id: int | None) -> tuple[list[RunRecord], dict[str, dict]]:
    """The runs of one invocation of a benchmark tool: each benchmark the tool reported is the
    series ``SPEC/NAME`` (its unit and direction from the tool), and its samples in this
    invocation are one run (forks or repetitions inside one invocation are concatenated:
    regbench repeats the invocations itself, as fresh processes)."""
    grouped: dict[str, list] = {}
    for tr in outcome.tool_runs:
        grouped.setdefault(tr.benchmark, []).append(tr)
    records, benchmarks = [], {}
    for name, runs in grouped.items():
        full = f"{spec.name}/{name}"
        benchmarks[full] = {"unit": runs[0].unit, "direction": runs[0].direction}
        # Only a leading warm-up can stay one: the first part's warm-up is kept (and marked), the
        # warm-up of later parts (pyperf's other worker processes) is left out.
        samples = np.concatenate([runs[0].samples, *(r.samples[r.warmup:] for r in runs[1:])])
        records.append(RunRecord(
            benchmark=full, version=trial.version, run_index=trial.run_index,
            samples=samples, config=config_name, machine=machine,
            status="ok", exit_code=outcome.exit_code, stderr_tail=outcome.stderr_tail or None,
            started_at=outcome.started_at, duration=outcome.duration, warmup=runs[0].warmup,
            campaign_id=campaign_id))
    return records, benchmarks


def _instruction_counter(specs: Sequence[BenchmarkSpec]) -> str | None:
    """What counts instructions here, when a benchmark measures them (probed once per process)."""
    wanting = [s.name for s in specs if "instructions" in s.measures]
    if not wanting:
        return None
    counter = _measures.instruction_counter()
    if counter is None:
        raise ConfigError(no_counter_message(wanting[0]))
    return counter


def _check_measure_units(store, specs: Sequence[BenchmarkSpec], counter: str | None) -> None:
    """A measure's series stored in another unit (instructions counted by perf on one machine and
    by callgrind on another) would fail at the first run: say so before any."""
    stored = {b.name: b.unit for b in store.benchmarks()}
    for spec in specs:
        for m in spec.measures:
            name = f"{spec.name}:{m}"
            unit = _measures.measure_unit(m, counter)
            if stored.get(name) not in (None, unit):
                raise ConfigError(f"benchmark {spec.name!r}: its measure series {name!r} is stored in unit "
                                  f"{stored[name]!r}, but this machine measures {m} in {unit!r}"
                                  + (f" ({counter})" if m == "instructions" else "")
                                  + ": the counts are not comparable; use another benchmark name here")


def _check_env_size(specs: Sequence[BenchmarkSpec], versions: Sequence[_Version], runs_of: Mapping[str, int],
                    size: int, envs: Mapping[str, Path] | None = None) -> None:
    """Every run's environment fits in ``env_size`` (before the first run, not at the one that
    does not fit): checked with the longest run index."""
    envs = envs or {}
    for spec in specs:
        for v in versions:
            if spec.plan == "adaptive":
                # Its rounds add runs and choose the iterations: the longest index and count it
                # can reach (budgets aside) are what must fit.
                from .adaptive import MAX_RUNS

                spec = dataclasses.replace(spec, iterations=max(spec.iterations, 10**6))
                env = run_environment(spec, run_index=10 ** 6 if spec.budget else MAX_RUNS, version=v.name)
            else:
                env = run_environment(spec, run_index=max(runs_of[spec.name] - 1, 0), version=v.name)
            if v.name in envs:
                from .releases import environment_variables

                env.update(environment_variables(envs[v.name]))
            try:
                _noise.pad_environment(env, size)
            except ConfigError as exc:
                raise ConfigError(f"benchmark {spec.name!r} at version {v.name!r}: {exc}") from None


def _ramdisk_trees(trees: Mapping[str, Path], specs: Sequence[BenchmarkSpec], base: Path,
                   cleanup: contextlib.ExitStack) -> dict[str, Path]:
    """Each distinct version tree copied once to the tmpfs ``base`` (what the benchmarks need of
    it); the copies are removed when ``cleanup`` closes."""
    dirs = sorted({ramdisk_dir(s) for s in specs})
    copies: dict[Path, Path] = {}
    out = {}
    for name, tree in trees.items():
        key = Path(os.path.realpath(tree))
        if key not in copies:
            copies[key] = _noise.ramdisk_copy(key, dirs, base=base)
            cleanup.callback(_noise.remove_tree, copies[key])
        out[name] = copies[key]
    return out


def auto_warmup(samples: np.ndarray) -> int:
    """Warm-up iterations of one run found from its samples (``warmup = "auto"``).

    MSER-5 with its outlier clipping and bias check (:func:`regbench.stats.warmup.warmup_mser`,
    seed 001 s.2.2: no trial and error); at least two measured samples are always kept.  The
    samples are stored whole, so a later analysis can decide differently.
    """
    from ..stats.warmup import warmup_mser

    if samples.size < 10:
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        found = warmup_mser(samples).n_warmup
    return int(min(max(found, 0), samples.size - 2))


def _select(config: ProjectConfig, names: Sequence[str] | None) -> list[BenchmarkSpec]:
    if not config.benchmarks:
        raise ConfigError(f"{config.path or 'regbench.toml'}: no [[benchmark]] is configured")
    if not names:
        return list(config.benchmarks)
    return [config.benchmark(n) for n in dict.fromkeys(names)]


def _store_dir(store) -> Path | None:
    url = str(store.url)
    if url.startswith("sqlite:///") and not url.endswith(":memory:"):
        return Path(url[len("sqlite:///"):]).parent
    return None


def _versions(repo: Path, revisions: str | None, *, ignore: Sequence[Path]) -> list[_Version]:
    if revisions is None:
        wt = working_tree_version(repo, ignore=ignore)
        reusable = wt.head is not None and not wt.dirty
        return [_Version(wt.name, wt.version_info(), None, wt.path, reusable)]
    out: list[_Version] = []
    previous: datetime | None = None
    for c in resolve_revisions(repo, revisions):
        # The store orders versions by timestamp.  Committer clocks can be skewed (a child dated
        # before its parent); the ordering timestamp is kept non-decreasing along history so
        # that history, not a wrong clock, decides the order.  timestamp_text keeps git's date.
        stamp = c.timestamp if previous is None or c.timestamp >= previous else previous
        previous = stamp
        out.append(_Version(c.short, dict(c.version_info(), timestamp=stamp), c, None, True))
    return out


def _finish_quietly(store, campaign_id: int, status: str) -> None:
    # The original exception matters more than a failure to record how the campaign ended.
    with contextlib.suppress(Exception):
        store.finish_campaign(campaign_id, status)
