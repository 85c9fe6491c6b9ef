"""Measures beyond wall time (seed 003 s.4.1): rusage of real processes, instruction counters on
golden output of the real tools and on real C programs, and how they are stored."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from regbench.config import BenchmarkSpec, parse_config
from regbench.errors import ConfigError, DuplicateRunError
from regbench.run import measures
from regbench.run.campaign import run_campaign
from regbench.run.core import Trial, record_outcome
from regbench.run.execute import RunOutcome, execute_run
from regbench.store import Store

GOLDEN = Path(__file__).parent / "golden" / "measures"
PY = sys.executable


def run(spec: BenchmarkSpec, tree: Path, **kw) -> RunOutcome:
    return execute_run(spec, tree=tree, python=PY, run_index=kw.pop("run_index", 0), version="v1", **kw)


def py_bench(code: str, **kw) -> BenchmarkSpec:
    """A command benchmark running ``code`` and printing one sample."""
    return BenchmarkSpec(name=kw.pop("name", "b"), kind="command",
                         command=(PY, "-c", textwrap.dedent(code) + "\nprint(1.0)\n"), **kw)


# ------------------------------------------------------------------------ golden output
def test_callgrind_summary_of_the_real_tool():
    assert measures.parse_callgrind((GOLDEN / "callgrind.out").read_text()) == 6123179


def test_callgrind_files_of_a_forking_program_are_added():
    files = sorted(GOLDEN.glob("callgrind-fork.out.*"))
    assert len(files) == 2
    assert measures.callgrind_total(files) == 6124599 + 3124654


def test_callgrind_totals_line_is_used_without_a_summary():
    text = "version: 1\nevents: Ir Dr\ntotals: 10 20\n"
    assert measures.parse_callgrind(text) == 10
    assert measures.parse_callgrind(text, "Dr") == 20


@pytest.mark.parametrize(("text", "match"), [
    ("", "no summary: or totals: line"),
    ("events: Dr\nsummary: 5\n", "did not count Ir"),
    ("events: Ir\nsummary: many\n", "not a number"),
])
def test_callgrind_output_that_is_not_a_count(text, match):
    with pytest.raises(ValueError, match=match):
        measures.parse_callgrind(text)


def test_callgrind_without_files():
    with pytest.raises(ValueError, match="wrote no output file"):
        measures.callgrind_total([])


def test_perf_csv():
    assert measures.parse_perf_stat((GOLDEN / "perf-stat.csv").read_text()) == 6158321


def test_perf_csv_of_a_hybrid_cpu_adds_the_pmus_that_counted():
    assert measures.parse_perf_stat((GOLDEN / "perf-hybrid.csv").read_text()) == 6101233


def test_perf_in_a_virtual_machine_is_not_supported():
    with pytest.raises(ValueError, match=r"perf could not count instructions here \(<not supported>\)"):
        measures.parse_perf_stat((GOLDEN / "perf-not-supported.csv").read_text())


@pytest.mark.parametrize(("text", "match"), [
    ("# started on a day\n\n", "no instructions count"),
    ("<not counted>,,instructions:u,0,0.00,,\n", "did not count"),
    ("123,,cycles:u,1,100.00,,\n", "no instructions count"),
])
def test_perf_output_without_a_count(text, match):
    with pytest.raises(ValueError, match=match):
        measures.parse_perf_stat(text)


def test_units_and_command_lines():
    assert measures.measure_unit("cpu") == "s"
    assert measures.measure_unit("maxrss") == "B"
    assert measures.measure_unit("wall") == "s"
    assert measures.measure_unit("instructions", "perf") == "instructions"
    assert measures.measure_unit("instructions", "callgrind") == "Ir"
    with pytest.raises(ValueError, match="`counter` must be one of"):
        measures.measure_unit("instructions")
    assert measures.perf_argv(["prog", "-x"], "/t/p.csv") == [
        "perf", "stat", "-x,", "-e", "instructions:u", "-o", "/t/p.csv", "--", "prog", "-x"]
    cg = measures.callgrind_argv(["prog", "1"], "/t/cg.%p")
    assert cg[0] == "valgrind" and "--tool=callgrind" in cg and "--callgrind-out-file=/t/cg.%p" in cg
    assert cg[-2:] == ["prog", "1"]


# ----------------------------------------------------------------- rusage of real runs
ALL = ("cpu", "maxrss", "wall")


def test_cpu_time_of_a_busy_loop_is_close_to_its_wall_time(tmp_path):
    out = run(py_bench("""\
        import time
        t = time.process_time()
        while time.process_time() - t < 0.5:
            pass
    """, measures=ALL), tmp_path)
    assert out.status == "ok", out.stderr_tail
    cpu, wall = out.measures["cpu"], out.measures["wall"]
    assert cpu >= 0.45
    assert cpu <= wall * 1.02 + 0.02  # one thread cannot use more CPU than time passed
    assert cpu / wall > 0.4  # close to 1 on an idle machine; other processes may take turns
    assert wall == pytest.approx(out.duration)


def test_cpu_time_of_a_sleep_is_near_zero(tmp_path):
    spec = BenchmarkSpec(name="s", kind="command", command=("sh", "-c", "sleep 0.3; echo 1"), measures=ALL)
    out = run(spec, tmp_path)
    assert out.status == "ok", out.stderr_tail
    assert out.measures["cpu"] < 0.1
    assert out.measures["wall"] >= 0.3


def test_peak_memory_grows_with_an_allocation(tmp_path):
    big = run(py_bench("a = bytearray(b'\\x01') * 200_000_000", measures=ALL), tmp_path)
    small = run(py_bench("a = 1", measures=ALL), tmp_path)
    assert big.status == small.status == "ok"
    assert big.measures["maxrss"] > 150e6
    assert small.measures["maxrss"] < 50e6  # the process's own peak, not the test runner's
    assert small.measures["maxrss"] > 1e6  # bytes, not KiB


def test_failed_and_timed_out_runs_keep_their_measures_and_unstarted_ones_have_none(tmp_path):
    failed = run(py_bench("import sys; sys.exit(3)", measures=ALL), tmp_path)
    assert failed.status == "failed" and set(failed.measures) == {"cpu", "maxrss", "wall"}
    hang = run(py_bench("import time; time.sleep(30)", timeout=0.5, measures=ALL), tmp_path)
    assert hang.status == "timeout" and hang.measures["wall"] >= 0.5
    missing = run(BenchmarkSpec(name="m", kind="command", command=(str(tmp_path / "nothing"),), measures=ALL),
                  tmp_path)
    assert missing.status == "failed" and missing.measures == {}
    assert "cannot start" in missing.stderr_tail


def test_without_declared_measures_the_process_is_still_started_by_the_spawner(tmp_path):
    # The spawner contains every benchmark (tests/test_containment.py), so its measures are the
    # process's own whether declared or not.
    out = run(py_bench("import os; print(os.getppid(), file=open('ppid', 'w'))"), tmp_path)
    assert out.status == "ok" and int((tmp_path / "ppid").read_text()) != os.getpid()
    assert set(out.measures) == {"cpu", "maxrss", "wall"}
    assert 1e6 < out.measures["maxrss"] < 50e6


# --------------------------------------------------------------------- instructions
LOOP_C = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    volatile long s = 0;
    for (long i = 0; i < n; i++) s += i;
    printf("%ld\n", (long)(s & 1) + 1);
    return 0;
}
"""


