"""A benchmark edited between campaigns supersedes its stored runs: they stay in the store, no
analysis reads them, and the campaign measures their versions again (a first-user probe: after
the command was edited, the runs stored before were compared with the new ones, and two empty
commits were reported as a +100% regression)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.cli.main import main
from regbench.model import SUPERSEDED
from regbench.run.definitions import definition, python_source_digest
from regbench.store import Store
from regbench.store import schema as t

CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo {value}; done"]\n'
          '[[benchmark]]\nname = "other"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo 0.5; done"]\n')


def project(tmp_path: Path, commits: int = 3) -> Path:
    return empty_commits_project(tmp_path, commits)


def store_of(tmp_path: Path) -> Store:
    return Store(tmp_path / ".regbench" / "results.db")


def b_values(store: Store) -> list[list[float]]:
    """The distinct samples of each version of ``b`` that analyses see, in history order."""
    (series,) = store.load_series("b")
    return [sorted({float(x) for r in runs for x in r}) for runs in series.runs]


def test_an_edited_benchmark_supersedes_its_runs_and_measures_their_versions_again(tmp_path, capsys):
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1")
    run(cfg, capsys, "detect")  # a full pass saves each series' state
    with store_of(tmp_path) as store, store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(t.detect_state)).scalar() == 2

    cfg.write_text(CONFIG.format(value="0.020"))
    said = run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1,HEAD")
    assert ("Definition changed: b: its command changed since campaign 1, which ran it: its 4 runs stored "
            "before measure the old one and are superseded") in said
    assert "other" not in said.split("Definition changed")[1]  # the unchanged benchmark is not named
    with store_of(tmp_path) as store:
        # Every version of b measured again under the new definition: no analysis sees 0.010.
        assert b_values(store) == [[0.02], [0.02], [0.02]]
        runs = store.runs(benchmark="b")
        old = [r for r in runs if r.status == SUPERSEDED]
        assert len(old) == 4 and {r.run_index for r in old} == {0, 1}
        # Measured again at new indexes: the superseded runs keep theirs.
        assert {r.run_index for r in runs if r.status == "ok" and r.version in {o.version for o in old}} == {2, 3}
        assert not store.runs(failed=True)  # superseded is not failed
        (series,) = store.load_series("b")
        assert series.failed == [0, 0, 0]
        # The other benchmark kept its runs: its first two versions were not run again.
        assert len(store.runs(benchmark="other")) == 6
        assert all(r.status == "ok" for r in store.runs(benchmark="other"))
        with store.engine.connect() as conn:  # b's saved state (of its old runs) is gone, other's kept
            names = set(conn.execute(sa.select(t.benchmark.c.name).select_from(t.detect_state)
                                     .join(t.benchmark, t.benchmark.c.id == t.detect_state.c.benchmark_id)).scalars())
        assert names == {"other"}

    shown = run(cfg, capsys, "show")
    assert "superseded" in shown and "4 runs superseded" in shown
    said = run(cfg, capsys, "export", "-o", str(tmp_path / "out.csv"))
    assert "(4 superseded runs left out" in said
    rows = (tmp_path / "out.csv").read_text().splitlines()
    assert len(rows) == 1 + 36 and not any(",0.01," in row for row in rows)  # 12 runs x 3 iterations
    # The next campaign has nothing to supersede and nothing to run.
    again = run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1,HEAD")
    assert "Definition changed" not in again and "12 runs already stored" in again


def test_keep_old_runs_keeps_them_in_the_analyses(tmp_path, capsys):
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1")
    cfg.write_text(CONFIG.format(value="0.020"))
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD", "--keep-old-runs")
    assert "were kept (--keep-old-runs)" in said
    with store_of(tmp_path) as store:
        assert not any(r.status == SUPERSEDED for r in store.runs())
        assert b_values(store) == [[0.01], [0.02]]


def test_a_superseded_failed_run_is_not_a_failure_to_retry(tmp_path, capsys):
    cfg = project(tmp_path, commits=1)
    cfg.write_text(CONFIG.format(value="0.010").replace("echo 0.010", "exit 3"))
    said = run(cfg, capsys, "run", "--versions", "HEAD", code=4)
    assert "failed" in said
    cfg.write_text(CONFIG.format(value="0.010"))
    said = run(cfg, capsys, "run", "--versions", "HEAD")
    assert "its 2 runs stored before" in said and "--retry-failed" not in said
    with store_of(tmp_path) as store:
        assert not store.runs(failed=True)
        assert b_values(store) == [[0.01]]
    assert "Failed runs" not in run(cfg, capsys, "show")


def test_a_tool_benchmarks_series_and_measures_are_superseded_with_it_and_taken_back(store_url):
    # On every backend (`-m store --store-url` runs it on PostgreSQL): the UPDATE keeps the
    # status each run had, and taking them back restores it.
    from regbench.model import RunRecord

    with Store(store_url) as store:
        campaign = store.start_campaign(seed=1, machine="m", fingerprint={}, command="run", plan={})
        for name, status in (("gb", "failed"), ("gb/BM_a", "ok"), ("gb:rss", "ok"), ("gbx", "ok"), ("gb2/BM_a", "ok")):
            store.add_run(RunRecord(benchmark=name, version="v1", config="default", machine="m", run_index=0,
                                    samples=np.array([1.0, 2.0]) if status == "ok" else np.empty(0), status=status,
                                    campaign_id=campaign))
        later = store.start_campaign(seed=2, machine="m", fingerprint={}, command="run", plan={})
        done = store.supersede_runs(["gb"], config="default", machines=["m"], campaign_id=later)
        assert done == {"gb": 3}
        assert {r.benchmark for r in store.runs() if r.status == SUPERSEDED} == {"gb", "gb/BM_a", "gb:rss"}
        assert not store.runs(failed=True)
        # Another machine's or configuration's runs are not touched.
        assert store.supersede_runs(["gbx"], config="other", machines=["m"], campaign_id=later) == {}
        assert store.supersede_runs(["gbx"], config="default", machines=["n"], campaign_id=later) == {}
        assert store.restore_runs(["gb"], config="default", machines=["m"], superseded_by=later + 1) == {}
        assert store.restore_runs(["gb"], config="default", machines=["m"], superseded_by=later) == {"gb": 3}
        assert {r.benchmark: r.status for r in store.runs()} == {
            "gb": "failed", "gb/BM_a": "ok", "gb:rss": "ok", "gbx": "ok", "gb2/BM_a": "ok"}
        store.supersede_runs(["gb"], config="default", machines=["m"], campaign_id=later)
        assert store.restore_runs(["gb"], config="default", machines=["m"], origins=[campaign]) == {"gb": 3}
        assert [r.benchmark for r in store.runs(failed=True)] == ["gb"]


BENCH = '''import math


def helper():
    return 1


def bench_sum():
    return sum(range(100))


class Suite:
    def bench_sqrt(self):
        return math.sqrt(2)
'''


def test_a_python_benchmarks_source_is_part_of_its_definition(tmp_path):
    folder = tmp_path / "benchmarks"
    (folder / "pkg").mkdir(parents=True)
    (folder / "bench_a.py").write_text(BENCH)
    (folder / "pkg" / "__init__.py").write_text(BENCH)
    first = python_source_digest("bench_a:bench_sum", folder)
    method = python_source_digest("bench_a:Suite.bench_sqrt", folder)
    assert first and method and first != method
    assert python_source_digest("pkg:bench_sum", folder) == first  # a package's __init__
    # An edit elsewhere in the file (a helper, another benchmark) leaves the function's digest.
    (folder / "bench_a.py").write_text(BENCH.replace("return 1", "return 2").replace("sqrt(2)", "sqrt(3)"))
    assert python_source_digest("bench_a:bench_sum", folder) == first
    assert python_source_digest("bench_a:Suite.bench_sqrt", folder) != method
    # Comments, blank lines, formatting and docstrings are not what runs (a probe: a comment
    # edited superseded every run of the benchmark).
    (folder / "bench_a.py").write_text(BENCH.replace(
        "def bench_sum():\n    return sum(range(100))",
        'def bench_sum():\n    """Sum a range."""\n    # a hundred\n\n    return sum( range(100) )  # here'))
    assert python_source_digest("bench_a:bench_sum", folder) == first
    (folder / "bench_a.py").write_text(BENCH.replace("range(100)", "range(1000)"))
    assert python_source_digest("bench_a:bench_sum", folder) != first
    # Not there, not parseable, not a function: no digest (the run says what is wrong).
    assert python_source_digest("elsewhere:bench_sum", folder) is None
    assert python_source_digest("bench_a:missing", folder) is None
    (folder / "broken.py").write_text("def bench(:\n")
    assert python_source_digest("broken:bench", folder) is None

    from regbench.config import BenchmarkSpec

    spec = BenchmarkSpec(name="s", kind="python", target="bench_a:bench_sum")
    assert "source" not in definition(spec)  # no benchmark_dir: the module is the project's
    assert definition(spec, folder)["source"] == python_source_digest("bench_a:bench_sum", folder)


@pytest.mark.parametrize("recorded_source", [False, True])
def test_a_campaign_that_did_not_record_the_source_does_not_supersede(tmp_path, recorded_source):
    # Campaigns before the source was recorded: their definitions lack it, which is no change.
    from regbench.config import BenchmarkSpec
    from regbench.run.definitions import changed_definitions

    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "bench_a.py").write_text(BENCH)
    spec = BenchmarkSpec(name="s", kind="python", target="bench_a:bench_sum")
    before = definition(spec, folder)
    if not recorded_source:
        before.pop("source")
    with Store(tmp_path / "s.db") as store:
        store.start_campaign(seed=1, machine="m", fingerprint={}, command="run",
                             plan={"config": "default", "benchmarks": {"s": {"definition": before}}})
        (folder / "bench_a.py").write_text(BENCH.replace("range(100)", "range(1000)"))
        changes = changed_definitions(store, [spec], machine="m", config_name="default", benchmark_dir=folder)
    assert [c.fields for c in changes] == ([("source",)] if recorded_source else [])


def test_a_session_in_the_store_does_not_break_the_next_campaign(tmp_path, capsys):
    # A first-user probe: `compare --run` stores a session whose plan lists the benchmarks' names
    # (a list, not a campaign's table of definitions), and every later `run` crashed reading it.
    cfg = project(tmp_path, commits=2)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD", "--benchmark", "b")
    main(["--config", str(cfg), "compare", "HEAD~1", "HEAD", "--run", "--benchmark", "b", "--max-pairs", "3"])
    with store_of(tmp_path) as store:
        assert any(isinstance((c.plan or {}).get("benchmarks"), list) for c in store.campaigns())
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD", "--benchmark", "b")
    assert "Definition changed" not in said and "already stored" in said
    cfg.write_text(CONFIG.format(value="0.020"))
    assert "Definition changed: b: its command changed since campaign 3" in run(
        cfg, capsys, "run", "--versions", "HEAD~1,HEAD", "--benchmark", "b")


def test_a_reverted_edit_takes_back_the_runs_of_that_definition(tmp_path, capsys):
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1")  # campaign 1
    cfg.write_text(CONFIG.format(value="0.020"))
    run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1")  # campaign 2: supersedes 1's, runs again
    cfg.write_text(CONFIG.format(value="0.010"))  # the edit reverted
    said = run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1")
    assert ("its 4 runs of that definition are superseded (kept in the store, out of every "
            "analysis); 4 runs of earlier campaigns that ran the definition it has again (1) are back") in said
    assert "0 runs stored" in said  # campaign 1's runs count again: nothing to measure
    with store_of(tmp_path) as store:
        assert b_values(store) == [[0.01], [0.01]]
        runs = store.runs(benchmark="b")
        assert sorted(r.campaign_id for r in runs if r.status == "ok") == [1, 1, 1, 1]
        assert sorted(r.campaign_id for r in runs if r.status == SUPERSEDED) == [2, 2, 2, 2]


def test_keep_old_runs_right_after_takes_back_what_the_last_campaign_superseded(tmp_path, capsys):
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1")  # campaign 1
    cfg.write_text(CONFIG.format(value="0.020"))
    assert "are superseded" in run(cfg, capsys, "run", "--versions", "HEAD~1")  # campaign 2
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD", "--keep-old-runs")
    assert "b: its 2 runs that campaign 2 superseded are back in the analyses (--keep-old-runs)" in said
    with store_of(tmp_path) as store:
        assert not any(r.status == SUPERSEDED for r in store.runs())
        assert b_values(store) == [[0.01, 0.02], [0.02]]
    # Once only: a later --keep-old-runs has nothing of the campaign before it to take back.
    assert "back in the analyses" not in run(cfg, capsys, "run", "--versions", "HEAD", "--keep-old-runs")


def test_the_0023_downgrade_gives_superseded_runs_their_status_back(tmp_path, capsys):
    from storetools import downgrade_to

    cfg = project(tmp_path, commits=1)
    cfg.write_text(CONFIG.format(value="0.010").replace("echo 0.010", "exit 3"))
    run(cfg, capsys, "run", "--versions", "HEAD", code=4)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD")
    db = tmp_path / ".regbench" / "results.db"
    with store_of(tmp_path) as store:
        assert sorted(r.status for r in store.runs(benchmark="b")) == ["ok", "ok", SUPERSEDED, SUPERSEDED]
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        downgrade_to(conn, "0022")
    with engine.connect() as conn:
        assert "superseded_status" not in {c["name"] for c in sa.inspect(conn).get_columns("run")}
        statuses = sorted(conn.execute(sa.text("SELECT status FROM run JOIN benchmark ON benchmark.id = "
                                               "run.benchmark_id WHERE benchmark.name = 'b'")).scalars())
    assert statuses == ["failed", "failed", "ok", "ok"]


def test_summary_and_compare_say_nothing_of_superseded_runs_but_why(tmp_path, capsys):
    # A probe: summary listed the version whose runs were superseded with 0 runs and "0 failed
    # runs", and compare said only that no benchmark had runs of both versions.
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1", "--benchmark", "b")
    cfg.write_text(CONFIG.format(value="0.020"))
    run(cfg, capsys, "run", "--versions", "HEAD", "--benchmark", "b")
    summary = run(cfg, capsys, "summary", "--format", "json")
    import json

    rows = json.loads(summary[summary.index("["):summary.rindex("]") + 1])
    assert len(rows) == 1 and rows[0]["runs"] == 2  # HEAD's alone
    capsys.readouterr()
    assert main(["--config", str(cfg), "compare", "HEAD~2", "HEAD"]) == 3
    err = capsys.readouterr().err
    assert "no benchmark has runs of both" in err and "are superseded: measured before their benchmark's" in err
    assert "`regbench run --versions " in err
