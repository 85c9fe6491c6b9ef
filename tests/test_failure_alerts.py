"""A benchmark that ran and then fails at every run from some version on is an alert of kind
``failure`` (docs/realworld.md, the JMH first use: "A benchmark that starts failing is no change for
`detect` and no alert"): opened once by ``detect`` at the first version of the failing stretch, with
the error of its runs, told through the sinks, gating ``--fail-on-regression``, fixed when a run of
it succeeds again or when it is no longer run (removed from the suite, or renamed), and listed
after the changes by ``detect --format json --json-failures``.  End to end with a real command benchmark in a real
git repository that exits 1 from one commit on; the rules on stores holding such runs."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.detect.alerts import record_alerts, set_status
from regbench.errors import ExitStatus
from regbench.inventory import scan_failures
from regbench.model import SESSION_SCHEDULE, RunRecord, VersionInfo
from regbench.pipeline import detect_and_alert
from regbench.store import HistoryView, Store
from regbench.store.alerts import alert_history, list_alerts

PY = sys.executable
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
#: Prints its iterations' times; from the commit that adds `broken`, reads a fixture it cannot
#: check and exits 1, as a harness reports a benchmark's exception.
PROGRAM = ("import os, sys\n"
           "if os.path.exists('broken'):\n"
           "    sys.stderr.write('loading fixture data.bin\\nValueError: checksum 41 != 42\\n')\n"
           "    sys.exit(1)\n"
           "for i in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
           "    print(1.0 + 0.001 * i)\n")


def make_repo(path: Path) -> list[str]:
    """Commits 1-2 run; 3 and 4 break the benchmark (`broken`); 5 repairs it."""
    git_init(path)
    toml = ('[project]\nname = "p"\nstore = "results/r.db"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
            '[[benchmark]]\nname = "parse"\ncommand = ' + json.dumps([PY, "bench.py"]) + "\n"
            '[[notify]]\ntype = "json"\npath = "sent/alerts.json"\n'
            '[[notify]]\ntype = "markdown"\npath = "sent/pr.md"\n'
            '[[notify]]\ntype = "json"\nname = "improvements"\npath = "sent/improvements.json"\n'
            'kinds = ["improvement"]\n')
    files = [{"bench.py": PROGRAM, "regbench.toml": toml, "notes/1": "1"}, {"notes/2": "2"},
             {"broken": "x"}, {"notes/4": "4"}, {"broken": None}]
    return [git_commit(path, f, f"commit {k}", when=T0 + timedelta(hours=k)) for k, f in enumerate(files, 1)]


def alerts_json(args: list[str], capsys) -> list[dict]:
    capsys.readouterr()
    assert main([*args, "alerts", "list", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_benchmark_that_starts_failing_is_one_alert_told_once_gating_and_fixed_when_it_runs_again(
        tmp_path, capsys):
    repo = tmp_path / "repo"
    shas = make_repo(repo)
    args = ["--config", str(repo / "regbench.toml")]
    sent = repo / "sent" / "alerts.json"

    assert main([*args, "run", "--versions", ",".join(shas[:3]), "--seed", "1"]) == ExitStatus.FAILED
    capsys.readouterr()
    assert main([*args, "detect", "--notify", "--jobs", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Alerts: 1 new alert(s) (1 for a benchmark that starts failing)" in out
    assert "last ok at " + shas[1][:10] in out and ", alert #1)" in out
    [alert] = alerts_json(args, capsys)
    assert (alert["kind"], alert["benchmark"], alert["status"]) == ("failure", "parse", "new")
    assert shas[2].startswith(alert["version"]) and shas[1].startswith(alert["previous"])
    assert alert["error"] == "failed (exit status 1): ValueError: checksum 41 != 42"
    assert (alert["change"], alert["ci_low"], alert["ci_high"], alert["p_value"], alert["methods"]) == (
        None, None, None, None, [])
    # Told: the JSON sink got it as `alerts list` has it; a sink of improvements only did not.
    [told] = json.loads(sent.read_text())["alerts"]
    assert (told["kind"], told["error"], told["change"]) == ("failure", alert["error"], None)
    assert json.loads((repo / "sent" / "improvements.json").read_text())["alerts"] == []
    md = (repo / "sent" / "pr.md").read_text()
    assert "1 new alert(s): 0 regression(s), 0 improvement(s), 1 failing benchmark(s)." in md
    assert "| #1 | **failure** | parse | default |" in md
    assert "| — | — | failed (exit status 1): ValueError: checksum 41 != 42 |" in md and "%" not in md

    # Told once: another pass, then a version that still fails, open nothing new and send nothing.
    assert main([*args, "detect", "--notify", "--jobs", "1"]) == 0
    assert main([*args, "run", "--versions", shas[3], "--seed", "1"]) == ExitStatus.FAILED
    capsys.readouterr()
    assert main([*args, "detect", "--incremental", "--notify", "--fail-on-regression"]) == ExitStatus.FOUND
    out = " ".join(capsys.readouterr().out.split())
    assert "Alerts: 0 new alert(s)" in out and "parse on" in out and "alert #1)" in out
    [alert] = alerts_json(args, capsys)
    assert shas[2].startswith(alert["version"])  # the stretch grew: the alert keeps its first version
    assert len(json.loads(sent.read_text())["alerts"]) == 1
    capsys.readouterr()
    assert main([*args, "alerts", "show", "1"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"failure in parse on {alert['machine']} at {alert['version']} (last ok at "
                            f"{alert['previous']}), alert #1: failed (exit status 1): ValueError: checksum 41 != 42")
    assert "  error: failed (exit status 1)" in shown and "%" not in shown
    assert "json         sent" in shown

    # Acknowledged, it still gates; repaired, it is fixed by the version that runs again.
    assert main([*args, "alerts", "ack", "1", "--by", "ana", "--reason", "looking"]) == 0
    assert main([*args, "run", "--versions", shas[4], "--seed", "1"]) == 0
    capsys.readouterr()
    assert main([*args, "detect", "--notify", "--jobs", "1", "--fail-on-regression"]) == 0
    assert "1 earlier alert(s) now fixed" in " ".join(capsys.readouterr().out.split())
    [alert] = alerts_json(args, capsys)
    assert alert["status"] == "fixed" and shas[4].startswith(alert["fixed_by"]) and alert["fixed_by_alert"] is None
    capsys.readouterr()
    assert main([*args, "alerts", "list"]) == 0
    table = capsys.readouterr().out
    assert "failure" in table and "error" in table and "ValueError" in table


# ------------------------------------------------------------------------------- the rules
def _campaign(store: Store, *, session: bool = False, suite: list[str] | None = None) -> int:
    plan = {"schedule": SESSION_SCHEDULE} if session else {"suite": suite} if suite is not None else None
    return store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench run", plan=plan)


def _ok(name: str, version: str, r: int, campaign: int | None, machine: str = "m") -> RunRecord:
    return RunRecord(name, version, r, np.array([1.0, 1.1, 1.2]), machine=machine, campaign_id=campaign)


def _failed(name: str, version: str, r: int, campaign: int | None, why: str = "panic: boom",
            machine: str = "m") -> RunRecord:
    return RunRecord(name, version, r, np.empty(0), status="failed", exit_code=2, machine=machine,
                     campaign_id=campaign, stderr_tail=f"goroutine 1\n{why}\n[regbench] exit status 2\n")


def _versions(n: int) -> list[VersionInfo]:
    return [VersionInfo(f"v{k}", timestamp=T0 + timedelta(days=k)) for k in range(1, n + 1)]


def _add(store: Store, runs: list[RunRecord], *, session: bool = False, benchmarks=None,
         status: str = "finished", suite: list[str] | None = None) -> None:
    campaign = _campaign(store, session=session, suite=suite)
    store.add_runs([RunRecord(r.benchmark, r.version, r.run_index, r.samples, status=r.status,
                              exit_code=r.exit_code, machine=r.machine, campaign_id=campaign,
                              stderr_tail=r.stderr_tail) for r in runs], versions=_versions(8), benchmarks=benchmarks)
    store.finish_campaign(campaign, status)


def _record(store: Store, **kw):
    return record_alerts(store, [], failures=scan_failures(store), **kw)


def test_one_alert_per_breakage_fixed_once_when_it_runs_again(store):
    _add(store, [_ok("b", v, r, None) for v in ("v1", "v2") for r in range(2)]
         + [_failed("b", "v3", r, None) for r in range(2)])
    first = _record(store)
    [alert] = first.created
    assert (alert.kind, alert.version, alert.previous, alert.change, alert.methods) == ("failure", "v3", "v2", None, ())
    assert alert.error == "failed (exit status 2): panic: boom" and first.failures == (alert,)
    assert [e.why for e in alert_history(store, alert.id)] == [
        "failing: every run failed from v3 on (2 failed runs at v3, the newest), last ok at v2: "
        "failed (exit status 2): panic: boom"]
    again = _record(store)  # re-running writes nothing
    assert again.created == () and again.failures == (alert,) and len(alert_history(store, alert.id)) == 1
    _add(store, [_failed("b", "v4", 0, None, why="panic: other")])
    assert _record(store).created == ()  # the stretch grew: one breakage, its first error kept
    assert list_alerts(store)[0].error == "failed (exit status 2): panic: boom"

    _add(store, [_ok("b", "v5", 0, None)])
    fixed = _record(store)
    [now] = fixed.fixed
    assert (now.id, now.status, now.fixed_by, now.fixed_by_alert) == (alert.id, "fixed", "v5", None)
    assert alert_history(store, alert.id)[-1].why == "runs again: a successful run at v5"
    # Broken again after running: another breakage, another alert.
    _add(store, [_failed("b", "v6", 0, None)])
    [second] = _record(store).created
    assert (second.version, second.previous) == ("v6", "v5")
    # A person who reopens the fixed one keeps it open: fixed once, as a regression.
    set_status(store, [alert.id], "new", who="ana", why="still flaky")
    assert _record(store).fixed == () and list_alerts(store, ids=[alert.id])[0].status == "new"


def test_a_failure_marked_invalid_is_not_opened_again_and_stops_gating(store):
    _add(store, [_ok("b", "v1", 0, None), _failed("b", "v2", 0, None)])
    outcome = detect_and_alert(store, None, method="ci-overlap", fdr=None, jobs=1)
    [alert] = outcome.alerts.failures
    assert outcome.regressed and outcome.broken == outcome.failing
    set_status(store, [alert.id], "invalid", who="ana", why="benchmark retired")
    outcome = detect_and_alert(store, None, method="ci-overlap", fdr=None, jobs=1)
    assert outcome.alerts.created == () and outcome.alerts.failures[0].status == "invalid"
    assert not outcome.regressed and outcome.broken == () and len(outcome.failing) == 1
    # A dry run records nothing, and gates on every failing benchmark.
    before = len(alert_history(store, alert.id))
    dry = detect_and_alert(store, None, method="ci-overlap", fdr=None, jobs=1, dry_run=True)
    assert dry.alerts is None and dry.regressed and len(alert_history(store, alert.id)) == before


def test_a_tool_invocation_that_fails_whole_is_a_failure_of_its_benchmark(store):
    tool = {"t/x": {"unit": "ns", "direction": "lower"}, "t/y": {"unit": "ns", "direction": "lower"}}
    _add(store, [_ok(n, "v1", r, None) for n in tool for r in range(2)], benchmarks=tool)
    _add(store, [_failed("t", "v2", r, None, why="panic: cannot open testdata/tree.bin") for r in range(2)])
    [alert] = _record(store).created
    assert (alert.benchmark, alert.version, alert.previous) == ("t", "v2", "v1")
    assert alert.error == "failed (exit status 2): panic: cannot open testdata/tree.bin"
    _add(store, [_ok(n, "v3", 0, None) for n in tool], benchmarks=tool)  # what it reports ran again
    assert [(a.id, a.fixed_by) for a in _record(store).fixed] == [(alert.id, "v3")]


def test_suppressed_benchmarks_failures_are_counted_not_stored(store, tmp_path):
    (tmp_path / "regbench.toml").write_text('[alerts]\nsuppress = ["b*"]\n')
    config = load_config(tmp_path / "regbench.toml")
    _add(store, [_ok("b", "v1", 0, None), _failed("b", "v2", 0, None),
                 _ok("c", "v1", 0, None), _failed("c", "v2", 0, None)])
    outcome = _record(store, config=config)
    assert [a.benchmark for a in outcome.created] == ["c"]
    assert [f.benchmark for f in outcome.suppressed_failures] == ["b"]


def test_suppressed_benchmarks_are_listed_but_fail_no_gate(store, tmp_path, capsys):
    """``[alerts] suppress = ["exp-*"]``: a regression of ``exp-c`` and the failing ``exp-b`` are
    listed as before, not stored as alerts, and do not fail ``detect --fail-on-regression`` (nor in
    a dry run); the summary says how many were left out of the gate.  A failing benchmark that is
    not suppressed still gates."""
    _add(store, [_level("exp-c", v, r, 2.0 if v == "v3" else 1.0) for v in ("v1", "v2", "v3") for r in range(3)]
         + [_ok("exp-b", v, r, None) for v in ("v1", "v2") for r in range(2)]
         + [_failed("exp-b", "v3", r, None) for r in range(2)])
    toml = tmp_path / "regbench.toml"
    toml.write_text('[alerts]\nsuppress = ["exp-*"]\n')
    config = load_config(toml)
    # Without the suppression, both would fail the gate.
    unsuppressed = detect_and_alert(store, None, method="ci-overlap", fdr=None, jobs=1, dry_run=True)
    assert [e.change.kind for e in unsuppressed.changes] == ["regression"] and unsuppressed.broken != ()
    for dry_run in (True, False):
        outcome = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1, dry_run=dry_run)
        assert [(e.change.benchmark, e.change.kind) for e in outcome.changes] == [("exp-c", "regression")]
        assert [f.benchmark for f in outcome.failing] == ["exp-b"]
        assert not outcome.regressed and outcome.broken == ()
    assert list_alerts(store) == []

    detect = ["--store", str(store.url), "--config", str(toml), "detect", "--method", "ci-overlap", "--no-fdr",
              "--jobs", "1", "--fail-on-regression"]
    for extra in (["--dry-run"], []):
        capsys.readouterr()
        assert main([*detect, *extra]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "exp-b on m at v3 (2 failed runs, last ok at v2" in out and "regression" in out
        if extra:
            assert "Suppressed by regbench.toml, not gating: 1 regression(s), 1 failing benchmark(s)." in out
        else:
            assert "1 suppressed by regbench.toml (not alerted; 1 regression(s), not gating)" in out
            assert "1 failing benchmark(s) suppressed by regbench.toml, not gating" in out
    _add(store, [_ok("c", "v1", 0, None), _failed("c", "v2", 0, None)])
    assert main(detect) == ExitStatus.FOUND


def test_failures_are_read_as_the_history_detection_reads(store):
    """A failed run of a session (compare --run of a branch, bisect, --confirm) is no failure of
    the history, and a failure on another machine is that machine's own alert."""
    _add(store, [_ok("b", "v1", 0, None), _ok("b", "v2", 0, None), _ok("b", "v1", 0, None, machine="n"),
                 _failed("b", "v2", 0, None, machine="n")])
    _add(store, [_failed("b", "v3", 0, None)], session=True)
    history = HistoryView(store)
    scan = scan_failures(store, history=history)
    assert [(f.machine, f.first, f.since) for f in scan.failing] == [("n", "v2", "v1")]
    assert [(f.machine, f.version) for f in scan_failures(store).failing] == [("m", "v3"), ("n", "v2")]
    [alert] = record_alerts(store, [], failures=scan).created
    assert (alert.machine, alert.spread, alert.held) == ("n", "single", False)


