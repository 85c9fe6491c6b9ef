"""A tool's invocation that failed whole at a version: ``summary`` says each benchmark the tool
reports elsewhere was not reported there (rather than listing nothing), and ``show`` gives the
invocation's own series, which only ever holds failures, no unit."""

from __future__ import annotations

import json

import numpy as np

from regbench.analysis import summarize
from regbench.cli.main import main
from regbench.inventory import inventory
from regbench.model import RunRecord
from regbench.store import Store

TOOL = {"t/x": {"unit": "ns", "direction": "lower"}, "t/y": {"unit": "ops/s", "direction": "higher"}}


def _campaign(store: Store) -> int:
    return store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench run")


def _ok(name, version, r, campaign):
    return RunRecord(name, version, r, np.array([1.0, 1.1, 1.2]), machine="m", campaign_id=campaign)


def _failed(name, version, r, campaign):
    return RunRecord(name, version, r, np.empty(0), status="failed", exit_code=1, machine="m",
                     campaign_id=campaign, stderr_tail="panic: boom")


def _store(tmp_path) -> Store:
    store = Store(tmp_path / "r.db")
    first = _campaign(store)
    store.add_runs([_ok(n, "v1", r, first) for n in TOOL for r in range(2)] + [_ok("c", "v1", 0, first)],
                   benchmarks=TOOL)
    store.add_runs([_failed("t", "v2", r, first) for r in range(2)] + [_ok("c", "v2", 0, first)])
    store.add_runs([_ok(n, "v3", r, first) for n in TOOL for r in range(2)], benchmarks=TOOL)
    store.finish_campaign(first, "finished")
    return store


def test_summary_says_what_a_failed_invocation_did_not_report(tmp_path):
    with _store(tmp_path) as store:
        rows = summarize(store)
        got = [(r.benchmark, r.version, r.not_reported) for r in rows if r.benchmark.startswith("t")]
        assert got == [("t", "v2", None),
                       ("t/x", "v1", None), ("t/x", "v2", "t"), ("t/x", "v3", None),
                       ("t/y", "v1", None), ("t/y", "v2", "t"), ("t/y", "v3", None)]
        missing = next(r for r in rows if r.benchmark == "t/y" and r.version == "v2")
        assert (missing.unit, missing.direction, missing.plain, missing.failed_runs) == ("ops/s", "higher", None, 0)
        # c ran at every version it was asked to: nothing is added for it.
        assert [r.version for r in rows if r.benchmark == "c"] == ["v1", "v2"]
        # One version, or one series, asked for: the rows are there too.
        assert {(r.benchmark, r.not_reported) for r in summarize(store, version="v2")} == {
            ("t", None), ("t/x", "t"), ("t/y", "t"), ("c", None)}
        assert [(r.version, r.not_reported) for r in summarize(store, benchmark="t/x")] == [
            ("v1", None), ("v2", "t"), ("v3", None)]
        assert summarize(store, version="v1") and all(r.not_reported is None for r in summarize(store, version="v1"))


def test_a_retried_invocation_reports_again(tmp_path):
    with _store(tmp_path) as store:
        second = _campaign(store)
        store.add_runs([_ok(n, "v2", r, second) for n in TOOL for r in range(2, 4)], benchmarks=TOOL)
        store.finish_campaign(second, "finished")
        assert all(r.not_reported is None for r in summarize(store))


def test_cli_summary_and_show(tmp_path, capsys):
    _store(tmp_path).close()
    db = str(tmp_path / "r.db")
    assert main(["--store", db, "summary"]) == 0
    out = capsys.readouterr().out
    assert out.count("not reported: t failed") == 2
    assert main(["--store", db, "summary", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["benchmark"] for r in rows if r.get("not_reported") == "t") == ["t/x", "t/y"]
    with Store(db) as store:
        units = {b.name: b.unit for b in inventory(store).benchmarks}
    assert units == {"c": "s", "t": "", "t/x": "ns", "t/y": "ops/s"}
    assert main(["--store", db, "show"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("t "))
    assert line.split()[1] == "—"


def test_only_the_series_reported_at_the_nearest_version_are_said_missing(tmp_path):
    # t/z was added at v3 (after the failure at v2): it is not said missing at v2.
    with _store(tmp_path) as store:
        later = _campaign(store)
        store.add_runs([_ok("t/z", "v3", r, later) for r in range(2)], benchmarks={"t/z": TOOL["t/x"]})
        store.finish_campaign(later, "finished")
        assert {(r.benchmark, r.version) for r in summarize(store) if r.not_reported} == {("t/x", "v2"), ("t/y", "v2")}


def test_benchmarks_failing_at_their_newest_version_are_named_by_detect(tmp_path, capsys):
    from regbench.inventory import failing_at_newest

    with _store(tmp_path) as store:
        assert failing_at_newest(store) == []  # t failed at v2, ran again at v3: not failing now
        later = _campaign(store)
        store.add_runs([_failed("t", "v4", r, later) for r in range(2)] + [_failed("c", "v4", 0, later)]
                       + [_failed("never", "v4", 0, later)])
        store.finish_campaign(later, "finished")
        got = [(f.benchmark, f.version, f.failed_runs, f.since) for f in failing_at_newest(store)]
        assert got == [("c", "v4", 1, "v2"), ("t", "v4", 2, "v3")]  # `never` never ran: nothing to lose
        assert [f.benchmark for f in failing_at_newest(store, benchmark="c")] == ["c"]
    assert main(["--store", str(tmp_path / "r.db"), "detect", "--dry-run"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Failing at the newest version they ran at" in out
    assert "c on m at v4 (1 failed run, last ok at v2)" in out and "t on m at v4 (2 failed runs, last ok at v3)" in out
    with Store(tmp_path / "r.db") as store:  # run again with success: no longer failing
        again = _campaign(store)
        store.add_runs([_ok("c", "v4", 1, again)])
        store.finish_campaign(again, "finished")
        assert [f.benchmark for f in failing_at_newest(store)] == ["t"]
