"""Saved detector states, for incremental detection (table ``detect_state``, migration 0003).

A full detection pass saves, per series, the state a detector goes on from (for ``auto``: the
sufficient statistics of the segment since the last change); ``regbench detect --incremental``
then loads only the versions after each series' last one and the saved state.  A state's
``run_mark`` (column ``run_mark``, 0016) is the id of the newest run when the pass that saved or
last examined it began: runs stored after it at older versions came late.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from ..model import utcnow
from . import schema as t
from .schema import Database
from .tx import again_on_conflict

SeriesKey = tuple[str, str, str]  # benchmark, config, machine

#: The key of a state (as the detection driver gives and takes it) kept in column ``run_mark``.
RUN_MARK = "run_mark"


def save_states(store: Database, method: str, options: str, states: Iterable[tuple[SeriesKey, dict]]) -> int:
    """Replace the saved states of these series for ``method`` in one transaction; return how many."""
    now = utcnow()
    states = list(states)

    def work(conn) -> int:
        n = 0
        ids = _ids(conn)
        rows = []
        for (bench, cfg, mach), state in states:
            key = (ids["benchmark"][bench], ids["config"][cfg], ids["machine"][mach])
            rest = {k: v for k, v in state.items() if k != RUN_MARK}
            rows.append(dict(benchmark_id=key[0], config_id=key[1], machine_id=key[2], method=method,
                             options=options, last_version_id=ids["version"][state["last_version"]],
                             state=rest, updated_at=now, run_mark=state.get(RUN_MARK)))
        for chunk in range(0, len(rows), 500):
            part = rows[chunk:chunk + 500]
            for r in part:
                conn.execute(t.detect_state.delete().where(
                    (t.detect_state.c.benchmark_id == r["benchmark_id"]) & (t.detect_state.c.config_id == r["config_id"])
                    & (t.detect_state.c.machine_id == r["machine_id"]) & (t.detect_state.c.method == method)))
            if part:
                conn.execute(t.detect_state.insert(), part)
            n += len(part)
        return n

    # Two detections saving the same series at once (PostgreSQL: the other's row was not visible
    # to the delete): once more, replacing it.
    return again_on_conflict(lambda: store.write(work), what="the detectors' states")


def load_states(store: Database, method: str, options: str) -> dict[SeriesKey, dict]:
    """Saved states of ``method`` computed with the same ``options``, by series."""
    q = (sa.select(t.benchmark.c.name, t.config.c.name, t.machine.c.name, t.detect_state.c.state,
                   t.detect_state.c.run_mark)
         .select_from(t.detect_state)
         .join(t.benchmark, t.benchmark.c.id == t.detect_state.c.benchmark_id)
         .join(t.config, t.config.c.id == t.detect_state.c.config_id)
         .join(t.machine, t.machine.c.id == t.detect_state.c.machine_id)
         .where((t.detect_state.c.method == method) & (t.detect_state.c.options == options)))
    with store.engine.connect() as conn:
        return {(b, c, m): state if mark is None else {**state, RUN_MARK: mark}
                for b, c, m, state, mark in conn.execute(q)}


def advance_marks(store: Database, method: str, options: str, mark: int, *, benchmark: str | None = None,
                  config: str | None = None, machine: str | None = None) -> int:
    """Set the run mark of the saved states of ``method`` with ``options`` (of this benchmark,
    configuration, machine; None: all) to ``mark`` where it is lower: an incremental pass that
    began at ``mark`` examined their series for late runs and found none (those it found, it
    saved again).  Keeps the next pass's read of the runs since the oldest mark short when series
    are no longer measured.  Returns how many states moved."""
    s = t.detect_state
    # A state without a mark (NULL: not below it) is of an older driver revision, not used.
    cond = (s.c.method == method) & (s.c.options == options) & (s.c.run_mark < mark)
    for value, table, column in ((benchmark, t.benchmark, s.c.benchmark_id), (config, t.config, s.c.config_id),
                                 (machine, t.machine, s.c.machine_id)):
        if value is not None:
            cond &= column.in_(sa.select(table.c.id).where(table.c.name == value).scalar_subquery())
    return store.write(lambda conn: conn.execute(s.update().where(cond).values(run_mark=mark)).rowcount)


def _ids(conn) -> dict[str, dict[str, int]]:
    return {name: {r.name: r.id for r in conn.execute(sa.select(table.c.id, table.c.name))}
            for name, table in (("benchmark", t.benchmark), ("config", t.config), ("machine", t.machine),
                                ("version", t.version))}
