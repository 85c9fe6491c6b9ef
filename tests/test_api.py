"""The HTTP API (``/api/v1`` of ``regbench serve``) on a real uvicorn on a free loopback port:
scopes, machine binding, public reads, SQL injection in filters, body limits, malformed bodies,
idempotent submissions, triage, rate limits."""

from __future__ import annotations

import threading

import httpx
import pytest

from apitools import GOLDEN_PYPERF, count, jsonl_body, start, tokens
from webtools import synthetic_store


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    path = root / "s.db"
    synthetic_store(path).close()
    keys = tokens(path, ci=("submit", "m1"), anywhere=("submit", None), reader=("read", None),
                  triager=("triage", None), boss=("admin", None))
    server = start(path, root, rate=1000, burst=1000)
    yield path, server.base, keys
    server.stop()


def submit(base: str, secret: str | None, body: bytes, **query: str) -> httpx.Response:
    headers = bearer(secret) if secret else {}
    return httpx.post(base + "api/v1/runs", params=query, content=body, headers=headers, timeout=30)


def test_the_openapi_schema_lists_every_endpoint(served):
    _, base, _ = served
    schema = httpx.get(base + "api/v1/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    assert {"/runs", "/series", "/series/{series_id}", "/benchmarks", "/alerts", "/alerts/{alert_id}",
            "/tokens", "/formats"} <= set(schema["paths"])
    assert "post" in schema["paths"]["/alerts/{alert_id}"] and "post" in schema["paths"]["/runs"]
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_writes_without_a_token_or_the_scope_are_refused_and_store_nothing(served):
    path, base, keys = served
    runs, subs = count(path, "run"), count(path, "submission")
    body = jsonl_body(machine="m9")
    query = {"format": "jsonl", "machine": "m9", "submission": "refused-0001"}
    answer = submit(base, None, body, **query)
    assert answer.status_code == 401 and "needs an API token with the `submit` scope" in answer.json()["error"]
    assert submit(base, "rbt_not-a-token", body, **query).status_code == 401
    for who in ("reader", "triager"):
        answer = submit(base, keys[who], body, **query)
        assert answer.status_code == 403, who
        assert answer.json()["error"].startswith(f"token '{who}' has no `submit` scope")
    answer = httpx.post(base + "api/v1/alerts/1", json={"status": "acknowledged", "reason": "x"},
                        headers=bearer(keys["reader"]))
    assert answer.status_code == 403 and "no `triage` scope" in answer.json()["error"]
    assert httpx.post(base + "api/v1/alerts/1", json={"status": "acknowledged", "reason": "x"}).status_code == 401
    assert httpx.get(base + "api/v1/tokens", headers=bearer(keys["reader"])).status_code == 403
    assert (count(path, "run"), count(path, "submission")) == (runs, subs)


def test_a_token_bound_to_a_machine_cannot_submit_as_another(served):
    path, base, keys = served
    runs = count(path, "run")
    answer = submit(base, keys["ci"], jsonl_body(machine="m2"), format="jsonl", machine="m2", submission="bound-0001")
    assert answer.status_code == 403
    assert answer.json()["error"] == "token 'ci' is bound to machine 'm1' and cannot submit as machine 'm2'"
    # The machine in the query is the one bound, the lines say another: refused too, naming the line.
    answer = submit(base, keys["ci"], jsonl_body(machine="m2"), format="jsonl", machine="m1", submission="bound-0002")
    assert answer.status_code == 422
    assert answer.json()["error"] == "body:1: the line is of machine 'm2', the submission's machine is 'm1'"
    assert count(path, "run") == runs
    answer = submit(base, keys["ci"], jsonl_body(machine="m1"), format="jsonl", machine="m1", submission="bound-0003")
    assert answer.status_code == 201 and answer.json()["runs"] == 2
    assert count(path, "run") == runs + 2


