"""Sustained submissions to the HTTP API: runs per second, and no run lost or stored twice.

Usage::

    python benchmarks/bench_api.py                     # 8 clients for 60 s on SQLite
    python benchmarks/bench_api.py --duration 10       # a smoke check
    python benchmarks/bench_api.py --store-url postgresql+psycopg://user@127.0.0.1:5432/db
    python benchmarks/bench_api.py --reference         # also the same submissions stored in-process

A real ``regbench serve`` (uvicorn, one process) listens on a free loopback port over a fresh
store.  ``--clients`` threads, each with its own API token bound to its own machine, submit for
``--duration`` seconds, each submission ``--runs`` runs of ``--samples`` samples in the canonical
JSON lines (a new version every 10 submissions, 10 benchmarks), and every 10th submission is sent
a second time with the same id, as a client retrying after a lost answer would.  A 429 or 5xx
answer or a connection error is retried with the same id.  At the end the runs in the store are
counted against the acknowledged submissions: lost (acknowledged but not stored) and duplicated
(stored more than once) must both be zero.

With ``--reference``, the same submissions are then stored for the same time by the same number
of threads calling :func:`regbench.web.api_submit.submit` directly on a fresh store (no HTTP, no
server): the ratio of the two rates is what the server and HTTP cost, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import sqlalchemy as sa

from regbench.store import Store
from regbench.store import schema as t
from regbench.store.tokens import create_token


@dataclass
class Client:
    """What one client did."""

    acknowledged: set[str] = field(default_factory=set)
    latencies: list[float] = field(default_factory=list)
    replays: int = 0
    retries: int = 0
    errors: list[str] = field(default_factory=list)  # answers retried
    failed: str | None = None  # an answer that stopped the client (a 4xx)


def body(client: int, n: int, *, runs: int, samples: int, rng: np.random.Generator, nonce: str = "") -> bytes:
    values = 1.0 + 0.01 * rng.standard_normal((runs, samples))
    machine, bench, version = f"client{client}", f"load_{n % 10}", f"{nonce}v{n // 10}"
    return "".join(f'{{"benchmark":"{bench}","version":"{version}","run":{r},"iteration":{i},"value":{v!r},'
                   f'"machine":"{machine}"}}\n' for r in range(runs) for i, v in enumerate(values[r].tolist())).encode()


def run_client(k: int, base: str, secret: str, deadline: float, args, out: Client) -> None:
    rng = np.random.default_rng(k)
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/octet-stream"}
    n = 0
    with httpx.Client(timeout=120) as http:
        while time.monotonic() < deadline:
            data = body(k, n, runs=args.runs, samples=args.samples, rng=rng, nonce=args.nonce)
            sid = f"bench-{args.nonce}-{k}-{n:08d}"
            params = {"format": "jsonl", "machine": f"client{k}", "submission": sid}
            for _ in range(1 + (n % 10 == 9)):  # every 10th sent twice: a retry after a lost answer
                while True:
                    t0 = time.perf_counter()
                    try:
                        answer = http.post(base + "api/v1/runs", params=params, content=data, headers=headers)
                    except httpx.TransportError as exc:
                        out.retries += 1
                        out.errors.append(f"{type(exc).__name__}")
                        continue
                    if answer.status_code == 429 or answer.status_code >= 500:
                        out.retries += 1
                        out.errors.append(f"{answer.status_code}: {answer.text[:120]}")
                        time.sleep(float(answer.headers.get("retry-after", "0.1")))
                        continue
                    break
                out.latencies.append(time.perf_counter() - t0)
                if answer.status_code == 201:
                    out.acknowledged.add(sid)
                elif answer.status_code == 200 and answer.json()["replayed"]:
                    out.replays += 1
                    out.acknowledged.add(sid)
                else:
                    out.failed = f"{answer.status_code}: {answer.text[:200]}"
                    return
            n += 1


def reference(args) -> float:
    """Submissions a second stored in-process (same bodies, threads and time), on a fresh store."""
    from regbench.web.api_submit import SubmitRequest, submit

    with tempfile.TemporaryDirectory(prefix="bench-api-ref-") as tmp:
        store = Store(str(Path(tmp) / "results.db"))
        done = [0] * args.clients
        deadline = time.monotonic() + args.duration

        def one(k: int) -> None:
            rng, n = np.random.default_rng(k), 0
            while time.monotonic() < deadline:
                data = body(k, n, runs=args.runs, samples=args.samples, rng=rng)
                submit(store, SubmitRequest(f"ref-{k}-{n:08d}", "jsonl", f"client{k}"), data)
                done[k] += 1
                n += 1

        start = time.monotonic()
        threads = [threading.Thread(target=one, args=(k,)) for k in range(args.clients)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        elapsed = time.monotonic() - start
        store.close()
    return sum(done) / elapsed


def _counts(store: Store) -> tuple[int, int]:
    with store.engine.connect() as conn:
        return (conn.execute(sa.select(sa.func.count()).select_from(t.run)).scalar_one(),
                conn.execute(sa.select(sa.func.count()).select_from(t.submission)).scalar_one())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of submissions (default 60)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--runs", type=int, default=1, help="runs a submission")
    parser.add_argument("--samples", type=int, default=100, help="samples a run")
    parser.add_argument("--store-url", default=None, help="a PostgreSQL URL (default: a SQLite file)")
    parser.add_argument("--reference", action="store_true",
                        help="also store the same submissions in-process on SQLite (no HTTP), for the ratio")
    args = parser.parse_args()
    args.nonce = os.urandom(4).hex()  # new versions and ids each run: a server's database may hold earlier ones

    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        root = Path(tmp)
        location = args.store_url or str(root / "results.db")
        secrets = []
        with Store(location) as store:
            before_runs, before_subs = _counts(store)  # a server's database may hold earlier runs
            for k in range(args.clients):
                secrets.append(create_token(store, f"client{k}", "submit", machine=f"client{k}")[1])
        (root / "regbench.toml").write_text("[serve]\nrate = 100000\nburst = 100000\n")
        port = free_port()
        log = open(root / "serve.log", "w")
        server = subprocess.Popen([sys.executable, "-m", "regbench", "--store", location, "--config",
                                   str(root / "regbench.toml"), "serve", "--port", str(port)],
                                  stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}/"
        try:
            for _ in range(600):
                try:
                    httpx.get(base + "api/v1/openapi.json", timeout=1).raise_for_status()
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)  # polling the server's port: nothing else to wait on
            clients = [Client() for _ in range(args.clients)]
            start = time.monotonic()
            deadline = start + args.duration
            threads = [threading.Thread(target=run_client, args=(k, base, secrets[k], deadline, args, clients[k]))
                       for k in range(args.clients)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            elapsed = time.monotonic() - start
        finally:
            server.terminate()
            server.wait(timeout=60)
            log.close()
        with Store(location, create=False) as store:
            stored_runs, stored_subs = _counts(store)
            stored_runs, stored_subs = stored_runs - before_runs, stored_subs - before_subs
            with store.engine.connect() as conn:
                twice = conn.execute(sa.select(sa.func.count()).select_from(
                    sa.select(t.run.c.benchmark_id).group_by(t.run.c.benchmark_id, t.run.c.version_id,
                                                             t.run.c.config_id, t.run.c.machine_id, t.run.c.run_index)
                    .having(sa.func.count() > 1).subquery())).scalar_one()
    acknowledged = sum(len(c.acknowledged) for c in clients)
    expected = acknowledged * args.runs
    latencies = sorted(x for c in clients for x in c.latencies)
    print(f"store: {'PostgreSQL' if args.store_url else 'SQLite'}; {args.clients} clients x {elapsed:.1f} s; "
          f"{args.runs} run(s) of {args.samples} samples a submission; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    print(f"acknowledged submissions: {acknowledged} ({sum(c.replays for c in clients)} retries answered "
          f"'already stored'; {sum(c.retries for c in clients)} retried after 429/5xx/connection errors)")
    print(f"runs per second: {expected / elapsed:.1f}; submissions per second: {acknowledged / elapsed:.1f}")
    if latencies:
        print(f"latency: median {statistics.median(latencies) * 1000:.0f} ms, "
              f"95th percentile {latencies[int(0.95 * (len(latencies) - 1))] * 1000:.0f} ms")
    lost, duplicated = max(0, expected - stored_runs), twice
    print(f"stored runs: {stored_runs}, expected {expected}; submissions recorded: {stored_subs}; "
          f"lost: {lost}; duplicated: {duplicated + max(0, stored_runs - expected)}")
    errors = [e for c in clients for e in c.errors]
    if errors:
        print(f"answers retried: {len(errors)}, first: {errors[0]}")
    failed = [c.failed for c in clients if c.failed]
    if failed:
        print(f"clients stopped by an answer: {len(failed)}, first: {failed[0]}")
    ok = stored_runs == expected and stored_subs == acknowledged and duplicated == 0 and not failed
    if args.reference:
        ref = reference(args)
        print(f"in-process reference (SQLite, no HTTP): {ref * args.runs:.1f} runs per second; "
              f"through the API: {expected / elapsed / (ref * args.runs):.2f} of it")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
