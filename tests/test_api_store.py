"""Submissions stored once by id (:mod:`regbench.web.api_submit`, table ``submission``), on the
``store`` fixture: SQLite, and PostgreSQL with ``--store-url``."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from apitools import GOLDEN_PYPERF, jsonl_body
from regbench.errors import ConflictError, ForbiddenError, InputError, RequestError
from regbench.store import schema as t
from regbench.store.submissions import count_submissions, find_submission
from regbench.web.api_submit import SubmitRequest, check_request, submit


def _runs(store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(t.run)).scalar_one())


def test_a_submission_is_stored_with_its_id_and_a_retry_stores_nothing(store):
    request = SubmitRequest("sub-0000001", "pyperf", "m1", "v1")
    first = submit(store, request, GOLDEN_PYPERF.read_bytes(), token_id=None)
    assert (first.runs, first.samples, first.replayed) == (4, 16, False)
    again = submit(store, request, GOLDEN_PYPERF.read_bytes())
    assert (again.runs, again.samples, again.replayed) == (4, 16, True)
    assert _runs(store) == 4 and count_submissions(store) == 1
    found = find_submission(store, "sub-0000001")
    assert found is not None and (found.format, found.machine, found.runs) == ("pyperf", "m1", 4)


def test_the_same_id_with_another_body_is_a_conflict(store):
    submit(store, SubmitRequest("sub-0000002", "jsonl", "m1"), jsonl_body(machine="m1"))
    with pytest.raises(ConflictError, match="'sub-0000002' was used for another body"):
        submit(store, SubmitRequest("sub-0000002", "jsonl", "m1"), jsonl_body(machine="m1", seed=1))
    with pytest.raises(ConflictError, match="was used for another body"):
        submit(store, SubmitRequest("sub-0000002", "jsonl", "m1", config="fast"), jsonl_body(machine="m1"))
    assert _runs(store) == 2


def test_a_bad_body_stores_neither_runs_nor_its_id(store):
    body = jsonl_body(machine="m1").replace(b'"value": 1', b'"value": "x', 1)
    with pytest.raises(InputError, match=r"^body:1: "):
        submit(store, SubmitRequest("sub-0000003", "jsonl", "m1"), body)
    with pytest.raises(InputError, match="^body:1: the line is of version 'v1', the submission's version is 'v2'"):
        submit(store, SubmitRequest("sub-0000003", "jsonl", "m1", "v2"), jsonl_body(machine="m1"))
    assert _runs(store) == 0 and count_submissions(store) == 0
    # The id is free: a good body under it is stored.
    assert not submit(store, SubmitRequest("sub-0000003", "jsonl", "m1"), jsonl_body(machine="m1")).replayed


def test_runs_already_stored_by_another_submission_are_skipped_and_a_re_run_is_added(store):
    submit(store, SubmitRequest("sub-0000004", "jsonl", "m1"), jsonl_body(machine="m1"))
    same = submit(store, SubmitRequest("sub-0000005", "jsonl", "m1"), jsonl_body(machine="m1"))
    assert (same.runs, same.samples, same.skipped, same.remeasured, same.replayed) == (0, 0, 2, 0, False)
    assert _runs(store) == 2 and count_submissions(store) == 2
    # The same version measured again (runs 0 and 1 again, other samples): runs 2 and 3.
    rerun = submit(store, SubmitRequest("sub-0000006", "jsonl", "m1"), jsonl_body(machine="m1", seed=1))
    assert (rerun.runs, rerun.samples, rerun.skipped, rerun.remeasured) == (2, 10, 0, 2)
    with store.engine.connect() as conn:
        assert sorted(conn.execute(sa.select(t.run.c.run_index)).scalars()) == [0, 1, 2, 3]
    assert find_submission(store, "sub-0000005").runs == 0


def test_a_failure_inside_the_transaction_leaves_no_id(store, monkeypatch):
    """The id and the runs are one transaction: a crash while writing the runs stores neither."""
    from regbench.store import db

    def crash(*args, **kwargs):
        raise RuntimeError("the disk is gone")

    monkeypatch.setattr(db.Store, "_ensure_many_versions", crash)
    with pytest.raises(RuntimeError):
        submit(store, SubmitRequest("sub-0000006", "pyperf", "m1", "v1"), GOLDEN_PYPERF.read_bytes())
    monkeypatch.undo()
    assert count_submissions(store) == 0 and _runs(store) == 0
    assert not submit(store, SubmitRequest("sub-0000006", "pyperf", "m1", "v1"), GOLDEN_PYPERF.read_bytes()).replayed
    assert _runs(store) == 4


@pytest.mark.parametrize("fmt", ["pyperf", "jsonl"])
def test_concurrent_submissions_with_one_id_store_once(store, fmt):
    request = SubmitRequest(f"sub-race-{fmt}", fmt, "m1", "v1" if fmt == "pyperf" else None)
    body = GOLDEN_PYPERF.read_bytes() if fmt == "pyperf" else jsonl_body(machine="m1")
    results, errors = [], []
    gate = threading.Barrier(4)

    def one() -> None:
        gate.wait()
        try:
            results.append(submit(store, request, body).replayed)
        except Exception as exc:  # collected: the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and sorted(results) == [False, True, True, True]
    assert _runs(store) == (4 if fmt == "pyperf" else 2) and count_submissions(store) == 1


@pytest.mark.parametrize("request_, message", [
    (SubmitRequest("short", "jsonl", "m1"), "is not a submission id"),
    (SubmitRequest("-starts-with-dash", "jsonl", "m1"), "is not a submission id"),
    (SubmitRequest("sub-0000007", "criterion", "m1", "v1"), "is not a known format"),
    (SubmitRequest("sub-0000007", "pyperf", "m1"), "query parameter `version` is missing"),
    (SubmitRequest("sub-0000007", "pyperf", "m1;drop", "v1"), "query parameter `machine`"),
])
def test_check_request_names_the_problem(request_, message):
    with pytest.raises(RequestError, match=message):
        check_request(request_, bound_machine=None, token_name="t")


def test_check_request_refuses_another_machine_than_the_binding():
    with pytest.raises(ForbiddenError, match="token 'ci' is bound to machine 'a' and cannot submit as machine 'b'"):
        check_request(SubmitRequest("sub-0000008", "jsonl", "b"), bound_machine="a", token_name="ci")


def test_a_0009_store_is_upgraded_to_hold_submissions(tmp_path):
    from regbench.store import Store
    from regbench.store.tokens import create_token, list_tokens
    from storetools import upgrade_to

    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0009")
        assert "submission" not in sa.inspect(conn).get_table_names()
    engine.dispose()
    with Store(path) as s:
        create_token(s, "ci", "submit")
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("submission")}
    engine.dispose()
    assert columns == {c.name for c in t.submission.columns}
    with Store(path) as s:
        assert s.schema_revision() == t.SCHEMA_REVISION and [k.name for k in list_tokens(s)] == ["ci"]
        assert not submit(s, SubmitRequest("sub-upgraded", "pyperf", "m1", "v1"), GOLDEN_PYPERF.read_bytes()).replayed
