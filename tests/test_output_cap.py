"""A benchmark's output is read with bounded memory: samples are capped (``max_samples``) and
lines are bounded, and a run over the cap is recorded as failed with the reason.

The benchmarks are real processes printing real output; the cap is set small in
``regbench.toml`` so that the tests are fast.
"""

from __future__ import annotations

import io
import json
import sys
import textwrap

import numpy as np
import pytest

from regbench.config import DEFAULT_MAX_SAMPLES, BenchmarkSpec, load_config
from regbench.errors import ConfigError
from regbench.run.campaign import NullReporter, run_campaign
from regbench.run.execute import MAX_LINE_BYTES, execute_run, read_samples
from regbench.store import Store

PY = sys.executable


def printer(n: int, fmt: str = "lines") -> list[str]:
    line = '{"value": 0.5}' if fmt == "jsonl" else "0.5"
    return [PY, "-c", f"import sys; sys.stdout.write(({line!r} + '\\n') * {n})"]


@pytest.mark.parametrize("fmt", ["lines", "jsonl"])
def test_a_run_printing_more_than_max_samples_is_failed_with_the_reason(tmp_path, fmt):
    spec = BenchmarkSpec(name="chatty", kind="command", command=tuple(printer(5000, fmt)), output=fmt,
                         iterations=10, max_samples=1000)
    out = execute_run(spec, tree=tmp_path, python=PY, run_index=0, version="v")
    assert out.status == "failed" and out.samples.size == 0
    assert out.stderr_tail.endswith("[regbench] more than 1000 samples (`max_samples`): the output was not read further")
    at_cap = execute_run(BenchmarkSpec(name="exact", kind="command", command=tuple(printer(1000, fmt)), output=fmt,
                                       iterations=10, max_samples=1000),
                         tree=tmp_path, python=PY, run_index=0, version="v")
    assert at_cap.status == "ok" and at_cap.samples.size == 1000


def test_the_cap_from_regbench_toml_reaches_the_stored_run(tmp_path):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [defaults]
        max_samples = 100
        iterations = 10
        runs = 1
        [[benchmark]]
        name = "chatty"
        command = {json.dumps(printer(101))}
        [[benchmark]]
        name = "quiet"
        command = {json.dumps(printer(100))}
    """))
    config = load_config(cfg)
    assert {b.name: b.max_samples for b in config.benchmarks} == {"chatty": 100, "quiet": 100}
    with Store(tmp_path / "r.db") as store:
        run_campaign(config, store, seed=1, machine="m", reporter=NullReporter())
        runs = {r.benchmark: r for r in store.runs()}
    assert runs["chatty"].status == "failed"
    assert "more than 100 samples (`max_samples`)" in runs["chatty"].stderr_tail
    assert runs["quiet"].status == "ok"


def test_a_line_longer_than_the_bound_is_garbage_without_reading_it_whole(tmp_path):
    spec = BenchmarkSpec(name="long", kind="command",
                         command=(PY, "-c", f"print(1.0); print('1' * {4 * MAX_LINE_BYTES})"), iterations=2)
    out = execute_run(spec, tree=tmp_path, python=PY, run_index=0, version="v")
    assert out.status == "garbage" and np.array_equal(out.samples, [1.0])
    assert out.stderr_tail.endswith(f"stdout line 2: longer than {MAX_LINE_BYTES} bytes")


def test_read_samples_keeps_the_line_numbers_and_the_old_line_endings():
    read = read_samples(io.BytesIO(b"1\r2\r\n\n3\nnope\n"), "lines")
    assert np.array_equal(read.samples, [1.0, 2.0, 3.0])
    assert read.problem == "stdout line 5: not a number: 'nope'" and not read.too_many
    huge = read_samples(io.BytesIO(b'{"value": 1e400}\n'), "jsonl")
    assert huge.problem == "stdout line 1: not a finite number: '{\"value\": 1e400}'"
    deep = read_samples(io.BytesIO(b"[" * 5000 + b"]" * 5000 + b"\n"), "jsonl")
    assert deep.problem is not None and deep.problem.startswith("stdout line 1: not JSON: '[[[[")
    assert len(deep.problem) < 120


@pytest.mark.parametrize("value, message", [
    (0, "must be a positive integer"),
    (10**9, "must be a positive integer of at most 100000000"),
])
def test_max_samples_is_validated(tmp_path, value, message):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[[benchmark]]\nname = "a"\ncommand = ["true"]\nmax_samples = {value}\n')
    with pytest.raises(ConfigError, match=r"\[\[benchmark\]\] #1 \('a'\) `max_samples` " + message):
        load_config(cfg)


def test_iterations_beyond_max_samples_are_refused_at_the_door(tmp_path):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[[benchmark]]\nname = "a"\ncommand = ["true"]\nmax_samples = 10\niterations = 9\nwarmup = 2\n')
    with pytest.raises(ConfigError, match=r"`warmup` \+ `iterations` \(11\) is more than `max_samples` \(10\)"):
        load_config(cfg)
    assert BenchmarkSpec(name="d", kind="command").max_samples == DEFAULT_MAX_SAMPLES
