"""A change whose version is a working tree with changes (`SHORT-dirty-DIGEST`) cannot be run
again from its commit: confirmation and bisection say so instead of measuring the clean commit as
if it were what was measured (the check looked for the `SHORT-dirty` names of before the digest)."""

from __future__ import annotations

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.config import load_config
from regbench.detect.base import Change
from regbench.run.rerun import plan_reruns
from regbench.store import Store

CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo 0.01; done"]\n')


def test_a_dirty_working_tree_version_is_not_run_again_from_its_commit(tmp_path, capsys):
    cfg = empty_commits_project(tmp_path, 2)
    cfg.write_text(CONFIG)
    run(cfg, capsys, "run", "--versions", "HEAD~1")
    (tmp_path / "r" / "edited.txt").write_text("an edit\n")
    run(cfg, capsys, "run")  # the working tree, with changes: SHORT-dirty-DIGEST
    with Store(tmp_path / ".regbench" / "results.db") as store:
        old, dirty = [v for v in store.versions()]
        assert "-dirty-" in dirty.name
        machine = store.machine_names()[0]
        change = Change("b", "default", machine, dirty.name, old.name, 1.0, 0.5, 1.5, "regression", "auto")
        reruns, skipped = plan_reruns(load_config(cfg), store, [change], machine=machine, purpose="confirm")
    assert not reruns
    (why,) = skipped
    assert f"version {dirty.name!r} is a working tree with uncommitted changes" in why.reason
