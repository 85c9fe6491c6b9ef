"""Defects a probe of getting results in and out found (2026-12-02), each fixed and pinned here:

- a canonical CSV field longer than the csv module's 128 KiB limit (or a file of NUL bytes) was a
  traceback from `regbench import` and a 500 from the HTTP API, not the documented "a line longer
  than 64 KiB" error;
- a JSON-lines file whose runs all failed (rows with `status` and neither `iteration` nor `value`,
  as formats.md defines a failed run) was refused ("missing field `iteration`"), and one whose
  first line was such a row was not sniffed as JSON lines;
- a retried submission of a tool's output holding a failed benchmark answered with fewer runs
  than the first answer (the record counted the parser's runs, not the failed ones stored);
- a configuration name with a `/` (`gcc/O2`), which the API and canonical files store, could not
  be selected on the command line ("looks like a file");
- the series page linked every series to its diagnosis page, a 404 for a series no version of
  which has two runs of two samples.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

from apitools import count, start, tokens
from webtools import T0

GO_FAIL = Path(__file__).parent / "golden" / "adapters" / "go" / "failing" / "fail.txt"


def regbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "regbench", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


@pytest.mark.parametrize("content", [b"a" * 140_000 + b"\n", b"\0" * 1_000_000],
                         ids=["one 140 KB field", "NUL bytes"])
def test_a_csv_field_over_the_csv_modules_limit_is_the_line_too_long_error(tmp_path, content):
    f = tmp_path / "bad.csv"
    f.write_bytes(content)
    db = tmp_path / "r.db"
    for fmt in ("csv", "auto"):
        out = regbench("--store", str(db), "import", "--format", fmt, str(f))
        assert out.returncode == 3, out.stderr
        assert out.stderr == f"error: {f}:1: a line longer than 65536 bytes (a row of measurements is tens of bytes)\n"
    assert not db.exists()  # refused before the store was opened


def test_json_lines_of_failed_runs_only_are_imported_and_sniffed(tmp_path):
    only = tmp_path / "only.jsonl"
    only.write_text('{"benchmark": "j", "version": "v1", "run": 0, "status": "failed", "error": "boom"}\n')
    first = tmp_path / "first.jsonl"
    first.write_text('{"benchmark": "j", "version": "v2", "run": 0, "status": "crashed", "error": "x"}\n'
                     '{"benchmark": "j", "version": "v2", "run": 1, "iteration": 0, "value": 1.5}\n')
    db = tmp_path / "r.db"
    for f in (only, first):
        out = regbench("--store", str(db), "import", str(f))  # sniffed
        assert out.returncode == 0, out.stderr
    with Store(db, create=False) as store:
        runs = sorted((r.version, r.run_index, r.status) for r in store.runs())
    assert runs == [("v1", 0, "failed"), ("v2", 0, "crashed"), ("v2", 1, "ok")]
    # A row that is not a failed run still needs its iteration and value.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"benchmark": "j", "version": "v3", "run": 0}\n')
    out = regbench("--store", str(db), "import", "--format", "jsonl", str(bad))
    assert out.returncode == 3 and out.stderr == f"error: {bad}:1: missing field `iteration`\n"
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    out = regbench("--store", str(db), "import", str(empty))
    assert out.returncode == 3 and out.stderr == f"error: {empty}: empty file: nothing to import\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    path = root / "s.db"
    Store(path).close()
    keys = tokens(path, ci=("submit", None))
    server = start(path, root, rate=1000, burst=1000)
    yield path, server.base, keys["ci"]
    server.stop()


def submit(base: str, secret: str, body: bytes, **query: str) -> httpx.Response:
    return httpx.post(base + "api/v1/runs", params=query, content=body,
                      headers={"Authorization": f"Bearer {secret}"}, timeout=30)


def test_the_api_answers_a_long_field_with_422_and_stores_failed_runs_only_files(served):
    path, base, secret = served
    runs = count(path, "run")
    long = submit(base, secret, b"a" * 140_000 + b"\n", format="csv", machine="m1", submission="long-000001")
    assert long.status_code == 422 and long.json()["error"] == ("body:1: a line longer than 65536 bytes (a row of "
                                                                "measurements is tens of bytes)")
    assert count(path, "run") == runs
    body = b'{"benchmark": "j", "version": "v1", "run": 0, "status": "failed", "error": "x", "machine": "m1"}\n'
    failed = submit(base, secret, body, format="jsonl", machine="m1", submission="fail-000001")
    assert failed.status_code == 201 and failed.json()["runs"] == 1, failed.text


def test_a_retried_tool_submission_answers_what_the_first_stored_failed_benchmarks_included(served):
    path, base, secret = served
    query = dict(format="go", version="v-go", machine="m1", submission="go-fail-000001")
    first = submit(base, secret, GO_FAIL.read_bytes(), **query)
    assert first.status_code == 201, first.text
    with Store(path, create=False) as store:
        stored = [r for r in store.runs() if r.version == "v-go"]
    assert first.json()["runs"] == len(stored) and any(r.status == "failed" for r in stored)
    again = submit(base, secret, GO_FAIL.read_bytes(), **query)
    assert again.status_code == 200 and again.json()["replayed"] is True
    assert (again.json()["runs"], again.json()["samples"]) == (first.json()["runs"], first.json()["samples"])


def test_a_configuration_name_with_a_slash_that_names_no_file_is_a_name(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("benchmark,version,run,iteration,value,config\n"
                   + "".join(f"b,v1,{r},{i},{1 + 0.01 * r + 0.001 * i},gcc/O2\n" for r in range(3) for i in range(3)))
    db = tmp_path / "r.db"
    assert regbench("--store", str(db), "import", str(csv)).returncode == 0
    out = regbench("--store", str(db), "summary", "--configuration", "gcc/O2", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert '"gcc/O2"' in out.stdout
    # The same text naming a file that is there is still taken for a misplaced configuration file.
    (tmp_path / "gcc").mkdir()
    (tmp_path / "gcc" / "O2").write_text("[project]\n")
    out = regbench("--store", str(db), "summary", "--configuration", "gcc/O2", cwd=tmp_path)
    assert out.returncode == 2 and "'gcc/O2' looks like a file, not a configuration name" in out.stderr


def test_the_series_page_links_to_a_diagnosis_only_where_there_is_one(tmp_path, page):
    rng = np.random.default_rng(1)
    path = tmp_path / "s.db"
    versions = [VersionInfo(f"v{k}", timestamp=T0.replace(day=k + 1)) for k in range(3)]
    records = [RunRecord(name, f"v{k}", r, 1 + 0.01 * rng.standard_normal(size))
               for name, size in (("timed", 5), ("allocs", 1)) for k in range(3) for r in range(3)]
    with Store(path) as store:
        store.add_runs(records, versions=versions)
    out = tmp_path / "out"
    assert regbench("--store", str(path), "report", "-o", str(out)).returncode == 0
    from regbench.web.data import series_id

    for name, linked in (("timed", True), ("allocs", False)):
        page.goto((out / "series.html").as_uri() + "?s=" + series_id(name, "default", "local"))
        page.wait_for_selector("body[data-ready=yes]", timeout=15_000)
        link = page.locator("#diagnosis-link")
        assert link.is_visible() == linked, name
        if linked:
            assert (out / link.get_attribute("href")).read_text().count("Not found") == 0
    assert page.console_log.errors == []


def test_a_triage_body_over_its_limit_and_a_reason_of_the_wrong_type_say_what_is_wrong(tmp_path):
    path = tmp_path / "s.db"
    from webtools import synthetic_store

    synthetic_store(path).close()
    keys = tokens(path, tri=("triage", None))
    server = start(path, tmp_path, rate=1000, burst=1000)
    try:
        headers = {"Authorization": f"Bearer {keys['tri']}"}
        big = httpx.post(server.base + "api/v1/alerts/1", content=b'{"status": "invalid", "reason": "'
                         + b"a" * 70_000 + b'"}', headers=headers, timeout=30)
        assert big.status_code == 413
        assert big.json()["error"] == ("the body is over the server's limit of 65536 bytes (a triage body is a status "
                                       "and a reason; shorten the reason)")
        typed = httpx.post(server.base + "api/v1/alerts/1", json={"status": "acknowledged", "reason": ["x"]},
                           headers=headers, timeout=30)
        assert typed.status_code == 400
        assert typed.json()["error"] == "body field `reason` must be text, not an array: say why"
    finally:
        server.stop()


def test_export_to_a_pipe_writes_through_it_and_leaves_it_a_pipe(tmp_path):
    import os
    import stat
    import threading

    csv = tmp_path / "x.csv"
    csv.write_text("benchmark,version,run,iteration,value\nt,v1,0,0,1.5\nt,v1,0,1,2.5\n")
    db = tmp_path / "r.db"
    assert regbench("--store", str(db), "import", str(csv)).returncode == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    out = regbench("--store", str(db), "export", "-o", str(fifo))
    reader.join(timeout=60)
    assert out.returncode == 0 and " ".join(out.stderr.split()) == f"exported 2 samples to {fifo}"  # rich wraps
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # not replaced by a file
    assert got and b"t,v1,0,0,1.5" in got[0] and b"t,v1,0,1,2.5" in got[0]


def test_diagnose_of_samples_whose_squares_leave_double_precision_is_one_line(tmp_path):
    csv = tmp_path / "x.csv"
    csv.write_text("benchmark,version,run,iteration,value\n"
                   + "".join(f"t,v1,{r},{i},{(1 + 0.1 * r + 0.05 * i) * 1e-200!r}\n" for r in range(3) for i in range(2)))
    db = tmp_path / "r.db"
    assert regbench("--store", str(db), "import", str(csv)).returncode == 0  # stored as given
    out = regbench("--store", str(db), "diagnose", "t")
    assert out.returncode == 3 and len(out.stderr.splitlines()) == 1, out.stderr
    assert "has samples of magnitude 1.25e-200, outside what the statistics compute with" in out.stderr


def test_the_one_run_note_of_a_tool_import_counts_this_files_benchmarks_only(tmp_path):
    golden = Path(__file__).parent / "golden" / "adapters"
    db = str(tmp_path / "r.db")
    first = regbench("--store", db, "import", "--format", "go", "--version", "v1", str(golden / "go" / "bench.txt"))
    assert first.returncode == 0, first.stderr
    pb = golden / "pytest-benchmark" / "benchmark-json.json"
    out = regbench("--store", db, "import", "--format", "pytest-benchmark", "--version", "v1", str(pb))
    assert out.returncode == 0, out.stderr
    said = " ".join(out.stdout.split())
    from regbench.adapters.base import get_adapter

    n = len({r.benchmark for r in get_adapter("pytest-benchmark").parse(pb)})
    assert f"note: {n} benchmark{'' if n == 1 else 's'} of v1 ha" in said, said  # not the go ones too
