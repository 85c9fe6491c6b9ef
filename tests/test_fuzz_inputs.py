"""Fuzz tests: every parser, and ``regbench.toml`` loading, returns its result or raises
regbench's own one-line error, never any other exception (tests/fuzztools.py draws the inputs).

The budget is fixed and the examples derandomized, so CI sees the same inputs every time;
benchmarks/fuzz_inputs.py runs the same strategies for much longer and counts the outcomes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzztools import TARGETS, configuration, load_configuration, outcome

#: Examples per parser in the suite (benchmarks/fuzz_inputs.py runs 10,000).
EXAMPLES = 40
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_parser_returns_results_or_a_one_line_error(name):
    target = TARGETS[name]
    seen: dict[str, int] = {"accepted": 0, "error": 0}

    @FUZZ
    @given(data=target.inputs())
    def check(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / target.filename
            path.write_bytes(data)
            kind, text = outcome(target.call, path)
        assert kind != "traceback", text
        seen[kind] += 1

    check()
    assert seen["error"] > 0  # the inputs do reach the error paths


def test_regbench_toml_loads_or_gives_a_one_line_config_error():
    seen: dict[str, int] = {"accepted": 0, "error": 0}

    @settings(FUZZ, max_examples=150)
    @given(text=configuration())
    def check(text: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "regbench.toml"
            path.write_bytes(text)
            kind, message = outcome(load_configuration, path)
            if kind == "accepted":
                _check_accepted(load_configuration(path))
        assert kind != "traceback", message
        seen[kind] += 1

    check()
    # Mostly refused (3.7% of 1,000 were accepted in the long run, so 150 examples may accept
    # none); a valid configuration is accepted and keeps the promises checked above.
    assert seen["error"] > 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "regbench.toml"
        path.write_text('[[benchmark]]\nname = "a"\ncommand = ["true"]\nruns = 3\ntimeout = 60\n')
        kind, message = outcome(load_configuration, path)
        assert kind == "accepted", message
        _check_accepted(load_configuration(path))


def _check_accepted(config) -> None:
    """What an accepted configuration promises the code that runs it."""
    from regbench.config import LIMITS

    for b in config.benchmarks:
        assert 0 < b.timeout <= LIMITS["timeout"] and 0 < b.runs <= LIMITS["runs"]
        assert 0 <= b.warmup + b.iterations <= b.max_samples <= LIMITS["max_samples"]
        texts = [*b.command, b.cwd, *b.env, *b.env.values(), *b.pass_env]
        assert not any("\0" in t for t in texts)
        assert not any("=" in k or not k for k in b.env)
    assert 0 < config.build_timeout <= LIMITS["build_timeout"]
    assert config.store is None or isinstance(config.store, str)
    if config.noise.env_size is not None:
        assert config.noise.env_size <= LIMITS["env_size"]


# The reproductions of the reliability issue, and what the long fuzz run found: each is one line.
DEEP = "[" * 990 + "]" * 990
HOSTILE = [
    ("jsonl", "x.jsonl", b'{"benchmark": "a\xff", "version": "v", "run": 0, "iteration": 0, "value": 1}\n',
     "x.jsonl:1: not UTF-8 text (invalid start byte)"),
    ("jsonl", "x.jsonl", b'{"benchmark": "a", "version": "v", "run": 0, "iteration": 0, "value": %d}\n' % 10**400,
     "x.jsonl:1: `value` must be a finite number, got 1000000000"),
    ("jsonl", "x.jsonl", ('{"benchmark": "a", "version": "v", "run": 0, "iteration": 0, "value": %s}\n'
                          % ("[" * 900 + "]" * 900)).encode(), "x.jsonl:1: not JSON: nested more than 100 levels deep"),
    ("csv", "x.csv", b"benchmark,version,run,iteration,value\na,v,0\nb,v,x,0,1,2,3\n", "x.csv:3: expected 5 fields, found 7"),
    ("csv", "x.csv", b"benchmark,version,run,iteration,value\na,v,0,0,1,,,\n", "x.csv:2: expected 5 fields, found more"),
    ("csv", "x.csv", b"benchmark,version,run,iteration,value\na,v,0,0,1\n" + b"1," * 4_000_000 + b"\n",
     "x.csv:3: a line longer than 65536 bytes"),
    ("jmh", "x.json", b'[{"benchmark": "a", "mode": "sample", "primaryMetric": {"scoreUnit": "us/op", '
                      b'"rawDataHistogram": [[[[1, 1e400]]]]}}]', "x.json:1: benchmark 'a': `rawDataHistogram` of fork 0"),
    ("asv", "x.json", b'{"commit_hash": "x", "version": 2, "result_columns": ["result", [1]], "results": {"a": [[1]]}}',
     "x.json:1: `result_columns` must list the columns' names (strings)"),
    ("go", "x.txt", b"BenchmarkA " + b"9" * 5000 + b" 1.0 ns/op\n", "x.txt:1: BenchmarkA: b.N is not a count"),
    ("google-benchmark", "x.json", b'{"context": {}, "benchmarks": [{"name": "a", "time_unit": [1], "real_time": 1}]}',
     "x.json:1: benchmark entry: `time_unit` of 'a' is [1], not one of ns, us, ms, s"),
    *[(name, "x.json", (DEEP if name == "jmh" else '{"benchmarks": %s, "results": %s}' % (DEEP, DEEP)).encode(),
       "x.json:1: ") for name in ("jmh", "google-benchmark", "hyperfine", "pyperf", "pytest-benchmark", "asv", "bmf",
                                  "criterion")],
    ("sniff", "x.json", ('{"Action": %s}\n' % DEEP).encode(), "x.json: "),
]


@pytest.mark.parametrize("name, filename, data, start", HOSTILE, ids=[f"{h[0]}-{i}" for i, h in enumerate(HOSTILE)])
def test_known_hostile_inputs_are_one_line_errors(tmp_path, name, filename, data, start):
    path = tmp_path / filename
    path.write_bytes(data)
    kind, message = outcome(TARGETS[name].call, path)
    assert kind == "error", message
    assert message.startswith(str(tmp_path / start)) and len(message) < 400


def test_a_jmh_score_past_the_float_range_is_left_out_not_a_crash(tmp_path):
    # Found by benchmarks/fuzz_inputs.py (seed 3): a score of 400 digits has no float.
    from regbench.adapters.base import get_adapter

    path = tmp_path / "x.json"
    path.write_text('[{"benchmark": "a", "mode": "avgt", "primaryMetric": {"scoreUnit": "us/op", "score": 1'
                    + "0" * 400 + ', "rawData": [[1.0, 1.1, 0.9]]}}]')
    runs = get_adapter("jmh").parse(path)
    assert [r.samples.tolist() for r in runs] == [[1.0, 1.1, 0.9]]
    assert all("score" not in r.params for r in runs)
