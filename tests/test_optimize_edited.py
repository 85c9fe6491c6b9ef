"""An optimized plan derived from the runs of a benchmark's old definition is stale once the
benchmark is edited (Japke et al. 2025, s.3.2: a plan is re-determined for a benchmark that
changed): `run --plan optimized` runs it at its full configuration, and `optimize` derives its plan
again from the campaign that ran the new definition so.  Before, the old definition's plan kept
being used until `optimize --refresh`, and `optimize` refused the benchmark (its runs in the last
full campaign were superseded: "too few runs")."""

from __future__ import annotations

import json
from pathlib import Path

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.model import SUPERSEDED
from regbench.store import Store
from regbench.store.plans import load_plans

# Quiet benchmarks (a little noise, so that the stability metric is not 0/0): their plans run
# fewer runs than the 5 of the full configuration.
CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 5\niterations = 6\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "{loop} echo {value}$i; done"]\n'
          '[[benchmark]]\nname = "other"\ncommand = ["sh", "-c", "{loop} echo 0.5000$i; done"]\n')
# As many samples as REGBENCH_ITERATIONS asks (a plan's iterations), each a little apart.
LOOP = "i=0; while [ $i -lt ${REGBENCH_ITERATIONS:-6} ]; do i=$((i+1));"


def project(tmp_path: Path, commits: int = 2) -> Path:
    return empty_commits_project(tmp_path, commits)


def store_of(tmp_path: Path) -> Store:
    return Store(tmp_path / ".regbench" / "results.db")


def plan_of(tmp_path: Path, name: str):
    with store_of(tmp_path) as store:
        (plan,) = [p for p in load_plans(store) if p.benchmark == name]
        return plan


def ok_runs(tmp_path: Path, name: str, campaign: int) -> int:
    with store_of(tmp_path) as store:
        return sum(1 for r in store.runs(benchmark=name) if r.campaign_id == campaign and r.status == "ok")


def planned(tmp_path: Path, capsys) -> Path:
    """A full campaign (1) of HEAD~1 and the plans derived from it; both plans run fewer runs."""
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0100"))
    run(cfg, capsys, "run", "--versions", "HEAD~1")
    run(cfg, capsys, "optimize")
    assert plan_of(tmp_path, "b").runs < 5 and plan_of(tmp_path, "other").runs < 5
    return cfg


def test_an_edited_benchmarks_plan_is_not_run_and_is_derived_again_from_its_full_runs(tmp_path, capsys):
    cfg = planned(tmp_path, capsys)
    other_runs = plan_of(tmp_path, "other").runs
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0200"))  # b edited: its plan measured the old command

    said = run(cfg, capsys, "run", "--plan", "optimized", "--versions", "HEAD")  # campaign 2
    assert ("warning: 1 plan of an edited benchmark run at its full configuration: b (its plan from campaign 1, "
            "which ran its old definition)") in said
    assert "other" not in said.split("warning:")[1].split("\n")[0]
    assert ok_runs(tmp_path, "b", 2) == 5  # its full configuration, not its plan's runs
    assert ok_runs(tmp_path, "other", 2) == other_runs
    with store_of(tmp_path) as store:
        campaign = next(c for c in store.campaigns() if c.id == 2)
        assert campaign.plan["stale"]["b"]["edited"] == 1
        assert all(r.status == SUPERSEDED for r in store.runs(benchmark="b") if r.campaign_id == 1)

    shown = run(cfg, capsys, "show", "--plans")
    assert "1 plan of an edited benchmark not run by `run --plan optimized`" in shown

    said = run(cfg, capsys, "optimize", "--format", "json")
    result = json.loads(said[said.index("{"):])
    assert [d["benchmark"] for d in result["derived"]] == ["b"]
    assert [k["benchmark"] for k in result["kept"]] == ["other"]
    assert any(n.startswith("b: derived from campaign 2 at version ") and "ran its definition as it is now" in n
               for n in result["notes"])
    assert plan_of(tmp_path, "b").campaign_id == 2

    # The new plan is current: the next campaign runs it, and says nothing of edits.
    said = run(cfg, capsys, "run", "--plan", "optimized", "--versions", "HEAD~1")  # campaign 3
    assert "edited benchmark" not in said
    assert ok_runs(tmp_path, "b", 3) == plan_of(tmp_path, "b").runs < 5


def test_a_full_campaign_after_the_edit_is_what_optimize_derives_from(tmp_path, capsys):
    cfg = planned(tmp_path, capsys)
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0200"))
    run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 2, full: supersedes campaign 1's runs of b
    said = run(cfg, capsys, "optimize")
    assert plan_of(tmp_path, "b").campaign_id == 2
    assert "edited benchmark" not in said


def test_optimize_from_the_campaign_before_the_edit_derives_nothing_for_it_and_says_why(tmp_path, capsys):
    cfg = planned(tmp_path, capsys)
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0200"))
    run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 2 supersedes campaign 1's runs of b
    said = run(cfg, capsys, "optimize", "--campaign", "1", "--refresh", "--format", "json")
    result = json.loads(said[said.index("{"):])
    assert [d["benchmark"] for d in result["derived"]] == ["other"]
    assert [(s["benchmark"], s["edited"], s["changed"]) for s in result["stale"]] == [("b", 1, None)]
    assert any("1 plan of an edited benchmark not derived from campaign 1, whose runs of it measure the "
               "definition before its edit (superseded)" in n for n in result["notes"])


def test_a_reverted_edit_makes_the_plan_current_again(tmp_path, capsys):
    cfg = planned(tmp_path, capsys)
    plan = plan_of(tmp_path, "b")
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0200"))
    assert "edited benchmark" in run(cfg, capsys, "run", "--plan", "optimized", "--versions", "HEAD")  # 2
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0100"))  # reverted: campaign 1's runs are taken back
    said = run(cfg, capsys, "run", "--plan", "optimized", "--versions", "HEAD")  # campaign 3
    assert "edited benchmark" not in said
    assert ok_runs(tmp_path, "b", 3) == plan.runs
    assert plan_of(tmp_path, "b").campaign_id == 1


def test_keep_old_runs_keeps_the_plan(tmp_path, capsys):
    cfg = planned(tmp_path, capsys)
    plan = plan_of(tmp_path, "b")
    cfg.write_text(CONFIG.format(loop=LOOP, value="0.0200"))
    said = run(cfg, capsys, "run", "--plan", "optimized", "--versions", "HEAD", "--keep-old-runs")
    assert "edited benchmark" not in said
    assert ok_runs(tmp_path, "b", 2) == plan.runs
