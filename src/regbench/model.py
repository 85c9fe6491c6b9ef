"""Plain data objects shared by the layers (no I/O here).

Vocabulary as in DESIGN.md: a *run* is one fresh process of an *experiment* (benchmark x version x
configuration x machine); its *samples* are the measured values in order, the first ``warmup`` of
which are warm-up iterations that analyses discard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

#: Status of a run: ``ok`` has samples; the others are failures recorded as results.
RUN_STATUSES = ("ok", "failed", "crashed", "timeout", "garbage")
DIRECTIONS = ("lower", "higher")
DEFAULT_CONFIG = "default"

#: Kinds of a change, by the benchmark's direction (and so of an alert).
CHANGE_KINDS = ("regression", "improvement")
#: An alert's lifecycle: ``new`` when created; a person sets ``acknowledged``, ``invalid``,
#: ``expected`` (or ``new`` again, to reopen); detection sets ``fixed``.
ALERT_STATUSES = ("new", "acknowledged", "invalid", "expected", "fixed")
#: Alerts still waiting for someone (a later improvement can fix them).
OPEN_ALERT_STATUSES = ("new", "acknowledged")
#: Statuses a person may set by hand.
TRIAGE_STATUSES = ("new", "acknowledged", "invalid", "expected")


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


@dataclass(frozen=True)
class VersionInfo:
    """A version of the software under test, in history order."""

    name: str
    id: int = 0
    commit: str | None = None
    timestamp: datetime | None = None
    timestamp_text: str | None = None


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
# (typed records the store returns)


# ------------------------------------------------------------------------------------ alerts
# (the alert record and its vocabulary's helpers)
