"""Concurrent writers and ``kill -9``, by the hundred: what is lost, duplicated or corrupted.

Usage::

    python benchmarks/bench_concurrency.py                        # 100 pairs, 100 kill -9 trials, SQLite
    python benchmarks/bench_concurrency.py --pairs 20 --kills 20
    python benchmarks/bench_concurrency.py --quick                # 5 pairs, 4 kills: a smoke check
    python benchmarks/bench_concurrency.py --pairs 0 --kills 0 --crowds 10 --writers 3   # 10 crowds of 12
    python benchmarks/bench_concurrency.py --store-url postgresql+psycopg://postgres@127.0.0.1:5432/db

Every command is the real CLI (``python -m regbench.cli.main``), each its own process, on a fresh
store: a SQLite file, or with ``--store-url`` a fresh schema on that PostgreSQL server (dropped
at the end).

**Pairs**: two commands started together, the scenarios in turn:

* ``create``: two ``regbench import`` of different canonical CSV files, the store not yet made;
* ``run+run``: two ``regbench run --machine NEW --configuration A|B`` (new machine, version, benchmarks);
* ``import+import``: two ``regbench import --format hyperfine --version v1`` of one file;
* ``run+import``: ``regbench run`` beside ``regbench import`` of a CSV file;
* ``notify+notify``: two ``regbench alerts notify`` over 100 new alerts, with a JSON, a Markdown
  and a terminal sink.

**Crowds** (``--crowds N``): many writers on one store at once, as a shared PostgreSQL store
sees them: ``--writers K`` campaigns (``regbench run --machine m1 --configuration cK``, 2
benchmarks x 2 runs), K imports of canonical CSV files sharing new versions and a new machine, K
``regbench import --format hyperfine --version v9`` of one file (run indices taken at once; the
HTTP API's workers import the same way), two ``regbench detect --method auto --incremental`` over
a stored 25% step, and one ``regbench alerts ack`` of an older alert, all started together.
Counted besides lost and duplicated runs: commands that failed, errors a writer should have run
again instead of showing (deadlock, serialization failure, "locked"), alerts of the step other
than exactly one with one ``new`` event, and the triage not recorded.

**Kills**, in turn: ``regbench run`` (2 benchmarks x 4 runs of about 0.1 s) killed with SIGKILL
at a random moment, then the same command again until it ends; ``regbench import`` of a file of
4000 runs killed at a random moment, then imported again.  The moment is drawn uniformly between
5% and 95% of the command's duration when nobody kills it (measured once at the start), so that
kills fall everywhere: Python starting, the store being created, runs, transactions.

Counted: commands that failed, corrupt stores (SQLite's ``integrity_check``, or a store that does
not open at the current schema revision), lost runs (expected but not stored), duplicated runs
(stored and not expected: a run stored twice under two indices), campaigns left ``running``
after every process ended, scratch folders (``regbench-run-*``) left behind, imports half
stored after a kill, and for notify, alerts lost (not in a file sink, or not marked sent) and
sent twice (printed twice by the terminal sinks of the two calls).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import sqlalchemy as sa

from regbench.detect import Change
from regbench.detect.alerts import record_alerts
from regbench.model import RunRecord, VersionInfo
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.alerts import alert_history, deliveries, list_alerts

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
HYPERFINE = ROOT / "tests" / "golden" / "adapters" / "hyperfine" / "two-commands.json"
PAIRS = ("create", "run+run", "import+import", "run+import", "notify+notify")
N_ALERTS = 100
T0 = datetime(2024, 5, 1, 12, 0, 0)


def regbench(*args: str) -> list[str]:
    return [PY, "-m", "regbench.cli.main", *args]


@dataclass
class Tally:
    """What one scenario counted over its trials."""

    trials: int = 0
    counts: Counter = field(default_factory=Counter)

    def add(self, **counts: int) -> None:
        self.counts.update({k: v for k, v in counts.items() if v})


# ------------------------------------------------------------------------------------- stores
class Stores:
    """Fresh stores: SQLite files under ``work``, or fresh schemas on a PostgreSQL server."""

    def __init__(self, work: Path, server: str | None):
        self.work, self.server, self.schemas = work, server, []
        self.admin = sa.create_engine(server) if server else None

    def new(self, folder: Path) -> str:
        if self.admin is None:
            return f"sqlite:///{folder / 'results.db'}"
        schema = f"bench_{uuid.uuid4().hex[:12]}"
        with self.admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        self.schemas.append(schema)
        url = sa.make_url(self.server).update_query_dict({"options": f"-csearch_path={schema}"})
        return url.render_as_string(hide_password=False)

    def drop_all(self) -> None:
        if self.admin is None:
            return
        for schema in self.schemas:  # one transaction each: all at once takes too many locks
            with self.admin.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        self.admin.dispose()


def corrupt(url: str) -> bool:
    """Whether the store fails SQLite's integrity check or does not open at the current revision."""
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if os.path.exists(path):
            con = sqlite3.connect(path)
            try:
                if con.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
                    return True
            except sqlite3.DatabaseError:
                return True
            finally:
                con.close()
    try:
        with Store(url, create=False) as store:
            return store.schema_revision() != t.SCHEMA_REVISION
    except Exception:
        return True


