"""Campaigns (:func:`regbench.run.campaign.run_campaign`): the progress display while builds and
runs go on, and the paragraph that accounts for a campaign at its end (``regbench run``,
``regbench demo``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..failures import build_failure_cause, failure_cause
from ..model import RUN_STATUSES

if TYPE_CHECKING:
    from rich.console import Console

    from ..model import BuildInfo
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

    def build_done(self, version: str, status: str, cached: bool, log_tail: str | None = None) -> None:
        if self._builds is not None:
            self.progress.update(self._builds, advance=1, current=version)
        if status != "ok":
            earlier = " (recorded earlier; --rebuild retries it)" if cached else ""
            # The exit status is in the log's last line, regbench's note (the reporter is given no more).
            self.console.print(f"build of {version}{earlier}: {build_failure_cause(status, None, log_tail)}; "
                               "its runs are skipped (`regbench show --full` has its log)",
                               markup=False, highlight=False)

    def trials_started(self, total: int, skipped: int) -> None:
        label = "run" if not skipped else f"run ({skipped} already stored)"
        self._trials = self._task(label, total)

    def trial_started(self, benchmark: str, version: str, run_index: int) -> None:
        if self._trials is not None:
            self.progress.update(self._trials, current=f"{benchmark}@{version} #{run_index}")

    def trial_waiting(self, benchmark: str, version: str, run_index: int) -> None:
        """The run waits for another regbench command's run on this machine to end
        (``[noise] exclusive``): said where the run in progress is named."""
        if self._trials is not None:
            self.progress.update(self._trials, current=f"{benchmark}@{version} #{run_index}: waiting for another "
                                                       "regbench run on this machine")

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


#: Causes listed at the end of a campaign, the most frequent first; the rest are counted.
MAX_CAUSES = 8


def failure_lines(result: CampaignResult) -> list[str]:
    """One line per distinct cause of the campaign's failed runs (with how many runs of which
    benchmarks), then what to do."""
    if not result.failed:
        return []
    groups: dict[str, list[str]] = {}
    for f in result.failed:
        groups.setdefault(failure_cause(f.status, f.stderr_tail), []).append(f.trial.benchmark)
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    n = len(result.failed)
    lines = [f"{_n(n, 'run')} failed" + (f", for {len(groups)} causes:" if len(groups) > 1 else ":")]
    for cause, benchmarks in ranked[:MAX_CAUSES]:
        names = list(dict.fromkeys(benchmarks))
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        lines.append(f"  {_n(len(benchmarks), 'run')} of {shown}: {cause}")
    if len(ranked) > MAX_CAUSES:
        rest = sum(len(b) for _, b in ranked[MAX_CAUSES:])
        lines.append(f"  {_n(rest, 'run')} for {len(ranked) - MAX_CAUSES} other causes")
    lines.append("See `regbench show` for their stderr; once the cause is fixed, run the same command with "
                 "--retry-failed to run them again (the failed runs stay stored).")
    return lines


def campaign_summary(result: CampaignResult, where: str, *, builds: Mapping[str, BuildInfo] | None = None) -> str:
    """The one-paragraph account of a campaign printed at its end, then one line per cause of
    its failed runs.

    ``builds`` holds the recorded build of versions that did not build (by name): each gets a
    line saying why (:func:`~regbench.failures.build_failure_cause`), as a failed run's cause is
    said."""
    parts = [f"{result.counts.get('ok', 0)} ok"]
    parts += [f"{result.counts[s]} {s}" for s in RUN_STATUSES if s != "ok" and result.counts.get(s)]
    text = (f"Campaign {result.campaign_id} on {result.machine} (seed {result.seed}): "
            f"{_n(result.runs_stored, 'run')} stored ({', '.join(parts)}) over "
            f"{_n(len(result.versions), 'version')}.")
    if result.trials_skipped:
        text += (f" {_n(result.trials_skipped, 'run')} already stored "
                 f"{'was' if result.trials_skipped == 1 else 'were'} not run again.")
    if result.retried:
        text += f" {_n(result.retried, 'run')} ran again for earlier runs that had failed."
    if result.failed_earlier:
        text += (f" {_n(result.failed_earlier, 'run')} that failed earlier "
                 f"{'was' if result.failed_earlier == 1 else 'were'} not run again: add --retry-failed "
                 "to run them again.")
    if result.builds_failed:
        text += (f" {_n(len(result.builds_failed), 'version')} failed to build "
                 f"({', '.join(result.builds_failed)}); {_n(result.trials_unbuilt, 'run')} skipped.")
    text += f" Results are in {where}."
    for v in result.builds_failed:
        if builds and (b := builds.get(v)) is not None:
            text += f"\nBuild of {v}: {build_failure_cause(b.status, b.exit_code, b.log_tail)}"
    for said in result.changed:
        text += f"\nDefinition changed: {said}."
    for said in result.weak:
        text += f"\nSettings: {said}."
    for said in result.moved_tags:
        text += f"\nTag moved: {said}."
    for _, reason in result.not_run:
        text += f"\nNot run (nothing stored; the same command runs it once a worker offers it): {reason}."
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
    for sp in result.split:
        if sp.groups:
            groups = "; ".join(f"{g.label} {_n(g.runs, 'run')} x {g.iterations} ({_listed(g.units)})"
                               + ("" if g.planned else ", as configured") for g in sp.groups)
            text += f"\n{sp.benchmark}: one invocation per plan ({sp.benchmark}[k], with REGBENCH_SELECT): {groups}."
        else:
            text += f"\n{sp.benchmark}: one invocation for all its plans (the most runs and iterations): {sp.reason}."
    lines = [*unfollowed_lines(result), *failure_lines(result)]
    return "\n".join([text, *lines]) if lines else text


def unfollowed_lines(result: CampaignResult) -> list[str]:
    """One line per series whose runs under a plan did not measure what ``REGBENCH_ITERATIONS``
    asked for (:attr:`CampaignResult.unfollowed`): its plan was not followed, and its time was
    not what ``regbench optimize`` priced."""
    by_series: dict[str, list] = {}
    for u in result.unfollowed:
        by_series.setdefault(u.series, []).append(u)
    lines = []
    for series, found in by_series.items():
        counts = sorted({n for u in found for n in u.reported if n != u.asked})
        shown = (f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}") if counts else "?"
        asked = sorted({u.asked for u in found})
        each = "a process" if any(len(u.reported) > 1 for u in found) else "a run"
        lines.append(f"warning: {series} did not follow its plan: REGBENCH_ITERATIONS asked for "
                     f"{'/'.join(map(str, asked))} samples {each}, {_n(len(found), 'run')} reported {shown} "
                     "(the command must make the tool repeat exactly REGBENCH_ITERATIONS times: "
                     "docs/configuration.md)")
    return lines


def _listed(names: Sequence[str], most: int = 3) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
