"""``regbench push`` end to end against a real ``regbench serve``: token from the environment and
from a file, a re-run stored once, retries after a refused connection and after a 429, one-line
errors for 4xx."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from apitools import GOLDEN_PYPERF, count, start, tokens
from webtools import Server, free_port, synthetic_store


def push(base: str, *args: str, env: dict[str, str] | None = None, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "regbench", "push", "--server", base, "--format", "pyperf",
                           *args, str(GOLDEN_PYPERF)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, **popen)


@pytest.fixture
def served(tmp_path):
    path = tmp_path / "s.db"
    synthetic_store(path, benchmarks=1).close()
    keys = tokens(path, ci=("submit", "ci-box"), reader=("read", None))
    server = start(path, tmp_path, rate=100, burst=100)
    yield path, server.base, keys
    server.stop()


def test_push_with_the_token_from_the_environment_is_stored_once(served):
    path, base, keys = served
    runs = count(path, "run")
    done = push(base, "--token-env", "CI_TOKEN", "--version", "abc123", "--machine", "ci-box",
                env={"CI_TOKEN": keys["ci"]})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stored 4 runs (16 samples) as submission push-")
    again = push(base, "--token-env", "CI_TOKEN", "--version", "abc123", "--machine", "ci-box",
                 env={"CI_TOKEN": keys["ci"]})
    assert again.returncode == 0 and again.stdout.startswith("already stored: submission push-")
    assert count(path, "run") == runs + 4 and count(path, "submission") == 1


def test_push_with_the_token_from_a_file(served, tmp_path):
    path, base, keys = served
    secret = tmp_path / "token"
    secret.write_text(keys["ci"] + "\n")
    done = push(base, "--token-file", str(secret), "--version", "def456", "--machine", "ci-box")
    assert done.returncode == 0, done.stderr
    assert count(path, "submission") == 1


def test_push_refused_is_one_line_and_stores_nothing(served, tmp_path):
    path, base, keys = served
    runs = count(path, "run")
    other = push(base, "--token-env", "CI_TOKEN", "--version", "v", "--machine", "elsewhere",
                 env={"CI_TOKEN": keys["ci"]})
    assert other.returncode == 3
    assert other.stderr == ("error: the server refused the push (403): token 'ci' is bound to machine 'ci-box' "
                            "and cannot submit as machine 'elsewhere'\n")
    reader = push(base, "--token-env", "CI_TOKEN", "--version", "v", env={"CI_TOKEN": keys["reader"]})
    assert reader.returncode == 3 and "has no `submit` scope" in reader.stderr
    unset = push(base, "--token-env", "NO_SUCH_VARIABLE_HERE", "--version", "v")
    assert unset.returncode == 3
    assert unset.stderr == "error: --token-env: the environment variable NO_SUCH_VARIABLE_HERE is not set or empty\n"
    both = push(base, "--version", "v")
    assert both.returncode == 2 and "one of --token-env VAR or --token-file PATH" in both.stderr  # usage
    assert count(path, "run") == runs


def test_push_retries_until_the_server_is_up(tmp_path):
    path = tmp_path / "s.db"
    synthetic_store(path, benchmarks=1).close()
    keys = tokens(path, ci=("submit", None))
    port = free_port()
    log = tmp_path / "push.err"
    with open(log, "w") as err:
        client = subprocess.Popen([sys.executable, "-m", "regbench", "push", "--server", f"http://127.0.0.1:{port}",
                                   "--token-env", "CI_TOKEN", "--format", "pyperf", "--version", "v9",
                                   "--attempts", "8", str(GOLDEN_PYPERF)],
                                  stdout=subprocess.PIPE, stderr=err, text=True, env={**os.environ, "CI_TOKEN": keys["ci"]})
    deadline = time.monotonic() + 60
    while "retrying in" not in log.read_text():  # the first try was refused: now start the server
        assert client.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)  # polling a file another process writes: nothing else to wait on
    server = Server(path, tmp_path / "serve.log", port=port)
    try:
        out, _ = client.communicate(timeout=90)
        assert client.returncode == 0, log.read_text()
        assert out.startswith("stored 4 runs")
        assert "cannot reach" in log.read_text()
        assert count(path, "submission") == 1
    finally:
        server.stop()


def test_push_honours_retry_after_of_a_429(tmp_path):
    path = tmp_path / "s.db"
    synthetic_store(path, benchmarks=1).close()
    keys = tokens(path, ci=("submit read", None))
    server = start(path, tmp_path, rate=0.2, burst=1)
    try:
        import httpx

        # The token's only request of its burst; the push's first try finds the bucket empty.
        assert httpx.get(server.base + "api/v1/formats", headers={"Authorization": f"Bearer {keys['ci']}"}
                         ).status_code == 200
        done = push(server.base, "--token-env", "CI_TOKEN", "--version", "v1", env={"CI_TOKEN": keys["ci"]})
        assert done.returncode == 0, done.stderr
        assert "the server answered 429: token 'ci' is over its rate limit" in done.stderr
        assert re.search(r"retrying in [1-5] s", done.stderr)
        assert count(path, "submission") == 1
    finally:
        server.stop()
