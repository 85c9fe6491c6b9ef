"""What a store holds: its benchmarks, its versions in history order with their builds, and its
runs with their status (``regbench show``), as plain records for any front end; and what its
failed runs say: which were run again with success since, and which benchmarks no longer run
(:func:`scan_failures`: ``regbench detect`` names them and records them as failure alerts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .failures import failure_cause
from .model import (
    SUPERSEDED,
    TOOL_SEPARATOR,
    BuildInfo,
    Failing,
    FailureScan,
    NoLongerRun,
    RunInfo,
    RunSpan,
    SeriesName,
    VersionInfo,
)
from .silence import MIN_VERSIONS, Retirement, group_lead, retired, spans_of
from .store import HistoryView, Store


@dataclass(frozen=True)
class BenchmarkCounts:
    """A benchmark with its unit and direction, and how many of its runs succeeded and failed."""

    name: str
    unit: str
    direction: str
    runs_ok: int
    runs_failed: int
    #: Failed runs run again with success since (:func:`retried_failures`), not in ``runs_failed``.
    runs_retried: int = 0
    #: Runs measured before the benchmark's definition changed (:data:`~regbench.model.SUPERSEDED`).
    runs_superseded: int = 0


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
    runs_retried: int = 0
    runs_superseded: int = 0


@dataclass(frozen=True)
class FailedBuild:
    """The latest build of a version, when it failed: its exit status and the end of its log;
    for a build variant of a screen (``regbench screen`` with options applied as build flags),
    ``variant`` holds the flags the variant adds to ``[project] build`` (empty otherwise)."""

    version: str
    exit_code: int | None
    log_tail: str
    variant: str = ""


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
    retried : frozenset of int
        Ids of the failed runs that were run again with success since (:func:`retried_failures`).
    """

    location: str
    benchmarks: tuple[BenchmarkCounts, ...]
    versions: tuple[VersionCounts, ...]
    failed_builds: tuple[FailedBuild, ...]
    runs: tuple
    retried: frozenset[int] = field(default_factory=frozenset)

    @property
    def failed_runs(self) -> tuple:
        """The runs that did not succeed and were not run again with success since."""
        return tuple(r for r in self.runs if r.failed and r.id not in self.retried)

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


def retried_failures(runs: Sequence[RunInfo],
                     configured: Mapping[int, frozenset[str]] | None = None) -> frozenset[int]:
    """Ids of the failed runs that were run again with success since.

    ``run --retry-failed`` stores new runs and keeps the failed ones as history, so that a failure
    once fixed would otherwise be listed (and counted) for ever.  A failed run of a series counts
    as retried when a *later campaign* stored an ``ok`` run of that series on the same version,
    configuration and machine; or, for a tool's invocation that failed as a whole (stored under
    the configured benchmark's name, as nothing it reported could be read), an ``ok`` run of
    anything the benchmark reports (``NAME/REPORTED``).  Only a later campaign counts: a run
    that fails among successful ones of its own campaign is a flaky benchmark, and stays listed;
    so do the failures of a retry that failed again, and imported runs (an import is not a retry).

    ``configured`` is, per campaign, the benchmarks its configuration named (its plan's
    ``benchmarks``, :func:`configured_benchmarks`): a command benchmark may be called ``io/read``
    beside one called ``io``, and its runs then retry nothing of ``io``'s.
    """
    if not any(r.failed and r.campaign_id is not None for r in runs):
        return frozenset()
    configured = configured or {}
    latest: dict[tuple, int] = {}  # per series key, the last campaign with an ok run
    for r in runs:
        if r.status != "ok" or r.campaign_id is None:
            continue
        names = {r.benchmark}
        if r.benchmark not in configured.get(r.campaign_id, ()):  # a tool's report, or a measure
            names.add(SeriesName.parse(r.benchmark).benchmark)
        for name in names:
            key = (name, r.version, r.config, r.machine)
            latest[key] = max(latest.get(key, r.campaign_id), r.campaign_id)
    out = set()
    for r in runs:
        if r.failed and r.campaign_id is not None and \
                latest.get((r.benchmark, r.version, r.config, r.machine), -1) > r.campaign_id:
            out.add(r.id)
    return frozenset(out)


