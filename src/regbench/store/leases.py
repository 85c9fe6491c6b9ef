"""Campaign leases: a running campaign holds a lock for as long as its process lives.

A campaign killed with ``kill -9`` (or a lost machine) cannot mark itself ``interrupted``; its
row stays ``running``.  A lease tells a live campaign from such a dead one without clocks or
heartbeats: the campaign's process takes a lock when the campaign is created (before its row is
committed, so no other process ever sees it running and unlocked) and keeps it until it finishes;
the operating system or the database server drops the lock when the process dies, whatever
kills it.  :meth:`regbench.store.Store.start_campaign` then marks every ``running`` campaign
whose lock is free as ``interrupted``.

==============  ===========================================================================
store           lease
==============  ===========================================================================
SQLite file     ``flock`` on ``<store file>-campaign-<id>.lock`` beside the store (removed
                when the campaign ends): processes on this machine
PostgreSQL      a session advisory lock (key: the store's schema and the campaign id) held by
                a connection of its own: processes on any machine
other           none: campaigns are never taken for dead
==============  ===========================================================================
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..errors import StoreError
from .tx import schema_key


class Lease(Protocol):
    def release(self) -> None:
        """Give the lock up (the campaign is over); called once."""


class Leases(Protocol):
    def hold(self, campaign_id: int) -> Lease:
        """Take the lock of a new campaign (it is free: the id is new)."""

    def alive(self, campaign_ids: Iterable[int]) -> set[int]:
        """Those of ``campaign_ids`` whose lock some process holds (this one's included)."""


def leases_for(engine: Engine) -> Leases:
    """The leases that fit the store's database."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            return NoLeases()
        return FileLeases(Path(url.database))
    if url.get_backend_name() == "postgresql":
        return AdvisoryLeases(engine)
    return NoLeases()


class NoLeases:
    """A store only this process can see (in memory), or a database without suitable locks:
    every campaign counts as alive."""

    def hold(self, campaign_id: int) -> Lease:
        return _Nothing()

    def alive(self, campaign_ids: Iterable[int]) -> set[int]:
        return set(campaign_ids)


class _Nothing:
    def release(self) -> None:
        pass


class FileLeases:
    """``flock`` on one file per live campaign beside a SQLite store."""

    def __init__(self, database: Path):
        self.database = Path(database)

    def path(self, campaign_id: int) -> Path:
        return self.database.with_name(f"{self.database.name}-campaign-{int(campaign_id)}.lock")

    def hold(self, campaign_id: int) -> Lease:
        import fcntl

        path = self.path(campaign_id)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by benchmark processes
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {path} for campaign {campaign_id}: {exc.strerror or exc}") from exc
        return _FileLease(path, fd)

    def alive(self, campaign_ids: Iterable[int]) -> set[int]:
        import fcntl

        live = set()
        for ident in campaign_ids:
            path = self.path(ident)
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                continue  # never made (a campaign of an older regbench) or removed: nobody holds it
            except OSError:
                live.add(ident)  # cannot tell: leave it alone
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                live.add(ident)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()  # its owner is gone, and nobody else ever takes this id's lock
            finally:
                os.close(fd)
        return live


class _FileLease:
    def __init__(self, path: Path, fd: int):
        self.path = path
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is None:
            return
        # Removed while still locked: a process that opened it meanwhile gets the lock only after
        # the campaign's final status is committed, and marking it then changes nothing.
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = None


class AdvisoryLeases:
    """PostgreSQL session advisory locks ``(schema key, campaign id)``, each held by a connection
    of its own until the campaign ends or its process dies (the server then drops the session)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._key: int | None = None

    def key(self, conn: Connection) -> int:
        if self._key is None:
            self._key = schema_key(conn, "campaign")
        return self._key

    def hold(self, campaign_id: int) -> Lease:
        conn = self.engine.connect()
        try:
            got = conn.execute(sa.select(sa.func.pg_try_advisory_lock(self.key(conn), int(campaign_id)))).scalar()
            conn.commit()  # a session lock outlives the transaction that took it
        except BaseException:
            conn.close()
            raise
        if not got:
            conn.close()
            raise StoreError(f"the lock of campaign {campaign_id} is held by another session")
        return _AdvisoryLease(conn, self.key(conn), int(campaign_id))

    def alive(self, campaign_ids: Iterable[int]) -> set[int]:
        wanted = {int(i) for i in campaign_ids}
        if not wanted:
            return set()
        with self.engine.connect() as conn:
            held = conn.execute(sa.text(
                "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
                "AND classid::bigint = :key "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"),
                {"key": self.key(conn)}).scalars()
            return wanted & {int(i) for i in held}


class _AdvisoryLease:
    def __init__(self, conn: Connection, key: int, campaign_id: int):
        self.conn: Connection | None = conn
        self.key = key
        self.campaign_id = campaign_id

    def release(self) -> None:
        if self.conn is None:
            return
        conn, self.conn = self.conn, None
        try:
            conn.execute(sa.select(sa.func.pg_advisory_unlock(self.key, self.campaign_id)))
            conn.commit()
        except sa.exc.DBAPIError:
            conn.invalidate()  # the session is gone, and its locks with it
        finally:
            conn.close()
