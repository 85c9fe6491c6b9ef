"""``regbench.toml``: what to benchmark, how often, and where versions come from.

Parsed with :mod:`tomllib` into frozen dataclasses; every problem is a one-line
:class:`~regbench.errors.ConfigError` naming the file, the benchmark and the key.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeGuard

from .errors import ConfigError, shown
from .model import ALERT_KINDS, DIRECTIONS, FAILURE_KIND, SeriesName, measure_series

if TYPE_CHECKING:
    from .screening.space import ConfigurationSpace

CONFIG_NAME = "regbench.toml"

#: How the parsers report a problem: a function that raises :class:`ConfigError` with the message.
Fail = Callable[[str], NoReturn]

OUTPUT_FORMATS = ("lines", "jsonl")
#: What a run can measure beyond its samples (``measures`` of a benchmark): each becomes the
#: series ``NAME:MEASURE`` with one sample per run (:mod:`regbench.run.measures`).
MEASURES = ("cpu", "maxrss", "instructions", "wall")
#: What the quiet-system gate does when the machine stays busy (``[noise] quiet``).
QUIET_MODES = ("wait", "warn")

#: Samples one run may print at most, by default (``max_samples``): 80 MB of float64.
DEFAULT_MAX_SAMPLES = 10_000_000
_WEEK = 7 * 24 * 3600.0
#: The largest value each numeric key takes (docs/configuration.md "Limits"): beyond them a
#: value is a typo, and it would break something later (a timeout of 3,000,000 s overflows
#: poll(), a billion runs make a schedule that never starts).  Keys are matched by name, in any
#: table.
LIMITS: dict[str, float] = {
    "timeout": _WEEK, "build_timeout": _WEEK, "min_time": 3600.0, "quiet_wait": _WEEK,
    "budget": 365 * 24 * 3600.0,
    "runs": 100_000, "pilot": 100_000, "iterations": 100_000_000, "warmup": 100_000_000,
    "max_samples": 100_000_000,
    # One environment string may not exceed 128 KiB on Linux (MAX_ARG_STRLEN): the pad is one.
    "env_size": 131_072,
    "quiet_load": 1_000.0,
    "confirm_max_pairs": 1_000_000, "retries": 1_000,
    # Versions and a factor of them: beyond these no machine would ever be retired.
    "retire_after": 1_000_000, "retire_lag_factor": 1_000,
    # optimize's work grows with it (every duration of 1..N slices is simulated).
    "slices": 100,
}
#: The largest CPU number `pin` accepts (Linux supports up to 8192 CPUs today).
MAX_CPU = 65_535

EXAMPLE = '''\
# regbench.toml: what regbench measures.  Every key is optional unless marked "required".

[project]
name = "myproject"
# A git repository holding the versions to benchmark with `regbench run --versions A..B`
# (relative to this file).  Without --versions, the working tree is benchmarked as it is.
repo = "."
# Build command, run once per commit inside its own git worktree (argv list, no shell).
# A commit that fails to build is recorded as such and the campaign goes on.
# build = ["make", "-j2"]
# build_timeout = 600
# How many built commits are kept (their worktrees, beside the store) so that the next campaign
# does not build them again; 0 builds every commit again in every campaign.
# build_cache = 8
# Benchmarks kept outside the project's history (as asv does), so that old versions are measured
# with today's benchmarks: this folder (relative to this file) is put first on PYTHONPATH of every
# run of every version and exported as REGBENCH_BENCHMARK_DIR; it is not copied into worktrees.
# benchmark_dir = "benchmarks"
# The branch whose first-parent line `regbench detect` reads as the history (default: HEAD).
# branch = "main"
# What the benchmarks need besides the package itself in every `regbench run --releases`
# environment (pip requirements; the releases' environments hold nothing else):
# benchmark_requires = ["pytest", "pytest-benchmark"]
# Where results go: a path or a SQLAlchemy URL (default .regbench/results.db beside this file;
# --store and REGBENCH_STORE override it).  Add .regbench/ to .gitignore: it holds the store and the
# worktrees of benchmarked commits.
# store = ".regbench/results.db"

# Repetition levels (Japke et al. 2025, s.2) used by every benchmark unless it sets its own:
[defaults]
runs = 10          # fresh processes per version: the unit of replication (Kalibera et al. 2005, s.2)
iterations = 20    # measured iterations per run
warmup = 2         # leading iterations of every run discarded as warm-up, or "auto": each run's
                   # steady state is detected (MSER-5, Bulej et al. 2005, s.2.2) and what precedes it discarded
timeout = 60       # seconds before a run is killed (its whole process group) and recorded as "timeout"
unit = "s"
direction = "lower"  # "lower" or "higher" is better

# A command benchmark: one process per run.  It prints its samples on stdout, one number per
# line ("lines") or one JSON object per line with a "value" key ("jsonl").  It is told how many
# iterations to do through REGBENCH_ITERATIONS (warm-up included) and REGBENCH_WARMUP.
[[benchmark]]
name = "example-sort"                                       # required, unique
command = ["python3", "-c", "import os,time,random\\nfor _ in range(int(os.environ.get('REGBENCH_ITERATIONS', 22))):\\n    t=time.perf_counter(); sorted(random.random() for _ in range(20000)); print(time.perf_counter()-t)"]
# cwd = "."                                                 # relative to the version's tree
# env = { PYTHONHASHSEED = "0" }                            # set for the benchmark process
# pass_env = ["OMP_NUM_THREADS", "CUDA_*"]                  # inherited too, besides PATH, HOME, locale...
output = "lines"
unit = "s"
direction = "lower"
# runs = 10, iterations = 20, warmup = 2, timeout = 60      # override [defaults]

# A Python benchmark: `module:function` called in a fresh worker process, with an inner loop
# calibrated (like timeit and pyperf) so that one iteration lasts at least min_time seconds;
# samples are seconds per call.  The module is imported from the version's tree.
# [[benchmark]]
# name = "fib"
# python = "benchmarks.fib:fib20"
# min_time = 0.01
# slices = 5                                               # time each iteration as 5 slices (`regbench optimize`
#                                                          #   can then try shorter iterations: docs/optimize.md)
# measures = ["cpu", "maxrss"]                             # also the series fib:cpu and fib:maxrss
# requires = ["hyperfine"]                                 # --executor dask: only workers with these resources
# alerts = false                                           # never alert on this benchmark

# A benchmark tool's whole suite as one command: each invocation is one run, every benchmark it
# reports a series NAME/BENCHMARK (adapters: go, go-json, jmh, google-benchmark, criterion,
# cargo-bench, pytest-benchmark, pyperf, asv, hyperfine, bmf; docs/configuration.md).
# [[benchmark]]
# name = "go"
# command = ["sh", "-c", "go test -run '^$' -bench . -count \\"$REGBENCH_ITERATIONS\\" ./..."]
# format = "go"
# iterations = 5                                           # -count 6: the first of each is warm-up
# warmup = 1
# timeout = 300

# Noise control for every run (Larres et al. 2013, s.3; Bulej et al. 2005, s.3.1); all off unless set here or by
# `regbench run` options.  What was used is recorded with each campaign.
# [noise]
# pin = [1]             # CPUs the benchmark process runs on ("0,1" or "1-3" also work)
# aslr = false          # no address-space randomization for the benchmark process (setarch -R)
# ramdisk = true        # run in a copy of the benchmark's cwd on a tmpfs (/dev/shm)
# env_size = 4096       # pad the environment to exactly this many bytes
# quiet_load = 0.5      # before each run, wait until at most this share of the CPUs is busy
# quiet_wait = 60       # ... for at most this many seconds
# quiet = "wait"        # or "warn": do not wait, note a busy system in the run's stderr tail
# exclusive = false     # on by default: runs of concurrent regbench commands on this machine interleave

# Alerts: every change found by `regbench detect` becomes an alert once (`regbench alerts`).
# [alerts]
# suppress = ["experimental-*"]     # globs of benchmark names whose changes are not alerts
# require_machines = 2              # notify a change only once this many machines show it (default 1)

# `regbench detect`'s defaults (its options override them):
# [detect]
# confirm = true                    # run each new change's two versions again, interleaved, and alert
#                                   # only when that confirms it (`regbench detect --confirm`)
# confirm_budget = "10m"            # benchmark time per change at most (seconds, or "90s", "10m", "1h")
# confirm_max_pairs = 100           # pairs of runs per change at most
# confirm_as = "follow"             # what the pairs compare: the detection's summary of a run
#                                   # (follow), mean, median, low, by-mode or instructions
# retire_after = 20                 # a machine (configuration) that stored nothing while the others
# retire_lag_factor = 3             # measured max(20, 3 x its worst lag) later versions is retired:
#                                   # its failing benchmarks stop failing

# Where `regbench alerts notify` sends new alerts (each alert once per sink):
# [[notify]]
# type = "markdown"                 # or "terminal", "json", "webhook", "email"
# path = "regbench-alerts.md"       # e.g. for a pull-request comment
# [[notify]]
# type = "webhook"                  # Slack-compatible POST
# url_env = "SLACK_WEBHOOK_URL"     # or url = "https://..."
'''


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark as configured (never mutated once built)."""

    name: str
    kind: str  # "command" or "python"
    command: tuple[str, ...] = ()
    target: str = ""  # module:function for kind == "python"
    cwd: str = "."
    env: dict[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()  # more variables (names or globs) inherited from regbench's environment
    output: str = "lines"
    unit: str = "s"
    direction: str = "lower"
    timeout: float = 60.0
    runs: int = 10
    iterations: int = 20
    warmup: int = 0
    warmup_auto: bool = False  # warmup = "auto": detected per run from its samples
    min_time: float = 0.01
    #: Python benchmarks: each iteration timed as this many consecutive slices, kept with the run,
    #: so that ``regbench optimize`` can simulate shorter iterations (the duration level).
    slices: int = 1
    #: A plan's shorter iterations (``regbench run --plan optimized``): each warm-up iteration
    #: timed as this many slices, as long as the full campaign's; 0: as many as ``slices``.
    warmup_slices: int = 0
    #: Run with an optimized plan (``regbench run --plan optimized``): the samples a run reports
    #: are checked against the ``REGBENCH_ITERATIONS`` the plan asked for
    #: (:func:`regbench.run.core.unfollowed_counts`).
    planned: bool = False
    alerts: bool = True  # False: changes of this benchmark never become alerts
    format: str | None = None  # a tool's output format (regbench.adapters): each invocation is one run
    measures: tuple[str, ...] = ()  # of MEASURES: one more series NAME:MEASURE each, one sample per run
    plan: str = "fixed"  # "adaptive": runs until the interval reaches `target` (regbench.run.adaptive)
    target_width: float = 0.01  # adaptive (`target`): wanted relative half-width of the 99% interval
    budget: float | None = None  # adaptive: seconds of runs per benchmark and version
    pilot: int = 3  # adaptive: runs with the configured iterations before the plan is chosen
    max_samples: int = DEFAULT_MAX_SAMPLES  # a run printing more is failed (memory stays bounded)
    threads: int = 1  # threads (or processes) it keeps busy at once: > 1 rules out duet runs
    requires: tuple[str, ...] = ()  # --executor dask: worker resources (tags) a run needs, e.g. "hyperfine"
    #: A tool benchmark's overrides of the direction its tool reports, ``(pattern, direction)`` in
    #: the order written (``directions = {"* [FLOPS]" = "higher"}``; :meth:`direction_of`).
    directions: tuple[tuple[str, str], ...] = ()

    def direction_of(self, reported: str, tool_direction: str) -> str:
        """The direction of the series of ``reported``, a benchmark this tool benchmark's tool
        reported: the first of :attr:`directions` whose pattern matches it (or its series name
        ``NAME/REPORTED``), else the tool's."""
        from .model import tool_series

        return direction_for(self.directions, (reported, tool_series(self.name, reported)), tool_direction)


@dataclass(frozen=True)
class NoiseControl:
    """How runs are shielded from external noise (``[noise]``); every control is off by default.

    Seed 003 (003_17e43d4a143bef6e.txt) s.3 measured how much address-space randomization, CPU
    migration, disk I/O and other processes add to run-to-run variation, and seed 001 s.3.1 lists
    the platform settings a benchmark must fix.  These controls need no root: they act on the
    benchmark process only (:mod:`regbench.run.noise` applies them).

    Attributes
    ----------
    pin : tuple of int or None
        CPUs the benchmark process (and what it starts) may run on; None leaves its affinity as
        regbench's.
    aslr : bool
        False runs the benchmark process without address-space randomization
        (``personality(ADDR_NO_RANDOMIZE)``, what ``setarch -R`` does).
    ramdisk : bool
        Run in a copy of the benchmark's working directory on a tmpfs.
    env_size : int or None
        Pad the environment with ``REGBENCH_ENV_PAD`` to exactly this many bytes.
    quiet_load : float or None
        The quiet-system gate before each run: the busy share of the CPUs and the load average
        per CPU (regbench's own runs left out) must be at most this.  None: no gate.
    quiet_wait : float
        Seconds the gate waits at most, per run, for a quiet system.
    quiet : str
        ``"wait"`` (poll until quiet or ``quiet_wait`` is over) or ``"warn"`` (check once).
    exclusive : bool
        Each run holds this machine's measuring lock while it lasts, so that runs of concurrent
        regbench commands interleave instead of overlapping (:mod:`regbench.run.exclusive`); on
        by default, as it changes nothing in the benchmark process.
    """

    pin: tuple[int, ...] | None = None
    aslr: bool = True
    ramdisk: bool = False
    env_size: int | None = None
    quiet_load: float | None = None
    quiet_wait: float = 60.0
    quiet: str = "wait"
    exclusive: bool = True

    @property
    def active(self) -> bool:
        """Whether any control is on."""
        return (self.pin is not None or not self.aslr or self.ramdisk or self.env_size is not None
                or self.quiet_load is not None)

    def to_json(self) -> dict:
        """The settings as recorded in a campaign's plan (``quiet_*`` only with a gate)."""
        out: dict = {"pin": list(self.pin) if self.pin is not None else None, "aslr": self.aslr,
                     "ramdisk": self.ramdisk, "env_size": self.env_size, "quiet_load": self.quiet_load}
        if self.quiet_load is not None:
            out.update(quiet_wait=self.quiet_wait, quiet=self.quiet)
        if not self.exclusive:  # recorded when off (on in every campaign before the setting)
            out["exclusive"] = False
        return out


#: Sink types of ``[[notify]]`` (regbench.notify has one class per type).
NOTIFY_TYPES = ("terminal", "json", "markdown", "webhook", "email")


@dataclass(frozen=True)
class NotifySpec:
    """One ``[[notify]]`` table: a sink's type, its unique name, the alert kinds it gets, and its
    options (validated, defaults filled in, paths absolute, TOML ``from`` as ``sender``).

    ``kinds`` are those the sink gets, resolved: every kind without a ``kinds`` key; else the kinds
    it names, with ``failure`` added to a list that has ``regression`` and does not name
    ``failure`` (:func:`sink_kinds`)."""

    type: str
    name: str
    kinds: tuple[str, ...] = ALERT_KINDS
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ServeSettings:
    """``[serve]``: the HTTP API of ``regbench serve`` (docs/api.md)."""

    #: Whether the API's reads need no token (writes always need one).
    public_reads: bool = False
    #: Whether the dashboard's pages need no log-in (false: a token with the ``read`` scope).
    public_pages: bool = True
    #: The largest request body, in bytes (64 MiB).
    max_body: int = 64 * 1024 * 1024
    #: Requests a second each API token may make, on average, and at once.
    rate: float = 20.0
    burst: int = 60
    #: Whether the server checks the versions of each submission (``detect --incremental``) in the
    #: background once it is stored (:mod:`regbench.web.after_submit`).
    detect: bool = False
    #: ... and tells the ``[[notify]]`` sinks of the alerts it opens (``--notify``).
    notify: bool = True


#: Where runs are made and series analysed (``--executor``, ``[run] executor``).
EXECUTORS = ("local", "dask")
#: How ``detect --confirm`` compares a change's two versions again (``--confirm-as``, ``confirm_as``
#: of ``[detect]``): ``follow`` the detection (what it summarised each run by, and mode by mode
#: when it found the change in one mode; :func:`regbench.run.rerun.comparison_of`), or always one way.
COMPARE_AS = ("follow", "mean", "median", "low", "by-mode", "instructions")


@dataclass(frozen=True)
class DetectSettings:
    """The ``[detect]`` table: defaults of ``regbench detect`` that its options override.

    Attributes
    ----------
    confirm : bool
        Run each change that would be a new alert again before alerting (``--confirm``).
    confirm_budget : float or None
        Seconds of benchmark time per confirmed change at most (``--confirm-budget``); None: the
        pair limit only.
    confirm_max_pairs : int or None
        Pairs of runs per change at most (``--confirm-max-pairs``); None: ``compare --run``'s.
    confirm_as : str
        What the pairs compare (``--confirm-as``, :data:`COMPARE_AS`):
        ``follow`` the detection's summary of a run (and its mode), or one way for every change.
    retire_after : int
        The fewest versions the others must measure after the newest of a machine (or of a
        configuration on it) that stores nothing before it counts as retired, and its failing
        benchmarks stop failing (:class:`regbench.silence.Retirement`).
    retire_lag_factor : float
        How many times its worst lag (the most versions it was ever behind the others before it
        stored runs again) they must measure, if that is more.
    """

    confirm: bool = False
    confirm_budget: float | None = None
    confirm_max_pairs: int | None = None
    confirm_as: str = "follow"
    retire_after: int = 20
    retire_lag_factor: float = 3.0


@dataclass(frozen=True)
class RunSettings:
    """The ``[run]`` table: how the sequential sessions (``compare --run``, ``bisect``,
    ``detect --confirm``) make their runs.

    Attributes
    ----------
    duet : bool
        Run the two versions of a pair at the same time, each pinned to its own CPU
        (:mod:`regbench.run.duet`); the ``--duet`` flag of those commands turns it on too.
    executor : str
        Where ``regbench run`` and ``regbench screen`` make their runs and ``regbench detect``
        analyses its series when ``--executor`` is not given: ``"local"`` or ``"dask"``.
    scheduler : str or None
        The Dask scheduler's address (``tcp://HOST:8786``) when ``--scheduler`` is not given.
    """

    duet: bool = False
    executor: str = "local"
    scheduler: str | None = None


@dataclass(frozen=True)
class ProjectConfig:
    """The whole of ``regbench.toml``."""

    path: Path | None
    root: Path
    name: str = "project"
    repo: Path | None = None
    #: Benchmarks outside the history: first on PYTHONPATH of every run, and REGBENCH_BENCHMARK_DIR.
    benchmark_dir: Path | None = None
    #: The branch whose first-parent line detection reads (None: HEAD).
    branch: str | None = None
    url: str | None = None  # the repository's web page: the dashboard links commits under URL/commit/SHA
    build: tuple[str, ...] | None = None
    build_timeout: float = 600.0
    #: How many built commits' worktrees are kept between campaigns (``[project] build_cache``).
    build_cache: int = 8
    store: str | None = None
    python: str = sys.executable
    #: What the benchmarks need besides the release (pip requirements, ``pytest-benchmark>=4``),
    #: installed into every ``run --releases`` environment with the release.
    benchmark_requires: tuple[str, ...] = ()
    benchmarks: tuple[BenchmarkSpec, ...] = ()
    #: Globs of benchmark names whose changes are not alerts (``[alerts] suppress``).
    alert_suppress: tuple[str, ...] = ()
    #: Machines that must show a change before its alert is notified (``[alerts] require_machines``).
    require_machines: int = 1
    notify: tuple[NotifySpec, ...] = ()
    noise: NoiseControl = NoiseControl()
    detect: DetectSettings = DetectSettings()
    run: RunSettings = RunSettings()
    #: The configuration space (``[screen]``, :mod:`regbench.screening.space`); None without one.
    screen: ConfigurationSpace | None = None
    serve: ServeSettings = ServeSettings()

    def alerts_suppressed(self, benchmark: str) -> bool:
        """Whether changes of the series ``benchmark`` must not become alerts (``alerts = false`` in
        the ``[[benchmark]]`` table it comes from, or a match of an ``[alerts] suppress`` glob,
        case-sensitive): a benchmark's measure series (``NAME:cpu``) and the series its tool
        reports (``NAME/REPORTED``) are the configured benchmark's, and a glob matching either
        the series' name or its benchmark's suppresses it."""
        base = SeriesName.parse(benchmark).benchmark
        if any(not b.alerts and b.name in (benchmark, base) for b in self.benchmarks):
            return True
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.alert_suppress for name in {benchmark, base})

    def benchmark(self, name: str, *, stored: Iterable[str] | None = None) -> BenchmarkSpec:
        """The configured benchmark ``name``; a :class:`ConfigError` naming the nearest otherwise.

        ``stored`` are the series names a store holds: a name a tool benchmark would report
        (``jmh/pkg.C.m``) is checked against the series that tool has reported there, so that a
        typo is said as one (with the nearest names), not taken for a benchmark it reports.
        """
        for b in self.benchmarks:
            if b.name == name:
                return b
        import difflib

        base = SeriesName.parse(name).benchmark
        tool = next((b for b in self.benchmarks if b.name == base and b.format and base != name), None)
        if tool is not None:  # a series a tool reports: run by its configured benchmark
            reported = sorted({n for n in stored or () if SeriesName.parse(n).benchmark == base
                               and SeriesName.parse(n).reported is not None})
            if reported and name not in reported:
                # The nearest only: names of one class share a long prefix, so the others are near too.
                scores = {n: difflib.SequenceMatcher(None, name, n).ratio() for n in reported}
                best = max(scores.values())
                near = sorted((n for n, x in scores.items() if x >= max(0.6, best - 0.02)), key=scores.__getitem__,
                              reverse=True)[:3]
                hint = (f"did you mean {', '.join(repr(n) for n in near)}?" if near else
                        f"it has reported {len(reported)}: `regbench show` lists them")
                raise ConfigError(f"{self.path or CONFIG_NAME}: no benchmark named {name!r}: the {tool.format} "
                                  f"benchmark {base!r} has not reported it in the store ({hint})")
            raise ConfigError(f"{self.path or CONFIG_NAME}: no benchmark named {name!r}: it is reported by the "
                              f"{tool.format} benchmark {base!r}, which runs all its command selects (--benchmark "
                              f"{base}; to run fewer, narrow its filter in the command)")

        names = [b.name for b in self.benchmarks]
        hint = ""
        close = difflib.get_close_matches(name, names, n=1)
        tools = [b.name for b in self.benchmarks if b.format]
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        elif tools:  # a name a tool reports, given without its tool's prefix (BM_Copy for gb/BM_Copy)
            hint = (f" (a benchmark a tool reports is run by the tool's benchmark: "
                    f"{', '.join(f'--benchmark {t}' for t in tools[:3])}{', ...' if len(tools) > 3 else ''})")
        raise ConfigError(f"{self.path or CONFIG_NAME}: no benchmark named {name!r}{hint}")


