"""API tokens of the live dashboard (``regbench token``, ``regbench serve``).

Revision ID: 0008
Revises: 0007

A table is added: ``api_token`` holds, per token, its name, the SHA-256 of its secret (the
secret itself is shown once, when it is created), its scopes (space-separated: read, triage,
submit, admin), an optional machine it is bound to, and when it was created and revoked.
Stores at 0007 keep every row and have no tokens.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "api_token",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("scopes", sa.String(200), nullable=False),
        sa.Column("machine", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("revoked_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("token_hash", name="uq_api_token_hash"),
    )


def downgrade() -> None:
    op.drop_table("api_token")
