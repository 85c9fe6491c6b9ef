"""Detection over a store: alerts recorded once, saved states, incremental passes, workers, FDR."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta

import numpy as np
import pytest

from regbench.detect.alerts import record_alerts
from regbench.detect.driver import detect_changes, save_detection_state
from regbench.store.alerts import alert_history, get_alert
from regbench.detect import Change
from regbench.detect.fdr import control_fdr
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store
from regbench.store.state import load_states


def fill(store: Store, levels_by_bench: dict[str, list[float]], *, start: int = 0, runs: int = 6, iters: int = 10,
         seed: int = 0, timed: bool = False) -> None:
    """Runs of versions ``v{start:03d}`` on; ``timed``: with timestamps, which order them in
    history whatever order they are stored in (else the store's order is theirs)."""
    rng = np.random.default_rng(seed)
    n = max(len(v) for v in levels_by_bench.values())
    versions = [VersionInfo(f"v{k:03d}", timestamp_text=f"2024-01-01T{k // 60:02d}:{k % 60:02d}:00Z",
                            timestamp=datetime(2024, 1, 1) + timedelta(minutes=k) if timed else None)
                for k in range(start, start + n)]
    records = []
    for bench, levels in levels_by_bench.items():
        for k, level in enumerate(levels):
            for r in range(runs):
                x = level * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, iters))
                records.append(RunRecord(benchmark=bench, version=f"v{start + k:03d}", run_index=r, samples=x))
    store.add_runs(records, versions=versions)


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "regbench.cli.main", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture
def stepped(store_url) -> str:
    """A store (its URL: SQLite, or PostgreSQL with ``--store-url``) of three series, two stepped."""
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 30 + [1.1] * 20, "b": [1.0] * 50, "c": [1.0] * 20 + [0.9] * 30})
    return store_url


def test_detect_records_alerts_once_and_saves_states(stepped):
    first = run_cli("--store", str(stepped), "detect")
    assert first.returncode == 0, first.stderr
    assert "Alerts: 2 new alert(s), 0 already known" in first.stdout
    again = run_cli("--store", str(stepped), "detect")
    assert "Alerts: 0 new alert(s), 2 already known" in again.stdout
    other = run_cli("--store", str(stepped), "detect", "--method", "ci-overlap", "--min-change", "0.05")
    assert "0 new alert(s)" in other.stdout  # the same two steps, found by another method
    listed = json.loads(run_cli("--store", str(stepped), "alerts", "list", "--format", "json").stdout)
    assert sorted((a["benchmark"], a["version"], a["kind"]) for a in listed) == [
        ("a", "v030", "regression"), ("c", "v020", "improvement")]
    with Store(stepped, create=False) as s:
        from regbench.detect.driver import options_key

        states = load_states(s, "auto", options_key("auto", None, 0.99, {}))
    assert set(states) == {("a", "default", "local"), ("b", "default", "local"), ("c", "default", "local")}
    assert states[("a", "default", "local")]["segment_start"] == "v030"
    assert states[("a", "default", "local")]["last_version"] == "v049"


def test_dry_run_writes_nothing(stepped):
    out = run_cli("--store", str(stepped), "detect", "--dry-run")
    assert out.returncode == 0 and "Alerts:" not in out.stdout
    assert json.loads(run_cli("--store", str(stepped), "alerts", "list", "--format", "json").stdout) == []


def test_incremental_pass_checks_only_new_versions_and_matches_truth(stepped):
    with Store(stepped, create=False) as s:
        full = detect_changes(s)
        save_detection_state(s, full)
        fill(s, {"a": [1.1] * 3, "b": [1.0, 1.0, 1.08], "c": [0.9] * 3}, start=50, seed=5)
        inc = detect_changes(s, incremental=True)
    assert inc.incremental and inc.n_tests == 9  # 3 series x 3 new versions, one hypothesis each
    assert [(c.benchmark, c.version, c.previous, c.kind) for c in inc.changes] == [("b", "v052", "v051", "regression")]
    assert {k: st["last_version"] for k, st in inc.states} == {
        ("a", "default", "local"): "v052", ("b", "default", "local"): "v052", ("c", "default", "local"): "v052"}


