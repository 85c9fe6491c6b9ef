"""``regbench show``: benchmarks, versions, runs and their status."""

from __future__ import annotations

import click


@click.command("show")
@click.option("--runs", "list_runs", is_flag=True, help="List every run, not only failed ones.")
@click.option("--full", is_flag=True,
              help="Print all of the stderr kept with each run listed (its last 2,000 characters), "
                   "not only its last 5 lines.")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--version", "version_name", help="Only this version.")
@click.pass_obj
def command(ctx, list_runs: bool, full: bool, benchmark: str | None, version_name: str | None) -> None:
    """List benchmarks, versions (in history order), builds and runs with their status, and the
    last lines of the stderr of failed runs (of every run listed, with --runs)."""
    from ..inventory import inventory
    from ..report.results import print_inventory

    from ._common import check_benchmark

    store = ctx.open_store(create=False)
    check_benchmark(store, benchmark)
    print_inventory(inventory(store, benchmark=benchmark, version=version_name), all_runs=list_runs, full=full)
