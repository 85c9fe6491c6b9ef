"""Follow-ups of `regbench optimize` / `run --plan optimized` (issue 16, Japke et al. 2025), each
found by a probe: a plan re-derived from a campaign older than its benchmark's change; a tool
that does not repeat as often as ``REGBENCH_ITERATIONS`` asks (pytest-benchmark's rounds); a split
invocation dearer than the full campaign; and ``optimize`` quadratic in a run's iterations.
Real processes (the real pytest-benchmark), real git and real SQLite stores."""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.model import RunRecord, VersionInfo
from regbench.optimize.algorithm import Configuration, minimal_configuration
from regbench.optimize.plans import OptimizeOptions, derive_plans
from regbench.store import Store
from regbench.store.plans import NewPlan, load_plans, save_plans

PY = sys.executable
DOCS = Path(__file__).resolve().parents[1] / "docs"
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


# ------------------------------------------------------- pytest-benchmark and REGBENCH_ITERATIONS
def _documented_pytest_benchmark_command() -> str:
    """The shell line of the `pytest-benchmark` row of configuration.md's REGBENCH_SELECT table."""
    text = (DOCS / "configuration.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `pytest-benchmark` |"))
    argv = json.loads(re.search(r'`(\["sh", "-c", .*?\])`', row).group(1))
    assert argv[:2] == ["sh", "-c"] and argv[2].startswith("pytest ")
    return argv[2]


BENCH_TEST = """
import time


def test_nap(benchmark):
    benchmark(time.sleep, 0.002)


def test_short_nap(benchmark):
    benchmark(time.sleep, 0.001)
"""


def _pytest_project(tmp_path: Path) -> Path:
    """A project whose two tool benchmarks run the real pytest-benchmark: `documented` with the
    command configuration.md gives, `floor` with the one it gave before (`--benchmark-min-rounds`
    alone, which pytest-benchmark takes as a floor)."""
    documented = _documented_pytest_benchmark_command()
    floor = documented.replace(" --benchmark-max-time=0", "")
    # This interpreter's pytest, without the project's or the user's pytest configuration.
    here = f'"{PY}" -m pytest -q -p no:cacheprovider -p no:xdist -p no:randomly -c /dev/null --rootdir .'
    repo = tmp_path / "proj"
    git_init(repo)
    text = "[project]\nname = \"p\"\n"
    for name, line in (("documented", documented), ("floor", floor)):
        command = ["sh", "-c", here + line[len("pytest"):]]
        text += (f"\n[[benchmark]]\nname = \"{name}\"\nformat = \"pytest-benchmark\"\nruns = 3\niterations = 6\n"
                 f"timeout = 120\ncommand = {json.dumps(command)}\n")
    (repo / "regbench.toml").write_text(text)
    git_commit(repo, {"test_bench.py": BENCH_TEST, "regbench.toml": text}, "one", when=WHEN)
    git_commit(repo, {"README": "two"}, "two", when=WHEN + timedelta(days=1))
    return repo