def test_incremental_without_saved_state_is_a_full_pass(stepped):
    with Store(stepped, create=False) as s:
        inc = detect_changes(s, incremental=True)
        full = detect_changes(s)
    assert [c.to_json() for c in inc.changes] == [c.to_json() for c in full.changes]
    assert inc.n_tests == full.n_tests


def test_incremental_cli_and_a_method_without_it(stepped):
    assert run_cli("--store", str(stepped), "detect").returncode == 0
    out = run_cli("--store", str(stepped), "detect", "--incremental")
    assert out.returncode == 0, out.stderr
    assert "0 change(s) in 0 series with new versions" in out.stdout
    bad = run_cli("--store", str(stepped), "detect", "--incremental", "--method", "ci-overlap")
    # A usage error (exit 2, click's usage lines), before the store is read.
    assert bad.returncode == 2 and "no incremental mode" in bad.stderr.splitlines()[-1]


def test_workers_give_the_same_answer_as_one_process(store_url):
    path = store_url
    rng = np.random.default_rng(1)
    levels = {}
    for b in range(60):
        lv = [1.0] * 25
        if b % 7 == 0:
            lv = [1.0] * 12 + [1.0 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.2)] * 13
        levels[f"bench{b:02d}"] = lv
    with Store(path) as s:
        fill(s, levels, runs=4, iters=5)
        one = detect_changes(s, jobs=1, batch=20)
        two = detect_changes(s, jobs=2, batch=20)
    assert one.n_series == two.n_series == 60
    assert [c.to_json() for c in one.changes] == [c.to_json() for c in two.changes]
    assert {c.benchmark for c in one.changes} == {f"bench{b:02d}" for b in range(0, 60, 7)}
    assert len(one.states) == len(two.states) == 60


def test_notify_needs_sinks(stepped, tmp_path):
    out = run_cli("--store", str(stepped), "detect", "--notify", cwd=tmp_path)
    assert out.returncode == 3 and "--notify needs [[notify]] sinks" in out.stderr


def _change(p):
    return Change("b", "default", "m", "v1", "v0", 0.1, 0.05, 0.15, "regression", "auto", p_value=p)


def test_benjamini_hochberg_against_the_step_up_rule_by_hand():
    p = [0.0001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205]
    res = control_fdr([_change(x) for x in p], 8, q=0.05)
    # Step-up: largest i with p_(i) <= i q / m = 2 (0.008 <= 0.0125; 0.039 > 0.01875, ...).
    assert [c.p_value for c in res.kept] == [0.0001, 0.008]
    # Adjusted p-values: min over j >= i of p_(j) m / j, computed here without statsmodels.
    ranks = np.arange(1, 9)
    q_ref = np.minimum.accumulate((np.array(p) * 8 / ranks)[::-1])[::-1]
    assert [c.q_value for c in res.kept] == pytest.approx(q_ref[:2])
    assert [c.q_value for c in res.dropped] == pytest.approx(q_ref[2:])


def test_untested_hypotheses_count_as_p_equal_one():
    kept_small_family = control_fdr([_change(0.004)], 1, q=0.05)
    kept_large_family = control_fdr([_change(0.004)], 100, q=0.05)
    assert len(kept_small_family.kept) == 1 and len(kept_large_family.kept) == 0
    assert kept_large_family.dropped[0].q_value == pytest.approx(0.4)


def test_changes_without_p_values_pass_through():
    c = Change("b", "default", "m", "v1", "v0", 0.1, 0.05, 0.15, "regression", "ci-overlap")
    res = control_fdr([c], 10)
    assert res.kept == (c,) and not res.applicable
    with pytest.raises(ValueError, match="`q`"):
        control_fdr([c], 10, q=1.5)


def test_fdr_holds_over_many_quiet_and_some_stepped_series():
    # 400 series, 40 with a real 5-15% step: the fraction of reported changes that are false stays
    # below q (here none at all should be), and every real step is reported.
    from regbench.model import Series, VersionInfo

    rng = np.random.default_rng(11)
    series, truth = [], {}
    for b in range(400):
        s = Series(f"b{b}", "default", "m", "s", "lower")
        at = 20 if b % 10 == 0 else None
        step = 0.05 + 0.1 * rng.random()
        for k in range(40):
            level = 1.0 + (step if at is not None and k >= at else 0.0)
            s.versions.append(VersionInfo(f"v{k}", k + 1))
            s.runs.append([level * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, 5)) for _ in range(4)])
            s.failed.append(0)
            s.warmup.append(0)
        if at is not None:
            truth[s.benchmark] = "v20"
        series.append(s)
    res = detect_changes(series, method="auto", fdr=0.05)
    found = {(c.benchmark, c.version) for c in res.changes}
    assert found == set(truth.items())
    assert res.fdr_applied and res.n_series == 400 and res.n_tests >= 400


