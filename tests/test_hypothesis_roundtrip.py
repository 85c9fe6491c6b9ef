"""Property tests: any table survives CSV -> parse -> store -> load_series / export bit for bit.

The tables are drawn by hypothesis: a few benchmarks (with units and directions), versions with
or without timestamps (naive, ``Z`` or an offset), configurations, machines, runs with arbitrary
indices and first iterations, and finite floats including subnormals, extremes, signed zeros;
and what a tool said of each run (``run_tool``: timing and per-sample weights, or neither).
Names contain commas, quotes, spaces and non-ASCII text.  The CSV is written here with Python's
``csv`` module, independently of :func:`regbench.adapters.write_csv`.
"""

from __future__ import annotations

import csv
import io
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regbench.adapters import COLUMNS, parse_file
from regbench.ingest import import_file
from regbench.model import RunRecord, ToolTiming, VersionInfo
from regbench.store import Store

from storetools import export_csv

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                     HealthCheck.function_scoped_fixture])

# Printable text with the characters a CSV writer must quote (comma, quote, CR, LF), and beyond ASCII.
_CHARS = st.characters(blacklist_categories=("Cs", "Cc"), max_codepoint=0x1F9FF) | st.sampled_from(
    [",", '"', " ", "'", "é", "中", "🖥", "\u00a0", ";", "\\", "\n", "\r", "\t"])


# Numeric-looking names ("007", "1.10", "true") included: pandas must not turn them into numbers.
NAME = (st.text(_CHARS, min_size=1, max_size=12)
        | st.sampled_from(["007", "1.1", "1.10", "2.0", "true", "False", "1e3", "-0", "inf", "NaN", "NA", "null"])
        ).filter(lambda s: s.strip() != "")
FLOAT = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True) | st.sampled_from(
    [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
     0.1, 1 / 3, 1e-300, -1e300, 123456789.12345679])
TIMESTAMP = st.one_of(
    st.none(),
    st.tuples(
        # A small pool makes equal timestamps (ties) common; "date" and "+02:00" styles add more.
        st.sampled_from([datetime(2024, 1, 1), datetime(2024, 1, 1, 2), datetime(2024, 1, 1, 3, 30)])
        | st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2040, 1, 1)),
        st.sampled_from(["naive", "Z", "+02:00", "-05:30", "date"])),
)


@dataclass
class Table:
    benchmarks: dict[str, tuple[str, str]]  # name -> (unit, direction)
    versions: dict[str, tuple | None]  # name -> (datetime, style) or None
    runs: dict[tuple[str, str, str, str, int], tuple[int, list[float]]]  # key -> (first iteration, samples)

    def timestamp_text(self, version: str) -> str:
        ts = self.versions[version]
        if ts is None:
            return ""
        when, style = ts
        when = when.replace(microsecond=0)
        if style == "naive":
            return when.isoformat()
        if style == "date":
            return when.date().isoformat()
        if style == "Z":
            return when.isoformat() + "Z"
        return when.isoformat() + style

    def timestamp_utc(self, version: str) -> datetime | None:
        text = self.timestamp_text(version)
        if not text:
            return None
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return t.astimezone(UTC).replace(tzinfo=None) if t.tzinfo else t


@st.composite
def tables(draw, max_runs: int = 8, max_samples: int = 6) -> Table:
    benchmarks = draw(st.dictionaries(NAME, st.tuples(st.sampled_from(["s", "ns", "ops/s", "MB, peak", "µs"]),
                                                      st.sampled_from(["lower", "higher"])),
                                      min_size=1, max_size=3))
    versions = draw(st.dictionaries(NAME, TIMESTAMP, min_size=1, max_size=4))
    configs = draw(st.lists(NAME, min_size=1, max_size=2, unique=True))
    machines = draw(st.lists(NAME, min_size=1, max_size=2, unique=True))
    run_data = st.tuples(st.integers(0, 3) | st.integers(0, 10**6), st.lists(FLOAT, min_size=1, max_size=max_samples))
    runs = {}
    # Every version gets at least one run (so that version order is always at stake) ...
    for version in versions:
        key = (draw(st.sampled_from(sorted(benchmarks))), version, draw(st.sampled_from(configs)),
               draw(st.sampled_from(machines)), draw(st.integers(0, 3) | st.integers(0, 2**31 - 1)))
        runs[key] = draw(run_data)
    # ... and then some more anywhere.
    keys = st.tuples(st.sampled_from(sorted(benchmarks)), st.sampled_from(list(versions)),
                     st.sampled_from(configs), st.sampled_from(machines),
                     st.integers(0, 3) | st.integers(0, 2**31 - 1))
    runs.update(draw(st.dictionaries(keys, run_data, max_size=max_runs)))
    return Table(benchmarks, versions, runs)


