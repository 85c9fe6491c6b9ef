"""Sinks and the outbox with real components: an HTTP server in a thread, an SMTP server
(aiosmtpd), files, and the `regbench alerts` commands through click's CliRunner.

Nothing sleeps: webhook backoff is recorded by an injected ``sleep``, and time moves by ``now=``.
"""

from __future__ import annotations

import io
import json
import socket
import threading
from datetime import datetime, timedelta
from email import message_from_bytes
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from click.testing import CliRunner

from regbench.cli.main import _register, cli, main
from regbench.detect import Change
from regbench.detect.alerts import record_alerts, set_status
from regbench.model import RunRecord, VersionInfo
from regbench.notify import NotifyReport, notify_pending
from regbench.notify.jsonfile import JsonSink
from regbench.notify.markdown import MarkdownSink
from regbench.notify.smtp import EmailSink
from regbench.notify.terminal import TerminalSink
from regbench.notify.webhook import WebhookSink
from regbench.store import Store
from regbench.store.alerts import claim, deliveries, get_alert, list_alerts

T0 = datetime(2024, 5, 1, 12, 0, 0)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def make_store(path, n_alerts=3, *, benchmark="fft"):
    store = Store(path)
    versions = [f"v{k}" for k in range(2 * n_alerts + 2)]
    store.add_runs([RunRecord(benchmark, v, 0, np.array([1.0])) for v in versions],
                   versions=[VersionInfo(v, timestamp=T0 + timedelta(days=k)) for k, v in enumerate(versions)])
    changes = [Change(benchmark, "default", "local", versions[2 * k + 1], versions[2 * k], 0.1 * (k + 1),
                      0.05 * (k + 1), 0.15 * (k + 1), "regression", "ci-overlap") for k in range(n_alerts)]
    record_alerts(store, changes, now=T0)
    return store


@pytest.fixture
def store(store_url):
    """Three alerts, on SQLite or, with ``--store-url``, PostgreSQL (conftest.py)."""
    s = make_store(store_url)
    yield s
    s.close()


# ------------------------------------------------------------------------------- HTTP server
class Receiver:
    """A webhook receiver: answers ``fail_status`` to the first ``fail_first`` requests."""

    def __init__(self, fail_first=0, fail_status=503):
        self.fail_first, self.fail_status = fail_first, fail_status
        self.requests: list[tuple[int, dict, dict]] = []  # (status answered, headers, body)
        self.lock = threading.Lock()

    def delivered(self) -> list[dict]:
        return [body for status, _, body in self.requests if status == 200]


@pytest.fixture
def receiver():
    rec = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with rec.lock:
                status = rec.fail_status if len(rec.requests) < rec.fail_first else 200
                rec.requests.append((status, dict(self.headers), body))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    rec.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/T0/SECRET"
    yield rec
    server.shutdown()
    server.server_close()
    thread.join()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def webhook(url, *, retries=0, timeout=5.0, sleeps=None, **kw):
    sleeps = [] if sleeps is None else sleeps
    return WebhookSink("hook", url=url, retries=retries, timeout=timeout, sleep=sleeps.append, **kw)


# -------------------------------------------------------------------------------- webhook
def test_webhook_retries_with_backoff_then_delivers(store, receiver):
    receiver.fail_first = 2
    sleeps: list[float] = []
    report = notify_pending(store, [webhook(receiver.url, retries=3, sleeps=sleeps)], now=T0)
    assert isinstance(report, NotifyReport) and report.ok and report.sent == 3
    assert sleeps == [0.5, 1.0]  # two failed attempts of the first alert, default backoff
    first = list_alerts(store)[0]
    statuses = [(s, h["Idempotency-Key"]) for s, h, _ in receiver.requests]
    assert statuses[:3] == [(503, first.uid), (503, first.uid), (200, first.uid)]
    body = receiver.requests[2][2]
    assert body["text"].startswith("regbench: regression +10.00% [+5.00%, +15.00%] in fft on local at v1")
    assert body["blocks"][0]["type"] == "section" and "*regression*" in body["blocks"][0]["text"]["text"]
    assert body["regbench"]["format_version"] == 1 and body["regbench"]["idempotency_key"] == first.uid
    assert body["regbench"]["alert"]["id"] == first.id and body["regbench"]["alert"]["methods"] == ["ci-overlap"]
    assert [(d.state, d.attempts, d.sent_at) for d in deliveries(store, sink="hook")] == [("sent", 1, T0)] * 3