def configured_benchmarks(store: Store) -> dict[int, frozenset[str]]:
    """Per campaign, the names of the benchmarks its configuration held (its plan's
    ``benchmarks``; none for a campaign without a plan)."""
    return {c.id: frozenset((c.plan or {}).get("benchmarks") or ()) for c in store.campaigns()}


def runs_and_retries(store: Store, *, version: str | None = None) -> tuple[list[RunInfo], frozenset[int]]:
    """The stored runs (of ``version``) and the ids of the failed ones run again with success
    since (:func:`retried_failures`); no runs at all, at the cost of one query, when none failed."""
    if not store.runs(version=version, failed=True):
        return [], frozenset()
    runs = store.runs(version=version)
    return runs, retried_failures(runs, configured_benchmarks(store))


def open_failures(store: Store, *, version: str | None = None) -> Counter:
    """Failed runs not run again with success since (:func:`retried_failures`), counted by
    ``(benchmark, version, config, machine)``; empty, at the cost of one query, when no run failed."""
    return failure_counts(*runs_and_retries(store, version=version))


def failure_counts(runs: Sequence[RunInfo], retried: frozenset[int]) -> Counter:
    """The failed ``runs`` not in ``retried``, counted by ``(benchmark, version, config, machine)``."""
    return Counter((r.benchmark, r.version, r.config, r.machine) for r in runs
                   if r.failed and r.id not in retried)


def scan_failures(store: Store, *, benchmark: str | None = None, history: HistoryView | None = None,
                  retirement: Retirement = Retirement()) -> FailureScan:
    """The series that fail at the newest version they were run at, and ran before
    (:class:`~regbench.model.Failing`, in name order), those that never ran with success at any
    version (:attr:`~regbench.model.FailureScan.never_succeeded`: ``since`` is ``first``, the
    first version they ran at), and the versions where each series with a failed run succeeded
    (:class:`~regbench.model.FailureScan`).

    A tool's invocation that failed whole is its own benchmark's (``gb``); its newest version is
    then the newest at which the tool stored anything, and a version where a benchmark it reports
    has a successful run ran since.  A failing series' stretch starts at the first version after
    its last successful one where its runs failed (:attr:`~regbench.model.Failing.first`), and
    its error is the cause of the last failed run stored there
    (:func:`regbench.failures.failure_cause`).

    With ``history`` (a detection's :class:`~regbench.store.HistoryView`), the store is read as
    that history: only its versions (the first-parent line), and without the runs of sessions
    (``compare --run``, ``bisect``, ``detect --confirm``) unless the history centres them; so a
    failed ``compare --run`` of a feature branch is not a failing benchmark.  Without, every
    version and every run count.

    A failing series that is *no longer run* (removed from the suite, or renamed:
    :func:`no_longer_run`; or its machine or configuration retired:
    :func:`regbench.silence.retired`, after as many versions as ``retirement`` asks: ``[detect]
    retire_after`` and ``retire_lag_factor``) is not failing: it is in
    :attr:`~regbench.model.FailureScan.no_longer_run` instead (one that never succeeded, in
    :attr:`~regbench.model.FailureScan.never_succeeded_gone`).

    Reads the failed runs, then the measured versions of the series they concern (and of the
    series a failed tool reports) alone, then what was measured together at the versions around
    the newest of each failing series: ``detect`` asks on every pass, and a store of millions
    of runs with one failure must not be read whole (one query when no run failed)."""
    failed_runs = store.runs(benchmark=benchmark, failed=True)
    if not failed_runs:
        return FailureScan()
    excluded = (frozenset(store.session_campaigns()) if history is not None and history.sessions == "exclude"
                else frozenset())
    order = {v.name: k for k, v in enumerate(history.versions() if history is not None else store.versions())}
    failed_runs = [r for r in failed_runs if r.version in order and r.campaign_id not in excluded]
    if not failed_runs:
        return FailureScan()
    out, succeeded = _failing_series(store, failed_runs, order, excluded)
    if not out:
        return FailureScan((), succeeded)
    # Whether a companion fails too (stopped together) or is no longer run itself is read from
    # every failing series, whatever benchmark was asked for: a pass of one benchmark decides as
    # a full pass does, or one would fix the alert that the other opens again.
    every = out
    if benchmark is not None:
        every, _ = _failing_series(store, [r for r in store.runs(failed=True) if r.version in order
                                           and r.campaign_id not in excluded], order, excluded)
    versions = sorted(order, key=order.__getitem__)
    spans: dict[str, list[RunSpan]] = {}
    gone = no_longer_run(store, every, versions, excluded, spans, retirement=retirement)
    asked = {f.series for f in out}
    gone = {k: g for k, g in gone.items() if k in asked}
    if len(gone) < len(out):  # nothing measured there any more shows it: its machine or configuration retired?
        gone |= retired(store, [f for f in out if f.series not in gone], versions, excluded, spans,
                        retirement=retirement)
    left = sorted((f for f in out if f.series not in gone), key=lambda f: f.series)
    never = {f.series for f in out if f.never_succeeded}
    return FailureScan(tuple(f for f in left if not f.never_succeeded), succeeded,
                       tuple(gone[k] for k in sorted(gone) if k not in never),
                       tuple(f for f in left if f.never_succeeded), tuple(gone[k] for k in sorted(gone) if k in never))