def test_reads_need_the_read_scope_unless_public(served, tmp_path):
    path, base, keys = served
    assert httpx.get(base + "api/v1/series").status_code == 401
    assert httpx.get(base + "api/v1/series", headers=bearer(keys["anywhere"])).status_code == 403
    for who in ("reader", "boss"):
        answer = httpx.get(base + "api/v1/series", headers=bearer(keys[who]))
        assert answer.status_code == 200 and len(answer.json()["series"]) >= 6
    public = start(path, tmp_path, public_reads=True)
    try:
        assert httpx.get(public.base + "api/v1/alerts").json()["alerts"][0]["benchmark"] == "b0"
        assert submit(public.base, None, jsonl_body(machine="x"), format="jsonl", machine="x",
                      submission="public-0001").status_code == 401
    finally:
        public.stop()


def test_series_estimates_and_alerts_are_read(served):
    _, base, keys = served
    h = bearer(keys["reader"])
    found = httpx.get(base + "api/v1/series", params={"benchmark": "b0", "config": "default"}, headers=h).json()
    assert [(s["benchmark"], s["config"], s["state"]) for s in found["series"]] == [("b0", "default", "changed")]
    one = httpx.get(base + f"api/v1/series/{found['series'][0]['id']}", headers=h).json()
    estimates = [v["estimate"] for v in one["versions"]]
    assert len(estimates) == 8 and estimates[5] / estimates[2] == pytest.approx(1.2, rel=0.02)
    assert one["changes"][0]["kind"] == "regression"
    alerts = httpx.get(base + "api/v1/alerts", params={"status": "new", "kind": "regression"}, headers=h).json()
    assert [a["benchmark"] for a in alerts["alerts"]] == ["b0"]
    assert httpx.get(base + "api/v1/series/000000000000", headers=h).status_code == 404
    benchmarks = httpx.get(base + "api/v1/benchmarks", params={"name": "b1"}, headers=h).json()["benchmarks"]
    assert [(b["name"], len(b["series"])) for b in benchmarks] == [("b1", 2)]


INJECTIONS = ["' OR '1'='1", "b0' --", "x'; DROP TABLE run; --", "b0\" OR 1=1", "%", "*", "1; DELETE FROM alert"]


@pytest.mark.parametrize("endpoint, params", [
    ("benchmarks", ["name"]), ("series", ["benchmark", "config", "machine", "state"]),
    ("alerts", ["status", "kind", "benchmark", "machine"]),
])
def test_sql_injection_strings_in_filters_are_refused_or_find_nothing(served, endpoint, params):
    path, base, keys = served
    runs, alerts = count(path, "run"), count(path, "alert")
    for param in params:
        for text in INJECTIONS:
            answer = httpx.get(base + f"api/v1/{endpoint}", params={param: text}, headers=bearer(keys["reader"]))
            assert answer.status_code in (200, 400), (param, text, answer.text)
            if answer.status_code == 200:
                assert all(not v for v in answer.json().values()), (param, text)
            else:
                assert f"`{param}`" in answer.json()["error"]
    for text in INJECTIONS:
        answer = httpx.get(base + "api/v1/series/" + text.replace("/", ""), headers=bearer(keys["reader"]))
        assert answer.status_code in (400, 404)
    assert (count(path, "run"), count(path, "alert")) == (runs, alerts)


def test_malformed_submissions_get_one_error_each_and_store_nothing(served):
    path, base, keys = served
    runs = count(path, "run")
    good = jsonl_body(machine="m5")
    broken = good.split(b"\n")
    broken[2] = b'{"benchmark": "api_bench", "version": "v1", "run": 0,'
    cases = [
        (dict(format="nope", machine="m5", submission="bad-00001"), good, 400, "query parameter `format` = 'nope' "
                                                                             "is not a known format"),
        (dict(format="jsonl", machine="m5", submission="short"), good, 400, "is not a submission id"),
        (dict(format="jsonl", machine="m5"), good, 400, "query parameter `submission`"),
        (dict(format="jsonl", machine="m5", submission="bad-00002"), b"\n".join(broken), 422, "body:3: "),
        (dict(format="jsonl", machine="m5", submission="bad-00003"), b"", 422, "body:"),
        (dict(format="pyperf", machine="m5", submission="bad-00004"), GOLDEN_PYPERF.read_bytes(), 400,
         "query parameter `version` is missing"),
        (dict(format="pyperf", version="v1", machine="m5", submission="bad-00005"), b"{not json", 422, "body"),
        (dict(format="jsonl", machine="m 5", submission="bad-00006"), good, 400, "query parameter `machine`"),
    ]
    for query, body, status, message in cases:
        answer = submit(base, keys["anywhere"], body, **query)
        assert answer.status_code == status, (query, answer.text)
        assert message in answer.json()["error"], (query, answer.text)
        assert "\n" not in answer.json()["error"]
    assert count(path, "run") == runs