# ------------------------------------------------------------------------------- dashboard
def test_the_dashboard_shows_a_failure_with_its_error_and_no_size(tmp_path, page):
    import httpx

    from regbench.web.data import series_id
    from webtools import Server, sha

    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_runs([_ok("b", sha(k), r, None) for k in (1, 2) for r in range(2)]
                       + [_failed("b", sha(k), r, None) for k in (3, 4) for r in range(2)],
                       versions=[VersionInfo(sha(k), commit=sha(k), timestamp=T0 + timedelta(days=k))
                                 for k in range(1, 5)])
        [alert] = _record(store).created
    config = tmp_path / "regbench.toml"
    config.write_text("[serve]\npublic_reads = true\n")
    server = Server(path, tmp_path / "serve.log", config=config)
    sid = series_id("b", "default", "m")
    try:
        html = httpx.get(server.base + "alerts.html").text
        feed = httpx.get(server.base + "alerts.atom").text
        api = httpx.get(server.base + "api/v1/alerts", params={"kind": "failure"}).json()["alerts"]
        none = httpx.get(server.base + "api/v1/alerts", params={"kind": "regression"}).json()["alerts"]
        page.goto(server.base + f"series.html?s={sid}")
        page.wait_for_selector("body[data-ready=yes]", timeout=15_000)
        change = page.locator("#changes li.change")
        listed, kind = change.text_content(), change.get_attribute("data-kind")
        errors = page.console_log.errors
    finally:
        server.stop()
    row = html[html.index(f'data-alert="{alert.id}"'):]
    row = row[:row.index("</tr>")]
    error = "failed (exit status 2): panic: boom"
    assert '<td class="failure">failure' in row and f'<td class="error">{error}</td>' in row
    assert "%" not in row and "[?, ?]" not in row and "failing on m" in row
    assert f"failure of b at {sha(3)[:10]}" in feed and error in feed
    assert [(a["id"], a["kind"], a["change"], a["error"]) for a in api] == [(alert.id, "failure", None, error)]
    assert none == []
    assert kind == "failure" and errors == []
    assert listed.startswith("failing (every run) from ") and listed.endswith(f"(alert #{alert.id}, new): {error}")
    assert "?" not in listed


