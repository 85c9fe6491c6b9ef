"""Adapters: pure parsers of other benchmark tools' output, behind a small ABC and a registry.

An adapter reads one file a tool wrote (``go test -bench``, JMH's ``-rf json``, Google
Benchmark's ``--benchmark_format=json``, ...) and returns :class:`ToolRun` objects: every value
the tool reported, grouped into runs the way the tool ran them (a JMH fork, one ``go test``
invocation), so that the statistics keep runs as the unit of replication (seed 000 s.2), and,
for a tool whose output names the benchmarks that failed (``go test``), :class:`ToolFailure`
objects (:meth:`Adapter.failures`).  It never runs the tool, stores or notifies (STYLE.md
habit 8); the version, configuration and machine come from the caller (``regbench import
--format NAME --version V``).

Third-party adapters register themselves with :func:`register`, or through the entry-point group
``regbench.adapters`` (each entry point names an :class:`Adapter` subclass), loaded on first use.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ConfigError, InputError
from ..model import ToolTiming

#: Entry-point group of third-party adapters.
ENTRY_POINT_GROUP = "regbench.adapters"
#: How much of a file :meth:`Adapter.sniff` sees.
SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class ToolRun:
    """One run of one benchmark as a tool reported it.

    Attributes
    ----------
    benchmark : str
        The benchmark's name as the tool gives it; a secondary metric of the same benchmark
        (Go's ``B/op``, a JMH secondary result) is its own benchmark, ``NAME [metric]``.
    samples : numpy.ndarray
        Every value the tool reported for this run, in order (float64), warm-up included.
    unit : str
        Unit of the samples, as the tool names it (``ns``, ``ns/op``, ``ops/s``, ``B/op``, ``s``).
    direction : str
        ``lower`` or ``higher`` is better.
    run : int
        Index of the run within the file (a JMH fork, a repetition, an invocation), from 0.
    warmup : int
        How many leading ``samples`` are warm-up iterations the tool reported (kept, excluded
        from analyses).
    params : dict
        What else the tool says about the run (parameters, aggregates it computed), for people.
    timing : ToolTiming or None
        What the tool says the run cost beyond its samples (processes started, warm-up it did
        not report, the length of an iteration), where it says it: stored with the run, and
        what ``regbench optimize`` prices the tool's runs with.  None on a secondary metric
        (it shares its benchmark's processes) and where the tool does not say.
    weights : numpy.ndarray or None
        Per sample, how many measurements the tool pooled into it (a JMH sample-mode
        iteration's timed invocations), where the tool's own score weighs samples by them;
        None where every sample counts alike.
    """

    benchmark: str
    samples: np.ndarray
    unit: str
    direction: str = "lower"
    run: int = 0
    warmup: int = 0
    params: dict = field(default_factory=dict)
    timing: ToolTiming | None = None
    weights: np.ndarray | None = None


@dataclass(frozen=True)
class ToolFailure:
    """One benchmark that a tool reports as failed in one run, in the tool's own words.

    Attributes
    ----------
    benchmark : str or None
        The benchmark's name as the tool reports its results (the name of its primary series:
        for Go, with the ``-GOMAXPROCS`` suffix), so that the failure lands in the series its
        results go to when it succeeds; None for a failure the tool reports without naming a
        benchmark it can be put to (Go: a panic on a benchmark's first call), which is then the
        invocation's.
    message : str
        What the tool printed about the failure (Go: the ``--- FAIL:`` line and the log lines
        under it, or the panic and the first lines of its trace).
    unit : str or None
        Unit of the benchmark's primary series (a failed benchmark may have reported nothing);
        None when the tool does not say it (JMH prints no unit for a benchmark that failed in its
        first iteration): the series keeps the unit it is stored with.
    direction : str
        ``lower`` or ``higher`` is better, for that series.
    run : int
        Index of the run within the file, as :attr:`ToolRun.run`.
    """

    benchmark: str | None
    message: str
    unit: str | None
    direction: str = "lower"
    run: int = 0


class Adapter(abc.ABC):
    """A parser of one tool's output; subclasses set :attr:`name` and :attr:`description`."""

    name: str = ""
    description: str = ""

    @abc.abstractmethod
    def sniff(self, head: str, path: Path) -> bool:
        """Whether the file (its first :data:`SNIFF_BYTES`, decoded leniently) is this tool's."""

    @abc.abstractmethod
    def parse(self, path: Path) -> list[ToolRun]:
        """Every run in the file.  Raise :class:`~regbench.errors.InputError` with the file and
        line (when known) on anything it cannot read; never return a partial result."""

    def failures(self, path: Path) -> list[ToolFailure]:
        """The benchmarks the file reports as failed, with the tool's message about each.

        A tool that exits with an error because some of its benchmarks failed still reports the
        others; the caller stores those and, for each failure named here, a failed run of that
        benchmark whose reason is :attr:`ToolFailure.message`.  A failure the tool reports
        without a benchmark it can be put to has ``benchmark`` None: the invocation is then
        stored as failed too, with that message.
        Pure parsing, as :meth:`parse`, and may raise :class:`~regbench.errors.InputError`
        likewise.  Default: none (the tool's output does not name failed benchmarks)."""
        return []

    def salvage(self, path: Path) -> tuple[list[ToolRun], list[ToolFailure]]:
        """The runs an output cut short still holds, for a file :meth:`parse` refuses because the
        tool's process crashed or was killed while writing it (a benchmark that aborts ends a
        Google Benchmark binary in the middle of its JSON): those of the benchmarks written whole
        before the cut, so that the benchmarks that finished are not lost with the one that did
        not, with the failures those report (:meth:`failures`).  Called only for a process that did
        not end well; never raises.  Default: none (an adapter whose :meth:`parse` already reads
        what a cut-short output holds, as ``go``'s)."""
        return [], []

    def console_failures(self, path: Path) -> list[ToolFailure]:
        """The benchmarks the tool's console output reports as failed, when its results go to a
        file of their own (``{output}``) that does not name them.

        ``path`` is the tool's standard output.  JMH writes a benchmark that threw to its console
        only (``<failure>`` and the exception), leaves it out of its ``-rf json`` file and exits
        with status 0: without this, the failure would not be seen at all.  Pure parsing, as
        :meth:`failures`.  Default: none."""
        return []

    #: Whether one invocation runs each benchmark in processes the tool starts itself (JMH's
    #: forks, ``-f``), each running the repetitions it is asked for: a stored run joins them, and
    #: ``regbench optimize`` reduces the repetitions of each process where a run says how many it
    #: had (:attr:`ToolRun.timing`), and says so where it does not (docs/optimize.md).
    forks: bool = False

    #: The fewest repetitions the tool accepts in one invocation (Criterion's ``--sample-size``
    #: is at least 10): ``run --plan optimized`` never asks a tool benchmark for fewer.
    min_iterations: int = 1

    #: The tool's own filter that ``REGBENCH_SELECT`` is written for (``go test -bench``), for
    #: people; empty when the tool cannot run only some of its benchmarks (then an invocation is
    #: never split, :func:`regbench.optimize.plans.split_invocation`).
    selection: str = ""

    def selection_unit(self, reported: str) -> str | None:
        """What the tool's filter selects to run the benchmark it reported as ``reported``: the
        smallest part of a suite one invocation can run on its own (Go: the top-level
        ``BenchmarkX`` of ``BenchmarkX/sub-8 [B/op]``); None when the filter cannot name it."""
        return None

    def render_selection(self, units: Sequence[str]) -> str:
        """``units`` (of :meth:`selection_unit`) in the tool's filter syntax: the value of
        ``REGBENCH_SELECT`` for an invocation that must run exactly these."""
        raise NotImplementedError(f"{self.name} cannot select benchmarks")


#: The characters Go's ``regexp.QuoteMeta`` escapes: with a backslash before each, a name is
#: matched literally by RE2 (Go), Java's regex (JMH), ECMAScript and POSIX extended regexes
#: (Google Benchmark's ``std::regex``/``regcomp``) and Rust's ``regex`` crate (criterion).
REGEX_META = frozenset("\\.+*?()|[]{}^$")


def quote_meta(name: str) -> str:
    """``name`` as a regex matching itself literally in every engine above.  Written here
    rather than with :func:`re.escape`, which also escapes blanks, ``-``, ``#``, ``&`` and ``~``:
    a backslash before those is an error in POSIX regexes and in older Rust ``regex``."""
    return "".join("\\" + c if c in REGEX_META else c for c in name)


def anchored_alternation(units: Sequence[str]) -> str:
    """``^(A|B)$``: a regex matching exactly the names ``units``, each quoted (plain groups:
    POSIX extended regexes have no ``(?:``)."""
    if not units:
        raise ValueError("nothing to select")
    return "^(" + "|".join(quote_meta(u) for u in units) + ")$"


def without_metric(reported: str) -> str:
    """The benchmark of a secondary metric reported as ``NAME [metric]`` (Go's ``B/op``, a JMH
    profiler's ``gc.alloc.rate``, a Google Benchmark counter): ``NAME``."""
    if reported.endswith("]"):
        head, sep, _ = reported.rpartition(" [")
        if sep and head:
            return head
    return reported


REGISTRY: dict[str, Adapter] = {}

#: Built-in adapters by name -> module in this package, imported on first use.
BUILTIN: dict[str, str] = {
    "go": "gotest", "go-json": "gotest", "google-benchmark": "googlebench", "hyperfine": "hyperfine",
    "jmh": "jmh", "criterion": "criterion", "cargo-bench": "cargobench", "pytest-benchmark": "pytest_benchmark",
    "pyperf": "pyperf", "asv": "asv", "bmf": "bmf",
}
_entry_points_loaded = False


def register(cls: type[Adapter]) -> type[Adapter]:
    """Class decorator: add an adapter to the registry under its :attr:`~Adapter.name`."""
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"adapter name {cls.name!r} is empty or taken")
    REGISTRY[cls.name] = cls()
    return cls


def _load_all() -> None:
    global _entry_points_loaded
    import importlib

    for name, module in BUILTIN.items():
        if name not in REGISTRY:
            importlib.import_module(f".{module}", __package__)
    if not _entry_points_loaded:
        _entry_points_loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            cls = ep.load()
            if getattr(cls, "name", None) not in REGISTRY:
                register(cls)


def available_formats() -> list[str]:
    _load_all()
    return sorted(REGISTRY)


def get_adapter(name: str) -> Adapter:
    _load_all()
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r} (known: {', '.join(sorted(REGISTRY))})") from None


def sniff_format(path: str | Path) -> str:
    """The name of the one adapter that recognises the file; an InputError when none or several do."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(SNIFF_BYTES).decode("utf-8-sig", errors="replace")  # without a byte-order mark
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(p)) from exc
    _load_all()
    hits = [name for name, adapter in sorted(REGISTRY.items()) if adapter.sniff(head, p)]
    if not hits:
        raise InputError("not a format regbench knows (give --format; known: "
                         f"{', '.join(sorted(REGISTRY))})", path=str(p))
    if len(hits) > 1:
        raise InputError(f"could be {' or '.join(hits)}: give --format", path=str(p))
    return hits[0]
