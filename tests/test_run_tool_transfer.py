"""What a tool said of a run beyond its samples (table ``run_tool``, schema 0014) moves with the
run from store to store: ``regbench export`` -> ``regbench import``, and ``regbench push`` to a
real ``regbench serve`` (docs/formats.md, columns ``processes``, ``warmup_seconds``,
``iteration_seconds`` and ``weight``).

The source store is a JMH suite imported by the real adapter (the golden ``sample`` mode file,
whose iterations carry weights and whose forks carry timing, and a ``thrpt``/``avgt`` file with
secondary metrics, which have no timing), plus runs written through the store's API where the
adapter never writes them: timing without weights, weights without timing, awkward floats, a
failed run with its timing.  The target is the ``store`` fixture (SQLite, or PostgreSQL with
``--store-url``); its ``run_tool`` rows are compared with the source's column by column, NULLs
included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from apitools import start, tokens

from regbench.cli.main import main
from regbench.model import RunRecord, ToolTiming
from regbench.store import Store
from regbench.store import schema as t

JMH = Path(__file__).parent / "golden" / "adapters" / "jmh"
#: The sample-mode benchmark of the golden file: JMH's own score of it, pooled over the
#: invocations each iteration timed (its ``primaryMetric.score``: 9.482184397163117E-5 ms/op).
SAMPLED = "regbench.golden.SumBench.sum(size=10)"


def jmh_store(path: Path) -> Store:
    """A JMH suite at two versions, and the runs the adapter never writes (through the store's API)."""
    for version, name in (("v1", "sample.json"), ("v2", "thrpt_avgt_gc.json")):
        assert main(["--store", str(path), "import", "--format", "jmh", "--version", version, str(JMH / name)]) == 0
    store = Store(path, create=False)
    samples = np.array([1.5, 2.25, 3.0])
    store.add_runs([
        RunRecord("tool/timed", "v2", 0, samples, timing=ToolTiming(3, 0.1 + 0.2, 1 / 3)),
        RunRecord("tool/weighed", "v2", 0, samples, weights=np.array([0.0, 5e-324, 1e300])),
        RunRecord("tool/weighed", "v2", 1, samples, weights=np.array([-0.0, 1.0, 2.5])),
        RunRecord("tool/failed", "v2", 0, np.empty(0), status="crashed", stderr_tail="JVM died",
                  timing=ToolTiming(2, 0.0, 0.02)),
        RunRecord("plain", "v2", 0, samples),
    ])
    return store


def tool_rows(store: Store) -> dict[tuple, tuple]:
    """The ``run_tool`` table as stored, by run key (benchmark, version, config, machine, index):
    the timing columns and the weights' bytes, None for NULL."""
    q = (sa.select(t.benchmark.c.name, t.version.c.name, t.config.c.name, t.machine.c.name, t.run_tool.c.run_index,
                   t.run_tool.c.processes, t.run_tool.c.warmup_seconds, t.run_tool.c.iteration_seconds,
                   t.run_tool.c.weights)
         .select_from(t.run_tool)
         .join(t.benchmark, t.benchmark.c.id == t.run_tool.c.benchmark_id)
         .join(t.version, t.version.c.id == t.run_tool.c.version_id)
         .join(t.config, t.config.c.id == t.run_tool.c.config_id)
         .join(t.machine, t.machine.c.id == t.run_tool.c.machine_id))
    with store.engine.connect() as conn:
        rows = list(conn.execute(q))
    return {tuple(r[:5]): (r[5], None if r[6] is None else float(r[6]).hex(),
                           None if r[7] is None else float(r[7]).hex(), None if r[8] is None else bytes(r[8]))
            for r in rows}


def tool_scores(location: str, capsys) -> dict[tuple[str, str], float | None]:
    """``regbench summary --format json``'s ``tool_score`` by benchmark and version."""
    capsys.readouterr()
    assert main(["--store", location, "summary", "--format", "json"]) == 0
    return {(r["benchmark"], r["version"]): r.get("tool_score") for r in json.loads(capsys.readouterr().out)}


def test_export_then_import_reproduces_the_tool_rows_and_the_tools_score(store, tmp_path, capsys):
    with jmh_store(tmp_path / "ci.db") as ci:
        source = tool_rows(ci)
        assert main(["--store", ci.url, "export", "-o", str(tmp_path / "all.csv")]) == 0
    # Every kind of row is at stake: timing and weights, each alone, a failed run's timing.
    kinds = {(p is not None, w is not None) for p, _, _, w in source.values()}
    assert kinds == {(True, True), (True, False), (False, True)} and len(source) == 14
    assert main(["--store", store.url, "import", str(tmp_path / "all.csv")]) == 0
    assert tool_rows(store) == source
    # The pooled score JMH itself reports, on the store the file was imported into.
    scores = tool_scores(store.url, capsys)
    assert scores[(SAMPLED, "v1")] == pytest.approx(9.482184397163117e-5, rel=1e-12)
    assert scores == tool_scores(str(tmp_path / "ci.db"), capsys)
    # And the import's export is the source's, byte for byte.
    assert main(["--store", store.url, "export", "-o", str(tmp_path / "again.csv")]) == 0
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "all.csv").read_bytes()