def csv_text(table: Table, order: list[int], quote_all: bool) -> str:
    """The table as canonical CSV, rows in ``order`` (a permutation of all samples)."""
    rows = []
    for (bench, ver, cfg, mach, run), (first, samples) in table.runs.items():
        unit, direction = table.benchmarks[bench]
        for i, x in enumerate(samples):
            rows.append([bench, ver, run, first + i, x, table.timestamp_text(ver), cfg, mach, unit, direction])
    buf = io.StringIO()
    buf.write(",".join(COLUMNS) + "\r\n")
    # QUOTE_MINIMAL leaves leading spaces unquoted, and the reader skips initial spaces.
    needs_quotes = quote_all or any(str(r[k]) != str(r[k]).lstrip() for r in rows for k in (0, 1, 6, 7, 8))
    # CRLF rows: Python's writer quotes a field with a lone CR only when CR is in the line terminator.
    writer = csv.writer(buf, lineterminator="\r\n",
                        quoting=csv.QUOTE_NONNUMERIC if needs_quotes else csv.QUOTE_MINIMAL)
    for k in order:
        r = rows[k]
        writer.writerow([*r[:4], repr(r[4]) if not needs_quotes else r[4], *r[5:]])
    return buf.getvalue()


def expected_version_order(table: Table, text: str) -> list[str]:
    """History order: versions with a timestamp by time (UTC), ties and the others by first appearance."""
    first_seen = list(dict.fromkeys(r["version"] for r in csv.DictReader(io.StringIO(text))))
    stamped = [v for v in first_seen if table.timestamp_utc(v) is not None]
    plain = [v for v in first_seen if table.timestamp_utc(v) is None]
    return sorted(stamped, key=lambda v: (table.timestamp_utc(v), first_seen.index(v))) + plain


def bits(values) -> bytes:
    return np.asarray(values, dtype="<f8").tobytes()


@pytest.fixture(scope="module")
def template_store(tmp_path_factory) -> Path:
    """An empty, migrated store to copy: Alembic runs once per module, not per example."""
    path = tmp_path_factory.mktemp("template") / "results.db"
    Store(path).close()
    return path


def fresh_store(template: Path, folder: Path, name: str) -> Store:
    path = folder / name
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    shutil.copyfile(template, path)
    return Store(path, create=False)


def exported_rows(text: str) -> dict[tuple, dict]:
    out = {}
    for r in csv.DictReader(io.StringIO(text)):
        key = (r["benchmark"], r["version"], r["config"], r["machine"], int(r["run"]), int(r["iteration"]))
        assert key not in out, f"sample written twice: {key}"
        out[key] = r
    return out


# ----------------------------------------------------------------------------------------- parse only
@settings(max_examples=200, **SETTINGS)
@given(table=tables(max_runs=10), data=st.data())
def test_csv_parse_keeps_every_sample(tmp_path_factory, table, data):
    n = sum(len(s) for _, s in table.runs.values())
    order = data.draw(st.permutations(range(n)), label="row order")
    text = csv_text(table, order, data.draw(st.booleans(), label="quote all"))
    path = tmp_path_factory.mktemp("parse") / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    batch = parse_file(path)
    got = {(r.benchmark, r.version, r.config, r.machine, r.run_index): r for r in batch.records}
    assert set(got) == set(table.runs)
    for key, (first, samples) in table.runs.items():
        assert got[key].first_iteration == first
        assert bits(got[key].samples) == bits(samples)
    assert batch.n_samples == n
    used = {k[0] for k in table.runs}
    assert {b: (i.get("unit"), i.get("direction")) for b, i in batch.benchmarks.items()} == {
        b: table.benchmarks[b] for b in used}
    for v, info in batch.versions.items():
        assert info.get("timestamp_text") == (table.timestamp_text(v) or None)


