"""Requests generated from the HTTP API's OpenAPI schema (schemathesis) against a real server:
no answer is a 5xx, with a token of every scope and without one."""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from apitools import start, tokens  # noqa: E402
from webtools import synthetic_store  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("schema")
    path = root / "s.db"
    synthetic_store(path, benchmarks=2).close()
    keys = tokens(path, boss=("admin", None))
    server = start(path, root, rate=10_000, burst=10_000, max_body=65536)
    yield server.base, keys
    log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def _fuzz(base: str, headers: dict[str, str], examples: int) -> list[str]:
    """Generate ``examples`` requests per operation of the schema, call each; the operations tried.

    Written with hypothesis' ``@given`` over each operation's strategy rather than
    ``schemathesis.pytest.from_fixture``, whose lazy loader fails under pytest 9 (it reads a node
    attribute pytest 9 no longer has)."""
    api = schemathesis.openapi.from_url(base + "api/v1/openapi.json")
    tried = []
    for result in api.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def call(case) -> None:
            case.call_and_validate(headers=headers, checks=[not_a_server_error], timeout=30)

        call()
        tried.append(f"{operation.method.upper()} {operation.path}")
    return tried


def test_no_generated_request_with_an_admin_token_gets_a_server_error(served):
    base, keys = served
    tried = _fuzz(base, {"Authorization": f"Bearer {keys['boss']}"}, examples=15)
    assert {"POST /runs", "GET /series", "POST /alerts/{alert_id}"} <= set(tried)


def test_no_generated_request_without_a_token_gets_a_server_error(served):
    base, _ = served
    assert len(_fuzz(base, {}, examples=5)) >= 9
