"""Two wrong results of a first-user probe of campaigns (/tmp/probe-ci), on real git repositories
and benchmark processes.

1. The runs of sessions (``compare --run``, ``bisect``) that an edit of a benchmark superseded
   were never taken back when the edit was reverted: sessions recorded no definition, and a
   revert takes back the runs of those that ran the definition it has again.  Sessions record the
   definitions of what they run now, so they are origins like campaigns; and the campaign after a
   session that ran another definition settles its runs.
2. ``regbench run`` twice on a clean commit stored a second version: the first run's build in place
   left an untracked binary, so the second named the tree ``<sha>-dirty-<digest>`` and measured
   everything again.  What regbench's build of the working tree writes where git sees it no
   longer makes the tree dirty (an edit of the user's still does), and a recorded build stands
   for the tree only if the last build made in it was of the same version.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.cli.main import main
from regbench.model import SUPERSEDED
from regbench.store import Store

CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo {value}; done"]\n')


def store_of(tmp_path: Path) -> Store:
    return Store(tmp_path / ".regbench" / "results.db")


def statuses(tmp_path: Path) -> dict[int, set[str]]:
    """The statuses of b's runs, by the campaign (or session) that stored them."""
    with store_of(tmp_path) as store:
        out: dict[int, set[str]] = {}
        for r in store.runs(benchmark="b"):
            out.setdefault(r.campaign_id, set()).add(r.status)
        return out


def session(cfg: Path, capsys, kind: str) -> None:
    """A session of ``kind`` (``compare --run`` or ``bisect``) over the project's last two
    commits, storing runs of b (its verdict does not matter here)."""
    if kind == "compare":
        args = ["compare", "HEAD~1", "HEAD", "--run", "--benchmark", "b", "--max-pairs", "3", "--seed", "1"]
    else:
        args = ["bisect", "HEAD~2", "HEAD", "--benchmark", "b", "--max-pairs", "3", "--seed", "1"]
    main(["--config", str(cfg), *args])
    capsys.readouterr()


@pytest.mark.parametrize("kind", ["compare", "bisect"])
def test_a_reverted_edit_takes_back_the_runs_of_a_session(tmp_path, capsys, kind):
    # repro-8.sh: a campaign, a session, an edit (the next run supersedes both's runs), the
    # revert: the session's runs stayed superseded for ever (summary lost them).
    cfg = empty_commits_project(tmp_path, 3)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1,HEAD")  # campaign 1
    session(cfg, capsys, kind)  # 2
    assert statuses(tmp_path)[2] == {"ok"}
    cfg.write_text(CONFIG.format(value="0.020"))
    said = run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 3 supersedes 1's and 2's
    assert "b: its command changed since" in said
    assert statuses(tmp_path) == {1: {SUPERSEDED}, 2: {SUPERSEDED}, 3: {"ok"}}

    cfg.write_text(CONFIG.format(value="0.010"))  # reverted
    said = run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 4
    assert "changed since campaign 3, which ran it: its 2 runs of that definition are superseded" in said
    assert "ran the definition it has again (1, 2) are back in the analyses" in said
    # Nothing is measured again here, and --keep-old-runs would take back the edit's runs.
    assert "only versions without runs of the definition it has now are measured again" in said
    assert "--keep-old-runs" not in said
    assert "0 runs stored" in said  # HEAD's runs of campaign 1 count again
    assert statuses(tmp_path) == {1: {"ok"}, 2: {"ok"}, 3: {SUPERSEDED}}
    summary = run(cfg, capsys, "summary", "--format", "json")
    rows = json.loads(summary[summary.index("["):summary.rindex("]") + 1])
    with store_of(tmp_path) as store:
        per_version = {v: sum(r.version == v and r.status == "ok" for r in store.runs(benchmark="b"))
                       for v in {r["version"] for r in rows}}
    assert {r["version"]: r["runs"] for r in rows} == per_version  # the session's runs are counted again
    with store_of(tmp_path) as store:  # the session recorded what it ran, beside what it recorded before
        (made,) = [c for c in store.campaigns() if c.id == 2]
        assert made.session and made.definitions == {"b": made.plan["definitions"]["b"]}
        assert made.definitions["b"]["command"][-1] == "for i in 1 2 3; do echo 0.010; done"
        if kind == "compare":
            assert made.plan["benchmarks"] == ["b"]
        else:
            assert made.plan["bisect"]["benchmark"] == "b"


