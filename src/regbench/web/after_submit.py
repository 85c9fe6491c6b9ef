"""Detection after each submission: ``[serve] detect = true`` (docs/api.md).

A CI machine pushes its runs (``regbench push``, ``POST /api/v1/runs``), and the server checks
the new versions at once, as ``regbench detect --incremental --notify`` would on the server's
machine: the alerts are on the dashboard and told to the ``[[notify]]`` sinks without a cron
job or a second command after each push (seed 001 fig. 1: the results repository hands new
results to the analysis, which hands changes to the notification repository).

The pass runs in one background thread of the server, after the submission is answered (its
time is not the client's), one pass at a time: submissions that arrive while a pass runs are
checked together by the next one.  It runs in the server's process, whose imports are done, so a
pass costs the detection's work only, not a command's start-up (benchmarks/bench_detect.py).
A failed pass is logged and kept in :meth:`DetectAfterSubmit.status`; it never stops the server.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import collapsed

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..store import Store

log = logging.getLogger("regbench.web.detect")


@dataclass(frozen=True)
class DetectionPass:
    """One detection pass after submissions.

    Attributes
    ----------
    started : str
        When it started (ISO 8601, UTC).
    seconds : float
        How long it took, notification included.
    submissions : int
        The submissions it checked (those stored since the pass before).
    series : int
        Series it examined (an incremental pass: those with new versions).
    changes : int
        Changes it found.
    new_alerts : int
        Alerts it opened.
    notified : int or None
        Alerts sent to the sinks; None when it did not notify.
    error : str or None
        Why it failed, on one line; None when it did not.
    history : str or None
        What history the series were read as (``History: versions on the first-parent line of
        main (12 off it left out), ...``): a server whose ``[project] repo`` lacks the pushed
        commits leaves them out, and this says so.
    """

    started: str
    seconds: float
    submissions: int
    series: int = 0
    changes: int = 0
    new_alerts: int = 0
    notified: int | None = None
    error: str | None = None
    history: str | None = None


class DetectAfterSubmit:
    """Runs ``detect --incremental`` (and notifies) in a background thread after submissions.

    Parameters
    ----------
    store : callable
        The server's store (opened on first use).
    config : ProjectConfig or None
        The project's configuration: the branch whose first-parent line is the history, and the
        ``[[notify]]`` sinks.  None: histories in time order, no sinks.
    notify : bool
        Tell the sinks of ``config`` after each pass (``[serve] notify``); ignored without sinks.
    method : str
        The detector (an incremental one).
    """

    def __init__(self, store: Callable[[], Store], config: ProjectConfig | None, *, notify: bool = True,
                 method: str = "auto"):
        self._store = store
        self._config = config
        self.notify = bool(notify and config is not None and config.notify)
        self.method = method
        self._cond = threading.Condition()
        self._pending = 0
        self._running = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._passes = 0
        self._last: DetectionPass | None = None

    def schedule(self) -> None:
        """Check the versions of a submission just stored (at the next pass)."""
        with self._cond:
            if self._closed:
                return
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="regbench-detect", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def status(self) -> dict[str, Any]:
        """What ``GET /api/v1/detection`` answers: enabled, running, pending, passes, the last pass."""
        with self._cond:
            return {"enabled": True, "method": self.method, "notify": self.notify, "running": self._running,
                    "pending": self._pending, "passes": self._passes,
                    "last": asdict(self._last) if self._last is not None else None}

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no pass runs or waits; False when ``timeout`` seconds were not enough."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    async def wait_idle_async(self, timeout: float, *, poll: float = 0.05) -> bool:
        """:meth:`wait_idle` for the event loop: it looks every ``poll`` seconds and ties up no
        thread, so requests that wait (``GET /api/v1/detection?wait=``) cannot starve the
        server's thread pool, which serves every other request."""
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                if not (self._pending or self._running):
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            await asyncio.sleep(min(poll, left))

    def close(self, timeout: float = 5.0) -> bool:
        """Stop after the pass that runs, if any, waiting ``timeout`` seconds at most for it (the
        server is stopping); waiting ones are dropped: the next ``detect --incremental`` checks
        their versions.  False when a pass still runs after ``timeout``: it is left to end with the
        process (its thread is a daemon; each of its writes is a transaction, so nothing is left
        half-written, and the next pass checks its versions again)."""
        with self._cond:
            self._closed = True
            self._pending = 0
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("a detection pass still runs after %.0f s; the server stops without it "
                            "(the next pass checks its versions)", timeout)
                return False
        return True

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                submissions, self._pending, self._running = self._pending, 0, True
            record = self._pass(submissions)
            with self._cond:
                self._running = False
                self._passes += 1
                self._last = record
                self._cond.notify_all()

    def _pass(self, submissions: int) -> DetectionPass:
        from ..detect.driver import DEFAULT_FDR
        from ..pipeline import detect_and_alert

        started = datetime.now(UTC)
        t0 = time.perf_counter()
        stamp = started.isoformat(timespec="seconds")
        try:
            outcome = detect_and_alert(self._store(), self._config, method=self.method, fdr=DEFAULT_FDR,
                                       incremental=True, notify=self.notify)
        except Exception as exc:  # noqa: BLE001 - a failed pass is reported, the server goes on
            message = collapsed(f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))
            log.error("detection after %d submission(s) failed: %s", submissions, message)
            return DetectionPass(stamp, time.perf_counter() - t0, submissions, error=message)
        seconds = time.perf_counter() - t0
        new = len(outcome.alerts.created) if outcome.alerts is not None else 0
        notified = outcome.notified.sent if outcome.notified is not None else None
        # Warned when the history left pushed versions out (a [project] repo without their commits):
        # the pass then checks nothing, which the count of series alone would not say.
        level = logging.WARNING if outcome.history and " off it left out" in outcome.history else logging.INFO
        log.log(level, "detection after %d submission(s): %d series, %d change(s), %d new alert(s) in %.2f s. %s",
                submissions, outcome.detection.n_series, len(outcome.detection.changes), new, seconds,
                outcome.history or "")
        return DetectionPass(stamp, seconds, submissions, series=outcome.detection.n_series,
                             changes=len(outcome.detection.changes), new_alerts=new, notified=notified,
                             history=outcome.history)
