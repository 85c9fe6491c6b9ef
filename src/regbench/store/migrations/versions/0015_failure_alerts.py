"""Failure alerts: a benchmark that starts failing is an alert, with the error of its runs.

Revision ID: 0015
Revises: 0014

``regbench detect`` opens an alert of kind ``failure`` for a series that ran at a version and
fails at every run from a later one on (:mod:`regbench.detect.alerts`, "Failures").  A column is
added to ``alert``: ``error``, why the runs of a failure alert failed, on one line (NULL for a
change).  Stores at 0014 keep every row: their alerts are changes, with no error.

A failure has no relative change, interval or p-value.  The interval and p-value were always
nullable; ``change`` is required, and a failure alert stores 0 there, which regbench reads as no
change (:mod:`regbench.store.alerts`).  Making the column nullable instead would rebuild ``alert``
on SQLite (copy, drop, rename), and the store enforces foreign keys, which cannot be turned off
inside the migration's transaction: dropping the old table deletes its rows first, which the
history, deliveries and machines of every alert refer to (``defer_foreign_keys`` does not help:
the rows of the rebuilt table do not count as the ones deleted).

The downgrade deletes the failure alerts (with their history, deliveries and machines), which a
store at 0014 would show as changes of 0%, then drops ``error``.
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.add_column("alert", sa.Column("error", sa.Text, nullable=True))


def downgrade() -> None:
    alert = sa.table("alert", sa.column("id", sa.Integer), sa.column("kind", sa.String),
                     sa.column("fixed_by_alert_id", sa.Integer))
    failures = sa.select(alert.c.id).where(alert.c.kind == "failure")
    for name in ("alert_event", "alert_delivery", "alert_machine", "confirmation"):
        child = sa.table(name, sa.column("alert_id", sa.Integer))
        op.execute(child.delete().where(child.c.alert_id.in_(failures)))
    # No failure alert fixes another alert; cleared all the same, so that no row names a deleted one.
    op.execute(alert.update().where(alert.c.fixed_by_alert_id.in_(failures)).values(fixed_by_alert_id=None))
    op.execute(alert.delete().where(alert.c.kind == "failure"))
    with op.batch_alter_table("alert") as batch:
        batch.drop_column("error")