_DEFAULT_KEYS = {"runs", "iterations", "warmup", "timeout", "unit", "direction", "min_time", "slices",
                 "plan", "target", "budget", "pilot", "pass_env", "max_samples", "requires"}
PLANS = ("fixed", "adaptive")
_BENCH_KEYS = _DEFAULT_KEYS | {"name", "command", "python", "cwd", "env", "output", "alerts", "format",
                               "measures", "threads", "directions"}
#: What :func:`regbench.run.core.benchmark_dir_env` sets in every run, after a benchmark's own
#: ``env`` and a ``[screen]`` option's, when ``[project] benchmark_dir`` is set, and to what:
#: neither may set them then (:func:`_overridden_by_benchmark_dir`).
_BENCHMARK_DIR_VARIABLES = {"PYTHONPATH": "the folder first on the path", "REGBENCH_BENCHMARK_DIR": "the folder"}
#: What regbench sets in a run's environment over a benchmark's own ``env``, whatever the plan
#: (:func:`regbench.run.execute.run_environment`; the pad of ``[noise] env_size``): a benchmark may
#: not set them, as its value would be lost.  Of the other :data:`~regbench.model.RUN_VARIABLES`,
#: ``REGBENCH_BENCHMARK_DIR`` is refused with ``benchmark_dir`` above, and ``REGBENCH_SELECT`` and
#: ``REGBENCH_FORKS`` are set only by an optimized plan's invocation, over a default the benchmark
#: may give in its ``env`` for full runs (docs/optimize.md).
_SET_BY_REGBENCH = {
    "REGBENCH_ITERATIONS": "warm-up and measured iterations", "REGBENCH_WARMUP": "the warm-up iterations",
    "REGBENCH_RUN_INDEX": "the run's index", "REGBENCH_VERSION": "the version measured",
    "REGBENCH_ENV_PAD": "the pad of [noise] env_size"}
