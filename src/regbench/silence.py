"""What stopped measuring while the rest went on, told apart from what is merely slow to report.

A failing series (benchmark x configuration x machine) whose failed runs are the newest it has
gates ``regbench detect`` until something shows it no longer runs.  When its *benchmark* leaves
the suite, a later measurement of the rest shows it (:func:`regbench.inventory.no_longer_run`).
When its *machine* is retired, or its *configuration* removed, nothing is ever measured there
again, so nothing there can show it: only the silence of that place while the others go on.

Silence alone does not tell a retired machine from a slow one: a nightly machine is a day of
commits behind the machines that measure every commit; one that measures every new commit in a
nightly batch is as far behind, just before its batch; a job queued behind others stores its
runs after those of later versions.  What tells them apart is how far behind the place has
been before while it kept reporting.  Runs are numbered in the order the store receives them
(:meth:`regbench.store.Store.last_run_id`), so the store says, just before each time a place
stored runs, how many versions of the history after the newest one it had measured the others
had already measured: its *lead* then (:func:`longest_lead`, the largest, ``S``).  A place
whose newest version of the history is ``L`` (the failing series' newest, or a later one) counts
as gone once the others measured ``max(after, lag_factor x S)`` versions after ``L``
(:meth:`Retirement.needed`): by default three times further behind than it ever was while it
still reported, and never fewer than 20 versions (``retire_lag_factor`` and ``retire_after`` of
the ``[detect]`` table of ``regbench.toml``, :class:`Retirement`).

- A *machine* is retired (:func:`retired`) when it stored no run at all (any benchmark,
  configuration, status or campaign, sessions included) at any version of the history after
  ``L``, and other machines measured the versions needed (each by a finished campaign or an
  import; sessions and campaigns still running or interrupted are not counted).
- A *configuration* on a machine is retired when the machine stored no run of it at any
  version after ``L`` (the newest where it stored one) but measured the versions needed in its
  other configurations.
- Failing benchmarks that ran beside each other and stop together (no suite recorded: imports
  and submissions) are no longer run once the rest of what ran beside them ran without them at
  the versions needed, each one a complete measurement of that rest
  (:func:`regbench.inventory.no_longer_run`, which asks :func:`group_lead`).  One such
  measurement is not enough: failures cluster (the benchmarks of one broken module) and so do
  selections (``go test -bench=Render`` while the parser's benchmarks are broken).

Its lead is measured over every run the place stored, at any version (a back-fill of old
versions, a session of a branch's commits): a place that stores anything at all while the others
are ``L`` versions ahead is not counted gone before they are ``lag_factor x L`` ahead.  A place
that comes back (stores runs at a later version) is no longer silent: its failing benchmark,
failing at the newest version it ran at, fails again until something shows it no longer runs,
whether it ran there again or not (:mod:`regbench.detect.alerts` reopens its alert, saying
which).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .model import Failing, NoLongerRun, RunSpan
from .store import Store

if TYPE_CHECKING:
    from .config import ProjectConfig

#: The fewest later versions the others must measure before a place that stored nothing after
#: its newest counts as gone, by default (``[detect] retire_after``): about a day of commits of a
#: busy project, so that a machine that is down for maintenance or behind a queue is not retired
#: by it.
MIN_VERSIONS = 20
#: How many times further behind than it ever was while still reporting a place must fall, by
#: default (``[detect] retire_lag_factor``).
LEAD_FACTOR = 3


@dataclass(frozen=True)
class Retirement:
    """When a silent place counts as gone: the ``retire_after`` and ``retire_lag_factor`` keys of
    the ``[detect]`` table of ``regbench.toml`` (:meth:`of`).

    Attributes
    ----------
    after : int
        The fewest versions after a place's newest that the others must measure (at least 1).
    lag_factor : float
        How many times its :func:`longest_lead` they must measure, if that is more (at least 1).

    Raises
    ------
    ValueError
        ``after`` is not an integer >= 1, or ``lag_factor`` not a finite number >= 1.
    """

    after: int = MIN_VERSIONS
    lag_factor: float = float(LEAD_FACTOR)

    def __post_init__(self) -> None:
        if isinstance(self.after, bool) or not isinstance(self.after, int) or self.after < 1:
            raise ValueError(f"`after` must be an integer >= 1, got {self.after!r}")
        factor = self.lag_factor
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not 1 <= factor < math.inf:
            raise ValueError(f"`lag_factor` must be a number >= 1, got {factor!r}")

    @classmethod
    def of(cls, config: ProjectConfig | None) -> Retirement:
        """The settings of a project's ``[detect]`` table (the defaults without a configuration)."""
        if config is None:
            return cls()
        return cls(config.detect.retire_after, config.detect.retire_lag_factor)

    def needed(self, lead: int) -> int:
        """How many versions the others must measure after a place's newest before it counts as
        gone: ``max(after, ceil(lag_factor * lead))``, ``lead`` being its :func:`longest_lead`."""
        if lead < 0:
            raise ValueError(f"`lead` must be >= 0, got {lead}")
        # Rounded first, so that 1.1 x 10 asks 11 versions, not 12 (11.000000000000002).
        return max(self.after, math.ceil(round(self.lag_factor * lead, 9)))


