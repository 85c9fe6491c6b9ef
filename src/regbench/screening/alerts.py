"""Recalibration as alerts (seed 002 s.4.8, s.6 step 6): a significant change of an option's
effect between two screened versions is told once, like every performance change.

Each effect is its own series in the alert model: the screened benchmark, the configuration
``effect:TERM`` (``effect:journal_mode``, ``effect:journal_mode*synchronous``), the machine the
screen ran on.  A significant change of the effect between consecutive screened versions
(:func:`regbench.screening.recalibrate.compare_effects`: ``q < alpha`` after Benjamini-Hochberg)
becomes a :class:`~regbench.detect.Change` of that series with ``method = "recalibration"`` and
goes through :func:`regbench.detect.alerts.record_alerts`, so it gets everything an alert has:
de-duplication (screening the same versions again finds the same step and merges into the
stored alert: no second alert), suppression by the benchmark's ``alerts = false`` or ``[alerts]
suppress``, ``[alerts] require_machines``, triage (acknowledge, invalid, expected), delivery to
each sink once (``regbench alerts notify``).

An alert's ``change`` is relative (the alert model's unit): here the change of the effect
divided by the benchmark's level at the earlier version (the screen's mean response,
:attr:`~regbench.screening.effects.EffectsResult.mean`), so ``+0.20`` says "switching the option
from its low to its high level now costs 20% of the benchmark's time more than it did".  The
effect's level itself may be near zero (an option that starts to matter), so a change relative
to the effect would be unbounded.  The interval is the t interval of the change (its standard
error and Welch-Satterthwaite degrees of freedom) on the same scale, the p-value the change's
unadjusted t-test.  ``kind`` follows the benchmark's direction applied to the effect: an effect
that grows on a lower-is-better benchmark (the high level costs more than before, relative to the
low level) is a ``regression`` of that effect.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scipy import stats

from ..detect.alerts import AlertOutcome, record_alerts
from ..detect.base import Change, kind_of

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..store import Store
    from .campaign import ScreenResult

#: The ``method`` of a recalibration's alerts.
METHOD = "recalibration"
#: Configurations of effect series are named ``effect:TERM``.
EFFECT_PREFIX = "effect:"


def effect_config(term: str) -> str:
    """The configuration name of an effect's series: ``effect:journal_mode*synchronous``."""
    return EFFECT_PREFIX + term


def recalibration_changes(result: ScreenResult, *, direction: str = "lower",
                          confidence_level: float = 0.95) -> list[Change]:
    """The significant changes of effects in ``result``'s recalibration, as changes of their
    effect series (relative to the benchmark's level at the earlier version; see the module
    docstring).  A pair of versions whose earlier mean response is zero or not finite gives none."""
    means = {ve.version: ve.effects.mean for ve in result.effects if ve.effects is not None}
    out: list[Change] = []
    for r in result.recalibration:
        level = abs(means.get(r.before, math.nan))
        if not math.isfinite(level) or level == 0:
            continue
        for c in r.changes:
            if not c.significant:
                continue
            half = float(stats.t.ppf((1 + confidence_level) / 2, c.df)) * c.std_error
            rel = c.change / level
            out.append(Change(benchmark=result.benchmark, config=effect_config(c.name), machine=result.machine,
                              version=r.after, previous=r.before, change=rel, ci_low=(c.change - half) / level,
                              ci_high=(c.change + half) / level, kind=kind_of(c.change, direction), method=METHOD,
                              p_value=c.p_value, q_value=c.q_value,
                              detail=f"effect of {c.name}: {c.before:.4g} -> {c.after:.4g} "
                                     f"(change {c.change:+.4g}, q = {c.q_value:.3g})"))
    return out


def record_recalibration(store: Store, config: ProjectConfig | None, result: ScreenResult, *,
                         changes: Sequence[Change] | None = None) -> AlertOutcome:
    """Record ``result``'s significant effect changes as alerts (:func:`recalibration_changes`),
    idempotently: the effect series' configurations are created (with ``{"effect": TERM}`` as
    their parameters) and :func:`~regbench.detect.alerts.record_alerts` does the rest."""
    if changes is None:
        direction = config.benchmark(result.benchmark).direction if config is not None else "lower"
        changes = recalibration_changes(result, direction=direction)
    if not changes:
        return AlertOutcome()

    def named(conn) -> None:
        for c in changes:
            store.ensure_config(conn, c.config, params={"effect": c.config.removeprefix(EFFECT_PREFIX)})

    store.write(named)
    # No coverage: nothing is ever run under an effect's configuration, so no machine "measured
    # the step without showing it" (what would be a screen on another machine is not known here).
    return record_alerts(store, changes, config=config, coverage=_NoCoverage())


class _NoCoverage:
    """A :class:`~regbench.detect.alerts.Coverage` with no runs: effect series have none."""

    def measured_versions(self, benchmark: str, config: str) -> dict[str, list[str]]:
        return {}


__all__ = ["EFFECT_PREFIX", "METHOD", "effect_config", "recalibration_changes", "record_recalibration"]
