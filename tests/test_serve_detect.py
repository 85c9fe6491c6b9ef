"""Detection after each submission (``[serve] detect = true``, :mod:`regbench.web.after_submit`).

A real ``regbench serve`` takes two pushes of a CI machine's exported runs (``regbench push``,
real HTTP); after the second, whose versions hold a 2x slowdown, the server has opened the alert
and told its JSON sink by itself.  The background pass's bookkeeping (passes coalesced, a failed
pass reported and survived) is checked in process with a store that can be held.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import httpx
import pytest
from apitools import tokens
from test_team_push import NAMES, ci_store, export
from webtools import Server

from regbench.cli.main import main
from regbench.config import load_config
from regbench.errors import ConfigError, StoreError
from regbench.store import Store
from regbench.store.alerts import list_alerts
from regbench.web.after_submit import DetectAfterSubmit


def _config(root: Path, *, detect: bool, sink: Path | None = None) -> Path:
    lines = ["[project]", 'name = "team"', "", "[serve]", f"detect = {str(detect).lower()}"]
    if sink is not None:
        lines += ["", "[[notify]]", 'type = "json"', f'path = "{sink}"']
    path = root / "regbench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _push(server: Server, token: str, body: Path, capsys) -> str:
    capsys.readouterr()
    assert main(["push", "--server", server.base, "--token-env", "REGBENCH_TEST_TOKEN", "--format", "csv",
                 "--machine", "ci-a", str(body)]) == 0
    return capsys.readouterr().out


def test_the_server_checks_each_push_and_tells_the_sinks(tmp_path, capsys, monkeypatch):
    """Versions 0-2, then 4-5 (the slowdown is at 3), then 3 last, as CI jobs finish out of order:
    the alert is opened at 4 and told, then placed at 3 when 3 arrives, and not told again."""
    with ci_store(tmp_path / "ci.db") as ci:
        for part, ks in (("before", (0, 1, 2)), ("after", (0, 1, 2, 4, 5)), ("late", (3,))):
            (tmp_path / part).mkdir()
            export(ci, tmp_path / part / "runs.csv", *[a for k in ks for a in ("--version", NAMES[k])])
    # The second file holds the first three versions again: they are skipped as already stored.
    sink = tmp_path / "sent.json"
    config = _config(tmp_path, detect=True, sink=sink)
    Store(tmp_path / "server.db").close()
    secret = tokens(tmp_path / "server.db", ci=("submit,read", "ci-a"))["ci"]
    monkeypatch.setenv("REGBENCH_TEST_TOKEN", secret)
    server = Server(tmp_path / "server.db", tmp_path / "serve.log", config=config)
    try:
        headers = {"Authorization": f"Bearer {secret}"}
        out = _push(server, secret, tmp_path / "before" / "runs.csv", capsys)
        assert "the server checks the new versions now" in out
        first = httpx.get(server.base + "api/v1/detection", params={"wait": 60}, headers=headers).json()
        assert first["enabled"] and first["idle"] and first["passes"] >= 1
        assert first["last"]["error"] is None and first["last"]["new_alerts"] == 0
        assert httpx.get(server.base + "api/v1/alerts", headers=headers).json()["alerts"] == []

        _push(server, secret, tmp_path / "after" / "runs.csv", capsys)
        done = httpx.get(server.base + "api/v1/detection", params={"wait": 60}, headers=headers).json()
        assert done["idle"] and done["passes"] > first["passes"]
        assert done["last"]["error"] is None and done["last"]["notified"] == 1
        (alert,) = httpx.get(server.base + "api/v1/alerts", headers=headers).json()["alerts"]
        assert (alert["benchmark"], alert["kind"], alert["version"]) == ("checksum", "regression", NAMES[4])

        _push(server, secret, tmp_path / "late" / "runs.csv", capsys)
        late = httpx.get(server.base + "api/v1/detection", params={"wait": 60}, headers=headers).json()
        assert late["idle"] and late["passes"] > done["passes"] and late["last"]["error"] is None
        (moved,) = httpx.get(server.base + "api/v1/alerts", headers=headers).json()["alerts"]
        assert (moved["id"], moved["version"], moved["previous"]) == (alert["id"], NAMES[3], NAMES[2])
        assert [a["version"] for a in json.loads(sink.read_text())["alerts"]] == [NAMES[4]]  # told once
    finally:
        log = server.stop()
    assert "detection after 1 submission(s)" in log


def test_off_by_default_and_the_answer_says_so(tmp_path):
    Store(tmp_path / "server.db").close()
    secret = tokens(tmp_path / "server.db", ci=("submit,read", "ci-a"))["ci"]
    with ci_store(tmp_path / "ci.db") as ci:
        body = export(ci, tmp_path / "runs.csv")
    server = Server(tmp_path / "server.db", tmp_path / "serve.log", config=_config(tmp_path, detect=False))
    try:
        headers = {"Authorization": f"Bearer {secret}"}
        answer = httpx.post(server.base + "api/v1/runs", params={"format": "csv", "machine": "ci-a",
                                                                 "submission": "push-00000001"},
                            content=body, headers=headers)
        assert answer.status_code == 201 and "detection" not in answer.json()
        assert httpx.get(server.base + "api/v1/detection", headers=headers).json() == {"enabled": False}
    finally:
        server.stop()
    with Store(tmp_path / "server.db", create=False) as store:
        assert list_alerts(store) == []  # nobody ran detect: the slowdown at the fourth version is not an alert


class HeldStore:
    """The server's store, handed to a pass only once the test lets it go."""

    def __init__(self, path: Path) -> None:
        self.store = Store(path)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.fail = False

    def __call__(self) -> Store:
        self.entered.set()
        assert self.release.wait(60)
        if self.fail:
            raise StoreError(f"store {self.store.url}: database is locked\n\tby another writer")
        return self.store