@pytest.fixture(scope="module")
def loop_program(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("loop")
    (d / "loop.c").write_text(LOOP_C)
    subprocess.run([cc, "-O1", "-o", str(d / "loop"), str(d / "loop.c")], check=True)
    return d / "loop"


@pytest.fixture
def callgrind(monkeypatch):
    if not measures.callgrind_works():
        pytest.skip("valgrind's callgrind does not run here")
    monkeypatch.setattr(measures, "instruction_counter", lambda: "callgrind")


def test_callgrind_counts_are_repeatable_and_scale_with_the_work(tmp_path, loop_program, callgrind):
    def count(n: int) -> float:
        spec = BenchmarkSpec(name="loop", kind="command", command=(str(loop_program), str(n)),
                             measures=("instructions",))
        out = run(spec, tmp_path)
        assert out.status == "ok", out.stderr_tail
        assert out.instruction_counter == "callgrind" and not out.measure_failures
        np.testing.assert_array_equal(out.samples, [1.0])  # from the real run, not from valgrind
        return out.measures["instructions"]

    a, b, double = count(2_000_000), count(2_000_000), count(4_000_000)
    assert a == pytest.approx(b, rel=1e-3)
    assert double / a == pytest.approx(2.0, rel=0.02)


def test_a_failing_callgrind_run_is_a_measure_failure_not_a_failed_run(tmp_path, loop_program, callgrind):
    # The real run succeeds; under valgrind the program sees VALGRIND-only trouble: fake it with
    # a script that fails only when its parent is valgrind.
    prog = tmp_path / "picky.py"
    prog.write_text("import os, sys\n"
                    "if 'vgpreload' in os.environ.get('LD_PRELOAD', ''):\n"
                    "    sys.exit('no valgrind, please')\n"
                    "print(1.0)\n")
    spec = BenchmarkSpec(name="picky", kind="command", command=(PY, str(prog)), measures=("instructions", "cpu"))
    out = run(spec, tmp_path)
    assert out.status == "ok", out.stderr_tail
    status, note = out.measure_failures["instructions"]
    assert status == "failed" and "callgrind run ended with exit status 1" in note
    assert "instructions" not in out.measures and "cpu" in out.measures


FAKE_PERF = """\
#!{py}
# A stand-in for `perf stat -x, -e instructions:u -o FILE -- argv`: writes a count, runs argv.
import os, sys
args = sys.argv[1:]
out = args[args.index("-o") + 1]
argv = args[args.index("--") + 1:]
with open(out, "w") as f:
    f.write("# started on a day\\n\\n{value},,instructions:u,1000,100.00,,\\n")
os.execvp(argv[0], argv)
"""


@pytest.mark.parametrize(("value", "expected"), [("123456", 123456.0), ("<not supported>", None)])
def test_perf_wraps_the_run_itself(tmp_path, monkeypatch, value, expected):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "perf").write_text(FAKE_PERF.format(py=PY, value=value))
    (bin_dir / "perf").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(measures, "instruction_counter", lambda: "perf")
    spec = py_bench("import sys; print(' '.join(sys.argv), file=sys.stderr)", measures=("instructions",))
    out = run(spec, tmp_path)
    assert out.status == "ok", out.stderr_tail
    assert out.instruction_counter == "perf"
    if expected is None:
        assert out.measure_failures["instructions"] == ("garbage", "instructions: perf could not count "
                                                        "instructions here (<not supported>)")
    else:
        assert out.measures["instructions"] == expected and not out.measure_failures