# ----------------------------------------------------------------- the detection JSON
def _level(name: str, version: str, r: int, level: float) -> RunRecord:
    """A run of ``name`` around ``level`` (five iterations, a little noise of its own)."""
    rng = np.random.default_rng([r, int(level * 1000), len(version)])
    return RunRecord(name, version, r, level * (1 + 0.001 * rng.standard_normal(5)), machine="m")


def _detect_json(store: Store, capsys, *extra: str) -> tuple[int, list[dict]]:
    capsys.readouterr()
    status = main(["--store", str(store.url), "detect", "--method", "ci-overlap", "--no-fdr", "--jobs", "1",
                   "--format", "json", "--json-failures", "--fail-on-regression", *extra])
    return status, json.loads(capsys.readouterr().out)


def test_the_detection_json_lists_failing_benchmarks_after_the_changes(store, capsys):
    """``detect --format json`` lists each failing benchmark as an object of kind ``failure``,
    after the changes, with the keys of a change (null where a failure has no value) and its error,
    newest version, failed runs and alert; the changes keep their keys."""
    _add(store, [_level("c", v, r, 2.0 if v == "v3" else 1.0) for v in ("v1", "v2", "v3") for r in range(3)]
         + [_ok("b", v, r, None) for v in ("v1", "v2") for r in range(2)]
         + [_failed("b", v, r, None) for v in ("v3", "v4") for r in range(2)])
    dry, rows = _detect_json(store, capsys, "--dry-run")
    assert dry == ExitStatus.FOUND and [r["kind"] for r in rows] == ["regression", "failure"]
    assert "alert" not in rows[1]
    # Without --json-failures the array holds the changes only (DESIGN.md's contract: kind is
    # regression or improvement, change a number), which scripts parse.
    assert main(["--store", str(store.url), "detect", "--method", "ci-overlap", "--no-fdr", "--jobs", "1",
                 "--format", "json", "--dry-run"]) == 0
    assert [r["kind"] for r in json.loads(capsys.readouterr().out)] == ["regression"]
    assert main(["--store", str(store.url), "detect", "--json-failures"]) == 2
    assert "--json-failures needs --format json" in capsys.readouterr().err
    status, rows = _detect_json(store, capsys)
    assert status == ExitStatus.FOUND
    change, failure = rows
    assert list(change)[:10] == ["benchmark", "config", "machine", "version", "previous", "change", "ci_low",
                                 "ci_high", "kind", "method"]
    assert (change["benchmark"], change["kind"], change["method"]) == ("c", "regression", "ci-overlap")
    assert change["change"] > 0.9 and change["alert"]["status"] == "new"
    assert list(failure)[:10] == list(change)[:10]
    assert failure == {
        "benchmark": "b", "config": "default", "machine": "m", "version": "v3", "previous": "v2",
        "change": None, "ci_low": None, "ci_high": None, "kind": "failure", "method": None,
        "error": "failed (exit status 2): panic: boom", "newest": "v4", "failed_runs": 2,
        "alert": {"id": failure["alert"]["id"], "held": False, "spread": "single", "machines": ["m"],
                  "unchanged_on": [], "status": "new"}}
    [stored] = [a for a in list_alerts(store) if a.failure]
    assert stored.id == failure["alert"]["id"]
    # Marked invalid: still listed (it still fails), with the status that keeps it off the gate.
    set_status(store, [stored.id], "invalid", who="ana")
    _, rows = _detect_json(store, capsys)
    assert [r["alert"]["status"] for r in rows if r["kind"] == "failure"] == ["invalid"]
    # Runs again: no longer listed.
    _add(store, [_ok("b", "v5", 0, None)])
    _, rows = _detect_json(store, capsys)
    assert [r["kind"] for r in rows] == ["regression"]


