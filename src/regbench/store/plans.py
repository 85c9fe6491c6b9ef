"""Optimized execution plans (table ``plan``, migration 0007).

``regbench optimize`` writes one row per benchmark each time it derives a plan, under the next
revision number of the benchmark's series; the highest revision is the current plan, the earlier
ones stay as history (which campaign each came from, with which metric and threshold).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from ..model import ExecutionPlan, utcnow
from . import schema as t
from .schema import Database
from .tx import again_on_conflict


@dataclass(frozen=True)
class NewPlan:
    """A plan to store (what :class:`~regbench.model.ExecutionPlan` holds but its revision and time)."""

    benchmark: str
    config: str
    machine: str
    campaign_id: int
    version: str
    runs: int
    iterations: int
    warmup: int
    full_runs: int
    full_iterations: int
    metric: str
    threshold: float
    stability: float
    full_stability: float
    stable: bool
    seconds: float | None
    full_seconds: float | None
    run_overhead: float | None = None
    slices: int | None = None
    full_slices: int | None = None
    forks: int | None = None
    fork_overhead: float | None = None


def save_plans(store: Database, plans: Iterable[NewPlan]) -> list[ExecutionPlan]:
    """Store each plan as the next revision of its series, all in one transaction."""
    now = utcnow()
    plans = list(plans)

    def work(conn) -> list[ExecutionPlan]:
        out: list[ExecutionPlan] = []
        ids = {name: {r.name: r.id for r in conn.execute(sa.select(table.c.id, table.c.name))}
               for name, table in (("benchmark", t.benchmark), ("config", t.config), ("machine", t.machine),
                                   ("version", t.version))}
        for p in plans:
            key = (ids["benchmark"][p.benchmark], ids["config"][p.config], ids["machine"][p.machine])
            last = conn.execute(sa.select(sa.func.max(t.plan.c.revision)).where(
                (t.plan.c.benchmark_id == key[0]) & (t.plan.c.config_id == key[1])
                & (t.plan.c.machine_id == key[2]))).scalar()
            revision = (last or 0) + 1
            values = {f: getattr(p, f) for f in NewPlan.__dataclass_fields__
                      if f not in ("benchmark", "config", "machine", "version")}
            conn.execute(t.plan.insert().values(benchmark_id=key[0], config_id=key[1], machine_id=key[2],
                                                version_id=ids["version"][p.version], revision=revision,
                                                created_at=now, **_finite(values)))
            out.append(ExecutionPlan(revision=revision, created_at=now, **{
                f: getattr(p, f) for f in NewPlan.__dataclass_fields__}))
        return out

    # Two optimizations of one series at once (PostgreSQL: the other's revision was not visible):
    # once more, numbering after it.
    return again_on_conflict(lambda: store.write(work), what="the plans")


def _finite(values: dict) -> dict:
    # A NaN metric (undefined) is stored as NULL: not every database keeps NaN in a float column.
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in values.items()}


def load_plans(store: Database, *, current: bool = True, benchmarks: Sequence[str] | None = None,
               config: str | None = None, machine: str | None = None) -> list[ExecutionPlan]:
    """Stored plans by benchmark, configuration and machine (only the current revision of each
    with ``current``, else every revision), ordered by series and revision."""
    q = (sa.select(t.benchmark.c.name.label("benchmark"), t.config.c.name.label("config"),
                   t.machine.c.name.label("machine"), t.version.c.name.label("version"), t.plan)
         .select_from(t.plan)
         .join(t.benchmark, t.benchmark.c.id == t.plan.c.benchmark_id)
         .join(t.config, t.config.c.id == t.plan.c.config_id)
         .join(t.machine, t.machine.c.id == t.plan.c.machine_id)
         .join(t.version, t.version.c.id == t.plan.c.version_id)
         .order_by(t.benchmark.c.name, t.config.c.name, t.machine.c.name, t.plan.c.revision))
    if benchmarks is not None:
        q = q.where(t.benchmark.c.name.in_(list(benchmarks)))
    if config is not None:
        q = q.where(t.config.c.name == config)
    if machine is not None:
        q = q.where(t.machine.c.name == machine)
    with store.engine.connect() as conn:
        rows = list(conn.execute(q))
    plans = [ExecutionPlan(
        benchmark=r.benchmark, config=r.config, machine=r.machine, revision=r.revision,
        campaign_id=r.campaign_id, version=r.version, runs=r.runs, iterations=r.iterations, warmup=r.warmup,
        full_runs=r.full_runs, full_iterations=r.full_iterations, metric=r.metric, threshold=r.threshold,
        stability=_nan(r.stability), full_stability=_nan(r.full_stability), stable=bool(r.stable),
        seconds=r.seconds, full_seconds=r.full_seconds, created_at=r.created_at,
        run_overhead=r.run_overhead, slices=r.slices, full_slices=r.full_slices, forks=r.forks,
        fork_overhead=r.fork_overhead) for r in rows]
    if current:
        latest: dict[tuple[str, str, str], ExecutionPlan] = {}
        for p in plans:
            latest[(p.benchmark, p.config, p.machine)] = p
        plans = list(latest.values())
    return plans


def count_plans_unopened(store, *, config: str, machine: str | None = None) -> int | None:
    """Plans stored for configuration ``config`` (on ``machine``), counted without opening the
    store (:meth:`regbench.store.Store.peek`): ``run --plan optimized`` refuses a store with none
    before it opens, and so upgrades, an older one.  None where the database holds no schema of
    this regbench's (opening it says so)."""
    def count(conn) -> int:
        if not sa.inspect(conn).has_table("plan"):
            return 0  # a store from before plans (migration 0007)
        # Only columns every revision since 0007 has: the older store is read as it is.
        q = (sa.select(sa.func.count()).select_from(t.plan)
             .join(t.config, t.config.c.id == t.plan.c.config_id)
             .join(t.machine, t.machine.c.id == t.plan.c.machine_id)
             .where(t.config.c.name == config))
        if machine is not None:
            q = q.where(t.machine.c.name == machine)
        return int(conn.execute(q).scalar() or 0)

    return store.peek(count)


