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

Each step's error rate is ``alpha`` (valid under stopping after every pair); a bisection over
``k`` steps goes wrong with probability at most about ``k alpha`` (a union bound), which is
why the default ``alpha`` of a step is smaller than a single comparison's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..config import ProjectConfig
from ..errors import ConfigError, VersionError
from ..model import DEFAULT_CONFIG
from .sequential import Session, SessionReporter, Settled

#: Error rate of each step of a bisection: over log2(30) + 2 = 7 steps, about 7% at most in all.
STEP_ALPHA = 0.01


@dataclass(frozen=True)
class BisectStep:
    """One classification: ``commit`` was found like ``good`` or ``bad``, or ``undecided``, after
    ``triples`` triples of runs (GOOD, the commit, BAD)."""

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
        not differ by the threshold; ``"undecided"``: noise or the budget left the range
        ``first_bad_candidates`` open; ``"unbuilt"``: GOOD or BAD did not build.
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

    @property
    def runs(self) -> int:
        """Successful runs used in all (failed ones are stored too, but not counted here)."""
        return (2 * self.total.pairs + 3 * sum(s.triples for s in self.steps)
                + (2 * self.culprit_change.pairs if self.culprit_change else 0))


def bisect(config: ProjectConfig, store, good: str, bad: str, *, benchmark: str,
           threshold: float = 0.03, alpha: float = STEP_ALPHA, budget: float | None = None,
           max_pairs: int = 60, min_pairs: int = 3, seed: int | None = None,
           machine: str | None = None, config_name: str = DEFAULT_CONFIG, cache_dir=None,
           command: str | None = None, rebuild: bool = False,
           reporter: SessionReporter | None = None, noise=None) -> BisectResult:
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

    Returns
    -------
    BisectResult

    Raises
    ------
    ConfigError
        An unknown benchmark or one that reports through a tool.
    VersionError
        An unknown revision, or no commits between ``good`` and ``bad``.
    """
    from ..stats.sequential import sequential_decision
    from .versions import resolve_revisions

    spec = config.benchmark(benchmark)
    if spec.format is not None:
        raise ConfigError(f"benchmark {benchmark!r} reports through a tool (format = {spec.format!r}); "
                          "bisect needs a benchmark with its own samples")
    repo = config.repo or config.root
    g = resolve_revisions(repo, good)
    if len(g) != 1:
        raise VersionError(f"{good!r}: GOOD must be one revision")
    line = resolve_revisions(repo, f"{good}..{bad}")  # raises when empty
    history = [g[0], *line]
    session = Session(config, store, machine=machine, config_name=config_name, seed=seed, cache_dir=cache_dir,
                      command=command, rebuild=rebuild, reporter=reporter, noise=noise,
                      plan={"bisect": {"good": g[0].short, "bad": line[-1].short, "benchmark": benchmark,
                                       "threshold": threshold, "alpha": alpha, "commits": len(line)}})
    settle = dict(alpha=alpha, budget=budget, max_pairs=max_pairs, min_pairs=min_pairs)
    try:
        total = session.settle(spec, history[0], history[-1], threshold=threshold, **settle)

        def done(status, culprit=None, change=None, steps=(), candidates=()):
            session.finish()
            return BisectResult(benchmark, history[0].short, history[-1].short, status, total,
                                culprit, change, tuple(steps), tuple(candidates), len(line),
                                session.campaign_id)

        if total.stopped == "unbuilt":
            return done("unbuilt")
        if total.verdict == "no change":
            return done("no change")
        if total.stopped != "settled":
            return done("undecided", candidates=[c.short for c in line])
        shift = math.log1p(total.decision.change)  # D: the log ratio BAD/GOOD
        lo, hi = 0, len(history) - 1  # history[lo] is like GOOD, history[hi] like BAD
        steps: list[BisectStep] = []
        while hi - lo > 1:
            mid = (lo + hi) // 2
            step = _classify(session, spec, history[0], history[mid], history[-1], shift, sequential_decision,
                             **settle)
            steps.append(step)
            if step.verdict == "good":
                lo = mid
            elif step.verdict == "bad":
                hi = mid
            elif step.verdict == "unbuilt":
                # A commit that does not build cannot be classified; try its neighbours first
                # (as `git bisect skip`): here simply narrow from the other side when possible.
                history.pop(mid)
                hi -= 1
            else:
                return done("undecided", steps=steps, candidates=[c.short for c in history[lo + 1:hi + 1]])
        culprit = history[hi]
        change = session.settle(spec, history[lo], culprit, threshold=threshold, **settle)
        return done("found", culprit.short, change, steps, [culprit.short])
    except KeyboardInterrupt:
        session.finish("interrupted")
        raise
    except BaseException:
        session.finish("failed")
        raise


def _classify(session: Session, spec, good, commit, bad, shift: float, decide, *, alpha: float,
              budget: float | None, max_pairs: int, min_pairs: int) -> BisectStep:
    """Whether ``commit`` is like GOOD or like BAD, from triples of runs.

    Each observation is one run of GOOD, of the commit and of BAD, in random order:
    ``w = log(M/GOOD) - log(BAD/M)``, whose mean is ``-D`` when the commit is like GOOD and
    ``+D`` when it is like BAD (``D`` the GOOD-to-BAD log change).  The confidence sequence on
    the mean of ``w`` (threshold 0: only "changed" settles it) decides as soon as it excludes
    zero.  No estimate of ``D`` enters the observations, so the decision keeps its error rate
    exactly (an estimate taken when the first comparison stopped is biased away from zero), and
    drift of the machine cancels within each triple.  ``shift`` only gives the sign of ``D`` and
    the scale of the reported position.
    """
    if session.prepare(commit) is None or session.prepare(good) is None or session.prepare(bad) is None:
        return BisectStep(commit.short, "unbuilt", 0, math.nan, 0.0)
    start = session.clock()
    x: list[float] = []
    failed = 0
    names = (good.short, commit.short, bad.short)
    while len(x) < max_pairs:
        if budget is not None and session.clock() - start >= budget:
            break
        means = {v: session.run_once(spec, v) for v in (names[k] for k in session.rng.permutation(3))}
        if any(means[v] is None for v in names):
            failed += 1
            if failed > 3 and failed > 0.2 * (len(x) + failed):
                break
            continue
        x.append(math.log(means[commit.short] ** 2 / (means[good.short] * means[bad.short])))
        d = decide(np.asarray(x), threshold=0.0, alpha=alpha, min_n=min_pairs)
        session.reporter.pair_done(spec.name, good.short, commit.short, len(x), d)
        if d.decision == "changed":
            verdict = "bad" if (d.cs.estimate > 0) == (shift > 0) else "good"
            return BisectStep(commit.short, verdict, len(x), _position(x, shift), session.clock() - start)
    return BisectStep(commit.short, "undecided", len(x), _position(x, shift), session.clock() - start)


def _position(x: Sequence[float], shift: float) -> float:
    """The commit's level on the GOOD (0) .. BAD (1) scale: mean(w) = (2 p - 1) D."""
    return 0.5 + float(np.mean(x)) / (2 * shift) if x and shift else math.nan


