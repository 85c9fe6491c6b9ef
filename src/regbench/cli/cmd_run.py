"""``regbench run``: run a campaign (build versions, run trials in RMIT order, store every run)."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..errors import ExitStatus
from ._common import (EXECUTOR_DEFAULT, SCHEDULER_DEFAULT, FiniteFloatRange, configuration_name, dask_scheduler,
                      moved_option, rebuild_option, retry_failed_option, where_to_run)


def _releases(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Callback of ``--releases``: a spec that does not parse is a usage error (exit status 2),
    said before the configuration is read or the store created."""
    from ..errors import ConfigError
    from ..run.releases import parse_spec

    if value is not None:
        try:
            parse_spec(value)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
    return value


@click.command("run")
@click.option("--versions", "revisions", metavar="REV_RANGE",
              help="Git versions to benchmark: A..B (the commits after A up to B, as `git log A..B`; "
                   "write A^..B to include A), a revision, or a comma-separated list; run oldest "
                   "first [default: the working tree as it is].")
@click.option("--releases", metavar="PACKAGE==A..B", callback=_releases,
              help="Benchmark a package across its releases on PyPI instead of git versions: "
                   "PACKAGE==A..B (every final release from A to B) or PACKAGE==A,B,C; each release is "
                   "installed in its own cached virtual environment.")
@click.option("--benchmark", "benchmarks", multiple=True, metavar="NAME",
              help="Run only this benchmark (repeatable) [default: all].")
@click.option("--seed", type=click.IntRange(min=0), metavar="INT",
              help="Seed of the randomized interleaved order [default: random, recorded].")
@click.option("--machine", metavar="NAME", help="Machine name the runs are stored under [default: host name].")
@click.option("--runs", type=click.IntRange(min=1), metavar="INT",
              help="Runs per benchmark and version, overriding regbench.toml.")
@click.option("--plan", "plan_kind", type=click.Choice(["configured", "optimized"]), default="configured",
              show_default=True,
              help="optimized: run each benchmark with its stored optimized plan (`regbench optimize`); "
                   "benchmarks without one run as configured.")
@rebuild_option
@retry_failed_option
@click.option("--keep-old-runs", is_flag=True,
              help="When a benchmark's definition (command, env, Python function...) changed since it last ran "
                   "here, keep its stored runs in the analyses instead of superseding them and measuring their "
                   "versions again: for an edit that does not change what is measured. Right after a campaign "
                   "that superseded a benchmark's runs, takes them back.")
@click.option("--configuration", "config_name", default="default", show_default=True, metavar="NAME",
              callback=configuration_name,
              help="Configuration the runs are stored under: measure a setup (say, with noise control) "
                   "apart from the default one, then `regbench compare V V --variance --b-configuration NAME` "
                   "(the configuration file is the global --config FILE, before `run`).")
@moved_option("--config", "--configuration")
@click.option("--suite", "suite_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Run every benchmark in each configuration of a screening suite (`regbench screen --design "
                   "suite --save-suite FILE`), each stored under its configuration's name [default: [screen] suite "
                   "of regbench.toml, if set].")
@click.option("--no-suite", is_flag=True, help="Ignore [screen] suite: run the one --configuration.")
@click.option("--pin", metavar="CPUS",
              help="Pin every benchmark process to these CPUs (a list like taskset's: 0,1 or 1-3; "
                   "'none' turns [noise] pin off).")
@click.option("--aslr/--no-aslr", default=None,
              help="--no-aslr runs benchmark processes without address-space randomization "
                   "(as setarch -R) [default: [noise] aslr, else on].")
@click.option("--ramdisk/--no-ramdisk", default=None,
              help="Run in a copy of each version's tree on a tmpfs (/dev/shm) [default: [noise] ramdisk, else off].")
@click.option("--env-size", type=click.IntRange(min=1), metavar="BYTES",
              help="Pad every run's environment to exactly this many bytes.")
@click.option("--quiet-load", type=FiniteFloatRange(min=0, min_open=True), metavar="X",
              help="Before each run, wait until at most this share of the CPUs is busy and the load "
                   "average per CPU (regbench's own runs left out) is at most X.")
@click.option("--quiet-wait", type=FiniteFloatRange(min=0), metavar="SECONDS",
              help="Longest wait for a quiet machine before each run [default: [noise] quiet_wait, else 60].")
@click.option("--quiet", "quiet_mode", type=click.Choice(["wait", "warn"]),
              help="wait: wait for a quiet machine; warn: do not wait, note a busy one in the run's "
                   "stderr tail [default: wait].")
@click.option("--executor", "executor_name", type=click.Choice(["local", "dask"]), default=None,
              help="Where runs are made: here, one at a time, or as tasks of a Dask scheduler whose workers "
                   "each hold the resource benchmark=1 (one run at a time per machine); each run is stored "
                   "under its worker's machine, with that machine's fingerprint " + EXECUTOR_DEFAULT + ".")