@pytest.mark.slow
def test_the_documented_pytest_benchmark_command_runs_the_planned_rounds_and_a_floor_is_warned(tmp_path, capsys):
    repo = _pytest_project(tmp_path)
    rc, out, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, out + err
    with Store(repo / "s.db") as s:
        cid = max(c.id for c in s.campaigns())
        head = s.versions()[-1].name
        full = {r.benchmark: r for r in s.runs()}
    # The documented command: exactly REGBENCH_ITERATIONS rounds; the old one ran as many as fit
    # a second (one round of a 2 ms nap is at least 2 ms: 100 to 500 of them).
    assert {n: r.n_samples for n, r in full.items() if n.startswith("documented/")} == {
        "documented/test_bench.py::test_nap": 6, "documented/test_bench.py::test_short_nap": 6}
    assert all(r.n_samples > 50 for n, r in full.items() if n.startswith("floor/"))

    # optimize says which benchmarks did not repeat as asked in the full campaign.
    rc, out, err = _cli(repo, "optimize", "--metric", "cv", "--threshold", "0.5", "--format", "json",
                        capsys=capsys)
    assert rc == 0, err
    notes = json.loads(out)["notes"]
    unasked = [n for n in notes if "did not repeat as many times as REGBENCH_ITERATIONS asked" in n]
    assert len(unasked) == 1 and "floor/test_bench.py::test_nap (" in unasked[0]
    assert "documented/" not in unasked[0] and "--benchmark-max-time=0" in unasked[0]

    # Plans of 2 runs x 4 rounds for every series, stored as optimize would.
    with Store(repo / "s.db") as s:
        save_plans(s, [NewPlan(name, "default", "m", cid, head, 2, 4, 0, 3, 6, "cv", 0.5, 0.01, 0.01, True,
                               None, None) for name in full])
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                        "--seed", "2", capsys=capsys)
    assert rc == 0, out + err
    with Store(repo / "s.db") as s:
        first = s.versions()[0].name
        planned = {}
        for r in s.runs(version=first):
            planned.setdefault(r.benchmark, []).append(r)
    assert {n: sorted(r.n_samples for r in rs) for n, rs in planned.items() if n.startswith("documented/")} == {
        "documented/test_bench.py::test_nap": [4, 4], "documented/test_bench.py::test_short_nap": [4, 4]}
    # The floor ran more rounds than planned: said once per series, with the counts, and kept in
    # each run's stderr tail.
    warned = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 2 and all("did not follow its plan: REGBENCH_ITERATIONS asked for 4 samples a run, "
                                    "2 runs reported" in w for w in warned), out
    assert {w.split()[1] for w in warned} == {"floor/test_bench.py::test_nap", "floor/test_bench.py::test_short_nap"}
    floor_runs = planned["floor/test_bench.py::test_nap"]
    assert len(floor_runs) == 2 and all(r.n_samples > 50 for r in floor_runs)
    assert all("the plan asked for 4 samples (REGBENCH_ITERATIONS), the run reported" in (r.stderr_tail or "")
               and "the plan was not followed" in (r.stderr_tail or "") for r in floor_runs), floor_runs
    assert all("the plan was not followed" not in (r.stderr_tail or "")
               for r in planned["documented/test_bench.py::test_nap"])


# ------------------------------------------------------------- a plan older than its benchmark's change
#: A benchmark printing REGBENCH_ITERATIONS samples around the level its tree's `level.txt`
#: says (the code), with a small run-to-run and iteration-to-iteration spread.
LEVEL_BENCH = """\
import os, random
n = int(os.environ["REGBENCH_ITERATIONS"])
level = float(open("level.txt").read())
rng = random.Random(int(os.environ["REGBENCH_RUN_INDEX"]) * 7919 + len(os.environ["REGBENCH_VERSION"]))
base = level * (1.0 + rng.gauss(0, 0.0005))
for _ in range(n):
    print(base * (1 + rng.gauss(0, 0.0005)))
"""


def _level_project(tmp_path: Path) -> Path:
    """Two benchmarks, `steady` and `moved`, over three commits; the second doubles the level."""
    repo = tmp_path / "proj"
    git_init(repo)
    text = "[project]\nname = \"p\"\n[defaults]\nruns = 4\niterations = 10\nwarmup = 1\n"
    for name in ("steady", "moved"):
        text += f"\n[[benchmark]]\nname = \"{name}\"\ncommand = {json.dumps([PY, 'bench.py'])}\n"
    (repo / "regbench.toml").write_text(text)
    git_commit(repo, {"bench.py": LEVEL_BENCH, "level.txt": "1.0", "regbench.toml": text}, "one", when=WHEN)
    git_commit(repo, {"level.txt": "2.0"}, "two: slower", when=WHEN + timedelta(days=1))
    git_commit(repo, {"README": "three"}, "three", when=WHEN + timedelta(days=2))
    return repo


def _alert(repo: Path, benchmark: str, version: str, previous: str) -> int:
    """The alert `regbench detect` records for a change of ``benchmark`` first shown at ``version``."""
    from regbench.store.alerts import alert_transaction

    with Store(repo / "s.db") as s, alert_transaction(s) as tx:
        made = tx.create(benchmark=benchmark, config="default", machine="m", version=version, previous=previous,
                         kind="regression", change=1.0, ci_low=0.9, ci_high=1.1, p_value=1e-6, methods=["auto"],
                         now=datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=1), why="detected")
        return made.id