# ------------------------------------------------------------------- no longer run
def _detect(store: Store):
    return detect_and_alert(store, None, method="ci-overlap", fdr=None, jobs=1)


def test_a_failing_benchmark_no_longer_run_stops_gating_and_its_alert_is_fixed(store):
    """Removed from the suite (or renamed) while it failed: once a later version was measured with
    every benchmark that ran beside it, without it, it no longer fails the gate and its alert is
    fixed, with no version that fixed it.  A campaign of a subset, or one that did not finish, is
    no such measurement.  Back in the suite and failing still, its alert is open again."""
    suite = ("b", "c", "d")
    _add(store, [_ok(n, "v1", 0, None) for n in suite])
    _add(store, [_failed("b", "v2", 0, None), _ok("c", "v2", 0, None), _ok("d", "v2", 0, None)])
    [alert] = _detect(store).alerts.failures
    _add(store, [_ok("c", "v3", 0, None)])  # run --benchmark c: a subset, not a removal
    _add(store, [_ok("c", "v4", 0, None), _ok("d", "v4", 0, None)], status="interrupted")
    outcome = _detect(store)
    assert outcome.regressed and [f.benchmark for f in outcome.failing] == ["b"] and outcome.no_longer_run == ()
    assert outcome.alerts.fixed == ()

    _add(store, [_ok("c", "v5", 0, None), _ok("d", "v5", 0, None)])  # the suite, without b
    outcome = _detect(store)  # once is not enough: b's own job of v5 may still be on its way
    assert outcome.regressed and [f.benchmark for f in outcome.failing] == ["b"] and outcome.no_longer_run == ()
    _add(store, [_ok("c", "v6", 0, None), _ok("d", "v6", 0, None)])  # and again
    outcome = _detect(store)
    assert not outcome.regressed and outcome.failing == () and outcome.broken == ()
    [gone] = outcome.no_longer_run
    assert (gone.benchmark, gone.machine, gone.version, gone.anchor, gone.by, gone.companions) == (
        "b", "m", "v2", "v2", "v5", ("c", "d"))
    [fixed] = outcome.alerts.fixed
    assert (fixed.id, fixed.status, fixed.fixed_by, fixed.fixed_by_alert) == (alert.id, "fixed", None, None)
    assert alert_history(store, alert.id)[-1].why == (
        "no longer run: v5 was measured on m with the 2 benchmark(s) run beside it at v2 (c, d), without it "
        "(removed from the suite, or renamed); every run failed at v2, the newest it ran at")
    assert _detect(store).alerts.fixed == ()  # once
    # Back in the suite, failing still: the same breakage, open again, gating; then it runs.
    _add(store, [_failed("b", "v7", 0, None), _ok("c", "v7", 0, None), _ok("d", "v7", 0, None)])
    outcome = _detect(store)
    assert outcome.regressed and outcome.alerts.created == ()
    [again] = outcome.alerts.reopened
    assert outcome.alerts.failures == (again,) and (again.id, again.status, again.fixed_by) == (alert.id, "new", None)
    assert alert_history(store, alert.id)[-1].why == (
        "failing again: it runs again after it was no longer run, and every run failed at v7")
    assert _detect(store).alerts.reopened == ()
    _add(store, [_ok("b", "v8", 0, None), _ok("c", "v8", 0, None), _ok("d", "v8", 0, None)])
    [fixed] = _detect(store).alerts.fixed  # reopened by detection, not by a person: fixed again
    assert (fixed.id, fixed.fixed_by) == (alert.id, "v8")


