"""The fixed cost of a run that a plan was priced with: ``plan.run_overhead``.

Revision ID: 0012
Revises: 0011

``regbench optimize`` prices a configuration at its iterations and, when the store holds runs of
the benchmark of two or more lengths, at the fixed cost of each run too (in iterations,
``regbench.optimize.algorithm.run_overhead``); the plan keeps what it was priced with.  Plans
stored at 0011 keep every row and get NULL (not recorded: they were priced at iterations alone).
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    op.add_column("plan", sa.Column("run_overhead", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("plan") as batch:
        batch.drop_column("run_overhead")