def test_a_retried_submission_is_stored_once(served):
    path, base, keys = served
    runs, subs = count(path, "run"), count(path, "submission")
    body = GOLDEN_PYPERF.read_bytes()
    query = dict(format="pyperf", version="v-retry", machine="m7", submission="retry-000001")
    first = submit(base, keys["anywhere"], body, **query)
    assert first.status_code == 201 and first.json() == {"submission": "retry-000001", "runs": 4, "samples": 16,
                                                         "replayed": False, "skipped": 0, "remeasured": 0}
    again = submit(base, keys["anywhere"], body, **query)
    assert again.status_code == 200 and again.json() == {"submission": "retry-000001", "runs": 4, "samples": 16,
                                                         "replayed": True}
    other = submit(base, keys["anywhere"], body, **{**query, "version": "v-other"})
    assert other.status_code == 409 and "was used for another body" in other.json()["error"]
    assert (count(path, "run"), count(path, "submission")) == (runs + 4, subs + 1)


def test_concurrent_retries_of_one_submission_are_stored_once(served):
    path, base, keys = served
    runs = count(path, "run")
    body = GOLDEN_PYPERF.read_bytes()
    query = dict(format="pyperf", version="v-race", machine="m8", submission="race-0000001")
    answers: list[int] = []
    start_all = threading.Barrier(6)

    def one() -> None:
        start_all.wait()
        answers.append(submit(base, keys["anywhere"], body, **query).status_code)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(answers) == [200] * 5 + [201]
    assert count(path, "run") == runs + 4


def test_triage_through_the_v1_api_and_the_old_route(served):
    _, base, keys = served
    h = bearer(keys["triager"])
    answer = httpx.post(base + "api/v1/alerts/1", json={"status": "acknowledged", "reason": "looking"}, headers=h)
    assert answer.status_code == 200 and answer.json() == {"alert": 1, "status": "acknowledged", "who": "triager"}
    assert httpx.post(base + "api/v1/alerts/1", json={"status": "acknowledged", "reason": "again"},
                      headers=h).status_code == 409
    assert httpx.post(base + "api/v1/alerts/999", json={"status": "invalid", "reason": "x"}, headers=h).status_code == 404
    bad = httpx.post(base + "api/v1/alerts/1", json={"status": "gone", "reason": "x"}, headers=h)
    assert bad.status_code == 400 and "`status` must be one of" in bad.json()["error"]
    old = httpx.post(base + "api/alerts/1", json={"status": "new", "reason": "reopen"}, headers=h)
    assert old.status_code == 200 and old.json()["status"] == "new"
    history = httpx.get(base + "api/v1/alerts/1", headers=bearer(keys["reader"])).json()["history"]
    assert [(e["status"], e["who"]) for e in history][-2:] == [("acknowledged", "triager"), ("new", "triager")]