_PROJECT_KEYS = {"name", "repo", "build", "build_timeout", "build_cache", "store", "python", "benchmark_dir", "branch", "url",
                 "benchmark_requires"}


def _overridden_by_benchmark_dir(variable: str) -> str:
    """Why a benchmark or a ``[screen]`` option may not set ``variable`` with ``benchmark_dir``."""
    return (f"is set by regbench itself in every run when [project] `benchmark_dir` is set "
            f"({_BENCHMARK_DIR_VARIABLES[variable]}), which would override")


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``regbench.toml`` in ``start`` or its parents."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        p = d / CONFIG_NAME
        if p.is_file():
            return p
    return None


def load_config(path: str | os.PathLike | None = None) -> ProjectConfig:
    """Read and validate a ``regbench.toml`` (the nearest one when ``path`` is None)."""
    p = Path(path) if path is not None else find_config()
    if p is None:
        raise ConfigError(f"no {CONFIG_NAME} here or in a parent directory (`regbench init` writes one)")
    if not p.is_file():
        raise ConfigError(f"{p}: no such file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text ({exc.reason})") from exc
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise ConfigError(f"{p}: arrays or tables nested too deeply") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror}") from None
    return parse_config(data, path=p)


def _requirements(value: object, fail: Fail) -> tuple[str, ...]:
    """``[project] benchmark_requires``: pip requirement specifiers, checked by packaging's parser
    (PEP 508), so that a typo is this file's error and not a failed install of every release."""
    from packaging.requirements import InvalidRequirement, Requirement

    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        fail(f"[project] `benchmark_requires` must be a list of requirement strings "
             f"(e.g. [\"pytest-benchmark\"]), got {shown(value)}")
    for k, text in enumerate(value, start=1):
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            fail(f"[project] `benchmark_requires` item {k}: not a requirement: {shown(text)} "
                 f"({str(exc).splitlines()[0]})")
    return tuple(value)


