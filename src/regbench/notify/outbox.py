"""The outbox: send every new alert to every sink once, and remember what was sent.

Rules (the store's ``alert_delivery`` table holds one row per alert and sink):

* An alert is sent while its status is ``new`` and it is not held (seen on fewer machines than
  ``[alerts] require_machines``; it is sent once enough machines show it): a person who already
  acknowledged it, marked it invalid or expected makes telling it pointless.  An alert that a
  later change fixed before it was told (a regression and the improvement that undid it found by
  one detection, as when a whole history arrives at once) is sent too, once, while the alert
  that fixed it is ``new`` and unless a person triaged it: right before that alert, its headline saying ``already undone at
  VERSION by alert #N``, so that the improvement's ``restores alert #M`` never names an alert
  nobody was told of.  Alerts go out in history order.  Status changes are not sent (who made
  them knows; a fix is told by the restoring alert, which is new).  A sink gets only the
  ``kinds`` it is configured for.
* A delivery is *claimed* (row ``pending``, committed) before the sink is called, and marked
  ``sent`` in its own commit right after the sink returns; a failure marks it ``failed`` with
  the error, and it is tried again by a later call (from ``retry_delay(attempts)`` after the
  failure: at once by default, since each call is itself the schedule: cron, CI).  After a sink
  fails, the rest of its alerts wait for the next call: a sink that is down costs one attempt
  (with its own retries) per call, not one per alert.  Alerts never tried come before retries,
  so one alert a receiver keeps refusing does not hold back the others; the one exception, an
  undone regression retried right before the improvement that undid it, keeps that place for its
  first retry only (a sink down for one call still gets the pair in order).
* A sent delivery is never sent again to that sink: only rows not ``sent`` are ever claimed,
  and the claim is a compare-and-set, so two notifies running at once do not both send.

What remains (said plainly): the sink's acceptance and the ``sent`` commit are two steps.  If the
process dies between them (or the network loses a response that the receiver did get), the row
stays ``pending`` (or becomes ``failed``) and the alert is sent again, after ``lease`` for a
claim left behind.  Alerts are therefore delivered *at least once*, and more than once only in
that window; every delivery carries the alert's key (``Idempotency-Key`` and ``X-Regbench-Alert``
headers and payload field for webhooks, the ``Message-ID`` of e-mails) so that a receiver can
drop the duplicate.  Nothing is lost: an alert leaves the outbox only by a ``sent`` commit or a
status change by a person.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import as_utc
from ..store import Store
from ..store.alerts import claim, due_alerts, mark_failed, mark_sent, with_tags
from .base import Sink, one_line

#: How long a claimed delivery is left to its notify before another call may send it again.
DEFAULT_LEASE = timedelta(minutes=10)


def no_delay(attempts: int) -> timedelta:
    """Failed deliveries are due again at the next call."""
    return timedelta(0)


@dataclass(frozen=True)
class SinkReport:
    """What one sink did in one :func:`notify_pending` call (alert ids).

    ``deferred`` were due but not tried because the sink had just failed; ``in_flight`` are
    claimed by an attempt that has not finished (another notify running, or one that died: they
    are sent again once its claim expires).
    """

    sink: str
    type: str
    sent: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    error: str | None = None
    deferred: tuple[int, ...] = ()
    in_flight: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class NotifyReport:
    """What :func:`notify_pending` did, per sink in the order given."""

    sinks: tuple[SinkReport, ...] = ()

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.sinks)

    @property
    def sent(self) -> int:
        return sum(len(s.sent) for s in self.sinks)

    @property
    def failed(self) -> int:
        return sum(len(s.failed) for s in self.sinks)


def notify_pending(store: Store, sinks: Sequence[Sink], *, now: datetime | None = None,
                   lease: timedelta = DEFAULT_LEASE,
                   retry_delay: Callable[[int], timedelta] = no_delay) -> NotifyReport:
    """Send every alert not yet sent to each sink, and record sent/failed per (alert, sink).

    Parameters
    ----------
    store : Store
    sinks : sequence of Sink
        Each with a unique :attr:`~regbench.notify.Sink.name` (the key of its deliveries).
    now : datetime, optional
        The current time (UTC), injectable for tests.
    lease : timedelta
        How long a claim protects an attempt in flight (longer than a sink's worst case).
    retry_delay : callable
        ``retry_delay(attempts)`` -> how long after a failure the delivery is due again.

    Returns
    -------
    NotifyReport
        Sinks that failed carry their one-line error; nothing is raised for them.

    References
    ----------
    Seed 001 fig. 1 (notification repository); the rules are in this module's docstring.
    """
    names = [s.name for s in sinks]
    if len(set(names)) != len(names):
        raise ValueError(f"sink names must be unique, got {names}")
    now = as_utc(now)
    return NotifyReport(tuple(_notify_one(store, sink, now=now, lease=lease, retry_delay=retry_delay)
                              for sink in sinks))


def _notify_one(store: Store, sink: Sink, *, now: datetime, lease: timedelta,
                retry_delay: Callable[[int], timedelta]) -> SinkReport:
    due, flight = due_alerts(store, sink.name, now=now, kinds=sink.kinds)
    due = with_tags(store, due)  # a message names the release (v0.4.3) beside the commit
    sent: list[int] = []
    failed: list[int] = []
    deferred: list[int] = []
    error = None
    batches = [[a] for a in due] if sink.per_alert else [due]
    for batch in batches:
        if error is not None:
            deferred.extend(a.id for a in batch)
            continue
        attempts = {a.id: claim(store, a.id, sink.name, now=now, lease=lease) for a in batch}
        mine = [a for a in batch if attempts[a.id]]
        if batch and not mine:
            continue  # another notify has them
        ids = [a.id for a in mine]
        try:
            sink.send(mine, now=now)
        except BaseException as exc:
            # Unknown whether it was delivered: failed, so it is tried again (at least once).
            error = one_line(exc)
            retry_at = now + retry_delay(max((attempts[i] for i in ids), default=1))
            mark_failed(store, ids, sink.name, error=error, retry_at=retry_at)
            failed.extend(ids)
            if not isinstance(exc, Exception):
                raise  # KeyboardInterrupt, SystemExit: recorded, then let through
            continue
        mark_sent(store, ids, sink.name, now=now)
        sent.extend(ids)
    return SinkReport(sink=sink.name, type=sink.type, sent=tuple(sent), failed=tuple(failed), error=error,
                      deferred=tuple(deferred), in_flight=tuple(a.id for a in flight))

