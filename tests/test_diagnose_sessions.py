"""`regbench diagnose` reads the runs `regbench detect` reads: those of campaigns, the runs of
`compare --run` (and bisect, confirm) sessions left out unless `--all-sessions` centres them."""

from __future__ import annotations

import json

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import PRINTED_PROGRAM, create_step_repo
from regbench.detect.auto import Auto
from regbench.pipeline import history_of
from regbench.store import Store


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """Commits 1-3 benchmarked by a campaign (3 runs each), then a `compare --run` session of
    commits 3 and 4 (3 pairs): commit 4 is measured by the session only."""
    repo = create_step_repo(tmp_path_factory.mktemp("sessions") / "repo", commits=4, steps={},
                            program=PRINTED_PROGRAM, runs=3, iterations=12)
    shas = [sha[:10] for sha in repo.commits]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(repo.path)
        assert main(["run", "--versions", ",".join(shas[:3]), "--seed", "1"]) == 0
        assert main(["compare", shas[2], shas[3], "--run", "--max-pairs", "3", "--seed", "1"]) in (0, 1)
    return repo.path, shas


def diagnose(repo, capsys, *args: str) -> dict:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(repo)
        capsys.readouterr()
        assert main(["diagnose", "b", "--no-plots", "--format", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_diagnose_leaves_the_runs_of_sessions_out_as_detect_does(project, capsys):
    repo, shas = project
    with Store(repo / ".regbench" / "results.db", create=False) as store:
        assert len(store.session_campaigns()) == 1
        assert len([r for r in store.runs() if r.version == shas[2]]) == 6  # 3 of the campaign, 3 of the session
        history = history_of(store, load_config(repo / "regbench.toml"))
        detected = Auto().location(history.load_series("b")[0]).reason
    d = diagnose(repo, capsys)
    # The latest version of the history: commit 3, not commit 4 that only the session measured.
    assert d["version"] == shas[2] and d["runs"] == 3
    assert d["location"]["reason"] == detected  # what `detect` says it compares
    assert diagnose(repo, capsys, "--version", shas[2])["runs"] == 3


def test_all_sessions_centres_them_as_detect_all_sessions(project, capsys):
    repo, shas = project
    with Store(repo / ".regbench" / "results.db", create=False) as store:
        history = history_of(store, load_config(repo / "regbench.toml"), all_sessions=True)
        detected = Auto().location(history.load_series("b")[0]).reason
    d = diagnose(repo, capsys, "--all-sessions")
    assert d["version"] == shas[3] and d["runs"] == 3  # the session's commit 4, centred on the history
    assert d["location"]["reason"] == detected
    assert diagnose(repo, capsys, "--all-sessions", "--version", shas[2])["runs"] == 6


def test_a_version_of_a_session_only_says_how_to_include_it(project, capsys):
    repo, shas = project
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(repo)
        capsys.readouterr()
        assert main(["diagnose", "b", "--no-plots", "--version", shas[3]]) == 3
    err = capsys.readouterr().err
    assert "outside sessions of compare --run, bisect or confirm (--all-sessions includes them)" in err, err
