"""The cargo-bench adapter against real libtest output (tests/golden/adapters/cargo-bench).

``single.txt`` is one ``cargo +nightly bench`` (stdout); ``repeated.txt`` three invocations with
stdout and stderr together (``make_golden.sh``, the tiny project in ``src/``).  The numbers
checked below were read from the files by hand.
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
SINGLE = GOLDEN / "cargo-bench" / "single.txt"
REPEATED = GOLDEN / "cargo-bench" / "repeated.txt"


def parse(path):
    return get_adapter("cargo-bench").parse(Path(path))


def test_golden_single_invocation_one_run_of_one_sample_each():
    runs = parse(SINGLE)
    # test nested::sum_100_000 ... bench:      72,114.61 ns/iter (+/- 46,150.10)
    # test sum_10              ... bench:           7.90 ns/iter (+/- 3.13)
    # test sum_1000            ... bench:         696.69 ns/iter (+/- 334.91)
    assert [(r.benchmark, r.run, r.samples.tolist(), r.params["plus_minus"]) for r in runs] == [
        ("nested::sum_100_000", 0, [72114.61], 46150.10),
        ("sum_10", 0, [7.90], 3.13),
        ("sum_1000", 0, [696.69], 334.91),
    ]
    assert {(r.unit, r.direction, r.warmup) for r in runs} == {("ns/iter", "lower", 0)}


def test_golden_repeated_invocations_are_runs():
    runs = [r for r in parse(REPEATED) if r.benchmark == "sum_1000"]
    # Lines 7, 17 and 27: 1,026.85 (+/- 470.14), 1,257.12 (+/- 1,457.58), 685.49 (+/- 264.45)
    assert [r.run for r in runs] == [0, 1, 2]
    assert [r.samples[0] for r in runs] == [1026.85, 1257.12, 685.49]
    assert [r.params["plus_minus"] for r in runs] == [470.14, 1457.58, 264.45]
    assert len(parse(REPEATED)) == 9  # 3 benchmarks x 3 invocations; cargo's stderr lines ignored


def test_throughput_and_integer_forms(tmp_path):
    p = tmp_path / "old.txt"
    p.write_text("running 2 tests\n"
                 "test tests::unit ... ok\n"
                 "test skipped ... ignored\n"
                 "test copy   ... bench:       1,234 ns/iter (+/- 56) = 4096 MB/s\n"
                 "test parse  ... bench:          25 ns/iter (+/- 1)\r\n"
                 "test copy   ... bench:       1,200 ns/iter (+/- 50) = 4200 MB/s\n")
    runs = parse(p)
    assert [(r.benchmark, r.run, r.samples[0], r.params) for r in runs] == [
        ("copy", 0, 1234.0, {"plus_minus": 56.0, "mb_per_s": 4096.0}),
        ("parse", 0, 25.0, {"plus_minus": 1.0}),
        ("copy", 1, 1200.0, {"plus_minus": 50.0, "mb_per_s": 4200.0}),
    ]


@pytest.mark.parametrize("path", [SINGLE, REPEATED])
def test_sniff_claims_libtest_output(path):
    assert sniff_format(path) == "cargo-bench"


@pytest.mark.parametrize("text", [
    "benchmark,version,run,iteration,value\nb,v1,0,0,1.5\n",
    '{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n',
    "running 1 test\ntest tests::unit ... ok\n",
    "BenchmarkSum-8   1000000   1234 ns/op\n",
])
def test_sniff_rejects_other_formats(text):
    assert not get_adapter("cargo-bench").sniff(text, Path("x"))


def test_sniff_rejects_jmh_and_criterion_golden_files():
    adapter = get_adapter("cargo-bench")
    for path in [GOLDEN / "jmh/thrpt_avgt_gc.json", GOLDEN / "criterion/results/sum_plain/new/sample.json"]:
        assert not adapter.sniff(path.read_text()[:SNIFF_BYTES], path)


def test_truncated_line_is_reported(tmp_path):
    text = SINGLE.read_text()
    cut = text[: text.index("696.69") + 3]  # the file ends in the middle of sum_1000's line
    p = tmp_path / "cut.txt"
    p.write_text(cut)
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:5: a benchmark line that is cut short"):
        parse(p)


@pytest.mark.parametrize(("text", "message"), [
    ("test a ... bench: 12 ns/iter (+/- 1)\ntest b ... bench: many ns/iter (+/- 1)\n", ":2: a benchmark line"),
    ("test a ... bench: 12 ns/iter (+/- 1)\ntest b ... FAILED\n", ":2: benchmark 'b' FAILED"),
    ("running 0 tests\n\ntest result: ok. 0 passed\n", ": no benchmark results"),
    ("", ": no benchmark results"),
])
def test_invalid_files(tmp_path, text, message):
    p = tmp_path / "x.txt"
    p.write_text(text)
    with pytest.raises(InputError, match=re.escape(str(p) + message)):
        parse(p)


# --- live: build and run the tiny project with nightly libtest -----------------------------------

LIVE_DIR = Path(tempfile.gettempdir()) / "regbench-live-cargo-bench"


def _nightly_missing() -> str | None:
    if shutil.which("cargo") is None:
        return "needs cargo on PATH"
    try:
        subprocess.run(["cargo", "+nightly", "--version"], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "needs a nightly Rust toolchain for #![feature(test)] (rustup toolchain install nightly)"
    return None


@pytest.mark.slow
def test_live_cargo_bench_run_is_imported(tmp_path):
    reason = _nightly_missing()
    if reason:
        pytest.skip(reason)
    proj, target = LIVE_DIR / "proj", LIVE_DIR / "target"
    shutil.copytree(GOLDEN / "cargo-bench" / "src", proj, dirs_exist_ok=True)
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    out = tmp_path / "bench.txt"
    with out.open("w") as fh:
        for _ in range(2):  # two invocations: two runs
            subprocess.run(["cargo", "+nightly", "bench", "--bench", "sum", "--", "--exact", "sum_10"], cwd=proj,
                           env=env, check=True, stdout=fh, stderr=subprocess.DEVNULL, timeout=200)
    assert sniff_format(out) == "cargo-bench"
    runs = parse(out)
    assert [(r.benchmark, r.run, r.samples.size, r.unit) for r in runs] == [
        ("sum_10", 0, 1, "ns/iter"), ("sum_10", 1, 1, "ns/iter")]
    assert all(np.isfinite(r.samples).all() and r.samples[0] > 0 for r in runs)
