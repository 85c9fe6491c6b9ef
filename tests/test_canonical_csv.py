"""The canonical CSV / JSON-lines contract (DESIGN.md "Contracts"): import errors and round trips.

Every bad file gives one ``InputError`` ``FILE:LINE: what is wrong`` and leaves the store exactly
as it was.  Every measured value survives import and export bit for bit.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.adapters import COLUMNS, parse_file, write_csv
from regbench.adapters.canonical import TOOL_COLUMNS
from regbench.errors import InputError
from regbench.ingest import Remeasured, import_file
from regbench.model import RunRecord, StoredRun, VersionInfo
from regbench.store import Store

from storetools import export_csv

HEADER = "benchmark,version,run,iteration,value"
TOOL = HEADER + ",processes,warmup_seconds,iteration_seconds,weight"  # what a tool said of a run (run_tool)
#: The columns export writes of runs no tool said anything of: all but the tool's.
EXPORTED = [c for c in COLUMNS if c not in TOOL_COLUMNS]
GOOD = "b,v1,0,0,1.5\n"  # line 2 of most files below


@pytest.fixture
def store(store):
    """A store (``conftest.py``) that already holds one run, so that "unchanged" means something."""
    store.add_run(RunRecord("existing", "v0", 0, np.array([1.0, 2.0])), unit="ms", direction="higher")
    return store


def snapshot(store: Store) -> tuple:
    """Everything an import could touch, as plain data."""
    with store.engine.connect() as conn:
        return tuple([tuple(row) for row in conn.execute(sa.text(f"SELECT * FROM {t} ORDER BY id"))]
                     for t in ("benchmark", "version", "config", "machine", "run", "run_tool"))


def write(tmp_path: Path, text: str, name: str = "in.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def expect_error(store: Store, path: Path, line: int | None, message: str) -> InputError:
    """Importing ``path`` fails with exactly ``path:line: message`` and stores nothing."""
    before = snapshot(store)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    with pytest.raises(InputError, match="^" + re.escape(where + message) + "$") as info:
        import_file(store, str(path))
    assert info.value.line == line
    assert info.value.path == str(path)
    assert "\n" not in str(info.value)
    assert snapshot(store) == before
    return info.value


# ------------------------------------------------------------------------------ CSV import errors
CSV_ERRORS = [
    # id, file text, line, message
    ("empty file", "", 1, "empty file (expected a header row: benchmark,version,run,iteration,value)"),
    ("header without value", "benchmark,version,run,iteration\nb,v1,0,0\n", 1,
     "missing column `value` (header must contain benchmark,version,run,iteration,value)"),
    ("header without benchmark", "version,run,iteration,value\nv1,0,0,1\n", 1,
     "missing column `benchmark` (header must contain benchmark,version,run,iteration,value)"),
    ("unknown column", HEADER + ",colour\nb,v1,0,0,1,red\n", 1,
     "unknown column `colour` (known: benchmark,version,run,iteration,value,timestamp,config,machine,unit,"
     "direction,commit,tags,status,error,processes,warmup_seconds,iteration_seconds,weight)"),
    ("column twice", HEADER + ",run\nb,v1,0,0,1,0\n", 1, "a column appears twice in the header"),
    ("header only", HEADER + "\n", 2, "no measurements after the header"),
    ("header and blank lines only", HEADER + "\n\n\n", 2, "no measurements after the header"),
    ("value not a number", HEADER + "\n" + GOOD + "b,v1,0,1,abc\n", 3, "`value` is not a number: 'abc'"),
    ("value not a number after a blank line", HEADER + "\n" + GOOD + "\n\nb,v1,0,1,1.2.3\n", 5,
     "`value` is not a number: '1.2.3'"),
    ("value inf", HEADER + "\n" + GOOD + "b,v1,0,1,inf\n", 3, "`value` must be a finite number, got inf"),
    ("value -inf", HEADER + "\n" + GOOD + "\nb,v1,0,1,-inf\n", 4, "`value` must be a finite number, got -inf"),
    ("value overflows to inf", HEADER + "\n" + GOOD + "b,v1,0,1,1e400\n", 3,
     "`value` must be a finite number, got inf"),
    ("value nan", HEADER + "\n" + GOOD + "b,v1,0,1,nan\n", 3, "`value` is not a number: 'nan'"),
    ("value NaN", HEADER + "\n" + GOOD + "b,v1,0,1,NaN\n", 3, "`value` is not a number: 'NaN'"),
    ("negative run", HEADER + "\n" + GOOD + "b,v1,-1,0,1\n", 3, "`run` must be a non-negative integer, got -1"),
    ("fractional run", HEADER + "\n" + GOOD + "b,v1,1.5,0,1\n", 3,
     "`run` must be a non-negative integer, got 1.5"),
    ("non-integer iteration", HEADER + "\n" + GOOD + "b,v1,0,0.5,1\n", 3,
     "`iteration` must be a non-negative integer, got 0.5"),
    ("iteration not a number", HEADER + "\n" + GOOD + "\nb,v1,0,x,1\n", 4, "`iteration` is not a number: 'x'"),
    ("run not a number", HEADER + "\n" + GOOD + "b,v1,first,0,1\n", 3, "`run` is not a number: 'first'"),
    ("too many fields", HEADER + "\n" + GOOD + "b,v1,0,1,1,2,3\n", 3, "expected 5 fields, found 7"),
    ("too many fields after a blank line", HEADER + "\n" + GOOD + "\nb,v1,0,1,1,2,3\n", 4,
     "expected 5 fields, found 7"),
    ("one field too many", HEADER + "\n" + GOOD + "\nb,v1,0,1,1,2\n", 4, "expected 5 fields, found more"),
    ("one text field too many", HEADER + "\n" + GOOD + "\nb,v1,0,1,1,x\n", 4, "expected 5 fields, found more"),
    ("a text field too many after a bad value", HEADER + "\n" + GOOD + "b,v1,0,1,x\nb,v1,0,2,1,x\n", 3,
     "`value` is not a number: 'x'"),
    ("missing field", HEADER + "\n" + GOOD + "\nb,v1,0,1\n", 4, "missing value for `value`"),
    ("empty field", HEADER + "\n" + GOOD + "b,v1,,1,1\n", 3, "missing value for `run`"),
    ("empty benchmark", HEADER + "\n" + GOOD + ",v1,0,1,1\n", 3, "missing value for `benchmark`"),
    ("blank benchmark", HEADER + "\n" + GOOD + '" ",v1,0,0,1\n', 3, "`benchmark` must not be blank"),
    ("blank version", HEADER + "\n" + GOOD + 'b,"  ",0,0,1\n', 3, "`version` must not be blank"),
    ("gap in iterations", HEADER + "\n" + GOOD + "b,v1,0,1,1\nb,v1,0,3,1\n", 4,
     "iterations of run 0 of 'b' at version 'v1' must be consecutive: iteration 1 is followed by 3"),
    ("conflicting unit", HEADER + ",unit\nb,v1,0,0,1,s\n\nb,v2,0,0,1,ms\n", 4,
     "benchmark 'b' has two values of `unit`: 's' (line 2) and 'ms'"),
    ("conflicting direction", HEADER + ",direction\nb,v1,0,0,1,lower\nb,v1,0,1,1,higher\n", 3,
     "benchmark 'b' has two values of `direction`: 'lower' (line 2) and 'higher'"),
    ("bad direction", HEADER + ",direction\n" + "b,v1,0,0,1,up\n", 2,
     "`direction` must be 'lower' or 'higher', got 'up'"),
    ("bad timestamp", HEADER + ",timestamp\n\nb,v1,0,0,1,yesterday\n", 3,
     "`timestamp` is not ISO 8601: 'yesterday'"),
    ("conflicting timestamp", HEADER + ",timestamp\nb,v1,0,0,1,2024-01-01\nb,v1,0,1,1,2024-01-02\n", 3,
     "version 'v1' has two values of `timestamp`: '2024-01-01' (line 2) and '2024-01-02'"),
    ("unknown status", HEADER + ",status\n" + GOOD + "b,v1,1,,,broken\n", 3,
     "`status` must be one of ok, failed, crashed, timeout, garbage (blank: ok), got 'broken'"),
    ("failed run with a value", HEADER + ",status\n" + GOOD + "b,v1,1,,2.5,failed\n", 3,
     "a run with status 'failed' has no samples: its row has no `value`"),
    ("failed run with an iteration", HEADER + ",status\n" + GOOD + "b,v1,1,0,,timeout\n", 3,
     "a run with status 'timeout' has no samples: its row has no `iteration`"),
    ("ok run without a value", HEADER + ",status\n" + GOOD + "b,v1,1,0,,ok\n", 3, "missing value for `value`"),
    ("error on a measured run", HEADER + ",status,error\nb,v1,0,0,1.5,,oops\n", 2,
     "`error` is for a run whose `status` is not ok"),
    ("failed run twice", HEADER + ",status\n" + GOOD + "b,v1,1,,,failed\n\nb,v1,1,,,crashed\n", 5,
     "run 1 of 'b' at version 'v1' is given twice: a failed run has one row (the first on line 3)"),
    ("failed run with samples", HEADER + ",status\nb,v1,0,,,failed\n" + GOOD, 3,
     "run 0 of 'b' at version 'v1' has samples and a failed row (line 2): a failed run has no samples"),
    # What a tool said of a run (run_tool): processes, warmup_seconds, iteration_seconds, weight.
    ("weight not a number", TOOL + "\nb,v1,0,0,1.5,1,0.5,0.1,10\nb,v1,0,1,1.5,1,0.5,0.1,ten\n", 3,
     "`weight` is not a number: 'ten'"),
    ("weight nan", TOOL + "\nb,v1,0,0,1.5,,,,nan\n", 2, "`weight` is not a number: 'nan'"),
    ("weight negative", TOOL + "\nb,v1,0,0,1.5,,,,4\nb,v1,0,1,1.5,,,,-3\n", 3,
     "`weight` must be a finite, non-negative number, got -3"),
    ("weight infinite", TOOL + "\nb,v1,0,0,1.5,,,,1e400\n", 2,
     "`weight` must be a finite, non-negative number, got inf"),
    ("processes fractional", TOOL + "\n" + GOOD + "b,v2,0,0,1.5,1.5,0.5,0.1,\n", 3,
     "`processes` must be a non-negative integer, got 1.5"),
    ("processes negative", TOOL + "\nb,v1,0,0,1.5,-1,0.5,0.1,\n", 2,
     "`processes` must be a non-negative integer, got -1"),
    ("processes text", TOOL + "\nb,v1,0,0,1.5,two,0.5,0.1,\n", 2, "`processes` is not a number: 'two'"),
    ("warmup_seconds infinite", TOOL + "\nb,v1,0,0,1.5,1,inf,0.1,\n", 2,
     "`warmup_seconds` must be a finite, non-negative number, got inf"),
    ("iteration_seconds negative", TOOL + "\nb,v1,0,0,1.5,1,0.5,-0.1,\n", 2,
     "`iteration_seconds` must be a finite, non-negative number, got -0.1"),
    ("timing without warm-up", TOOL + "\nb,v1,0,0,1.5,2,,0.1,\n", 2,
     "`warmup_seconds` is blank: a run's `processes`, `warmup_seconds` and `iteration_seconds` are given "
     "together, or none of them"),
    ("timing with a column missing", HEADER + ",processes,warmup_seconds\nb,v1,0,0,1.5,2,0.5\n", 2,
     "`iteration_seconds` is blank: a run's `processes`, `warmup_seconds` and `iteration_seconds` are given "
     "together, or none of them"),
    ("two timings in one run",
     TOOL + "\nb,v1,0,0,1.5,2,0.5,0.1,\nb,v1,1,0,1.5,3,0.5,0.1,\nb,v1,0,1,1.5,3,0.5,0.1,\n", 4,
     "run 0 of 'b' at version 'v1' has two values of `processes`: 2 (line 2) and 3 (one per run, on each of its rows)"),
    ("timing on one row of a run", TOOL + "\nb,v1,0,0,1.5,2,0.5,0.1,\nb,v1,0,1,1.5,,,,\n", 3,
     "run 0 of 'b' at version 'v1' has two values of `processes`: 2 (line 2) and blank (one per run, on each of "
     "its rows)"),
    ("weight on one row of a run", TOOL + "\nb,v1,0,0,1.5,,,,4\nb,v1,0,1,1.5,,,,\n", 3,
     "run 0 of 'b' at version 'v1' has a `weight` on line 2 and none here: a run's samples have a weight each, "
     "or none"),
    ("weight on one row of a run, rows out of order", TOOL + "\nb,v1,0,1,1.5,,,,4\nb,v1,0,0,1.5,,,,\n", 2,
     "run 0 of 'b' at version 'v1' has no `weight` on line 3 and one here: a run's samples have a weight each, "
     "or none"),
    ("weight on a failed run", HEADER + ",status,weight\n" + GOOD + "b,v1,1,,,failed,3\n", 3,
     "a run with status 'failed' has no samples: its row has no `weight`"),
]


@pytest.mark.parametrize(("text", "line", "message"), [c[1:] for c in CSV_ERRORS], ids=[c[0] for c in CSV_ERRORS])
def test_csv_import_error(store, tmp_path, text, line, message):
    expect_error(store, write(tmp_path, text), line, message)


def test_duplicate_sample_names_the_first_line(store, tmp_path):
    text = (HEADER + "\n"
            "b,v1,0,0,1.0\n"     # 2
            "b,v1,0,1,1.1\n"     # 3  <- first occurrence of (b, v1, run 0, iteration 1)
            "\n"                 # 4
            "b,v1,1,0,2.0\n"     # 5
            "b,v1,0,1,1.1\n")    # 6  <- second occurrence
    expect_error(store, write(tmp_path, text), 6,
                 "duplicate sample: benchmark 'b', version 'v1', run 0, iteration 1 already on line 3")


def test_duplicate_sample_in_other_configs_is_no_duplicate(store, tmp_path):
    text = HEADER + ",config,machine\nb,v1,0,0,1.0,c1,m\nb,v1,0,0,1.0,c2,m\nb,v1,0,0,1.0,c1,m2\n"
    rep = import_file(store, str(write(tmp_path, text)))
    assert rep.runs == 3


def test_a_run_already_in_the_store_is_skipped_and_one_measured_again_goes_after_it(store, tmp_path):
    first = write(tmp_path, HEADER + "\nb,v1,0,0,1.0\nb,v1,0,1,1.1\nb,v1,1,0,2.0\n", "first.csv")
    import_file(store, str(first))
    second = write(tmp_path, HEADER + "\n"
                   "b,v2,0,0,5.0\n"     # 2: new
                   "\n"                 # 3
                   "b,v1,1,0,2.0\n"     # 4: run 1 of b at v1 is stored already: skipped
                   "b,v2,0,1,5.0\n", "second.csv")
    rep = import_file(store, str(second))
    assert (rep.runs, rep.samples, rep.skipped, rep.remeasured) == (1, 2, 1, ())
    assert [v.name for v in store.versions()] == ["v0", "v1", "v2"]
    # Run 1 again with another sample (the same iteration, or another first iteration): a new
    # measurement, numbered after the stored runs of b at v1.
    third = write(tmp_path, HEADER + "\nb,v1,1,0,2.5\nb,v1,0,1,1.1\nb,v1,0,2,1.2\n", "third.csv")
    rep = import_file(store, str(third))
    assert (rep.runs, rep.skipped) == (2, 0)
    assert rep.remeasured == (Remeasured("b", "v1", "default", "local", 2),)
    assert {r.run_index: (r.first_iteration, r.samples.tolist()) for r in store.raw_runs("b", "v1")} == {
        0: (0, [1.0, 1.1]), 1: (0, [2.0]), 2: (1, [1.1, 1.2]), 3: (0, [2.5])}


def test_no_such_file(store, tmp_path):
    expect_error(store, tmp_path / "missing.csv", None, "no such file")


# ------------------------------------------------------------------------------------- JSON lines
def jsonl(*objs) -> str:
    return "".join(("" if o is None else json.dumps(o)) + "\n" for o in objs)


def rec(**kw) -> dict:
    d = {"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}
    d.update(kw)
    return {k: v for k, v in d.items() if v is not ...}


JSONL_ERRORS = [
    ("bad JSON", jsonl(rec()) + '{"benchmark": "b", "version":\n', 2,
     "not JSON: Expecting value"),
    ("bad JSON, trailing comma", jsonl(rec(), rec(iteration=1)) + '{"benchmark": "b",}\n', 3,
     "not JSON: Expecting property name enclosed in double quotes"),
    ("not an object", jsonl(rec()) + "[1, 2]\n", 2, "each line must be a JSON object"),
    ("unknown field", jsonl(rec(), rec(iteration=1, colour="red")), 2, "unknown field `colour`"),
    ("value as a string", jsonl(rec(), rec(iteration=1, value="1.5")), 2, "`value` is not a number: '1.5'"),
    ("run as a bool", jsonl(rec(), rec(run=True)), 2, "`run` is not a number: true"),
    ("value infinite", jsonl(rec(), rec(iteration=1, value=float("inf"))), 2,
     "`value` must be a finite number, got inf"),
    ("negative run", jsonl(rec(), rec(run=-2)), 2, "`run` must be a non-negative integer, got -2"),
    ("non-integer iteration", jsonl(rec(), rec(iteration=0.25)), 2,
     "`iteration` must be a non-negative integer, got 0.25"),
    ("duplicate sample", jsonl(rec(), rec(iteration=1), rec(iteration=1)), 3,
     "duplicate sample: benchmark 'b', version 'v1', run 0, iteration 1 already on line 2"),
    ("gap", jsonl(rec(), rec(iteration=2)), 2,
     "iterations of run 0 of 'b' at version 'v1' must be consecutive: iteration 0 is followed by 2"),
    ("conflicting unit", jsonl(rec(unit="s"), rec(version="v2", unit="ms")), 2,
     "benchmark 'b' has two values of `unit`: 's' (line 1) and 'ms'"),
    ("bad direction", jsonl(rec(direction="down")), 1, "`direction` must be 'lower' or 'higher', got 'down'"),
    ("bad timestamp", jsonl(rec(timestamp="2024-13-45")), 1, "`timestamp` is not ISO 8601: '2024-13-45'"),
    ("blank benchmark", jsonl(rec(), rec(benchmark=" ", iteration=1)), 2, "`benchmark` must not be blank"),
    ("required field in no line", jsonl(rec(value=...)), 1, "missing field `value`"),
    ("weight as a string", jsonl(rec(weight=1), rec(iteration=1, weight="2")), 2, "`weight` is not a number: '2'"),
    ("processes as a bool", jsonl(rec(processes=True, warmup_seconds=0.5, iteration_seconds=0.1)), 1,
     "`processes` is not a number: true"),
    ("warmup_seconds negative", jsonl(rec(processes=1, warmup_seconds=-1, iteration_seconds=0.1)), 1,
     "`warmup_seconds` must be a finite, non-negative number, got -1"),
    ("timing without its iteration", jsonl(rec(processes=1, warmup_seconds=0.5)), 1,
     "`iteration_seconds` is blank: a run's `processes`, `warmup_seconds` and `iteration_seconds` are given "
     "together, or none of them"),
    ("two weights' presence in one run", jsonl(rec(weight=2.0), rec(iteration=1, weight=None)), 2,
     "run 0 of 'b' at version 'v1' has a `weight` on line 1 and none here: a run's samples have a weight each, "
     "or none"),
    ("empty file", "", 1, "empty file"),
]


@pytest.mark.parametrize(("text", "line", "message"), [c[1:] for c in JSONL_ERRORS],
                         ids=[c[0] for c in JSONL_ERRORS])
def test_jsonl_import_error(store, tmp_path, text, line, message):
    expect_error(store, write(tmp_path, text, "in.jsonl"), line, message)


def test_jsonl_imports_what_the_same_csv_imports(tmp_path):
    rows = [rec(version="v2", run=1, iteration=k, value=0.1 * k + 1, timestamp="2024-02-01T00:00:00Z",
                unit="ms", direction="higher", config="c", machine="m", commit="0123abcd" * 5, tags="v2 rel-2",
                status="", error="")
            for k in range(3)]
    rows += [rec(version="v1", run=0, iteration=k, value=2.0 ** -k, timestamp="2024-01-01T00:00:00Z",
                 unit="ms", direction="higher", config="c", machine="m", commit="4567ef01" * 5, tags="",
                 status="", error="")
             for k in range(4)]
    j = write(tmp_path, jsonl(*rows), "in.jsonl")
    c = write(tmp_path, ",".join(COLUMNS) + "\n" + "".join(
        ",".join(repr(r[k]) if k == "value" else str(r.get(k, "")) for k in COLUMNS) + "\n" for r in rows), "in.csv")
    with Store(tmp_path / "j.db") as sj, Store(tmp_path / "c.db") as sc:
        import_file(sj, str(j))
        import_file(sc, str(c))
        assert export_csv(sj) == export_csv(sc)
        (s,) = sj.load_series("b")
        assert [v.name for v in s.versions] == ["v1", "v2"]
        assert (s.unit, s.direction, s.config, s.machine) == ("ms", "higher", "c", "m")
        assert s.runs[0][0].tolist() == [1.0, 0.5, 0.25, 0.125]


def test_jsonl_detected_by_content_and_forced_by_format(tmp_path):
    p = write(tmp_path, jsonl(rec(), rec(iteration=1)), "data.txt")
    assert [r.samples.tolist() for r in parse_file(p).records] == [[1.5, 1.5]]
    with pytest.raises(InputError, match=re.escape(f"{p}:1: missing column `benchmark`")):
        parse_file(p, fmt="csv")




def test_jsonl_blank_lines_are_skipped(tmp_path):
    p = write(tmp_path, jsonl(rec(), None, rec(iteration=1), None), "in.jsonl")
    (r,) = parse_file(p).records
    assert r.samples.tolist() == [1.5, 1.5]


def test_jsonl_line_without_benchmark_is_an_error(store, tmp_path):
    p = write(tmp_path, jsonl(rec(), rec(iteration=1, benchmark=...)), "in.jsonl")
    expect_error(store, p, 2, "missing value for `benchmark`")


def test_jsonl_timestamp_only_on_some_versions(tmp_path):
    # As in the CSV, where an export leaves the timestamp cell empty for versions that have none.
    p = write(tmp_path, jsonl(rec(version="new", timestamp="2024-01-01T00:00:00Z"), rec(version="old")),
              "in.jsonl")
    batch = parse_file(p)
    assert batch.versions["old"] == {}
    assert batch.versions["new"]["timestamp_text"] == "2024-01-01T00:00:00Z"


def test_jsonl_nan_value_is_reported_as_not_finite(store, tmp_path):
    p = write(tmp_path, '{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": NaN}\n', "in.jsonl")
    with pytest.raises(InputError) as info:
        import_file(store, str(p))
    assert str(info.value) == f"{p}:1: `value` must be a finite number, got nan"


def test_timestamp_out_of_range_in_utc_is_an_input_error(store, tmp_path):
    p = write(tmp_path, HEADER + ",timestamp\nb,v1,0,0,1.0,0001-01-01T00:00:00+01:00\n")
    expect_error(store, p, 2, "`timestamp` is out of range in UTC: '0001-01-01T00:00:00+01:00'")


# -------------------------------------------------------------------------------------- CSV forms
def test_numeric_looking_names_stay_text(tmp_path):
    # Runs 0 and 1 so that the two versions merge silently (with equal run numbers the merge
    # shows as a "duplicate sample" error instead).
    p = write(tmp_path, HEADER + ",config,machine\n"
                        "007,1.1,0,0,1.0,01,true\n"
                        "007,1.10,1,0,2.0,01,true\n")
    batch = parse_file(p)
    assert [(r.benchmark, r.version, r.run_index, r.config, r.machine, r.samples.tolist())
            for r in batch.records] == [("007", "1.1", 0, "01", "true", [1.0]),
                                        ("007", "1.10", 1, "01", "true", [2.0])]
    assert list(batch.versions) == ["1.1", "1.10"]


def test_numeric_looking_names_among_text_names_stay_text(tmp_path):
    # One non-numeric name in the column keeps pandas from converting the others.
    p = write(tmp_path, HEADER + "\nb,1.1,0,0,1.0\nb,1.10,0,0,2.0\nb,v-next,0,0,3.0\n")
    assert list(parse_file(p).versions) == ["1.1", "1.10", "v-next"]


def test_blank_lines_are_skipped(tmp_path):
    plain = write(tmp_path, HEADER + "\nb,v1,0,0,1.0\nb,v1,0,1,2.0\nb,v2,0,0,3.0\n", "plain.csv")
    blank = write(tmp_path, HEADER + "\n\nb,v1,0,0,1.0\n\n   \nb,v1,0,1,2.0\n\n\nb,v2,0,0,3.0\n\n", "blank.csv")
    a, b = parse_file(plain), parse_file(blank)
    assert [(r.version, r.samples.tolist()) for r in a.records] == [("v1", [1.0, 2.0]), ("v2", [3.0])]
    assert [(r.version, r.samples.tolist()) for r in b.records] == [("v1", [1.0, 2.0]), ("v2", [3.0])]
    assert list(b.versions) == ["v1", "v2"]
    assert b.first_line[("b", "v2", "default", "local", 0)] == 9


def test_crlf_line_endings(tmp_path):
    p = write(tmp_path, (HEADER + ",unit\nb,v1,0,0,1.25,ms\nb,v1,0,1,2.5,ms\n").replace("\n", "\r\n"))
    (r,) = parse_file(p).records
    assert r.samples.tolist() == [1.25, 2.5]
    assert parse_file(p).benchmarks == {"b": {"unit": "ms"}}


def test_columns_in_any_order_and_optional_columns(tmp_path):
    p = write(tmp_path, "value,iteration,direction,run,machine,version,benchmark\n"
                        "0.5,7,higher,3,box,v1,b\n0.75,8,higher,3,box,v1,b\n")
    (r,) = parse_file(p).records
    assert (r.benchmark, r.version, r.run_index, r.machine, r.config, r.first_iteration) == (
        "b", "v1", 3, "box", "default", 7)
    assert r.samples.tolist() == [0.5, 0.75]


def test_quoted_header_is_accepted(tmp_path):
    p = write(tmp_path, '"benchmark","version","run","iteration","value"\n"b","v1",0,0,1.5\n')
    (r,) = parse_file(p).records
    assert r.samples.tolist() == [1.5]


def test_utf8_bom_is_accepted(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + (HEADER + "\nb,v1,0,0,1.5\n").encode())
    (r,) = parse_file(p).records
    assert r.samples.tolist() == [1.5]


def test_a_gzip_compressed_csv_is_read_and_its_errors_name_the_file(tmp_path):
    import gzip

    text = HEADER + "\n" + GOOD + "b,v1,0,1,2.5\nb,v2,0,0,1.0\n"
    plain, packed = tmp_path / "s.csv", tmp_path / "s.csv.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    a, b = parse_file(plain), parse_file(packed)
    assert [(r.benchmark, r.version, r.samples.tolist()) for r in b.records] == [
        (r.benchmark, r.version, r.samples.tolist()) for r in a.records]
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(gzip.compress((HEADER + "\n" + GOOD + "b,v1,0,1,fast\n").encode()))
    with pytest.raises(InputError, match=re.escape(f"{bad}:3: `value` is not a number: 'fast'")):
        parse_file(bad)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(gzip.compress((text * 50).encode())[:60])
    with pytest.raises(InputError, match=re.escape(f"{cut}: the gzip-compressed data is damaged")):
        parse_file(cut)
    fake = tmp_path / "fake.csv.gz"
    fake.write_text(text)
    with pytest.raises(InputError, match=re.escape(f"{fake}: not a gzip-compressed file")):
        parse_file(fake)


def test_import_with_a_conflicting_unit_does_not_relabel_stored_runs(store, tmp_path):
    p = write(tmp_path, HEADER + ",unit,direction\nexisting,v1,0,0,1500,s,lower\n")
    with pytest.raises(InputError, match=r":2: benchmark 'existing' is stored with unit 'ms', the file says 's'"):
        import_file(store, str(p))
    (b,) = [b for b in store.benchmarks() if b.name == "existing"]
    assert (b.unit, b.direction) == ("ms", "higher")


# --------------------------------------------------------------------------------------- round trips
VALUES = [1.0, -0.0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, -1e-300,
          123456789.12345679, 2.0 ** 60 + 2.0 ** 8, 6.02214076e23]


def rich_store(path: Path) -> Store:
    """Runs over several benchmarks, versions, configs and machines, with odd names and values."""
    s = Store(path)
    v_info = {"v2.0": VersionInfo("v2.0", timestamp=datetime(2024, 3, 1, 12, 0),
                                  timestamp_text="2024-03-01T14:00:00+02:00"),
              "v1.0": VersionInfo("v1.0", timestamp=datetime(2024, 1, 1), timestamp_text="2024-01-01")}
    for k, (bench, ver, cfg, mach) in enumerate([
        ("sort, quick", "v2.0", "default", "local"),
        ('say "hi"', "v1.0", "opt=2,lto", "büro-🖥"),
        ("sort, quick", "v1.0", "default", "local"),
        ("  padded  ", "v2.0", "default", "local"),
    ]):
        for r in range(2):
            vals = np.array(VALUES[k:] + VALUES[:k])
            if r:  # the next float towards zero: differs in the last bit only
                vals = np.nextafter(vals, 0.0)
            s.add_run(RunRecord(bench, ver, r, vals, config=cfg, machine=mach, warmup=k % 3,
                                first_iteration=5 * k),
                      version_info=v_info[ver], unit=["s", "ns", "s", "ops/s"][k],
                      direction="higher" if k == 3 else "lower")
    s.add_run(RunRecord("sort, quick", "v1.0", 7, np.array([9.0, 9.0]), status="crashed", exit_code=1))
    return s




def test_export_import_export_is_byte_identical(tmp_path):
    with rich_store(tmp_path / "a.db") as a:
        first = export_csv(a)
    f1 = write(tmp_path, first, "first.csv")
    with Store(tmp_path / "b.db") as b:
        import_file(b, str(f1))
        second = export_csv(b)
    assert sorted(second.splitlines()) == sorted(first.splitlines())  # same rows ...
    assert second == first  # ... in the same order


def test_export_of_an_imported_store_is_a_fixed_point(tmp_path):
    with rich_store(tmp_path / "a.db") as a:
        first = export_csv(a)
    with Store(tmp_path / "b.db") as b:
        import_file(b, str(write(tmp_path, first, "first.csv")))
        second = export_csv(b)
    assert sorted(second.splitlines()) == sorted(first.splitlines())
    with Store(tmp_path / "c.db") as c:
        import_file(c, str(write(tmp_path, second, "second.csv")))
        third = export_csv(c)
    assert third == second
    assert second.count("\n") == 1 + sum(11 - k % 3 for k in range(4) for _ in range(2)) + 1  # + the crashed run


def parse_export(text: str) -> dict:
    """(benchmark, version, config, machine, run, iteration) -> the row as written (iteration None
    for the one row of a failed run)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == EXPORTED
    out = {}
    for r in rows:
        key = (r["benchmark"], r["version"], r["config"], r["machine"], int(r["run"]),
               int(r["iteration"]) if r["iteration"] else None)
        assert key not in out
        out[key] = r
    return out


