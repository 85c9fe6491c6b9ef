"""The forks of an optimized plan: ``plan.forks`` and ``plan.fork_overhead``.

Revision ID: 0019
Revises: 0018

A tool that runs each benchmark in processes of its own (JMH's ``-f`` forks) had them as the
command set them: a plan reduced the runs and the iterations of each fork, never the forks.  Where
the command takes their number from regbench (``REGBENCH_FORKS``), the forks are a level of the
plan: ``forks`` is how many each run asks for (NULL: the command's own, as before), and
``fork_overhead`` the fixed cost each fork was priced with, in iterations (its start and the
tool's warm-up in it; NULL where the forks are not a level, ``run_overhead`` then holding all of a
run's fixed cost).  Rows of 0018 get NULL in both.
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.add_column("plan", sa.Column("forks", sa.Integer, nullable=True))
    op.add_column("plan", sa.Column("fork_overhead", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("plan") as batch:
        batch.drop_column("fork_overhead")
        batch.drop_column("forks")