def test_bh_adjust_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from regbench.detect.fdr import bh_adjust

    rng = np.random.default_rng(3)
    for p in (rng.uniform(size=50), np.r_[rng.uniform(0, 1e-4, 10), rng.uniform(size=990)], np.array([0.2, 0.2, 0.01])):
        reject, ref, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
        assert bh_adjust(p) == pytest.approx(ref, rel=1e-12)
        assert list(bh_adjust(p) <= 0.05) == list(reject)


def test_incremental_checks_a_benchmark_added_later_with_old_versions(stepped):
    with Store(stepped, create=False) as s:
        save_detection_state(s, detect_changes(s))
        fill(s, {"late": [1.0] * 10 + [1.2] * 10}, start=0, seed=8)  # versions v000-v019: all old
        inc = detect_changes(s, incremental=True)
    assert [(c.benchmark, c.version) for c in inc.changes] == [("late", "v010")]
    assert {k[0] for k, _ in inc.states} == {"late"}


def test_incremental_checks_again_a_series_whose_old_version_came_late(store_url):
    """CI jobs finish out of order: the commit after a regression is stored and checked first,
    then the regression's own commit.  The late version is searched again, and the change is
    told at the commit that made it, not at the one that was stored first."""
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 30, "b": [1.0] * 30}, seed=1, timed=True)  # v000-v029
        save_detection_state(s, detect_changes(s))
        fill(s, {"a": [1.2], "b": [1.0]}, start=31, seed=2, timed=True)  # v031 before v030
        first = detect_changes(s, incremental=True)
        save_detection_state(s, first)
        assert [(c.benchmark, c.version, c.previous) for c in first.changes] == [("a", "v031", "v029")]
        (alert,) = record_alerts(s, first.changes).created
        fill(s, {"a": [1.2], "b": [1.0]}, start=30, seed=3, timed=True)  # v030, stored last
        late = detect_changes(s, incremental=True)
        save_detection_state(s, late)
        assert [(c.benchmark, c.version, c.previous) for c in late.changes] == [("a", "v030", "v029")]
        assert late.n_series == 2  # both series got a run of an old version: both searched again
        outcome = record_alerts(s, late.changes)
        again = detect_changes(s, incremental=True)
        # The alert, told once, now points at the commit that made the step.
        assert not outcome.created and [a.id for a in outcome.merged] == [alert.id]
        moved = get_alert(s, alert.id)
        assert (moved.version, moved.previous, moved.change) == ("v030", "v029", late.changes[0].change)
        assert "placed at v030 (since v029)" in alert_history(s, alert.id)[-1].why
    assert again.n_tests == 0 and not again.changes  # nothing stored since


def test_an_alert_moves_to_a_late_job_of_a_commit_whose_other_jobs_were_on_time(store_url):
    """A CI matrix: benchmark b's job of v030 stores that version on time; a's job of v030 comes
    after v031's.  The alert placed at v031 moves to v030: what counts is when a's runs came."""
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 30, "b": [1.0] * 30}, seed=1, timed=True)  # v000-v029
        save_detection_state(s, detect_changes(s))
        fill(s, {"b": [1.0]}, start=30, seed=5, timed=True)  # b's job of v030, on time
        save_detection_state(s, detect_changes(s, incremental=True))
        fill(s, {"a": [1.2], "b": [1.0]}, start=31, seed=2, timed=True)  # v031
        first = detect_changes(s, incremental=True)
        save_detection_state(s, first)
        assert [(c.benchmark, c.version, c.previous) for c in first.changes] == [("a", "v031", "v029")]
        (alert,) = record_alerts(s, first.changes).created
        fill(s, {"a": [1.2]}, start=30, seed=3, timed=True)  # a's job of v030, last
        late = detect_changes(s, incremental=True)
        save_detection_state(s, late)
        assert [(c.benchmark, c.version, c.previous) for c in late.changes] == [("a", "v030", "v029")]
        outcome = record_alerts(s, late.changes)
        assert not outcome.created and [a.id for a in outcome.merged] == [alert.id]
        moved = get_alert(s, alert.id)
        assert (moved.version, moved.previous) == ("v030", "v029")
        assert "placed at v030 (since v029)" in alert_history(s, alert.id)[-1].why