def test_push_to_a_real_server_carries_the_tool_rows(store_url, tmp_path, capsys):
    with jmh_store(tmp_path / "ci.db") as ci:
        source = tool_rows(ci)
        assert main(["--store", ci.url, "export", "-o", str(tmp_path / "all.csv")]) == 0
    Store(store_url).close()
    keys = tokens(store_url, ci=("submit", "local"))
    server = start(store_url, tmp_path, rate=100, burst=100)
    try:
        done = subprocess.run([sys.executable, "-m", "regbench", "push", "--server", server.base, "--format", "csv",
                               "--machine", "local", "--token-env", "CI_TOKEN", str(tmp_path / "all.csv")],
                              capture_output=True, text=True, timeout=120, env={**os.environ, "CI_TOKEN": keys["ci"]})
    finally:
        log = server.stop()
    assert done.returncode == 0, done.stderr + log
    assert done.stdout.startswith("stored 55 runs (")
    with Store(store_url, create=False) as served:
        assert tool_rows(served) == source
    scores = tool_scores(store_url, capsys)
    assert scores[(SAMPLED, "v1")] == pytest.approx(9.482184397163117e-5, rel=1e-12)
    assert scores == tool_scores(str(tmp_path / "ci.db"), capsys)


def test_json_lines_carry_the_tool_fields_as_the_csv_does(store, tmp_path):
    lines = [{"benchmark": "jmh/x", "version": "v1", "run": 0, "iteration": k, "value": 1.0 + k, "processes": 2,
              "warmup_seconds": 0.4, "iteration_seconds": 0.1, "weight": 100 + k} for k in range(3)]
    lines += [{"benchmark": "jmh/x", "version": "v1", "run": 1, "iteration": 0, "value": 2.0, "processes": None,
               "weight": 7.5}, {"benchmark": "jmh/x", "version": "v1", "run": 2, "status": "failed",
                                "processes": 1, "warmup_seconds": 0.2, "iteration_seconds": 0.1}]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    assert main(["--store", store.url, "import", str(path)]) == 0
    assert {(i.run_index, i.timing, None if i.weights is None else tuple(i.weights.tolist()))
            for i in store.run_tools()} == {(0, ToolTiming(2, 0.4, 0.1), (100.0, 101.0, 102.0)),
                                            (1, None, (7.5,)), (2, ToolTiming(1, 0.2, 0.1), None)}


def test_a_file_with_the_tool_columns_blank_imports_as_one_without_them(tmp_path):
    rows = ["b,v1,0,0,1.5", "b,v1,0,1,2.5", "b,v2,0,0,3.5"]
    old = tmp_path / "old.csv"
    old.write_text("benchmark,version,run,iteration,value\n" + "".join(r + "\n" for r in rows))
    new = tmp_path / "new.csv"
    new.write_text("benchmark,version,run,iteration,value,processes,warmup_seconds,iteration_seconds,weight\n"
                   + "".join(r + ",,,,\n" for r in rows))
    exports = []
    for path in (old, new):
        db = tmp_path / f"{path.stem}.db"
        assert main(["--store", str(db), "import", str(path)]) == 0
        with Store(db, create=False) as s:
            assert s.run_tools() == [] and tool_rows(s) == {}
        assert main(["--store", str(db), "export", "-o", str(tmp_path / f"{path.stem}-export.csv")]) == 0
        exports.append((tmp_path / f"{path.stem}-export.csv").read_bytes())
    assert exports[0] == exports[1]


def test_a_bad_tool_value_is_one_line_and_the_import_stores_nothing(tmp_path, capsys):
    db = tmp_path / "s.db"
    with jmh_store(db) as s:
        before = tool_rows(s), len(s.runs())
    path = tmp_path / "bad.csv"
    # Good runs first (they would be stored, were the import not one transaction), then a weight
    # of a run that is not a number.
    path.write_text("benchmark,version,run,iteration,value,processes,warmup_seconds,iteration_seconds,weight\n"
                    "new,v3,0,0,1.0,1,0.5,0.1,3\nnew,v3,0,1,1.0,1,0.5,0.1,4\nnew,v3,1,0,1.0,1,0.5,0.1,3e\n")
    capsys.readouterr()
    assert main(["--store", str(db), "import", str(path)]) == 3  # ExitStatus.ERROR
    err = capsys.readouterr().err
    assert err == f"error: {path}:4: `weight` is not a number: '3e'\n"
    with Store(db, create=False) as s:
        assert (tool_rows(s), len(s.runs())) == before