def test_import_export_keeps_every_value_and_attribute(tmp_path):
    with rich_store(tmp_path / "a.db") as a:
        expected = {}
        for r in a.iter_raw_runs():
            if r.status != "ok":
                continue
            for i, v in enumerate(r.samples[r.warmup:].tolist()):
                expected[(r.benchmark, r.version, r.config, r.machine, r.run_index, r.first_iteration + r.warmup + i)] = (
                    v, r.timestamp_text, r.unit, r.direction)
        versions = [(v.name, v.timestamp, v.timestamp_text) for v in a.versions()]
        f = write(tmp_path, export_csv(a), "a.csv")
    got = parse_export(f.read_text("utf-8"))
    crashed = ("sort, quick", "v1.0", "default", "local", 7, None)  # a failed run: one row, no sample
    assert (got.pop(crashed)["status"], got.pop(crashed, None)) == ("crashed", None)
    assert set(got) == set(expected)
    for key, (v, ts_text, unit, direction) in expected.items():
        row = got[key]
        assert row["value"] == repr(v)
        assert np.float64(float(row["value"])).tobytes() == np.float64(v).tobytes()
        assert (row["timestamp"], row["unit"], row["direction"]) == (ts_text, unit, direction)
    assert {k[3] for k in got} == {"local", "büro-🖥"}
    assert {k[2] for k in got} == {"default", "opt=2,lto"}
    with Store(tmp_path / "b.db") as b:
        import_file(b, str(f))
        assert [(v.name, v.timestamp, v.timestamp_text) for v in b.versions()] == versions
        assert {(x.name, x.unit, x.direction) for x in b.benchmarks()} == {
            ("sort, quick", "s", "lower"), ('say "hi"', "ns", "lower"), ("  padded  ", "ops/s", "higher")}
        for s in b.load_series():
            for k, runs in enumerate(s.runs):
                for arr in runs:
                    assert arr.size > 0
        got_b = parse_export(export_csv(b))
    assert got_b.pop(crashed)["status"] == "crashed"
    assert got_b == got