@pytest.mark.parametrize("status", ["new", "acknowledged", "expected"])
def test_a_back_fill_reports_old_steps_again_without_failing_the_gate(store_url, status):
    """A back-filled old version makes the incremental pass search the series again and report
    the steps after it again: into their alerts, whatever their status, and not failing the gate
    of a later commit (they were found and told before).  A step the late runs reveal anew does."""
    from regbench.detect.alerts import set_status
    from regbench.pipeline import detect_and_alert
    from regbench.store.alerts import list_alerts

    def gate():
        # Without the checks of local noise: v015's late runs below, 30 at 2.0 beside its 6 at 1.3,
        # are read by them as interference (its fastest runs did not move), and this test is of
        # the gate's rule for a step that late runs reveal.
        return detect_and_alert(s, None, method="auto", fdr=0.05, incremental=True, options={"local_noise": False})

    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 10 + [1.3] * 10}, seed=1)  # a step at v010
        assert gate().regressed
        (alert,) = list_alerts(s)
        if status != "new":
            set_status(s, [alert.id], status, who="alice", why="triaged")
        fill(s, {"a": [1.3]}, start=20, seed=2)
        assert not gate().regressed  # v020: nothing new
        s.add_runs([RunRecord(benchmark="a", version="v005", run_index=6, samples=np.full(10, 1.0))])  # back-fill
        fill(s, {"a": [1.3]}, start=21, seed=3)
        outcome = gate()
        assert [(c.version, c.kind) for c in outcome.detection.changes] == [("v010", "regression")]
        assert [e.told_before for e in outcome.changes] == [True] and not outcome.regressed
        assert [(a.id, a.status) for a in list_alerts(s)] == [(alert.id, status)]  # the same alert
        # Late runs of v015 that are slower: a step there was never found, and it gates.
        s.add_runs([RunRecord(benchmark="a", version="v015", run_index=6 + k, samples=np.full(10, 2.0))
                    for k in range(30)])
        fill(s, {"a": [1.3]}, start=22, seed=4)
        outcome = gate()
        fresh = [e for e in outcome.changes if not e.told_before]
        assert fresh and all(e.change.version in ("v015", "v016") for e in fresh) and outcome.regressed


def test_a_regression_fixed_long_ago_does_not_fail_the_gate_when_late_runs_report_it_again(store_url, capsys):
    """A regression undone by a later improvement (its alert fixed): runs of an old version
    stored late make the pass report both again, and the gate of the newest commit passes."""
    from regbench.pipeline import detect_and_alert
    from regbench.store.alerts import list_alerts

    def gate():
        # Without the checks of local noise: v015's late runs below, 30 at 2.0 beside its 6 at 1.3,
        # are read by them as interference (its fastest runs did not move), and this test is of
        # the gate's rule for a step that late runs reveal.
        return detect_and_alert(s, None, method="auto", fdr=0.05, incremental=True, options={"local_noise": False})

    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 10 + [1.3] * 10 + [1.0] * 10}, seed=1)
        assert gate().regressed
        assert sorted((a.kind, a.status) for a in list_alerts(s)) == [("improvement", "new"), ("regression", "fixed")]
        s.add_runs([RunRecord(benchmark="a", version="v002", run_index=6, samples=np.full(10, 1.0))])
        fill(s, {"a": [1.0]}, start=30, seed=2)
        outcome = gate()
        assert {(c.version, c.kind) for c in outcome.detection.changes} == {("v010", "regression"),
                                                                             ("v020", "improvement")}
        assert all(e.told_before for e in outcome.changes) and not outcome.regressed
        assert len(list_alerts(s)) == 2
    from regbench.report.changes import print_detection

    capsys.readouterr()
    print_detection(outcome, fmt="table", confidence=0.99, min_change=None)
    assert "2 of them reported again, not found anew" in " ".join(capsys.readouterr().out.split())