def silence_needed(lead: int, retirement: Retirement | None = None) -> int:
    """:meth:`Retirement.needed` of ``retirement`` (by default ``max(MIN_VERSIONS, LEAD_FACTOR *
    lead)``)."""
    return (retirement or Retirement()).needed(lead)


def longest_lead(own: Iterable[tuple[int, int | None]], others: Iterable[tuple[int, int]]) -> int:
    """The most versions the others had measured beyond a place's newest, just before it stored
    runs again.

    Parameters
    ----------
    own : iterable of (int, int or None)
        Each time the place stored runs: a run's id (the store's order) and the rank in the
        history of its version (None: a version off the history, which proves the place alive
        without moving its newest version).
    others : iterable of (int, int)
        For each version of the history: the id of the first run stored at it by anyone (the
        place's own included: a version the place stored before a run is not beyond its newest
        then) and its rank.

    Returns
    -------
    int
        Over the place's runs after its first at a version of the history: how many versions
        ranked after the newest it had stored then had a run stored before it (0 when it never
        stored two such runs).
    """
    events = sorted(own)
    firsts = sorted(others)
    size = 1 + max((r for _, r in firsts), default=0)
    tree = [0] * (size + 1)  # a Fenwick tree of the ranks stored so far: a count up to a rank in log time

    def stored_up_to(rank: int) -> int:
        total, i = 0, min(rank, size - 1) + 1
        while i > 0:
            total, i = total + tree[i], i - (i & -i)
        return total

    k, newest, lead = 0, None, 0
    for ident, rank in events:
        while k < len(firsts) and firsts[k][0] < ident:
            i = firsts[k][1] + 1
            while i <= size:
                tree[i] += 1
                i += i & -i
            k += 1
        if newest is not None:
            lead = max(lead, k - stored_up_to(newest))
        if rank is not None:
            newest = rank if newest is None else max(newest, rank)
    return lead


def _events(spans: Iterable[RunSpan], rank: Mapping[str, int]) -> list[tuple[int, int | None]]:
    """The first and last run of each span, with its version's rank (None off the history)."""
    return [(ident, rank.get(s.version)) for s in spans for ident in {s.first, s.last}]


def _firsts(spans: Iterable[RunSpan], rank: Mapping[str, int]) -> list[tuple[int, int]]:
    """Per version of the history, the first run of the spans, with its rank."""
    first: dict[str, int] = {}
    for s in spans:
        if s.version in rank:
            first[s.version] = min(first.get(s.version, s.first), s.first)
    return [(i, rank[v]) for v, i in first.items()]


def group_lead(store: Store, config: str, machine: str, benchmarks: Iterable[str],
               rank: Mapping[str, int]) -> int:
    """:func:`longest_lead` of the series of ``benchmarks`` on ``config`` and ``machine``, against
    everything else stored there: how far behind the rest of its suite a group of benchmarks was,
    before it stored runs again (a job of its own, slower than the others)."""
    own = store.run_spans(machine, config=config, benchmarks=benchmarks)
    return longest_lead(_events(own, rank), _firsts(store.run_spans(machine, config=config), rank))


def spans_of(store: Store, machine: str, cache: dict[str, list[RunSpan]] | None = None) -> list[RunSpan]:
    """:meth:`Store.run_spans` of ``machine``, kept in ``cache`` (by machine) when given: one
    detection asks for each machine once."""
    if cache is None:
        return store.run_spans(machine)
    if machine not in cache:
        cache[machine] = store.run_spans(machine)
    return cache[machine]


def _growing(items: Sequence[str], first: int) -> Iterable[Sequence[str]]:
    """``items`` in slices of ``first`` (500 at most), eight times as many, then 500: the
    versions after a failing one that :func:`retired` asks the store about at a time (the first
    slice holds what :attr:`Retirement.after` needs, up to 500)."""
    start, size = 0, min(first, 500)
    while start < len(items):
        yield items[start:start + size]
        start, size = start + size, min(size * 8, 500)


@dataclass(frozen=True)
class Silence:
    """A place that stored nothing after its newest version of the history, and how long the
    others measured on without it (:func:`place_silence`).

    Attributes
    ----------
    last : str
        The newest version of the history where the place stored any run.
    lead : int
        Its :func:`longest_lead`: how far behind it was before it stored runs again.
    measured : int
        How many versions after ``last`` the others measured, counted up to
        :meth:`Retirement.needed` of ``lead`` at most.
    by : str or None
        The version where ``measured`` reached :meth:`Retirement.needed` of ``lead``: where the
        place counts as gone; None while it does not.
    """

    last: str
    lead: int
    measured: int
    by: str | None

    @property
    def gone(self) -> bool:
        return self.by is not None


