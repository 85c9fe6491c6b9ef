"""What a benchmark tool said about a run beyond its samples: ``run_tool``.

Revision ID: 0014
Revises: 0013

A tool's run (a JMH invocation's forks of one benchmark) costs more than its reported iterations:
each fork starts a JVM and runs warm-up iterations JMH does not write.  ``run_tool`` keeps, keyed
like the run, what the tool said of that (the processes it started, the seconds of warm-up it did
not report, the length of an iteration: ``regbench optimize`` prices a tool's runs with them) and,
per sample, how many measurements the tool pooled into it (a JMH sample-mode iteration's timed
invocations: ``regbench summary`` shows JMH's own, pooled, score beside the mean of the
iterations).  Runs stored at 0013 have no row: their tool's timing is not known.
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    op.create_table(
        "run_tool",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
        sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("processes", sa.Integer, nullable=True),
        sa.Column("warmup_seconds", sa.Float, nullable=True),
        sa.Column("iteration_seconds", sa.Float, nullable=True),
        sa.Column("weights", sa.LargeBinary, nullable=True),
        sa.UniqueConstraint("benchmark_id", "version_id", "config_id", "machine_id", "run_index",
                            name="uq_run_tool_key"),
    )


def downgrade() -> None:
    op.drop_table("run_tool")
