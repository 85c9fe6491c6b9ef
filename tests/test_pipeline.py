"""`regbench.pipeline.detect_and_alert`: detect -> alerts -> bisect -> notify as one plain function."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from regbench.config import load_config
from regbench.errors import ConfigError
from regbench.inventory import inventory
from regbench.model import RunRecord, VersionInfo
from regbench.pipeline import DetectedChange, DetectOutcome, check_detect_options, detect_and_alert
from regbench.store import Store


def fill(store: Store, levels_by_bench: dict[str, list[float]], *, runs: int = 6, iters: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = max(len(v) for v in levels_by_bench.values())
    versions = [VersionInfo(f"v{k:02d}", timestamp_text=f"2024-01-01T00:{k:02d}:00Z") for k in range(n)]
    store.add_runs([RunRecord(bench, f"v{k:02d}", r, level * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, iters)))
                    for bench, levels in levels_by_bench.items() for k, level in enumerate(levels) for r in range(runs)],
                   versions=versions)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "r.db") as s:
        # a and a2 regress at v10, b stays, c improves at v08
        fill(s, {"a": [1.0] * 10 + [1.2] * 6, "a2": [1.0] * 10 + [1.2] * 6, "b": [1.0] * 16, "c": [1.0] * 8 + [0.8] * 8})
        yield s


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "regbench.toml"
    path.write_text('[[notify]]\ntype = "json"\npath = "out/alerts.json"\n', encoding="utf-8")
    return load_config(path)


def detect(store, config, **options):
    return detect_and_alert(store, config, **{"method": "ci-overlap", "min_change": 0.05, "fdr": None, "jobs": 1,
                                              **options})


def test_a_dry_run_reports_changes_and_records_nothing(store):
    out = detect(store, None, dry_run=True)
    assert isinstance(out, DetectOutcome)
    assert [(e.change.benchmark, e.change.version, e.change.kind) for e in out.changes] == [
        ("a", "v10", "regression"), ("a2", "v10", "regression"), ("c", "v08", "improvement")]
    assert [e.change for e in out.changes] == list(out.detection.changes)
    assert out.alerts is None and out.notified is None and not out.bisect
    assert all(e.bisection is None and e.not_bisected is None for e in out.changes)
    assert out.regressed and out.ok
    assert detect(store, None).alerts.created  # nothing was recorded by the dry run


def test_alerts_are_recorded_once_and_the_sinks_hear_after_on_detected(store, config, tmp_path):
    seen = []

    def on_detected(outcome):
        # What was found can be shown before any sink speaks.
        assert outcome.notified is None and not (tmp_path / "out" / "alerts.json").exists()
        seen.append(outcome)

    out = detect(store, config, notify=True, on_detected=on_detected)
    assert len(seen) == 1 and seen[0].changes == out.changes
    assert len(out.alerts.created) == 3 and not out.alerts.merged
    assert out.notified.sent == 3 and out.ok
    assert len(json.loads((tmp_path / "out" / "alerts.json").read_text())["alerts"]) == 3
    again = detect(store, config, notify=True)
    assert not again.alerts.created and len(again.alerts.merged) == 3 and again.notified.sent == 0


def test_bisections_are_matched_to_changes_by_value_not_identity(store, config, monkeypatch):
    """bisect_changes may hand back other (equal) change objects: each still finds its own entry."""
    from regbench.run import bisect as bisect_module

    events = []

    class Reporter:
        def __enter__(self):
            events.append("enter")
            return self

        def __exit__(self, *exc):
            events.append("exit")

    results = {"a": object(), "a2": object()}

    def fake_bisect_changes(cfg, st, changes, *, reporter, duet=None):
        assert reporter is entered and events == ["enter"]  # entered only while bisecting
        copies = [dataclasses.replace(c) for c in changes]
        return ([(c, results[c.benchmark]) for c in copies if c.benchmark != "c"],
                [bisect_module.Skipped(c, "its versions are adjacent commits: nothing between them")
                 for c in copies if c.benchmark == "c"])

    entered = Reporter()
    monkeypatch.setattr(bisect_module, "bisect_changes", fake_bisect_changes)
    out = detect(store, config, dry_run=True, bisect=True, bisect_reporter=entered)
    assert events == ["enter", "exit"] and out.bisect
    by_bench = {e.change.benchmark: e for e in out.changes}
    assert by_bench["a"] == DetectedChange(by_bench["a"].change, results["a"], None)
    assert by_bench["a2"].bisection is results["a2"] and by_bench["a2"].not_bisected is None
    assert by_bench["c"].bisection is None and "adjacent" in by_bench["c"].not_bisected


def test_progress_is_entered_while_detecting(store):
    calls = []

    class Progress:
        def __enter__(self):
            calls.append("enter")
            return self

        def __exit__(self, *exc):
            calls.append("exit")

        def __call__(self, done, total):
            calls.append((done, total))

    detect(store, None, dry_run=True, progress=Progress())
    assert calls[0] == "enter" and calls[-1] == "exit" and (1, 1) in calls


@pytest.mark.parametrize("options, message", [
    ({"dry_run": True, "notify": True}, "--dry-run records no alerts, so --notify would have nothing to send"),
    ({"notify": True}, r"--notify needs \[\[notify\]\] sinks in regbench.toml"),
    ({"bisect": True}, "--bisect needs regbench.toml"),
])
def test_impossible_option_combinations_are_refused_before_any_work(store, options, message):
    with pytest.raises(ConfigError, match=message):
        check_detect_options(None, **options)
    with pytest.raises(ConfigError, match=message):
        detect(store, None, progress=lambda done, total: pytest.fail("detection ran"), **options)


def test_inventory_counts_runs_per_benchmark_and_version(tmp_path):
    with Store(tmp_path / "r.db") as s:
        s.add_runs([RunRecord("x", "v1", 0, np.array([1.0, 1.1])),
                    RunRecord("x", "v1", 1, np.empty(0), status="crashed", exit_code=-11),
                    RunRecord("y", "v2", 0, np.array([2.0]))])
        inv = inventory(s)
        assert [(b.name, b.runs_ok, b.runs_failed) for b in inv.benchmarks] == [("x", 1, 1), ("y", 1, 0)]
        assert [(v.version.name, v.build_status, v.runs_ok, v.runs_failed) for v in inv.versions] == [
            ("v1", None, 1, 1), ("v2", None, 1, 0)]
        assert [(r.benchmark, r.status) for r in inv.failed_runs] == [("x", "crashed")]
        only = inventory(s, benchmark="y", version="v2")
        assert [b.name for b in only.benchmarks] == ["y"] and [v.version.name for v in only.versions] == ["v2"]
        assert len(only.runs) == 1
