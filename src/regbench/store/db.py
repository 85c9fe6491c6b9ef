"""The results repository: open, migrate, write runs, read series.

The store object is passed explicitly (STYLE.md habit 10); nothing here is global.  Writes of one
run happen in one transaction, so a campaign killed with ``kill -9`` loses at most the run in
flight (DESIGN.md "Data").

Several processes may write one store at once (docs/architecture.md, "Concurrent writers"):
every write goes through :meth:`Store.write` (:mod:`.tx`: ``BEGIN IMMEDIATE`` on SQLite, the
whole transaction run again while another writer holds the lock), named rows are created with
``ON CONFLICT DO NOTHING``, migrations are serialized, and a running campaign holds a lease
(:mod:`.leases`) so that the next campaign can tell it from one that was killed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, timedelta
from pathlib import Path
from typing import TypeVar

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..errors import DuplicateRunError, NotFoundError, StoreError, collapsed
from ..model import (
    DEFAULT_CONFIG,
    BenchmarkInfo,
    BuildInfo,
    CampaignInfo,
    RunInfo,
    SESSION_SCHEDULE,
    SUPERSEDED,
    RunRecord,
    RunSpan,
    RunToolInfo,
    Series,
    SeriesName,
    ToolTiming,
    StoredRun,
    VersionAlias,
    VersionInfo,
    iso_timestamp,
    utcnow,
)
from . import schema as t
from . import tx
from .leases import Lease, leases_for

R = TypeVar("R")

DEFAULT_LOCATION = ".regbench/results.db"
ENV_VAR = "REGBENCH_STORE"


def resolve_url(location: str | os.PathLike | None = None) -> str:
    """Turn ``--store`` / ``REGBENCH_STORE`` / the default into a SQLAlchemy URL."""
    loc = str(location) if location is not None else os.environ.get(ENV_VAR) or DEFAULT_LOCATION
    if "://" in loc:
        return loc
    path = Path(loc).expanduser().resolve()
    return f"sqlite:///{path}"


def shown_url(url: str) -> str:
    """``url`` with its password, if it has one, masked (``***``)."""
    if "@" not in url:
        return url
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (sa.exc.ArgumentError, ValueError):  # not SQLAlchemy's (ValueError: a port that is no number)
        return masked_password(url, url)


#: A password at least this long is masked wherever a message has it as a whole word; a shorter
#: one only in the URL form ``user:PASSWORD@``.  A short password is a piece of many words (``o``
#: masked everywhere read ``c***nnecti***n failed``), and a driver quotes a password, if ever,
#: inside the URL it was given (psycopg quotes a URL it cannot parse whole).
SECRET_LENGTH = 4


def masked_password(text: str, url: str) -> str:
    """``text`` (what a driver said) with the password of ``url`` masked (``***``) where it is
    quoted as that password: in the URL form ``user:PASSWORD@`` (as written in ``url`` or
    decoded), and as a whole word when it is at least :data:`SECRET_LENGTH` characters long and
    is not also the URL's user, host or database name (which a message names in its own right,
    as :func:`shown_url` shows them; masking them would garble the message and tell the
    password).  ``url`` may be one SQLAlchemy cannot parse (a port that is no number)."""
    from urllib.parse import unquote

    # Read as SQLAlchemy reads a URL (its password runs to the first "@"), without its parser,
    # which refuses a port that is no number.
    m = re.match(r"[\w+]+://(?P<user>[^:/]*):(?P<password>[^@]*)@(?P<host>\[[^/?\]]*\]?|[^/:?]*)"
                 r"[^/?]*(?:/(?P<db>[^?]*))?", url)
    if m is None or not m["password"]:
        return text
    secrets = {m["password"], unquote(m["password"])}
    named = {f(n) for n in (m["user"], m["host"].strip("[]"), m["db"] or "") for f in (str, unquote)}
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(f":{secret}@", ":***@")
        if len(secret) >= SECRET_LENGTH and secret not in named:
            text = re.sub(rf"(?<!\w){re.escape(secret)}(?!\w)", "***", text)
    return text


def _url_problem(url: str, error: ValueError) -> str:
    """What is wrong with ``url``, which SQLAlchemy refused with ``error``, in a few words."""
    host = url.partition("://")[2].partition("/")[0].rpartition("@")[2]
    if ":" in host.rpartition("]")[2] and not (port := host.rpartition(":")[2]).isdigit():
        return f"its port {port!r} is not a number"
    if host.startswith("[") and "]" not in host:
        return f"its host {host!r} has no closing ']'"
    return masked_password(collapsed(error), url)


def encode_samples(values: np.ndarray, *, compress: bool = False) -> tuple[bytes, str]:
    """Samples as float64 little-endian bytes (optionally zlib-compressed)."""
    raw = np.ascontiguousarray(values, dtype="<f8").tobytes()
    if compress:
        return zlib.compress(raw, 6), "f8z"
    return raw, "f8"


def _version_row(version: VersionInfo) -> dict:
    """The ``version`` table row of a new version (its timestamp in UTC, naive, and as text: as
    given, else in ISO 8601, so that an export carries it)."""
    timestamp, text = version.timestamp, version.timestamp_text
    if timestamp is not None and text is None:
        text = iso_timestamp(timestamp)
    if timestamp is not None and timestamp.tzinfo is not None:
        timestamp = timestamp.astimezone(UTC).replace(tzinfo=None)
    return dict(name=version.name, commit_sha=version.commit, timestamp=timestamp, timestamp_text=text,
                generation=version.generation)


def version_info(row) -> VersionInfo:
    """The :class:`VersionInfo` of a ``version`` table row."""
    return VersionInfo(name=row.name, id=row.id, commit=row.commit_sha, timestamp=row.timestamp,
                       timestamp_text=_timestamp_text(row), generation=row.generation)


def _timestamp_text(row) -> str | None:
    """A stored version's timestamp as text: as stored, else (a row whose timestamp was stored
    without its text, as a tool's import or a release did before) the timestamp in ISO 8601."""
    if row.timestamp_text is not None or row.timestamp is None:
        return row.timestamp_text
    return iso_timestamp(row.timestamp)


def decode_samples(blob: bytes | None, encoding: str) -> np.ndarray:
    if blob is None:
        return np.empty(0)
    if encoding == "f8z":
        blob = zlib.decompress(blob)
    elif encoding != "f8":
        raise StoreError(f"unknown sample encoding {encoding!r} in the store")
    return np.frombuffer(blob, dtype="<f8")


def _runs_query(*extra: sa.ColumnElement) -> sa.Select:
    """Runs with their experiment's names: the columns of :class:`RunInfo` (by name), then ``extra``."""
    return (sa.select(t.run.c.id, t.benchmark.c.name.label("benchmark"), t.version.c.name.label("version"),
                      t.config.c.name.label("config"), t.machine.c.name.label("machine"), t.run.c.run_index,
                      t.run.c.status, t.run.c.exit_code, t.run.c.stderr_tail, t.run.c.n_samples, t.run.c.warmup,
                      t.run.c.first_iteration, t.run.c.started_at, t.run.c.duration, t.run.c.campaign_id, *extra)
            .select_from(t.run)
            .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
            .join(t.version, t.version.c.id == t.run.c.version_id)
            .join(t.config, t.config.c.id == t.run.c.config_id)
            .join(t.machine, t.machine.c.id == t.run.c.machine_id))


#: What :class:`StoredRun` adds to :func:`_runs_query`'s columns (and the version's id, to sort by).
_STORED_RUN_COLUMNS = (t.benchmark.c.unit, t.benchmark.c.direction, t.version.c.timestamp_text,
                       t.version.c.timestamp, t.run.c.encoding, t.run.c.samples, t.version.c.id.label("version_id"),
                       t.version.c.commit_sha, t.run_tool.c.processes, t.run_tool.c.warmup_seconds,
                       t.run_tool.c.iteration_seconds, t.run_tool.c.weights.label("tool_weights"))


def _stored_runs_query() -> sa.Select:
    """Runs as :class:`StoredRun` reads them: :func:`_runs_query` with :data:`_STORED_RUN_COLUMNS`,
    what the tool said of each (``run_tool``, keyed like the run) where it said anything."""
    return _runs_query(*_STORED_RUN_COLUMNS).outerjoin(t.run_tool, sa.and_(
        t.run_tool.c.benchmark_id == t.run.c.benchmark_id, t.run_tool.c.version_id == t.run.c.version_id,
        t.run_tool.c.config_id == t.run.c.config_id, t.run_tool.c.machine_id == t.run.c.machine_id,
        t.run_tool.c.run_index == t.run.c.run_index))


def _tool_timing(processes: int | None, warmup_seconds: float | None,
                 iteration_seconds: float | None) -> ToolTiming | None:
    """A ``run_tool`` row's timing columns as a :class:`ToolTiming`; None unless all three are
    set (a row holds them together, or none)."""
    if processes is None or warmup_seconds is None or iteration_seconds is None:
        return None
    return ToolTiming(int(processes), float(warmup_seconds), float(iteration_seconds))


def _new_id(result: sa.CursorResult) -> int:
    """The primary key of the row an INSERT of one row created."""
    key = result.inserted_primary_key
    if key is None:  # not for an INSERT of one row, on any database regbench supports
        raise StoreError("the database did not return the key of the new row")
    return int(key[0])


#: The fields of :class:`RunInfo`, which :func:`_runs_query` selects under the same names.
_RUN_INFO_FIELDS = tuple(f.name for f in dataclasses.fields(RunInfo))


def _run_info(row: sa.Row) -> RunInfo:
    m = row._mapping
    return RunInfo(**{name: m[name] for name in _RUN_INFO_FIELDS})


def _stored_run(row: sa.Row) -> StoredRun:
    m = row._mapping
    weights = m["tool_weights"]
    return StoredRun(**{name: m[name] for name in _RUN_INFO_FIELDS},
                     samples=decode_samples(m["samples"], m["encoding"]), unit=m["unit"],
                     direction=m["direction"], timestamp_text=_timestamp_text(row), commit=m["commit_sha"],
                     timing=_tool_timing(m["processes"], m["warmup_seconds"], m["iteration_seconds"]),
                     weights=None if weights is None else np.frombuffer(weights, dtype="<f8"))


#: Turns a revision (``HEAD~1``, a tag, a sha) into a full commit sha, or None when it names no
#: commit: how :meth:`Store.resolve_version` asks git (:func:`regbench.run.versions.revision_resolver`).
RevisionResolver = Callable[[str], str | None]


