"""What confirmation before alerting (``regbench detect --confirm``) removes and what it costs, on a
real git repository's history.

Usage::

    python benchmarks/bench_confirm.py                     # 5 campaigns of 30 commits x 2 runs
    python benchmarks/bench_confirm.py --quick             # 1 campaign: a smoke check
    python benchmarks/bench_confirm.py --campaigns 5 --runs 2 --methods auto,forecast=0.03

The repository (``regbench.demo_project.create_step_repo`` with ``TIMED_PROGRAM``): 30 commits;
its benchmark ``b`` times a Python loop (5 iterations of about 7 ms per run) whose work is 15%
larger from commit 8 on, 13% smaller from commit 16 and 10% larger from commit 23: three real
changes, at known commits.  Nothing else changes the code, so every other change detection reports
is a false alarm.  The noise is this machine's: a 2-core VM shared with other work.

Each campaign is a fresh store: ``run_campaign`` (what ``regbench run --versions`` does) over every
commit with few runs per commit (``--runs``, default 2, as a cheap nightly job would), in RMIT
order with its own seed.  Then, for each method, on its own copy of that store, three real
``regbench detect`` commands (subprocesses, JSON output):

1. ``detect --method M --dry-run``: what detection alone would alert;
2. ``detect --method M --confirm``: what is alerted once each new change has been run again
   (``compare --run``'s session, threshold = the method's minimum change, 5% error rate, at most
   100 pairs), with each change's confirmation;
3. ``detect --method M --dry-run`` again: what detection says with the confirmation's runs in the
   store (whether a refuted false alarm would come back at the next pass).

A detected change is true when its version is a commit that changed the level, in the right
direction.  Printed: a Markdown table per method, totals over the campaigns; ``--out FILE`` keeps
every change and confirmation as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from regbench.config import load_config
from regbench.demo_project import TIMED_PROGRAM, create_step_repo
from regbench.run.campaign import run_campaign
from regbench.store import Store

COMMITS = 30
STEPS = {8: 1.15, 16: 0.87, 23: 1.10}
ITERATIONS = 5


def regbench(store: Path, config: Path, *args: str) -> tuple[float, list[dict]]:
    """Run ``regbench detect ARGS --format json`` as a subprocess: (wall seconds, its JSON)."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", str(store), "--config", str(config),
                          "detect", *args, "--format", "json"], capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"regbench detect {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")
    return time.perf_counter() - t0, json.loads(out.stdout)


def copy_store(src: Path, dst: Path) -> None:
    """A consistent copy of a SQLite store in WAL mode (the backup API, not a file copy)."""
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def run_seconds(store: Path) -> dict[int, tuple[int, float]]:
    """Per campaign: (runs, seconds of runs), from the runs' recorded durations."""
    with sqlite3.connect(store) as con:
        rows = con.execute("SELECT campaign_id, count(*), sum(duration) FROM run GROUP BY campaign_id").fetchall()
    return {c: (n, s or 0.0) for c, n, s in rows}


def true_step(change: dict, truth: dict[str, str]) -> bool:
    """Whether a detected change is one of the planted ones: its version, its direction."""
    return truth.get(change["version"]) == change["kind"]


def one_campaign(k: int, seed: int, workdir: Path, methods: list[str], runs: int) -> dict:
    repo = create_step_repo(workdir / "repo", commits=COMMITS, steps=STEPS, program=TIMED_PROGRAM, runs=runs,
                            iterations=ITERATIONS)
    config = load_config(repo.config_path)
    base = workdir / "campaign.db"
    t0 = time.perf_counter()
    with Store(base) as store:
        run_campaign(config, store, revisions=",".join(repo.commits), seed=seed)
        names = {v.commit: v.name for v in store.versions()}
    campaign_wall = time.perf_counter() - t0
    truth = {names[repo.commits[i]]: ("regression" if repo.levels[i] > repo.levels[i - 1] else "improvement")
             for i in repo.changed}
    ((n_runs, bench_s),) = run_seconds(base).values()
    out: dict = {"campaign": k, "seed": seed, "runs": n_runs, "run_seconds": bench_s, "wall": campaign_wall,
                 "truth": truth, "methods": {}}
    for method in methods:
        name, _, min_change = method.partition("=")
        options = ["--method", name, *(["--min-change", min_change] if min_change else [])]
        store = workdir / f"{method}.db"
        copy_store(base, store)
        before_wall, before = regbench(store, repo.config_path, *options, "--dry-run")
        confirm_wall, confirmed = regbench(store, repo.config_path, *options, "--confirm")
        _, after = regbench(store, repo.config_path, *options, "--dry-run")
        per_campaign = run_seconds(store)
        first = min(per_campaign)
        cost_runs = sum(n for c, (n, _) in per_campaign.items() if c != first)
        cost_s = sum(s for c, (_, s) in per_campaign.items() if c != first)
        out["methods"][method] = {"before": before, "confirmed": confirmed, "after": after,
                                  "detect_wall": before_wall, "confirm_wall": confirm_wall,
                                  "confirm_runs": cost_runs, "confirm_run_seconds": cost_s}
        print(f"  campaign {k + 1}, {method}: {len(before)} change(s), "
              f"{sum(not true_step(c, truth) for c in before)} false alarm(s); with --confirm "
              f"{sum((c['confirmation'] or {}).get('status') in ('confirmed', 'unconfirmed') for c in confirmed)} "
              f"alerted, {cost_runs} runs ({cost_s:.1f} s)", file=sys.stderr, flush=True)
    return out


