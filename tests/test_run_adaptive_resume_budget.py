"""An adaptive experiment's budget counts the runs stored before a resume: it is not spent twice."""

from __future__ import annotations

from regbench.run.campaign import run_campaign
from regbench.store import Store
from test_run_adaptive import project


def test_resuming_a_campaign_whose_budget_is_spent_does_not_spend_it_again(tmp_path):
    config = project(tmp_path, run_sd="0.2", target=0.002, budget=1)
    store = Store(tmp_path / "r.db")
    first = run_campaign(config, store, seed=2).adaptive[0]
    assert first.status == "budget"
    again = run_campaign(config, store, seed=2).adaptive[0]
    # The stored runs count for the target ("resuming a campaign counts the runs already
    # stored"), but not for the budget: the same command spends another full budget.
    assert again.runs == first.runs, f"{again.runs - first.runs} more runs after the budget was spent"
