"""A tool's runs priced by ``regbench optimize`` (docs/optimize.md, "A tool's run"): what JMH says
of each benchmark's forks (warm-up iterations, iteration length) is stored with its runs, the start
of its invocations and forks is measured from their wall time, and the suite's time under the
plans counts the invocations ``run --plan optimized`` makes.

End to end with real processes, real git and a real store: a stand-in for JMH that writes JMH
1.37's JSON (the fields of tests/golden/adapters/jmh) and takes the time a JMH invocation takes,
as sleeps of known length (its own start, each fork's start, warm-up and measured iterations), so
that what regbench measures can be checked against the truth.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.model import RunRecord, ToolTiming, VersionInfo
from regbench.optimize.costs import Group, layout_seconds, tool_costs
from regbench.optimize.plans import derive_plans
from regbench.store import Store

PY = sys.executable

#: The stand-in's truth: its own start (the host JVM), each fork's start, warm-up iterations of
#: 40 ms and measured iterations of 20 ms, as JMH's -wi 1 -w 40ms -r 20ms.
HOST, FORK, WARMUP, ITERATION = 0.3, 0.2, 0.04, 0.02

FAKE_JMH = f"""\
import json, os, random, re, sys, time
out, select, n = sys.argv[1], sys.argv[2], int(os.environ["REGBENCH_ITERATIONS"])
rng = random.Random(int(os.environ["REGBENCH_RUN_INDEX"]) * 7919 + len(os.environ["REGBENCH_VERSION"]))
spreads = {{"p.B.a": 0.001, "p.B.b": 0.001, "p.B.c": 0.4}}
time.sleep({HOST})
entries = []
for name, spread in spreads.items():
    if not re.search(select, name):
        continue
    time.sleep({FORK} + {WARMUP} + n * {ITERATION})
    base = 1 + rng.gauss(0, spread)
    entries.append({{"jmhVersion": "1.37", "benchmark": name, "mode": "avgt", "threads": 1, "forks": 1,
                    "warmupIterations": 1, "warmupTime": "40 ms", "warmupBatchSize": 1,
                    "measurementIterations": n, "measurementTime": "20 ms", "measurementBatchSize": 1,
                    "params": {{}}, "primaryMetric": {{"score": base, "scoreUnit": "us/op",
                    "rawData": [[base * (1 + rng.gauss(0, spread)) for _ in range(n)]]}}}})
json.dump(entries, open(out, "w"))
"""


#: As JMH's include pattern reads REGBENCH_SELECT: `run --plan optimized` splits the invocation by plan.
COMMAND = ["sh", "-c", 'exec "$0" jmh.py {output} "${REGBENCH_SELECT:-.}"', PY]


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    git_init(repo)
    text = ('[project]\nname = "p"\n[defaults]\nruns = 3\niterations = 4\nwarmup = 0\n\n[[benchmark]]\nname = "jmh"\n'
            f'format = "jmh"\ncommand = {json.dumps(COMMAND)}\n')
    when = datetime(2024, 1, 1, tzinfo=UTC)
    git_commit(repo, {"jmh.py": FAKE_JMH, "regbench.toml": text}, "one", when=when)
    git_commit(repo, {"README": "two"}, "two", when=when + timedelta(days=1))
    return repo


def _cli(repo: Path, *args: str, capsys) -> tuple[int, str, str]:
    rc = main(["--store", str(repo / "s.db"), "--config", str(repo / "regbench.toml"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _invocation_seconds(store: Store, campaign: int) -> float:
    """The wall seconds of a campaign's invocations (each once, however many series it stored)."""
    seen = {(r.version, r.run_index): r.duration for r in store.runs() if r.campaign_id == campaign}
    return float(sum(seen.values()))