class Store:
    """A results store at a SQLAlchemy URL (SQLite file by default).

    ``revisions`` (None by default) is a :data:`RevisionResolver` that :meth:`resolve_version`
    asks about names that are neither stored versions nor aliases: the command line sets it to
    the project's git repository.  ``patience`` is how long, in seconds, a write waits in all for
    other writers to let go of the store before it fails (:func:`regbench.store.tx.retrying`).

    With ``lazy``, the database is opened (created, with ``create``, or migrated) at its first use
    rather than here: a command that checks its input once it has the store (the benchmarks, the
    versions) and finds it wrong leaves no new store file, and an older store not upgraded.  A
    missing store with ``create=False`` is still an error here.
    """

    def __init__(self, location: str | os.PathLike | None = None, *, create: bool = True,
                 revisions: RevisionResolver | None = None, patience: float = tx.DEFAULT_PATIENCE,
                 lazy: bool = False):
        self.url = resolve_url(location)
        self.revisions = revisions
        self.patience = float(patience)
        self._create = create
        if self.url.startswith("sqlite:///") and self.url != "sqlite:///:memory:":
            path = Path(self.url[len("sqlite:///") :])
            if not path.exists() and not create:
                raise StoreError(f"no results store at {path} (run `regbench run` or `regbench import` first)")
        try:
            # No connection yet: SQLAlchemy connects, and SQLite creates the file, at first use.
            self._engine: Engine = sa.create_engine(self.url)
        except (sa.exc.ArgumentError, ModuleNotFoundError) as exc:
            raise StoreError(f"cannot open store {self.shown_url}: {self.driver_message(exc)}") from exc
        except ValueError as exc:  # SQLAlchemy's int() of a port that is no number
            raise StoreError(f"cannot open store {self.shown_url}: {_url_problem(self.url, exc)}") from exc
        if self._engine.dialect.name == "sqlite":
            tx.sqlite_transactions(self._engine)
            sa.event.listen(self._engine, "connect", _sqlite_pragmas)
        # Ids of named rows (benchmark, version, config, machine) by (table, name).  ``_ids`` holds
        # committed rows only and is shared by the threads of a process (a server's requests);
        # a transaction's own new rows wait in its thread's ``_pending`` until it commits: another
        # thread must not take the id of a row it cannot see yet (on PostgreSQL its foreign key
        # fails, or worse, it skips waiting for the row and takes locks out of order).
        self._ids: dict[tuple[str, str], int] = {}
        self._local = threading.local()
        self._leases = leases_for(self._engine)
        self._held: dict[int, Lease] = {}
        # Re-entrant: opening migrates through :attr:`engine` in the opening thread; other threads wait.
        self._open_lock = threading.RLock()
        self._opening = self._opened = False
        if not lazy:
            self._open()

    @property
    def shown_url(self) -> str:
        """The URL as messages show it: a password in it masked (``***``), since commands print
        the store in their errors and accounts, and CI logs keep them."""
        return shown_url(self.url)

    def driver_message(self, error: BaseException | None) -> str:
        """What the database driver (or SQLAlchemy) said in ``error``, for a one-line message:
        its line breaks and tabs made spaces (:func:`~regbench.errors.collapsed`), and the store
        URL's password, should a driver quote it, masked (:func:`masked_password`)."""
        return masked_password(collapsed(error), self.url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, the database opened first (a ``lazy`` store's is opened now)."""
        if not self._opened:
            self._open()
        return self._engine

    def _open(self) -> None:
        """Create the SQLite file's folder and the schema (``create``), or migrate it: once."""
        with self._open_lock:
            if self._opened or self._opening:  # opened by another thread, or opening in this one
                return
            self._opening = True
            try:
                if self.url.startswith("sqlite:///") and self.url != "sqlite:///:memory:":
                    folder = Path(self.url[len("sqlite:///") :]).parent
                    blocking = next((p for p in (folder, *folder.parents) if p.exists()), None)
                    if blocking is not None and not blocking.is_dir():
                        # mkdir said "File exists" of it (a probe: --store results.toml/r.db).
                        raise StoreError(f"{blocking} is a file, not a folder: the store {folder / Path(self.url).name} "
                                         "cannot be created under it")
                    folder.mkdir(parents=True, exist_ok=True)
                self._migrate(create=self._create)
            except BaseException:
                # Nobody may close a store that failed to open: its pooled connection would linger
                # (on PostgreSQL, until the process ends).
                self._engine.dispose()
                raise
            finally:
                self._opening = False
            self._opened = True

    def close(self) -> None:
        """Close every pooled connection (PostgreSQL connections otherwise linger to exit) and give
        up the leases of campaigns still running (the next campaign marks them interrupted)."""
        for lease in self._held.values():
            lease.release()
        self._held.clear()
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ transactions
    def write(self, work: Callable[[Connection], R]) -> R:
        """``work(conn)`` in one write transaction, run again from scratch while another writer
        holds the store (for at most :attr:`patience` seconds); what it returns.

        ``work`` must only touch the database: it may run more than once.
        """
        # An attempt that does not commit forgets its ids (``rolled_back``), so what is pending
        # after the last one is what it committed.
        result = tx.write(self.engine, work, patience=self.patience, rolled_back=self._forget)
        pending = self._pending()
        self._ids.update(pending)  # committed: every thread may use them now
        pending.clear()
        return result

    def _pending(self) -> dict[tuple[str, str], int]:
        """The ids this thread's transaction found or created, not committed yet."""
        pending = getattr(self._local, "ids", None)
        if pending is None:
            pending = self._local.ids = {}
        return pending

    def _cached(self, key: tuple[str, str]) -> int | None:
        found = self._pending().get(key)
        return found if found is not None else self._ids.get(key)

    # ------------------------------------------------------------------ schema
    def _migrate(self, *, create: bool = True) -> None:
        try:
            current = tx.retrying(self._revision, patience=self.patience, what=f"the store {self.shown_url}")
        except sa.exc.DatabaseError as exc:  # OperationalError, or "file is not a database"
            raise StoreError(f"cannot open store {self.shown_url}: {self.driver_message(exc.orig)}") from exc
        if current == t.SCHEMA_REVISION:
            self._wal()
            return
        if current is None and not create:
            # A reading command must not turn an empty or foreign database into a store.
            raise StoreError(f"{self.shown_url} is not a regbench store (no schema); "
                             "`regbench run` or `regbench import` creates one")
        known = _known_revisions()
        if current is not None and current not in known:
            raise StoreError(
                f"store {self.shown_url} has schema revision {current}, newer than this regbench knows"
            )
        # Alembic is imported only when the schema must change: opening a current store stays fast.
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
        self._wal()  # before the schema: the mode cannot change inside the migration's transaction

        def migrate(conn: Connection) -> None:
            # Two processes creating (or upgrading) one store at once: the second waits for the
            # lock, then Alembic finds the schema at head and has nothing to do.
            tx.lock_schema(conn)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

        try:
            self.write(migrate)
        except sa.exc.DatabaseError as exc:
            raise StoreError(f"cannot migrate store {self.shown_url}: {self.driver_message(exc.orig)}") from exc

    def _revision(self) -> str | None:
        with self.engine.connect() as conn:
            if not sa.inspect(conn).has_table("alembic_version"):
                return None
            return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()

    def _wal(self) -> None:
        """WAL lets readers (show, summary, a dashboard) work while a campaign writes.

        Set only on a file that is (or is about to become) a regbench store: the mode is
        persistent and changes the file.
        """
        if self.engine.dialect.name != "sqlite" or self.url == "sqlite:///:memory:":
            return

        def set_wal() -> None:
            raw = self.engine.raw_connection()  # outside any transaction, as the pragma requires
            try:
                cur = raw.cursor()
                if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    cur.execute("PRAGMA journal_mode=WAL")
                cur.close()
            except self.engine.dialect.loaded_dbapi.Error as exc:  # the driver's own, on a raw connection
                raise sa.exc.OperationalError("PRAGMA journal_mode=WAL", None, exc) from exc
            finally:
                raw.close()

        try:
            tx.retrying(set_wal, patience=self.patience, what=f"the store {self.shown_url}")
        except sa.exc.DatabaseError as exc:
            raise StoreError(f"cannot open store {self.shown_url}: {self.driver_message(exc.orig)}") from exc

    def peek(self, query: Callable[[Connection], R]) -> R | None:
        """``query(conn)`` on the database as it is, without opening the store: no migration, no
        journal mode set.  For a command that refuses an older store for what it lacks, rather
        than upgrade it first (a ``lazy`` store, or one not opened yet).  None when the database
        holds no schema of this regbench's (none at all, or a newer one): opening it says so.
        Waits for other writers as long as opening would (``patience``)."""
        known = _known_revisions()

        def attempt():
            with self._engine.connect() as conn:
                if not sa.inspect(conn).has_table("alembic_version"):
                    return None
                if conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() not in known:
                    return None
                return query(conn)

        try:
            return tx.retrying(attempt, patience=self.patience, what=f"the store {self.shown_url}")
        except sa.exc.DatabaseError as exc:
            raise StoreError(f"cannot open store {self.shown_url}: {self.driver_message(exc.orig)}") from exc

    def schema_revision(self) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()

    # ------------------------------------------------------------- named rows
    def _get_or_create(self, conn: Connection, table: sa.Table, name: str, **values) -> int:
        key = (table.name, name)
        # A benchmark given with its unit or direction is read from the store every time, to check
        # them against the stored ones (the cache is left alone: other threads use it).
        cached = None if values and table is t.benchmark else self._cached(key)
        if cached is not None:
            return cached
        row = conn.execute(sa.select(table).where(table.c.name == name)).first()
        if row is None:
            # Another writer may create the same name at the same moment: one row, for both.
            tx.insert_missing(conn, table, dict(name=name, **values))
            row = conn.execute(sa.select(table).where(table.c.name == name)).one()
        ident = row.id
        if table is t.benchmark:
            changed = {c: v for c, v in values.items() if row._mapping[c] != v}
            if changed and _nothing_measured(conn, ident):
                # Only failed runs so far (a tool's benchmark that failed before it ever reported
                # a result, stored with the default unit): nothing stored has a meaning to change.
                conn.execute(t.benchmark.update().where(t.benchmark.c.id == ident).values(**changed))
                changed = {}
            for column, value in changed.items():
                if row._mapping[column] != value:
                    # Relabelling would silently change the meaning of every stored run.
                    raise StoreError(f"benchmark {name!r} is stored with {column} {row._mapping[column]!r}, "
                                     f"not {value!r}: use another benchmark name for the new {column}")
        # Shared once committed (:meth:`write`); a transaction that does not commit forgets its
        # own ids (:meth:`_forget`): a rolled-back insert must not leave a stale id behind.
        self._pending()[key] = ident
        return ident

    def _forget(self) -> None:
        # Only this transaction's own ids: the shared ones are of committed rows, and no command
        # deletes a named row.
        self._pending().clear()

    def ensure_benchmark(self, conn: Connection, name: str, *, unit: str | None = None,
                         direction: str | None = None) -> int:
        values = {k: v for k, v in (("unit", unit), ("direction", direction)) if v is not None}
        return self._get_or_create(conn, t.benchmark, name, **values)

    def ensure_version(self, conn: Connection, version: VersionInfo) -> int:
        """The id of ``version.name``, created with ``version``'s commit and timestamps if new.

        A stored version keeps what it was stored with (its ``id`` in ``version`` is ignored).
        """
        if not isinstance(version, VersionInfo):  # the keyword arguments this took before
            raise TypeError(f"`version` must be a VersionInfo, not {type(version).__name__}")
        key = ("version", version.name)
        cached = self._cached(key)
        if cached is not None:
            return cached
        query = sa.select(t.version.c.id).where(t.version.c.name == version.name)
        ident = conn.execute(query).scalar()
        if ident is None:
            tx.insert_missing(conn, t.version, _version_row(version))
            ident = conn.execute(query).scalar_one()
        self._pending()[key] = ident
        return ident

    def _ensure_many_versions(self, conn: Connection, versions: Sequence[VersionInfo]) -> None:
        """:meth:`ensure_version` of each of ``versions``, in their order, in a few statements:
        one read of the stored ones, one ``executemany`` of the new ones, one read of their ids."""
        for version in versions:
            if not isinstance(version, VersionInfo):
                raise TypeError(f"`version` must be a VersionInfo, not {type(version).__name__}")
        todo: list[VersionInfo] = []
        named: set[str] = set()
        for v in versions:  # the first of two with one name counts, as with ensure_version
            if v.name not in named and self._cached(("version", v.name)) is None:
                named.add(v.name)
                todo.append(v)
        if not todo:
            return

        def ids_of(names: list[str]) -> dict[str, int]:
            found: dict[str, int] = {}
            for start in range(0, len(names), 500):  # SQLite's limit of bound parameters is 999 at least
                query = (sa.select(t.version.c.name, t.version.c.id)
                         .where(t.version.c.name.in_(names[start:start + 500])))
                found.update((name, ident) for name, ident in conn.execute(query))
            return found

        ids = ids_of([v.name for v in todo])
        missing = [v for v in todo if v.name not in ids]
        tx.insert_missing_many(conn, t.version, [_version_row(v) for v in missing])
        if missing:
            ids.update(ids_of([v.name for v in missing]))
        pending = self._pending()
        for v in todo:
            pending[("version", v.name)] = ids[v.name]

    @staticmethod
    def _date_versions(conn: Connection, versions: Sequence[VersionInfo]) -> None:
        """Give the stored versions among ``versions`` that have no timestamp the one given (a
        version imported first without one, then with ``--timestamp``); a stored timestamp is kept."""
        rows = []
        for v in versions:
            if v.timestamp is not None:
                row = _version_row(v)
                rows.append({"b_name": v.name, "b_timestamp": row["timestamp"], "b_text": row["timestamp_text"]})
        if rows:
            conn.execute(t.version.update()
                         .where(t.version.c.name == sa.bindparam("b_name"), t.version.c.timestamp.is_(None))
                         .values(timestamp=sa.bindparam("b_timestamp"), timestamp_text=sa.bindparam("b_text")), rows)

    @staticmethod
    def _place_versions(conn: Connection, versions: Sequence[VersionInfo]) -> None:
        """Give the stored versions among ``versions`` that have no generation the one given (a
        commit stored alone, whose timestamp a commit stored later shares); a stored one is kept."""
        rows = [{"b_name": v.name, "b_generation": v.generation} for v in versions if v.generation is not None]
        if rows:
            conn.execute(t.version.update()
                         .where(t.version.c.name == sa.bindparam("b_name"), t.version.c.generation.is_(None))
                         .values(generation=sa.bindparam("b_generation")), rows)

    def ensure_versions(self, versions: Iterable[VersionInfo], *,
                        aliases: Mapping[str, Iterable[VersionAlias]] | None = None) -> list[tuple[str, str, str]]:
        """Create the versions not stored yet, in the order given, in one transaction (versions
        without timestamps are ordered by first appearance), and record ``aliases`` (by version
        name: its tags and branches, :meth:`set_aliases`).

        Returns the tags that moved: ``(tag, version it named, version it names now)`` for each
        tag the store held for another version (a branch moves as a matter of course; a tag
        moved, by ``git tag -f`` or a re-made release, changes what its results are shown as).
        """
        versions = list(versions)
        named = {name: list(a) for name, a in (aliases or {}).items()}

        def work(conn: Connection) -> list[tuple[str, str, str]]:
            moved: list[tuple[str, str, str]] = []
            for v in versions:
                vid = self.ensure_version(conn, v)
                if named.get(v.name):
                    moved += [(tag, old, v.name) for tag, old in self.set_aliases(conn, vid, named[v.name])]
            self._place_versions(conn, versions)
            return moved

        return self.write(work)

    def ensure_config(self, conn: Connection, name: str = DEFAULT_CONFIG, params: dict | None = None) -> int:
        return self._get_or_create(conn, t.config, name, **({"params": params} if params else {}))

    def ensure_machine(self, conn: Connection, name: str, fingerprint: dict | None = None) -> int:
        ident = self._get_or_create(conn, t.machine, name)
        if fingerprint is not None:
            conn.execute(t.machine.update().where(t.machine.c.id == ident).values(fingerprint=fingerprint))
        return ident

    # -------------------------------------------------------------- campaigns
    def start_campaign(self, *, seed: int, machine: str, fingerprint: dict, command: str,
                       plan: dict | None = None) -> int:
        """Record a new ``running`` campaign and hold its lease until :meth:`finish_campaign`
        (or until this process ends); campaigns left ``running`` by dead processes are marked
        ``interrupted`` first (:meth:`reap_campaigns`)."""
        self.reap_campaigns()
        taken: list[Lease] = []

        def work(conn: Connection) -> int:
            while taken:  # an earlier attempt's lease, for an id rolled back with it
                taken.pop().release()
            mid = self.ensure_machine(conn, machine, fingerprint)
            ident = _new_id(conn.execute(
                t.campaign.insert().values(started_at=utcnow(), seed=int(seed), machine_id=mid,
                                           fingerprint=fingerprint, command=command, plan=plan)))
            # Taken before the row is committed: no process ever sees it running and unheld.
            taken.append(self._leases.hold(ident))
            return ident

        try:
            ident = self.write(work)
        except BaseException:
            for lease in taken:
                lease.release()
            raise
        self._held[ident] = taken[0]
        return ident

    def finish_campaign(self, campaign_id: int, status: str) -> None:
        def work(conn: Connection) -> None:
            conn.execute(t.campaign.update().where(t.campaign.c.id == campaign_id)
                         .values(finished_at=utcnow(), status=status))

        self.write(work)
        lease = self._held.pop(campaign_id, None)
        if lease is not None:  # after the commit: see leases._FileLease.release
            lease.release()

    def reap_campaigns(self) -> list[int]:
        """Mark ``interrupted`` every campaign left ``running`` whose lease nobody holds (its
        process was killed, or its machine lost); return their ids.

        Its ``finished_at`` is the end of its last stored run (when it was last seen working),
        else its start.
        """
        with self.engine.connect() as conn:
            running = conn.execute(sa.select(t.campaign.c.id).where(t.campaign.c.status == "running")).scalars().all()
        dead = sorted(set(running) - self._leases.alive(running))
        if not dead:
            return []

        def work(conn: Connection) -> list[int]:
            marked = []
            for ident in dead:
                last = conn.execute(sa.select(t.run.c.started_at, t.run.c.duration)
                                    .where(t.run.c.campaign_id == ident, t.run.c.started_at.is_not(None))
                                    .order_by(t.run.c.started_at.desc()).limit(1)).first()
                if last is not None:
                    seen = last.started_at + timedelta(seconds=last.duration or 0.0)
                else:
                    seen = conn.execute(sa.select(t.campaign.c.started_at).where(t.campaign.c.id == ident)).scalar()
                # `status == running` again: a campaign that finished meanwhile keeps its status.
                done = conn.execute(t.campaign.update()
                                    .where(t.campaign.c.id == ident, t.campaign.c.status == "running")
                                    .values(status="interrupted", finished_at=seen)).rowcount
                if done:
                    marked.append(ident)
            return marked

        return self.write(work)

    def campaigns(self) -> list[CampaignInfo]:
        """Every campaign, in the order they started."""
        q = (sa.select(t.campaign, t.machine.c.name.label("machine"))
             .join(t.machine, t.machine.c.id == t.campaign.c.machine_id).order_by(t.campaign.c.id))
        with self.engine.connect() as conn:
            return [CampaignInfo(**r._mapping) for r in conn.execute(q)]

    def campaigns_with_runs(self) -> set[int]:
        """The campaigns that stored at least one run (a campaign whose runs were all stored
        already stores none)."""
        q = sa.select(t.run.c.campaign_id).where(t.run.c.campaign_id.is_not(None)).distinct()
        with self.engine.connect() as conn:
            return set(conn.execute(q).scalars())

    def session_campaigns(self) -> list[int]:
        """The campaigns that are sessions of ``compare --run``, ``bisect`` or ``detect --confirm``
        (:data:`~regbench.model.SESSION_SCHEDULE`), not campaigns of a history."""
        return [c.id for c in self.campaigns() if (c.plan or {}).get("schedule") == SESSION_SCHEDULE]

    # ------------------------------------------------------------------ builds
    def get_build(self, version: str, build_key: str) -> BuildInfo | None:
        """The recorded build of the version called ``version`` with the command ``build_key``."""
        q = (sa.select(t.build, t.version.c.name.label("version"))
             .join(t.version, t.version.c.id == t.build.c.version_id)
             .where(t.version.c.name == version, t.build.c.build_key == build_key))
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        return BuildInfo(**row._mapping) if row else None

    def record_build(self, version: VersionInfo, build_key: str, *, status: str, exit_code: int | None,
                     log_tail: str | None, duration: float | None) -> None:
        """Record (or replace) the build of ``version`` with ``build_key``; the version row is
        created from ``version`` if it is new."""

        def work(conn: Connection) -> None:
            vid = self.ensure_version(conn, version)
            conn.execute(t.build.delete().where(t.build.c.version_id == vid, t.build.c.build_key == build_key))
            conn.execute(t.build.insert().values(
                version_id=vid, build_key=build_key, status=status, exit_code=exit_code,
                log_tail=log_tail, duration=duration, created_at=utcnow()))

        # A concurrent campaign recording the same build first (PostgreSQL: its row was not
        # visible to the delete): once more, replacing it.
        tx.again_on_conflict(lambda: self.write(work), what="the build")

    def builds(self) -> list[BuildInfo]:
        """Every recorded build, in the order they were recorded."""
        q = (sa.select(t.build, t.version.c.name.label("version"))
             .join(t.version, t.version.c.id == t.build.c.version_id).order_by(t.build.c.id))
        with self.engine.connect() as conn:
            return [BuildInfo(**r._mapping) for r in conn.execute(q)]

    # -------------------------------------------------------------------- runs
    def add_run(self, rec: RunRecord, *, version_info: VersionInfo | None = None,
                unit: str | None = None, direction: str | None = None) -> int:
        """Store one run in one transaction and return its id.

        ``version_info`` describes ``rec.version`` (its commit and timestamps) if the version is
        new; ``unit`` and ``direction`` the benchmark's, checked against a stored benchmark.

        Raises :class:`DuplicateRunError` when a run with the same key is already stored (for
        example by another campaign on the same store).
        """
        if version_info is not None and version_info.name != rec.version:
            raise ValueError(f"`version_info` describes version {version_info.name!r}, "
                             f"not the run's version {rec.version!r}")

        def work(conn: Connection) -> int:
            self.ensure_benchmark(conn, rec.benchmark, unit=unit, direction=direction)
            self.ensure_version(conn, version_info or VersionInfo(rec.version))
            rid = _new_id(conn.execute(t.run.insert().values(**self._run_row(conn, rec))))
            self._add_slices(conn, [rec])
            self._add_tool_info(conn, [rec])
            return rid

        return self._write_runs([rec], work)

    def _add_slices(self, conn: Connection, records: Sequence[RunRecord]) -> None:
        """The ``run_slice`` rows of the records that have slices (keyed like their runs)."""
        rows = []
        for rec in records:
            if rec.slices is None:
                continue
            sl = np.asarray(rec.slices, dtype="<f8")
            if sl.ndim != 2 or sl.shape[0] != np.asarray(rec.samples).size or sl.shape[1] < 1:
                raise ValueError(f"{_run_text(rec)}: `slices` must be a (samples, slices) array, got shape {sl.shape}")
            rows.append(dict(benchmark_id=self.ensure_benchmark(conn, rec.benchmark),
                             version_id=self.ensure_version(conn, VersionInfo(rec.version)),
                             config_id=self.ensure_config(conn, rec.config),
                             machine_id=self.ensure_machine(conn, rec.machine), run_index=int(rec.run_index),
                             n_slices=int(sl.shape[1]), slices=np.ascontiguousarray(sl).tobytes()))
        if rows:
            conn.execute(t.run_slice.insert(), rows)

    def _add_tool_info(self, conn: Connection, records: Sequence[RunRecord]) -> None:
        """The ``run_tool`` rows of the records whose tool said what they cost or weighed."""
        rows = []
        for rec in records:
            if rec.timing is None and rec.weights is None:
                continue
            weights = None
            if rec.weights is not None:
                w = np.asarray(rec.weights, dtype="<f8")
                if w.ndim != 1 or w.size != np.asarray(rec.samples).size or not np.all(np.isfinite(w)) \
                        or (w < 0).any():
                    raise ValueError(f"{_run_text(rec)}: `weights` must be one finite, non-negative number per "
                                     f"sample, got shape {w.shape}")
                weights = np.ascontiguousarray(w).tobytes()
            timing = rec.timing
            rows.append({"benchmark_id": self.ensure_benchmark(conn, rec.benchmark),
                         "version_id": self.ensure_version(conn, VersionInfo(rec.version)),
                         "config_id": self.ensure_config(conn, rec.config),
                         "machine_id": self.ensure_machine(conn, rec.machine), "run_index": int(rec.run_index),
                         "processes": None if timing is None else int(timing.processes),
                         "warmup_seconds": None if timing is None else float(timing.warmup_seconds),
                         "iteration_seconds": None if timing is None else float(timing.iteration_seconds),
                         "weights": weights})
        if rows:
            conn.execute(t.run_tool.insert(), rows)

    def run_tools(self, *, benchmarks: Iterable[str] | None = None, prefix: str | None = None,
                  config: str | None = None, machine: str | None = None,
                  weighted: bool = False) -> list[RunToolInfo]:
        """What tools said of the stored runs beyond their samples (:class:`RunToolInfo`): of the
        series ``benchmarks``, or those whose name starts with ``prefix`` (``"jmh/"``: every
        series a tool benchmark reports), on ``config`` and ``machine`` (default: every one);
        with ``weighted``, only the runs whose samples have weights."""
        q = (sa.select(t.benchmark.c.name.label("benchmark"), t.version.c.name.label("version"),
                       t.config.c.name.label("config"), t.machine.c.name.label("machine"), t.run_tool.c.run_index,
                       t.run_tool.c.processes, t.run_tool.c.warmup_seconds, t.run_tool.c.iteration_seconds,
                       t.run_tool.c.weights)
             .select_from(t.run_tool)
             .join(t.benchmark, t.benchmark.c.id == t.run_tool.c.benchmark_id)
             .join(t.version, t.version.c.id == t.run_tool.c.version_id)
             .join(t.config, t.config.c.id == t.run_tool.c.config_id)
             .join(t.machine, t.machine.c.id == t.run_tool.c.machine_id))
        if benchmarks is not None:
            q = q.where(t.benchmark.c.name.in_(sorted(set(benchmarks))))
        if prefix is not None:
            q = q.where(t.benchmark.c.name.startswith(prefix, autoescape=True))
        if config is not None:
            q = q.where(t.config.c.name == config)
        if machine is not None:
            q = q.where(t.machine.c.name == machine)
        if weighted:
            q = q.where(t.run_tool.c.weights.is_not(None))
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))
        return [RunToolInfo(r.benchmark, r.version, r.config, r.machine, int(r.run_index),
                            _tool_timing(r.processes, r.warmup_seconds, r.iteration_seconds),
                            None if r.weights is None else np.frombuffer(r.weights, dtype="<f8"))
                for r in rows]

    def run_slices(self, benchmark: str, version: str, *, config: str, machine: str) -> dict[int, np.ndarray]:
        """The slices of the runs of one experiment that have them (``slices = N``), by run index:
        ``(samples, N)`` seconds per call of each slice of each iteration, warm-up included."""
        q = (sa.select(t.run_slice.c.run_index, t.run_slice.c.n_slices, t.run_slice.c.slices)
             .join(t.benchmark, t.benchmark.c.id == t.run_slice.c.benchmark_id)
             .join(t.version, t.version.c.id == t.run_slice.c.version_id)
             .join(t.config, t.config.c.id == t.run_slice.c.config_id)
             .join(t.machine, t.machine.c.id == t.run_slice.c.machine_id)
             .where(t.benchmark.c.name == benchmark, t.version.c.name == version,
                    t.config.c.name == config, t.machine.c.name == machine))
        with self.engine.connect() as conn:
            return {int(i): np.frombuffer(blob, dtype="<f8").reshape(-1, int(n)) for i, n, blob in conn.execute(q)}

    def _run_row(self, conn: Connection, rec: RunRecord) -> dict:
        """The ``run`` table row of a record (named rows created as needed)."""
        samples = np.asarray(rec.samples, dtype=float)
        blob, enc = encode_samples(samples)
        return dict(
            benchmark_id=self.ensure_benchmark(conn, rec.benchmark),
            version_id=self.ensure_version(conn, VersionInfo(rec.version)),
            config_id=self.ensure_config(conn, rec.config),
            machine_id=self.ensure_machine(conn, rec.machine),
            run_index=int(rec.run_index), campaign_id=rec.campaign_id, status=rec.status,
            exit_code=rec.exit_code, stderr_tail=rec.stderr_tail, started_at=rec.started_at,
            duration=rec.duration, warmup=int(rec.warmup), first_iteration=int(rec.first_iteration),
            n_samples=int(samples.size), encoding=enc, samples=blob)

    def add_runs(self, records: Iterable[RunRecord], *, versions: Iterable[VersionInfo] = (),
                 benchmarks: Mapping[str, Mapping[str, str]] | None = None, append: bool = False,
                 within: Callable[[Connection], None] | None = None,
                 tags: Mapping[str, Iterable[str]] | None = None,
                 append_to: Collection[tuple[str, str, str, str]] = ()) -> int:
        """Store many runs in one transaction (all or nothing); return how many.

        ``versions`` describes versions (commit, timestamps) and ``benchmarks`` maps a benchmark
        name to its ``unit``/``direction``; the versions are created first, in the order given, so
        that first appearance orders versions without timestamps.  A version the records name
        that is in neither ``versions`` nor the store is created with its name alone.  A stored
        version without a timestamp takes the one ``versions`` gives it; a stored timestamp is kept.

        With ``append``, the records' run indices count from the first index free in the store
        for their (benchmark, version, config, machine), found inside the transaction: two
        imports of one version at once get distinct indices, never a duplicate.  ``append_to``
        does so for the records of these (benchmark, version, config, machine) alone; the others
        keep their indices.

        ``within(conn)``, if given, is called first inside the same transaction (the HTTP API
        records a submission's id there, so that its runs and its id are stored together or not
        at all); what it raises rolls everything back and propagates.

        ``tags`` maps a version name to git tags it gets (an import's ``tags`` column): a tag the
        store does not hold yet is added; one that names a version already (this one or another)
        is left as it is, so an import adds tags and never removes or moves one.

        Raises :class:`DuplicateRunError` when a run with the same key is already stored.
        """
        if isinstance(versions, Mapping):  # the mapping of names to dicts this took before
            raise TypeError("`versions` must be VersionInfo records, not a mapping")
        records, versions = list(records), list(versions)

        appended = frozenset(append_to)

        def work(conn: Connection) -> int:
            if append or appended:
                tx.lock_appends(conn)  # appenders take turns: each sees the indices the last one took
            if within is not None:
                within(conn)
            self._ensure_many_versions(conn, versions)
            self._date_versions(conn, versions)
            self._place_versions(conn, versions)
            for name, info in (benchmarks or {}).items():
                self.ensure_benchmark(conn, name, **info)
            for name, names in (tags or {}).items():
                version_id = self.ensure_version(conn, VersionInfo(name))
                for tag in names:
                    tx.insert_missing(conn, t.version_alias, {"name": tag, "version_id": version_id, "kind": "tag"})
            if append:
                todo = _after_stored(conn, records)
            elif appended:
                moved = iter(_after_stored(conn, [rec for rec in records if _run_key(rec)[:4] in appended]))
                todo = [next(moved) if _run_key(rec)[:4] in appended else rec for rec in records]
            else:
                todo = records
            for start in range(0, len(todo), 2000):
                conn.execute(t.run.insert(), [self._run_row(conn, rec) for rec in todo[start:start + 2000]])
            self._add_slices(conn, todo)
            self._add_tool_info(conn, todo)
            return len(todo)

        kept = [] if append else [rec for rec in records if _run_key(rec)[:4] not in appended]
        return self._write_runs(kept, work, many="runs already in the store would be duplicated")

    def _write_runs(self, records: Sequence[RunRecord], work: Callable[[Connection], R], *,
                    many: str | None = None) -> R:
        """``work`` (which inserts ``records``, and maybe runs it numbers after the stored ones)
        in a write transaction.  A unique key that fails is a :class:`DuplicateRunError` (its
        message starts with ``many``, if given) when one of the ``records``' keys is stored;
        otherwise a concurrent writer took the key between reading and writing (an appended
        index), and the work is done again."""
        seen: set[tuple] = set()
        for rec in records:
            key = _run_key(rec)
            if key in seen:
                text = f"{_run_text(rec)} is given twice"
                raise DuplicateRunError(text if many is None else f"{many} ({text})")
            seen.add(key)
        for attempt in range(_CONFLICT_ATTEMPTS):
            try:
                return self.write(work)
            except sa.exc.IntegrityError as exc:
                stored = self._first_stored(records) if records else None
                if stored is not None:
                    text = f"{_run_text(stored)} is already in the store"
                    raise DuplicateRunError(text if many is None else f"{many} ({text})") from exc
                if attempt == _CONFLICT_ATTEMPTS - 1:
                    raise StoreError("cannot store the runs (concurrent writers?): "
                                     f"{self.driver_message(exc.orig)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _first_stored(self, records: Sequence[RunRecord]) -> RunRecord | None:
        """The first of ``records`` whose key is already stored, if any."""
        keys = {_run_key(rec) for rec in records}
        q = (sa.select(t.benchmark.c.name, t.version.c.name, t.config.c.name, t.machine.c.name, t.run.c.run_index)
             .select_from(t.run)
             .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
             .join(t.version, t.version.c.id == t.run.c.version_id)
             .join(t.config, t.config.c.id == t.run.c.config_id)
             .join(t.machine, t.machine.c.id == t.run.c.machine_id)
             .where(t.benchmark.c.name.in_(sorted({k[0] for k in keys})),
                    t.config.c.name.in_(sorted({k[2] for k in keys})),
                    t.machine.c.name.in_(sorted({k[3] for k in keys}))))
        with self.engine.connect() as conn:
            stored = {(b, v, c, m, int(i)) for b, v, c, m, i in conn.execute(q)} & keys
        return next((rec for rec in records if _run_key(rec) in stored), None)

    def run_durations(self, benchmark: str, version: str, *, config: str, machine: str) -> list[tuple[str, float | None]]:
        """(status, duration in seconds) of every stored run of one experiment, by run index."""
        q = (sa.select(t.run.c.status, t.run.c.duration)
             .select_from(t.run)
             .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
             .join(t.version, t.version.c.id == t.run.c.version_id)
             .join(t.config, t.config.c.id == t.run.c.config_id)
             .join(t.machine, t.machine.c.id == t.run.c.machine_id)
             .where(t.benchmark.c.name == benchmark, t.version.c.name == version,
                    t.config.c.name == config, t.machine.c.name == machine)
             .order_by(t.run.c.run_index))
        with self.engine.connect() as conn:
            return [(r.status, r.duration) for r in conn.execute(q)]

    def existing_run_keys(self, *, config: str, machine: str, exclude_campaigns: Iterable[int] = (),
                          superseded_only: bool = False) -> set[tuple[str, str, int]]:
        """(benchmark, version, run_index) of every stored run of a configuration on a machine
        (but those of the campaigns ``exclude_campaigns``; with ``superseded_only``, of its
        superseded runs alone, through the index of the runs not ``ok``)."""
        q = (sa.select(t.benchmark.c.name, t.version.c.name, t.run.c.run_index)
             .select_from(t.run)
             .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
             .join(t.version, t.version.c.id == t.run.c.version_id)
             .join(t.config, t.config.c.id == t.run.c.config_id)
             .join(t.machine, t.machine.c.id == t.run.c.machine_id)
             .where(t.config.c.name == config, t.machine.c.name == machine))
        excluded = list(exclude_campaigns)
        if excluded:
            q = q.where(sa.or_(t.run.c.campaign_id.is_(None), t.run.c.campaign_id.not_in(excluded)))
        if superseded_only:  # the partial index's own term first, so that SQLite sees it implied
            q = q.where(t.run.c.status != "ok", t.run.c.status == SUPERSEDED)
        with self.engine.connect() as conn:
            return {(b, v, int(i)) for b, v, i in conn.execute(q)}

    def supersede_runs(self, benchmarks: Iterable[str], *, config: str, machines: Iterable[str],
                       campaign_id: int, keep: Iterable[int] = ()) -> dict[str, int]:
        """Mark the runs of the configured ``benchmarks`` on ``config`` and ``machines`` stored
        outside campaign ``campaign_id`` (and outside the campaigns ``keep``, which ran the
        definition the benchmark has now) as :data:`~regbench.model.SUPERSEDED`, and drop the
        saved detector states of their series, in one transaction; return how many runs each
        benchmark had marked (those with none left out).

        A benchmark's runs are those of its own series and of the series it stores under its
        name: its measures (``NAME:MEASURE``) and a tool's benchmarks (``NAME/REPORTED``).  Called
        by a campaign whose benchmark's definition (what it runs) changed since the runs were
        made: they measured something else, and an analysis that compared them with the new
        ones would report the edit as a change of the code.  Their samples stay stored (``show``
        lists them); no analysis reads them, and the campaign runs their versions again
        (:meth:`existing_run_keys` with ``superseded_only`` tells them).  A detector's saved state holds
        their statistics, so it goes too: the next pass searches those series whole.
        """
        outside = [campaign_id, *keep]
        terms = (t.run.c.status != SUPERSEDED, sa.or_(t.run.c.campaign_id.is_(None), t.run.c.campaign_id.not_in(outside)))
        # The status it had and the campaign that superseded it are kept (schema 0023), so that
        # restore_runs can take it back; the SET's right-hand side reads the row as it was.
        return self._mark_runs(benchmarks, config, machines, terms,
                               dict(status=SUPERSEDED, superseded_status=t.run.c.status, superseded_by=campaign_id))

    def restore_runs(self, benchmarks: Iterable[str], *, config: str, machines: Iterable[str],
                     origins: Iterable[int] | None = None, superseded_by: int | None = None) -> dict[str, int]:
        """Take back superseded runs of the configured ``benchmarks`` on ``config`` and ``machines``
        (:meth:`supersede_runs`): those stored by the campaigns ``origins`` (which ran the
        definition the benchmark has again), or those that campaign ``superseded_by`` superseded
        (``run --keep-old-runs`` right after it).  Each gets the status it had; the saved detector
        states of their series are dropped.  Returns how many each benchmark got back."""
        origins = list(origins or ())
        if not origins and superseded_by is None:
            return {}

        which = t.run.c.campaign_id.in_(origins) if origins else t.run.c.superseded_by == superseded_by
        # The partial index's own term first (runs not ok), as in runs(failed=True).
        terms = (t.run.c.status != "ok", t.run.c.status == SUPERSEDED, t.run.c.superseded_status.is_not(None), which)
        return self._mark_runs(benchmarks, config, machines, terms,
                               dict(status=t.run.c.superseded_status, superseded_status=None, superseded_by=None))

    def _mark_runs(self, benchmarks: Iterable[str], config: str, machines: Iterable[str], terms: tuple,
                   values: dict) -> dict[str, int]:
        """Update with ``values`` the runs of the configured ``benchmarks`` (their own series, their
        measures and their tools' series) on ``config`` and ``machines`` that the SQL ``terms``
        keep, and drop those series' saved detector states, in one transaction; how many runs each
        benchmark had updated (none: left out)."""
        wanted = set(benchmarks)
        machines = list(machines)

        def work(conn) -> dict[str, int]:
            owner = {r.id: r.name if r.name in wanted else SeriesName.parse(r.name).benchmark
                     for r in conn.execute(sa.select(t.benchmark.c.id, t.benchmark.c.name))}
            ids = [i for i, name in owner.items() if name in wanted]
            cfg = conn.execute(sa.select(t.config.c.id).where(t.config.c.name == config)).scalar()
            mids = list(conn.execute(sa.select(t.machine.c.id).where(t.machine.c.name.in_(machines))).scalars())
            if not ids or cfg is None or not mids:
                return {}
            where = (t.run.c.benchmark_id.in_(ids), t.run.c.config_id == cfg, t.run.c.machine_id.in_(mids), *terms)
            counts = conn.execute(sa.select(t.run.c.benchmark_id, sa.func.count()).where(*where)
                                  .group_by(t.run.c.benchmark_id)).all()
            if not counts:
                return {}
            conn.execute(t.run.update().where(*where).values(**values))
            conn.execute(t.detect_state.delete().where(t.detect_state.c.benchmark_id.in_(ids),
                                                       t.detect_state.c.config_id == cfg,
                                                       t.detect_state.c.machine_id.in_(mids)))
            out: dict[str, int] = {}
            for bid, n in counts:
                out[owner[bid]] = out.get(owner[bid], 0) + int(n)
            return out

        return self.write(work)

    def runs(self, *, benchmark: str | None = None, version: str | None = None,
             failed: bool = False) -> list[RunInfo]:
        """Every stored run's metadata (samples not loaded), in the order they were stored; with
        ``failed``, only the runs that failed (whose status is neither ``ok`` nor superseded)."""
        q = _runs_query()
        if benchmark is not None:
            q = q.where(t.benchmark.c.name == benchmark)
        if version is not None:
            q = q.where(t.version.c.name == version)
        if failed:
            # Through the partial index ix_run_failed, sorted here: with ``ORDER BY run.id`` SQLite
            # prefers to walk every run in id order (0.4 s on 500,000 runs, with none failed).  The
            # index's own term comes first and unchanged, so that SQLite still sees it implied.
            q = q.where(t.run.c.status != "ok", t.run.c.status != SUPERSEDED)
        else:
            q = q.order_by(t.run.c.id)
        with self.engine.connect() as conn:
            rows = [_run_info(r) for r in conn.execute(q)]
        return sorted(rows, key=lambda r: r.id) if failed else rows

    # ----------------------------------------------------------------- listing
    def benchmarks(self) -> list[BenchmarkInfo]:
        """Every stored benchmark, by name."""
        with self.engine.connect() as conn:
            return [BenchmarkInfo(**r._mapping)
                    for r in conn.execute(sa.select(t.benchmark).order_by(t.benchmark.c.name))]

    def versions(self) -> list[VersionInfo]:
        """Every version in history order (timestamp, then first appearance)."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.version)).all()
        infos = [version_info(r) for r in rows]
        return sorted(infos, key=lambda v: v.history_key)

    def resolve_version(self, name: str) -> str:
        """The stored version a person means by ``name``; :class:`NotFoundError` when none.

        In order: a stored version's name; an alias (a tag or branch name recorded when the
        version was benchmarked, :meth:`set_aliases`); a git revision (``HEAD~1``, a tag, a
        full or short sha) that :attr:`revisions` turns into a commit stored as a version (a
        commit not stored is an error, never another version's prefix); the only version whose
        name or commit starts with ``name`` (as git accepts a short sha).
        A branch moves on, and runs stored by ``import`` or ``push`` record no alias: an alias
        of kind ``branch`` that :attr:`revisions` also knows is where git says it is now (a tag
        stays where it was recorded).  A working tree with uncommitted changes shares its commit
        with the committed version: the committed one is meant.
        """
        name = name.strip()
        if not name:
            raise NotFoundError("empty version name")
        with self.engine.connect() as conn:
            if conn.execute(sa.select(t.version.c.id).where(t.version.c.name == name)).first() is not None:
                return name
            aliased = conn.execute(sa.select(t.version.c.name, t.version_alias.c.kind).join(
                t.version_alias, t.version_alias.c.version_id == t.version.c.id)
                .where(t.version_alias.c.name == name)).first()
            if aliased is not None and (aliased.kind != "branch" or self.revisions is None):
                return aliased.name
            rows = conn.execute(sa.select(t.version.c.name, t.version.c.commit_sha)).all()
        sha = self.revisions(name) if self.revisions is not None else None
        if sha is not None:
            found = _by_commit(rows, sha) or _by_short_sha(rows, sha)
            if found is not None:
                return found
            # Git's answer, not a stored name that starts with ``name`` (tag ``v1`` is no ``v1.0rc1``);
            # a branch that moved to a commit not benchmarked yet is not its recorded commit.
            if dirty := sorted(n for n, c in rows if c == sha):  # working trees of it, no commit
                raise NotFoundError(f"version {name!r} is ambiguous: {', '.join(dirty[:5])}")
            raise NotFoundError(f"{name!r} is commit {sha[:10]}, which has no version in the store "
                                "(benchmark it with `regbench run --versions`)")
        if aliased is not None:  # a branch git does not know (deleted, or another repository)
            return aliased.name
        lowered = name.lower()
        matches = sorted({n for n, c in rows if n.startswith(name) or (c or "").startswith(lowered)})
        if len(matches) > 1 and len(lowered) >= 4:  # one commit, stored committed and dirty
            commits = {c for n, c in rows if n in matches}
            if len(commits) == 1 and (found := _by_commit(rows, commits.pop() or "")) is not None:
                return found
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise NotFoundError(f"version {name!r} is ambiguous: {', '.join(matches[:5])}")
        raise NotFoundError(f"no version named {name!r} in the store (a stored name, tag, branch or sha)")

    def set_aliases(self, conn: Connection, version_id: int, aliases: Iterable[VersionAlias]) -> list[tuple[str, str]]:
        """Record ``aliases`` as names of the version ``version_id``, in ``conn``'s transaction.

        An alias names one version: one recorded for another version (a moved branch or tag)
        is pointed at this one.  Returns the tags so moved, each with the name of the version
        it named.
        """
        moved: list[tuple[str, str]] = []
        for alias in aliases:
            query = (sa.select(t.version_alias.c.version_id, t.version_alias.c.kind)
                     .where(t.version_alias.c.name == alias.name))
            row = conn.execute(query).first()
            if row is None:  # another campaign may record the same alias at the same moment
                tx.insert_missing(conn, t.version_alias, dict(name=alias.name, version_id=version_id, kind=alias.kind))
                row = conn.execute(query).one()
            if (row.version_id, row.kind) != (version_id, alias.kind):
                if alias.kind == "tag" and row.kind == "tag" and row.version_id != version_id:
                    old = conn.execute(sa.select(t.version.c.name).where(t.version.c.id == row.version_id)).scalar()
                    moved.append((alias.name, str(old)))
                conn.execute(t.version_alias.update().where(t.version_alias.c.name == alias.name)
                             .values(version_id=version_id, kind=alias.kind))
        return moved

    def aliases(self) -> dict[str, list[VersionAlias]]:
        """Every version's aliases by version name (tags first, then branches, each by name)."""
        q = (sa.select(t.version.c.name.label("version"), t.version_alias.c.name, t.version_alias.c.kind)
             .join(t.version, t.version.c.id == t.version_alias.c.version_id)
             .order_by(t.version_alias.c.kind.desc(), t.version_alias.c.name))
        out: dict[str, list[VersionAlias]] = {}
        with self.engine.connect() as conn:
            for r in conn.execute(q):
                out.setdefault(r.version, []).append(VersionAlias(r.name, r.kind))
        return out

    def series_keys(self) -> list[tuple[str, str, str]]:
        """Every (benchmark, config, machine) that has runs."""
        q = (sa.select(t.benchmark.c.name, t.config.c.name, t.machine.c.name).distinct()
             .select_from(t.run)
             .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
             .join(t.config, t.config.c.id == t.run.c.config_id)
             .join(t.machine, t.machine.c.id == t.run.c.machine_id))
        with self.engine.connect() as conn:
            return sorted(tuple(r) for r in conn.execute(q))

    # ------------------------------------------------------------------ arrivals
    #: Seconds :meth:`last_run_id` tries on PostgreSQL to read the mark while no transaction is
    #: inserting runs, before it settles for the safe mark 0.
    run_mark_wait: float = 5.0

    def last_run_id(self) -> int:
        """The id of the newest stored run (0 when there is none): a mark that every run stored
        after this call exceeds (:meth:`runs_since`), so that ``detect --incremental`` finds the
        runs of old versions stored after its last pass.

        Ids count up in the order runs are stored: SQLite has one writer at a time, and a new
        row's id is one above the largest.  PostgreSQL draws ids from a sequence when a row is
        inserted, not when its transaction commits, so a run inserted before the mark could be
        committed after it, below it: the mark is read under a ``SHARE`` lock of the run table,
        taken only when no transaction is inserting runs (``NOWAIT``, tried again for up to
        :attr:`run_mark_wait` seconds).  It never waits in the lock's queue, where it would hold
        back every writer that comes after it for as long as a long import lasts.  When the
        lock cannot be had in that time (a long write transaction), or not at all (a role that
        may only read), the mark is 0: every run counts as stored after it, so the next
        incremental pass searches again in full each series with runs at versions it had
        checked (slower, never wrong)."""
        q = sa.select(sa.func.coalesce(sa.func.max(t.run.c.id), 0))
        if self.engine.dialect.name != "postgresql":
            with self.engine.connect() as conn:
                return int(conn.execute(q).scalar_one())
        deadline = time.monotonic() + self.run_mark_wait
        pause = 0.02
        while True:
            try:
                with self.engine.begin() as conn:
                    conn.execute(sa.text("LOCK TABLE run IN SHARE MODE NOWAIT"))
                    return int(conn.execute(q).scalar_one())
            except sa.exc.DBAPIError as exc:
                state = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)  # psycopg 3, 2
                if state == "55P03" and time.monotonic() < deadline:  # lock_not_available: a writer is busy
                    time.sleep(pause)
                    pause = min(2 * pause, 0.5)
                    continue
                if state in ("55P03", "42501"):  # still busy, or insufficient_privilege
                    return 0
                raise

    def runs_since(self, mark: int, *, exclude_campaigns: Iterable[int] = ()
                   ) -> list[tuple[tuple[str, str, str], str, int]]:
        """What was stored after :meth:`last_run_id` returned ``mark``: ``((benchmark, config,
        machine), version, newest run id)`` for each series and version with such runs (but those
        of the campaigns ``exclude_campaigns``).  Reads the run table's primary key from ``mark``
        on, not the runs' samples."""
        q = (sa.select(t.benchmark.c.name, t.config.c.name, t.machine.c.name, t.version.c.name,
                       sa.func.max(t.run.c.id))
             .select_from(t.run)
             .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
             .join(t.config, t.config.c.id == t.run.c.config_id)
             .join(t.machine, t.machine.c.id == t.run.c.machine_id)
             .join(t.version, t.version.c.id == t.run.c.version_id)
             .where(t.run.c.id > mark)
             .group_by(t.benchmark.c.name, t.config.c.name, t.machine.c.name, t.version.c.name))
        excluded = list(exclude_campaigns)
        if excluded:
            q = q.where(sa.or_(t.run.c.campaign_id.is_(None), t.run.c.campaign_id.not_in(excluded)))
        with self.engine.connect() as conn:
            return [((b, c, m), v, int(i)) for b, c, m, v, i in conn.execute(q)]

    # ------------------------------------------------------------------ series
    def load_series(self, benchmark: str | Iterable[str] | None = None, *, config: str | None = None,
                    machine: str | None = None, versions: Iterable[str] | None = None,
                    campaigns: Iterable[int] | None = None, exclude_campaigns: Iterable[int] = ()) -> list[Series]:
        """Load series with samples as numpy arrays, versions in history order.

        Filters narrow the result (``benchmark`` may be one name or several; ``campaigns`` keeps
        only the runs of these campaigns, ``exclude_campaigns`` leaves theirs out); with none,
        every series in the store is returned.  Only runs
        with status ``ok`` contribute samples (warm-up removed); the failed ones are counted in
        ``Series.failed`` (superseded runs in neither, :meth:`supersede_runs`).
        """
        # Superseded runs are not read at all: a version whose runs all are is no version of the
        # series (summary listed it with 0 runs and 0 failed).
        q = (sa.select(t.run.c.benchmark_id, t.run.c.config_id, t.run.c.machine_id,
                       t.run.c.version_id, t.run.c.status, t.run.c.warmup, t.run.c.encoding,
                       t.run.c.samples)
             .where(t.run.c.status != SUPERSEDED)
             .order_by(t.run.c.benchmark_id, t.run.c.config_id, t.run.c.machine_id,
                       t.run.c.version_id, t.run.c.run_index))
        with self.engine.connect() as conn:
            bench = {r.id: r for r in conn.execute(sa.select(t.benchmark))}
            cfgs = {r.id: r.name for r in conn.execute(sa.select(t.config.c.id, t.config.c.name))}
            machs = {r.id: r.name for r in conn.execute(sa.select(t.machine.c.id, t.machine.c.name))}
            vers = {r.id: version_info(r) for r in conn.execute(sa.select(t.version))}
            if benchmark is not None:
                names = {benchmark} if isinstance(benchmark, str) else set(benchmark)
                ids = [i for i, r in bench.items() if r.name in names]
                if len(ids) < len(names):
                    missing = sorted(names - {bench[i].name for i in ids})[0]
                    raise NotFoundError(f"no benchmark named {missing!r} in the store")
                q = q.where(t.run.c.benchmark_id.in_(ids)) if len(ids) > 1 else q.where(t.run.c.benchmark_id == ids[0])
            if config is not None:
                ids = [i for i, n in cfgs.items() if n == config]
                if not ids:
                    raise NotFoundError(f"no configuration named {config!r} in the store")
                q = q.where(t.run.c.config_id == ids[0])
            if machine is not None:
                ids = [i for i, n in machs.items() if n == machine]
                if not ids:
                    raise NotFoundError(f"no machine named {machine!r} in the store")
                q = q.where(t.run.c.machine_id == ids[0])
            if versions is not None:
                wanted = set(versions)
                vids = [i for i, v in vers.items() if v.name in wanted]
                unknown = wanted - {vers[i].name for i in vids}
                if unknown:
                    raise NotFoundError(f"no version named {sorted(unknown)[0]!r} in the store")
                q = q.where(t.run.c.version_id.in_(vids))
            if campaigns is not None:
                q = q.where(t.run.c.campaign_id.in_(list(campaigns)))
            excluded = list(exclude_campaigns)
            if excluded:
                q = q.where(sa.or_(t.run.c.campaign_id.is_(None), t.run.c.campaign_id.not_in(excluded)))
            rows = conn.execute(q).all()

        # Rows come ordered by series and version, so each version's runs are gathered while its
        # rows last (a dictionary lookup a version, not a run: 5,000 runs a series in
        # benchmarks/bench_detect.py), and plain float64 samples are read in place.
        grouped: dict[tuple[int, int, int], dict[int, tuple[list[np.ndarray], int, int]]] = {}
        current = None
        arrays: list[np.ndarray] = []
        failed = w = 0
        for b, c, m, v, status, warmup, enc, blob in rows:
            if current != (b, c, m, v):
                if current is not None:
                    grouped.setdefault(current[:3], {})[current[3]] = (arrays, failed, w)
                current, arrays, failed, w = (b, c, m, v), [], 0, 0
            if status == "ok":
                arrays.append((np.frombuffer(blob, dtype="<f8") if enc == "f8" and blob is not None
                               else decode_samples(blob, enc))[warmup:])
            else:
                failed += 1
            if warmup > w:
                w = warmup
        if current is not None:
            grouped.setdefault(current[:3], {})[current[3]] = (arrays, failed, w)

        out = []
        for (b, c, m), per_version in grouped.items():
            order = sorted(per_version, key=lambda vid: vers[vid].history_key)
            br = bench[b]
            out.append(Series(
                benchmark=br.name, config=cfgs[c], machine=machs[m], unit=br.unit, direction=br.direction,
                versions=[vers[v] for v in order], runs=[per_version[v][0] for v in order],
                failed=[per_version[v][1] for v in order], warmup=[per_version[v][2] for v in order]))
        out.sort(key=lambda s: (s.benchmark, s.config, s.machine))
        return out

    def measured_versions(self, benchmark: str, config: str, *, exclude_campaigns: Iterable[int] | None = None
                          ) -> dict[str, list[str]]:
        """Machine -> the versions where it has a run of ``benchmark`` on ``config`` with samples
        (status ``ok``), without reading the samples: what each machine measured
        (:func:`regbench.detect.alerts.record_alerts` asks, to tell a machine-specific change).

        ``exclude_campaigns`` leaves those campaigns' runs out [default: the sessions'
        (:meth:`session_campaigns`), as a history does].
        """
        excluded = list(self.session_campaigns() if exclude_campaigns is None else exclude_campaigns)
        q = (sa.select(t.machine.c.name.label("machine"), t.version.c.name.label("version")).distinct()
             .select_from(t.run)
             .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
             .join(t.config, t.config.c.id == t.run.c.config_id)
             .join(t.machine, t.machine.c.id == t.run.c.machine_id)
             .join(t.version, t.version.c.id == t.run.c.version_id)
             .where(t.benchmark.c.name == benchmark, t.config.c.name == config, t.run.c.status == "ok"))
        if excluded:
            q = q.where(sa.or_(t.run.c.campaign_id.is_(None), t.run.c.campaign_id.not_in(excluded)))
        out: dict[str, list[str]] = {}
        with self.engine.connect() as conn:
            for r in conn.execute(q.order_by(t.machine.c.name, t.version.c.name)):
                out.setdefault(r.machine, []).append(r.version)
        return out

    def measured_together(self, versions: Iterable[str], *, config: str, machine: str
                          ) -> dict[str, set[tuple[str, int | None]]]:
        """Version -> the (benchmark, campaign id) of the runs of ``config`` on ``machine`` at it, of
        any status (None: imported), for those of ``versions`` that have any, without reading the
        runs: what was measured together at a version (:func:`regbench.inventory.scan_failures`
        asks, to tell a benchmark no longer run from one that a campaign of a subset left out)."""
        names = list(dict.fromkeys(versions))
        out: dict[str, set[tuple[str, int | None]]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(names), 500):  # SQLite's bound parameters: 999 at least
                q = (sa.select(t.version.c.name.label("version"), t.benchmark.c.name.label("benchmark"),
                               t.run.c.campaign_id).distinct()
                     .select_from(t.run)
                     .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
                     .join(t.config, t.config.c.id == t.run.c.config_id)
                     .join(t.machine, t.machine.c.id == t.run.c.machine_id)
                     .join(t.version, t.version.c.id == t.run.c.version_id)
                     .where(t.version.c.name.in_(names[start:start + 500]), t.config.c.name == config,
                            t.machine.c.name == machine))
                for r in conn.execute(q):
                    out.setdefault(r.version, set()).add((r.benchmark, r.campaign_id))
        return out

    def measured_where(self, versions: Iterable[str]) -> dict[str, set[tuple[str, str, int | None]]]:
        """Version -> the (configuration, machine, campaign id) of its runs, of any status (None:
        imported), for those of ``versions`` that have any, without reading the runs: where a
        version was measured (:func:`regbench.silence.retired` asks, to tell that the others
        went on measuring while a machine or a configuration stored nothing)."""
        names = list(dict.fromkeys(versions))
        out: dict[str, set[tuple[str, str, int | None]]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(names), 500):  # SQLite's bound parameters: 999 at least
                q = (sa.select(t.version.c.name.label("version"), t.config.c.name.label("config"),
                               t.machine.c.name.label("machine"), t.run.c.campaign_id).distinct()
                     .select_from(t.run)
                     .join(t.config, t.config.c.id == t.run.c.config_id)
                     .join(t.machine, t.machine.c.id == t.run.c.machine_id)
                     .join(t.version, t.version.c.id == t.run.c.version_id)
                     .where(t.version.c.name.in_(names[start:start + 500])))
                for r in conn.execute(q):
                    out.setdefault(r.version, set()).add((r.config, r.machine, r.campaign_id))
        return out

    def run_spans(self, machine: str, *, config: str | None = None,
                  benchmarks: Iterable[str] | None = None) -> list[RunSpan]:
        """When ``machine`` stored runs (of ``config``, of ``benchmarks``; every one by default),
        per configuration and version: the ids of the first and the last, whatever their status
        or campaign (sessions too), in configuration and version name order.  Ids count up in
        the order runs are stored (:meth:`last_run_id`), so this says when a machine stored what
        (:func:`regbench.silence.retired` asks, to tell a machine retired from one slow to
        report).  Read from the series index, without the runs' rows on SQLite."""
        with self.engine.connect() as conn:
            mid = conn.execute(sa.select(t.machine.c.id).where(t.machine.c.name == machine)).scalar()
            if mid is None:
                return []
            q = (sa.select(t.run.c.config_id, t.run.c.version_id, sa.func.min(t.run.c.id).label("first"),
                           sa.func.max(t.run.c.id).label("last"))
                 .where(t.run.c.machine_id == mid).group_by(t.run.c.config_id, t.run.c.version_id))
            if config is not None:
                q = q.where(t.run.c.config_id == sa.select(t.config.c.id).where(t.config.c.name == config)
                            .scalar_subquery())
            if benchmarks is not None:
                q = q.where(t.run.c.benchmark_id.in_(sa.select(t.benchmark.c.id)
                                                     .where(t.benchmark.c.name.in_(list(benchmarks)))))
            rows = conn.execute(q).all()
            configs = dict(conn.execute(sa.select(t.config.c.id, t.config.c.name)).all())
            wanted = sorted({r.version_id for r in rows})
            names: dict[int, str] = {}
            for start in range(0, len(wanted), 500):
                names.update(conn.execute(sa.select(t.version.c.id, t.version.c.name)
                                          .where(t.version.c.id.in_(wanted[start:start + 500]))).all())
        return sorted((RunSpan(configs[r.config_id], names[r.version_id], r.first, r.last) for r in rows),
                      key=lambda s: (s.config, s.version))

    def first_runs(self) -> dict[str, int]:
        """Version -> the id of the first run stored at it (any machine, configuration, status or
        campaign): when each version was first measured, in the order the store received runs
        (:meth:`last_run_id`).  Read from the version index, without the runs' rows on SQLite."""
        q = sa.select(t.run.c.version_id, sa.func.min(t.run.c.id).label("first")).group_by(t.run.c.version_id)
        with self.engine.connect() as conn:
            firsts = dict(conn.execute(q).all())
            names = dict(conn.execute(sa.select(t.version.c.id, t.version.c.name)).all())
        return {names[v]: first for v, first in firsts.items()}

    def raw_runs(self, benchmark: str, version: str, *, config: str | None = None,
                 machine: str | None = None) -> list[StoredRun]:
        """Every run of one experiment with all its samples, by configuration, machine and run index.

        Unlike :meth:`load_series` the warm-up iterations are kept, for warm-up diagnostics.
        """
        q = (_stored_runs_query()
             .where(t.benchmark.c.name == benchmark, t.version.c.name == version)
             .order_by(t.config.c.name, t.machine.c.name, t.run.c.run_index))
        if config is not None:
            q = q.where(t.config.c.name == config)
        if machine is not None:
            q = q.where(t.machine.c.name == machine)
        with self.engine.connect() as conn:
            return [_stored_run(r) for r in conn.execute(q)]

    def experiment_runs(self, experiments: Iterable[tuple[str, str, str, str]]
                        ) -> dict[tuple[str, str, str, str], list[StoredRun]]:
        """The stored runs, with all their samples, of each of ``experiments`` (benchmark,
        version, config, machine) that has any, by run index: what an import compares a file's
        runs with (:func:`regbench.ingest.plan_import`).  The keys of the runs of these versions
        are read first, then the samples of the wanted runs alone, 500 at a time (SQLite's limit
        of bound parameters is 999 at least)."""
        wanted = set(experiments)
        if not wanted:
            return {}
        versions = sorted({e[1] for e in wanted})
        # The other names narrow the first query when they are few; its rows are matched anyway.
        narrow = [column.in_(names) for column, names in (
            (t.benchmark.c.name, sorted({e[0] for e in wanted})), (t.config.c.name, sorted({e[2] for e in wanted})),
            (t.machine.c.name, sorted({e[3] for e in wanted}))) if len(names) <= 100]
        ids: list[int] = []
        with self.engine.connect() as conn:
            for start in range(0, len(versions), 500):
                q = _runs_query().where(t.version.c.name.in_(versions[start:start + 500]), *narrow)
                ids += [row.id for row in conn.execute(q)
                        if (row.benchmark, row.version, row.config, row.machine) in wanted]
            out: dict[tuple[str, str, str, str], list[StoredRun]] = {}
            for start in range(0, len(ids), 500):
                q = _stored_runs_query().where(t.run.c.id.in_(ids[start:start + 500]))
                for row in conn.execute(q):
                    out.setdefault((row.benchmark, row.version, row.config, row.machine), []).append(_stored_run(row))
        for runs in out.values():
            runs.sort(key=lambda r: r.run_index)
        return out

    # ------------------------------------------------------------------ export
    def iter_raw_runs(self) -> Iterator[StoredRun]:
        """Every run with all samples (warm-up included), what its tool said of it (its ``timing``
        and ``weights``) and its version's tags, for export.

        Versions come in history order, then benchmark, config, machine and run index: the order
        does not depend on how the store was filled, and the first appearance of each version in
        an export is its place in history, so re-importing a file without timestamps keeps it.
        """
        rank = {v.id: k for k, v in enumerate(self.versions())}
        tags = {name: tuple(a.name for a in aliases if a.kind == "tag") for name, aliases in self.aliases().items()}
        rows = list(self._raw_runs())
        rows.sort(key=lambda r: (rank[r.version_id], r.benchmark, r.config, r.machine, r.run_index))
        for row in rows:
            run = _stored_run(row)
            yield dataclasses.replace(run, tags=tags[run.version]) if tags.get(run.version) else run

    def _raw_runs(self) -> Iterator[sa.Row]:
        q = _stored_runs_query().order_by(t.run.c.id)
        with self.engine.connect() as conn:
            yield from conn.execute(q)

    # ------------------------------- what detection needs (regbench.detect.driver, detect.alerts)
    @property
    def shareable(self) -> bool:
        """Whether another process can open this store by its URL (an in-memory SQLite store cannot)."""
        return not (self._engine.dialect.name == "sqlite" and self._engine.url.database in (None, "", ":memory:"))

    def __reduce__(self):
        """A store pickles as its URL: unpickling opens it again, without creating it (how
        detection's worker processes open the store)."""
        if not self.shareable:
            raise StoreError(f"the store {self.url} lives in this process's memory: another process cannot open it")
        return (self._reopen, (self.url,))

    @classmethod
    def _reopen(cls, url: str) -> Store:
        return cls(url, create=False)

    def benchmark_names_unopened(self) -> list[str] | None:
        """Every stored benchmark's name, read as the database is (:meth:`peek`: no store made, none
        upgraded); None when there is no store yet, or none of this regbench's."""
        if self.url.startswith("sqlite:///") and self.url != "sqlite:///:memory:" \
                and not Path(self.url[len("sqlite:///"):]).is_file():
            return None  # connecting would make the file
        return self.peek(lambda conn: list(conn.execute(sa.select(t.benchmark.c.name)).scalars()))

    def benchmark_names(self) -> list[str]:
        """Every stored benchmark's name, sorted."""
        with self.engine.connect() as conn:
            return list(conn.execute(sa.select(t.benchmark.c.name).order_by(t.benchmark.c.name)).scalars())

    def machine_names(self) -> list[str]:
        """Every machine the store knows (those of its campaigns and runs), sorted."""
        with self.engine.connect() as conn:
            return list(conn.execute(sa.select(t.machine.c.name).order_by(t.machine.c.name)).scalars())

    def load_detection_states(self, method: str, options: str) -> dict[tuple[str, str, str], dict]:
        """Saved detector states of ``method`` computed with ``options``, by series
        (:func:`regbench.store.state.load_states`)."""
        from .state import load_states

        return load_states(self, method, options)

    def save_detection_states(self, method: str, options: str, states: Iterable[tuple[tuple[str, str, str], dict]]
                              ) -> int:
        """Replace the saved states of these series for ``method`` (:func:`regbench.store.state.save_states`)."""
        from .state import save_states

        return save_states(self, method, options, states)

    def advance_run_marks(self, method: str, options: str, mark: int, *, benchmark: str | None = None,
                          config: str | None = None, machine: str | None = None) -> int:
        """Move the run marks of the saved states an incremental pass examined up to its own
        (:func:`regbench.store.state.advance_marks`)."""
        from .state import advance_marks

        return advance_marks(self, method, options, mark, benchmark=benchmark, config=config, machine=machine)

    def run_alert_transaction(self, work, *, attempts: int = 3):
        """``work(tx)`` in one transaction over the alert tables, run again from scratch when a
        concurrent writer made it conflict (:func:`regbench.store.alerts.run_in_transaction`):
        the repository of :mod:`regbench.detect.alerts`."""
        from .alerts import run_in_transaction

        return run_in_transaction(self, work, attempts=attempts)




