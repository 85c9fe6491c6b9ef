"""The notification repository (seed 001 fig. 1): alerts, their history and their deliveries.

Seed 001 s.2: "to avoid repetitive or redundant notifications, the analysis module consults the
notification repository for a history of notifications".  This module is that repository's
storage: plain reads and writes on the ``alert``, ``alert_event`` and ``alert_delivery`` tables
(:mod:`regbench.store.schema`, migration 0002), on ``confirmation`` (migration 0004: what
``regbench detect --confirm`` found when it ran a change again, and its cost) and on
``alert_machine`` (migration 0009: the other machines of an alert, with their evidence or without
the change; 0022: a creep's span there, ``until``).  The *rules* (what is the same alert, what
fixes one, which status may follow which, which machines an alert reaches) live in
:mod:`regbench.detect.alerts`, which works through the protocols it declares, implemented here:
:class:`AlertTransaction` and :func:`run_in_transaction` (which :meth:`Store.run_alert_transaction`
offers).  The outbox that sends alerts to sinks lives in :mod:`regbench.notify.outbox`.  The
:class:`~regbench.model.Alert` record and the alert vocabulary are in :mod:`regbench.model`.

Every time is UTC without a time zone, as elsewhere in the store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..errors import NotFoundError, StoreError
from ..model import ALERT_KINDS, FAILURE_KIND, MAX_ROW_ID, SYSTEM_ACTOR, Alert, Confirmation, MachineEvidence, VersionInfo
from . import schema as t
from .schema import Database
from .tx import again_on_conflict, schema_key, write_transaction

R = TypeVar("R")


#: What an event of an alert's history is: it set the alert's ``status`` (creation, triage,
#: ``fixed``), or it is a ``note`` of what detection learned of the alert without changing its
#: status (another machine's evidence, another method, a narrower interval, machines measured
#: without the change, held or raised, which alert it restores).
EVENT_KINDS = ("status", "note")


@dataclass(frozen=True)
class AlertEvent:
    """One step of an alert's history: the status the alert had after it, who did it, when and
    why, and its ``kind`` (:data:`EVENT_KINDS`): a ``note`` keeps the status it found."""

    alert_id: int
    status: str
    who: str
    at: datetime
    why: str | None
    kind: str = "status"


@dataclass(frozen=True)
class Delivery:
    """The delivery of one alert to one sink (at most one row per alert and sink).

    ``state`` is ``pending`` while an attempt is in flight (``next_attempt_at`` is then when that
    claim expires), ``failed`` after a failed attempt (``next_attempt_at`` is when it may be tried
    again) or ``sent``.  ``attempts`` counts the notify calls that tried it.
    """

    alert_id: int
    sink: str
    state: str
    attempts: int
    last_error: str | None
    next_attempt_at: datetime | None
    sent_at: datetime | None


# ------------------------------------------------------------------------------------ reading
#: The columns of :class:`~regbench.model.Confirmation`, as named in the ``confirmation`` table.
_CONFIRMATION_FIELDS = tuple(f.name for f in dataclasses.fields(Confirmation))


def _alert_query() -> sa.Select:
    v, p, f = t.version.alias("v"), t.version.alias("p"), t.version.alias("f")
    a, r, k = t.alert, t.alert.alias("r"), t.confirmation
    return (sa.select(a.c.id, a.c.uid, t.benchmark.c.name.label("benchmark"), t.config.c.name.label("config"),
                      t.machine.c.name.label("machine"), t.benchmark.c.unit, t.benchmark.c.direction,
                      v.c.name.label("version"), p.c.name.label("previous"), a.c.kind, a.c.change, a.c.ci_low,
                      a.c.ci_high, a.c.p_value, a.c.methods, a.c.status, f.c.name.label("fixed_by"),
                      a.c.fixed_by_alert_id, a.c.created_at, a.c.updated_at, a.c.hold_machines, a.c.error,
                      a.c.culprit, a.c.bisection, a.c.until,
                      r.c.id.label("restores"),
                      *(k.c[name].label(f"confirmation_{name}") for name in _CONFIRMATION_FIELDS))
            .select_from(a)
            .join(t.benchmark, t.benchmark.c.id == a.c.benchmark_id)
            .join(t.config, t.config.c.id == a.c.config_id)
            .join(t.machine, t.machine.c.id == a.c.machine_id)
            .join(v, v.c.id == a.c.version_id)
            .join(p, p.c.id == a.c.previous_id)
            .outerjoin(f, f.c.id == a.c.fixed_by_id)
            # an improvement fixes at most one alert, once (regbench.detect.alerts): at most one row
            .outerjoin(r, r.c.fixed_by_alert_id == a.c.id)
            # an alert is confirmed at most once (uq_confirmation_alert): at most one row
            .outerjoin(k, k.c.alert_id == a.c.id)
            .order_by(a.c.id))


def _confirmation(m, prefix: str = "") -> Confirmation:
    return Confirmation(**{name: m[prefix + name] for name in _CONFIRMATION_FIELDS})


def _alert(row) -> Alert:
    m = row._mapping
    confirmed = m["confirmation_status"] is not None
    # A failure has no change: its required column holds 0 (migration 0015), which is not a change of 0%.
    change = None if m["kind"] == FAILURE_KIND else m["change"]
    return Alert(id=m["id"], uid=m["uid"], benchmark=m["benchmark"], config=m["config"], machine=m["machine"],
                 unit=m["unit"], direction=m["direction"], version=m["version"], previous=m["previous"],
                 kind=m["kind"], change=change, ci_low=m["ci_low"], ci_high=m["ci_high"],
                 p_value=m["p_value"], methods=tuple(m["methods"] or ()), status=m["status"],
                 fixed_by=m["fixed_by"], fixed_by_alert=m["fixed_by_alert_id"], created_at=m["created_at"],
                 updated_at=m["updated_at"], restores=m["restores"],
                 confirmation=_confirmation(m, "confirmation_") if confirmed else None,
                 hold_machines=m["hold_machines"], error=m["error"], culprit=m["culprit"], bisection=m["bisection"],
                 until=m["until"])


#: Alert ids per query of their machines (far below any database's limit of bound parameters).
_CHUNK = 500


def _with_machines(conn: Connection, alerts: list[Alert]) -> list[Alert]:
    """The alerts with their other machines (``alert_machine``): evidence and unchanged ones."""
    if not alerts:
        return alerts
    am, v, p = t.alert_machine, t.version.alias("v"), t.version.alias("p")
    q = (sa.select(am, t.machine.c.name.label("machine"), v.c.name.label("version"), p.c.name.label("previous"))
         .select_from(am)
         .join(t.machine, t.machine.c.id == am.c.machine_id)
         .outerjoin(v, v.c.id == am.c.version_id)
         .outerjoin(p, p.c.id == am.c.previous_id)
         .order_by(am.c.alert_id, am.c.id))
    evidence: dict[int, list[MachineEvidence]] = {}
    unchanged: dict[int, list[str]] = {}
    ids = [a.id for a in alerts]
    for k in range(0, len(ids), _CHUNK):
        for r in conn.execute(q.where(am.c.alert_id.in_(ids[k:k + _CHUNK]))):
            if r.changed:
                evidence.setdefault(r.alert_id, []).append(MachineEvidence(
                    r.machine, r.version, r.previous, r.change, r.ci_low, r.ci_high, r.p_value,
                    tuple(r.methods or ()), r.until))
            else:
                unchanged.setdefault(r.alert_id, []).append(r.machine)
    return [dataclasses.replace(a, also_on=tuple(evidence.get(a.id, ())),
                                unchanged_on=tuple(sorted(unchanged.get(a.id, ()))))
            if a.id in evidence or a.id in unchanged else a for a in alerts]


def list_alerts(store: Database, *, status: str | Iterable[str] | None = None, benchmark: str | None = None,
                ids: Iterable[int] | None = None) -> list[Alert]:
    """Stored alerts, oldest first, optionally only some statuses, one benchmark or some ids."""
    q = _alert_query()
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        q = q.where(t.alert.c.status.in_(statuses))
    if benchmark is not None:
        q = q.where(t.benchmark.c.name == benchmark)
    if ids is not None:
        q = q.where(t.alert.c.id.in_(_row_ids(ids)))
    with store.engine.connect() as conn:
        return _with_machines(conn, [_alert(r) for r in conn.execute(q)])


def _row_ids(ids: Iterable[int]) -> list[int]:
    """``ids`` that a row can have (:data:`~regbench.model.MAX_ROW_ID`): the others name no alert."""
    return [int(i) for i in ids if 0 < int(i) <= MAX_ROW_ID]


def get_alert(store: Database, alert_id: int) -> Alert:
    """One alert; :class:`NotFoundError` when there is no such id."""
    found = list_alerts(store, ids=[alert_id])
    if not found:
        raise NotFoundError(f"no alert #{alert_id} in the store")
    return found[0]


@dataclass(frozen=True)
class ConfirmationRecord:
    """One stored confirmation with the step it is about: the alert it became (``alert_id``), or
    None for a change it refuted or left inconclusive (which is not an alert)."""

    id: int
    alert_id: int | None
    benchmark: str
    config: str
    machine: str
    version: str
    previous: str
    kind: str
    method: str
    confirmation: Confirmation
    created_at: datetime


def list_confirmations(store: Database, *, status: str | Iterable[str] | None = None) -> list[ConfirmationRecord]:
    """Every stored confirmation, oldest first, optionally only some statuses."""
    k, v, p = t.confirmation, t.version.alias("v"), t.version.alias("p")
    q = (sa.select(k, t.benchmark.c.name.label("benchmark"), t.config.c.name.label("config"),
                   t.machine.c.name.label("machine"), v.c.name.label("version"), p.c.name.label("previous"))
         .select_from(k)
         .join(t.benchmark, t.benchmark.c.id == k.c.benchmark_id)
         .join(t.config, t.config.c.id == k.c.config_id)
         .join(t.machine, t.machine.c.id == k.c.machine_id)
         .join(v, v.c.id == k.c.version_id)
         .join(p, p.c.id == k.c.previous_id)
         .order_by(k.c.id))
    if status is not None:
        q = q.where(k.c.status.in_([status] if isinstance(status, str) else list(status)))
    with store.engine.connect() as conn:
        return [ConfirmationRecord(r.id, r.alert_id, r.benchmark, r.config, r.machine, r.version, r.previous,
                                   r.kind, r.method, _confirmation(r._mapping), r.created_at)
                for r in conn.execute(q)]


def alert_history(store: Database, alert_id: int) -> list[AlertEvent]:
    """Every event of an alert, oldest first, each with its kind (:data:`EVENT_KINDS`).

    The kind is read from the stored statuses, so that histories written before it was shown
    read the same: every event stores the status the alert had after it, a triage always changes
    it (setting the status an alert has is refused) and detection writes the status it found, so
    an event is a status change when it is the first or its status differs from the event
    written before it (in the order they were written).
    """
    q = sa.select(t.alert_event).where(t.alert_event.c.alert_id == alert_id).order_by(t.alert_event.c.id)
    with store.engine.connect() as conn:
        rows = conn.execute(q).all()
    events = [AlertEvent(r.alert_id, r.status, r.who, r.at, r.why,
                         "status" if k == 0 or r.status != rows[k - 1].status else "note")
              for k, r in enumerate(rows)]
    return sorted(events, key=lambda e: e.at)  # stable: written order among equal times


def deliveries(store: Database, *, alert_id: int | None = None, sink: str | None = None) -> list[Delivery]:
    """Delivery rows, by alert then sink."""
    d = t.alert_delivery
    q = sa.select(d).order_by(d.c.alert_id, d.c.sink)
    if alert_id is not None:
        q = q.where(d.c.alert_id == alert_id)
    if sink is not None:
        q = q.where(d.c.sink == sink)
    with store.engine.connect() as conn:
        return [Delivery(r.alert_id, r.sink, r.state, r.attempts, r.last_error, r.next_attempt_at, r.sent_at)
                for r in conn.execute(q)]


def _history(conn: Connection) -> list[VersionInfo]:
    """Every version in history order (as :meth:`Store.versions`)."""
    rows = conn.execute(sa.select(t.version)).all()
    return sorted((VersionInfo(name=r.name, id=r.id, commit=r.commit_sha, timestamp=r.timestamp,
                               timestamp_text=r.timestamp_text, generation=r.generation) for r in rows),
                  key=lambda v: v.history_key)


# ------------------------------------------------------------------- writing, in a transaction
class AlertTransaction:
    """The alert tables inside one open transaction (see :func:`run_in_transaction`).

    :mod:`regbench.detect.alerts` applies its rules through these methods only (its
    :class:`~regbench.detect.alerts.Transaction` protocol), so that every change of one detection
    (or one triage command) commits together or not at all.
    """

    def __init__(self, store: Database, conn: Connection):
        self.store = store
        self.conn = conn
        self._positions: dict[str, int] | None = None
        self._version_ids: dict[str, int] = {}

    # --- history
    def positions(self) -> dict[str, int]:
        """Version name -> its position in history order (as :meth:`Store.versions`)."""
        if self._positions is None:
            infos = _history(self.conn)
            self._positions = {v.name: k for k, v in enumerate(infos)}
            self._version_ids = {v.name: v.id for v in infos}
        return self._positions

    def position(self, version: str) -> int:
        try:
            return self.positions()[version]
        except KeyError:
            raise NotFoundError(f"no version named {version!r} in the store") from None

    def stored_order(self, benchmark: str, config: str, machine: str, version: str) -> int:
        """When the store first had a run of the series at the version, relative to every other
        run (that run's id; 0 when it has none).  Not when the version was first stored: another
        benchmark's or machine's job for the same commit stores it, on time, and the series' own
        runs there may come last."""
        q = (sa.select(sa.func.min(t.run.c.id))
             .where(t.run.c.benchmark_id == self._id(t.benchmark, benchmark, "benchmark"),
                    t.run.c.config_id == self._id(t.config, config, "configuration"),
                    t.run.c.machine_id == self._id(t.machine, machine, "machine"),
                    t.run.c.version_id == self._id(t.version, version, "version")))
        return int(self.conn.execute(q).scalar() or 0)

    def stored_since(self, benchmark: str, config: str, machine: str) -> str | None:
        """The version of the newest run ``machine`` stored after the series' newest run (by run
        id: the order the store received them), not of that run's campaign (its own job's others;
        for a run of no campaign, an import, not at its version); None when there is none, or
        when the series has no run."""
        r = t.run
        mid = self._id(t.machine, machine, "machine")
        last = self.conn.execute(
            sa.select(r.c.id, r.c.version_id, r.c.campaign_id)
            .where(r.c.benchmark_id == self._id(t.benchmark, benchmark, "benchmark"),
                   r.c.config_id == self._id(t.config, config, "configuration"), r.c.machine_id == mid)
            .order_by(r.c.id.desc()).limit(1)).first()
        if last is None:
            return None
        other_job = (r.c.version_id != last.version_id if last.campaign_id is None
                     else sa.or_(r.c.campaign_id.is_(None), r.c.campaign_id != last.campaign_id))
        q = (sa.select(t.version.c.name).select_from(r.join(t.version, t.version.c.id == r.c.version_id))
             .where(r.c.machine_id == mid, r.c.id > last.id, other_job)
             .order_by(r.c.id.desc()).limit(1))
        return self.conn.execute(q).scalar()

    def ran_after(self, benchmark: str, config: str, machine: str, when: datetime) -> bool:
        """Whether the series' newest run is of a campaign started after ``when`` (False for a
        run of no campaign, an import or a push, whose time of storing is not kept)."""
        r = t.run
        started = self.conn.execute(
            sa.select(t.campaign.c.started_at).select_from(r.join(t.campaign, t.campaign.c.id == r.c.campaign_id))
            .where(r.c.benchmark_id == self._id(t.benchmark, benchmark, "benchmark"),
                   r.c.config_id == self._id(t.config, config, "configuration"),
                   r.c.machine_id == self._id(t.machine, machine, "machine"))
            .order_by(r.c.id.desc()).limit(1)).scalar()
        return started is not None and started > when

    def _id(self, table: sa.Table, name: str, what: str) -> int:
        if table is t.version:
            self.positions()
            ident = self._version_ids.get(name)
        else:
            ident = self.conn.execute(sa.select(table.c.id).where(table.c.name == name)).scalar()
        if ident is None:
            raise NotFoundError(f"no {what} named {name!r} in the store")
        return ident

    # --- alerts
    def series_alerts(self, benchmark: str, config: str, machine: str) -> list[Alert]:
        """Every alert of one series (any status), oldest first."""
        q = _alert_query().where(t.benchmark.c.name == benchmark, t.config.c.name == config,
                                 t.machine.c.name == machine)
        return _with_machines(self.conn, [_alert(r) for r in self.conn.execute(q)])

    def config_alerts(self, benchmark: str, config: str) -> list[Alert]:
        """Every alert of one benchmark and configuration, on any machine (any status), oldest first.

        The transaction then holds the lock of their alerts until it ends (PostgreSQL: an
        advisory lock per benchmark and configuration; SQLite: the write transaction's own): two
        detections recording the same step on two machines at once would otherwise both create
        an alert, as no unique constraint spans machines.
        """
        if self.conn.dialect.name == "postgresql":
            self.conn.execute(sa.select(sa.func.pg_advisory_xact_lock(
                schema_key(self.conn, f"alerts:{benchmark}\0{config}"))))
        q = _alert_query().where(t.benchmark.c.name == benchmark, t.config.c.name == config)
        return _with_machines(self.conn, [_alert(r) for r in self.conn.execute(q)])

    def alerts(self, ids: Sequence[int]) -> list[Alert]:
        q = _alert_query().where(t.alert.c.id.in_(_row_ids(ids)))
        return _with_machines(self.conn, [_alert(r) for r in self.conn.execute(q)])

    def set_machine(self, alert_id: int, machine: str, evidence: MachineEvidence | None, *, now: datetime) -> None:
        """Record another machine of an alert: its evidence, or (None) that it measured the step
        without showing it; replaces what was recorded of that machine.  The alert is updated
        (``updated_at``)."""
        am = t.alert_machine
        mid = self._id(t.machine, machine, "machine")
        if evidence is None:
            values: dict = dict(changed=False, version_id=None, previous_id=None, change=None, ci_low=None,
                                ci_high=None, p_value=None, methods=None, until=None)
        else:
            values = dict(changed=True, version_id=self._id(t.version, evidence.version, "version"),
                          previous_id=self._id(t.version, evidence.previous, "version"), change=evidence.change,
                          ci_low=evidence.ci_low, ci_high=evidence.ci_high, p_value=evidence.p_value,
                          methods=sorted(set(evidence.methods)), until=evidence.until)
        done = self.conn.execute(am.update().where(am.c.alert_id == alert_id, am.c.machine_id == mid)
                                 .values(updated_at=now, **values)).rowcount
        if not done:
            self.conn.execute(am.insert().values(alert_id=alert_id, machine_id=mid, created_at=now, updated_at=now,
                                                 **values))
        self.update(alert_id, now=now)

    def drop_machine(self, alert_id: int, machine: str, *, now: datetime) -> None:
        """Forget what was recorded of one other machine of an alert (and update the alert)."""
        am = t.alert_machine
        mid = self._id(t.machine, machine, "machine")
        self.conn.execute(am.delete().where(am.c.alert_id == alert_id, am.c.machine_id == mid))
        self.update(alert_id, now=now)

    def create(self, *, benchmark: str, config: str, machine: str, version: str, previous: str, kind: str,
               change: float | None, ci_low: float | None, ci_high: float | None, p_value: float | None,
               methods: Sequence[str], now: datetime, why: str, error: str | None = None,
               until: str | None = None) -> Alert:
        """Insert a ``new`` alert and its first event (a failure's ``change`` is None: stored as 0)."""
        key = self.conn.execute(t.alert.insert().values(
            uid=uuid.uuid4().hex,
            benchmark_id=self._id(t.benchmark, benchmark, "benchmark"),
            config_id=self._id(t.config, config, "configuration"),
            machine_id=self._id(t.machine, machine, "machine"),
            version_id=self._id(t.version, version, "version"),
            previous_id=self._id(t.version, previous, "version"),
            kind=kind, change=0.0 if change is None else change, ci_low=ci_low, ci_high=ci_high, p_value=p_value,
            methods=sorted(set(methods)), status="new", created_at=now, updated_at=now, error=error,
            until=until,
        )).inserted_primary_key
        if key is None:  # not for an INSERT of one row, on any database regbench supports
            raise StoreError("the database did not return the key of the new alert")
        ident = key[0]
        self.add_event(ident, "new", who=SYSTEM_ACTOR, why=why, now=now)
        return self.alerts([ident])[0]

    def update(self, alert_id: int, *, now: datetime, fixed_by: str | None = None, clear_fix: bool = False,
               step: tuple[str, str] | None = None, **values) -> None:
        """Change columns of one alert (``fixed_by`` by version name, ``step`` its ``(previous,
        version)`` by name) and its ``updated_at``."""
        if "methods" in values:
            values["methods"] = sorted(set(values["methods"]))
        if fixed_by is not None:
            values["fixed_by_id"] = self._id(t.version, fixed_by, "version")
        if step is not None:
            values["previous_id"], values["version_id"] = (self._id(t.version, name, "version") for name in step)
        if clear_fix:
            values.update(fixed_by_id=None, fixed_by_alert_id=None)
        self.conn.execute(t.alert.update().where(t.alert.c.id == alert_id).values(updated_at=now, **values))

    def add_event(self, alert_id: int, status: str, *, who: str, why: str | None, now: datetime) -> None:
        self.conn.execute(t.alert_event.insert().values(alert_id=alert_id, status=status, who=who, at=now,
                                                        why=why))

    def reopened_by_hand(self, ids: Sequence[int]) -> set[int]:
        """The alerts of ``ids`` that a person took out of ``fixed`` after detection last fixed
        them: in their history (in the order it was written), the first status change after the
        last change to ``fixed`` was not written by detection (:data:`~regbench.model.SYSTEM_ACTOR`)."""
        e = t.alert_event
        found: set[int] = set()
        ids = list(ids)
        for k in range(0, len(ids), _CHUNK):
            rows = self.conn.execute(sa.select(e.c.alert_id, e.c.status, e.c.who)
                                     .where(e.c.alert_id.in_(ids[k:k + _CHUNK]))
                                     .order_by(e.c.alert_id, e.c.id)).all()
            last: dict[int, str] = {}  # per alert, the status of its event before
            reopener: dict[int, str | None] = {}  # per alert once fixed, who took it out of fixed
            for r in rows:
                before = last.get(r.alert_id)
                if r.status != before:  # a status change, not a note
                    if r.status == "fixed":
                        reopener[r.alert_id] = None
                    elif before == "fixed":
                        reopener[r.alert_id] = r.who
                last[r.alert_id] = r.status
            found |= {i for i, who in reopener.items() if who is not None and who != SYSTEM_ACTOR}
        return found

    def add_confirmation(self, confirmation: Confirmation, *, benchmark: str, config: str, machine: str,
                         version: str, previous: str, kind: str, method: str, alert_id: int | None,
                         now: datetime) -> None:
        """Record what confirmation found of one change, linked to the alert it became (or None)."""
        values = {name: getattr(confirmation, name) for name in _CONFIRMATION_FIELDS}
        for name in ("change", "cs_low", "cs_high"):  # NaN is not portable: "unknown" is NULL
            if values[name] is not None and not math.isfinite(values[name]):
                values[name] = None
        self.conn.execute(t.confirmation.insert().values(
            alert_id=alert_id,
            benchmark_id=self._id(t.benchmark, benchmark, "benchmark"),
            config_id=self._id(t.config, config, "configuration"),
            machine_id=self._id(t.machine, machine, "machine"),
            version_id=self._id(t.version, version, "version"),
            previous_id=self._id(t.version, previous, "version"),
            kind=kind, method=method, created_at=now, **values))


@contextlib.contextmanager
def alert_transaction(store: Database) -> Iterator[AlertTransaction]:
    """One write transaction over the alert tables: committed on success, rolled back on any
    error, run once (:func:`run_in_transaction` runs its work again on a conflict)."""
    with write_transaction(store.engine) as conn:
        yield AlertTransaction(store, conn)


def run_in_transaction(store: Database, work: Callable[[AlertTransaction], R], *, attempts: int = 3) -> R:
    """``work(tx)`` in one write transaction (:meth:`Store.write`, which waits for other writers),
    run again from scratch when a unique constraint fails.

    Two detections at once may both decide to create the same alert; the unique constraint on
    the step makes the later commit fail, and running its work again (now seeing the other's
    alert) merges instead of duplicating.
    """
    return again_on_conflict(lambda: store.write(lambda conn: work(AlertTransaction(store, conn))),
                             what="alerts", attempts=attempts)


# --------------------------------------------------------------------- deliveries (the outbox)
def with_tags(store, alerts: Sequence[Alert]) -> list[Alert]:
    """``alerts`` with the tags of their versions (``version_tags``, ``previous_tags``: each
    version's aliases of kind ``tag``, by name), so that what tells them names the release as well
    as the commit; one query, none when there is no alert."""
    alerts = list(alerts)
    if not alerts:
        return alerts
    tags = {name: tuple(sorted(a.name for a in aliases if a.kind == "tag")) for name, aliases in store.aliases().items()}
    return [dataclasses.replace(a, version_tags=tags.get(a.version, ()), previous_tags=tags.get(a.previous, ()))
            for a in alerts]


def due_alerts(store: Database, sink: str, *, now: datetime, kinds: Sequence[str] = ALERT_KINDS,
               ) -> tuple[list[Alert], list[Alert]]:
    """Alerts to send to ``sink`` now, and those whose attempt is in flight.

    Due: not held (waiting for more machines), of one of ``kinds``, status ``new`` or *undone
    before it was told* (``fixed`` by an alert that is still ``new``, and never triaged by a
    person: a regression and the improvement that undid it found in one detection, or in two
    before any notify), and either
    never tried on this sink, or failed with ``next_attempt_at`` reached, or claimed by an
    attempt whose claim has expired (a notify that died mid-send).  Never-tried alerts come
    first, then retries, each in history order (of their versions, then oldest first): one
    alert a sink keeps refusing does not hold back the others.  An undone alert due here goes
    right before the alert that undid it, so that "restores alert #N" never names an alert the
    sink has not been given: on its first try and on its first retry (a sink that was down for
    one call gets the pair in order), not after it failed twice (a sink that refuses it would
    defer everything after it on every call).
    """
    d = t.alert_delivery
    with store.engine.connect() as conn:
        rows = {r.alert_id: r for r in conn.execute(sa.select(d).where(d.c.sink == sink))}
    alerts = list_alerts(store, status="new")
    undone = [a.restores for a in alerts if a.restores is not None]
    if undone:  # a person who triaged the improvement took the pair out of the outbox
        e = t.alert_event
        with store.engine.connect() as conn:  # and one who triaged the undone alert knows of it
            known = set(conn.execute(sa.select(e.c.alert_id).distinct()
                                     .where(e.c.alert_id.in_(undone), e.c.who != SYSTEM_ACTOR)).scalars())
        alerts += list_alerts(store, status="fixed", ids=[i for i in undone if i not in known])
    if len(alerts) > 1:
        with store.engine.connect() as conn:
            position = {v.name: k for k, v in enumerate(_history(conn))}
        alerts.sort(key=lambda a: (position.get(a.version, -1), a.id))
    fresh, retry, flight = [], [], []
    for a in alerts:
        if a.kind not in kinds or a.held:
            continue
        row = rows.get(a.id)
        if row is None:
            fresh.append(a)
        elif row.state == "sent":
            continue
        elif row.next_attempt_at is None or row.next_attempt_at <= now:
            retry.append(a)
        elif row.state == "pending":
            flight.append(a)
    refused = {a.id for a in retry if rows[a.id].attempts > 1}
    return _undone_first(fresh + retry, refused), flight


def _undone_first(alerts: list[Alert], refused: set[int]) -> list[Alert]:
    """``alerts`` in their order, except that an undone alert that comes after the alert that
    undid it (a retry of the undone alert, the improvement never tried) moves right before it,
    unless it is one of ``refused`` (tried more than once): then it stays among the retries."""
    out: list[Alert] = []
    for a in alerts:
        at = (next((k for k, b in enumerate(out) if b.id == a.fixed_by_alert), None)
              if a.status == "fixed" and a.id not in refused else None)
        out.insert(len(out) if at is None else at, a)
    return out


def claim(store: Database, alert_id: int, sink: str, *, now: datetime, lease: timedelta) -> int:
    """Take the delivery of one alert to one sink for this attempt: the attempt's number (1, 2,
    ...), or 0 when it is not to be sent now (sent already, claimed by someone else, not due).

    The claim is committed before anything is sent: a second notify running at the same time
    skips the alert (the unique (alert, sink) row, or the compare-and-set on its state), and a
    notify that dies mid-send leaves a ``pending`` row that becomes due again once ``lease`` has
    passed.
    """
    d = t.alert_delivery
    until = now + lease

    def take(conn: Connection) -> int:
        row = conn.execute(sa.select(d).where(d.c.alert_id == alert_id, d.c.sink == sink)).first()
        if row is None:
            conn.execute(d.insert().values(alert_id=alert_id, sink=sink, state="pending", attempts=1,
                                           next_attempt_at=until))
            return 1
        if row.state == "sent" or (row.next_attempt_at is not None and row.next_attempt_at > now):
            return 0
        taken = conn.execute(
            d.update().where(d.c.id == row.id, d.c.state == row.state, d.c.attempts == row.attempts)
            .values(state="pending", attempts=row.attempts + 1, next_attempt_at=until)).rowcount
        return row.attempts + 1 if taken == 1 else 0

    try:
        return store.write(take)
    except sa.exc.IntegrityError:  # another notify inserted the row first: it owns the attempt
        return 0


def mark_sent(store: Database, alert_ids: Sequence[int], sink: str, *, now: datetime) -> None:
    """Record that the sink accepted these alerts (only rows this attempt claimed)."""
    d = t.alert_delivery
    store.write(lambda conn: conn.execute(
        d.update().where(d.c.alert_id.in_(list(alert_ids)), d.c.sink == sink, d.c.state == "pending")
        .values(state="sent", sent_at=now, last_error=None, next_attempt_at=None)))


def mark_failed(store: Database, alert_ids: Sequence[int], sink: str, *, error: str, retry_at: datetime) -> None:
    """Record a failed attempt; the alerts are due again from ``retry_at``."""
    d = t.alert_delivery
    store.write(lambda conn: conn.execute(
        d.update().where(d.c.alert_id.in_(list(alert_ids)), d.c.sink == sink, d.c.state == "pending")
        .values(state="failed", last_error=error[:2000], next_attempt_at=retry_at)))
