"""Plain data objects shared by the layers (no I/O here).

Vocabulary as in DESIGN.md: a *run* is one fresh process of an *experiment* (benchmark x version x
configuration x machine); its *samples* are the measured values in order, the first ``warmup`` of
which are warm-up iterations that analyses discard.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy arrays are only named in annotations: `--help` needs no numpy
    import numpy as np

#: Status of a run: ``ok`` has samples; the others are failures recorded as results.
RUN_STATUSES = ("ok", "failed", "crashed", "timeout", "garbage")
#: The status a stored run takes when its benchmark's definition (what it runs) changed after it:
#: it measured something else, so no analysis uses it and a campaign runs its version again; its
#: samples stay stored (:meth:`regbench.store.Store.supersede_runs`).  Not a status a run ends
#: with, nor one a results file may carry (:data:`RUN_STATUSES`).
SUPERSEDED = "superseded"
DIRECTIONS = ("lower", "higher")
#: The largest id a stored row can have on every backend (PostgreSQL's INTEGER key): a larger one
#: names no row, and is looked up as such (asked of the database, it overflowed: a traceback on
#: the command line, an answer 500 from the API).
MAX_ROW_ID = 2**31 - 1
DEFAULT_CONFIG = "default"
#: The variables regbench sets in a benchmark run's environment, over the benchmark's own
#: (:func:`regbench.run.execute.run_environment`, the pad of ``[noise] env_size``,
#: ``[project] benchmark_dir``, a split invocation's selection and forks): a ``[screen]`` option
#: applied through one of them would be overridden, so it is refused.
RUN_VARIABLES = frozenset({"REGBENCH_ITERATIONS", "REGBENCH_WARMUP", "REGBENCH_RUN_INDEX", "REGBENCH_VERSION",
                           "REGBENCH_ENV_PAD", "REGBENCH_BENCHMARK_DIR", "REGBENCH_SELECT", "REGBENCH_FORKS"})

#: Kinds of a change, by the benchmark's direction (and so of an alert).
CHANGE_KINDS = ("regression", "improvement")
#: The kind of an alert for a benchmark that ran and then fails at every run from some version on
#: (a crash, a timeout, an exception its harness reports): no change of a value, no interval.
FAILURE_KIND = "failure"
#: Kinds of an alert: those of a change, and a benchmark that starts failing.
ALERT_KINDS = (*CHANGE_KINDS, FAILURE_KIND)
#: An alert's lifecycle: ``new`` when created; a person sets ``acknowledged``, ``invalid``,
#: ``expected`` (or ``new`` again, to reopen); detection sets ``fixed``.
ALERT_STATUSES = ("new", "acknowledged", "invalid", "expected", "fixed")
#: Alerts still waiting for someone (a later improvement can fix them).
OPEN_ALERT_STATUSES = ("new", "acknowledged")
#: Statuses a person may set by hand.
TRIAGE_STATUSES = ("new", "acknowledged", "invalid", "expected")
#: What ``regbench detect --confirm`` made of a change it ran again: ``confirmed`` and
#: ``unconfirmed`` (it could not be run here) become alerts; ``refuted`` and ``inconclusive`` do not.
CONFIRMATION_STATUSES = ("confirmed", "refuted", "inconclusive", "unconfirmed")
#: The confirmation statuses that let a change become an alert.
ALERTING_CONFIRMATIONS = ("confirmed", "unconfirmed")
#: How far an alert's change reaches across machines (:attr:`Alert.spread`): seen on ``several``
#: machines; ``machine-specific`` (seen on one, other machines measured the same versions without
#: it); ``single`` machine (no other machine measured those versions).
MACHINE_SPREADS = ("several", "machine-specific", "single")


# ------------------------------------------------------------------------------ series names
#: A benchmark's measure beyond its samples is the series ``BENCHMARK:MEASURE`` (``cpu``, ...).
MEASURE_SEPARATOR = ":"
#: A benchmark that runs a tool (``format = ...``) stores each benchmark the tool reports as the
#: series ``BENCHMARK/REPORTED``.
TOOL_SEPARATOR = "/"


def measure_series(benchmark: str, measure: str) -> str:
    """The series name of a benchmark's measure: ``"sort:maxrss"``."""
    return f"{benchmark}{MEASURE_SEPARATOR}{measure}"


def tool_series(benchmark: str, reported: str) -> str:
    """The series name of a benchmark a tool reported: ``"gobench/BenchmarkSort-2"``."""
    return f"{benchmark}{TOOL_SEPARATOR}{reported}"


@dataclass(frozen=True)
class SeriesName:
    """What a stored series name says of where it comes from.

    ``benchmark`` is the configured benchmark's name; ``measure`` is set for ``BENCHMARK:MEASURE``
    and ``reported`` for ``BENCHMARK/REPORTED`` (a tool's benchmark, whose own name may hold
    anything).  A name with neither is a benchmark's own samples.
    """

    benchmark: str
    measure: str | None = None
    reported: str | None = None

    @classmethod
    def parse(cls, name: str) -> SeriesName:
        base, sep, reported = name.partition(TOOL_SEPARATOR)
        if sep:  # a tool's benchmark: what follows the first "/" is the tool's, ":" included
            return cls(base, reported=reported)
        base, sep, measure = name.rpartition(MEASURE_SEPARATOR)
        if sep and base and measure:
            return cls(base, measure=measure)
        return cls(name)