#: Attempts of a write whose unique key a concurrent writer took first (each sees the other's row).
_CONFLICT_ATTEMPTS = 5


def _nothing_measured(conn: Connection, benchmark_id: int) -> bool:
    """Whether the benchmark has no ``ok`` run stored (only failures, or no run at all)."""
    ok = sa.select(t.run.c.id).where(t.run.c.benchmark_id == benchmark_id, t.run.c.status == "ok").limit(1)
    return conn.execute(ok).first() is None


def _run_key(rec: RunRecord) -> tuple[str, str, str, str, int]:
    return (rec.benchmark, rec.version, rec.config, rec.machine, int(rec.run_index))


def _run_text(rec: RunRecord) -> str:
    return f"run {rec.run_index} of {rec.benchmark!r} at version {rec.version!r} ({rec.config}, {rec.machine})"


def _after_stored(conn: Connection, records: Sequence[RunRecord]) -> list[RunRecord]:
    """``records`` with their run indices moved past the runs stored for the same (benchmark,
    version, config, machine), read in the caller's transaction."""
    groups = {_run_key(rec)[:4] for rec in records}
    q = (sa.select(t.benchmark.c.name, t.version.c.name, t.config.c.name, t.machine.c.name,
                   sa.func.max(t.run.c.run_index))
         .select_from(t.run)
         .join(t.benchmark, t.benchmark.c.id == t.run.c.benchmark_id)
         .join(t.version, t.version.c.id == t.run.c.version_id)
         .join(t.config, t.config.c.id == t.run.c.config_id)
         .join(t.machine, t.machine.c.id == t.run.c.machine_id)
         .where(t.benchmark.c.name.in_(sorted({g[0] for g in groups})),
                t.version.c.name.in_(sorted({g[1] for g in groups})))
         .group_by(t.benchmark.c.name, t.version.c.name, t.config.c.name, t.machine.c.name))
    first = {(b, v, c, m): int(top) + 1 for b, v, c, m, top in conn.execute(q)}
    return [dataclasses.replace(rec, run_index=first.get(_run_key(rec)[:4], 0) + int(rec.run_index))
            for rec in records]


def _by_commit(rows: Iterable[tuple[str, str | None]], sha: str) -> str | None:
    """The version stored with commit ``sha``: the one named by the commit (not a dirty working
    tree of it) when several are."""
    named = [n for n, c in rows if c == sha]
    if len(named) > 1:
        committed = [n for n in named if sha.startswith(n)]
        named = committed or named
    return named[0] if len(named) == 1 else None


def _by_short_sha(rows: Iterable[tuple[str, str | None]], sha: str) -> str | None:
    """The version stored without a commit under the name a campaign gives commit ``sha`` (its
    abbreviation: at least 7 hex digits), as runs imported or pushed from a campaign's export
    are, which carries no commit; None unless exactly one."""
    named = [n for n, c in rows if c is None and len(n) >= 7 and sha.startswith(n.lower())
             and all(ch in "0123456789abcdef" for ch in n.lower())]
    return named[0] if len(named) == 1 else None


def _known_revisions() -> set[str]:
    folder = Path(__file__).parent / "migrations" / "versions"
    return {p.name.split("_", 1)[0] for p in folder.glob("[0-9]*_*.py")}


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    # NORMAL synchronous with WAL (set once per file in _migrate) keeps every committed run
    # across a process kill.
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def dumps_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, default=str)
