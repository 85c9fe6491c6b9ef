"""The duration level of optimized plans: ``run_slice`` and ``plan.slices`` / ``plan.full_slices``.

Revision ID: 0013
Revises: 0012

A Python benchmark with ``slices = N`` times each iteration as N consecutive slices; the slices of
a run are kept in ``run_slice`` (keyed like the run) so that ``regbench optimize`` can simulate
shorter iterations, and a plan records the slices its iterations last out of the full campaign's.
Plans stored at 0012 get NULL (their iterations last as long as the full campaign's).
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.create_table(
        "run_slice",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("n_slices", sa.Integer, nullable=False),
        sa.Column("slices", sa.LargeBinary, nullable=False),
        sa.UniqueConstraint("benchmark_id", "version_id", "config_id", "machine_id", "run_index",
                            name="uq_run_slice_key"),
    )
    op.add_column("plan", sa.Column("slices", sa.Integer, nullable=True))
    op.add_column("plan", sa.Column("full_slices", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("plan") as batch:
        batch.drop_column("full_slices")
        batch.drop_column("slices")
    op.drop_table("run_slice")