@dataclass(frozen=True)
class ToolTiming:
    """What a benchmark tool says one run of one of its benchmarks cost beyond the samples it
    reported: what ``regbench optimize`` prices a tool's run with (docs/optimize.md, "A tool's
    run").  Stored beside the run (table ``run_tool``, schema 0014).

    Attributes
    ----------
    processes : int
        Fresh processes the tool started for the benchmark in the run (JMH's forks), each paying
        a start-up that no sample shows.
    warmup_seconds : float
        Seconds of warm-up iterations the tool ran and did not report, all processes together
        (JMH: ``forks x warmupIterations x warmupTime``).
    iteration_seconds : float
        How long one reported iteration lasts, as the tool was told (JMH's ``measurementTime``).
    """

    processes: int
    warmup_seconds: float
    iteration_seconds: float


@dataclass(frozen=True)
class RunRecord:
    """One run, as written to the store in one transaction."""

    benchmark: str
    version: str
    run_index: int
    samples: np.ndarray
    config: str = DEFAULT_CONFIG
    machine: str = "local"
    status: str = "ok"
    exit_code: int | None = None
    stderr_tail: str | None = None
    started_at: datetime | None = None
    duration: float | None = None
    warmup: int = 0
    first_iteration: int = 0
    campaign_id: int | None = None
    #: A Python benchmark's iterations timed as slices (``slices = N``): ``(samples, N)`` seconds
    #: per call, warm-up included, kept beside the run for ``regbench optimize``; None: no slices.
    slices: np.ndarray | None = None
    #: What the tool said the run cost beyond its samples (a JMH benchmark's forks, warm-up and
    #: iteration length), kept beside the run for ``regbench optimize``; None: not said.
    timing: ToolTiming | None = None
    #: Per sample (warm-up included), how many measurements the tool pooled into it (a JMH
    #: sample-mode iteration's timed invocations), whose weighted mean is the tool's own score;
    #: None: every sample counts alike.
    weights: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class RunToolInfo:
    """What a tool said of one stored run beyond its samples (table ``run_tool``), keyed like the run.

    Attributes
    ----------
    benchmark, version, config, machine : str
    run_index : int
    timing : ToolTiming or None
        The processes, unreported warm-up and iteration length of the run (:class:`ToolTiming`).
    weights : numpy.ndarray or None
        Per stored sample (warm-up included), the measurements the tool pooled into it.
    """

    benchmark: str
    version: str
    config: str
    machine: str
    run_index: int
    timing: ToolTiming | None
    weights: np.ndarray | None


@dataclass(frozen=True)
class VersionInfo:
    """A version of the software under test, in history order.

    What the store reads (:meth:`regbench.store.Store.versions`) and what a writer gives it
    (:meth:`~regbench.store.Store.ensure_version`, ``add_run(version_info=...)``...).  ``id`` is the
    store's key, 0 for a version not read from a store (a writer's id is ignored); ``timestamp``
    orders versions (the store keeps it in UTC, naive) and ``timestamp_text`` is the timestamp as
    it was given, so that an export reproduces an import.
    """

    name: str
    id: int = 0
    commit: str | None = None
    timestamp: datetime | None = None
    timestamp_text: str | None = None
    #: How many commits the version's commit reaches, itself included (``git rev-list --count``),
    #: recorded where its timestamp ties another version's; None elsewhere and without a repository.
    generation: int | None = None

    @property
    def history_key(self) -> tuple[int, datetime, int, int]:
        """Sort key of history order: versions with a timestamp in time order; commits of one
        timestamp (a rebased series shares its committer date) by their generation, an ancestor
        first; other ties, and versions without a timestamp, in the order the store first saw
        them (DESIGN.md "Data": order comes from history, never from insertion alone when
        history is known)."""
        if self.timestamp is None:
            return (1, datetime.min, 0, self.id)
        return (0, self.timestamp, -1 if self.generation is None else self.generation, self.id)


#: The schedule (``plan["schedule"]``) of a campaign that is a session of ``compare --run``,
#: ``bisect`` or ``detect --confirm``: its runs are not part of a series' history unless asked.
SESSION_SCHEDULE = "sequential-pairs"

#: What a version's alias is in git: a tag or a branch name (:class:`VersionAlias`).
ALIAS_KINDS = ("tag", "branch")


@dataclass(frozen=True)
class VersionAlias:
    """Another name of a stored version: a git tag (``v10.5.0``) or branch name (``main``) that
    pointed at its commit when it was benchmarked.  ``kind`` is one of :data:`ALIAS_KINDS`."""

    name: str
    kind: str = "tag"

    def __post_init__(self):
        if self.kind not in ALIAS_KINDS:
            raise ValueError(f"`kind` must be one of {', '.join(ALIAS_KINDS)}, got {self.kind!r}")


def version_labels(aliases: Mapping[str, Iterable[VersionAlias]]) -> dict[str, str]:
    """The name each tagged version is shown by, by stored name: its tag (the first by name, when
    it has several), as people name a release, rather than the commit's short sha it is stored
    under.  ``aliases`` is :meth:`regbench.store.Store.aliases`; a branch name is no label, since
    a branch moves on."""
    labels = {}
    for name, names in aliases.items():
        tags = sorted(a.name for a in names if a.kind == "tag")
        if tags:
            labels[name] = tags[0]
    return labels