def test_import_keeps_file_values_bit_exact(tmp_path):
    vals = ["1.5", "-0.0", "5e-324", "4.9406564584124654e-324", "1.7976931348623157e+308", "0.1",
            "0.30000000000000004", "-1E-5", "  2.5", "1e22", "123456789012345678901234567890", "7"]
    p = write(tmp_path, HEADER + "\n" + "".join(f"b,v1,0,{i},{v}\n" for i, v in enumerate(vals)))
    with Store(tmp_path / "s.db") as s:
        import_file(s, str(p))
        (series,) = s.load_series()
        got = series.runs[0][0]
        assert got.tobytes() == np.array([float(v) for v in vals]).tobytes()
        out = parse_export(export_csv(s))
    assert [out[("b", "v1", "default", "local", 0, i)]["value"] for i in range(len(vals))] == [
        repr(float(v)) for v in vals]


def test_export_then_import_keeps_version_order_with_timestamps(tmp_path):
    text = HEADER + ",timestamp\nb,zz-late,0,0,1,2024-05-01\nb,aa-early,0,0,2,2024-01-01\nb,mm-mid,0,0,3,2024-03-01\n"
    with Store(tmp_path / "a.db") as a:
        import_file(a, str(write(tmp_path, text)))
        order = [v.name for v in a.versions()]
        f = write(tmp_path, export_csv(a), "export.csv")
    assert order == ["aa-early", "mm-mid", "zz-late"]
    with Store(tmp_path / "b.db") as b:
        import_file(b, str(f))
        assert [v.name for v in b.versions()] == order