def test_a_jmh_benchmarks_runs_are_priced_with_its_warmup_and_the_measured_starts(tmp_path, capsys):
    repo = _project(tmp_path)
    rc, _, err = _cli(repo, "run", "--versions", "HEAD~1", "--machine", "m", "--seed", "3", capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        # What JMH said of each fork is stored with each run: one fork, its 40 ms warm-up, 20 ms iterations.
        tools = s.run_tools(prefix="jmh/")
        assert len(tools) == 9 and {t.timing for t in tools} == {ToolTiming(1, WARMUP, ITERATION)}
        runs = s.runs()
        durations = sorted({r.duration for r in runs})
        assert len(durations) == 3 and min(durations) > HOST + 3 * (FORK + WARMUP + 4 * ITERATION)
    rc, out, err = _cli(repo, "optimize", "--format", "json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    plans = {p["benchmark"]: p for p in doc["derived"]}
    # From one full campaign (every invocation ran all three forks) the start of an invocation
    # and of a fork are not told apart: each fork carries a third of the invocation's start.
    # A run of one benchmark costs its warm-up and its fork's share in 20 ms iterations; the
    # code before this priced a tool's run at its iterations alone (0).
    start = float(np.median([d - 3 * (WARMUP + 4 * ITERATION) for d in durations]))
    expected = (WARMUP + start / 3) / ITERATION
    assert expected > (WARMUP + FORK) / ITERATION  # the truth, and the host's share on top
    for name in ("jmh/p.B.a", "jmh/p.B.b", "jmh/p.B.c"):
        assert plans[name]["run_overhead"] == pytest.approx(expected, rel=1e-9)
    # a and b are steady (fewer runs and iterations), c is not (its full configuration): two
    # invocations a run, whose starts are not known apart: the suite's time is a range, from
    # all of the start per fork to all of it per invocation.
    assert plans["jmh/p.B.c"]["runs"] == 3 and plans["jmh/p.B.c"]["iterations"] == 4
    assert (plans["jmh/p.B.a"]["runs"], plans["jmh/p.B.a"]["iterations"]) != (3, 4)
    suite = doc["suite"]
    assert 0 < suite["low"] < suite["high"] <= 1.5 and not suite["lower_bound"]
    assert suite["full_seconds"] == pytest.approx(sum(durations))
    assert any("not told apart" in n for n in suite["notes"])
    rc, out, _ = _cli(repo, "optimize", "--refresh", capsys=capsys)
    assert "suite time under the new plans: " in out and "% of the full configuration's (" in out
    assert "not told apart" in out

    # Run with the plans: one invocation per plan, each paying the tool's start again.
    rc, _, err = _cli(repo, "run", "--versions", "HEAD", "--machine", "m", "--plan", "optimized", "--seed", "5",
                      capsys=capsys)
    assert rc == 0, err
    with Store(repo / "s.db") as s:
        last = max(s.campaigns(), key=lambda c: c.id)
        groups = last.plan["split"]["jmh"]["groups"]
        assert len(groups) == 2
        measured = _invocation_seconds(s, last.id) / sum(durations)
        # The range from the full campaign alone holds what the plans measured.
        assert suite["low"] - 0.05 < measured < suite["high"] + 0.05
        # Invocations of two layouts (3 forks, 2, 1) tell the starts apart: close to the truth.
        cost = tool_costs(s, "jmh", config="default", machine="m", version=plans["jmh/p.B.a"]["version"],
                          parts=[1], runs=s.runs())
        assert cost.start is not None and cost.start.per_invocation is not None
        assert cost.start.per_process == pytest.approx(FORK, abs=0.1)
        assert cost.start.per_invocation == pytest.approx(start - 3 * cost.start.per_process, abs=0.15)
        # ... and the invocations the plans ran are priced within a few percent of what they took.
        ran = [Group(g["runs"], g["iterations"], tuple(g["benchmarks"])) for g in groups]
        priced = layout_seconds(ran, cost, warmup=0, per_invocation=cost.start.per_invocation,
                                per_process=cost.start.per_process)
        assert priced == pytest.approx(_invocation_seconds(s, last.id), rel=0.15)
    rc, out, err = _cli(repo, "optimize", "--refresh", "--format", "json", capsys=capsys)
    assert rc == 0, err
    again = json.loads(out)["suite"]
    assert again["low"] == again["high"] and not any("not told apart" in n for n in again["notes"])


def test_a_tool_that_says_nothing_of_its_timing_is_priced_at_iterations_and_said_so(store):
    # Go's `go test -bench` says how many times it called each benchmark, not how long its
    # invocation ran beyond the samples it prints: its plans are priced at their iterations, and
    # the suite's time under them is a lower bound, said in its notes.
    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    rng = np.random.default_rng(1)
    info = VersionInfo("v1", timestamp=datetime(2024, 1, 1))
    for r in range(4):
        store.add_runs([RunRecord(f"go/Benchmark{x}-2", "v1", r, 1 + 0.0005 * rng.standard_normal(10), machine="m",
                                  campaign_id=cid, duration=2.0) for x in "AB"], versions=[info])
    store.finish_campaign(cid, "finished")
    result = derive_plans(store)
    assert {d.plan.run_overhead for d in result.derived} == {0.0}
    suite = result.suite
    assert suite is not None and suite.lower_bound and suite.low == suite.high
    assert suite.full_seconds == pytest.approx(4 * 2.0)  # each invocation once, not once per series
    assert any(n.startswith("priced at its iterations alone: go: the tool does not say") and "lower bound" in n
               for n in suite.notes)
    # Counted as the tool runs them: one invocation of the most runs and iterations for both.
    most = max(d.plan.runs for d in result.derived), max(d.plan.iterations for d in result.derived)
    assert suite.low == pytest.approx(most[0] * most[1] / (4 * 10))
