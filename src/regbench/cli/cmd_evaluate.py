"""``regbench evaluate``: every detector and the baselines on a labelled synthetic corpus."""

from __future__ import annotations

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
    from ..evaluate import evaluate, make_corpus
    from ..evaluate.runner import default_jobs
    from ..report.console import echo
    from ..report.evaluation import EvaluationProgress, evaluation_text, print_evaluation_table

    names = _methods(methods)
    if output is not None:
        parent = Path(output).resolve().parent
        if not parent.is_dir():
            raise ConfigError(f"--output: folder {parent} does not exist")
    jobs = jobs or default_jobs()
    with EvaluationProgress() as progress:
        with progress.corpus():
            corpus = make_corpus(n_series=n_series, n_versions=n_versions, n_runs=n_runs,
                                 n_iterations=n_iterations, rng=seed)
        result = evaluate(corpus, names, jobs=jobs, tolerance=tolerance, progress=progress)
    if output is None and fmt == "table":
        print_evaluation_table(result)
        return
    text = evaluation_text(result, "text" if fmt == "table" else fmt)
    if output is None:
        echo(text, nl=False)
        return
    tmp = f"{output}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, output)  # nothing half-written
