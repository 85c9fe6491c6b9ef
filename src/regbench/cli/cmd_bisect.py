"""``regbench bisect GOOD BAD --benchmark NAME``: the first commit that changes a benchmark."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..errors import ExitStatus
from ._common import DURATION, FiniteFloatRange


@click.command("bisect")
@click.argument("good")
@click.argument("bad")
@click.option("--benchmark", required=True, metavar="NAME", help="The benchmark whose change is looked for.")
@click.option("--threshold", default=0.03, show_default=True, type=FiniteFloatRange(0),
              help="Relative change below which GOOD and BAD count as alike (0.03 = 3%).")
@click.option("--alpha", default=0.01, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="Error rate of each decision (valid when stopping after any pair).")
@click.option("--budget", type=DURATION, metavar="DURATION",
              help="Benchmark time per decision, e.g. 90s or 10m [default: no limit, --max-pairs only].")
@click.option("--max-pairs", default=200, show_default=True, type=click.IntRange(3),
              help="Pairs (or, for a step, triples) of runs per decision at most.")
@click.option("--seed", type=click.IntRange(min=0), metavar="INT", help="Seed of the run order [default: random, recorded].")
@click.option("--machine", metavar="NAME", help="Machine name the runs are stored under [default: host name].")
@click.option("--duet/--no-duet", default=None,
              help="Run the versions of a pair (a step's triple, given three CPUs) at the same time, each "
                   "pinned to its own CPU; else interleaved, saying why [default: [run] duet of regbench.toml].")
@click.option("--location", type=click.Choice(["mean", "median", "low"]), default="mean", show_default=True,
              help="What of a run's samples it contributes: low = the 10% quantile, a floor that interference "
                   "(which only adds time) hardly moves (the 90% quantile where higher is better).")
@click.option("--measure", type=click.Choice(["time", "instructions"]), default="time", show_default=True,
              help="Decide on each run's instruction count (perf, else callgrind) instead of its time: "
                   "instructions are not time.")
@click.option("--failure", is_flag=True,
              help="Find the first commit where the benchmark fails (BAD fails, GOOD runs), as `git bisect run` "
                   "does with a test, instead of the first that changes its time.")
@click.option("--runs", "failure_runs", default=3, show_default=True, type=click.IntRange(1),
              help="With --failure: runs of a commit at most before it counts as failing (one run that "
                   "succeeds shows it works).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def command(click_ctx, good, bad, benchmark, threshold, alpha, budget, max_pairs, seed, machine, duet, location, measure,
            failure, failure_runs, fmt) -> None:
    """Build and benchmark commits between GOOD and BAD to find the first one that changes
    the benchmark.

    Each step runs a commit with GOOD and BAD, in triples of runs in random order, until an
    always-valid confidence sequence says whether the commit is like GOOD or like BAD, so noise
    costs more runs instead of a wrong turn; a step that cannot settle within its budget stops the bisection with the
    range still open. Every run is stored. Exit status 1 when no culprit was found, 4 when GOOD or BAD
    did not build.

    With --failure, the first commit where the benchmark fails: each step runs a commit until a
    run succeeds or --runs runs failed.
    """
    from ..report.console import emit_json
    from ..report.sequential import LiveReporter, bisect_json, print_bisect
    from ..run.bisect import bisect
    from ._common import sigterm_as_interrupt

    given = {p.name for p in click_ctx.command.params
             if click_ctx.get_parameter_source(p.name) == click.core.ParameterSource.COMMANDLINE}
    if failure:  # before anything is read or written
        timing = sorted(given & {"threshold", "alpha", "budget", "max_pairs", "duet", "location", "measure"})
        if timing:
            flag = "--" + timing[0].replace("_", "-")
            raise click.UsageError(f"{flag} is about timing changes and does not apply to --failure", ctx=click_ctx)
    elif "failure_runs" in given:
        raise click.UsageError("--runs applies to --failure only", ctx=click_ctx)
    if measure != "time" and location != "mean":
        raise click.UsageError(f"--location {location} applies to time, not to --measure {measure}", ctx=click_ctx)
    ctx = click_ctx.obj
    config = ctx.load_config()
    store = ctx.open_store(config=config)
    with sigterm_as_interrupt(), LiveReporter() as reporter:
        if failure:
            from ..run.bisect import bisect_failure

            result: Any = bisect_failure(config, store, good, bad, benchmark=benchmark, runs=failure_runs, seed=seed,
                                         machine=machine, reporter=reporter)
        else:
            result = bisect(config, store, good, bad, benchmark=benchmark, threshold=threshold, alpha=alpha,
                            budget=budget, max_pairs=max_pairs, seed=seed, machine=machine, reporter=reporter,
                            duet=duet, location=location, measure=None if measure == "time" else measure)
    as_json: Callable[[Any], dict]
    as_text: Callable[[Any], None]
    if failure:
        from ..report.sequential import failure_bisect_json, print_failure_bisect

        as_json, as_text = failure_bisect_json, print_failure_bisect
    else:
        as_json, as_text = bisect_json, print_bisect
    if fmt == "json":
        emit_json(as_json(result))
    else:
        as_text(result)
    if result.status == "unbuilt":
        raise click.exceptions.Exit(ExitStatus.FAILED)
    if result.status != "found":
        raise click.exceptions.Exit(ExitStatus.FOUND)