def _did_you_mean(bad: Iterable[str], allowed: Iterable[str]) -> str:
    """``"; did you mean `format`?"`` for the first of ``bad`` when one of ``allowed`` is close to
    it (a typo such as ``formt``), else ``""``."""
    close = difflib.get_close_matches(sorted(bad)[0], sorted(allowed), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def parse_config(data: dict, *, path: Path | None = None) -> ProjectConfig:
    where = str(path) if path else CONFIG_NAME
    root = path.parent.resolve() if path else Path.cwd()

    def fail(msg: str) -> NoReturn:
        raise ConfigError(f"{where}: {msg}")

    _check_text(data, fail)
    unknown = set(data) - {"project", "defaults", "benchmark", "alerts", "notify", "noise", "detect", "screen",
                           "serve", "run"}
    if unknown:
        fail(f"unknown table [{sorted(unknown)[0]}] (expected [project], [defaults], [[benchmark]], [alerts], "
             "[[notify]], [noise], [detect], [run], [screen], [serve])")
    proj = data.get("project", {})
    if not isinstance(proj, dict):
        fail("[project] must be a table")
    bad = set(proj) - _PROJECT_KEYS
    if bad:
        fail(f"[project]: unknown key `{sorted(bad)[0]}`{_did_you_mean(bad, _PROJECT_KEYS)}")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        fail("[defaults] must be a table")
    bad = set(defaults) - _DEFAULT_KEYS
    if bad:
        fail(f"[defaults]: unknown key `{sorted(bad)[0]}`{_did_you_mean(bad, _DEFAULT_KEYS)}")

    build = proj.get("build")
    if build is not None:
        build = tuple(_argv(build, "[project] `build`", fail))
    repo = proj.get("repo")
    if repo is not None and not isinstance(repo, str):
        fail("[project] `repo` must be a path string")
    if repo is not None and not (root / repo).resolve().is_dir():
        # Else a run in the working tree stored a failed run of every benchmark ("cannot start
        # 'echo' in .../nope"), in a store it created (a first-user probe).
        fail(f"[project] `repo`: no such directory: {(root / repo).resolve()}")
    benchmark_dir = proj.get("benchmark_dir")
    if benchmark_dir is not None:
        if not isinstance(benchmark_dir, str) or not benchmark_dir.strip():
            fail("[project] `benchmark_dir` must be a path string")
        benchmark_dir = (root / benchmark_dir).resolve()
        if not benchmark_dir.is_dir():
            fail(f"[project] `benchmark_dir`: no such directory: {benchmark_dir}")
    branch = proj.get("branch")
    if branch is not None and (not isinstance(branch, str) or not branch.strip() or branch.startswith("-")):
        fail("[project] `branch` must be a branch name (a string)")
    url = proj.get("url")
    if url is not None and (not isinstance(url, str) or not url.startswith(("https://", "http://"))):
        fail(f"[project] `url` must be the repository's web page (https://...), got {shown(url)}")
    for key in ("store", "python", "name"):
        if key in proj and (not isinstance(proj[key], str) or not proj[key].strip()):
            fail(f"[project] `{key}` must be a non-empty string, got {shown(proj[key])}")
    benchmark_requires = _requirements(proj.get("benchmark_requires", []), fail)

    benches = data.get("benchmark", [])
    if not isinstance(benches, list):
        fail("`benchmark` must be an array of tables: write [[benchmark]]")
    specs: list[BenchmarkSpec] = []
    seen: set[str] = set()
    for k, b in enumerate(benches, start=1):
        if not isinstance(b, dict):
            fail(f"[[benchmark]] #{k} must be a table")
        label = _entry_label("benchmark", k, b)
        specs.append(_benchmark(b, defaults, label, fail))
        if specs[-1].name in seen:
            fail(f"{label}: duplicate benchmark name {specs[-1].name!r}")
        seen.add(specs[-1].name)
        if benchmark_dir is not None:
            for variable in _BENCHMARK_DIR_VARIABLES:
                if variable in specs[-1].env:
                    # Refused, not merged, as for [screen] below: whether the benchmark's entries
                    # go before the folder's or after it, and whether the inherited PYTHONPATH
                    # stays, are each a guess at what was meant.
                    fail(f"{label} `env`: {variable} {_overridden_by_benchmark_dir(variable)} the benchmark's "
                         "value: put what it needs in the folder, or give it in another variable")
    for k, spec in enumerate(specs, start=1):
        for m in spec.measures:
            if measure_series(spec.name, m) in seen:
                fail(f"{_entry_label('benchmark', k, benches[k - 1])}: its measure {m!r} is stored as the series "
                     f"'{measure_series(spec.name, m)}', which is also the name of a benchmark")

    noise = data.get("noise", {})
    if not isinstance(noise, dict):
        fail("[noise] must be a table")
    alert_suppress, require_machines = _alerts_table(data.get("alerts", {}), fail)

    return ProjectConfig(
        path=path, root=root,
        name=str(proj.get("name", root.name)),
        repo=(root / repo).resolve() if repo is not None else None,
        benchmark_dir=benchmark_dir,
        branch=branch,
        url=url,
        build=build,
        build_timeout=_positive(proj.get("build_timeout", 600.0), "[project] `build_timeout`", fail, float),
        build_cache=_build_cache(proj.get("build_cache", 8), fail),
        store=proj.get("store"),
        python=str(proj.get("python", sys.executable)),
        benchmark_requires=benchmark_requires,
        benchmarks=tuple(specs),
        alert_suppress=alert_suppress,
        require_machines=require_machines,
        notify=_notify_tables(data.get("notify", []), root, fail),
        noise=noise_control(noise, label=lambda key: f"[noise] `{key}`", where=where),
        detect=_detect_table(data.get("detect", {}), fail),
        run=_run_table(data.get("run", {}), fail),
        screen=_screen_table(data["screen"], where, benchmark_dir, fail) if "screen" in data else None,
        serve=_serve_table(data.get("serve", {}), fail),
    )


def _serve_table(table, fail: Fail) -> ServeSettings:
    """``[serve]``: ``public_reads``, ``public_pages``, ``max_body`` (bytes), ``rate`` and ``burst`` of
    each token, ``detect`` and ``notify`` after each submission."""
    if not isinstance(table, dict):
        fail("[serve] must be a table")
    keys = ("public_reads", "public_pages", "max_body", "rate", "burst", "detect", "notify")
    bad = set(table) - set(keys)
    if bad:
        fail(f"[serve]: unknown key `{sorted(bad)[0]}` (expected {', '.join(keys)}){_did_you_mean(bad, keys)}")
    d = ServeSettings()
    public = table.get("public_reads", d.public_reads)
    if not isinstance(public, bool):
        fail(f"[serve] `public_reads` must be true or false, got {shown(public)}")
    pages = table.get("public_pages", d.public_pages)
    if not isinstance(pages, bool):
        fail(f"[serve] `public_pages` must be true or false, got {shown(pages)}")
    size = table.get("max_body", d.max_body)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1024:
        fail(f"[serve] `max_body` must be an integer number of bytes of at least 1024, got {shown(size)}")
    rate = table.get("rate", d.rate)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0:
        fail(f"[serve] `rate` must be a positive number of requests a second, got {shown(rate)}")
    burst = table.get("burst", d.burst)
    if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
        fail(f"[serve] `burst` must be an integer of at least 1, got {shown(burst)}")
    detect, notify = table.get("detect", d.detect), table.get("notify", d.notify)
    for key, value in (("detect", detect), ("notify", notify)):
        if not isinstance(value, bool):
            fail(f"[serve] `{key}` must be true or false, got {shown(value)}")
    return ServeSettings(public_reads=public, public_pages=pages, max_body=size, rate=float(rate), burst=burst,
                         detect=detect, notify=notify)


def _screen_table(table: object, where: str, benchmark_dir: Path | None, fail: Fail) -> ConfigurationSpace:
    """``[screen]``, with the variables ``[project]`` makes regbench set itself refused as an
    option's or the template's ``env``, as :data:`~regbench.model.RUN_VARIABLES` are."""
    from .screening.space import parse_space

    space = parse_space(table, where=where)
    if benchmark_dir is not None:
        # Refused, not merged: regbench.run.core.benchmark_dir_env sets PYTHONPATH to the folder
        # (and what regbench inherited) after the options' variables, for every run, so a level
        # given there never reached a run (a probe: every run saw the folder alone and the
        # option came out inert).  configuration.md asks the same of a benchmark's own `env`,
        # and a level that needs the path can travel in another variable.
        why = _overridden_by_benchmark_dir("PYTHONPATH")
        for o in space.options:
            if o.apply == "env" and o.target == "PYTHONPATH":
                fail(f"[[screen.option]] {o.name!r}: `env` PYTHONPATH {why} the level: apply the option through "
                     "another variable (which the benchmark puts on its path) or `arg`")
        if space.template is not None and space.template.env == "PYTHONPATH":
            fail(f"[screen] `template`: `env` PYTHONPATH {why} the rendered file's path: give it another variable")
    return space


def name_matches(name: str, pattern: str) -> bool:
    """Whether the series name ``name`` matches ``pattern``, where ``*`` matches any text and
    ``?`` any one character, and every other character only itself.

    Not :func:`fnmatch.fnmatchcase`: its ``[...]`` is a set of characters, and series names hold
    brackets of their own (``BM_Copy/8 [FLOPS]``, a tool's metric), so the pattern a user copies
    from a name would silently match nothing."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, name, flags=re.DOTALL) is not None


def direction_for(directions: Iterable[tuple[str, str]], names: Iterable[str], default: str) -> str:
    """The direction of the first ``(pattern, direction)`` of ``directions`` whose pattern
    matches one of ``names`` (:func:`name_matches`), else ``default``."""
    names = tuple(names)
    for pattern, direction in directions:
        if any(name_matches(name, pattern) for name in names):
            return direction
    return default


def parse_directions(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``PATTERN=lower`` or ``PATTERN=higher`` items (the command line's) as ``(pattern,
    direction)`` pairs; a malformed one is a :class:`~regbench.errors.ConfigError` naming it."""
    out = []
    for item in items:
        pattern, sep, direction = item.rpartition("=")
        if not sep or not pattern.strip() or direction not in DIRECTIONS:
            raise ConfigError(f"{item!r} must be PATTERN=lower or PATTERN=higher (* and ? match any text "
                              "and any one character)")
        out.append((pattern, direction))
    return tuple(out)


#: A tag of ``requires``: the name of a Dask worker resource (``dask worker --resources "hyperfine=1"``).
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _benchmark(b: dict, defaults: dict, label: str, fail: Fail) -> BenchmarkSpec:
    bad = set(b) - _BENCH_KEYS
    if bad:
        fail(f"{label}: unknown key `{sorted(bad)[0]}`{_did_you_mean(bad, _BENCH_KEYS)}")
    name = b.get("name")
    if not isinstance(name, str) or not name.strip():
        fail(f"{label}: `name` is required and must be a non-empty string")
    if ("command" in b) == ("python" in b):
        fail(f"{label}: give exactly one of `command` (argv list) or `python` (module:function)")

    def get(key, default):
        return b.get(key, defaults.get(key, default))

    def at(key: str) -> str:
        """The table ``key``'s value was written in, for messages: the benchmark's, else [defaults]."""
        return label if key in b or key not in defaults else "[defaults]"

    kind = "command" if "command" in b else "python"
    command: tuple[str, ...] = ()
    target = ""
    if kind == "command":
        command = tuple(_argv(b["command"], f"{label} `command`", fail))
    else:
        target = b["python"]
        if not isinstance(target, str) or target.count(":") != 1 or not all(target.split(":")):
            fail(f"{label} `python` must look like 'module:function', got {shown(target)}")
    env = b.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str | int | float) for v in env.values()):
        fail(f"{label} `env` must be a table of strings")
    for key, value in env.items():
        if not key or "=" in key:
            fail(f"{label} `env`: {shown(key)} is not a variable name (empty, or with '=')")
        # A TOML boolean would reach the process as Python's "True", a nan or inf as "nan" / "inf":
        # neither is what the file says, so they are refused rather than spelled for it.
        if isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
            fail(f"{label} `env`: {key} = {shown(value)} is not a string or a finite number: quote it "
                 "as the process should see it")
        if key in _SET_BY_REGBENCH:
            fail(f"{label} `env`: {key} is set by regbench itself in every run that uses it "
                 f"({_SET_BY_REGBENCH[key]}), which would override the benchmark's value: give it another name")
    pass_env = get("pass_env", [])
    if not isinstance(pass_env, list) or not all(isinstance(v, str) and v and "=" not in v for v in pass_env):
        fail(f"{at('pass_env')} `pass_env` must be a list of variable names (globs such as \"OMP_*\" allowed)")
    output = b.get("output", "lines")
    if output not in OUTPUT_FORMATS:
        fail(f"{label} `output` must be one of {', '.join(OUTPUT_FORMATS)}, got {shown(output)}")
    direction = get("direction", "lower")
    if direction not in DIRECTIONS:
        fail(f"{at('direction')} `direction` must be 'lower' or 'higher', got {shown(direction)}")
    unit = get("unit", "s")
    if not isinstance(unit, str) or not unit:
        fail(f"{at('unit')} `unit` must be a non-empty string")
    cwd = b.get("cwd", ".")
    if not isinstance(cwd, str):
        fail(f"{label} `cwd` must be a path string")
    alerts = b.get("alerts", True)
    if not isinstance(alerts, bool):
        fail(f"{label} `alerts` must be true or false, got {shown(alerts)}")
    fmt = b.get("format")
    if fmt is not None:
        from .adapters.base import available_formats

        if kind != "command":
            fail(f"{label}: `format` is for command benchmarks (a tool such as go test or JMH)")
        if fmt not in available_formats():
            fail(f"{label} `format` must be one of {', '.join(available_formats())}, got {shown(fmt)}")
        if "output" in b:
            fail(f"{label}: give `format` (a tool's output) or `output` (samples), not both")
        if "/" in name:
            fail(f"{label}: a benchmark with `format` names its tool's benchmarks NAME/..., so its name "
                 f"cannot contain '/' ({name!r})")
    directions = b.get("directions", {})
    if not isinstance(directions, dict) or not all(isinstance(k, str) and k.strip() for k in directions):
        fail(f"{label} `directions` must be a table of name patterns, each \"lower\" or \"higher\", such as "
             "{ \"* [FLOPS]\" = \"higher\" }")
    if directions and fmt is None:
        fail(f"{label}: `directions` is for a benchmark with a tool `format`, whose benchmarks each have their "
             "own direction; this benchmark's samples take `direction`")
    for pattern, value in directions.items():
        if value not in DIRECTIONS:
            fail(f"{label} `directions`: {pattern!r} = {shown(value)} must be 'lower' or 'higher'")
    if fmt is not None and "direction" in b:
        # Each series of a tool benchmark takes the direction its tool reports (a JMH throughput
        # is higher-is-better, its average time lower): one `direction` for all of them would be
        # wrong for some, and ignoring it silently hid that it did nothing.
        fail(f"{label}: `direction` does nothing for a tool benchmark, whose benchmarks take the direction "
             f"{fmt} reports for each; override it per name with `directions = {{ \"PATTERN\" = "
             f"\"{direction}\" }}` (* and ? match any text and any one character)")
    measures = b.get("measures", [])
    if (not isinstance(measures, list) or not all(isinstance(m, str) for m in measures)
            or len(set(measures)) != len(measures)):
        fail(f"{label} `measures` must be a list of distinct names of {', '.join(MEASURES)}")
    for m in measures:
        if m not in MEASURES:
            fail(f"{label} `measures`: unknown measure {m!r} (expected {', '.join(MEASURES)})")
    requires = get("requires", [])
    if (not isinstance(requires, list) or not all(isinstance(r, str) and _TAG.fullmatch(r) for r in requires)
            or len(set(requires)) != len(requires)):
        fail(f"{at('requires')} `requires` must be a list of distinct tags (letters, digits, '-', '_', '.'), "
             f"got {shown(requires)}")
    plan = get("plan", "fixed")
    if plan not in PLANS:
        fail(f"{at('plan')} `plan` must be 'fixed' or 'adaptive', got {shown(plan)}")
    width = get("target", 0.01)
    if isinstance(width, bool) or not isinstance(width, int | float) or not 0 < width < 1:
        fail(f"{at('target')} `target` must be a relative half-width in (0, 1) such as 0.01, got {shown(width)}")
    budget = get("budget", None)
    if budget is not None:
        budget = _positive(budget, f"{at('budget')} `budget`", fail, float)
    pilot = _positive(get("pilot", 3), f"{at('pilot')} `pilot`", fail, int)
    if pilot < 2:
        fail(f"{at('pilot')} `pilot` must be at least 2 (the between-run variance needs two runs)")
    if plan == "adaptive" and fmt is not None:
        fail(f"{label}: `plan = \"adaptive\"` needs a benchmark with its own samples, not a tool `format`")
    warmup = get("warmup", 0)
    warmup_auto = warmup == "auto"
    if warmup_auto:
        warmup = 0
    elif not isinstance(warmup, int) or isinstance(warmup, bool) or warmup < 0:
        fail(f"{at('warmup')} `warmup` must be a non-negative integer or \"auto\"")
    elif warmup > LIMITS["warmup"]:
        fail(f"{at('warmup')} `warmup` must be at most {LIMITS['warmup']:.0f}, got {warmup}")
    if kind != "python" and "slices" in b:
        # Whatever its value (1 too): it would do nothing, and the user thinks it does something.
        fail(f"{label}: `slices` is for Python benchmarks (`python = ...`), whose iterations regbench "
             "times itself; a command's iterations are its own")
    slices = _positive(get("slices", 1), f"{at('slices')} `slices`", fail, int)
    if kind != "python":
        slices = 1  # a [defaults] value is for the Python benchmarks
    spec = BenchmarkSpec(
        name=name.strip(), kind=kind, command=command, target=target, cwd=cwd,
        env={str(k): str(v) for k, v in env.items()}, pass_env=tuple(pass_env), output=output, unit=unit, direction=direction,
        timeout=_positive(get("timeout", 60.0), f"{at('timeout')} `timeout`", fail, float),
        runs=_positive(get("runs", 10), f"{at('runs')} `runs`", fail, int),
        iterations=_positive(get("iterations", 20), f"{at('iterations')} `iterations`", fail, int),
        warmup=warmup,
        warmup_auto=warmup_auto,
        min_time=_positive(get("min_time", 0.01), f"{at('min_time')} `min_time`", fail, float),
        slices=slices,
        alerts=alerts,
        format=fmt,
        measures=tuple(measures),
        plan=plan, target_width=float(width), budget=budget, pilot=pilot,
        max_samples=_positive(get("max_samples", DEFAULT_MAX_SAMPLES), f"{label} `max_samples`", fail, int),
        threads=_positive(b.get("threads", 1), f"{label} `threads`", fail, int),
        requires=tuple(requires),
        directions=tuple((str(k), str(v)) for k, v in directions.items()),
    )
    if spec.format is None and spec.warmup + spec.iterations > spec.max_samples:
        fail(f"{label}: `warmup` + `iterations` ({spec.warmup + spec.iterations}) is more than `max_samples` "
             f"({spec.max_samples}): every run would print too many samples")
    if spec.slices > 1 and (spec.warmup + spec.iterations) * spec.slices > spec.max_samples:
        # Each slice is a number the worker writes and the store keeps, as a sample is.
        fail(f"{label}: `slices` x (`warmup` + `iterations`) ({spec.slices * (spec.warmup + spec.iterations)}) "
             f"is more than `max_samples` ({spec.max_samples}): every run would keep too many slices")
    return spec


