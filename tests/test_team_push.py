"""What a CI machine's export carries to a shared server (docs/realworld.md, "A team's setup"):
the versions' git tags, failed runs, and runs the server already holds.

Each test makes a CI machine's store with real runs, exports it with ``regbench export`` and
submits the file as ``POST /api/v1/runs`` stores it (:func:`regbench.web.api_submit.submit`,
on the ``store`` fixture: SQLite, or PostgreSQL with ``--store-url``), then asks the server's
store what a person on the server would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from apitools import start, tokens

from regbench.adapters import parse_file
from regbench.analysis import compare_versions
from regbench.cli.main import main
from regbench.errors import InputError
from regbench.inventory import failing_at_newest
from regbench.model import RunRecord, VersionAlias, VersionInfo
from regbench.notify.base import headline
from regbench.store import Store
from regbench.store.alerts import list_alerts, with_tags
from regbench.web.api_submit import SubmitRequest, submit

#: Six commits (stored under their short shas, as a campaign names them); v0.1 and v0.2 tag the
#: second and the third, and the fourth makes ``checksum`` twice as slow.
NAMES = [f"{k}0b2457e3{k}" for k in range(6)]
SHAS = [f"{k}0b2457e3{k}" + f"{k}" * 30 for k in range(6)]
TAGS = {NAMES[1]: ("v0.1",), NAMES[2]: ("v0.2", "v0.2-rc1")}


def ci_store(path: Path, *, machine: str = "ci-a", seed: int = 1, versions: range = range(6)) -> Store:
    """A CI machine's store: 4 runs of 10 iterations of ``checksum`` at each of ``versions``."""
    store = Store(path)
    rng = np.random.default_rng(seed)
    infos = [VersionInfo(NAMES[k], commit=SHAS[k], timestamp=datetime(2026, 11, 29) + timedelta(hours=k))
             for k in versions]
    store.ensure_versions(infos, aliases={v: [VersionAlias(t) for t in tags] for v, tags in TAGS.items()
                                          if v in {i.name for i in infos}})
    records = [RunRecord("checksum", NAMES[k], r, (1.0 if k < 3 else 2.0) * (1 + 0.01 * rng.standard_normal(10)),
                         machine=machine, warmup=1) for k in versions for r in range(4)]
    store.add_runs(records, benchmarks={"checksum": {"unit": "s", "direction": "lower"}})
    return store


def export(store: Store, out: Path, *args: str) -> bytes:
    assert main(["--store", store.url, "export", "-o", str(out), *args]) == 0
    return out.read_bytes()


def push(server: Store, body: bytes, *, machine: str = "ci-a", submission: str = "push-00000001"):
    return submit(server, SubmitRequest(submission, "csv", machine), body)


# ------------------------------------------------------------------------------------------- tags
def test_a_pushed_version_keeps_its_tags_and_the_servers_detect_names_them(store, tmp_path, capsys):
    with ci_store(tmp_path / "ci.db") as ci:
        body = export(ci, tmp_path / "results.csv")
    push(store, body)
    assert {v: [a.name for a in aliases] for v, aliases in store.aliases().items()} == {
        NAMES[1]: ["v0.1"], NAMES[2]: ["v0.2", "v0.2-rc1"]}
    assert store.resolve_version("v0.2") == NAMES[2]
    capsys.readouterr()
    main(["--store", store.url, "detect"])
    out = capsys.readouterr().out
    # As on the CI machine: the change at the fourth commit is "since v0.2", not since a sha.
    assert "checksum" in out and "v0.2" in out and NAMES[2] not in out
    (alert,) = with_tags(store, list_alerts(store))
    assert f"at {NAMES[3]} (since v0.2 ({NAMES[2]}))" in headline(alert)  # what the webhook says


