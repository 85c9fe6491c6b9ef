"""`regbench run` whose runs were all stored already records a campaign that stored none; a probe:
`regbench optimize` then took it for the last full campaign and said "no benchmark to optimize in
campaign 2"."""

from __future__ import annotations

from pathlib import Path

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.store import Store
from regbench.store.plans import load_plans

CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 4\niterations = 6\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", '
          '"i=0; while [ $i -lt ${REGBENCH_ITERATIONS:-6} ]; do i=$((i+1)); echo 0.010$i; done"]\n')


def project(tmp_path: Path) -> Path:
    cfg = empty_commits_project(tmp_path, 2)
    cfg.write_text(CONFIG)
    return cfg


def test_optimize_skips_a_campaign_that_stored_no_run(tmp_path, capsys):
    cfg = project(tmp_path)
    run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # campaign 1: 8 runs
    assert "0 runs stored" in run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 2: none
    with Store(tmp_path / ".regbench" / "results.db") as store:
        assert [c.id for c in store.campaigns()] == [1, 2]
        assert store.campaigns_with_runs() == {1}
    run(cfg, capsys, "optimize")
    with Store(tmp_path / ".regbench" / "results.db") as store:
        assert [(p.benchmark, p.campaign_id) for p in load_plans(store)] == [("b", 1)]
    said = run(cfg, capsys, "optimize", "--campaign", "2", code=3)
    assert said.strip().splitlines()[-1] == (
        "error: --campaign: campaign 2 stored no run (those it was to make were stored already, or it stopped "
        "before any); campaign 1 is the last that stored runs")