def test_a_failing_sink_is_retried_by_the_next_call_and_each_alert_arrives_once(store, receiver):
    receiver.fail_first = 2
    sink = webhook(receiver.url, retries=0)
    ids = [a.id for a in list_alerts(store)]

    r1 = notify_pending(store, [sink], now=T0)
    (s1,) = r1.sinks
    assert not r1.ok and s1.failed == (ids[0],) and s1.deferred == tuple(ids[1:]) and s1.sent == ()
    assert s1.error == "POST http://127.0.0.1:%d failed: HTTP 503 Service Unavailable (attempt 1 of 1)" % (
        int(receiver.url.split(":")[2].split("/")[0]))
    assert "SECRET" not in s1.error
    (d,) = deliveries(store, sink="hook")
    assert (d.alert_id, d.state, d.attempts, d.next_attempt_at) == (ids[0], "failed", 1, T0)
    assert d.last_error == s1.error

    # never-tried alerts go first: the second call fails on alert 2, alert 1 and 3 wait
    r2 = notify_pending(store, [sink], now=T0 + timedelta(minutes=5))
    assert r2.sinks[0].failed == (ids[1],) and set(r2.sinks[0].deferred) == {ids[0], ids[2]}

    r3 = notify_pending(store, [sink], now=T0 + timedelta(minutes=10))
    assert r3.ok and sorted(r3.sinks[0].sent) == ids
    r4 = notify_pending(store, [sink], now=T0 + timedelta(minutes=15))
    assert r4.ok and r4.sent == 0 and r4.failed == 0

    keys = [b["regbench"]["idempotency_key"] for b in receiver.delivered()]
    assert sorted(keys) == sorted(a.uid for a in list_alerts(store))  # each exactly once
    assert len(receiver.requests) == 5  # 2 refused + 3 delivered, nothing more
    assert {(d.alert_id, d.state) for d in deliveries(store)} == {(i, "sent") for i in ids}
    assert [d.attempts for d in deliveries(store)] == [2, 2, 1]


def test_retry_delay_holds_a_failed_delivery_until_due(store, receiver):
    receiver.fail_first = 1
    sink = webhook(receiver.url)
    delay = lambda attempts: timedelta(minutes=5 * attempts)  # noqa: E731
    assert notify_pending(store, [sink], now=T0, retry_delay=delay).failed == 1
    early = notify_pending(store, [sink], now=T0 + timedelta(minutes=1), retry_delay=delay)
    assert sorted(early.sinks[0].sent) == [2, 3]  # the others go; #1 waits
    late = notify_pending(store, [sink], now=T0 + timedelta(minutes=6), retry_delay=delay)
    assert late.sinks[0].sent == (1,)
    assert len(receiver.delivered()) == 3


def test_client_errors_are_not_retried(store, receiver):
    receiver.fail_first, receiver.fail_status = 10, 400
    sleeps: list[float] = []
    report = notify_pending(store, [webhook(receiver.url, retries=3, sleeps=sleeps)], now=T0)
    assert "HTTP 400 Bad Request (attempt 1 of 4)" in report.sinks[0].error
    assert len(receiver.requests) == 1 and sleeps == []


def test_unreachable_url_is_reported_and_kept_for_later(store):
    port = free_port()  # nothing listens there now
    sleeps: list[float] = []
    report = notify_pending(store, [webhook(f"http://127.0.0.1:{port}/x/SECRET", retries=1, sleeps=sleeps)], now=T0)
    (s,) = report.sinks
    assert s.error.startswith(f"POST http://127.0.0.1:{port} failed: Connection refused (attempt 2 of 2)")
    assert sleeps == [0.5] and s.failed == (1,) and s.deferred == (2, 3)
    assert [d.state for d in deliveries(store)] == ["failed"]


def test_a_server_that_never_answers_times_out(store):
    with socket.socket() as listener:  # accepts connections (backlog) but never reads or answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
        report = notify_pending(store, [webhook(url, timeout=0.2)], now=T0)
    assert "timed out (attempt 1 of 1)" in report.sinks[0].error


def test_webhook_url_from_the_environment(store, receiver, monkeypatch):
    sink = WebhookSink("hook", url_env="REGBENCH_TEST_HOOK", retries=0)
    monkeypatch.delenv("REGBENCH_TEST_HOOK", raising=False)
    assert notify_pending(store, [sink], now=T0).sinks[0].error == (
        "environment variable REGBENCH_TEST_HOOK (the webhook URL) is not set")
    monkeypatch.setenv("REGBENCH_TEST_HOOK", receiver.url)
    assert notify_pending(store, [sink], now=T0).sent == 3


