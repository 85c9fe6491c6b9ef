"""Confirm before alerting (``regbench detect --confirm``): each new change's two versions run
again, interleaved, until a sequential comparison settles it.

Detection over a history with few runs per version raises false alarms: a version whose few
runs happened to be slow looks like a step.  Running the two versions of the change again costs
benchmark time but answers the question directly.  For each change, its previous version and its
version are run in pairs of fresh processes, in random order within each pair (RMIT, seed 004
s.2), by the sequential session of ``compare --run`` (:class:`~.sequential.Session`), until the
always-valid confidence sequence of :mod:`regbench.stats.sequential` settles, with the
detection's minimum change as the threshold and ``compare --run``'s error rate (5%), pair limit
and budget unless told otherwise.  Because the sequence holds at every pair, looking after each
and stopping at the first answer keeps the error rate: a change that is not there is confirmed
with probability at most ``alpha``.

What the verdict makes of the change (:class:`regbench.model.Confirmation`):

================ ================================================================================
``confirmed``    a change in the same direction: ``regression``/``improvement`` of the threshold's
                 size, or ``... (size uncertain)`` (certain, but the budget or the pair limit came
                 before it was certain whether it reaches the threshold)
``refuted``      ``no change`` of the threshold's size; ``small ...`` (real, all of it below the
                 minimum change the detection asked for); or any change in the other direction
``inconclusive`` the budget or the pair limit came before even the direction was settled
``unconfirmed``  it cannot be run here (:func:`~.rerun.plan_reruns`), a version does not build,
                 or its runs keep failing: nothing was learnt, so it alerts as it would have
================ ================================================================================

With a minimum change of 0 (``ci-overlap``'s default) "no change" can never be settled: such a
detection's changes are confirmed, refuted only when they go the other way, or else
inconclusive at the limits (a false alarm then costs the whole pair limit or budget).

Changes of one configuration share one session, so their runs are stored under one campaign,
whose plan lists them; several series showing the same step are run once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import NoiseControl, ProjectConfig
from ..errors import ConfigError
from ..model import Confirmation
from .core import campaign_status, check_measures
from .rerun import COMPARE_AS, Rerun, comparison_of, plan_reruns
from .sequential import (DEFAULT_ALPHA, DEFAULT_MAX_PAIRS, DEFAULT_MIN_PAIRS, Session, SessionReporter, SessionSetup,
                         Settled, StopRule, check_environment_size, check_pair_limits)

if TYPE_CHECKING:
    from ..detect.base import Change
    from ..store import Store

#: Why a comparison that did not settle stopped, in words.
_STOPPED = {"budget": "the time budget was spent", "max-pairs": "the pair limit was reached",
            "failed": "its runs kept failing", "unbuilt": "a version did not build here"}


@dataclass(frozen=True)
class ConfirmOptions:
    """How each change is confirmed: ``compare --run``'s defaults unless told otherwise.

    Attributes
    ----------
    budget : float or None
        Seconds of benchmark time per change at most; None: the pair limit only.
    max_pairs, min_pairs : int
        Pairs of runs per change at most / before any decision.
    alpha : float
        Error rate of each sequential decision.
    seed : int or None
        Seed of the order within pairs (drawn at random, and recorded, when None).
    duet : bool or None
        Run the two versions of a pair at the same time, each pinned to its own CPU
        (:mod:`regbench.run.duet`); None: ``[run] duet`` of the configuration.
    compare_as : str
        What each pair compares (:data:`~.rerun.COMPARE_AS`, :func:`~.rerun.comparison_of`):
        ``follow`` the detection (its location of a run, mode by mode for a change found in
        one mode), or always ``mean``, ``median``, ``low``, ``by-mode`` or ``instructions``.
    """

    budget: float | None = None
    max_pairs: int = DEFAULT_MAX_PAIRS
    min_pairs: int = DEFAULT_MIN_PAIRS
    alpha: float = DEFAULT_ALPHA
    seed: int | None = None
    duet: bool | None = None
    compare_as: str = "follow"

    def __post_init__(self):
        if self.budget is not None and not (isinstance(self.budget, int | float) and 0 < self.budget < math.inf):
            raise ConfigError(f"`budget` must be a positive number of seconds, got {self.budget!r}")
        check_pair_limits(self.min_pairs, self.max_pairs)
        if not 0 < self.alpha < 1:
            raise ConfigError(f"`alpha` must be in (0, 1), got {self.alpha!r}")
        if self.compare_as not in COMPARE_AS:
            raise ConfigError(f"`confirm_as` must be one of {', '.join(COMPARE_AS)}, got {self.compare_as!r}")

    def rule(self, threshold: float) -> StopRule:
        """The stop rule of one change's comparison."""
        return StopRule(threshold, self.alpha, self.budget, self.max_pairs, self.min_pairs)


