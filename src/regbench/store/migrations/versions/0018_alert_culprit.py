"""What bisection found for an alert: ``alert.culprit`` and ``alert.bisection``.

Revision ID: 0018
Revises: 0017

``regbench detect --bisect`` builds and runs the commits between an alert's two versions and finds
the first that made the change (or, for a failure alert, the first where the benchmark fails).
Until now it only printed it.  Two columns keep it with the alert, so that the notifications sent
after the bisection, ``regbench alerts show``, the API and the dashboard point at the commit:
``culprit``, the commit found (NULL: not bisected, or no single commit found), and ``bisection``,
what the bisection said, on one line (the commit and its own change or error, or the commits still
in question).  Rows of 0017 get NULL in both.
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.add_column("alert", sa.Column("culprit", sa.String(64), nullable=True))
    op.add_column("alert", sa.Column("bisection", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert") as batch:
        batch.drop_column("bisection")
        batch.drop_column("culprit")