def test_export_then_import_keeps_version_order_without_timestamps(tmp_path):
    text = HEADER + "\nb,v9,0,0,1.0\nb,v9,1,0,1.0\nb,v10,0,0,2.0\nb,v10,1,0,2.0\n"
    with Store(tmp_path / "a.db") as a:
        import_file(a, str(write(tmp_path, text)))
        assert [v.name for v in a.versions()] == ["v9", "v10"]
        f = write(tmp_path, export_csv(a), "export.csv")
    with Store(tmp_path / "b.db") as b:
        import_file(b, str(f))
        assert [v.name for v in b.versions()] == ["v9", "v10"]


def test_export_leaves_out_warmup_keeps_iteration_numbers_and_writes_a_failed_run_as_one_row(tmp_path):
    with Store(tmp_path / "s.db") as s:
        s.add_run(RunRecord("b", "v1", 0, np.array([10.0, 11.0, 1.0, 2.0]), warmup=2, first_iteration=3))
        s.add_run(RunRecord("b", "v1", 1, np.array([5.0]), status="timeout", stderr_tail="killed\nafter 60 s"))
        text = export_csv(s)
    assert text.splitlines() == [
        ",".join(EXPORTED),
        "b,v1,0,5,1.0,,default,local,s,lower,,,,",
        "b,v1,0,6,2.0,,default,local,s,lower,,,,",
        "b,v1,1,,,,default,local,s,lower,,,timeout,killed\\nafter 60 s",
    ]


