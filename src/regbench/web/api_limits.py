"""Limits of the HTTP API: a token bucket per API token, and reading a body up to a size.

The rate limiter is written here rather than taken from a package: ``slowapi`` and ``limits``
count requests in fixed or moving windows (no token bucket: a burst after an idle minute is
refused at the window's edge), ``pyrate-limiter`` counts in buckets of windows too, and each
brings storage back-ends this one-process server does not need.  A token bucket (Turner, "New
directions in communications", 1986; RFC 2697's single-rate meter) is a refill by elapsed time
and a subtraction, under one lock, and it gives the exact wait for ``Retry-After``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from ..errors import RateLimitError, TooLargeError


@dataclass
class TokenBuckets:
    """One bucket per key (an API token's id): ``burst`` requests at once, refilled at ``rate`` a second.

    ``clock`` is injectable for tests (seconds, monotonic).
    """

    rate: float
    burst: int
    clock: Callable[[], float] = time.monotonic
    _level: dict[object, tuple[float, float]] = field(default_factory=dict)  # key -> (tokens, when)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: object, *, who: str) -> None:
        """Take one request from ``key``'s bucket.

        Raises
        ------
        RateLimitError
            The bucket is empty; ``retry_after`` is the seconds until it holds one request.
        """
        now = self.clock()
        with self._lock:
            tokens, when = self._level.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) * self.rate)
            if tokens < 1.0:
                self._level[key] = (tokens, now)
                wait = (1.0 - tokens) / self.rate
                raise RateLimitError(f"token {who!r} is over its rate limit ({self.rate:g} requests a second, "
                                     f"bursts of {self.burst}): retry in {math.ceil(wait)} s", retry_after=wait)
            self._level[key] = (tokens - 1.0, now)


async def read_body(chunks: AsyncIterator[bytes], *, declared: str | None, limit: int,
                    what: str = "[serve] max_body; split the submission") -> bytes:
    """The body of a request, refused as soon as it is over ``limit`` bytes (by its declared
    ``Content-Length`` before reading anything, else while it streams in); ``what``: where the
    limit comes from and what to do, for the message (a triage's fixed limit is not
    ``max_body``).

    Raises
    ------
    TooLargeError
        The body is over the limit.
    """
    message = f"the body is over the server's limit of {limit} bytes ({what})"
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLargeError(message)
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise TooLargeError(message)
        parts.append(chunk)
    return b"".join(parts)
