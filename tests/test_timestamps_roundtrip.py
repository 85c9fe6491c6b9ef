"""A version's timestamp from `regbench import --timestamp`: stored when the version had none yet,
shown and exported in ISO 8601 like every other, and kept by an export and a re-import.

The commands run in this process (``main``, its exit status and what it printed): the rules are
the store's and the importer's, and `regbench import` (with --timestamp and its clash),
`show` and `export` as processes of their own are run by tests/test_import_tools.py and
tests/test_cli.py."""

from __future__ import annotations

import csv
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.store import Store

HYPERFINE = Path(__file__).parent / "golden" / "adapters" / "hyperfine" / "two-commands.json"


@pytest.fixture
def regbench(capsys):
    """``regbench(*args)``: the command line ``regbench ARGS`` run by ``main`` in this process, as a
    CompletedProcess (its exit status, what it wrote to stdout and to stderr)."""
    def run(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        status = main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["regbench", *args], status, out.out, out.err)
    return run


def versions_row(show: str, name: str) -> list[str]:
    """The cells of ``name``'s row in `regbench show`'s version table (plain columns in a pipe)."""
    section = show.split("Versions (history order)", 1)[1]
    return next(line.split() for line in section.splitlines() if line.split()[:1] == [name])


def test_a_version_imported_without_a_timestamp_gets_the_one_given_later(tmp_path, regbench):
    db = str(tmp_path / "r.db")
    first = regbench("--store", db, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v1")
    assert first.returncode == 0, first.stderr
    dated = regbench("--store", db, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v1",
                     "--timestamp", "2024-01-01T00:00:00Z")
    assert dated.returncode == 0, dated.stderr
    with Store(db, create=False) as store:
        (v1,) = store.versions()
    assert (v1.timestamp, v1.timestamp_text) == (datetime(2024, 1, 1), "2024-01-01T00:00:00Z")
    assert versions_row(regbench("--store", db, "show").stdout, "v1")[1] == "2024-01-01T00:00:00Z"
    # Once it has one, another timestamp is still refused, and nothing is stored.
    clash = regbench("--store", db, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v1",
                     "--timestamp", "2025-01-01T00:00:00Z")
    assert clash.returncode == 3 and "is stored with timestamp 2024-01-01T00:00:00" in clash.stderr
    with Store(db, create=False) as store:
        assert store.versions()[0].timestamp == datetime(2024, 1, 1) and len(store.runs()) == 4


def test_export_keeps_imported_timestamps_and_a_reimport_their_order(tmp_path, regbench):
    db, again = str(tmp_path / "r.db"), str(tmp_path / "again.db")
    # v2 is imported first but made later: history order is v1, v2 by their timestamps.
    for version, when in (("v2", "2024-06-01T00:00:00+02:00"), ("v1", "2024-05-01T00:00:00")):
        out = regbench("--store", db, "import", str(HYPERFINE), "--format", "hyperfine", "--version", version,
                       "--timestamp", when)
        assert out.returncode == 0, out.stderr
    exported = tmp_path / "out.csv"
    assert regbench("--store", db, "export", "-o", str(exported)).returncode == 0
    stamps = {row["version"]: row["timestamp"] for row in csv.DictReader(exported.read_text().splitlines())}
    assert stamps == {"v1": "2024-05-01T00:00:00", "v2": "2024-06-01T00:00:00+02:00"}  # as given
    assert regbench("--store", again, "import", str(exported)).returncode == 0
    with Store(db, create=False) as a, Store(again, create=False) as b:
        assert [(v.name, v.timestamp, v.timestamp_text) for v in b.versions()] == \
            [(v.name, v.timestamp, v.timestamp_text) for v in a.versions()]
        assert [v.name for v in b.versions()] == ["v1", "v2"]
    # A version that arrives later, made between them, lands between them in the re-imported store.
    mid = regbench("--store", again, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v1.5",
                   "--timestamp", "2024-05-15T00:00:00Z")
    assert mid.returncode == 0, mid.stderr
    with Store(again, create=False) as b:
        assert [v.name for v in b.versions()] == ["v1", "v1.5", "v2"]


def test_a_timestamp_stored_without_its_text_is_shown_and_exported_in_iso_form(tmp_path, regbench):
    # A store written before timestamps were kept as text (an import with --timestamp, or a
    # release's upload time): the row has the timestamp and no text.
    db = tmp_path / "r.db"
    out = regbench("--store", str(db), "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v1",
                   "--timestamp", "2024-05-01T00:00:00Z")
    assert out.returncode == 0, out.stderr
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE version SET timestamp_text = NULL"))
    engine.dispose()
    show = regbench("--store", str(db), "show")
    assert versions_row(show.stdout, "v1")[1] == "2024-05-01T00:00:00Z", show.stdout
    export = regbench("--store", str(db), "export")
    assert {row["timestamp"] for row in csv.DictReader(export.stdout.splitlines())} == {"2024-05-01T00:00:00Z"}


def stored(db: str) -> tuple[list, list]:
    """Every version (name, timestamp, its text) and every run (key, samples stored)."""
    with Store(db, create=False) as store:
        return ([(v.name, v.timestamp, v.timestamp_text) for v in store.versions()],
                sorted((r.benchmark, r.version, r.run_index, r.n_samples) for r in store.runs()))


def test_a_canonical_file_may_not_give_a_stored_version_another_timestamp(tmp_path, regbench):
    db = str(tmp_path / "r.db")
    header = "benchmark,version,run,iteration,value,timestamp\n"

    def imported(name: str, rows: str) -> subprocess.CompletedProcess:
        path = tmp_path / name
        path.write_text(header + rows)
        return regbench("--store", db, "import", str(path))

    first = imported("a.csv", "f,v0,0,0,1.0,\nf,v1,0,0,2.0,2024-01-01T00:00:00Z\n")
    assert first.returncode == 0, first.stderr
    # The same moment again (in another offset) adds runs; a version stored without a timestamp gets one.
    again = imported("b.csv", "f,v1,1,0,2.1,2024-01-01T02:00:00+02:00\nf,v0,1,0,1.1,2023-06-01T00:00:00\n")
    assert again.returncode == 0, again.stderr
    before = stored(db)
    assert before[0] == [("v0", datetime(2023, 6, 1), "2023-06-01T00:00:00"),
                         ("v1", datetime(2024, 1, 1), "2024-01-01T00:00:00Z")]
    # Another timestamp for v1: refused on its first line, and nothing of the file is stored (not
    # the new version v2, not v0's new run).
    clash = imported("c.csv", "f,v2,0,0,3.0,2024-02-01T00:00:00Z\nf,v0,2,0,1.2,2023-06-01T00:00:00\n"
                              "f,v1,2,0,2.2,2025-01-01T00:00:00Z\nf,v1,2,1,2.3,2025-01-01T00:00:00Z\n")
    assert clash.returncode == 3
    assert clash.stderr == (f"error: {tmp_path / 'c.csv'}:4: version 'v1' is stored with timestamp "
                            "2024-01-01T00:00:00, not 2025-01-01T00:00:00\n")
    assert stored(db) == before
    # JSON lines are the same import.
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"benchmark": "f", "version": "v0", "run": 3, "iteration": 0, "value": 1.3, '
                     '"timestamp": "2023-06-02T00:00:00"}\n')
    out = regbench("--store", db, "import", str(jsonl))
    assert out.returncode == 3 and out.stderr == (f"error: {jsonl}:1: version 'v0' is stored with timestamp "
                                                  "2023-06-01T00:00:00, not 2023-06-02T00:00:00\n"), out.stderr
    assert stored(db) == before
