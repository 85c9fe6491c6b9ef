"""The Bencher Metric Format adapter.

tests/golden/adapters/bmf/bench.json is written by hand from the published format (no bencher
CLI was available to capture one; see the README there); its numbers are checked below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regbench.adapters import asv, bmf, pyperf, pytest_benchmark  # noqa: F401 - registers them
from regbench.adapters.base import REGISTRY, SNIFF_BYTES
from regbench.errors import InputError

GOLDEN = Path(__file__).parent / "golden" / "adapters"
BMF = GOLDEN / "bmf" / "bench.json"


def parse(path: Path):
    return REGISTRY["bmf"].parse(path)


def sniff(path: Path) -> bool:
    return REGISTRY["bmf"].sniff(path.read_bytes()[:SNIFF_BYTES].decode("utf-8", errors="replace"), path)


def test_golden_file_measures_names_units_directions():
    runs = parse(BMF)
    got = [(r.benchmark, r.samples.tolist(), r.unit, r.direction) for r in runs]
    assert got == [
        ("sort/1000", [5120.5], "ns", "lower"),
        ("sort/1000 [throughput]", [195293.6], "ops/s", "higher"),
        ('parse "quoted" name', [88.0], "ns", "lower"),
        ("my_binary [file-size]", [1048576.0], "B", "lower"),
        ("my_binary [instructions]", [123456789.0], "instructions", "lower"),  # unit unknown to BMF
    ]
    assert all(r.run == 0 and r.warmup == 0 for r in runs)  # one file = one run
    assert runs[0].params == {"lower_value": 5001.25, "upper_value": 5240.75}
    assert runs[1].params == {}
    assert runs[4].params == {"lower_value": 123000000}


def test_golden_file_is_sniffed():
    assert sniff(BMF)


@pytest.mark.parametrize("text", [
    '{"b": {"latency": {"value": 1.0}}}',
    '  {\n "a \\" b": {\n  "throughput": {\n   "lower_value": 1, "value": 2, "upper_value": 3}}}',
])
def test_sniff_accepts_bmf_variants(tmp_path, text):
    p = tmp_path / "x.json"
    p.write_text(text)
    assert sniff(p)
    assert parse(p)


@pytest.mark.parametrize("text", [
    '{"benchmark": "sort", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n',  # canonical JSON lines
    '{"context": {"date": "2024"}, "benchmarks": []}',  # Google Benchmark
    '{"results": [{"command": "x", "times": [1.0]}]}',  # hyperfine
    '[{"benchmark": "a.B.c", "primaryMetric": {"score": 1.0}}]',  # JMH
    '{"mean": {"confidence_interval": {"confidence_level": 0.95}, "point_estimate": 1.0}}',  # criterion
    '{"sampling_mode": "Linear", "iters": [1.0], "times": [2.0]}',  # criterion sample.json
    'benchmark,version,run,iteration,value\nsort,v1,0,0,1.5\n',  # canonical CSV
    'BenchmarkSort-2   \t 1000\t  1234 ns/op\n',  # go test
])
def test_sniff_rejects_other_formats(tmp_path, text):
    p = tmp_path / "x.json"
    p.write_text(text)
    assert not sniff(p)


@pytest.mark.parametrize("path", [
    GOLDEN / "pytest-benchmark" / "benchmark-json.json", GOLDEN / "pyperf" / "suite.json",
    GOLDEN / "pyperf" / "timeit.json.gz", GOLDEN / "asv" / "results" / "golden" / "samples.json",
    GOLDEN / "asv" / "results" / "benchmarks.json", GOLDEN / "asv" / "results" / "golden" / "machine.json",
], ids=lambda p: p.name)
def test_sniff_rejects_python_tools_golden_files(path):
    assert not sniff(path)


def test_bmf_file_is_not_claimed_by_the_python_tools():
    assert not any(REGISTRY[n].sniff(BMF.read_text(), BMF) for n in ("pytest-benchmark", "pyperf", "asv"))


@pytest.mark.parametrize("text, line, message", [
    ('{\n "a": {\n  "latency": {\n   "value": "fast"\n  }\n }\n}\n', 2,
     r"benchmark 'a', measure 'latency': `value` must be a finite number, got 'fast'"),
    ('{\n "a": {"latency": {"value": 1}},\n "b": {"latency": {"value": NaN}}\n}\n', 3,
     r"`value` must be a finite number, got nan"),
    ('{\n "a": {"latency": {"lower_value": 1}}\n}\n', 2, r"expected an object with `value`"),
    ('{\n "a": {"latency": {"value": 1, "upper_value": true}}\n}\n', 2, r"`upper_value` must be a finite number"),
    ('{\n "a": 3\n}\n', 2, r"benchmark 'a' must be an object of measures"),
    ('{\n "a": {}\n}\n', 2, r"benchmark 'a' must be an object of measures"),
    ('{}', 1, r"no benchmarks in the file"),
    ('[{"a": 1}]', 1, r"not a BMF file"),
    ('{\n "a": {"latency": {"value": 1}},\n "b": {"latency": {"value": 2}\n', 4, r"invalid JSON: .*truncated"),
    ('{"a": {"latency": {"value": 1}} "b": 1}', 1, r"invalid JSON: Expecting ',' delimiter"),
])
def test_bad_files_give_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(InputError, match=rf"bad\.json:{line}: (.*: )?{message}"):
        parse(p)


def test_nothing_half_imported(tmp_path):
    doc = json.loads(BMF.read_text())
    doc["zzz"] = {"latency": {"value": None}}  # after four good benchmarks
    p = tmp_path / "late.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"late\.json:1: benchmark 'zzz'"):
        parse(p)