# ------------------------------------------------------------------- outbox: the crash window
def test_a_claim_left_by_a_dead_notify_is_sent_after_its_lease(store, receiver):
    sink = webhook(receiver.url)
    assert claim(store, 1, "hook", now=T0, lease=timedelta(minutes=10)) == 1  # then the process "died"
    soon = notify_pending(store, [sink], now=T0 + timedelta(minutes=1))
    assert soon.sinks[0].in_flight == (1,) and sorted(soon.sinks[0].sent) == [2, 3]
    later = notify_pending(store, [sink], now=T0 + timedelta(minutes=11))
    assert later.sinks[0].sent == (1,)
    assert [d.attempts for d in deliveries(store)] == [2, 1, 1]
    assert sorted(b["regbench"]["alert"]["id"] for b in receiver.delivered()) == [1, 2, 3]


def test_an_interrupted_send_is_recorded_and_retried(store):
    class Interrupted(TerminalSink):
        def send(self, alerts, *, now):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        notify_pending(store, [Interrupted("term")], now=T0)
    assert {d.state for d in deliveries(store)} == {"failed"}
    out = io.StringIO()
    assert notify_pending(store, [TerminalSink("term", stream=out)], now=T0).sent == 3
    assert out.getvalue().count("regression") == 3


def test_only_new_alerts_of_the_sink_kinds_are_sent(store, tmp_path):
    fixer = Change("fft", "default", "local", "v7", "v6", -0.25, -0.3, -0.2, "improvement", "ci-overlap")
    (improvement,) = record_alerts(store, [fixer], now=T0).created  # fixes alert #3 (+30%)
    assert get_alert(store, 3).status == "fixed"
    set_status(store, [2], "acknowledged", who="ana", now=T0)
    out = io.StringIO()
    regressions = TerminalSink("reg", stream=out, kinds=("regression",))
    everything = JsonSink("all", path=tmp_path / "all.json")
    report = notify_pending(store, [regressions, everything], now=T0)
    # #3 was fixed before it was told: it is told, as undone, before the alert that undid it
    assert report.sinks[0].sent == (1, 3)
    assert report.sinks[1].sent == (1, 3, improvement.id)
    assert "alert #1" in out.getvalue() and "improvement" not in out.getvalue()
    assert out.getvalue().splitlines()[1].startswith("FIXED  regression +30.00%")
    assert out.getvalue().rstrip().endswith(f"alert #3, already undone at v7 by alert #{improvement.id}")
    told = json.loads((tmp_path / "all.json").read_text())["alerts"]
    assert [(a["id"], a["kind"], a["status"], a["restores"]) for a in told] == [
        (1, "regression", "new", None), (3, "regression", "fixed", None), (improvement.id, "improvement", "new", 3)]
    assert improvement.restores == 3 and get_alert(store, 3).fixed_by_alert == improvement.id
    md = tmp_path / "pr.md"
    notify_pending(store, [MarkdownSink("md", path=md)], now=T0)
    assert f"| #{improvement.id} | improvement (fixes #3) | fft |" in md.read_text()
    hook = io.StringIO()
    notify_pending(store, [TerminalSink("t2", stream=hook, kinds=("improvement",))], now=T0)
    assert hook.getvalue().rstrip().endswith(f"alert #{improvement.id}, restores alert #3")


