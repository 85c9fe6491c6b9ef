"""Campaigns (:func:`regbench.run.campaign.run_campaign`): the progress display while builds and
runs go on, and the paragraph that accounts for a campaign at its end (``regbench run``,
``regbench demo``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import RUN_STATUSES

if TYPE_CHECKING:
    from rich.console import Console

    from ..run.campaign import CampaignResult
    from ..store import Store


class ProgressReporter:
    """A :class:`~regbench.run.campaign.CampaignReporter` drawing a rich progress bar on stderr.

    ``stored`` counts the runs stored so far, for the message of an interrupted campaign.
    """

    def __init__(self, console: Console | None = None):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn, TimeRemainingColumn)

        self.console = console if console is not None else Console(stderr=True)
        self.stored = 0
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("{task.fields[current]}"), console=self.console,
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


def store_location(store: Store) -> str:
    """Where a store is, for people: a SQLite file's path, else its URL without the password."""
    return (store.url[len("sqlite:///"):] if store.url.startswith("sqlite:///")
            else store.engine.url.render_as_string(hide_password=True))


def campaign_summary(result: CampaignResult, where: str) -> str:
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
