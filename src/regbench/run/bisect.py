"""Find the first commit that changes a benchmark: bisection decided by sequential comparisons.

``regbench bisect GOOD BAD --benchmark NAME`` works on the commits of ``GOOD..BAD`` in history
order (like ``git bisect``, history is taken as a line: ``git rev-list --topo-order``).

1. GOOD and BAD are compared pair by pair until settled (:meth:`Session.settle`): there must be
   a change, and its estimate ``D`` (a log ratio) is the size the search looks for.
2. Each step takes the middle commit M of the range still open and runs GOOD, M and BAD in
   triples (random order).  Every triple gives ``log(M/GOOD) - log(BAD/M)``: its mean is ``-D``
   when M is like GOOD and ``+D`` when M is like BAD.  The always-valid confidence sequence of
   :mod:`regbench.stats.sequential` on those values decides as soon as it excludes zero, so a
   noisy commit costs more runs, never a silent wrong turn: when the budget of a step is spent
   unsettled, the bisection stops and says which range is left and which commit could not be
   classified.
3. When one commit is left, it and its predecessor are compared pair by pair: the culprit is
   printed with its own change and confidence interval.

A commit that cannot be measured is skipped, as ``git bisect skip`` does: one whose build fails
(``unbuilt``) or whose benchmark fails in every run while GOOD and BAD run (``failed``: a syntax
error, a missing module).  The middle of the commits still open is tried instead, and the skipped
commits are listed in the result.  When skipped commits lie just before the first bad one, any
of them may be the culprit: the answer is then that set (``undecided``), never a guess.

Each step's error rate is ``alpha`` (valid under stopping after every pair); a bisection over
``k`` steps goes wrong with probability at most about ``k alpha`` (a union bound), which is
why the default ``alpha`` of a step is smaller than a single comparison's.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import BenchmarkSpec, NoiseControl, ProjectConfig
from ..errors import ConfigError, VersionError
from ..failures import failure_cause
from ..model import DEFAULT_CONFIG, SeriesName
from .core import campaign_status
from .execute import RunOutcome
from .rerun import Skipped, comparison_of, plan_reruns
from .sequential import (Session, SessionReporter, SessionSetup, Settled, StopRule, check_environment_size,
                         check_pair_limits, check_value)
from .versions import Commit, git, resolve_revisions

if TYPE_CHECKING:
    from ..detect.base import Change
    from ..model import Failing
    from ..store import Store

#: Error rate of each step of a bisection: over log2(30) + 2 = 7 steps, about 7% at most in all.
STEP_ALPHA = 0.01
#: Verdicts of a step that skip its commit: it did not build, or its benchmark failed in every run.
SKIPPED = ("unbuilt", "failed")
#: Pairs (or triples) of runs per decision at most, by default: a commit that needs more is
#: reported undecided rather than guessed (``--budget`` bounds the time instead).
MAX_OBSERVATIONS = 200


@dataclass(frozen=True)
class BisectStep:
    """One classification: ``commit`` was found like ``good`` or ``bad``, or ``undecided``, after
    ``triples`` triples of runs (GOOD, the commit, BAD); or skipped (:data:`SKIPPED`): ``unbuilt``
    (its build failed) or ``failed`` (its benchmark failed in every run)."""

    commit: str
    verdict: str
    triples: int
    position: float  # the commit's level on the GOOD (0) .. BAD (1) scale, estimated
    seconds: float


@dataclass(frozen=True)
class BisectResult:
    """What a bisection found.

    Attributes
    ----------
    benchmark, good, bad : str
    status : str
        ``"found"``: ``culprit`` is the first commit like BAD; ``"no change"``: GOOD and BAD do
        not differ by the threshold; ``"undecided"``: noise or the budget left the commits
        ``candidates`` open, or commits that did not build lie just before the first bad one
        (any of them may be the culprit); ``"unbuilt"``: GOOD or BAD did not build.
    total : Settled
        The comparison of BAD against GOOD.
    culprit : str or None
    culprit_change : Settled or None
        The culprit against the commit before it.
    steps : tuple of BisectStep
    candidates : tuple of str
        The commits that may still be the first bad one (one when found).
    commits : int
        Commits in GOOD..BAD.
    campaign_id : int
    skipped : tuple of str
        Commits skipped because they could not be measured (their step's verdict says why:
        ``unbuilt`` or ``failed``), in the order they were tried.
    """

    benchmark: str
    good: str
    bad: str
    status: str
    total: Settled
    culprit: str | None
    culprit_change: Settled | None
    steps: tuple[BisectStep, ...]
    candidates: tuple[str, ...]
    commits: int
    campaign_id: int
    skipped: tuple[str, ...] = ()

    @property
    def runs(self) -> int:
        """Successful runs used in all (failed ones are stored too, but not counted here)."""
        return (2 * self.total.pairs + 3 * sum(s.triples for s in self.steps)
                + (2 * self.culprit_change.pairs if self.culprit_change else 0))

    def summary(self) -> str:
        """What it found, on one line, as an alert keeps it (``alerts show``, notifications)."""
        cost = f"{self.runs} runs, campaign #{self.campaign_id}"
        if self.status == "found":
            d = self.culprit_change.decision if self.culprit_change is not None else None
            own = (f"{d.change:+.2%} [{d.ci_low:+.2%}, {d.ci_high:+.2%}] against its predecessor" if d is not None
                   else "its own change against its predecessor could not be measured")
            return f"first bad commit {self.culprit}: {own} ({cost})"
        if self.status == "undecided":
            return f"undecided: the first bad commit is one of {', '.join(self.candidates)} ({cost})"
        if self.status == "no change":
            return f"no change between {self.good} and {self.bad} when run again here ({cost})"
        return f"{self.good} or {self.bad} did not build"


def bisect(config: ProjectConfig, store: Store, good: str, bad: str, *, benchmark: str,
           threshold: float = 0.03, alpha: float = STEP_ALPHA, budget: float | None = None,
           max_pairs: int = MAX_OBSERVATIONS, min_pairs: int = 3, seed: int | None = None,
           machine: str | None = None, config_name: str = DEFAULT_CONFIG, cache_dir: Path | None = None,
           command: str | None = None, rebuild: bool = False,
           reporter: SessionReporter | None = None, noise: NoiseControl | None = None,
           duet: bool | None = None, location: str = "mean", measure: str | None = None) -> BisectResult:
    """Find the first commit of ``good..bad`` that changes ``benchmark`` (see the module doc).

    Parameters
    ----------
    config : ProjectConfig
    store : regbench.store.Store
        Every run is stored there (one campaign for the whole bisection).
    good, bad : str
        Git revisions of ``config.repo``; ``good`` must be an ancestor of ``bad``.
    benchmark : str
        The benchmark to follow (one with its own samples).
    threshold : float
        Relative size below which GOOD and BAD count as not different.
    alpha : float
        Error rate of each sequential decision.
    budget : float, optional
        Seconds of benchmark time per decision.
    max_pairs, min_pairs : int
        Pairs per decision at most / before any decision.
    duet : bool, optional
        Run the versions of a pair, and of a step's triple when three CPUs are free, at the same
        time, each pinned to its own CPU (:mod:`regbench.run.duet`); None: ``[run] duet``.
    location : {"mean", "median", "low"}
        What of a run's samples each run contributes, in every comparison and step (``"low"``:
        a floor that interference, which only adds time, hardly moves; see
        :meth:`Session.settle`).
    measure : {None, "instructions"}
        Decide on each run's instruction count instead of its time (perf or callgrind):
        instructions are not time, so this finds the commit that changed the work done.

    Returns
    -------
    BisectResult

    Raises
    ------
    ConfigError
        An unknown benchmark or one that reports through a tool, an unknown location or
        measure, or instruction counts with no counter here.
    VersionError
        An unknown revision, or no commits between ``good`` and ``bad``.
    """
    check_pair_limits(min_pairs, max_pairs)
    check_value(measure, location)
    spec, history = _bisected(config, benchmark, good, bad, noise)
    line = history[1:]
    setup = SessionSetup(machine, config_name, seed, cache_dir, command, rebuild, noise,
                         duet=config.run.duet if duet is None else duet)
    session = Session(config, store, setup, reporter=reporter, specs=[spec],
                      plan={"bisect": {"good": history[0].short, "bad": history[-1].short, "benchmark": benchmark,
                                       "threshold": threshold, "alpha": alpha, "commits": len(line),
                                       "measure": measure or "time", "location": location}})
    rule = StopRule(threshold, alpha, budget, max_pairs, min_pairs)
    compared: dict[str, Any] = {"measure": measure, "location": location}
    with session, campaign_status(store, session.campaign_id):
        total = session.settle(spec, history[0], history[-1], rule, resolve_size=False, **compared)

        def done(status: str, culprit: str | None = None, change: Settled | None = None,
                 steps: Sequence[BisectStep] = (), candidates: Sequence[str] = ()) -> BisectResult:
            return BisectResult(benchmark, history[0].short, history[-1].short, status, total,
                                culprit, change, tuple(steps), tuple(candidates), len(line),
                                session.campaign_id, tuple(s.commit for s in steps if s.verdict in SKIPPED))

        if total.stopped == "unbuilt":
            return done("unbuilt")
        if total.verdict == "no change":
            return done("no change")
        if total.stopped != "settled":
            return done("undecided", candidates=[c.short for c in line])
        assert total.decision is not None  # settled
        shift = math.log1p(total.decision.change)  # D: the log ratio BAD/GOOD
        lo, hi = 0, len(history) - 1  # history[lo] is like GOOD, history[hi] like BAD
        skipped: set[int] = set()  # commits that cannot be measured (like `git bisect skip`)
        steps: list[BisectStep] = []
        while True:
            open_ = [k for k in range(lo + 1, hi) if k not in skipped]
            if not open_:
                break
            mid = open_[len(open_) // 2]
            step = _classify(session, spec, history[0], history[mid], history[-1], shift, rule, **compared)
            steps.append(step)
            if step.verdict == "good":
                lo = mid
            elif step.verdict == "bad":
                hi = mid
            elif step.verdict in SKIPPED:
                skipped.add(mid)
            else:
                return done("undecided", steps=steps, candidates=[c.short for c in history[lo + 1:hi + 1]])
        # Commits between the last good and the first bad one that were skipped may be the
        # culprit as well: then the answer is the set, not a guess.
        candidates = [history[k].short for k in range(lo + 1, hi + 1)]
        if len(candidates) > 1:
            return done("undecided", steps=steps, candidates=candidates)
        culprit = history[hi]
        change = session.settle(spec, history[lo], culprit, rule, resolve_size=False, **compared)
        return done("found", culprit.short, change, steps, [culprit.short])


def _bisected(config: ProjectConfig, benchmark: str, good: str, bad: str, noise: NoiseControl | None, *,
              tools: bool = False) -> tuple[BenchmarkSpec, list[Commit]]:
    """The benchmark a bisection follows and the commits it works on, GOOD first (GOOD..BAD as a
    line); one-line errors for what cannot be bisected.  ``tools``: a benchmark that reports
    through a tool is followed too (whether its invocation fails, ``bisect --failure``)."""
    spec = config.benchmark(benchmark)
    if spec.format is not None and not tools:
        raise ConfigError(f"benchmark {benchmark!r} reports through a tool (format = {spec.format!r}); "
                          "bisect needs a benchmark with its own samples")
    repo = config.repo or config.root
    g = resolve_revisions(repo, good)
    if len(g) != 1:
        raise VersionError(f"{good!r}: GOOD must be one revision")
    line = resolve_revisions(repo, f"{good}..{bad}")  # raises when empty
    if commits_between(repo, g[0].sha, line[-1].sha) is None:
        raise VersionError(f"{good!r} is not an ancestor of {bad!r}: there is no line of history to bisect")
    history = [g[0], *line]
    check_environment_size(config, noise, [spec], [c.short for c in history])
    return spec, history


def _classify(session: Session, spec: BenchmarkSpec, good: Commit, commit: Commit, bad: Commit, shift: float,
              rule: StopRule, *, measure: str | None = None, location: str = "mean") -> BisectStep:
    """Whether ``commit`` is like GOOD or like BAD, from triples of runs.

    Each observation is one run of GOOD, of the commit and of BAD, in random order:
    ``w = log(M/GOOD) - log(BAD/M)``, whose mean is ``-D`` when the commit is like GOOD and
    ``+D`` when it is like BAD (``D`` the GOOD-to-BAD log change).  The confidence sequence on
    the mean of ``w`` (threshold 0: only "changed" settles it) decides as soon as it excludes
    zero.  No estimate of ``D`` enters the observations, so the decision keeps its error rate
    exactly (an estimate taken when the first comparison stopped is biased away from zero), and
    drift of the machine cancels within each triple.  ``shift`` only gives the sign of ``D`` and
    the scale of the reported position.  ``measure`` and ``location`` are what each run
    contributes, as in :meth:`Session.settle`.
    """
    if session.prepare(commit) is None or session.prepare(good) is None or session.prepare(bad) is None:
        return BisectStep(commit.short, "unbuilt", 0, math.nan, 0.0)

    def level(means: dict[str, float]) -> float:
        return math.log(means[commit.short] ** 2 / (means[good.short] * means[bad.short]))

    spec, _, value = session.valued(spec, measure, location)
    seen = session.observe(spec, (good.short, commit.short, bad.short), level, lambda d: d.decision == "changed",
                           dataclasses.replace(rule, threshold=0.0), label=(good.short, commit.short), value=value)
    x = seen.values
    if seen.only_failing(commit.short):
        return BisectStep(commit.short, "failed", 0, math.nan, seen.seconds)
    if seen.stopped != "settled" or seen.decision is None:
        return BisectStep(commit.short, "undecided", len(x), _position(x, shift), seen.seconds)
    verdict = "bad" if (seen.decision.cs.estimate > 0) == (shift > 0) else "good"
    return BisectStep(commit.short, verdict, len(x), _position(x, shift), seen.seconds)


def _position(x: Sequence[float], shift: float) -> float:
    """The commit's level on the GOOD (0) .. BAD (1) scale: mean(w) = (2 p - 1) D."""
    return 0.5 + float(np.mean(x)) / (2 * shift) if x and shift else math.nan