@click.option("--scheduler", metavar="ADDRESS", help="The Dask scheduler of --executor dask (tcp://HOST:8786) " + SCHEDULER_DEFAULT + ".")
@click.pass_obj
def command(ctx, revisions, releases, benchmarks, seed, machine, runs, plan_kind, rebuild, retry_failed, keep_old_runs,
            config_name,
            suite_file, no_suite, pin, aslr, ramdisk,
            env_size, quiet_load, quiet_wait, quiet_mode, executor_name, scheduler) -> None:
    """Build versions and run their benchmarks, storing every run as it ends.

    Runs are fresh processes executed in randomized interleaved order (RMIT), so that machine
    drift cannot look like a change between versions.  A crash, hang or garbage output is
    recorded as the run's status; a version that fails to build is recorded and skipped.
    Runs already stored are not run again: after an interruption, run the same command again
    to resume (--retry-failed also runs again those that failed).  A benchmark edited since its
    runs were stored (what it runs, not how often) supersedes them: they stay stored, out of
    every analysis, and its versions run again (--keep-old-runs keeps them).  With a screening suite
    (--suite, or [screen] suite), every configuration of the suite is a campaign of its own, its
    runs stored under the configuration's name.  Exit status 4 when a run or
    a build failed, with one line per cause.  Noise control options override the [noise] table of regbench.toml; what was
    used is recorded with the campaign.
    """
    # Imported here: every command module is imported whenever `regbench` starts.
    import contextlib

    from ..config import noise_control
    from ..errors import ConfigError
    from ..report.campaign import ProgressReporter, campaign_summary, store_location
    from ..run.campaign import run_campaign
    from ._common import sigterm_as_interrupt

    click_ctx = click.get_current_context()
    _check_usage(click_ctx, revisions=revisions, releases=releases, runs=runs, plan_kind=plan_kind,
                 suite_file=suite_file, no_suite=no_suite)  # before anything is read or written
    given = {"pin": pin, "aslr": aslr, "ramdisk": ramdisk, "env_size": env_size, "quiet_load": quiet_load,
             "quiet_wait": quiet_wait, "quiet": quiet_mode}
    given = {k: v for k, v in given.items() if v is not None}

    def label(key: str) -> str:
        return "--" + key.replace("_", "-")

    try:  # the values alone, before the configuration is read: a bad one is a usage error
        noise_control(given, label=label)
    except ConfigError as exc:
        raise click.UsageError(str(exc), ctx=click_ctx) from None
    config = ctx.load_config()
    # The executor may be [run] executor of the configuration: these usage errors come after it is read.
    executor_name, scheduler = where_to_run(click_ctx, config, executor_name, scheduler)
    if machine is not None and executor_name == "dask":
        raise click.UsageError("--machine names the runs made here; with --executor dask a run is stored under its "
                               "worker's machine (its host name, or REGBENCH_MACHINE where the worker starts)",
                               ctx=click_ctx)
    noise = noise_control(given, base=config.noise, label=label)
    executor = None
    if executor_name == "dask":  # before the store is opened: an unreachable scheduler writes nothing
        from ..run.dask_executor import DaskExecutor

        executor = DaskExecutor(dask_scheduler(click_ctx, scheduler))
    suite = None
    if not no_suite:
        from ..screening.suite_file import read_suite, suite_path

        path = suite_path(config, suite_file)
        if path is not None:
            if config.screen is None:
                raise ConfigError(f"--suite {path}: {config.path or 'regbench.toml'} has no [screen] table, whose "
                                  "options the suite's levels set")
            # The suite of [screen] suite: the same usage errors as with --suite FILE.
            _check_suite_usage(click_ctx, plan_kind)
            suite = read_suite(path, config.screen)  # before the store is opened: a bad file writes nothing
    # Optimized plans are read from the store: it must exist (a new one would hold none), and it is
    # opened at its first use, so that one without plans is refused as it is (plans_for_campaign).
    store = ctx.open_store(config=config, create=plan_kind != "optimized", lazy=True)
    if benchmarks:  # a name a tool reports is checked against what it reported in the store
        stored = store.benchmark_names_unopened()
        for name in benchmarks:
            config.benchmark(name, stored=stored)
    optimized = None
    if plan_kind == "optimized":
        from ..optimize.plans import plans_for_campaign
        from ..run.fingerprint import default_machine_name

        names = [b.name for b in config.benchmarks]
        here = machine or default_machine_name()
        edited = None
        if not keep_old_runs:
            def edited():
                """The benchmarks whose definition this campaign changes (it supersedes their
                runs): a plan derived from the runs of the old definition is stale (edited_plan).
                Read once the store is known to hold plans (an older one is refused unchanged)."""
                from ..run.definitions import changed_definitions

                asked = {n.partition("/")[0] for n in benchmarks} | set(benchmarks)  # a tool's SPEC/REPORTED
                chosen = [b for b in config.benchmarks if not benchmarks or b.name in asked]
                return {c.benchmark: c.origins for c in changed_definitions(
                    store, chosen, machine=here, config_name=config_name, benchmark_dir=config.benchmark_dir)}
        optimized = plans_for_campaign(store, list(benchmarks) or names, configured=names, config=config_name,
                                       machine=here, edited=edited)
        for note in optimized.notes:
            click.echo(f"warning: {note}", err=True)
    reporter = ProgressReporter()
    stored = 0
    try:
        with sigterm_as_interrupt(), contextlib.ExitStack() as stack:
            if executor is not None:
                stack.enter_context(executor)

            trees = None
            built = False

            def campaign(cfg, name: str):
                nonlocal reporter, stored, built
                stored += reporter.stored  # the suite's campaigns before this one
                # --rebuild: once; the suite's later campaigns use the builds of the first
                again, built = rebuild and not built, True
                reporter = ProgressReporter()
                with reporter:
                    return run_campaign(cfg, store, revisions=revisions, releases=releases,
                                        benchmarks=list(benchmarks) or None,
                                        seed=seed, machine=machine, runs=runs, reporter=reporter,
                                        rebuild=again, noise=noise, config_name=name,
                                        retry_failed=retry_failed, optimized=optimized, executor=executor,
                                        trees=trees, keep_old_runs=keep_old_runs)

            if suite is None:
                results = [(config_name, campaign(config, config_name))]
            else:
                from pathlib import Path

                from ..run.campaign import check_campaign, check_environment_size
                from ..run.core import default_cache_dir, select_benchmarks, store_dir
                from ..run.versions import Worktrees
                from ..screening.suite_file import run_suite

                cache_dir = default_cache_dir(config, store)
                # What the first campaign would refuse (an unknown benchmark, a revision git does
                # not know), before the suite's configurations are stored: a refused suite writes nothing.
                checked = check_campaign(config, revisions=revisions, releases=releases,
                                         benchmarks=list(benchmarks) or None, runs=runs, noise=noise,
                                         ignore=[p for p in (store_dir(store), cache_dir) if p is not None])

                def check_env(applied) -> None:  # each configuration's environment, as its campaign will
                    check_environment_size(applied, select_benchmarks(applied, list(benchmarks) or None),
                                           checked.versions, checked.noise, runs=runs)
                # One set of worktrees for the suite's campaigns: each version is checked out and
                # built once, not once per configuration.
                trees = stack.enter_context(Worktrees(Path(config.repo or config.root), cache_dir, keep=config.build_cache))
                results = run_suite(config, store, suite, run=campaign, benchmarks=list(benchmarks) or None,
                                    template_dir=cache_dir.parent / "screen-files", check=check_env)
    except KeyboardInterrupt:
        n = stored + reporter.stored
        click.echo(f"interrupted: {n} run{'' if n == 1 else 's'} stored; run the same command again to resume",
                   err=True)
        raise click.exceptions.Exit(ExitStatus.INTERRUPTED) from None
    # The recorded build of each version that did not build, the last failed one (the summary says why).
    unbuilt = {b.version: b for b in store.builds() if b.status != "ok"}
    for name, result in results:
        if suite is not None:
            click.echo(f"configuration {name}:")
        click.echo(campaign_summary(result, store_location(store), builds=unbuilt))
    if not all(result.ok for _, result in results):
        raise click.exceptions.Exit(ExitStatus.FAILED)