def noise_control(values: dict, *, base: NoiseControl | None = None, label=None,
                  where: str | None = None) -> NoiseControl:
    """Validate noise settings and lay them over ``base`` (default: every control off).

    Parameters
    ----------
    values : dict
        Keys of :class:`NoiseControl` (a ``[noise]`` table, or the options given to
        ``regbench run``); ``pin`` may be a list of CPU numbers, one number, or a CPU list string
        like ``taskset`` takes (``"0,1"``, ``"1-3"``) and ``"none"`` (no pinning).
    base : NoiseControl, optional
        Settings the values override (``regbench.toml``'s, for command-line options).
    label : callable, optional
        ``label(key)`` names a key in messages (default ``[noise] `key```).
    where : str, optional
        Prefix of messages (the file).

    Raises
    ------
    ConfigError
        One line naming the key and what is wrong.  Whether the pinned CPUs exist and a tmpfs is
        at hand is checked when a campaign starts (:func:`regbench.run.noise.check_noise`).
    """
    label = label or (lambda key: f"[noise] `{key}`")

    def fail(msg: str) -> NoReturn:
        raise ConfigError(f"{where}: {msg}" if where else msg)

    fields = {"pin", "aslr", "ramdisk", "env_size", "quiet_load", "quiet_wait", "quiet", "exclusive"}
    bad = set(values) - fields
    if bad:
        fail(f"{label(sorted(bad)[0])}: unknown key (expected {', '.join(sorted(fields))}){_did_you_mean(bad, fields)}")
    out: dict = {}
    for key, value in values.items():
        if key == "pin":
            out[key] = parse_cpu_list(value, label(key), fail)
        elif key in ("aslr", "ramdisk", "exclusive"):
            if not isinstance(value, bool):
                fail(f"{label(key)} must be true or false, got {shown(value)}")
            out[key] = value
        elif key == "env_size":
            out[key] = _positive(value, label(key), fail, int, limit=LIMITS[key])
        elif key == "quiet_load":
            out[key] = _positive(value, label(key), fail, float, limit=LIMITS[key])
        elif key == "quiet_wait":
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= LIMITS[key]:
                fail(f"{label(key)} must be a non-negative number of seconds of at most {LIMITS[key]:.0f}, "
                     f"got {shown(value)}")
            out[key] = float(value)
        else:
            if value not in QUIET_MODES:
                fail(f"{label(key)} must be one of {', '.join(QUIET_MODES)}, got {shown(value)}")
            out[key] = value
    return replace(base if base is not None else NoiseControl(), **out)


