"""The span of a creep alert: ``alert.until``.

Revision ID: 0021
Revises: 0020

``auto`` reports a creeping degradation (several small steps of one sign, each below the minimum
change; Bulej et al. 2005, s.2.3) as one change from ``version`` to ``until``, the first version at
the new level, and the detection JSON and the change table say so.  The alert raised from it kept
only ``version`` and ``previous``, so its notifications read as if one commit made the ramp's
whole change.  ``until`` keeps the span with the alert, by version name: SQLite adds no foreign
key to an existing table without rebuilding it, and the name is what every reader shows.  Rows of
0020 get NULL: a step, as every alert before was told.
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"


def upgrade() -> None:
    op.add_column("alert", sa.Column("until", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert") as batch:
        batch.drop_column("until")