def stored_keys(url: str) -> Counter:
    with Store(url, create=False) as store:
        return Counter((r.benchmark, r.version, r.config, r.machine, r.run_index) for r in store.runs())


def running_campaigns(url: str) -> int:
    with Store(url, create=False) as store:
        return sum(c.status == "running" for c in store.campaigns())


def compare(expected: set, stored: Counter) -> dict[str, int]:
    return {"lost runs": len(expected - set(stored)),
            "duplicated runs": sum(stored.values()) - len(expected & set(stored))}


# ------------------------------------------------------------------------------------ inputs
def canonical_csv(path: Path, benchmark: str, *, versions: int, runs: int, iterations: int, seed: int) -> set:
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write("benchmark,version,run,iteration,value\n")
        for v in range(versions):
            for r in range(runs):
                f.writelines(f"{benchmark},v{v},{r},{i},{1 + rng.normal(0, 0.01)!r}\n" for i in range(iterations))
    return {(benchmark, f"v{v}", "default", "local", r) for v in range(versions) for r in range(runs)}


def project(folder: Path, *, benchmarks: tuple[str, ...], runs: int, sleep: float) -> Path:
    """A regbench.toml of command benchmarks that sleep, then print their samples."""
    folder.mkdir(parents=True, exist_ok=True)
    script = f"sleep {sleep}; i=0; while [ $i -lt $REGBENCH_ITERATIONS ]; do echo 1.0; i=$((i+1)); done"
    text = f"[project]\nname = \"p\"\n\n[defaults]\nruns = {runs}\niterations = 3\nwarmup = 0\n"
    for name in benchmarks:
        text += f"\n[[benchmark]]\nname = \"{name}\"\ncommand = {json.dumps(['sh', '-c', script])}\n"
    (folder / "regbench.toml").write_text(text)
    return folder


def campaign_keys(benchmarks, versions, config, machine, runs) -> set:
    return {(b, v, config, machine, r) for b in benchmarks for v in versions for r in range(runs)}


def worktree_version(url: str) -> list[str]:
    with Store(url, create=False) as store:
        return [v.name for v in store.versions()]


# --------------------------------------------------------------------------------- processes
def together(argvs: list[list[str]], *, cwd: Path, env: dict | None = None) -> list[tuple[int, str]]:
    """Start the commands at once, wait for all: (exit status, output) of each."""
    logs = [cwd / f"process-{k}.log" for k in range(len(argvs))]
    procs = []
    for argv, log in zip(argvs, logs, strict=True):
        with open(log, "w") as out:
            procs.append(subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT))
    for p in procs:
        p.wait(timeout=600)
    return [(p.returncode, log.read_text()) for p, log in zip(procs, logs, strict=True)]


def failed(results: list[tuple[int, str]], log: list[str]) -> int:
    bad = [out for code, out in results if code != 0]
    log += [out.strip().splitlines()[-1] if out.strip() else "(no output)" for out in bad]
    return len(bad)


