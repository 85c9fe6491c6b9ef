"""The detection driver: one detector over many series, with the false discovery rate controlled.

:func:`detect_changes` is the one entry point.  It reads series from a :class:`SeriesSource` (what
it needs of a results store; the store's ``Store`` is one, structurally, and this package never
imports the store) or takes series handed to it, runs one detector over them through the
:class:`~regbench.detect.base.Detector` contract only, and controls the false discovery rate once
over every hypothesis tested (:mod:`regbench.detect.fdr`).

Every way of running goes through one loop:

* the work is cut into :class:`Batch` es: ``batch`` benchmarks to load from the source at a time
  (memory stays bounded whatever the store's size), or series already at hand, each with the
  saved state it goes on from (None: a full pass);
* each batch gives a :class:`Tally` (changes, hypotheses tested, series, states to save): series
  with a state are checked incrementally, all at once (:meth:`Detector.check_new_many`), the
  others get a full pass (:meth:`Detector.detect_with_state`);
* the tallies of all batches are merged, in order, here or from ``jobs`` worker processes that
  open the source themselves (it pickles as a way to reopen it, when it is :attr:`shareable
  <SeriesSource.shareable>`), or from the workers of a :class:`BatchPool` (a Dask cluster's,
  :class:`regbench.run.dask_executor.DaskBatchPool`) that read the same shared store; only
  tallies travel back, and the output does not depend on timing or on where batches ran.

An incremental pass (``incremental=True``) plans differently and runs the same loop: series with
a state saved by an earlier pass with the same options load just their newer versions and go on
from it; series without one get a full pass once they have a new version, series whose *old*
versions got runs after their state was saved (:class:`ArrivalLog`) a full pass reporting what
is new from there, and a source without any saved state a full pass of everything.  :func:`save_detection_state` saves a result's states
for the next incremental pass.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError
from ..model import Series, VersionInfo
from . import zeros
from .base import Change, Detector, detector_class, get_detector
from .notes import SeriesNote, ends_at_zero, series_notes, zero_notes

#: Detection's default false discovery rate across series (Benjamini-Hochberg).
DEFAULT_FDR = 0.05

#: A series' identity: (benchmark, configuration, machine).
SeriesKey = tuple[str, str, str]

#: ``progress(done, total)``: called after each batch.
Progress = Callable[[int, int], None]

#: The key of a saved state that holds the source's run mark when its pass began
#: (:meth:`ArrivalLog.last_run_id`); the store keeps it in a column of its own
#: (``regbench.store.state.RUN_MARK``, the same name: this package does not import the store).
RUN_MARK = "run_mark"


# ------------------------------------------------------------------------------- what it reads
@runtime_checkable
class SeriesSource(Protocol):
    """What the driver reads from a results store (the store's ``Store`` is one).

    For ``jobs > 1`` a source must pickle as a way to open it again in another process, and say
    whether it can (:attr:`shareable`).
    """

    @property
    def shareable(self) -> bool:
        """Whether worker processes can open this source themselves (an in-memory database cannot)."""
        ...

    def load_series(self, benchmark: str | Iterable[str] | None = None, *, config: str | None = None,
                    machine: str | None = None, versions: Iterable[str] | None = None) -> list[Series]:
        """The series of these benchmarks (None: all) on this configuration and machine (None: all),
        with only these versions (None: all), each in history order; sorted by series key.
        Raises :class:`~regbench.errors.NotFoundError` for an unknown name."""
        ...

    def benchmark_names(self) -> list[str]:
        """Every benchmark's name, sorted."""
        ...

    def versions(self) -> list[VersionInfo]:
        """Every version, in history order."""
        ...

    def load_detection_states(self, method: str, options: str) -> dict[SeriesKey, dict]:
        """The states saved by :func:`save_detection_state` for ``method`` with these ``options``
        (:func:`options_key`), by series."""
        ...


@runtime_checkable
class ArrivalLog(Protocol):
    """What a source may also say (the store's ``Store`` and ``HistoryView`` do): which runs were
    stored after a mark, so that an incremental pass also checks again the series whose *old*
    versions got runs since its last pass (a CI job of an older commit that finished last, a
    re-measurement, a back-fill).  A source without it has incremental passes that look at new
    versions only."""

    def last_run_id(self) -> int:
        """A mark that every run stored after this call exceeds."""
        ...

    def runs_since(self, mark: int) -> Iterable[tuple[SeriesKey, str, int]]:
        """``(series key, version, newest run id)`` of the runs stored after ``mark``."""
        ...


class BatchPool(Protocol):
    """Somewhere else to run the batches (a Dask cluster's workers): ``fn(shared, item)`` for each
    item, results yielded in the order of ``items``.  ``shared`` goes to each worker once."""

    def map_ordered(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> Iterator[Any]:
        ...


class StateStore(Protocol):
    """Where :func:`save_detection_state` saves states (the store's ``Store`` is one)."""

    def save_detection_states(self, method: str, options: str, states: Iterable[tuple[SeriesKey, dict]]) -> int:
        """Replace the saved states of these series for ``method``; return how many were saved."""
        ...


# ------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class DetectionResult:
    """Changes found over many series, with what the false-discovery-rate control did.

    Attributes
    ----------
    method : str
        The detector.
    changes : tuple of Change
        The reported changes: those that survived the control, or all of them when ``fdr`` is
        None or the method gives no p-values.  Sorted by series (benchmark, configuration,
        machine), in history order within a series.
    dropped : tuple of Change
        The candidates the control removed.
    n_series : int
        Series examined (in an incremental pass: those with new versions, and those checked for
        the first time).
    n_tests : int
        Hypotheses tested across them (the family of the control).
    fdr : float or None
        The false discovery rate asked for.
    fdr_applied : bool
        Whether the control could apply (the method gives p-values).
    states : tuple of ((str, str, str), dict)
        ``(series key, state)`` to save for the next incremental pass (incremental detectors only).
    incremental : bool
        Whether this was an incremental pass.
    options : str
        The detector options the states depend on (:func:`options_key`).
    min_change : float
        The smallest relative change the detector reported (its own default when none was
        given): the threshold of ``regbench detect --confirm``.
    run_mark : int or None
        The source's run mark when the pass began (:class:`ArrivalLog`), None when the source
        cannot say.
    scope : Scope
        The series the pass covered.
    checked : tuple of ((str, str, str), str)
        In an incremental pass, the last version each series with a saved state had been
        checked up to before it (:meth:`checked_before`): a series searched again in full
        (late runs) reports its changes from the first late version on, and those at versions
        already checked may be steps told before.
    notes : tuple of SeriesNote
        The series searched in full that were not analysed, with the reason, and the
        throughputs that fell to exactly 0 at their newest versions (:mod:`regbench.detect.notes`).
    """

    method: str
    changes: tuple[Change, ...]
    dropped: tuple[Change, ...]
    n_series: int
    n_tests: int
    fdr: float | None
    fdr_applied: bool
    states: tuple[tuple[SeriesKey, dict], ...] = ()
    incremental: bool = False
    options: str = ""
    min_change: float = 0.0
    run_mark: int | None = None
    scope: Scope = field(default_factory=lambda: Scope())
    checked: tuple[tuple[SeriesKey, str], ...] = ()
    notes: tuple[SeriesNote, ...] = ()

    def checked_before(self, change: Change, position: Callable[[str], int]) -> bool:
        """Whether ``change`` lies among versions its series had been checked up to before this
        pass (``position`` ranks versions in history order): a step that may have been found and
        told before, reported again because late runs made its series be searched again."""
        last = dict(self.checked).get(_change_key(change))
        return last is not None and position(change.version) <= position(last)


@dataclass(frozen=True)
class Tally:
    """What detection found in some series; the tallies of disjoint series merge (:meth:`merge`).

    Attributes
    ----------
    changes : tuple of Change
        Before false-discovery-rate control.
    n_tests : int
        Hypotheses tested.
    n_series : int
        Series examined.
    states : tuple of ((str, str, str), dict)
        States to save, for the series whose detector gave one.
    notes : tuple of SeriesNote
        What the driver says of the series searched in full (:func:`~.notes.series_notes`).
    """

    changes: tuple[Change, ...] = ()
    n_tests: int = 0
    n_series: int = 0
    states: tuple[tuple[SeriesKey, dict], ...] = ()
    notes: tuple[SeriesNote, ...] = ()

    @classmethod
    def of(cls, series: Series, changes: Sequence[Change], n_tests: int, state: dict | None = None,
           notes: Sequence[SeriesNote] = ()) -> Tally:
        """The tally of one series."""
        return cls(tuple(changes), n_tests, 1, () if state is None else ((series_key(series), state),), tuple(notes))

    @classmethod
    def merge(cls, tallies: Iterable[Tally]) -> Tally:
        """The tallies added up, in order (one pass: no quadratic tuple building)."""
        changes: list[Change] = []
        states: list[tuple[SeriesKey, dict]] = []
        notes: list[SeriesNote] = []
        n_tests = n_series = 0
        for t in tallies:
            changes += t.changes
            states += t.states
            notes += t.notes
            n_tests += t.n_tests
            n_series += t.n_series
        return cls(tuple(changes), n_tests, n_series, tuple(states), tuple(notes))


@dataclass(frozen=True)
class Batch:
    """One unit of the driver's work.

    ``items`` are series at hand, each with the state to go on from (None: a full pass);
    ``names`` are benchmarks to load from the source for a full pass of each of their series in
    scope, except the series in ``skip``; of the series in ``since`` (``(key, version)``), the
    full pass reports only the changes at or after that version (an incremental pass searching
    again a series whose old versions got runs, :func:`_late_series`).
    """

    items: tuple[tuple[Series, dict | None], ...] = ()
    names: tuple[str, ...] = ()
    skip: frozenset[SeriesKey] = frozenset()
    since: tuple[tuple[SeriesKey, str], ...] = ()


@dataclass(frozen=True)
class Scope:
    """Which series a detection covers: one benchmark, configuration, machine, or all (None)."""

    benchmark: str | None = None
    config: str | None = None
    machine: str | None = None

    def covers(self, key: SeriesKey) -> bool:
        """Whether the series with this key is in scope."""
        return all(want is None or want == have for want, have in zip((self.benchmark, self.config, self.machine),
                                                                       key, strict=True))


def series_key(series: Series) -> SeriesKey:
    """(benchmark, configuration, machine): what identifies a series and its saved state."""
    return (series.benchmark, series.config, series.machine)


# ------------------------------------------------------------------------------------ options
def detector_options(min_change: float | None, confidence_level: float, options: dict) -> dict:
    """The keyword arguments of the detector: ``min_change`` None keeps the detector's default."""
    if min_change is not None:
        options = {**options, "min_change": min_change}
    return {**options, "confidence_level": confidence_level}


#: What the driver's own part of a saved state means (:mod:`regbench.detect.zeros`), part of the
#: key states are saved under, as a detector's :attr:`~regbench.detect.base.Detector.state_revision`
#: is.  2: a series is cut at its steps from and to exactly 0, and a state says where its last
#: stretch began; a state saved before was the detector's over the whole series, zeros included.
#: 3: a state holds the source's run mark of its pass (:data:`RUN_MARK`); a state saved before
#: cannot tell which runs of old versions came after it.
DRIVER_REVISION = 3


def options_key(method: str, min_change: float | None, confidence_level: float, options: dict) -> str:
    """The detector options a saved state depends on, the detector's state revision after the
    first (:attr:`~regbench.detect.base.Detector.state_revision`), the driver's
    (:data:`DRIVER_REVISION`) and the release of regbench that saved it, as a canonical string.

    The release is there because a release may change how a detector decides without changing
    what its state means (a new check, a default): states saved by another release are not used,
    so the first incremental pass after an upgrade is a full one and applies the new rules to the
    whole history, not only to the versions that arrive after it.  The revisions stay for changes
    between releases (and for a development install, whose release does not move)."""
    from .. import __version__

    revision = detector_class(method).state_revision
    key = {"method": method, **detector_options(min_change, confidence_level, options),
           "driver_revision": DRIVER_REVISION, "regbench": __version__}
    return json.dumps({**key, "state_revision": revision} if revision > 1 else key, sort_keys=True)


# -------------------------------------------------------------------------------- entry point
def detect_changes(source: SeriesSource | Iterable[Series], *, method: str = "auto", benchmark: str | None = None,
                   config: str | None = None, machine: str | None = None, min_change: float | None = None,
                   confidence_level: float = 0.99, fdr: float | None = DEFAULT_FDR, incremental: bool = False,
                   jobs: int = 1, batch: int = 50, progress: Progress | None = None, pool: BatchPool | None = None,
                   **options) -> DetectionResult:
    """Run one detector over many series and control the false discovery rate across them.

    Parameters
    ----------
    source : SeriesSource or iterable of Series
        A results store (every series, or those the filters select), or series at hand (those
        the filters select; such a source has no saved states and is never shared).
    method : str, keyword-only
        A registered detector (:func:`regbench.detect.available_methods`).
    benchmark, config, machine : str, optional, keyword-only
        Only this benchmark, configuration, machine.
    min_change : float, optional, keyword-only
        Smallest relative change to report; None keeps the detector's own default.
    confidence_level : float, keyword-only
        Of the changes' intervals.
    fdr : float or None, keyword-only
        With a method that gives p-values, Benjamini-Hochberg at this level runs over every
        hypothesis tested in every series (:func:`regbench.detect.fdr.control_fdr`); None
        reports every change the method finds.
    incremental : bool, keyword-only
        Check only the versions that arrived since each series' last saved state (see the module
        docstring).  A series whose versions at or before its last checked one got runs since
        (a back-filled or late old commit, a re-measurement) is searched again in full, and only
        the changes from the first such version on are reported, when the source can say what
        was stored since (:class:`ArrivalLog`; the store can).
    jobs : int, keyword-only
        Worker processes; each opens the source itself.  Used only when the source is shareable
        and there is more than one batch.
    batch : int, keyword-only
        Benchmarks (or series at hand) per unit of work.
    progress : callable, optional, keyword-only
        ``progress(done, total)`` after each batch.
    pool : BatchPool, optional, keyword-only
        Run the batches there instead (``jobs`` is then not used): its workers open the source
        themselves, so it must be shareable (a store every worker can reach: a PostgreSQL URL, or
        a SQLite file on a shared disk).  The result is the one of a local pass.
    **options
        More options of the detector.

    Returns
    -------
    DetectionResult

    Raises
    ------
    ConfigError
        An unknown method, ``incremental`` with a method that has no incremental mode, or a
        ``pool`` with a source its workers cannot open.
    NotFoundError
        A filter names something the source does not have.
    ValueError
        An invalid detector option, ``jobs`` or ``batch``.
    """
    for name, value in (("jobs", jobs), ("batch", batch)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer")
    detector = get_detector(method, **detector_options(min_change, confidence_level, options))  # validate first
    if incremental and not detector.incremental:
        raise ConfigError(f"method {method!r} has no incremental mode (auto has)")
    key = options_key(method, min_change, confidence_level, options)
    scope = Scope(benchmark, config, machine)
    reader: SeriesSource | None  # what the batches load from: None for series at hand
    mark = None
    checked: dict[SeriesKey, str] = {}
    if isinstance(source, SeriesSource):
        reader = source
        # Before anything is read: a run stored during the pass is after the mark, so the next
        # incremental pass looks at it.
        mark = source.last_run_id() if isinstance(source, ArrivalLog) else None
        planned = _incremental_plan(source, scope, method, key, batch) if incremental else None
        if planned is None:  # not incremental, or nothing checked before: a full pass
            batches = _full_plan(source, scope, batch)
        else:
            batches, checked = planned
    else:
        series = [s for s in source if scope.covers(series_key(s))]
        batches = [Batch(items=tuple((s, None) for s in series[i:i + batch])) for i in range(0, len(series), batch)]
        reader = None
    if pool is not None:
        if reader is not None and not reader.shareable and any(b.names for b in batches):
            raise ConfigError("the store cannot be opened by other processes (an in-memory database): "
                              "give workers a store they can reach, a PostgreSQL URL or a SQLite file on a shared disk")
        tallies = pool.map_ordered(_pool_batch, (detector, reader, scope), batches)
        tally = _accumulate(tallies, len(batches), progress)
    else:
        tally = _run(detector, batches, reader, scope, jobs=jobs, progress=progress)
    if mark is not None:
        tally = replace(tally, states=tuple((k, {**state, RUN_MARK: mark}) for k, state in tally.states))
    return replace(_finish(detector, tally, fdr, incremental=incremental, options=key), run_mark=mark, scope=scope,
                   checked=tuple(sorted(checked.items())))


def save_detection_state(target: StateStore, result: DetectionResult) -> int:
    """Save the states of a detection result for the next incremental pass; return how many."""
    if not result.states and not (result.incremental and result.run_mark is not None):
        return 0
    if not result.options:
        raise ValueError("`result` does not say which detector options its states depend on")
    n = target.save_detection_states(result.method, result.options, result.states) if result.states else 0
    advance = getattr(target, "advance_run_marks", None)
    if result.incremental and result.run_mark is not None and advance is not None:
        # The states of the series this pass examined for late runs and left alone (it found
        # none) are good up to its mark too.
        advance(result.method, result.options, result.run_mark, benchmark=result.scope.benchmark,
                config=result.scope.config, machine=result.scope.machine)
    return n


# ----------------------------------------------------------------------------------- planning
def _full_plan(source: SeriesSource, scope: Scope, batch: int) -> list[Batch]:
    names = [scope.benchmark] if scope.benchmark is not None else source.benchmark_names()
    return [Batch(names=tuple(names[i:i + batch])) for i in range(0, len(names), batch)]


def _incremental_plan(source: SeriesSource, scope: Scope, method: str, key: str, batch: int
                      ) -> tuple[list[Batch], dict[SeriesKey, str]] | None:
    """The batches of an incremental pass and the last version each series with a state had been
    checked up to, or None when nothing was checked before (a full pass)."""
    saved = {k: v for k, v in source.load_detection_states(method, key).items() if scope.covers(k)}
    if not saved:
        return None
    order = {v.name: k for k, v in enumerate(source.versions())}
    saved = {k: v for k, v in saved.items() if v["last_version"] in order}
    oldest = min((order[v["last_version"]] for v in saved.values()), default=-1)
    newer = [name for name, pos in order.items() if pos > oldest]
    late = _late_series(source, saved, order)
    tails: list[tuple[Series, dict | None]] = []
    fresh: set[str] = {key[0] for key in late}
    if newer:
        for s in source.load_series(scope.benchmark, config=scope.config, machine=scope.machine, versions=newer):
            state = saved.get(series_key(s))
            if state is None:
                fresh.add(s.benchmark)  # a series never checked: a full pass, as it has new data
                continue
            if series_key(s) in late:
                continue  # searched again in full
            tail = _after(s, order, order[state["last_version"]])
            if tail is not None:
                tails.append((tail, state))
    # Benchmarks never checked at all get a full pass whatever their versions (a benchmark added
    # with old versions only has nothing "newer" to load above).  A new configuration or machine
    # of a checked benchmark is found when it gets a new version.
    checked = {k[0] for k in saved}
    fresh |= {b for b in source.benchmark_names()
              if b not in checked and (scope.benchmark is None or b == scope.benchmark)}
    names = sorted(fresh)
    skip = frozenset(saved) - late.keys()
    since = tuple(sorted(late.items()))
    batches = ([Batch(items=tuple(tails))] if tails else []) + \
        [Batch(names=tuple(part), skip=skip, since=tuple((k, v) for k, v in since if k[0] in part))
         for part in (names[i:i + batch] for i in range(0, len(names), batch))]
    return batches, {k: state["last_version"] for k, state in saved.items()}


def _late_series(source: SeriesSource, saved: dict[SeriesKey, dict], order: dict[str, int]) -> dict[SeriesKey, str]:
    """The series with a saved state whose versions at or before its last checked one got runs
    after its pass, each with the first such version in history order.

    Such a series is searched again in full: the saved state is a summary of the segment that
    ends at the last checked version, which the new runs would change in the middle, and a
    change at the late version (a CI job of the commit before it that finished last) would
    otherwise be told at the commit after it, or not at all."""
    marks = [state[RUN_MARK] for state in saved.values() if isinstance(state.get(RUN_MARK), int)]
    if not marks or not isinstance(source, ArrivalLog):
        return {}
    late: dict[SeriesKey, str] = {}
    for key, version, newest in source.runs_since(min(marks)):
        state = saved.get(key)
        if state is None or version not in order or newest <= state.get(RUN_MARK, newest):
            continue
        if order[version] <= order[state["last_version"]] and (key not in late or order[version] < order[late[key]]):
            late[key] = version
    return late


def _after(s: Series, order: dict[str, int], last: int) -> Series | None:
    """The versions of ``s`` after history position ``last`` that have runs, or None."""
    keep = [j for j, v in enumerate(s.versions) if order[v.name] > last and s.runs[j]]
    if not keep:
        return None
    return Series(s.benchmark, s.config, s.machine, s.unit, s.direction, [s.versions[j] for j in keep],
                  [s.runs[j] for j in keep], [s.failed[j] for j in keep], [s.warmup[j] for j in keep])


# ---------------------------------------------------------------------------------- the loop
def _detect_batch(detector: Detector, batch: Batch, source: SeriesSource | None, scope: Scope) -> Tally:
    """The tally of one batch: series with a state checked incrementally (all at once), the others
    in a full pass."""
    items = list(batch.items)
    if batch.names:
        # Batches that name benchmarks come only from the plans made from a source (_full_plan,
        # _incremental_plan); series at hand make batches of items only.
        assert source is not None
        loaded = source.load_series(list(batch.names), config=scope.config, machine=scope.machine)
        items += [(s, None) for s in loaded if series_key(s) not in batch.skip]
    since = dict(batch.since)
    pending = [(state, s) for s, state in items if state is not None]
    # A series with runs exactly 0 at its end or in its new versions is searched again in full,
    # and reports only what is new (regbench.detect.zeros): its steps from and to 0 are found
    # over the whole history.  Those pending only come from a source (_incremental_plan).
    whole_again = [zeros.needs_full_pass(state, s) for state, s in pending]
    again = [item for item, full in zip(pending, whole_again, strict=True) if full]
    going_on = [item for item, full in zip(pending, whole_again, strict=True) if not full]
    checked = detector.check_new_many([(zeros.detector_state(state), s) for state, s in going_on]) if going_on else []
    # A detector may find that a check needs the whole history after all (``auto``: a change at a
    # version timed by one run, which only the history tells from interference): such series are
    # searched again in full below, and report what is new.
    redo = [detector.full_pass_needed(zeros.detector_state(saved), s, changes, zeros.detector_state(new))
            for (saved, s), (changes, _, new) in zip(going_on, checked, strict=True)]
    # What such a pass reports: the changes after the version through which the passes before
    # reported every change (``Detector.reported_through``): the checks may have let the first
    # versions of a step into their segment unreported, and the full pass finds it there.
    again += [({**saved, "last_version": detector.reported_through(zeros.detector_state(saved))}, s)
              for (saved, s), full in zip(going_on, redo, strict=True) if full]
    going_on = [item for item, full in zip(going_on, redo, strict=True) if not full]
    checked = [result for result, full in zip(checked, redo, strict=True) if not full]
    parts = [Tally.of(s, changes, n_tests, zeros.keep_key(saved, new))
             for (saved, s), (changes, n_tests, new) in zip(going_on, checked, strict=True)]
    # A throughput whose new versions end at 0: its history says whether it fell there (notes).
    ending = {series_key(s): changes for (_, s), (changes, _, _) in zip(going_on, checked, strict=True)
              if ends_at_zero(s)}
    if ending and source is not None:
        for full in source.load_series(sorted({key[0] for key in ending}), config=scope.config, machine=scope.machine):
            if series_key(full) in ending:
                parts.append(Tally(notes=tuple(zero_notes(full, ending[series_key(full)]))))
    if again:
        assert source is not None
        wanted = {series_key(s) for _, s in again}
        whole = {series_key(s): s for s in source.load_series(sorted({s.benchmark for _, s in again}),
                                                             config=scope.config, machine=scope.machine)
                 if series_key(s) in wanted}
        for state, tail in again:
            full = whole[series_key(tail)]
            changes, n_tests, new, zero = zeros.detect_series_steps(detector, full)
            parts.append(Tally.of(full, zeros.new_since(changes, full, state), n_tests, new,
                                  series_notes(detector, full, changes, n_tests, new, zero)))
    for s, going_from in items:
        if going_from is None:
            found, n_found, made, zero = zeros.detect_series_steps(detector, s)
            notes = series_notes(detector, s, found, n_found, made, zero)
            if series_key(s) in since:
                first = s.index(since[series_key(s)])
                found = [c for c in found if s.index(c.version) >= first]
            parts.append(Tally.of(s, found, n_found, made, notes))
    return Tally.merge(parts)


def _run(detector: Detector, batches: list[Batch], source: SeriesSource | None, scope: Scope, *, jobs: int,
         progress: Progress | None) -> Tally:
    """Every batch's tally, merged in order: here, or in worker processes."""
    if jobs > 1 and len(batches) > 1 and source is not None and source.shareable:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn: no fork of a process that may run a progress-bar thread or hold database connections.
        with ProcessPoolExecutor(min(jobs, len(batches)), mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_init_worker, initargs=(source, detector, scope)) as pool:
            futures = [pool.submit(_worker_batch, b) for b in batches]
            # In submission order: the output does not depend on timing.
            return _accumulate((f.result() for f in futures), len(batches), progress)
    return _accumulate((_detect_batch(detector, b, source, scope) for b in batches), len(batches), progress)


def _accumulate(tallies: Iterable[Tally], total: int, progress: Progress | None) -> Tally:
    parts = []
    for k, tally in enumerate(tallies):
        parts.append(tally)
        if progress:
            progress(k + 1, total)
    return Tally.merge(parts)


def _finish(detector: Detector, tally: Tally, fdr: float | None, *, incremental: bool, options: str
            ) -> DetectionResult:
    from .fdr import control_fdr

    changes = sorted(tally.changes, key=_change_key)
    notes = tuple(sorted(tally.notes, key=lambda n: (n.benchmark, n.config, n.machine)))
    if fdr is None:
        return DetectionResult(detector.name, tuple(changes), (), tally.n_series, tally.n_tests, None, False,
                               states=tally.states, incremental=incremental, options=options,
                               min_change=float(detector.min_change), notes=notes)
    res = control_fdr(changes, tally.n_tests, q=fdr)
    return DetectionResult(detector.name, res.kept, res.dropped, tally.n_series, res.n_tests, fdr,
                           res.applicable or detector.p_values, states=tally.states, incremental=incremental,
                           options=options, min_change=float(detector.min_change), notes=notes)


def _change_key(c: Change) -> SeriesKey:
    return (c.benchmark, c.config, c.machine)


# ------------------------------------------------------------------------------- worker side
_WORKER: tuple[SeriesSource, Detector, Scope] | None = None


def _init_worker(source: SeriesSource, detector: Detector, scope: Scope) -> None:
    """Runs once in each worker process: the source arrives pickled, that is, opened again here."""
    global _WORKER
    _WORKER = (source, detector, scope)


def _pool_batch(shared: tuple[Detector, SeriesSource | None, Scope], batch: Batch) -> Tally:
    # Runs on a pool's worker (BatchPool): ``shared`` arrived once per worker.
    detector, source, scope = shared
    return _detect_batch(detector, batch, source, scope)


def _worker_batch(batch: Batch) -> Tally:
    # Runs only in a worker process, whose pool initializer (_init_worker) set _WORKER first.
    assert _WORKER is not None
    source, detector, scope = _WORKER
    return _detect_batch(detector, batch, source, scope)


__all__ = ["DEFAULT_FDR", "BatchPool", "DetectionResult", "SeriesSource", "StateStore", "Tally", "detect_changes", "options_key",
           "save_detection_state"]
