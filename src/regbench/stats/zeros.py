"""Steps of a count from exactly 0 to above 0 and back, over a history of versions.

A count such as Go's ``allocs/op`` or ``B/op`` of an allocation-free loop is exactly 0 in every
sample of every run.  Such a history has no logarithm, and a version whose runs are all
identical has no run-to-run variance to test a difference against, so the change-point
detectors cannot see a step from 0 to above 0 (one allocation added per operation) or misplace a
step back to 0 (a fix).  The step itself is not a matter of noise, though: when every run of a
stretch of versions is exactly 0 and every run of the stretch that follows is above 0, the
question left is only whether a count that is sometimes 0 and sometimes not (a flaky count)
could have fallen that way by chance.

:func:`zero_steps` answers it with the permutation (Fisher's exact) test of the runs of the two
stretches: under a null where every run of both stretches is drawn from one distribution, each
run being 0 with some probability ``q``, the probability that the ``n0`` runs of one stretch are
exactly the zero ones among the ``n0 + n1`` is ``q ** n0 * (1 - q) ** n1``, at most
``1 / C(n0 + n1, n0)`` whatever ``q`` (a binomial probability is at most 1), and that bound is
the one-sided p-value of a perfectly separated 2 x 2 table (Fisher 1935).  It is multiplied by
the positions the split between the two stretches could have been at (Bonferroni), since the
stretches are found from the data.  A flaky count gives few stretches where every run is 0 and
fewer where every run is above 0, and short ones; 3 versions of 5 runs at 0 next to 1 version
of 5 runs above 0 is p = 3 / C(20, 5) = 2e-4, 1 version next to 1 is 1 / C(10, 5) = 0.004.

This module is pure: arrays in, a result out (STYLE.md habit 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: A version's runs, by :func:`version_kinds`: every run exactly 0 in every sample ...
ZERO = 0
#: ... every run's samples at least 0 and some above 0 ...
POSITIVE = 1
#: ... anything else (runs of both kinds, negative samples), or no run with a finite sample.
OTHER = -1
NO_DATA = -2


@dataclass(frozen=True)
class ZeroStep:
    """A step between a stretch of versions whose runs are all exactly 0 and one whose runs are
    all above 0.

    Attributes
    ----------
    index : int
        The first version of the new level (an index into the versions given).
    previous : int
        The last version before it (the versions between, if any, have no data).
    upward : bool
        From exactly 0 to above 0 (a relative change of +inf); False: back to exactly 0 (-100%).
    versions_before, versions_after : int
        Versions in the stretch before and after the step.
    runs_before, runs_after : int
        Their runs.
    positions : int
        Where the split between the two stretches could have been (the Bonferroni factor).
    p_value : float
        ``min(1, positions / C(runs_before + runs_after, runs_before))``.
    """

    index: int
    previous: int
    upward: bool
    versions_before: int
    versions_after: int
    runs_before: int
    runs_after: int
    positions: int
    p_value: float

    @property
    def change(self) -> float:
        """The relative change of the mean: +inf from 0, -1 back to 0."""
        return math.inf if self.upward else -1.0


@dataclass(frozen=True)
class ZeroSteps:
    """What :func:`zero_steps` found.

    Attributes
    ----------
    kinds : numpy.ndarray of int
        Each version's kind: :data:`ZERO`, :data:`POSITIVE`, :data:`OTHER` or :data:`NO_DATA`.
    tested : tuple of ZeroStep
        Every pair of neighbouring stretches of :data:`ZERO` and :data:`POSITIVE` versions, in
        history order: the hypotheses tested.
    steps : tuple of ZeroStep
        Those whose p-value is below ``alpha``.
    alpha : float
        The level they were kept at.
    zero_runs : numpy.ndarray of int
        Each version's runs exactly 0 (:data:`ZERO` runs), whatever its kind.
    """

    kinds: np.ndarray
    tested: tuple[ZeroStep, ...]
    steps: tuple[ZeroStep, ...]
    alpha: float
    zero_runs: np.ndarray | None = None


def run_kind(samples) -> int:
    """:data:`ZERO`, :data:`POSITIVE`, :data:`OTHER` or :data:`NO_DATA` for one run's samples
    (samples that are not numbers left out)."""
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return NO_DATA
    if not np.any(x):
        return ZERO
    if np.all(x >= 0):
        return POSITIVE
    return OTHER


def run_kinds(runs: Sequence) -> np.ndarray:
    """:func:`run_kind` of each run, at once: one pass over all their samples (a history of 500
    versions x 10 runs took 0.1 s run by run, most of a detection's time on such a series)."""
    arrays = [np.asarray(r, dtype=float).ravel() for r in runs]
    out = np.full(len(arrays), NO_DATA, dtype=int)
    sizes = np.fromiter((a.size for a in arrays), dtype=np.intp, count=len(arrays))
    has = sizes > 0
    if not has.any():
        return out
    x = np.concatenate(arrays)
    finite = np.isfinite(x)
    starts = (np.cumsum(sizes) - sizes)[has]  # np.add.reduceat needs non-empty segments
    n_finite = np.add.reduceat(finite, starts, dtype=np.intp)
    n_nonzero = np.add.reduceat(finite & (x != 0), starts, dtype=np.intp)
    n_negative = np.add.reduceat(finite & (x < 0), starts, dtype=np.intp)
    out[has] = np.where(n_finite == 0, NO_DATA,
                        np.where(n_nonzero == 0, ZERO, np.where(n_negative == 0, POSITIVE, OTHER)))
    return out


def version_kinds(runs: Sequence[Sequence[np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Each version's kind (every run :data:`ZERO`, every run :data:`POSITIVE`, else
    :data:`OTHER`; :data:`NO_DATA` without a run with a number) and its runs with numbers."""
    kinds, counts, _ = _version_kinds(runs)
    return kinds, counts


def _version_kinds(runs: Sequence[Sequence[np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`version_kinds`, and each version's runs exactly 0."""
    n = len(runs)
    each = run_kinds([r for version in runs for r in version])
    where = np.repeat(np.arange(n), np.fromiter((len(v) for v in runs), dtype=np.intp, count=n))
    data = each != NO_DATA
    counts = np.bincount(where[data], minlength=n)
    zero = np.bincount(where[each == ZERO], minlength=n)
    positive = np.bincount(where[each == POSITIVE], minlength=n)
    kinds = np.where(counts == 0, NO_DATA,
                     np.where(zero == counts, ZERO, np.where(positive == counts, POSITIVE, OTHER)))
    return kinds.astype(int), counts.astype(int), zero.astype(int)


def zero_steps(runs: Sequence[Sequence[np.ndarray]], *, alpha: float = 0.001) -> ZeroSteps:
    """Steps from exactly 0 to above 0 and back in a history of versions.

    Parameters
    ----------
    runs : sequence of sequence of array_like
        ``runs[k]``: the samples of each run of version ``k``, versions in history order.
    alpha : float, keyword-only
        A step is kept when its p-value is below this.

    Returns
    -------
    ZeroSteps

    Raises
    ------
    ValueError
        ``alpha`` not in (0, 1).

    Notes
    -----
    A stretch is a maximal run of consecutive versions with data of one kind; versions without
    data are skipped.  Only neighbouring stretches of :data:`ZERO` and :data:`POSITIVE` versions
    are compared: a version with runs of both kinds (a count that is 0 in some runs) is no
    evidence either way, and breaks the stretches.  The p-value is the bound of the module
    docstring: valid under any null where the runs of the two stretches are independent and
    identically distributed (exchangeable).

    References
    ----------
    Fisher, R. A. (1935), *The Design of Experiments*, s.2 (the exact test of a 2 x 2 table);
    Kalibera et al. 2005, s.2 (runs as the unit of replication).
    """
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise ValueError("`alpha` must be in (0, 1)")
    kinds, counts, zero_runs = _version_kinds(runs)
    with_data = [k for k in range(len(kinds)) if kinds[k] != NO_DATA]
    # Stretches: [kind, first, last, versions, runs] over the versions with data.
    stretches: list[list[int]] = []
    for k in with_data:
        if stretches and stretches[-1][0] == kinds[k]:
            stretches[-1][2] = k
            stretches[-1][3] += 1
            stretches[-1][4] += int(counts[k])
        else:
            stretches.append([int(kinds[k]), k, k, 1, int(counts[k])])
    tested = []
    for a, b in zip(stretches, stretches[1:], strict=False):
        if {a[0], b[0]} != {ZERO, POSITIVE}:
            continue
        positions = a[3] + b[3] - 1
        # log C(n, k) by lgamma: exact enough, and no overflow for long histories.
        n, k = a[4] + b[4], a[4]
        log_c = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        p = min(1.0, positions * math.exp(-log_c))
        tested.append(ZeroStep(b[1], a[2], a[0] == ZERO, a[3], b[3], a[4], b[4], positions, p))
    return ZeroSteps(kinds, tuple(tested), tuple(s for s in tested if s.p_value < alpha), float(alpha), zero_runs)


__all__ = ["NO_DATA", "OTHER", "POSITIVE", "ZERO", "ZeroStep", "ZeroSteps", "run_kind", "run_kinds", "version_kinds",
           "zero_steps"]
