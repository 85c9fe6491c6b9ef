"""What ``regbench detect`` reads as a series' history: one line of commits, the campaigns' runs."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.model import SESSION_SCHEDULE, RunRecord
from regbench.pipeline import detect_and_alert, history_of
from regbench.run.campaign import run_campaign
from regbench.run.versions import resolve_revisions
from regbench.store import Store

T0 = datetime(2024, 2, 1, 8, 0, tzinfo=UTC)
TOML = ('[project]\nname = "p"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
        f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([sys.executable, "-c", "print(1.0)"])}\n')


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def store_runs(store: Store, repo: Path, level: dict[str, float], *, campaign_id: int | None = None,
               runs: int = 5, seed: int = 0, first_index: int = 0) -> None:
    """Runs of benchmark ``b`` at the given level for each commit (by sha), stored as a campaign
    would store them (versions named by short sha, with their commits and dates)."""
    rng = np.random.default_rng(seed)
    commits = {c.sha: c for c in resolve_revisions(repo, ",".join(level))}
    records = []
    for sha, mean in level.items():
        for r in range(runs):
            run = mean * rng.lognormal(0, 0.01)
            records.append(RunRecord("b", commits[sha].short, first_index + r,
                                     run * rng.lognormal(0, 0.01, size=10), campaign_id=campaign_id))
    store.add_runs(records, versions=[commits[s].version() for s in sorted(level, key=lambda s: commits[s].timestamp)])


@pytest.fixture
def branched(tmp_path) -> tuple[Path, list[str], list[str]]:
    """Ten commits on main and two on a side branch made from the 5th, dated between main's
    6th and 7th (so that stored order puts them in the middle of main's), merged at the end."""
    repo = tmp_path / "repo"
    git_init(repo)
    main = [git_commit(repo, {"regbench.toml": TOML, "f": f"{k}"}, f"main {k}", when=T0 + timedelta(hours=k))
            for k in range(6)]
    git(repo, "checkout", "-q", "-b", "side", main[4])
    side = [git_commit(repo, {"g": f"{k}"}, f"side {k}", when=T0 + timedelta(hours=5, minutes=10 + k))
            for k in range(2)]
    git(repo, "checkout", "-q", "main")
    main += [git_commit(repo, {"f": f"{k}"}, f"main {k}", when=T0 + timedelta(hours=k)) for k in range(6, 10)]
    return repo, main, side


def test_detect_walks_the_first_parent_line_only(branched, tmp_path, open_store):
    repo, main, side = branched
    store = open_store()
    # The side branch is twice as slow: laid out between main's commits it would be two steps.
    store_runs(store, repo, {**dict.fromkeys(main, 1.0), **dict.fromkeys(side, 2.0)})
    config = load_config(repo / "regbench.toml")
    history = history_of(store, config)
    assert [v.commit for v in history.versions()] == main
    [series] = history.load_series("b")
    assert [v.commit for v in series.versions] == main
    outcome = detect_and_alert(store, config, method="auto", fdr=0.05, dry_run=True, jobs=1)
    assert outcome.detection.changes == ()
    assert outcome.history == ("History: versions on the first-parent line of HEAD (2 off it left out), "
                               "runs of campaigns and imports.")
    # Merged with --no-ff, the side commits are still off the first-parent line.
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "--no-ff", "-m", "merge", "side")
    assert [v.commit for v in history_of(store, config).versions()] == main


def test_a_configured_branch_is_the_line_and_a_missing_one_is_a_clear_error(branched, tmp_path, open_store):
    repo, main, side = branched
    store = open_store()
    store_runs(store, repo, {**dict.fromkeys(main, 1.0), **dict.fromkeys(side, 1.0)})
    (repo / "regbench.toml").write_text(TOML.replace('name = "p"\n', 'name = "p"\nbranch = "side"\n'))
    history = history_of(store, load_config(repo / "regbench.toml"))
    assert [v.commit for v in history.versions()] == main[:5] + side
    (repo / "regbench.toml").write_text(TOML.replace('name = "p"\n', 'name = "p"\nbranch = "nope"\n'))
    with pytest.raises(Exception, match=r"\[project\] `branch`: no branch 'nope'"):
        history_of(store, load_config(repo / "regbench.toml"))


