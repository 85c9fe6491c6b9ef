"""``regbench optimize``: the least repetition per benchmark from a full campaign (Japke et al. 2025)."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ._common import FiniteFloatRange


@click.command("optimize")
@click.option("--campaign", "campaign_id", type=int, metavar="ID",
              help="The full campaign to optimize from [default: the last finished one run without "
                   "optimized plans].")
@click.option("--benchmark", "benchmarks", multiple=True, metavar="NAME",
              help="Only this benchmark (repeatable; a tool's benchmark by its configured name or as "
                   "NAME/REPORTED) [default: all the campaign ran].")
@click.option("--version", "version_name", metavar="NAME",
              help="The version whose runs are used [default: each benchmark's last in history].")
@click.option("--metric", type=click.Choice(["cv", "rmad", "rciw1", "rciw2", "rciw3"]), default="rciw3",
              show_default=True, help="Stability metric (Japke et al. 2025, s.2).")
@click.option("--threshold", type=FiniteFloatRange(0, 1, min_open=True, max_open=True), default=0.01,
              show_default=True, metavar="X",
              help="Largest metric a plan may have, in (0, 1).")
@click.option("--min-runs", type=click.IntRange(min=1), default=2, show_default=True, metavar="N",
              help="Fewest runs a plan may have (runs are the unit of replication).")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True, metavar="N",
              help="Bootstrap resamples of the RCIW metrics.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, metavar="INT",
              help="Seed of the RCIW bootstrap.")
@click.option("--run-cost/--no-run-cost", default=True, show_default=True,
              help="Price each run's fixed cost (process start, imports, calibration) as well as its "
                   "iterations, measured from the stored runs of the benchmark when they have two or more "
                   "lengths (a full campaign and one with plans), and a JMH benchmark's (its forks' warm-up and "
                   "starts) where its runs say their timing; --no-run-cost chooses plans by their iterations "
                   "alone.")
@click.option("--refresh", is_flag=True,
              help="Derive every plan again, not only missing ones and those of benchmarks with an "
                   "alert raised since their plan.")
@click.option("--forget", multiple=True, metavar="NAME",
              help="Only delete every stored plan of this benchmark (one that no longer exists; "
                   "repeatable); no other option but --format goes with it.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_obj
def command(ctx, campaign_id, benchmarks, version_name, metric, threshold, min_runs, resamples, seed,
            run_cost, refresh, forget, fmt) -> None:
    """Derive each benchmark's optimized plan (fewest runs and iterations whose stability metric
    stays under the threshold) from a stored full campaign, and store it for `regbench run
    --plan optimized`.

    Every smaller configuration is simulated by keeping the first runs and the first measured
    iterations of the full campaign's runs (of each fork, where a run is a tool's forks, which are
    kept); warm-up iterations are kept and paid for in every run (Japke et al. 2025, Algorithm 1,
    s.4.4), and so is a run's fixed cost once it can be measured.  See docs/optimize.md.
    """
    from ..errors import ConfigError
    from ..optimize.plans import OptimizeOptions, derive_plans
    from ..report.console import BatchProgress, echo, emit_json
    from ..report.plans import print_optimize
    from ..store.plans import forget_plans_of

    if forget:  # before anything is read: --forget only deletes, every other option would be ignored
        click_ctx = click.get_current_context()
        given = [p for p in click_ctx.command.params if p.name not in ("forget", "fmt")
                 and click_ctx.get_parameter_source(p.name or "") not in (ParameterSource.DEFAULT, None)]
        if given:
            raise click.UsageError(f"{'/'.join(given[0].opts + given[0].secondary_opts)} does not go with --forget, "
                                   "which only deletes plans", ctx=click_ctx)
    try:  # how `run --plan optimized` will invoke a tool's benchmarks, for the suite's time
        config = ctx.config_if_any()
    except ConfigError:
        config = None
    store = ctx.open_store(create=False, config=config)
    if forget:
        counts = forget_plans_of(store, forget)
        missing = [name for name, n in counts.items() if not n]
        if missing:
            raise ConfigError(f"--forget {missing[0]!r}: no plan of this benchmark is stored"
                              + (f" (nor of {', '.join(map(repr, missing[1:]))})" if missing[1:] else "")
                              + ("; no plan was deleted" if len(counts) > len(missing) else ""))
        if fmt == "json":
            emit_json({"format_version": 1, "deleted": counts})
        else:
            for name, n in counts.items():
                echo(f"{n} plans of {name} deleted")
        return
    options = OptimizeOptions(metric=metric, threshold=threshold, min_runs=min_runs, n_resamples=resamples, seed=seed,
                              run_cost=run_cost)
    import warnings

    with warnings.catch_warnings(), BatchProgress("Optimizing") as progress:
        # A metric undefined for a benchmark (a count that is 0 in most runs) is in the table, as
        # "— (unstable)"; numpy's warning about it is for library users, not the terminal.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = derive_plans(store, campaign_id=campaign_id, benchmarks=list(benchmarks) or None,
                              version=version_name, options=options, refresh=refresh,
                              specs=None if config is None else config.benchmarks, progress=progress)
    print_optimize(result, fmt=fmt)
