"""A version's place in its repository's history: ``version.generation``.

Revision ID: 0020
Revises: 0019

Versions are ordered by their timestamp (a commit's committer date), then by the order the store
first saw them.  Commits made in one second share a timestamp: a rebase, ``git am`` of a patch
series, a hosting service's "rebase and merge" write a whole series with one committer date.  When
the newest of them was benchmarked first (a CI job on the tip, then a bisection or a back-fill of
its history), first appearance put it before its own ancestors.  ``generation`` is how many
commits the version's commit reaches, itself included (``git rev-list --count``): an ancestor
always has fewer, so it orders commits of one timestamp as their history does.  It is recorded
where it is needed, for commits that share their timestamp with another version (NULL
elsewhere, and for versions stored without a repository: imports, releases).  Rows of 0019 get
NULL.
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"


def upgrade() -> None:
    op.add_column("version", sa.Column("generation", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("version") as batch:
        batch.drop_column("generation")
