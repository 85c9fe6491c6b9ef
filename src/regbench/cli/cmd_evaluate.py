"""``regbench evaluate``: every detector and the baselines on labelled corpora, synthetic and real."""

from __future__ import annotations

import os
from pathlib import Path

import click
from click.core import ParameterSource

from ..errors import ConfigError

#: Options that only shape the synthetic corpus.
SYNTHETIC_OPTIONS = {"shape": "--shape", "seeds": "--seeds", "n_series": "--series", "n_versions": "--versions",
                     "n_runs": "--runs", "n_iterations": "--iterations"}


def _methods(ctx: click.Context, param: click.Parameter, text: str) -> list[str]:
    """Callback of ``--methods``: the method names, an unknown one a usage error (exit status 2)."""
    from ..evaluate import all_methods  # here, not at import: `regbench --help` does not pay for it

    known = all_methods()
    if text.strip() == "all":
        return known
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise click.BadParameter(f"{text!r}: give method names separated by commas, or 'all'")
    for m in names:
        if m not in known:
            raise click.BadParameter(f"unknown method {m!r} (known: {', '.join(known)}, or all)")
    return list(dict.fromkeys(names))


def _shapes(ctx: click.Context, param: click.Parameter, text: str) -> list[str]:
    """Callback of ``--shape``: the noise shapes, an unknown one a usage error (exit status 2)."""
    from ..evaluate import NOISE_SHAPES

    if text.strip() == "all":
        return list(NOISE_SHAPES)
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise click.BadParameter(f"{text!r}: give shape names separated by commas, or 'all'")
    for s in names:
        if s not in NOISE_SHAPES:
            raise click.BadParameter(f"unknown shape {s!r} (known: {', '.join(NOISE_SHAPES)}, or all)")
    return list(dict.fromkeys(names))


def _seeds(ctx: click.Context, param: click.Parameter, text: str) -> list[int]:
    """Callback of ``--seeds``: the seeds, one that is not a non-negative integer a usage error."""
    seeds = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise click.BadParameter(f"{part!r} is not a non-negative integer (give seeds separated by commas)")
        seeds.append(int(part))
    return list(dict.fromkeys(seeds))


@click.command("evaluate")
@click.option("--corpus", "corpora", multiple=True, default=("synthetic",), show_default=True,
              metavar="synthetic|real|PATH",
              help="Corpus to score the methods on: the generated one, the real measurements shipped with "
                   "regbench, or a folder of real measurements; repeat for several.")
@click.option("--shape", default="default", show_default=True, metavar="NAME[,NAME]|all", callback=_shapes,
              help="Noise shapes of the synthetic corpus.")
@click.option("--seeds", "--seed", "seeds", default="0", show_default=True, metavar="LIST", callback=_seeds,
              help="Seeds of the synthetic corpus, separated by commas; each is reported separately.")
@click.option("--methods", default="all", show_default=True, metavar="LIST|all", callback=_methods,
              help="Comma-separated detectors and baselines to evaluate, or 'all'.")
@click.option("--option", "options", metavar="NAME=VALUE", multiple=True,
              help="An option of auto, repeatable, as `regbench detect --option` takes it (also "
                   "confidence_level and min_change): auto is scored with them, under the name "
                   "'auto (NAME=VALUE, ...)'; --methods must include auto.")
@click.option("--series", "n_series", type=click.IntRange(1), default=300, show_default=True,
              help="Series in each synthetic corpus.")
@click.option("--versions", "n_versions", type=click.IntRange(20), default=100, show_default=True,
              help="Versions per synthetic series.")
@click.option("--runs", "n_runs", type=click.IntRange(2), default=None,
              help="Runs per version [default: the shape's].")
@click.option("--iterations", "n_iterations", type=click.IntRange(2), default=None,
              help="Measured iterations per run, after the warm-up [default: the shape's].")
@click.option("--first-runs", "first_runs", type=click.IntRange(1), default=None, metavar="N",
              help="Score real corpora on the first N runs of each version only (their first N rounds): "
                   "what fewer runs would have found [default: every run].")