def commits_between(repo: Path, older: str, newer: str) -> int | None:
    """How many commits ``older..newer`` holds (1 when adjacent), or None when ``older`` is not
    an ancestor of ``newer`` (diverged branches: no line of history to bisect).

    Raises
    ------
    VersionError
        A revision git does not know.
    """
    git(repo, "rev-parse", "--verify", "--quiet", f"{older}^{{commit}}")  # one-line error if unknown
    git(repo, "rev-parse", "--verify", "--quiet", f"{newer}^{{commit}}")
    ancestor = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", older, newer],
                              capture_output=True, check=False)
    if ancestor.returncode == 1:
        return None
    if ancestor.returncode != 0:
        raise VersionError(f"git merge-base in {repo}: {ancestor.stderr.decode(errors='replace').strip()}")
    out = git(repo, "rev-list", "--count", f"{older}..{newer}")
    return int(out.strip())


def bisect_changes(config: ProjectConfig, store: Store, changes: Sequence[Change], *, machine: str | None = None,
                   **kwargs: Any) -> tuple[list[tuple[Change, BisectResult]], list[Skipped]]:
    """Bisect every detected change whose two versions are not adjacent commits (``detect --bisect``).

    ``changes`` are :class:`regbench.detect.base.Change` objects.  A change is bisected when it
    can be run again here (:func:`regbench.run.rerun.plan_reruns`: both its versions are stored
    with commits of ``config.repo``, its benchmark is configured with its own samples, and it was
    measured on this machine) and the older commit is an ancestor of the newer with more than one
    commit between them (nightly snapshots, seeds 000 and 002); the runs are stored under the
    change's configuration.  Each run contributes what the detection summarised runs by (the
    change's location: :func:`~.rerun.comparison_of`), unless ``location`` is given; a change
    found in one mode of a multimodal benchmark is bisected on run means (triples are not
    matched by mode).  Several series showing the same change (benchmark and versions) are
    bisected once, and share the result.

    Returns
    -------
    (bisected, skipped)
        ``(change, result)`` pairs, and the changes left alone with the reason.
    """
    from .fingerprint import default_machine_name

    here = machine or default_machine_name()
    repo = config.repo or config.root
    reruns, skipped = plan_reruns(config, store, changes, machine=here, purpose="bisect")
    done: dict[tuple[str, ...], BisectResult] = {}
    out: list[tuple[Change, BisectResult]] = []
    for rerun in reruns:
        ch, a, b = rerun.change, rerun.previous.sha, rerun.version.sha
        between = commits_between(repo, a, b)
        if between is None or between <= 1:
            skipped.append(Skipped(ch, "the older version is not an ancestor of the newer" if between is None
                                   else "its versions are adjacent commits: nothing between them"))
            continue
        how = {"location": comparison_of(ch, direction=rerun.spec.direction)["location"], **kwargs}
        key = (ch.benchmark, ch.config, a, b, how["location"])
        if key not in done:
            done[key] = bisect(config, store, a, b, benchmark=ch.benchmark, machine=here, config_name=ch.config,
                               **how)
        out.append((ch, done[key]))
    order = {id(c): k for k, c in enumerate(changes)}
    skipped.sort(key=lambda s: order.get(id(s.change), len(order)))
    return out, skipped


