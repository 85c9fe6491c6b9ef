"""The client of the HTTP API's submissions (``regbench push``): an idempotent upload with retries.

See :mod:`regbench.cli.cmd_push` for the command and docs/api.md for the protocol.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError, RequestError

#: The longest wait between two tries, in seconds (a larger ``Retry-After`` is cut to it).
MAX_WAIT = 60.0


@dataclass(frozen=True)
class PushRequest:
    """Where to send a file and what it is."""

    server: str
    fmt: str
    machine: str
    version: str | None = None
    config: str = "default"


@dataclass(frozen=True)
class PushResult:
    """The server's answer: what it stored, or had stored for the same submission (``replayed``);
    of a new submission, the runs it already had (``skipped``) and the runs it stored after those
    it had of the same experiment (``remeasured``; both 0 from a server that does not say)."""

    submission_id: str
    runs: int
    samples: int
    replayed: bool
    attempts: int
    skipped: int = 0
    remeasured: int = 0
    #: Whether the server checks the submission's versions now (``[serve] detect = true``).
    detecting: bool = False


def read_token(*, env: str | None, path: str | None) -> str:
    """The API token, from the environment variable ``env`` or the first line of the file ``path``.

    Raises
    ------
    ConfigError
        Neither or both given, the variable unset or empty, the file unreadable or empty.
    """
    if (env is None) == (path is None):
        raise ConfigError("give the API token with one of --token-env VAR or --token-file PATH")
    if env is not None:
        token = os.environ.get(env, "").strip()
        if not token:
            raise ConfigError(f"--token-env: the environment variable {env} is not set or empty")
        return _checked_token(token, f"--token-env: the environment variable {env}")
    assert path is not None
    try:
        lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--token-file: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not lines or not lines[0].strip():
        raise ConfigError(f"--token-file: {path} is empty")
    return _checked_token(lines[0].strip(), f"--token-file: the first line of {path}")


def _checked_token(token: str, where: str) -> str:
    """``token`` when it can go in an HTTP header; else a ConfigError saying where it came from,
    never the token itself (it would end in a CI log).  A probe: a token with a non-ASCII letter
    was a traceback, and one with a newline was printed six times in "cannot reach" retries."""
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise ConfigError(f"{where} is no API token: it holds a space, a line break, a control or a non-ASCII "
                          "character (a token is printable ASCII without spaces; `regbench token create` "
                          "prints one)")
    return token


def submission_id(request: PushRequest, body: bytes) -> str:
    """The id of a push: the SHA-256 of what it sends, so the same push has the same id."""
    h = hashlib.sha256()
    for part in (request.fmt, request.version or "", request.machine, request.config):
        h.update(part.encode() + b"\0")
    h.update(body)
    return "push-" + h.hexdigest()[:48]


def push(request: PushRequest, body: bytes, *, token: str, attempts: int = 6, timeout: float = 120.0,
         on_retry: Callable[[str, float], None] | None = None,
         sleep: Callable[[float], None] = time.sleep) -> PushResult:
    """Send ``body`` to ``POST {server}/api/v1/runs`` until it is stored, refused, or ``attempts`` are spent.

    Parameters
    ----------
    request : PushRequest
        The server and what the file is.
    body : bytes
        The file.
    token : str
        An API token with the ``submit`` scope.
    attempts : int
        Tries at most: connection errors, 5xx and 429 answers are tried again after 1, 2, 4, ... s
        (at most :data:`MAX_WAIT`), or after the answer's ``Retry-After``.
    on_retry : callable, optional
        Told ``(why, seconds)`` before each wait.

    Raises
    ------
    RequestError
        The server refused the submission (4xx but 429: its message, one line), or every try failed.
    """
    import httpx

    url = request.server.rstrip("/") + "/api/v1/runs"
    params = {"format": request.fmt, "machine": request.machine, "config": request.config,
              "submission": submission_id(request, body)}
    if request.version:
        params["version"] = request.version
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"}
    why = ""
    with httpx.Client(timeout=timeout) as client:
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            try:
                answer = client.post(url, params=params, content=body, headers=headers)
            except httpx.TransportError as exc:
                why = f"cannot reach {request.server}: {type(exc).__name__}: {exc}".rstrip(": ")
            else:
                if answer.status_code in (200, 201):
                    data = answer.json()
                    return PushResult(data["submission"], int(data["runs"]), int(data["samples"]),
                                      bool(data["replayed"]), attempt, int(data.get("skipped") or 0),
                                      int(data.get("remeasured") or 0), data.get("detection") == "scheduled")
                message = _message(answer)
                if answer.status_code != 429 and answer.status_code < 500:
                    raise RequestError(f"the server refused the push ({answer.status_code}): {message}")
                why = f"the server answered {answer.status_code}: {message}"
                retry_after = _retry_after(answer.headers.get("retry-after"))
            if attempt == attempts:
                break
            wait = min(MAX_WAIT, retry_after if retry_after is not None else 2.0 ** (attempt - 1))
            if on_retry is not None:
                on_retry(why, wait)
            sleep(wait)
    raise RequestError(f"gave up after {attempts} tries: {why}")


def _message(answer) -> str:
    try:
        data = answer.json()
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return " ".join(answer.text.split())[:200] or answer.reason_phrase


def _retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (its date form is not used by regbench's server)."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