def _failing_series(store: Store, failed_runs: Sequence[RunInfo], order: Mapping[str, int], excluded: frozenset[int]
                    ) -> tuple[list[Failing], dict[tuple[str, str, str], tuple[str, ...]]]:
    """The series of ``failed_runs`` (read as the history ``order`` ranks, without the
    ``excluded`` campaigns) failing at the newest version they ran at, those that never succeeded
    among them, and the versions where each succeeded: :func:`scan_failures` before what is no
    longer run is told apart."""
    failed: dict[tuple[str, str, str], dict[str, list[RunInfo]]] = {}
    for r in failed_runs:
        failed.setdefault((r.benchmark, r.config, r.machine), {}).setdefault(r.version, []).append(r)
    reported: dict[tuple[str, str], list[str]] = {}  # (tool benchmark, config) -> what it reports
    names = {r.benchmark for r in failed_runs}
    for name, cfg, _ in store.series_keys():
        base = SeriesName.parse(name).benchmark
        if base != name and base in names:
            reported.setdefault((base, cfg), []).append(name)
    measured: dict[tuple[str, str], dict[str, list[str]]] = {}

    def ok_versions(name: str, cfg: str, mach: str) -> set[str]:
        if (name, cfg) not in measured:
            measured[name, cfg] = store.measured_versions(name, cfg, exclude_campaigns=excluded)
        return {v for v in measured[name, cfg].get(mach, ()) if v in order}

    def rank(version: str) -> int:
        return order[version]

    out = []
    succeeded: dict[tuple[str, str, str], tuple[str, ...]] = {}
    for (name, cfg, mach), runs in failed.items():
        ok = ok_versions(name, cfg, mach)
        for other in reported.get((name, cfg), ()):  # a tool's invocation: what it reported counts
            ok |= ok_versions(other, cfg, mach)
        succeeded[name, cfg, mach] = tuple(sorted(ok, key=rank))
        newest = max(ok | set(runs), key=rank)
        earlier = [v for v in ok if rank(v) < rank(newest)]
        if newest in ok:
            continue
        if earlier:
            since = max(earlier, key=rank)
            first = min((v for v in runs if rank(v) > rank(since)), key=rank)
        else:  # never succeeded: failing from its first run on (Failing.never_succeeded)
            since = first = min(runs, key=rank)
        last = max(runs[first], key=lambda r: r.id)
        out.append(Failing(name, cfg, mach, newest, len(runs[newest]), since, first,
                           failure_cause(last.status, last.stderr_tail)))
    return out, succeeded


#: Versions at least where what ran beside a failing benchmark (no suite recorded: imports,
#: submissions) ran without it before it counts as no longer run: its own job of the first one
#: may still be on its way (CI jobs of one commit finish out of order).  Not the lead of
#: :mod:`regbench.silence`: the runs of one campaign interleave, so nearly every benchmark's
#: first run of a version comes after another's, a lead of 1 that says nothing of its jobs.
ALONE_VERSIONS = 2


def _growing(items: Sequence[str]) -> Iterable[Sequence[str]]:
    """``items`` in slices of 1, 8, 64, then 500: what :func:`no_longer_run` asks the store about
    at a time, nearest first (the answer is nearly always in the first slice; a store of a
    thousand benchmarks answers a thousand rows a version)."""
    start, size = 0, 1
    while start < len(items):
        yield items[start:start + size]
        start, size = start + size, min(size * 8, 500)