def test_an_alert_undone_in_the_pass_that_found_it_is_told_once_before_the_alert_that_undid_it(store_url, tmp_path):
    """docs/realworld.md, a team's setup: a regression and the improvement that undid it found by
    one detection; the regression became `fixed` at once and was never told, and the only
    message, the improvement's, said `restores alert #1`."""
    versions = [f"v{k}" for k in range(8)]
    with Store(store_url) as s:
        s.add_runs([RunRecord(b, v, 0, np.array([1.0])) for b in ("fft", "sort") for v in versions],
                   versions=[VersionInfo(v, timestamp=T0 + timedelta(days=k)) for k, v in enumerate(versions)])
        out = record_alerts(s, [Change("fft", "default", "local", "v3", "v2", 0.3, 0.25, 0.35, "regression", "auto"),
                                Change("fft", "default", "local", "v6", "v5", -0.23, -0.26, -0.2, "improvement", "auto"),
                                Change("sort", "default", "local", "v2", "v1", 0.1, 0.05, 0.15, "regression", "auto")],
                            now=T0)
        assert [(a.id, a.status) for a in out.created] == [(1, "fixed"), (2, "new"), (3, "new")]
        assert [a.id for a in out.fixed] == [1]

        class Flaky(TerminalSink):  # one message per alert; refuses alert #1 once
            per_alert = True
            refused = False

            def send(self, alerts, *, now):
                if alerts[0].id == 1 and not Flaky.refused:
                    Flaky.refused = True
                    raise OSError("connection reset")
                super().send(alerts, now=now)

        chat = io.StringIO()
        first = notify_pending(s, [Flaky("chat", stream=chat)], now=T0).sinks[0]
        # history order: sort's regression at v2, fft's at v3 (refused), fft's undoing at v6 (left)
        assert (first.sent, first.failed, first.deferred) == ((3,), (1,), (2,))
        again = notify_pending(s, [Flaky("chat", stream=chat)], now=T0).sinks[0]
        assert again.sent == (1, 2)  # the retry of #1 before the first try of #2
        lines = chat.getvalue().splitlines()
        assert lines[1] == "FIXED  regression +30.00% [+25.00%, +35.00%] in fft on local at v3 (since v2), alert #1, " \
                           "already undone at v6 by alert #2"
        assert lines[2].endswith("alert #2, restores alert #1")
        assert notify_pending(s, [Flaky("chat", stream=chat)], now=T0).sent == 0  # told once
        assert [(d.alert_id, d.state, d.attempts) for d in deliveries(s, sink="chat")] == [
            (1, "sent", 2), (2, "sent", 1), (3, "sent", 1)]
        # a file gets all three at once, in history order; a regressions-only sink gets the undone one too
        assert notify_pending(s, [JsonSink("all", path=tmp_path / "all.json")], now=T0).sinks[0].sent == (3, 1, 2)
        md = tmp_path / "pr.md"
        assert notify_pending(s, [MarkdownSink("md", path=md, kinds=("regression",))], now=T0).sinks[0].sent == (3, 1)
        assert "| #1 | **regression** (already undone by #2) | fft |" in md.read_text()
        # a person who triaged the improvement took the pair out of the outbox
        set_status(s, [2], "acknowledged", who="ana", now=T0)
        assert notify_pending(s, [JsonSink("late", path=tmp_path / "late.json")], now=T0).sinks[0].sent == (3,)


def test_an_undone_alert_a_sink_keeps_refusing_does_not_hold_back_the_others(store_url):
    """Review: the undone regression, moved before the improvement that undid it on every retry,
    made a per-alert sink that refuses it fail first and defer every later alert, for good."""
    versions = [f"v{k}" for k in range(8)]
    with Store(store_url) as s:
        s.add_runs([RunRecord(b, v, 0, np.array([1.0])) for b in ("fft", "sort") for v in versions],
                   versions=[VersionInfo(v, timestamp=T0 + timedelta(days=k)) for k, v in enumerate(versions)])
        record_alerts(s, [Change("fft", "default", "local", "v3", "v2", 0.3, 0.25, 0.35, "regression", "auto"),
                          Change("fft", "default", "local", "v6", "v5", -0.23, -0.26, -0.2, "improvement", "auto"),
                          Change("sort", "default", "local", "v7", "v6", 0.1, 0.05, 0.15, "regression", "auto")],
                      now=T0)
        assert get_alert(s, 1).fixed_by_alert == 2

        class Refusing(TerminalSink):  # one message per alert; never takes alert #1
            per_alert = True

            def send(self, alerts, *, now):
                if alerts[0].id == 1:
                    raise OSError("413 payload too large")
                super().send(alerts, now=now)

        out = io.StringIO()
        calls = [notify_pending(s, [Refusing("chat", stream=out)], now=T0).sinks[0] for _ in range(4)]
        # its first try and its first retry go before the improvement that undid it (a sink that
        # was down for one call tells them in order); after that, its retries go last
        assert [(c.sent, c.failed, c.deferred) for c in calls] == [
            ((), (1,), (2, 3)), ((), (1,), (2, 3)), ((2, 3), (1,), ()), ((), (1,), ())]
        assert [(d.alert_id, d.state, d.attempts) for d in deliveries(s, sink="chat")] == [
            (1, "failed", 4), (2, "sent", 1), (3, "sent", 1)]