def test_a_session_that_ran_the_edit_keeps_its_runs_at_the_next_campaign(tmp_path, capsys):
    # The edit was made, then compared by a session, then run by a campaign: the session's runs
    # measure the definition the campaign runs, and were superseded with those of the old one.
    cfg = empty_commits_project(tmp_path, 2)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # campaign 1
    cfg.write_text(CONFIG.format(value="0.020"))
    session(cfg, capsys, "compare")  # 2, of the new definition
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # 3
    assert "changed since campaign 1, which ran it: its 4 runs stored before" in said
    assert statuses(tmp_path) == {1: {SUPERSEDED}, 2: {"ok"}, 3: {"ok"}}


def test_a_session_of_an_edit_reverted_since_is_superseded_by_the_next_campaign(tmp_path, capsys):
    # The edit compared by a session, then reverted before any campaign: the campaign runs the
    # definition its last campaign ran, but the session's runs measure another and were left in
    # every analysis that reads sessions (summary, compare).
    cfg = empty_commits_project(tmp_path, 2)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # campaign 1
    cfg.write_text(CONFIG.format(value="0.020"))
    session(cfg, capsys, "compare")  # 2
    cfg.write_text(CONFIG.format(value="0.010"))
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # 3
    assert "b: its command changed since session 2, which ran it" in said
    assert "4 runs already stored" in said  # campaign 1's runs are of this definition: nothing to run
    assert statuses(tmp_path) == {1: {"ok"}, 2: {SUPERSEDED}}
    with store_of(tmp_path) as store:
        (series,) = store.load_series("b")
        assert {float(x) for runs in series.runs for r in runs for x in r} == {0.01}
    # Said once: the next campaign has nothing to supersede.
    assert "Definition changed" not in run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")


def test_the_definitions_a_campaign_compares_with_when_sessions_ran_last(tmp_path):
    # definition_history / changed_definitions on recorded plans alone: the last campaign and the
    # sessions since it are compared; sessions before the last campaign, and plans without
    # definitions (sessions before they recorded them), are not.
    from regbench.config import BenchmarkSpec
    from regbench.run.definitions import changed_definitions, definition, definition_history

    one, two = (BenchmarkSpec(name="b", kind="command", command=("echo", v)) for v in ("1", "2"))
    d1, d2 = definition(one), definition(two)

    def campaign(store: Store, d: dict) -> int:
        return store.start_campaign(seed=1, machine="m", fingerprint={}, command="run",
                                    plan={"config": "default", "benchmarks": {"b": {"definition": d}}})

    def sess(store: Store, d: dict | None) -> int:
        plan = {"config": "default", "schedule": "sequential-pairs", "benchmarks": ["b"]}
        return store.start_campaign(seed=1, machine="m", fingerprint={}, command="compare --run",
                                    plan={**plan, "definitions": {"b": d}} if d is not None else plan)

    def changes(store: Store, spec: BenchmarkSpec):
        return [(c.since, c.session, c.origins) for c in changed_definitions(store, [spec], machine="m",
                                                                            config_name="default")]

    with Store(tmp_path / "a.db") as store:
        s1 = sess(store, d1)  # sessions only: they are compared
        assert changes(store, one) == [] and changes(store, two) == [(s1, True, ())]
        c2 = campaign(store, d2)
        s3 = sess(store, d2)
        assert [r.campaign_id for r in definition_history(store, machine="m", config_name="default")["b"]] == [s1, c2, s3]
        assert changes(store, two) == []  # s1 is before the last campaign: settled by it
        assert changes(store, one) == [(s3, True, (s1,))]
        sess(store, None)  # a session of an older regbench: no definition, nothing compared
        assert changes(store, two) == []
        c5 = campaign(store, d1)
        assert changes(store, one) == []
        assert changes(store, two) == [(c5, False, (c2, s3))]


# ----------------------------------------------------------------- 2. the working tree's build
TREE_CONFIG = ('[project]\nbuild = {build}\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
               '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do cat out.txt; done"]\n')
#: The build copies value.txt (tracked) to out.txt, which git does not ignore: a binary that
#: .gitignore does not name.
BUILD = '["sh", "-c", "cp value.txt out.txt"]'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", *args],
                          check=True, capture_output=True, text=True).stdout


def tree_project(tmp_path: Path, *, build: str = BUILD, ignored: tuple[str, ...] = (),
                 files: dict[str, str] | None = None) -> Path:
    """A repository whose working tree is benchmarked in place (its regbench.toml committed);
    the path of the regbench.toml."""
    repo = tmp_path / "p"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "regbench.toml").write_text(TREE_CONFIG.format(build=build))
    (repo / "value.txt").write_text("0.010\n")
    (repo / ".gitignore").write_text("".join(f"{p}\n" for p in ignored))
    for name, text in (files or {}).items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c0")
    return repo / "regbench.toml"


def b_samples(cfg: Path) -> dict[str, set[float]]:
    """Each version with the distinct samples of b that analyses read."""
    with Store(cfg.parent / ".regbench" / "results.db") as store:
        (series,) = store.load_series("b")
        return {v.name: {float(x) for r in runs for x in r} for v, runs in zip(series.versions, series.runs, strict=True)}


