"""The HTTP API of ``regbench serve``, version 1: a FastAPI application mounted at ``/api/v1``.

FastAPI is used for this part (the dashboard's pages stay plain Starlette) because it derives the
OpenAPI schema (``/api/v1/openapi.json``) and the validation of query parameters from one
declaration per endpoint, so the schema cannot drift from what the server accepts; Starlette's
``SchemaGenerator`` would need the schema written by hand in every docstring.

Every endpoint answers errors as ``{"error": "one sentence"}`` with a 4xx status (503 when the
store is missing or locked): a malformed parameter 400 naming it, no token 401, a token without
the scope 403 naming it, an unknown thing 404, a reused submission id 409, a body over the limit
413, a malformed body 422 naming its line, a token over its rate limit 429 with ``Retry-After``.

Authorization (docs/api.md): reads need a token with the ``read`` scope unless ``[serve]
public_reads = true``; submitting needs ``submit`` (and a token bound to a machine submits as
that machine only), triage ``triage``, the list of tokens ``admin``; ``admin`` has every scope.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..config import ServeSettings
from ..errors import (AlertError, AuthError, ConfigError, ConflictError, ForbiddenError, InputError, NotFoundError,
                      RateLimitError, RegbenchError, RequestError, StoreError, TooLargeError)
from ..model import ALERT_KINDS, ALERT_STATUSES, TRIAGE_STATUSES
from ..store import Store
from ..store.tokens import ApiToken, authenticate, list_tokens
from .api_limits import TokenBuckets, read_body
from .after_submit import DetectAfterSubmit
from .api_submit import SubmitRequest, check_request, submit, submit_formats
from .data import STATES, Dashboard

log = logging.getLogger("regbench.web.api")

#: The HTTP status of each error, the first that matches (a subclass before its parent).
STATUS = ((ConflictError, 409), (TooLargeError, 413), (RateLimitError, 429), (InputError, 422),
          (RequestError, 400), (ConfigError, 400), (ForbiddenError, 403), (AuthError, 401), (NotFoundError, 404),
          (AlertError, 409), (StoreError, 503))
_NAME = r"^[\w.\-+/~^@:]{1,200}$"
_SERIES_ID = r"^[0-9a-f]{12}$"
_BEARER = HTTPBearer(auto_error=False, description="An API token (`regbench token create`).")
#: The request's bearer credentials, declared so for the schema (checked by ``user`` below).
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]


@dataclass(frozen=True)
class ApiContext:
    """What the API needs of the app around it: the store and the dashboard, opened on first use."""

    store: Callable[[], Store]
    dashboard: Callable[[], Dashboard]
    settings: ServeSettings
    #: Detection after each submission (``[serve] detect = true``); None when it is off.
    after_submit: DetectAfterSubmit | None = None


def create_api(ctx: ApiContext) -> FastAPI:
    """The API application (mount it at ``/api/v1``)."""
    api = FastAPI(title="regbench", version="1", openapi_url="/openapi.json", docs_url=None, redoc_url=None,
                  description="Submit benchmark runs, read series, changes and alerts, triage alerts. "
                              "See docs/api.md.")
    buckets = TokenBuckets(rate=ctx.settings.rate, burst=ctx.settings.burst)

    @api.exception_handler(RegbenchError)
    async def regbench_error(request: Request, exc: Exception) -> JSONResponse:
        status = next((code for kind, code in STATUS if isinstance(exc, kind)), 400)
        if status >= 500:
            log.error("%s %s: %s", request.method, request.url.path, exc)
        headers = {}
        if isinstance(exc, RateLimitError):
            headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
        if isinstance(exc, AuthError) and not isinstance(exc, ForbiddenError):
            headers["WWW-Authenticate"] = "Bearer"
        return JSONResponse({"error": str(exc)}, status_code=status, headers=headers)

    @api.exception_handler(StarletteHTTPException)
    async def routing(request: Request, exc: Exception) -> JSONResponse:
        # An unknown path or method under /api/v1 (a client given the API's URL as the server's,
        # a DELETE): the same `{"error": ...}` as every other error, not FastAPI's `{"detail": ...}`.
        assert isinstance(exc, StarletteHTTPException)
        where = f"{request.method} {request.url.path}"
        if exc.status_code == 404:
            message = f"no endpoint {where} (the endpoints are listed in /api/v1/openapi.json)"
        elif exc.status_code == 405:
            message = f"{where} is not allowed (the endpoints are listed in /api/v1/openapi.json)"
        else:
            message = str(exc.detail)
        return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {}
        where = first.get("loc", ())
        kind = {"query": "query parameter", "path": "path parameter", "body": "body", "header": "header"}.get(
            str(where[0]) if where else "", "parameter")
        name = ".".join(str(p) for p in where[1:]) or "?"
        return JSONResponse({"error": f"{kind} `{name}`: {first.get('msg', 'is invalid')}"}, status_code=400)

    def user(request: Request, credentials: HTTPAuthorizationCredentials | None) -> ApiToken | None:
        """The request's token (None without one); an unknown one is 401, one over its rate 429."""
        if credentials is None:
            if request.headers.get("authorization"):
                raise AuthError("the API needs `Authorization: Bearer TOKEN`")
            return None
        token = authenticate(ctx.store(), credentials.credentials)
        if token is None:
            raise AuthError("unknown or revoked API token")
        buckets.take(token.id, who=token.name)
        return token

    def needs(scope: str, token: ApiToken | None) -> ApiToken:
        if token is None:
            raise AuthError(f"this needs an API token with the `{scope}` scope: send `Authorization: Bearer TOKEN`")
        if not token.allows(scope):
            raise ForbiddenError(f"token {token.name!r} has no `{scope}` scope (it has: {' '.join(token.scopes)})")
        return token

    def reader(request: Request, credentials: Credentials) -> None:
        token = user(request, credentials)
        if not ctx.settings.public_reads:
            needs("read", token)

    Read = Depends(reader)

    # ------------------------------------------------------------------------------- reads
    @api.get("/benchmarks", dependencies=[Read], summary="The benchmarks, with their units and directions")
    def benchmarks(name: Annotated[str | None, Query(pattern=_NAME, max_length=200)] = None) -> dict[str, Any]:
        dash = ctx.dashboard()
        seen: dict[str, dict] = {}
        for s in dash.series:
            if name is None or s.benchmark == name:
                one = seen.setdefault(s.benchmark, {"name": s.benchmark, "unit": s.unit, "direction": s.direction,
                                                    "series": []})
                one["series"].append(s.id)
        return {"benchmarks": list(seen.values())}

    @api.get("/series", dependencies=[Read], summary="The series (benchmark x configuration x machine)")
    def series(benchmark: Annotated[str | None, Query(pattern=_NAME, max_length=200)] = None,
               config: Annotated[str | None, Query(pattern=_NAME, max_length=200)] = None,
               machine: Annotated[str | None, Query(pattern=_NAME, max_length=200)] = None,
               state: Annotated[str | None, Query(pattern="^(" + "|".join(STATES) + ")$")] = None) -> dict[str, Any]:
        dash = ctx.dashboard()
        found = [s for s in dash.series if (benchmark is None or s.benchmark == benchmark)
                 and (config is None or s.config == config) and (machine is None or s.machine == machine)
                 and (state is None or s.state == state)]
        return {"series": [{"id": s.id, "benchmark": s.benchmark, "config": s.config, "machine": s.machine,
                            "unit": s.unit, "direction": s.direction, "state": s.state, "versions": len(s.versions)}
                           for s in found]}

    @api.get("/series/{series_id}", dependencies=[Read],
             summary="One series: its estimate per version (mean of run means, 95% interval) and its changes")
    def one_series(series_id: Annotated[str, Path(pattern=_SERIES_ID)]) -> dict[str, Any]:
        return ctx.dashboard().series_payload(series_id)

    @api.get("/alerts", dependencies=[Read], summary="The alerts (the changes, and the benchmarks that start failing, people are told about)")
    def alerts(status: Annotated[str | None, Query(pattern="^(" + "|".join(ALERT_STATUSES) + ")$")] = None,
               kind: Annotated[str | None, Query(pattern="^(" + "|".join(ALERT_KINDS) + ")$")] = None,
               benchmark: Annotated[str | None, Query(pattern=_NAME, max_length=200)] = None,
               machine: Annotated[str | None, Query(pattern=_NAME, max_length=200)] = None) -> dict[str, Any]:
        from ..store.alerts import list_alerts

        found = list_alerts(ctx.store(), status=status, benchmark=benchmark)
        return {"alerts": [_alert(a) for a in found if (kind is None or a.kind == kind)
                           and (machine is None or machine in a.machines)]}

    @api.get("/alerts/{alert_id}", dependencies=[Read], summary="One alert, with its history")
    def one_alert(alert_id: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
        from ..store.alerts import alert_history, get_alert

        store = ctx.store()
        found = _alert(get_alert(store, alert_id))
        found["history"] = [{"status": e.status, "kind": e.kind, "who": e.who, "why": e.why,
                             "at": e.at.isoformat()}
                            for e in alert_history(store, alert_id)]
        return found

    # ------------------------------------------------------------------------------- writes
    @api.post("/alerts/{alert_id}", summary="Triage an alert: set its status, saying why",
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                  "type": "object", "required": ["status", "reason"],
                  "properties": {"status": {"type": "string", "enum": list(TRIAGE_STATUSES)},
                                 "reason": {"type": "string", "minLength": 1}}}}}}})
    async def triage(request: Request, alert_id: Annotated[int, Path(ge=1, le=2**62)],
                     credentials: Credentials) -> dict[str, Any]:
        token = await run_in_threadpool(lambda: needs("triage", user(request, credentials)))
        raw = await read_body(request.stream(), declared=request.headers.get("content-length"),
                              limit=TRIAGE_BODY_LIMIT, what=TRIAGE_LIMIT_WHY)
        return await run_in_threadpool(lambda: triage_alert(ctx.store(), alert_id, raw, token))

    @api.post("/runs", status_code=201, summary="Submit runs (a harness's result file), once per submission id",
              responses={200: {"description": "A retry of a submission already stored: nothing stored again"}},
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
    async def runs(request: Request, credentials: Credentials,
                   format: Annotated[str, Query(description="The file's format: jsonl, csv or a harness's "
                                                            "(`regbench import --format`)", max_length=40)],
                   machine: Annotated[str, Query(max_length=200)],
                   submission: Annotated[str, Query(description="The client's id of this submission "
                                                                "(8-128 of A-Z a-z 0-9 . _ : -)", max_length=128)],
                   version: Annotated[str | None, Query(max_length=200)] = None,
                   config: Annotated[str, Query(max_length=200)] = "default") -> JSONResponse:
        wanted = SubmitRequest(submission, format, machine, version, config)

        def authorize() -> ApiToken:
            token = needs("submit", user(request, credentials))
            check_request(wanted, bound_machine=token.machine, token_name=token.name)
            return token

        token = await run_in_threadpool(authorize)
        body = await read_body(request.stream(), declared=request.headers.get("content-length"),
                               limit=ctx.settings.max_body)
        result = await run_in_threadpool(lambda: submit(ctx.store(), wanted, body, token_id=token.id))
        if not result.replayed:
            log.info("submission %r by token %r: %d runs", result.submission_id, token.name, result.runs)
        answer = {"submission": result.submission_id, "runs": result.runs, "samples": result.samples,
                  "replayed": result.replayed}
        if not result.replayed:  # a replay is answered from the submission's record, which has no such counts
            answer |= {"skipped": result.skipped, "remeasured": result.remeasured}
        if ctx.after_submit is not None and not result.replayed and result.runs:
            ctx.after_submit.schedule()
            answer["detection"] = "scheduled"
        return JSONResponse(answer, status_code=200 if result.replayed else 201)

    @api.get("/detection", dependencies=[Read],
             summary="Detection after submissions ([serve] detect): whether it is on, and its last pass")
    async def detection(wait: Annotated[float, Query(ge=0, le=600, description=(
            "Seconds to wait at most for the passes that run or wait to end (a CI job that pushed "
            "and wants the verdict)"))] = 0) -> dict[str, Any]:
        if ctx.after_submit is None:
            return {"enabled": False}
        idle = await ctx.after_submit.wait_idle_async(wait) if wait else None
        return ctx.after_submit.status() | ({"idle": idle} if idle is not None else {})

    @api.get("/formats", dependencies=[Read], summary="The formats a submission may have")
    def formats() -> dict[str, Any]:
        return {"formats": submit_formats()}

    @api.get("/tokens", summary="The API tokens (never their secrets); needs `admin`")
    def tokens(request: Request, credentials: Credentials) -> dict[str, Any]:
        needs("admin", user(request, credentials))
        return {"tokens": [{"id": k.id, "name": k.name, "scopes": list(k.scopes), "machine": k.machine,
                            "created_at": k.created_at.isoformat(),
                            "revoked_at": k.revoked_at.isoformat() if k.revoked_at else None}
                           for k in list_tokens(ctx.store())]}

    return api


def triage_alert(store: Store, alert_id: int, raw: bytes, token: ApiToken) -> dict[str, Any]:
    """Set an alert's status from a JSON body ``{"status": ..., "reason": ...}`` as ``token``."""
    from ..detect.alerts import set_status

    status, reason = triage_body(raw)
    set_status(store, [alert_id], status, who=token.name, why=reason)
    log.info("alert #%s set to %s by token %r", alert_id, status, token.name)
    return {"alert": alert_id, "status": status, "who": token.name}


#: The body a triage takes, as its errors show it.
TRIAGE_BODY = '{"status": ..., "reason": ...}'
#: Bytes of a triage body at most (a status and a sentence).
TRIAGE_BODY_LIMIT = 65536
#: What a triage body over :data:`TRIAGE_BODY_LIMIT` is told (the limit is not ``[serve] max_body``).
TRIAGE_LIMIT_WHY = "a triage body is a status and a reason; shorten the reason"


def _json_kind(value: object) -> str:
    """What a JSON value is, in words (``an array``)."""
    return ("true or false" if isinstance(value, bool) else "a number" if isinstance(value, int | float)
            else "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else "text")


def triage_body(raw: bytes) -> tuple[str, str]:
    """The status and the reason (stripped) of a triage's JSON body ``{"status": ..., "reason": ...}``.

    Raises
    ------
    InputError
        The body is not JSON, or not a JSON object: a malformed body (HTTP 422), with its line
        (``body:1: not JSON: Expecting value``), as a malformed submission is.
    RequestError
        A field is missing or wrong (HTTP 400, naming it).
    """
    import json

    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}; send {TRIAGE_BODY}", path="body", line=exc.lineno) from None
    except (ValueError, RecursionError):  # not UTF-8 (nor UTF-16 or 32) text, or nested too deep
        raise InputError(f"not JSON; send {TRIAGE_BODY}", path="body") from None
    if not isinstance(body, dict):
        raise InputError(f"not a JSON object; send {TRIAGE_BODY}", path="body")
    status, reason = body.get("status"), body.get("reason")
    if not isinstance(status, str) or status not in TRIAGE_STATUSES:
        raise RequestError(f"body field `status` must be one of {', '.join(TRIAGE_STATUSES)}")
    if reason is not None and not isinstance(reason, str):
        raise RequestError(f"body field `reason` must be text, not {_json_kind(reason)}: say why")
    if not isinstance(reason, str) or not reason.strip():
        raise RequestError("body field `reason` is missing: say why")
    return status, reason.strip()


def _alert(a) -> dict[str, Any]:
    return {"id": a.id, "benchmark": a.benchmark, "config": a.config, "machine": a.machine,
            "machines": list(a.machines), "spread": a.spread, "unchanged_on": list(a.unchanged_on), "unit": a.unit, "direction": a.direction, "version": a.version,
            "previous": a.previous, "kind": a.kind, "change": _finite(a.change), "ci_low": _finite(a.ci_low),
            "ci_high": _finite(a.ci_high), "p_value": _finite(a.p_value), "methods": list(a.methods),
            "status": a.status, "fixed_by": a.fixed_by, "created_at": a.created_at.isoformat(),
            "updated_at": a.updated_at.isoformat(), "error": a.error, "culprit": a.culprit, "bisection": a.bisection,
            # only for a creep (as the detection JSON and `alerts list --format json`)
            **({"until": a.until} if a.until is not None else {})}


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None
