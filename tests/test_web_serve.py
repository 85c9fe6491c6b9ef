"""``regbench serve``: a real uvicorn on a free loopback port (a subprocess), read by httpx and a
real Chromium; triage refused without a token and persisted with one."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import httpx
import pytest

from regbench.store import Store
from regbench.store.alerts import alert_history, get_alert
from regbench.web.data import benchmark_id, series_id
from webtools import T0, ConsoleLog, Server, sha, synthetic_store

playwright = pytest.importorskip("playwright.sync_api")


def _token(store_path, name: str, scope: str) -> str:
    out = subprocess.run([sys.executable, "-m", "regbench", "--store", str(store_path), "token", "create",
                          "--name", name, "--scope", scope], capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    path = root / "s.db"
    synthetic_store(path).close()
    tokens = {"alice": _token(path, "alice", "triage"), "reader": _token(path, "reader", "read")}
    server = Server(path, root / "serve.log")
    yield path, server.base, tokens
    server.stop()


def test_every_live_page_loads_without_console_errors(served, page):
    _, base, _ = served
    sid = series_id("b0", "default", "local")
    for name, scripted in [("", True), (f"series.html?s={sid}", True), ("alerts.html", False),
                           ("compare.html", False), (f"diagnosis-{benchmark_id('b0')}.html", False),
                           ("login", False)]:
        response = page.goto(base + name)
        assert response is not None and response.status == 200, name
        if scripted:
            page.wait_for_selector("body[data-ready=yes]", timeout=15_000)
        assert page.console_log.errors == [], name
    assert all(page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)"))
    page.goto(base + f"series.html?s={sid}")
    page.wait_for_selector("body[data-ready=yes]")
    assert page.locator("#changes li.change").get_attribute("data-commit") == sha(4)
    assert page.locator("#chart").get_attribute("data-intervals") == "8"


@pytest.mark.parametrize("path, status, message", [
    ("series.html?s=000000000000", 404, "no series '000000000000' in the store"),
    ("series.html?s=nonsense", 400, "query parameter `s` = 'nonsense' is not a series id"),
    ("series.html", 400, "query parameter `s` is missing"),
    ("compare.html?a=" + sha(1), 400, "query parameter `b` is missing"),
    ("compare.html?a=nope&b=" + sha(1), 404, "no version named 'nope' in the store"),
    ("compare.html?a=%3Cscript%3E&b=x", 400, "query parameter `a` = '<script>' is not a version name"),
    ("diagnosis-000000000000.html", 404, "no benchmark with diagnosis id '000000000000'"),
    ("data/series/000000000000.js", 404, "no series '000000000000' in the store"),
    ("no-such-page", 404, "no page /no-such-page"),
    ("index.html?state=broken", 400, "query parameter `state` = 'broken' is not a state (changed, stable, noisy, failing)"),
])
def test_bad_input_is_a_page_naming_what_is_wrong(served, path, status, message):
    _, base, _ = served
    r = httpx.get(base + path)
    assert r.status_code == status
    text = r.text.replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">")
    assert message in text
    assert "Traceback" not in text


def test_compare_lists_every_series_sorted_by_change(served):
    _, base, _ = served
    r = httpx.get(base + f"compare.html?a={sha(3)}&b={sha(4)}")
    assert r.status_code == 200
    first = r.text.index('data-benchmark="b0"')
    assert first < r.text.index('data-benchmark="b1"') and first < r.text.index('data-benchmark="b2"')
    assert r.text.count('data-verdict="regression"') == 2  # b0 on both configurations, +20%


def test_the_feed_is_atom_with_the_alert(served):
    import xml.etree.ElementTree as ET

    _, base, _ = served
    r = httpx.get(base + "alerts.atom")
    assert r.headers["content-type"].startswith("application/atom+xml")
    entries = ET.fromstring(r.text).findall("{http://www.w3.org/2005/Atom}entry")
    assert len(entries) == 1
    assert "regression of +20.0% in b0" in entries[0].findtext("{http://www.w3.org/2005/Atom}title")


def test_triage_without_a_good_token_is_refused_and_changes_nothing(served):
    path, base, tokens = served
    body = {"status": "invalid", "reason": "noise"}
    assert httpx.post(base + "api/alerts/1", json=body).status_code == 401
    assert httpx.post(base + "api/alerts/1", json=body, headers={"Authorization": "Bearer rbt_wrong"}).status_code == 401
    r = httpx.post(base + "api/alerts/1", json=body, headers={"Authorization": f"Bearer {tokens['reader']}"})
    assert r.status_code == 403 and "no `triage` scope" in r.json()["error"]
    # a form POST without a session: refused (no CSRF token, and no credentials)
    assert httpx.post(base + "alerts/1/triage", data=body).status_code in (401, 403)
    with httpx.Client(base_url=base) as client:
        client.get("alerts.html")  # sets the CSRF cookie
        r = client.post("alerts/1/triage", data={**body, "csrf": client.cookies["regbench_csrf"]})
        assert r.status_code == 401
    with Store(path, create=False) as store:
        assert get_alert(store, 1).status != "invalid"


def test_triage_with_a_bearer_token_is_recorded_with_who(served):
    path, base, tokens = served
    r = httpx.post(base + "api/alerts/1", json={"status": "acknowledged", "reason": "bisecting"},
                   headers={"Authorization": f"Bearer {tokens['alice']}"})
    assert r.status_code == 200, r.text
    with Store(path, create=False) as store:
        assert get_alert(store, 1).status == "acknowledged"
        last = alert_history(store, 1)[-1]
        assert (last.status, last.who, last.why) == ("acknowledged", "alice", "bisecting")
    # the live pages show it at once
    assert 'data-status="acknowledged"' in httpx.get(base + "alerts.html").text


def test_log_in_and_triage_in_the_browser(served, page):
    path, base, tokens = served
    page.goto(base + "login")
    page.fill("input[name=token]", "rbt_not_a_token")
    page.click("form.login button")
    assert page.locator("#message").inner_text() == "Unknown or revoked token."
    assert page.console_log.errors == ["console error: Failed to load resource: the server responded with a status "
                                       "of 401 (Unauthorized)"]
    page.console_log.errors.clear()
    page.fill("input[name=token]", tokens["alice"])
    page.click("form.login button")
    page.wait_for_url("**/alerts.html")
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["regbench_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    stale = page.context.new_page()
    stale.console_log = ConsoleLog(stale)
    stale.goto(base + "alerts.html")
    row = page.locator("tr[data-alert='1']")
    row.locator("select[name=status]").select_option("expected")
    row.locator("input[name=reason]").fill("the new cache trades time for memory")
    row.locator("button").click()
    page.wait_for_selector("#notice")
    assert page.locator("tr[data-alert='1']").get_attribute("data-status") == "expected"
    with Store(path, create=False) as store:
        last = alert_history(store, 1)[-1]
        assert (last.status, last.who, last.why) == ("expected", "alice", "the new cache trades time for memory")
    # the same decision again, from a tab opened before it: a styled page saying why, nothing changed
    stale.locator("tr[data-alert='1'] select[name=status]").select_option("expected")
    stale.locator("tr[data-alert='1'] input[name=reason]").fill("again")
    stale.locator("tr[data-alert='1'] button").click()
    stale.wait_for_selector("#message")
    assert stale.locator("#message").inner_text() == "alert #1 is already expected"
    assert stale.evaluate("getComputedStyle(document.querySelector('#message')).color") == "rgb(180, 35, 24)"
    assert stale.console_log.errors == ["console error: Failed to load resource: the server responded with a status "
                                        "of 409 (Conflict)"]
    with Store(path, create=False) as store:
        assert alert_history(store, 1)[-1].why == "the new cache trades time for memory"
    # a form posted with a wrong CSRF token is refused, logged in or not
    r = page.request.post(base + "alerts/1/triage", form={"status": "new", "reason": "x", "csrf": "forged"})
    assert r.status == 403
    assert page.console_log.errors == []


def test_a_missing_store_is_a_clear_page_and_a_log_line(tmp_path):
    server = Server(tmp_path / "none.db", tmp_path / "serve.log")
    try:
        r = httpx.get(server.base)
        assert r.status_code == 503
        assert f"no results store at {tmp_path / 'none.db'}" in r.text
        assert "Traceback" not in r.text
    finally:
        err = server.stop()
    assert f"ERROR: regbench.web: GET /: no results store at {tmp_path / 'none.db'}" in err
    assert "Traceback" not in err


def test_a_locked_store_is_a_clear_page_and_the_dashboard_recovers(tmp_path):
    import sqlite3

    synthetic_store(tmp_path / "s.db").close()
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")  # no other connection may even read
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE held(x)")
    server = Server(tmp_path / "s.db", tmp_path / "serve.log")
    try:
        r = httpx.get(server.base, timeout=60)
        assert r.status_code == 503
        assert "stayed locked by another writer for 5 s" in r.text and "Traceback" not in r.text
        holder.execute("ROLLBACK")
        holder.close()
        assert httpx.get(server.base, timeout=60).status_code == 200
    finally:
        log = server.stop()
    assert "ERROR: regbench.web: GET /: the store" in log and "Traceback" not in log


def test_serve_reads_and_writes_the_store_it_is_given(store_url, tmp_path):
    """On SQLite, and on PostgreSQL with --store-url (CI): the pages, and a triage recorded."""
    synthetic_store(store_url).close()
    with Store(store_url, create=False) as store:
        from regbench.store.tokens import create_token

        _, secret = create_token(store, "ci-bot", "triage")
    server = Server(store_url, tmp_path / "serve.log")
    try:
        sid = series_id("b0", "default", "local")
        assert f'"commit":"{sha(4)}"' in httpx.get(server.base + f"data/series/{sid}.js").text
        assert httpx.get(server.base + f"series.html?s={sid}").status_code == 200
        r = httpx.post(server.base + "api/alerts/1", json={"status": "invalid", "reason": "a noisy neighbour"},
                       headers={"Authorization": f"Bearer {secret}"})
        assert r.status_code == 200, r.text
        assert 'data-status="invalid"' in httpx.get(server.base + "alerts.html").text
    finally:
        server.stop()
    with Store(store_url, create=False) as store:
        last = alert_history(store, 1)[-1]
        assert (last.status, last.who, last.why) == ("invalid", "ci-bot", "a noisy neighbour")


def test_compare_takes_git_revisions_of_the_project_as_the_command_line_does(tmp_path):
    """The live `compare.html?a=v0.2&b=...` was a 404 (`no version named 'v0.2'`) where `regbench
    compare v0.2 ...` on the same server found the tag: the pages did not ask the project's
    repository. A revision is asked again at each request (a branch moves while the server runs)."""
    import numpy as np

    from regbench.demo_project import git_commit, git_init
    from regbench.model import RunRecord, VersionInfo

    repo = tmp_path / "proj"
    git_init(repo)
    shas: list[str] = []

    def commit_and_store(k: int) -> None:
        shas.append(git_commit(repo, {"f.txt": str(k)}, f"c{k}", when=T0 + timedelta(hours=k)))
        rng = np.random.default_rng(k)
        with Store(tmp_path / "s.db") as store:  # `slow` is 30% slower from c2 on
            store.add_runs([RunRecord(name, shas[k][:10], r, (1.3 if name == "slow" and k >= 2 else 1.0)
                                      * (1 + 0.005 * rng.standard_normal(8)))
                            for name in ("slow", "same") for r in range(4)],
                           versions=[VersionInfo(shas[k][:10], commit=shas[k], timestamp=T0 + timedelta(hours=k))])

    for k in range(3):
        commit_and_store(k)
        if k < 2:
            subprocess.run(["git", "-C", str(repo), "tag", f"v0.{k + 1}"], check=True)
    config = tmp_path / "regbench.toml"
    config.write_text(f'[project]\nname = "p"\nrepo = "{repo}"\n')

    def selected(text: str) -> list[str]:
        return [v for v in (s[:10] for s in shas) if f'<option value="{v}" selected>' in text]

    server = Server(tmp_path / "s.db", tmp_path / "serve.log", config=config)
    try:
        r = httpx.get(server.base + "compare.html?a=v0.2&b=HEAD")
        assert r.status_code == 200, r.text
        assert selected(r.text) == [shas[1][:10], shas[2][:10]]
        assert '<tr data-benchmark="slow" data-verdict="regression">' in r.text
        r = httpx.get(server.base + f"compare.html?a=main~2&b={shas[1][:7]}")
        assert r.status_code == 200 and selected(r.text) == [shas[0][:10], shas[1][:10]]
        commit_and_store(3)  # main moves on while the server runs
        r = httpx.get(server.base + "compare.html?a=v0.1&b=main")
        assert r.status_code == 200 and selected(r.text) == [shas[0][:10], shas[3][:10]]
        # `main` recorded on c1 (by a `regbench run` then) names where the branch is now
        from regbench.model import VersionAlias

        with Store(tmp_path / "s.db") as store:
            with store.engine.begin() as conn:
                store.set_aliases(conn, store.versions()[1].id, [VersionAlias("main", "branch")])
        r = httpx.get(server.base + "compare.html?a=main~1&b=main")
        assert r.status_code == 200 and selected(r.text) == [shas[2][:10], shas[3][:10]]
        # a revision without stored runs, and a name that is no revision: the command line's one line
        unstored = git_commit(repo, {"f.txt": "4"}, "c4", when=T0 + timedelta(hours=4))
        r = httpx.get(server.base + "compare.html?a=v0.1&b=HEAD")
        assert r.status_code == 404
        assert f"&#39;HEAD&#39; is commit {unstored[:10]}, which has no version in the store" in r.text
        r = httpx.get(server.base + "compare.html?a=v9.9&b=HEAD~1")
        assert r.status_code == 404 and "no version named &#39;v9.9&#39; in the store" in r.text
    finally:
        log = server.stop()
    assert "Traceback" not in log


def test_log_out_and_a_revoked_token_end_the_session(served, page):
    from regbench.store.tokens import revoke_token

    path, base, _ = served
    secret = _token(path, "carol", "triage")
    for leave in ("log out", "revoke"):
        page.goto(base + "login")
        page.fill("input[name=token]", secret if leave == "log out" else _token(path, "dave", "triage"))
        page.click("form.login button")
        page.wait_for_url("**/alerts.html")
        assert page.locator("form.triage").count() == 1
        if leave == "log out":
            page.click("nav form.inline button")
            page.wait_for_url("**/index.html")
        else:
            with Store(path, create=False) as store:
                revoke_token(store, "dave")
        page.goto(base + "alerts.html")
        assert page.locator("form.triage").count() == 0
        assert page.locator("nav a[href=login]").count() == 1
    assert page.console_log.errors == []


def test_the_diagnosis_plots_are_removed_when_the_server_stops(tmp_path):
    # Every `regbench serve` made a temporary directory for the diagnosis pages' plots at start and
    # left it behind at exit (hundreds of them in /tmp after a day of test runs).
    path = tmp_path / "s.db"
    synthetic_store(path).close()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    server = Server(path, tmp_path / "serve.log", env={"TMPDIR": str(scratch)})
    try:
        assert list(scratch.iterdir()) == []  # nothing made before a diagnosis page is asked for
        page = httpx.get(server.base + f"diagnosis-{benchmark_id('b0')}.html", timeout=60)
        assert page.status_code == 200
        made = [p for p in scratch.iterdir() if p.name.startswith("regbench-serve-")]
        assert len(made) == 1 and any(made[0].rglob("*.png"))
    finally:
        log = server.stop()
    assert list(scratch.iterdir()) == [], log


def test_the_alerts_page_and_api_show_every_machine_and_tell_notes_from_status_changes(tmp_path):
    """docs/realworld.md, a team's setup: the alerts page showed `checksum default · ci-a` for a
    change `alerts list` showed on ci-a and ci-b, and another machine's evidence of a fixed alert
    as `fixed by regbench ...: also seen on ci-b`, read as a status change."""
    import re
    from datetime import timedelta

    import numpy as np

    from regbench.detect.alerts import record_alerts
    from regbench.detect.base import Change
    from regbench.model import RunRecord, VersionInfo

    path = tmp_path / "s.db"
    rng = np.random.default_rng(2)
    with Store(path) as store:
        store.add_runs([RunRecord("checksum", sha(k), r, (3.0 if 3 <= k < 5 and m != "m3" else 1.0)
                                  * (1 + 0.005 * rng.standard_normal(10)), machine=m)
                        for m in ("m1", "m2", "m3") for k in range(7) for r in range(3)],
                       versions=[VersionInfo(name=sha(k), commit=sha(k), timestamp=T0 + timedelta(days=k))
                                 for k in range(7)])
        for changes in ([Change("checksum", "default", "m1", sha(3), sha(2), 2.0, 1.9, 2.1, "regression", "auto")],
                        [Change("checksum", "default", "m1", sha(5), sha(4), -0.66, -0.7, -0.6, "improvement", "auto")],
                        [Change("checksum", "default", "m2", sha(3), sha(2), 1.9, 1.8, 2.0, "regression", "auto")]):
            record_alerts(store, changes, now=T0)
    config = tmp_path / "regbench.toml"
    config.write_text("[serve]\npublic_reads = true\n")
    server = Server(path, tmp_path / "serve.log", config=config)
    try:
        page = httpx.get(server.base + "alerts.html").text
        api = httpx.get(server.base + "api/v1/alerts/1").json()
        listed = httpx.get(server.base + "api/v1/alerts").json()["alerts"]
    finally:
        server.stop()
    row = page[page.index('data-alert="1"'):]
    row = row[:row.index("</tr>")]
    for m in ("m1", "m2"):
        assert f'<a href="series.html?s={series_id("checksum", "default", m)}">{m}</a>' in row
    assert ">2 machines; measured without it on m3<" in row
    history = re.findall(r'<div class="(event|note muted)">(.*?)</div>', row)
    assert [(kind, text.split(",")[0]) for kind, text in history] == [
        ("event", "new by regbench"), ("note muted", "note by regbench"), ("event", "fixed by regbench"),
        ("note muted", "note by regbench")]
    assert "evidence from m2: +190.00%" in history[-1][1]
    assert (api["machines"], api["spread"], api["unchanged_on"]) == (["m1", "m2"], "several", ["m3"])
    assert [(e["status"], e["kind"]) for e in api["history"]] == [
        ("new", "status"), ("new", "note"), ("fixed", "status"), ("fixed", "note")]
    assert api["history"][-1]["why"].startswith("evidence from m2: ")
    assert [(a["id"], a["spread"]) for a in listed] == [(1, "several"), (2, "machine-specific")]