def _raise_config_error(msg: str) -> NoReturn:
    raise ConfigError(msg)


def parse_cpu_list(value, label: str = "`pin`", fail: Fail | None = None) -> tuple[int, ...] | None:
    """CPU numbers from ``[0, 1]``, ``1``, ``"0,1"``, ``"1-3"`` or ``"0-1,4"`` (sorted, unique);
    None from ``"none"``.  Raises :class:`ConfigError` naming ``label``."""
    if fail is None:
        fail = _raise_config_error
    what = (f"{label} must be a list of CPU numbers or a CPU list such as \"0,1\" or \"1-3\" (CPUs 0 to {MAX_CPU}), "
            f"got {shown(value)}")
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    cpus: set[int] = set()
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, list) and value:
        if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_CPU for c in value):
            fail(what)
        cpus.update(value)
    elif isinstance(value, str) and value.strip():
        for part in value.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if m is None or (m[2] is not None and int(m[2]) < int(m[1])) or int(m[2] or m[1]) > MAX_CPU:
                fail(what)
            cpus.update(range(int(m[1]), int(m[2] or m[1]) + 1))
    else:
        fail(what)
    return tuple(sorted(cpus))


def _argv(value, label: str, fail: Fail) -> list[str]:
    if isinstance(value, str):
        fail(f"{label} must be an argv list such as [\"make\", \"-j2\"], not a shell string")
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        fail(f"{label} must be a non-empty list of strings")
    return list(value)


