"""The results repository's relational schema (seed 001 fig. 1, "results repository").

Metadata is relational; the samples of one run are one compact binary array in the run's row
(DESIGN.md "Data").  Only portable SQLAlchemy types are used so that the same schema works on
SQLite (the default) and PostgreSQL.  The schema is versioned by Alembic migrations in
``regbench/store/migrations``; :data:`SCHEMA_REVISION` is the head this code expects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

R = TypeVar("R")


class Database(Protocol):
    """What the repositories of this package (:mod:`.alerts`, :mod:`.state`) need of a store: its
    engine to read, and its write transactions (which wait for other writers, :mod:`.tx`).
    :class:`regbench.store.Store` is one; they do not import it, so that the store can offer them
    as methods without an import cycle."""

    @property
    def engine(self) -> Engine: ...

    def write(self, work: Callable[[Connection], R]) -> R: ...


SCHEMA_REVISION = "0023"

metadata = sa.MetaData()

benchmark = sa.Table(
    "benchmark",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(400), nullable=False, unique=True),
    sa.Column("unit", sa.String(40), nullable=False, server_default="s"),
    sa.Column("direction", sa.String(8), nullable=False, server_default="lower"),
)

version = sa.Table(
    "version",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("commit_sha", sa.String(64), nullable=True),
    # UTC, naive: used for ordering (DESIGN.md: order comes from history, not insertion).
    sa.Column("timestamp", sa.DateTime, nullable=True),
    # The timestamp exactly as it was given, so that an export reproduces an import.
    sa.Column("timestamp_text", sa.String(64), nullable=True),
    # How many commits the version's commit reaches (``git rev-list --count``), where its
    # timestamp ties another version's: orders commits of one committer second as history does.
    sa.Column("generation", sa.Integer, nullable=True),
)

config = sa.Table(
    "config",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(400), nullable=False, unique=True),
    sa.Column("params", sa.JSON, nullable=True),
)

machine = sa.Table(
    "machine",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("fingerprint", sa.JSON, nullable=True),
)

campaign = sa.Table(
    "campaign",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("started_at", sa.DateTime, nullable=False),
    sa.Column("finished_at", sa.DateTime, nullable=True),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("fingerprint", sa.JSON, nullable=True),
    sa.Column("command", sa.Text, nullable=True),
    sa.Column("plan", sa.JSON, nullable=True),
    sa.Column("status", sa.String(16), nullable=False, server_default="running"),
)

build = sa.Table(
    "build",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("build_key", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("log_tail", sa.Text, nullable=True),
    sa.Column("duration", sa.Float, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.UniqueConstraint("version_id", "build_key", name="uq_build_version_key"),
)

run = sa.Table(
    "run",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("run_index", sa.Integer, nullable=False),
    sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaign.id"), nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("stderr_tail", sa.Text, nullable=True),
    sa.Column("started_at", sa.DateTime, nullable=True),
    sa.Column("duration", sa.Float, nullable=True),
    sa.Column("warmup", sa.Integer, nullable=False, server_default="0"),
    sa.Column("first_iteration", sa.Integer, nullable=False, server_default="0"),
    sa.Column("n_samples", sa.Integer, nullable=False, server_default="0"),
    sa.Column("encoding", sa.String(8), nullable=False, server_default="f8"),
    sa.Column("samples", sa.LargeBinary, nullable=True),
    # (0023) A superseded run (status ``superseded``, its benchmark's definition changed since):
    # the status it had and the campaign that superseded it, so that it can be taken back.
    sa.Column("superseded_status", sa.String(16), nullable=True),
    sa.Column("superseded_by", sa.Integer, nullable=True),
    sa.UniqueConstraint(
        "benchmark_id", "version_id", "config_id", "machine_id", "run_index", name="uq_run_key"
    ),
)

sa.Index("ix_run_series", run.c.benchmark_id, run.c.config_id, run.c.machine_id, run.c.version_id)

# The slices of a Python benchmark's iterations (0013): with ``slices = N`` each iteration is timed
# as N consecutive slices (regbench.run.worker), kept here beside the run, keyed like it, as one
# ``(n_samples, N)`` array of float64 (row-major, little-endian); only ``regbench optimize`` reads
# them, to simulate iterations shorter than the campaign's (Japke et al. 2025, s.3.1).
run_slice = sa.Table(
    "run_slice",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("run_index", sa.Integer, nullable=False),
    sa.Column("n_slices", sa.Integer, nullable=False),
    sa.Column("slices", sa.LargeBinary, nullable=False),
    sa.UniqueConstraint("benchmark_id", "version_id", "config_id", "machine_id", "run_index",
                        name="uq_run_slice_key"),
)

# What a benchmark tool said about a run beyond its samples (0014), keyed like the run: the
# processes it started for the benchmark (JMH's forks), the seconds of warm-up it ran and did not
# report, the length of one of its iterations (regbench.model.ToolTiming: what ``regbench
# optimize`` prices a tool's run with), and per sample how many measurements it pooled into it
# (``weights``, float64 little-endian, warm-up included: a JMH sample-mode iteration's timed
# invocations, by which JMH's own score weighs the iterations).  A row holds what the tool said:
# the timing columns are NULL together, and so is ``weights``, where it did not say them.
run_tool = sa.Table(
    "run_tool",
    metadata,
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


# ---------------------------------------------------------------------------------------- alerts
# The notification repository of seed 001 fig. 1 ("to avoid repetitive or redundant notifications,
# the analysis module consults the notification repository"), added by migration 0002.
# See regbench.detect.alerts for the rules that fill it and regbench.notify for the outbox.

# An alert's ``status`` is one of regbench.model.ALERT_STATUSES (Perfherder-like triage; ``expected``
# is seed 004 s.5's intended slowdown) and its ``kind`` one of regbench.model.ALERT_KINDS.
#: State of one alert's delivery to one sink.
DELIVERY_STATES = ("pending", "sent", "failed")

alert = sa.Table(
    "alert",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    # A random, globally unique key: the idempotency key sent with every delivery of the alert.
    sa.Column("uid", sa.String(32), nullable=False, unique=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("previous_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("kind", sa.String(12), nullable=False),
    # A failure alert (kind ``failure``, 0015) has no change of a value: it stores 0, read as None
    # (regbench.store.alerts); the column stays required, as making it nullable would rebuild the
    # table on SQLite, which enforced foreign keys forbid inside the migration's transaction.
    sa.Column("change", sa.Float, nullable=False),
    sa.Column("ci_low", sa.Float, nullable=True),
    sa.Column("ci_high", sa.Float, nullable=True),
    sa.Column("p_value", sa.Float, nullable=True),
    sa.Column("methods", sa.JSON, nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="new"),
    sa.Column("fixed_by_id", sa.Integer, sa.ForeignKey("version.id"), nullable=True),
    sa.Column("fixed_by_alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    # Two alerts for exactly the same step can never be right (the second would have been merged):
    # this makes a concurrent second detection fail and retry instead of duplicating.
    sa.UniqueConstraint("benchmark_id", "config_id", "machine_id", "kind", "version_id", "previous_id",
                        name="uq_alert_step"),
    # (0009) Not NULL while the alert is held: seen on fewer machines than this, the number
    # [alerts] require_machines asked; it is listed, not notified.  NULL: raised.
    sa.Column("hold_machines", sa.Integer, nullable=True),
    # (0015) Why the runs of a failure alert failed, one line (regbench.failures.failure_cause);
    # NULL for a change.
    sa.Column("error", sa.Text, nullable=True),
    # (0018) What `detect --bisect` found: the first commit of the change (or of the failure),
    # NULL when not bisected or when no single commit was found; and what it said, on one line.
    sa.Column("culprit", sa.String(64), nullable=True),
    sa.Column("bisection", sa.Text, nullable=True),
    # (0021) For a creep (`auto`'s ramp of small same-sign steps reported as one change): the first
    # version at the new level, by name; NULL for a step.  A name, not a key of `version`: SQLite
    # adds no foreign key to an existing table without rebuilding it (see `change` above).
    sa.Column("until", sa.String(200), nullable=True),
)

sa.Index("ix_alert_status", alert.c.status)

# An alert across machines (0009): one row per machine other than the alert's own that either
# showed the same change (``changed``, with its own versions, change, interval, p-value and
# methods) or measured versions around the step without showing it (``changed`` false, the
# other columns NULL).  See regbench.detect.alerts, "Across machines".
alert_machine = sa.Table(
    "alert_machine",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("changed", sa.Boolean, nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=True),
    sa.Column("previous_id", sa.Integer, sa.ForeignKey("version.id"), nullable=True),
    sa.Column("change", sa.Float, nullable=True),
    sa.Column("ci_low", sa.Float, nullable=True),
    sa.Column("ci_high", sa.Float, nullable=True),
    sa.Column("p_value", sa.Float, nullable=True),
    sa.Column("methods", sa.JSON, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    # (0022) For a creep on this machine: the first version at its new level, by name, as
    # `alert.until` (0021) for the alert's own machine; NULL for a step and when not changed.
    sa.Column("until", sa.String(200), nullable=True),
    # A machine is evidence of an alert once (a concurrent detection adding it too retries).
    sa.UniqueConstraint("alert_id", "machine_id", name="uq_alert_machine"),
)
sa.Index("ix_alert_machine_alert", alert_machine.c.alert_id)

alert_event = sa.Table(
    "alert_event",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # the status after the event
    sa.Column("who", sa.String(200), nullable=False),
    sa.Column("at", sa.DateTime, nullable=False),  # "when" (UTC, naive); WHEN is an SQL keyword
    sa.Column("why", sa.Text, nullable=True),
)

sa.Index("ix_alert_event_alert", alert_event.c.alert_id)

alert_delivery = sa.Table(
    "alert_delivery",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=False),
    sa.Column("sink", sa.String(100), nullable=False),
    sa.Column("state", sa.String(8), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.Text, nullable=True),
    # pending: when the claim of the attempt in flight expires; failed: when to try again.
    sa.Column("next_attempt_at", sa.DateTime, nullable=True),
    sa.Column("sent_at", sa.DateTime, nullable=True),
    sa.UniqueConstraint("alert_id", "sink", name="uq_alert_delivery"),
)


# Incremental detection: per series and method, the state a detector goes on from (0003).
detect_state = sa.Table(
    "detect_state",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("method", sa.String(40), nullable=False),
    # The detector options the state was computed with; a state saved with others is not used.
    sa.Column("options", sa.String(400), nullable=False),
    sa.Column("last_version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("state", sa.JSON, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    # The id of the newest run when the pass that saved or last examined this state began: runs
    # above it at versions at or before the last checked one came late (0016).
    sa.Column("run_mark", sa.Integer, nullable=True),
    sa.UniqueConstraint("benchmark_id", "config_id", "machine_id", "method", name="uq_detect_state"),
)
# The runs of a few versions (an incremental pass loads only the new ones) without a full scan (0003).
sa.Index("ix_run_version", run.c.version_id)
# The failed runs, which every detection asks for, without a scan of every run: a partial index
# of the runs whose status is not ``ok``, empty where nothing fails (0017).
sa.Index("ix_run_failed", run.c.status, sqlite_where=run.c.status != "ok", postgresql_where=run.c.status != "ok")


# What `regbench detect --confirm` found when it ran a change's two versions again (0004): one row
# per change it was asked about, linked to the alert the change became (``alert_id``; NULL for a
# change it refuted or could not settle, which is not an alert).  Its columns are those of
# regbench.model.Confirmation, beside the step it is about.
confirmation = sa.Table(
    "confirmation",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("alert_id", sa.Integer, sa.ForeignKey("alert.id"), nullable=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("previous_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("kind", sa.String(12), nullable=False),  # of the detected change
    sa.Column("method", sa.String(40), nullable=False),  # the detector that found it
    sa.Column("status", sa.String(16), nullable=False),  # regbench.model.CONFIRMATION_STATUSES
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("verdict", sa.String(40), nullable=True),
    sa.Column("stopped", sa.String(16), nullable=True),
    sa.Column("change", sa.Float, nullable=True),
    sa.Column("cs_low", sa.Float, nullable=True),
    sa.Column("cs_high", sa.Float, nullable=True),
    sa.Column("alpha", sa.Float, nullable=True),
    sa.Column("threshold", sa.Float, nullable=True),
    sa.Column("pairs", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failed_pairs", sa.Integer, nullable=False, server_default="0"),
    sa.Column("seconds", sa.Float, nullable=False, server_default="0"),
    sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaign.id"), nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("compared_by", sa.Text, nullable=True),  # (0011) what the pairs compared, in words
    # An alert is confirmed once, when it is created (several NULLs are allowed everywhere).
    sa.UniqueConstraint("alert_id", name="uq_confirmation_alert"),
)


# Versions as people name them (0006): a git tag or branch name of a stored version.  An alias
# names one version at a time (a moved tag or branch is re-pointed when its new commit is stored);
# ``kind`` is one of regbench.model.ALIAS_KINDS.
version_alias = sa.Table(
    "version_alias",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("kind", sa.String(8), nullable=False),
    sa.UniqueConstraint("name", name="uq_version_alias_name"),
)
sa.Index("ix_version_alias_version", version_alias.c.version_id)


# Optimized execution plans (0007, Japke et al. 2025 Algorithm 1): one row per plan derived; the
# highest ``revision`` of a (benchmark, config, machine) is its current plan, earlier ones stay as
# history.  Its columns are those of regbench.model.ExecutionPlan.
plan = sa.Table(
    "plan",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark_id", sa.Integer, sa.ForeignKey("benchmark.id"), nullable=False),
    sa.Column("config_id", sa.Integer, sa.ForeignKey("config.id"), nullable=False),
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machine.id"), nullable=False),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaign.id"), nullable=False),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("version.id"), nullable=False),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.Column("iterations", sa.Integer, nullable=False),
    sa.Column("warmup", sa.Integer, nullable=False),
    sa.Column("full_runs", sa.Integer, nullable=False),
    sa.Column("full_iterations", sa.Integer, nullable=False),
    sa.Column("metric", sa.String(8), nullable=False),
    sa.Column("threshold", sa.Float, nullable=False),
    sa.Column("stability", sa.Float, nullable=True),
    sa.Column("full_stability", sa.Float, nullable=True),
    sa.Column("stable", sa.Boolean, nullable=False),
    sa.Column("seconds", sa.Float, nullable=True),
    sa.Column("full_seconds", sa.Float, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("run_overhead", sa.Float, nullable=True),  # (0012) a run's fixed cost priced, in iterations
    # (0013) the duration level: an iteration of `slices` of the full campaign's `full_slices`
    sa.Column("slices", sa.Integer, nullable=True),
    sa.Column("full_slices", sa.Integer, nullable=True),
    # (0019) the forks each run asks for (REGBENCH_FORKS; NULL: the tool's command's own) and
    # what each fork was priced with, in iterations
    sa.Column("forks", sa.Integer, nullable=True),
    sa.Column("fork_overhead", sa.Float, nullable=True),
    sa.UniqueConstraint("benchmark_id", "config_id", "machine_id", "revision", name="uq_plan_revision"),
)


# API tokens of the live dashboard (0008): who may write (triage alerts) and what.  Only the
# SHA-256 of a token is kept; ``scopes`` is a space-separated list (read, triage, submit, admin);
# ``machine`` binds a token to one machine's submissions (kept for later use); a revoked token
# keeps its row, so that the history of what it did still names it.
api_token = sa.Table(
    "api_token",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("scopes", sa.String(200), nullable=False),
    sa.Column("machine", sa.String(200), nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("revoked_at", sa.DateTime, nullable=True),
    sa.UniqueConstraint("token_hash", name="uq_api_token_hash"),
)

# Submissions through the HTTP API (0010): the client's id of each, recorded in the transaction
# that stores its runs, so that a retried submission is never stored twice (``body_sha256``
# tells a retry, same body, from a different body sent under the same id).
submission = sa.Table(
    "submission",
    metadata,
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
