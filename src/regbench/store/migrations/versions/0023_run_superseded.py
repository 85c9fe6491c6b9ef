"""What a superseded run was: ``run.superseded_status`` and ``run.superseded_by``.

Revision ID: 0023
Revises: 0022

A campaign whose benchmark's definition changed marks the runs stored before as ``superseded``
(:meth:`regbench.store.Store.supersede_runs`).  To take them back (the definition reverted, or
``run --keep-old-runs`` right after), the run keeps the status it had and the campaign that
superseded it.  Rows of 0022 get NULL: not superseded (no run was before this revision).
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"


def upgrade() -> None:
    op.add_column("run", sa.Column("superseded_status", sa.String(16), nullable=True))
    op.add_column("run", sa.Column("superseded_by", sa.Integer, nullable=True))


def downgrade() -> None:
    # A superseded run goes back to the status it had: a store of 0022 has no superseded runs.
    op.execute("UPDATE run SET status = superseded_status WHERE status = 'superseded' "
               "AND superseded_status IS NOT NULL")
    with op.batch_alter_table("run") as batch:
        batch.drop_column("superseded_by")
        batch.drop_column("superseded_status")
