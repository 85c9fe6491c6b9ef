"""Initial schema: benchmarks, versions, configurations, machines, campaigns, builds, runs.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "benchmark",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(400), nullable=False, unique=True),
        sa.Column("unit", sa.String(40), nullable=False, server_default="s"),
        sa.Column("direction", sa.String(8), nullable=False, server_default="lower"),
    )
    op.create_table(
        "version",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("commit_sha", sa.String(64), nullable=True),
        sa.Column("timestamp", sa.DateTime, nullable=True),
        sa.Column("timestamp_text", sa.String(64), nullable=True),
    )
    op.create_table(
        "config",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(400), nullable=False, unique=True),
        sa.Column("params", sa.JSON, nullable=True),
    )
    op.create_table(
        "machine",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("fingerprint", sa.JSON, nullable=True),
    )
    op.create_table(
        "campaign",
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
    op.create_table(
        "build",
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
    op.create_table(
        "run",
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
            "benchmark_id", "version_id", "config_id", "machine_id", "run_index",
            name="uq_run_key",
        ),
    )
    op.create_index(
        "ix_run_series", "run", ["benchmark_id", "config_id", "machine_id", "version_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_run_series", "run")
    for name in ("run", "build", "campaign", "machine", "config", "version", "benchmark"):
        op.drop_table(name)
