"""``regbench demo``: the whole loop on a throw-away project, with nothing but the install."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ExitStatus


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
    run in SQLite, and reports the changes between consecutive commits found by the default
    detector (auto: a change-point search confirmed by a hierarchical test, 99% confidence,
    minimum change 3%). Takes about a minute on 2 cores; the folder is kept so that you can
    explore it with the other commands. Ends by writing the dashboard (`regbench report`) into
    the folder's `report/` and printing where to open it.
    """
    from ..errors import ConfigError
    from ..pipeline import run_demo
    from ..report.campaign import ProgressReporter
    from ..report.demo import print_demo, print_demo_created

    if directory and Path(directory).is_dir() and any(Path(directory).iterdir()):
        raise ConfigError(f"--dir {directory}: not empty (the demo makes its project in a new or empty folder)")
    outcome = run_demo(Path(directory) if directory else None, seed=seed, reporter=ProgressReporter(),
                       on_created=print_demo_created)
    print_demo(outcome)
    write_demo_report(outcome)
    if not outcome.campaign.ok:
        raise click.exceptions.Exit(ExitStatus.FAILED)


def write_demo_report(outcome) -> None:
    """The demo's dashboard in ``report/`` of its folder, and the ``file://`` address to open."""
    from ..config import load_config
    from ..report.web import print_report_written
    from ..store import Store
    from ..web.data import Dashboard
    from ..web.static_site import write_report

    config = load_config(outcome.demo.config_path)
    with Store(outcome.store_path, create=False) as store:
        dash = Dashboard(store, project=config.name, url=config.url, config=config).load()
        print_report_written(write_report(dash, outcome.demo.root / "report"))