def test_a_held_alert_raised_by_late_runs_of_another_machine_fails_the_gate(store_url, tmp_path):
    """``require_machines = 2``: a step seen on one machine is held (not told, not gating); the
    second machine's old versions, back-filled, show it too: the alert is raised, told for the
    first time, and that pass fails the gate, though the step lies among versions checked before."""
    import tomllib

    from regbench.config import parse_config
    from regbench.pipeline import detect_and_alert

    config = parse_config(tomllib.loads("[alerts]\nrequire_machines = 2\n"), path=tmp_path / "regbench.toml")
    rng = np.random.default_rng(0)

    def runs(machine: str, ks) -> list[RunRecord]:
        return [RunRecord(benchmark="a", version=f"v{k:03d}", run_index=r, machine=machine,
                          samples=(1.0 if k < 10 else 1.3) * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, 10)))
                for k in ks for r in range(6)]

    versions = [VersionInfo(f"v{k:03d}") for k in range(21)]
    with Store(store_url) as s:
        s.add_runs(runs("m1", range(20)) + runs("m2", range(10, 20)), versions=versions[:20])
        first = detect_and_alert(s, config, method="auto", fdr=0.05, incremental=True)
        assert [a.held for a in first.alerts.created] == [True] and not first.regressed
        s.add_runs(runs("m2", range(10)))  # m2's older versions, back-filled
        s.add_runs(runs("m1", [20]) + runs("m2", [20]), versions=versions)
        second = detect_and_alert(s, config, method="auto", fdr=0.05, incremental=True)
    assert [a.id for a in second.alerts.raised] == [a.id for a in first.alerts.created]
    assert [e.told_before for e in second.changes] == [False] and second.regressed


def test_a_new_machine_still_regressed_where_the_fix_did_not_work_fails_the_gate(store_url):
    """A machine added with its history imported shows a regression that another machine's alert
    told, and that a later improvement fixed there but not on it: checked for the first time,
    its step is not told before, and the gate fails (a new machine is news)."""
    from regbench.pipeline import detect_and_alert

    rng = np.random.default_rng(0)

    def runs(machine: str, ks, level) -> list[RunRecord]:
        return [RunRecord(benchmark="a", version=f"v{k:03d}", run_index=r, machine=machine,
                          samples=level(k) * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, 10)))
                for k in ks for r in range(6)]

    versions = [VersionInfo(f"v{k:03d}") for k in range(32)]
    with Store(store_url) as s:
        s.add_runs(runs("m1", range(30), lambda k: 1.3 if 10 <= k < 20 else 1.0), versions=versions[:30])
        assert detect_and_alert(s, None, method="auto", fdr=0.05, incremental=True).regressed
        s.add_runs(runs("m1", [30, 31], lambda k: 1.0) + runs("m2", range(32), lambda k: 1.3 if k >= 10 else 1.0),
                   versions=versions)
        outcome = detect_and_alert(s, None, method="auto", fdr=0.05, incremental=True)
    assert [(e.change.machine, e.change.version, e.told_before) for e in outcome.changes] == [("m2", "v010", False)]
    assert outcome.regressed


def test_incremental_leaves_series_whose_late_runs_are_not_in_their_history(store_url):
    """Runs of an old version stored for one series make only that series be searched again."""
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 20, "b": [1.0] * 20}, seed=1)
        save_detection_state(s, detect_changes(s))
        s.add_runs([RunRecord(benchmark="b", version="v005", run_index=6, samples=np.full(10, 1.0))])
        inc = detect_changes(s, incremental=True)
        machine = s.machine_names()[0]
    assert inc.n_series == 1 and [k for k, _ in inc.states] == [("b", "default", machine)]


def test_dry_run_and_notify_do_not_mix(stepped):
    out = run_cli("--store", str(stepped), "detect", "--dry-run", "--notify")
    assert out.returncode == 2 and "Error: --dry-run records no alerts" in out.stderr  # usage
    with Store(stepped, create=False) as s:
        from regbench.store import schema as t
        import sqlalchemy as sa

        with s.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(t.detect_state)).scalar() == 0
            assert conn.execute(sa.select(sa.func.count()).select_from(t.alert)).scalar() == 0


