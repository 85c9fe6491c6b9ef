"""One synthetic history with known levels: the series detector tests are written against.

:func:`make_series` draws one benchmark's history at given per-version levels with the
replication structure of seed 000 (000_833974a369fcaf36.txt) s.2: every run of a version is a
fresh process with its own random initial conditions, so it gets its own level (a *run effect*),
and its iterations scatter around that level.  Optionally each version also gets its own effect
(a new build, seed 000 s.2's "factors that stay the same for all operations of all benchmark
processes run using the same benchmark binary image").  The value of iteration ``i`` of run
``r`` of version ``k`` is::

    levels[k] * (1 + V_k) * (1 + R_kr) * (1 + E_kri)

with ``V_k ~ N(0, version_sd^2)``, ``R_kr ~ N(0, run_sd^2)`` and ``E_kri ~ N(0, iteration_sd^2)``
independent, drawn in that order (version by version, run by run) from one generator.  The
truth is ``levels``: a change is where it changes.  For a whole labelled corpus with realistic
noise (clusters, outliers, warm-up, creeping changes) see :mod:`.corpus`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..model import DEFAULT_CONFIG, DIRECTIONS, Series, VersionInfo


def make_series(levels: Sequence[float], *, n_runs: int = 5, n_iterations: int = 20, run_sd: float = 0.005,
                iteration_sd: float = 0.02, version_sd: float | None = None, direction: str = "lower",
                benchmark: str = "bench", config: str = DEFAULT_CONFIG, machine: str = "m1", unit: str = "s",
                runs_at: Mapping[int, int] | None = None, failed_at: Mapping[int, int] | None = None,
                rng=0) -> Series:
    """A history of versions ``v0, v1, ...`` at the given levels, with run-level replication.

    Parameters
    ----------
    levels : sequence of float
        The true level of each version, in history order.
    n_runs : int, keyword-only
        Runs per version (see ``runs_at`` for exceptions).
    n_iterations : int, keyword-only
        Measured iterations per run (no warm-up).
    run_sd, iteration_sd : float, keyword-only
        Relative standard deviations of the run effect and of the iterations within a run.
    version_sd : float or None, keyword-only
        Relative standard deviation of a version effect.  None draws none; a number, 0 included,
        draws one per version before its runs, so that with a given seed the runs are the same
        draws whatever ``version_sd`` is.
    direction : {"lower", "higher"}, keyword-only
        Which way is better (sets the kind of a change).
    benchmark, config, machine, unit : str, keyword-only
        The series' names.
    runs_at : mapping of int -> int, keyword-only
        Versions (by position) with another number of runs than ``n_runs``, 0 included (a
        version whose runs all failed, or that was not measured).
    failed_at : mapping of int -> int, keyword-only
        Failed runs to record at some versions (:attr:`Series.failed`; 0 elsewhere).
    rng : int, numpy.random.Generator or None, keyword-only
        Seed or generator (STYLE.md habit 3); the same seed gives the same series.

    Returns
    -------
    Series
        Versions ``v{k}`` with ids ``k + 1``, no warm-up.

    Raises
    ------
    ValueError
        For a non-finite level, a count below 1 (``n_runs``, ``n_iterations``) or below 0
        (``runs_at``, ``failed_at``), a negative standard deviation or an unknown ``direction``.

    References
    ----------
    seed 000 s.2 (random initial conditions: runs, not iterations, are the replicates).
    """
    for name, value in (("n_runs", n_runs), ("n_iterations", n_iterations)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer")
    for name, sd in (("run_sd", run_sd), ("iteration_sd", iteration_sd), ("version_sd", version_sd)):
        if sd is not None and not (isinstance(sd, numbers.Real) and sd >= 0):
            raise ValueError(f"`{name}` must be a non-negative number")
    if direction not in DIRECTIONS:
        raise ValueError(f"`direction` must be one of {', '.join(DIRECTIONS)}")
    if not all(isinstance(x, numbers.Real) and math.isfinite(x) for x in levels):
        raise ValueError("`levels` must be finite numbers")
    runs_at, failed_at = dict(runs_at or {}), dict(failed_at or {})
    for name, table in (("runs_at", runs_at), ("failed_at", failed_at)):
        if not all(isinstance(v, numbers.Integral) and v >= 0 for v in table.values()):
            raise ValueError(f"`{name}` must map versions to non-negative integers")

    gen = np.random.default_rng(rng)
    s = Series(benchmark, config, machine, unit, direction)
    for k, level in enumerate(levels):
        s.versions.append(VersionInfo(name=f"v{k}", id=k + 1))
        centre = level * (1 + gen.normal(0, version_sd)) if version_sd is not None else level
        s.runs.append([centre * (1 + gen.normal(0, run_sd)) * (1 + gen.normal(0, iteration_sd, n_iterations))
                       for _ in range(runs_at.get(k, n_runs))])
        s.failed.append(failed_at.get(k, 0))
        s.warmup.append(0)
    return s