def no_longer_run(store: Store, failing: Sequence[Failing], versions: Sequence[str],
                  excluded: frozenset[int] = frozenset(), spans: dict[str, list[RunSpan]] | None = None, *,
                  retirement: Retirement = Retirement()) -> dict[tuple[str, str, str], NoLongerRun]:
    """Which of the ``failing`` series are no longer run since the newest version they ran at
    (removed from the suite, or renamed), by series.

    The store holds no runs of a series removed from the suite, so its failed runs would stay the
    newest it has for ever; but neither does it hold any of a benchmark that a campaign of a
    subset (``run --benchmark NAME``) left out.  Only a *complete measurement* after the newest
    version ``V`` a series ran at tells one from the other: the runs of a later version ``W`` of
    the history (``versions``, in order) on the series' machine and configuration made by a
    campaign that finished (or imported), ``excluded`` campaigns (sessions) aside.  The first
    ``W`` where one of these holds is where the series is no longer run:

    - the suite of the newest campaign that ran at ``W`` and recorded one (its plan's ``suite``:
      every benchmark of ``regbench.toml`` when it started, whatever ``--benchmark`` selected)
      does not name it; when that suite names it, ``W`` shows nothing (a selection left it out);
    - with no such suite at ``W`` (imports, submissions, campaigns older than the record), or for
      a benchmark a tool reports (``gb/X``: a suite names the tool), every benchmark (by
      configured name) that ran beside it at ``U``, the newest version up to ``V`` where it ran
      beside others, ran at ``W`` too, except those themselves no longer run at ``W`` (found so
      first, until nothing more is found): the suite it was part of ran again, without it.  A
      tool's benchmark runs beside the tool's others, so that a tool that runs and no longer
      reports it shows it gone.  When it never ran beside others, any measurement of others at
      ``W`` does.

    A campaign of a subset of the suite runs fewer than the benchmarks of ``U``, so it shows
    nothing; nor does a campaign still running, interrupted or failed (it may not have reached
    the series yet).  Failing benchmarks that ran beside it at ``U`` (by configured name) and
    stopped with it (*together*) are not asked for at the versions after the newest of theirs
    and its own; but a measurement of the rest without them is what a selection that leaves out
    a broken module looks like too, so it takes as many such versions (suites aside) as a
    silent place needs, :meth:`regbench.silence.Retirement.needed` of the group's lead
    (:func:`regbench.silence.group_lead`) by ``retirement``, not one.

    After :data:`~regbench.silence.MIN_VERSIONS` versions or more, only the versions where its
    machine stored runs of its configuration are read (:func:`regbench.silence.spans_of`, kept
    in ``spans``): a retired machine is not read for at every version since.
    """
    by_id = {c.id: c for c in store.campaigns()}
    complete = {None} | {i for i, c in by_id.items() if c.status == "finished" and i not in excluded}
    suites = {i: frozenset(s) for i, c in by_id.items() if isinstance(s := (c.plan or {}).get("suite"), list)}
    rank = {v: k for k, v in enumerate(versions)}
    seen: dict[tuple[str, str], dict[str, set[tuple[str, int | None]]]] = {}
    # Per place, the failing series of a configured benchmark (not a measure or a tool's report).
    broken: dict[tuple[str, str], dict[str, Failing]] = {}
    for f in failing:
        if SeriesName.parse(f.benchmark).benchmark == f.benchmark:
            broken.setdefault((f.config, f.machine), {})[f.benchmark] = f
    leads: dict[tuple[str, str, tuple[str, ...]], int] = {}

    def measured(config: str, machine: str, wanted: Sequence[str]) -> dict[str, set[tuple[str, int | None]]]:
        cache = seen.setdefault((config, machine), {})
        missing = [v for v in wanted if v not in cache]
        if missing:
            found = store.measured_together(missing, config=config, machine=machine)
            for v in missing:
                cache[v] = {(n, c) for n, c in found.get(v, ()) if c in complete}
        return cache

    def own(f: Failing, name: str) -> bool:
        """Whether a series is ``f``'s: itself, or its measures and what its tool reports."""
        return name == f.benchmark or (TOOL_SEPARATOR not in f.benchmark
                                       and SeriesName.parse(name).benchmark == f.benchmark)

    def others(f: Failing, runs: Iterable[tuple[str, int | None]]) -> set[str]:
        return {SeriesName.parse(n).benchmark for n, _ in runs if not own(f, n)}

    def anchor(f: Failing) -> tuple[str | None, frozenset[str]]:
        for chunk in _growing(list(reversed(versions[:rank[f.version] + 1]))):
            runs = measured(f.config, f.machine, chunk)
            for v in chunk:
                if any(own(f, n) for n, _ in runs[v]) and (companions := others(f, runs[v])):
                    return v, frozenset(companions)
        return None, frozenset()

    def lead(f: Failing, together: frozenset[str]) -> int:
        key = (f.config, f.machine, tuple(sorted({f.benchmark, *together})))
        if key not in leads:
            leads[key] = group_lead(store, f.config, f.machine, key[2], rank)
        return leads[key]

    def gone_at(f: Failing, at: str | None, companions: frozenset[str], gone: Mapping[str, int]) -> NoLongerRun | None:
        base = SeriesName.parse(f.benchmark).benchmark
        configured = TOOL_SEPARATOR not in f.benchmark  # a suite names configured benchmarks, not what a tool reports
        fellows = broken.get((f.config, f.machine), {})
        together = frozenset(c for c in companions if c in fellows and c != base)
        after = max([rank[f.version], *(rank[fellows[c].version] for c in together)])
        count, needed = 0, retirement.after
        alone: list[tuple[str, frozenset[str]]] = []
        later = versions[rank[f.version] + 1:]
        if len(later) >= MIN_VERSIONS:  # only where its place stored runs: nothing else there can show it gone
            stored = {s.version for s in spans_of(store, f.machine, spans) if s.config == f.config}
            later = [v for v in later if v in stored]
        for chunk in _growing(later):
            runs = measured(f.config, f.machine, chunk)
            for v in chunk:
                if any(own(f, n) for n, _ in runs[v]):
                    return None  # a series of its own ran there (a measure): not gone
                listed = [c for _, c in runs[v] if c in suites]
                if listed and configured:  # the newest suite says, whatever was selected
                    if base not in suites[max(listed)]:
                        return NoLongerRun(f.benchmark, f.config, f.machine, f.version, v, max(listed), at)
                    continue
                ran = others(f, runs[v])
                if not ran:
                    continue
                asked = frozenset(c for c in companions if gone.get(c, len(versions)) > rank[v])
                if asked <= ran:
                    # What ran beside it ran without it: at more than one version, since a CI job
                    # of its own that finishes after the others' looks the same until it lands.
                    alone.append((v, asked))
                    if len(alone) >= ALONE_VERSIONS:
                        by, first = alone[0]
                        return NoLongerRun(f.benchmark, f.config, f.machine, f.version, by, None, at,
                                           tuple(sorted(first)))
                    continue
                if together and rank[v] > after and asked - together <= ran:
                    count += 1
                    if count == retirement.after:  # enough to be worth asking how far behind they used to be
                        needed = retirement.needed(lead(f, together))
                    if count >= needed:
                        return NoLongerRun(f.benchmark, f.config, f.machine, f.version, v, None, at,
                                           tuple(sorted(asked - together)), tuple(sorted(together)),
                                           measured=needed, lead=lead(f, together))
        return None

    anchors = {f.series: anchor(f) for f in failing}
    out: dict[tuple[str, str, str], NoLongerRun] = {}
    while True:  # a companion no longer run from X on is not asked for from X on: until nothing moves
        found = {}
        for f in failing:
            # One found gone together with it is no companion gone before: the group decides both.
            gone = {g.benchmark: rank[g.by] for g in out.values()
                    if (g.config, g.machine) == (f.config, f.machine) and TOOL_SEPARATOR not in g.benchmark
                    and SeriesName.parse(f.benchmark).benchmark not in g.together}
            where = gone_at(f, *anchors[f.series], gone)
            if where is not None:
                found[f.series] = where
        if found == out:
            return out
        out = found


