"""``regbench diagnose BENCHMARK``: can this benchmark be trusted, and what should change?"""

from __future__ import annotations

import click

from ._common import FiniteFloatRange, configuration_name


@click.command("diagnose")
@click.argument("benchmark")
@click.option("--version", "version_name",
              help="Version to diagnose [default: the latest with two runs of two measured iterations].")
@click.option("--configuration", "config_name", metavar="NAME", callback=configuration_name,
              help="The configuration whose runs are diagnosed [default: the first stored with runs of BENCHMARK; "
                   "the output names it].")
@click.option("--target", default=0.01, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="Wanted relative CI half-width (0.01 = +-1%) for the recommended plan.")
@click.option("--confidence", default=0.99, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the PNG plots [default: diagnose/BENCHMARK in the store's folder].")
@click.option("--no-plots", is_flag=True, help="Do not draw plots.")
@click.option("--option", "options", metavar="NAME=VALUE", multiple=True,
              help="An option of detection's `auto` method, as given to `regbench detect --option` (e.g. "
                   "location=median, outlying=inf), so that the location and levels shown are the ones "
                   "that detection uses.")
@click.option("--all-sessions", is_flag=True,
              help="Also use the runs of compare --run, bisect and --confirm sessions, as `regbench detect "
                   "--all-sessions` does [default: campaigns' runs only, as detect].")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_obj
def command(ctx, benchmark, version_name, config_name, target, confidence, plots_dir, no_plots, options, all_sessions,
            fmt) -> None:
    """One screen that says whether BENCHMARK can be trusted and what to change.

    \b
    Impact factor and within/between-run noise (Kalibera et al. 2005, s.2-3), auto-dependence
    against a random reordering (Kalibera et al. 2005, s.4.1), clusters and the impact factor
    after the clustering additive filter, outliers (Tukey, MAD), warm-up found by MSER-5 (Bulej
    et al. 2005, s.2.2), normality of run means (Bulej et al. 2005, s.3.3), and the cheapest
    runs x iterations for --target (Kalibera et al. 2005, s.3.1). Plots: samples by run
    (Kalibera et al. 2005, fig. 1), lag plot beside its random reordering (figs. 4-5),
    distributions per version (Larres et al. 2013, fig. 4). Papers: docs/references.md.

    The runs are those `regbench detect` reads: versions on the first-parent line of [project]
    branch, the runs of compare --run, bisect and --confirm sessions left out (--all-sessions
    centres them, as detect --all-sessions).
    """
    from ..diagnosis import diagnose
    from ..errors import ConfigError
    from ..pipeline import history_of
    from ..report.console import version_labels
    from ..report.diagnosis import print_diagnosis, write_plots

    from ._common import check_benchmark, check_configuration
    from ._options import parse_detector_options

    detector_options = parse_detector_options("auto", options)
    try:
        config = ctx.config_if_any()
    except ConfigError:
        config = None  # a reading command works without a valid configuration: every version, as without one
    store = ctx.open_store(create=False, config=config)
    check_benchmark(store, benchmark)
    check_configuration(store, config_name)
    history = history_of(store, config, all_sessions=all_sessions)  # the runs a detection reads
    d = diagnose(history, benchmark, version=version_name, config=config_name, target=target, confidence_level=confidence,
                 detector_options=detector_options)
    plots = [] if no_plots else write_plots(store, d, plots_dir, history=history)
    label = version_labels(store.aliases()).get(d.version)
    print_diagnosis(d, target=target, confidence=confidence, plots=plots, fmt=fmt, label=label)