@dataclass
class Series:
    """The history of one benchmark x configuration x machine.

    ``runs[k]`` holds the measured samples (warm-up removed) of every successful run of
    ``versions[k]``, one array per run; ``failed[k]`` counts the runs that did not succeed and ``warmup[k]`` is the number of warm-up
    iterations its runs discarded.
    """

    benchmark: str
    config: str
    machine: str
    unit: str
    direction: str
    versions: list[VersionInfo] = field(default_factory=list)
    runs: list[list[np.ndarray]] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    warmup: list[int] = field(default_factory=list)  # warm-up iterations per run (largest), per version

    def __len__(self) -> int:
        return len(self.versions)

    def index(self, version: str) -> int:
        for k, v in enumerate(self.versions):
            if v.name == version:
                return k
        raise KeyError(version)


# ------------------------------------------------------------------------------ store records
# What :class:`regbench.store.Store` returns: frozen records with named fields, never rows or
# dicts (STYLE.md habit 18).  ``id`` fields are the store's own keys, stable for the life of a store.


@dataclass(frozen=True)
class BenchmarkInfo:
    """A stored benchmark.

    Attributes
    ----------
    id : int
        Its key in the store.
    name : str
        The series name (``sort``, ``sort:maxrss``, ``gobench/BenchmarkSort-2``; see :class:`SeriesName`).
    unit : str
        Unit of its samples (``s``, ``ns``, ``ops/s``...).
    direction : str
        ``lower`` or ``higher`` (:data:`DIRECTIONS`): which way is better.
    """

    id: int
    name: str
    unit: str
    direction: str


@dataclass(frozen=True)
class CampaignInfo:
    """A stored campaign: one schedule of runs, as ``regbench run`` (or bisect, compare) started it.

    Attributes
    ----------
    id : int
        Its key in the store (a run's ``campaign_id``).
    started_at, finished_at : datetime
        UTC, naive; ``finished_at`` is None while it runs (or when it was killed).
    seed : int
        The seed of its randomized order, so that the schedule can be reproduced.
    machine_id, machine : int, str
        The machine it ran on, by key and by name.
    fingerprint : dict or None
        The machine's fingerprint when it started (CPU, kernel, governor...).
    command : str or None
        The command line that started it.
    plan : dict or None
        What it was asked to do (schedule, noise control, per-benchmark plans), as JSON.
    status : str
        ``running``, ``finished``, ``interrupted``...
    """

    id: int
    started_at: datetime
    finished_at: datetime | None
    seed: int
    machine_id: int
    machine: str
    fingerprint: dict | None
    command: str | None
    plan: dict | None
    status: str

    @property
    def benchmark_plans(self) -> dict[str, dict]:
        """Its plan's entry of each benchmark it ran (what a campaign of ``regbench run`` records:
        kind, definition, runs...); empty for a session (``compare --run``, ``bisect``), whose
        plan lists the benchmarks' names alone, and for a campaign without a plan."""
        benchmarks = (self.plan or {}).get("benchmarks")
        if not isinstance(benchmarks, dict):
            return {}
        return {name: b for name, b in benchmarks.items() if isinstance(b, dict)}

    @property
    def session(self) -> bool:
        """Whether it is a session of ``compare --run``, ``bisect`` or ``detect --confirm``
        (:data:`SESSION_SCHEDULE`), not a campaign of a history."""
        return (self.plan or {}).get("schedule") == SESSION_SCHEDULE

    @property
    def definitions(self) -> dict[str, dict]:
        """What each benchmark it ran runs, as recorded (:func:`regbench.run.definitions.definition`):
        a campaign's in its :attr:`benchmark_plans`, a session's in its plan's ``definitions``
        (sessions before they recorded them: none); empty without a plan."""
        if self.session:
            recorded = (self.plan or {}).get("definitions")
            entries: dict = recorded if isinstance(recorded, dict) else {}
        else:
            entries = {name: b.get("definition") for name, b in self.benchmark_plans.items()}
        return {name: d for name, d in entries.items() if isinstance(d, dict)}


@dataclass(frozen=True)
class BuildInfo:
    """The recorded build of one version with one build command.

    Attributes
    ----------
    id : int
        Its key in the store.
    version_id, version : int, str
        The version built, by key and by name.
    build_key : str
        A short hash of the build command (:func:`regbench.run.versions.build_key`).
    status : str
        ``ok``, ``failed`` or ``timeout``.
    exit_code : int or None
        The build's exit status (None when it never ran to an exit, e.g. a release's environment).
    log_tail : str or None
        The end of its output.
    duration : float or None
        Seconds.
    created_at : datetime
        When it was recorded (UTC, naive).
    """

    id: int
    version_id: int
    version: str
    build_key: str
    status: str
    exit_code: int | None
    log_tail: str | None
    duration: float | None
    created_at: datetime