def test_runs_of_another_session_are_left_out_or_centred_never_pooled(branched, tmp_path, open_store):
    repo, main, _ = branched
    store = open_store()
    campaign = store.start_campaign(seed=0, machine="local", fingerprint={}, command="run",
                                    plan={"schedule": "rmit-rounds"})
    store_runs(store, repo, dict.fromkeys(main, 1.0), campaign_id=campaign)
    # A comparison session ran the last two commits later, on a machine then 30% slower.
    session = store.start_campaign(seed=1, machine="local", fingerprint={}, command="compare --run",
                                   plan={"schedule": SESSION_SCHEDULE})
    store_runs(store, repo, dict.fromkeys(main[8:], 1.3), campaign_id=session, seed=1, first_index=5, runs=8)
    config = load_config(repo / "regbench.toml")
    # Pooled as one sample, the session would make a +15% step at the 9th commit.
    [pooled] = store.load_series("b")
    assert np.mean(np.concatenate(pooled.runs[8])) / np.mean(np.concatenate(pooled.runs[7])) > 1.1
    outcome = detect_and_alert(store, config, method="auto", fdr=0.05, dry_run=True, jobs=1)
    assert outcome.detection.changes == ()
    assert "the runs of 1 session(s) of compare --run, bisect or confirm left out" in outcome.history
    [series] = history_of(store, config).load_series("b")
    assert [len(r) for r in series.runs] == [5] * 10
    # Asked to mix, each session is centred on the history's level where they overlap.
    centred = history_of(store, config, all_sessions=True)
    [mixed] = centred.load_series("b")
    assert [len(r) for r in mixed.runs] == [5] * 8 + [13, 13]
    session_means = [float(np.mean(r)) for r in mixed.runs[8][5:]]
    assert np.mean(session_means) == pytest.approx(1.0, rel=0.01)
    outcome = detect_and_alert(store, config, method="auto", fdr=0.05, dry_run=True, jobs=1, all_sessions=True)
    assert outcome.detection.changes == ()
    assert "centred on the history's level" in outcome.history


def test_a_campaign_runs_its_own_runs_of_a_version_a_session_measured_first(tmp_path, open_store):
    repo = tmp_path / "repo"
    git_init(repo)
    sha = git_commit(repo, {"regbench.toml": TOML}, "one", when=T0)
    store = open_store()
    session = store.start_campaign(seed=1, machine="m", fingerprint={}, command="bisect",
                                   plan={"schedule": SESSION_SCHEDULE})
    c = resolve_revisions(repo, sha)[0]
    store.add_runs([RunRecord("b", c.short, r, np.ones(3), machine="m", campaign_id=session) for r in range(3)],
                   versions=[c.version()])
    result = run_campaign(load_config(repo / "regbench.toml"), store, revisions=sha, machine="m", seed=1,
                          cache_dir=tmp_path / "wt")
    assert result.counts["ok"] == 2 and result.trials_skipped == 0
    assert sorted(t.run_index for t in result.order) == [3, 4]  # the indexes the session left free
    again = run_campaign(load_config(repo / "regbench.toml"), store, revisions=sha, machine="m", seed=2,
                         cache_dir=tmp_path / "wt")
    assert again.runs_stored == 0 and again.trials_skipped == 2  # resumes: the history's runs are done


def test_versions_without_a_commit_are_said_to_be_kept_in_time_order(branched, open_store):
    """Releases (``run --releases``) and imported versions have no commit: they are on no line,
    kept, and the history says so instead of claiming a first-parent line they are not on."""
    repo, main, _ = branched
    store = open_store()
    config = load_config(repo / "regbench.toml")
    store.add_runs([RunRecord("b", v, 0, np.full(3, 1.0)) for v in ("pkg==1.0", "pkg==1.1")])
    assert history_of(store, config).describe() == (
        "History: 2 version(s) without a commit (releases, imported) in time order, runs of campaigns and imports.")
    store_runs(store, repo, dict.fromkeys(main[:3], 1.0))
    assert history_of(store, config).describe() == (
        "History: versions on the first-parent line of HEAD, 2 version(s) without a commit (releases, "
        "imported) in time order, runs of campaigns and imports.")