def test_python_benchmarks_are_counted_too(tmp_path, callgrind):
    (tmp_path / "mod.py").write_text("def f():\n    return sum(range(100))\n")
    spec = BenchmarkSpec(name="py", kind="python", target="mod:f", iterations=2, min_time=0.001,
                         measures=("instructions",), timeout=120)
    out = run(spec, tmp_path)
    assert out.status == "ok", out.stderr_tail
    assert out.measures.get("instructions", 0) > 1e6, out.measure_failures


def test_no_counter_is_a_config_error_naming_the_benchmark(tmp_path, monkeypatch):
    monkeypatch.setattr(measures, "instruction_counter", lambda: None)
    spec = py_bench("pass", name="sort", measures=("instructions",))
    with pytest.raises(ConfigError, match="benchmark 'sort' measures `instructions`.*install valgrind"):
        run(spec, tmp_path)
    cfg = parse_config({"benchmark": [{"name": "sort", "command": [PY, "-c", "print(1)"],
                                       "measures": ["instructions"]}]}, path=tmp_path / "regbench.toml")
    with Store(tmp_path / "r.db") as store, pytest.raises(ConfigError, match="benchmark 'sort' measures"):
        run_campaign(cfg, store)
    with Store(tmp_path / "r.db") as store:
        assert store.campaigns() == []  # nothing written


# --------------------------------------------------------------------------- config
def test_measures_key_is_validated():
    def parse(m, name="a", more=()):
        return parse_config({"benchmark": [{"name": name, "command": ["x"], "measures": m}, *more]})

    assert parse(["cpu", "wall"]).benchmarks[0].measures == ("cpu", "wall")
    assert parse_config({"benchmark": [{"name": "a", "command": ["x"]}]}).benchmarks[0].measures == ()
    with pytest.raises(ConfigError, match=r"\('a'\) `measures`: unknown measure 'ram' \(expected cpu, maxrss"):
        parse(["ram"])
    with pytest.raises(ConfigError, match="`measures` must be a list of distinct names"):
        parse("cpu")
    with pytest.raises(ConfigError, match="`measures` must be a list of distinct names"):
        parse(["cpu", "cpu"])
    with pytest.raises(ConfigError, match="stored as the series 'a:cpu', which is also the name of a benchmark"):
        parse(["cpu"], more=[{"name": "a:cpu", "command": ["x"]}])


# --------------------------------------------------------------------------- storing
def outcome(status="ok", **kw) -> RunOutcome:
    from datetime import datetime

    base = dict(status=status, samples=np.array([1.0, 2.0]) if status == "ok" else np.empty(0),
                exit_code=0 if status == "ok" else 3, stderr_tail="" if status == "ok" else "boom",
                duration=0.5, started_at=datetime(2024, 1, 1))
    base.update(kw)
    return RunOutcome(**base)


