"""Bisection and live sequential comparison on generated git repositories with real processes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import PRINTED_PROGRAM, create_step_repo
from regbench.errors import ConfigError, VersionError
from regbench.run.bisect import bisect, bisect_changes, commits_between
from regbench.run.fingerprint import default_machine_name
from regbench.run.sequential import Session, SessionSetup, StopRule, compare_live, more_pairs_needed
from regbench.store import Store


# A benchmark whose level is read from the tree, drawing its own run effect and iteration noise
# (seeded by the version and run index, so that a test sees the same numbers every time).
NOISY = PRINTED_PROGRAM


def make_repo(path: Path, *, commits: int = 30, culprit: int = 17, factor: float = 1.10,
              program: str = NOISY, extra: str = "") -> list[str]:
    """A repository of ``commits`` commits; commit number ``culprit`` (1-based) multiplies the level."""
    steps = {culprit: factor} if culprit <= commits else {}
    return list(create_step_repo(path, commits=commits, steps=steps, program=program, extra=extra).commits)


@pytest.fixture(scope="module")
def repo30_template(tmp_path_factory):
    """The 30-commit repository of ``repo30``, made once per module (30 commits of git)."""
    repo = tmp_path_factory.mktemp("repo30") / "repo"
    return repo, make_repo(repo)


@pytest.fixture
def repo30(repo30_template, tmp_path):
    """A copy of that repository of this test's own (the same commits: the shas do not depend on
    the folder); bisect and compare --run add worktrees to it."""
    template, shas = repo30_template
    repo = tmp_path / "repo"
    shutil.copytree(template, repo, symlinks=True)
    return repo, shas


def test_bisect_finds_the_culprit_among_30_commits(repo30, tmp_path):
    repo, shas = repo30
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    result = bisect(config, store, shas[0], shas[-1], benchmark="b", threshold=0.03, seed=1)
    assert result.status == "found"
    assert result.culprit == shas[16][:len(result.culprit)]
    assert result.commits == 29
    # The culprit's own change, against its parent, is about +10% and its interval says so (the
    # interval, not the point estimate: stopped early on a loaded machine, one run gave +17.7%
    # with [+3.4%, +34%]).
    c = result.culprit_change.decision
    assert c.decision == "changed" and c.ci_low > 0 and c.ci_low < 0.10 < c.ci_high
    # log2(29) steps, each decided; every run is stored under one campaign.
    assert 4 <= len(result.steps) <= 6 and all(s.verdict in ("good", "bad") for s in result.steps)
    with store.engine.connect() as conn:
        n_runs = conn.exec_driver_sql("select count(*) from run where campaign_id = ?", (result.campaign_id,)).scalar()
    assert n_runs == result.runs


def test_bisect_says_no_change_when_good_and_bad_are_alike(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=6, culprit=99)
    config = load_config(repo / "regbench.toml")
    result = bisect(config, Store(tmp_path / "r.db"), shas[0], shas[-1], benchmark="b", threshold=0.10,
                    seed=2, max_pairs=200)
    assert result.status == "no change" and result.culprit is None and not result.steps


def test_a_step_that_cannot_settle_stops_with_the_open_range(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=8, culprit=5, factor=1.5)
    config = load_config(repo / "regbench.toml")
    # Too few pairs to settle anything: the first comparison stays open, and it says so.
    result = bisect(config, Store(tmp_path / "r.db"), shas[0], shas[-1], benchmark="b", seed=3,
                    max_pairs=3, min_pairs=3, alpha=1e-6)
    assert result.status == "undecided" and result.culprit is None
    assert result.total.stopped == "max-pairs" and result.total.more_pairs and result.total.more_pairs > 0
    assert set(result.candidates) == {s[:len(result.candidates[0])] for s in shas[1:]}


def test_bisect_errors_are_clear(repo30, tmp_path):
    repo, shas = repo30
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    with pytest.raises(ConfigError, match="no benchmark named 'nope'"):
        bisect(config, store, shas[0], shas[-1], benchmark="nope")
    with pytest.raises(VersionError, match="no commits in this range"):
        bisect(config, store, shas[-1], shas[0], benchmark="b")


def test_compare_run_settles_a_big_change_quickly_and_stores_every_run(repo30, tmp_path):
    repo, shas = repo30
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    (res,) = compare_live(config, store, shas[0], shas[-1], threshold=0.03, seed=4)
    assert res.stopped == "settled" and res.verdict == "regression"
    assert res.decision.ci_low > 0 and res.pairs < 30
    # Same version on both sides of the change: no change of 3% or more.
    (same,) = compare_live(config, store, shas[0], shas[10], threshold=0.05, seed=5, max_pairs=200)
    assert same.stopped == "settled" and same.verdict == "no change"
    assert abs(same.decision.change) < 0.05
    # Every run is kept; the sessions are campaigns with their plan.
    keys = store.existing_run_keys(config="default", machine=default_machine_name())
    assert {k[0] for k in keys} == {"b"} and len(keys) == 2 * (res.pairs + same.pairs)
    plans = [c.plan["schedule"] for c in store.campaigns()]
    assert plans == ["sequential-pairs", "sequential-pairs"]


def test_budget_stops_and_estimates_the_pairs_still_needed(repo30, tmp_path):
    repo, shas = repo30
    config = load_config(repo / "regbench.toml")
    ticks = iter(range(0, 10_000, 10))  # every clock reading is 10 s later: a 25 s budget allows 2 pairs
    session = Session(config, Store(tmp_path / "r.db"), SessionSetup(seed=6), clock=lambda: next(ticks))
    from regbench.run.versions import resolve_revisions

    a, b = (resolve_revisions(repo, s)[0] for s in (shas[0], shas[-1]))
    res = session.settle(config.benchmark("b"), a, b, StopRule(0.03, budget=25))
    assert res.stopped == "budget" and res.verdict == "inconclusive" and res.pairs < 3


def test_more_pairs_needed_shrinks_with_a_bigger_effect():
    noisy = [0.01, 0.03, -0.01, 0.02]
    clear = [0.10, 0.12, 0.08, 0.11]
    assert more_pairs_needed(noisy, threshold=0.03) > more_pairs_needed(clear, threshold=0.03)
    assert more_pairs_needed([0.1], threshold=0.03) is None


def test_detect_bisect_localizes_a_change_between_nightly_snapshots(tmp_path):
    # A +30% step: which changes are bisected and how the range is found, not how small a step
    # bisection can settle (test_bisect_finds_the_culprit_among_30_commits).
    repo = tmp_path / "repo"
    shas = make_repo(repo, factor=1.3)
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    from regbench.detect.base import Change

    from regbench.run.campaign import run_campaign

    # "Nightlies": every 6th commit is benchmarked by a campaign; detection puts the change
    # between two snapshots 6 commits apart, and --bisect finds the commit itself.
    nightly = ",".join(shas[k] for k in (0, 6, 12, 18, 24, 29))
    run_campaign(config, store, revisions=nightly, runs=3, seed=7)
    commit_of = {v.name: v.commit for v in store.versions()}
    before = next(n for n, c in commit_of.items() if c == shas[12])
    after = next(n for n, c in commit_of.items() if c == shas[18])
    here = default_machine_name()
    change = Change("b", "default", here, after, before, 0.1, 0.05, 0.15, "regression", "auto")
    assert commits_between(repo, shas[12], shas[18]) == 6
    (pair,), skipped = bisect_changes(config, store, [change], seed=8)
    assert not skipped
    assert pair[1].status == "found" and pair[1].culprit == shas[16][:len(pair[1].culprit)]
    # Not bisected, each with its reason: adjacent commits, another machine, a measure series.
    others = [Change("b", "default", here, after, after, 0.1, 0.05, 0.15, "regression", "auto"),
              Change("b", "default", "elsewhere", after, before, 0.1, 0.05, 0.15, "regression", "auto"),
              Change("b:cpu", "default", here, after, before, 0.1, 0.05, 0.15, "regression", "auto")]
    bisected, skipped = bisect_changes(config, store, others)
    assert bisected == []
    reasons = [s.reason for s in skipped]
    assert "adjacent" in reasons[0] and "'elsewhere'" in reasons[1] and "measure of 'b'" in reasons[2]


def test_cli_bisect_prints_the_culprit_and_json(tmp_path, capsys):
    # The command's output, not the search (above): 12 commits and a +50% step settle in a few
    # pairs a step (the 30 commits and +10% of the test above took 50 s here).
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=12, culprit=8, factor=1.5)
    store = str(tmp_path / "r.db")
    code = main(["--store", store, "--config", str(repo / "regbench.toml"), "bisect", shas[0], shas[-1],
                 "--benchmark", "b", "--seed", "9", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "found" and shas[7].startswith(out["culprit"])
    assert out["culprit_change"]["ci_low"] > 0
    code = main(["--store", store, "--config", str(repo / "regbench.toml"), "bisect", shas[0], shas[-1],
                 "--benchmark", "b", "--max-pairs", "3", "--alpha", "0.000001"])
    captured = capsys.readouterr()
    assert code == 1 and "Undecided" in captured.out


def test_bisect_with_real_timing_finds_a_50_percent_slowdown(tmp_path):
    """Real time, not printed numbers: a busy loop whose length the culprit makes 1.5x."""
    program = ("import os, time\n"
               "n = int(float(open('level.txt').read()) * 50000)\n"
               "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
               "    t = time.perf_counter(); sum(i * i for i in range(n)); print(time.perf_counter() - t)\n")
    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=8, culprit=5, factor=1.5, program=program)
    config = load_config(repo / "regbench.toml")
    result = bisect(config, Store(tmp_path / "r.db"), shas[0], shas[-1], benchmark="b", seed=10)
    assert result.status == "found" and shas[4].startswith(result.culprit)
    # The sequential test stops as soon as it is sure of a change, so its estimate is rough; its
    # interval covers the true +50% (the loop 1.5x as long) and excludes no change.
    decision = result.culprit_change.decision
    assert 0 < decision.ci_low < 0.5 < decision.ci_high


def test_cli_compare_run_gates_on_a_regression_and_prints_json(repo30, tmp_path, capsys):
    repo, shas = repo30
    args = ["--store", str(tmp_path / "r.db"), "--config", str(repo / "regbench.toml"), "compare"]
    code = main([*args, shas[0], shas[-1], "--run", "--seed", "11", "--format", "json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert code == 1 and row["verdict"] == "regression" and row["ci_low"] > 0.03
    assert row["stopped"] == "settled" and row["pairs"] >= 3 and row["threshold"] == 0.03
    code = main([*args, shas[0], shas[5], "--run", "--seed", "12", "--threshold", "0.1", "--max-pairs", "200"])
    out = capsys.readouterr().out
    assert code == 0 and "no change" in out
    # Options of the other modes are refused with a usage error.
    assert main([*args, shas[0], shas[5], "--run", "--confidence", "0.9"]) == 2
    assert main([*args, shas[0], shas[5], "--budget", "10s"]) == 2


def test_detect_bisect_leaves_a_suppressed_benchmarks_change_alone(tmp_path):
    """``[alerts] suppress``: the regression is listed, not alerted, does not gate, and is not
    bisected (no commit between the snapshots is built or run), with the reason."""
    from regbench.pipeline import detect_and_alert
    from regbench.run.campaign import run_campaign

    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=12, culprit=8, factor=1.5)
    toml = repo / "regbench.toml"
    toml.write_text(toml.read_text() + '\n[alerts]\nsuppress = ["b"]\n')
    config = load_config(toml)
    with Store(tmp_path / "r.db") as store:
        run_campaign(config, store, revisions=",".join(shas[k] for k in (0, 2, 4, 5, 9, 11)), runs=3, seed=7)
        runs = len(store.runs())
        outcome = detect_and_alert(store, config, method="auto", fdr=0.05, bisect=True)
        (entry,) = [e for e in outcome.changes if e.change.kind == "regression"]
        assert entry.suppressed and not entry.gates and not outcome.regressed
        assert entry.bisection is None
        assert entry.not_bisected == "its benchmark's alerts are suppressed by regbench.toml"
        assert len(store.runs()) == runs


def test_detect_bisect_keeps_the_culprit_with_the_alert_and_its_messages_name_it(tmp_path, capsys):
    """Found between nightly snapshots, the commit is kept with the alert before it is told:
    the alert's headline, its details and the Markdown sink's row name it."""
    from regbench.notify.base import details, headline
    from regbench.notify.markdown import row
    from regbench.pipeline import detect_and_alert
    from regbench.run.campaign import run_campaign
    from regbench.store.alerts import alert_history, list_alerts

    repo = tmp_path / "repo"
    shas = make_repo(repo, commits=12, culprit=8, factor=1.5)
    config = load_config(repo / "regbench.toml")
    with Store(tmp_path / "r.db") as store:
        run_campaign(config, store, revisions=",".join(shas[k] for k in (0, 2, 4, 5, 9, 11)), runs=3, seed=7)
        outcome = detect_and_alert(store, config, method="auto", fdr=0.05, bisect=True)
        (entry,) = [e for e in outcome.changes if e.change.kind == "regression"]
        assert entry.bisection is not None and entry.bisection.culprit == shas[7][:len(entry.bisection.culprit)]
        (alert,) = [a for a in list_alerts(store) if a.kind == "regression"]
        assert alert.culprit == entry.bisection.culprit and entry.alert.culprit == alert.culprit
        assert alert.bisection == entry.bisection.summary() and alert.bisection.startswith(
            f"first bad commit {alert.culprit}: +")
        assert alert_history(store, alert.id)[-1].why == f"bisected: {alert.bisection}"
        again = detect_and_alert(store, config, method="auto", fdr=0.05, bisect=True)  # a full pass: the same step
        (entry,) = [e for e in again.changes if e.change.kind == "regression"]
        assert entry.bisection is None
        assert entry.not_bisected == f"its alert #{alert.id} was bisected before: {alert.bisection}"
        capsys.readouterr()
        assert main(["--store", str(tmp_path / "r.db"), "alerts", "list"]) == 0
        listed = capsys.readouterr().out
        assert "culprit" in listed and alert.culprit in listed
        from regbench.web.data import Dashboard
        from regbench.web.static_site import write_report

        write_report(Dashboard(store).load(), tmp_path / "site", diagnosis=False)
        page = (tmp_path / "site" / "alerts.html").read_text()
        assert f'<span class="culprit" title="{alert.bisection}">first bad commit {alert.culprit}</span>' in page
    assert headline(alert).endswith(f", first bad commit {alert.culprit}")
    assert f"bisected: {alert.bisection}" in details(alert)
    assert f"first bad commit {alert.culprit}" in row(alert)


def test_a_session_orders_commits_of_one_committer_second_as_history(tmp_path):
    """A bisection stores the commits between two benchmarked ones after them; where a rebase
    gave the series one committer date, the store still orders them as git does (the tip,
    stored first, gets its generation filled in)."""
    import subprocess

    from regbench.run.versions import resolve_revisions

    repo = tmp_path / "repo"
    make_repo(repo, commits=4, culprit=9)
    # Rewrite the series with one committer date, as `git rebase` within a second leaves it.
    env = {"GIT_COMMITTER_DATE": "2026-02-01T00:00:00Z", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "rebase", "-q", "--root", "--force-rebase"],
                   cwd=repo, env=env, check=True, capture_output=True)
    shas = subprocess.run(["git", "rev-list", "--reverse", "HEAD"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.split()
    dates = {subprocess.run(["git", "log", "-1", "--format=%ct", s], cwd=repo, check=True, capture_output=True,
                            text=True).stdout.strip() for s in shas}
    assert len(shas) == 4 and len(dates) == 1
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    with Session(config, store, SessionSetup(seed=1)) as session:
        for sha in (shas[3], shas[0], shas[2], shas[1]):  # the ends first, then the middle, as a bisection
            assert session.prepare(resolve_revisions(repo, sha)[0]) is not None
    assert [v.name for v in store.versions()] == [s[:10] for s in shas]
