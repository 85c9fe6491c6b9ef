"""Optimized plans (Japke et al. 2025, Algorithm 1): the algorithm against an independent
brute force, its bad input, the plan table, and optimize -> run --plan optimized -> show --plans
end to end with real processes, real git and a real store."""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from scipy import stats as st

from regbench.cli.main import main
from regbench.errors import ConfigError
from regbench.demo_project import git_commit, git_init
from regbench.model import RunRecord
from regbench.optimize.algorithm import Configuration, choose, minimal_configuration, Scored
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.plans import NewPlan, load_plans, save_plans

from storetools import upgrade_to

PY = sys.executable


# ---------------------------------------------------------------------------- the algorithm
def brute_force(x: np.ndarray, warmup: int, metric: str, threshold: float, min_runs: int, overhead: float = 0.0):
    """Algorithm 1 written independently: every (r, i) with r * i >= 3, metric by numpy/scipy;
    a run costs its iterations, warm-up included, and ``overhead`` iterations of its own."""
    best = None
    for r, i in itertools.product(range(1, x.shape[0] + 1), range(1, x.shape[1] + 1)):
        if r * i < 3 or r < min_runs:
            continue
        m = x[:r, :i].ravel()
        value = (np.std(m, ddof=1) / np.mean(m) if metric == "cv"
                 else st.median_abs_deviation(m, scale=1.0) / np.median(m))
        if value <= threshold:
            key = (r * (overhead + warmup + i), value, r)
            best = min(best, (key, (r, i))) if best else (key, (r, i))
    return best[1] if best else x.shape