def test_an_undone_alert_a_person_triaged_before_it_was_told_is_not_told(store, tmp_path):
    set_status(store, [3], "acknowledged", who="ana", why="bisecting", now=T0)  # not sent yet
    fixer = Change("fft", "default", "local", "v7", "v6", -0.25, -0.3, -0.2, "improvement", "ci-overlap")
    (improvement,) = record_alerts(store, [fixer], now=T0).created
    assert get_alert(store, 3).status == "fixed"  # an acknowledged alert is fixed too
    sink = JsonSink("all", path=tmp_path / "all.json")
    assert notify_pending(store, [sink], now=T0).sinks[0].sent == (1, 2, improvement.id)


# ------------------------------------------------------------------------------------ files
def test_json_file_is_versioned_and_added_to_atomically(store, tmp_path):
    path = tmp_path / "out" / "alerts.json"
    sink = JsonSink("json", path=path)
    assert notify_pending(store, [sink], now=T0).sent == 3
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 1 and doc["generated_at"] == "2024-05-01T12:00:00Z" and doc["sink"] == "json"
    assert [a["id"] for a in doc["alerts"]] == [1, 2, 3]
    assert list(doc["alerts"][0]) == ["id", "key", "benchmark", "config", "machine", "unit", "direction", "version",
                                      "previous", "kind", "change", "ci_low", "ci_high", "p_value", "methods",
                                      "status", "fixed_by", "fixed_by_alert", "restores", "created_at",
                                      "updated_at", "confirmation", "spread", "machines", "unchanged_on", "held",
                                      "hold_machines", "version_tags", "previous_tags", "error", "culprit",
                                      "bisection"]
    before = path.read_text()
    assert notify_pending(store, [sink], now=T0).sent == 0
    assert path.read_text() == before  # nothing due: the file, not yet taken away, is left alone
    assert sorted(p.name for p in path.parent.iterdir()) == ["alerts.json"]  # no temporary file left
    path.unlink()  # whoever handled the alerts took the file away
    assert notify_pending(store, [sink], now=T0).sent == 0
    assert json.loads(path.read_text())["alerts"] == []  # a file is always there after a call