@pytest.mark.slow
def test_a_plan_is_not_derived_from_a_campaign_older_than_its_benchmarks_change(tmp_path, capsys):
    repo = _level_project(tmp_path)
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~2", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    rc, out, err = _cli(repo, "optimize", "--format", "json", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        (one,) = (v.name for v in s.versions())
    assert {p["benchmark"]: p["version"] for p in json.loads(out)["derived"]} == {"steady": one, "moved": one}
    # CI runs commit two with the plans; `detect` then finds `moved` slower from commit two on.
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized", "--seed", "4",
                      capsys=capsys)
    assert rc == 0 and "older than a change" not in err, err
    with Store(repo / "s.db") as s:
        two = s.versions()[-1].name
    alert = _alert(repo, "moved", two, one)
    for args in ((), ("--refresh",)):
        rc, out, err = _cli(repo, "optimize", *args, "--format", "json", capsys=capsys)
        assert rc == 0, err
        doc = json.loads(out)
        # Not the old code's plan again: the only full campaign measured commit one.
        assert "moved" not in {p["benchmark"] for p in doc["derived"]}
        assert doc["stale"] == [{"benchmark": "moved", "config": "default", "machine": "m", "changed": two,
                                 "alert": alert, "measured": one}]
        line = next(n for n in doc["notes"] if n.startswith("1 plan older than a change of its benchmark"))
        assert f"moved (change at {two}, alert #{alert}; measured at {one})" in line
        # Commit two has runs of it already (the campaign with plans): a later version is named.
        assert ("run a full campaign of a version after " + two + f" (its runs at {two} are stored already: a full "
                "campaign of it would only add to them), as `regbench run --versions HEAD --benchmark moved` "
                "(without --plan) or let the next `regbench run --plan optimized` run it at its full "
                "configuration, then `regbench optimize`") in line, line
    rc, out, _ = _cli(repo, "optimize", capsys=capsys)  # the table says it in one line too
    assert rc == 0 and sum("1 plan older than a change of its benchmark not derived" in x
                           for x in out.splitlines()) == 1
    rc, out, _ = _cli(repo, "show", "--plans", capsys=capsys)
    assert rc == 0 and f"1 plan older than a change of its benchmark not run by `run --plan optimized`, which " \
        f"runs its benchmark at full configuration: moved (change at {two}" in out

    # With plans, `moved` runs at its full configuration, said on stderr, recorded in the campaign.
    rc, out, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "2",
                        capsys=capsys)
    assert rc == 0, err
    assert re.search(r"^warning: 1 plan older than a change of its benchmark run at its full configuration: "
                     rf"moved \(change at {two}", err, re.MULTILINE), err
    with Store(repo / "s.db") as s:
        three = s.versions()[-1].name
        moved = s.raw_runs("moved", three)
        steady = s.raw_runs("steady", three)
        plans = {p.benchmark: p for p in load_plans(s)}
        last = max(s.campaigns(), key=lambda c: c.id)
    assert len(moved) == 4 and {r.n_samples for r in moved} == {11}
    assert len(steady) == plans["steady"].runs and {r.n_samples for r in steady} == {1 + plans["steady"].iterations}
    assert last.plan["stale"] == {"moved": {"measured": one, "changed": two, "alert": alert}}
    assert "moved" not in last.plan["optimized"]

    # That campaign measured the changed code at its full configuration: optimize derives from it.
    rc, out, err = _cli(repo, "optimize", "--format", "json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert [(p["benchmark"], p["version"], p["campaign"]) for p in doc["derived"]] == [("moved", three, last.id)]
    assert doc["stale"] == [] and any(n.startswith(f"moved: derived from campaign {last.id}") for n in doc["notes"])
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized",
                        "--seed", "3", capsys=capsys)
    assert rc == 0 and "older than a change" not in err


# ------------------------------------------------------------- a split dearer than the full campaign
#: A tool printing `go test -bench` text for BenchmarkA (constant: stable at the least plan) and
#: BenchmarkB (noisy: unstable, kept at its full configuration), running those its first argument
#: selects, its second argument times each; starting it costs 0.25 s (a process, its imports, a
#: test collection), far more than its iterations.
SLOW_START_TOOL = r"""
import json, os, random, re, sys, time
time.sleep(0.25)
pattern, count = sys.argv[1], int(sys.argv[2])
ran = [n for n in ("BenchmarkA", "BenchmarkB") if re.search(pattern, n)]
with open(os.environ["LOG"], "a") as log:
    log.write(json.dumps({"select": os.environ.get("REGBENCH_SELECT"), "ran": ran, "count": count}) + "\n")
print("goos: linux\ngoarch: amd64\npkg: fake")
for name in ran:
    for k in range(count):
        value = 100.0 if name == "BenchmarkA" else 100.0 * random.uniform(0.5, 1.5)
        print(f"{name}-2   \t    1000\t  {value:.3f} ns/op")
print("PASS")
"""