def tally(results: list[dict], method: str) -> dict:
    t = dict(changes=0, true_found=0, planted=0, false_before=0, true_kept=0, false_alerted=0, false_refuted=0,
             false_inconclusive=0, true_refuted=0, true_inconclusive=0, unconfirmed=0, pairs=0, confirm_runs=0,
             confirm_seconds=0.0, campaign_runs=0, campaign_seconds=0.0, confirm_wall=0.0, detect_wall=0.0,
             false_again=0, run_again=0)
    for r in results:
        m, truth = r["methods"][method], r["truth"]
        t["planted"] += len(truth)
        t["campaign_runs"] += r["runs"]
        t["campaign_seconds"] += r["run_seconds"]
        t["changes"] += len(m["before"])
        t["true_found"] += sum(true_step(c, truth) for c in m["before"])
        t["false_before"] += sum(not true_step(c, truth) for c in m["before"])
        refuted = set()
        for c in m["confirmed"]:
            conf = c["confirmation"]
            status = conf["status"] if conf else "not run"
            real = true_step(c, truth)
            alerted = status in ("confirmed", "unconfirmed", "not run")
            t["run_again"] += conf is not None and conf["campaign_id"] is not None
            t["pairs"] += conf["pairs"] if conf else 0
            t["unconfirmed"] += status == "unconfirmed"
            if real:
                t["true_kept"] += alerted
                t["true_refuted"] += status == "refuted"
                t["true_inconclusive"] += status == "inconclusive"
            else:
                t["false_alerted"] += alerted
                t["false_refuted"] += status == "refuted"
                t["false_inconclusive"] += status == "inconclusive"
                if not alerted:
                    refuted.add((c["previous"], c["version"]))
        t["false_again"] += sum((c["previous"], c["version"]) in refuted for c in m["after"])
        t["confirm_runs"] += m["confirm_runs"]
        t["confirm_seconds"] += m["confirm_run_seconds"]
        t["confirm_wall"] += m["confirm_wall"]
        t["detect_wall"] += m["detect_wall"]
    return t


def table(results: list[dict], methods: list[str]) -> str:
    rows = ["| method | campaigns | planted changes found by detection | false alarms alerted without --confirm | "
            "with --confirm: true changes kept | false alarms alerted | false alarms refuted / inconclusive | "
            "changes run again | pairs | runs | benchmark time of confirmation | of the campaigns | "
            "`detect --confirm` wall time (without) | refuted false alarms detected again |",
            "|---|---:|---|---:|---|---:|---|---:|---:|---:|---:|---:|---|---:|"]
    for method in methods:
        t = tally(results, method)
        name, _, min_change = method.partition("=")
        label = f"`{name}`" + (f" `--min-change {min_change}`" if min_change else "")
        rows.append(
            f"| {label} | {len(results)} | {t['true_found']}/{t['planted']} | {t['false_before']} | "
            f"{t['true_kept']}/{t['true_found']} | {t['false_alerted']} | "
            f"{t['false_refuted']} / {t['false_inconclusive']} | {t['run_again']} | {t['pairs']} | "
            f"{t['confirm_runs']} | {t['confirm_seconds']:.1f} s | {t['campaign_seconds']:.1f} s | "
            f"{t['confirm_wall']:.1f} s ({t['detect_wall']:.1f} s) | {t['false_again']} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--campaigns", type=int, default=5, help="independent campaigns (fresh stores)")
    ap.add_argument("--runs", type=int, default=2, help="runs per commit in each campaign")
    ap.add_argument("--methods", default="auto,bootstrap-ci,ci-overlap,forecast,forecast=0.03",
                    help="comma-separated detectors, each NAME or NAME=MIN_CHANGE (its --min-change)")
    ap.add_argument("--seed", type=int, default=1, help="RMIT seed of the first campaign (then +1 each)")
    ap.add_argument("--quick", action="store_true", help="one campaign")
    ap.add_argument("--out", type=Path, help="write every change and confirmation as JSON here")
    ap.add_argument("--workdir", type=Path, help="keep the repositories and stores here [default: a temporary folder]")
    args = ap.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    n = 1 if args.quick else args.campaigns
    root = args.workdir or Path(tempfile.mkdtemp(prefix="regbench-bench-confirm-"))
    load_before = os.getloadavg()
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    results = []
    for k in range(n):
        workdir = root / f"campaign-{k}"
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        results.append(one_campaign(k, args.seed + k, workdir, methods, args.runs))
    load_after = os.getloadavg()
    commit = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    print(f"\nregbench {commit}; Python {platform.python_version()}; {os.cpu_count()} CPUs, "
          f"{platform.machine()} {platform.system()} {platform.release()}; {started:%Y-%m-%d %H:%M} UTC; "
          f"load average before/after {load_before[0]:.2f}/{load_after[0]:.2f}; "
          f"{time.perf_counter() - t0:.0f} s in all.")
    print(f"{n} campaign(s) of {COMMITS} commits x {args.runs} runs x {ITERATIONS} iterations; planted changes "
          f"at commits {', '.join(f'{k} ({(f - 1):+.0%})' for k, f in STEPS.items())}.\n")
    print(table(results, methods))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, default=str))
    if not args.workdir:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