def test_each_call_adds_its_alerts_to_the_file_sinks(store, tmp_path):
    path, md = tmp_path / "alerts.json", tmp_path / "pr.md"
    sinks = [JsonSink("json", path=path), MarkdownSink("md", path=md, title="Perf")]
    set_status(store, [2, 3], "acknowledged", who="ana", now=T0)  # out of the first call
    assert notify_pending(store, sinks, now=T0).sent == 2
    set_status(store, [2, 3], "new", who="ana", now=T0)
    assert notify_pending(store, sinks, now=T0 + timedelta(minutes=30)).sent == 4
    doc = json.loads(path.read_text())
    assert [a["id"] for a in doc["alerts"]] == [1, 2, 3] and doc["generated_at"] == "2024-05-01T12:30:00Z"
    text = md.read_text()
    assert text.startswith("### Perf\n\n3 new alert(s): 3 regression(s), 0 improvement(s).\n")
    assert [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| #")] == ["| #1", "| #2", "| #3"]


def test_the_json_sink_does_not_overwrite_a_file_it_did_not_write(store, tmp_path):
    path = tmp_path / "alerts.json"
    path.write_text("[1, 2]\n")
    report = notify_pending(store, [JsonSink("json", path=path)], now=T0)
    assert report.failed == 3 and "is not a regbench alerts file" in report.sinks[0].error
    assert path.read_text() == "[1, 2]\n"
    path.write_text("")  # emptied: a new file
    assert notify_pending(store, [JsonSink("json", path=path)], now=T0).sent == 3
    assert len(json.loads(path.read_text())["alerts"]) == 3


def test_a_file_sink_that_cannot_write_fails_and_is_retried(store, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    sink = JsonSink("json", path=blocker / "alerts.json")
    report = notify_pending(store, [sink], now=T0)
    assert report.failed == 3 and report.sinks[0].error.startswith(f"cannot write {blocker / 'alerts.json'}")
    blocker.unlink()
    assert notify_pending(store, [sink], now=T0).sent == 3
    assert len(json.loads((blocker / "alerts.json").read_text())["alerts"]) == 3


def test_markdown_table_for_a_pull_request(tmp_path, store_url):
    with make_store(store_url, 2, benchmark="parse|json") as store:
        path = tmp_path / "pr.md"
        assert notify_pending(store, [MarkdownSink("md", path=path, title="Perf")], now=T0).sent == 2
        text = path.read_text()
        assert text.startswith("### Perf\n\n2 new alert(s): 2 regression(s), 0 improvement(s).\n")
        assert "| alert | kind | benchmark | config | machine | version | previous | change | CI | methods |" in text
        assert ("| #1 | **regression** | parse\\|json | default | local | v1 | v0 | +10.00% | [+5.00%, +15.00%] "
                "| ci-overlap |") in text
        notify_pending(store, [MarkdownSink("md", path=path, title="Perf")], now=T0)
        assert path.read_text() == text  # nothing due: left alone
        path.unlink()
        notify_pending(store, [MarkdownSink("md", path=path, title="Perf")], now=T0)
        assert path.read_text() == "### Perf\n\nNo new performance alerts.\n"


# ------------------------------------------------------------------------------------ e-mail
class Mailbox:
    def __init__(self):
        self.envelopes = []
        self.logins = []

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 OK"


@pytest.fixture
def smtp_server():
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    box = Mailbox()

    def authenticator(server, session, envelope, mechanism, auth_data):
        box.logins.append((auth_data.login.decode(), auth_data.password.decode()))
        return AuthResult(success=auth_data.password == b"s3cret", handled=False)

    controller = Controller(box, hostname="127.0.0.1", port=free_port(), authenticator=authenticator,
                            auth_require_tls=False)
    controller.start()
    box.port = controller.port
    yield box
    controller.stop()


def test_email_is_sent_once_per_alert_with_a_stable_message_id(store, smtp_server):
    sink = EmailSink("mail", host="127.0.0.1", port=smtp_server.port, sender="bench@example.org",
                     to=("dev@example.org", "lead@example.org"))
    assert notify_pending(store, [sink], now=T0).sent == 3
    assert notify_pending(store, [sink], now=T0).sent == 0
    assert len(smtp_server.envelopes) == 3
    env = smtp_server.envelopes[0]
    assert env.mail_from == "bench@example.org" and env.rcpt_tos == ["dev@example.org", "lead@example.org"]
    msg = message_from_bytes(env.content, policy=default_policy)
    first = list_alerts(store)[0]
    assert msg["Subject"] == "[regbench] regression +10.00% in fft on local at v1"
    assert msg["Message-ID"] == f"<{first.uid}.mail@regbench.invalid>" and msg["X-Regbench-Alert"] == first.uid
    body = msg.get_content()
    assert "regression +10.00% [+5.00%, +15.00%] in fft on local at v1 (since v0), alert #1" in body
    assert "methods: ci-overlap" in body


def test_email_login_reads_the_password_from_the_environment(store, smtp_server, monkeypatch):
    sink = EmailSink("mail", host="127.0.0.1", port=smtp_server.port, sender="a@example.org", to=("b@example.org",),
                     user="bench", password_env="REGBENCH_TEST_SMTP_PASSWORD")
    monkeypatch.delenv("REGBENCH_TEST_SMTP_PASSWORD", raising=False)
    missing = notify_pending(store, [sink], now=T0)
    assert missing.sinks[0].error == "environment variable REGBENCH_TEST_SMTP_PASSWORD (the SMTP password) is not set"
    monkeypatch.setenv("REGBENCH_TEST_SMTP_PASSWORD", "wrong")
    refused = notify_pending(store, [sink], now=T0)
    assert refused.sinks[0].error.startswith(f"SMTP 127.0.0.1:{smtp_server.port}: SMTPAuthenticationError")
    monkeypatch.setenv("REGBENCH_TEST_SMTP_PASSWORD", "s3cret")
    assert notify_pending(store, [sink], now=T0).sent == 3
    # smtplib tries each mechanism the server offers (PLAIN, LOGIN) before giving up; one login per message
    assert {p for _, p in smtp_server.logins[:-3]} == {"wrong"} and smtp_server.logins[-3:] == [("bench", "s3cret")] * 3
    assert len(smtp_server.envelopes) == 3


def test_unreachable_smtp_server_is_reported(store):
    port = free_port()
    sink = EmailSink("mail", host="127.0.0.1", port=port, sender="a@b.org", to=("c@d.org",), timeout=2)
    report = notify_pending(store, [sink], now=T0)
    assert report.sinks[0].error.startswith(f"SMTP 127.0.0.1:{port}: ConnectionRefusedError")
    assert report.sinks[0].failed == (1,)


# --------------------------------------------------------------------------------------- CLI
@pytest.fixture
def project(tmp_path, receiver, store_url, monkeypatch):
    """A project folder whose store (``REGBENCH_STORE``, as the CLI reads it) holds three alerts."""
    make_store(store_url).close()
    monkeypatch.setenv("REGBENCH_STORE", store_url)
    (tmp_path / "regbench.toml").write_text(
        '[[notify]]\ntype = "json"\npath = "out/alerts.json"\n\n'
        f'[[notify]]\ntype = "webhook"\nname = "slack"\nurl = "{receiver.url}"\nretries = 0\ntimeout = 5\n')
    _register()
    return tmp_path


def invoke(project, *args):
    result = CliRunner().invoke(cli, ["--config", str(project / "regbench.toml"), "alerts", *args],
                                catch_exceptions=False)
    return result


def test_cli_list_and_show(project):
    table = invoke(project, "list")
    assert table.exit_code == 0, table.output
    assert "3 alert(s)" in table.output and "regression" in table.output and "+10.00%" in table.output
    listed = json.loads(invoke(project, "list", "--format", "json").output)
    assert [(a["id"], a["status"], a["version"]) for a in listed] == [(1, "new", "v1"), (2, "new", "v3"),
                                                                      (3, "new", "v5")]
    assert json.loads(invoke(project, "list", "--status", "fixed", "--format", "json").output) == []
    assert json.loads(invoke(project, "list", "--benchmark", "nope", "--format", "json").output) == []
    shown = invoke(project, "show", "1")
    assert shown.output.startswith("regression +10.00% [+5.00%, +15.00%] in fft on local at v1 (since v0), alert #1")
    assert "new          regbench: detected by ci-overlap" in shown.output and "deliveries: none yet" in shown.output


def test_cli_triage_records_who_and_why(project):
    acked = invoke(project, "ack", "1", "2", "--by", "Ana", "--reason", "bisecting")
    assert acked.exit_code == 0 and acked.output == "acknowledged #1, #2\n"
    assert invoke(project, "expected", "2", "--by", "Bo", "--reason", "safer hashing").output == "marked expected #2\n"
    assert invoke(project, "invalid", "3", "--by", "Cy").output == "marked invalid #3\n"
    assert invoke(project, "reopen", "3", "--by", "Cy").output == "reopened #3\n"
    doc = json.loads(invoke(project, "show", "2", "--format", "json").output)
    assert doc["status"] == "expected"
    assert [(h["status"], h["who"], h["why"]) for h in doc["history"]] == [
        ("new", "regbench", "detected by ci-overlap: +20.00% at v3 (since v2)"), ("acknowledged", "Ana", "bisecting"),
        ("expected", "Bo", "safer hashing")]
    by_default = invoke(project, "ack", "3")
    assert by_default.exit_code == 0
    who = json.loads(invoke(project, "show", "3", "--format", "json").output)["history"][-1]["who"]
    assert who and who != "regbench"


def test_cli_errors_are_one_line(project, capsys):
    base = ["alerts"]  # the store is REGBENCH_STORE's
    assert main([*base, "ack", "1", "--by", "Ana"]) == 0
    capsys.readouterr()
    assert main([*base, "ack", "1", "--by", "Ana"]) == 3
    assert capsys.readouterr().err == "error: alert #1 is already acknowledged\n"
    assert main([*base, "show", "99"]) == 3
    assert capsys.readouterr().err == "error: no alert #99 in the store\n"


def test_cli_notify_reports_failures_and_retries(project, receiver):
    receiver.fail_first = 1
    first = invoke(project, "notify")
    assert first.exit_code == 4
    assert "json (json): 3 sent" in first.output
    assert "slack (webhook): 0 sent, 1 failed (#1), 2 left for the next call: POST http://127.0.0.1:" in first.output
    assert "SECRET" not in first.output
    second = invoke(project, "notify")
    assert second.exit_code == 0, second.output
    assert "json (json): 0 sent" in second.output and "slack (webhook): 3 sent" in second.output
    assert sorted(b["regbench"]["alert"]["id"] for b in receiver.delivered()) == [1, 2, 3]
    shown = invoke(project, "show", "1").output
    assert "json         sent" in shown and "slack        sent" in shown and "(2 attempt(s))" in shown


def test_cli_notify_without_sinks(tmp_path, store_url):
    make_store(store_url).close()
    (tmp_path / "regbench.toml").write_text("")
    _register()
    result = CliRunner().invoke(cli, ["--store", store_url, "--config", str(tmp_path / "regbench.toml"),
                                      "alerts", "notify"])
    assert result.exit_code == 0 and "no sinks configured" in result.output


def test_messages_name_the_tags_of_the_versions(tmp_path):
    """A tagged version is named by its tag beside its stored name in every sink's message, and
    the JSON carries the tags; an untagged one is named as before."""
    from regbench.model import VersionAlias

    with make_store(tmp_path / "r.db", n_alerts=1) as store:
        store.ensure_versions([VersionInfo("v1")], aliases={"v1": [VersionAlias("rel-2.0"), VersionAlias("main", "branch")]})
        out, md, js = io.StringIO(), tmp_path / "pr.md", tmp_path / "alerts.json"
        assert notify_pending(store, [TerminalSink("t", stream=out), MarkdownSink("md", path=md),
                                      JsonSink("json", path=js)], now=T0).sent == 3
        assert "at rel-2.0 (v1) (since v0)" in out.getvalue()
        assert "| rel-2.0 (v1) | v0 |" in md.read_text()
        [doc] = json.loads(js.read_text())["alerts"]
        assert (doc["version"], doc["version_tags"], doc["previous_tags"]) == ("v1", ["rel-2.0"], [])
        # The store's alert itself carries none; `alerts list` and `show` add them to their JSON.
        assert get_alert(store, doc["id"]).version_tags == ()
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "r.db"), "alerts", "list", "--format", "json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["version_tags"] == ["rel-2.0"]
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "r.db"), "alerts", "show", str(doc["id"]), "--format", "json"])
    assert res.exit_code == 0 and json.loads(res.output)["version_tags"] == ["rel-2.0"]