def test_submissions_that_arrive_during_a_pass_are_checked_by_one_more(tmp_path):
    held = HeldStore(tmp_path / "server.db")
    after = DetectAfterSubmit(held, None)
    try:
        after.schedule()
        assert held.entered.wait(60)  # the first pass is running, holding the store
        held.entered.clear()
        for _ in range(3):
            after.schedule()
        status = after.status()
        assert status["running"] and status["pending"] == 3
        held.release.set()
        assert after.wait_idle(60)
        status = after.status()
        assert status["passes"] == 2 and status["last"]["submissions"] == 3 and status["last"]["error"] is None
    finally:
        after.close()
        held.store.close()


def test_a_failed_pass_is_reported_on_one_line_and_the_next_one_runs(tmp_path):
    held = HeldStore(tmp_path / "server.db")
    after = DetectAfterSubmit(held, None)
    try:
        held.fail = True
        held.release.set()
        after.schedule()
        assert after.wait_idle(60)
        last = after.status()["last"]
        assert "server.db: database is locked" in last["error"] and "\n" not in last["error"]
        held.fail = False
        after.schedule()
        assert after.wait_idle(60)
        assert after.status()["passes"] == 2 and after.status()["last"]["error"] is None
    finally:
        after.close()
        held.store.close()


@pytest.mark.parametrize("key", ["detect", "notify"])
def test_serve_detect_and_notify_are_booleans(tmp_path, key):
    path = tmp_path / "regbench.toml"
    path.write_text(f'[project]\nname = "x"\n\n[serve]\n{key} = "yes"\n')
    with pytest.raises(ConfigError, match=rf"\[serve\] `{key}` must be true or false, got 'yes'"):
        load_config(path)


def test_requests_that_wait_for_the_check_hold_no_thread(tmp_path):
    """`GET /api/v1/detection?wait=` waits in the event loop: a hundred waiting clients take none
    of the threads that serve every other request."""
    import asyncio

    held = HeldStore(tmp_path / "server.db")
    after = DetectAfterSubmit(held, None)
    try:
        after.schedule()
        assert held.entered.wait(60)  # a pass is running, holding the store

        async def scenario() -> tuple[bool, list[bool], int]:
            short = await after.wait_idle_async(0.05)  # the pass still runs: not idle in time
            waiting = [asyncio.ensure_future(after.wait_idle_async(60)) for _ in range(100)]
            await asyncio.sleep(0)  # every waiter has started
            threads = threading.active_count()
            held.release.set()
            return short, list(await asyncio.gather(*waiting)), threads

        before = threading.active_count()
        short, done, threads = asyncio.run(scenario())
        assert short is False and all(done) and len(done) == 100
        assert threads == before  # no thread was started for the waiters
    finally:
        after.close()
        held.store.close()


def test_a_server_that_stops_during_a_check_waits_a_few_seconds_not_for_it(tmp_path):
    held = HeldStore(tmp_path / "server.db")
    after = DetectAfterSubmit(held, None)
    try:
        after.schedule()
        assert held.entered.wait(60)
        assert after.close(timeout=0.2) is False  # the pass still holds the store: left to end
        after.schedule()  # closed: nothing more is queued
        assert after.status()["pending"] == 0
    finally:
        held.release.set()
        assert after.wait_idle(60)
        held.store.close()


def test_a_check_over_a_repository_without_the_pushed_commits_says_it_left_them_out(tmp_path, caplog):
    import logging
    import subprocess

    from test_team_push import push

    from regbench.config import load_config

    server = tmp_path / "server"
    server.mkdir()
    with ci_store(tmp_path / "ci.db") as ci:
        body = export(ci, tmp_path / "runs.csv")
    with Store(server / "results.db") as store:
        push(store, body)
        # The server's folder is a git repository of its own (an ops repository), without the
        # commits the CI machines pushed.
        (server / "regbench.toml").write_text('[project]\nname = "team"\n')
        subprocess.run(["git", "init", "-q", str(server)], check=True)
        subprocess.run(["git", "-C", str(server), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q",
                        "--allow-empty", "-m", "ops"], check=True)
        after = DetectAfterSubmit(lambda: store, load_config(server / "regbench.toml"))
        try:
            with caplog.at_level(logging.INFO, logger="regbench.web.detect"):
                after.schedule()
                assert after.wait_idle(60)
        finally:
            after.close()
    last = after.status()["last"]
    assert last["error"] is None and last["series"] == 0 and "(6 off it left out)" in last["history"]
    assert any(r.levelno == logging.WARNING and "off it left out" in r.getMessage() for r in caplog.records)
