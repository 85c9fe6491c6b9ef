"""Bad and edge-case inputs of the duration level (`slices`): the configuration key, the worker's
options, the slices a run writes, the algorithm's arrays, the store's slices and plans that no
longer fit the configuration.  Every bad input is a one-line error naming where and what, with
nothing written; a benchmark that fails or writes bad slices is a result.  Real worker
processes, real git, real SQLite stores."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import ConfigError
from regbench.model import RunRecord
from regbench.optimize.algorithm import Configuration, choose, minimal_configuration, simulated
from regbench.run.execute import WORKER, read_slices
from regbench.store import Store

PY = sys.executable
PYTHON_BENCH = "[[benchmark]]\nname = \"a\"\npython = \"m:f\"\n"
COMMAND_BENCH = "[[benchmark]]\nname = \"c\"\ncommand = [\"true\"]\n"


def _config(tmp_path: Path, body: str):
    (tmp_path / "regbench.toml").write_text("[project]\nname = \"p\"\n" + body)
    return load_config(tmp_path / "regbench.toml")


# ---------------------------------------------------------------------------- the configuration key
@pytest.mark.parametrize(("value", "shown"), [
    ("0", "got 0"), ("-3", "got -3"), ("2.5", "got 2.5"), ("4.0", "got 4.0"), ('"3"', "got '3'"),
    ("true", "got true"), ("nan", "got nan"), ("[2]", r"got \[2\]"), ("101", "of at most 100, got 101"),
])
def test_a_bad_slices_names_the_benchmark_and_the_value(tmp_path, value, shown):
    with pytest.raises(ConfigError, match=rf"regbench.toml: \[\[benchmark\]\] #1 \('a'\) `slices` must be a "
                                          rf"positive integer.*{shown}$"):
        _config(tmp_path, PYTHON_BENCH + f"slices = {value}\n")


def test_slices_of_one_and_of_a_hundred_are_accepted(tmp_path):
    assert _config(tmp_path, PYTHON_BENCH + "slices = 1\n").benchmarks[0].slices == 1
    assert _config(tmp_path, PYTHON_BENCH + "slices = 100\n").benchmarks[0].slices == 100
    # Found per run, the warm-up is not sliced apart from the iterations: accepted, and optimize
    # says it does not use such slices (docs/optimize.md "Limits").
    auto = _config(tmp_path, PYTHON_BENCH + "slices = 4\nwarmup = \"auto\"\n").benchmarks[0]
    assert (auto.slices, auto.warmup_auto) == (4, True)


@pytest.mark.parametrize("value", ["1", "2", "0", "\"x\"", "101"])
@pytest.mark.parametrize("fmt", ["", "format = \"hyperfine\"\n"])
def test_slices_on_a_command_benchmark_is_an_error_whatever_its_value(tmp_path, value, fmt):
    # slices = 1 was accepted and did nothing; slices = 0 said "must be a positive integer", as
    # if a positive one would do.
    with pytest.raises(ConfigError, match=r"regbench.toml: \[\[benchmark\]\] #1 \('c'\): `slices` is for Python "
                                          r"benchmarks \(`python = ...`\)"):
        _config(tmp_path, COMMAND_BENCH + fmt + f"slices = {value}\n")


def test_a_defaults_slices_is_checked_and_left_to_the_python_benchmarks(tmp_path):
    cfg = _config(tmp_path, "[defaults]\nslices = 5\n" + COMMAND_BENCH)
    assert cfg.benchmarks[0].slices == 1
    with pytest.raises(ConfigError, match=r"regbench.toml: \[defaults\] `slices` must be a positive integer, got 0$"):
        _config(tmp_path, "[defaults]\nslices = 0\n" + COMMAND_BENCH)


def test_slices_that_would_overflow_max_samples_are_refused(tmp_path):
    body = PYTHON_BENCH + "iterations = 30\nwarmup = 2\nmax_samples = 1000\n"
    assert _config(tmp_path, body + "slices = 31\n").benchmarks[0].slices == 31  # 992 numbers a run
    with pytest.raises(ConfigError, match=r"\('a'\): `slices` x \(`warmup` \+ `iterations`\) \(1056\) is more than "
                                          r"`max_samples` \(1000\): every run would keep too many slices$"):
        _config(tmp_path, body + "slices = 33\n")


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_run_with_a_bad_slices_writes_nothing(tmp_path, capsys):
    repo = tmp_path / "proj"
    git_init(repo)
    git_commit(repo, {"m.py": "def f():\n    return 1\n",
                      "regbench.toml": "[project]\nname = \"p\"\n" + COMMAND_BENCH + "slices = 2\n"},
               "one", when=datetime(2024, 1, 1, tzinfo=UTC))
    rc, out, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", capsys=capsys)
    assert rc == 3 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and "`slices` is for Python benchmarks" in err
    assert "Traceback" not in err and not (repo / "s.db").exists()


# ---------------------------------------------------------------------------- the worker
@pytest.mark.parametrize(("args", "message"), [
    (["--slices", "3", "--min-time", "inf"], "--min-time > 0 and finite"),  # calibrated 2**32 calls
    (["--slices", "1001"], "--slices and --warmup-slices must be at most 1000"),
    (["--warmup", "1", "--warmup-slices", "100000"], "--slices and --warmup-slices must be at most 1000"),
])
def test_the_worker_refuses_options_that_never_end(tmp_path, args, message):
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    done = subprocess.run([PY, str(WORKER), "m:f", "--iterations", "2", "--min-time", "0.001",
                           "--output", str(tmp_path / "o.jsonl"), "--path", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and message in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("regbench-worker: error:")
    assert not (tmp_path / "o.jsonl").exists()


# ---------------------------------------------------------------------------- the slices a run writes
def _line(value, slices) -> str:
    return json.dumps({"value": value, "loops": 8, "slices": slices})


@pytest.mark.parametrize("text", [
    '{"value": 1.0, "loops": 8, "slices": [' + "9" * 400 + ", 1]}",  # raised OverflowError
    _line(1.0, ["1", "1"]),            # strings were read as numbers
    _line(1.0, [True, True]),          # booleans too
    _line(1.0, [1.0]),                 # fewer slices than configured
    _line(1.0, [1.0, 1.0, 1.0]),       # more
    _line(1.0, [[1.0], 1.0]),
    _line(1.0, [0.5, 1.7]),            # their mean is not the sample
    _line(1.0, [1.0, 1.0]) + "\n" + _line(1.0, [1.0, 1.0]),  # more lines than samples
    '{"value": 1.0, "loops": 8}',      # no slices
    "\xff\xfe",
])
def test_slices_the_worker_did_not_write_are_dropped_without_an_exception(tmp_path, text):
    path = tmp_path / "samples.jsonl"
    path.write_text(text + "\n", encoding="utf-8", errors="surrogateescape")
    assert read_slices(path, np.array([1.0]), 2) is None


def test_slices_that_are_the_samples_are_read(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text(_line(1.0, [0.5, 1.5]) + "\n\n" + _line(2.0, [2, 2]) + "\n")
    assert np.array_equal(read_slices(path, np.array([1.0, 2.0]), 2), [[0.5, 1.5], [2.0, 2.0]])
    assert read_slices(tmp_path / "gone.jsonl", np.array([1.0]), 2) is None


#: A benchmark that fails part-way through run 3 of the first version (at its 20th call, which
#: every run makes: 5 batches of 4 slices of at least one call, after calibrating), and in the
#: second version writes 3 slices of 4 in run 2 and integers too large for a float in run 3 (it
#: patches what the worker writes its lines with: a benchmark process is untrusted).
FAULTY = '''\
import json, os

RUN = os.environ.get("REGBENCH_RUN_INDEX")
VERSION = {version}
calls = 0


def work():
    global calls
    calls += 1
    if VERSION == 1 and RUN == "3" and calls == 20:
        raise RuntimeError("boom in the middle of a run")
    return sum(i * i for i in range(300))


_dumps = json.dumps


def dumps(obj, *args, **kwargs):
    if VERSION == 2 and isinstance(obj, dict) and "slices" in obj:
        if RUN == "2":
            obj = dict(obj, slices=obj["slices"][:-1])
        elif RUN == "3":
            obj = dict(obj, slices=[10**400] * len(obj["slices"]))
    return _dumps(obj, *args, **kwargs)


json.dumps = dumps
'''

TOML = ("[project]\nname = \"p\"\n[defaults]\nruns = 4\niterations = 4\nwarmup = 1\n"
        "[[benchmark]]\nname = \"sq\"\npython = \"bench:work\"\nmin_time = 0.002\nslices = {slices}\n")


def test_a_failing_run_and_bad_slices_are_results_and_optimize_says_what_it_used(tmp_path, capsys):
    repo = tmp_path / "proj"
    git_init(repo)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"bench.py": FAULTY.format(version=1), "regbench.toml": TOML.format(slices=4)}, "one", when=when)
    git_commit(repo, {"bench.py": FAULTY.format(version=2)}, "two", when=when + timedelta(days=1))
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1,HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 4 and "Traceback" not in err, err  # 4: a run failed  # the too large integers crashed the campaign
    assert "7 ok, 1 failed" in out and "RuntimeError: boom in the middle of a run" in out
    with Store(repo / "s.db") as s:
        one, two = (v.name for v in s.versions())
        assert [r.status for r in s.raw_runs("sq", one)] == ["ok", "ok", "ok", "failed"]
        assert sorted(s.run_slices("sq", one, config="default", machine="m")) == [0, 1, 2]
        # Runs 2 and 3 of the second version are ok: only their slices were not kept.
        assert [r.status for r in s.raw_runs("sq", two)] == ["ok"] * 4
        assert sorted(s.run_slices("sq", two, config="default", machine="m")) == [0, 1]
    # The first version: a failed run is left out, the 3 ok runs' slices are used.
    rc, out, err = _cli(repo, "optimize", "--version", one, "--metric", "rmad", "--threshold", "0.9",
                        "--format", "json", capsys=capsys)
    assert rc == 0, err
    got = json.loads(out)
    [plan] = got["derived"]
    assert plan["full_runs"] == 3 and plan["full_slices"] == 4 and got["notes"] == []
    # The second version: 2 of its 4 ok runs have no slices: runs and iterations only, said once.
    rc, out, err = _cli(repo, "optimize", "--version", two, "--refresh", "--metric", "rmad", "--threshold", "0.9",
                        "--format", "json", capsys=capsys)
    assert rc == 0, err
    got = json.loads(out)
    [plan] = got["derived"]
    assert plan["slices"] is None and plan["full_slices"] is None and plan["full_runs"] == 4
    assert got["notes"] == ["sq: its slices were not used, 2 of its 4 ok runs have no slices (`slices` changed "
                            "during the campaign?): runs and iterations reduced only"]
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and "long" not in out


# ---------------------------------------------------------------------------- the algorithm
def test_a_configuration_that_does_not_fit_the_slices_is_refused():
    x = np.ones((3, 4))
    sl = np.ones((3, 5, 4))
    # Each was cut from the slices at the wrong places, or none, without a word.
    for c in (Configuration(2, 2, 5, 4), Configuration(2, 2, 0, 4), Configuration(2, 2, -1, 4),
              Configuration(0, 2, 1, 4)):
        with pytest.raises(ValueError, match=r"must be positive integers with `slices` at most `full_slices`"):
            simulated(x, c, warmup=1, slices=sl)
    for c in (Configuration(2, 2, 1, 3), Configuration(2, 2, 1, 8)):
        with pytest.raises(ValueError, match=rf"needs \(runs, warmup \+ iterations, {c.full_slices}\) slices .* "
                                             r"got shape \(3, 5, 4\)"):
            simulated(x, c, warmup=1, slices=sl)
    with pytest.raises(ValueError, match=r"is larger than the samples \(3, 4\)"):
        simulated(x, Configuration(4, 2, 1, 4), warmup=1, slices=sl)
    with pytest.raises(ValueError, match="`warmup` must be a non-negative integer"):
        simulated(x, Configuration(2, 2, 1, 4), warmup=-1, slices=sl)
    assert simulated(x, Configuration(2, 2, 1, 4), warmup=1, slices=sl).shape == (2, 2)


def test_slices_that_are_not_those_of_the_samples_are_refused():
    rng = np.random.default_rng(2)
    sl = 1 + rng.normal(0, 0.01, (3, 5, 4))
    x = sl[:, 1:, :].mean(axis=2)
    assert minimal_configuration(x, warmup=1, slices=sl).full.configuration == Configuration(3, 4, 4, 4)
    # Full-length iterations were read from the samples, shorter ones from these zeros: the
    # zeros' undefined metric was warned of and iterations of full length chosen, as if stable.
    with pytest.raises(ValueError, match="`slices` must be the slices of `samples`"):
        minimal_configuration(x, warmup=1, slices=np.zeros_like(sl))
    with pytest.raises(ValueError, match="`slices` must be the slices of `samples`"):
        minimal_configuration(x, warmup=0, slices=sl[:, 1:, ::-1] * 1.1)


def test_choose_needs_the_full_configuration():
    with pytest.raises(ValueError, match=r"`scored` must include the full configuration Configuration\(runs=3"):
        choose([], Configuration(3, 4), metric="rmad", threshold=0.01, warmup=0)  # was StopIteration


def test_the_change_rate_of_a_zero_result_is_undefined():
    # Every sample 0 is a constant benchmark (a count exactly 0): stable, its metric 0, no warning
    # (pytest turns one into an error); the change rate of its result 0 is still undefined.
    found = minimal_configuration(np.zeros((3, 3)), metric="cv")
    assert found.chosen.stability == 0.0
    with pytest.warns(RuntimeWarning, match="the change rate is undefined"):
        assert np.isnan(found.change_rate)  # was ZeroDivisionError


# ---------------------------------------------------------------------------- the store's slices
@pytest.mark.parametrize(("bad", "why"), [
    (np.nan, "its slices are not all finite numbers"),
    (5.0, "its slices are not those of its samples (their mean is not the sample)"),
])
def test_slices_stored_through_the_api_that_cannot_be_used_are_said_so(store, bad, why):
    from regbench.optimize.plans import OptimizeOptions, derive_plans

    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    rng = np.random.default_rng(1)
    records = []
    for k in range(4):
        sl = 1 + rng.normal(0, 0.001, (6, 4))
        samples = sl.mean(axis=1)
        if k == 2:
            sl[3, 1] = bad  # Store.add_runs checks the shape only
        records.append(RunRecord("b", "v1", k, samples, machine="m", warmup=1, campaign_id=cid, slices=sl,
                                 duration=1.0))
    store.add_runs(records)
    store.finish_campaign(cid, "finished")
    result = derive_plans(store, options=OptimizeOptions(metric="rmad", n_resamples=100))  # raised ValueError
    [derived] = result.derived
    assert derived.plan.slices is None and derived.plan.full_runs == 4
    assert result.notes == (f"b: its slices were not used, {why}: runs and iterations reduced only",)


# ---------------------------------------------------------------------------- plans that no longer fit
def _plan(warmup: int, d: int = 1, n: int = 4):
    from regbench.model import ExecutionPlan
    from regbench.optimize.plans import CampaignPlans

    p = ExecutionPlan("a", "default", "m", 1, 1, "v1", 2, 3, warmup, 4, 5, "rmad", 0.01, 0.005, 0.002, True,
                      1.0, 4.0, datetime(2024, 1, 1), 0.0, d, n)
    return CampaignPlans({"a": 2}, {"a": 3}, (p,), (), {"a": (d, n)})


def test_a_plan_of_short_iterations_needs_its_warm_up(tmp_path):
    from regbench.optimize.plans import planned_spec

    body = PYTHON_BENCH + "min_time = 0.01\nslices = 4\n"
    for warmup, shortened in ((2, True), (3, True), (1, False), (0, False)):
        spec = _config(tmp_path, body + f"warmup = {warmup}\n").benchmarks[0]
        got = planned_spec(spec, _plan(warmup=2))
        assert (got.runs, got.iterations) == (2, 3)
        # With less warm-up than the plan was simulated with, short iterations would measure the
        # slow start it left out: they last as configured.
        assert (got.slices, got.warmup_slices, got.min_time) == ((1, 4, 0.0025) if shortened else (4, 0, 0.01))


def test_a_campaign_that_did_not_shorten_its_iterations_counts_them_at_full_length(store):
    from regbench.optimize.plans import run_lengths

    full = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x",
                                plan={"benchmarks": {"b": {"kind": "python", "min_time": 0.004, "slices": 4,
                                                           "warmup": 1}}})
    optimized = {"b": {"runs": 2, "iterations": 4, "slices": 1, "full_slices": 4, "campaign": full}}
    ran = {
        "shortened": {"kind": "python", "min_time": 0.001, "slices": 1, "warmup": 1},
        "slices changed since": {"kind": "python", "min_time": 0.004, "slices": 2, "warmup": 1},
        "slices turned off since": {"kind": "python", "min_time": 0.004, "slices": 1, "warmup": 1},
        "warm-up found per run": {"kind": "python", "min_time": 0.004, "slices": 4, "warmup": "auto"},
        "a command now": {"kind": "command", "warmup": 1},
    }
    records = []
    for k, what in enumerate(ran.values()):
        cid = store.start_campaign(seed=2, machine="m", fingerprint={}, command="x",
                                   plan={"benchmarks": {"b": what}, "optimized": optimized})
        records.append(RunRecord("b", f"v{k}", 0, np.ones(5), machine="m", warmup=1, campaign_id=cid))
    store.add_runs(records)
    runs = sorted(store.runs(), key=lambda r: r.version)
    # Each ran 1 warm-up and 4 iterations; only the first of the plan's length (1 of 4 slices).
    assert run_lengths(store, runs) == [2.0, 5.0, 5.0, 5.0, 5.0]


def test_run_with_a_plan_after_the_configuration_changed(tmp_path, capsys):
    from regbench.optimize.plans import run_lengths

    repo = tmp_path / "proj"
    git_init(repo)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    bench = "def work():\n    return sum(i * i for i in range(200))\n"
    git_commit(repo, {"bench.py": bench, "regbench.toml": TOML.format(slices=4)}, "one", when=when)
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "3", capsys=capsys)
    assert rc == 0, err
    rc, out, err = _cli(repo, "optimize", "--metric", "rmad", "--threshold", "0.9", "--format", "json", capsys=capsys)
    assert rc == 0, err
    [plan] = json.loads(out)["derived"]
    assert plan["slices"] == 1 and plan["full_slices"] == 4, plan
    # `slices` turned off since: the plan's runs and iterations, at the configured length.
    git_commit(repo, {"regbench.toml": TOML.format(slices=1)}, "two", when=when + timedelta(days=1))
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "4",
                      capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        last = max(s.campaigns(), key=lambda c: c.id)
        assert last.plan["benchmarks"]["sq"]["min_time"] == 0.002 and last.plan["benchmarks"]["sq"]["slices"] == 1
        # The campaign records the plan it used without the shorter iterations it did not run.
        assert last.plan["optimized"]["sq"]["runs"] == plan["runs"] and "slices" not in last.plan["optimized"]["sq"]
        runs = [r for r in s.runs(benchmark="sq") if r.campaign_id == last.id]
        assert [r.n_samples for r in runs] == [1 + plan["iterations"]] * plan["runs"]
        # They were counted at a quarter of their length (and a run's fixed cost read from that).
        assert run_lengths(s, runs) == [1.0 + plan["iterations"]] * plan["runs"]
    # `show --plans` says so: the plan as derived, and why its iterations run at full length now.
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and "full length (plan: 1/4 long; slices = 1 now, 4 when derived)" in " ".join(out.split()), out
    rc, out, _ = _cli(repo, "show", "--plans", "--format", "json", capsys=capsys)
    [shown] = json.loads(out)
    assert shown["slices"] == 1 and shown["slices_refused"] == "slices = 1 now, 4 when derived"
    # Configured with 4 slices again, the plan's shorter iterations apply once more.
    git_commit(repo, {"regbench.toml": TOML.format(slices=4)}, "three", when=when + timedelta(days=2))
    rc, out, _ = _cli(repo, "show", "--plans", "--format", "json", capsys=capsys)
    assert json.loads(out)[0]["slices_refused"] is None
    # The benchmark removed: one line naming it, and no campaign started.
    (repo / "regbench.toml").write_text(TOML.format(slices=4).replace('name = "sq"', 'name = "other"'))
    rc, out, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", capsys=capsys)
    assert rc == 3 and err.count("\n") == 1 and "Traceback" not in err
    assert "plan of benchmark 'sq': no such benchmark in regbench.toml any more" in err
    with Store(repo / "s.db") as s:
        assert len(s.campaigns()) == 2
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and "sq" in out

