"""The results repository's relational schema (seed 001 fig. 1, "results repository").

Metadata is relational; the samples of one run are one compact binary array in the run's row
(DESIGN.md "Data").  Only portable SQLAlchemy types are used so that the same schema works on
SQLite (the default) and PostgreSQL.  The schema is versioned by Alembic migrations in
``regbench/store/migrations``; :data:`SCHEMA_REVISION` is the head this code expects.
"""

from __future__ import annotations

import sqlalchemy as sa

SCHEMA_REVISION = "0001"

metadata = sa.MetaData()

benchmark = sa.Table(
    "benchmark",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(400), nullable=False, unique=True),
    sa.Column("unit", sa.String(40), nullable=False, server_default="s"),
    sa.Column("direction", sa.String(8), nullable=False, server_default="lower"),
)

version = sa.Table(
    "version",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("commit_sha", sa.String(64), nullable=True),
    # UTC, naive: used for ordering (DESIGN.md: order comes from history, not insertion).
    sa.Column("timestamp", sa.DateTime, nullable=True),
    # The timestamp exactly as it was given, so that an export reproduces an import.
    sa.Column("timestamp_text", sa.String(64), nullable=True),
)

config = sa.Table(
    "config",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(400), nullable=False, unique=True),
    sa.Column("params", sa.JSON, nullable=True),
)

machine = sa.Table(
    "machine",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("fingerprint", sa.JSON, nullable=True),
)

campaign = sa.Table(
    "campaign",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("started_at", sa.DateTime, nullable=False),
    sa.Column("finished_at", sa.DateTime, nullable=True),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("fingerprint", sa.JSON, nullable=True),
    sa.Column("command", sa.Text, nullable=True),
    sa.Column("plan", sa.JSON, nullable=True),
    sa.Column("status", sa.String(16), nullable=False, server_default="running"),
)

build = sa.Table(
    "build",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("build_key", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("log_tail", sa.Text, nullable=True),
    sa.Column("duration", sa.Float, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.UniqueConstraint("version_id", "build_key", name="uq_build_version_key"),
)

run = sa.Table(
    "run",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("run_index", sa.Integer, nullable=False),
    sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaign.id"), nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("stderr_tail", sa.Text, nullable=True),
    sa.Column("started_at", sa.DateTime, nullable=True),
    sa.Column("duration", sa.Float, nullable=True),
    sa.Column("warmup", sa.Integer, nullable=False, server_default="0"),
    sa.Column("first_iteration", sa.Integer, nullable=False, server_default="0"),
    sa.Column("n_samples", sa.Integer, nullable=False, server_default="0"),
    sa.Column("encoding", sa.String(8), nullable=False, server_default="f8"),
    sa.Column("samples", sa.LargeBinary, nullable=True),
    sa.UniqueConstraint(
        "benchmark_id", "version_id", "config_id", "machine_id", "run_index", name="uq_run_key"
    ),
)

sa.Index("ix_run_series", run.c.benchmark_id, run.c.config_id, run.c.machine_id, run.c.version_id)
