"""Failed runs run again with success since (``run --retry-failed``) are history: ``show``,
``summary`` and ``compare`` stop counting them, and keep those that are still failures."""

from __future__ import annotations

import numpy as np

from regbench.analysis import compare_versions, summarize
from regbench.cli.main import main
from regbench.inventory import inventory, retried_failures
from regbench.model import RunRecord
from regbench.store import Store

TOOL = {"t/x": {"unit": "s", "direction": "lower"}, "t/y": {"unit": "s", "direction": "lower"}}


def _campaign(store: Store) -> int:
    return store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench run")


def _ok(name, version, r, campaign, level=1.0):
    return RunRecord(name, version, r, np.full(4, level) * (1 + 0.01 * np.arange(4)), machine="m",
                     campaign_id=campaign)


def _failed(name, version, r, campaign):
    return RunRecord(name, version, r, np.empty(0), status="failed", exit_code=1, machine="m",
                     campaign_id=campaign, stderr_tail="No module named pytest")


def test_a_tool_invocation_that_failed_whole_is_retried_by_what_the_tool_reports(tmp_path):
    with Store(tmp_path / "r.db") as store:
        first = _campaign(store)
        store.add_runs([_failed("t", v, r, first) for v in ("v1", "v2") for r in range(3)])
        store.finish_campaign(first, "finished")
        # Before the retry every failure is open, in show, summary and compare.
        assert len(inventory(store).failed_runs) == 6
        assert {(r.version, r.failed_runs) for r in summarize(store)} == {("v1", 3), ("v2", 3)}
        [row] = compare_versions(store, "v1", "v2")
        assert row.benchmark == "t" and row.verdict == "inconclusive"
        second = _campaign(store)
        store.add_runs([_ok(n, v, r, second, 1.0 + 0.5 * (v == "v2")) for v in ("v1", "v2") for r in range(3, 6)
                        for n in ("t/x", "t/y")], benchmarks=TOOL)
        store.finish_campaign(second, "finished")
        inv = inventory(store)
        assert inv.failed_runs == () and len(inv.retried) == 6
        assert {b.name: (b.runs_failed, b.runs_retried) for b in inv.benchmarks}["t"] == (0, 6)
        assert {r.benchmark for r in summarize(store)} == {"t/x", "t/y"}
        assert {r.benchmark: r.verdict for r in compare_versions(store, "v1", "v2")} == {
            "t/x": "regression", "t/y": "regression"}
        # --benchmark t still sees that its invocations were retried by t/x and t/y.
        assert inventory(store, benchmark="t").failed_runs == ()


def test_failures_of_the_same_campaign_or_after_the_last_success_stay_open(tmp_path):
    with Store(tmp_path / "r.db") as store:
        first = _campaign(store)
        # Flaky: a failure among successes of its own campaign is not a retried failure.
        store.add_runs([_ok("b", "v1", 0, first), _failed("b", "v1", 1, first), _ok("b", "v1", 2, first)])
        store.add_runs([_failed("c", "v1", 0, first)])
        store.finish_campaign(first, "finished")
        second = _campaign(store)
        # c retried, and failed again: both failures open; d's failure is another series' (not c's).
        store.add_runs([_failed("c", "v1", 1, second), _ok("d", "v1", 0, second)])
        store.finish_campaign(second, "finished")
        runs = store.runs()
        assert retried_failures(runs) == frozenset()
        assert {(r.benchmark, r.run_index) for r in inventory(store).failed_runs} == {("b", 1), ("c", 0), ("c", 1)}
        third = _campaign(store)
        store.add_runs([_ok("c", "v1", 2, third)])
        store.finish_campaign(third, "finished")
        assert {(r.benchmark, r.run_index) for r in inventory(store).failed_runs} == {("b", 1)}
        assert {r.benchmark: r.failed_runs for r in summarize(store)} == {"b": 1, "c": 0, "d": 0}


def test_show_counts_retried_failures_apart(tmp_path, capsys):
    path = tmp_path / "r.db"
    with Store(path) as store:
        first = _campaign(store)
        store.add_runs([_failed("t", "v1", 0, first), _failed("u", "v1", 0, first)])
        store.finish_campaign(first, "finished")
        second = _campaign(store)
        store.add_runs([_ok("t/x", "v1", 1, second)], benchmarks=TOOL)
        store.finish_campaign(second, "finished")
    assert main(["--store", str(path), "show"]) == 0
    out = capsys.readouterr().out
    assert "failed, retried since" in out
    assert "1 failed run not listed: run again with success since" in out
    failed = out.split("Failed runs")[1]
    assert "u " in failed and "\nt " not in failed


