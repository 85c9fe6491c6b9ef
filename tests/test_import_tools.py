"""`regbench import` of every tool's golden output, end to end: sniffed, stored as runs, appended."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from regbench.store import Store

GOLDEN = Path(__file__).parent / "golden" / "adapters"
FILES = {
    "asv": GOLDEN / "asv" / "results" / "golden" / "samples.json",
    "bmf": GOLDEN / "bmf" / "bench.json",
    "cargo-bench": GOLDEN / "cargo-bench" / "repeated.txt",
    "criterion": GOLDEN / "criterion" / "results",
    "go": GOLDEN / "go" / "bench.txt",
    "go-json": GOLDEN / "go" / "bench.json",
    "google-benchmark": GOLDEN / "google-benchmark" / "repetitions.json",
    "hyperfine": GOLDEN / "hyperfine" / "two-commands.json",
    "jmh": GOLDEN / "jmh" / "thrpt_avgt_gc.json",
    "pyperf": GOLDEN / "pyperf" / "suite.json",
    "pytest-benchmark": GOLDEN / "pytest-benchmark" / "benchmark-json.json",
}


def regbench(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "regbench.cli.main", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


@pytest.fixture
def regbench_here(capsys):
    """``regbench_here(*args)``: what :func:`regbench` does, by the console entry point's ``main``
    in this process (the tests of each format's import: the command as a process is the other
    tests' here, and a fresh interpreter costs each import a second or more)."""
    from regbench.cli.main import main

    def run(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)
    return run


def test_every_format_has_a_golden_file():
    out = regbench("import", "--list-formats")
    names = [line.split("\t")[0] for line in out.stdout.splitlines()]
    assert set(names) - {"csv", "jsonl"} == set(FILES)


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_auto_import_of_real_output_stores_its_runs_and_a_second_import_appends(tmp_path, fmt, regbench_here):
    from regbench.adapters.base import get_adapter

    path = FILES[fmt]
    expected = get_adapter(fmt).parse(path)
    store = tmp_path / "r.db"
    first = regbench_here("--store", str(store), "import", str(path), "--version", "v1", "--timestamp", "2026-01-01T00:00:00Z")
    assert first.returncode == 0, first.stderr
    assert f"({fmt})" in first.stdout  # the sniffed format is said
    again = regbench_here("--store", str(store), "import", str(path), "--format", fmt, "--version", "v1")
    assert again.returncode == 0, again.stderr
    with Store(store, create=False) as s:
        series = {x.benchmark: x for x in s.load_series()}
        per_bench = {}
        for r in expected:
            per_bench.setdefault(r.benchmark, []).append(r)
        assert set(series) == set(per_bench)
        for name, runs in per_bench.items():
            assert [v.name for v in series[name].versions] == ["v1"]
            stored = series[name].runs[0]
            assert len(stored) == 2 * len(runs)  # the second import added runs after the first's
            assert sum(a.size for a in stored) == 2 * sum(r.samples.size - r.warmup for r in runs)


def test_tool_output_needs_a_version_and_touches_nothing_without_one(tmp_path):
    store = tmp_path / "r.db"
    out = regbench("--store", str(store), "import", str(FILES["go"]))
    assert out.returncode == 3 and "--version is needed" in out.stderr and out.stderr.count("\n") == 1
    assert not store.exists()


def test_a_broken_file_names_its_line_and_stores_nothing(tmp_path):
    bad = tmp_path / "jmh.json"
    text = FILES["jmh"].read_text()
    bad.write_text(text[: len(text) // 2])
    store = tmp_path / "r.db"
    out = regbench("--store", str(store), "import", str(bad), "--format", "jmh", "--version", "v1")
    assert out.returncode == 3 and out.stderr.startswith(f"regbench: error: {bad}:") or out.stderr.startswith(f"{bad}:") \
        or f"{bad}:" in out.stderr
    assert out.stderr.count("\n") == 1
    assert not store.exists()


def test_unknown_content_asks_for_a_format(tmp_path):
    odd = tmp_path / "odd.txt"
    odd.write_text("hello\n")
    out = regbench("--store", str(tmp_path / "r.db"), "import", str(odd), "--version", "v1")
    assert out.returncode == 3 and "not a format regbench knows" in out.stderr


def test_canonical_rows_refuse_a_version_option(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("benchmark,version,run,iteration,value\nb,v1,0,0,1.0\n")
    out = regbench("--store", str(tmp_path / "r.db"), "import", str(csv), "--version", "v9")
    assert out.returncode == 3 and "canonical rows name their versions" in out.stderr
    json.loads("{}")


def test_a_bad_canonical_file_creates_no_store(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("benchmark,version,run,iteration,value\n")
    store = tmp_path / "r.db"
    out = regbench("--store", str(store), "import", str(csv))
    assert out.returncode == 3 and out.stderr.count("\n") == 1
    assert not store.exists()


def test_unknown_format_is_said_before_the_version_and_timestamps_must_agree(tmp_path):
    store = tmp_path / "r.db"
    out = regbench("--store", str(store), "import", str(FILES["go"]), "--format", "nope")
    assert out.returncode == 2 and "Error: Invalid value for '--format': unknown format 'nope'" in out.stderr
    assert not store.exists()
    ok = regbench("--store", str(store), "import", str(FILES["go"]), "--version", "v1", "--timestamp", "2024-01-01T00:00:00Z")
    assert ok.returncode == 0, ok.stderr
    clash = regbench("--store", str(store), "import", str(FILES["go"]), "--version", "v1", "--timestamp", "2025-01-01T00:00:00Z")
    assert clash.returncode == 3 and "is stored with timestamp 2024-01-01" in clash.stderr


def test_canonical_files_refuse_config_and_machine_options(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("benchmark,version,run,iteration,value\nb,v1,0,0,1.0\n")
    out = regbench("--store", str(tmp_path / "r.db"), "import", str(csv), "--machine", "m2")
    assert out.returncode == 3 and "--machine and --direction are for other tools' output" in out.stderr
