"""Write transactions that hold up when several processes write one store at once.

Two campaigns, an import beside a campaign, two ``notify`` calls: every writer of a store may
have company.  Four mechanisms make that safe, and every write of :mod:`regbench.store` goes
through them:

- **Write transactions** (:func:`write`).  On SQLite a write transaction starts with ``BEGIN
  IMMEDIATE``, which takes the database's write lock first: a transaction that read first and
  wrote later would otherwise fail at once ("database is locked", no busy wait) whenever another
  writer committed in between.  When the lock stays taken past SQLite's busy timeout, or
  PostgreSQL reports a deadlock or a serialization failure, the whole transaction runs again from
  scratch, after an exponential backoff with jitter, until ``patience`` seconds have passed:
  a writer holding the lock for a while delays a campaign, and never costs it a finished run.
- **Named rows created once** (:func:`insert_missing`): ``INSERT ... ON CONFLICT DO NOTHING``,
  then the caller reads the row back, so two writers creating the same machine, version or
  benchmark both get the one row.
- **Appending writers take turns** (:func:`lock_appends`): writers that number their runs after
  the stored ones (a tool import of one version) hold an advisory lock on PostgreSQL, so each
  sees the indices the last one took instead of failing on the unique key.
- **One schema migration at a time** (:func:`lock_schema`): inside the write transaction that
  migrates, ``pg_advisory_xact_lock`` on PostgreSQL (SQLite's ``BEGIN IMMEDIATE`` already is the
  lock); the second process then finds the schema made and has nothing to do.

SQLite needs :func:`sqlite_transactions` on its engine: the ``sqlite3`` module otherwise starts
transactions itself, late and never for DDL, so neither ``BEGIN IMMEDIATE`` nor a transactional
migration would be possible (SQLAlchemy's documented recipe for pysqlite, "Serializable
isolation / Savepoints / Transactional DDL").
"""

from __future__ import annotations

import contextlib
import random
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..errors import StoreError, collapsed

R = TypeVar("R")

#: The execution option that marks a connection's transactions as writes (``BEGIN IMMEDIATE``).
WRITE_OPTION = "regbench_write"

#: Seconds a write waits, in all, for other writers before it gives up (a campaign's run is then
#: lost, so this is long: another process holding the lock for minutes is a hung process).
DEFAULT_PATIENCE = 600.0

#: SQLite's primary result codes for a database (or a table) held by another connection.
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
#: PostgreSQL's SQLSTATEs after which a transaction run again may succeed.
_PG_RETRY = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected


