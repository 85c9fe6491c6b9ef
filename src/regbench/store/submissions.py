"""Submissions through the HTTP API (table ``submission``, migration 0010): idempotent retries.

A client names each submission with an id of its own (``regbench push`` derives it from what it
sends).  The id is recorded in the transaction that stores the submission's runs
(:meth:`regbench.store.Store.add_runs`'s ``within``), with the SHA-256 of what was sent: either
both are stored or neither, so a retry after a crash or a lost answer stores the runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import schema as t
from .schema import Database


@dataclass(frozen=True)
class Submission:
    """One accepted submission, as recorded (what a retry with the same id is answered with)."""

    submission_id: str
    body_sha256: str
    format: str
    machine: str
    runs: int
    samples: int
    created_at: datetime
    token_id: int | None = None


class AlreadySubmitted(Exception):
    """Raised inside a write transaction when its submission id is already recorded: the
    transaction is rolled back and the caller answers with :attr:`submission`."""

    def __init__(self, submission: Submission):
        super().__init__(submission.submission_id)
        self.submission = submission


def _submission(row) -> Submission:
    return Submission(row.submission_id, row.body_sha256, row.format, row.machine, row.runs, row.samples,
                      row.created_at, row.token_id)


def _find(conn: Connection, submission_id: str) -> Submission | None:
    row = conn.execute(sa.select(t.submission).where(t.submission.c.submission_id == submission_id)).first()
    return None if row is None else _submission(row)


def find_submission(store: Database, submission_id: str) -> Submission | None:
    """The recorded submission with this id, or None."""
    with store.engine.connect() as conn:
        return _find(conn, submission_id)


def count_submissions(store: Database) -> int:
    """How many submissions are recorded."""
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(t.submission)).scalar_one())


def recorder(submission: Submission) -> Callable[[Connection], None]:
    """A ``within`` hook for :meth:`~regbench.store.Store.add_runs`: records ``submission`` in the
    runs' transaction, or raises :class:`AlreadySubmitted` (rolling it back) when its id is
    already recorded.  Two writers with one id at once: the unique key makes the second one's
    insert fail, and the store's retry of the transaction then finds the first one's row."""

    def record(conn: Connection) -> None:
        found = _find(conn, submission.submission_id)
        if found is not None:
            raise AlreadySubmitted(found)
        conn.execute(t.submission.insert().values(
            submission_id=submission.submission_id, body_sha256=submission.body_sha256, token_id=submission.token_id,
            format=submission.format, machine=submission.machine, runs=submission.runs, samples=submission.samples,
            created_at=submission.created_at))

    return record
