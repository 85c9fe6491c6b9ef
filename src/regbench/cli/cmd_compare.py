"""``regbench compare A B``: version B against version A, runs as replicates; CI gate.

With ``--variance``: whether the spread changed (Brown-Forsythe test, Larres et al. 2013, s.3.3.1), between
two versions or one version under two setups (``--b-configuration``, ``--b-machine``).
"""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..errors import ExitStatus
from ._common import DURATION, FiniteFloatRange, configuration_name, moved_option, one_benchmark_option

#: Options of the mean comparison only, and of the variance comparison only.
_MEAN_ONLY = ("threshold", "confidence", "seed", "location")
_VARIANCE_ONLY = ("variance_of", "alpha", "b_config", "b_machine")
#: Options of the live sequential comparison (--run) only, and what it shares with the others.
_RUN_ONLY = ("budget", "max_pairs", "settle_size", "duet", "by_mode", "measure")
_RUN_ALLOWED = ("threshold", "seed", "alpha", "location")
#: --threshold of --run when not given: "no change" then means none of 3% or more.
RUN_THRESHOLD = 0.03


@click.command("compare")
@click.argument("a", required=False)
@click.argument("b", required=False)
@click.option("--base", type=click.Choice(["merge-base"]),
              help="Compare against the merge base of the main branch and the compared version (the one "
                   "version given, else HEAD) instead of a version A: the pull-request comparison.")
@click.option("--base-branch", metavar="BRANCH",
              help="With --base merge-base: the main branch [default: [project] branch of regbench.toml, "
                   "else origin/HEAD's branch, else main or master].")
@click.option("--threshold", default=0.0, show_default=True, type=FiniteFloatRange(0),
              help="Relative change that counts as a regression (0.05 = 5%; of |A| for a benchmark compared by "
                   "its difference, one with runs below 0).")
@one_benchmark_option
@click.option("--configuration", "config_name", metavar="NAME", callback=configuration_name,
              help="Only this configuration (both sides).")