def test_an_import_adds_tags_and_never_removes_or_moves_one(tmp_path, capsys):
    with ci_store(tmp_path / "ci.db") as ci:
        export(ci, tmp_path / "all.csv")
    # The server knows v0.2 on another version already, and a tag the file does not give.
    with Store(tmp_path / "server.db") as server:
        server.ensure_versions([VersionInfo(NAMES[5]), VersionInfo("elsewhere")],
                               aliases={"elsewhere": [VersionAlias("v0.2")], NAMES[5]: [VersionAlias("v1.0")]})
    capsys.readouterr()
    assert main(["--store", str(tmp_path / "server.db"), "import", str(tmp_path / "all.csv")]) == 0
    out = capsys.readouterr().out
    assert "2 git tags added to their versions" in out
    assert ("note: tag 'v0.2' names version 'elsewhere' in the store and stays there (the file gives it to "
            f"'{NAMES[2]}'; an import never moves a tag)") in out
    with Store(tmp_path / "server.db") as server:
        tags = {v: sorted(a.name for a in aliases) for v, aliases in server.aliases().items()}
    assert tags == {NAMES[1]: ["v0.1"], NAMES[2]: ["v0.2-rc1"], "elsewhere": ["v0.2"], NAMES[5]: ["v1.0"]}


@pytest.mark.parametrize(("cell", "message"), [
    ("v0.1 a..b", "`tags` holds 'a..b', which is not a git tag name"),
    ('"v0.1,x:y"', "`tags` holds 'v0.1,x:y', which is not a git tag name"),
    ("-v1", "`tags` holds '-v1', which is not a git tag name"),
])
def test_a_tag_git_would_refuse_is_an_input_error(tmp_path, cell, message):
    p = tmp_path / "in.csv"
    p.write_text(f"benchmark,version,run,iteration,value,tags\nb,v1,0,0,1.0,\nb,v2,0,0,1.0,{cell}\n")
    with pytest.raises(InputError, match=f"^{p}:3: " + message.replace("[", r"\[").replace(".", r"\.")):
        parse_file(p)