def test_write_csv_needs_records_not_a_store(tmp_path):
    # The adapter is a pure writer (STYLE.md habit 8): records in, text out, no store involved.
    def stored(run_index, samples, *, status="ok", warmup=0):
        return StoredRun(id=run_index + 1, benchmark="sort, quick", version="v1", config="default", machine="m",
                         run_index=run_index, status=status, exit_code=None, stderr_tail=None,
                         n_samples=len(samples), warmup=warmup, first_iteration=0, started_at=None, duration=None,
                         campaign_id=None, samples=np.array(samples), unit="ns", direction="higher",
                         timestamp_text="2024-01-01T00:00:00Z", commit="89ab" * 10, tags=("v1", "v1,final"))

    out = tmp_path / "out.csv"
    assert write_csv([stored(0, [9.0, 1.5, 0.1], warmup=1), stored(1, [7.0], status="crashed")], out) == 2
    assert out.read_text("utf-8").splitlines() == [
        ",".join(EXPORTED),
        '"sort, quick",v1,0,1,1.5,2024-01-01T00:00:00Z,default,m,ns,higher,' + "89ab" * 10 + ',"v1 v1,final",,',
        '"sort, quick",v1,0,2,0.1,2024-01-01T00:00:00Z,default,m,ns,higher,' + "89ab" * 10 + ',"v1 v1,final",,',
        '"sort, quick",v1,1,,,2024-01-01T00:00:00Z,default,m,ns,higher,' + "89ab" * 10 + ',"v1 v1,final",crashed,',
    ]