def place_silence(last: str, own: Sequence[RunSpan], versions: Sequence[str], rank: Mapping[str, int], *,
                  measured_elsewhere: Callable[[Sequence[str]], Sequence[bool]],
                  others: Callable[[], Iterable[tuple[int, int]]],
                  retirement: Retirement = Retirement()) -> Silence:
    """How long the others measured on after a place's newest version ``last``, against how far
    behind it used to be.

    Parameters
    ----------
    last : str
        The newest version of the history (``versions``, ranked by ``rank``) where the place
        stored anything.
    own : sequence of RunSpan
        When the place stored runs, at any version.
    measured_elsewhere : callable
        For versions after ``last``, in order: whether the others measured each completely.
    others : callable
        The ``others`` of :func:`longest_lead`, asked only once the others measured
        :attr:`Retirement.after` versions after ``last``.
    retirement : Retirement
        How many versions they must measure (:meth:`Retirement.needed`).
    """
    count, needed, lead = 0, retirement.after, 0
    for chunk in _growing(versions[rank[last] + 1:], retirement.after):
        for v, counted in zip(chunk, measured_elsewhere(chunk)):
            if not counted:
                continue
            count += 1
            if count == retirement.after:  # enough to be worth asking how far behind it used to be
                lead = longest_lead(_events(own, rank), others())
                needed = retirement.needed(lead)
            if count >= needed:
                return Silence(last, lead, count, v)
    return Silence(last, lead, count, None)


def retired(store: Store, failing: Sequence[Failing], versions: Sequence[str],
            excluded: frozenset[int] = frozenset(), spans: dict[str, list[RunSpan]] | None = None, *,
            retirement: Retirement = Retirement()) -> dict[tuple[str, str, str], NoLongerRun]:
    """Which of the ``failing`` series are on a retired machine, or in a retired configuration
    of their machine (the module docstring says when), by series.

    A machine is silent since the newest version of the history where it stored any run (the
    failing series' newest version, or a later one); a configuration on it, since the newest
    where it stored a run of that configuration.  ``versions`` is the history, in order;
    ``excluded`` campaigns (sessions, when the history leaves them out) measure nothing for the
    others, but a place that ran them stored runs.  ``spans`` keeps what each machine stored
    (:func:`spans_of`) across calls; ``retirement`` says how many versions the others must
    measure (:meth:`Retirement.needed`).

    Reads, for a machine with a failing series and :attr:`Retirement.after` versions after it in
    the history, when it stored what (:meth:`Store.run_spans`); then where the versions after its
    newest were measured, as many as needed (:meth:`Store.measured_where`); then, only when the
    others measured :attr:`Retirement.after` of them, when each version was first measured
    (:meth:`Store.first_runs`), for its lead.  Each machine and configuration once.
    """
    rank = {v: k for k, v in enumerate(versions)}
    candidates = [f for f in failing
                  if f.version in rank and len(versions) - 1 - rank[f.version] >= retirement.after]
    if not candidates:
        return {}
    by_id = {c.id: c for c in store.campaigns()}
    complete = {None} | {i for i, c in by_id.items() if c.status == "finished" and i not in excluded}
    spans = {} if spans is None else spans
    where: dict[str, set[tuple[str, str, int | None]]] = {}
    firsts: list[tuple[int, int]] = []

    def places(chunk: Sequence[str]) -> list[set[tuple[str, str, int | None]]]:
        missing = [v for v in chunk if v not in where]
        if missing:
            found = store.measured_where(missing)
            where.update({v: found.get(v, set()) for v in missing})
        return [where[v] for v in chunk]

    def all_firsts() -> list[tuple[int, int]]:
        if not firsts:
            firsts.extend((i, rank[v]) for v, i in store.first_runs().items() if v in rank)
        return firsts

    def machine(name: str) -> Silence:
        mine = spans_of(store, name, spans)
        last = max((s.version for s in mine if s.version in rank), key=rank.__getitem__)
        return place_silence(last, mine, versions, rank, others=all_firsts, retirement=retirement,
                             measured_elsewhere=lambda chunk: [
                                 any(m != name and c in complete for _, m, c in found) for found in places(chunk)])

    def configuration(config: str, name: str) -> Silence:
        mine = spans_of(store, name, spans)
        own = [s for s in mine if s.config == config]
        last = max((s.version for s in own if s.version in rank), key=rank.__getitem__)
        return place_silence(last, own, versions, rank, others=lambda: _firsts(mine, rank), retirement=retirement,
                             measured_elsewhere=lambda chunk: [
                                 any(m == name and cfg != config and c in complete for cfg, m, c in found)
                                 for found in places(chunk)])

    silent: dict[tuple[str, ...], Silence] = {}
    out: dict[tuple[str, str, str], NoLongerRun] = {}
    for f in candidates:
        if (f.machine,) not in silent:
            silent[f.machine,] = machine(f.machine)
        found, place = silent[f.machine,], "machine"
        if not found.gone:
            if (f.config, f.machine) not in silent:
                silent[f.config, f.machine] = configuration(f.config, f.machine)
            found, place = silent[f.config, f.machine], "configuration"
        if found.by is not None:
            out[f.series] = NoLongerRun(f.benchmark, f.config, f.machine, f.version, found.by, retired=place,
                                        measured=found.measured, lead=found.lead, last=found.last)
    return out