@dataclass(frozen=True)
class RunInfo:
    """A stored run's metadata, without its samples (cheap to list: ``regbench show``).

    Attributes
    ----------
    id : int
        Its key in the store (runs are listed in this order: the order they were stored).
    benchmark, version, config, machine : str
        The experiment, by name.
    run_index : int
        Its index among the runs of the experiment.
    status : str
        One of :data:`RUN_STATUSES`, or :data:`SUPERSEDED`; only ``ok`` runs have samples that
        analyses use.
    exit_code : int or None
        The process's exit status.
    stderr_tail : str or None
        The end of its standard error (or a note on why it failed).
    n_samples : int
        Number of samples stored, warm-up included.
    warmup : int
        How many of them are warm-up iterations.
    first_iteration : int
        The number of its first stored iteration (an imported file may start elsewhere than 0).
    started_at : datetime or None
        When it started (UTC, naive).
    duration : float or None
        Seconds the process took.
    campaign_id : int or None
        The campaign that ran it (None for imported runs).
    """

    id: int
    benchmark: str
    version: str
    config: str
    machine: str
    run_index: int
    status: str
    exit_code: int | None
    stderr_tail: str | None
    n_samples: int
    warmup: int
    first_iteration: int
    started_at: datetime | None
    duration: float | None
    campaign_id: int | None

    @property
    def failed(self) -> bool:
        """Whether the run failed (a status of :data:`RUN_STATUSES` other than ``ok``): a
        superseded run is neither ok nor failed."""
        return self.status != "ok" and self.status != SUPERSEDED


@dataclass(frozen=True, eq=False)
class StoredRun(RunInfo):
    """A stored run with its decoded samples and what a reader of raw runs (export, diagnosis) needs.

    A :class:`RunInfo` with more: :meth:`regbench.store.Store.runs` lists the metadata alone, and
    :meth:`~regbench.store.Store.raw_runs` / :meth:`~regbench.store.Store.iter_raw_runs` give these.
    Records holding arrays compare by identity.

    Attributes
    ----------
    samples : numpy.ndarray
        Every stored sample in order, warm-up included (``samples[warmup:]`` are the measured ones),
        float64 bit for bit as stored (the store's arrays are read-only views of the stored bytes).
    unit, direction : str
        The benchmark's (:class:`BenchmarkInfo`).
    timestamp_text : str or None
        The version's timestamp as it was given (:attr:`VersionInfo.timestamp_text`), for export.
    timing : ToolTiming or None
        What the tool said the run cost beyond its samples (table ``run_tool``), as
        :attr:`RunRecord.timing`; None: not said.
    weights : numpy.ndarray or None
        Per stored sample (warm-up included), the measurements the tool pooled into it, as
        :attr:`RunRecord.weights`; None: every sample counts alike.
    """

    samples: np.ndarray
    unit: str
    direction: str
    timestamp_text: str | None
    #: The version's commit sha, if it has one, for export (so a pushed run names its commit).
    commit: str | None = None
    #: The version's git tags, by name, for export (so a server names a pushed version as its tags).
    tags: tuple[str, ...] = ()
    timing: ToolTiming | None = None
    weights: np.ndarray | None = None

    # RunInfo's generated __eq__ would compare metadata alone, and ``==`` on arrays is ambiguous.
    __eq__ = object.__eq__
    __hash__ = object.__hash__


# ------------------------------------------------------------------------------------ plans

@dataclass(frozen=True)
class ExecutionPlan:
    """How much one benchmark is repeated in later campaigns: an optimized plan (Japke et al.
    2025, Algorithm 1), derived from a stored full campaign (``regbench optimize``).

    Attributes
    ----------
    benchmark, config, machine : str
        The series it is for (a tool's benchmark as ``SPEC/NAME``).
    revision : int
        1 for its first plan, one more each time it is derived again; the highest is current.
    campaign_id : int
        The full campaign it was derived from.
    version : str
        The version whose runs it was derived from.
    runs, iterations, warmup : int
        The repetition levels it asks for: runs (fresh processes) of ``warmup`` + ``iterations``.
        A tool's run of several processes of its own (JMH's forks) runs them in each process
        (``REGBENCH_ITERATIONS`` is JMH's ``-i``); its forks are what the tool's command sets
        (:func:`regbench.optimize.plans.plan_forks`) unless ``forks`` says otherwise.
    full_runs, full_iterations : int
        The full configuration it was reduced from (iterations of each fork, likewise).
    metric : str
        The stability metric (``cv``, ``rmad``, ``rciw1``, ``rciw2``, ``rciw3``).
    threshold : float
    stability, full_stability : float
        The metric under the plan and under the full configuration: the precision to expect.
    stable : bool
        False when not even the full configuration was under the threshold (the plan is the full one).
    seconds, full_seconds : float or None
        Expected seconds of runs per version under the plan and under the full configuration
        (from the stored durations of the full campaign's runs; None when they are not stored).
    created_at : datetime
        UTC, naive.
    run_overhead : float or None
        The fixed cost of one run, in iterations, that the plan was priced with
        (:func:`regbench.optimize.algorithm.run_overhead`): 0 when the store had runs of one
        length only (iterations alone priced); None for plans stored before schema 0012.
    slices, full_slices : int or None
        The duration level (schema 0013): each iteration lasts ``slices`` of the ``full_slices``
        slices the full campaign's iterations were timed as (a Python benchmark's ``slices``);
        None where they were not sliced (iterations as long as the full campaign's).
    forks : int or None
        The forks level (schema 0019): the processes of the tool's own each run asks for
        (``REGBENCH_FORKS``, which the tool's command reads); None where the forks are not a
        level of the plan (the command's own, or one process a run).
    fork_overhead : float or None
        With ``forks``: the fixed cost of each fork the plan was priced with, in iterations (its
        start and the tool's warm-up in it); ``run_overhead`` is then what a run pays once.
    """

    benchmark: str
    config: str
    machine: str
    revision: int
    campaign_id: int
    version: str
    runs: int
    iterations: int
    warmup: int
    full_runs: int
    full_iterations: int
    metric: str
    threshold: float
    stability: float
    full_stability: float
    stable: bool
    seconds: float | None
    full_seconds: float | None
    created_at: datetime
    run_overhead: float | None = None
    slices: int | None = None
    full_slices: int | None = None
    forks: int | None = None
    fork_overhead: float | None = None

    @property
    def duration(self) -> float:
        """How long an iteration lasts under the plan, as a share of the full campaign's."""
        return self.slices / self.full_slices if self.slices and self.full_slices else 1.0


