"""``regbench run``: run a campaign (build versions, run trials in RMIT order, store every run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..model import RUN_STATUSES

if TYPE_CHECKING:
    from rich.console import Console

    from ..run.campaign import CampaignResult


class ProgressReporter:
    """A :class:`~regbench.run.campaign.CampaignReporter` drawing a rich progress bar on stderr."""

    def __init__(self, console: Console):
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn, TimeRemainingColumn)

        self.console = console
        self.stored = 0
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("{task.fields[current]}"), console=console,
        )
        self._builds = None
        self._trials = None

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(self, *exc) -> None:
        # Started at the first task only: an error before any work prints no empty display.
        if self.progress.live.is_started:
            self.progress.stop()

    def _task(self, label: str, total: int):
        if not self.progress.live.is_started:
            self.progress.start()
        return self.progress.add_task(label, total=total, current="")

    def builds_started(self, n: int) -> None:
        if n:
            self._builds = self._task("build", n)

    def build_done(self, version: str, status: str, cached: bool) -> None:
        if self._builds is not None:
            self.progress.update(self._builds, advance=1, current=version)
        if status != "ok":
            earlier = " (recorded earlier; --rebuild retries it)" if cached else ""
            self.console.print(f"build of {version}: {status}{earlier}; its runs are skipped",
                               markup=False, highlight=False)

    def trials_started(self, total: int, skipped: int) -> None:
        label = "run" if not skipped else f"run ({skipped} already stored)"
        self._trials = self._task(label, total)

    def trial_started(self, benchmark: str, version: str, run_index: int) -> None:
        if self._trials is not None:
            self.progress.update(self._trials, current=f"{benchmark}@{version} #{run_index}")

    def trial_done(self, benchmark: str, version: str, run_index: int, status: str) -> None:
        self.stored += 1
        if self._trials is not None:
            self.progress.update(self._trials, advance=1)
            task = next(t for t in self.progress.tasks if t.id == self._trials)
            if task.total is not None and task.completed > task.total:
                # Adaptive plans add runs beyond the planned ones: the total grows with them.
                self.progress.update(self._trials, total=task.completed)
        if status != "ok":
            self.console.print(f"{benchmark}@{version} run {run_index}: {status}",
                               markup=False, highlight=False)

    def finished(self) -> None:
        if self._trials is not None:
            self.progress.update(self._trials, current="")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def summary(result: CampaignResult, where: str) -> str:
    """The one-paragraph account of a campaign printed at its end."""
    parts = [f"{result.counts.get('ok', 0)} ok"]
    parts += [f"{result.counts[s]} {s}" for s in RUN_STATUSES if s != "ok" and result.counts.get(s)]
    text = (f"Campaign {result.campaign_id} on {result.machine} (seed {result.seed}): "
            f"{_n(result.runs_stored, 'run')} stored ({', '.join(parts)}) over "
            f"{_n(len(result.versions), 'version')}.")
    if result.trials_skipped:
        text += (f" {_n(result.trials_skipped, 'run')} already stored "
                 f"{'was' if result.trials_skipped == 1 else 'were'} not run again.")
    if result.builds_failed:
        text += (f" {_n(len(result.builds_failed), 'version')} failed to build "
                 f"({', '.join(result.builds_failed)}); {_n(result.trials_unbuilt, 'run')} skipped.")
    text += f" Results are in {where}."
    for a in result.adaptive:
        what = f"{a.benchmark}@{a.version}: "
        if a.status == "met":
            text += (f"\n{what}+-{a.relative_half_width:.2%} after {_n(a.runs, 'run')} of {a.iterations} "
                     f"iterations (target +-{a.target:.2%}).")
        else:
            why = {"budget": "its time budget was spent", "max-runs": "the run limit was reached",
                   "failed": "its runs kept failing"}[a.status]
            more = f"; about {_n(a.more_runs, 'more run')} needed" if a.more_runs else ""
            text += (f"\n{what}inconclusive: +-{a.relative_half_width:.2%} after {_n(a.runs, 'run')} "
                     f"(target +-{a.target:.2%}): {why}{more}.")
    return text


@click.command("run")
@click.option("--versions", "revisions", metavar="REV_RANGE",
              help="Git versions to benchmark: A..B (the commits after A up to B, as `git log A..B`; "
                   "write A^..B to include A), a revision, or a comma-separated list; run oldest "
                   "first [default: the working tree as it is].")
@click.option("--releases", metavar="PACKAGE==A..B",
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
@click.option("--rebuild", is_flag=True, help="Build every version again, even if a build is recorded.")
@click.option("--config", "config_name", default="default", show_default=True, metavar="NAME",
              help="Configuration the runs are stored under: measure a setup (say, with noise control) "
                   "apart from the default one, then `regbench compare V V --variance --b-config NAME`.")
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
@click.option("--quiet-load", type=click.FloatRange(min=0, min_open=True), metavar="X",
              help="Before each run, wait until at most this share of the CPUs is busy and the load "
                   "average per CPU (regbench's own runs left out) is at most X.")
@click.option("--quiet-wait", type=click.FloatRange(min=0), metavar="SECONDS",
              help="Longest wait for a quiet machine before each run [default: [noise] quiet_wait, else 60].")
@click.option("--quiet", "quiet_mode", type=click.Choice(["wait", "warn"]),
              help="wait: wait for a quiet machine; warn: do not wait, note a busy one in the run's "
                   "stderr tail [default: wait].")
@click.pass_obj
def command(ctx, revisions, releases, benchmarks, seed, machine, runs, rebuild, config_name, pin, aslr, ramdisk,
            env_size, quiet_load, quiet_wait, quiet_mode) -> None:
    """Build versions and run their benchmarks, storing every run as it ends.

    Runs are fresh processes executed in randomized interleaved order (RMIT), so that machine
    drift cannot look like a change between versions.  A crash, hang or garbage output is
    recorded as the run's status; a version that fails to build is recorded and skipped.
    Runs already stored are not run again: after an interruption, run the same command again
    to resume.  Noise control options override the [noise] table of regbench.toml; what was
    used is recorded with the campaign.
    """
    # Imported here: every command module is imported whenever `regbench` starts.
    from rich.console import Console

    from ..config import noise_control
    from ..run.campaign import run_campaign
    from ._sequential import sigterm_as_interrupt

    config = ctx.load_config()
    given = {"pin": pin, "aslr": aslr, "ramdisk": ramdisk, "env_size": env_size, "quiet_load": quiet_load,
             "quiet_wait": quiet_wait, "quiet": quiet_mode}
    noise = noise_control({k: v for k, v in given.items() if v is not None}, base=config.noise,
                          label=lambda key: "--" + key.replace("_", "-"))
    store = ctx.open_store(config=config)
    console = Console(stderr=True)
    reporter = ProgressReporter(console)
    try:
        with sigterm_as_interrupt(), reporter:
            result = run_campaign(config, store, revisions=revisions, releases=releases,
                                  benchmarks=list(benchmarks) or None,
                                  seed=seed, machine=machine, runs=runs, reporter=reporter,
                                  rebuild=rebuild, noise=noise, config_name=config_name)
    except KeyboardInterrupt:
        click.echo(f"interrupted: {reporter.stored} runs stored; run the same command again to resume",
                   err=True)
        raise click.exceptions.Exit(130) from None
    where = (store.url[len("sqlite:///"):] if store.url.startswith("sqlite:///")
             else store.engine.url.render_as_string(hide_password=True))
    click.echo(summary(result, where))
