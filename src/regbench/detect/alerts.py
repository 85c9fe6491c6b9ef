"""From changes to alerts: told once, with a lifecycle (seed 001 fig. 1, the notification repository).

Detection may run again and again over a growing history, with several methods and overlapping
windows; people must hear about each performance change once.  :func:`record_alerts` turns the
:class:`~regbench.detect.Change` objects of a detection into alerts in the store, in one
transaction, by these rules:

**Same step** (de-duplication).  The *candidate versions* of a change are those after
``previous`` up to and including ``version`` in history order (one version for consecutive
versions; more when a series skips versions).  A change is the same step as a stored alert when
they belong to the same series (benchmark, configuration, machine), have the same kind, and
their candidate versions overlap, or are adjacent in history (at most :data:`SPAN_TOLERANCE`
version apart) and the change comes from a method that is not already among the alert's (two
methods that place one step one version apart agree; one method that reports two adjacent
versions saw two steps, such as +10% in one commit and another +10% in the next).  Alerts of every status
match, so a re-run never resurrects an alert that was marked invalid.  The alert keeps its
``version``/``previous`` as first recorded (notifications already sent name them), unless the
change's candidate versions are fewer and all among the alert's and it is placed at a version the
store first saw after the alert's two (a CI job of an older commit that finished last, a
back-fill): then the alert is placed where the change is, with its numbers, and its history says
from where; the change's
method is added to ``methods``, and the narrower interval wins (``change``, ``ci_low``,
``ci_high``, ``p_value`` and ``until`` are replaced together, so they always come from one method:
a creep's total never reads as one commit's).  A creep (:attr:`~regbench.detect.Change.until`) is
keyed like any change, by ``version`` and ``previous``: its span is what its alert says, not
what makes it the same step.  When a
change matches several alerts the one it overlaps most is taken.  A change that matches nothing
creates a ``new`` alert; re-running the same detection writes nothing at all.

**Across machines.**  Benchmarks run on many machines, and a change seen on one machine only is
often the machine (a kernel upgrade, another CPU model), where one seen on several is the code:
hardware, kernel and layout are external factors of every result (Larres et al. 2013, s.3).
A change that is not the same step as an alert of its own series is *evidence* of an alert of
another machine when they have the same benchmark, configuration and kind and its candidate
versions overlap those of a machine that already shows that alert (:func:`span_gap` <= 0: not
merely adjacent, as machines measure different versions); the nearest such alert wins, then the
oldest.  The machine's change, interval, p-value, versions and methods are kept as that alert's
evidence (:class:`~regbench.model.MachineEvidence`, in :attr:`~regbench.model.Alert.also_on`),
with a creep's span there (``until``), merged afterwards like the alert's own (methods added, the
narrower interval wins, and its ``until`` with it).  So one change on three machines is one alert
with three machines, whether the machines were seen in one detection or in several, and a
triaged alert stays as triaged (its history says which machine was added).  Whenever detection records a change into an alert, the alert's other machines are
brought up to date from what each machine measured (a :class:`Coverage`: the history's runs):
a machine *measured the step* when it has a version at or before the alert's ``previous`` and
one at or after its ``version``, so that a step there would show between two of its versions;
those that measured it without showing it are :attr:`~regbench.model.Alert.unchanged_on`.  An
alert seen on one machine is then ``machine-specific`` when another machine measured the step,
and ``single`` (no other machine measured it) otherwise (:attr:`~regbench.model.Alert.spread`).

**Held.**  ``[alerts] require_machines = k`` (default 1: every change is told) holds a new alert
seen on fewer than ``k`` machines: it is stored, listed (``regbench alerts list``, ``regbench
detect``) and de-duplicated as any other, but not notified (:func:`regbench.store.alerts.due_alerts`).
When later evidence brings it to ``k`` machines it is *raised*: an event in its history, and the
next notify tells it.  Only a new alert is held, and a raised alert is never held again (a
setting raised later does not take back what was told); a setting lowered later raises the held
alerts that detection records again (every one, in a full pass).  ``k`` counts machines that
showed the change, so a benchmark measured on fewer than ``k`` machines is never told (its held
alerts say so).

**Fixed.**  When an improvement is recorded as a new alert and an earlier *open* regression
alert (``new`` or ``acknowledged``) of the same series has its step before it, the improvement
restores that alert when ``|(1 + a)(1 + b) - 1| <= max(1%, |a| / 2)``, where ``a`` is the
alert's relative change and ``b`` the new change's: the level is back within half the original
change (and never asked closer than 1%, the noise floor of most benchmarks).  The latest such
alert becomes ``fixed``, with ``fixed_by`` = the restoring version and ``fixed_by_alert`` = the
restoring alert (an alert's series is its first machine's: across machines, an improvement
restores the regressions whose first machine is its own).  The restoring change is itself
recorded as an alert (an improvement is worth telling, like Perfherder's improvement alerts),
whose history says which alert it restored.
Only regressions are fixed: an improvement undone by a later regression is told by that
regression's own alert.
Fixing happens once, when the restoring step is first recorded: re-running detection, or a person
reopening the alert, never fixes it again.  Changes are processed in history order, so a
regression and its fix found by one detection come out right: the regression is created, then
fixed by the improvement.  It is still told (:func:`regbench.store.alerts.due_alerts`: an alert
fixed before it was told goes out before the alert that fixed it, saying it was already undone).

**Suppressed.**  Changes of a benchmark with ``alerts = false`` in its ``[[benchmark]]`` table,
or whose name matches a glob of ``[alerts] suppress`` in ``regbench.toml``, are counted in
:attr:`AlertOutcome.suppressed` and not stored (nor fix anything); nor do they gate
(:attr:`regbench.pipeline.DetectOutcome.regressed`).

**Confirmed.**  ``regbench detect --confirm`` runs the two versions of each change that would
create a new alert (:func:`known_alerts` tells which) again, interleaved, before recording
(:mod:`regbench.run.confirm`); :func:`record_alerts` is handed what it found, by step.  A change
that was refuted, or that the budget left unsettled, is *withheld*: not an alert, its
confirmation stored alone (so the store says why nobody was told).  A confirmed change, or one
that could not be run again here, becomes an alert as usual and keeps its confirmation.

**Failures.**  A benchmark that measured fine and then fails at every run from some version on (a
crash, a timeout, an exception its harness reports, a build that breaks only it) has no samples
there: no detector sees it.  :func:`record_alerts` is handed what the failed runs say (a
:class:`~regbench.model.FailureScan`, :func:`regbench.inventory.scan_failures`) and applies the
same rules to it, with kind ``failure``: a series failing at the newest version it ran at (every
run failed, and an earlier version had a successful one) is an alert at ``version`` = the first
version of its failing stretch and ``previous`` = the last version with a successful run, with
the error of its runs (one line) and no change, interval, p-value or method.  A series that never
succeeded (every run failed, at every version it ran at: a benchmark broken from its first run,
:attr:`~regbench.model.FailureScan.never_succeeded`) is a failure alert too, at ``version`` = the
first version it ran at, with ``previous`` = ``version`` (no version before it worked:
:attr:`~regbench.model.Alert.never_succeeded`) and a history that says it never succeeded; its
candidate versions are every version up to ``version``; it is fixed as any other (one no longer
run is in :attr:`~regbench.model.FailureScan.never_succeeded_gone`).  It is the same
alert as a stored failure alert of its series whose candidate versions overlap its own (a stretch
that grew, or that starts earlier now that a version between was run: one breakage); alerts of
every status match, so a failure marked ``invalid`` is not brought back, and re-running detection
writes nothing.  A stretch after a version with successful runs is another breakage, another
alert.  An open failure alert (``new`` or ``acknowledged``) becomes ``fixed`` when its series has
a successful run at its ``version`` or later (run again with success, or a later version that
runs), with ``fixed_by`` = the first such version and no ``fixed_by_alert`` (no change restored
it); or when its series is *no longer run* (removed from the suite, or renamed: a later version
was measured completely without it, :func:`regbench.inventory.no_longer_run`; or its machine or
configuration retired: nothing stored there since while the others measured on,
:func:`regbench.silence.retired`), with neither (no version fixed it;
:attr:`~regbench.model.Alert.no_longer_run`), the reason in its history.  A person who takes it
out of ``fixed`` keeps it so: detection does not fix it again.  An alert fixed because its
series was no longer run is reopened (``new``, by detection) when the series fails at the newest
version it ran at again: the same breakage, told already, failing (and gating) again.  Its
history says why (:meth:`Transaction.stored_since`): the series runs again, or its retired
machine or configuration came back and stored runs of others since the series last ran, and
nothing shows yet that it is no longer run.  A failure is seen on its
own machine: it is not evidence of another machine's alert, has no unchanged machines and is
never held by ``require_machines`` (a benchmark that no longer runs is told at once).  Suppressed
benchmarks' failures are counted in :attr:`AlertOutcome.suppressed_failures`, neither stored nor
fixed.

**Lifecycle** (:func:`set_status`): an alert is ``new`` when created; a person may set any alert
to ``acknowledged``, ``invalid`` (noise, a broken benchmark), ``expected`` (an intended slowdown,
seed 004 s.5: "a confirmation mechanism can be used to ignore or overwrite detected performance
drops if ... the change ... was expected") or back to ``new`` (reopen), with who, when and why;
setting the status it already has is an error, and ``fixed`` is set by detection only.  Every
step is an event in the alert's history.  What detection learns of an alert without changing its
status (another machine's evidence, ``evidence from b: ...``; another method; a narrower
interval; machines measured without it; held or raised) is an event too, written with the status
the alert has: a *note*, which :func:`regbench.store.alerts.alert_history` tells from a status
change (:data:`regbench.store.alerts.EVENT_KINDS`).

**Where alerts are kept.**  The rules read and write through two small protocols declared here:
:class:`Transaction` (the alert tables inside one transaction) and :class:`AlertRepository` (how
to run work in one, retried on a conflict).  The results store's ``Store`` is a repository and
its ``alerts`` module implements both, so this module never imports the store; callers pass the
store: ``record_alerts(store, changes)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol, TypeVar, runtime_checkable

from ..errors import AlertError, ConfigError, NotFoundError
from ..model import (CHANGE_KINDS, FAILURE_KIND, OPEN_ALERT_STATUSES, SYSTEM_ACTOR, TRIAGE_STATUSES, Alert,
                     Confirmation, Failing, FailureScan, MachineEvidence, NoLongerRun, as_utc)
from .base import Change

#: Candidate versions at most this many versions apart are the same step.
SPAN_TOLERANCE = 1
#: The smallest tolerance of "performance is restored" (relative level).
FIX_FLOOR = 0.01

R = TypeVar("R")


# --------------------------------------------------------------------- where alerts are kept
class Transaction(Protocol):
    """The alert tables inside one open transaction: all the rules below read and write.

    The store's ``AlertTransaction`` is one.  Every method raises
    :class:`~regbench.errors.NotFoundError` for a benchmark, configuration, machine or version
    that is not in the store.
    """

    def position(self, version: str) -> int:
        """The version's position in history order."""
        ...

    def stored_order(self, benchmark: str, config: str, machine: str, version: str) -> int:
        """A number that orders the versions of a series by when the store first had a run of
        the series there."""
        ...

    def stored_since(self, benchmark: str, config: str, machine: str) -> str | None:
        """The version of the newest run the series' machine stored after the series' own newest
        (in the order the store received them), leaving out that run's campaign (its own job's
        others; for an imported run, runs at its version): what its machine measured since it
        last ran; None when nothing."""
        ...

    def ran_after(self, benchmark: str, config: str, machine: str, when: datetime) -> bool:
        """Whether the series' newest run is of a campaign started after ``when`` (UTC, naive);
        False where its runs came without a campaign."""
        ...

    def series_alerts(self, benchmark: str, config: str, machine: str) -> list[Alert]:
        """Every alert of one series (any status), oldest first."""
        ...

    def config_alerts(self, benchmark: str, config: str) -> list[Alert]:
        """Every alert of one benchmark and configuration, on any machine (any status), oldest first."""
        ...

    def alerts(self, ids: Sequence[int]) -> list[Alert]:
        """The alerts with these ids, as they are now."""
        ...

    def set_machine(self, alert_id: int, machine: str, evidence: MachineEvidence | None, *, now: datetime) -> None:
        """Record another machine of an alert: its evidence, or (None) that it measured the step
        without showing it; replaces what was recorded of that machine."""
        ...

    def drop_machine(self, alert_id: int, machine: str, *, now: datetime) -> None:
        """Forget what was recorded of one other machine of an alert."""
        ...

    def create(self, *, benchmark: str, config: str, machine: str, version: str, previous: str, kind: str,
               change: float | None, ci_low: float | None, ci_high: float | None, p_value: float | None,
               methods: Sequence[str], now: datetime, why: str, error: str | None = None,
               until: str | None = None) -> Alert:
        """Insert a ``new`` alert and its first event (by :data:`~regbench.model.SYSTEM_ACTOR`); a
        failure has no ``change`` (None) and an ``error``; a creep has ``until``, the first version
        at its new level (:attr:`regbench.detect.Change.until`)."""
        ...

    def update(self, alert_id: int, *, now: datetime, fixed_by: str | None = None, clear_fix: bool = False,
               step: tuple[str, str] | None = None, **values) -> None:
        """Change columns of one alert (``fixed_by`` by version name; ``clear_fix`` forgets a fix;
        ``step``: its ``(previous, version)`` by name)."""
        ...

    def add_event(self, alert_id: int, status: str, *, who: str, why: str | None, now: datetime) -> None:
        """Add a step to an alert's history."""
        ...

    def reopened_by_hand(self, ids: Sequence[int]) -> set[int]:
        """The alerts of ``ids`` that a person took out of ``fixed`` after detection last fixed
        them (reopened, or triaged otherwise)."""
        ...

    def add_confirmation(self, confirmation: Confirmation, *, benchmark: str, config: str, machine: str,
                         version: str, previous: str, kind: str, method: str, alert_id: int | None,
                         now: datetime) -> None:
        """Record what confirmation found of one change, linked to the alert it became (or None)."""
        ...