# ------------------------------------------------------------------------------------- pairs
def pair(kind: str, k: int, folder: Path, stores: Stores, tally: Tally, log: list[str]) -> None:
    folder.mkdir(parents=True)
    url = stores.new(folder)
    if kind == "create":
        expected = canonical_csv(folder / "a.csv", "fa", versions=3, runs=3, iterations=5, seed=k)
        expected |= canonical_csv(folder / "b.csv", "fb", versions=3, runs=3, iterations=5, seed=k + 1)
        res = together([regbench("--store", url, "import", str(folder / "a.csv")),
                        regbench("--store", url, "import", str(folder / "b.csv"))], cwd=folder)
    elif kind == "run+run":
        proj = project(folder / "p", benchmarks=("a", "b"), runs=3, sleep=0)
        res = together([regbench("--store", url, "run", "--machine", f"m{k}", "--configuration", c) for c in "AB"], cwd=proj)
        versions = worktree_version(url) if not corrupt(url) else []
        expected = set().union(*(campaign_keys("ab", versions, c, f"m{k}", 3) for c in "AB"))
    elif kind == "import+import":
        with Store(url) as store:  # a store that exists, holding a run
            store.add_run(RunRecord("other", "v0", 0, np.array([1.0])))
        args = ("--store", url, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v1")
        res = together([regbench(*args), regbench(*args)], cwd=folder)
        expected = {("other", "v0", "default", "local", 0)}
        expected |= {(b, "v1", "default", "local", r) for b, n in runs_per_benchmark().items() for r in range(2 * n)}
    elif kind == "run+import":
        proj = project(folder / "p", benchmarks=("a",), runs=3, sleep=0)
        expected = canonical_csv(folder / "c.csv", "imported", versions=3, runs=3, iterations=5, seed=k)
        res = together([regbench("--store", url, "run", "--machine", "m1"),
                        regbench("--store", url, "import", str(folder / "c.csv"))], cwd=proj)
        versions = [v for v in worktree_version(url) if not v.startswith("v")] if not corrupt(url) else []
        expected |= campaign_keys("a", versions, "default", "m1", 3)
    else:
        expected = notify_store(url)
        (folder / "regbench.toml").write_text(
            '[[notify]]\ntype = "json"\npath = "out/alerts.json"\n\n[[notify]]\ntype = "markdown"\n'
            'path = "out/alerts.md"\n\n[[notify]]\ntype = "terminal"\n')
        res = together([regbench("--store", url, "alerts", "notify")] * 2, cwd=folder)
        alerts_counted(url, folder, expected, res, tally)
        expected = None
    tally.trials += 1
    tally.add(**{"commands failed": failed(res, log)})
    if corrupt(url):
        tally.add(**{"corrupt stores": 1})
        return
    if expected is not None:
        tally.add(**compare(expected, stored_keys(url)))
    tally.add(**{"campaigns left running": running_campaigns(url)})


def runs_per_benchmark() -> Counter:
    """The runs one import of the hyperfine file stores, per benchmark."""
    from regbench.ingest import import_tool_file

    with Store("sqlite:///:memory:") as store:
        import_tool_file(store, str(HYPERFINE), fmt="hyperfine", version="v1")
        return Counter(r.benchmark for r in store.runs())


def notify_store(url: str) -> set:
    with Store(url) as store:
        versions = [f"v{k}" for k in range(2 * N_ALERTS + 2)]
        store.add_runs([RunRecord("fft", v, 0, np.array([1.0])) for v in versions],
                       versions=[VersionInfo(v, timestamp=T0 + timedelta(days=k)) for k, v in enumerate(versions)])
        record_alerts(store, [Change("fft", "default", "local", versions[2 * k + 1], versions[2 * k], 0.1, 0.05, 0.15,
                                     "regression", "ci-overlap") for k in range(N_ALERTS)], now=T0)
        return {a.id for a in list_alerts(store)}


def alerts_counted(url: str, folder: Path, ids: set, res: list[tuple[int, str]], tally: Tally) -> None:
    printed = Counter(int(m) for _, out in res for m in re.findall(r"alert #(\d+)$", out, flags=re.M))
    try:
        in_json = Counter(a["id"] for a in json.loads((folder / "out" / "alerts.json").read_text())["alerts"])
    except (OSError, ValueError, KeyError):
        in_json = Counter()
    md = (folder / "out" / "alerts.md").read_text() if (folder / "out" / "alerts.md").exists() else ""
    in_md = Counter(int(m) for m in re.findall(r"^\| #(\d+) \| ", md, flags=re.M))
    with Store(url, create=False) as store:
        sent = Counter(d.alert_id for d in deliveries(store) if d.state == "sent")
    lost = {i for i in ids if not (printed[i] and in_json[i] and in_md[i] and sent[i] == 3)}
    twice = {i for i in ids if printed[i] > 1 or in_json[i] > 1 or in_md[i] > 1}
    tally.add(**{"alerts sent": len(ids) - len(lost), "alerts lost": len(lost), "alerts sent twice": len(twice)})


# ------------------------------------------------------------------------------------ crowds
#: What a writer must never show: a transaction the store should have run again.
SURFACED = ("deadlock", "could not serialize", "database is locked", "concurrent writers?", "Traceback")


def stepped_store(url: str) -> None:
    """``step``: a 25% regression at v3 (six runs per version); ``old``: an alert for triage."""
    rng = np.random.default_rng(1)
    levels = [1.0, 1.0, 1.0, 1.25, 1.25, 1.25]
    records = [RunRecord("step", f"v{k}", r, lv * (1 + rng.normal(0, 0.003)) * (1 + rng.normal(0, 0.01, 20)))
               for k, lv in enumerate(levels) for r in range(6)]
    records += [RunRecord("old", f"v{k}", 0, np.array([1.0])) for k in range(2)]
    with Store(url) as store:
        store.add_runs(records)
        record_alerts(store, [Change("old", "default", "local", "v1", "v0", 0.2, 0.1, 0.3, "regression",
                                     "ci-overlap")], now=T0)


def crowd(k: int, writers: int, folder: Path, stores: Stores, tally: Tally, log: list[str]) -> float:
    """One crowd of ``3 * writers + 3`` commands on one store; its wall time in seconds."""
    folder.mkdir(parents=True)
    url = stores.new(folder)
    stepped_store(url)
    proj = project(folder / "p", benchmarks=("a", "b"), runs=2, sleep=0)
    expected = {("step", f"v{v}", "default", "local", r) for v in range(6) for r in range(6)}
    expected |= {("old", f"v{v}", "default", "local", 0) for v in range(2)}
    argvs = [regbench("--store", url, "run", "--machine", "m1", "--configuration", f"c{w}") for w in range(writers)]
    for w in range(writers):
        rng = np.random.default_rng(1000 * k + w)
        lines = ["benchmark,version,run,iteration,value,machine"]
        lines += [f"i{w},w{v},{r},{i},{1 + rng.normal(0, 0.01)!r},m9" for v in range(4) for r in range(3) for i in range(5)]
        (folder / f"i{w}.csv").write_text("\n".join(lines) + "\n")
        expected |= {(f"i{w}", f"w{v}", "default", "m9", r) for v in range(4) for r in range(3)}
        argvs.append(regbench("--store", url, "import", str(folder / f"i{w}.csv")))
    argvs += [regbench("--store", url, "import", str(HYPERFINE), "--format", "hyperfine", "--version", "v9")] * writers
    expected |= {(b, "v9", "default", "local", r) for b, n in runs_per_benchmark().items() for r in range(writers * n)}
    argvs += [regbench("--store", url, "detect", "--method", "auto", "--benchmark", "step", "--incremental")] * 2
    argvs.append(regbench("--store", url, "alerts", "ack", "1", "--by", "Ana"))
    started = time.perf_counter()
    res = together(argvs, cwd=proj)
    wall = time.perf_counter() - started
    tally.trials += 1
    tally.add(**{"commands failed": failed(res, log),
                 "errors shown": sum(any(s in out for s in SURFACED) for _, out in res)})
    if corrupt(url):
        tally.add(**{"corrupt stores": 1})
        return wall
    known = {f"v{v}" for v in (*range(6), 9)} | {f"w{v}" for v in range(4)}
    versions = [v for v in worktree_version(url) if v not in known]  # the campaigns' ("worktree")
    expected |= set().union(*(campaign_keys("ab", versions, f"c{w}", "m1", 2) for w in range(writers)))
    tally.add(**compare(expected, stored_keys(url)))
    with Store(url, create=False) as store:
        step = [a for a in list_alerts(store) if a.benchmark == "step"]
        right = ([(a.version, a.previous, a.kind) for a in step] == [("v3", "v2", "regression")]
                 and [e.status for e in alert_history(store, step[0].id)] == ["new"])
        acked = [e.status for e in alert_history(store, 1)] == ["new", "acknowledged"]
    tally.add(**{"alerts wrong": int(not right), "triage lost": int(not acked),
                 "campaigns left running": running_campaigns(url)})
    return wall


# ------------------------------------------------------------------------------------- kills
def kill_command(kind: str, k: int, folder: Path, url: str) -> tuple[list[str], Path, set | None]:
    """The command a kill trial kills (argv, folder), and the runs it stores (None: found after)."""
    if kind == "campaign":
        proj = project(folder / "p", benchmarks=("a", "b"), runs=4, sleep=0.1)
        return regbench("--store", url, "run", "--machine", "m1"), proj, None
    expected = canonical_csv(folder / "big.csv", "big", versions=40, runs=100, iterations=5, seed=k)
    return regbench("--store", url, "import", str(folder / "big.csv")), folder, expected


def duration(kind: str, folder: Path, stores: Stores) -> float:
    """Seconds one command of a kill trial takes when nobody kills it (the kills are drawn in it)."""
    folder.mkdir(parents=True)
    argv, cwd, _ = kill_command(kind, 0, folder, stores.new(folder))
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, timeout=600, check=True)
    return time.perf_counter() - started