@click.option("--tolerance", type=click.IntRange(0), default=2, show_default=True,
              help="Versions a detection may come after a true change and still match it.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the result to FILE instead of standard output.")
@click.option("--jobs", type=click.IntRange(1), default=None,
              help="Worker processes [default: the number of CPUs].")
@click.pass_context
def command(ctx: click.Context, corpora, shape, seeds, methods, options, n_series, n_versions, n_runs, n_iterations,
            first_runs, tolerance, fmt, output, jobs) -> None:
    """Score change detectors on labelled corpora, side by side with the Perfherder rule,
    Apache Otava and asv's step detection, and show each method's worst row.

    The synthetic corpus (regbench.evaluate.corpus) mixes quiet series, steps of 1%-40% up and
    down, reverted steps, creeping degradations and bimodal cache hit/miss series where one mode
    moves, at one or more noise shapes (--shape) and seeds (--seeds); it is the same for the same
    options.  The real corpus (regbench.evaluate.real) holds programs measured on a real machine
    at known work ratios.  A detection matches a true change of the same sign at its version or
    up to --tolerance versions later; the rest are false alarms.  Series a method cannot analyse
    (too short for it) are counted and left out of its scores.
    """
    from ..evaluate import evaluate_corpora, load_real_corpus, make_corpus
    from ..evaluate.runner import default_jobs
    from ..report.console import echo
    from ..report.evaluation import EvaluationProgress, evaluation_text, print_evaluation_table

    sources = list(dict.fromkeys(c.strip() for c in corpora if c.strip()))
    if not sources:
        raise click.BadParameter(f"{corpora[-1]!r} is blank: give synthetic, real or a folder", ctx=ctx,
                                 param_hint="'--corpus'")
    # Options that do not go together: usage errors (exit status 2), before anything is read.
    if "synthetic" not in sources:
        given = [flag for name, flag in SYNTHETIC_OPTIONS.items()
                 if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)]
        if given:
            raise click.UsageError(f"{given[0]} applies to the synthetic corpus only (add --corpus synthetic)",
                                   ctx=ctx)
    if options:
        if "auto" not in methods:
            raise click.UsageError("--option applies to auto: add it to --methods", ctx=ctx)
        from ..detect import get_detector
        from ._options import parse_detector_options

        tuned = get_detector("auto", **parse_detector_options("auto", options, common=True))
        # Scored under its own name, next to the other methods (the runner labels a detector object
        # by its ``name``, which its change records carry too).
        tuned.name = f"auto ({', '.join(o.strip() for o in options)})"
        methods = [tuned if m == "auto" else m for m in methods]
    if first_runs is not None and sources == ["synthetic"]:
        raise click.UsageError("--first-runs applies to real corpora only (add --corpus real or --corpus PATH; "
                               "--runs sizes the synthetic one)", ctx=ctx)
    if output is not None:
        parent = Path(output).resolve().parent
        if not parent.is_dir():
            raise ConfigError(f"--output: folder {parent} does not exist")
    # Real corpora are read (and checked) before anything long starts.
    real = {}
    for s in sources:
        if s != "synthetic":
            try:
                real[s] = load_real_corpus(None if s == "real" else s, runs=first_runs)
            except ValueError as exc:  # more runs asked for than the corpus has
                raise ConfigError(f"--first-runs {first_runs}: {str(exc).removeprefix('`runs`: ')}") from None
    jobs = jobs or default_jobs()
    with EvaluationProgress() as progress:
        def each_corpus():
            for source in sources:
                if source != "synthetic":
                    yield real[source]
                    continue
                for name in shape:
                    for seed in seeds:
                        with progress.corpus(f"{name} seed {seed}"):
                            corpus = make_corpus(shape=name, n_series=n_series, n_versions=n_versions,
                                                 n_runs=n_runs, n_iterations=n_iterations, rng=seed)
                        yield corpus

        result = evaluate_corpora(each_corpus(), methods, jobs=jobs, tolerance=tolerance, progress=progress)
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
