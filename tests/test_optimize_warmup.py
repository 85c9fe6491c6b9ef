"""Fewer iterations than the full configuration's are offered only where the code has settled by
then (optimize.algorithm.choose, ``unsettled``): the first iterations of every fork of a JMH
suite on a loaded machine were 1.05-2x its steady time, stably, and plans of 1-2 iterations a
fork then kept that bias (docs/optimize.md, run U)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from regbench.optimize.algorithm import minimal_configuration
from regbench.stats import stability_metrics


def _slow_start(first: float, *, runs: int = 5, forks: int = 3, iterations: int = 10, seed: int = 4) -> np.ndarray:
    """Every fork's first measured iteration ``first`` times the steady time (1.0), the same in
    every fork, 0.2% noise."""
    rng = np.random.default_rng(seed)
    x = 1 + 0.002 * rng.standard_normal((runs, forks, iterations))
    x[:, :, 0] *= first
    return x


@pytest.mark.parametrize("fork_level", [False, True])
def test_a_first_iteration_still_slow_in_every_fork_is_not_a_plan(fork_level):
    x = _slow_start(1.5)
    found = minimal_configuration(x, metric="rmad", threshold=0.05, min_runs=2, fork_level=fork_level)
    c = found.chosen.configuration
    # One iteration a fork is perfectly stable (every fork alike) and 50% off: refused, and so is
    # two (half the values slow: the median sits between the levels); from three on it is settled.
    one = next(s for s in found.scored if s.configuration.iterations == 1 and s.configuration.runs == 2)
    assert one.stability <= 0.05 and abs(one.result - 1.5) < 0.02
    assert found.unsettled == (1, 2)
    assert found.stable and c.iterations >= 3 and found.change_rate < 0.05
    assert found.time_share < 1  # still cut: fewer runs (and forks, where they are a level)


def test_settled_iterations_are_cut_as_before_and_the_check_is_the_full_campaigns():
    """No slow start: nothing refused, the cheapest stable configuration as Algorithm 1 picks it
    (checked here by scanning every configuration's RMAD directly)."""
    x = _slow_start(1.0)
    found = minimal_configuration(x, metric="rmad", threshold=0.05, min_runs=2)
    assert found.unsettled == ()
    c = found.chosen.configuration
    assert (c.runs, c.iterations) == (2, 1)  # 2 runs x 3 forks x 1 = 6 values, the least cost
    assert stability_metrics(x[:2, :, :1].ravel()).rmad <= 0.05


def test_a_small_slow_start_within_the_threshold_is_kept():
    found = minimal_configuration(_slow_start(1.03), metric="rmad", threshold=0.05, min_runs=2)
    assert found.unsettled == () and found.chosen.configuration.iterations == 1


def test_optimize_says_which_iteration_counts_it_refused_and_why(store, capsys):
    """`regbench optimize` on a stored campaign whose runs' first measured iteration is still 50%
    slow: the plan keeps enough iterations, and the output (table and JSON) says which counts
    were refused."""
    from datetime import datetime

    from regbench.model import RunRecord, VersionInfo
    from regbench.optimize.plans import OptimizeOptions, derive_plans
    from regbench.report.plans import print_optimize

    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    rng = np.random.default_rng(2)
    for r in range(5):
        samples = 1 + 0.002 * rng.standard_normal(10)
        samples[0] *= 1.5
        store.add_runs([RunRecord("b", "v1", r, samples, machine="m", campaign_id=cid, duration=1.0)],
                       versions=[VersionInfo("v1", timestamp=datetime(2024, 1, 1))])
    store.finish_campaign(cid, "finished")
    result = derive_plans(store, options=OptimizeOptions(metric="rmad", threshold=0.05, min_runs=2, run_cost=False))
    (derived,) = result.derived
    assert derived.minimal.unsettled == (1, 2) and derived.plan.iterations >= 3
    print_optimize(result)
    text = capsys.readouterr().out
    assert "fewer iterations refused for 1 benchmark:" in " ".join(text.split())
    assert "b: 1, 2 of 10" in text
    print_optimize(result, fmt="json")
    (plan,) = json.loads(capsys.readouterr().out)["derived"]
    assert plan["unsettled"] == [1, 2] and plan["benchmark"] == "b"


def test_the_first_runs_sharing_one_of_two_levels_are_not_a_stable_plan():
    """Whole runs at two levels (random initial conditions): runs 0-1 at 1.0, runs 2-4 at 2.0.
    Two runs agree closely (cv 0.1 %) and sit 37 % off the full configuration's result: not a
    plan, however stable (a probe found `2 x 2` chosen, "expected precision cv 0.11 %")."""
    rng = np.random.default_rng(13)
    x = np.array([1.0, 1.0, 2.0, 2.0, 2.0])[:, None] * (1 + 0.003 * rng.uniform(-1, 1, (5, 6)))
    found = minimal_configuration(x, metric="cv", threshold=0.05, min_runs=2)
    two = [s for s in found.scored if s.configuration.runs == 2]
    assert two and all(s.stability <= 0.05 for s in two)  # stable, as the metric sees them
    assert not found.stable and found.chosen.configuration == found.full.configuration
    assert abs(found.full.result - 1.6) < 0.01