@moved_option("--config", "--configuration")
@click.option("--machine", metavar="NAME", help="Only this machine (both sides).")
@click.option("--confidence", default=0.99, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence level of the intervals.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the bootstrap; with --run: of the order within pairs [default with --run: random, "
                   "recorded].")
@click.option("--variance", is_flag=True,
              help="Compare the spread instead of the mean: Brown-Forsythe test (Levene with the median).")
@click.option("--variance-of", type=click.Choice(["runs", "samples"]), default="runs", show_default=True,
              help="With --variance: the run means (runs are the replicates) or all measured iterations pooled.")
@click.option("--alpha", default=0.05, show_default=True, type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
              help="With --variance: significance level of the verdict; with --run: error rate of each "
                   "benchmark's sequential decision.")
@click.option("--b-configuration", "b_config", metavar="NAME", callback=configuration_name,
              help="With --variance: B's configuration, when it differs from A's.")
@moved_option("--b-config", "--b-configuration")
@click.option("--b-machine", metavar="NAME", help="With --variance: B's machine, when it differs from A's.")
@click.option("--run", "live", is_flag=True,
              help="Run A and B (git revisions) now, in interleaved pairs of fresh processes, until an "
                   "always-valid confidence sequence settles each benchmark: a change, or none of "
                   f"--threshold's size [default threshold with --run: {RUN_THRESHOLD:.0%}].")
@click.option("--budget", type=DURATION, metavar="DURATION",
              help="With --run: benchmark time per benchmark, e.g. 90s or 10m [default: --max-pairs only].")
@click.option("--max-pairs", default=100, show_default=True, type=click.IntRange(3),
              help="With --run: pairs of runs per benchmark at most.")
@click.option("--settle-size/--no-settle-size", default=True, show_default=True,
              help="With --run: once a change is certain, go on until it is also certain whether it "
                   "reaches --threshold (--no-settle-size stops at the first decision).")
@click.option("--duet/--no-duet", default=None,
              help="With --run: run A and B of each pair at the same time, each pinned to its own CPU, "
                   "so that interference hits both alike; falls back to interleaved pairs, saying why, "
                   "where it cannot be used [default: [run] duet of regbench.toml, else off].")
@click.option("--by-mode", is_flag=True,
              help="With --run: for a benchmark whose runs land in two levels (modes), match each run with "
                   "a run of the other version in the same mode and compare those (no decision before 12 pairs).")
@click.option("--measure", type=click.Choice(["time", "instructions"]), default="time", show_default=True,
              help="With --run: what each run contributes: its samples' mean (time), or its instruction "
                   "count (perf, else callgrind), which the machine's load does not move; instructions are "
                   "not time, and the output says which measure settled it.")
@click.option("--location", type=click.Choice(["auto", "mean", "median", "low"]),
              help="What of a run's samples it contributes [default: mean]; low: their 10% quantile, a floor "
                   "that interference, which only adds time, hardly moves (their 90% quantile where higher "
                   "is better); auto (stored runs): per benchmark, the location detect chooses for its history "
                   "(as diagnose reports it). The output names the location of each benchmark.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "github"]), default="table", show_default=True,
              help="github: a Markdown comment for a pull request on stdout, also appended to the file "
                   "$GITHUB_STEP_SUMMARY names (the job summary of GitHub Actions).")
@click.pass_context
def command(click_ctx, a, b, base, base_branch, threshold, benchmark, config_name, machine, confidence, seed, variance, variance_of,
            alpha, b_config, b_machine, live, budget, max_pairs, settle_size, duet, by_mode, measure, location, fmt) -> None:
    """Compare version B against version A for every benchmark.

    With --base merge-base, give only the compared version (default HEAD): it is compared with
    the commit it branched from, `git merge-base MAIN HEAD`, as a pull request's benchmark job wants.

    A and B are stored versions (of runs in the store), by name, tag or git revision; with
    --run, git revisions of the project, run now.

    The change is mean(B)/mean(A) - 1 of the means of run means, with a BCa bootstrap interval
    over runs (runs, not iterations, are the unit of replication), widened to Fieller's where
    that is wider (with few runs); with --location, of another location of each run (its
    median, its 10% quantile, or per benchmark the one detect chooses), named in the output. A
    metric with values below 0 (a delta, a score) is compared by the difference B - A in its
    unit instead, a ratio of such values having no direction. Verdicts: regression (whole
    interval worse than --threshold), improvement, no change, inconclusive, and failed (every run
    of B failed where A's succeeded). Exit status 1 when any benchmark regressed or failed, so CI
    can gate on it.

    With --variance: whether the spread changed, by the Brown-Forsythe test (Larres et al. 2013).
    A and B may name the same version when --b-configuration or --b-machine puts B on another
    setup. Verdicts: variance increased, variance decreased, no evidence of a change,
    undecidable. Exit status 0: the variance comparison informs, it does not gate.
    """
    given = {name for name in (*_MEAN_ONLY, *_VARIANCE_ONLY, *_RUN_ONLY)
             if click_ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}
    if live and variance:
        raise click.UsageError("--run and --variance do not go together", ctx=click_ctx)
    if fmt == "github" and (live or variance):
        raise click.UsageError(f"--format github does not apply to {'--run' if live else '--variance'}",
                               ctx=click_ctx)
    if base_branch is not None and base is None:
        raise click.UsageError("--base-branch needs --base merge-base", ctx=click_ctx)
    if base is None and b is None:  # click's words, as when B was a required argument
        raise click.MissingParameter(ctx=click_ctx, param_hint="'A'" if a is None else "'B'", param_type="argument")
    if base is not None:
        if b is not None:
            raise click.UsageError("with --base merge-base give one version, the compared one (default HEAD)",
                                   ctx=click_ctx)
        a, b = _merge_base(click_ctx, a or "HEAD", base_branch, stored=not live), a or "HEAD"
    if live:
        wrong = [n for n in (*_MEAN_ONLY, *_VARIANCE_ONLY) if n in given and n not in _RUN_ALLOWED]
        if wrong:
            raise click.UsageError(f"{_flag(click_ctx, wrong[0])} does not apply to --run", ctx=click_ctx)
        if location == "auto":
            raise click.UsageError("--location auto applies to stored runs, not to --run (give mean, median or low)",
                                   ctx=click_ctx)
        location = location or "mean"
        if measure != "time" and location != "mean":
            raise click.UsageError(f"--location {location} applies to time, not to --measure {measure}", ctx=click_ctx)
        _live(click_ctx, a, b, benchmark=benchmark, config_name=config_name, machine=machine,
              threshold=threshold if "threshold" in given else RUN_THRESHOLD, alpha=alpha,
              seed=seed if "seed" in given else None, budget=budget, max_pairs=max_pairs,
              settle_size=settle_size, duet=duet, by_mode=by_mode,
              measure=None if measure == "time" else measure, location=location, fmt=fmt)
        return
    wrong = [n for n in (_MEAN_ONLY if variance else _VARIANCE_ONLY) if n in given]
    wrong += [n for n in _RUN_ONLY if n in given]
    if wrong:
        opt = _flag(click_ctx, wrong[0])
        if wrong[0] in _RUN_ONLY:
            raise click.UsageError(f"{opt} needs --run", ctx=click_ctx)
        needs = "--variance or --run" if wrong[0] in _RUN_ALLOWED else "--variance"
        raise click.UsageError(f"{opt} does not apply to --variance" if variance else f"{opt} needs {needs}",
                               ctx=click_ctx)
    if variance:
        _variance(click_ctx, a, b, benchmark=benchmark, config=config_name, machine=machine, b_config=b_config,
                  b_machine=b_machine, of=variance_of, alpha=alpha, fmt=fmt)
        return

    from ..analysis import compare_versions, unbuilt
    from ..report.console import version_labels
    from ..report.results import print_comparison

    from ._common import check_benchmark, check_configuration

    store = click_ctx.obj.open_store(create=False)
    check_benchmark(store, benchmark)
    check_configuration(store, config_name)
    rows = compare_versions(store, a, b, benchmark=benchmark, config=config_name, machine=machine,
                            threshold=threshold, confidence_level=confidence, rng=seed, location=location or "mean",
                            history=_history(click_ctx, store) if location == "auto" else None)
    # B's benchmarks failed because B did not build: said under the table and in the comment.
    unbuilt_b = unbuilt(store, rows[0].b) if any(r.verdict == "failed" for r in rows) else None
    if fmt == "github":
        _github(rows, confidence=confidence, threshold=threshold, labels=version_labels(store.aliases()),
                location=location, unbuilt=unbuilt_b)
    else:
        print_comparison(rows, confidence=confidence, threshold=threshold, fmt=fmt,
                         labels=version_labels(store.aliases()), location=location)
        if fmt == "table" and unbuilt_b is not None:
            _say_failed_build(unbuilt_b, version_labels(store.aliases()))
    if any(r.verdict in ("regression", "failed") for r in rows):
        click_ctx.exit(ExitStatus.FOUND)


def _say_failed_build(build, labels) -> None:
    """One line under the table when B's benchmarks failed because B did not build (``build``)."""
    from ..report.console import console
    from ..report.results import failed_build_line

    console.print(failed_build_line(labels.get(build.version, build.version), build.exit_code, build.log_tail)
                  + "; `regbench show --full` has the build's log.")


def _merge_base(click_ctx: click.Context, head: str, branch: str | None, *, stored: bool) -> str:
    """Side A of ``--base merge-base``: the commit ``head`` branched from the main branch at, as
    the store names it (``stored``), or as a full sha (``--run`` runs it)."""
    from ..errors import NotFoundError, VersionError
    from ..run.versions import main_branch, merge_base, revision_resolver

    ctx = click_ctx.obj
    config = ctx.config_if_any()
    repo = ctx.project_repo(config)
    given = branch
    try:
        branch = main_branch(repo, branch if branch is not None else config.branch if config is not None else None)
        sha = merge_base(repo, branch, head)
    except VersionError as exc:
        if given is None or given not in str(exc):
            raise
        # Named by the option that gave it (a probe: "unknown revision 'nope'", no option named).
        raise VersionError(f"--base-branch {given}: {exc}") from None
    if revision_resolver(repo)(head) == sha:
        raise VersionError(f"{head} is the merge base of {branch} and {head} (commit {sha[:10]}): nothing to "
                           "compare it with; compare a branch that has commits of its own")
    if not stored:
        return sha
    try:
        return ctx.open_store(create=False, config=config).resolve_version(sha)
    except NotFoundError:
        raise NotFoundError(f"the merge base of {branch} and {head}, commit {sha[:10]}, has no stored results "
                            f"(run it: regbench run --versions {sha[:10]})") from None


def _history(click_ctx: click.Context, store):
    """The history ``--location auto`` chooses from: the runs ``regbench detect`` reads (the
    first-parent line of [project] branch, sessions left out), as ``regbench diagnose`` does."""
    from ..errors import ConfigError
    from ..pipeline import history_of

    try:
        config = click_ctx.obj.config_if_any()
    except ConfigError:
        config = None  # a reading command works without a valid configuration: every version
    return history_of(store, config, shallow_ok=True)  # a statistic chosen from it, nothing marked checked


def _github(rows, *, confidence: float, threshold: float, labels=None, location: str | None = None,
            unbuilt=None) -> None:
    """``--format github``: the Markdown comment on stdout, and appended to ``$GITHUB_STEP_SUMMARY``."""
    import os

    from ..errors import ConfigError
    from ..report.github import comparison_markdown

    text = comparison_markdown(rows, confidence=confidence, threshold=threshold, labels=labels, location=location,
                               unbuilt=unbuilt)
    click.echo(text, nl=False)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise ConfigError(f"GITHUB_STEP_SUMMARY={summary}: cannot append the job summary: "
                              f"{exc.strerror or exc}") from None


def _flag(click_ctx: click.Context, name: str) -> str:
    """The option of parameter ``name``, as typed (``b_config`` is ``--b-configuration``)."""
    return next(p.opts[0] for p in click_ctx.command.params if p.name == name and p.opts)


def _variance(click_ctx, a, b, *, benchmark, config, machine, b_config, b_machine, of, alpha, fmt) -> None:
    """``--variance``: one row per benchmark, as Larres et al. 2013, tables 3-4 (SD, CV, Levene p)."""
    from ..analysis import compare_variance
    from ..report.results import print_variance

    from ._common import check_configuration

    store = click_ctx.obj.open_store(create=False)
    check_configuration(store, config)
    check_configuration(store, b_config)
    rows = compare_variance(store, a, b, benchmark=benchmark, config=config, machine=machine,
                            b_config=b_config, b_machine=b_machine, of=of, alpha=alpha)
    print_variance(rows, of=of, alpha=alpha, fmt=fmt)


def _live(click_ctx, a, b, *, benchmark, config_name, machine, threshold, alpha, seed, budget, max_pairs,
          settle_size, duet, by_mode, measure, location, fmt) -> None:
    """``compare --run``: settle each benchmark by running A and B in pairs (regbench.run.sequential)."""
    from ..model import DEFAULT_CONFIG
    from ..report.console import emit_json
    from ..report.sequential import LiveReporter, live_title, print_settled, settled_row
    from ..run.sequential import compare_live
    from ._common import sigterm_as_interrupt

    ctx = click_ctx.obj
    config = ctx.load_config()
    store = ctx.open_store(config=config)
    with sigterm_as_interrupt(), LiveReporter() as reporter:
        rows = compare_live(config, store, a, b, benchmarks=[benchmark] if benchmark else None, threshold=threshold,
                            alpha=alpha, budget=budget, max_pairs=max_pairs, seed=seed, machine=machine,
                            config_name=config_name or DEFAULT_CONFIG, reporter=reporter, settle_size=settle_size, duet=duet,
                            by_mode=by_mode, measure=measure, location=location)
    if fmt == "json":
        emit_json([settled_row(r) for r in rows])
    else:
        print_settled(rows, title=live_title(rows, alpha=alpha, threshold=threshold))
    if any(r.gates for r in rows):
        click_ctx.exit(ExitStatus.FOUND)
