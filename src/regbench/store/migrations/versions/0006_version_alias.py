"""Versions as people name them: the tags and branch names of a stored version.

Revision ID: 0006
Revises: 0004

A table is added: ``version_alias`` maps a name (a git tag such as ``v10.5.0`` or a branch name
such as ``main``) to the stored version its commit is, with the kind of ref it was.  An alias
names one version at a time: a moved tag or branch is pointed at the version it names when that
version is benchmarked.  Stores at 0004 keep every row (their versions have no aliases until
they are benchmarked again) and are upgraded when first opened.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "version_alias",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.UniqueConstraint("name", name="uq_version_alias_name"),
    )
    op.create_index("ix_version_alias_version", "version_alias", ["version_id"])


def downgrade() -> None:
    op.drop_index("ix_version_alias_version", table_name="version_alias")
    op.drop_table("version_alias")
