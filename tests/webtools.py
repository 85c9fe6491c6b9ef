"""Stores and browsers for the dashboard's tests (tests/test_web_*.py)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.detect.alerts import record_alerts
from regbench.detect.base import Change
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def sha(k: int) -> str:
    return f"{k:02d}" + "ab" * 19


def synthetic_store(path: Path | str, *, benchmarks: int = 3, versions: int = 8, runs: int = 4, seed: int = 0) -> Store:
    """A store of ``benchmarks`` x 2 configurations x 1 machine; benchmark ``b0`` gets 20% slower
    at version 4 (recorded as an alert), ``b2`` is noisy (10% noise), the rest are stable."""
    rng = np.random.default_rng(seed)
    store = Store(path)
    vinfo = [VersionInfo(name=sha(k), commit=sha(k), timestamp=T0 + timedelta(days=k)) for k in range(versions)]
    records = []
    for b in range(benchmarks):
        for config in ("default", "fast"):
            for k in range(versions):
                level = 1.0 * (1.2 if b == 0 and k >= 4 else 1.0)
                noise = 0.10 if b == 2 else 0.005
                for r in range(runs):
                    records.append(RunRecord(f"b{b}", sha(k), r, level * (1 + noise * rng.standard_normal(10)),
                                             config=config))
    store.add_runs(records, versions=vinfo)
    record_alerts(store, [Change("b0", "default", "local", sha(4), sha(3), 0.2, 0.18, 0.22, "regression", "test")],
                  now=T0)
    return store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, *, timeout: float = 30.0) -> None:
    """Poll until something listens on ``port`` (or the server exits, or ``timeout`` passes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)  # polling a port: nothing to wait on but the port itself
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


class Server:
    """``regbench serve`` on a free loopback port, as a subprocess logging to a file."""

    def __init__(self, store: str | Path, log: Path, *extra: str, config: Path | None = None,
                 port: int | None = None, env: dict[str, str] | None = None) -> None:
        port = port or free_port()
        self.port = port
        self.log = log
        where = ["--config", str(config)] if config is not None else []
        with open(log, "w") as out:  # a file, not a pipe: a chatty server never blocks on it
            self.proc = subprocess.Popen([sys.executable, "-m", "regbench", "--store", str(store), *where, "serve",
                                          "--port", str(port), *extra], stdout=out, stderr=subprocess.STDOUT,
                                         env=None if env is None else {**os.environ, **env})
        self.base = f"http://127.0.0.1:{port}/"
        try:
            wait_for_port(port, self.proc)
        except RuntimeError:
            self.stop()
            raise

    def stop(self) -> str:
        """Stop the server; what it logged."""
        self.proc.terminate()
        self.proc.wait(timeout=30)
        return self.log.read_text()


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("no chromium on PATH (.ci/tools.sh installs Debian's)")
    return path


class ConsoleLog:
    """Console errors and page errors of a Playwright page, to assert there were none."""

    def __init__(self, page) -> None:
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
