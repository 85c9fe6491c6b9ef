"""Command benchmarks that run a real benchmark tool (`format = "NAME"`): each invocation is one
run, every benchmark the tool reports is its own series, resume knows what is done."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from regbench.config import load_config
from regbench.errors import ConfigError
from regbench.run.campaign import run_campaign
from regbench.store import Store

from test_run_campaign import write_config

GOLDEN = Path(__file__).parent / "golden" / "adapters"
GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_go_test_as_a_command_benchmark(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(GOLDEN / "go" / "src", proj)
    cfg = write_config(proj, 'name = "tiny"\n', [{
        "name": "gobench", "format": "go", "runs": 2, "timeout": 120,
        "command": [GO, "test", "-run", "^$", "-bench", ".", "-count", "3", "-benchmem", "-benchtime", "200x", "."],
        "env": {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"},
    }])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["ok"] == 2
        series = {s.benchmark: s for s in store.load_series()}
        assert any(name.startswith("gobench/BenchmarkJoin") and "[" not in name for name in series)
        assert any(name.endswith("[allocs/op]") for name in series)
        for s in series.values():
            assert [len(runs) for runs in s.runs] == [2]  # two invocations = two runs
            assert all(r.size == 3 for r in s.runs[0])  # -count 3: three samples each
        again = run_campaign(load_config(cfg), store, seed=2)  # resume: both invocations are done
        assert again.trials_skipped == 2 and sum(again.counts.values()) == 0


def test_a_tool_writing_a_file_and_a_tool_writing_garbage(tmp_path):
    pytest.importorskip("pytest_benchmark")
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(GOLDEN / "pytest-benchmark" / "src" / "bench_tiny.py", proj / "bench_tiny.py")
    cfg = write_config(proj, 'name = "tiny"\n', [
        {"name": "pyb", "format": "pytest-benchmark", "runs": 2, "timeout": 120,
         "command": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "/dev/null",
                     "--rootdir", ".", "--benchmark-min-time=0.00005", "--benchmark-max-time=0.002",
                     "--benchmark-min-rounds=5", "--benchmark-json={output}", "bench_tiny.py"]},
        {"name": "junk", "format": "go", "runs": 1, "command": [sys.executable, "-c", "print('hello')"]},
    ])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["ok"] == 2 and dict(result.counts)["garbage"] == 1
        runs = {(r.benchmark, r.run_index): r for r in store.runs()}
        assert runs[("junk", 0)].status == "garbage" and "no go results" in runs[("junk", 0)].stderr_tail
        names = {s.benchmark for s in store.load_series()}
        assert len(names - {"junk"}) == 4 and all(n.startswith("pyb/") for n in names - {"junk"})


def test_format_is_checked_in_the_config(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "b", "format": "nope", "command": ["true"]}])
    with pytest.raises(ConfigError, match="`format` must be one of"):
        load_config(cfg)
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "b", "format": "go", "output": "lines",
                                                   "command": ["true"]}])
    with pytest.raises(ConfigError, match="not both"):
        load_config(cfg)


def test_pyperf_worker_processes_join_one_run_without_their_warmups(tmp_path):
    from regbench.adapters.base import get_adapter

    golden = GOLDEN / "pyperf" / "suite.json"
    parts = get_adapter("pyperf").parse(golden)
    first = parts[0].benchmark
    mine = [r for r in parts if r.benchmark == first]
    assert len(mine) >= 2 and all(r.warmup >= 1 for r in mine)
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = write_config(proj, 'name = "x"\n', [{
        "name": "pp", "format": "pyperf", "runs": 1,
        "command": [sys.executable, "-c", f"import sys; sys.stdout.write(open({str(golden)!r}).read())"]}])
    with Store(tmp_path / "r.db") as store:
        run_campaign(load_config(cfg), store, seed=1)
        [row] = [r for r in store.runs() if r.benchmark == f"pp/{first}"]
        assert row.warmup == mine[0].warmup
        assert row.n_samples == mine[0].samples.size + sum(r.samples.size - r.warmup for r in mine[1:])


def test_a_format_benchmark_name_cannot_hold_a_slash(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "a/b", "format": "go", "command": ["true"]}])
    with pytest.raises(ConfigError, match="cannot contain '/'"):
        load_config(cfg)