def _check_usage(click_ctx: click.Context, *, revisions, releases, runs, plan_kind: str, suite_file,
                 no_suite: bool) -> None:
    """Options that do not go together: usage errors (exit status 2), found before the
    configuration is read.  :func:`regbench.run.campaign.run_campaign` refuses the same
    combinations with a ConfigError for callers of the API."""
    if runs is not None and plan_kind == "optimized":
        raise click.UsageError("give --runs or --plan optimized, not both", ctx=click_ctx)
    if revisions is not None and releases is not None:
        raise click.UsageError("give --versions (git) or --releases (a package's releases), not both", ctx=click_ctx)
    if suite_file is not None and no_suite:
        raise click.UsageError("give --suite FILE or --no-suite, not both", ctx=click_ctx)
    if suite_file is not None:
        _check_suite_usage(click_ctx, plan_kind)


def _check_suite_usage(click_ctx: click.Context, plan_kind: str) -> None:
    """What a run of a suite (--suite FILE, or [screen] suite) does not take."""
    if click_ctx.get_parameter_source("config_name") is not ParameterSource.DEFAULT:
        raise click.UsageError("--configuration names the one configuration of a run; a suite names its own "
                               "(give --no-suite to run one configuration)", ctx=click_ctx)
    if plan_kind == "optimized":
        raise click.UsageError("--plan optimized is not offered with a suite: give --no-suite", ctx=click_ctx)
