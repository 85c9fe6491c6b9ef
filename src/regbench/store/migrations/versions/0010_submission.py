"""Submissions through the HTTP API: the client's id of each, for idempotent retries.

Revision ID: 0010
Revises: 0009

A table is added, ``submission``: one row per submission accepted by ``POST /api/v1/runs``,
written in the same transaction as its runs, with the SHA-256 of what was sent.  A retry with
the same id and body is answered from this row and stores nothing; the same id with another body
is refused.  Stores at 0009 keep every row: they have had no submission.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.create_table(
        "submission",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(200), nullable=False),
        sa.Column("body_sha256", sa.String(64), nullable=False),
        sa.Column("token_id", sa.Integer, sa.ForeignKey("api_token.id"), nullable=True),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("machine", sa.String(200), nullable=False),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("samples", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("submission_id", name="uq_submission_id"),
    )


def downgrade() -> None:
    op.drop_table("submission")