# ------------------------------------------------------------------------------------ alerts
# (the alert record and its vocabulary's helpers)

#: Who the alert events written by detection itself are attributed to.
SYSTEM_ACTOR = "regbench"


@dataclass(frozen=True)
class Confirmation:
    """What running a detected change's two versions again, interleaved, said of it (``regbench
    detect --confirm``; :mod:`regbench.run.confirm`), and what that cost.

    Attributes
    ----------
    status : str
        One of :data:`CONFIRMATION_STATUSES`: ``confirmed`` (the sequential comparison found a
        change in the same direction), ``refuted`` (no change of the threshold's size, a smaller
        one, or one in the other direction), ``inconclusive`` (the budget or the pair limit came
        first), ``unconfirmed`` (the change could not be run again here: ``reason`` says why).
    reason : str or None
        Why, in words, for every status but ``confirmed``.
    verdict : str or None
        The sequential verdict (:attr:`regbench.run.sequential.Settled.verdict`: ``regression``,
        ``regression (size uncertain)``, ``no change``, ...); None when nothing was run.
    stopped : str or None
        Why the comparison stopped: ``settled``, ``budget``, ``max-pairs``, ``failed`` (runs kept
        failing) or ``unbuilt``; None when nothing was run.
    change, cs_low, cs_high : float or None
        The relative change of the newer version and its always-valid confidence-sequence
        interval when the comparison stopped (``cs_low``/``cs_high``, relative, like
        ``ci_low``/``ci_high`` of a change).
    alpha, threshold : float or None
        The comparison's error rate and the relative change it settled against (the detection's
        minimum change).
    pairs, failed_pairs : int
        Pairs of runs whose two runs succeeded (the observations), and pairs with a failed run.
    seconds : float
        Wall-clock seconds of benchmark runs the comparison took.
    campaign_id : int or None
        The campaign (a sequential session) holding the runs.
    compared_by : str or None
        What the pairs compared, in one line (:attr:`regbench.run.sequential.Settled.compared_by`:
        run means, a low quantile, mode by mode, instruction counts; duet or interleaved runs);
        None when nothing was run, and for confirmations stored before schema 0011.
    """

    status: str
    reason: str | None = None
    verdict: str | None = None
    stopped: str | None = None
    change: float | None = None
    cs_low: float | None = None
    cs_high: float | None = None
    alpha: float | None = None
    threshold: float | None = None
    pairs: int = 0
    failed_pairs: int = 0
    seconds: float = 0.0
    campaign_id: int | None = None
    compared_by: str | None = None

    def __post_init__(self):
        if self.status not in CONFIRMATION_STATUSES:
            raise ValueError(f"`status` must be one of {', '.join(CONFIRMATION_STATUSES)}, got {self.status!r}")

    @property
    def alerts(self) -> bool:
        """Whether the change becomes an alert (confirmed, or not confirmable here)."""
        return self.status in ALERTING_CONFIRMATIONS

    def to_json(self) -> dict:
        """A JSON-ready dict (non-finite numbers as None); the key order is stable."""
        return {"status": self.status, "reason": self.reason, "verdict": self.verdict, "stopped": self.stopped,
                "change": num(self.change), "cs_low": num(self.cs_low), "cs_high": num(self.cs_high),
                "alpha": self.alpha, "threshold": self.threshold, "pairs": self.pairs,
                "failed_pairs": self.failed_pairs, "seconds": round(self.seconds, 3),
                "campaign_id": self.campaign_id, "compared_by": self.compared_by}


