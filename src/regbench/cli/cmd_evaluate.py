"""``regbench evaluate``: every detector and the baselines on a labelled synthetic corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from ..errors import ConfigError


def _methods(text: str) -> list[str]:
    from ..evaluate import all_methods

    known = all_methods()
    if text.strip() == "all":
        return known
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ConfigError("--methods: give method names separated by commas, or 'all'")
    for m in names:
        if m not in known:
            raise ConfigError(f"--methods: unknown method {m!r} (known: {', '.join(known)})")
    return list(dict.fromkeys(names))


@click.command("evaluate")
@click.option("--methods", default="all", show_default=True, metavar="LIST|all",
              help="Comma-separated detectors and baselines to evaluate, or 'all'.")
@click.option("--series", "n_series", type=click.IntRange(1), default=300, show_default=True,
              help="Series in the corpus.")
@click.option("--versions", "n_versions", type=click.IntRange(20), default=100, show_default=True,
              help="Versions per series.")
@click.option("--runs", "n_runs", type=click.IntRange(2), default=10, show_default=True,
              help="Runs per version.")
@click.option("--iterations", "n_iterations", type=click.IntRange(2), default=20, show_default=True,
              help="Measured iterations per run (after 10 warm-up iterations).")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the corpus.")
@click.option("--tolerance", type=click.IntRange(0), default=2, show_default=True,
              help="Versions a detection may come after a true change and still match it.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the result to FILE instead of standard output.")
@click.option("--jobs", type=click.IntRange(1), default=None,
              help="Worker processes [default: the number of CPUs].")
def command(methods, n_series, n_versions, n_runs, n_iterations, seed, tolerance, fmt, output, jobs) -> None:
    """Score change detectors on a labelled synthetic corpus, side by side with the Perfherder
    rule and Apache Otava.

    The corpus (regbench.evaluate.corpus) mixes quiet series, steps of 1%-40% up and down,
    reverted steps, creeping degradations and bimodal cache hit/miss series where one mode moves,
    all with random initial conditions per run, per-run clusters, auto-dependence, rare huge
    outliers, warm-up and version-to-version jitter; it is the same for the same options.
    A detection matches a true change of the same sign at its version or up to --tolerance
    versions later; the rest are false alarms.
    """
    from ..evaluate import evaluate, make_corpus, render
    from ..evaluate.runner import COLUMNS, RIGHT, default_jobs, describe_corpus, table_rows
    from ._output import console, emit_table, err_console

    names = _methods(methods)
    if output is not None:
        parent = Path(output).resolve().parent
        if not parent.is_dir():
            raise ConfigError(f"--output: folder {parent} does not exist")
    jobs = jobs or default_jobs()

    progress = None
    bars: dict[str, object] = {}
    if err_console.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=err_console, transient=True)
        progress.start()
    try:
        if progress is not None:
            gen_task = progress.add_task("corpus", total=None)
        corpus = make_corpus(n_series=n_series, n_versions=n_versions, n_runs=n_runs, n_iterations=n_iterations,
                             rng=seed)
        if progress is not None:
            progress.remove_task(gen_task)

        def report(method: str, done: int, total: int) -> None:
            if progress is None:
                return
            if method not in bars:
                bars[method] = progress.add_task(method, total=total)
            progress.update(bars[method], completed=done)

        result = evaluate(corpus, names, jobs=jobs, tolerance=tolerance, progress=report)
    finally:
        if progress is not None:
            progress.stop()

    if fmt == "json":
        text = json.dumps(result.to_json(), indent=1) + "\n"
    elif fmt == "markdown":
        text = render(result, "markdown")
    elif output is not None:
        text = render(result, "text")
    else:
        emit_table(f"Detectors on the labelled corpus ({describe_corpus(result)})", list(COLUMNS),
                   table_rows(result), right=set(RIGHT))
        for note in result.notes:
            console.print(f"note: {note}", markup=False)
        console.print(f"recall by kind is of relevant changes (>= 3%); wall time {result.seconds:.1f} s "
                      f"with {result.jobs} job(s)", markup=False)
        return
    if output is None:
        click.echo(text, nl=False)
        return
    tmp = f"{output}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, output)  # nothing half-written
