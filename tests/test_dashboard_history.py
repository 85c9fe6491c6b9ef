"""The dashboard reads the store as `regbench detect` does: along the first-parent line of
`[project] branch` (a probe: a pull request's commits were drawn in `main`'s line, and the
comparison page compared the last two stored versions, one of them the pull request's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.config import load_config
from regbench.store import Store
from regbench.web.data import Dashboard
from regbench.web.pages import compare_page

CONFIG = ('[project]\nrepo = "r"\nbranch = "main"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo 0.01; done"]\n')


def sha(repo: Path, rev: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", rev], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_dashboard_leaves_a_pull_requests_commits_out_of_the_branchs_line(tmp_path, capsys):
    cfg = empty_commits_project(tmp_path, 3)
    cfg.write_text(CONFIG)
    repo = tmp_path / "r"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "checkout", "-q", "-b", "pr", "HEAD~1"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "pr work"], check=True)
    pr = sha(repo, "pr")
    subprocess.run([*git, "checkout", "-q", "main"], check=True)
    main = [sha(repo, f"main~{k}") for k in (2, 1, 0)]
    # The pull request's head measured last: stored last, and newest by commit time.
    run(cfg, capsys, "run", "--versions", ",".join(main))
    run(cfg, capsys, "run", "--versions", pr)
    with Store(tmp_path / ".regbench" / "results.db") as store:
        everything = [v.commit for v in store.versions()]
        assert pr in everything
        dash = Dashboard(store, config=load_config(cfg)).load()
        assert [v["commit"] for v in dash.versions] == main
        (series,) = dash.series
        assert [v["commit"] for v in series.versions] == main
        page = compare_page(dash)
        assert main[2][:10] in page and pr[:10] not in page
        # Without a configuration, every stored version, as before.
        assert [v["commit"] for v in Dashboard(store).load().versions] == everything