@pytest.mark.parametrize("metric", ["cv", "rmad"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_minimal_configuration_agrees_with_a_brute_force(metric, seed):
    rng = np.random.default_rng(seed)
    runs, iters = 6, 12
    # Between-run spread (random initial conditions) plus within-run noise of varying size.
    x = 100 + rng.normal(0, 0.6, (runs, 1)) + rng.normal(0, [0.2, 0.5, 1.0][seed - 1], (runs, iters))
    for warmup, min_runs, overhead in [(0, 1, 0.0), (5, 2, 0.0), (0, 1, 8.0), (2, 2, 25.5)]:
        found = minimal_configuration(x, warmup=warmup, metric=metric, threshold=0.01, min_runs=min_runs,
                                      overhead=overhead)
        want = brute_force(x, warmup, metric, 0.01, min_runs, overhead)
        assert (found.chosen.configuration.runs, found.chosen.configuration.iterations) == tuple(want)
        assert found.chosen.cost == found.chosen.configuration.runs * (
            overhead + warmup + found.chosen.configuration.iterations)
        assert found.overhead == overhead
        # The result under a configuration is the mean (CV) or median (RMAD) of its measurements.
        c = found.chosen.configuration
        pooled = x[:c.runs, :c.iterations].ravel()
        assert found.chosen.result == pytest.approx(np.mean(pooled) if metric == "cv" else np.median(pooled))
        assert found.change_rate == pytest.approx(abs(found.chosen.result - found.full.result) / found.full.result)


def test_ties_of_cost_go_to_the_smaller_metric():
    full = Configuration(3, 2)
    scored = [Scored(Configuration(1, 3), 3, 0.008, 1.0), Scored(Configuration(3, 1), 3, 0.004, 1.0),
              Scored(Configuration(3, 2), 6, 0.001, 1.0)]
    found = choose(scored, full, metric="cv", threshold=0.01, warmup=0)
    assert found.chosen.configuration == Configuration(3, 1)
    assert found.time_share == pytest.approx(0.5)


def test_warmup_is_paid_in_every_run():
    # Identical runs: every configuration is stable; with a long warm-up fewer runs of more
    # iterations are cheaper than more runs of fewer.
    rng = np.random.default_rng(0)
    x = 50 + rng.normal(0, 0.01, (5, 10))
    cold = minimal_configuration(x, warmup=0, metric="cv", threshold=0.01, min_runs=1)
    warm = minimal_configuration(x, warmup=20, metric="cv", threshold=0.01, min_runs=1)
    assert cold.chosen.cost == 3 and warm.chosen.configuration == Configuration(1, 3)
    assert warm.chosen.cost == 23 and warm.full.cost == 5 * 30


def test_a_runs_fixed_cost_makes_fewer_longer_runs_cheaper():
    # Identical runs: every configuration is stable.  Priced at iterations, 3 x 1 and 1 x 3 tie;
    # each run costing 10 iterations of its own, 1 x 3 costs 13 and 3 x 1 costs 33.
    rng = np.random.default_rng(0)
    x = 50 + rng.normal(0, 0.01, (5, 10))
    scored = {s.configuration: s.cost for s in minimal_configuration(x, metric="cv", threshold=0.01,
                                                                    min_runs=1, overhead=10).scored}
    assert scored[Configuration(1, 3)] == 13 and scored[Configuration(3, 1)] == 33
    found = minimal_configuration(x, metric="cv", threshold=0.01, min_runs=1, overhead=10)
    assert found.chosen.configuration == Configuration(1, 3)
    assert found.time_share == pytest.approx(13 / (5 * 20))
    with pytest.raises(ValueError, match="`overhead` must be a finite number >= 0"):
        minimal_configuration(x, overhead=-1)
    with pytest.raises(ValueError, match="`overhead` must be a finite number >= 0"):
        minimal_configuration(x, overhead=float("inf"))


def test_run_overhead_is_the_intercept_over_the_slope():
    from regbench.optimize.algorithm import run_overhead

    # Runs of 11 and 4 iterations taking 0.5 s + 10 ms an iteration: the fixed cost is 50
    # iterations, as a least-squares line through the points says (numpy, independently).
    n = np.array([11] * 6 + [4] * 6 + [7] * 3)
    rng = np.random.default_rng(1)
    seconds = 0.5 + 0.01 * n + rng.normal(0, 1e-4, n.size)
    slope, intercept = np.polyfit(n, seconds, 1)
    assert run_overhead(n, seconds) == pytest.approx(intercept / slope, rel=0.02)
    assert run_overhead(n, seconds) == pytest.approx(50, rel=0.03)
    # A run slowed by interference (5 s) does not move it; least squares would.
    noisy = seconds.copy()
    noisy[0] = 5.0
    assert run_overhead(n, noisy) == pytest.approx(50, rel=0.03)
    slope, intercept = np.polyfit(n, noisy, 1)
    assert abs(intercept / slope - 50) > 10
    # Runs of one length cannot tell a run's cost from its iterations': 0, iterations alone.
    assert run_overhead([11, 11, 11], [0.6, 0.61, 0.62]) == 0.0
    # No fixed cost (the line goes through 0 or below): 0.
    assert run_overhead([4, 11, 4, 11], [0.038, 0.11, 0.04, 0.109]) == 0.0
    # Longer runs that were not slower: no line to read it from.
    assert run_overhead([4, 11], [0.5, 0.4]) == 0.0
    # Runs without a duration or iterations are left out.
    assert run_overhead([11, 4, 0, 7], [0.61, 0.54, 0.3, float("nan")]) == pytest.approx(50, rel=0.01)
    # Only runs of one group (version) are compared: version "b" twice as fast an iteration at 4
    # against "a" at 11 would read 0.41 s / 10 ms; "a" at 11 and 4 alone read the truth, 50.
    groups = ["a", "a", "b", "b", "a"]
    n, seconds = [11, 11, 4, 4, 4], [0.61, 0.61, 0.52, 0.52, 0.54]
    assert run_overhead(n, seconds) != pytest.approx(50, rel=0.1)
    assert run_overhead(n, seconds, groups) == pytest.approx(50, rel=0.01)
    assert run_overhead(n, seconds, ["a", "a", "b", "b", "c"]) == 0.0  # no group of two lengths
    # Lengths one iteration apart against 1% timing noise: the pairs disagree on the slope's sign
    # (their fit reads anything from 0 to three times the truth), so nothing is read.
    noise = np.random.default_rng(3).normal(0, 0.005, 40)
    lengths = np.array([11, 10] * 20)
    assert run_overhead(lengths, 0.5 + 0.001 * lengths + noise) == 0.0
    with pytest.raises(ValueError, match="`groups` must be 1-d arrays of one length"):
        run_overhead([11, 4], [0.6, 0.5], ["a"])


def test_an_unstable_benchmark_keeps_the_full_configuration():
    rng = np.random.default_rng(4)
    x = rng.lognormal(0, 0.5, (4, 8))
    found = minimal_configuration(x, metric="rmad", threshold=0.01)
    assert not found.stable and found.chosen.configuration == Configuration(4, 8)


@pytest.mark.parametrize("kwargs, message", [
    ({"threshold": 0.0}, r"`threshold` must be in \(0, 1\), got 0.0"),
    ({"threshold": 1.5}, r"`threshold` must be in \(0, 1\), got 1.5"),
    ({"metric": "sd"}, r"`metric` must be one of cv, rmad, rciw1, rciw2, rciw3, got 'sd'"),
    ({"min_runs": 0}, r"`min_runs` must be a positive integer"),
    ({"warmup": -1}, r"`warmup` must be a non-negative integer"),
])
def test_bad_options_name_the_option(kwargs, message):
    with pytest.raises(ValueError, match=message):
        minimal_configuration(np.ones((3, 3)), **kwargs)


def test_fewer_than_three_at_a_level_is_an_error():
    with pytest.raises(ValueError, match="at least 3 runs and 3 iterations to be reduced, got 2 runs of 10"):
        minimal_configuration(np.ones((2, 10)))


# ---------------------------------------------------------------------------- the plan table
def _new(bench="b", runs=2, campaign=1) -> NewPlan:
    return NewPlan(bench, "default", "m", campaign, "v1", runs, 5, 1, 10, 20, "rmad", 0.01, 0.004, 0.001,
                   True, 1.5, 30.0)


def _seed_store(store: Store, benchmarks=("b",)) -> int:
    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    for b in benchmarks:
        store.add_run(RunRecord(b, "v1", 0, np.ones(3), machine="m", campaign_id=cid))
    return cid


def test_stored_plans_are_counted_without_opening_the_store(store):
    # What `run --plan optimized` looks at before it opens (and would migrate) a store.
    from regbench.store.plans import count_plans_unopened

    assert count_plans_unopened(store, config="default", machine="m") == 0
    cid = _seed_store(store)
    save_plans(store, [_new(campaign=cid), _new(campaign=cid)])  # two revisions of one plan
    assert count_plans_unopened(store, config="default", machine="m") == 2
    assert count_plans_unopened(store, config="default") == 2
    assert count_plans_unopened(store, config="default", machine="other") == 0
    assert count_plans_unopened(store, config="other", machine="m") == 0


def test_plans_are_versioned_and_the_last_is_current(store):
    cid = _seed_store(store)
    save_plans(store, [_new(runs=3, campaign=cid)])
    save_plans(store, [_new(runs=2, campaign=cid)])
    current = load_plans(store)
    assert [(p.revision, p.runs) for p in current] == [(2, 2)]
    assert [(p.revision, p.runs) for p in load_plans(store, current=False)] == [(1, 3), (2, 2)]
    assert current[0].seconds == 1.5 and current[0].version == "v1" and current[0].stable


def test_a_0006_store_is_upgraded_to_hold_plans(tmp_path):
    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0006")
    engine.dispose()
    with Store(path) as s:
        assert s.schema_revision() == t.SCHEMA_REVISION
        cid = _seed_store(s)
        save_plans(s, [_new(campaign=cid)])
        assert len(load_plans(s)) == 1


# ---------------------------------------------------------------------------- end to end
BENCH = """\
import os, random
n = int(os.environ["REGBENCH_ITERATIONS"])
rng = random.Random(int(os.environ["REGBENCH_RUN_INDEX"]) * 7919 + len(os.environ["REGBENCH_VERSION"]))
spread = float(os.environ["SPREAD"])
base = 1.0 + rng.gauss(0, spread)          # random initial conditions of the run
for _ in range(n):
    print(base * (1 + rng.gauss(0, spread)))
"""


def _project(tmp_path: Path, benchmarks: dict[str, float]) -> Path:
    repo = tmp_path / "proj"
    git_init(repo)
    text = "[project]\nname = \"p\"\n[defaults]\nruns = 4\niterations = 10\nwarmup = 1\n"
    for name, spread in benchmarks.items():
        text += (f"\n[[benchmark]]\nname = \"{name}\"\ncommand = {json.dumps([PY, 'bench.py'])}\n"
                 f"env = {{ SPREAD = \"{spread}\" }}\n")
    (repo / "regbench.toml").write_text(text)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"bench.py": BENCH, "regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    return repo


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_optimize_then_run_with_optimized_plans(tmp_path, capsys):
    repo = _project(tmp_path, {"steady": 0.0005, "noisy": 0.3})
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "3", capsys=capsys)
    assert rc == 0, err
    rc, out, err = _cli(repo, "optimize", "--format", "json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    plans = {p["benchmark"]: p for p in doc["derived"]}
    assert (plans["noisy"]["runs"], plans["noisy"]["iterations"], plans["noisy"]["stable"]) == (4, 10, False)
    steady = plans["steady"]
    assert steady["stable"] and steady["runs"] * steady["iterations"] < 40 and steady["runs"] >= 2
    assert steady["warmup"] == 1 and steady["seconds"] < steady["full_seconds"]
    # A second optimize keeps current plans; --refresh derives new revisions.
    rc, out, _ = _cli(repo, "optimize", "--format", "json", capsys=capsys)
    assert json.loads(out)["derived"] == [] and len(json.loads(out)["kept"]) == 2
    rc, out, _ = _cli(repo, "optimize", "--refresh", "--format", "json", capsys=capsys)
    assert {p["revision"] for p in json.loads(out)["derived"]} == {2}

    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "5",
                      capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        head = s.versions()[-1].name
        by = {b: [r for r in s.raw_runs(b, head)] for b in ("steady", "noisy")}
        assert len(by["steady"]) == steady["runs"] and len(by["noisy"]) == 4
        assert {r.n_samples for r in by["steady"]} == {1 + steady["iterations"]}
        last = max(s.campaigns(), key=lambda c: c.id)
        assert last.plan["optimized"]["steady"]["revision"] == 2
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and "steady" in out and "noisy" in out and "unstable" in out
    assert "fixed cost" in out
    # The optimized campaign is not taken as a full one to optimize from.
    rc, out, _ = _cli(repo, "optimize", "--refresh", "--format", "json", capsys=capsys)
    assert json.loads(out)["campaign"] == 1
    # Its runs of another length (of HEAD; the full campaign ran HEAD~1) let each run's fixed cost
    # be measured from every campaign's runs of the benchmark (the value is left to the
    # processes' timing), and the plans say what they were priced with; --no-run-cost: nothing.
    from regbench.optimize.plans import experiment_overhead

    priced = {p["benchmark"]: p for p in json.loads(out)["derived"]}
    with Store(repo / "s.db") as s:
        for b in ("steady", "noisy"):
            expected = experiment_overhead(s, s.runs(benchmark=b), version=priced[b]["version"])
            assert priced[b]["run_overhead"] == pytest.approx(expected) and expected >= 0.0
    rc, out, _ = _cli(repo, "optimize", "--refresh", "--no-run-cost", "--format", "json", capsys=capsys)
    assert rc == 0 and {p["run_overhead"] for p in json.loads(out)["derived"]} == {0.0}


def test_bad_input_gives_one_line_errors(tmp_path, capsys):
    repo = _project(tmp_path, {"steady": 0.001})
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--runs", "2", capsys=capsys)
    assert rc == 0, err
    rc, _, err = _cli(repo, "optimize", capsys=capsys)
    assert rc == 3 and err.count("\n") == 1
    assert "benchmark 'steady': campaign 1, the last finished one, at version " in err
    assert "has 2 ok runs" in err and "at least 3" in err and "--campaign ID" not in err  # no other to name
    rc, _, err = _cli(repo, "optimize", "--threshold", "1.5", capsys=capsys)
    assert rc == 2 and "Invalid value for '--threshold': 1.5 is not in the range 0<x<1" in err  # usage
    rc, _, err = _cli(repo, "optimize", "--campaign", "99", capsys=capsys)
    assert rc == 3 and "--campaign: no campaign 99" in err
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", capsys=capsys)
    assert rc == 3 and "no optimized plan is stored" in err
    # A plan whose benchmark is gone from regbench.toml.
    with Store(repo / "s.db") as s:
        cid = _seed_store(s, benchmarks=("gone",))
        save_plans(s, [_new(bench="gone", campaign=cid)])
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", capsys=capsys)
    assert rc == 3 and err.startswith("error: plan of benchmark 'gone': no such benchmark") and err.count("\n") == 1
    rc, out, _ = _cli(repo, "optimize", "--forget", "gone", capsys=capsys)
    assert rc == 0 and "1 plans of gone deleted" in out


def test_spread_order_keeps_every_benchmark_over_the_whole_campaign():
    from regbench.run.campaign import Trial, spread_order

    runs_of = {"a": 10, "b": 2, "c": 5}
    trials = [Trial(b, "v", r) for b, n in runs_of.items() for r in range(n)]
    order = spread_order(trials, runs_of, 7)
    assert sorted(order, key=lambda t: (t.benchmark, t.run_index)) == sorted(trials, key=lambda t: (t.benchmark,
                                                                                                    t.run_index))
    # b's second run is in the second half of the campaign, not next to its first.
    pos = {(t.benchmark, t.run_index): k for k, t in enumerate(order)}
    assert pos[("b", 1)] > pos[("a", 4)] and pos[("c", 4)] > pos[("a", 7)]
    # Runs of one benchmark keep their order; the result depends only on the set and the seed.
    assert [t.run_index for t in order if t.benchmark == "a"] == list(range(10))
    assert spread_order(reversed(trials), runs_of, 7) == order


def test_a_top_up_campaign_is_named_and_the_full_one_pointed_at(tmp_path, capsys):
    # A newcomer's sequence: a full campaign, then `run --runs 5` on one version, which adds one
    # run in a campaign of its own. `optimize` takes the last finished campaign, the top-up; its
    # error said "the campaign has 1 ok runs" without saying which campaign, nor that --campaign
    # picks the full one.
    repo = _project(tmp_path, {"steady": 0.0005})
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "3", capsys=capsys)
    assert rc == 0, err
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--runs", "5", capsys=capsys)
    assert rc == 0, err
    rc, _, err = _cli(repo, "optimize", capsys=capsys)
    assert rc == 3 and err.count("\n") == 1
    assert "campaign 2, the last finished one, at version " in err and "has 1 ok run of" in err
    assert "`--campaign 1` optimizes from the other finished full campaign;" in err
    rc, _, err = _cli(repo, "optimize", "--campaign", "1", capsys=capsys)
    assert rc == 0, err


def _full_campaign(store: Store, benches=("b",), versions=("v1", "v2"), runs=4, iters=10) -> int:
    from regbench.model import VersionInfo

    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    rng = np.random.default_rng(0)
    for k, v in enumerate(versions):
        info = VersionInfo(v, timestamp=datetime(2024, 1, 1 + k))
        for b in benches:
            for r in range(runs):
                store.add_run(RunRecord(b, v, r, 1 + 0.001 * rng.standard_normal(iters + 1), machine="m",
                                        campaign_id=cid, warmup=1, duration=0.5), version_info=info)
    store.finish_campaign(cid, "finished")
    return cid


def test_a_plan_is_derived_again_after_an_alert_on_its_benchmark(store):
    from regbench.optimize.plans import derive_plans
    from regbench.store.alerts import alert_transaction

    cid = _full_campaign(store, benches=("b", "c"))
    first = derive_plans(store)
    assert first.campaign_id == cid and {d.plan.benchmark for d in first.derived} == {"b", "c"}
    assert all(d.plan.version == "v2" and d.plan.runs >= 2 and d.plan.warmup == 1 for d in first.derived)
    assert all(d.plan.seconds == pytest.approx(d.plan.full_seconds * d.minimal.time_share) for d in first.derived)
    again = derive_plans(store)
    assert again.derived == () and len(again.kept) == 2
    later = max(d.plan.created_at for d in first.derived) + timedelta(seconds=1)
    with alert_transaction(store) as tx:
        tx.create(benchmark="c", config="default", machine="m", version="v2", previous="v1", kind="regression",
                  change=0.05, ci_low=0.03, ci_high=0.07, p_value=0.001, methods=["auto"], now=later, why="test")
    third = derive_plans(store)
    assert [(d.plan.benchmark, d.plan.revision) for d in third.derived] == [("c", 2)]
    assert [p.benchmark for p in third.kept] == ["b"]
    # From an older version, on request.
    fourth = derive_plans(store, version="v1", refresh=True, benchmarks=["b"])
    assert [(d.plan.benchmark, d.plan.version, d.plan.revision) for d in fourth.derived] == [("b", "v1", 2)]


def test_an_iterations_cost_follows_its_samples_where_they_are_times_or_rates():
    from regbench.model import Series, VersionInfo
    from regbench.optimize.plans import iteration_costs

    def series(unit, direction, levels):
        return Series(benchmark="b", config="default", machine="m", unit=unit, direction=direction,
                      versions=[VersionInfo(f"v{k}") for k in range(len(levels))],
                      runs=[[np.full(5, x), np.full(5, x)] if x else [] for x in levels],
                      failed=[0] * len(levels), warmup=[0] * len(levels))

    assert iteration_costs(series("ms", "lower", [2.0, 1.0, None])) == {"v0": 2.0, "v1": 1.0}
    assert iteration_costs(series("ops/s", "higher", [2.0, 4.0])) == {"v0": 0.5, "v1": 0.25}
    assert iteration_costs(series("B", "lower", [2.0, 4.0])) is None  # bytes say nothing of time
    assert iteration_costs(series("s", "lower", [2.0, -1.0])) is None


def test_plans_are_priced_with_the_measured_fixed_cost_of_a_run(store):
    from regbench.model import VersionInfo
    from regbench.optimize.plans import OptimizeOptions, derive_plans

    cid = _full_campaign(store, benches=("b", "tool/x"))  # runs of 11 stored iterations, 0.5 s each
    first = derive_plans(store)
    assert [d.plan.run_overhead for d in first.derived] == [0.0, 0.0]  # one length: not measured
    # A later campaign (as one with plans) with runs of 4 iterations of a new version, v3, whose
    # iterations take half as long (its samples say so: 0.5 against 1; 0.39 s + 4 x 5 ms): its 4
    # iterations weigh as 2 of v2's, so 0.5 = a + 11 b and 0.41 = a + 2 b give b = 0.01 s and a =
    # 0.39 s, 39 of v2's iterations (unweighed, 0.41 s against 0.5 s would read 0.38 / 0.0129 =
    # 30; had v3 also changed its start-up, nothing could tell).
    later = store.start_campaign(seed=2, machine="m", fingerprint={}, command="x", plan={"optimized": {"b": {}}})
    for b in ("b", "tool/x"):
        for r in range(3):
            store.add_run(RunRecord(b, "v3", r, 0.5 + 0.001 * np.arange(4), machine="m", campaign_id=later, warmup=1, duration=0.41),
                          version_info=VersionInfo("v3", timestamp=datetime(2024, 1, 5)))
    store.finish_campaign(later, "finished")
    assert derive_plans(store, refresh=True).derived[0].plan.run_overhead == pytest.approx(39, rel=0.01)
    # Runs of 4 iterations of v2 (which the full campaign ran at 11) taking 0.43 s: 0.5 = a + 11 b
    # and 0.43 = a + 4 b, the same line.
    again_c = store.start_campaign(seed=3, machine="m", fingerprint={}, command="x", plan={"optimized": {"b": {}}})
    for b in ("b", "tool/x"):
        for r in range(3):
            store.add_run(RunRecord(b, "v2", 4 + r, 1 + 0.001 * np.arange(4), machine="m", campaign_id=again_c, warmup=1,
                                    duration=0.43), version_info=VersionInfo("v2", timestamp=datetime(2024, 1, 2)))
    store.finish_campaign(again_c, "finished")
    again = {d.plan.benchmark: d for d in derive_plans(store, refresh=True).derived}
    assert again["b"].plan.run_overhead == pytest.approx(39, rel=0.01)
    assert again["b"].minimal.overhead == again["b"].plan.run_overhead
    assert again["b"].plan.campaign_id == cid  # the samples are still the full campaign's
    # The cost priced each run's 39 iterations, and the plan's seconds follow from it.
    c = again["b"].minimal.chosen
    o = again["b"].plan.run_overhead
    assert c.cost == pytest.approx(c.configuration.runs * (o + 1 + c.configuration.iterations))
    assert again["b"].plan.seconds == pytest.approx(again["b"].plan.full_seconds * c.cost / (4 * (o + 11)))
    # A tool's run is an invocation shared by what it reports: not priced.
    assert again["tool/x"].plan.run_overhead == 0.0
    # --no-run-cost prices iterations alone; and what was priced is stored.
    plain = {d.plan.benchmark: d for d in derive_plans(store, refresh=True,
                                                       options=OptimizeOptions(run_cost=False)).derived}
    assert plain["b"].plan.run_overhead == 0.0
    assert plain["b"].minimal.chosen.cost == plain["b"].minimal.chosen.configuration.runs * (
        1 + plain["b"].minimal.chosen.configuration.iterations)
    stored = {(p.benchmark, p.revision): p.run_overhead for p in load_plans(store, current=False)}
    assert stored[("b", 2)] == pytest.approx(39, rel=0.01) and stored[("b", 3)] == pytest.approx(39, rel=0.01)
    assert stored[("b", 4)] == 0.0


def test_a_tool_invocation_runs_the_most_of_its_benchmarks_plans(store):
    from regbench.optimize.plans import plans_for_campaign

    cid = _seed_store(store, benchmarks=("tool/A", "tool/B", "cmd"))
    save_plans(store, [dataclasses.replace(_new("tool/A", runs=2, campaign=cid), iterations=9),
                       dataclasses.replace(_new("tool/B", runs=5, campaign=cid), iterations=3),
                       _new("cmd", runs=3, campaign=cid)])
    got = plans_for_campaign(store, ["tool", "cmd", "other"], machine="m")
    assert dict(got.runs) == {"tool": 5, "cmd": 3} and dict(got.iterations) == {"tool": 9, "cmd": 5}
    assert got.unplanned == ("other",)
    # Only the benchmarks asked for; another machine has no plan.
    assert dict(plans_for_campaign(store, ["cmd"], configured=["tool", "cmd"], machine="m").runs) == {"cmd": 3}
    with pytest.raises(ConfigError, match="no optimized plan is stored for configuration 'default' on machine 'x'"):
        plans_for_campaign(store, ["cmd"], machine="x")


def test_the_command_defaults_are_the_documented_ones():
    """``regbench optimize``'s defaults are the module's (chosen by their worst suite, docs/optimize.md)."""
    from regbench.cli.cmd_optimize import command
    from regbench.optimize.plans import DEFAULT_METRIC, DEFAULT_MIN_RUNS, DEFAULT_THRESHOLD

    defaults = {p.name: p.default for p in command.params}
    assert (defaults["metric"], defaults["threshold"], defaults["min_runs"]) == (
        DEFAULT_METRIC, DEFAULT_THRESHOLD, DEFAULT_MIN_RUNS) == ("rciw3", 0.01, 2)


# ------------------------------------------------------------- counts, and resumed campaigns
def test_a_count_exactly_0_or_constant_gets_the_smallest_plan_without_warnings():
    # Go's allocs/op of an allocation-free loop: 0 in every iteration of every run.  No spread is
    # perfect stability (it was "undefined", hence unstable, hence the full configuration).
    for value in (0.0, 48.0):
        found = minimal_configuration(np.full((5, 10), value), warmup=1, metric="rciw3", threshold=0.01,
                                      min_runs=2, n_resamples=200, rng=0)
        assert found.stable and found.chosen.stability == 0.0
        assert (found.chosen.configuration.runs, found.chosen.configuration.iterations) == (2, 2)
    # A flaky count (0 in most iterations, 1 in some) is not stable: its relative spread is undefined.
    flaky = np.zeros((5, 10))
    flaky[1, 3] = flaky[3, 7] = 1.0
    with pytest.warns(RuntimeWarning, match="undefined"):
        assert not minimal_configuration(flaky, metric="rciw3", n_resamples=200, rng=0).stable


SLOW_BENCH = """\
import os, random, sys, time
open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
time.sleep(0.5)  # slow enough to be interrupted while it runs
rng = random.Random(int(os.environ["REGBENCH_RUN_INDEX"]))
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(1.0 + rng.gauss(0, 0.3))
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see processes")
def test_optimize_uses_every_run_of_a_campaign_interrupted_and_resumed(tmp_path, capsys):
    import os
    import signal
    import subprocess
    import time

    repo = tmp_path / "proj"
    pids = tmp_path / "pids"
    pids.mkdir()
    git_init(repo)
    text = ("[project]\nname = \"p\"\n[defaults]\nruns = 6\niterations = 5\nwarmup = 0\n"
            f"\n[[benchmark]]\nname = \"b\"\ncommand = {json.dumps([PY, 'bench.py', str(pids)])}\n")
    (repo / "regbench.toml").write_text(text)
    git_commit(repo, {"bench.py": SLOW_BENCH, "regbench.toml": text}, "one", when=datetime(2024, 1, 1, tzinfo=UTC))
    db = repo / "s.db"
    argv = ["--store", str(db), "--config", str(repo / "regbench.toml"), "run", "--versions", "HEAD",
            "--machine", "m", "--seed", "3"]
    with Store(db) as s:  # created first, so that polling it never races its creation
        # Ctrl-C (SIGINT, with its default handler restored as an interactive shell has it) while
        # the third run runs, two being stored.
        trampoline = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                      f"os.execv(sys.executable, [sys.executable, '-m', 'regbench.cli.main', *{argv!r}])")
        proc = subprocess.Popen([PY, "-c", trampoline], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while len(s.runs()) < 2 or len(list(pids.iterdir())) < 3:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no runs stored within 60 s"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 130, err
        assert 2 <= len(s.runs()) < 6
    rc = main(argv)  # the same command again: it resumes, as a second campaign
    assert rc == 0, capsys.readouterr().err
    capsys.readouterr()
    with Store(db) as s:
        assert [c.status for c in s.campaigns()] == ["interrupted", "finished"]
        assert {r.campaign_id for r in s.runs()} == {1, 2} and len(s.runs()) == 6
    rc = main(["--store", str(db), "--config", str(repo / "regbench.toml"), "optimize", "--format", "json"])
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads(out)
    # The plan comes from the finished campaign and every run of the plan: 6, not 6 - before.
    assert doc["campaign"] == 2 and doc["campaigns"] == [1, 2]
    (plan,) = doc["derived"]
    assert (plan["full_runs"], plan["full_iterations"]) == (6, 5)
    rc = main(["--store", str(db), "--config", str(repo / "regbench.toml"), "optimize", "--refresh"])
    assert rc == 0 and "(with the runs of campaign 1: one campaign interrupted and resumed)" in capsys.readouterr().out


def test_campaign_parts_are_the_campaigns_of_one_plan_on_one_machine(store):
    from regbench.optimize.plans import campaign_parts

    plan = {"schedule": "rmit", "config": "default", "versions": ["a"], "benchmarks": {"b": {"runs": 5}}}
    ids = [store.start_campaign(seed=k, machine=m, fingerprint=None, command=None, plan=p)
           for k, (m, p) in enumerate([("m", plan), ("m", {**plan, "versions": ["b"]}), ("n", plan),
                                       ("m", {**plan, "noise": {"taskset": "2"}}), ("m", plan)])]
    for i in ids:
        store.finish_campaign(i, "finished")
    campaigns = store.campaigns()
    # Another version list, another machine: other campaigns; the noise facts may differ.
    assert campaign_parts(campaigns, ids[4]) == (ids[0], ids[3], ids[4])
    assert campaign_parts(campaigns, ids[1]) == (ids[1],)
    assert campaign_parts(campaigns, ids[2]) == (ids[2],)


def test_a_count_that_is_0_in_most_runs_warns_once_and_the_cli_prints_no_warning(tmp_path, capsys):
    import warnings

    from regbench.optimize.algorithm import score_configurations, smaller_configurations

    gen = np.random.default_rng(0)
    flaky = (gen.random((5, 10)) < 0.1).astype(float)  # allocs/op: mostly 0, sometimes 1
    configs = smaller_configurations(Configuration(5, 10), min_runs=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scored = score_configurations(flaky, configs, warmup=0, metric="rciw3", n_resamples=200, rng=1)
    assert [str(w.message) for w in caught] == [
        "rciw3 is undefined (zero mean or median) for some configurations; they are not chosen"]
    assert any(not np.isfinite(s.stability) for s in scored)
    path = tmp_path / "r.db"
    with Store(path) as store:
        c = store.start_campaign(seed=1, machine="box", fingerprint={}, command="x")
        store.add_runs([RunRecord("go/B [allocs/op]", v, r, flaky[r], machine="box", campaign_id=c)
                        for v in ("v1", "v2") for r in range(5)])
        store.finish_campaign(c, "finished")
    # Under pytest's warnings-as-errors, a warning reaching the CLI's caller fails the command.
    assert main(["--store", str(path), "optimize", "--resamples", "200"]) == 0
    captured = capsys.readouterr()
    assert "— (unstable)" in captured.out and "Warning" not in captured.err
