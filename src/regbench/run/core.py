"""The run core: what every orchestrator shares.

A campaign (:mod:`~regbench.run.campaign`), its adaptive rounds (:mod:`~regbench.run.adaptive`),
a sequential session (:mod:`~regbench.run.sequential`) and a bisection (:mod:`~regbench.run.bisect`)
all do the same few things, which live here once:

- name a run to do (:class:`Trial`) and say everything it needs (:class:`RunRequest`), handed to
  an :class:`Executor` (local now; implementations in :mod:`~regbench.run.executor`);
- get versions ready to run: checked out, built, or installed from a package index
  (:class:`PlannedVersion` -> :func:`prepare_version` -> :class:`ReadyVersion`);
- run trials and store each outcome in its own transaction as it comes back
  (:class:`TrialRunner`, with its frozen :class:`RunContext`; :func:`record_outcome` decides what
  a run stores: its samples, a tool's benchmarks, its measures), warm-up found per run
  (:func:`auto_warmup`);
- the checks made before anything is written: the benchmarks selected (:func:`select_benchmarks`),
  the environment's size (:func:`check_env_size`), instruction counting and measure units
  (:func:`check_measures`); where the store keeps its worktrees (:func:`store_dir`); and how a
  campaign or session is marked when it ends, after removing what killed ones left behind
  (:func:`campaign_status`).

Failures are results (DESIGN.md "Principles"): a run that crashes, hangs or prints garbage is an
outcome with that status, and a version that does not build is recorded and skipped.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np

from ..adapters.base import ToolRun, without_metric
from ..config import BenchmarkSpec, NoiseControl, ProjectConfig
from ..errors import ConfigError, DuplicateRunError, ExecutorLostError
from ..locks import locked_folder
from ..model import RunRecord, ToolTiming, VersionInfo, measure_series, tool_series
from . import measures as _measures
from .execute import SELECT_ENV, RunOutcome, all_warmup_note, execute_run, no_counter_message, run_environment
from .noise import pad_environment
from .process import NOTE, with_note
from .ramdisk import remove_stale_scratch
from .versions import (Commit, TreeChanges, Worktrees, build_key, build_version, note_build_outputs, prepare_tree,
                       resolve_revisions, with_generations, working_tree_built, working_tree_changes,
                       working_tree_version)

if TYPE_CHECKING:
    from ..store import Store
    from .releases import Release


# ------------------------------------------------------------------------------------ trials
@dataclass(frozen=True)
class Trial:
    """One run to do: the ``run_index``-th run of ``benchmark`` on ``version``."""

    benchmark: str
    version: str
    run_index: int


@dataclass(frozen=True)
class RunRequest:
    """Everything one run needs (see :func:`regbench.run.execute.execute_run`).

    Attributes
    ----------
    spec : BenchmarkSpec
        The benchmark as it is to run (an adaptive plan's chosen iterations included).
    trial : Trial
        Which run of which experiment.
    tree : Path
        The version's tree, checked out and built.
    python : str
        The interpreter of Python benchmarks.
    env : Mapping[str, str]
        Variables added last (a release's virtual environment).
    noise : NoiseControl
        Noise control for the run.
    machine : str or None
        The machine (one of the executor's :meth:`Executor.machines`) the run must be made on:
        a campaign on several machines makes each experiment's runs on each of them, each
        machine's runs being its own series.  None: wherever the executor makes it.
    """

    spec: BenchmarkSpec
    trial: Trial
    tree: Path
    python: str
    env: Mapping[str, str] = field(default_factory=dict)
    noise: NoiseControl = NoiseControl()
    machine: str | None = None

    def execute(self) -> RunOutcome:
        """Make the run here and now, as one fresh process."""
        return execute_run(self.spec, tree=self.tree, python=self.python, run_index=self.trial.run_index,
                           version=self.trial.version, extra_env=dict(self.env) or None, noise=self.noise)


#: Called with each request just before its run starts (a progress display).
Started = Callable[[RunRequest], None]


class Executor(abc.ABC):
    """Runs :class:`RunRequest` objects; subclasses set :attr:`name` and implement :meth:`map`.

    An executor is a context manager: :meth:`close` releases what it holds (workers, a
    connection to a scheduler).
    """

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def map(self, requests: Iterable[RunRequest], *, started: Started | None = None,
            waiting: Started | None = None) -> Iterator[tuple[RunRequest, RunOutcome]]:
        """Run every request, each as one fresh process; yield ``(request, outcome)`` as each
        ends.  A benchmark's failure is an outcome, never an exception; ``KeyboardInterrupt``
        stops the runs in flight and propagates.  ``started`` is called with each request as
        its run starts; ``waiting`` with a request whose run, made here, waits for another
        regbench command's run on this machine (:mod:`regbench.run.exclusive`), ``started``
        being called again once it starts."""

    def machines(self) -> dict[str, dict]:
        """The machines other than this one that runs may be made on, name -> fingerprint (a
        Dask cluster's workers); empty when every run is made here."""
        return {}

    def machines_for(self, specs: Sequence[BenchmarkSpec]) -> dict[str, tuple[str, ...]]:
        """The machines of :meth:`machines` that can make the runs of each benchmark of
        ``specs`` (they offer what it requires), by benchmark name; empty when every run is
        made here.  A campaign makes every run of a benchmark on each of its machines
        (:attr:`RunRequest.machine`)."""
        return {}

    def refused(self, specs: Sequence[BenchmarkSpec]) -> dict[str, str]:
        """The benchmarks of ``specs`` whose runs no machine can take, each with the one-line
        reason naming the benchmark and what it requires (a Dask cluster where no worker offers
        a tag of its ``requires``); empty when every run can be made (the local executor makes
        them all)."""
        return {}

    def close(self) -> None:
        """Release what the executor holds (nothing for the local one)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------- versions
@dataclass(frozen=True)
class PlannedVersion:
    """A version to benchmark, before it is checked out or built.

    ``commit`` is None for the working tree (used in place, at ``tree``) and for a release
    (``release``: installed into its own virtual environment); ``reusable_build`` says whether
    a recorded build result can describe the tree (not for a dirty working tree).
    """

    info: VersionInfo
    commit: Commit | None = None
    tree: Path | None = None
    reusable_build: bool = True
    release: Release | None = None

    @property
    def name(self) -> str:
        return self.info.name

    @classmethod
    def of_commit(cls, commit: Commit, info: VersionInfo | None = None) -> PlannedVersion:
        return cls(info if info is not None else commit.version(), commit)


def plan_versions(repo: Path, revisions: str | None, *, ignore: Sequence[Path]) -> list[PlannedVersion]:
    """The versions of ``revisions`` in history order (the working tree when None).

    The store orders versions by timestamp.  Committer clocks can be skewed (a child dated before
    its parent), so the ordering timestamp is kept non-decreasing along history: history, not a
    wrong clock, decides the order (``timestamp_text`` keeps git's date).
    """
    if revisions is None:
        wt = working_tree_version(repo, ignore=ignore)
        reusable = wt.head is not None and not wt.dirty
        return [PlannedVersion(wt.version(), None, wt.path, reusable)]
    out: list[PlannedVersion] = []
    previous: datetime | None = None
    for c in resolve_revisions(repo, revisions):
        stamp = c.timestamp if previous is None or c.timestamp >= previous else previous
        previous = stamp
        out.append(PlannedVersion.of_commit(c, dataclasses.replace(c.version(), timestamp=stamp)))
    return out


def record_versions(store: Store, config: ProjectConfig, versions: Sequence[PlannedVersion]) -> list[str]:
    """Store the rows of ``versions`` (those not stored yet), in history order, with their tags
    and branches (a commit's aliases: tables show ``v1`` rather than a short sha) and, where
    committer dates tie, their generations (:func:`regbench.run.versions.with_generations`).

    Every command that benchmarks versions records them so, before its first run: a campaign, a
    session's version, a screen's.  Returns one sentence per tag that moved to another commit
    since the store recorded it (:meth:`~regbench.store.Store.ensure_versions`).
    """
    infos = with_generations(Path(config.repo or config.root), store, [v.info for v in versions])
    moved = store.ensure_versions(infos, aliases={v.name: v.commit.aliases for v in versions if v.commit is not None})
    return [f"{tag} now names {new[:10]}, not {old[:10]} as when the store recorded it: results shown as "
            f"{tag} are {new[:10]}'s from now on ({old[:10]}'s are kept under its commit)" for tag, old, new in moved]


def plan_releases(spec: str, root: Path) -> list[PlannedVersion]:
    """The releases of ``PACKAGE==A..B`` (:mod:`regbench.run.releases`), oldest first."""
    from .releases import resolve_releases

    return [PlannedVersion(VersionInfo(r.name, timestamp=r.uploaded), None, root, False, r)
            for r in resolve_releases(spec)]


@dataclass(frozen=True)
class ReadyVersion:
    """A version whose tree is checked out and built: what its runs need.

    ``python`` runs its Python benchmarks; ``env`` is added to its runs' environment (a
    release's virtual environment).
    """

    info: VersionInfo
    tree: Path
    python: str
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.info.name


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare_version` did: ``ready`` is None when the build failed (``status``)."""

    ready: ReadyVersion | None
    status: str
    cached: bool
    #: The end of a failed build's (or install's) log, for the campaign to say why.
    log_tail: str | None = None


def prepare_version(store: Store, config: ProjectConfig, version: PlannedVersion, *, cache_dir: Path,
                    rebuild: bool = False, trees: Worktrees | None = None) -> Prepared:
    """Check out and build one version (a release: install it), recording the build.

    A commit gets its own git worktree: from ``trees`` (the campaign's, removed when it ends),
    else under ``cache_dir`` (reused later); the build command of
    ``config`` runs there once per version unless a recorded result applies
    (:func:`regbench.run.versions.build_version`).  A release is installed into a virtual
    environment under ``cache_dir.parent / "venvs"``, recorded as the build ``release-venv``.

    Campaigns sharing ``cache_dir`` (two campaigns on one store) take turns, one version at a
    time (a lock on the folder), unless the version is a commit checked out in the campaign's own
    ``trees``: the second finds the worktree made, the release installed or the build recorded,
    rather than checking out, installing or building into the same folder at the same moment.
    """
    # A campaign's own worktree (``trees``) needs no turn; the shared cache, a release's virtual
    # environment and a working tree built in place do.
    own = version.commit is not None and trees is not None
    with contextlib.nullcontext() if own else locked_folder(cache_dir):
        return _prepare_version(store, config, version, cache_dir=cache_dir, rebuild=rebuild, trees=trees)


def _prepare_version(store: Store, config: ProjectConfig, version: PlannedVersion, *, cache_dir: Path,
                     rebuild: bool, trees: Worktrees | None) -> Prepared:
    if version.release is not None:
        from .releases import environment_variables, interpreter, release_environment

        env, log = release_environment(version.release, cache_dir.parent / "venvs", python=config.python,
                                       requires=config.benchmark_requires)
        status = "ok" if env else "failed"
        store.record_build(version.info, "release-venv", status=status, exit_code=None, log_tail=log or None,
                           duration=None)
        if env is None:
            return Prepared(None, status, False, log or None)
        assert version.tree is not None  # a release runs in the project's folder
        return Prepared(ReadyVersion(version.info, version.tree, interpreter(env),
                                     benchmark_dir_env(config, environment_variables(env))), status, False)
    before: TreeChanges | None = None  # the working tree's changes before its build in place
    ignore = [p for p in (store_dir(store), cache_dir) if p is not None]
    if version.commit is None:
        assert version.tree is not None  # the working tree, in place
        tree, reusable = version.tree, version.reusable_build
        if config.build:
            # A recorded build stands for the tree only if the last build made in it was of this
            # version (an edit built since, then reverted, left that edit's outputs).
            reusable = reusable and working_tree_built(tree) == (version.name, build_key(config.build))
            before = working_tree_changes(tree, ignore=ignore)
    elif trees is not None:
        key = build_key(config.build) if config.build else None
        tree = trees.checkout(version.commit, key=key, rebuild=rebuild)
        # A fresh checkout has no build yet; a tree this campaign built, or a kept one taken
        # (``[project] build_cache``), has the build of the key recorded with it.
        reusable = key is not None and trees.built_with(version.commit.sha) == key
    else:
        reusable = (cache_dir / version.commit.sha).is_dir()
        tree = prepare_tree(Path(config.repo or config.root), version.commit, cache_dir)
    status, cached, log_tail = "ok", False, None
    if config.build:
        built = build_version(store, version=version.name, tree=tree, argv=config.build,
                              timeout=config.build_timeout, version_info=version.info,
                              rebuild=rebuild, use_cache=reusable)
        status, cached = built.status, built.cached
        log_tail = built.log_tail
        if before is not None and not cached:
            # What the build wrote where git sees it does not make the tree dirty next time.
            note_build_outputs(tree, before, built=(version.name, build_key(config.build)) if status == "ok" else None,
                               ignore=ignore)
        if trees is not None and version.commit is not None and not cached:
            # A build ran in the tree: only a success makes it one to keep, under this command.
            trees.building(version.commit.sha)
            if status == "ok":
                trees.mark_built(version.commit.sha, build_key(config.build))
    ready = ReadyVersion(version.info, tree, config.python, benchmark_dir_env(config)) if status == "ok" else None
    return Prepared(ready, status, cached, log_tail if status != "ok" else None)


def benchmark_dir_env(config: ProjectConfig, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` with ``[project] benchmark_dir`` (benchmarks kept outside the history) first on
    ``PYTHONPATH`` and exported as ``REGBENCH_BENCHMARK_DIR``, for every version's runs.

    The folder is used where it is, not copied into worktrees: every version runs today's
    benchmarks, and editing one needs no new checkout.  These two variables are set after the
    benchmark's own ``env`` and a ``[screen]`` option's, so :func:`regbench.config.parse_config`
    refuses either setting them when ``benchmark_dir`` is set (rather than let them be ignored).
    """
    out = dict(env or {})
    if config.benchmark_dir is not None:
        folder = str(config.benchmark_dir)
        inherited = out.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        out["PYTHONPATH"] = os.pathsep.join(p for p in (folder, inherited) if p)
        out["REGBENCH_BENCHMARK_DIR"] = folder
    return out


# ------------------------------------------------------------------------------ running them
class TrialReporter(Protocol):
    """What a runner tells about each trial (a progress display listens)."""

    def trial_started(self, benchmark: str, version: str, run_index: int) -> None: ...
    def trial_done(self, benchmark: str, version: str, run_index: int, status: str) -> None: ...


@dataclass(frozen=True)
class RunContext:
    """Where runs are made and stored, and how: one per campaign or session.

    Attributes
    ----------
    store : Store
        Where every run is written, in its own transaction.
    campaign_id : int
        The campaign (or session) the runs belong to.
    machine, config_name : str
        The machine and configuration the runs are stored under.
    noise : NoiseControl
        Noise control for every run.
    executor : Executor
        Where the runs are made.
    machines : tuple of str
        Every machine the runs may be stored under: ``machine`` alone for runs made here, the
        workers' machines too on a Dask cluster.  Resuming counts the runs stored on any of them.
    where_made : bool
        Store each run under the machine that made it when the outcome names one (a Dask
        worker's), with that machine's fingerprint; False stores every run under ``machine``
        (a screening study, whose effects are estimated on one machine's series).
    """

    store: Store
    campaign_id: int
    machine: str
    config_name: str
    noise: NoiseControl
    executor: Executor
    machines: tuple[str, ...] = ()
    where_made: bool = False

    @property
    def all_machines(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.machine, *self.machines)))


@dataclass(frozen=True)
class TrialResult:
    """One trial run by a :class:`TrialRunner`: ``stored`` is False when another campaign on the
    same store stored a run with its key first (this one is then dropped, and the first kept)."""

    trial: Trial
    spec: BenchmarkSpec
    outcome: RunOutcome
    stored: bool


class TrialRunner:
    """Runs trials through the context's executor and stores each outcome as soon as it ends.

    ``versions`` are the ready versions trials may name (more are added with :meth:`add`).
    """

    def __init__(self, ctx: RunContext, versions: Iterable[ReadyVersion] = (),
                 reporter: TrialReporter | None = None):
        self.ctx = ctx
        self.versions: dict[str, ReadyVersion] = {v.name: v for v in versions}
        self.reporter = reporter
        self._fingerprinted: set[str] = set()
        #: The machine each trial must be made on (a campaign on several machines); a trial
        #: not listed is made wherever the executor makes it.
        self.pinned: dict[Trial, str] = {}

    def add(self, version: ReadyVersion) -> None:
        self.versions[version.name] = version

    def request(self, trial: Trial, spec: BenchmarkSpec) -> RunRequest:
        v = self.versions[trial.version]
        return RunRequest(spec, trial, v.tree, v.python, v.env, self.ctx.noise, machine=self.pinned.get(trial))

    def iter_run(self, work: Iterable[tuple[Trial, BenchmarkSpec]]) -> Iterator[TrialResult]:
        """Run ``(trial, spec)`` pairs in the order given; yield each result once it is stored."""
        started = waiting = None
        if self.reporter is not None:
            reporter = self.reporter

            def started(request: RunRequest) -> None:
                t = request.trial
                reporter.trial_started(t.benchmark, t.version, t.run_index)

            if (told := getattr(reporter, "trial_waiting", None)) is not None:
                def waiting(request: RunRequest) -> None:
                    t = request.trial
                    told(t.benchmark, t.version, t.run_index)

        requests = (self.request(trial, spec) for trial, spec in work)
        for request, outcome in self.ctx.executor.map(requests, started=started, waiting=waiting):
            stored = self.store_outcome(request, outcome)
            yield TrialResult(request.trial, request.spec, outcome, stored)

    def store_outcome(self, request: RunRequest, outcome: RunOutcome) -> bool:
        """Store one run's outcome in its own transaction, under the context's machine (or the
        one that made it, :attr:`RunContext.where_made`), and tell the reporter; False when
        another campaign on the same store stored a run with its key first (this one is then
        dropped).  For orchestrators that hand one executor the requests of several runners."""
        t = request.trial
        machine = (outcome.machine if self.ctx.where_made else None) or self.ctx.machine
        if machine == outcome.machine and outcome.fingerprint is not None and machine not in self._fingerprinted:
            # A run made elsewhere (a Dask worker): its machine's fingerprint, as a local
            # campaign records this one's.
            store, fingerprint = self.ctx.store, outcome.fingerprint
            store.write(lambda conn: store.ensure_machine(conn, machine, fingerprint))
            self._fingerprinted.add(machine)
        try:
            # Waits for other writers as long as the store's patience allows: a finished run is
            # not lost because another process holds the store for a while.
            record_outcome(self.ctx.store, request.spec, t, outcome, config_name=self.ctx.config_name,
                           machine=machine, campaign_id=self.ctx.campaign_id,
                           version_info=self.versions[t.version].info)
            stored = True
        except DuplicateRunError:
            # Raised only when this very run key is stored (a race on a machine, version or
            # benchmark row is not a duplicate): another campaign on the same store, with the
            # same configuration and machine, stored this trial meanwhile.
            stored = False
        if self.reporter is not None:
            self.reporter.trial_done(t.benchmark, t.version, t.run_index,
                                     outcome.status if stored else "already stored")
        return stored

    def run(self, work: Iterable[tuple[Trial, BenchmarkSpec]]) -> list[TrialResult]:
        """:meth:`iter_run`, all at once."""
        return list(self.iter_run(work))


# ------------------------------------------------------------------------- what a run stores
def record_outcome(store: Store, spec: BenchmarkSpec, trial: Trial, outcome: RunOutcome, *, config_name: str,
                   machine: str, campaign_id: int | None, version_info: VersionInfo | None = None) -> None:
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
    version_info : VersionInfo, optional
        The version's record, created with the run if it is not stored yet (named
        ``trial.version``; default: the name alone).

    Notes
    -----
    What is stored:

    - a benchmark tool's invocation (``spec.format``): one run per benchmark it reported, the
      series ``SPEC/NAME``, with the tool's unit and direction, ``ok`` whatever the exit status
      of the tool, and a ``failed`` run of each benchmark it reported as failed, whose stderr
      tail is the tool's message (:func:`tool_records`);
    - the run itself, with its samples and status: a benchmark's without a tool; a tool's
      invocation that did not succeed, unless its failure is wholly its failed benchmarks'
      (:attr:`RunOutcome.failure_attributed`): one that reported nothing, timed out, crashed,
      wrote on stderr or failed without naming a benchmark (one of a group of a split
      invocation, ``trial.benchmark`` its label, with a note naming the group,
      :func:`split_note`);
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
    tool = spec.format is not None and bool(outcome.tool_runs or outcome.tool_failures)
    if tool:
        records, benchmarks = tool_records(spec, trial, outcome, config_name=config_name, machine=machine,
                                            campaign_id=campaign_id)
    if not tool or (outcome.status != "ok" and not outcome.failure_attributed):
        tail = outcome.stderr_tail
        if spec.format is not None and trial.benchmark != spec.name and SELECT_ENV in spec.env:
            tail = split_note(tail, trial.benchmark, spec.env[SELECT_ENV])
        if spec.format is None:
            for u in unfollowed_counts(spec, outcome):
                tail = with_note(tail or "", u.note())
        records.append(RunRecord(
            benchmark=spec.name, version=trial.version, run_index=trial.run_index,
            samples=outcome.samples, config=config_name, machine=machine, status=outcome.status,
            exit_code=outcome.exit_code, stderr_tail=tail or None,
            started_at=outcome.started_at, duration=outcome.duration,
            warmup=auto_warmup(outcome.samples) if spec.warmup_auto and outcome.status == "ok" else spec.warmup,
            campaign_id=campaign_id,
            slices=getattr(outcome, "slices", None) if outcome.status == "ok" else None))
        benchmarks[spec.name] = {"unit": spec.unit, "direction": spec.direction}
    for m in spec.measures:
        name = measure_series(spec.name, m)
        if m == "instructions" and outcome.instruction_counter is None:
            continue  # nothing counted them (the outcome does not come from execute_run)
        benchmarks[name] = {"unit": _measures.measure_unit(m, outcome.instruction_counter), "direction": "lower"}
        exit_code = outcome.exit_code
        samples: tuple[float, ...] = ()
        note: str | None
        if outcome.status != "ok":
            status = outcome.status
            note = f"the run of {spec.name!r} was {outcome.status}: see its stderr tail"
        elif m in outcome.measures:
            status, note, samples = "ok", None, (outcome.measures[m],)
        else:  # the run was fine; the process that measures it was not (its status and note)
            status, note = outcome.measure_failures.get(m, ("failed", f"{m} was not measured"))
            exit_code = None
        records.append(RunRecord(
            benchmark=name, version=trial.version, run_index=trial.run_index,
            samples=np.asarray(samples, dtype=float), config=config_name, machine=machine, status=status,
            exit_code=exit_code, stderr_tail=NOTE + note if note else None,
            started_at=outcome.started_at, duration=outcome.duration, warmup=0, campaign_id=campaign_id))
    store.add_runs(records, versions=[version_info or VersionInfo(trial.version)], benchmarks=benchmarks)


#: How the failed invocation of one group of a split tool benchmark names its group in its stderr
#: tail (:func:`split_note`): its runs are stored under the benchmark's name like any failed
#: invocation's, and the note tells a later campaign which group's run it was (resuming).
_SPLIT_NOTE = "split invocation "
_SPLIT_LABEL = re.compile("^" + re.escape(NOTE + _SPLIT_NOTE) + "(.+?) \\(" + SELECT_ENV + "=", re.MULTILINE)


def split_note(tail: str, label: str, select: str) -> str:
    """``tail`` with a note naming the group ``label`` of a split invocation and its selection,
    before the note on the run's status that ends it."""
    shown = select if len(select) <= 200 else select[:199] + "…"
    note = f"{_SPLIT_NOTE}{label} ({SELECT_ENV}={shown})"
    head, sep, last = tail.rpartition("\n")
    if last.startswith(NOTE):
        return with_note(with_note(head, note), last[len(NOTE):])
    return with_note(tail, note)


def split_label(tail: str | None) -> str | None:
    """The group a failed invocation's stderr tail names (:func:`split_note`); None if none."""
    found = _SPLIT_LABEL.search(tail or "")
    return found.group(1) if found else None


@dataclass(frozen=True)
class Unfollowed:
    """A run under a plan whose samples are not what ``REGBENCH_ITERATIONS`` asked for.

    ``series`` is the stored series (``SPEC/REPORTED`` for a tool's), ``asked`` the samples a
    run (of each of a tool's processes) was asked for, warm-up included, and ``reported`` what
    the run (each process) had, leaving out a warm-up the tool reported of its own."""

    series: str
    asked: int
    reported: tuple[int, ...]

    def note(self) -> str:
        """The note stored in the run's stderr tail."""
        each = " a process" if len(self.reported) > 1 else ""
        return (f"the plan asked for {self.asked} samples{each} (REGBENCH_ITERATIONS), the run reported "
                f"{'/'.join(map(str, self.reported))}: the plan was not followed")


def unfollowed_counts(spec: BenchmarkSpec, outcome) -> list[Unfollowed]:
    """The series of one run under an optimized plan (``spec.planned``) whose samples differ from
    the ``warmup + iterations`` that ``REGBENCH_ITERATIONS`` asked for: a tool that decides its
    repetitions itself (pytest-benchmark runs as many rounds as fit ``--benchmark-max-time``
    whatever ``--benchmark-min-rounds`` says) measures more or less than the plan, which was
    priced and checked for stability at its own count.  Counted per process where a tool
    reports its processes apart (JMH's forks, pyperf's workers), each of which is asked for
    ``REGBENCH_ITERATIONS``.  Empty unless planned, for a Python benchmark (regbench's worker
    runs exactly what it is asked) and for a run that did not succeed."""
    if not spec.planned or spec.kind == "python" or spec.warmup_auto or outcome.status != "ok" \
            and not outcome.tool_runs:
        return []
    asked = spec.warmup + spec.iterations
    if spec.format is None:
        n = int(outcome.samples.size)
        return [] if n == asked else [Unfollowed(spec.name, asked, (n,))]
    failed = {f.benchmark for f in outcome.tool_failures if f.benchmark is not None}
    counts: dict[str, list[int]] = {}
    for tr in outcome.tool_runs:
        if without_metric(tr.benchmark) not in failed:
            counts.setdefault(tr.benchmark, []).append(int(tr.samples.size - tr.warmup))
    return [Unfollowed(tool_series(spec.name, name), asked, tuple(n)) for name, n in counts.items()
            if any(k != asked for k in n)]


def tool_records(spec: BenchmarkSpec, trial: Trial, outcome, *, config_name: str, machine: str,
                  campaign_id: int | None) -> tuple[list[RunRecord], dict[str, dict]]:
    """The runs of one invocation of a benchmark tool: each benchmark the tool reported is the
    series ``SPEC/NAME`` (its unit and direction from the tool, the direction overridden by the
    benchmark's ``directions``), and its samples in this
    invocation are one run (forks or repetitions inside one invocation are concatenated:
    regbench repeats the invocations itself, as fresh processes).

    A run's warm-up is the one the tool reported, then the benchmark's ``warmup`` (or, with
    ``"auto"``, what :func:`auto_warmup` finds in the samples after the tool's): the first
    samples of each benchmark in each invocation, stored and left out of analyses, as a command
    benchmark's first iterations are.

    A benchmark the tool reported as failed (``outcome.tool_failures``) is a ``failed`` run of
    its series, whose stderr tail is the tool's message, with the samples it reported before
    failing (its other metrics' runs are failed too): a failed benchmark is a result.
    """
    grouped: dict[str, list] = {}
    for tr in outcome.tool_runs:
        grouped.setdefault(tr.benchmark, []).append(tr)
    failed: dict[str, list] = {}
    for f in outcome.tool_failures:
        if f.benchmark is not None:
            failed.setdefault(f.benchmark, []).append(f)
    why = ("the tool reported this benchmark failed"
           + (f", its invocation exited with status {outcome.exit_code}" if outcome.exit_code else ""))
    records, benchmarks = [], {}
    unfollowed = {u.series: u.note() for u in unfollowed_counts(spec, outcome)}

    def record(full: str, samples: np.ndarray, warmup: int, failures: list | None, timing=None,
               weights=None) -> RunRecord:
        status = "failed" if failures else "ok"
        tail = (with_note("\n".join(dict.fromkeys(f.message for f in failures)), why) if failures
                else outcome.stderr_tail or None)
        if status == "ok" and samples.size <= warmup:
            # Every sample the tool reported would be dropped as warm-up (a `warmup` inherited
            # from [defaults] by a tool that reports one sample, or a fixed -count): a result
            # with nothing to analyse is said, not stored as a success that shows nothing.
            status = "garbage"
            tail = with_note(outcome.stderr_tail or "", all_warmup_note(samples.size, warmup))
        elif status == "ok" and full in unfollowed:
            tail = with_note(outcome.stderr_tail or "", unfollowed[full])
        return RunRecord(
            benchmark=full, version=trial.version, run_index=trial.run_index, samples=samples,
            config=config_name, machine=machine, status=status,
            exit_code=outcome.exit_code, stderr_tail=tail, started_at=outcome.started_at,
            duration=outcome.duration, warmup=warmup, campaign_id=campaign_id, timing=timing,
            weights=weights if status == "ok" else None)

    for name, runs in grouped.items():
        full = tool_series(spec.name, name)
        benchmarks[full] = {"unit": runs[0].unit, "direction": spec.direction_of(name, runs[0].direction)}
        # Only a leading warm-up can stay one: the first part's warm-up is kept (and marked), the
        # warm-up of later parts (pyperf's other worker processes) is left out.
        samples = np.concatenate([runs[0].samples, *(r.samples[r.warmup:] for r in runs[1:])])
        weights = None
        if all(r.weights is not None for r in runs):
            weights = np.concatenate([runs[0].weights, *(r.weights[r.warmup:] for r in runs[1:])])
        failures = failed.get(without_metric(name))
        if spec.warmup_auto and not failures:
            ours = auto_warmup(samples[runs[0].warmup:])
        else:
            ours = spec.warmup
        records.append(record(full, samples, runs[0].warmup + ours, failures, joined_timing(runs), weights))
    for name, failures in failed.items():
        full = tool_series(spec.name, name)
        if name not in grouped:  # it reported nothing before failing
            # A unit the tool did not say (JMH, for a benchmark that failed in its first
            # iteration) is left to the store: a stored series keeps its own.
            benchmarks[full] = {"direction": spec.direction_of(name, failures[0].direction)}
            if failures[0].unit is not None:
                benchmarks[full]["unit"] = failures[0].unit
            records.append(record(full, np.empty(0), 0, failures))
    return records, benchmarks


def joined_timing(parts: Sequence[ToolRun]) -> ToolTiming | None:
    """The :class:`ToolTiming` of one run made of the tool's ``parts`` (a JMH invocation's forks):
    their processes and unreported warm-up added up; None unless every part has one, of one
    iteration length."""
    timings = [p.timing for p in parts]
    if not timings or any(t is None for t in timings):
        return None
    lengths = {t.iteration_seconds for t in timings if t is not None}
    if len(lengths) != 1:
        return None
    return ToolTiming(processes=sum(t.processes for t in timings if t is not None),
                      warmup_seconds=sum(t.warmup_seconds for t in timings if t is not None),
                      iteration_seconds=lengths.pop())


def auto_warmup(samples: np.ndarray) -> int:
    """Warm-up iterations of one run found from its samples (``warmup = "auto"``).

    MSER-5 with its outlier clipping and its bias check (:func:`regbench.stats.warmup.warmup_mser`,
    seed 001 s.2.2: no trial and error): a cut is kept only when the truncated iterations differ
    from the steady state at a 1% error rate, so runs without warm-up keep their samples (on runs
    of 20 iterations, at most 2.7% lose any, against 44-47% before the check was made a test;
    docs/statistics.md).  At least two measured samples are always kept.  The samples are
    stored whole, so a later analysis can decide differently.
    """
    from ..stats.warmup import warmup_mser

    if samples.size < 10:
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        found = warmup_mser(samples).n_warmup
    return int(min(max(found, 0), samples.size - 2))


# ------------------------------------------------------------------------------------ checks
def select_benchmarks(config: ProjectConfig, names: Sequence[str] | None) -> list[BenchmarkSpec]:
    """The benchmarks named (each once, in the order given), or all of them."""
    if not config.benchmarks:
        raise ConfigError(f"{config.path or 'regbench.toml'}: no [[benchmark]] is configured")
    if not names:
        return list(config.benchmarks)
    return [config.benchmark(n) for n in dict.fromkeys(names)]


def store_dir(store: Store) -> Path | None:
    """The folder of a SQLite store file (where its worktrees go by default); None otherwise."""
    url = str(store.url)
    if url.startswith("sqlite:///") and not url.endswith(":memory:"):
        return Path(url[len("sqlite:///"):]).parent
    return None


def default_cache_dir(config: ProjectConfig, store: Store) -> Path:
    """Where version worktrees go: ``worktrees/`` beside the store file, or under ``.regbench``."""
    return (store_dir(store) or config.root / ".regbench") / "worktrees"


def check_env_size(runs: Iterable[tuple[BenchmarkSpec, int]], versions: Mapping[str, Mapping[str, str]],
                   size: int) -> None:
    """Every run's environment fits in ``env_size``: checked before the first run, not at the run
    that does not fit.

    ``runs`` are ``(spec, run index)`` pairs standing for the largest environment each benchmark
    can have (its last run index and its most iterations); ``versions`` maps each version's name
    to the variables it adds (a release's virtual environment).
    """
    runs = list(runs)
    for name, extra in versions.items():
        for spec, index in runs:
            env = run_environment(spec, run_index=index, version=name)
            env.update(extra)
            try:
                pad_environment(env, size)
            except ConfigError as exc:
                raise ConfigError(f"benchmark {spec.name!r} at version {name!r}: {exc}") from None


def check_measures(store: Store, specs: Sequence[BenchmarkSpec]) -> str | None:
    """What counts instructions here when a benchmark measures them (None when none does), after
    checking that every measure's series can be stored in the unit measured here."""
    counter = instruction_counter_for(specs)
    check_measure_units(store, specs, counter)
    return counter


def instruction_counter_for(specs: Sequence[BenchmarkSpec]) -> str | None:
    """What counts instructions here, when a benchmark measures them (probed once per process)."""
    wanting = [s.name for s in specs if "instructions" in s.measures]
    if not wanting:
        return None
    counter = _measures.instruction_counter()
    if counter is None:
        raise ConfigError(no_counter_message(wanting[0]))
    return counter


def check_measure_units(store: Store, specs: Sequence[BenchmarkSpec], counter: str | None) -> None:
    """A measure's series stored in another unit (instructions counted by perf on one machine and
    by callgrind on another), or a tool's series stored with another direction than the
    benchmark's ``directions`` now give it, would fail at the first run: say so before any."""
    benchmarks = store.benchmarks()
    stored = {b.name: b.unit for b in benchmarks}
    for spec in (s for s in specs if s.directions):
        prefix = tool_series(spec.name, "")
        for b in benchmarks:
            if not b.name.startswith(prefix):
                continue
            wanted = spec.direction_of(b.name[len(prefix):], b.direction)
            if wanted != b.direction:
                raise ConfigError(f"benchmark {spec.name!r}: `directions` makes {b.name!r} {wanted}-is-better, but "
                                  f"it is stored {b.direction}-is-better with the runs measured so far; a stored "
                                  "series keeps its direction: give the benchmark another name to start new series")
    for spec in specs:
        for m in spec.measures:
            name = measure_series(spec.name, m)
            unit = _measures.measure_unit(m, counter)
            if stored.get(name) not in (None, unit):
                raise ConfigError(f"benchmark {spec.name!r}: its measure series {name!r} is stored in unit "
                                  f"{stored[name]!r}, but this machine measures {m} in {unit!r}"
                                  + (f" ({counter})" if m == "instructions" else "")
                                  + ": the counts are not comparable; use another benchmark name here")


@contextlib.contextmanager
def campaign_status(store: Store, campaign_id: int) -> Iterator[None]:
    """Mark a campaign (or session) ``finished`` when the block ends, ``interrupted`` on Ctrl-C
    or when the executor lost its cluster (:class:`~regbench.errors.ExecutorLostError`: the same
    command resumes it), and ``failed`` on any other exception, which then propagates unchanged.

    Before the block, what campaigns killed on this machine left behind (their runs' scratch
    folders, their ramdisk copies) is removed (:func:`regbench.run.scratch.remove_stale`); the
    store marked their campaigns ``interrupted`` when this one started
    (:meth:`regbench.store.Store.start_campaign`).
    """
    remove_stale_scratch()
    try:
        yield
    except (KeyboardInterrupt, ExecutorLostError):
        _finish_quietly(store, campaign_id, "interrupted")
        raise
    except BaseException:
        _finish_quietly(store, campaign_id, "failed")
        raise
    store.finish_campaign(campaign_id, "finished")


def _finish_quietly(store: Store, campaign_id: int, status: str) -> None:
    # The original exception matters more than a failure to record how the campaign ended.
    with contextlib.suppress(Exception):
        store.finish_campaign(campaign_id, status)
