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
    assert seen["error"] > 0 and seen["accepted"] > 0


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