def forget_plans(store: Database, benchmark: str) -> int:
    """Delete every plan of ``benchmark`` (and of its reported benchmarks ``benchmark/...``);
    return how many rows went."""
    def work(conn) -> int:
        ids = [r.id for r in conn.execute(sa.select(t.benchmark.c.id, t.benchmark.c.name))
               if r.name == benchmark or r.name.startswith(benchmark + "/")]
        if not ids:
            return 0
        return conn.execute(t.plan.delete().where(t.plan.c.benchmark_id.in_(ids))).rowcount

    return store.write(work)


def forget_plans_of(store: Database, benchmarks: Sequence[str]) -> dict[str, int]:
    """Delete every plan of each of ``benchmarks`` (and of their reported benchmarks
    ``NAME/...``), all in one transaction, and only if each has at least one: how many rows each
    has (a plan of ``go/X`` counts for ``go`` and for ``go/X`` when both are named).  When one has
    none (0), nothing is deleted."""
    names = list(dict.fromkeys(benchmarks))

    def work(conn) -> dict[str, int]:
        rows = [(r.id, r.name) for r in conn.execute(sa.select(t.benchmark.c.id, t.benchmark.c.name))]
        ids = {name: [i for i, n in rows if n == name or n.startswith(name + "/")] for name in names}
        counts = {name: (conn.execute(sa.select(sa.func.count()).select_from(t.plan)
                                      .where(t.plan.c.benchmark_id.in_(mine))).scalar_one() if mine else 0)
                  for name, mine in ids.items()}
        if all(counts.values()):
            every = sorted({i for mine in ids.values() for i in mine})
            conn.execute(t.plan.delete().where(t.plan.c.benchmark_id.in_(every)))
        return counts

    return store.write(work)


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


__all__ = ["NewPlan", "count_plans_unopened", "forget_plans", "forget_plans_of", "load_plans", "save_plans"]