def test_a_failing_benchmark_whose_own_job_comes_last_keeps_gating(store):
    """Two CI jobs a commit, imported (no campaign, no suite): the job of the failing benchmark
    finishes after its companions'.  Until then it is not shown gone, so the gate does not pass
    in between and its alert is neither fixed nor reopened."""
    versions = _versions(4)

    def imported(runs: list[RunRecord]) -> None:
        store.add_runs(runs, versions=versions)

    imported([_ok(n, "v1", 0, None) for n in "abc"])
    imported([_failed("a", "v2", 0, None), _ok("b", "v2", 0, None), _ok("c", "v2", 0, None)])
    [alert] = _detect(store).alerts.failures
    imported([_ok("b", "v3", 0, None), _ok("c", "v3", 0, None)])  # the companions' job of v3, first
    outcome = _detect(store)
    assert outcome.regressed and outcome.no_longer_run == () and outcome.alerts.fixed == ()
    imported([_failed("a", "v3", 0, None)])  # a's own job of v3, last: failing still
    outcome = _detect(store)
    assert outcome.regressed and outcome.alerts.reopened == ()
    assert [e.status for e in alert_history(store, alert.id)] == ["new"]


def test_no_longer_run_compares_with_the_newest_measurement_it_was_part_of(store):
    """Run alone at the newest version it ran at (``run --benchmark b``), a benchmark is compared
    with the suite it last ran in; a tool's benchmark that its tool no longer reports is no longer
    run; and a companion itself no longer run does not hold back the others."""
    tool = {"t/x": {"unit": "ns", "direction": "lower"}, "t/y": {"unit": "ns", "direction": "lower"}}
    _add(store, [_ok(n, "v1", 0, None) for n in ("b", "c", "d", "t/x", "t/y")], benchmarks=tool)
    _add(store, [_failed("t/x", "v2", 0, None)] + [_ok(n, "v2", 0, None) for n in ("b", "c", "d", "t/y")],
         benchmarks=tool)
    _add(store, [_failed("b", "v3", 0, None)])
    _add(store, [_ok("c", "v4", 0, None)])
    scan = scan_failures(store)
    assert [f.benchmark for f in scan.failing] == ["b", "t/x"] and scan.no_longer_run == ()
    _add(store, [_ok(n, "v5", 0, None) for n in ("c", "d", "t/y")], benchmarks=tool)
    assert [f.benchmark for f in scan_failures(store).failing] == ["b", "t/x"]  # at one version: not yet
    _add(store, [_ok(n, "v6", 0, None) for n in ("c", "d", "t/y")], benchmarks=tool)
    scan = scan_failures(store)
    assert scan.failing == ()
    assert [(g.benchmark, g.version, g.anchor, g.by, g.campaign, g.companions) for g in scan.no_longer_run] == [
        ("b", "v3", "v2", "v5", None, ("c", "d", "t")), ("t/x", "v2", "v2", "v5", None, ("c", "d", "t"))]