@dataclass(frozen=True)
class MachineEvidence:
    """One machine's view of an alert's change: where it showed, how much, and who found it.

    ``version``/``previous`` are the machine's own (machines measure different versions, so
    their candidate versions differ); ``change`` is its relative change with the interval
    ``[ci_low, ci_high]`` (the tightest any method gave on it) and ``p_value``; ``methods`` are the
    detectors that found it there.  A failure alert's own machine has no change (None) and no
    method.  ``until`` is the machine's own span of a creep (:attr:`Alert.until`): the first
    version at the new level, so that the change is spread over ``version`` .. ``until`` there;
    None for a step.
    """

    machine: str
    version: str
    previous: str
    change: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    methods: tuple[str, ...]
    until: str | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict (strict JSON: a change from exactly 0, +inf, is null; ``until`` only for
        a creep, as in :meth:`Alert.to_json`); the key order is stable."""
        return {"machine": self.machine, "version": self.version, "previous": self.previous,
                "change": num(self.change), "ci_low": num(self.ci_low), "ci_high": num(self.ci_high),
                "p_value": num(self.p_value), "methods": list(self.methods),
                # only for a creep: the evidence of steps reads as before
                **({"until": self.until} if self.until is not None else {})}


@dataclass(frozen=True)
class Alert:
    """One alert as stored, with its series and versions by name.

    ``version`` is the first version that shows the change and ``previous`` the last one before
    it (as in a :class:`~regbench.detect.Change`); ``kind`` is one of :data:`ALERT_KINDS` and
    ``status`` one of :data:`ALERT_STATUSES`; ``change`` is the relative change of the central
    value with its interval ``[ci_low, ci_high]`` (the tightest any method gave); ``methods``
    are every detector that found it.  A ``failure`` alert (:data:`FAILURE_KIND`: the benchmark
    ran at ``previous`` and every run of it failed from ``version`` on; ``previous`` is
    ``version`` when no run of it had succeeded, :attr:`never_succeeded`) has no change, interval,
    p-value or method (None, None, None, ``()``) and says why its runs failed in ``error`` (one
    line, :func:`regbench.failures.failure_cause`); it is ``fixed`` when a run of it succeeds
    again (``fixed_by``, with no ``fixed_by_alert``), or when it is no longer run (removed from
    the suite, renamed, or its machine or configuration retired; no ``fixed_by`` either:
    :attr:`no_longer_run`).  ``uid`` is a random
    key, unique across stores, sent with every delivery so that a receiver can drop a duplicate.
    ``fixed_by`` is the version whose change restored performance and ``fixed_by_alert`` that
    change's alert; on that restoring alert, ``restores`` is the alert it fixed.  Times are UTC
    without a time zone.

    Across machines (:mod:`regbench.detect.alerts`): ``machine`` is the first machine that showed
    the change, and the fields above are its own; ``also_on`` is the evidence of the other
    machines that showed the same change (same benchmark, configuration and kind, overlapping
    candidate versions), ``unchanged_on`` the machines that measured versions around the step
    without showing it.  ``hold_machines`` is not None while the alert is *held*: seen on fewer
    machines than ``[alerts] require_machines`` asked (then this number), it is listed but not
    notified.
    """

    id: int
    uid: str
    benchmark: str
    config: str
    machine: str
    unit: str
    direction: str
    version: str
    previous: str
    kind: str
    change: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    methods: tuple[str, ...]
    status: str
    fixed_by: str | None
    fixed_by_alert: int | None
    created_at: datetime
    updated_at: datetime
    restores: int | None = None
    confirmation: Confirmation | None = None
    also_on: tuple[MachineEvidence, ...] = ()
    unchanged_on: tuple[str, ...] = ()
    hold_machines: int | None = None
    #: The tags of ``version`` and ``previous`` (their aliases of kind ``tag``, by name), filled in
    #: where the alert is told (:func:`regbench.store.alerts.with_tags`: notifications, ``alerts
    #: list`` and ``show``), so that a message names the release as well as the commit; empty
    #: where nobody asked.
    version_tags: tuple[str, ...] = ()
    previous_tags: tuple[str, ...] = ()
    #: Why the runs of a ``failure`` alert failed, on one line, as stored when it was opened
    #: (None for a change).
    error: str | None = None
    #: The commit ``detect --bisect`` found first to show the change (for a failure, the first
    #: where it fails); None when it was not bisected or no single commit was found.
    culprit: str | None = None
    #: What that bisection said, on one line (the commit with its own change or error, or the
    #: commits still in question); None when it was not bisected.
    bisection: str | None = None
    #: For a creep (``auto``'s ramp of small same-sign steps reported as one change,
    #: :attr:`regbench.detect.Change.until`): the first version at the new level, so that the
    #: change is spread over ``version`` .. ``until`` and no single commit made it; None for a step.
    until: str | None = None

    @property
    def failure(self) -> bool:
        """Whether this alert is of a benchmark that starts failing (:data:`FAILURE_KIND`), not
        of a change."""
        return self.kind == FAILURE_KIND

    @property
    def never_succeeded(self) -> bool:
        """Whether this is a failure alert of a series that had no successful run at any version
        when it was opened: ``previous`` is then ``version``, the first version it ran at."""
        return self.failure and self.previous == self.version

    @property
    def no_longer_run(self) -> bool:
        """Whether this is a failure alert fixed because its benchmark is no longer run (removed
        from the suite, renamed, or its machine or configuration retired: :class:`NoLongerRun`),
        which no version fixed (``fixed_by`` is None)."""
        return self.failure and self.status == "fixed" and self.fixed_by is None

    @property
    def series(self) -> tuple[str, str, str]:
        return (self.benchmark, self.config, self.machine)

    @property
    def evidence(self) -> tuple[MachineEvidence, ...]:
        """Every machine that showed the change, this alert's own machine first."""
        own = MachineEvidence(self.machine, self.version, self.previous, self.change, self.ci_low, self.ci_high,
                              self.p_value, self.methods, self.until)
        return (own, *self.also_on)

    @property
    def machines(self) -> tuple[str, ...]:
        """The machines that showed the change, this alert's own first."""
        return (self.machine, *(e.machine for e in self.also_on))

    @property
    def held(self) -> bool:
        """Whether the alert waits for more machines before it is notified."""
        return self.hold_machines is not None

    @property
    def spread(self) -> str:
        """One of :data:`MACHINE_SPREADS`: ``several`` machines showed it, it is ``machine-specific``
        (others measured the same versions without it), or ``single`` (no other machine measured
        them)."""
        if self.also_on:
            return "several"
        return "machine-specific" if self.unchanged_on else "single"

    @property
    def spread_label(self) -> str:
        """:attr:`spread` in a few words, as tables show it: ``3 machines``, ``machine-specific``,
        ``single machine``."""
        return {"several": f"{len(self.machines)} machines", "machine-specific": "machine-specific",
                "single": "single machine"}[self.spread]

    def to_json(self) -> dict:
        """A JSON-ready dict (times in ISO 8601 with ``Z``; strict JSON: a change from exactly 0,
        +inf, is null, and ``kind`` says which way it went; a failure's ``change``, interval and
        p-value are null and ``error`` says why its runs failed; ``until`` only for a creep); the key
        order is stable."""
        return {
            "id": self.id, "key": self.uid, "benchmark": self.benchmark, "config": self.config,
            "machine": self.machine, "unit": self.unit, "direction": self.direction,
            "version": self.version, "previous": self.previous, "kind": self.kind,
            "change": num(self.change), "ci_low": num(self.ci_low), "ci_high": num(self.ci_high),
            "p_value": num(self.p_value), "methods": list(self.methods), "status": self.status,
            "fixed_by": self.fixed_by, "fixed_by_alert": self.fixed_by_alert,
            "restores": self.restores, "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "confirmation": self.confirmation.to_json() if self.confirmation is not None else None,
            "spread": self.spread, "machines": [e.to_json() for e in self.evidence],
            "unchanged_on": list(self.unchanged_on), "held": self.held, "hold_machines": self.hold_machines,
            "version_tags": list(self.version_tags), "previous_tags": list(self.previous_tags),
            "error": self.error, "culprit": self.culprit, "bisection": self.bisection,
            # only for a creep, as in the detection JSON: the alerts of steps read as before
            **({"until": self.until} if self.until is not None else {}),
        }


