"""Which way is better for a tool's benchmarks: `directions` in a tool benchmark's table and
`regbench import --direction`, over what the tool says.

Google Benchmark's JSON says nothing of a user counter that is a rate
(``benchmark::Counter(..., kIsRate)``): the golden files' ``BM_StringCopy [rate]`` (tiny.cc,
``kIsIterationInvariantRate``) is read as lower-is-better, so a slower copy would be an
improvement and a faster one an alert.  The overrides make it higher-is-better.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from regbench.config import load_config, name_matches
from regbench.errors import ConfigError
from regbench.run.campaign import run_campaign
from regbench.store import Store


GB = Path(__file__).parent / "golden" / "adapters" / "google-benchmark"
HEADER = Path("/usr/include/benchmark/benchmark.h")


def write_config(path: Path, project: str, benchmarks: list[dict]) -> Path:
    """A regbench.toml whose values (and inline tables' keys, which hold spaces) are JSON, which
    TOML reads the same."""
    text = "[project]\n" + project
    for b in benchmarks:
        text += "\n[[benchmark]]\n" + "".join(
            f"{k} = {{ {', '.join(f'{json.dumps(ek)} = {json.dumps(ev)}' for ek, ev in v.items())} }}\n"
            if isinstance(v, dict) else f"{k} = {json.dumps(v)}\n" for k, v in b.items())
    cfg = path / "regbench.toml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def gb_benchmark(**extra) -> dict:
    """A tool benchmark printing Google Benchmark's captured JSON (one invocation, one run)."""
    return {"name": "gb", "format": "google-benchmark", "runs": 2, "warmup": 0,
            "command": [sys.executable, "-c", f"print(open({str(GB / 'repetitions.json')!r}).read())"], **extra}


def directions(store: Store) -> dict[str, str]:
    return {b.name: b.direction for b in store.benchmarks()}


def test_patterns_match_brackets_literally_and_star_and_question_mark_as_wildcards():
    assert name_matches("BM_Copy/8 [FLOPS]", "* [FLOPS]")
    assert name_matches("BM_Copy/8 [FLOPS]", "BM_Copy/? [FLOPS]")
    assert not name_matches("BM_Copy/8 [FLOPS]", "* [FLOP]")
    # fnmatch would read [FLOPS] as one character of F, L, O, P, S and match "BM_x S".
    assert not name_matches("BM_x S", "BM_x [FLOPS]")
    assert not name_matches("BM_Copy/8 [FLOPS] x", "* [FLOPS]")  # the whole name


def test_a_campaign_stores_a_rate_counter_higher_is_better_where_directions_say_so(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = write_config(proj, 'name = "x"\n', [gb_benchmark(directions={"* [rate]": "higher",
                                                                       "gb/BM_Accumulate/64": "lower"})])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert dict(result.counts)["ok"] > 0
        d = directions(store)
    assert d["gb/BM_StringCopy [rate]"] == "higher"  # the override; the tool says lower
    # Everything else as the tool says: items/s and B/s higher, times and other counters lower.
    assert d["gb/BM_StringCopy [bytes_per_second]"] == "higher"
    assert d["gb/BM_Accumulate/64 [items_per_second]"] == "higher"
    assert d["gb/BM_Accumulate/64"] == d["gb/BM_Accumulate/512 [elements]"] == "lower"
    assert set(d.values()) == {"lower", "higher"}


def campaign_without_directions(tmp_path: Path) -> tuple[Path, Store]:
    """A project of the Google Benchmark tool benchmark without `directions`, after one campaign."""
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = write_config(proj, 'name = "x"\n', [gb_benchmark()])
    store = Store(tmp_path / "r.db")
    run_campaign(load_config(cfg), store, seed=1)
    return proj, store


def test_without_directions_the_rate_counter_is_what_the_tool_says(tmp_path):
    _, store = campaign_without_directions(tmp_path)
    with store:
        assert directions(store)["gb/BM_StringCopy [rate]"] == "lower"


def test_directions_that_contradict_stored_series_are_refused_before_any_run(tmp_path):
    proj, store = campaign_without_directions(tmp_path)
    with store:
        before = len(store.runs())
        cfg = write_config(proj, 'name = "x"\n', [gb_benchmark(runs=3, directions={"* [rate]": "higher"})])
        with pytest.raises(ConfigError, match=r"^benchmark 'gb': `directions` makes 'gb/BM_StringCopy \[rate\]' "
                                              r"higher-is-better, but it is stored lower-is-better"):
            run_campaign(load_config(cfg), store, seed=2)
        assert len(store.runs()) == before  # the third runs were not made


@pytest.mark.parametrize(("extra", "match"), [
    ({"directions": {"* [rate]": "up"}}, r"`directions`: '\* \[rate\]' = 'up' must be 'lower' or 'higher'"),
    ({"directions": ["* [rate]"]}, r"`directions` must be a table of name patterns"),
    ({"direction": "higher"}, r"`direction` does nothing for a tool benchmark, whose benchmarks take the direction "
                              r"google-benchmark reports for each; override it per name with `directions"),
])
def test_bad_directions_are_one_line_errors_naming_the_benchmark(tmp_path, extra, match):
    cfg = write_config(tmp_path, 'name = "x"\n', [gb_benchmark(**extra)])
    with pytest.raises(ConfigError, match=r"regbench.toml: \[\[benchmark\]\] #1 \('gb'\).*" + match):
        load_config(cfg)


def test_directions_on_a_benchmark_with_its_own_samples_is_an_error(tmp_path):
    cfg = write_config(tmp_path, 'name = "x"\n', [{"name": "own", "command": ["true"],
                                                    "directions": {"*": "higher"}}])
    with pytest.raises(ConfigError, match=r"`directions` is for a benchmark with a tool `format`.*take `direction`"):
        load_config(cfg)


def regbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "regbench", *args], capture_output=True, text=True, timeout=120)


