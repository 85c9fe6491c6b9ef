"""Optimized execution plans: the least repetition per benchmark (Japke et al. 2025).

Revision ID: 0007
Revises: 0006

A table is added: ``plan`` holds, per benchmark, configuration and machine, the plans
``regbench optimize`` derived from a full campaign (runs, iterations, warm-up, the metric and
threshold, the precision and time to expect), each with a revision number; the highest revision is
the current plan, earlier ones stay as history.  Stores at 0006 keep every row and have no plans.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "plan",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
        sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaign.id"), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("iterations", sa.Integer, nullable=False),
        sa.Column("warmup", sa.Integer, nullable=False),
        sa.Column("full_runs", sa.Integer, nullable=False),
        sa.Column("full_iterations", sa.Integer, nullable=False),
        sa.Column("metric", sa.String(8), nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.Column("stability", sa.Float, nullable=True),
        sa.Column("full_stability", sa.Float, nullable=True),
        sa.Column("stable", sa.Boolean, nullable=False),
        sa.Column("seconds", sa.Float, nullable=True),
        sa.Column("full_seconds", sa.Float, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("benchmark_id", "config_id", "machine_id", "revision", name="uq_plan_revision"),
    )


def downgrade() -> None:
    op.drop_table("plan")
