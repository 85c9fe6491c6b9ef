"""Confirm before alerting (``regbench detect --confirm``) on generated git repositories with real
processes: a real change is confirmed and alerted with its record, a false alarm is refuted and not
alerted, a change that cannot be run here is alerted as unconfirmed; the verdict rules, the
``[detect]`` table, the command's options, and the store migration."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.config import DetectSettings, duration_seconds, load_config, parse_config
from regbench.demo_project import create_step_repo
from regbench.detect.alerts import known_alerts, record_alerts
from regbench.detect.base import REGISTRY, Change, Detector
from regbench.errors import ConfigError
from regbench.model import Confirmation, RunRecord, VersionInfo
from regbench.pipeline import detect_and_alert
from regbench.run.campaign import run_campaign
from regbench.run.confirm import ConfirmOptions, confirm_changes, judge
from regbench.run.fingerprint import default_machine_name
from regbench.run.rerun import comparison_of, plan_reruns
from regbench.run.sequential import DEFAULT_ALPHA, DEFAULT_MAX_PAIRS, Settled
from regbench.stats.sequential import sequential_decision
from regbench.store import Store, schema
from regbench.store.alerts import get_alert, list_alerts, list_confirmations


def campaign_repo(path: Path, open_store, *, steps: dict[int, float], commits: int = 6, extra: str = ""):
    """A repository whose benchmark ``b`` changes at ``steps``, its configuration, and a store
    (opened by ``open_store``, the fixture) holding a campaign over every commit (3 runs each:
    few, as nightly campaigns have)."""
    repo = create_step_repo(path / "repo", commits=commits, steps=steps, extra=extra)
    config = load_config(repo.config_path)
    store = open_store()
    run_campaign(config, store, revisions=",".join(repo.commits), seed=1)
    names = {v.commit: v.name for v in store.versions()}
    return repo, config, store, [names[c] for c in repo.commits]


@pytest.fixture
def open_sqlite_store(tmp_path):
    """``open_store`` on a SQLite file whatever ``--store-url`` says, for the tests about what
    confirmation decides rather than what it stores (their campaigns make the PostgreSQL pass long)."""
    opened: list[Store] = []

    def open_() -> Store:
        opened.append(Store(tmp_path / "r.db"))
        return opened[-1]

    yield open_
    for s in opened:
        s.close()


#: A 25% slowdown at commit 6 of 10: the default detector finds it in 3 runs per commit, whatever the
#: machine's load (ci-overlap's intervals of 3 runs, with Student's t on 2 degrees of freedom, can miss it).
STEP = {6: 1.25}


def n_campaigns(store: Store) -> int:
    return len(store.campaigns())


# ----------------------------------------------------------------------------- a real change
def test_a_real_change_is_confirmed_and_alerted_with_its_record(tmp_path, open_store):
    repo, config, store, versions = campaign_repo(tmp_path, open_store, steps=STEP, commits=10)
    out = detect_and_alert(store, config, method="auto", min_change=0.05, fdr=None, jobs=1,
                           confirm=ConfirmOptions(seed=2))
    (entry,) = out.changes
    assert (entry.change.previous, entry.change.version) == (versions[4], versions[5])
    conf = entry.confirmation
    assert conf.status == "confirmed" and conf.verdict == "regression" and conf.stopped == "settled"
    assert conf.cs_low > 0.05 and 0.15 < conf.change < 0.35 and conf.threshold == 0.05 and conf.alpha == DEFAULT_ALPHA
    assert conf.pairs >= 3 and conf.seconds > 0 and conf.failed_pairs == 0
    # The alert holds the record; the campaign holds the runs, two per pair, of the two versions.
    (alert,) = out.alerts.created
    assert alert.confirmation == conf and out.regressed
    assert get_alert(store, alert.id).confirmation == conf
    with store.engine.connect() as conn:
        runs = conn.execute(sa.text("select v.name, count(*) from run join version v on v.id = run.version_id "
                                    "where campaign_id = :c group by v.name"), {"c": conf.campaign_id}).all()
    assert dict(runs) == {versions[4]: conf.pairs, versions[5]: conf.pairs}
    campaign = store.campaigns()[-1]
    assert campaign.id == conf.campaign_id and campaign.status == "finished"
    assert campaign.plan["schedule"] == "sequential-pairs"
    assert campaign.plan["confirm"]["changes"] == [{"benchmark": "b", "previous": versions[4], "version": versions[5],
                                                    "kind": "regression", "method": "auto",
                                                    "compared_as": comparison_of(entry.change)}]
    assert conf.compared_by is not None and conf.compared_by.startswith("pairs of interleaved runs")
    # Its history says so in words too.
    from regbench.store.alerts import alert_history

    assert "confirmed: regression" in alert_history(store, alert.id)[0].why

    # Detected again: it is already an alert, so it is not run again.
    before = n_campaigns(store)
    again = detect_and_alert(store, config, method="auto", min_change=0.05, fdr=None, jobs=1,
                             confirm=ConfirmOptions(seed=3))
    (entry,) = again.changes
    assert entry.confirmation is None and entry.not_confirmed == f"already alert #{alert.id}: not run again"
    assert n_campaigns(store) == before and not again.alerts.created and len(again.alerts.merged) == 1


# -------------------------------------------------------------------------------- a false alarm
class PlantedAlarm(Detector):
    """Reports a +8% regression between the third and fourth versions of every series, whatever
    the data say: a false alarm where the versions do not differ."""

    name = "test-planted-alarm"

    def detect(self, series):
        prev, ver = series.versions[2].name, series.versions[3].name
        return [Change(series.benchmark, series.config, series.machine, ver, prev, 0.08, 0.06, 0.10, "regression",
                       self.name)]


@pytest.fixture
def planted(monkeypatch):
    monkeypatch.setitem(REGISTRY, PlantedAlarm.name, PlantedAlarm)
    return PlantedAlarm.name


def test_a_false_alarm_is_refuted_and_not_alerted(tmp_path, planted, open_store):
    repo, config, store, versions = campaign_repo(tmp_path, open_store, steps={})
    out = detect_and_alert(store, config, method=planted, min_change=0.05, fdr=None, jobs=1,
                           confirm=ConfirmOptions(seed=4, max_pairs=200))
    (entry,) = out.changes
    conf = entry.confirmation
    assert conf.status == "refuted" and conf.verdict == "no change" and conf.stopped == "settled"
    assert conf.reason == "no change of 5.0% or more"
    assert -0.05 < conf.cs_low and conf.cs_high < 0.05 and not conf.alerts
    # Not an alert; not a regression for --fail-on-regression; its confirmation is kept alone.
    assert list_alerts(store) == [] and out.alerts.withheld == (entry.change,) and not out.regressed
    (record,) = list_confirmations(store)
    assert record.alert_id is None and record.confirmation == conf
    assert (record.previous, record.version, record.method) == (versions[2], versions[3], planted)


def test_a_refuted_change_is_not_bisected(tmp_path, planted, monkeypatch, open_sqlite_store):
    from regbench.run import bisect as bisect_module

    monkeypatch.setattr(bisect_module, "bisect_changes", lambda *a, **k: pytest.fail("a refuted change was bisected"))
    repo, config, store, versions = campaign_repo(tmp_path, open_sqlite_store, steps={})
    out = detect_and_alert(store, config, method=planted, min_change=0.05, fdr=None, jobs=1, bisect=True,
                           confirm=ConfirmOptions(seed=4, max_pairs=200))
    (entry,) = out.changes
    assert entry.bisection is None and entry.not_bisected == "confirmation found it refuted"


def test_a_dry_run_confirms_but_records_nothing(tmp_path, planted, open_store):
    repo, config, store, versions = campaign_repo(tmp_path, open_store, steps={})
    out = detect_and_alert(store, config, method=planted, min_change=0.05, fdr=None, jobs=1, dry_run=True,
                           confirm=ConfirmOptions(seed=5, max_pairs=200))
    assert out.alerts is None and out.changes[0].confirmation.status == "refuted"
    assert list_confirmations(store) == [] and list_alerts(store) == []
    assert store.campaigns()[-1].plan["confirm"]  # the runs are kept, as every run is


def test_a_pair_limit_too_low_leaves_it_inconclusive_and_not_alerted(tmp_path, planted, open_sqlite_store):
    repo, config, store, versions = campaign_repo(tmp_path, open_sqlite_store, steps={})
    out = detect_and_alert(store, config, method=planted, min_change=0.05, fdr=None, jobs=1,
                           confirm=ConfirmOptions(seed=6, max_pairs=3))
    conf = out.changes[0].confirmation
    assert conf.status == "inconclusive" and conf.stopped == "max-pairs" and conf.pairs == 3
    assert conf.reason.startswith("the pair limit was reached")
    assert list_alerts(store) == [] and len(out.alerts.withheld) == 1


def test_a_change_that_goes_the_other_way_is_refuted(tmp_path, open_sqlite_store):
    repo, config, store, versions = campaign_repo(tmp_path, open_sqlite_store, steps={4: 0.8})
    here = default_machine_name()
    wrong = Change("b", "default", here, versions[3], versions[2], 0.1, 0.05, 0.15, "regression", "test")
    (conf,) = confirm_changes(config, store, [wrong], threshold=0.05, options=ConfirmOptions(seed=7))
    assert conf.status == "refuted" and conf.verdict == "improvement" and "other way" in conf.reason


# ------------------------------------------------------------------------ cannot be run here
def fill_without_commits(store: Store) -> None:
    rng = np.random.default_rng(0)
    versions = [VersionInfo(f"v{k:02d}", timestamp_text=f"2024-01-01T00:{k:02d}:00Z") for k in range(12)]
    store.add_runs([RunRecord("b", v.name, r, (1.0 if k < 6 else 1.3) * (1 + rng.normal(0, 0.01, 10)),
                              machine=default_machine_name())
                    for k, v in enumerate(versions) for r in range(5)], versions=versions)


def test_a_change_between_versions_without_commits_is_alerted_as_unconfirmed(tmp_path, store_url):
    path = tmp_path / "regbench.toml"
    path.write_text('[[benchmark]]\nname = "b"\ncommand = ["true"]\n', encoding="utf-8")
    config = load_config(path)
    with Store(store_url) as store:
        fill_without_commits(store)
        out = detect_and_alert(store, config, method="ci-overlap", min_change=0.05, fdr=None, jobs=1,
                               confirm=ConfirmOptions())
        (entry,) = out.changes
        assert entry.confirmation == Confirmation("unconfirmed", reason="its versions are not stored with commits")
        (alert,) = out.alerts.created
        assert alert.confirmation.status == "unconfirmed" and store.campaigns() == []  # nothing was run
        assert list_confirmations(store)[0].alert_id == alert.id


def test_the_reasons_not_to_run_a_change_again_are_those_of_bisect(tmp_path, open_store):
    repo, config, store, versions = campaign_repo(tmp_path, open_store, steps={4: 1.2})
    here = default_machine_name()

    def change(benchmark="b", machine=here):
        return Change(benchmark, "default", machine, versions[3], versions[2], 0.2, 0.1, 0.3, "regression", "auto")

    changes = [change(), change(machine="elsewhere"), change("b:cpu"), change("nope")]
    for purpose, word in (("confirm", "confirmation"), ("bisect", "bisect")):
        reruns, skipped = plan_reruns(config, store, changes, machine=here, purpose=purpose)
        assert [r.change for r in reruns] == changes[:1]
        assert (reruns[0].previous.sha, reruns[0].version.sha) == (repo.commits[2], repo.commits[3])
        reasons = [s.reason for s in skipped]
        assert "'elsewhere'" in reasons[0] and f"measure of 'b'; {word} follows" in reasons[1]
        assert reasons[2] == "no benchmark 'nope' in regbench.toml"
    # ... and they are reported as unconfirmed, and alerted.
    confs = confirm_changes(config, store, changes[1:], threshold=0.05)
    assert [c.status for c in confs] == ["unconfirmed"] * 3 and all(c.alerts for c in confs)
    assert "regbench compare" in confs[0].reason and "--machine elsewhere" in confs[0].reason


# ------------------------------------------------------------------------------ verdict rules
def settled(x, *, threshold=0.05, stopped="settled", direction="lower") -> Settled:
    d = sequential_decision(np.log1p(np.asarray(x, dtype=float)), threshold=threshold, alpha=0.05, min_n=3)
    return Settled("b", "a1", "b1", direction, d, stopped, len(x), 0, 1.5)


@pytest.mark.parametrize("x, kind, status, verdict", [
    ([0.20, 0.21, 0.19, 0.20, 0.22, 0.18] * 3, "regression", "confirmed", "regression"),
    ([0.20, 0.21, 0.19, 0.20, 0.22, 0.18] * 3, "improvement", "refuted", "regression"),
    ([0.001, -0.002, 0.0, 0.002, -0.001, 0.001] * 3, "regression", "refuted", "no change"),
    ([0.01, 0.011, 0.009, 0.010, 0.012, 0.008] * 5, "regression", "refuted", "small regression"),
    ([-0.20, -0.21, -0.19, -0.20, -0.22, -0.18] * 3, "improvement", "confirmed", "improvement"),
])
def test_the_verdict_decides_the_confirmation(x, kind, status, verdict):
    conf = judge(settled(x), kind, campaign_id=9)
    assert (conf.status, conf.verdict, conf.campaign_id, conf.pairs, conf.seconds) == (status, verdict, 9, len(x), 1.5)
    assert conf.threshold == 0.05 and conf.alpha == 0.05


def test_limits_leave_a_change_inconclusive_or_confirmed_when_only_its_size_is_uncertain():
    # Certain, but straddling the threshold when the pairs ran out: a regression of uncertain size.
    uncertain = settled([0.06, 0.02, 0.09, 0.03, 0.07, 0.05, 0.08, 0.04], stopped="max-pairs")
    assert uncertain.verdict == "regression (size uncertain)"
    assert judge(uncertain, "regression").status == "confirmed"
    noisy = settled([0.1, -0.08, 0.05, -0.02], stopped="budget")
    assert noisy.verdict == "inconclusive"
    conf = judge(noisy, "regression")
    assert conf.status == "inconclusive" and conf.reason.startswith("the time budget was spent")
    unbuilt = Settled("b", "a1", "b1", "lower", None, "unbuilt", 0, 0, 0.0)
    conf = judge(unbuilt, "regression", campaign_id=3)
    assert conf.status == "unconfirmed" and conf.alerts and "did not build" in conf.reason and conf.verdict is None


def test_a_minimum_change_of_zero_can_confirm_but_never_settles_no_change():
    conf = judge(settled([0.001, -0.002, 0.0, 0.002, -0.001, 0.001] * 10, threshold=0.0, stopped="max-pairs"),
                 "regression")
    assert conf.status == "inconclusive"


def test_a_confirmation_with_an_unbounded_sequence_is_stored_as_unknown(tmp_path, store_url):
    conf = Confirmation("inconclusive", reason="r", change=0.01, cs_low=-1.0, cs_high=math.inf, pairs=2)
    assert conf.to_json()["cs_high"] is None
    with Store(store_url) as store:
        fill_without_commits(store)
        c = Change("b", "default", default_machine_name(), "v07", "v06", 0.3, 0.2, 0.4, "regression", "x")
        out = record_alerts(store, [c], confirmations={("b", "default", c.machine, "v06", "v07"): conf})
        assert out.withheld == (c,) and list_confirmations(store)[0].confirmation.cs_high is None


def test_confirmation_statuses_are_checked():
    with pytest.raises(ValueError, match="`status` must be one of confirmed"):
        Confirmation("maybe")


# -------------------------------------------------------------------- what is run, what is not
def test_known_alerts_tells_which_changes_would_be_new(tmp_path, store_url):
    with Store(store_url) as store:
        fill_without_commits(store)
        here = default_machine_name()
        c = Change("b", "default", here, "v06", "v05", 0.3, 0.2, 0.4, "regression", "m")
        assert known_alerts(store, [c]) == [None]
        (alert,) = record_alerts(store, [c]).created
        nearby = Change("b", "default", here, "v07", "v06", 0.3, 0.2, 0.4, "regression", "other")
        far = Change("b", "default", here, "v10", "v09", 0.3, 0.2, 0.4, "regression", "m")
        assert [a.id if a else None for a in known_alerts(store, [c, nearby, far])] == [alert.id, alert.id, None]


# ------------------------------------------------------------------------ configuration, CLI
@pytest.mark.parametrize("table, message", [
    ({"confirm": "yes"}, r"\[detect\] `confirm` must be true or false, got 'yes'"),
    ({"confirm_budget": "soon"}, r"\[detect\] `confirm_budget` must be a positive number of seconds or a duration"),
    ({"confirm_budget": 0}, r"\[detect\] `confirm_budget` must be a positive number"),
    ({"confirm_max_pairs": 2}, r"\[detect\] `confirm_max_pairs` must be an integer of at least 3, got 2"),
    ({"confirm_max_pairs": 10.5}, r"\[detect\] `confirm_max_pairs` must be an integer of at least 3"),
    ({"confirm_pairs": 10}, r"\[detect\]: unknown key `confirm_pairs` \(expected confirm, confirm_budget"),
    ([1], r"\[detect\] must be a table"),
])
def test_the_detect_table_is_validated_with_one_line_naming_the_key(table, message):
    with pytest.raises(ConfigError, match=r"^regbench.toml: " + message):
        parse_config({"detect": table})


def test_the_detect_table_and_durations():
    assert parse_config({}).detect == DetectSettings()
    got = parse_config({"detect": {"confirm": True, "confirm_budget": "10m", "confirm_max_pairs": 40}}).detect
    assert got == DetectSettings(confirm=True, confirm_budget=600.0, confirm_max_pairs=40)
    assert parse_config({"detect": {"confirm_budget": 90}}).detect.confirm_budget == 90.0
    assert [duration_seconds(v) for v in ("90", "1.5h", " 2 min ", 45, "0s", "-3", True, None)] == [
        90.0, 5400.0, 120.0, 45.0, None, None, None, None]


def test_confirmation_uses_the_defaults_of_compare_run():
    from regbench.cli.cmd_compare import command as compare

    defaults = {p.name: p.default for p in compare.params}
    assert ConfirmOptions().max_pairs == DEFAULT_MAX_PAIRS == defaults["max_pairs"]
    assert ConfirmOptions().alpha == DEFAULT_ALPHA == defaults["alpha"] and ConfirmOptions().budget is None
    with pytest.raises(ConfigError, match="`max_pairs` must be an integer >= min_pairs"):
        ConfirmOptions(max_pairs=2)
    with pytest.raises(ConfigError, match="`budget` must be a positive number of seconds"):
        ConfirmOptions(budget=-1)


def test_cli_detect_confirm_from_the_detect_table_prints_lines_and_json(tmp_path, capsys, store_url, open_store):
    extra = '[detect]\nconfirm = true\nconfirm_max_pairs = 60\n'
    repo, config, store, versions = campaign_repo(tmp_path, open_store, steps=STEP, commits=10, extra=extra)
    args = ["--store", str(store_url), "--config", str(repo.config_path), "detect", "--method", "auto",
            "--min-change", "0.05", "--jobs", "1"]
    assert main([*args, "--format", "json", "--dry-run"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["confirmation"]["status"] == "confirmed" and row["confirmation"]["verdict"] == "regression"
    assert store.campaigns()[-1].plan["confirm"]["max_pairs"] == 60
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"Confirmed: b between {versions[4]} and {versions[5]}: regression +" in out
    assert "Alerts: 1 new alert(s)" in out
    (alert,) = list_alerts(store)
    assert main(["--store", str(store_url), "alerts", "show", str(alert.id), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["confirmation"]["status"] == "confirmed" and shown["confirmation"]["campaign_id"] is not None
    assert main(["--store", str(store_url), "alerts", "show", str(alert.id)]) == 0
    assert "run again: confirmed: regression" in capsys.readouterr().out
    # --no-confirm turns the table's default off: no confirmation, no new campaign.
    before = n_campaigns(store)
    assert main([*args, "--no-confirm", "--format", "json", "--dry-run"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert "confirmation" not in row and n_campaigns(store) == before


def test_cli_confirm_options_need_confirm_and_a_configuration(tmp_path, capsys, store_url):
    with Store(store_url) as store:
        fill_without_commits(store)
    store_args = ["--store", str(store_url)]
    assert main([*store_args, "detect", "--confirm-budget", "10s"]) == 2
    assert "--confirm-budget needs --confirm" in capsys.readouterr().err
    assert main([*store_args, "detect", "--confirm-max-pairs", "2", "--confirm"]) == 2
    missing = tmp_path / "empty"
    missing.mkdir()
    import os

    cwd = os.getcwd()
    try:
        os.chdir(missing)
        assert main([*store_args, "detect", "--confirm"]) == 3
    finally:
        os.chdir(cwd)
    assert "--confirm needs regbench.toml" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- migration
def test_a_store_made_at_revision_0003_upgrades_and_its_alerts_have_no_confirmation(tmp_path):
    from storetools import upgrade_to

    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0003")
        conn.execute(sa.text("INSERT INTO benchmark (id, name, unit, direction) VALUES (1, 'b', 's', 'lower')"))
        conn.execute(sa.text("INSERT INTO version (id, name) VALUES (1, 'v0'), (2, 'v1')"))
        conn.execute(sa.text("INSERT INTO config (id, name) VALUES (1, 'default')"))
        conn.execute(sa.text("INSERT INTO machine (id, name) VALUES (1, 'local')"))
        conn.execute(sa.text(
            "INSERT INTO alert (id, uid, benchmark_id, config_id, machine_id, version_id, previous_id, kind, change, "
            "methods, status, created_at, updated_at) VALUES (1, 'u1', 1, 1, 1, 2, 1, 'regression', 0.1, '[\"auto\"]', "
            "'new', '2024-01-01 00:00:00', '2024-01-01 00:00:00')"))
    engine.dispose()
    con = sqlite3.connect(path)
    assert con.execute("SELECT version_num FROM alembic_version").fetchall() == [("0003",)]
    con.close()

    with Store(path, create=False) as s:
        assert s.schema_revision() == schema.SCHEMA_REVISION  # upgraded through 0004 to the head
        (old,) = list_alerts(s)
        assert old.id == 1 and old.confirmation is None and old.to_json()["confirmation"] is None
        insp = sa.inspect(s.engine)
        assert [c["name"] for c in insp.get_columns("confirmation")] == [c.name for c in schema.confirmation.columns]
        uniques = {u["name"]: u["column_names"] for u in insp.get_unique_constraints("confirmation")}
        assert uniques["uq_confirmation_alert"] == ["alert_id"]
        # The new table works on the upgraded store.
        conf = Confirmation("confirmed", verdict="regression", stopped="settled", change=0.1, cs_low=0.05,
                            cs_high=0.15, alpha=0.05, threshold=0.03, pairs=7, seconds=2.5, campaign_id=None)
        c = Change("b", "default", "local", "v1", "v0", 0.1, 0.05, 0.15, "improvement", "auto")
        (new,) = record_alerts(s, [c], confirmations={("b", "default", "local", "v0", "v1"): conf}).created
        assert new.confirmation == conf and [a.id for a in list_alerts(s)] == [1, new.id]