@dataclass(frozen=True)
class Failing:
    """A series (benchmark x configuration x machine) whose runs at the newest version it was run at
    all failed (and were not run again with success since), where an earlier version had a
    successful run: it no longer runs, which no detector can see (a failed run has no samples).
    Or one that never succeeded at any version (:attr:`never_succeeded`, in
    :attr:`FailureScan.never_succeeded`): broken from its first run on.

    Attributes
    ----------
    benchmark, config, machine : str
        The series.  A tool's invocation that failed whole is its configured benchmark's (``gb``,
        not ``gb/BenchmarkSort``): nothing it reports could be read.
    version : str
        The newest version it was run at, where every run failed.
    failed_runs : int
        How many runs failed there.
    since : str
        The last version with a successful run (for a tool's invocation: of anything it reports);
        ``first`` itself when no version had one (as its failure alert's ``previous``).
    first : str
        The first version after ``since`` where its runs failed: where the failing stretch starts
        (``version`` when it failed at one version only); for a series that never succeeded, the
        first version it ran at.
    error : str
        Why its runs failed, on one line (:func:`regbench.failures.failure_cause` of the last
        failed run stored at ``first``).
    """

    benchmark: str
    config: str
    machine: str
    version: str
    failed_runs: int
    since: str
    first: str
    error: str

    @property
    def series(self) -> tuple[str, str, str]:
        return (self.benchmark, self.config, self.machine)

    @property
    def never_succeeded(self) -> bool:
        """Whether no version had a successful run of the series (``since`` is ``first``)."""
        return self.since == self.first


#: What stopped measuring a failing series that is no longer run (:attr:`NoLongerRun.retired`):
#: its machine (retired), or its configuration on its machine (removed).
RETIRED_PLACES = ("machine", "configuration")


