"""How numbers look in `regbench summary`: a time unit per benchmark, intervals with the precision
their half-width carries, counts as integers; and why a single run has no interval."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.model import RunRecord
from regbench.report.units import DisplayUnit, decimals_for, display_unit, fmt_count, fmt_interval, fmt_scaled
from regbench.store import Store

GOLDEN = Path(__file__).resolve().parent / "golden" / "adapters"


@pytest.mark.parametrize("values, unit, shown", [
    ([2.638e-4, 2.7e-4], "s", "us"), ([1.5, 2.0], "s", "s"), ([0.0123], "s", "ms"), ([3e-8], "s", "ns"),
    ([1e-12], "s", "ns"),  # below a nanosecond: still ns
    ([1500.0], "ns", "us"), ([0.5], "ms", "us"), ([12.0, 15.0], "ops/s", "ops/s"), ([float("nan")], "s", "s"),
    # a time per operation (Go's and JMH's ns/op) is scaled by its time; other "per" units are not
    ([4157530.0], "ns/op", "ms/op"), ([75.8], "ns/op", "ns/op"), ([1.2e4], "us/op", "ms/op"),
    ([3.0], "allocs/op", "allocs/op"), ([64.0], "B/op", "B/op"),
    # Google Benchmark's bytes and items per second, prefixed as its console prints them
    ([2.7330731554e10], "B/s", "GiB/s"), ([512.0], "B/s", "B/s"), ([3e6], "B/s", "MiB/s"),
    ([1.3e8], "items/s", "M items/s"), ([999.0], "items/s", "items/s"), ([1500.0], "items/s", "k items/s"),
])
def test_display_unit(values, unit, shown):
    assert display_unit(values, unit).name == shown


def test_one_unit_for_a_benchmark_from_the_median_of_its_values():
    du = display_unit([9e-4, 1.1e-3, 1.2e-3], "s")
    assert du.name == "ms" and math.isclose(du.factor, 1e3)
    per_op = display_unit([4157530.0, 4e6], "ns/op")
    assert per_op.name == "ms/op" and math.isclose(per_op.factor, 1e-6)
    assert fmt_interval(4157530.0, 1855369.0, per_op) == "4.2 ± 1.9 ms/op"


def test_a_rate_is_shown_as_the_tool_shows_it():
    # Before, `summary` printed `27,330,731,554 ± 550,184,665 B/s` for a crc32c benchmark whose
    # Google Benchmark console line said `bytes_per_second=25.4537G/s` (GiB/s).
    du = display_unit([27330731554.0], "B/s")
    assert fmt_interval(27330731554.0, 550184665.0, du) == "25.45 ± 0.51 GiB/s"
    items = display_unit([130669827.0], "items/s")
    assert fmt_interval(130669827.0, 33234347.0, items) == "131 ± 33 M items/s"


@pytest.mark.parametrize("mean, hw, unit, text", [
    (2.638e-4, 5.98e-6, DisplayUnit("us", 1e6), "263.8 ± 6.0 us"),
    (1.49751, 0.00403, DisplayUnit("s"), "1.4975 ± 0.0040 s"),
    (1234.5, 12.3, DisplayUnit("ops/s"), "1,234 ± 12 ops/s"),
    (0.1, 0.95, DisplayUnit("ms", 1.0), "0.10 ± 0.95 ms"),
    (3e-8, float("nan"), DisplayUnit("ns", 1e9), "30 ± — ns"),
    (float("nan"), 1.0, DisplayUnit("s"), "—"),
])
def test_fmt_interval_rounds_the_mean_where_the_half_width_stops(mean, hw, unit, text):
    assert fmt_interval(mean, hw, unit) == text


def test_decimals_and_counts():
    assert [decimals_for(h) for h in (5.98, 0.0123, 12.0, 0.95, 0.0)] == [1, 3, 0, 2, 0]
    assert [fmt_count(x) for x in (171200.0, 20, float("inf"), float("nan"), None)] == \
        ["171,200", "20", "∞", "—", "—"]


def test_summary_shows_units_per_benchmark_and_integer_counts(tmp_path, capsys):
    rng = np.random.default_rng(3)
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("fast", "v1", r, rng.normal(2.6e-4, 2e-6, 1500)) for r in range(4)])
        store.add_runs([RunRecord("slow", "v1", r, rng.normal(1.5, 0.01, 20)) for r in range(4)])
    assert main(["--store", str(tmp_path / "r.db"), "summary", "--no-robust"]) == 0
    out = capsys.readouterr().out
    fast = next(line for line in out.splitlines() if line.startswith("fast"))
    slow = next(line for line in out.splitlines() if line.startswith("slow"))
    assert " us " in fast and "e-0" not in fast and "1,500" in fast and "e+" not in fast
    assert re.search(r"1\.\d+ ± 0\.\d+ s ", slow) and "e-0" not in slow
    assert "No interval" not in out


def test_a_single_tool_invocation_says_why_it_has_no_interval(tmp_path, capsys):
    store = ["--store", str(tmp_path / "r.db")]
    hyperfine = GOLDEN / "hyperfine" / "two-commands.json"
    assert main([*store, "import", "--version", "v1", str(hyperfine)]) == 0
    note = capsys.readouterr().out
    assert "note: 2 benchmarks of v1 have one run" in note and "import each output with --version v1" in note
    assert main([*store, "summary"]) == 0
    out = capsys.readouterr().out
    assert "± —" in out and "No interval (± —) for 2 experiments with a single run" in out
    # A second invocation's output adds a run: intervals, and no note.
    assert main([*store, "import", "--version", "v1", str(hyperfine)]) == 0
    assert "note:" not in capsys.readouterr().out
    assert main([*store, "summary"]) == 0
    out = capsys.readouterr().out
    assert "No interval" not in out and "± —" not in out


def test_a_large_scaled_value_is_not_in_exponent_notation():
    # A JMH throughput of 15,370 ops/ms was shown by `compare` as 1.537e+04 ops/ms.
    ops = DisplayUnit("ops/ms")
    assert fmt_scaled(15370.46, ops) == "15,370 ops/ms"
    assert fmt_scaled(-26484.7, ops) == "-26,480 ops/ms"
    assert fmt_scaled(9999.4, ops) == "9999 ops/ms" and fmt_scaled(263.84, DisplayUnit("us")) == "263.8 us"
    assert fmt_scaled(1.5e20, ops) == "1.5e+20 ops/ms" and fmt_scaled(None, ops) == "—"
