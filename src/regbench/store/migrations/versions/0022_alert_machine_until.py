"""The span of a creep on another machine: ``alert_machine.until``.

Revision ID: 0022
Revises: 0021

An alert keeps the span of its own machine's creep in ``alert.until`` (0021).  When the same creep
is seen on a second machine, that machine's change is kept as the alert's evidence of it
(``alert_machine``, 0009), which had ``version`` and ``previous`` only: the second machine's ramp
read as a one-commit step.  ``until`` keeps that machine's span with its evidence, by version name
as ``alert.until`` does (SQLite adds no foreign key to an existing table without rebuilding it,
and the name is what every reader shows).  Rows of 0021 get NULL: a step, as every machine's
evidence before was told; so does a machine measured without the change (``changed`` false).
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"


def upgrade() -> None:
    op.add_column("alert_machine", sa.Column("until", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert_machine") as batch:
        batch.drop_column("until")
