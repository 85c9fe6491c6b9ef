"""plan = "adaptive" in real campaigns: pilot, iterations by n_opt, runs until the target or budget."""

from __future__ import annotations

import json
import sys

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.errors import ConfigError
from regbench.run.campaign import run_campaign
from regbench.store import Store

PY = sys.executable
# Seeded per run, so the test sees the same numbers every time; a run effect of `RUN` and 5%
# iteration noise, like fresh processes of a real benchmark.
PROGRAM = ("import os, random\n"
           "r = random.Random(os.environ['REGBENCH_VERSION'] + '/' + os.environ['REGBENCH_RUN_INDEX'])\n"
           "run = r.lognormvariate(0, float(os.environ['RUN']))\n"
           "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
           "    print(0.01 * run * r.lognormvariate(0, 0.05))\n")


def project(tmp_path, *, run_sd="0.01", target=0.01, budget=None, extra=""):
    (tmp_path / "b.py").write_text(PROGRAM)
    text = (f'[project]\nname = "p"\n[defaults]\niterations = 5\nwarmup = 0\n'
            f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([PY, "b.py"])}\nenv = {{ RUN = "{run_sd}" }}\n'
            f'plan = "adaptive"\ntarget = {target}\n' + (f"budget = {budget}\n" if budget else "") + extra)
    (tmp_path / "regbench.toml").write_text(text)
    return load_config(tmp_path / "regbench.toml")


def test_adaptive_runs_until_the_target_is_met(tmp_path):
    config = project(tmp_path, target=0.02)
    store = Store(tmp_path / "r.db")
    result = run_campaign(config, store, seed=1)
    (a,) = result.adaptive
    assert a.status == "met" and a.relative_half_width <= 0.02 and a.more_runs == 0
    assert a.runs > 3  # the pilot alone (3 runs) is not precise enough at 2% here
    # The stored runs say the same (the 99% formula-(4) interval of every run).
    from regbench.stats.hierarchical import hierarchical_summary

    (series,) = store.load_series("b")
    s = hierarchical_summary(series.runs[0])
    assert s.relative_half_width == pytest.approx(a.relative_half_width)
    assert len(series.runs[0]) == a.runs
    # After the pilot, the iterations follow the plan of least cost (seed 000 s.3.1): the
    # later runs are not all of the pilot's 5 iterations.
    sizes = [r.size for r in series.runs[0]]
    assert sizes[:3] == [5, 5, 5] and set(sizes[3:]) == {a.iterations}
    plan = store.campaigns()[0].plan["benchmarks"]["b"]
    assert plan["plan"] == "adaptive" and plan["target"] == 0.02


def test_a_spent_budget_is_inconclusive_and_says_how_many_more_runs(tmp_path):
    config = project(tmp_path, run_sd="0.2", target=0.002, budget=1)
    result = run_campaign(config, Store(tmp_path / "r.db"), seed=2)
    (a,) = result.adaptive
    assert a.status == "budget" and a.relative_half_width > 0.002
    assert a.more_runs is not None and a.more_runs > 10
    assert a.seconds >= 1


def test_adaptive_campaign_resumes_from_stored_runs(tmp_path):
    config = project(tmp_path, target=0.02)
    store = Store(tmp_path / "r.db")
    first = run_campaign(config, store, seed=3).adaptive[0]
    again = run_campaign(config, store, seed=3).adaptive[0]
    assert again.status == "met" and again.runs == first.runs  # nothing more to run


@pytest.mark.parametrize("extra, message", [
    ('plan = "sometimes"\n', "`plan` must be 'fixed' or 'adaptive'"),
])
def test_bad_plan_keys_are_one_line_errors(tmp_path, extra, message):
    (tmp_path / "regbench.toml").write_text(
        f'[[benchmark]]\nname = "b"\ncommand = ["true"]\n{extra}')
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "regbench.toml")


@pytest.mark.parametrize("key, value, message", [
    ("target", "0", "`target` must be a relative half-width in"),
    ("target", "1.5", "`target` must be a relative half-width in"),
    ("budget", "-1", "`budget` must be a positive number"),
    ("pilot", "1", "`pilot` must be at least 2"),
])
def test_bad_adaptive_values(tmp_path, key, value, message):
    (tmp_path / "regbench.toml").write_text(
        f'[[benchmark]]\nname = "b"\ncommand = ["true"]\nplan = "adaptive"\n{key} = {value}\n')
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "regbench.toml")


def test_cli_summary_reports_each_adaptive_experiment(tmp_path, capsys):
    project(tmp_path, run_sd="0.2", target=0.002, budget=1)
    code = main(["--config", str(tmp_path / "regbench.toml"), "--store", str(tmp_path / "r.db"), "run", "--seed", "4"])
    out = capsys.readouterr().out
    assert code == 0 and "inconclusive" in out and "more runs needed" in out and "target +-0.20%" in out


def test_a_resumed_experiment_keeps_the_iterations_it_chose(tmp_path):
    store = Store(tmp_path / "r.db")
    first = run_campaign(project(tmp_path, target=0.03), store, seed=5).adaptive[0]
    assert first.runs > 3
    again = run_campaign(project(tmp_path, target=0.02), store, seed=5).adaptive[0]
    (series,) = store.load_series("b")
    sizes = [r.size for r in series.runs[0]]
    assert again.runs > first.runs and set(sizes[3:]) == {first.iterations} == {again.iterations}


def test_the_iterations_chosen_stay_within_max_samples(tmp_path):
    """n_opt (seed 000 s.3.1) asks for 9-13 iterations of this benchmark (iteration noise, no run
    effect; the cost is timed, so it varies); with `max_samples = 5` such a run would fail, so at
    most 5 are run and every run is ok."""
    (tmp_path / "b.py").write_text(
        "import os, random\n"
        "r = random.Random(os.environ['REGBENCH_VERSION'] + '/' + os.environ['REGBENCH_RUN_INDEX'])\n"
        "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
        "    print(0.001 * r.lognormvariate(0, 0.5))\n")

    def campaign(extra: str):
        (tmp_path / "regbench.toml").write_text(
            f'[project]\nname = "p"\n[defaults]\niterations = 5\nwarmup = 0\n'
            f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([PY, "b.py"])}\nplan = "adaptive"\ntarget = 0.1\n'
            + extra)
        store = Store(tmp_path / f"r{len(extra)}.db")
        return run_campaign(load_config(tmp_path / "regbench.toml"), store, seed=3), store

    free, _ = campaign("")
    assert free.adaptive[0].iterations > 5  # what the plan asks for here
    capped, store = campaign("max_samples = 5\n")
    (a,) = capped.adaptive
    assert a.status == "met" and a.iterations <= 5 and capped.counts["failed"] == 0
    (series,) = store.load_series("b")
    assert max(r.size for r in series.runs[0]) <= 5
