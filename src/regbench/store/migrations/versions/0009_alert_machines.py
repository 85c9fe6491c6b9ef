"""Alerts across machines: one alert for a change seen on several machines, with each one's evidence.

Revision ID: 0009
Revises: 0008

A table is added, ``alert_machine``: per alert, the other machines that showed the same change
(their versions, change, interval, p-value and methods) and those that measured versions around
the step without showing it (:mod:`regbench.detect.alerts`, "Across machines").  A column is added
to ``alert``: ``hold_machines``, not NULL while an alert waits for more machines (``[alerts]
require_machines``).  Stores at 0008 keep every row: their alerts have no other machine and are
not held, which is what they were.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.add_column("alert", sa.Column("hold_machines", sa.Integer, nullable=True))
    op.create_table(
        "alert_machine",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("changed", sa.Boolean, nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=True),
        sa.Column("previous_id", sa.Integer, sa.ForeignKey("version.id"), nullable=True),
        sa.Column("change", sa.Float, nullable=True),
        sa.Column("ci_low", sa.Float, nullable=True),
        sa.Column("ci_high", sa.Float, nullable=True),
        sa.Column("p_value", sa.Float, nullable=True),
        sa.Column("methods", sa.JSON, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("alert_id", "machine_id", name="uq_alert_machine"),
    )
    op.create_index("ix_alert_machine_alert", "alert_machine", ["alert_id"])


def downgrade() -> None:
    op.drop_index("ix_alert_machine_alert", "alert_machine")
    op.drop_table("alert_machine")
    with op.batch_alter_table("alert") as batch:
        batch.drop_column("hold_machines")