def test_a_triage_body_that_is_not_a_json_object_is_422_on_both_routes(served):
    """api.md: a malformed body is 422 with its line, a malformed field 400. A triage body that
    was not JSON was answered 400, unlike a submission's."""
    _, base, keys = served
    h = {**bearer(keys["triager"]), "Content-Type": "application/json"}
    before = httpx.get(base + "api/v1/alerts/1", headers=bearer(keys["reader"])).json()["history"]
    cases = [(b"status=new", "body:1: not JSON: Expecting value"),
             (b'{"status": "new",\n "reason": }', "body:2: not JSON: Expecting value"),
             (b"", "body:1: not JSON: Expecting value"),
             (b"\xff\xfe\xfa", "body: not JSON"),
             (b'["new", "why"]', "body: not a JSON object"),
             (b"[" * 50_000, "body: not JSON")]
    for route in ("api/v1/alerts/1", "api/alerts/1"):
        for body, message in cases:
            answer = httpx.post(base + route, content=body, headers=h)
            assert answer.status_code == 422, (route, body[:20], answer.text)
            assert answer.json()["error"].startswith(message), (route, body[:20], answer.text)
            assert 'send {"status": ..., "reason": ...}' in answer.json()["error"]
        # a JSON object with a wrong field is a malformed field: 400 naming it, as before
        answer = httpx.post(base + route, json={"status": "new"}, headers=h)
        assert answer.status_code == 400 and answer.json()["error"] == "body field `reason` is missing: say why"
        # the token is judged before the body
        assert httpx.post(base + route, content=b"status=new", headers=bearer(keys["reader"])).status_code == 403
    assert httpx.get(base + "api/v1/alerts/1", headers=bearer(keys["reader"])).json()["history"] == before


def test_oversized_bodies_are_refused_with_a_message(tmp_path):
    path = tmp_path / "s.db"
    synthetic_store(path, benchmarks=1).close()
    keys = tokens(path, ci=("submit", None))
    server = start(path, tmp_path, max_body=4096)
    try:
        big = jsonl_body(machine="m1", runs=20, samples=10)
        assert len(big) > 4096
        answer = submit(server.base, keys["ci"], big, format="jsonl", machine="m1", submission="big-000001")
        assert answer.status_code == 413
        assert answer.json()["error"].startswith("the body is over the server's limit of 4096 bytes")

        def chunks():  # no Content-Length: refused while it streams in
            for k in range(0, len(big), 1000):
                yield big[k:k + 1000]

        answer = httpx.post(server.base + "api/v1/runs", content=chunks(), headers=bearer(keys["ci"]),
                            params=dict(format="jsonl", machine="m1", submission="big-000002"))
        assert answer.status_code == 413
        assert count(path, "run") == 1 * 2 * 8 * 4 and count(path, "submission") == 0
    finally:
        server.stop()


def test_a_token_over_its_rate_gets_429_with_retry_after(tmp_path):
    path = tmp_path / "s.db"
    synthetic_store(path, benchmarks=1).close()
    keys = tokens(path, reader=("read", None), other=("read", None))
    server = start(path, tmp_path, rate=0.2, burst=3)
    try:
        codes = [httpx.get(server.base + "api/v1/formats", headers=bearer(keys["reader"])) for _ in range(4)]
        assert [c.status_code for c in codes] == [200, 200, 200, 429]
        # The wait until the next token: at most one token's time (1 / 0.2 s = 5 s), less by
        # however long the four requests took (a loaded machine made it 4), and never 0.
        assert 1 <= int(codes[-1].headers["retry-after"]) <= 5
        assert "token 'reader' is over its rate limit" in codes[-1].json()["error"]
        # Per token: another token still has its burst.
        assert httpx.get(server.base + "api/v1/formats", headers=bearer(keys["other"])).status_code == 200
    finally:
        server.stop()


def test_submissions_over_http_on_the_store_url(store_url, tmp_path):
    """The server over the ``store_url`` store (PostgreSQL with ``--store-url``): submit, retry, read."""
    synthetic_store(store_url, benchmarks=1).close()
    keys = tokens(store_url, ci=("submit read", None))
    server = start(store_url, tmp_path, rate=1000, burst=1000)
    try:
        query = dict(format="jsonl", machine="pg-box", submission="pg-0000001")
        body = jsonl_body(machine="pg-box", runs=3)
        assert submit(server.base, keys["ci"], body, **query).status_code == 201
        assert submit(server.base, keys["ci"], body, **query).json()["replayed"]
        found = httpx.get(server.base + "api/v1/series", params={"machine": "pg-box"}, headers=bearer(keys["ci"]))
        assert [(s["benchmark"], s["versions"]) for s in found.json()["series"]] == [("api_bench", 1)]
        assert count(store_url, "run") == 1 * 2 * 8 * 4 + 3
    finally:
        server.stop()