def kill_trial(kind: str, k: int, folder: Path, stores: Stores, tally: Tally, log: list[str], delay: float) -> None:
    folder.mkdir(parents=True)
    url = stores.new(folder)
    tmp = folder / "tmp"  # the processes' temporary folder: what a killed run leaves is seen here
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    argv, cwd, expected = kill_command(kind, k, folder, url)
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        tally.add(**{"killed mid-way": 1})
    proc.wait()
    time.sleep(0.3)  # a benchmark orphaned by the kill ends (its sleep is 0.1 s)
    tally.trials += 1
    made = os.path.exists(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else True
    if made and corrupt(url) and _has_schema(url):
        tally.add(**{"corrupt stores": 1})
        return
    if kind == "import" and made and _has_schema(url):
        assert expected is not None
        n = sum(stored_keys(url).values())
        if n not in (0, len(expected)):
            tally.add(**{"partial imports": 1})
    again = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if again.returncode != 0 and not (kind == "import" and "already in the store" in again.stderr):
        tally.add(**{"commands failed": 1})
        log.append((again.stderr or again.stdout).strip().splitlines()[-1:][0] if (again.stderr or again.stdout).strip()
                   else "(no output)")
    if corrupt(url):
        tally.add(**{"corrupt stores": 1})
        return
    if kind == "campaign":
        expected = campaign_keys("ab", worktree_version(url), "default", "m1", 4)
    tally.add(**compare(expected, stored_keys(url)))
    tally.add(**{"campaigns left running": running_campaigns(url),
                 "scratch folders left": sum(1 for p in tmp.iterdir() if p.name.startswith("regbench-"))})


def _has_schema(url: str) -> bool:
    try:
        Store(url, create=False).close()
        return True
    except Exception as exc:  # killed before the schema was made: nothing to check
        return "no schema" not in str(exc) and "no results store" not in str(exc)


# -------------------------------------------------------------------------------------- main
def table(title: str, tallies: dict[str, Tally], columns: list[str]) -> str:
    lines = [f"| {title} | trials | " + " | ".join(columns) + " |", "|---|---:|" + "---:|" * len(columns)]
    total = Tally()
    for name, tl in tallies.items():
        lines.append(f"| {name} | {tl.trials} | " + " | ".join(str(tl.counts[c]) for c in columns) + " |")
        total.trials += tl.trials
        total.counts.update(tl.counts)
    lines.append(f"| **all** | {total.trials} | " + " | ".join(str(total.counts[c]) for c in columns) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=100, help="writer pairs, the scenarios in turn [100]")
    ap.add_argument("--kills", type=int, default=100, help="kill -9 trials, campaigns and imports in turn [100]")
    ap.add_argument("--crowds", type=int, default=0, help="crowds of writers on one store at once [0]")
    ap.add_argument("--writers", type=int, default=3,
                    help="campaigns, CSV imports and hyperfine imports in a crowd, each [3]")
    ap.add_argument("--quick", action="store_true", help="5 pairs and 4 kills")
    ap.add_argument("--store-url", help="a PostgreSQL server (SQLAlchemy URL): each store a fresh schema there")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill moments [0]")
    ap.add_argument("--keep", action="store_true", help="keep the stores and logs (printed where)")
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.kills = 5, 4
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="bench-concurrency-"))
    stores = Stores(work, args.store_url)
    pairs = {name: Tally() for name in PAIRS}
    kills = {name: Tally() for name in ("campaign", "import")}
    crowds = {f"{3 * args.writers + 3} writers": Tally()}
    crowd_walls: list[float] = []
    log: list[str] = []
    started = time.perf_counter()
    try:
        for k in range(args.pairs):
            kind = PAIRS[k % len(PAIRS)]
            pair(kind, k, work / f"pair-{k}", stores, pairs[kind], log)
            print(f"pair {k + 1}/{args.pairs} ({kind})", file=sys.stderr)
        for k in range(args.crowds):
            crowd_walls.append(crowd(k, args.writers, work / f"crowd-{k}", stores, next(iter(crowds.values())), log))
            print(f"crowd {k + 1}/{args.crowds} ({crowd_walls[-1]:.1f} s)", file=sys.stderr)
        # Each kill at a uniformly drawn moment of the command's own duration, measured once.
        durations = {kind: duration(kind, work / f"duration-{kind}", stores) for kind in kills} if args.kills else {}
        for k in range(args.kills):
            kind = ("campaign", "import")[k % 2]
            delay = rng.uniform(0.05, 0.95) * durations[kind]
            kill_trial(kind, k, work / f"kill-{k}", stores, kills[kind], log, delay)
            print(f"kill {k + 1}/{args.kills} ({kind}, at {delay:.2f} s)", file=sys.stderr)
    finally:
        stores.drop_all()
    wall = time.perf_counter() - started
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    backend = "PostgreSQL (a fresh schema per store)" if args.store_url else "SQLite (a fresh file per store)"
    print(f"## Concurrent writers and kill -9 ({backend})\n")
    print(f"`python benchmarks/bench_concurrency.py --pairs {args.pairs} --kills {args.kills}"
          + (f" --crowds {args.crowds} --writers {args.writers}" if args.crowds else "")
          + (" --store-url URL" if args.store_url else "") + f"`, {datetime.now():%Y-%m-%d}: "
          f"{wall:.0f} s wall, {cpu.ru_utime + cpu.ru_stime + me.ru_utime + me.ru_stime:.0f} s CPU.\n")
    if args.pairs:
        print(table("pair", pairs, ["commands failed", "corrupt stores", "lost runs", "duplicated runs",
                                    "campaigns left running", "alerts sent", "alerts lost", "alerts sent twice"]))
        print()
    if args.crowds:
        walls = np.array(crowd_walls)
        print(f"Crowds: every command started together; a crowd's wall time median {np.median(walls):.1f} s "
              f"(min {walls.min():.1f}, max {walls.max():.1f}).\n")
        print(table("crowd of", crowds, ["commands failed", "errors shown", "corrupt stores", "lost runs",
                                         "duplicated runs", "alerts wrong", "triage lost", "campaigns left running"]))
        print()
    if args.kills:
        print("Each kill at a moment drawn uniformly in 5-95% of the command's duration unkilled ("
              + ", ".join(f"{kind} {d:.1f} s" for kind, d in durations.items()) + ").\n")
        print(table("kill -9 of", kills, ["killed mid-way", "commands failed", "corrupt stores", "partial imports",
                                          "lost runs", "duplicated runs", "campaigns left running",
                                          "scratch folders left"]))
    if log:
        print("\nFailures (last line of each):")
        for line in dict.fromkeys(log):
            print(f"- {line}")
    if args.keep:
        print(f"\n(stores and logs kept in {work})", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
