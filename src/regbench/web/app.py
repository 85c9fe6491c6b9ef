"""``regbench serve``: the dashboard live over the store, as one Starlette (ASGI) app.

The pages and payloads are those of the static report (:mod:`regbench.web.pages`,
:class:`~regbench.web.data.Dashboard`), computed again when the store changes.  Reading needs no
credentials.  The HTTP API (:mod:`regbench.web.api`, a FastAPI app) is mounted at ``/api/v1``.
Writing (triage of alerts) needs an API token (:mod:`regbench.store.tokens`) with
the ``triage`` scope, sent either as ``Authorization: Bearer TOKEN`` (the JSON API,
``POST /api/alerts/ID``) or through the log-in form, which sets an HttpOnly, SameSite=Strict
session cookie.  Every form POST also carries a CSRF token that must equal the HttpOnly
``regbench_csrf`` cookie (a double-submit check, on top of SameSite=Strict).  Each triage is
recorded with the token's name as who, and the time, in the alert's history
(:func:`regbench.detect.alerts.set_status`).

Sessions and the CSRF check are written here rather than taken from Starlette's
``SessionMiddleware`` (a signed cookie holding the session) or a CSRF package: a session must end
when its token is revoked, which a self-contained signed cookie cannot do without a server-side
lookup anyway, and the double-submit check is a comparison of two strings.

Bad input is an error page of one sentence: a malformed query parameter is 400 naming it, an
unknown series or version 404 naming it, a missing or locked store 503 (and one log line).
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import re
import secrets
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..config import ProjectConfig, ServeSettings
from ..errors import AuthError, ForbiddenError, NotFoundError, RegbenchError, RequestError, StoreError, TooLargeError
from ..store import Store
from ..store.db import RevisionResolver
from ..store.tokens import ApiToken, authenticate, hash_secret, token_by_hash
from . import pages
from .after_submit import DetectAfterSubmit
from .api import STATUS, TRIAGE_BODY_LIMIT, TRIAGE_LIMIT_WHY, ApiContext, create_api, triage_body
from .api_limits import read_body
from .data import STATES, Dashboard, benchmark_id, js_payload, valid_id

log = logging.getLogger("regbench.web")

SESSION_COOKIE = "regbench_session"
CSRF_COOKIE = "regbench_csrf"
#: How long a page waits for a store another process is writing before it says it is locked.
PATIENCE = 5.0
_VERSION_TEXT = re.compile(r"^[\w.\-+/~^@]{1,200}$")


@dataclass
class Site:
    """The app's state: where the store is, the store once opened, the dashboard, the sessions."""

    location: str | None
    project: str = "regbench"
    url: str | None = None
    secure_cookies: bool = False
    revisions: RevisionResolver | None = None
    config: ProjectConfig | None = None
    store: Store | None = None
    dash: Dashboard | None = None
    sessions: dict[str, str] = field(default_factory=dict)  # session id -> SHA-256 of the token's secret
    plots_dir: Path | None = None
    diagnosed: dict[str, tuple[tuple, str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Its own lock: `plot` reads `plots` in the event loop, and `lock` is held while a store opens.
    plots_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def plots(self) -> Path:
        """Where the diagnosis pages' plots are drawn: a temporary directory, made at the first
        diagnosis page and removed when the server stops (:meth:`close`)."""
        with self.plots_lock:
            if self.plots_dir is None:
                self.plots_dir = Path(tempfile.mkdtemp(prefix="regbench-serve-"))
            return self.plots_dir

    def close(self) -> None:
        """Remove the plots and close the store (the server is stopping)."""
        with self.plots_lock:
            if self.plots_dir is not None:
                shutil.rmtree(self.plots_dir, ignore_errors=True)
                self.plots_dir = None
            self.diagnosed.clear()  # its pages link to the plots just removed
        with self.lock:
            if self.store is not None:
                self.store.close()
                self.store = self.dash = None

    def open_store(self) -> Store:
        """The store, opened on first use (and again after it failed)."""
        with self.lock:
            if self.store is None:
                self.store = Store(self.location, create=False, patience=PATIENCE, revisions=self.revisions)
                self.dash = Dashboard(self.store, project=self.project, url=self.url, config=self.config)
            return self.store

    def dashboard(self) -> Dashboard:
        """The dashboard, the store opened on first use (and again after it failed)."""
        self.open_store()
        assert self.dash is not None and self.store is not None
        try:
            return self.dash.load()
        except sa.exc.OperationalError as exc:  # locked past PATIENCE, or the file went away
            raise StoreError(f"cannot read the store {self.store.shown_url}: "
                             f"{self.store.driver_message(exc.orig)}") from exc


def _viewer(request: Request, user: ApiToken | None) -> pages.Viewer:
    return pages.Viewer(live=True, user=user.name if user else None, csrf=request.state.csrf, base=_base(request))


def _base(request: Request) -> str:
    """The app's root path (a proxy may mount it under a prefix), for the pages' ``<base href>``."""
    return request.scope.get("root_path", "").rstrip("/") + "/"


def _user(site: Site, request: Request) -> ApiToken | None:
    """The token of the request: its bearer token, else its session's (None when neither is live)."""
    store = site.store
    if store is None:
        return None
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return authenticate(store, auth[7:])
    digest = site.sessions.get(request.cookies.get(SESSION_COOKIE, ""))
    return None if digest is None else token_by_hash(store, digest)


def _check_csrf(request: Request, form) -> None:
    sent = str(form.get("csrf", ""))
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not sent or not cookie or not hmac.compare_digest(sent, cookie):
        raise ForbiddenError("the form's CSRF token is missing or wrong: reload the page and try again")


def _param(request: Request, name: str, pattern: re.Pattern | Callable[[str], bool], what: str,
           *, required: bool = True) -> str | None:
    value = request.query_params.get(name)
    if value is None or value == "":
        if required:
            raise RequestError(f"query parameter `{name}` is missing: give {what}")
        return None
    ok = pattern(value) if callable(pattern) else bool(pattern.match(value))
    if not ok:
        raise RequestError(f"query parameter `{name}` = {value[:60]!r} is not {what}")
    return value


def create_app(location: str | None, *, project: str = "regbench", url: str | None = None,
               secure_cookies: bool = False, settings: ServeSettings | None = None,
               revisions: RevisionResolver | None = None, config: ProjectConfig | None = None) -> Starlette:
    """The dashboard app over the store at ``location`` (a path or SQLAlchemy URL; None: the default).

    Parameters
    ----------
    location : str, optional
        The store; it is opened at the first request, so that a store that does not exist yet (or
        is locked) is an error page, not a server that does not start.
    project : str
        The project's name, for titles.
    url : str, optional
        The repository's web page (``[project] url``): commits are linked under it.
    secure_cookies : bool
        Mark cookies ``Secure`` (when served over HTTPS behind a proxy).
    settings : ServeSettings, optional
        ``[serve]`` of the configuration: the HTTP API's limits and whether its reads are public.
    revisions : RevisionResolver, optional
        How the pages turn a git revision (``v0.2``, ``HEAD~1``, a short sha) into a commit, as
        :meth:`Store.resolve_version` asks it: ``regbench serve`` gives the project's repository,
        as the command line does (:func:`regbench.run.versions.revision_resolver`).  Without it,
        versions are named by their stored names, tags and branches recorded, and prefixes.
    config : ProjectConfig, optional
        The project's configuration: the branch whose first-parent line is the history the
        pages show (:class:`~regbench.web.data.Dashboard`) and detection after each submission
        (``settings.detect``) reads, and the ``[[notify]]`` sinks.
    """
    site = Site(location, project=project, url=url, secure_cookies=secure_cookies, revisions=revisions, config=config)
    settings = settings or ServeSettings()
    after_submit = DetectAfterSubmit(site.open_store, config, notify=settings.notify) if settings.detect else None

    def page(handler: Callable[[Request, Dashboard, ApiToken | None], Response]):
        """A GET endpoint: the dashboard loaded in a worker thread; errors as pages."""

        async def endpoint(request: Request) -> Response:
            def work() -> Response:
                dash = site.dashboard()
                return handler(request, dash, reader(request))
            return await guarded(request, work)

        return endpoint

    def reader(request: Request) -> ApiToken | None:
        """The request's user; with ``[serve] public_pages = false``, one whose token may read, or
        an AuthError (a 401 page that links the log-in form)."""
        user = _user(site, request)
        if not settings.public_pages and (user is None or not user.allows("read")):
            raise AuthError("these pages need a log-in with a token that may read ([serve] public_pages = false): "
                            "log in with one, or send it as `Authorization: Bearer`")
        return user

    async def guarded(request: Request, work: Callable[[], Response]) -> Response:
        request.state.csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        try:
            response = await run_in_threadpool(work)
        except RegbenchError as exc:
            status = next((code for kind, code in STATUS if isinstance(exc, kind)), 400)
            if status >= 500:
                log.error("%s %s: %s", request.method, request.url.path, exc)
            response = _error(request, status, str(exc))
        if CSRF_COOKIE not in request.cookies:
            response.set_cookie(CSRF_COOKIE, request.state.csrf, httponly=True, samesite="strict",
                                secure=site.secure_cookies, path="/")
        return response

    def _error(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/") or request.url.path.startswith("/data/"):
            return JSONResponse({"error": message}, status_code=status)
        viewer = pages.Viewer(live=True, csrf=request.state.csrf, base=_base(request))
        return HTMLResponse(pages.error_page(viewer, status, message, site.dash), status_code=status)

    def html(text: str) -> Response:
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    @page
    def overview(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        _param(request, "state", lambda v: v in STATES, f"a state ({', '.join(STATES)})", required=False)
        return html(pages.overview_page(dash, _viewer(request, user)))

    @page
    def series(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        sid = _param(request, "s", valid_id, "a series id (12 hex digits, from the list of series)")
        assert sid is not None
        dash.get(sid)  # 404 naming it
        return html(pages.series_page(dash, _viewer(request, user), sid))

    @page
    def alerts(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        notice = request.query_params.get("done")
        notice = f"Alert #{notice} updated." if notice and notice.isdigit() else None
        return html(pages.alerts_page(dash, _viewer(request, user), notice=notice))

    @page
    def compare(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        a = _param(request, "a", _VERSION_TEXT, "a version name", required=False)
        b = _param(request, "b", _VERSION_TEXT, "a version name", required=False)
        if (a is None) != (b is None):
            raise RequestError(f"query parameter `{'b' if b is None else 'a'}` is missing: compare needs two versions")
        return html(pages.compare_page(dash, _viewer(request, user), a, b))

    @page
    def diagnosis(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        bid = request.path_params["bid"]
        names = {benchmark_id(s.benchmark): s.benchmark for s in dash.series}
        if bid not in names:
            raise NotFoundError(f"no benchmark with diagnosis id {bid!r} in the store")
        cached = site.diagnosed.get(bid)
        if cached is None or cached[0] != dash.fingerprint:
            text = pages.diagnosis_page(dash, _viewer(request, user), names[bid], site.plots / bid, f"diagnosis/{bid}/")
            site.diagnosed[bid] = (dash.fingerprint, text)
        return html(site.diagnosed[bid][1])

    async def plot(request: Request) -> Response:
        if not settings.public_pages:
            def check() -> Response:
                site.dashboard()
                reader(request)
                return Response(status_code=204)
            refused = await guarded(request, check)
            if refused.status_code != 204:
                return refused
        bid, name = request.path_params["bid"], request.path_params["name"]
        path = site.plots / bid / name
        if not re.match(r"^[0-9a-f]{12}$", bid) or "/" in name or not path.is_file():
            return PlainTextResponse(f"no plot {bid}/{name}", status_code=404)
        return FileResponse(path)

    @page
    def feed(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        return Response(pages.alerts_feed(dash, base_url=str(request.base_url)), media_type="application/atom+xml")

    @page
    def data(request: Request, dash: Dashboard, user: ApiToken | None) -> Response:
        name = request.path_params["name"]
        return Response(js_payload(name, dash.payload(name)), media_type="text/javascript",
                        headers={"Cache-Control": "no-store"})

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return await guarded(request, lambda: html(pages.login_page(site.dash, _viewer(request, None))))
        form = await request.form()

        def work() -> Response:
            _check_csrf(request, form)
            site.dashboard()  # the store is open
            assert site.store is not None
            token = authenticate(site.store, str(form.get("token", "")))
            if token is None:
                log.warning("failed log-in from %s", request.client.host if request.client else "?")
                return HTMLResponse(pages.login_page(site.dash, _viewer(request, None), "Unknown or revoked token."),
                                    status_code=401)
            sid = secrets.token_urlsafe(32)
            # The session keeps the token's hash, not the token: a revoked token ends its sessions.
            site.sessions[sid] = hash_secret(str(form.get("token", "")).strip())
            response = RedirectResponse("alerts.html", status_code=303)
            response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", secure=site.secure_cookies,
                                path="/")
            return response

        return await guarded(request, work)

    async def logout(request: Request) -> Response:
        form = await request.form()

        def work() -> Response:
            _check_csrf(request, form)
            site.sessions.pop(request.cookies.get(SESSION_COOKIE, ""), None)
            response = RedirectResponse("index.html", status_code=303)
            response.delete_cookie(SESSION_COOKIE, path="/")
            return response

        return await guarded(request, work)

    def triager(request: Request) -> ApiToken:
        """The request's token, which may triage (its session's or its bearer token)."""
        site.dashboard()
        user = _user(site, request)
        if user is None:
            raise AuthError("triage needs an API token: log in, or send `Authorization: Bearer TOKEN`")
        if not user.allows("triage"):
            raise ForbiddenError(f"token {user.name!r} has no `triage` scope")
        return user

    def triage(user: ApiToken, alert_id: str, status: str, reason: str) -> None:
        from ..detect.alerts import set_status

        if not alert_id.isdigit():
            raise RequestError(f"alert id {alert_id[:40]!r} is not a number")
        if not reason.strip():
            raise RequestError("form field `reason` is missing: say why")
        assert site.store is not None
        set_status(site.store, [int(alert_id)], status, who=user.name, why=reason.strip())
        log.info("alert #%s set to %s by token %r", alert_id, status, user.name)

    async def triage_form(request: Request) -> Response:
        form = await request.form()

        def work() -> Response:
            if "authorization" not in request.headers:
                _check_csrf(request, form)
            aid = request.path_params["alert_id"]
            triage(triager(request), aid, str(form.get("status", "")), str(form.get("reason", "")))
            return RedirectResponse(f"{_base(request)}alerts.html?done={aid}", status_code=303)

        return await guarded(request, work)

    async def triage_api(request: Request) -> Response:
        # The body of POST /api/v1/alerts/ID, read and judged as that endpoint does (a body that is
        # not a JSON object is 422, a field 400), after the token is.
        raw, too_large = b"", None
        try:
            raw = await read_body(request.stream(), declared=request.headers.get("content-length"),
                                  limit=TRIAGE_BODY_LIMIT, what=TRIAGE_LIMIT_WHY)
        except TooLargeError as exc:
            too_large = exc

        def work() -> Response:
            if not request.headers.get("authorization", "").lower().startswith("bearer "):
                raise AuthError("the API needs `Authorization: Bearer TOKEN`")
            user = triager(request)
            if too_large is not None:
                raise too_large
            status, reason = triage_body(raw)
            aid = request.path_params["alert_id"]
            triage(user, aid, status, reason)
            return JSONResponse({"alert": int(aid), "status": status, "who": user.name})

        return await guarded(request, work)

    static = Path(__file__).parent / "static"
    routes = [
        Route("/", overview), Route("/index.html", overview), Route("/series.html", series),
        Route("/alerts.html", alerts), Route("/compare.html", compare), Route("/alerts.atom", feed),
        Route("/diagnosis-{bid}.html", diagnosis), Route("/diagnosis/{bid}/{name}", plot),
        Route("/data/{name:path}.js", data),
        Route("/login", login, methods=["GET", "POST"]), Route("/logout", logout, methods=["POST"]),
        Route("/alerts/{alert_id}/triage", triage_form, methods=["POST"]),
        Route("/api/alerts/{alert_id}", triage_api, methods=["POST"]),
        Mount("/api/v1", create_api(ApiContext(site.open_store, site.dashboard, settings, after_submit))),
        Mount("/static", StaticFiles(directory=static), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        request.state.csrf = request.cookies.get(CSRF_COOKIE, "")
        return _error(request, 404, f"no page {request.url.path}")

    async def failed(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path)
        request.state.csrf = request.cookies.get(CSRF_COOKIE, "")
        return _error(request, 500, "internal error: the server log has the details")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:  # every server made a directory of plots per start, and left it behind
            if after_submit is not None:  # off the event loop: a pass may take seconds to end
                await run_in_threadpool(after_submit.close)
            site.close()

    app = Starlette(routes=routes, exception_handlers={404: not_found, Exception: failed}, lifespan=lifespan)
    app.state.site = site
    app.state.after_submit = after_submit
    return app

