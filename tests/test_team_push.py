"""What a CI machine's export carries to a shared server (docs/realworld.md, "A team's setup"):
the versions' git tags, failed runs, and runs the server already holds.

Each test makes a CI machine's store with real runs, exports it with ``regbench export`` and
submits the file as ``POST /api/v1/runs`` stores it (:func:`regbench.web.api_submit.submit`,
on the ``store`` fixture: SQLite, or PostgreSQL with ``--store-url``), then asks the server's
store what a person on the server would.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.adapters import parse_file
from regbench.cli.main import main
from regbench.errors import InputError
from regbench.model import RunRecord, VersionAlias, VersionInfo
from regbench.store import Store
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