def test_adapters_import_neither_the_store_nor_sqlalchemy():
    code = ("import importlib, pkgutil, sys, regbench.adapters as a\n"
            "for m in pkgutil.iter_modules(a.__path__): importlib.import_module('regbench.adapters.' + m.name)\n"
            "print(sorted(k for k in sys.modules if k == 'sqlalchemy' or k.startswith('regbench.store')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: Rows of about 30 bytes: a file of them crosses the 1 MiB chunks the line-length check reads.
ROW = "b,v1,0,{},1.0\n"


@pytest.mark.parametrize("where", [0, 1 << 20, (1 << 20) - 40_000, 2_500_000, None],
                         ids=["first line", "at a chunk start", "across a chunk end", "inside a chunk", "last line"])
def test_a_line_too_long_is_found_wherever_it_is(store, tmp_path, where):
    """The check of line lengths skips chunks it can prove hold no long line; every placement of
    one long line (after the header, across the 1 MiB chunks, at the end without a line break)
    is still found, on its line."""
    rows = [HEADER + "\n"] + [ROW.format(k) for k in range(200_000)]
    long_row = "b,v1,0,0," + "1" * 70_000
    text = "".join(rows)
    if where is None:
        text, line = text + long_row, len(rows) + 1  # no line break after it
    else:
        cut = text.index("\n", max(where, len(rows[0]) - 1)) + 1
        line = text.count("\n", 0, cut) + 1
        text = text[:cut] + long_row + "\n" + text[cut:]
    expect_error(store, write(tmp_path, text), line,
                 "a line longer than 65536 bytes (a row of measurements is tens of bytes)")


def test_lines_just_short_enough_pass_the_line_check(tmp_path):
    """Lines of up to 65536 bytes, in every chunk, are not refused (the fast path's windows are
    half that: a window without a line break is looked at closely, not refused)."""
    from regbench.adapters.canonical import MAX_LINE_BYTES, _check_line_lengths

    lines = [HEADER] + [(f"b,v1,0,{k},1.0" + " " * k).ljust(MAX_LINE_BYTES - k % 3, "0") for k in range(40)]
    assert max(len(line) for line in lines) == MAX_LINE_BYTES
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n")
    _check_line_lengths(path, False, str(path))  # no error


def test_a_commit_column_names_each_version_commit_and_survives_export(tmp_path):
    # What a CI machine pushes must say which commit each version is, so that the server reads
    # the branch's history (first-parent line) and not the order runs arrived in.
    sha = "0123456789abcdef0123456789abcdef01234567"
    c = write(tmp_path, "benchmark,version,run,iteration,value,commit\n"
              f"b,v1,0,0,1.0,{sha}\nb,v1,0,1,1.1,{sha}\nb,v2,0,0,2.0,\n", "in.csv")
    with Store(tmp_path / "a.db") as store:
        import_file(store, str(c))
        assert {v.name: v.commit for v in store.versions()} == {"v1": sha, "v2": None}
        text = export_csv(store)
    assert text.splitlines()[1].endswith("," + sha + ",,,")
    back = write(tmp_path, text, "back.csv")
    with Store(tmp_path / "b.db") as store:
        import_file(store, str(back))
        assert {v.name: v.commit for v in store.versions()} == {"v1": sha, "v2": None}
    bad = write(tmp_path, "benchmark,version,run,iteration,value,commit\nb,v1,0,0,1.0,abc\n", "bad.csv")
    with pytest.raises(InputError, match=r"bad.csv:2: `commit` must be a git commit's full sha"):
        parse_file(bad)
    two = write(tmp_path, "benchmark,version,run,iteration,value,commit\n"
                f"b,v1,0,0,1.0,{sha}\nb,v1,0,1,1.0,{sha[:-1]}8\n", "two.csv")
    with pytest.raises(InputError, match=r"two.csv:3: version 'v1' has two values of `commit`"):
        parse_file(two)


def test_imported_commits_put_a_pushed_history_on_the_branch(tmp_path):
    # A server that CI machines push to reads the branch's first-parent line when the runs name
    # their commits: a pull request's commit pushed by CI is not the last point of main.
    import subprocess as sp

    from regbench.config import load_config
    from regbench.demo_project import git_commit, git_init
    from regbench.pipeline import history_of

    from datetime import UTC, datetime

    when = datetime(2024, 1, 1, tzinfo=UTC)
    repo = tmp_path / "repo"
    git_init(repo)
    main1 = git_commit(repo, {"f": "1"}, "one", when=when)
    main2 = git_commit(repo, {"f": "2"}, "two", when=when)
    sp.run(["git", "-C", str(repo), "checkout", "-q", "-b", "pr"], check=True)
    pr = git_commit(repo, {"f": "pr"}, "pull request", when=when)
    sp.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    (repo / "regbench.toml").write_text('[project]\nbranch = "main"\n')
    rows = "".join(f"b,{name},0,{k},{value},2024-01-0{day}T00:00:00Z,{sha}\n"
                   for name, sha, value, day in (("one", main1, 1.0, 1), ("two", main2, 1.0, 2), ("pr", pr, 3.0, 3))
                   for k in range(3))
    c = write(tmp_path, "benchmark,version,run,iteration,value,timestamp,commit\n" + rows, "pushed.csv")
    with Store(tmp_path / "server.db") as store:
        import_file(store, str(c))
        history = history_of(store, load_config(repo / "regbench.toml"))
        assert [v.name for v in history.versions()] == ["one", "two"]


def test_export_of_one_version_or_campaign_for_a_ci_machine_to_push(tmp_path, capsys):
    from regbench.cli.main import main

    db = tmp_path / "ci.db"
    with Store(db) as store:
        first = store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench run")
        store.add_runs([RunRecord("b", v, 0, np.array([1.0, 2.0]), machine="m", campaign_id=first) for v in ("v1", "v2")])
        store.finish_campaign(first, "finished")
        top_up = store.start_campaign(seed=2, machine="m", fingerprint={}, command="regbench run")
        store.add_runs([RunRecord("b", "v2", 1, np.array([3.0]), machine="m", campaign_id=top_up)])
        store.finish_campaign(top_up, "finished")
    out = tmp_path / "new.csv"
    assert main(["--store", str(db), "export", "-o", str(out), "--campaign", str(top_up)]) == 0
    assert out.read_text().splitlines()[1:] == ["b,v2,1,0,3.0,,default,m,s,lower,,,,"]
    assert main(["--store", str(db), "export", "--version", "v1"]) == 0
    assert [line.split(",")[1] for line in capsys.readouterr().out.splitlines()[1:]] == ["v1", "v1"]
    assert main(["--store", str(db), "export", "--campaign", "99"]) == 3
    assert "no campaign 99 in the store" in capsys.readouterr().err