@dataclass(frozen=True)
class NoLongerRun:
    """A series that failed at the newest version it ran at and is no longer run since: removed
    from the suite or renamed, or its machine or configuration retired
    (:func:`regbench.inventory.scan_failures`).  It is no failing benchmark: it does not gate, and
    its open failure alert is fixed, with no version that fixed it.

    A later version ``by`` of the history was measured on its machine and configuration, by a
    finished campaign or an import (a campaign of a subset, or one that did not finish, is no such
    measurement), and either that campaign's suite (the benchmarks of ``regbench.toml`` when it
    started, its plan's ``suite``) does not name it (``campaign``), or every benchmark that ran
    beside it at ``anchor`` ran there (``companions``, by configured name) without it.  Failing
    benchmarks that ran beside it and stopped with it (``together``) are shown gone by
    ``measured`` such versions, not one (:mod:`regbench.silence`).  Or (``retired``) its machine,
    or its configuration on its machine, stored nothing at any version after ``last`` (at or
    after ``version``), while the others (other machines; the machine's other configurations)
    measured ``measured`` later versions, ``by`` the last of them
    (:func:`regbench.silence.retired`).

    Attributes
    ----------
    benchmark, config, machine : str
        The series.
    version : str
        The newest version it ran at, where every run failed.
    by : str
        The first version after ``version`` that shows it is no longer run.
    campaign : int or None
        The campaign at ``by`` whose suite does not name it; None when the measurement at ``by``
        shows it.
    anchor : str or None
        The newest version up to ``version`` where it ran beside other benchmarks (None: it never
        did, and any later measurement of others shows it gone).
    companions : tuple of str
        The configured benchmarks that ran beside it at ``anchor``, by name, which all ran at
        ``by`` (those themselves no longer run aside, and those of ``together``); empty when
        ``campaign`` or ``retired`` tells.
    together : tuple of str
        The configured benchmarks that ran beside it at ``anchor`` and fail too, which ran at
        no version from the newest of theirs and its own up to ``by``: removed together.
    retired : str or None
        One of :data:`RETIRED_PLACES` when what stopped measuring is its machine or its
        configuration on its machine, not the benchmark; None otherwise.
    measured : int
        With ``retired`` or ``together``: how many later versions the others measured without it,
        up to ``by`` (:func:`regbench.silence.silence_needed` of ``lead``); 0 otherwise.
    lead : int
        With ``measured``: the most versions the others were ever ahead of it before it stored
        runs again (:func:`regbench.silence.longest_lead`): how far behind it is when merely slow.
    last : str or None
        With ``retired``: the newest version where its machine (or its configuration on its
        machine) stored any run: ``version``, or a later one; ``measured`` counts after it.
    """

    benchmark: str
    config: str
    machine: str
    version: str
    by: str
    campaign: int | None = None
    anchor: str | None = None
    companions: tuple[str, ...] = ()
    together: tuple[str, ...] = ()
    retired: str | None = None
    measured: int = 0
    lead: int = 0
    last: str | None = None

    @property
    def series(self) -> tuple[str, str, str]:
        return (self.benchmark, self.config, self.machine)

    def silence(self, labels: Mapping[str, str] | None = None) -> str | None:
        """What went silent, as messages say it, versions by their ``labels`` if given (None
        unless ``retired``): ``ci-3 measured nothing since v2, while other machines measured 20
        later versions, up to v22``."""
        labels = labels or {}
        last = self.last or self.version
        since, by = labels.get(last, last), labels.get(self.by, self.by)
        if self.retired == "machine":
            return (f"{self.machine} measured nothing since {since}, while other machines measured "
                    f"{self.measured} later versions, up to {by}")
        if self.retired == "configuration":
            return (f"{self.machine} measured nothing in configuration {self.config} since {since}, while it "
                    f"measured {self.measured} later versions in other configurations, up to {by}")
        return None


@dataclass(frozen=True)
class RunSpan:
    """When runs of one configuration at one version were stored on a machine: the ids of the
    first and the last (ids count up in the order the store received runs,
    :meth:`regbench.store.Store.last_run_id`), whatever their benchmark, status or campaign
    (:meth:`regbench.store.Store.run_spans`)."""

    config: str
    version: str
    first: int
    last: int


@dataclass(frozen=True)
class FailureScan:
    """What the failed runs of a store (or of one benchmark) say, for the alert rules
    (:func:`regbench.inventory.scan_failures`; :func:`regbench.detect.alerts.record_alerts`).

    Attributes
    ----------
    failing : tuple of Failing
        The series failing at the newest version they ran at, by name.
    succeeded : mapping
        For every series of the scan that has a failed run, the versions where it has a successful
        run (for a tool's invocation: of anything it reports), in history order.  A series with
        a failure alert has failed runs, so this is where a failure alert learns that its series
        runs again; a series not in it was not scanned (another benchmark than the one asked for).
    no_longer_run : tuple of NoLongerRun
        The series that failed at the newest version they ran at and are no longer run since
        (removed from the suite, or renamed; or their machine or configuration retired), by name:
        not in ``failing``.
    never_succeeded : tuple of Failing
        The series whose runs failed at every version they ran at, by name
        (:attr:`Failing.never_succeeded`): broken from their first run, they are failure alerts
        too, but not in ``failing`` (what gates ``detect``, and is bisected between the last
        version that worked and the first that failed).
    never_succeeded_gone : tuple of NoLongerRun
        Those of them no longer run, as ``no_longer_run`` tells a failing series (not in
        ``never_succeeded``; nor in ``no_longer_run``, the failing series that stop gating).
    """

    failing: tuple[Failing, ...] = ()
    succeeded: Mapping[tuple[str, str, str], tuple[str, ...]] = field(default_factory=dict)
    no_longer_run: tuple[NoLongerRun, ...] = ()
    never_succeeded: tuple[Failing, ...] = ()
    never_succeeded_gone: tuple[NoLongerRun, ...] = ()


def num(x: float | None) -> float | None:
    """A number for strict JSON: None for None, NaN and the infinities."""
    return None if x is None or not math.isfinite(x) else float(x)


def iso(when: datetime | None) -> str | None:
    """A naive UTC time in ISO 8601 with ``Z`` (None stays None)."""
    return None if when is None else when.isoformat(timespec="seconds") + "Z"


def iso_timestamp(timestamp: datetime) -> str:
    """``timestamp`` as ISO 8601 text, the form a version's timestamp is shown and exported in when
    it was not given as text: with its UTC offset when it has one, else (the store's naive UTC)
    with ``Z``: ``2024-05-01T00:00:00Z``, never ``2024-05-01 00:00:00``.  Unlike :func:`iso`, fractions
    of a second are kept: they order versions."""
    return timestamp.isoformat() if timestamp.tzinfo is not None else timestamp.isoformat() + "Z"


def utcnow() -> datetime:
    """The current time as naive UTC (the store's convention)."""
    return datetime.now(UTC).replace(tzinfo=None)


def as_utc(now: datetime | None) -> datetime:
    """``now`` as naive UTC (the store's convention); the current time when None."""
    if now is None:
        return datetime.now(UTC).replace(tzinfo=None)
    if now.tzinfo is not None:
        return now.astimezone(UTC).replace(tzinfo=None)
    return now