def test_a_campaign_whose_suite_no_longer_names_a_failing_benchmark_shows_it_no_longer_run(store):
    """Two failing benchmarks removed together: each ran beside the other, so what was measured
    cannot tell them from a subset; the suite a campaign records (every configured benchmark,
    whatever ``--benchmark`` selected) can."""
    _add(store, [_ok(n, "v1", 0, None) for n in ("e", "f", "g")])
    _add(store, [_failed("e", "v2", 0, None), _failed("f", "v2", 0, None), _ok("g", "v2", 0, None)])
    _add(store, [_ok("g", "v3", 0, None)])
    assert [f.benchmark for f in scan_failures(store).failing] == ["e", "f"]
    _add(store, [_ok("g", "v4", 0, None)], suite=["e", "f", "g"])  # run --benchmark g
    assert [f.benchmark for f in scan_failures(store).failing] == ["e", "f"]
    _add(store, [_ok("g", "v5", 0, None)], suite=["g", "h"])
    [campaign] = [c.id for c in store.campaigns() if (c.plan or {}).get("suite") == ["g", "h"]]
    scan = scan_failures(store)
    assert scan.failing == ()
    assert [(g.benchmark, g.by, g.campaign, g.companions) for g in scan.no_longer_run] == [
        ("e", "v5", campaign, ()), ("f", "v5", campaign, ())]
    # Removed before any detection saw them fail, as if they had run again: nothing to tell.
    assert _record(store).created == ()