class AlertRepository(Protocol):
    """Where alerts are kept (the results store's ``Store`` is one)."""

    def run_alert_transaction(self, work: Callable[[Transaction], R], *, attempts: int = 3) -> R:
        """``work(tx)`` in one transaction: committed when it returns, rolled back when it raises, and
        run again from scratch (up to ``attempts`` times in all) when a concurrent writer made it
        conflict."""
        ...


@runtime_checkable
class Coverage(Protocol):
    """What each machine measured (the results store's ``Store`` and its ``HistoryView`` are ones)."""

    def measured_versions(self, benchmark: str, config: str) -> Mapping[str, Sequence[str]]:
        """Machine -> the versions where it measured ``benchmark`` on ``config``."""
        ...


@dataclass(frozen=True)
class AlertOutcome:
    """What :func:`record_alerts` did.

    Attributes
    ----------
    created : tuple of Alert
        Alerts created by this call (as stored at its end).
    merged : tuple of Alert
        Alerts that existed before this call and that a change was found to be (each once; an
        alert whose methods or interval did not change is here too).
    suppressed : tuple of Change
        Changes not recorded because their benchmark's alerts are suppressed.
    fixed : tuple of Alert
        Alerts this call marked ``fixed``.
    withheld : tuple of Change
        Changes not recorded because running them again refuted them or could not settle them
        (their confirmation is recorded, without an alert).
    raised : tuple of Alert
        Alerts that were held and that this call raised (now seen on enough machines).
    placed : mapping
        The alert id each recorded change went into, by :func:`change_step`.
    failures : tuple of Alert
        The failure alert of each failing series recorded, and of each that never succeeded
        (created by this call, and so also in ``created``, or stored before: the same breakage),
        as at the end of the call.
    suppressed_failures : tuple of Failing
        Failing series (and series that never succeeded) not recorded because their benchmark's
        alerts are suppressed.
    reopened : tuple of Alert
        Failure alerts fixed because their benchmark was no longer run that this call reopened:
        it fails at the newest version it ran at again, nothing showing it no longer run (it
        runs again, or its retired machine or configuration stores runs again), so it gates
        (also in ``failures``).
    """

    created: tuple[Alert, ...] = ()
    merged: tuple[Alert, ...] = ()
    suppressed: tuple[Change, ...] = ()
    fixed: tuple[Alert, ...] = ()
    withheld: tuple[Change, ...] = ()
    raised: tuple[Alert, ...] = ()
    placed: Mapping[Step, int] = field(default_factory=dict)
    failures: tuple[Alert, ...] = ()
    suppressed_failures: tuple[Failing, ...] = ()
    reopened: tuple[Alert, ...] = ()

    @property
    def held(self) -> tuple[Alert, ...]:
        """The alerts of this call (created or merged) that are held, not notified."""
        return tuple(a for a in (*self.created, *self.merged) if a.held)

    def alert_of(self, change: Change) -> Alert | None:
        """The alert (as at the end of the call) that ``change`` was recorded into, or None."""
        ident = self.placed.get(change_step(change))
        return next((a for a in (*self.created, *self.merged) if a.id == ident), None)

    def failure_of(self, failing: Failing) -> Alert | None:
        """The failure alert (as at the end of the call) that a failing series was recorded into,
        or None (suppressed)."""
        return next((a for a in self.failures if a.series == failing.series), None)


