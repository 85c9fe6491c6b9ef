"""Git versions on real repositories: revisions in history order, worktrees, cached builds."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from regbench.demo_project import git_commit, git_init
from regbench.errors import VersionError
from regbench.run.versions import (ABBREV, Commit, build_key, build_version, prepare_tree,
                                   resolve_revisions, working_tree_version)
from regbench.store import Store

T0 = datetime(2023, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def repo(tmp_path) -> tuple[Path, list[str]]:
    """Four commits on main; the third is dated *before* the second (a skewed clock)."""
    path = tmp_path / "repo"
    git_init(path)
    dates = [T0, T0 + timedelta(hours=2), T0 + timedelta(hours=1), T0 + timedelta(hours=3)]
    shas = [git_commit(path, {"f.txt": f"v{k}\n"}, f"commit {k}", when=d) for k, d in enumerate(dates)]
    return path, shas


def test_range_is_oldest_first_in_topological_order(repo):
    path, shas = repo
    commits = resolve_revisions(path, f"{shas[0]}..{shas[3]}")
    assert [c.sha for c in commits] == shas[1:]  # history, not committer dates, decides
    c = commits[0]
    assert c.short == shas[1][:ABBREV]
    assert c.subject == "commit 1"
    assert c.timestamp == datetime(2023, 5, 1, 14, 0) and c.timestamp.tzinfo is None
    assert c.timestamp_text == "2023-05-01T14:00:00+00:00"


def test_open_ended_range_and_single_revision(repo):
    path, shas = repo
    assert [c.sha for c in resolve_revisions(path, "main~2..")] == shas[2:]
    assert [c.sha for c in resolve_revisions(path, "HEAD~1")] == [shas[2]]


def test_comma_list_is_put_in_commit_date_order_without_duplicates(repo):
    path, shas = repo
    got = resolve_revisions(path, f"{shas[3][:8]}, {shas[0]},main~3,{shas[1]}")
    assert [c.sha for c in got] == [shas[0], shas[1], shas[3]]


@pytest.mark.parametrize(("spec", "message"), [
    ("nope", r"unknown revision 'nope'"),
    ("HEAD..nope", r"unknown revision 'nope'"),
    ("main,,HEAD", r"empty revision"),
    ("HEAD..HEAD", r"no commits in this range"),
    ("HEAD~1...HEAD", r"symmetric ranges"),
    ("--all", r"unknown revision '--all'"),
    ("  ", r"empty revision list"),
])
def test_bad_revisions_are_one_line_errors(repo, spec, message):
    with pytest.raises(VersionError, match=message) as info:
        resolve_revisions(repo[0], spec)
    assert "\n" not in str(info.value)


def test_not_a_repository(tmp_path):
    with pytest.raises(VersionError, match="not a git repository"):
        resolve_revisions(tmp_path, "HEAD")


def test_working_tree_version_names(repo, tmp_path):
    path, shas = repo
    store_dir = path / ".regbench"
    clean = working_tree_version(path, ignore=[store_dir])
    assert (clean.name, clean.dirty, clean.head.sha) == (shas[3][:ABBREV], False, shas[3])
    store_dir.mkdir()
    (store_dir / "results.db").write_text("regbench's own files do not make the tree dirty")
    assert working_tree_version(path, ignore=[store_dir]).name == shas[3][:ABBREV]
    (path / "f.txt").write_text("edited\n")
    dirty = working_tree_version(path, ignore=[store_dir])
    assert dirty.name.startswith(shas[3][:ABBREV] + "-dirty-") and len(dirty.name) == ABBREV + 7 + 8
    assert dirty.version_info()["timestamp"] > clean.version_info()["timestamp"]
    # the same edit is the same version; another edit (or a new file) is another version
    assert working_tree_version(path, ignore=[store_dir]).name == dirty.name
    (path / "f.txt").write_text("edited again\n")
    again = working_tree_version(path, ignore=[store_dir]).name
    assert again != dirty.name
    (path / "new.txt").write_text("untracked\n")
    assert working_tree_version(path, ignore=[store_dir]).name not in (again, dirty.name)
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = working_tree_version(plain)
    assert (outside.name, outside.head) == ("worktree", None)


def test_prepare_tree_checks_out_and_reuses(repo, tmp_path):
    path, shas = repo
    commit = resolve_revisions(path, shas[1])[0]
    cache = tmp_path / "cache"
    tree = prepare_tree(path, commit, cache)
    assert tree == cache.resolve() / shas[1]
    assert (tree / "f.txt").read_text() == "v1\n"
    (tree / "build-output").write_text("kept")
    assert prepare_tree(path, commit, cache) == tree
    assert (tree / "build-output").read_text() == "kept"  # reused, not checked out again
    assert (path / "f.txt").read_text() == "v3\n"  # the user's working tree is untouched


def test_prepare_tree_replaces_a_broken_folder(repo, tmp_path):
    path, shas = repo
    commit = resolve_revisions(path, shas[2])[0]
    cache = tmp_path / "cache"
    tree = prepare_tree(path, commit, cache)
    (tree / ".git").unlink()  # e.g. a half-deleted worktree
    assert prepare_tree(path, commit, cache) == tree
    assert (tree / "f.txt").read_text() == "v2\n"
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == shas[2]


def _counting_build(tmp_path: Path, fail: bool) -> tuple[str, ...]:
    """A build command that counts its executions in a file outside the tree."""
    counter = tmp_path / "builds.txt"
    code = (f"import sys; open({str(counter)!r}, 'a').write('x'); print('building'); "
            f"sys.exit({1 if fail else 0})")
    return (sys.executable, "-c", code)


def test_ok_build_is_recorded_and_not_run_again(repo, tmp_path):
    path, shas = repo
    store = Store(tmp_path / "r.db")
    commit = resolve_revisions(path, shas[0])[0]
    argv = _counting_build(tmp_path, fail=False)
    first = build_version(store, version=commit.short, tree=path, argv=argv, timeout=30,
                          version_info=commit.version())
    assert (first.status, first.cached, first.exit_code) == ("ok", False, 0)
    assert "building" in first.log_tail
    again = build_version(store, version=commit.short, tree=path, argv=argv, timeout=30)
    assert (again.status, again.cached) == ("ok", True)
    assert (tmp_path / "builds.txt").read_text() == "x"
    # A fresh checkout cannot use the recorded build.
    assert not build_version(store, version=commit.short, tree=path, argv=argv, timeout=30,
                             use_cache=False).cached
    [row] = store.builds()
    assert (row.version, row.build_key, row.status) == (commit.short, build_key(argv), "ok")
    assert store.versions()[0].commit == shas[0]


def test_failed_build_is_not_retried_unless_asked(repo, tmp_path):
    path, _ = repo
    store = Store(tmp_path / "r.db")
    argv = _counting_build(tmp_path, fail=True)
    first = build_version(store, version="v", tree=path, argv=argv, timeout=30)
    assert (first.status, first.exit_code) == ("failed", 1)
    assert first.log_tail.endswith("[regbench] build exit status 1")
    assert build_version(store, version="v", tree=path, argv=argv, timeout=30).cached
    assert (tmp_path / "builds.txt").read_text() == "x"
    retried = build_version(store, version="v", tree=path, argv=argv, timeout=30, rebuild=True)
    assert (retried.status, retried.cached) == ("failed", False)
    assert (tmp_path / "builds.txt").read_text() == "xx"
    # Another build command is another key: built, not answered from the first one's record.
    other = build_version(store, version="v", tree=path, argv=(sys.executable, "-c", "pass"), timeout=30)
    assert (other.status, other.cached) == ("ok", False)


def test_build_timeout_and_missing_program(repo, tmp_path):
    path, _ = repo
    store = Store(tmp_path / "r.db")
    slow = build_version(store, version="v", tree=path, timeout=0.5,
                         argv=(sys.executable, "-c", "import time; time.sleep(60)"))
    assert slow.status == "timeout" and slow.exit_code is None
    assert "build killed after 0.5 s" in slow.log_tail
    missing = build_version(store, version="w", tree=path, argv=(str(tmp_path / "no-make"),), timeout=5)
    assert missing.status == "failed" and "cannot start" in missing.log_tail


def test_build_key_is_stable_and_short():
    assert build_key(["make", "-j2"]) == build_key(("make", "-j2"))
    assert build_key(["make"]) != build_key(["make", "all"])
    assert len(build_key(["make"])) == 16


def test_commit_version_info():
    c = Commit("a" * 40, "a" * 10, datetime(2020, 1, 1), "2020-01-01T01:00:00+01:00", "s")
    assert c.version_info() == {"commit": "a" * 40, "timestamp": datetime(2020, 1, 1),
                                "timestamp_text": "2020-01-01T01:00:00+01:00"}


def test_parent_of_the_root_commit_includes_the_whole_history(repo):
    # `A^..B` is how the documentation says to include A; a repository's first commit has no
    # parent, and the range then means every commit up to B (git itself refuses `A^`).
    path, shas = repo
    for spec in (f"{shas[0]}^..{shas[3]}", f"{shas[0][:8]}~1..main", f"{shas[0]}^.."):
        assert [c.sha for c in resolve_revisions(path, spec)] == shas, spec
    assert [c.sha for c in resolve_revisions(path, f"{shas[1]}^..{shas[2]}")] == shas[1:3]
    with pytest.raises(VersionError, match=r"unknown revision 'nope'"):
        resolve_revisions(path, "nope^..main")
    with pytest.raises(VersionError, match=r"unknown revision"):
        resolve_revisions(path, f"{shas[0]}^^..main")