def test_benjamini_hochberg_binds_across_many_series():
    # 300 quiet series and a per-test level loose enough (alpha 0.05 in the search) for a few
    # false candidates: without FDR control some are reported, with it (q = 5%) none survive,
    # while a real 20% step still does.
    from regbench.model import Series, VersionInfo

    rng = np.random.default_rng(21)
    series = []
    for b in range(301):
        s = Series(f"b{b}", "default", "m", "s", "lower")
        for k in range(30):
            level = 1.2 if (b == 300 and k >= 15) else 1.0
            s.versions.append(VersionInfo(f"v{k}", k + 1))
            s.runs.append([level * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, 5)) for _ in range(4)])
            s.failed.append(0)
            s.warmup.append(0)
        series.append(s)
    loose = dict(method="auto", min_change=0.0, alpha=0.05)
    without = detect_changes(series, fdr=None, **loose)
    with_fdr = detect_changes(series, fdr=0.05, **loose)
    assert len([c for c in without.changes if c.benchmark != "b300"]) >= 3
    assert [(c.benchmark, c.version) for c in with_fdr.changes] == [("b300", "v15")]
    assert len(with_fdr.dropped) >= 3


@pytest.mark.parametrize("old", [1, 2, 3, 4, 5])
def test_states_saved_before_the_detector_s_state_revision_are_not_used(stepped, old):
    # auto's revision 2 leaves out bursts on the slow side only, revision 3 keeps a floor's
    # segment, revision 4 that of runs too short to choose a location too, revision 5 searches a
    # throughput as its reciprocal, revision 6 keeps the modes of runs that each stay in one; a
    # state saved by revision 1 (under the key without a revision), 2, 3, 4 or 5 lacks them, so
    # the next pass is a full one.
    from regbench.detect.driver import options_key
    from regbench.store.state import save_states

    key = options_key("auto", None, 0.99, {})
    assert json.loads(key)["state_revision"] == 6
    old_key = json.dumps({k: v for k, v in json.loads(key).items() if k != "state_revision"}
                         | ({"state_revision": old} if old > 1 else {}), sort_keys=True)
    with Store(stepped, create=False) as s:
        full = detect_changes(s)
        save_states(s, "auto", old_key, full.states)
        assert set(load_states(s, "auto", old_key)) == {k for k, _ in full.states}
        fill(s, {"a": [1.1] * 3, "b": [1.0, 1.0, 1.08], "c": [0.9] * 3}, start=50, seed=5)
        inc = detect_changes(s, incremental=True)
        again = detect_changes(s)
        save_detection_state(s, again)
        assert set(load_states(s, "auto", key)) == {k for k, _ in full.states}
        quick = detect_changes(s, incremental=True)
    assert inc.n_tests == again.n_tests > 9  # a full pass, not 3 series x 3 new versions
    assert quick.incremental and quick.n_tests == 0  # nothing new since the states saved under the new key


def test_an_incremental_pass_moves_the_marks_of_the_series_it_examined(store_url):
    """A series no longer measured keeps its state; each incremental pass moves its run mark up to
    its own, so that the next reads only the runs stored since the last pass (not every run since
    the series was last measured), and still finds a late run of that series."""
    with Store(store_url) as s:
        fill(s, {"a": [1.0] * 20, "gone": [1.0] * 20}, seed=1, timed=True)
        save_detection_state(s, detect_changes(s))
        for k in (20, 21):
            fill(s, {"a": [1.0]}, start=k, seed=k, timed=True)  # "gone" is no longer measured
            save_detection_state(s, detect_changes(s, incremental=True))
        marks = {k[0]: v["run_mark"] for k, v in load_states(s, "auto", options_of(s)).items()}
        assert marks["gone"] == marks["a"] and marks["a"] >= s.last_run_id() - 6  # 6 runs of v021 stored after it
        s.add_runs([RunRecord(benchmark="gone", version="v003", run_index=6, samples=np.full(10, 1.0))])
        inc = detect_changes(s, incremental=True)
    assert [k[0] for k, _ in inc.states] == ["gone"]


def options_of(s: Store) -> str:
    from regbench.detect.driver import options_key

    return options_key("auto", None, 0.99, {})
