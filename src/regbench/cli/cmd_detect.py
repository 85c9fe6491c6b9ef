"""``regbench detect``: changes between versions of every series, with the false discovery rate
controlled across series."""

from __future__ import annotations

import contextlib

import click

from ..detect import DEFAULT_METHOD, available_methods
from ..detect.base import detector_class
from ..config import COMPARE_AS
from ..errors import ExitStatus
from ._common import (DURATION, EXECUTOR_DEFAULT, SCHEDULER_DEFAULT, FiniteFloatRange, dask_scheduler,
                      one_benchmark_option, where_to_run)
from ._options import parse_detector_options

@click.command("detect")
@click.option("--method", type=click.Choice(available_methods()), default=DEFAULT_METHOD, show_default=True,
              help="Detection method (see docs/detection.md for each one and its evaluation).")
@click.option("--min-change", default=None, type=FiniteFloatRange(0),
              help="Smallest relative change worth reporting (0.03 = 3%) [default: the method's own; "
                   "3% for auto and bootstrap-ci, 0 for ci-overlap].")
@click.option("--option", "options", metavar="NAME=VALUE", multiple=True,
              help="An option of the method's own, repeatable: e.g. --option reverted=drop (forecast), "
                   "--option threshold=5 --option back_window=20 (talos-ttest), --option interval=robust "
                   "(ci-overlap). Every method's options are listed in docs/cli.md.")
@one_benchmark_option
@click.option("--confidence", default=0.99, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--fdr", default=0.05, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="False discovery rate controlled across all series (Benjamini-Hochberg) for methods "
                   "that give p-values.")
@click.option("--no-fdr", is_flag=True, help="Report every change the method finds, without FDR control.")
@click.option("--jobs", default=None, type=click.IntRange(1),
              help="Worker processes for large stores [default: the number of CPUs].")
@click.option("--executor", "executor_name", type=click.Choice(["local", "dask"]), default=None,
              help="Where series are analysed: here (--jobs processes), or on the workers of a Dask scheduler, "
                   "each reading the store itself (a PostgreSQL URL, or a SQLite file on a shared disk) " + EXECUTOR_DEFAULT + ".")
@click.option("--scheduler", metavar="ADDRESS", help="The Dask scheduler of --executor dask (tcp://HOST:8786) " + SCHEDULER_DEFAULT + ".")
@click.option("--incremental", is_flag=True,
              help="Check only versions newer than the last pass (auto): cheap enough for every new commit.")
@click.option("--dry-run", is_flag=True, help="Only report: record no alerts and save no detection state.")
@click.option("--notify", is_flag=True, help="Send new alerts to the sinks of regbench.toml ([[notify]]).")
@click.option("--all-sessions", is_flag=True,
              help="Also use the runs of compare --run, bisect and --confirm sessions, each session centred "
                   "on the history's level at the versions it shares with it [default: campaigns' runs only].")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--json-failures", is_flag=True,
              help="With --format json: after the changes, one object of kind failure per benchmark that fails at "
                   "the newest version it ran at (without it the array holds changes only, as scripts expect).")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit with status 1 when a regression is found, or a benchmark fails at the newest version it "
                   "ran at (unless its failure alert is marked invalid or expected); not for benchmarks whose "
                   "alerts regbench.toml suppresses.")
@click.option("--bisect", "do_bisect", is_flag=True,
              help="For each change between versions that are not adjacent commits (nightly snapshots), "
                   "build and benchmark the commits between them to find the one that made it "
                   "(`regbench bisect`, with its defaults).")
@click.option("--confirm/--no-confirm", default=None,
              help="Before alerting, run the two versions of each new change again, in interleaved pairs, "
                   "until a sequential comparison (`compare --run`, threshold: the minimum change) settles "
                   "it; alert only when it confirms the change [default: `confirm` of [detect] in "
                   "regbench.toml, else off].")
@click.option("--confirm-budget", type=DURATION, metavar="DURATION",
              help="With --confirm: benchmark time per change, e.g. 90s or 10m [default: `confirm_budget` "
                   "of [detect], else --confirm-max-pairs only].")
@click.option("--confirm-max-pairs", type=click.IntRange(3), metavar="N",
              help="With --confirm: pairs of runs per change at most [default: `confirm_max_pairs` of "
                   "[detect], else compare --run's 100].")
@click.option("--confirm-as", type=click.Choice(COMPARE_AS), default=None,
              help="With --confirm: what the pairs compare. follow: as the detection summarised the runs (their "
                   "mean, median or 10% quantile) and mode by mode for a change found in one mode of a "
                   "multimodal benchmark; or always mean, median, low, by-mode, or instructions (not time) "
                   "[default: `confirm_as` of [detect], else follow].")
@click.option("--duet/--no-duet", default=None,
              help="With --confirm or --bisect: run the versions of a pair at the same time, each pinned to its "
                   "own CPU, so interference hits both alike [default: [run] duet of regbench.toml].")