def sqlite_transactions(engine: Engine) -> None:
    """Let SQLAlchemy, not ``sqlite3``, start SQLite transactions: ``BEGIN IMMEDIATE`` on the
    connections of :func:`write`, a plain (deferred) ``BEGIN`` for reads."""

    @sa.event.listens_for(engine, "connect")
    def _no_implicit_begin(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # sqlite3 emits no BEGIN/COMMIT of its own

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def retryable(exc: BaseException) -> bool:
    """Whether ``exc`` says that another writer was in the way (running again may succeed)."""
    if not isinstance(exc, sa.exc.DBAPIError) or isinstance(exc, sa.exc.IntegrityError):
        return False
    orig = exc.orig
    code = getattr(orig, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)  # psycopg 3, psycopg2
    if state is not None:
        return state in _PG_RETRY
    text = str(orig).lower()
    return "database is locked" in text or "database table is locked" in text


def retrying(attempt: Callable[[], R], *, patience: float = DEFAULT_PATIENCE, what: str = "the store") -> R:
    """``attempt()``, called again while it fails because another writer is in the way
    (:func:`retryable`), with exponential backoff (50 ms doubling to 2 s, jittered) for at most
    ``patience`` seconds; then :class:`StoreError`."""
    deadline = time.monotonic() + patience
    delay = 0.05
    while True:
        try:
            return attempt()
        except sa.exc.DBAPIError as exc:
            if not retryable(exc):
                raise
            now = time.monotonic()
            if now >= deadline:
                raise StoreError(f"{what} stayed locked by another writer for {patience:.0f} s: "
                                 f"{collapsed(exc.orig)}") from exc
            time.sleep(min(delay * random.uniform(0.5, 1.0), deadline - now))
            delay = min(delay * 2, 2.0)


@contextlib.contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction (``BEGIN IMMEDIATE`` on SQLite), committed when the block ends, run
    once: :func:`write` is the same, run again while another writer is in the way."""
    with engine.connect() as conn:
        conn.execution_options(**{WRITE_OPTION: True})
        with conn.begin():
            yield conn


def write(engine: Engine, work: Callable[[Connection], R], *, patience: float = DEFAULT_PATIENCE,
          rolled_back: Callable[[], None] | None = None) -> R:
    """``work(conn)`` in one write transaction, committed when it returns; its result.

    The transaction runs again from scratch while another writer is in the way (see
    :func:`retrying`), so ``work`` must do nothing but database work (or undo the rest itself).
    ``rolled_back()`` is called after every attempt that did not commit (to forget cached ids).
    Any other exception rolls back and propagates.
    """

    def attempt() -> R:
        try:
            with write_transaction(engine) as conn:
                return work(conn)
        except BaseException:
            if rolled_back is not None:
                rolled_back()
            raise

    return retrying(attempt, patience=patience, what=f"the store {engine.url.render_as_string()}")


def again_on_conflict(write: Callable[[], R], *, what: str, attempts: int = 3) -> R:
    """``write()``, run again when a unique constraint fails: a concurrent writer inserted the
    same row first (on PostgreSQL it was not visible to this transaction's reads), and the next
    attempt sees it.  :class:`StoreError` after ``attempts``."""
    for attempt in range(attempts):
        try:
            return write()
        except sa.exc.IntegrityError as exc:
            if attempt == attempts - 1:
                raise StoreError(f"cannot record {what} (concurrent writers?): {collapsed(exc.orig)}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


def insert_missing(conn: Connection, table: sa.Table, values: Mapping[str, object], *, key: str = "name") -> None:
    """Insert a row unless one with the same ``key`` exists, a concurrent writer's included
    (``ON CONFLICT DO NOTHING``; a savepoint on other databases).  Read the row back after."""
    dialect = conn.dialect.name
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite

        conn.execute(sqlite.insert(table).values(**values).on_conflict_do_nothing(index_elements=[table.c[key]]))
        return
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        conn.execute(postgresql.insert(table).values(**values).on_conflict_do_nothing(index_elements=[table.c[key]]))
        return
    try:
        with conn.begin_nested():
            conn.execute(table.insert().values(**values))
    except sa.exc.IntegrityError:
        pass


def insert_missing_many(conn: Connection, table: sa.Table, rows: Sequence[Mapping[str, object]], *,
                        key: str = "name") -> None:
    """:func:`insert_missing` for many rows, in their order: one ``executemany`` on SQLite and
    PostgreSQL (a thousand versions of an import in one statement, not a thousand)."""
    if not rows:
        return
    dialect = conn.dialect.name
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite

        conn.execute(sqlite.insert(table).on_conflict_do_nothing(index_elements=[table.c[key]]),
                     [dict(r) for r in rows])
        return
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        conn.execute(postgresql.insert(table).on_conflict_do_nothing(index_elements=[table.c[key]]),
                     [dict(r) for r in rows])
        return
    for row in rows:
        insert_missing(conn, table, row, key=key)


def lock_schema(conn: Connection) -> None:
    """Wait for, then hold until the transaction ends, the lock that serializes migrations of
    this store (PostgreSQL: an advisory lock per schema; SQLite: the write transaction's own)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(schema_key(conn, "schema"))))


def lock_appends(conn: Connection) -> None:
    """Wait for, then hold until the transaction ends, the lock of writers that number their runs
    after the stored ones (PostgreSQL: an advisory lock per schema; SQLite: the write
    transaction's own).

    Without it, on PostgreSQL (READ COMMITTED) every such writer reads the same highest index,
    all but one fail on the unique key and run again, and with a dozen at once one of them could
    lose every attempt: in 3 trials of 12 ``regbench import`` of one version at once, 2 commands
    failed.  Held from the transaction's first statement, before any row lock, it
    cannot deadlock.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(schema_key(conn, "runs:append"))))


def schema_key(conn: Connection, purpose: str) -> int:
    """A positive 31-bit advisory-lock key for ``purpose`` in the connection's current schema:
    stores in other schemas of the same database (one per test) do not share locks."""
    schema = conn.execute(sa.select(sa.func.current_schema())).scalar()
    return zlib.crc32(f"regbench:{purpose}:{schema}".encode()) & 0x7FFFFFFF
