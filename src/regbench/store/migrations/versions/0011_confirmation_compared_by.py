"""What a confirmation compared: ``confirmation.compared_by``.

Revision ID: 0011
Revises: 0010

``detect --confirm`` compares a change's two versions the way the detection summarised its runs
(run means, a low quantile, run medians, mode by mode) or as ``--confirm-as`` says; the one-line
description of what its pairs compared (and whether they ran as duets) is kept with the
confirmation.  Stores at 0010 keep every row: their confirmations compared run means or said
nothing, and get NULL (not recorded).
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    op.add_column("confirmation", sa.Column("compared_by", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("confirmation") as batch:
        batch.drop_column("compared_by")