def test_import_direction_overrides_the_tool_and_is_refused_for_canonical_files(tmp_path):
    db = str(tmp_path / "r.db")
    out = regbench("--store", db, "import", str(GB / "repetitions.json"), "--version", "v1",
                   "--direction", "* [rate]=higher", "--direction", "*=lower")
    assert out.returncode == 0, out.stderr
    with Store(db, create=False) as store:
        d = directions(store)
    # The first match wins, and an override is over the tool: `*=lower` makes B/s lower too.
    assert d["BM_StringCopy [rate]"] == "higher"
    assert d["BM_StringCopy [bytes_per_second]"] == "lower"
    again = regbench("--store", db, "import", str(GB / "repetitions.json"), "--version", "v2")
    assert again.returncode != 0 and "is stored with direction" in again.stderr  # the overrides are not there now
    with Store(db, create=False) as store:
        assert {r.version for r in store.runs()} == {"v1"}  # nothing of v2 stored
    csv = tmp_path / "c.csv"
    csv.write_text("benchmark,version,run,iteration,value\nb,v1,0,0,1.0\n")
    bad = regbench("--store", db, "import", str(csv), "--direction", "*=higher")
    assert bad.returncode != 0 and "--direction are for other tools' output" in bad.stderr
    usage = regbench("--store", db, "import", str(csv), "--direction", "* [rate]")
    assert usage.returncode == 2 and "'* [rate]' must be PATTERN=lower or PATTERN=higher" in usage.stderr


def test_live_google_benchmark_rate_counter(tmp_path):
    cxx = shutil.which("g++")
    if cxx is None or not HEADER.is_file():
        pytest.skip("g++ or Google Benchmark (libbenchmark-dev) not installed")
    proj = tmp_path / "proj"
    proj.mkdir()
    exe = proj / "tiny"
    subprocess.run([cxx, "-O2", "-o", str(exe), str(GB / "src" / "tiny.cc"), "-lbenchmark", "-lpthread"],
                   check=True, capture_output=True, timeout=120)
    cfg = write_config(proj, 'name = "x"\n', [{
        "name": "gb", "format": "google-benchmark", "runs": 2, "warmup": 0, "timeout": 60,
        "command": [str(exe), "--benchmark_format=json", "--benchmark_min_time=0.001",
                    "--benchmark_filter=BM_StringCopy"],
        "directions": {"BM_StringCopy [rate]": "higher"}}])
    with Store(tmp_path / "r.db") as store:
        result = run_campaign(load_config(cfg), store, seed=1)
        assert {k: n for k, n in dict(result.counts).items() if n} == {"ok": 2}, result.failed
        d = directions(store)
    assert d["gb/BM_StringCopy [rate]"] == "higher" and d["gb/BM_StringCopy"] == "lower"