def stored(store: Store) -> dict[str, tuple]:
    return {r.benchmark: (r.status, r.n_samples, r.stderr_tail) for r in store.runs()}


def test_record_outcome_stores_each_measure_as_a_series_in_the_same_transaction(tmp_path):
    spec = BenchmarkSpec(name="sort", kind="command", command=("x",),
                         measures=("cpu", "maxrss", "instructions", "wall"))
    with Store(tmp_path / "r.db") as store:
        record_outcome(store, spec, Trial("sort", "v1", 0),
                       outcome(measures={"cpu": 0.25, "maxrss": 2e7, "wall": 0.5, "instructions": 1e6},
                               instruction_counter="callgrind"),
                       config_name="default", machine="m", campaign_id=None)
        units = {b.name: (b.unit, b.direction) for b in store.benchmarks()}
        assert units == {"sort": ("s", "lower"), "sort:cpu": ("s", "lower"), "sort:maxrss": ("B", "lower"),
                         "sort:instructions": ("Ir", "lower"), "sort:wall": ("s", "lower")}
        values = {s.benchmark: s.runs[0][0].tolist() for s in store.load_series()}
        assert values["sort:cpu"] == [0.25] and values["sort:maxrss"] == [2e7]
        assert values["sort:instructions"] == [1e6] and values["sort:wall"] == [0.5]
        assert values["sort"] == [1.0, 2.0]
        # The same key again: nothing of it is written (one transaction).
        with pytest.raises(DuplicateRunError):
            record_outcome(store, spec, Trial("sort", "v1", 0), outcome(), config_name="default", machine="m",
                           campaign_id=None)
        assert len(store.runs()) == 5


def test_a_failed_run_stores_its_measures_with_its_status_and_no_sample(tmp_path):
    spec = BenchmarkSpec(name="sort", kind="command", command=("x",), measures=("cpu", "instructions"))
    with Store(tmp_path / "r.db") as store:
        record_outcome(store, spec, Trial("sort", "v1", 0),
                       outcome("failed", measures={"cpu": 0.1}, instruction_counter="perf"),
                       config_name="default", machine="m", campaign_id=None)
        rows = stored(store)
        assert rows["sort"] == ("failed", 0, "boom")
        assert rows["sort:cpu"][:2] == ("failed", 0)
        assert "the run of 'sort' was failed" in rows["sort:cpu"][2]
        assert rows["sort:instructions"][:2] == ("failed", 0)


def test_a_measure_that_could_not_be_taken_has_the_status_of_its_process(tmp_path):
    spec = BenchmarkSpec(name="sort", kind="command", command=("x",), measures=("cpu", "instructions"))
    with Store(tmp_path / "r.db") as store:
        record_outcome(store, spec, Trial("sort", "v1", 0),
                       outcome(measures={"cpu": 0.1}, instruction_counter="callgrind",
                               measure_failures={"instructions": ("timeout", "instructions: killed after 9 s")}),
                       config_name="default", machine="m", campaign_id=None)
        rows = stored(store)
        assert rows["sort"][:2] == ("ok", 2) and rows["sort:cpu"][:2] == ("ok", 1)
        assert rows["sort:instructions"] == ("timeout", 0, "[regbench] instructions: killed after 9 s")


def test_campaign_stores_measures_and_records_the_counter(tmp_path, loop_program, callgrind):
    cfg = parse_config({"benchmark": [{"name": "loop", "command": [str(loop_program), "100000"], "runs": 2,
                                       "measures": ["cpu", "instructions"]}]}, path=tmp_path / "regbench.toml")
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(cfg, store, seed=1, machine="m")
        assert result.counts["ok"] == 2
        plan = store.campaigns()[0].plan
        assert plan["instruction_counter"] == "callgrind"
        assert plan["benchmarks"]["loop"]["measures"] == ["cpu", "instructions"]
        series = {s.benchmark: s for s in store.load_series()}
        assert set(series) == {"loop", "loop:cpu", "loop:instructions"}
        assert series["loop:instructions"].unit == "Ir"
        counts = [r[0] for r in series["loop:instructions"].runs[0]]
        assert len(counts) == 2 and counts[0] == pytest.approx(counts[1], rel=1e-3)
        # Counted by perf elsewhere: the series' unit would change, so the campaign refuses to start.
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(measures, "instruction_counter", lambda: "perf")
            stored_as = "'loop:instructions' is stored in unit 'Ir'.*'instructions' \\(perf\\)"
            with pytest.raises(ConfigError, match=stored_as):
                run_campaign(cfg, store, seed=1, machine="other")