# ------------------------------------------------------------------------------- the pure rules
def candidate_span(previous_pos: int, version_pos: int) -> tuple[int, int]:
    """The history positions (first, last) of the versions that may first show a change."""
    lo, hi = sorted((previous_pos, version_pos))
    return (lo + 1, hi)


def span_gap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Versions between two candidate spans: <= 0 when they overlap, 1 when adjacent."""
    return max(a[0], b[0]) - min(a[1], b[1])


def same_step(a: tuple[int, int], b: tuple[int, int], *, tolerance: int = SPAN_TOLERANCE) -> bool:
    """Whether two candidate spans are one step (they overlap or are ``tolerance`` apart)."""
    return span_gap(a, b) <= tolerance


def restores(earlier: float, later: float, *, floor: float = FIX_FLOOR) -> bool:
    """Whether a ``later`` relative change undoes an ``earlier`` one.

    True when ``|(1 + earlier)(1 + later) - 1| <= max(floor, |earlier| / 2)``: after both changes
    the level is back within half of the first change of where it was.  A change from exactly 0
    (+inf, :mod:`regbench.detect.zeros`) is undone only by one back to exactly 0 (-100%).
    """
    if math.isinf(earlier) or math.isinf(later):
        return earlier == math.inf and later == -1.0
    return abs((1 + earlier) * (1 + later) - 1) <= max(floor, abs(earlier) / 2)


def pct(x: float | None) -> str:
    """A relative change for an event's text: ``+3.40%``; ``+∞`` for one from exactly 0 (as
    :func:`regbench.report.console.fmt_pct` shows it); ``?`` for none (a failure's)."""
    if x is None:
        return "?"
    return ("+∞" if x > 0 else "-∞") if math.isinf(x) else f"{x:+.2%}"


def span_text(version: str, until: str | None) -> str:
    """Where a change is: ``v3``, or ``v3 .. v9`` for a creep spread over those versions."""
    return version if until is None else f"{version} .. {until}"


def _width(lo: float | None, hi: float | None) -> float:
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return math.inf
    return hi - lo


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def is_suppressed(config, benchmark: str) -> bool:
    """Whether ``regbench.toml`` suppresses the alerts of a benchmark (False without a config)."""
    return config is not None and config.alerts_suppressed(benchmark)


#: A change's step: (benchmark, configuration, machine, previous, version).  A series has at most
#: one change between two given versions, so this identifies a change of one detection.
Step = tuple[str, str, str, str, str]


def change_step(c: Change) -> Step:
    """The step of a change (:data:`Step`): what identifies it across copies of the object."""
    return (c.benchmark, c.config, c.machine, c.previous, c.version)


def _match(alerts: Sequence[Alert], c: Change, here: tuple[int, int], span) -> Alert | None:
    """The alert of ``alerts`` (one series) that the change ``c``, with candidate span ``here``, is
    the same step as (the rules in the module docstring), or None."""
    # Overlapping spans are one step; spans one version apart are one step only when another
    # method placed it there: the same method reporting adjacent versions saw two steps.
    matches = [a for a in alerts if a.kind == c.kind and same_step(span(a.version, a.previous), here)
               and (span_gap(span(a.version, a.previous), here) <= 0 or c.method not in a.methods)]
    if not matches:
        return None
    return min(matches, key=lambda a: (span_gap(span(a.version, a.previous), here), a.id))


def _evidence_span(e: MachineEvidence, span) -> tuple[int, int]:
    return span(e.version, e.previous)


def _place(group: Sequence[Alert], c: Change, here: tuple[int, int], span) -> tuple[Alert | None, bool]:
    """The alert of ``group`` (the alerts of one benchmark and configuration, every machine) that
    the change ``c`` (candidate span ``here``) is recorded into, and whether it is that alert's own
    series (else it is evidence of another machine's alert); ``(None, False)`` for a new alert.

    The rules are in the module docstring: the alert's own series first (:func:`_match`), then an
    alert that already has evidence of ``c``'s machine at the same step (the same rule), then one
    of another machine whose evidence overlaps ``here``.
    """
    own = _match([a for a in group if a.machine == c.machine], c, here, span)
    if own is not None:
        return own, True
    known: list[tuple[int, int, Alert]] = []
    overlapping: list[tuple[int, int, Alert]] = []
    for a in group:
        if a.machine == c.machine or a.kind != c.kind:
            continue
        mine = next((e for e in a.also_on if e.machine == c.machine), None)
        if mine is not None:
            gap = span_gap(_evidence_span(mine, span), here)
            if same_step(_evidence_span(mine, span), here) and (gap <= 0 or c.method not in mine.methods):
                known.append((gap, a.id, a))
            continue  # the machine is evidence of this alert at another step: not this change
        gap = min(span_gap(_evidence_span(e, span), here) for e in a.evidence)
        if gap <= 0:
            overlapping.append((gap, a.id, a))
    for found in (known, overlapping):
        if found:
            return min(found, key=lambda x: x[:2])[2], False
    return None, False


def measured_step(positions: Iterable[int], step: tuple[int, int]) -> bool:
    """Whether a machine that measured the versions at ``positions`` (history order) measured the
    candidate span ``step``: it has a version before the span and one at or after its end, so that
    a step there would show between two of its versions."""
    pos = list(positions)
    return any(p < step[0] for p in pos) and any(p >= step[1] for p in pos)


def required_machines(config) -> int:
    """``[alerts] require_machines`` of a configuration (1 without one)."""
    return 1 if config is None else int(config.require_machines)


def known_alerts(repository: AlertRepository, changes: Iterable[Change]) -> list[Alert | None]:
    """For each change, the stored alert it is the same step as, or None when it would be new.

    What :func:`record_alerts` would merge each change into, read without writing anything:
    ``regbench detect --confirm`` runs again only the changes that would create a new alert
    (confirming a known alert again would waste runs).  Changes are matched against the stored
    alerts only, not against each other.

    Raises
    ------
    NotFoundError
        A change names a version that is not in the store.
    """
    changes = list(changes)

    def read(tx: Transaction) -> list[Alert | None]:
        def span(version: str, previous: str) -> tuple[int, int]:
            return candidate_span(tx.position(previous), tx.position(version))

        by_group: dict[tuple[str, str], list[Alert]] = {}
        out: list[Alert | None] = []
        for c in changes:
            key = (c.benchmark, c.config)
            if key not in by_group:
                by_group[key] = tx.config_alerts(*key)
            out.append(_place(by_group[key], c, span(c.version, c.previous), span)[0])
        return out

    return repository.run_alert_transaction(read, attempts=1)


# ------------------------------------------------------------------------------ record_alerts
def record_alerts(repository: AlertRepository, changes: Iterable[Change], *, config=None,
                  now: datetime | None = None, confirmations: Mapping[Step, Confirmation] | None = None,
                  coverage: Coverage | None = None, failures: FailureScan | None = None) -> AlertOutcome:
    """Record the changes of a detection, and the benchmarks that start failing, as alerts,
    idempotently, in one transaction.

    Parameters
    ----------
    repository : AlertRepository
        Where alerts are kept: the results store (it holds the notification repository).
    changes : iterable of Change
        Changes from any detectors, in any order; versions must be in the store.
    config : regbench.config.ProjectConfig, optional
        For suppression (``[alerts] suppress``, ``alerts = false``) and ``[alerts]
        require_machines``; nothing is suppressed nor held without.
    now : datetime, optional
        The time written into the alerts and their history (UTC; default: the current time).
    confirmations : mapping, optional
        What ``regbench detect --confirm`` found of some changes, by :func:`change_step`.  A
        change whose confirmation does not alert (refuted, inconclusive) is not recorded as an
        alert: its confirmation is stored alone and the change is counted in
        :attr:`AlertOutcome.withheld`.  The others are recorded as usual, and an alert they
        create keeps its confirmation (:attr:`regbench.model.Alert.confirmation`).
    coverage : Coverage, optional
        What each machine measured, to tell which machines measured an alert's step without
        showing it (the history detection read) [default: ``repository`` when it is one (the
        store: the runs of its campaigns); else no machine is said to be unchanged].
    failures : FailureScan, optional
        What the failed runs say (:func:`regbench.inventory.scan_failures`, read as the history
        detection read): each failing series becomes a failure alert, or is found to be one, and
        the open failure alerts of the series it scanned that run again are fixed ("Failures" in
        the module docstring).  None: no failure is recorded, none fixed.

    Returns
    -------
    AlertOutcome

    Raises
    ------
    NotFoundError
        A change names a benchmark, configuration, machine or version that is not in the store.
    StoreError
        Concurrent detections kept conflicting (after three attempts).
    ValueError
        A change's kind is not ``regression``/``improvement`` or its change is not finite.

    References
    ----------
    Seed 001 s.2 and fig. 1 (the notification repository); seed 004 s.5 (expected changes).
    The rules are in this module's docstring.
    """
    now = as_utc(now)
    changes = list(changes)
    for c in changes:
        if c.kind not in CHANGE_KINDS:
            raise ValueError(f"`kind` of a change must be 'regression' or 'improvement', got {c.kind!r}")
        # +inf is a count from exactly 0 in every run to above 0 (regbench.detect.zeros).
        if math.isnan(c.change):
            raise ValueError(f"`change` of a change must be a number, got {c.change!r} "
                             f"({c.benchmark} at {c.version})")
    confirmed = dict(confirmations or {})
    if coverage is None and isinstance(repository, Coverage):
        coverage = repository
    # Read before the write transaction: what was measured does not depend on the alerts.
    measured: dict[tuple[str, str], Mapping[str, Sequence[str]]] = {}
    if coverage is not None:
        for c in changes:
            key = (c.benchmark, c.config)
            if key not in measured and not is_suppressed(config, c.benchmark):
                measured[key] = coverage.measured_versions(*key)
    rules = _Rules(config=config, now=now, confirmations=confirmed, measured=measured,
                   require=required_machines(config))
    scan = failures if failures is not None else FailureScan()
    return repository.run_alert_transaction(lambda tx: _record(tx, changes, rules, scan))


@dataclass(frozen=True)
class _Rules:
    """What one :func:`record_alerts` call applies (its options, and what each machine measured)."""

    config: object
    now: datetime
    confirmations: Mapping[Step, Confirmation]
    measured: Mapping[tuple[str, str], Mapping[str, Sequence[str]]]
    require: int


def _record(tx: Transaction, changes: list[Change], rules: _Rules, scan: FailureScan) -> AlertOutcome:
    now, confirmations = rules.now, rules.confirmations
    created: dict[int, Alert] = {}
    merged: dict[int, Alert] = {}
    fixed: dict[int, Alert] = {}
    suppressed: list[Change] = []
    withheld: list[Change] = []
    placed: dict[Step, int] = {}
    by_group: dict[tuple[str, str], list[Alert]] = {}

    def confirm(c: Change, conf: Confirmation, alert_id: int | None) -> None:
        tx.add_confirmation(conf, benchmark=c.benchmark, config=c.config, machine=c.machine, version=c.version,
                            previous=c.previous, kind=c.kind, method=c.method, alert_id=alert_id, now=now)

    def span(version: str, previous: str) -> tuple[int, int]:
        return candidate_span(tx.position(previous), tx.position(version))

    def keep(alerts: list[Alert], fresh: Alert) -> None:
        """Put the fresh copy of an alert in its group and in the tables of this call."""
        alerts[[a.id for a in alerts].index(fresh.id)] = fresh
        for table in (created, merged, fixed):
            if fresh.id in table:
                table[fresh.id] = fresh

    order = sorted(changes, key=lambda c: (c.benchmark, c.config, c.machine, span(c.version, c.previous),
                                           c.method, c.kind))
    for c in order:
        if is_suppressed(rules.config, c.benchmark):
            suppressed.append(c)
            continue
        conf = confirmations.get(change_step(c))
        if conf is not None and not conf.alerts:
            confirm(c, conf, None)
            withheld.append(c)
            continue
        key = (c.benchmark, c.config)
        if key not in by_group:
            by_group[key] = tx.config_alerts(*key)
        alerts = by_group[key]
        here = span(c.version, c.previous)
        target, own = _place(alerts, c, here, span)
        if target is not None:
            if conf is not None and target.confirmation is None and own:
                # confirmed as new, but a concurrent detection recorded the step meanwhile
                confirm(c, conf, target.id)
            updated = _merge(tx, target, c, here, span, now=now) if own else _merge_machine(tx, target, c, now=now)
            if updated.id not in created:
                merged[updated.id] = updated
            keep(alerts, updated)
            placed[change_step(c)] = updated.id
            continue
        why = f"detected by {c.method}: {pct(c.change)} at {span_text(c.version, c.until)} (since {c.previous})"
        if conf is not None:
            why += f"; {confirmation_text(conf)}"
        alert = tx.create(benchmark=c.benchmark, config=c.config, machine=c.machine, version=c.version,
                          previous=c.previous, kind=c.kind, change=float(c.change),
                          ci_low=_finite_or_none(c.ci_low), ci_high=_finite_or_none(c.ci_high),
                          p_value=_finite_or_none(c.p_value), methods=[c.method], now=now, why=why,
                          until=c.until)
        if conf is not None:
            confirm(c, conf, alert.id)
            (alert,) = tx.alerts([alert.id])
        alerts.append(alert)
        created[alert.id] = alert
        placed[change_step(c)] = alert.id
        # The regressions this machine showed, its own alerts' or another machine's it is evidence of.
        restored = _restored_alert([a for a in alerts if c.machine in a.machines], alert, span)
        if restored is not None:
            tx.update(restored.id, now=now, status="fixed", fixed_by=alert.version, fixed_by_alert_id=alert.id)
            tx.add_event(restored.id, "fixed", who=SYSTEM_ACTOR, now=now,
                         why=f"restored by {alert.version} ({pct(alert.change)}, alert #{alert.id}, {c.method})")
            tx.add_event(alert.id, "new", who=SYSTEM_ACTOR, now=now,
                         why=f"restores alert #{restored.id} ({restored.kind} {pct(restored.change)} "
                             f"at {restored.version})")
            now_as = {a.id: a for a in tx.alerts([restored.id, alert.id])}
            fixed[restored.id] = now_as[restored.id]
            keep(alerts, now_as[restored.id])
            keep(alerts, now_as[alert.id])
    failures, suppressed_failures, reopened = _record_failures(tx, scan, rules, by_group, created, fixed, span)
    raised: list[Alert] = []
    for key, alerts in by_group.items():
        for a in list(alerts):
            if a.failure or (a.id not in created and a.id not in merged):
                continue
            fresh = _machines_and_hold(tx, a, rules.measured.get(key), span, rules.require, now=now,
                                       new=a.id in created)
            if fresh is not a:
                keep(alerts, fresh)
                if a.held and not fresh.held:
                    raised.append(fresh)
    failures = [created.get(a.id) or fixed.get(a.id) or a for a in failures]
    return AlertOutcome(created=tuple(created.values()), merged=tuple(merged.values()),
                        suppressed=tuple(suppressed), fixed=tuple(fixed.values()), withheld=tuple(withheld),
                        raised=tuple(raised), placed=placed, failures=tuple(failures),
                        suppressed_failures=tuple(suppressed_failures), reopened=tuple(reopened))


def _record_failures(tx: Transaction, scan: FailureScan, rules: _Rules, by_group: dict[tuple[str, str], list[Alert]],
                     created: dict[int, Alert], fixed: dict[int, Alert], span
                     ) -> tuple[list[Alert], list[Failing], list[Alert]]:
    """Fix the open failure alerts of the scanned series that run again or are no longer run,
    then record each failing series as its failure alert ("Failures" in the module docstring);
    the failure alert of each failing series recorded, the failing series suppressed, and the
    alerts reopened (no longer run, failing again)."""
    now = rules.now

    def group(benchmark: str, config: str) -> list[Alert]:
        if (benchmark, config) not in by_group:
            by_group[benchmark, config] = tx.config_alerts(benchmark, config)
        return by_group[benchmark, config]

    def failure_span(version: str, previous: str) -> tuple[int, int]:
        # A failure that never succeeded (previous is version) may have broken at any version up
        # to its first: its stretch is every version up to there, as if since were before history.
        if version == previous:
            return candidate_span(-1, tx.position(version))
        return span(version, previous)

    # Fixed first: a series that ran again and broke again is a fixed alert and a new one.
    candidates = []
    for (benchmark, config, machine), ok in sorted(scan.succeeded.items()):
        if not ok or is_suppressed(rules.config, benchmark):
            continue
        candidates += [(a, ok) for a in group(benchmark, config)
                       if a.failure and a.machine == machine and a.status in OPEN_ALERT_STATUSES]
    kept = tx.reopened_by_hand([a.id for a, _ in candidates]) if candidates else set()
    for a, ok in candidates:
        again = [v for v in ok if tx.position(v) >= tx.position(a.version)]
        if not again or a.id in kept:  # a person who reopened it keeps it open
            continue
        by = min(again, key=tx.position)
        tx.update(a.id, now=now, status="fixed", fixed_by=by)
        tx.add_event(a.id, "fixed", who=SYSTEM_ACTOR, now=now,
                     why=f"succeeds: its first successful run at {by}" if a.never_succeeded and by == ok[0]
                     else f"runs again: a successful run at {by}")
        (fresh,) = tx.alerts([a.id])
        fixed[a.id] = fresh
        alerts = group(a.benchmark, a.config)
        alerts[[b.id for b in alerts].index(a.id)] = fresh
    # No longer run (removed from the suite, renamed, or its machine or configuration retired):
    # no version fixed it.
    gone = [(a, g) for g in (*scan.no_longer_run, *scan.never_succeeded_gone)
            if not is_suppressed(rules.config, g.benchmark) for a in group(g.benchmark, g.config)
            if a.failure and a.machine == g.machine and a.status in OPEN_ALERT_STATUSES and a.id not in fixed]
    kept = tx.reopened_by_hand([a.id for a, _ in gone]) if gone else set()
    for a, g in gone:
        if a.id in kept:
            continue
        tx.update(a.id, now=now, status="fixed")
        tx.add_event(a.id, "fixed", who=SYSTEM_ACTOR, now=now, why=_no_longer_run_text(g))
        (fresh,) = tx.alerts([a.id])
        fixed[a.id] = fresh
        alerts = group(a.benchmark, a.config)
        alerts[[b.id for b in alerts].index(a.id)] = fresh

    told: list[Alert] = []
    suppressed: list[Failing] = []
    reopened: list[Alert] = []
    for f in sorted((*scan.failing, *scan.never_succeeded), key=lambda f: f.series):
        if is_suppressed(rules.config, f.benchmark):
            suppressed.append(f)
            continue
        alerts = group(f.benchmark, f.config)
        here = failure_span(f.first, f.since)
        same = [a for a in alerts if a.failure and a.machine == f.machine
                and span_gap(failure_span(a.version, a.previous), here) <= 0]
        if same:  # one breakage: the alert keeps the versions it was first told with
            a = min(same, key=lambda a: (span_gap(failure_span(a.version, a.previous), here), a.id))
            if a.no_longer_run:  # nothing shows it no longer run now: it fails, and gates, again
                tx.update(a.id, now=now, status="new", clear_fix=True)
                tx.add_event(a.id, "new", who=SYSTEM_ACTOR, now=now, why=_failing_again_text(tx, f, a))
                (a,) = tx.alerts([a.id])
                alerts[[b.id for b in alerts].index(a.id)] = a
                reopened.append(a)
            told.append(a)
            continue
        runs = f"{f.failed_runs} failed run{'' if f.failed_runs == 1 else 's'} at {f.version}"
        worked = "it never succeeded" if f.never_succeeded else f"last ok at {f.since}"
        alert = tx.create(benchmark=f.benchmark, config=f.config, machine=f.machine, version=f.first,
                          previous=f.since, kind=FAILURE_KIND, change=None, ci_low=None, ci_high=None,
                          p_value=None, methods=(), now=now, error=f.error,
                          why=f"failing: every run failed from {f.first} on ({runs}, the newest), {worked}: {f.error}")
        alerts.append(alert)
        created[alert.id] = alert
        told.append(alert)
    return told, suppressed, reopened


def _failing_again_text(tx: Transaction, f: Failing, fixed: Alert) -> str:
    """Why the failure alert ``fixed`` (fixed as no longer run; its ``updated_at`` is when) is
    open again, for its history: the series ran again since, a campaign started after the fix
    (``failing again: it runs again after it was no longer run, ...``), or else its machine
    stored runs of others since it last ran, which brought its retired place back without it
    running (``failing again: m stored runs since it last ran (the last at v23), none of it,
    ...``): nothing then shows yet that it is no longer run, so it fails at its newest version.
    Where neither is known (runs without campaigns and nothing stored since), it runs again."""
    if tx.ran_after(f.benchmark, f.config, f.machine, fixed.updated_at):
        since = None
    else:
        since = tx.stored_since(f.benchmark, f.config, f.machine)
    if since is None:
        return f"failing again: it runs again after it was no longer run, and every run failed at {f.version}"
    return (f"failing again: {f.machine} stored runs since it last ran (the last at {since}), none of it, and "
            f"nothing shows yet that it is no longer run; every run failed at {f.version}, the newest version it "
            "ran at")


def _no_longer_run_text(g: NoLongerRun) -> str:
    """Why a failing benchmark is no longer run, for its alert's history: ``no longer run: v5 was
    measured on m with the 2 benchmark(s) run beside it at v2 (c, d), without it ...``, or
    ``no longer run: its machine is retired: m measured nothing since v2, ...``."""
    lead = f"{g.lead} version{'' if g.lead == 1 else 's'}"
    if g.retired is not None:
        return (f"no longer run: its {g.retired} is retired: {g.silence()} (it was never more than {lead} behind "
                f"the others before it stored runs again); every run failed at {g.version}, the newest it ran at")
    if g.together:
        beside = (f"the {len(g.companions)} benchmark(s) run beside it at {g.anchor} ({', '.join(g.companions)})"
                  if g.companions else "other benchmarks")
        return (f"no longer run: {g.measured} versions up to {g.by} were measured on {g.machine} with {beside}, "
                f"without it nor {', '.join(g.together)}, failing too (they were never more than {lead} behind "
                f"the rest before they stored runs again): removed together, or renamed; every run failed at "
                f"{g.version}, the newest it ran at")
    if g.campaign is not None:
        how = f"the suite of campaign #{g.campaign} at {g.by} on {g.machine} does not name it"
    elif g.anchor is None:
        how = f"{g.by} was measured on {g.machine} without it (it never ran beside other benchmarks)"
    else:
        how = (f"{g.by} was measured on {g.machine} with the {len(g.companions)} benchmark(s) run beside it at "
               f"{g.anchor} ({', '.join(g.companions)}), without it")
    return f"no longer run: {how} (removed from the suite, or renamed); every run failed at {g.version}, " \
           "the newest it ran at"


def _machines_and_hold(tx: Transaction, alert: Alert, measured: Mapping[str, Sequence[str]] | None, span,
                       require: int, *, now: datetime, new: bool) -> Alert:
    """Bring an alert's unchanged machines up to date with what was measured; hold it when it is
    ``new`` (created by this call) and fewer than ``require`` machines show it, raise it when it
    was held and enough machines show it now; write only what changes."""
    reasons = []
    if measured is not None:
        step = span(alert.version, alert.previous)
        unchanged = {machine for machine, versions in measured.items()
                     if machine not in alert.machines and measured_step(map(tx.position, versions), step)}
        before = set(alert.unchanged_on)
        for machine in sorted(unchanged - before):
            tx.set_machine(alert.id, machine, None, now=now)
        for machine in sorted(before - unchanged):
            tx.drop_machine(alert.id, machine, now=now)
        if unchanged - before:
            reasons.append("measured without the change on " + ", ".join(sorted(unchanged - before)))
        if before - unchanged:
            gone = ", ".join(sorted(before - unchanged))
            reasons.append(f"not measured around the step in the history read: {gone}")
    n = len(alert.machines)
    if new and not alert.held and n < require:
        tx.update(alert.id, now=now, hold_machines=require)
        reasons.append(f"held, not notified: seen on {n} of the {require} machines [alerts] require_machines asks")
    elif alert.held:
        if n >= require:
            tx.update(alert.id, now=now, hold_machines=None)
            reasons.append(f"raised: seen on {n} machines ({', '.join(alert.machines)}); "
                           f"[alerts] require_machines = {require}")
        elif alert.hold_machines != require:
            tx.update(alert.id, now=now, hold_machines=require)
            reasons.append(f"still held, now until seen on {require} machines ([alerts] require_machines)")
    if not reasons:
        return alert
    tx.add_event(alert.id, alert.status, who=SYSTEM_ACTOR, now=now, why="; ".join(reasons))
    return tx.alerts([alert.id])[0]


def confirmation_text(conf: Confirmation) -> str:
    """One phrase for an alert's history: ``confirmed: regression +10.12% [+6.0%, +14.3%] after 12
    pairs (4.1 s, campaign #3)``, or ``unconfirmed: <why>``."""
    if conf.status != "confirmed":
        return f"{conf.status}: {conf.reason}" if conf.reason else conf.status
    interval = (f" [{conf.cs_low:+.2%}, {conf.cs_high:+.2%}]"
                if conf.cs_low is not None and conf.cs_high is not None else "")
    change = f" {conf.change:+.2%}{interval}" if conf.change is not None else ""
    how = f"; compared {conf.compared_by}" if conf.compared_by else ""
    return (f"confirmed: {conf.verdict}{change} after {conf.pairs} pairs of runs "
            f"({conf.seconds:.1f} s, campaign #{conf.campaign_id}){how}")


def _merge(tx: Transaction, alert: Alert, c: Change, here: tuple[int, int], span, *, now: datetime) -> Alert:
    """Fold a change into the alert it is the same step as; write only what changes."""
    values: dict = {}
    reasons = []
    then = span(alert.version, alert.previous)
    if here != then and then[0] <= here[0] and here[1] <= then[1] and _stored_since(tx, alert, c):
        # Fewer candidate versions, all among the alert's, and the change is placed at a version
        # stored after the alert's two (a late CI job, a back-fill): the step is placed more
        # precisely.  (A method that only places a step within a window, such as forecast's, and
        # another that places it at one version of it in the same detection are one alert at the
        # first one's versions, as before.)
        values["step"] = (c.previous, c.version)
        reasons.append(f"placed at {c.version} (since {c.previous}) by versions measured since, "
                       f"not at {alert.version} (since {alert.previous})")
    if c.method not in alert.methods:
        values["methods"] = [*alert.methods, c.method]
        reasons.append(f"also found by {c.method}")
    lo, hi = _finite_or_none(c.ci_low), _finite_or_none(c.ci_high)
    # A creep's span goes with its numbers: its change is the ramp's total, which read without
    # ``until`` is one commit's.
    numbers = dict(change=float(c.change), ci_low=lo, ci_high=hi, p_value=_finite_or_none(c.p_value), until=c.until)
    if "step" in values:  # the numbers of the step as it is placed now
        values.update(numbers)
    elif _width(lo, hi) < _width(alert.ci_low, alert.ci_high):
        values.update(numbers)
        reasons.append(f"narrower interval from {c.method} [{lo:+.2%}, {hi:+.2%}] at {span_text(c.version, c.until)}")
    if values.get("until", alert.until) != alert.until:
        reasons.append(f"a creep over {span_text(c.version, c.until)}" if c.until is not None else
                       f"a step at {c.version}, not a creep over {span_text(alert.version, alert.until)}")
    if not values:
        return alert
    tx.update(alert.id, now=now, **values)
    tx.add_event(alert.id, alert.status, who=SYSTEM_ACTOR, now=now, why="; ".join(reasons))
    return tx.alerts([alert.id])[0]


def _stored_since(tx: Transaction, alert: Alert, c: Change) -> bool:
    """Whether the series got its first run at a version that bounds the change after it had runs
    at both versions of the alert (a late CI job of that commit, even when other jobs of the
    same commit stored the version on time)."""
    def order(version: str) -> int:
        return tx.stored_order(c.benchmark, c.config, c.machine, version)

    first = max(order(alert.version), order(alert.previous))
    return any(order(v) > first for v in (c.version, c.previous) if v not in (alert.version, alert.previous))


def _merge_machine(tx: Transaction, alert: Alert, c: Change, *, now: datetime) -> Alert:
    """Fold a change of another machine into an alert as that machine's evidence; write only what
    changes."""
    mine = next((e for e in alert.also_on if e.machine == c.machine), None)
    lo, hi = _finite_or_none(c.ci_low), _finite_or_none(c.ci_high)
    new = MachineEvidence(c.machine, c.version, c.previous, float(c.change), lo, hi, _finite_or_none(c.p_value),
                          (c.method,), c.until)
    if mine is None:
        tx.set_machine(alert.id, c.machine, new, now=now)
        why = (f"evidence from {c.machine}: {pct(c.change)} at {span_text(c.version, c.until)} "
               f"(since {c.previous}), found by {c.method}"
               + ("; no longer measured without the change there" if c.machine in alert.unchanged_on else ""))
    else:
        reasons = []
        methods = mine.methods
        if c.method not in methods:
            methods = tuple(sorted({*methods, c.method}))
            reasons.append(f"also found by {c.method}")
        if _width(lo, hi) < _width(mine.ci_low, mine.ci_high):
            # The versions stay as first recorded, as the alert's own do; a creep's span goes with
            # its numbers (as in _merge): the ramp's total read without ``until`` is one commit's.
            before = mine
            mine = replace(mine, change=new.change, ci_low=lo, ci_high=hi, p_value=new.p_value, until=c.until)
            reasons.append(f"narrower interval from {c.method} [{lo:+.2%}, {hi:+.2%}] "
                           f"at {span_text(c.version, c.until)}")
            if before.until != c.until:
                reasons.append(f"a creep over {span_text(c.version, c.until)}" if c.until is not None else
                               f"a step at {c.version}, not a creep over {span_text(before.version, before.until)}")
        if not reasons:
            return alert
        tx.set_machine(alert.id, c.machine, replace(mine, methods=methods), now=now)
        why = f"evidence from {c.machine}: " + "; ".join(reasons)
    tx.add_event(alert.id, alert.status, who=SYSTEM_ACTOR, now=now, why=why)
    return tx.alerts([alert.id])[0]


def _restored_alert(alerts: Sequence[Alert], new: Alert, span) -> Alert | None:
    """The latest open regression alert before the improvement ``new`` that ``new`` restores,
    each judged by what ``new``'s machine showed of it (its own change, or its evidence)."""
    if new.kind != "improvement":
        return None
    first = span(new.version, new.previous)[0]
    best = best_end = None
    for a in alerts:
        if a.kind != "regression" or a.status not in OPEN_ALERT_STATUSES:
            continue
        seen = next((e for e in a.evidence if e.machine == new.machine), None)
        if seen is None:
            continue
        end = span(seen.version, seen.previous)[1]
        if end >= first:  # not strictly before the restoring step
            continue
        if seen.change is None or new.change is None:  # a failure's: no change to restore
            continue
        if restores(seen.change, new.change) and (best is None or end > best_end):
            best, best_end = a, end
    return best


# --------------------------------------------------------------------------------- lifecycle
def _stored(tx: Transaction, ids: Sequence[int]) -> dict[int, Alert]:
    """The alerts of ``ids`` as stored, in the order of ``ids``; NotFoundError for an id that
    is not an alert."""
    found = {a.id: a for a in tx.alerts(ids)}
    missing = next((i for i in ids if i not in found), None)
    if missing is not None:
        raise NotFoundError(f"no alert #{missing} in the store")
    return {i: found[i] for i in ids}


def set_status(repository: AlertRepository, ids: Iterable[int], status: str, *, who: str, why: str | None = None,
               now: datetime | None = None) -> list[Alert]:
    """Triage alerts: set ``status`` on every alert of ``ids``, all or none, with who/when/why.

    Parameters
    ----------
    repository : AlertRepository
        Where alerts are kept (the results store).
    ids : iterable of int
        Alert ids.
    status : {"new", "acknowledged", "invalid", "expected"}
        ``new`` reopens an alert (a fixed one loses its ``fixed_by``).
    who : str
        The person (or tool) deciding.
    why : str, optional
        The reason, kept in the alert's history.
    now : datetime, optional
        When (UTC; default: the current time).

    Returns
    -------
    list of Alert
        The alerts as updated, in the order of ``ids``.

    Raises
    ------
    ConfigError
        Unknown status, no ids, or an empty ``who``.
    NotFoundError
        An id is not an alert.
    AlertError
        An alert already has ``status`` (nothing is changed then).
    """
    ids = list(dict.fromkeys(int(i) for i in ids))
    if status == "fixed":
        raise ConfigError("`fixed` is set by detection when a later change restores performance, not by hand")
    if status not in TRIAGE_STATUSES:
        raise ConfigError(f"unknown alert status {status!r} (known: {', '.join(TRIAGE_STATUSES)})")
    if not ids:
        raise ConfigError("no alert ids given")
    if not who or not who.strip():
        raise ConfigError("`who` must name the person deciding")
    now = as_utc(now)

    def triage(tx: Transaction) -> list[Alert]:
        found = _stored(tx, ids)
        for i in ids:
            if found[i].status == status:
                raise AlertError(f"alert #{i} is already {status}")
        for i in ids:
            tx.update(i, now=now, status=status, clear_fix=found[i].status == "fixed")
            tx.add_event(i, status, who=who.strip(), why=why, now=now)
        return list(_stored(tx, ids).values())

    # All or none, once: a person's decision is not retried behind their back.
    return repository.run_alert_transaction(triage, attempts=1)


def record_bisection(repository: AlertRepository, ids: Iterable[int], culprit: str | None, text: str, *,
                     now: datetime | None = None) -> list[Alert]:
    """Keep what ``detect --bisect`` found with alerts: ``culprit`` (the commit found, or None when
    no single commit was) and ``text`` (what the bisection said, one line), and a note in each
    alert's history (its status unchanged).  Written before the alerts are notified, so that
    their messages point at the commit.

    Returns
    -------
    list of Alert
        The alerts as updated, in the order of ``ids``.
    """
    ids = list(dict.fromkeys(int(i) for i in ids))
    now = as_utc(now)

    def keep(tx: Transaction) -> list[Alert]:
        for i, alert in _stored(tx, ids).items():
            tx.update(i, now=now, culprit=culprit, bisection=text)
            tx.add_event(i, alert.status, who=SYSTEM_ACTOR, why=f"bisected: {text}", now=now)
        return list(_stored(tx, ids).values())

    return repository.run_alert_transaction(keep)


__all__ = ["FIX_FLOOR", "SPAN_TOLERANCE", "AlertOutcome", "AlertRepository", "Coverage", "Step", "Transaction",
           "candidate_span", "change_step", "confirmation_text", "is_suppressed", "known_alerts", "measured_step",
           "record_alerts", "record_bisection", "required_machines", "restores", "same_step", "set_status", "span_gap",
           "span_text"]