def test_a_benchmark_whose_runs_of_b_all_failed_is_a_failed_verdict_that_gates(tmp_path, capsys):
    path = tmp_path / "r.db"
    with Store(path) as store:
        first = _campaign(store)
        store.add_runs([_ok("b", "v1", r, first) for r in range(3)] + [_failed("b", "v2", r, first) for r in range(3)]
                       + [_ok("c", v, r, first) for v in ("v1", "v2") for r in range(3)]
                       + [_failed("d", v, r, first) for v in ("v1", "v2") for r in range(3)])
        store.finish_campaign(first, "finished")
        rows = {r.benchmark: r for r in compare_versions(store, "v1", "v2")}
        assert {k: r.verdict for k, r in rows.items()} == {"b": "failed", "c": "no change", "d": "inconclusive"}
        assert (rows["b"].comparison.runs_a, rows["b"].comparison.runs_b) == (3, 0)
    assert main(["--store", str(path), "compare", "v1", "v2"]) == 1
    assert "failed" in capsys.readouterr().out
    assert main(["--store", str(path), "compare", "v1", "v2", "--format", "json"]) == 1
    import json

    doc = {row["benchmark"]: row for row in json.loads(capsys.readouterr().out)}
    assert (doc["b"]["verdict"], doc["b"]["unit"], doc["b"]["direction"]) == ("failed", "s", "lower")
    assert main(["--store", str(path), "compare", "v1", "v2", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("### :x: regbench: 1 failed, 0 regressions, 0 improvements, 1 unchanged, 1 inconclusive")
    assert "**failed** (no run of B ok)" in out
    # Retried with success by a later campaign: compared as usual, and the gate opens.
    with Store(path) as store:
        second = _campaign(store)
        store.add_runs([_ok("b", "v2", r, second) for r in range(3, 6)])
        store.finish_campaign(second, "finished")
    assert main(["--store", str(path), "compare", "v1", "v2", "--benchmark", "b"]) == 0


def test_a_command_benchmark_named_like_a_tools_report_retries_nothing_of_another(tmp_path):
    """``io`` and ``io/read`` may both be command benchmarks (only a tool's name cannot hold a
    '/'): an ok run of ``io/read`` in a later campaign is no retry of ``io``'s failure."""
    with Store(tmp_path / "r.db") as store:
        plan = {"benchmarks": {"io": {"kind": "command"}, "io/read": {"kind": "command"}}}
        first = store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench run", plan=plan)
        store.add_runs([_failed("io", "v1", 0, first), _ok("io/read", "v1", 0, first)])
        store.finish_campaign(first, "finished")
        second = store.start_campaign(seed=2, machine="m", fingerprint={}, command="regbench run", plan=plan)
        store.add_runs([_failed("io", "v1", 1, second), _ok("io/read", "v1", 1, second)])
        store.finish_campaign(second, "finished")
        assert {(r.benchmark, r.run_index) for r in inventory(store).failed_runs} == {("io", 0), ("io", 1)}
        assert {r.benchmark: r.failed_runs for r in summarize(store)}["io"] == 2


def test_a_report_missing_on_b_because_the_tools_invocation_failed_is_failed(tmp_path, capsys):
    """A Go panic ends ``go test``: the benchmarks after it report nothing on B, and the failure is
    stored under the configured name. Their rows are ``failed`` (they were listed on A), not
    silently dropped, and the gate fails; a report missing on B without a failure is no row."""
    path = tmp_path / "r.db"
    with Store(path) as store:
        first = _campaign(store)
        store.add_runs([_ok(n, "v1", r, first) for n in ("t/x", "t/y") for r in range(3)]
                       + [_ok("t/x", "v2", r, first) for r in range(3)]
                       + [_failed("t", "v2", r, first) for r in range(3)], benchmarks=TOOL)
        store.add_runs([_ok("u/z", "v1", r, first) for r in range(3)])  # u was not run on v2
        store.finish_campaign(first, "finished")
        rows = {r.benchmark: r for r in compare_versions(store, "v1", "v2")}
        assert {k: r.verdict for k, r in rows.items()} == {"t/x": "no change", "t/y": "failed"}
        assert (rows["t/y"].comparison.runs_a, rows["t/y"].comparison.runs_b) == (3, 0)
    assert main(["--store", str(path), "compare", "v1", "v2"]) == 1
    assert "failed" in capsys.readouterr().out
