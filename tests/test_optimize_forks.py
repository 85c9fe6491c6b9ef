"""Plans of a tool's benchmark whose runs are several processes of the tool's own (JMH's forks,
docs/optimize.md "Repetition levels"): a stored run joins its forks' samples, and a plan's
iterations reach JMH's ``-i``, iterations of each fork.  So ``regbench optimize`` keeps the first
``i`` measured iterations of each fork, keeps the forks, and prices a run at ``forks x
iterations``; where the runs do not split into their forks it reduces them as before and says so.

Stores built from records with known truth (what JMH says of each run, ``ToolTiming``, stored
beside it), and, where a JDK and Maven are on PATH, the real JMH of tests/golden/adapters/jmh
run with ``-f 2`` end to end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.model import RunRecord, ToolTiming, VersionInfo
from regbench.config import BenchmarkSpec
from regbench.optimize.algorithm import Configuration, minimal_configuration, simulated, smaller_configurations
from regbench.optimize.costs import Group, StartCost, ToolCost, layout_seconds
from regbench.optimize.plans import (
    OptimizeOptions, derive_plans, invocation_groups, planned_spec, plans_for_campaign, split_invocation
)
from regbench.run.execute import FORKS_ENV
from regbench.store.plans import load_plans
from regbench.stats import stability_metrics
from regbench.store import Store

GOLDEN = Path(__file__).parent / "golden" / "adapters" / "jmh"

#: What the stand-in JMH says of each fork: one warm-up iteration of 100 ms, iterations of 10 ms.
FORK_WARMUP, ITERATION = 0.1, 0.01


def _forked_campaign(store: Store, benches: dict[str, tuple[np.ndarray, float]], *, forks: int = 2,
                     iterations: int = 10, runs: int = 4, warmup: int = 0, seconds: float = 3.0, seed: int = 1,
                     odd: dict[str, tuple[int, ...]] | None = None, untold: dict[str, tuple[int, ...]] | None = None,
                     cold: float = 1.0) -> int:
    """One finished campaign of ``runs`` invocations of a JMH benchmark ``jmh`` on machine ``m``:
    each reported benchmark ``NAME`` is a run of ``forks`` forks of ``warmup + iterations`` samples
    at the levels ``levels[f]`` of fork ``f`` with a relative spread, as ``benches[NAME] = (levels,
    spread)``, the ``warmup`` first of each fork ``cold`` times slower.  ``odd[NAME]``: run indexes
    whose last fork lost its last sample; ``untold[NAME]``: run indexes stored without what the
    tool said of them."""
    cid = store.start_campaign(seed=seed, machine="m", fingerprint={}, command="x", plan={})
    rng = np.random.default_rng(seed)
    info = VersionInfo("v1", timestamp=datetime(2024, 1, 1))
    for r in range(runs):
        records = []
        for name, (levels, spread) in benches.items():
            slow = np.r_[np.full(warmup, cold), np.ones(iterations)]
            samples = np.concatenate([levels[f] * slow * (1 + spread * rng.standard_normal(warmup + iterations))
                                      for f in range(forks)])
            if r in (odd or {}).get(name, ()):
                samples = samples[:-1]
            timing = None if r in (untold or {}).get(name, ()) else ToolTiming(forks, forks * FORK_WARMUP, ITERATION)
            records.append(RunRecord(f"jmh/{name}", "v1", r, samples, machine="m", campaign_id=cid,
                                     duration=seconds, warmup=warmup, timing=timing))
        store.add_runs(records, versions=[info])
    store.finish_campaign(cid, "finished")
    return cid


STEADY = (np.array([1.0, 1.0]), 1e-4)
NOISY = (np.array([1.0, 1.0]), 0.3)


# --- the simulation, on arrays ----------------------------------------------------------------------

def test_a_configuration_keeps_the_first_iterations_of_each_fork_and_costs_forks_times_iterations():
    # samples[r, f, i] = 100 r + 10 f + i: what was kept is read off the values.
    r, f, i = np.meshgrid(np.arange(3), np.arange(2), np.arange(5), indexing="ij")
    x = (100 * r + 10 * f + i).astype(float)
    kept = simulated(x, Configuration(2, 3, forks=2), warmup=0)
    assert kept.tolist() == [[0, 1, 2, 10, 11, 12], [100, 101, 102, 110, 111, 112]]
    # A run of 2 forks runs warm-up and iterations in each, and pays its fixed cost once.
    assert Configuration(2, 3, forks=2).cost(warmup=1, overhead=7.0) == 2 * (7 + 2 * (1 + 3))
    # Two forks of one iteration are two measurements: (2, 1) has 4 of the 3 Algorithm 1 needs.
    configs = smaller_configurations(Configuration(3, 5, forks=2), min_runs=2)
    assert Configuration(2, 1, forks=2) in configs and all(c.forks == 2 for c in configs)
    with pytest.raises(ValueError, match="has 2 forks a run, the samples 1"):
        simulated(np.ones((3, 1, 5)), Configuration(2, 3, forks=2), warmup=0)
    # Fewer forks than the samples hold are the first ones (where the forks are a level).
    assert simulated(x, Configuration(2, 2, forks=1), warmup=0).tolist() == [[0, 1], [100, 101]]


def test_forked_samples_need_three_iterations_a_fork_and_no_slices():
    with pytest.raises(ValueError, match="got 4 runs of 2 iterations in each of 5 forks"):
        minimal_configuration(np.ones((4, 5, 2)))
    with pytest.raises(ValueError, match="`slices` cannot be given with forks"):
        minimal_configuration(np.ones((4, 2, 3)), slices=np.ones((4, 3, 2)))


def test_forks_at_different_levels_are_seen_by_every_configuration():
    # Fork 1 settles 10 % above fork 0 in every run (JIT decisions differ between JVMs).  Read as
    # one stream, the first iterations of a run are fork 0's alone and look steady; a plan of
    # them runs fork 1 too.  Each configuration keeps both forks: the spread is seen.
    rng = np.random.default_rng(3)
    x = np.array([1.0, 1.1])[None, :, None] * (1 + 1e-4 * rng.standard_normal((4, 2, 10)))
    found = minimal_configuration(x, metric="cv", threshold=0.01, min_runs=2)
    assert not found.stable and found.chosen.configuration == Configuration(4, 10, forks=2)
    for s in found.scored:
        c = s.configuration
        assert s.stability == pytest.approx(stability_metrics(x[:c.runs, :, :c.iterations].ravel()).cv, rel=1e-9)
    # Read as one stream, the first 10 iterations are fork 0's alone: steady, and 4.8 % off the
    # whole run's mean, so fewer iterations are refused as a warm-up not over (choose's check).
    stream = minimal_configuration(x.reshape(4, 20), metric="cv", threshold=0.01, min_runs=2)
    assert not stream.stable and stream.unsettled[:10] == tuple(range(1, 11))


# --- regbench optimize on stored forked runs --------------------------------------------------------

def test_a_plan_from_two_fork_runs_asks_for_iterations_of_a_fork_priced_at_forks_x_iterations(store):
    _forked_campaign(store, {"p.B.steady": STEADY, "p.B.noisy": NOISY})
    result = derive_plans(store)
    plans = {d.plan.benchmark: d for d in result.derived}
    noisy, steady = plans["jmh/p.B.noisy"], plans["jmh/p.B.steady"]
    # The runs held 2 forks of 10 iterations: a plan asks for at most 10 of each fork (JMH's -i),
    # the noisy one for the full configuration (it is unstable at every one).
    for d in (noisy, steady):
        assert d.plan.full_iterations == 10 and d.plan.iterations <= 10
        assert d.minimal.full.configuration == Configuration(4, 10, forks=2)
    assert not noisy.plan.stable and (noisy.plan.runs, noisy.plan.iterations) == (4, 10)
    assert steady.plan.stable and steady.plan.runs * steady.plan.iterations < 40
    # Priced at forks x iterations, and each run's fixed cost once: the invocation's start (3 s
    # less what JMH accounts for, 2 x (0.2 s of warm-up + 20 x 10 ms)) spread over its 4 forks,
    # 2 of them this benchmark's, with its 0.2 s of warm-up, in 10 ms iterations.
    o = (2 * FORK_WARMUP + 2 * (3.0 - 2 * (2 * FORK_WARMUP + 20 * ITERATION)) / 4) / ITERATION
    for d in (noisy, steady):
        assert d.plan.run_overhead == pytest.approx(o)
        for s in d.minimal.scored:
            assert s.cost == pytest.approx(s.configuration.runs * (o + 2 * s.configuration.iterations))
    assert result.time_share == pytest.approx((steady.minimal.chosen.cost + noisy.minimal.chosen.cost)
                                              / (2 * 4 * (o + 20)))
    assert any(n.startswith("jmh: its runs' forks (2 a run) are kept") for n in result.notes)


def test_a_plan_of_forks_at_different_levels_is_as_precise_as_both(store):
    # As above, from stored runs: the first iterations of a stored run are its first fork's.
    _forked_campaign(store, {"p.B.a": (np.array([1.0, 1.1]), 1e-4)})
    (d,) = derive_plans(store, options=OptimizeOptions(metric="cv")).derived
    assert not d.plan.stable and (d.plan.runs, d.plan.iterations) == (4, 10)
    assert d.plan.stability == pytest.approx(0.0488, abs=0.001)  # sd / mean of 1.0 and 1.1, half each


def test_a_secondary_metric_is_split_into_the_forks_of_its_benchmark(store):
    # A profiler's metric (`[gc.alloc.rate]`) is measured in its benchmark's forks, and JMH says
    # nothing of it: its runs are split by its benchmark's processes.
    _forked_campaign(store, {"p.B.a": STEADY})
    cid = store.campaigns()[0].id
    info = VersionInfo("v1", timestamp=datetime(2024, 1, 1))
    store.add_runs([RunRecord("jmh/p.B.a [gc.alloc.rate]", "v1", r, np.full(20, 5.0) + r * 1e-3, machine="m",
                              campaign_id=cid, duration=3.0) for r in range(4)], versions=[info])
    result = derive_plans(store)
    metric = next(d for d in result.derived if d.plan.benchmark == "jmh/p.B.a [gc.alloc.rate]")
    assert metric.minimal.full.configuration == Configuration(4, 10, forks=2)
    assert metric.plan.full_iterations == 10


def test_runs_that_do_not_split_into_their_forks_are_reduced_as_before_and_said_so(tmp_path, capsys):
    db = tmp_path / "s.db"
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "p"\n\n[[benchmark]]\nname = "jmh"\nformat = "jmh"\n'
                   'command = ["java", "-jar", "b.jar", "-rf", "json", "-rff", "{output}"]\nwarmup = 0\n')
    with Store(db) as s:
        _forked_campaign(s, {"p.B.odd": STEADY, "p.B.quiet": STEADY, "p.B.ss": STEADY, "p.B.ok": STEADY},
                         odd={"p.B.odd": (2,)}, untold={"p.B.quiet": (1,), "p.B.ss": (0, 1, 2, 3)})
    assert main(["--store", str(db), "--config", str(cfg), "optimize", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    notes = doc["notes"]
    plans = {p["benchmark"]: p for p in doc["derived"]}

    def note(name: str) -> str:
        (found,) = [n for n in notes if n.startswith(f"jmh/{name}: its runs were not split into the tool's processes")]
        return found

    assert "1 of its 4 ok runs do not hold 2 forks of one length with 0 warm-up samples each" in note("p.B.odd")
    assert "the tool did not say how many processes 1 of its 4 ok runs had" in note("p.B.quiet")
    assert "the tool did not say how many processes (forks) its runs had" in note("p.B.ss")
    assert "a plan's iterations (REGBENCH_ITERATIONS) run in each process" in note("p.B.ss")
    # ... and those are reduced as one stream a run, as before; the others by fork.
    assert plans["jmh/p.B.odd"]["full_iterations"] == 19 and plans["jmh/p.B.odd"]["forks"] == 1
    assert plans["jmh/p.B.ss"]["full_iterations"] == 20
    assert plans["jmh/p.B.ok"]["full_iterations"] == 10 and plans["jmh/p.B.ok"]["forks"] == 2
    assert not any("p.B.ok:" in n for n in notes)
    # The table says the same, in lines of their own.
    assert main(["--store", str(db), "--config", str(cfg), "optimize", "--refresh"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "jmh/p.B.odd: its runs were not split into the tool's processes, 1 of its 4 ok runs" in out
    # Without regbench.toml the format is not known: runs that say nothing of their processes
    # (`go test`'s, every tool's but JMH's) are not noted; runs that say some are.
    assert main(["--store", str(db), "optimize", "--refresh", "--format", "json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert not any(n.startswith("jmh/p.B.ss:") for n in notes)
    assert any(n.startswith("jmh/p.B.quiet:") for n in notes)


def test_with_warmup_each_forks_first_samples_are_left_out_and_said_so(store):
    # warmup = 2: REGBENCH_ITERATIONS = 2 + 10 gives each fork 12 iterations, its first 2 warm-up.
    # Fork 1's are slow (cold): left out, as fork 0's are; a stored run marks fork 0's alone.
    _forked_campaign(store, {"p.B.a": STEADY}, warmup=2, cold=3.0)
    result = derive_plans(store, options=OptimizeOptions(metric="cv"))
    (d,) = result.derived
    assert d.minimal.full.configuration == Configuration(4, 10, forks=2) and d.plan.warmup == 2
    assert d.minimal.full.stability < 1e-3 and d.plan.stable  # fork 1's cold start is not in it
    assert any(n.startswith("jmh: warmup = 2 leaves out the first 2 samples of each fork") for n in result.notes)
    for s in d.minimal.scored:  # each fork runs the warm-up and its iterations
        c = s.configuration
        assert s.cost == pytest.approx(c.runs * (d.plan.run_overhead + 2 * (2 + c.iterations)))


def test_a_fork_of_fewer_than_three_iterations_cannot_be_reduced(store):
    from regbench.errors import ConfigError

    _forked_campaign(store, {"p.B.a": (np.ones(5), 1e-4)}, forks=5, iterations=2)
    with pytest.raises(ConfigError, match="has runs of 5 forks of 2 measured iterations each; at least 3 "
                                          "iterations a fork are needed"):
        derive_plans(store)


def test_show_plans_counts_the_forks(tmp_path, capsys):
    db = tmp_path / "s.db"
    with Store(db) as s:
        _forked_campaign(s, {"p.B.steady": STEADY, "p.B.noisy": NOISY})
    assert main(["--store", str(db), "optimize"]) == 0
    out = capsys.readouterr().out
    assert "4 x 2 forks x 10" in out  # the noisy one's plan and every plan's full configuration
    assert main(["--store", str(db), "show", "--plans", "--format", "json"]) == 0
    shown = {p["benchmark"]: p for p in json.loads(capsys.readouterr().out)}
    assert {p["forks"] for p in shown.values()} == {2}
    assert shown["jmh/p.B.noisy"]["iterations"] == 10
    assert main(["--store", str(db), "show", "--plans"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4 x 2 forks x 10" in out and "100.00%" in out
    assert main(["--store", str(db), "optimize", "--format", "json"]) == 0  # plans kept: forks read again
    assert {p["forks"] for p in json.loads(capsys.readouterr().out)["kept"]} == {2}


def test_a_tool_layout_counts_the_iterations_of_every_fork():
    cost = ToolCost("jmh", {"a": ToolTiming(2, 0.2, 0.01)}, StartCost(0.5, 0.3, 2, 1.1, 3))
    seconds = layout_seconds([Group(3, 5, ("a",))], cost, warmup=1, per_invocation=0.5, per_process=0.3)
    assert seconds == pytest.approx(3 * (0.5 + 0.2 + 2 * 0.3 + 2 * (1 + 5) * 0.01))


# --- forks as a level: the command reads REGBENCH_FORKS ---------------------------------------------

def _jmh_spec(command: str) -> BenchmarkSpec:
    return BenchmarkSpec(name="jmh", kind="command", format="jmh", runs=4, iterations=10,
                         command=("sh", "-c", command))


READS_FORKS = 'java -jar b.jar -f "${REGBENCH_FORKS:-2}" -i "$REGBENCH_ITERATIONS"'
OWN_FORKS = 'java -jar b.jar -f 2 -i "$REGBENCH_ITERATIONS"'


def test_with_the_fork_level_a_configuration_keeps_the_first_forks_and_prices_each_fork():
    configs = smaller_configurations(Configuration(3, 5, forks=3), min_runs=2, fork_level=True)
    assert {c.forks for c in configs} == {1, 2, 3}
    assert all(c.measurements >= 3 for c in configs) and Configuration(3, 1, forks=1) in configs
    assert Configuration(2, 1, forks=1) not in configs  # 2 measurements
    # A run pays its own fixed cost once and each fork's once per fork.
    assert Configuration(2, 3, forks=1).cost(warmup=1, overhead=7.0, fork_overhead=5.0) == 2 * (7 + 1 * (5 + 1 + 3))
    # Both forks equally steady and a fork dear to start (50 iterations): one fork a run is
    # cheapest, at the iterations that keep it under the threshold; without the level it keeps 2.
    rng = np.random.default_rng(4)
    x = 1 + 1e-3 * rng.standard_normal((4, 2, 10))
    found = minimal_configuration(x, metric="cv", threshold=0.01, min_runs=2, fork_level=True, fork_overhead=50.0)
    assert found.stable and found.chosen.configuration.forks == 1
    assert found.fork_overhead == 50.0 and found.full.configuration == Configuration(4, 10, forks=2)
    c = found.chosen.configuration
    assert found.chosen.cost == pytest.approx(c.runs * (0 + 1 * (50 + c.iterations)))
    assert found.full.cost == pytest.approx(4 * 2 * (50 + 10))
    for s in found.scored:
        k = s.configuration
        assert s.stability == pytest.approx(stability_metrics(x[:k.runs, :k.forks, :k.iterations].ravel()).cv,
                                            rel=1e-9)
    kept = minimal_configuration(x, metric="cv", threshold=0.01, min_runs=2, fork_overhead=50.0)
    assert {s.configuration.forks for s in kept.scored} == {2}
    with pytest.raises(ValueError, match="`fork_overhead` must be a finite number >= 0"):
        minimal_configuration(x, fork_level=True, fork_overhead=-1.0)


def test_a_plan_sets_the_forks_where_the_command_reads_regbench_forks(store):
    _forked_campaign(store, {"p.B.steady": STEADY, "p.B.noisy": NOISY})
    result = derive_plans(store, specs=[_jmh_spec(READS_FORKS)])
    plans = {d.plan.benchmark: d for d in result.derived}
    steady, noisy = plans["jmh/p.B.steady"], plans["jmh/p.B.noisy"]
    # The fixed cost is split: the invocation's start (3 s less what JMH accounts for) spread over
    # its 4 forks is what each fork pays, with its 0.1 s of warm-up; a run pays nothing of its own
    # (H and F are not told apart from invocations of one layout).
    start = 3.0 - 2 * (2 * FORK_WARMUP + 20 * ITERATION)
    fork = (FORK_WARMUP + start / 4) / ITERATION
    assert steady.plan.forks == 1 and steady.plan.fork_overhead == pytest.approx(fork)
    assert steady.plan.run_overhead == pytest.approx(0.0)
    assert steady.minimal.chosen.cost == pytest.approx(steady.plan.runs * (fork + steady.plan.iterations))
    # The noisy one is unstable everywhere: the full configuration, its 2 forks.
    assert not noisy.plan.stable and (noisy.plan.runs, noisy.plan.forks, noisy.plan.iterations) == (4, 2, 10)
    assert not any("are kept, as its command sets them" in n for n in result.notes)
    # Stored and read back.
    (back,) = [p for p in load_plans(store) if p.benchmark == "jmh/p.B.steady"]
    assert (back.forks, back.fork_overhead) == (1, pytest.approx(fork))
    # A command with its own -f keeps them, as before, and says so.
    kept = derive_plans(store, specs=[_jmh_spec(OWN_FORKS)], refresh=True)
    assert {d.plan.forks for d in kept.derived} == {None}
    assert any("are kept, as its command sets them (it does not read REGBENCH_FORKS)" in n for n in kept.notes)


def test_run_plan_optimized_passes_the_plans_forks_to_the_command(store):
    _forked_campaign(store, {"p.B.steady": STEADY, "p.B.noisy": NOISY})
    spec = _jmh_spec(READS_FORKS)
    derive_plans(store, specs=[spec])
    planned = plans_for_campaign(store, ["jmh"], machine="m")
    # One invocation for both: the most of their forks (the noisy one's 2).
    assert planned.forks == {"jmh": 2}
    assert planned_spec(spec, planned).env[FORKS_ENV] == "2"
    assert FORKS_ENV not in planned_spec(_jmh_spec(OWN_FORKS), planned).env
    # Split by plan (the command reads REGBENCH_SELECT too): each group its own forks.
    both = _jmh_spec('java -jar b.jar "${REGBENCH_SELECT:-.}" -f "${REGBENCH_FORKS:-2}"')
    split = split_invocation(both, planned.plans)
    assert {g.reported: g.forks for g in split.groups} == {("p.B.noisy",): 2, ("p.B.steady",): 1}
    # A benchmark without a plan in a group runs the command's own forks: none set.
    split = split_invocation(both, [p for p in planned.plans if p.benchmark.endswith("steady")], known=["p.B.noisy"])
    assert {g.reported: g.forks for g in split.groups} == {("p.B.noisy",): None, ("p.B.steady",): 1}
    groups = invocation_groups(both, planned.plans)
    assert sorted(g.forks for g in groups) == [1, 2]


def test_a_tool_layout_prices_the_forks_a_group_asks_for():
    cost = ToolCost("jmh", {"a": ToolTiming(2, 0.2, 0.01)}, StartCost(0.5, 0.3, 2, 1.1, 3))
    one = layout_seconds([Group(3, 5, ("a",), forks=1)], cost, warmup=1, per_invocation=0.5, per_process=0.3)
    assert one == pytest.approx(3 * (0.5 + 1 * (0.1 + 0.3 + (1 + 5) * 0.01)))
    assert cost.fork_fixed_iterations("a") == (pytest.approx(0.5 * 2 / 2 / 0.01), pytest.approx((0.1 + 0.3) / 0.01))
    run, fork = cost.fork_fixed_iterations("a")
    assert run + 2 * fork == pytest.approx(cost.fixed_iterations("a"))


def test_show_plans_says_a_plans_forks(tmp_path, capsys):
    db = tmp_path / "s.db"
    with Store(db) as s:
        _forked_campaign(s, {"p.B.steady": STEADY})
        derive_plans(s, specs=[_jmh_spec(READS_FORKS)])
    assert main(["--store", str(db), "show", "--plans", "--format", "json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert (shown["forks"], shown["full_forks"]) == (1, 2) and shown["fork_overhead"] > 0
    assert main(["--store", str(db), "show", "--plans"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{shown['runs']} x 1 fork x {shown['iterations']}" in out and "4 x 2 forks x 10" in out
    assert "a fork" in out


def test_a_tool_whose_start_is_not_measured_is_priced_at_its_full_forks_either_way():
    # One benchmark said nothing of its timing: iterations alone, in each of the forks the tool
    # said of the others' runs; a group at the full campaign's forks costs the full configuration.
    cost = ToolCost("jmh", {"a": ToolTiming(4, 0.4, 0.01)}, None, "not measured")
    kw = dict(warmup=0, per_invocation=0.0, per_process=0.0, measured=False)
    whole = layout_seconds([Group(4, 10, ("a",))], cost, **kw)
    assert whole == pytest.approx(4 * 4 * 10)
    assert layout_seconds([Group(4, 10, ("a",), forks=4)], cost, **kw) == pytest.approx(whole)
    assert layout_seconds([Group(4, 10, ("a",), forks=1)], cost, **kw) == pytest.approx(whole / 4)


def test_a_plan_at_its_full_forks_shares_the_invocation_of_a_benchmark_without_a_plan(store):
    # The noisy plan is its full configuration, 2 forks: what the command runs unset.  It shares
    # one invocation with the benchmark without a plan at the same runs and iterations (the
    # command's own forks), rather than paying the tool's start once more each run.
    _forked_campaign(store, {"p.B.noisy": NOISY, "p.B.other": NOISY, "p.B.steady": STEADY})
    spec = _jmh_spec('java -jar b.jar "${REGBENCH_SELECT:-.}" -f "${REGBENCH_FORKS:-2}"')
    derive_plans(store, specs=[spec])
    mine = [p for p in plans_for_campaign(store, ["jmh"], machine="m").plans if not p.benchmark.endswith("other")]
    split = split_invocation(spec, mine, known=["p.B.other"])
    assert {g.reported: g.forks for g in split.groups} == {("p.B.noisy", "p.B.other"): None, ("p.B.steady",): 1}


#: A stand-in JMH that honours -f: what it writes is JMH 1.37's JSON, each fork's iterations.
FAKE_JMH = r'''
import json, os, random, re, sys
out, select, forks = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = int(os.environ["REGBENCH_ITERATIONS"])
rng = random.Random(int(os.environ["REGBENCH_RUN_INDEX"]) * 7919 + len(os.environ["REGBENCH_VERSION"]))
entries = []
for name, spread in {"p.B.a": 0.0005, "p.B.c": 0.4}.items():
    if re.search(select, name):
        raw = [[1 + rng.gauss(0, spread) for _ in range(n)] for _ in range(forks)]
        entries.append({"jmhVersion": "1.37", "benchmark": name, "mode": "avgt", "threads": 1, "forks": forks,
                        "warmupIterations": 1, "warmupTime": "200 ms", "warmupBatchSize": 1,
                        "measurementIterations": n, "measurementTime": "1 ms", "measurementBatchSize": 1,
                        "params": {}, "primaryMetric": {"score": 1.0, "scoreUnit": "us/op", "rawData": raw}})
json.dump(entries, open(out, "w"))
'''


def _stand_in_toml(forks_arg: str, *, select: bool) -> str:
    sel = '"${REGBENCH_SELECT:-.}"' if select else "."
    command = ["sh", "-c", f'exec "$0" jmh.py {{output}} {sel} {forks_arg}', sys.executable]
    return ('[project]\nname = "p"\n[defaults]\nruns = 4\niterations = 6\nwarmup = 0\n\n[[benchmark]]\n'
            f'name = "jmh"\nformat = "jmh"\ncommand = {json.dumps(command)}\n')


def _stand_in_repo(tmp_path: Path, forks_arg: str, *, select: bool) -> tuple[Path, list[str]]:
    repo = tmp_path / "proj"
    git_init(repo)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"jmh.py": FAKE_JMH, "regbench.toml": _stand_in_toml(forks_arg, select=select)}, "one",
               when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    return repo, ["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml")]


def test_a_campaign_records_a_plans_forks_only_where_the_command_got_them(tmp_path, capsys):
    repo, args = _stand_in_repo(tmp_path, '"${REGBENCH_FORKS:-2}"', select=False)
    assert main([*args, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "1"]) == 0
    capsys.readouterr()
    assert main([*args, "optimize", "--metric", "rmad", "--threshold", "0.05", "--format", "json"]) == 0
    plans = {p["benchmark"]: p for p in json.loads(capsys.readouterr().out)["derived"]}
    assert (plans["jmh/p.B.a"]["forks"], plans["jmh/p.B.a"]["full_forks"]) == (1, 2)
    # The command now sets its own forks: they run, and the campaign does not claim the plan's.
    # (--keep-old-runs: the edit does not change what is measured, so the plans stay current; without
    # it the edited benchmark's plans are stale and it runs at full configuration, test_optimize_edited.)
    (repo / "regbench.toml").write_text(_stand_in_toml("2", select=False))
    assert main([*args, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "2",
                 "--keep-old-runs"]) == 0
    with Store(repo / "s.db") as s:
        last = max(s.campaigns(), key=lambda c: c.id)
        ran = {t.timing.processes for t in s.run_tools(benchmarks=["jmh/p.B.a"])
               if t.version == last.plan["versions"][0] and t.timing is not None}
    assert ran == {2} and "forks" not in last.plan["optimized"]["jmh/p.B.a"]


def test_show_plans_says_each_invocations_forks(tmp_path, capsys):
    repo, args = _stand_in_repo(tmp_path, '"${REGBENCH_FORKS:-2}"', select=True)
    assert main([*args, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "1"]) == 0
    assert main([*args, "optimize", "--metric", "rmad", "--threshold", "0.05"]) == 0
    assert main([*args, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "2"]) == 0
    with Store(repo / "s.db") as s:
        last = max(s.campaigns(), key=lambda c: c.id)
        groups = {tuple(g["benchmarks"]): g.get("forks") for g in last.plan["split"]["jmh"]["groups"]}
        ran = {t.benchmark: t.timing.processes for t in s.run_tools(prefix="jmh/")
               if t.version == last.plan["versions"][0] and t.timing is not None}
    assert groups == {("p.B.a",): 1, ("p.B.c",): 2} and ran == {"jmh/p.B.a": 1, "jmh/p.B.c": 2}
    capsys.readouterr()
    assert main([*args, "show", "--plans"]) == 0
    table = capsys.readouterr().out.split("Tool invocations")[1]
    assert "REGBENCH_FORKS" in table and re.search(r"\^\(p\\.B\\.a\)\$\s+1\s+p\.B\.a", table), table


# --- the real JMH, -f 2 --------------------------------------------------------------------------------

LIVE_DIR = Path(tempfile.gettempdir()) / "regbench-live-jmh-forks"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None,
                    reason="needs Maven (mvn) and java on PATH to build and run the JMH project")
@pytest.mark.parametrize("forks_arg", ["2", '"${REGBENCH_FORKS:-2}"'], ids=["own-forks", "regbench-forks"])
def test_a_plan_of_a_two_fork_jmh_benchmark_measures_what_it_was_simulated_with(tmp_path, capsys, forks_arg):
    proj = LIVE_DIR / "proj"
    shutil.copytree(GOLDEN / "src", proj, dirs_exist_ok=True)
    subprocess.run(["mvn", "-q", "-B", "package", "-DskipTests"], cwd=proj, check=True,
                   capture_output=True, timeout=240)
    classpath = f"{proj / 'target' / 'classes'}{os.pathsep}{proj / 'target' / 'lib'}/*"
    # -Djmh.ignoreLock: the suite's two workers may run two live JMH tests at once.
    command = ["sh", "-c", 'exec java -Djmh.ignoreLock=true -cp "$0" org.openjdk.jmh.Main regbench.golden.SumBench -f ' + forks_arg + ' -wi 1 -w 50ms '
               '-r 50ms -i "$REGBENCH_ITERATIONS" -p size=100000 -bm avgt -rf json -rff {output}', classpath]
    repo = tmp_path / "proj"
    git_init(repo)
    text = ('[project]\nname = "p"\n[defaults]\nruns = 3\niterations = 4\nwarmup = 0\n\n[[benchmark]]\n'
            f'name = "jmh"\nformat = "jmh"\ntimeout = 120\ncommand = {json.dumps(command)}\n')
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    args = ["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml")]

    assert main([*args, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "1"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    # A threshold no configuration misses on a robust metric (at 0.5, a suite run beside this
    # test once slowed a fork enough that 1 fork of 2 iterations was not under it): the plan is
    # the cheapest configuration, so that what reaches -i (and -f) differs from the full campaign's.
    assert main([*args, "optimize", "--metric", "rmad", "--threshold", "0.99", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    name = "jmh/regbench.golden.SumBench.sum(size=100000)"
    (plan,) = [p for p in doc["derived"] if p["benchmark"] == name]
    assert (plan["full_runs"], plan["full_iterations"], plan["full_forks"]) == (3, 4, 2)
    # Where the command reads REGBENCH_FORKS a fork is a level: one JVM a run is enough at this
    # threshold and cheaper (each fork starts a JVM and warms up); otherwise both are kept.
    forks = 1 if "REGBENCH_FORKS" in forks_arg else 2
    if forks == 1:  # each fork priced (its JVM's start and JMH's warm-up): fewer forks are cheaper
        assert plan["fork_overhead"] is not None and plan["fork_overhead"] > 0, (plan, doc["notes"])
    assert plan["forks"] == forks, (plan, doc["notes"], doc["suite"])
    assert plan["runs"] * forks * plan["iterations"] < 3 * 2 * 4, plan
    assert main([*args, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "2"]) == 0
    capsys.readouterr()
    with Store(repo / "s.db") as s:
        full, planned = sorted({r.campaign_id for r in s.runs()})
        tools = {(t.version, t.run_index): t.timing for t in s.run_tools(benchmarks=[name])}
        runs = [r for r in s.runs(benchmark=name) if r.status == "ok"]
        # Every run is JMH's forks of -i = REGBENCH_ITERATIONS iterations: the full campaign's
        # 2 x 4, the plan's forks x its iterations, the measurements its simulation kept per run.
        assert {tools[(r.version, r.run_index)].processes for r in runs if r.campaign_id == full} == {2}
        assert {tools[(r.version, r.run_index)].processes for r in runs if r.campaign_id == planned} == {forks}
        assert sorted(r.n_samples for r in runs if r.campaign_id == full) == [2 * 4] * 3
        assert sorted(r.n_samples for r in runs if r.campaign_id == planned) == \
            [forks * plan["iterations"]] * plan["runs"]