def _split_project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    git_init(repo)
    command = ["sh", "-c", 'exec "$0" tool.py "${REGBENCH_SELECT:-.}" "$REGBENCH_ITERATIONS"', PY]
    text = ("[project]\nname = \"p\"\n\n[[benchmark]]\nname = \"tool\"\nformat = \"go\"\nruns = 3\niterations = 4\n"
            f"command = {json.dumps(command)}\nenv = {{ LOG = {json.dumps(str(tmp_path / 'log.jsonl'))} }}\n")
    (repo / "regbench.toml").write_text(text)
    for k in range(3):
        files = {"tool.py": SLOW_START_TOOL, "regbench.toml": text} if k == 0 else {"README": str(k)}
        git_commit(repo, files, f"commit {k}", when=WHEN + timedelta(days=k))
    return repo


@pytest.mark.slow
def test_a_split_that_cost_more_than_the_full_campaign_is_priced_as_measured_and_not_made_again(tmp_path, capsys):
    repo = _split_project(tmp_path)
    log = tmp_path / "log.jsonl"
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--seed", "1", capsys=capsys)
    assert rc == 0, err
    rc, out, err = _cli(repo, "optimize", "--format", "json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    plans = {p["benchmark"]: (p["runs"], p["iterations"]) for p in doc["derived"]}
    assert plans["tool/BenchmarkB-2"] == (3, 4) and plans["tool/BenchmarkA-2"] != (3, 4)
    # Split in two invocations a run; go says nothing of what its runs cost beyond their
    # iterations: the promise is a lower bound that says the second invocation's start is left out.
    assert doc["suite"]["lower_bound"]
    assert any("leaving out what starting the tool costs in each of the 1 more invocation a run" in n
               for n in doc["suite"]["notes"]), doc["suite"]["notes"]
    promised = doc["suite"]["low"]

    rc, out, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--plan", "optimized", "--seed", "2",
                        capsys=capsys)
    assert rc == 0, err
    split_runs = [json.loads(x) for x in log.read_text().splitlines()][3:]
    assert {e["select"] for e in split_runs} == {"^(BenchmarkA)$", "^(BenchmarkB)$"}
    assert len(split_runs) > 3  # more invocations than the full campaign's 3, each paying the start

    # Derived again: priced as that campaign measured it, which is more than the full campaign's
    # time; so the plans are run as one invocation from now on.
    rc, out, err = _cli(repo, "optimize", "--refresh", "--format", "json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    measured = [n for n in doc["notes"] if n.startswith("tool: split into 2 invocations a run, campaign 2 took ")]
    assert len(measured) == 1 and "; measured)" in measured[0] and "runs it as one invocation" in measured[0]
    ratio = float(re.search(r"took ([0-9.]+)x", measured[0]).group(1))
    assert ratio >= 1 > promised
    assert not any("leaving out what starting the tool costs" in n for n in doc["suite"]["notes"])
    rc, out, err = _cli(repo, "run", "--versions", "HEAD~2", "--machine", "m", "--plan", "optimized", "--seed", "3",
                        capsys=capsys)
    assert rc == 0, err
    last = [json.loads(x) for x in log.read_text().splitlines()][3 + len(split_runs):]
    assert len(last) == 3 and all(e["select"] is None and e["count"] == 4 for e in last)
    assert "tool: one invocation for all its plans (the most runs and iterations): split by plan into 2 " \
           "invocations a run, campaign 2 took" in out


# ------------------------------------------------------------- runs of thousands of iterations
def test_counts_of_iterations_grow_as_a_log_above_a_hundred():
    from regbench.optimize.algorithm import EVERY_COUNT_UP_TO, iteration_counts

    assert iteration_counts(7) == list(range(1, 8))
    assert iteration_counts(EVERY_COUNT_UP_TO) == list(range(1, EVERY_COUNT_UP_TO + 1))
    for full in (101, 1_000, 50_000):
        counts = iteration_counts(full)
        assert counts[:EVERY_COUNT_UP_TO] == list(range(1, EVERY_COUNT_UP_TO + 1)) and counts[-1] == full
        steps = np.diff(counts[EVERY_COUNT_UP_TO - 1:]) / np.array(counts[EVERY_COUNT_UP_TO - 1:-1])
        assert np.all(steps > 0) and np.all(steps <= 0.05 + 1e-12)
    assert len(iteration_counts(50_000)) < 250


def test_runs_of_thousands_of_iterations_simulate_a_few_hundred_counts():
    from regbench.optimize.algorithm import iteration_counts

    rng = np.random.default_rng(5)
    x = 1e-6 * (1 + 0.02 * rng.standard_normal((3, 3_000)))
    found = minimal_configuration(x, metric="cv", threshold=0.05, min_runs=2)
    # Runs of 2 and 3 of every count but (2, 1), of fewer than 3 measurements: not 2 x 3,000.
    assert len(found.scored) == 2 * len(iteration_counts(3_000)) - 1 < 500
    assert {s.configuration.iterations for s in found.scored} == set(iteration_counts(3_000))
    assert found.stable and found.chosen.stability <= 0.05


@pytest.mark.parametrize("metric", ["rciw1", "rciw3"])
def test_a_bootstrapped_metric_is_computed_cheapest_first_and_the_choice_is_algorithm_1s(metric):
    rng = np.random.default_rng(11)
    x = 10 * (1 + 0.05 * rng.standard_normal((4, 40)))
    found = minimal_configuration(x, metric=metric, threshold=0.04, min_runs=2, n_resamples=500, rng=3)
    chosen = found.chosen
    assert found.stable and chosen.stability <= 0.04 and np.isfinite(found.full.stability)
    for s in found.scored:
        refused = (abs(s.result - found.full.result) > 0.04 * abs(found.full.result)
                   or s.configuration.iterations in found.unsettled)
        if s.cost < chosen.cost and not refused:
            # Every configuration cheaper than the one chosen that could have been chosen was
            # scored, and is above the threshold.
            assert np.isfinite(s.stability) and s.stability > 0.04, s
    skipped = [s for s in found.scored if not np.isfinite(s.stability)]
    assert skipped and all(s.cost >= chosen.cost or abs(s.result - found.full.result)
                           > 0.04 * abs(found.full.result) or s.configuration.iterations in found.unsettled
                           for s in skipped)
    # Scored all, Algorithm 1 as written chooses a configuration of the same cost.
    from regbench.optimize.algorithm import choose, score_configurations, smaller_configurations

    every = score_configurations(x, smaller_configurations(Configuration(4, 40), min_runs=2), warmup=0,
                                 metric=metric, n_resamples=500, rng=3)
    assert choose(every, Configuration(4, 40), metric=metric, threshold=0.04, warmup=0).chosen.cost \
        == pytest.approx(chosen.cost, rel=0.25)


def test_optimize_reports_its_progress(store):
    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    for k, b in enumerate(("a", "b", "c")):
        rng = np.random.default_rng(k)
        for r in range(3):
            store.add_run(RunRecord(b, "v1", r, 1 + 0.001 * rng.standard_normal(5), machine="m", campaign_id=cid,
                                    duration=0.1), version_info=VersionInfo("v1", timestamp=datetime(2024, 1, 1)))
    store.finish_campaign(cid, "finished")
    calls: list[tuple[int, int]] = []
    derive_plans(store, options=OptimizeOptions(metric="cv", threshold=0.05), progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]


def _store_campaign(store: Store, benches, version: str, day: int) -> int:
    cid = store.start_campaign(seed=day, machine="m", fingerprint={}, command="x", plan={"versions": [version]})
    rng = np.random.default_rng(day)
    for b in benches:
        for r in range(4):
            store.add_run(RunRecord(b, version, r, 1 + 0.001 * rng.standard_normal(8), machine="m", campaign_id=cid,
                                    duration=0.2), version_info=VersionInfo(version, timestamp=datetime(2024, 1, day)))
    store.finish_campaign(cid, "finished")
    return cid


def test_a_stale_plan_names_the_changed_version_to_run_and_an_invalid_alert_is_no_change(store):
    from regbench.store.alerts import alert_transaction

    first = _store_campaign(store, ("b", "c"), "v1", 1)
    _store_campaign(store, ("c",), "v2", 2)
    options = OptimizeOptions(metric="cv", threshold=0.05)
    with alert_transaction(store) as tx:
        alert = tx.create(benchmark="b", config="default", machine="m", version="v2", previous="v1", kind="regression",
                          change=0.1, ci_low=0.05, ci_high=0.15, p_value=1e-4, methods=["auto"],
                          now=datetime(2030, 1, 1), why="detected")
    found = derive_plans(store, campaign_id=first, options=options)
    assert [d.plan.benchmark for d in found.derived] == ["c"]
    assert [(s.benchmark, s.changed, s.measured) for s in found.stale] == [("b", "v2", "v1")]
    assert any(n.startswith(f"1 plan older than a change of its benchmark not derived from campaign {first}")
               and "run a full campaign of the changed version or a later one, `regbench run --versions v2 "
               "--benchmark b` (without --plan)" in n for n in found.notes), found.notes
    from regbench.detect.alerts import set_status

    set_status(store, [alert.id], "invalid", who="me", why="noise", now=datetime(2030, 1, 2))  # not a change
    again = derive_plans(store, campaign_id=first, options=options, refresh=True)
    assert sorted(d.plan.benchmark for d in again.derived) == ["b", "c"] and again.stale == ()
