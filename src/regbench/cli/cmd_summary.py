"""``regbench summary``: result and precision of every experiment (Kalibera et al. 2005, s.3-4)."""

from __future__ import annotations

import click

from ._common import FiniteFloatRange, configuration_name, one_benchmark_option


@click.command("summary")
@one_benchmark_option
@click.option("--version", "version_name", help="Only this version.")
@click.option("--configuration", "config_name", metavar="NAME", callback=configuration_name,
              help="Only this configuration [default: every one].")
@click.option("--confidence", default=0.99, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--warmup-cost", type=click.IntRange(0), default=None,
              help="Warm-up iterations w used for n_opt [default: what the runs discarded].")
@click.option("--no-robust", is_flag=True, help="Skip the robust (resampled) variant.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_obj
def command(ctx, benchmark, version_name, config_name, confidence, warmup_cost, no_robust, fmt) -> None:
    """Per experiment: mean of run means with its confidence interval, the robust variant,
    the impact factor of random initial conditions and the optimal iterations per run.

    \b
    mean ± hw   mean of run means, CI half-width from the between-run and within-run
                variance components (Kalibera et al. 2005, s.3.1, formula 4)
    robust      the same on medians of resampled run means (Kalibera et al. 2005, s.4.2)
    impact      spread of run means / spread within-run noise alone would give (~1: runs alike)
    n_opt       iterations per run minimising (w + n) m for the same precision (rounded up, at
                least 1; --format json gives the real optimum)
    """
    from ..analysis import summarize
    from ..report.console import version_labels
    from ..report.results import print_summary

    from ._common import check_benchmark, check_configuration

    store = ctx.open_store(create=False)
    check_benchmark(store, benchmark)
    check_configuration(store, config_name)
    rows = summarize(store, benchmark=benchmark, version=version_name, config=config_name, confidence_level=confidence,
                     robust=not no_robust, warmup_cost=warmup_cost)
    print_summary(rows, confidence=confidence, fmt=fmt, labels=version_labels(store.aliases()))
