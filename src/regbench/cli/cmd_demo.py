"""``regbench demo``: the whole loop on a throw-away project, with nothing but the install."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import click

DEMO_MIN_CHANGE = 0.05


@click.command("demo")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Where to create the demo project (new or empty) [default: a new temporary folder].")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the randomized interleaved order [default: random, recorded].")
@click.pass_obj
def command(ctx, directory: str | None, seed: int | None) -> None:
    """Run the whole regression-benchmarking loop on a generated project.

    Creates a git repository of a small real program over 8 commits (one makes it slower with a
    worse algorithm, a later one faster), builds every commit in its own worktree, runs its
    benchmark 10 times per commit as fresh processes in randomized interleaved order, stores every
    run in SQLite, and reports the changes between consecutive commits (ci-overlap, 99%
    confidence, minimum change 5%: with only 8 versions, the default `auto` cannot yet estimate
    how much versions vary and is deliberately cautious). Takes about a minute on 2 cores; the folder is kept so that
    you can explore it with the other commands.
    """
    from rich.console import Console

    from ..config import load_config
    from ..demo_project import create_demo_repo
    from ..detect.driver import detect_changes
    from ..run.campaign import run_campaign
    from ..store import Store
    from ._output import console
    from .cmd_detect import change_table
    from .cmd_run import ProgressReporter, summary

    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="regbench-demo-"))
    demo = create_demo_repo(root)
    config = load_config(demo.config_path)
    store_path = demo.root / ".regbench" / "results.db"
    console.print(f"[bold]regbench demo[/bold]: a git repository of {len(demo.commits)} commits in {demo.path}")
    subjects = _subjects(demo)
    for k, (sha, subject) in enumerate(zip(demo.commits, subjects, strict=True)):
        console.print(f"  {k + 1}. {sha[:7]}  {subject}")
    console.print("Building each commit and running its benchmark as fresh processes, "
                  "in randomized interleaved order...")
    started = time.perf_counter()
    with Store(store_path) as store:
        reporter = ProgressReporter(Console(stderr=True))
        with reporter:
            result = run_campaign(config, store, revisions=",".join(demo.commits), seed=seed,
                                  reporter=reporter, command="regbench demo")
        console.print(summary(result, str(store_path)))
        changes = detect_changes(store, method="ci-overlap", min_change=DEMO_MIN_CHANGE, jobs=1).changes
    change_table(changes, method="ci-overlap", confidence=0.99, min_change=DEMO_MIN_CHANGE)
    by_sha = {sha[:7]: (k, subj) for k, (sha, subj) in enumerate(zip(demo.commits, subjects, strict=True))}
    for c in changes:
        k, subject = by_sha.get(c.version[:7], (None, ""))
        where = f"commit {k + 1} ({c.version}: {subject})" if k is not None else c.version
        console.print(f"  {c.kind} of {c.change:+.1%} introduced by {where}")
    expected = {demo.commits[demo.slower_index][:7], demo.commits[demo.faster_index][:7]}
    found = {c.version[:7] for c in changes}
    verdict = "both planted changes were found" if expected <= found else "not every planted change was found"
    console.print(f"{len(changes)} change(s) found in {time.perf_counter() - started:.0f} s; {verdict}.")
    console.print(f"Results are stored in {store_path}. Explore them with:\n"
                  f"  cd {demo.root} && regbench summary\n"
                  f"  cd {demo.root} && regbench compare {demo.commits[demo.slower_index - 1][:7]} "
                  f"{demo.commits[demo.slower_index][:7]}")


def _subjects(demo) -> list[str]:
    import subprocess

    out = subprocess.run(["git", "-C", str(demo.path), "log", "--reverse", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()