# ------------------------------------------------------------------ the first commit that fails
#: Runs of a commit at most before it counts as failing (``bisect --failure``): one successful run
#: shows a commit works, so a working commit usually costs one run.
FAILURE_RUNS = 3


@dataclass(frozen=True)
class FailureStep:
    """One commit tried by :func:`bisect_failure`: ``good`` (a run succeeded, after ``runs`` runs),
    ``bad`` (all ``runs`` runs failed, ``error`` saying why, on one line) or ``unbuilt`` (its
    build failed: skipped, as ``git bisect skip`` does)."""

    commit: str
    verdict: str
    runs: int
    error: str | None
    seconds: float


@dataclass(frozen=True)
class FailureBisection:
    """What :func:`bisect_failure` found.

    Attributes
    ----------
    benchmark, good, bad : str
    status : str
        ``"found"``: ``culprit`` is the first commit whose runs all fail; ``"undecided"``:
        commits that did not build lie just before the first failing one (any of them may be
        it: ``candidates``); ``"unbuilt"``: GOOD or BAD did not build; ``"not reproduced"``:
        GOOD fails here too, or BAD ran successfully here (``reason`` says which).
    culprit : str or None
    error : str or None
        Why the runs of the culprit fail (of GOOD, when GOOD fails too), on one line.
    steps : tuple of FailureStep
        GOOD, BAD, then each commit tried, in order.
    candidates : tuple of str
        The commits that may be the first failing one (one when found).
    commits : int
        Commits in GOOD..BAD.
    campaign_id : int
    skipped : tuple of str
        Commits that did not build, in the order they were tried.
    reason : str or None
        Why there is no culprit, when ``status`` is ``unbuilt`` or ``not reproduced``.
    """

    benchmark: str
    good: str
    bad: str
    status: str
    culprit: str | None
    error: str | None
    steps: tuple[FailureStep, ...]
    candidates: tuple[str, ...]
    commits: int
    campaign_id: int
    skipped: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def runs(self) -> int:
        """Runs made in all, failed ones included."""
        return sum(s.runs for s in self.steps)

    def summary(self) -> str:
        """What it found, on one line, as an alert keeps it (``alerts show``, notifications)."""
        cost = f"{self.runs} runs, campaign #{self.campaign_id}"
        if self.status == "found":
            return f"first failing commit {self.culprit}: {self.error} ({cost})"
        if self.status == "undecided":
            return f"undecided: the first failing commit is one of {', '.join(self.candidates)} ({cost})"
        return f"{self.status}: {self.reason}" + (f" ({cost})" if self.runs else "")


