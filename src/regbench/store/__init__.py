"""The results repository (seed 001 fig. 1): SQLAlchemy schema, migrations and queries.

The records it returns (:class:`~regbench.model.BenchmarkInfo`, :class:`~regbench.model.RunInfo`,
:class:`~regbench.model.StoredRun`...) live in :mod:`regbench.model`, so that readers of them need
not import the store.

==========  ==================================================================================
module      job
==========  ==================================================================================
``db``      :class:`Store`: open (SQLite path or any SQLAlchemy URL) and migrate, write a run in
            one transaction, read series, runs and listings as typed records
``schema``  the tables (portable SQLAlchemy types only) and the schema revision
``alerts``  the notification repository: alerts, their history, deliveries, the outbox queries
``state``   detectors' saved states for incremental detection
``tx``      write transactions that wait for other writers (``BEGIN IMMEDIATE``, retries with
            backoff), named rows created once (``ON CONFLICT DO NOTHING``), migrations serialized
``leases``  a running campaign's lock (a file lock, or a PostgreSQL advisory lock): a campaign
            left ``running`` whose lock is free was killed
``plans``   optimized execution plans per benchmark, versioned (``regbench optimize``)
``tokens``  API tokens of the live dashboard: only their SHA-256 is kept (``regbench token``)
``submissions`` the ids of the HTTP API's submissions, recorded with their runs (retries stored once)
``history`` :class:`HistoryView`: the series as histories (one line of commits, sessions'
            runs left out or centred), what ``regbench detect`` reads
==========  ==================================================================================

Migrations (Alembic) live in ``migrations/``; a store made by any earlier revision is upgraded
when it is opened.
"""

from .db import DEFAULT_LOCATION, ENV_VAR, Store, decode_samples, encode_samples, resolve_url
from .history import HistoryView

__all__ = ["DEFAULT_LOCATION", "ENV_VAR", "HistoryView", "Store", "decode_samples", "encode_samples",
           "resolve_url"]
