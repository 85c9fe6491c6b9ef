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