def bisect_failure(config: ProjectConfig, store: Store, good: str, bad: str, *, benchmark: str,
                   runs: int = FAILURE_RUNS, seed: int | None = None, machine: str | None = None,
                   config_name: str = DEFAULT_CONFIG, cache_dir: Path | None = None, command: str | None = None,
                   rebuild: bool = False, reporter: SessionReporter | None = None,
                   noise: NoiseControl | None = None) -> FailureBisection:
    """Find the first commit of ``good..bad`` where ``benchmark`` fails (``bisect --failure``).

    GOOD must run here (a successful run among ``runs``) and BAD must fail here (``runs`` failed
    runs), or there is nothing to bisect: a benchmark that fails at GOOD too fails because of the
    machine, its environment or a dependency, not the code between them; one that runs at BAD
    failed by chance, or on another machine's account.  Then each step takes the middle commit of
    the range still open and runs it until a run succeeds (like GOOD) or ``runs`` runs failed
    (like BAD), as ``git bisect run`` does with a test script.  A commit that does not build is
    skipped; when skipped commits lie just before the first failing one, the answer is that set.

    A benchmark that fails only sometimes can make a working commit look failing (all ``runs``
    runs failed by chance): with a failure rate ``p`` per run, a step errs with probability
    ``p ** runs``.  Every run is stored, in one campaign (a session: detection leaves its runs
    out, so failed runs of a bisection open no failure alert).

    A benchmark that reports through a tool (``format = "go"``, ...) is followed by its
    invocation: a commit fails when the tool's invocation does (a suite that no longer compiles,
    a panic), as a failure alert of the configured benchmark says (``gb``).  One benchmark the
    tool reports (``gb/BenchmarkX-2``) is followed by what the tool said of it: failed (its
    message), or not reported at all, against its results reported.

    Raises
    ------
    ConfigError
        An unknown benchmark, or ``runs`` below 1.
    VersionError
        An unknown revision, no commits between ``good`` and ``bad``, or ``good`` not an
        ancestor of ``bad``.
    """
    if runs < 1:
        raise ConfigError(f"runs of a commit must be at least 1, got {runs}")
    name = SeriesName.parse(benchmark)
    reported = None  # one benchmark a tool reports: its invocation's outcome for that benchmark
    if name.reported is not None and name.measure is None and name.benchmark in {b.name for b in config.benchmarks}:
        if config.benchmark(name.benchmark).format is None:
            raise ConfigError(f"{benchmark!r}: {name.benchmark!r} reports through no tool")
        benchmark, reported = name.benchmark, name.reported
    spec, history = _bisected(config, benchmark, good, bad, noise, tools=True)
    line = history[1:]
    setup = SessionSetup(machine, config_name, seed, cache_dir, command, rebuild, noise)
    session = Session(config, store, setup, reporter=reporter, specs=[spec],
                      plan={"bisect": {"good": history[0].short, "bad": history[-1].short, "benchmark": benchmark,
                                       "failure": True, "runs": runs, "commits": len(line)}})
    with session, campaign_status(store, session.campaign_id):
        steps: list[FailureStep] = []

        def done(status: str, culprit: str | None = None, error: str | None = None,
                 candidates: Sequence[str] = (), reason: str | None = None) -> FailureBisection:
            return FailureBisection(benchmark, history[0].short, history[-1].short, status, culprit, error,
                                    tuple(steps), tuple(candidates), len(line), session.campaign_id,
                                    tuple(s.commit for s in steps[2:] if s.verdict == "unbuilt"), reason)

        def attempt(commit: Commit) -> FailureStep:
            session.reporter.progress(f"{benchmark}: trying {commit.short}")
            start = session.clock()
            if session.prepare(commit) is None:
                step = FailureStep(commit.short, "unbuilt", 0, None, 0.0)
            else:
                error = None
                for k in range(1, runs + 1):
                    error = _failed(session.attempt(spec, commit.short), reported)
                    if error is None:
                        break
                step = FailureStep(commit.short, "bad" if error is not None else "good", k, error,
                                   session.clock() - start)
            session.reporter.progress(f"{benchmark} at {commit.short}: " + (
                "did not build" if step.verdict == "unbuilt" else
                f"ran ({step.runs} run{'s' if step.runs > 1 else ''})" if step.verdict == "good" else
                f"fails ({step.runs} runs): {step.error}"))
            steps.append(step)
            return step

        first, last = attempt(history[0]), attempt(history[-1])
        if first.verdict == "unbuilt" or last.verdict == "unbuilt":
            which = "GOOD" if first.verdict == "unbuilt" else "BAD"
            return done("unbuilt", reason=f"{which} did not build")
        if first.verdict == "bad":
            return done("not reproduced", error=first.error,
                        reason=f"GOOD ({first.commit}) fails here too: the failure is not the code's between "
                               "them (the machine, the environment or a dependency)")
        if last.verdict == "good":
            return done("not reproduced",
                        reason=f"BAD ({last.commit}) ran successfully here: the failure did not happen again "
                               "(it fails only sometimes, or on another machine)")
        lo, hi = 0, len(history) - 1  # history[lo] runs, history[hi] fails
        unbuilt: set[int] = set()
        while True:
            open_ = [k for k in range(lo + 1, hi) if k not in unbuilt]
            if not open_:
                break
            mid = open_[len(open_) // 2]
            step = attempt(history[mid])
            if step.verdict == "good":
                lo = mid
            elif step.verdict == "bad":
                hi = mid
            else:
                unbuilt.add(mid)
        candidates = [history[k].short for k in range(lo + 1, hi + 1)]
        culprit = history[hi].short
        error = next(s.error for s in reversed(steps) if s.commit == culprit)
        if len(candidates) > 1:
            return done("undecided", error=error, candidates=candidates)
        return done("found", culprit, error, candidates)


def _failed(outcome: RunOutcome, reported: str | None) -> str | None:
    """Why a run failed, on one line, or None when it worked: the invocation's status, or, for
    ``reported``, one benchmark of a tool's invocation, whether the tool reported it failed
    (its own message), reported its results, or did not report it at all."""
    if reported is None:
        return None if outcome.status == "ok" else failure_cause(outcome.status, outcome.stderr_tail)
    for failure in outcome.tool_failures:
        if failure.benchmark == reported:
            return failure_cause("failed", failure.message)
    if any(r.benchmark == reported for r in outcome.tool_runs):
        return None
    if outcome.status != "ok":
        return failure_cause(outcome.status, outcome.stderr_tail)
    return f"failed: the tool did not report {reported}"


def bisect_failures(config: ProjectConfig, store: Store, failing: Sequence[Failing], *, machine: str | None = None,
                    **kwargs: Any) -> tuple[list[tuple[Failing, FailureBisection]], list[tuple[Failing, str]]]:
    """Bisect every failing series whose last working and first failing versions are not adjacent
    commits (``detect --bisect``): :func:`bisect_failure` from ``since`` to ``first``, when the
    series can be run again here (the reasons of :func:`~.rerun.plan_reruns`: both versions stored
    with commits of ``config.repo``, a configured benchmark with its own samples, measured on
    this machine).  Series of the same benchmark and versions (configurations aside) are
    bisected once per configuration.

    Returns
    -------
    (bisected, skipped)
        ``(failing, result)`` pairs, and the failing series left alone with the reason.
    """
    from ..detect.base import Change
    from .fingerprint import default_machine_name

    here = machine or default_machine_name()
    repo = config.repo or config.root
    # A failure as a change from its last working version to its first failing one: what
    # plan_reruns asks of a change to run it again here is what a failure needs too.
    changes = [Change(f.benchmark, f.config, f.machine, f.first, f.since, math.nan, math.nan, math.nan,
                      "regression", "failure") for f in failing]
    by_change = {id(c): f for c, f in zip(changes, failing, strict=True)}
    reruns, not_run = plan_reruns(config, store, changes, machine=here, purpose="bisect-failure")
    skipped = [(by_change[id(s.change)], s.reason) for s in not_run]
    done: dict[tuple[str, ...], FailureBisection] = {}
    out: list[tuple[Failing, FailureBisection]] = []
    for rerun in reruns:
        f, a, b = by_change[id(rerun.change)], rerun.previous.sha, rerun.version.sha
        between = commits_between(repo, a, b)
        if between is None or between <= 1:
            skipped.append((f, "the older version is not an ancestor of the newer" if between is None
                            else f"its versions are adjacent commits: {f.first} is the first failing commit"))
            continue
        key = (f.benchmark, f.config, a, b)
        if key not in done:
            done[key] = bisect_failure(config, store, a, b, benchmark=f.benchmark, machine=here, config_name=f.config,
                                       **kwargs)
        out.append((f, done[key]))
    order = {id(f): k for k, f in enumerate(failing)}
    skipped.sort(key=lambda s: order.get(id(s[0]), len(order)))
    return out, skipped
