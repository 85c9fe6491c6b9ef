"""Which runs an incremental detection had seen: ``detect_state.run_mark``.

Revision ID: 0016
Revises: 0015

``detect --incremental`` goes on from each series' saved state with the versions after its last
checked one.  Runs stored later for a version at or before it (a CI job of an older commit that
finished last, a back-fill, a re-measurement) would not be looked at: ``run_mark`` keeps the id
of the newest run stored when the pass that saved or last examined the state began, and the next
incremental pass searches again, in full, the series with runs above their mark at such a
version.  A column, not a key of the state's JSON, so that a pass moves the marks of every series
it examined in one statement.  Rows of 0015 get NULL: their states are of driver revision 2 or
older, which the driver no longer uses (the first incremental pass is a full one).
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.add_column("detect_state", sa.Column("run_mark", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("detect_state") as batch:
        batch.drop_column("run_mark")
