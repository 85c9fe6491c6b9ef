"""The Criterion adapter against Criterion 0.5's real files (tests/golden/adapters/criterion).

``results/`` is a copy of ``target/criterion`` written by ``make_golden.sh`` (the tiny cargo
project in ``src/``); the numbers checked below were read from the files by hand.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters import cargobench, criterion, jmh  # noqa: F401  (register the adapters)
from regbench.adapters.base import SNIFF_BYTES, get_adapter, sniff_format
from regbench.errors import InputError

GOLDEN = Path(__file__).parent / "golden" / "adapters"
RESULTS = GOLDEN / "criterion" / "results"
PLAIN = RESULTS / "sum_plain" / "new" / "sample.json"


def parse(path):
    return get_adapter("criterion").parse(Path(path))


def test_golden_directory_one_run_per_benchmark_new_only():
    runs = parse(RESULTS)
    # base/ holds a copy of the same run and is not read: three benchmarks, one run each.
    assert [(r.benchmark, r.run, r.samples.size) for r in runs] == [
        ("sum_group/10", 0, 10), ("sum_group/1000", 0, 10), ("sum_plain", 0, 10)]
    assert {(r.unit, r.direction, r.warmup) for r in runs} == {("ns", "lower", 0)}


def test_golden_samples_are_time_per_iteration():
    (run,) = parse(PLAIN)
    assert run.benchmark == "sum_plain"  # full_id in benchmark.json
    # sample.json: "iters":[1826971.0,3653942.0,...,18269710.0], "times":[5429550.0,7471952.0,...,37876527.0]
    assert run.samples[0] == 5429550.0 / 1826971.0
    assert run.samples[1] == 7471952.0 / 3653942.0
    assert run.samples[-1] == 37876527.0 / 18269710.0
    # estimates.json: mean point estimate 2.129347712211625, 95% interval [2.0036..., 2.3308...]
    assert run.params["mean"] == 2.129347712211625
    assert run.params["mean_ci"] == [2.003671615303439, 2.330835578679614]
    assert run.params["slope"] == 2.0396539465539467 and run.params["sampling_mode"] == "Linear"
    # Criterion's mean estimate is the mean of the per-iteration times.
    assert np.mean(run.samples) == pytest.approx(run.params["mean"], rel=1e-9)


def test_golden_name_from_group_and_value():
    runs = {r.benchmark: r for r in parse(RESULTS / "sum_group")}
    assert sorted(runs) == ["sum_group/10", "sum_group/1000"]
    assert runs["sum_group/10"].samples[0] == 3645317.0 / 1898307.0


def test_name_without_benchmark_json_is_the_directory(tmp_path):
    root = tmp_path / "criterion"
    shutil.copytree(RESULTS, root)
    for f in root.rglob("benchmark.json"):
        f.unlink()
    assert [r.benchmark for r in parse(root)] == ["sum_group/10", "sum_group/1000", "sum_plain"]
    assert parse(root / "sum_group" / "10" / "new" / "sample.json")[0].benchmark == "10"
    info = tmp_path / "info.json"
    info.write_text('{"group_id":"g","function_id":"f","value_str":null,"full_id":null}')
    shutil.copy(info, root / "sum_plain" / "new" / "benchmark.json")
    assert parse(root / "sum_plain")[0].benchmark == "g/f"


def test_sniff_claims_sample_json_and_directories():
    assert sniff_format(PLAIN) == "criterion"
    adapter = get_adapter("criterion")
    assert adapter.sniff("", RESULTS)
    for other in ("estimates.json", "benchmark.json"):
        p = PLAIN.with_name(other)
        assert not adapter.sniff(p.read_text()[:SNIFF_BYTES], p)


@pytest.mark.parametrize("text", [
    "benchmark,version,run,iteration,value\nb,v1,0,0,1.5\n",
    '{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n',
    "test sum_10 ... bench:          10.60 ns/iter (+/- 3.70)\n",
])
def test_sniff_rejects_other_formats(text, tmp_path):
    assert not get_adapter("criterion").sniff(text, tmp_path / "x")


def test_sniff_rejects_jmh_and_cargo_bench_golden_files():
    adapter = get_adapter("criterion")
    for path in [GOLDEN / "jmh/thrpt_avgt_gc.json", GOLDEN / "jmh/sample.json", GOLDEN / "cargo-bench/single.txt"]:
        assert not adapter.sniff(path.read_text()[:SNIFF_BYTES], path)


def test_truncated_sample_json(tmp_path):
    p = tmp_path / "sample.json"
    text = PLAIN.read_text()
    p.write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:1: not valid JSON: the file ends"):
        parse(p)


def test_one_bad_file_in_a_directory_fails_the_whole_import(tmp_path):
    root = tmp_path / "criterion"
    shutil.copytree(RESULTS, root)
    bad = root / "sum_plain" / "new" / "sample.json"
    bad.write_text('{"sampling_mode":"Linear","iters":[1.0,2.0],"times":[5.0]}')
    with pytest.raises(InputError, match=rf"^{re.escape(str(bad))}:1: `iters` has 2 values but `times` has 1"):
        parse(root)


@pytest.mark.parametrize(("text", "message"), [
    ('[1, 2]', ":1: not a Criterion sample.json: expected a JSON object"),
    ('{"iters": [1.0]}', ":1: not a Criterion sample.json: missing `times`"),
    ('{"iters": [], "times": []}', ":1: `iters` must be a non-empty list of numbers"),
    ('{"iters": [1.0, "2"], "times": [1.0, 2.0]}', ":1: `iters` must be a non-empty list of numbers"),
    ('{"iters": [0.0], "times": [1.0]}', ":1: `iters` must hold positive numbers"),
    ('{"iters": [1.0], "times": [-1.0]}', ":1: `times` must hold non-negative finite numbers"),
    ('{\n"iters": [1.0],\n"times": [1.0,]\n}', ":3: not valid JSON"),
])
def test_invalid_sample_json(tmp_path, text, message):
    p = tmp_path / "sample.json"
    p.write_text(text)
    with pytest.raises(InputError, match=re.escape(str(p) + message)):
        parse(p)


def test_directory_without_results(tmp_path):
    with pytest.raises(InputError, match=rf"^{re.escape(str(tmp_path))}: no Criterion results"):
        parse(tmp_path)
    assert not get_adapter("criterion").sniff("", tmp_path)


# --- live: build and run the tiny project with the real Criterion --------------------------------

LIVE_DIR = Path(tempfile.gettempdir()) / "regbench-live-criterion"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo on PATH to build the Criterion project")
def test_live_criterion_run_is_imported():
    # Project and CARGO_TARGET_DIR live in a cache directory under the system temp (copy2 keeps
    # mtimes), so a second run reuses the compiled criterion and the bench binary.
    proj, target = LIVE_DIR / "proj", LIVE_DIR / "target"
    shutil.copytree(GOLDEN / "criterion" / "src", proj, dirs_exist_ok=True)
    shutil.rmtree(target / "criterion", ignore_errors=True)
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    env.pop("CRITERION_HOME", None)
    subprocess.run(["cargo", "bench", "--bench", "sum", "--", "sum_plain"], cwd=proj, env=env, check=True,
                   capture_output=True, timeout=280)
    results = target / "criterion"
    assert get_adapter("criterion").sniff("", results)
    assert sniff_format(results / "sum_plain" / "new" / "sample.json") == "criterion"
    (run,) = parse(results)
    assert (run.benchmark, run.run, run.samples.size, run.unit) == ("sum_plain", 0, 10, "ns")
    assert np.isfinite(run.samples).all() and (run.samples > 0).all()
