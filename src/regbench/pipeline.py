"""The pipelines that chain several steps, as plain functions that return a result object.

- :func:`detect_and_alert`: detect changes over a store, confirm the new ones by running them
  again, record them as alerts, bisect those between versions that are not adjacent commits,
  and notify the sinks (seed 001 fig. 1: detect, then the notification repository);
  ``regbench detect``.
- :func:`run_demo`: create the demo project, run its campaign and detect its changes;
  ``regbench demo``.

They print nothing: what they did comes back as a frozen dataclass, which
:mod:`regbench.report` renders. Progress goes to reporters handed in; a reporter that is a
context manager is entered only while its step runs, so one live display is drawn at a time.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .detect.driver import BatchPool, DetectionResult
    from .config import ProjectConfig
    from .demo_project import DemoRepo
    from .detect.alerts import AlertOutcome, Step
    from .detect.base import Change
    from .detect.notes import SeriesNote
    from .model import Alert, Confirmation, Failing, NoLongerRun
    from .notify import NotifyReport
    from .run.bisect import BisectResult, FailureBisection
    from .run.confirm import ConfirmOptions
    from .run.rerun import Skipped
    from .run.campaign import CampaignReporter, CampaignResult
    from .store import HistoryView, Store


# ----------------------------------------------------------------------------- detect and alert
@dataclass(frozen=True)
class DetectedChange:
    """One change found by :func:`detect_and_alert`, with what confirmation and bisection made of it.

    Attributes
    ----------
    change : Change
        The change as detected.
    bisection : BisectResult or None
        Its bisection (shared by the series that show the same step), or None when it was not
        bisected.
    not_bisected : str or None
        Why bisection left it alone (``"its versions are adjacent commits: nothing between
        them"``, ...), when bisection was asked for; else None.
    confirmation : Confirmation or None
        What running it again said (confirmed, refuted, inconclusive, or unconfirmed with the
        reason it could not be run here), when confirmation was asked for and the change would
        have been a new alert; else None.
    not_confirmed : str or None
        Why confirmation did not run it (``"already alert #3"``, suppressed), when confirmation
        was asked for; else None.
    alert : Alert or None
        The alert it was recorded into (its own, or another machine's as evidence), as at the
        end of the detection; None in a dry run, and when it was not recorded.
    told_before : bool
        Reported again, not found anew: an incremental pass searched its series again in full
        for late runs, the change lies among versions checked before
        (:meth:`regbench.detect.driver.DetectionResult.checked_before`), and before this pass an
        alert told it, not held, with this machine among those that show it.  It neither fails
        the gate nor is bisected again.
    suppressed : bool
        Its benchmark's alerts are suppressed by ``regbench.toml`` (``alerts = false``, ``[alerts]
        suppress``): it is listed, not recorded as an alert, and it does not fail the gate.
    """

    change: Change
    bisection: BisectResult | None = None
    not_bisected: str | None = None
    confirmation: Confirmation | None = None
    not_confirmed: str | None = None
    alert: Alert | None = None
    told_before: bool = False
    suppressed: bool = False
    #: Its alert told it before this pass, with this machine among those that showed it, and a
    #: later change fixed it (before or in this pass): the history's newest versions no longer
    #: carry it, and it does not gate (a probe: every full pass on ``main`` failed for a regression
    #: reverted long ago).  A regression found together with its undoing in one pass still gates
    #: (it is news), and so does a machine that showed it for the first time.
    undone: bool = False

    @property
    def held(self) -> bool:
        """Whether its alert is held: seen on fewer machines than ``[alerts] require_machines``."""
        return self.alert is not None and self.alert.held

    @property
    def alerts(self) -> bool:
        """Whether the change is (or, in a dry run, would be) an alert that is told: not refuted
        nor left inconclusive by confirmation, and not held."""
        return (self.confirmation is None or self.confirmation.alerts) and not self.held

    @property
    def gates(self) -> bool:
        """Whether it fails ``detect --fail-on-regression``: a regression that alerts
        (:attr:`alerts`), not told before, not suppressed, whose alert no person marked
        ``invalid`` or ``expected`` (a back-filled old version makes an incremental pass report
        the steps after it again, and those already triaged must not fail a later commit), and
        not :attr:`undone`."""
        return (self.change.kind == "regression" and self.alerts and not self.told_before and not self.suppressed
                and not _triaged(self.alert) and not self.undone)


@dataclass(frozen=True)
class DetectOutcome:
    """What :func:`detect_and_alert` did.

    Attributes
    ----------
    detection : DetectionResult
        The changes, the series and hypotheses examined, and what false-discovery-rate control
        did.
    alerts : AlertOutcome or None
        What became of the changes as alerts; None for a dry run (nothing recorded).
    changes : tuple of DetectedChange
        One per change of ``detection.changes``, in the same order, each with its confirmation
        and bisection or the reasons they left it alone.
    bisect : bool
        Whether bisection was asked for (with no change, nothing was bisected all the same).
    notified : NotifyReport or None
        What the sinks of ``[[notify]]`` did; None until they are notified, and when they were
        not asked to be.
    confirm : bool
        Whether confirmation was asked for.
    history : str or None
        What history the series were read as (:meth:`regbench.store.HistoryView.describe`).
    failing : tuple of Failing
        The series failing at the newest version they ran at, read as the same history
        (:func:`regbench.inventory.scan_failures`): no detector sees them; each is a failure alert
        (``alerts.failures``) unless suppressed or in a dry run.
    no_longer_run : tuple of NoLongerRun
        The series that failed at the newest version they ran at and are no longer run since
        (removed from the suite, or renamed; :func:`regbench.inventory.no_longer_run`): not in
        ``failing``, they do not gate, and their open failure alerts are fixed.
    suppressed_failures : tuple of Failing
        The series of ``failing`` whose benchmark's alerts are suppressed by ``regbench.toml``:
        listed, with no alert, and they do not gate.
    failure_bisections : mapping
        With ``bisect``: the first failing commit of each failing series whose failure alert is
        not marked ``invalid`` or ``expected`` and not suppressed (:attr:`broken`), found between its last working
        version and its first failing one (:func:`regbench.run.bisect.bisect_failures`), by
        :attr:`Failing.series`.
    failures_not_bisected : mapping
        With ``bisect``: why such a failing series was not bisected, by series.
    """

    detection: DetectionResult
    alerts: AlertOutcome | None
    changes: tuple[DetectedChange, ...]
    bisect: bool = False
    notified: NotifyReport | None = None
    confirm: bool = False
    history: str | None = None
    failing: tuple[Failing, ...] = ()
    no_longer_run: tuple[NoLongerRun, ...] = ()
    suppressed_failures: tuple[Failing, ...] = ()
    failure_bisections: Mapping[tuple[str, str, str], FailureBisection] = field(default_factory=dict)
    failures_not_bisected: Mapping[tuple[str, str, str], str] = field(default_factory=dict)
    #: The throughputs that fell to exactly 0 at their newest versions, which detection leaves
    #: out as no measurement (:mod:`regbench.detect.notes`), but those of a suppressed benchmark.
    zeroed: tuple[SeriesNote, ...] = ()
    #: An incremental pass's open regression alerts at the history's newest version that no change
    #: of this pass gates already (:func:`standing_regressions`): they gate, so that a pass over
    #: the same commit again answers as the pass that found them.
    standing: tuple[Alert, ...] = ()

    @property
    def regressed(self) -> bool:
        """Whether any change found is a regression that gates (:attr:`DetectedChange.gates`: one
        that confirmation refuted or left inconclusive does not, nor one whose alert is held,
        fixed or was marked ``invalid`` or ``expected`` by a person, nor one told before, nor one
        of a suppressed benchmark), or an incremental pass has a regression alert open at the
        newest version (:attr:`standing`), or a benchmark fails at the newest version it ran at
        (:attr:`broken`), or a throughput fell to 0 at its newest versions (:attr:`zeroed`)."""
        return (any(e.gates for e in self.changes) or bool(self.standing) or bool(self.broken)
                or bool(self.zeroed))

    @property
    def broken(self) -> tuple[Failing, ...]:
        """The failing series that gate as a regression does: all but those of a suppressed
        benchmark (:attr:`suppressed_failures`) and those whose failure alert a person marked
        ``invalid`` (a broken benchmark, known) or ``expected``."""
        suppressed = {f.series for f in self.suppressed_failures}
        return tuple(f for f in self.untriaged if f.series not in suppressed)

    @property
    def untriaged(self) -> tuple[Failing, ...]:
        """The failing series but those whose failure alert a person marked ``invalid`` or
        ``expected`` (in a dry run, all), suppressed ones included."""
        if self.alerts is None:
            return self.failing
        alerts = self.alerts
        return tuple(f for f in self.failing if not _triaged(alerts.failure_of(f)))

    @property
    def suppressed_regressions(self) -> tuple[DetectedChange, ...]:
        """The regressions found in a suppressed benchmark, which would gate but for that."""
        return tuple(e for e in self.changes if e.suppressed and e.change.kind == "regression")

    @property
    def ok(self) -> bool:
        """False when a sink failed to take its alerts."""
        return self.notified is None or self.notified.ok


def _keep_bisections(store: Store, found: list[tuple[int, BisectResult | FailureBisection]]) -> dict[int, Alert]:
    """Keep each bisection with the alerts it was for (:func:`regbench.detect.alerts.record_bisection`;
    a bisection shared by the series of one step, once); the alerts as updated, by id.  One that
    stopped because GOOD or BAD did not build is not kept: it is no answer, and the next pass
    with ``--bisect`` tries again."""
    from .detect.alerts import record_bisection

    by_result: dict[int, tuple[BisectResult | FailureBisection, list[int]]] = {}
    for alert_id, result in found:
        by_result.setdefault(id(result), (result, []))[1].append(alert_id)
    kept: dict[int, Alert] = {}
    for result, ids in by_result.values():
        if result.status == "unbuilt":  # no answer (a build failed: a registry down, a full disk): try again
            continue
        culprit = result.culprit if result.status == "found" else None
        kept |= {a.id: a for a in record_bisection(store, ids, culprit, result.summary())}
    return kept


def standing_regressions(store: Store, history: HistoryView, config: ProjectConfig | None, *,
                         benchmark: str | None, entries: tuple[DetectedChange, ...]) -> tuple[Alert, ...]:
    """The open regression alerts (``new`` or ``acknowledged``, not held, of a benchmark whose
    alerts are not suppressed) whose change first shows at the history's newest version, on any
    machine, but those of ``entries`` that gate already.

    An incremental pass searches only the versions no pass checked: a CI job run again on the
    same commit (its runs stored already) found nothing new and passed where the first run of
    the job failed (a probe).  A regression at the commit under test keeps failing the gate on
    every pass over that commit, as a failing benchmark does, until someone triages its alert,
    a later change fixes it, or a newer commit is the newest version.
    """
    from .detect.alerts import is_suppressed
    from .model import OPEN_ALERT_STATUSES, SeriesName
    from .store.alerts import list_alerts

    versions = history.versions()
    if not versions:
        return ()
    tip = versions[-1].name
    gating = {e.alert.id for e in entries if e.alert is not None and e.gates}
    out = []
    for a in list_alerts(store):
        if a.kind != "regression" or a.status not in OPEN_ALERT_STATUSES or a.held or a.id in gating:
            continue
        if benchmark is not None and benchmark not in (a.benchmark, SeriesName.parse(a.benchmark).benchmark):
            continue
        if is_suppressed(config, a.benchmark):
            continue
        if a.version == tip or any(e.version == tip for e in a.also_on):
            out.append(a)
    return tuple(out)


def _undone(change: Change, told: Alert | None, now: Alert | None) -> bool:
    """:attr:`DetectedChange.undone`: ``told`` is the change's alert before this pass, ``now`` as
    this pass left it (None in a dry run: as before)."""
    if told is None or change.machine not in told.machines:
        return False
    return (now if now is not None else told).status == "fixed"


def _triaged(alert: Alert | None) -> bool:
    """Whether a person marked the alert ``invalid`` (noise, a broken benchmark) or ``expected``:
    it no longer gates."""
    return alert is not None and alert.status in ("invalid", "expected")


def check_detect_options(config: ProjectConfig | None, *, dry_run: bool = False, bisect: bool = False,
                         notify: bool = False, confirm: bool = False) -> None:
    """Refuse combinations of :func:`detect_and_alert`'s options that cannot work.

    Raises
    ------
    ConfigError
        ``notify`` with ``dry_run`` (nothing recorded, nothing to send), ``notify`` without
        ``[[notify]]`` sinks, or ``bisect`` or ``confirm`` without a configuration (what to build
        and run).
    """
    if notify and dry_run:
        raise ConfigError("--dry-run records no alerts, so --notify would have nothing to send; drop one of them")
    if notify and (config is None or not config.notify):
        raise ConfigError("--notify needs [[notify]] sinks in regbench.toml (see docs/configuration.md)")
    if bisect and config is None:
        raise ConfigError("--bisect needs regbench.toml (the benchmarks and the repository to build)")
    if confirm and config is None:
        raise ConfigError("--confirm needs regbench.toml (the benchmarks and the repository to build)")


def detect_and_alert(store: Store, config: ProjectConfig | None, *, method: str, benchmark: str | None = None,
                     min_change: float | None = None, confidence_level: float = 0.99, fdr: float | None,
                     incremental: bool = False, jobs: int | None = None, dry_run: bool = False,
                     bisect: bool = False, notify: bool = False, progress=None, bisect_reporter=None,
                     on_detected: Callable[[DetectOutcome], None] | None = None,
                     options: Mapping[str, Any] | None = None, confirm: ConfirmOptions | None = None,
                     confirm_reporter=None, all_sessions: bool = False, pool: BatchPool | None = None,
                     duet: bool | None = None) -> DetectOutcome:
    """Detect changes, confirm the new ones, record them as alerts, bisect them, and tell the sinks;
    benchmarks that start failing become failure alerts too.

    Parameters
    ----------
    store : Store
    config : ProjectConfig or None
        The project's configuration: alert suppression, the ``[[notify]]`` sinks, and what
        bisection builds and runs. None when there is no ``regbench.toml``.
    method, benchmark, min_change, confidence_level, fdr
        Of the detection (:func:`regbench.detect.driver.detect_changes`); ``fdr`` is the false
        discovery rate controlled across series, None for none.
    incremental : bool
        Check only versions newer than the last saved pass.
    jobs : int, optional
        Worker processes of a full pass [default: the number of CPUs].
    pool : BatchPool, optional
        Detect on these workers instead (``regbench detect --executor dask``,
        :class:`regbench.run.dask_executor.DaskBatchPool`): the series are read by the workers
        from the shared store; alerts are recorded here, as for a local pass.
    dry_run : bool
        Record no alerts and save no detection state.
    bisect : bool
        Bisect every change between versions that are not adjacent commits
        (:func:`regbench.run.bisect.bisect_changes`).
    notify : bool
        Send the alerts not yet sent to the sinks of ``config.notify``.
    progress : callable, optional
        ``progress(done, total)`` during detection; entered while detecting when it is a
        context manager.
    bisect_reporter : SessionReporter, optional
        Told of the bisections' progress; entered while bisecting when it is a context manager.
    on_detected : callable, optional
        Called with the outcome before any sink is notified, so that what was found can be
        shown before the sinks (a terminal sink among them) speak.
    options : mapping, optional
        More options of the detector (its own keyword arguments, ``regbench detect --option``).
    confirm : ConfirmOptions, optional
        Confirm before alerting (``--confirm``): every change that would create a new alert
        (:func:`regbench.detect.alerts.known_alerts`; not a suppressed one) is run again by
        :func:`regbench.run.confirm.confirm_changes` with the detection's minimum change as the
        threshold, and becomes an alert only when confirmed, or when it cannot be run here
        (marked unconfirmed).  Refuted and inconclusive changes are not alerted, nor bisected;
        their confirmation is recorded alone.  In a dry run they are run all the same (every
        run is stored) and nothing is recorded.  None: no confirmation.
    confirm_reporter : SessionReporter, optional
        Told of the confirmations' progress; entered while confirming when it is a context
        manager.
    all_sessions : bool
        Put the runs of sessions (``compare --run``, ``bisect``, ``detect --confirm``) in the
        histories, each session centred on the history's level; by default they are left out.
        Either way the series are read along the first-parent line of ``[project] branch``
        (default HEAD) of the project's repository (:func:`history_of`).
    duet : bool, optional
        Bisections run the versions of a pair at the same time, each pinned to its own CPU
        (confirmations take it from ``confirm.duet``); None: ``[run] duet``.

    Returns
    -------
    DetectOutcome

    Raises
    ------
    ConfigError
        For the combinations :func:`check_detect_options` refuses, before any work.
    """
    from .detect.driver import detect_changes, save_detection_state
    from .inventory import scan_failures
    from .silence import Retirement

    from .detect.alerts import change_step, is_suppressed

    check_detect_options(config, dry_run=dry_run, bisect=bisect, notify=notify, confirm=confirm is not None)
    history = history_of(store, config, all_sessions=all_sessions)
    with _entered(progress) as report:
        # An incremental pass checks a few new versions per series: one process does it fastest.
        result = detect_changes(history, method=method, benchmark=benchmark, min_change=min_change,
                                confidence_level=confidence_level, fdr=fdr, incremental=incremental,
                                jobs=1 if incremental else jobs or os.cpu_count() or 1, progress=report,
                                pool=pool, **dict(options or {}))
    # A benchmark that no longer runs has no samples for any detector: its failed runs say it.
    failures = scan_failures(store, benchmark=benchmark, history=history, retirement=Retirement.of(config))
    # Matched by the step's identity (change_step): a series (benchmark, configuration, machine)
    # has at most one change between two given versions.
    confirmations: dict[Step, Confirmation] = {}
    not_confirmed: dict[Step, str] = {}
    if confirm is not None and result.changes:
        assert config is not None  # check_detect_options refused --confirm without a configuration
        with _entered(confirm_reporter) as reporter:
            confirmations, not_confirmed = _confirm(store, config, result, confirm, reporter)
    # The alerts the changes are steps of, as they were before this pass (its undone rule).
    from .detect.alerts import known_alerts

    before = dict(zip(map(change_step, result.changes), known_alerts(store, result.changes), strict=True)) \
        if result.changes else {}
    alerts = None
    told_steps: set[Step] = set()
    if not dry_run:
        from .detect.alerts import record_alerts

        if result.checked:
            # Steps reported again because late runs made their series be searched again: told
            # before when, before this pass, an alert told them (not held) with this machine
            # among those that show them.  Not a step of another machine that merges into a
            # wide alert, nor one into an alert held until now: those are news, and gate.
            rank = {v.name: k for k, v in enumerate(history.versions())}
            again = [c for c in result.changes if result.checked_before(c, rank.__getitem__)]
            if again:
                # The alerts as they were before this pass (read once, above).
                told_steps = {change_step(c) for c in again
                              if (a := before.get(change_step(c))) is not None and not a.held
                              and c.machine in a.machines}
        # What each machine measured is read from the history detection read.
        alerts = record_alerts(store, list(result.changes), config=config, confirmations=confirmations,
                               coverage=history, failures=failures)
        save_detection_state(store, result)
    entries = tuple(DetectedChange(c, confirmation=confirmations.get(change_step(c)),
                                   not_confirmed=not_confirmed.get(change_step(c)),
                                   alert=alerts.alert_of(c) if alerts is not None else None,
                                   told_before=change_step(c) in told_steps,
                                   suppressed=is_suppressed(config, c.benchmark),
                                   undone=_undone(c, before.get(change_step(c)),
                                                  alerts.alert_of(c) if alerts is not None else None))
                    for c in result.changes)
    if bisect and result.changes:
        from .run.bisect import bisect_changes

        assert config is not None  # check_detect_options refused --bisect without a configuration
        # Each alert once: not a step told before, nor one whose alert holds a bisection already
        # (a full pass reports every step again; another machine's evidence joins the alert).
        wanted = [e.change for e in entries if e.alerts and not e.told_before and not e.suppressed
                  and (e.alert is None or e.alert.bisection is None)]
        bisected: list[tuple[Change, BisectResult]] = []
        skipped: list[Skipped] = []
        if wanted:
            with _entered(bisect_reporter) as reporter:
                bisected, skipped = bisect_changes(config, store, wanted, reporter=reporter, duet=duet)
        found = {change_step(c): r for c, r in bisected}
        why = {change_step(s.change): s.reason for s in skipped}
        why |= {change_step(e.change): f"confirmation found it {e.confirmation.status}"
                for e in entries if e.confirmation is not None and not e.confirmation.alerts}
        why |= {change_step(e.change): f"its alert #{e.alert.id} is held (seen on {len(e.alert.machines)} of "
                                       f"{e.alert.hold_machines} machines required)"
                for e in entries if e.alert is not None and e.alert.held}
        why |= {change_step(e.change): f"its alert #{e.alert.id} was bisected before: {e.alert.bisection}"
                for e in entries if e.alert is not None and e.alert.bisection is not None}
        why |= {change_step(e.change): f"reported again after late runs, not found anew (alert #{e.alert.id})"
                for e in entries if e.told_before and e.alert is not None and e.alert.bisection is None}
        why |= {change_step(e.change): "its benchmark's alerts are suppressed by regbench.toml"
                for e in entries if e.suppressed}
        entries = tuple(replace(e, bisection=found.get(change_step(e.change)),
                                not_bisected=why.get(change_step(e.change))) for e in entries)
        if alerts is not None:  # kept with the alerts, before they are told: their messages name the commit
            kept = _keep_bisections(store, [(e.alert.id, e.bisection) for e in entries
                                            if e.alert is not None and e.bisection is not None])
            entries = tuple(replace(e, alert=kept.get(e.alert.id, e.alert)) if e.alert is not None else e
                            for e in entries)
    outcome = DetectOutcome(result, alerts, entries, bisect=bisect, confirm=confirm is not None,
                            history=history.describe(), failing=failures.failing,
                            no_longer_run=failures.no_longer_run,
                            suppressed_failures=tuple(f for f in failures.failing
                                                      if is_suppressed(config, f.benchmark)),
                            zeroed=tuple(n for n in result.notes if n.gates and not is_suppressed(config, n.benchmark)),
                            standing=standing_regressions(store, history, config, benchmark=benchmark, entries=entries)
                            if incremental else ())
    if bisect and (outcome.broken or outcome.suppressed_failures):
        from .run.bisect import bisect_failures

        assert config is not None  # check_detect_options refused --bisect without a configuration
        # A failing benchmark is failing at every pass until it runs again: it is bisected once,
        # while its failure alert holds no bisection (in a dry run at every pass: nothing keeps
        # what was found).  One that does not gate (triaged, or suppressed: no alert) is not.
        fresh = [f for f in outcome.broken if alerts is None or (a := alerts.failure_of(f)) is None
                 or a.bisection is None]
        done: list[tuple[Failing, FailureBisection]] = []
        left: list[tuple[Failing, str]] = []
        if fresh:
            with _entered(bisect_reporter) as reporter:
                done, left = bisect_failures(config, store, fresh, reporter=reporter)
        told = {f.series: f"its failure alert #{alert.id} was bisected before: {alert.bisection}"
                for f in outcome.broken if f not in fresh and alerts is not None
                and (alert := alerts.failure_of(f)) is not None}
        told |= {f.series: "its benchmark's alerts are suppressed by regbench.toml"
                 for f in outcome.suppressed_failures}
        outcome = replace(outcome, failure_bisections={f.series: r for f, r in done},
                          failures_not_bisected=told | {f.series: why for f, why in left})
        if alerts is not None:
            _keep_bisections(store, [(alert.id, r) for f, r in done if (alert := alerts.failure_of(f)) is not None])
    if on_detected is not None:
        on_detected(outcome)
    if notify:
        from .notify import build_sinks, notify_pending

        assert config is not None  # check_detect_options refused --notify without a configuration
        outcome = replace(outcome, notified=notify_pending(store, build_sinks(config.notify)))
    return outcome


def history_of(store: Store, config: ProjectConfig | None, *, all_sessions: bool = False,
               shallow_ok: bool = False) -> HistoryView:
    """The store's series as histories (:class:`regbench.store.HistoryView`): along the
    first-parent line of ``[project] branch`` (default HEAD) of the project's repository when
    there is one, with the runs of sessions left out (centred with ``all_sessions``).

    A shallow clone's line stops where its history was cut (``git clone --depth N``, CI's default
    checkout): the stored versions older than that are not on it, and a detection along it would
    leave them out and search the few versions left, mark them checked, and lose a change for
    good (a probe: an incremental gate in a shallow clone passed a +30% step that a full pass
    found).  So where that cut leaves stored versions out, this is an error, unless
    ``shallow_ok`` (a reading command that only chooses a statistic from the history).

    Raises
    ------
    VersionError
        ``[project] branch`` names no branch of the repository, or the repository is a shallow
        clone whose history starts after stored versions (without ``shallow_ok``).
    """
    from .errors import VersionError
    from .run.versions import first_parent_line, remote_hint
    from .store import HistoryView

    line: tuple[str, ...] | None = None
    name = None
    if config is not None:
        name = config.branch or "HEAD"
        repo = Path(config.repo or config.root)
        try:
            line = tuple(first_parent_line(repo, name))
        except VersionError:
            if config.branch is not None:
                raise VersionError(f"{config.path or 'regbench.toml'}: [project] `branch`: no branch "
                                   f"{config.branch!r} in {config.repo or config.root}"
                                   f"{remote_hint(repo, config.branch)}") from None
            line = None  # not a git repository (or no commit yet): every version, in stored order
        if line and not shallow_ok:
            cut = _shallow_cut(store, repo, line)
            if cut is not None:
                raise VersionError(cut)
    return HistoryView(store, line, name, "centre" if all_sessions else "exclude")


def _shallow_cut(store: Store, repo: Path, line: tuple[str, ...]) -> str | None:
    """Where ``repo`` is a shallow clone whose first-parent ``line`` starts after versions the
    store holds (by commit time), one line saying so and what to do; else None."""
    from datetime import UTC

    from .errors import VersionError
    from .run.versions import git

    try:
        if git(repo, "rev-parse", "--is-shallow-repository").strip() != "true":
            return None
        start = int(git(repo, "log", "-1", "--format=%ct", line[0]).strip())
    except (VersionError, ValueError):
        return None
    on = set(line)

    def epoch(v) -> float:
        t = v.timestamp
        return (t if t.tzinfo is not None else t.replace(tzinfo=UTC)).timestamp()

    older = [v for v in store.versions() if v.commit is not None and v.commit not in on
             and v.timestamp is not None and epoch(v) < start]
    if not older:
        return None
    return (f"{repo} is a shallow clone: its history starts at {line[0][:10]}, after {len(older)} stored "
            f"version{'' if len(older) == 1 else 's'} (the newest {older[-1].name}), which a detection along it "
            "would leave out; fetch the whole history (`git fetch --unshallow`, or actions/checkout with "
            "fetch-depth: 0)")


def _confirm(store: Store, config: ProjectConfig, result: DetectionResult, options: ConfirmOptions, reporter
             ) -> tuple[dict[Step, Confirmation], dict[Step, str]]:
    """Confirm the changes of a detection that would be new alerts; the others say why not."""
    from .detect.alerts import change_step, is_suppressed, known_alerts
    from .run.confirm import confirm_changes

    changes = list(result.changes)
    why: dict[Step, str] = {}
    todo: list[Change] = []
    for c, alert in zip(changes, known_alerts(store, changes), strict=True):
        if is_suppressed(config, c.benchmark):
            why[change_step(c)] = "its alerts are suppressed by regbench.toml"
        elif alert is not None:
            why[change_step(c)] = f"already alert #{alert.id}: not run again"
        else:
            todo.append(c)
    found = confirm_changes(config, store, todo, threshold=result.min_change, options=options,
                            reporter=reporter) if todo else []
    return {change_step(c): f for c, f in zip(todo, found, strict=True)}, why


def _entered(reporter):
    """Enter ``reporter`` when it is a context manager; else hand it on as it is."""
    if hasattr(reporter, "__enter__"):
        return reporter
    return contextlib.nullcontext(reporter)


# ------------------------------------------------------------------------------------------- demo
#: The demo's detection: ci-overlap at 99% confidence, with a minimum change the planted ones far
#: exceed (with only 8 versions, `auto` cannot yet estimate how much versions vary).
#: The demo detects with the default method and its own minimum relevant change.
DEMO_METHOD = "auto"
DEMO_CONFIDENCE = 0.99
DEMO_MIN_CHANGE: float | None = None


@dataclass(frozen=True)
class DemoOutcome:
    """What :func:`run_demo` did.

    Attributes
    ----------
    demo : DemoRepo
        The generated project: its folder, repository and commits.
    subjects : tuple of str
        The subject line of each commit, oldest first.
    store_path : Path
        The SQLite store the runs are in.
    campaign : CampaignResult
        The campaign over every commit.
    changes : tuple of Change
        What detection found.
    method, confidence_level, min_change
        The detection's method and options (:data:`DEMO_METHOD`, :data:`DEMO_CONFIDENCE`,
        :data:`DEMO_MIN_CHANGE`).
    seconds : float
        Wall time of the campaign and the detection.
    """

    demo: DemoRepo
    subjects: tuple[str, ...]
    store_path: Path
    campaign: CampaignResult
    changes: tuple[Change, ...]
    method: str
    confidence_level: float
    min_change: float | None
    seconds: float

    @property
    def planted_found(self) -> bool:
        """Whether both planted changes (the slower commit and the faster one) were found."""
        expected = {self.demo.commits[self.demo.slower_index][:7], self.demo.commits[self.demo.faster_index][:7]}
        return expected <= {c.version[:7] for c in self.changes}


def run_demo(directory: Path | None = None, *, seed: int | None = None, reporter: CampaignReporter | None = None,
             on_created: Callable[[DemoRepo, tuple[str, ...]], None] | None = None) -> DemoOutcome:
    """Create the demo project in ``directory``, run its campaign and detect its changes.

    Parameters
    ----------
    directory : Path, optional
        A new or empty folder [default: a new temporary folder].
    seed : int, optional
        Seed of the randomized interleaved order [default: random, recorded].
    reporter : CampaignReporter, optional
        Told of the campaign's builds and runs; entered while the campaign runs when it is a
        context manager.
    on_created : callable, optional
        ``on_created(demo, subjects)`` once the repository exists, before the campaign (about
        a minute) starts.

    Returns
    -------
    DemoOutcome
    """
    from .config import load_config
    from .demo_project import create_demo_repo
    from .detect.alerts import record_alerts
    from .detect.driver import detect_changes
    from .run.campaign import run_campaign
    from .store import Store

    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="regbench-demo-"))
    demo = create_demo_repo(directory)
    config = load_config(demo.config_path)
    store_path = demo.root / ".regbench" / "results.db"
    subjects = _subjects(demo.path)
    if on_created is not None:
        on_created(demo, subjects)
    started = time.perf_counter()
    with Store(store_path) as store:
        with _entered(reporter) as campaign_reporter:
            campaign = run_campaign(config, store, revisions=",".join(demo.commits), seed=seed,
                                    reporter=campaign_reporter, command="regbench demo")
        changes = detect_changes(store, method=DEMO_METHOD, min_change=DEMO_MIN_CHANGE,
                                 confidence_level=DEMO_CONFIDENCE, jobs=1).changes
        # As alerts, so that the dashboard (`regbench report`, `serve`) marks them and lists them.
        record_alerts(store, changes, config=config)
    return DemoOutcome(demo, subjects, store_path, campaign, tuple(changes), DEMO_METHOD, DEMO_CONFIDENCE,
                       DEMO_MIN_CHANGE, time.perf_counter() - started)


def _subjects(repo: Path) -> tuple[str, ...]:
    out = subprocess.run(["git", "-C", str(repo), "log", "--reverse", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    return tuple(out.splitlines())