def test_tags_in_json_lines_are_a_list_or_text(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text('{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1, "tags": ["v1", "stable"]}\n'
                 '{"benchmark": "b", "version": "v1", "run": 0, "iteration": 1, "value": 1, "tags": "stable v1"}\n')
    assert parse_file(p).tags == {"v1": ("stable", "v1")}
    p.write_text('{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1, "tags": ["v1 rc"]}\n')
    with pytest.raises(InputError, match=f"^{p}:1: `tags` holds 'v1 rc', which is not a git tag name$"):
        parse_file(p)


# ------------------------------------------------------------------------------------ failed runs
#: A stderr tail with what a CSV cell must carry: line breaks, quotes, commas, a backslash.
TRACEBACK = ('Traceback (most recent call last):\n  File "sort.py", line 9, in <module>\r\n    a[1, 2] \\ b\n'
             "IndexError: boom\n")


def test_failed_runs_reach_the_server_and_it_says_the_benchmark_fails(store, tmp_path, capsys):
    with ci_store(tmp_path / "ci.db") as ci:
        ci.add_runs([RunRecord("sort", v, r, np.array([1.0, 1.1, 1.2]), machine="ci-a") for v in NAMES[:5]
                     for r in range(3)], benchmarks={"sort": {"unit": "s", "direction": "lower"}})
        ci.add_runs([RunRecord("sort", NAMES[5], r, np.empty(0), machine="ci-a", status="failed", exit_code=1,
                               stderr_tail=TRACEBACK) for r in range(2)]
                    + [RunRecord("sort", NAMES[5], 2, np.array([7.0]), machine="ci-a", status="timeout")])
        capsys.readouterr()
        body = export(ci, tmp_path / "results.csv")
        assert "exported 261 samples and 3 failed runs to" in capsys.readouterr().err
    assert b"\nsort,50b2457e35,0,,," in body and body.count(b"\n") == 1 + 261 + 3  # one row a failed run
    assert push(store, body).runs == 24 + 15 + 3
    failed = store.runs(failed=True)
    assert [(r.benchmark, r.version, r.run_index, r.status, r.stderr_tail, r.n_samples) for r in failed] == [
        ("sort", NAMES[5], 0, "failed", TRACEBACK, 0), ("sort", NAMES[5], 1, "failed", TRACEBACK, 0),
        ("sort", NAMES[5], 2, "timeout", None, 0)]
    (failing,) = failing_at_newest(store)
    assert (failing.benchmark, failing.machine, failing.version, failing.failed_runs, failing.since) == (
        "sort", "ci-a", NAMES[5], 3, NAMES[4])
    verdicts = {row.benchmark: row.verdict for row in compare_versions(store, NAMES[4], NAMES[5])}
    assert verdicts == {"checksum": "no change", "sort": "failed"}
    capsys.readouterr()
    main(["--store", store.url, "detect"])
    assert f"Failing at the newest version they ran at, which no detector sees: sort on ci-a at {NAMES[5]}" in (
        capsys.readouterr().out.replace("\n", " "))
    # Exported again from the server, the failed runs are the same rows.
    again = tmp_path / "again.csv"
    export(store, again)
    assert [line for line in again.read_bytes().splitlines() if b",,," not in line] == [
        line for line in body.splitlines() if b",,," not in line]


def test_a_file_without_status_columns_still_imports(tmp_path):
    p = tmp_path / "old.csv"
    p.write_text("benchmark,version,run,iteration,value,timestamp,config,machine,unit,direction\n"
                 "b,v1,0,0,1.5,,default,local,s,lower\n")
    batch = parse_file(p)
    assert [(r.status, r.samples.tolist()) for r in batch.records] == [("ok", [1.5])]


def test_a_failed_run_in_json_lines(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text('{"benchmark": "b", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n'
                 '{"benchmark": "b", "version": "v1", "run": 1, "status": "crashed", "error": "line 1\\nline 2"}\n')
    batch = parse_file(p)
    assert [(r.run_index, r.status, r.stderr_tail, r.samples.size) for r in batch.records] == [
        (1, "crashed", "line 1\nline 2", 0), (0, "ok", None, 1)]
    assert batch.n_samples == 1


# ------------------------------------------------------------------------- runs the server holds
def _runs_of(store: Store, version: str) -> dict[int, list[float]]:
    """Run index -> measured samples of ``checksum`` at ``version`` on ci-a."""
    return {r.run_index: r.samples[r.warmup:].tolist()
            for r in store.raw_runs("checksum", version, machine="ci-a")}


def test_the_same_runs_pushed_again_are_skipped_and_a_top_up_is_added(store, tmp_path):
    with ci_store(tmp_path / "ci.db") as ci:
        body = export(ci, tmp_path / "all.csv")
        first = push(store, body)
        assert (first.runs, first.skipped, first.remeasured) == (24, 0, 0)
        # The same file under another submission id (another format, a client that names its
        # pushes otherwise): nothing stored, every run said skipped.
        again = push(store, body, submission="push-00000002")
        assert (again.runs, again.samples, again.skipped, again.remeasured, again.replayed) == (0, 0, 24, 0, False)
        # A top-up run in the CI machine's store, and the whole store exported again.
        ci.add_runs([RunRecord("checksum", NAMES[5], 4, np.array([5.0, 2.0, 2.1]), machine="ci-a", warmup=1)])
        top_up = push(store, export(ci, tmp_path / "all.csv"), submission="push-00000003")
    assert (top_up.runs, top_up.samples, top_up.skipped, top_up.remeasured) == (1, 2, 24, 0)
    assert _runs_of(store, NAMES[5])[4] == [2.0, 2.1]
    assert sum(len(_runs_of(store, v)) for v in NAMES) == 25


def test_a_re_run_of_a_stored_version_is_added_after_its_runs(store, tmp_path):
    with ci_store(tmp_path / "ci.db") as ci:
        push(store, export(ci, tmp_path / "first.csv"))
        before = _runs_of(store, NAMES[5])
    # The same commit measured again on the same machine, in a fresh store (a restarted job):
    # runs 0-3 again, with other samples.
    with ci_store(tmp_path / "rerun.db", seed=2, versions=range(5, 6)) as rerun:
        body = export(rerun, tmp_path / "rerun.csv")
        measured = _runs_of(rerun, NAMES[5])
    done = push(store, body, submission="push-00000002")
    assert (done.runs, done.skipped, done.remeasured) == (4, 0, 4)
    after = _runs_of(store, NAMES[5])
    assert after == {**before, **{4 + k: measured[k] for k in range(4)}}
    # Imported again (another id, or `regbench import`): the runs it stored are the same runs.
    assert (push(store, body, submission="push-00000003").skipped, len(_runs_of(store, NAMES[5]))) == (4, 8)


def test_import_says_what_it_skipped_and_what_it_numbered_after_the_stored_runs(tmp_path, capsys):
    with ci_store(tmp_path / "ci.db") as ci:
        export(ci, tmp_path / "first.csv")
    with ci_store(tmp_path / "rerun.db", seed=2, versions=range(5, 6)) as rerun:
        export(rerun, tmp_path / "rerun.csv")
    server = str(tmp_path / "server.db")
    assert main(["--store", server, "import", str(tmp_path / "first.csv")]) == 0
    capsys.readouterr()
    assert main(["--store", server, "import", str(tmp_path / "first.csv")]) == 0
    out = capsys.readouterr().out
    assert "imported 0 samples in 0 runs" in out
    assert "24 runs of the file are already in the store (the same samples, or the same failure): skipped" in out
    assert main(["--store", server, "import", str(tmp_path / "rerun.csv")]) == 0
    out = capsys.readouterr().out
    assert "imported 36 samples in 4 runs" in out
    assert (f"4 runs of 'checksum' at '{NAMES[5]}' (default, ci-a) measured again what the store has runs of: "
            "numbered after them") in out


def test_a_failed_run_pushed_again_is_skipped(store, tmp_path):
    with ci_store(tmp_path / "ci.db", versions=range(1)) as ci:
        ci.add_runs([RunRecord("sort", NAMES[0], 0, np.empty(0), machine="ci-a", status="crashed",
                               stderr_tail=TRACEBACK)])
        body = export(ci, tmp_path / "all.csv")
    assert push(store, body).runs == 5
    assert (push(store, body, submission="push-00000002").skipped, len(store.runs(failed=True))) == (5, 1)


def test_a_file_with_an_error_is_refused_whole_even_when_its_runs_are_stored(store, tmp_path):
    with ci_store(tmp_path / "ci.db") as ci:
        body = export(ci, tmp_path / "all.csv")
    push(store, body)
    lines = body.decode().splitlines(keepends=True)
    # A stored run, a new one, then a line that is wrong: nothing of it is stored.
    broken = "".join([*lines[:3], "checksum,new-version,0,0,1.0,,default,ci-a,s,lower,,,,\n",
                      "checksum,new-version,0,1,fast,,default,ci-a,s,lower,,,,\n"]).encode()
    runs = len(store.runs())
    with pytest.raises(InputError, match="^body:5: `value` is not a number: 'fast'$"):
        push(store, broken, submission="push-00000002")
    relabelled = body.replace(b",s,lower,", b",ms,lower,")
    with pytest.raises(InputError, match="^body:2: benchmark 'checksum' is stored with unit 's', the file says 'ms'$"):
        push(store, relabelled, submission="push-00000003")
    assert len(store.runs()) == runs and "new-version" not in {v.name for v in store.versions()}


def test_push_to_a_real_server_says_what_it_skipped(tmp_path):
    """``regbench push`` of an export against ``regbench serve``: the API's answer and the
    command's output for a file whose runs the server has, and for a re-run."""
    with ci_store(tmp_path / "ci.db") as ci:
        export(ci, tmp_path / "first.csv")
        ci.add_runs([RunRecord("checksum", NAMES[5], 4, np.array([2.0, 2.1]), machine="ci-a")])
        export(ci, tmp_path / "second.csv")
    with ci_store(tmp_path / "rerun.db", seed=2, versions=range(5, 6)) as rerun:
        export(rerun, tmp_path / "rerun.csv")
    Store(tmp_path / "server.db").close()
    keys = tokens(tmp_path / "server.db", ci=("submit", "ci-a"))
    server = start(tmp_path / "server.db", tmp_path)
    try:
        def push_file(name: str) -> str:
            done = subprocess.run([sys.executable, "-m", "regbench", "push", "--server", server.base, "--token-env",
                                   "CI_TOKEN", "--format", "csv", "--machine", "ci-a", str(tmp_path / name)],
                                  capture_output=True, text=True, timeout=120, check=False,
                                  env={**os.environ, "CI_TOKEN": keys["ci"]})
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert push_file("first.csv").startswith("stored 24 runs (216 samples) as submission push-")
        second = push_file("second.csv").splitlines()
        assert second[0].startswith("stored 1 run (2 samples) as submission push-")
        assert second[1:] == ["24 runs already stored were skipped"]
        assert push_file("second.csv").startswith("already stored: submission push-")  # the same push: a replay
        assert push_file("rerun.csv").splitlines()[1:] == [
            ("4 runs measured again what the server has runs of (the same benchmarks, versions and machine): "
             "numbered after them")]
        shutil.copy(tmp_path / "first.csv", tmp_path / "first-again.csv")
        with open(tmp_path / "first-again.csv", "a") as f:
            f.write("\n")  # another body, the same runs
        assert push_file("first-again.csv").startswith("nothing new: the 24 runs of the file are already stored")
    finally:
        server.stop()
