"""``regbench screen``: run a screening design over the configuration space and estimate effects."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import NoReturn

import click

from ..errors import ExitStatus
from ._common import (EXECUTOR_DEFAULT, SCHEDULER_DEFAULT, dask_scheduler, rebuild_option, retry_failed_option,
                      where_to_run)


def _design(ctx: click.Context, param: click.Parameter, name: str) -> str:
    """Callback of ``--design``: a design regbench does not know is a usage error (exit status 2),
    said before the configuration is read."""
    from ..screening.base import available_designs  # here: numpy is not for `regbench --help`

    known = available_designs()
    if name not in known:
        raise click.BadParameter(f"unknown design {name!r} (known: {', '.join(known)})")
    return name


@click.command("screen")
@click.option("--design", "design_name", default="fractional", show_default=True, metavar="NAME", callback=_design,
              help="Design: fractional (a regular 2^(k-p) fraction), full (every configuration), "
                   "plackett-burman, doptimal (--size valid configurations D-optimal for the --order model), "
                   "or suite (every combination of the --important options).")
@click.option("--generator", "generators", multiple=True, metavar="'D = ABC'",
              help="A generator of the fraction (repeatable); factors A, B, C... are the [[screen.option]] "
                   "tables in order.  Without one, generators are searched from --size and --resolution.")
@click.option("--size", type=click.IntRange(min=2), metavar="RUNS",
              help="Configurations of a searched fraction (a power of two, at least 4) [default: the smallest "
                   "that reaches --resolution], or of --design doptimal (required: at least the model's "
                   "parameters).")
@click.option("--resolution", type=click.IntRange(3, 10), metavar="R",
              help="Resolution of a searched fraction [default: 4, main effects clear of two-option "
                   "interactions].")
@click.option("--benchmark", metavar="NAME", help="The benchmark measured [default: the only one configured].")
@click.option("--versions", "revisions", metavar="REV_RANGE",
              help="Git versions to screen (as `regbench run --versions`) [default: the working tree].")
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True, metavar="INT",
              help="Runs per configuration and version: their scatter gives the effects' intervals.")
@click.option("--seed", type=click.IntRange(min=0), metavar="INT",
              help="Seed of the randomized interleaved order [default: random, recorded].")
@click.option("--machine", metavar="NAME", help="Machine name the runs are stored under [default: host name].")
@rebuild_option
@retry_failed_option
@click.option("--order", type=click.IntRange(1, 3), default=2, show_default=True,
              help="Estimate main effects (1) and interactions up to this many options; the model of "
                   "--design doptimal (1 or 2); with options of more than two levels, 2 adds the two-option "
                   "interactions to the analysis of variance.")
@click.option("--alias-order", type=click.IntRange(1, 4), default=3, show_default=True,
              help="Report aliases up to this many options.")
@click.option("--augment", type=click.IntRange(min=1), metavar="N",
              help="A follow-up: add N configurations chosen D-optimal (coordinate exchange) for the model "
                   "of the main effects and the --term interactions, under the constraints; the design's "
                   "runs already stored are reused, and the model is analysed with Type III sums of squares.")
@click.option("--term", "terms", multiple=True, metavar="OPT*OPT",
              help="An interaction of the follow-up model (repeatable), such as journal_mode*synchronous.")
@click.option("--important", multiple=True, metavar="OPTION",
              help="For --design suite: an important option (repeatable); the suite is every combination "
                   "of their levels with the other options at random valid levels (drawn with --seed, default 0).")
@click.option("--validate", is_flag=True,
              help="For --design suite: compare the suite with the full set of configurations stored for "
                   "the same benchmark, version and machine (Mann-Whitney, Q-Q, random samples of the same size).")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write the half-normal plot of each version to DIR as PNG and SVG.")
@click.option("--executor", "executor_name", type=click.Choice(["local", "dask"]), default=None,
              help="Where runs are made: here, one at a time, or as tasks of a Dask scheduler whose workers "
                   "each hold the resource benchmark=1 (one run at a time per machine) " + EXECUTOR_DEFAULT + ".")
@click.option("--scheduler", metavar="ADDRESS", help="The Dask scheduler of --executor dask (tcp://HOST:8786) " + SCHEDULER_DEFAULT + ".")
@click.option("--save-suite", "save_suite", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="For --design suite: write the suite's configurations to FILE (TOML), for `regbench run "
                   "--suite FILE` or [screen] suite = \"FILE\" to benchmark every version in each of them.")
@click.option("--notify", is_flag=True,
              help="Send the new recalibration alerts to the sinks of regbench.toml ([[notify]]).")
@click.option("--dry-run", is_flag=True, help="Print the design and its configurations; run nothing.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output: tables, or one JSON document (with --dry-run, one JSON line per configuration).")
@click.pass_obj
def command(ctx, design_name, generators, size, resolution, benchmark, revisions, runs, seed, machine, rebuild,
            retry_failed, order, alias_order, augment, terms, important, validate, plot_dir, executor_name, scheduler,
            save_suite, notify, dry_run, fmt) -> None:
    """Screen the configuration space ([screen] in regbench.toml) with a designed experiment.

    Each configuration of the design is run --runs times per version in randomized interleaved
    order, every run stored as it ends (run the same command again to resume); configurations
    that break a constraint are never run.  Then the main effects and interactions of the
    options are estimated with their aliases (Yilmaz et al. 2007, s.3), importance is decided by
    Lenth's pseudo standard error, and intervals come from the runs' scatter; with several
    versions, effects that changed are listed (recalibration, s.4.8) and each significant change
    is stored as an alert of the series ``effect:OPTION`` (told once, by `regbench alerts notify`
    or --notify).  --augment adds a D-optimal follow-up (s.4.5), --design doptimal a D-optimal
    design from scratch under the constraints, --design suite runs a screening suite (s.4.6-4.7),
    and --save-suite writes it for `regbench run --suite`.  Options of more than two levels
    (--design full) are judged by a Type III analysis of variance.  Runs that failed are not run
    again unless --retry-failed, builds that failed unless --rebuild (as `regbench run`).  Exit
    status 4 when a run or a build failed, or a version has no successful run to estimate from.
    """
    from ..errors import ConfigError
    from ..report.console import echo
    from ..report.screening import (design_lines, emit_screen, emit_screen_json, emit_suite_check,
                                    plot_half_normal, plot_qq, points_lines)
    from ..screening.base import get_design
    from ..screening.campaign import (augmented_design, check_suite, parse_terms, plan_json, plan_points,
                                      run_screen)
    from ..screening.effects import Term
    from ._common import sigterm_as_interrupt

    click_ctx = click.get_current_context()
    _check_usage(click_ctx, design_name=design_name, generators=generators, size=size, resolution=resolution,
                 order=order, augment=augment, terms=terms, important=important, validate=validate,
                 save_suite=save_suite)  # before anything is read or written
    config = ctx.load_config()
    if config.screen is None:
        raise ConfigError(f"{config.path}: no [screen] table: `regbench screen` needs a configuration space "
                          "([[screen.option]] tables, docs/screening.md)")
    options: dict[str, object] = {}
    if generators:
        options["generators"] = list(generators)
    if size is not None:
        options["runs"] = size
    if resolution is not None:
        options["resolution"] = resolution
    space = config.screen
    if design_name == "doptimal":
        options = {"runs": size, "order": order, "rng": seed if seed is not None else 0,
                   "valid": lambda row: space.valid({o.name: o.levels[int(i)]
                                                     for o, i in zip(space.options, row, strict=True)})}
    if design_name == "suite":
        options = {"important": [space.names.index(space.option(n).name) for n in important],
                   "rng": seed if seed is not None else 0,
                   "valid": lambda row: space.valid({o.name: o.levels[int(i)]
                                                     for o, i in zip(space.options, row, strict=True)})}
    if design_name in ("fractional", "plackett-burman", "suite", "doptimal") or augment is not None:
        for o in config.screen.options:
            if not o.binary and (design_name != "suite" or augment is not None):
                raise ConfigError(f"[[screen.option]] {o.name!r} has {len(o.levels)} levels: --design {design_name}"
                                  + (" and --augment need" if augment is not None else " needs")
                                  + " two-level options (--design full takes any number of levels)")
    design = get_design(design_name, **options).build([len(o.levels) for o in config.screen.options])
    model = None
    if augment is not None:
        model = [Term((i,), n) for i, n in enumerate(space.names)] + parse_terms(terms, space)
        design = augmented_design(space, design, model, augment, seed=seed if seed is not None else 0)
    executor_name, scheduler = where_to_run(click_ctx, config, executor_name, scheduler)
    if save_suite is not None:
        from ..screening.suite_file import write_suite

        # Before anything runs (and with --dry-run: the suite is a plan); a file that cannot be
        # written is said at once.
        saved = write_suite(save_suite, space, plan_points(space, design),
                            important=[space.option(n).name for n in important],
                            seed=seed if seed is not None else 0)
        echo(f"suite of {saved} configurations written to {save_suite}: `regbench run --suite {save_suite}` "
             "benchmarks every version in each")
    if dry_run:
        # What the run would refuse of the benchmark, refused here too (a probe: `--benchmark nope
        # --dry-run` printed a design and exited 0).
        from ..screening.campaign import screened_benchmark

        screened_benchmark(config, benchmark)
        if fmt == "json":
            echo(plan_json(plan_points(config.screen, design)))
            return
        for line in design_lines(design):
            echo(line)
        for line in points_lines(tuple(plan_points(config.screen, design))):
            echo(line)
        return
    executor = None
    if executor_name == "dask":
        from ..run.dask_executor import DaskExecutor

        executor = DaskExecutor(dask_scheduler(click_ctx, scheduler))
    store = ctx.open_store(config=config)
    try:
        with sigterm_as_interrupt(), contextlib.ExitStack() as stack:
            if executor is not None:
                stack.enter_context(executor)
            result = run_screen(config, store, design, benchmark=benchmark, revisions=revisions, runs=runs,
                                seed=seed, machine=machine, order=order, alias_order=alias_order, terms=model,
                                executor=executor, retry_failed=retry_failed, rebuild=rebuild)
    except KeyboardInterrupt:
        click.echo("interrupted: the runs made are stored; run the same command again to resume", err=True)
        raise click.exceptions.Exit(ExitStatus.INTERRUPTED) from None
    unit = config.benchmark(result.benchmark).unit
    checks = tuple(check_suite(store, space, result, seed=seed if seed is not None else 0)) if validate else ()
    if fmt == "json":
        emit_screen_json(result, checks)
    else:
        emit_screen(result, unit=unit)
    # With --format json, stdout holds the document only: the plots' paths go to stderr.
    err = fmt == "json"
    if plot_dir is not None:
        for ve in result.effects:
            if ve.effects is not None:
                stem = plot_dir / f"half-normal-{result.benchmark}-{ve.version}".replace("/", "_")
                png, svg = plot_half_normal(ve.effects, stem, title=f"{result.benchmark} at {ve.version}")
                echo(f"half-normal plot: {png} and {svg}", err=err)
    notify_failed = False
    if result.recalibration:
        from ..screening.alerts import record_recalibration

        outcome = record_recalibration(store, config, result)
        if outcome.created or outcome.merged or outcome.suppressed:
            ids = ", ".join(f"#{a.id}" for a in outcome.created)
            echo(f"recalibration alerts: {len(outcome.created)} new{' (' + ids + ')' if ids else ''}, "
                 f"{len(outcome.merged)} already known"
                 + (f", {len(outcome.suppressed)} suppressed" if outcome.suppressed else "")
                 + (f", {len(outcome.held)} held ([alerts] require_machines)" if outcome.held else "")
                 + ("" if notify or len(outcome.created) == len(outcome.held)
                    else "; `regbench alerts notify` sends them"), err=err)
        if notify:
            from ..notify import build_sinks, notify_pending
            from ..report.alerts import print_notify_report

            if not config.notify:
                echo(f"no sinks configured: add a [[notify]] table to {config.path}", err=err)
            else:
                report = notify_pending(store, build_sinks(config.notify))
                if not err:
                    print_notify_report(report)
                notify_failed = not report.ok
    for check in checks:
        if fmt != "json":
            emit_suite_check(check)
        if plot_dir is not None and check.validation is not None:
            stem = plot_dir / f"qq-{result.benchmark}-{check.version}".replace("/", "_")
            png, svg = plot_qq(check.validation, stem, title=f"suite against the full set: {result.benchmark} "
                                                             f"at {check.version}")
            echo(f"Q-Q plot: {png} and {svg}", err=err)
    if not result.ok or notify_failed:
        raise click.exceptions.Exit(ExitStatus.FAILED)


def _check_usage(click_ctx: click.Context, *, design_name: str, generators, size: int | None, resolution: int | None,
                 order: int, augment: int | None, terms, important, validate: bool, save_suite: Path | None) -> None:
    """Options that do not go together, and values wrong whatever the configuration: usage errors
    (exit status 2), found before the configuration is read.  What depends on the configuration
    space (options of more than two levels, unknown option names, a generator's factors, a size
    too small for the model) is said after it is read, with status 3."""
    def fail(message: str) -> NoReturn:
        raise click.UsageError(message, ctx=click_ctx)

    if design_name == "doptimal":
        if generators or resolution is not None:
            fail("--generator and --resolution are options of --design fractional; --design doptimal takes --size "
                 "and --order")
        if size is None:
            fail("--design doptimal needs --size RUNS (at least the model's parameters: 1 + options, plus their "
                 "pairs at --order 2)")
        if order > 2:
            fail(f"--design doptimal: --order {order}: the model is of main effects (--order 1) or main effects "
                 "and two-option interactions (--order 2)")
    elif (generators or size is not None or resolution is not None) and design_name != "fractional":
        fail("--generator, --size and --resolution are options of --design fractional (--size of --design doptimal "
             "too)")
    elif generators and size is not None:
        fail("give --generator (the fraction) or --size (a fraction searched for), not both")
    elif size is not None and (size < 4 or size & (size - 1)):
        fail(f"--size {size}: a fraction's size is a power of two of at least 4 (4, 8, 16, ...)")
    for text in generators:
        if text.count("=") != 1:  # which factors it names is checked once the configuration is read
            fail(f"--generator {text!r}: expected the form 'D = ABC'")
    if bool(important or validate) != (design_name == "suite") or (design_name == "suite" and not important):
        fail("--design suite needs --important OPTION (repeatable); --important and --validate are for --design "
             "suite")
    if save_suite is not None and (design_name != "suite" or augment is not None):
        fail("--save-suite is for --design suite (without --augment)")
    if terms and augment is None:
        fail("--term names the model of a follow-up: give --augment N too")
