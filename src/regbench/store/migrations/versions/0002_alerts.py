"""Alerts: the notification repository (seed 001 fig. 1), their history and their deliveries.

Revision ID: 0002
Revises: 0001

Only tables are added: stores at 0001 keep every row, and are upgraded when first opened.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "alert",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uid", sa.String(32), nullable=False, unique=True),
        sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
        sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("previous_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("kind", sa.String(12), nullable=False),
        sa.Column("change", sa.Float, nullable=False),
        sa.Column("ci_low", sa.Float, nullable=True),
        sa.Column("ci_high", sa.Float, nullable=True),
        sa.Column("p_value", sa.Float, nullable=True),
        sa.Column("methods", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="new"),
        sa.Column("fixed_by_id", sa.Integer, sa.ForeignKey("version.id"), nullable=True),
        sa.Column("fixed_by_alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("benchmark_id", "config_id", "machine_id", "kind", "version_id", "previous_id",
                            name="uq_alert_step"),
    )
    op.create_index("ix_alert_status", "alert", ["status"])
    op.create_table(
        "alert_event",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("who", sa.String(200), nullable=False),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("why", sa.Text, nullable=True),
    )
    op.create_index("ix_alert_event_alert", "alert_event", ["alert_id"])
    op.create_table(
        "alert_delivery",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=False),
        sa.Column("sink", sa.String(100), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("next_attempt_at", sa.DateTime, nullable=True),
        sa.Column("sent_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("alert_id", "sink", name="uq_alert_delivery"),
    )


def downgrade() -> None:
    op.drop_table("alert_delivery")
    op.drop_index("ix_alert_event_alert", "alert_event")
    op.drop_table("alert_event")
    op.drop_index("ix_alert_status", "alert")
    op.drop_table("alert")