def commits_between(repo, older: str, newer: str) -> int:
    """How many commits ``older..newer`` holds (1 when adjacent; 0 when not an ancestor)."""
    from .versions import git

    out = git(repo, "rev-list", "--count", f"{older}..{newer}")
    return int(out.strip())


def bisect_changes(config: ProjectConfig, store, changes: Sequence, **kwargs) -> list[tuple[object, BisectResult]]:
    """Bisect every detected change whose two versions are not adjacent commits (``detect --bisect``).

    ``changes`` are :class:`regbench.detect.base.Change` objects; a change is bisected when both
    its versions are stored with a commit of ``config.repo`` and more than one commit lies
    between them (nightly snapshots, seeds 000 and 002).  A change is bisected once even when
    several series show it at the same versions and benchmark.  Returns (change, result) pairs.
    """
    commit_of = {v.name: v.commit for v in store.versions()}
    repo = config.repo or config.root
    out, seen = [], set()
    for ch in changes:
        a, b = commit_of.get(ch.previous), commit_of.get(ch.version)
        key = (ch.benchmark, a, b)
        if a is None or b is None or key in seen:
            continue
        seen.add(key)
        try:
            if commits_between(repo, a, b) <= 1:
                continue
            spec = config.benchmark(ch.benchmark)
        except (VersionError, ConfigError):
            continue  # not a commit of this repository, or not a benchmark of this config
        if spec.format is not None:
            continue
        out.append((ch, bisect(config, store, a, b, benchmark=ch.benchmark, **kwargs)))
    return out