def test_private_pages_need_a_log_in_with_a_token_that_may_read(tmp_path):
    # `[serve] public_pages = false`: every page, data file and plot needs a token that may read;
    # by default (the other tests here) the pages are open.
    path = tmp_path / "s.db"
    synthetic_store(path).close()
    keys = tokens(path, reader=("read", None), submitter=("submit", None))
    server = start(path, tmp_path, public_pages=False)
    try:
        base = server.base
        for where in ("", "index.html", "alerts.html", "alerts.atom", "data/index.js"):
            answer = httpx.get(base + where)
            assert answer.status_code == 401, where
            assert "public_pages = false" in answer.text
        page = httpx.get(base)
        assert 'href="login"' in page.text  # the 401 page leads to the log-in form
        assert httpx.get(base + "login").status_code == 200
        assert httpx.get(base, headers=bearer(keys["submitter"])).status_code == 401
        assert httpx.get(base, headers=bearer(keys["reader"])).status_code == 200
        assert httpx.get(base + "data/index.js", headers=bearer(keys["reader"])).status_code == 200
        # A log-in with the reading token opens the pages for its session.
        with httpx.Client(base_url=base) as client:
            form = client.get("login")
            csrf = client.cookies.get("regbench_csrf")
            client.post("login", data={"token": keys["reader"], "csrf": csrf})
            assert form.status_code == 200 and client.get("").status_code == 200
    finally:
        server.stop()


def test_two_servers_over_one_store_store_each_submission_once(store_url, tmp_path):
    """Two `regbench serve` processes over one store (as behind a load balancer; PostgreSQL with
    ``--store-url``): 8 clients send 24 distinct submissions, each to both servers at once; every
    submission is stored exactly once, and each one's two answers are a 201 and a replay."""
    synthetic_store(store_url, benchmarks=1).close()
    keys = tokens(store_url, ci=("submit", None))
    servers = [start(store_url, tmp_path, name=f"serve{i}", rate=1000, burst=1000) for i in range(2)]
    try:
        before = count(store_url, "run")
        answers: dict[str, list[int]] = {}
        lock = threading.Lock()

        def client(k: int) -> None:
            for j in range(3):
                sid = f"balanced-{k}-{j}"
                body = jsonl_body(machine="lb-box", version=f"lb{k}.{j}", runs=2, seed=k * 10 + j)
                got = []
                threads = [threading.Thread(target=lambda base=s.base: got.append(
                    submit(base, keys["ci"], body, format="jsonl", machine="lb-box", submission=sid).status_code))
                    for s in servers]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
                with lock:
                    answers[sid] = sorted(got)

        workers = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert len(answers) == 24
        assert {sid: codes for sid, codes in answers.items() if codes != [200, 201]} == {}
        assert count(store_url, "submission") == 24
        assert count(store_url, "run") == before + 24 * 2
    finally:
        for s in servers:
            s.stop()


def test_an_unknown_path_or_method_under_the_api_is_answered_as_every_error(served):
    # `regbench push --server http://host/api/v1` posts to /api/v1/api/v1/runs: the answer was
    # FastAPI's `{"detail": "Not Found"}`, not the `{"error": ...}` every other error is.
    _, base, keys = served
    answer = httpx.post(base + "api/v1/api/v1/runs", content=b"x", headers=bearer(keys["ci"]))
    assert answer.status_code == 404
    assert answer.json() == {"error": "no endpoint POST /api/v1/api/v1/runs (the endpoints are listed in "
                                      "/api/v1/openapi.json)"}
    answer = httpx.delete(base + "api/v1/alerts/1", headers=bearer(keys["boss"]))
    assert answer.status_code == 405 and "allow" in {k.lower() for k in answer.headers}
    assert answer.json()["error"].startswith("DELETE /api/v1/alerts/1 is not allowed")
