"""The duration level of optimized plans (Japke et al. 2025, s.2 and s.3.1): a Python benchmark's
iterations timed as slices, kept beside its runs, simulated shorter by ``regbench optimize``
(checked against a brute force written independently), and run shorter by ``run --plan
optimized``; with real worker processes, real git and a real store."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as st

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import ConfigError
from regbench.model import RunRecord
from regbench.optimize.algorithm import Configuration, minimal_configuration
from regbench.run.execute import WORKER
from regbench.store import Store

PY = sys.executable


# ---------------------------------------------------------------------------- the algorithm
def brute_force(sl: np.ndarray, warmup: int, threshold: float, min_runs: int):
    """Every (r, i, d), written from the paper's description alone: a run's slices are timed one
    after another; a run of ``w`` warm-up iterations (as long as the full configuration's, ``w D``
    slices) and ``i`` iterations of ``d`` slices measures each next ``d`` slices as one iteration;
    it costs ``w + i d / D`` iterations of the full configuration's length.  RMAD by scipy.  A
    duration whose median over every run and iteration is more than the threshold away from the
    full configuration's is not offered, nor a count of iterations whose first ones, of every
    run at full length, have a median that far away (a warm-up not over), nor a configuration
    whose own median is that far away."""
    runs, total, n = sl.shape
    first = warmup * n

    def values(r, i, d):
        return [sl[k].ravel()[first + j * d: first + (j + 1) * d].mean() for k in range(r) for j in range(i)]

    full = np.median(values(runs, total - warmup, n))
    best = None
    for r, i, d in itertools.product(range(min_runs, runs + 1), range(1, total - warmup + 1), range(1, n + 1)):
        if r * i < 3 or abs(np.median(values(runs, total - warmup, d)) - full) > threshold * full:
            continue
        if i < total - warmup and abs(np.median(values(runs, i, n)) - full) > threshold * full:
            continue
        values_ = values(r, i, d)
        if abs(np.median(values_) - full) > threshold * full:
            continue  # its own result off the full configuration's
        rmad = st.median_abs_deviation(values_, scale=1.0) / np.median(values_)
        if rmad <= threshold:
            key = (r * (warmup + i * d / n), rmad, (r, i, d))
            best = min(best, key) if best else key
    return best[2] if best else (runs, total - warmup, n)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_duration_level_agrees_with_a_brute_force(seed):
    rng = np.random.default_rng(seed)
    runs, warmup, iters, n = 4, 1, 5, 4
    # Random initial conditions per run, slice noise of varying size, a slow warm-up and a slow
    # start of the measured iterations (a warm-up longer than the one configured).
    sl = 100 * (1 + rng.normal(0, 0.004, (runs, 1, 1))) * (1 + rng.normal(0, [0.002, 0.01, 0.03][seed - 1],
                                                                           (runs, warmup + iters, n)))
    sl[:, 0, :] *= 1.3
    sl[:, 1, :2] *= 1.1
    samples = sl[:, warmup:, :].mean(axis=2)
    for threshold, min_runs in [(0.01, 1), (0.005, 2), (0.02, 2)]:
        found = minimal_configuration(samples, warmup=warmup, metric="rmad", threshold=threshold,
                                      min_runs=min_runs, slices=sl)
        c = found.chosen.configuration
        assert (c.runs, c.iterations, c.slices) == brute_force(sl, warmup, threshold, min_runs)
        assert c.full_slices == n and found.full.configuration == Configuration(runs, iters, n, n)
        assert found.chosen.cost == pytest.approx(c.runs * (warmup + c.iterations * c.slices / n))
        assert found.full.result == pytest.approx(np.median(samples))
        assert all(d < n for d in found.shifted) and c.slices not in found.shifted


def test_stable_iterations_are_shortened_and_a_slow_start_keeps_them_long():
    rng = np.random.default_rng(7)
    runs, warmup, iters, n = 4, 1, 6, 5
    sl = 50 * (1 + rng.normal(0, 0.001, (runs, warmup + iters, n)))
    samples = sl[:, warmup:, :].mean(axis=2)
    quiet = minimal_configuration(samples, warmup=warmup, metric="rmad", threshold=0.01, min_runs=2, slices=sl)
    # Without slices the least is 2 runs x 2 iterations of full length, 2 x (1 + 2) = 6; with
    # them, 2 x 2 iterations of one slice after the same warm-up: 2 x (1 + 2 / 5) = 2.8.
    assert quiet.chosen.configuration == Configuration(2, 2, 1, 5)
    assert quiet.chosen.cost == pytest.approx(2.8)
    without = minimal_configuration(samples, warmup=warmup, metric="rmad", threshold=0.01, min_runs=2)
    assert without.chosen.cost == 6 and quiet.time_share < without.time_share
    # Every run 40% slower for its first 5 slices (a JIT, a cache filling), the warm-up iteration
    # of the full configuration: iterations of one slice after a warm-up of one slice would
    # measure the slow start, stably (RMAD cannot see it), 40% off.  The warm-up keeps its length.
    slow = sl.copy()
    slow.reshape(runs, -1)[:, :5] *= 1.4
    found = minimal_configuration(slow[:, warmup:, :].mean(axis=2), warmup=warmup, metric="rmad", threshold=0.01,
                                  min_runs=2, slices=slow)
    assert found.chosen.configuration == Configuration(2, 2, 1, 5) and found.change_rate < 0.01


def test_a_duration_that_moves_the_result_is_refused():
    """Right-skewed interference: one slice in five 30% slow.  Iterations of one slice are stable
    around the floor (their median dodges the bursts), full-length ones around the mean of the
    floor and one burst: 6% apart, beyond a 1% threshold, so one-slice iterations are refused
    although their RMAD is under it; on the mean (CV) the duration moves nothing."""
    rng = np.random.default_rng(3)
    runs, warmup, iters, n = 4, 1, 6, 5
    sl = 10 * (1 + rng.normal(0, 0.001, (runs, warmup + iters, n)))
    sl[:, :, 2] *= 1.3
    samples = sl[:, warmup:, :].mean(axis=2)
    found = minimal_configuration(samples, warmup=warmup, metric="rmad", threshold=0.01, min_runs=2, slices=sl)
    assert 1 in found.shifted and found.chosen.configuration.slices not in found.shifted
    one = next(s for s in found.scored if s.configuration == Configuration(2, 2, 1, 5))
    assert one.stability <= 0.01  # stable, and 6% off
    assert abs(one.result - found.full.result) / found.full.result > 0.05
    assert found.change_rate <= 0.01


def test_bad_slices_name_the_problem():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"`slices` must be a \(runs, warmup \+ iterations, slices\) array"):
        minimal_configuration(x, warmup=1, slices=np.ones((3, 4, 2)))  # the warm-up's slices are missing
    with pytest.raises(ValueError, match="of finite numbers"):
        minimal_configuration(x, slices=np.full((3, 4, 2), np.nan))


# ---------------------------------------------------------------------------- the worker and the store
def test_the_worker_times_each_iteration_as_slices(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    return sum(range(50))\n")
    out = tmp_path / "out.jsonl"
    done = subprocess.run([PY, str(WORKER), "m:f", "--iterations", "3", "--warmup", "1", "--min-time", "0.004",
                           "--slices", "4", "--output", str(out), "--path", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4 and all(len(line["slices"]) == 4 for line in lines)
    assert all(line["value"] == pytest.approx(np.mean(line["slices"]), rel=1e-12) for line in lines)
    # A plan's shorter iterations: warm-up batches of the full campaign's 4 slices, measured ones of 2.
    done = subprocess.run([PY, str(WORKER), "m:f", "--iterations", "3", "--warmup", "2", "--min-time", "0.002",
                           "--slices", "2", "--warmup-slices", "4", "--output", str(out), "--path", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [len(json.loads(line)["slices"]) for line in out.read_text().splitlines()] == [4, 4, 2, 2, 2]
    bad = subprocess.run([PY, str(WORKER), "m:f", "--iterations", "3", "--slices", "0", "--output", str(out)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--slices and --warmup-slices >= 1" in bad.stderr


def test_slices_are_stored_with_their_runs_or_not_at_all(store):
    sl = np.arange(12.0).reshape(3, 4) + 1
    store.add_runs([RunRecord("b", "v1", 0, sl.mean(axis=1), slices=sl), RunRecord("b", "v1", 1, np.ones(3))])
    got = store.run_slices("b", "v1", config="default", machine="local")
    assert list(got) == [0] and np.array_equal(got[0], sl)
    with pytest.raises(ValueError, match=r"`slices` must be a \(samples, slices\) array, got shape \(2, 4\)"):
        store.add_runs([RunRecord("b", "v1", 2, np.ones(3), slices=np.ones((2, 4)))])
    assert len(store.runs(benchmark="b")) == 2  # the run of the bad slices was not written either


# ---------------------------------------------------------------------------- configuration
def _config(tmp_path: Path, body: str):
    (tmp_path / "regbench.toml").write_text("[project]\nname = \"p\"\n" + body)
    return load_config(tmp_path / "regbench.toml")


def test_slices_is_a_positive_integer_of_python_benchmarks(tmp_path):
    cfg = _config(tmp_path, "[defaults]\nslices = 3\n[[benchmark]]\nname = \"a\"\npython = \"m:f\"\n"
                            "[[benchmark]]\nname = \"c\"\ncommand = [\"true\"]\n")
    assert [b.slices for b in cfg.benchmarks] == [3, 1]  # [defaults] is for the Python ones
    with pytest.raises(ConfigError, match=r"regbench.toml: \[\[benchmark\]\] #1 \('c'\): `slices` is for Python benchmarks"):
        _config(tmp_path, "[[benchmark]]\nname = \"c\"\ncommand = [\"true\"]\nslices = 2\n")
    with pytest.raises(ConfigError, match="`slices` must be a positive integer, got 0"):
        _config(tmp_path, "[[benchmark]]\nname = \"a\"\npython = \"m:f\"\nslices = 0\n")
    with pytest.raises(ConfigError, match="`slices` must be a positive integer of at most 100"):
        _config(tmp_path, "[[benchmark]]\nname = \"a\"\npython = \"m:f\"\nslices = 500\n")


# ---------------------------------------------------------------------------- end to end
def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_optimize_shortens_the_iterations_and_run_uses_the_plan(tmp_path, capsys):
    repo = tmp_path / "proj"
    git_init(repo)
    text = ("[project]\nname = \"p\"\n[defaults]\nruns = 4\niterations = 5\nwarmup = 1\n"
            "[[benchmark]]\nname = \"sq\"\npython = \"bench:work\"\nmin_time = 0.004\nslices = 4\n")
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"bench.py": "def work():\n    return sum(i * i for i in range(200))\n",
                      "regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "3", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        first = s.versions()[0].name
        runs = s.raw_runs("sq", first)
        kept = s.run_slices("sq", first, config="default", machine="m")
        assert sorted(kept) == [r.run_index for r in runs] == [0, 1, 2, 3]
        for r in runs:  # every iteration (warm-up included) as 4 slices whose mean is its sample
            assert kept[r.run_index].shape == (6, 4)
            assert np.allclose(kept[r.run_index].mean(axis=1), r.samples, rtol=1e-9)
    # A loose threshold: the cheapest configurations, of one-slice iterations, are under it
    # (RMAD, robust to the shared machine's bursts, of at least 3 one-millisecond slices).
    rc, out, err = _cli(repo, "optimize", "--metric", "rmad", "--threshold", "0.9", "--format", "json",
                        capsys=capsys)
    assert rc == 0, err
    [plan] = json.loads(out)["derived"]
    assert plan["full_slices"] == 4 and plan["slices"] == 1, plan
    d = plan["slices"]
    # Priced as r (w + i d / N) against R (w + I) iterations (one run length stored: no fixed cost).
    assert plan["run_overhead"] == 0.0
    assert plan["seconds"] / plan["full_seconds"] == pytest.approx(
        plan["runs"] * (1 + plan["iterations"] * d / 4) / (4 * (1 + 5)))
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and f"{plan['runs']} x {plan['iterations']} (+1), 1/4 long" in out
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "5",
                      capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        last = max(s.campaigns(), key=lambda c: c.id)
        assert last.plan["benchmarks"]["sq"]["min_time"] == pytest.approx(0.004 * d / 4)
        assert last.plan["benchmarks"]["sq"]["slices"] == d
        assert last.plan["optimized"]["sq"]["slices"] == d and last.plan["optimized"]["sq"]["full_slices"] == 4
        head = s.versions()[-1].name
        assert [r.n_samples for r in s.raw_runs("sq", head)] == [1 + plan["iterations"]] * plan["runs"]
        # A plan's run of shortened iterations keeps no slices: nothing is simulated from it.
        assert s.run_slices("sq", head, config="default", machine="m") == {}


# ---------------------------------------------------------------------------- applying a plan
def _plans(d: int, n: int):
    from regbench.optimize.plans import CampaignPlans

    return CampaignPlans({"a": 2}, {"a": 3}, (), (), {"a": (d, n)})


def test_a_plan_shortens_the_iterations_and_keeps_the_warm_up_long(tmp_path):
    from regbench.optimize.plans import planned_spec
    from regbench.run.execute import _argv

    cfg = _config(tmp_path, "[[benchmark]]\nname = \"a\"\npython = \"m:f\"\nmin_time = 0.01\nslices = 5\n"
                            "warmup = 2\nruns = 6\niterations = 10\n")
    spec = cfg.benchmarks[0]
    got = planned_spec(spec, _plans(2, 5))
    assert (got.runs, got.iterations, got.slices, got.warmup_slices, got.warmup) == (2, 3, 2, 5, 2)
    assert got.min_time == pytest.approx(0.004)
    argv = _argv(got, tmp_path, PY, tmp_path / "s.jsonl", tmp_path / "r")
    assert argv[argv.index("--slices") + 1] == "2" and argv[argv.index("--warmup-slices") + 1] == "5"
    assert argv[argv.index("--min-time") + 1] == repr(0.004)
    # The full campaign's runs: every iteration, warm-up included, of 5 slices.
    argv = _argv(spec, tmp_path, PY, tmp_path / "s.jsonl", tmp_path / "r")
    assert argv[argv.index("--slices") + 1] == "5" and "--warmup-slices" not in argv
    # Configured since with other slices, or with warm-ups found per run: the plan's runs and
    # iterations, at the configured length.
    for body in ("slices = 3\nwarmup = 2\n", "slices = 5\nwarmup = \"auto\"\n"):
        other = _config(tmp_path, "[[benchmark]]\nname = \"a\"\npython = \"m:f\"\nmin_time = 0.01\n" + body)
        got = planned_spec(other.benchmarks[0], _plans(2, 5))
        assert (got.runs, got.iterations, got.min_time, got.warmup_slices) == (2, 3, 0.01, 0)
        assert got.slices == other.benchmarks[0].slices


def test_a_run_of_shortened_iterations_counts_at_their_length(store):
    from regbench.optimize.plans import run_lengths

    full = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    planned = store.start_campaign(seed=2, machine="m", fingerprint={}, command="x",
                                   plan={"optimized": {"b": {"runs": 2, "iterations": 4, "slices": 1,
                                                             "full_slices": 4}}})
    store.add_runs([RunRecord("b", "v1", 0, np.ones(11), machine="m", warmup=1, campaign_id=full),
                    RunRecord("b", "v2", 0, np.ones(5), machine="m", warmup=1, campaign_id=planned),
                    RunRecord("c", "v2", 0, np.ones(5), machine="m", warmup=1, campaign_id=planned)])
    runs = sorted(store.runs(), key=lambda r: (r.benchmark, r.version))
    # b at v1: 1 + 10; b at v2: 1 + 4 x 1/4; c has no plan of shorter iterations: 1 + 4.
    assert run_lengths(store, runs) == [11.0, 2.0, 5.0]


def test_slices_that_cannot_be_used_are_said_so(store):
    from regbench.optimize.plans import OptimizeOptions, derive_plans

    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    rng = np.random.default_rng(1)
    records = []
    for k in range(4):
        sl = 1 + rng.normal(0, 0.001, (6, 4))
        records.append(RunRecord("b", "v1", k, sl.mean(axis=1), machine="m", warmup=1, campaign_id=cid,
                                 slices=sl if k < 3 else None, duration=1.0))
    store.add_runs(records)
    store.finish_campaign(cid, "finished")
    result = derive_plans(store, options=OptimizeOptions(metric="rmad", n_resamples=100))
    [derived] = result.derived
    assert derived.plan.slices is None and derived.minimal.chosen.configuration.full_slices == 1
    assert result.notes == ("b: its slices were not used, 1 of its 4 ok runs have no slices (`slices` changed "
                            "during the campaign?): runs and iterations reduced only",)
