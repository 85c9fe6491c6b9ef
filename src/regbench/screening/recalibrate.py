"""Recalibration (seed 002 s.4.8, s.6 step 6): has an option's effect changed between versions?

Each effect estimated at both versions is compared: the difference of the two estimates, its
standard error ``sqrt(se_1^2 + se_2^2)`` with Welch-Satterthwaite degrees of freedom from the two
pure errors, and a two-sided t-test; the p-values of all the effects compared are adjusted by
Benjamini-Hochberg (:func:`scipy.stats.false_discovery_control`), since one screening compares
dozens of effects at once.  Without replication an effect's standard error is its version's
Lenth pseudo standard error, with ``m/3`` degrees of freedom (Lenth 1989).  A change of
importance (an effect above Lenth's margin at one version and not at the other) is reported too;
seed 002 recalibrates the *set of important options*, and a significant change of an effect is
what makes that set move.

Pure numpy and scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import ConfigError
from .effects import EffectsResult


@dataclass(frozen=True)
class EffectChange:
    """One effect at two versions.

    Attributes
    ----------
    name : str
    before, after : float
        The estimates at the earlier and the later version.
    change : float
        ``after - before``.
    std_error, df : float
        Of the change.
    p_value, q_value : float
        Two-sided t-test of no change, and its Benjamini-Hochberg adjustment over every effect
        compared.
    important_before, important_after : bool
        Lenth's decision at each version.
    significant : bool
        ``q_value < alpha``.
    """

    name: str
    before: float
    after: float
    change: float
    std_error: float
    df: float
    p_value: float
    q_value: float
    important_before: bool
    important_after: bool
    significant: bool

    @property
    def importance_changed(self) -> bool:
        return self.important_before != self.important_after


def _se_df(result: EffectsResult, se: float) -> tuple[float, float]:
    if result.df_error > 0 and np.isfinite(se):
        return se, float(result.df_error)
    return result.lenth.pse, result.lenth.df


def compare_effects(before: EffectsResult, after: EffectsResult, *, alpha: float = 0.05) -> tuple[EffectChange, ...]:
    """Every effect estimated at both versions, compared (largest |change| first).

    Raises
    ------
    ConfigError
        ``alpha`` out of (0, 1), or no effect in common.
    """
    if not 0 < alpha < 1:
        raise ConfigError("`alpha` must be in (0, 1)")
    old = {e.term.name: e for e in before.effects}
    pairs = [(old[e.term.name], e) for e in after.effects if e.term.name in old]
    if not pairs:
        raise ConfigError("the two versions have no effect in common")
    rows = []
    for a, b in pairs:
        se_a, df_a = _se_df(before, a.std_error)
        se_b, df_b = _se_df(after, b.std_error)
        var = se_a ** 2 + se_b ** 2
        denom = (se_a ** 4 / df_a if df_a > 0 else 0) + (se_b ** 4 / df_b if df_b > 0 else 0)
        df = var ** 2 / denom if denom > 0 else float("inf")
        change = b.estimate - a.estimate
        if abs(change) <= before.resolution + after.resolution:
            change = 0.0  # rounding of two estimates (effects.rounding_floor), not a change
        p = float(2 * stats.t.sf(abs(change) / np.sqrt(var), df)) if var > 0 else (0.0 if change else 1.0)
        rows.append((a, b, change, float(np.sqrt(var)), float(df), p))
    q = stats.false_discovery_control([r[5] for r in rows])
    out = [EffectChange(name=b.term.name, before=a.estimate, after=b.estimate, change=change, std_error=se, df=df,
                        p_value=p, q_value=float(qv), important_before=a.important, important_after=b.important,
                        significant=bool(qv < alpha))
           for (a, b, change, se, df, p), qv in zip(rows, q, strict=True)]
    out.sort(key=lambda c: -abs(c.change))
    return tuple(out)