OTHER = ("import os\n"
         "for i in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
         "    print(2.0 + 0.001 * i)\n")


def test_a_failing_benchmark_removed_from_the_suite_no_longer_fails_the_gate(tmp_path, capsys):
    """End to end, with real campaigns of two benchmarks: ``parse`` fails from commit 2 on; a
    campaign of ``other`` alone leaves it failing (its suite still names ``parse``, though every
    other benchmark ran); once ``parse`` is removed from regbench.toml, the next campaign shows it
    no longer run: the gate passes, and its alert is fixed with no version that fixed it."""
    repo = tmp_path / "repo"
    git_init(repo)

    def toml(*names: str) -> str:
        return ('[project]\nname = "p"\nstore = "results/r.db"\n[defaults]\nruns = 1\niterations = 3\nwarmup = 0\n'
                + "".join(f'[[benchmark]]\nname = "{n}"\ncommand = {json.dumps([PY, n + ".py"])}\n' for n in names))

    files = [{"parse.py": PROGRAM, "other.py": OTHER, "regbench.toml": toml("parse", "other")}, {"broken": "x"},
             {"notes/3": "3"}, {"notes/4": "4"}]
    shas = [git_commit(repo, f, f"commit {k}", when=T0 + timedelta(hours=k)) for k, f in enumerate(files, 1)]
    args = ["--config", str(repo / "regbench.toml")]
    detect = [*args, "detect", "--jobs", "1", "--method", "ci-overlap", "--fail-on-regression"]

    assert main([*args, "run", "--versions", ",".join(shas[:2]), "--seed", "1"]) == ExitStatus.FAILED
    assert main(detect) == ExitStatus.FOUND
    assert main([*args, "run", "--versions", shas[2], "--benchmark", "other", "--seed", "1"]) == 0
    capsys.readouterr()
    assert main([*args, "detect", "--jobs", "1", "--format", "json", "--json-failures", "--fail-on-regression"]) \
        == ExitStatus.FOUND
    [failing] = json.loads(capsys.readouterr().out)
    assert (failing["kind"], failing["benchmark"], failing["alert"]["status"]) == ("failure", "parse", "new")

    (repo / "regbench.toml").write_text(toml("other"))
    assert main([*args, "run", "--versions", shas[3], "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(detect) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "No longer run (removed from the suite, or renamed), so no longer failing: parse on " in out
    assert f"(failing at {shas[1][:10]}, not run at {shas[3][:10]})" in out and "1 earlier alert(s) now fixed" in out
    [alert] = alerts_json(args, capsys)
    assert (alert["status"], alert["fixed_by"], alert["fixed_by_alert"]) == ("fixed", None, None)
    capsys.readouterr()
    assert main([*args, "alerts", "show", "1"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert ", no longer run: failed (exit status 1)" in shown
    assert "status: fixed (no longer run: removed from the suite, renamed, or its machine or configuration " \
           "retired)" in shown
    assert f"no longer run: the suite of campaign #3 at {shas[3][:10]} on " in shown
    capsys.readouterr()
    assert main(detect) == 0  # said once, by the pass that fixed the alert
    assert "No longer run" not in capsys.readouterr().out
    assert main([*args, "detect", "--jobs", "1", "--format", "json", "--json-failures", "--fail-on-regression"]) == 0
    assert json.loads(capsys.readouterr().out) == []


# --- what a suppression covers: a benchmark's measure series and its tool's series (review, 2026-11-30)

def _suppressed_config(tmp_path, **benchmark):
    from regbench.config import parse_config

    return parse_config({"benchmark": [{"command": ["true"], "alerts": False, **benchmark}]},
                        path=tmp_path / "regbench.toml")


def test_alerts_false_covers_the_benchmarks_measure_series(store, tmp_path):
    """``alerts = false`` on ``sort`` with ``measures = ["cpu"]``: a failed run stores ``sort:cpu``
    failed too, and a regression of ``sort:cpu`` is the benchmark's: neither gates nor is stored."""
    config = _suppressed_config(tmp_path, name="sort", measures=["cpu"])
    _add(store, [_ok(n, v, r, None) for n in ("sort", "sort:cpu") for v in ("v1", "v2") for r in range(2)]
         + [_failed(n, "v3", r, None) for n in ("sort", "sort:cpu") for r in range(2)])
    for dry in (True, False):
        out = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1, dry_run=dry)
        assert [f.benchmark for f in out.failing] == ["sort", "sort:cpu"]
        assert [f.benchmark for f in out.suppressed_failures] == ["sort", "sort:cpu"] and not out.regressed
    assert list_alerts(store) == []


def test_alerts_false_covers_the_series_its_tool_reports(store, tmp_path):
    config = _suppressed_config(tmp_path, name="gb", format="go")
    tool = {"gb/BenchmarkX-2": {"unit": "ns", "direction": "lower"}}
    _add(store, [_level("gb/BenchmarkX-2", v, r, 2.0 if v == "v3" else 1.0) for v in ("v1", "v2", "v3")
                 for r in range(3)], benchmarks=tool)
    out = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1)
    assert [(e.change.benchmark, e.change.kind, e.suppressed) for e in out.changes] == [
        ("gb/BenchmarkX-2", "regression", True)]
    assert not out.regressed and list_alerts(store) == []


def test_a_glob_matches_a_series_by_its_benchmarks_name_too(tmp_path):
    from regbench.config import parse_config

    config = parse_config({"alerts": {"suppress": ["gb"]}}, path=tmp_path / "regbench.toml")
    assert config.alerts_suppressed("gb/BenchmarkX-2") and config.alerts_suppressed("gb:cpu")
    assert not config.alerts_suppressed("gbx/BenchmarkX-2") and not config.alerts_suppressed("sort")


def test_the_summary_counts_a_suppressed_improvement_as_not_alerted_not_as_left_out_of_the_gate(
        store, tmp_path, capsys):
    _add(store, [_level("exp-c", v, r, 0.5 if v == "v3" else 1.0) for v in ("v1", "v2", "v3") for r in range(3)])
    toml = tmp_path / "regbench.toml"
    toml.write_text('[alerts]\nsuppress = ["exp-*"]\n')
    detect = ["--store", str(store.url), "--config", str(toml), "detect", "--method", "ci-overlap", "--no-fdr",
              "--jobs", "1", "--fail-on-regression"]
    capsys.readouterr()
    assert main([*detect, "--dry-run"]) == 0
    assert "Suppressed by regbench.toml" not in capsys.readouterr().out  # no regression left out
    assert main(detect) == 0
    real = " ".join(capsys.readouterr().out.split())
    assert "1 suppressed by regbench.toml (not alerted)" in real and "not gating" not in real
