"""What a store holds: its benchmarks, its versions in history order with their builds, and its
runs with their status (``regbench show``), as plain records for any front end.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .model import RunInfo, SeriesName, VersionInfo
from .store import Store


@dataclass(frozen=True)
class BenchmarkCounts:
    """A benchmark with its unit and direction, and how many of its runs succeeded and failed."""

    name: str
    unit: str
    direction: str
    runs_ok: int
    runs_failed: int


@dataclass(frozen=True)
class VersionCounts:
    """A version with the status of its latest build (None: never built here), its runs, the
    invocations that stored them (:func:`invocation_key`) and its tags (aliases of kind ``tag``)."""

    version: VersionInfo
    build_status: str | None
    runs_ok: int
    runs_failed: int
    invocations: int = 0
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class FailedBuild:
    """The latest build of a version, when it failed: its exit status and the end of its log."""

    version: str
    exit_code: int | None
    log_tail: str


@dataclass(frozen=True)
class Inventory:
    """What :func:`inventory` found.

    Attributes
    ----------
    location : str
        The store's URL.
    benchmarks : tuple of BenchmarkCounts
        By name.
    versions : tuple of VersionCounts
        In history order.
    failed_builds : tuple of FailedBuild
        Versions whose latest build failed.
    runs : tuple of RunInfo
        Every run selected, ok or not (:meth:`regbench.store.Store.runs`).
    """

    location: str
    benchmarks: tuple[BenchmarkCounts, ...]
    versions: tuple[VersionCounts, ...]
    failed_builds: tuple[FailedBuild, ...]
    runs: tuple

    @property
    def failed_runs(self) -> tuple:
        """The runs that did not succeed."""
        return tuple(r for r in self.runs if r.status != "ok")

    @property
    def invocations(self) -> int:
        """How many invocations (processes) stored the runs: fewer than the runs when a tool's
        invocation stored a run of each benchmark it reported, or a run stored its measures."""
        return len({invocation_key(r) for r in self.runs})


def invocation_key(run: RunInfo) -> tuple:
    """What the runs one invocation stored share: a benchmark tool's invocation (``format``) stores
    a run of each benchmark it reports (``NAME/REPORTED``), and any run a run of each of its
    measures (``NAME:MEASURE``), all with the configured benchmark's name, the version,
    configuration, machine, campaign, run index and start time of the process.  An imported run
    (no campaign) is its own: the store does not record which of them one invocation made."""
    if run.campaign_id is None:
        return ("imported", run.id)
    return (SeriesName.parse(run.benchmark).benchmark, run.version, run.config, run.machine, run.campaign_id,
            run.run_index, run.started_at)


def inventory(store: Store, *, benchmark: str | None = None, version: str | None = None) -> Inventory:
    """The benchmarks, versions, builds and runs of a store, or of one benchmark or version.

    ``version`` may be a unique prefix of a stored version's name (as a short sha).

    Raises
    ------
    NotFoundError
        When no stored version is called ``version`` (or starts with it, uniquely).
    """
    if version:
        version = store.resolve_version(version)
    runs = store.runs(benchmark=benchmark, version=version)
    by_bench = Counter((r.benchmark, r.status) for r in runs)
    by_version = Counter((r.version, r.status) for r in runs)

    def failed(counts: Counter, name: str) -> int:
        return sum(n for (key, status), n in counts.items() if key == name and status != "ok")

    benchmarks = tuple(BenchmarkCounts(b.name, b.unit, b.direction, by_bench[(b.name, "ok")],
                                       failed(by_bench, b.name))
                       for b in store.benchmarks() if not benchmark or b.name == benchmark)
    latest = {}  # the latest build of each version, in the order versions were first built
    for build in store.builds():
        latest[build.version] = build
    invocations = Counter(r.version for r in {invocation_key(r): r for r in runs}.values())
    tags = {name: tuple(a.name for a in aliases if a.kind == "tag") for name, aliases in store.aliases().items()}
    versions = tuple(VersionCounts(v, latest[v.name].status if v.name in latest else None,
                                   by_version[(v.name, "ok")], failed(by_version, v.name), invocations[v.name],
                                   tags.get(v.name, ()))
                     for v in store.versions() if not version or v.name == version)
    failed_builds = tuple(FailedBuild(b.version, b.exit_code, b.log_tail or "")
                          for b in latest.values() if b.status != "ok")
    return Inventory(store.url, benchmarks, versions, failed_builds, tuple(runs))
