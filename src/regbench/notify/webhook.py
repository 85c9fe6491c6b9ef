"""The webhook sink: one HTTP POST per alert, with a Slack-compatible JSON payload.

Payload: ``{"text": headline, "blocks": [...], "regbench": {"format_version": 1, "sink": name,
"idempotency_key": key, "alert": {...}}}``: Slack incoming webhooks (and Mattermost, Teams'
Slack-compatible connectors) show ``text``/``blocks``; other receivers read ``regbench``.  The
alert's key is also sent as the ``Idempotency-Key`` and ``X-Regbench-Alert`` headers: the same
alert always carries the same key, so a receiver can drop the duplicate that a retry after a
lost response (or a notify killed between sending and recording) may cause.

A POST is tried ``retries + 1`` times with exponential backoff (``backoff(attempt)`` seconds,
``sleep`` injectable for tests) on connection errors, timeouts, HTTP 408, 429 and 5xx; any other
HTTP status fails at once.  Error messages name only the scheme, host and port of the URL:
webhook URLs usually hold a secret in their path.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from datetime import datetime

from .. import __version__
from ..model import Alert
from .base import FORMAT_VERSION, Sink, SinkError, details, headline, register

RETRYABLE_STATUS = frozenset({408, 429})


def default_backoff(attempt: int) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based): 0.5, 1, 2, 4, then 8 at most."""
    return min(0.5 * 2**attempt, 8.0)


def payload(a: Alert, *, sink: str) -> dict:
    colour = {"regression": ":red_circle:", "failure": ":x:"}.get(a.kind, ":large_green_circle:")
    body = f"{colour} *{a.kind}* {headline(a)[len(a.kind) + 1:]}"
    return {
        "text": f"regbench: {headline(a)}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": body}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(details(a))}]},
        ],
        "regbench": {"format_version": FORMAT_VERSION, "sink": sink, "idempotency_key": a.uid,
                     "alert": a.to_json()},
    }


@register
class WebhookSink(Sink):
    type = "webhook"
    per_alert = True

    def __init__(self, name: str | None = None, *, url: str | None = None, url_env: str | None = None,
                 timeout: float = 10.0, retries: int = 3, headers: dict[str, str] | None = None,
                 backoff: Callable[[int], float] = default_backoff,
                 sleep: Callable[[float], None] = time.sleep, **kw):
        super().__init__(name, **kw)
        if (url is None) == (url_env is None):
            raise ValueError("give exactly one of `url` or `url_env`")
        if timeout <= 0:
            raise ValueError("`timeout` must be positive")
        if retries < 0:
            raise ValueError("`retries` must be non-negative")
        self.url, self.url_env = url, url_env
        self.timeout, self.retries = float(timeout), int(retries)
        self.headers = dict(headers or {})
        self.backoff, self.sleep = backoff, sleep

    def _url(self) -> str:
        if self.url is not None:
            return self.url
        url = os.environ.get(self.url_env or "", "")
        if not url:
            raise SinkError(f"environment variable {self.url_env} (the webhook URL) is not set")
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise SinkError(f"environment variable {self.url_env} is not an http(s) URL")
        return url

    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        for a in alerts:
            self._post(a)

    def _post(self, a: Alert) -> None:
        url = self._url()
        parts = urllib.parse.urlsplit(url)
        where = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"  # never the path (a secret)
        data = json.dumps(payload(a, sink=self.name), allow_nan=False).encode("utf-8")
        headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": f"regbench/{__version__}",
                   "Idempotency-Key": a.uid, "X-Regbench-Alert": a.uid, **self.headers}
        attempts = self.retries + 1
        for attempt in range(attempts):
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    response.read()
                    return  # urlopen raises HTTPError for every status >= 400; 1xx-3xx end here
            except urllib.error.HTTPError as exc:
                exc.close()
                retryable = exc.code >= 500 or exc.code in RETRYABLE_STATUS
                problem = f"HTTP {exc.code} {exc.reason}"
            except urllib.error.URLError as exc:
                retryable, problem = True, f"{getattr(exc.reason, 'strerror', None) or exc.reason}"
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                retryable = True
                problem = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            if not retryable or attempt == attempts - 1:
                raise SinkError(f"POST {where} failed: {' '.join(str(problem).split())} "
                                f"(attempt {attempt + 1} of {attempts})")
            self.sleep(self.backoff(attempt))