# ------------------------------------------------------------------------------ store and export
@settings(max_examples=60, **SETTINGS)
@given(table=tables(), data=st.data())
def test_csv_store_load_series_and_export_are_bit_exact(template_store, tmp_path_factory, table, data):
    n = sum(len(s) for _, s in table.runs.values())
    order = data.draw(st.permutations(range(n)), label="row order")
    text = csv_text(table, order, data.draw(st.booleans(), label="quote all"))
    folder = tmp_path_factory.mktemp("roundtrip")
    path = folder / "t.csv"
    path.write_bytes(text.encode("utf-8"))

    with fresh_store(template_store, folder, "a.db") as store:
        rep = import_file(store, str(path))
        assert (rep.samples, rep.runs) == (n, len(table.runs))
        history = expected_version_order(table, text)
        assert [v.name for v in store.versions()] == history

        # -> load_series: every run of every series, bit-exact, versions in history order.
        seen = set()
        for s in store.load_series():
            assert (s.unit, s.direction) == table.benchmarks[s.benchmark]
            names = [v.name for v in s.versions]
            assert names == [v for v in history if v in names]
            for v, runs in zip(s.versions, s.runs, strict=True):
                assert v.timestamp_text == (table.timestamp_text(v.name) or None)
                assert v.timestamp == table.timestamp_utc(v.name)
                keys = sorted(k for k in table.runs if k[:4] == (s.benchmark, v.name, s.config, s.machine))
                assert len(runs) == len(keys)
                for key, arr in zip(keys, runs, strict=True):
                    assert bits(arr) == bits(table.runs[key][1])
                    seen.add(key)
        assert seen == set(table.runs)

        # -> export: every sample once, value text = repr, attributes kept.
        exported = export_csv(store)
    rows = exported_rows(exported)
    assert len(rows) == n
    for (bench, ver, cfg, mach, run), (first, samples) in table.runs.items():
        unit, direction = table.benchmarks[bench]
        for i, x in enumerate(samples):
            r = rows[(bench, ver, cfg, mach, run, first + i)]
            assert r["value"] == repr(x)
            assert bits([float(r["value"])]) == bits([x])
            assert (r["timestamp"], r["unit"], r["direction"]) == (table.timestamp_text(ver), unit, direction)

    # The export imports to the same data, and exporting that again changes nothing.
    again = folder / "export.csv"
    again.write_bytes(exported.encode("utf-8"))
    with fresh_store(template_store, folder, "b.db") as store_b:
        import_file(store_b, str(again))
        second = export_csv(store_b)
        history_b = [v.name for v in store_b.versions()]
    assert second == exported
    assert history_b == history  # version order survives export, with or without timestamps


# ---------------------------------------------------------------- what a tool said of each run
# run_tool's values (processes, seconds, weights) are finite and non-negative; extremes included.
TOOL_FLOAT = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False, allow_subnormal=True) | st.sampled_from(
    [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, 1454.0, 1e-300])


def tool_bits(store: Store) -> dict[tuple, tuple]:
    """What the store holds of each run's tool (``run_tool``), bit for bit, by run key."""
    return {(i.benchmark, i.version, i.config, i.machine, i.run_index):
            (None if i.timing is None else (i.timing.processes, bits([i.timing.warmup_seconds]),
                                            bits([i.timing.iteration_seconds])),
             None if i.weights is None else bits(i.weights))
            for i in store.run_tools()}


@settings(max_examples=30, **SETTINGS)
@given(table=tables(), data=st.data())
def test_what_a_tool_said_of_each_run_survives_export_and_import_bit_for_bit(template_store, tmp_path_factory,
                                                                           table, data):
    records = []
    for (bench, ver, cfg, mach, run), (first, samples) in table.runs.items():
        timing = data.draw(st.none() | st.builds(ToolTiming, st.integers(0, 2**31 - 1), TOOL_FLOAT, TOOL_FLOAT),
                           label="timing")
        weights = data.draw(st.none() | st.lists(TOOL_FLOAT, min_size=len(samples), max_size=len(samples)),
                            label="weights")
        records.append(RunRecord(bench, ver, run, np.array(samples), config=cfg, machine=mach, first_iteration=first,
                                 timing=timing, weights=None if weights is None else np.array(weights)))
    folder = tmp_path_factory.mktemp("tool")
    with fresh_store(template_store, folder, "a.db") as a:
        a.add_runs(records, versions=[VersionInfo(v) for v in table.versions],
                   benchmarks={b: {"unit": u, "direction": d} for b, (u, d) in table.benchmarks.items()})
        want = tool_bits(a)
        exported = export_csv(a)
    path = folder / "export.csv"
    path.write_bytes(exported.encode("utf-8"))
    with fresh_store(template_store, folder, "b.db") as b:
        import_file(b, str(path))
        assert tool_bits(b) == want
        assert export_csv(b) == exported