def confirm_changes(config: ProjectConfig, store: Store, changes: Sequence[Change], *, threshold: float,
                    options: ConfirmOptions = ConfirmOptions(), machine: str | None = None,
                    reporter: SessionReporter | None = None, noise: NoiseControl | None = None
                    ) -> list[Confirmation]:
    """Run each change's two versions again until settled; what that says of each change.

    Parameters
    ----------
    config : ProjectConfig
        What to build and run.
    store : Store
        Where the changes' versions are stored; every run is stored there too.
    changes : sequence of Change
        The changes to confirm (those that would be new alerts).
    threshold : float
        Relative change of interest: the detection's minimum change.
    options : ConfirmOptions
        Budget, pair limits, error rate, seed.
    machine : str, optional
        This machine's name [default: the host name].
    reporter : SessionReporter, optional
        Told of each version made ready and each pair run.
    noise : NoiseControl, optional
        Noise control of every run [default: the ``[noise]`` table].

    Returns
    -------
    list of Confirmation
        One per change, in order.

    Raises
    ------
    ConfigError
        A threshold that is not a finite number >= 0, or an environment too large for
        ``env_size``, before anything is run.
    """
    from .fingerprint import default_machine_name

    if not (isinstance(threshold, int | float) and math.isfinite(threshold) and threshold >= 0):
        raise ConfigError(f"`threshold` must be a finite number >= 0, got {threshold!r}")
    here = machine or default_machine_name()
    reruns, skipped = plan_reruns(config, store, changes, machine=here, purpose="confirm")
    found: dict[int, Confirmation] = {id(s.change): Confirmation("unconfirmed", reason=s.reason) for s in skipped}
    by_config: dict[str, list[Rerun]] = {}
    for r in reruns:
        by_config.setdefault(r.change.config, []).append(r)
    for group in by_config.values():
        check_environment_size(config, noise, [r.spec for r in group],
                               [c.short for r in group for c in (r.previous, r.version)])
    if options.compare_as == "instructions" and reruns:  # no counter here: say so before any run
        check_measures(store, [dataclasses.replace(r.spec, measures=("instructions",)) for r in reruns])
    rule = options.rule(float(threshold))
    for config_name, group in by_config.items():
        setup = SessionSetup(machine=here, config_name=config_name, seed=options.seed, noise=noise,
                             duet=config.run.duet if options.duet is None else options.duet)
        plan = {"confirm": {"changes": [{"benchmark": r.spec.name, "previous": r.previous.short,
                                         "version": r.version.short, "kind": r.change.kind,
                                         "method": r.change.method,
                                         "compared_as": comparison_of(r.change, options.compare_as,
                                                                     direction=r.spec.direction)}
                                        for r in group],
                            "compare_as": options.compare_as, "threshold": rule.threshold, "alpha": rule.alpha, "budget": rule.budget,
                            "max_pairs": rule.max_n}}
        session = Session(config, store, setup, reporter=reporter, plan=plan,
                          specs=list({r.spec.name: r.spec for r in group}.values()))
        settled: dict[tuple, Settled] = {}
        with session, campaign_status(store, session.campaign_id):
            for r in group:
                how = comparison_of(r.change, options.compare_as, direction=r.spec.direction)
                key = (r.spec.name, r.previous.sha, r.version.sha, *sorted(how.items()))
                if key not in settled:
                    settled[key] = session.settle(r.spec, r.previous, r.version, rule, **how)
                found[id(r.change)] = judge(settled[key], r.change.kind, campaign_id=session.campaign_id)
    return [found[id(c)] for c in changes]


def judge(settled: Settled, kind: str, *, campaign_id: int | None = None) -> Confirmation:
    """What a sequential comparison of a change's two versions says of a detected change of ``kind``.

    See the module docstring for the rules.

    Parameters
    ----------
    settled : Settled
        The comparison of the change's version against its previous version.
    kind : {"regression", "improvement"}
        The detected change's kind.
    campaign_id : int, optional
        The campaign holding the comparison's runs.

    Returns
    -------
    Confirmation
    """
    d = settled.decision
    verdict = settled.verdict if d is not None else None
    measured = Confirmation("confirmed", verdict=verdict, stopped=settled.stopped, change=d.change if d else None,
                            cs_low=d.ci_low if d else None, cs_high=d.ci_high if d else None,
                            alpha=d.alpha if d else None, threshold=d.threshold if d else None,
                            pairs=settled.pairs, failed_pairs=settled.failed_pairs, seconds=settled.seconds,
                            campaign_id=campaign_id, compared_by=settled.compared_by if settled.pairs else None)

    def said(status: str, reason: str) -> Confirmation:
        return dataclasses.replace(measured, status=status, reason=reason)

    other = "improvement" if kind == "regression" else "regression"
    if settled.stopped in ("unbuilt", "failed"):
        return said("unconfirmed", f"{_STOPPED[settled.stopped]}: nothing could be measured")
    threshold = f"{d.threshold:.1%}" if d is not None else "the threshold"
    if verdict in (kind, f"{kind} (size uncertain)"):
        return measured
    if verdict == "no change":
        return said("refuted", f"no change of {threshold} or more")
    if verdict == f"small {kind}":
        return said("refuted", f"a real {kind}, but all of it below the minimum change ({threshold})")
    if verdict is not None and other in verdict:
        return said("refuted", f"the change goes the other way ({verdict})")
    more = f"; about {settled.more_pairs} more pairs would settle it" if settled.more_pairs else ""
    return said("inconclusive", f"{_STOPPED.get(settled.stopped, settled.stopped)}{more}")