def _build_cache(value, fail: Fail) -> int:
    """``[project] build_cache``: a number of kept builds, 0 to keep none."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        fail(f"[project] `build_cache` must be a non-negative integer (builds kept between campaigns), "
             f"got {shown(value)}")
    return value


def _positive(value, label: str, fail: Fail, typ, *, limit: float | None = None):
    """``value`` as a positive ``typ`` (int or float) of at most the :data:`LIMITS` of its key
    (the last name in backquotes in ``label``); NaN and infinity are refused."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    if typ is int:
        ok = ok and isinstance(value, int)
    what = f"a positive {'integer' if typ is int else 'number'}"
    if not ok or not math.isfinite(value):
        fail(f"{label} must be {what}, got {shown(value)}")
    if limit is None:
        limit = LIMITS.get(label.rsplit("`", 2)[-2] if label.count("`") >= 2 else "")
    if limit is not None and value > limit:
        fail(f"{label} must be {what} of at most {int(limit) if limit == int(limit) else limit}, "
             f"got {shown(value)}")
    return typ(value)


def _check_text(data: dict, fail: Fail) -> None:
    """Refuse a NUL character in any key or string of the file, naming its table (an entry of an
    array of tables by its index and name, ``[[screen.option]] #2 ('b')``) and key: no path,
    argument or environment variable can hold one (the OS ends strings there)."""
    # Each value with the table it is in, its key there, and the name of the array of tables it
    # would be if it is a list of tables: a key of the file (``benchmark``) or of one of its
    # tables (``screen.option``); a list of tables deeper (an inline table's) is a value.
    stack: list[tuple[object, str, str, str | None]] = [(data, "", "", None)]
    while stack:
        value, table, key, array = stack.pop()
        if isinstance(value, str):
            if "\0" in value:
                fail(f"{table} `{key}`: contains a NUL character" if key else f"{table}: contains a NUL character")
        elif isinstance(value, dict):
            for k, v in value.items():
                inner = table or f"[{k}]"
                if "\0" in k:
                    fail(f"{inner} `{key}`: a key contains a NUL character" if key
                         else f"{inner}: a key contains a NUL character")
                if not table:  # a table of the file
                    stack.append((v, inner, "", k))
                elif not key:  # a key of a table, or of an entry of an array of tables
                    stack.append((v, inner, k, f"{array}.{k}" if array else None))
                else:
                    stack.append((v, inner, key, None))
        elif isinstance(value, list):
            for i, v in enumerate(value, start=1):
                if isinstance(v, dict) and array:
                    stack.append((v, _entry_label(array, i, v), "", None))
                else:
                    stack.append((v, table, key, None))


def _entry_label(array: str, index: int, entry: dict) -> str:
    """How a message names the ``index``-th (from 1) entry of the array of tables ``array``:
    ``[[benchmark]] #2 ('sort')``, or ``[[benchmark]] #2`` when it has no string ``name``."""
    name = entry.get("name")
    return f"[[{array}]] #{index}" + (f" ({shown(name)})" if isinstance(name, str) else "")


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
#: Smallest pair limit of a sequential comparison (it never decides before 3 pairs).
MIN_PAIR_LIMIT = 3


