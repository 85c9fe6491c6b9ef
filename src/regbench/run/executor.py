"""Executors: where the runs of a campaign or a session are made.

The interface is :class:`regbench.run.core.Executor`: every orchestrator (a campaign, its
adaptive rounds, a sequential session, a bisection) hands its runs to an executor as
:class:`~regbench.run.core.RunRequest` objects and stores the outcomes itself, as they come back
(:class:`~regbench.run.core.TrialRunner`).  An executor only runs processes and never writes to
the store, so a run made elsewhere is stored exactly like a local one.

==========  ====================================================================================
name        executor
==========  ====================================================================================
``local``   :class:`LocalExecutor`: one run at a time on this machine, in the order given
``dask``    :class:`~regbench.run.dask_executor.DaskExecutor` (registered when its module is
            imported; the ``dask`` extra): runs as tasks of a Dask scheduler's workers
==========  ====================================================================================

The order of the requests is the orchestrator's (RMIT, seed 004 s.2); an executor that runs
several at once (on a grid of machines, as seed 002's Skoll clients do) yields outcomes as they
end.  New executors subclass :class:`~regbench.run.core.Executor` and :func:`register` under a
short name.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator

from ..errors import ConfigError
from .core import Executor, RunRequest, Started
from .exclusive import measuring
from .execute import RunOutcome


class LocalExecutor(Executor):
    """One run at a time on this machine, in the order given: nothing else regbench starts runs
    beside it, so one run never disturbs another's timing; each holds the machine's measuring
    lock (:mod:`regbench.run.exclusive`), so another regbench command's runs wait for it."""

    name = "local"

    def map(self, requests: Iterable[RunRequest], *, started: Started | None = None,
            waiting: Started | None = None) -> Iterator[tuple[RunRequest, RunOutcome]]:
        for request in requests:
            if started is not None:
                started(request)
            with measuring(request.noise.pin, enabled=request.noise.exclusive,
                           waiting=None if waiting is None else functools.partial(waiting, request),
                           resumed=None if started is None else functools.partial(started, request)):
                outcome = request.execute()
            yield request, outcome


REGISTRY: dict[str, type[Executor]] = {}


def register(cls: type[Executor]) -> type[Executor]:
    """Add an executor class to the registry under its :attr:`~Executor.name`."""
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"executor name {cls.name!r} is empty or taken")
    REGISTRY[cls.name] = cls
    return cls


register(LocalExecutor)


def get_executor(name: str = "local", **options: object) -> Executor:
    """A new executor by name."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown executor {name!r} (known: {', '.join(sorted(REGISTRY))})") from None
    return cls(**options)