@click.pass_context
def command(click_ctx, method, min_change, options, benchmark, confidence, fdr, no_fdr, jobs, executor_name,
            scheduler, incremental, dry_run, notify, all_sessions, fmt, json_failures, fail_on_regression, do_bisect,
            confirm, confirm_budget, confirm_max_pairs, confirm_as, duet) -> None:
    """Walk each series (benchmark x config x machine, versions in history order) and report
    significant changes, each with its magnitude, interval, first version and p-value; a
    benchmark whose runs all fail from some version on is a failure alert.

    A series is read along the first-parent line of [project] branch (default HEAD), with the
    runs of campaigns only (--all-sessions adds those of compare --run, bisect and --confirm).

    auto (default): a change-point search over the whole history confirmed by a hierarchical
    test (runs within versions within segments) and a 3% minimum change. Other methods:
    ci-overlap (Kalibera et al. 2005, s.5), bootstrap-ci (Japke et al. 2025, s.4.5), talos-ttest and forecast
    (Larres et al. 2013, s.5), edivisive (E-Divisive means), clusters (Bulej et al. 2005, s.4.2). A method's own
    options are given with --option NAME=VALUE (docs/cli.md lists them).
    """
    from ..pipeline import check_detect_options, detect_and_alert
    from ..report.alerts import print_notify_report
    from ..report.changes import print_detection
    from ..report.console import BatchProgress, version_labels

    ctx = click_ctx.obj
    if incremental and not detector_class(method).incremental:
        raise click.UsageError(f"--incremental: method {method!r} has no incremental mode (auto has)", ctx=click_ctx)
    if notify and dry_run:  # check_detect_options says the same to callers of the API
        raise click.UsageError("--dry-run records no alerts, so --notify would have nothing to send; drop one of them",
                               ctx=click_ctx)
    if json_failures and fmt != "json":
        raise click.UsageError("--json-failures needs --format json", ctx=click_ctx)
    detector_options = parse_detector_options(method, options)
    config = ctx.config_if_any()
    confirming = _confirm_options(click_ctx, config, confirm, confirm_budget, confirm_max_pairs, confirm_as, duet)
    if duet is not None and confirming is None and not do_bisect:
        raise click.UsageError("--duet/--no-duet needs --confirm or --bisect", ctx=click_ctx)
    check_detect_options(config, dry_run=dry_run, bisect=do_bisect, notify=notify,
                         confirm=confirming is not None)  # before the store is opened
    executor_name, scheduler = where_to_run(click_ctx, config, executor_name, scheduler)
    if jobs is not None and executor_name == "dask":
        raise click.UsageError("--jobs is for --executor local (with dask, the scheduler's workers share the series)",
                               ctx=click_ctx)
    if executor_name == "dask":
        scheduler = dask_scheduler(click_ctx, scheduler)
    store = ctx.open_store(create=False, config=config)
    from ._common import check_benchmark

    check_benchmark(store, benchmark)  # the nearest stored names, as summary and compare give
    with contextlib.ExitStack() as stack:
        pool = None
        if executor_name == "dask":
            from ..run.dask_executor import DaskBatchPool

            pool = stack.enter_context(DaskBatchPool(scheduler))
        outcome = detect_and_alert(
            store, config, method=method, benchmark=benchmark, min_change=min_change, confidence_level=confidence,
            fdr=None if no_fdr else fdr, incremental=incremental, jobs=jobs, dry_run=dry_run, bisect=do_bisect,
            notify=notify, progress=BatchProgress("Detecting"), bisect_reporter=_live_display(),
            on_detected=lambda found: print_detection(found, fmt=fmt, confidence=confidence, min_change=min_change,
                                                      labels=version_labels(store.aliases()),
                                                      machines=store.machine_names(), failures=json_failures),
            options=detector_options, confirm=confirming, confirm_reporter=_live_display(),
            all_sessions=all_sessions, pool=pool, duet=duet)
    if outcome.notified is not None:
        print_notify_report(outcome.notified, err=fmt == "json")
    if not outcome.ok:
        click_ctx.exit(ExitStatus.FAILED)
    if fail_on_regression and outcome.regressed:
        click_ctx.exit(ExitStatus.FOUND)


def _confirm_options(click_ctx, config, confirm: bool | None, budget: float | None, max_pairs: int | None,
                     confirm_as: str | None = None, duet: bool | None = None):
    """How ``--confirm`` runs changes again (options over the ``[detect]`` table over ``compare
    --run``'s defaults), or None when it is off."""
    settings = config.detect if config is not None else None
    on = confirm if confirm is not None else bool(settings and settings.confirm)
    if not on:
        given = [name for name, value in (("--confirm-budget", budget), ("--confirm-max-pairs", max_pairs),
                                          ("--confirm-as", confirm_as)) if value is not None]
        if given:
            raise click.UsageError(f"{given[0]} needs --confirm", ctx=click_ctx)
        return None
    from ..run.confirm import ConfirmOptions

    if budget is None and settings is not None:
        budget = settings.confirm_budget
    if max_pairs is None and settings is not None:
        max_pairs = settings.confirm_max_pairs
    if confirm_as is None:
        confirm_as = settings.confirm_as if settings is not None else "follow"
    extra = {} if max_pairs is None else {"max_pairs": max_pairs}
    return ConfirmOptions(budget=budget, compare_as=confirm_as, duet=duet, **extra)


@contextlib.contextmanager
def _live_display():
    """The live status of the sessions (confirmations, bisections), with SIGTERM handled as Ctrl-C
    while they run."""
    from ..report.sequential import LiveReporter
    from ._common import sigterm_as_interrupt

    with sigterm_as_interrupt(), LiveReporter() as reporter:
        yield reporter