def duration_seconds(value: object) -> float | None:
    """``90``, ``90.5``, ``"90s"``, ``"10m"`` or ``"1.5h"`` as seconds; None when ``value`` is not
    a positive duration."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if 0 < value < float("inf") else None
    m = _DURATION.match(value) if isinstance(value, str) else None
    if m is None or not float(m.group(1)) > 0:
        return None
    seconds = float(m.group(1)) * {"m": 60, "min": 60, "h": 3600}.get(m.group(2) or "s", 1)
    return seconds if seconds < float("inf") else None


def _detect_table(table, fail: Fail) -> DetectSettings:
    if not isinstance(table, dict):
        fail("[detect] must be a table")
    keys = ("confirm", "confirm_budget", "confirm_max_pairs", "confirm_as", "retire_after", "retire_lag_factor")
    bad = set(table) - set(keys)
    if bad:
        fail(f"[detect]: unknown key `{sorted(bad)[0]}` (expected {', '.join(keys)}){_did_you_mean(bad, keys)}")
    confirm = table.get("confirm", False)
    if not isinstance(confirm, bool):
        fail(f"[detect] `confirm` must be true or false, got {shown(confirm)}")
    budget = table.get("confirm_budget")
    if budget is not None:
        seconds = duration_seconds(budget)
        if seconds is None:
            fail(f"[detect] `confirm_budget` must be a positive number of seconds or a duration such as "
                 f"\"90s\", \"10m\" or \"1h\", got {shown(budget)}")
        budget = seconds
    pairs = table.get("confirm_max_pairs")
    if pairs is not None and (isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < MIN_PAIR_LIMIT):
        fail(f"[detect] `confirm_max_pairs` must be an integer of at least {MIN_PAIR_LIMIT}, got {shown(pairs)}")
    if pairs is not None and pairs > LIMITS["confirm_max_pairs"]:
        fail(f"[detect] `confirm_max_pairs` must be at most {LIMITS['confirm_max_pairs']:.0f}, got {pairs}")
    compare_as = table.get("confirm_as", "follow")
    if compare_as not in COMPARE_AS:
        fail(f"[detect] `confirm_as` must be one of {', '.join(COMPARE_AS)}, got {shown(compare_as)}")
    after = table.get("retire_after", DetectSettings.retire_after)
    if isinstance(after, bool) or not isinstance(after, int) or after < 1:
        fail(f"[detect] `retire_after` must be an integer of at least 1 (versions), got {shown(after)}")
    factor = table.get("retire_lag_factor", DetectSettings.retire_lag_factor)
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not 1 <= factor < math.inf:
        fail(f"[detect] `retire_lag_factor` must be a number of at least 1, got {shown(factor)}")
    for key, value in (("retire_after", after), ("retire_lag_factor", factor)):
        if value > LIMITS[key]:
            fail(f"[detect] `{key}` must be at most {LIMITS[key]:.0f}, got {shown(value)}")
    return DetectSettings(confirm=confirm, confirm_budget=budget, confirm_max_pairs=pairs, confirm_as=compare_as,
                          retire_after=after, retire_lag_factor=float(factor))


def _run_table(table, fail: Fail) -> RunSettings:
    if not isinstance(table, dict):
        fail("[run] must be a table")
    bad = set(table) - {"duet", "executor", "scheduler"}
    if bad:
        fail(f"[run]: unknown key `{sorted(bad)[0]}` (expected duet, executor, scheduler)"
             f"{_did_you_mean(bad, ('duet', 'executor', 'scheduler'))}")
    duet = table.get("duet", False)
    if not isinstance(duet, bool):
        fail(f"[run] `duet` must be true or false, got {shown(duet)}")
    executor = table.get("executor", "local")
    if executor not in EXECUTORS:
        fail(f"[run] `executor` must be one of {', '.join(EXECUTORS)}, got {shown(executor)}")
    scheduler = table.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip() or "\0" in scheduler):
        fail(f"[run] `scheduler` must be the Dask scheduler's address, such as \"tcp://HOST:8786\", got {shown(scheduler)}")
    if scheduler is not None and executor != "dask":
        fail("[run] `scheduler` is for executor = \"dask\"")
    return RunSettings(duet=duet, executor=executor, scheduler=scheduler)


def _alerts_table(table, fail: Fail) -> tuple[tuple[str, ...], int]:
    """``[alerts]``: the globs of ``suppress`` and ``require_machines``."""
    if not isinstance(table, dict):
        fail("[alerts] must be a table")
    bad = set(table) - {"suppress", "require_machines"}
    if bad:
        fail(f"[alerts]: unknown key `{sorted(bad)[0]}`{_did_you_mean(bad, ('suppress', 'require_machines'))}")
    suppress = table.get("suppress", [])
    if isinstance(suppress, str):
        suppress = [suppress]
    if not isinstance(suppress, list) or not all(isinstance(p, str) and p for p in suppress):
        fail("[alerts] `suppress` must be a list of benchmark names or globs (strings)")
    require = table.get("require_machines", 1)
    if isinstance(require, bool) or not isinstance(require, int) or require < 1:
        fail(f"[alerts] `require_machines` must be an integer of at least 1 (machines that must show a change "
             f"before it is notified), got {shown(require)}")
    return tuple(suppress), require


# Options of each sink type: key -> (checker, default); a default of _REQUIRED marks a required key.
_REQUIRED = object()
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _str(v: object) -> TypeGuard[str]:
    return isinstance(v, str) and bool(v.strip())


def _pos(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= LIMITS["timeout"]


def _count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= LIMITS["retries"]


def _port(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 < v < 65536


def _url(v: object) -> bool:
    """An http(s) URL with a host and, if any, a port that is a number from 0 to 65535 (a probe:
    ``http://`` and ``http://127.0.0.1:99999/x`` passed, then failed at every send, the second as
    a refused connection)."""
    from urllib.parse import urlsplit

    if not isinstance(v, str):
        return False
    try:
        parts = urlsplit(v)
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.port != -1
    except ValueError:  # .port of a port that is not such a number
        return False


def _env(v: object) -> bool:
    return isinstance(v, str) and bool(_ENV_NAME.match(v))


def _addresses(v: object) -> bool:
    return _str(v) or (isinstance(v, list) and bool(v) and all(_str(a) for a in v))


def _headers(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


_NOTIFY_OPTIONS: dict[str, dict[str, tuple[Callable[[object], bool], object, str]]] = {
    "terminal": {},
    "json": {"path": (_str, _REQUIRED, "a path string")},
    "markdown": {"path": (_str, _REQUIRED, "a path string"),
                 "title": (_str, "regbench: performance alerts", "a non-empty string")},
    "webhook": {"url": (_url, None, "an http:// or https:// URL with a host (and a port from 0 to 65535)"),
                "url_env": (_env, None, "the name of an environment variable"),
                "timeout": (_pos, 10.0, "a positive number of seconds"),
                "retries": (_count, 3, "a non-negative integer"),
                "headers": (_headers, {}, "a table of strings")},
    "email": {"host": (_str, _REQUIRED, "a host name"),
              "port": (_port, 25, "a port number"),
              "from": (_str, _REQUIRED, "an e-mail address"),
              "to": (_addresses, _REQUIRED, "an e-mail address or a list of them"),
              "starttls": (lambda v: isinstance(v, bool), False, "true or false"),
              "user": (_str, None, "a user name"),
              "password_env": (_env, None, "the name of an environment variable"),
              "timeout": (_pos, 10.0, "a positive number of seconds"),
              "subject_prefix": (lambda v: isinstance(v, str), "[regbench]", "a string")},
}


def sink_kinds(named: Sequence[str]) -> tuple[str, ...]:
    """The alert kinds a sink gets from the ``kinds`` it names: those, in the order of
    :data:`~regbench.model.ALERT_KINDS`, and failures wherever regressions go unless the list names
    ``failure`` itself.  A benchmark that no longer runs hides any regression it would show, and a
    list written before failures were alerts (``["regression"]``, to leave improvements out) means
    "what needs someone"; a list that names ``failure`` is taken as it is (``["failure"]``:
    failures only)."""
    kinds = set(named)
    if "regression" in kinds and FAILURE_KIND not in kinds:
        kinds.add(FAILURE_KIND)
    return tuple(k for k in ALERT_KINDS if k in kinds)


def _notify_tables(tables, root: Path, fail: Fail) -> tuple[NotifySpec, ...]:
    if not isinstance(tables, list):
        fail("`notify` must be an array of tables: write [[notify]]")
    specs: list[NotifySpec] = []
    for k, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            fail(f"[[notify]] #{k} must be a table")
        kind = table.get("type")
        if kind not in NOTIFY_TYPES:
            fail(f"[[notify]] #{k}: `type` must be one of {', '.join(NOTIFY_TYPES)}, got {shown(kind)}")
        label = f"[[notify]] #{k} ({kind})"
        allowed = _NOTIFY_OPTIONS[kind]
        bad = set(table) - {"type", "name", "kinds"} - set(allowed)
        if bad:
            fail(f"{label}: unknown key `{sorted(bad)[0]}`{_did_you_mean(bad, {'type', 'name', 'kinds', *allowed})}")
        name = table.get("name", kind)
        if not _str(name) or len(name) > 100:
            fail(f"{label} `name` must be a non-empty string of at most 100 characters")
        if any(s.name == name for s in specs):
            fail(f"{label}: another sink is named {name!r}: give each [[notify]] of one type a `name`")
        kinds = table.get("kinds", list(ALERT_KINDS))
        if not isinstance(kinds, list) or not kinds or not all(isinstance(x, str) and x in ALERT_KINDS for x in kinds):
            fail(f"{label} `kinds` must be a non-empty list of \"regression\", \"improvement\" and \"failure\", "
                 f"got {shown(kinds)}")
        options = {}
        for key, (ok, default, what) in allowed.items():
            if key in table:
                if not ok(table[key]):
                    fail(f"{label}: `{key}` must be {what}, got {shown(table[key])}")
                options[key] = table[key]
            elif default is _REQUIRED:
                fail(f"{label}: `{key}` is required")
            elif default is not None:
                options[key] = default
        if kind == "webhook" and ("url" in options) == ("url_env" in options):
            fail(f"{label}: give exactly one of `url` or `url_env` (an environment variable holding the URL)")
        if kind == "email":
            if ("user" in options) != ("password_env" in options):
                fail(f"{label}: give `user` and `password_env` together (the password is read from that "
                     "environment variable, never from the file)")
            options["sender"] = options.pop("from")
            to = options["to"]
            options["to"] = (to,) if isinstance(to, str) else tuple(to)
        if kind in ("json", "markdown"):
            options["path"] = (root / options["path"]).resolve()
        if kind == "webhook":
            options["timeout"] = float(options["timeout"])
            options["headers"] = dict(options["headers"])
        specs.append(NotifySpec(type=kind, name=name, kinds=sink_kinds(kinds), options=options))
    return tuple(specs)
