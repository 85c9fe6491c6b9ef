"""Runs on a Dask cluster (the ``dask`` extra): seed 002's grid of Skoll clients, on an existing
distributed engine.

Each benchmark machine runs one Dask worker started with the resource ``benchmark=1``
(``dask worker ADDRESS --nthreads 1 --resources benchmark=1``); every run is a task that needs
one ``benchmark`` unit, so a machine makes one run at a time, as the local executor does, and
runs on different machines go in parallel.  The task makes the run where it lands
(:meth:`RunRequest.execute`: a fresh process, with its timeout and process-group kill) and sends
back the :class:`~regbench.run.execute.RunOutcome`; regbench stores it here, on the client, as
it comes back, so the store is written by one process and a run is stored once:

- a worker that dies mid-task: the scheduler gives the task to another worker, and only the
  result that comes back is stored (the run that died left nothing);
- a worker that joins late gets tasks still waiting;
- ``KeyboardInterrupt`` cancels the tasks not yet done.

The versions' trees must be at the same paths on every worker (a shared file system, or the
same checkout): the request names the tree by path.  Tasks are submitted in the orchestrator's
order (RMIT) with decreasing priority, so the scheduler starts them in that order as workers
free up.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import ConfigError
from .core import Executor, RunRequest, Started
from .execute import RunOutcome
from .executor import register

#: The worker resource one benchmark run holds.
RESOURCE = "benchmark"


def _run(request: RunRequest) -> RunOutcome:
    return request.execute()


@register
class DaskExecutor(Executor):
    """Runs requests as tasks of a Dask scheduler at ``scheduler`` (``tcp://host:8786``), or of
    the ``client`` given (a test's ``LocalCluster``)."""

    name = "dask"

    def __init__(self, scheduler: str | None = None, *, client: Any = None, timeout: float = 10.0):
        from ..extras import require

        distributed = require("distributed", what="--executor dask")
        if client is None:
            if not scheduler:
                raise ConfigError("--executor dask needs --scheduler ADDRESS (such as tcp://127.0.0.1:8786)")
            try:
                client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
            self._own = True
        else:
            self._own = False
        self.client = client
        self._distributed = distributed

    def map(self, requests: Iterable[RunRequest], *, started: Started | None = None
            ) -> Iterator[tuple[RunRequest, RunOutcome]]:
        todo = list(requests)
        if not todo:
            return
        futures = {}
        for rank, request in enumerate(todo):
            future = self.client.submit(_run, request, resources={RESOURCE: 1}, pure=False,
                                        priority=len(todo) - rank, retries=0)
            futures[future] = request
            if started is not None:
                started(request)
        try:
            for future in self._distributed.as_completed(list(futures), loop=self.client.loop):
                yield futures[future], future.result()
        except BaseException:
            self.client.cancel(list(futures))
            raise

    def close(self) -> None:
        if self._own:
            self.client.close()
