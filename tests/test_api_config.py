"""``[serve]`` of regbench.toml: the HTTP API's settings, each bad value one line naming the key."""

from __future__ import annotations

import pytest

from regbench.config import ServeSettings, parse_config
from regbench.errors import ConfigError


def test_serve_defaults_and_values():
    assert parse_config({}).serve == ServeSettings(public_reads=False, public_pages=True, max_body=64 * 1024 * 1024,
                                                   rate=20.0, burst=60)
    got = parse_config({"serve": {"public_reads": True, "public_pages": False, "max_body": 4096, "rate": 2,
                                  "burst": 5}}).serve
    assert got == ServeSettings(public_reads=True, public_pages=False, max_body=4096, rate=2.0, burst=5)


@pytest.mark.parametrize("table, message", [
    ({"public": True}, r"\[serve\]: unknown key `public` \(expected public_reads, public_pages, max_body, rate, "
                       r"burst, detect, notify\)"),
    ({"public_reads": "yes"}, r"\[serve\] `public_reads` must be true or false, got 'yes'"),
    ({"public_pages": 0}, r"\[serve\] `public_pages` must be true or false, got 0"),
    ({"max_body": 10}, r"\[serve\] `max_body` must be an integer number of bytes of at least 1024, got 10"),
    ({"max_body": True}, r"\[serve\] `max_body` must be an integer"),
    ({"rate": 0}, r"\[serve\] `rate` must be a positive number of requests a second, got 0"),
    ({"rate": float("nan")}, r"\[serve\] `rate` must be a positive number"),
    ({"burst": 0.5}, r"\[serve\] `burst` must be an integer of at least 1, got 0.5"),
])
def test_a_bad_serve_key_is_one_line_naming_it(table, message):
    with pytest.raises(ConfigError, match=r"^regbench.toml: " + message):
        parse_config({"serve": table})


def test_serve_must_be_a_table():
    with pytest.raises(ConfigError, match=r"\[serve\] must be a table"):
        parse_config({"serve": 3})


def test_a_token_bucket_refills_at_its_rate_and_says_how_long_to_wait():
    from regbench.errors import RateLimitError
    from regbench.web.api_limits import TokenBuckets

    now = [100.0]
    buckets = TokenBuckets(rate=2.0, burst=3, clock=lambda: now[0])
    for _ in range(3):
        buckets.take(1, who="ci")
    with pytest.raises(RateLimitError, match=r"token 'ci' is over its rate limit \(2 requests a second, bursts of 3\)") as err:
        buckets.take(1, who="ci")
    assert err.value.retry_after == pytest.approx(0.5)
    buckets.take(2, who="other")  # another token has its own bucket
    now[0] += 0.5
    buckets.take(1, who="ci")  # one request refilled in half a second
    with pytest.raises(RateLimitError):
        buckets.take(1, who="ci")
    now[0] += 60.0
    for _ in range(3):  # refilled to the burst, not beyond
        buckets.take(1, who="ci")
    with pytest.raises(RateLimitError):
        buckets.take(1, who="ci")