# ------------------------------------------------------------------------ failure alerts
def test_a_failure_is_told_with_its_error_and_no_size_wherever_regressions_go(store, receiver, smtp_server, tmp_path):
    """A benchmark that starts failing (tests/test_failure_alerts.py) goes to a sink of regressions
    (`kinds = ["regression"]`), to one that names failures, not to one of improvements."""
    from regbench.config import load_config
    from regbench.inventory import scan_failures
    from regbench.notify import build_sinks

    # Crashing from v1 to the newest version, which fft ran at: failing, not merely no longer run.
    store.add_runs([RunRecord("io", "v0", 0, np.array([1.0]))]
                   + [RunRecord("io", f"v{k}", 0, np.empty(0), status="crashed", exit_code=-11,
                                stderr_tail="writing 2 GB\nOSError: disk full\n[regbench] signal SIGSEGV\n")
                      for k in range(1, 8)])
    (failure,) = record_alerts(store, [], failures=scan_failures(store), now=T0).created
    (tmp_path / "regbench.toml").write_text(
        f'[[notify]]\ntype = "webhook"\nurl = "{receiver.url}"\nretries = 0\nkinds = ["regression"]\n'
        f'[[notify]]\ntype = "email"\nhost = "127.0.0.1"\nport = {smtp_server.port}\nfrom = "a@example.org"\n'
        f'to = "b@example.org"\nkinds = ["failure"]\n'
        f'[[notify]]\ntype = "json"\npath = "improvements.json"\nkinds = ["improvement"]\n')
    report = notify_pending(store, build_sinks(load_config(tmp_path / "regbench.toml").notify), now=T0)
    # in history order: the failure at v1 right after the regression at v1
    assert [s.sent for s in report.sinks] == [(1, failure.id, 2, 3), (failure.id,), ()]

    error = "crashed (signal SIGSEGV): OSError: disk full"
    body = receiver.delivered()[1]
    assert body["text"] == f"regbench: failure in io on local at v1 (last ok at v0), alert #{failure.id}: {error}"
    assert body["blocks"][0]["text"]["text"].startswith(":x: *failure* in io on local at v1")
    assert "%" not in json.dumps(body["blocks"]) and "error: " + error in body["blocks"][1]["elements"][0]["text"]
    told = body["regbench"]["alert"]
    assert (told["kind"], told["change"], told["ci_low"], told["error"]) == ("failure", None, None, error)

    (env,) = smtp_server.envelopes
    msg = message_from_bytes(env.content, policy=default_policy)
    assert msg["Subject"] == "[regbench] failure in io on local at v1"
    assert f"error: {error}" in msg.get_content() and "%" not in msg.get_content()
