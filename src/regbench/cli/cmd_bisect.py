"""``regbench bisect GOOD BAD --benchmark NAME``: the first commit that changes a benchmark."""

from __future__ import annotations

import json

import click

from ._sequential import DURATION


@click.command("bisect")
@click.argument("good")
@click.argument("bad")
@click.option("--benchmark", required=True, metavar="NAME", help="The benchmark whose change is looked for.")
@click.option("--threshold", default=0.03, show_default=True, type=click.FloatRange(0),
              help="Relative change below which GOOD and BAD count as alike (0.03 = 3%).")
@click.option("--alpha", default=0.01, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Error rate of each decision (valid when stopping after any pair).")
@click.option("--budget", type=DURATION, metavar="DURATION",
              help="Benchmark time per decision, e.g. 90s or 10m [default: no limit, --max-pairs only].")
@click.option("--max-pairs", default=200, show_default=True, type=click.IntRange(3),
              help="Pairs (or, for a step, triples) of runs per decision at most.")
@click.option("--seed", type=click.IntRange(min=0), metavar="INT", help="Seed of the run order [default: random, recorded].")
@click.option("--machine", metavar="NAME", help="Machine name the runs are stored under [default: host name].")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_obj
def command(ctx, good, bad, benchmark, threshold, alpha, budget, max_pairs, seed, machine, fmt) -> None:
    """Build and benchmark commits between GOOD and BAD to find the first one that changes
    the benchmark.

    Each step runs a commit with GOOD and BAD, in triples of runs in random order, until an
    always-valid confidence sequence says whether the commit is like GOOD or like BAD, so noise
    costs more runs instead of a wrong turn; a step that cannot settle within its budget stops the bisection with the
    range still open. Every run is stored. Exit status 1 when no culprit was found.
    """
    from rich.markup import escape

    from ..run.bisect import bisect
    from ._output import console, fmt_pct
    from ._sequential import LiveReporter, sigterm_as_interrupt

    config = ctx.load_config()
    store = ctx.open_store(config=config)
    with sigterm_as_interrupt(), LiveReporter() as reporter:
        result = bisect(config, store, good, bad, benchmark=benchmark, threshold=threshold, alpha=alpha,
                        budget=budget, max_pairs=max_pairs, seed=seed, machine=machine, reporter=reporter)
    if fmt == "json":
        click.echo(json.dumps(bisect_json(result), indent=1))
    else:
        print_bisect(result, console, fmt_pct, escape)
    if result.status != "found":
        raise click.exceptions.Exit(1)


def bisect_json(result) -> dict:
    from ._sequential import settled_row

    return {"benchmark": result.benchmark, "good": result.good, "bad": result.bad, "status": result.status,
            "culprit": result.culprit, "commits": result.commits, "runs": result.runs,
            "campaign_id": result.campaign_id, "total": settled_row(result.total),
            "culprit_change": settled_row(result.culprit_change) if result.culprit_change else None,
            "steps": [{"commit": s.commit, "verdict": s.verdict, "triples": s.triples,
                       "position": s.position if s.position == s.position else None,
                       "seconds": round(s.seconds, 3)} for s in result.steps],
            "candidates": list(result.candidates)}


def print_bisect(result, console, fmt_pct, escape) -> None:
    t = result.total
    d = t.decision
    head = f"{escape(result.benchmark)}: {result.bad} against {result.good} ({result.commits} commits)"
    if d is not None:
        head += f": {fmt_pct(d.change)} [{fmt_pct(d.ci_low)}, {fmt_pct(d.ci_high)}] after {t.pairs} pairs"
    console.print(head)
    for s in result.steps:
        level = 0.0 if abs(s.position) < 0.005 else s.position  # no "-0%"
        where = f", level {level:.0%} of the way from GOOD to BAD" if s.position == s.position else ""
        console.print(f"  {s.commit}: like {s.verdict}" if s.verdict in ("good", "bad") else f"  {s.commit}: {s.verdict}",
                      end="")
        console.print(f" ({s.triples} triples of runs{where})")
    if result.status == "found":
        c = result.culprit_change.decision
        own = (f"{fmt_pct(c.change)} [{fmt_pct(c.ci_low)}, {fmt_pct(c.ci_high)}] against its predecessor "
               f"({result.culprit_change.pairs} pairs, {c.decision})" if c is not None
               else "its own change against its predecessor could not be measured")
        console.print(f"First bad commit: [bold]{result.culprit}[/]: {own}; {result.runs} runs in all.")
    elif result.status == "no change":
        console.print(f"No change of {t.decision.threshold:.1%} or more between GOOD and BAD: nothing to bisect.")
    elif result.status == "unbuilt":
        console.print("GOOD or BAD did not build: nothing to bisect.")
    else:
        unbuilt = [s.commit for s in result.steps if s.verdict == "unbuilt" and s.commit in result.candidates]
        if t.stopped != "settled":
            why = "GOOD and BAD could not be told apart within the budget; raise --budget or --max-pairs"
        elif any(s.verdict == "undecided" for s in result.steps):
            why = "a step did not settle within its budget; raise --budget or --max-pairs"
        else:
            why = f"{', '.join(unbuilt)} did not build"
        console.print(f"Undecided: the first bad commit is one of {', '.join(result.candidates)} ({why}).")
