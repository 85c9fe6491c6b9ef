"""Built commits kept between campaigns (``[project] build_cache``), on real git repositories and
real builds: a later campaign takes the kept tree with its build instead of building again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import ConfigError
from regbench.run.campaign import NullReporter, run_campaign
from regbench.run.clean import find_leftovers
from regbench.run.versions import registered_worktrees
from regbench.store import Store

PY = sys.executable
T0 = datetime(2024, 3, 1, 8, 0, tzinfo=UTC)

# The build writes its output into the tree and logs itself outside it, so the test can count
# builds and the benchmark can refuse a tree that was not built.
BUILD = """\
import os, pathlib, sys
pathlib.Path("built.txt").write_text(sys.argv[1])
with open(os.environ["BUILD_LOG"], "a") as f:
    f.write(pathlib.Path("v.txt").read_text().strip() + " " + sys.argv[1] + "\\n")
"""
BENCH = [PY, "-c", "import os, sys\n"
         "if not os.path.exists('built.txt'): sys.exit('not built')\n"
         "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0)"]


class Builds(NullReporter):
    def __init__(self):
        self.done = []

    def build_done(self, version, status, cached, log_tail=None):
        self.done.append((version, status, cached))


def project(tmp_path: Path, *, build_cache: int | None = None, flavour: str = "a") -> tuple[Path, list[str]]:
    repo = tmp_path / "proj"
    if not repo.exists():
        git_init(repo)
        for k in range(3):
            git_commit(repo, {"v.txt": f"v{k}\n"}, f"commit {k}", when=T0 + timedelta(hours=k))
    shas = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.split()
    (tmp_path / "build.py").write_text(BUILD)
    cache = "" if build_cache is None else f"build_cache = {build_cache}\n"
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[project]\nrepo = "proj"\nbuild = {json.dumps([PY, str(tmp_path / "build.py"), flavour])}\n'
                   f"{cache}\n[defaults]\nruns = 1\niterations = 3\n\n[[benchmark]]\nname = \"b\"\n"
                   f"command = {json.dumps(BENCH)}\n")
    return cfg, shas


def builds(tmp_path: Path) -> list[str]:
    log = tmp_path / "builds.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture(autouse=True)
def build_log(tmp_path, monkeypatch):
    # The build runs with regbench's own environment: it finds its log there.
    monkeypatch.setenv("BUILD_LOG", str(tmp_path / "builds.log"))


def campaign(cfg: Path, store: Store, runs: int, **kw) -> Builds:
    rep = Builds()
    run_campaign(load_config(cfg), store, revisions="HEAD~2..HEAD", runs=runs, machine="m", reporter=rep, **kw)
    return rep


def test_a_later_campaign_takes_the_kept_builds(tmp_path):
    cfg, shas = project(tmp_path)  # the default keeps 8
    store = Store(tmp_path / "r.db")
    first = campaign(cfg, store, runs=1)
    assert sorted(builds(tmp_path)) == ["v1 a", "v2 a"] and {c for _, _, c in first.done} == {False}
    kept = tmp_path / "worktrees" / "kept"
    assert sorted(p.name for p in kept.iterdir() if p.is_dir()) == sorted(shas[1:])
    assert {p.resolve() for p in registered_worktrees(tmp_path / "proj")} == {(kept / s).resolve() for s in shas[1:]}

    second = campaign(cfg, store, runs=2)  # a run more of each: both versions are needed again
    assert sorted(builds(tmp_path)) == ["v1 a", "v2 a"]  # not built again
    assert sorted(second.done) == sorted((s[:10], "ok", True) for s in shas[1:])
    runs = [r for r in store.runs() if r.benchmark == "b"]
    assert len(runs) == 4 and {r.status for r in runs} == {"ok"}  # the kept trees held their build
    # Taken and given back: still kept, and nothing else is registered.
    assert sorted(p.name for p in kept.iterdir() if p.is_dir()) == sorted(shas[1:])
    assert len(registered_worktrees(tmp_path / "proj")) == 2


def test_build_cache_0_builds_every_campaign_and_keeps_nothing(tmp_path):
    cfg, _ = project(tmp_path, build_cache=0)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    campaign(cfg, store, runs=2)
    assert sorted(builds(tmp_path)) == ["v1 a", "v1 a", "v2 a", "v2 a"]
    assert registered_worktrees(tmp_path / "proj") == []


def test_only_the_builds_used_last_are_kept(tmp_path):
    cfg, shas = project(tmp_path, build_cache=1)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    kept = tmp_path / "worktrees" / "kept"
    [one] = [p.name for p in kept.iterdir() if p.is_dir()]
    assert one in shas[1:] and len(list(kept.glob("*.key"))) == 1
    assert len(registered_worktrees(tmp_path / "proj")) == 1
    campaign(cfg, store, runs=2)
    assert len(builds(tmp_path)) == 3  # the one kept was taken, the other built again
    assert len(registered_worktrees(tmp_path / "proj")) == 1


def test_another_build_command_or_rebuild_builds_again(tmp_path):
    cfg, _ = project(tmp_path)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    cfg, _ = project(tmp_path, flavour="b")  # the build command changed: its key too
    campaign(cfg, store, runs=2)
    assert sorted(builds(tmp_path)) == ["v1 a", "v1 b", "v2 a", "v2 b"]
    campaign(cfg, store, runs=3, rebuild=True)
    assert len(builds(tmp_path)) == 6


def test_a_kept_tree_deleted_by_hand_is_checked_out_again(tmp_path):
    cfg, shas = project(tmp_path)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    shutil.rmtree(tmp_path / "worktrees" / "kept" / shas[2])  # its key file stays
    rep = campaign(cfg, store, runs=2)
    assert sorted(builds(tmp_path)) == ["v1 a", "v2 a", "v2 a"]
    assert (shas[2][:10], "ok", False) in rep.done and (shas[1][:10], "ok", True) in rep.done
    assert {r.status for r in store.runs()} == {"ok"}


def test_clean_finds_the_kept_trees(tmp_path):
    cfg, shas = project(tmp_path)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    found = find_leftovers(repo=tmp_path / "proj", cache_dirs=[tmp_path / "worktrees"], temp_dirs=[])
    trees = sorted(x.path.name for x in found if x.kind == "worktree")
    assert trees == sorted(shas[1:])


@pytest.mark.parametrize("value", ["-1", '"8"', "true", "2.5"])
def test_build_cache_must_be_a_count(tmp_path, value):
    (tmp_path / "regbench.toml").write_text(f"[project]\nbuild_cache = {value}\n")
    with pytest.raises(ConfigError, match=r"regbench.toml.*\[project\] `build_cache` must be a non-negative integer"):
        load_config(tmp_path / "regbench.toml")


def _kept(tmp_path: Path) -> list[str]:
    kept = tmp_path / "worktrees" / "kept"
    return sorted(p.name for p in kept.iterdir() if p.is_dir()) if kept.is_dir() else []


def test_a_failed_build_under_another_command_is_not_kept_as_the_first(tmp_path):
    # Build a, then a build command that breaks the tree and fails, then a again: the last
    # campaign must build again, not take a broken tree for a's build.
    cfg, _ = project(tmp_path)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    broken = tmp_path / "broken.py"
    broken.write_text("import os, sys\nif os.path.exists('built.txt'): os.remove('built.txt')\nsys.exit(3)\n")
    text = cfg.read_text()
    cfg.write_text(text.replace(json.dumps([PY, str(tmp_path / "build.py"), "a"]), json.dumps([PY, str(broken)])))
    campaign(cfg, store, runs=2)
    cfg.write_text(text)
    rep = campaign(cfg, store, runs=3)
    ok = [r for r in store.runs() if r.benchmark == "b" and r.run_index == 2]
    assert len(ok) == 2 and {r.status for r in ok} == {"ok"}  # the trees held a's build
    assert {cached for _, _, cached in rep.done} == {True}  # both kept for a since the first campaign


def test_rebuild_checks_out_afresh_and_another_command_does_not_take_a_kept_tree(tmp_path):
    cfg, shas = project(tmp_path)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    marker = tmp_path / "worktrees" / "kept" / shas[2] / "leftover.txt"
    marker.write_text("from an earlier build")  # a file of the kept tree
    cfg_b, _ = project(tmp_path, flavour="b")
    key_a = (tmp_path / "worktrees" / "kept" / f"{shas[2]}.key").read_text()
    campaign(cfg_b, store, runs=2)  # another command: fresh checkouts, the kept ones left alone
    assert marker.exists() and (tmp_path / "worktrees" / "kept" / f"{shas[2]}.key").read_text() == key_a
    assert sorted(builds(tmp_path)) == ["v1 a", "v1 b", "v2 a", "v2 b"]
    cfg, _ = project(tmp_path)
    campaign(cfg, store, runs=3, rebuild=True)  # rebuild: afresh too, not in the kept tree
    assert len(builds(tmp_path)) == 6


def test_what_the_runs_leave_in_a_kept_tree_is_undone(tmp_path):
    # A benchmark that writes into its working folder (and changes a tracked file) must not find
    # an earlier campaign's files: the tree is kept as its build left it.
    cfg, shas = project(tmp_path)
    bench = [PY, "-c", "import os, sys\n"
             "if not os.path.exists('built.txt'): sys.exit('not built')\n"
             "n = len(os.listdir('state')) if os.path.isdir('state') else 0\n"
             "os.makedirs('state', exist_ok=True); open(f'state/{os.getpid()}', 'w').close()\n"
             "open('v.txt', 'a').write('touched\\n')\n"
             "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0 + n)"]
    cfg.write_text(cfg.read_text().replace(f"command = {json.dumps(BENCH)}", f"command = {json.dumps(bench)}"))
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    tree = tmp_path / "worktrees" / "kept" / shas[2]
    assert not (tree / "state").exists() and (tree / "v.txt").read_text() == "v2\n"
    assert (tree / "built.txt").exists()  # the build's output stays
    campaign(cfg, store, runs=2)
    second = [r for r in store.runs() if r.benchmark == "b" and r.run_index == 1]
    assert len(second) == 2 and all(r.status == "ok" for r in second)
    assert sorted(builds(tmp_path)) == ["v1 a", "v2 a"]


def test_build_cache_0_or_smaller_removes_what_was_kept(tmp_path):
    cfg, _ = project(tmp_path)
    store = Store(tmp_path / "r.db")
    campaign(cfg, store, runs=1)
    assert len(_kept(tmp_path)) == 2
    cfg, _ = project(tmp_path, build_cache=1)
    campaign(cfg, store, runs=1)  # nothing to run, nothing built: the cache still shrinks
    assert len(_kept(tmp_path)) == 1 and len(list((tmp_path / "worktrees" / "kept").glob("*.key"))) == 1
    cfg, _ = project(tmp_path, build_cache=0)
    campaign(cfg, store, runs=1)
    assert _kept(tmp_path) == [] and registered_worktrees(tmp_path / "proj") == []
