"""Incremental detection: the state each detector goes on from, per series.

Revision ID: 0003
Revises: 0002

A table and an index on ``run.version_id`` (so that the runs of the newest versions load
without a scan of the whole table) are added: stores at 0002 keep every row, and are upgraded
when first opened.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "detect_state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
        sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("method", sa.String(40), nullable=False),
        sa.Column("options", sa.String(400), nullable=False),
        sa.Column("last_version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("benchmark_id", "config_id", "machine_id", "method", name="uq_detect_state"),
    )
    op.create_index("ix_run_version", "run", ["version_id"])


def downgrade() -> None:
    op.drop_index("ix_run_version", "run")
    op.drop_table("detect_state")
