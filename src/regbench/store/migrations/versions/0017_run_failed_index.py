"""The failed runs without reading every run: a partial index ``ix_run_failed``.

Revision ID: 0017
Revises: 0016

``regbench detect`` asks for the failed runs on every pass (failure alerts), and so does every
``--incremental`` pass after each push to a server with ``[serve] detect``.  Without an index that
question read the whole ``run`` table: 0.4 s of a 1.4 s incremental command on a store of 500,000
runs, with not one failure in it.  The index holds only the runs whose status is not ``ok`` (a
partial index, on SQLite and PostgreSQL alike), so it costs nothing where nothing fails.
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    failed = sa.text("status != 'ok'")
    op.create_index("ix_run_failed", "run", ["status"], sqlite_where=failed, postgresql_where=failed)


def downgrade() -> None:
    op.drop_index("ix_run_failed", table_name="run")
