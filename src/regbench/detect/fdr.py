"""False-discovery-rate control across many series (Benjamini-Hochberg).

A store with thousands of benchmarks tests thousands of hypotheses each time detection runs; at a
per-test level of 0.1% that is still a handful of false alarms per pass.  Benjamini and Hochberg's
step-up procedure bounds the expected fraction of false discoveries among the reported changes by
``q`` when the tests are independent or positively dependent (Benjamini and Hochberg, JRSS B 57
(1995); Benjamini and Yekutieli, Ann. Stat. 29 (2001) for the dependence condition).  The family
is every hypothesis the detector tested (:meth:`Detector.detect_counted`), not only the changes it
reported: the untested-as-significant ones enter with p = 1, which is what makes the control hold.

The adjustment is written out here (a sort and a cumulative minimum) rather than taken from
statsmodels' ``multipletests(method="fdr_bh")``, because importing statsmodels (and through it
scipy.stats) takes about a second, which would be most of an incremental detection pass; the
tests check it against statsmodels and against the step-up rule by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .base import Change


@dataclass(frozen=True)
class FDRResult:
    """Outcome of :func:`control_fdr`.

    Attributes
    ----------
    kept : tuple of Change
        Changes whose Benjamini-Hochberg adjusted p-value (``q_value``) is at most ``q``, plus
        changes without a p-value, which pass through untouched (``applicable`` tells whether any
        had one).
    dropped : tuple of Change
        Changes with a p-value that did not survive the adjustment.
    n_tests : int
        Size of the family: hypotheses tested across all series.
    q : float
        The target false discovery rate.
    applicable : bool
        False when no change carried a p-value (methods such as ci-overlap decide by intervals).
    """

    kept: tuple[Change, ...]
    dropped: tuple[Change, ...]
    n_tests: int
    q: float
    applicable: bool


def control_fdr(changes: list[Change], n_tests: int, *, q: float = 0.05) -> FDRResult:
    """Keep the changes that survive Benjamini-Hochberg at level ``q`` over ``n_tests`` hypotheses.

    Parameters
    ----------
    changes : list of Change
        Candidate changes from every series; those with ``p_value`` take part.
    n_tests : int
        Hypotheses tested in all (at least the number of changes with a p-value).
    q : float, keyword-only
        Target false discovery rate, in (0, 1).

    Returns
    -------
    FDRResult
        Kept changes carry their adjusted p-value in ``q_value``; order is preserved.
    """
    if not 0 < q < 1:
        raise ValueError("`q` must be in (0, 1)")
    with_p: list[int] = []  # the changes that take part, by index
    p_known: list[float] = []  # and their p-values
    for i, c in enumerate(changes):
        if c.p_value is not None and np.isfinite(c.p_value):
            with_p.append(i)
            p_known.append(c.p_value)
    n_tests = max(int(n_tests), len(with_p))
    if not with_p:
        return FDRResult(tuple(changes), (), n_tests, q, False)
    p = np.ones(n_tests)
    p[: len(with_p)] = p_known
    adjusted = bh_adjust(p)
    reject = adjusted <= q
    verdict = {i: (bool(reject[j]), float(adjusted[j])) for j, i in enumerate(with_p)}
    kept: list[Change] = []
    dropped: list[Change] = []
    for i, c in enumerate(changes):
        if i not in verdict:
            kept.append(c)
            continue
        ok, qv = verdict[i]
        (kept if ok else dropped).append(replace(c, q_value=qv))
    return FDRResult(tuple(kept), tuple(dropped), n_tests, q, True)


def bh_adjust(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values: ``min over j >= i of p_(j) m / j``, capped at 1,
    in the input order (what statsmodels' ``multipletests(method="fdr_bh")`` returns)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = adjusted_sorted
    return out
