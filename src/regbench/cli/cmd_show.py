"""``regbench show``: benchmarks, versions, runs and their status."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ._common import one_benchmark_option


@click.command("show")
@click.option("--runs", "list_runs", is_flag=True, help="List every run, not only failed ones.")
@click.option("--full", is_flag=True,
              help="Print all of the stderr kept with each run listed (its last 2,000 characters), "
                   "not only its last 5 lines.")
@one_benchmark_option
@click.option("--version", "version_name", help="Only this version.")
@click.option("--plans", "list_plans", is_flag=True,
              help="List each benchmark's current optimized plan (`regbench optimize`) instead: runs x "
                   "iterations, its time and its expected precision.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Of --plans.")
@click.pass_context
def command(click_ctx: click.Context, list_runs: bool, full: bool, benchmark: str | None, version_name: str | None,
            list_plans: bool, fmt: str) -> None:
    """List benchmarks, versions (in history order), builds and runs with their status, and the
    last lines of the stderr of failed runs (of every run listed, with --runs)."""
    from ..inventory import inventory
    from ..report.results import print_inventory

    from ._common import check_benchmark

    given = {name for name in ("list_runs", "full", "version_name", "fmt")
             if click_ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}
    if list_plans:  # before the store is opened
        wrong = [flag for name, flag in (("version_name", "--version"), ("list_runs", "--runs"), ("full", "--full"))
                 if name in given]
        if wrong:
            raise click.UsageError(f"{wrong[0]} does not go with --plans", ctx=click_ctx)
    elif fmt != "table":
        raise click.UsageError(f"--format {fmt} is of --plans; the benchmarks, versions and runs are a table",
                               ctx=click_ctx)
    ctx = click_ctx.obj
    store = ctx.open_store(create=False)
    if list_plans:
        from ..report.plans import print_plans
        from ..store.plans import load_plans

        from ..model import SeriesName

        if benchmark is not None and not any(SeriesName.parse(b.name).benchmark == benchmark
                                             for b in store.benchmarks()):
            check_benchmark(store, benchmark)  # neither a stored benchmark nor a tool's that reports some
        # A tool's benchmark by its configured name lists the plans of all it reports.
        plans = [p for p in load_plans(store) if benchmark is None or benchmark in
                 (p.benchmark, SeriesName.parse(p.benchmark).benchmark)]
        from ..optimize.plans import plan_forks

        print_plans(plans, fmt=fmt, refused=_refused_shortenings(plans, ctx.config_if_any()),
                    forks=plan_forks(store, plans))
        if fmt == "table":
            from ..optimize.plans import stale_line, stale_plans
            from ..report.console import echo
            from ..report.plans import print_split

            stale, order = stale_plans(store, plans)
            if stale:
                echo(stale_line(stale, order, what="not run by `run --plan optimized`, which runs "
                                + ("its benchmark" if len(stale) == 1 else "their benchmarks")
                                + " at full configuration"))
            print_split(store, benchmark)
        return
    check_benchmark(store, benchmark)
    print_inventory(inventory(store, benchmark=benchmark, version=version_name), all_runs=list_runs, full=full)


def _refused_shortenings(plans, config) -> dict[int, str]:
    """Why each plan that shortens its iterations does not do so for the benchmark as configured
    now (by the plan's index), as ``run --plan optimized`` decides it; nothing without a
    configuration file."""
    from ..optimize.plans import shortening_refused

    if config is None:
        return {}
    specs = {s.name: s for s in config.benchmarks}
    out = {}
    for i, p in enumerate(plans):
        spec = specs.get(p.benchmark)
        if spec is not None and p.slices and p.full_slices and p.slices < p.full_slices:
            reason = shortening_refused(spec, full_slices=p.full_slices, warmup=p.warmup)
            if reason is not None:
                out[i] = reason
    return out
