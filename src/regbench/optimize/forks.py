"""A tool's runs made of processes of its own (JMH's forks), as ``regbench optimize`` reads them.

A JMH invocation runs each benchmark in ``-f`` forks, each a fresh JVM that runs ``-wi`` warm-up
iterations (not reported) and then the ``-i`` iterations regbench asks for (``REGBENCH_ITERATIONS``,
the benchmark's ``warmup`` + iterations).  regbench stores the forks' samples of one invocation as
one run, one fork after the other (:func:`regbench.run.core.tool_records`), and what JMH said of
them, their number among it, beside the run (table ``run_tool``, :class:`regbench.model.ToolTiming`).
A plan's iterations reach ``-i``: they are iterations of each fork.  So the simulation keeps the
first ``i`` measured iterations of each fork (:func:`regbench.optimize.algorithm.simulated`), which
needs each stored run cut back into its forks: :func:`fork_layout` says how (or why it cannot be),
:func:`fork_samples` cuts.

A fork is a fresh process, the paper's run level (Japke et al. 2025, s.2), but a plan cannot
change how many the tool starts (the command's ``-f``): the forks are kept in every configuration
and counted in its cost, ``r (o + P (w + i))`` iterations.

Pure but for :func:`run_processes`, which reads what the store holds of a series' runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..adapters.base import without_metric
from ..model import RunInfo, SeriesName, StoredRun, tool_series

#: Why a benchmark's runs are read as one stream each when the tool said nothing of its processes.
UNSAID = "the tool did not say how many processes (forks) its runs had"


@dataclass(frozen=True)
class ForkLayout:
    """How the ok runs of one tool benchmark split into the processes the tool started in each.

    Attributes
    ----------
    processes : int
        ``P``, forks a run; 1 where the runs are read as one stream each (one fork a run, or
        ``reason`` says why they cannot be split).
    iterations : int
        Measured iterations of each fork, the shortest run's (longer runs are cut to it); 0 where
        the runs are not split.
    warmup : int
        Leading samples of each fork left out as warm-up: the benchmark's ``warmup`` (the stored
        runs' warm-up), which ``REGBENCH_ITERATIONS`` gives every fork; a stored run marks the
        first fork's alone.
    reason : str or None
        Why runs of several processes, or of processes not said, are not split (one phrase);
        None where they are split or are one process each.
    said : bool
        Whether the tool said the processes of every ok run.
    """

    processes: int = 1
    iterations: int = 0
    warmup: int = 0
    reason: str | None = None
    said: bool = True

    @property
    def forked(self) -> bool:
        """Whether the runs are split into ``processes`` > 1 forks."""
        return self.processes > 1 and self.reason is None


def fork_layout(runs: Sequence[RunInfo], processes: Mapping[int, int]) -> ForkLayout:
    """How the ok ``runs`` of one experiment (one series, version, configuration and machine)
    split into their tool's processes.

    Parameters
    ----------
    runs : sequence of RunInfo
        The experiment's stored runs; the ``ok`` ones are read (their ``n_samples`` and
        ``warmup``).
    processes : Mapping[int, int]
        By run index, the processes the tool said it started for the run
        (:attr:`regbench.model.ToolTiming.processes`; a secondary metric's are its benchmark's,
        :func:`run_processes`).

    Returns
    -------
    ForkLayout
        Split (``forked``) when every ok run's processes are said and equal, ``P`` > 1, every
        run has the same warm-up and its samples are ``P`` blocks of one length longer than
        it; one stream a run otherwise, with the reason where the runs had several processes
        or did not say.
    """
    ok = [r for r in runs if r.status == "ok"]
    known = [processes.get(r.run_index) for r in ok]
    if not ok:
        return ForkLayout()
    if all(p is None for p in known):
        return ForkLayout(reason=UNSAID, said=False)
    if any(p is None for p in known):
        missing = sum(p is None for p in known)
        return ForkLayout(reason=f"the tool did not say how many processes {missing} of its {len(ok)} ok runs had",
                          said=False)
    counts = sorted({int(p) for p in known if p is not None})
    if len(counts) > 1:
        return ForkLayout(reason=f"its runs had {' and '.join(map(str, counts))} processes (forks)")
    (p,) = counts
    if p <= 1:
        return ForkLayout()
    warmups = sorted({r.warmup for r in ok})
    if len(warmups) > 1:
        return ForkLayout(reason=f"its {p}-fork runs have different warm-ups")
    (w,) = warmups
    uneven = [r for r in ok if r.n_samples % p or r.n_samples // p <= w]
    if uneven:
        return ForkLayout(reason=f"{len(uneven)} of its {len(ok)} ok runs do not hold {p} forks of one length "
                                 f"with {w} warm-up samples each (a fork failed, or ran fewer iterations?)")
    return ForkLayout(p, min(r.n_samples // p for r in ok) - w, w)


def fork_samples(runs: Sequence[StoredRun], layout: ForkLayout) -> np.ndarray:
    """The ``(runs, forks, iterations)`` measured iterations of the ok ``runs`` split by
    ``layout`` (:func:`fork_layout` of the same runs): each fork's samples after its
    ``layout.warmup`` leading ones, cut to ``layout.iterations``."""
    if not layout.forked:
        raise ValueError("`layout` does not split the runs into forks")
    out = []
    for r in runs:
        if r.status != "ok":
            continue
        s = np.asarray(r.samples, dtype=float)
        if s.size % layout.processes:
            raise ValueError(f"run {r.run_index} does not hold {layout.processes} forks of one length")
        blocks = s.reshape(layout.processes, -1)
        if blocks.shape[1] < layout.warmup + layout.iterations:
            raise ValueError(f"run {r.run_index} has forks of fewer than {layout.warmup + layout.iterations} samples")
        out.append(blocks[:, layout.warmup:layout.warmup + layout.iterations])
    return np.stack(out)


def run_processes(store, series: str, *, version: str, config: str, machine: str) -> dict[int, int]:
    """By run index, the processes the tool said it started in each run of ``series`` at
    ``version`` (its ``run_tool`` rows); a secondary metric's (``SPEC/NAME [metric]``, which JMH
    measures in its benchmark's forks and says nothing of) are its benchmark's."""
    parsed = SeriesName.parse(series)
    primary = series if parsed.reported is None else tool_series(parsed.benchmark, without_metric(parsed.reported))
    return {i.run_index: i.timing.processes
            for i in store.run_tools(benchmarks=[primary], config=config, machine=machine)
            if i.version == version and i.timing is not None}