def failing_at_newest(store: Store, *, benchmark: str | None = None,
                      history: HistoryView | None = None) -> list[Failing]:
    """The benchmarks that fail at the newest version they were run at, and ran before, in name
    order: the ``failing`` of :func:`scan_failures`."""
    return list(scan_failures(store, benchmark=benchmark, history=history).failing)


def build_variants(store: Store) -> dict[str, dict[str, str]]:
    """The build variants of the screens recorded in the store: by build key, the keys of the
    variants of the same screen (its latest campaign naming the key), each with the flags it adds
    to the commands' common beginning (``-DB=2``).

    A screen with options applied as build flags builds each version once per variant
    (``plan["builds"]``, :mod:`regbench.screening.campaign`); a version that failed to build in
    one of them was still built, and run, in the others."""
    import shlex

    from .run.versions import build_key

    out: dict[str, dict[str, str]] = {}
    for campaign in store.campaigns():
        commands = (campaign.plan or {}).get("builds")
        if not isinstance(commands, list) or len(commands) < 2:
            continue
        common = 0
        while all(len(c) > common and c[common] == commands[0][common] for c in commands):
            common += 1
        group = {build_key(c): shlex.join(c[common:]) for c in commands}
        for key in group:
            out[key] = group
    return out


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
    # Retries are looked for among every run of the version: a tool's invocation that failed
    # whole is retried by runs of the benchmarks it reports, which --benchmark NAME leaves out.
    retried = retried_failures(runs if benchmark is None else store.runs(version=version),
                               configured_benchmarks(store))

    def status(r: RunInfo) -> str:
        return "retried" if r.id in retried else r.status

    by_bench = Counter((r.benchmark, status(r)) for r in runs)
    by_version = Counter((r.version, status(r)) for r in runs)

    def failed(counts: Counter, name: str) -> int:
        return sum(n for (key, st), n in counts.items() if key == name and st not in ("ok", "retried", SUPERSEDED))

    stored = store.benchmarks()
    names = [b.name for b in stored]
    configured = frozenset().union(*configured_benchmarks(store).values()) if any("/" in n for n in names) else frozenset()

    def unit(b) -> str:
        # A tool benchmark's own series holds only its failed invocations (what the tool
        # reports is stored as NAME/...): it has no unit, whatever the configuration's default.
        if by_bench[(b.name, "ok")] == 0 and any(n.startswith(b.name + "/") and n not in configured for n in names):
            return ""
        return b.unit

    benchmarks = tuple(BenchmarkCounts(b.name, unit(b), b.direction, by_bench[(b.name, "ok")],
                                       failed(by_bench, b.name), by_bench[(b.name, "retried")],
                                       by_bench[(b.name, SUPERSEDED)])
                       for b in stored if not benchmark or b.name == benchmark)
    latest = {}  # the latest build of each version, in the order versions were first built
    by_key: dict[tuple[str, str], BuildInfo] = {}  # the latest of each version and build command
    for build in store.builds():
        latest[build.version] = build
        by_key[(build.version, build.build_key)] = build
    variants = build_variants(store)
    build_status: dict[str, str] = {}
    failed_builds: list[FailedBuild] = []
    for name, build in latest.items():
        group = variants.get(build.build_key)
        if group is None:  # one build command: its latest build is the version's
            build_status[name] = build.status
            if build.status != "ok":
                failed_builds.append(FailedBuild(name, build.exit_code, build.log_tail or ""))
            continue
        # A screen's build variants: each is a build of its own, and one failing leaves the others' runs.
        built = [(by_key[(name, key)], flags) for key, flags in group.items() if (name, key) in by_key]
        bad = [(b, flags) for b, flags in built if b.status != "ok"]
        build_status[name] = (build.status if len(built) == 1 else "ok" if not bad
                              else f"{len(bad)} of {len(built)} variants failed" if len(bad) < len(built)
                              else f"all {len(built)} variants failed")
        failed_builds.extend(FailedBuild(name, b.exit_code, b.log_tail or "", flags) for b, flags in bad)
    invocations = Counter(r.version for r in {invocation_key(r): r for r in runs}.values())
    tags = {name: tuple(a.name for a in aliases if a.kind == "tag") for name, aliases in store.aliases().items()}
    versions = tuple(VersionCounts(v, build_status.get(v.name),
                                   by_version[(v.name, "ok")], failed(by_version, v.name), invocations[v.name],
                                   tags.get(v.name, ()), by_version[(v.name, "retried")],
                                   by_version[(v.name, SUPERSEDED)])
                     for v in store.versions() if not version or v.name == version)
    if version:  # one version's builds alone (a probe: `show --version main` named another's failed build)
        failed_builds = [b for b in failed_builds if b.version == version]
    return Inventory(store.shown_url, benchmarks, versions, tuple(failed_builds), tuple(runs),
                     retried & frozenset(r.id for r in runs))
