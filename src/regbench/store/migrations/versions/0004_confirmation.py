"""Confirmation before alerting: what re-running a change's two versions said, and its cost.

Revision ID: 0004
Revises: 0003

A table is added (``regbench detect --confirm``): stores at 0003 keep every row, their alerts
have no confirmation, and they are upgraded when first opened.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "confirmation",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=True),
        sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
        sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("previous_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("kind", sa.String(12), nullable=False),
        sa.Column("method", sa.String(40), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("verdict", sa.String(40), nullable=True),
        sa.Column("stopped", sa.String(16), nullable=True),
        sa.Column("change", sa.Float, nullable=True),
        sa.Column("cs_low", sa.Float, nullable=True),
        sa.Column("cs_high", sa.Float, nullable=True),
        sa.Column("alpha", sa.Float, nullable=True),
        sa.Column("threshold", sa.Float, nullable=True),
        sa.Column("pairs", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failed_pairs", sa.Integer, nullable=False, server_default="0"),
        sa.Column("seconds", sa.Float, nullable=False, server_default="0"),
        sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaign.id"), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("alert_id", name="uq_confirmation_alert"),
    )


def downgrade() -> None:
    op.drop_table("confirmation")