def test_running_a_clean_commit_twice_stores_one_version(tmp_path, capsys):
    # repro-7.sh: the first run's build left out.txt, untracked; the second run named the tree
    # <sha>-dirty-<digest> and measured everything again.
    cfg = tree_project(tmp_path)
    sha = git(cfg.parent, "rev-parse", "--short=10", "HEAD").strip()
    run(cfg, capsys, "run")
    assert "?? out.txt" in git(cfg.parent, "status", "--porcelain").splitlines()  # the build's output
    said = run(cfg, capsys, "run")
    assert "0 runs stored" in said and "2 runs already stored" in said
    assert b_samples(cfg) == {sha: {0.01}}


def test_an_edit_is_one_version_however_often_it_is_run_and_its_revert_is_built_again(tmp_path, capsys):
    cfg = tree_project(tmp_path)
    repo = cfg.parent
    sha = git(repo, "rev-parse", "--short=10", "HEAD").strip()
    run(cfg, capsys, "run")
    (repo / "value.txt").write_text("0.020\n")  # an edit: a version of its own
    run(cfg, capsys, "run")
    (edited,) = set(b_samples(cfg)) - {sha}
    assert edited.startswith(f"{sha}-dirty-")
    # Run again: the build of the edit rewrote out.txt, which is not part of the edit.
    assert "0 runs stored" in run(cfg, capsys, "run")
    (repo / "notes.txt").write_text("a new file of the user's is an edit\n")
    run(cfg, capsys, "run")
    assert len(b_samples(cfg)) == 3
    (repo / "notes.txt").unlink()
    git(repo, "checkout", "--", "value.txt")  # reverted: the commit again, built again
    run(cfg, capsys, "run", "--runs", "3")
    samples = b_samples(cfg)
    assert samples[sha] == {0.01} and samples[edited] == {0.02}  # not the edit's build's 0.020
    with Store(repo / ".regbench" / "results.db") as store:
        assert len(store.runs(benchmark="b", version=sha)) == 3
        texts = {v.name: v.timestamp_text for v in store.versions()}
    # The dirty versions' timestamps are written as the commits' are (git's +00:00, not Z).
    assert all(t.endswith("+00:00") for t in texts.values()), texts


def test_an_ignored_output_of_an_edit_since_reverted_is_built_again(tmp_path, capsys):
    # out.txt ignored: the tree was named as its commit after the revert, and the build recorded
    # for it was reused, so the commit's new runs measured the edit's output.
    cfg = tree_project(tmp_path, ignored=("out.txt",))
    repo = cfg.parent
    sha = git(repo, "rev-parse", "--short=10", "HEAD").strip()
    run(cfg, capsys, "run")
    (repo / "value.txt").write_text("0.020\n")
    run(cfg, capsys, "run")
    git(repo, "checkout", "--", "value.txt")
    run(cfg, capsys, "run", "--runs", "3")
    assert b_samples(cfg)[sha] == {0.01}


def test_a_tracked_file_the_build_rewrites_is_no_edit_but_changing_it_is(tmp_path, capsys):
    # A build that rewrites a committed file (a lock file, a stamp) with new content each time.
    cfg = tree_project(tmp_path, build='["sh", "-c", "cp value.txt out.txt; date +%s%N > stamp.txt"]',
                       files={"stamp.txt": "committed\n"})
    repo = cfg.parent
    sha = git(repo, "rev-parse", "--short=10", "HEAD").strip()
    run(cfg, capsys, "run")
    assert "0 runs stored" in run(cfg, capsys, "run")
    (repo / "value.txt").write_text("0.020\n")
    run(cfg, capsys, "run")
    assert "0 runs stored" in run(cfg, capsys, "run")  # the stamp the edit's build wrote is left out
    assert len(b_samples(cfg)) == 2
    (repo / "stamp.txt").write_text("edited by hand\n")
    run(cfg, capsys, "run")
    assert len(b_samples(cfg)) == 3 and sha in b_samples(cfg)


def test_a_dirty_trees_timestamp_is_written_as_the_commits_are(tmp_path):
    # show listed `2026-12-01T04:08:09Z` under commits' `2026-12-01T04:08:01+00:00`.
    from datetime import datetime

    from regbench.run.versions import working_tree_version

    cfg = tree_project(tmp_path)
    (cfg.parent / "value.txt").write_text("0.020\n")
    info = working_tree_version(cfg.parent).version_info()
    assert info["timestamp_text"].endswith("+00:00")
    assert datetime.fromisoformat(info["timestamp_text"]).replace(tzinfo=None) == info["timestamp"]
