"""Runs and detection on a Dask cluster (the ``dask`` extra): seed 002's grid of Skoll clients, on
an existing distributed engine.

Runs
----
Each benchmark machine runs one Dask worker started with the resource ``benchmark=1``
(``dask worker ADDRESS --nthreads 1 --resources benchmark=1``); every run is a task that needs
one ``benchmark`` unit, so a machine makes one run at a time, as the local executor does, and
runs on different machines go in parallel.  The task makes the run where it lands
(:meth:`RunRequest.execute`: a fresh process, with its timeout and process-group kill) and sends
back the :class:`~regbench.run.execute.RunOutcome` with the name and fingerprint of the worker's
machine (its host name, or ``REGBENCH_MACHINE`` set where the worker starts); regbench stores it
here, on the client, as it comes back, under that machine, so the store is written by one
process and a run is stored once:

- a worker that dies mid-task: the scheduler gives the task to another worker, and only the
  result that comes back is stored (the run that died left nothing); a run that was running in
  more worker deaths than the scheduler allows (``distributed.scheduler.allowed-failures``, 3 by
  default) is a ``failed`` run, with the reason in its stderr tail.  The scheduler also counts a
  death against the tasks that only waited in the dying worker's queue, and gives up on them
  too (``KilledWorker``): each task tells the client when it starts on a worker (a worker
  event), and one given up on that did not run in that many deaths is submitted again;
- a worker that joins late (or that its nanny restarts) gets tasks still waiting for its machine;
- a task that no worker can take any more (every worker of its machine, or offering a tag it
  needs, gone) is given up on after ``stranded_after`` seconds (30) without one, and, once the
  other tasks are back, :class:`ExecutorLostError` stops the campaign for the same command to
  resume: nothing of it is stored;
- ``KeyboardInterrupt`` cancels the tasks not yet done;
- a lost scheduler (Dask cancels every future of a client that lost its connection) is not any
  run's failure: nothing is stored for the runs not back, and :class:`ExecutorLostError` stops
  the campaign, marked ``interrupted`` as after Ctrl-C, for the same command to resume.

Machines (docs/dask.md s.2): with workers of several machines, a campaign makes every run of an
experiment on each machine that can make it, each machine's runs being its own series
(:attr:`RunRequest.machine`).  A worker plugin gives every worker one unit of a ``machine:NAME``
resource of its machine, and a pinned run's task needs its machine's unit.

Tags (seed 002 s.2: Skoll gives a client only tasks compatible with it, "with the OS running on
the client machine"): a benchmark's ``requires = ["hyperfine"]`` makes its tasks need one unit of
each named resource besides ``benchmark``; workers advertise them as resources (``--resources
"benchmark=1 hyperfine=1 os-linux=1"``; a resource of 1 is only ever held together with
``benchmark``, which already allows one run at a time).  Before a campaign or a screen starts,
:meth:`DaskExecutor.refused` names the benchmarks whose tags no worker offers (after waiting
``wait`` seconds for one to join): they are not run and nothing of theirs is stored, so that a
later command with a suitable worker runs them (a screen, of one benchmark, stops with a
:class:`ConfigError`).  A task no worker can take when it is submitted (a worker that left since)
is not submitted but recorded as a ``failed`` run that names the resources missing (a task
pinned to a machine no worker offers any more stops the campaign instead).  No worker offering
``benchmark`` at all is the cluster's set-up, not any run's failure: a :class:`ConfigError` naming
the workers connected and what they offer, before anything is stored.

The versions' trees must be at the same paths on every worker (a shared file system, or the
same checkout): the request names the tree by path.  Tasks are submitted in the orchestrator's
order (RMIT) with decreasing priority, so the scheduler starts them in that order as workers
free up.

Detection
---------
:class:`DaskBatchPool` hands the detection driver's batches of series
(:func:`regbench.detect.driver.detect_changes`, ``pool=``) to the workers: the source (a store that
pickles as its URL) and the detector are sent to each worker once, every worker reads its series
from the shared store, and only the tallies come back, in submission order, so the result is the
one ``--jobs`` gives.  Detection tasks hold no ``benchmark`` resource.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import itertools
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError, ExecutorLostError
from ..model import utcnow
from ..config import BenchmarkSpec
from .core import Executor, RunRequest, Started
from .execute import RunOutcome
from .executor import register
from .exclusive import measuring
from .fingerprint import default_machine_name, machine_fingerprint
from .process import NOTE

#: The worker resource one benchmark run holds.
RESOURCE = "benchmark"

#: Set in a worker's environment to name the machine its runs are stored under.
MACHINE_VARIABLE = "REGBENCH_MACHINE"

#: The worker resource of a machine's name, ``machine:NAME`` (:func:`machine_resource`).
MACHINE_PREFIX = "machine:"

#: The name of the worker plugin that gives workers their machine's resource.
PLUGIN_NAME = "regbench-machine"

#: Seconds between two looks, while runs are out, for runs that no worker can take any more
#: (their machine's workers all gone): one given up on after :data:`STRANDED_AFTER` seconds.
CHECK_EVERY = 1.0

#: Seconds a run waits, at least, for a worker of its machine to come back (a nanny restarting
#: its worker, a machine rebooting) before the campaign is interrupted (the executor's
#: :attr:`~DaskExecutor.wait` when longer).
STRANDED_AFTER = 30.0

def connect(scheduler: str | None, *, timeout: float = 10.0, what: str = "--executor dask") -> Any:
    """A Dask client of the scheduler at ``scheduler``, or a one-line :class:`ConfigError`.

    The address is first asked who it is (:func:`scheduler_identity`, bounded by ``timeout``): a
    client of Dask's own would hang on a port whose service waits for its client to speak (an
    HTTP server), fail with a traceback where one speaks first (sshd's banner read as a frame
    length), and stall in its finalizer after a malformed address.  Only an address where a Dask
    scheduler answers gets a client.
    """
    from ..extras import require

    distributed = require("distributed", what=what)
    if not scheduler:
        raise ConfigError(f"{what} needs --scheduler ADDRESS (such as tcp://127.0.0.1:8786)")
    scheduler_identity(scheduler, timeout=timeout)
    try:
        return distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except Exception as exc:  # noqa: BLE001 - whatever Dask raises, the command says it on one line
        raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {_reason(exc)}") from None


def scheduler_identity(address: str, *, timeout: float = 10.0) -> dict[str, Any]:
    """What the Dask scheduler at ``address`` says of itself (its ``identity``), or a one-line
    :class:`ConfigError` within about ``timeout`` seconds: the address is malformed, nothing
    accepts there (connecting is retried for ``timeout`` seconds, as Dask does), what accepts does
    not answer in Dask's protocol in time, or it answers but is not a scheduler (a worker).

    The exchange runs in an event loop of its own, bounded as a whole: Dask's ``connect`` bounds
    the connection but not the handshake that follows it.
    """
    import asyncio

    from distributed.comm import connect as dask_connect

    async def ask() -> Any:
        comm = await dask_connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "n_workers": 0, "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    # A second beyond ``timeout``: a refused connection is retried for ``timeout`` seconds and
    # then said as such (OSError), not as a silence.
    bound = timeout + 1.0
    fail = f"cannot reach the Dask scheduler at {address}"
    try:
        reply = asyncio.run(asyncio.wait_for(ask(), bound))
    except TimeoutError:  # asyncio's, since Python 3.11
        raise ConfigError(f"{fail}: no answer in Dask's protocol within {bound:g} s (is it the scheduler's "
                          "port? `dask scheduler` listens on 8786)") from None
    except (OSError, ValueError) as exc:  # refused, unknown host, malformed address
        raise ConfigError(f"{fail}: {_reason(exc)}") from None
    except Exception:  # noqa: BLE001 - another protocol's bytes read as Dask frames (sshd's banner as a length)
        raise ConfigError(f"{fail}: what answers there is not a Dask scheduler (it does not speak Dask's "
                          "protocol)") from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        # A worker or a nanny answers too, with an error: their identity takes no n_workers.
        raise ConfigError(f"{fail}: what answers there is a Dask server but not the scheduler (a worker's "
                          "address?)" if isinstance(reply, dict) and "status" in reply
                          else f"{fail}: what answers there is not a Dask scheduler")
    return reply


def _reason(exc: BaseException) -> str:
    """``exc`` on one line, with the operating system's reason at the root of its causes (Dask's
    "Timed out trying to connect" of a refused connection hides "Connection refused")."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    root = exc
    while root.__cause__ is not None:
        root = root.__cause__
    if root is not exc and isinstance(root, OSError) and root.strerror:
        reason += f" ({root.strerror})"
    return reason


def worker_machine() -> tuple[str, dict]:
    """The name and fingerprint of the machine this process runs on (a worker's)."""
    return worker_machine_name(), machine_fingerprint()


def worker_machine_name() -> str:
    """The name of the machine this process runs on (a worker's): ``REGBENCH_MACHINE``, else the
    host name."""
    return os.environ.get(MACHINE_VARIABLE) or default_machine_name()


def machine_resource(machine: str) -> str:
    """The worker resource that pins a run to ``machine``: every worker offers one unit of its
    own machine's (:func:`_machine_plugin`)."""
    return f"{MACHINE_PREFIX}{machine}"


def _machine_plugin() -> Any:
    """A Dask worker plugin that gives every worker, those that join later too, one unit of
    :func:`machine_resource` of its machine: a worker restarted by its nanny, at another address,
    offers it again, where a restriction to worker addresses would leave the run waiting.

    The scheduler keeps a plugin for its whole life and gives it to every worker that joins, which
    unpickles it: its code refers to nothing of regbench (the class is pickled by value, its setup
    uses only the standard library), so a worker without regbench can still join that scheduler.
    """
    from distributed.diagnostics.plugin import WorkerPlugin

    variable, prefix = MACHINE_VARIABLE, MACHINE_PREFIX

    class MachineResource(WorkerPlugin):
        name = PLUGIN_NAME
        idempotent = True  # registered once per scheduler: campaigns share it

        async def setup(self, worker: Any) -> None:
            import os
            import platform
            import socket

            # worker_machine_name(), spelled here: see above
            machine = os.environ.get(variable) or socket.gethostname() or platform.node() or "local"
            await worker.set_resources(**{f"{prefix}{machine}": 1})

    return MachineResource()


def _schedule_unrunnable(dask_scheduler: Any) -> int:
    """On the scheduler: send the tasks no worker could take (``no-worker``) to the running
    workers that can take them now; the number of such tasks.

    Written here because Dask does it only when a worker joins or resumes, not when a worker
    gains a resource (``Scheduler.add_resources``), as one does when :func:`_machine_plugin`
    gives it its machine's resource just after it joined: a worker restarted by its nanny, or
    one that joined late, would otherwise never get the runs pinned to its machine.
    """
    running = dask_scheduler.running
    runnable = [ts for ts in dask_scheduler.unrunnable
                if (running if (valid := dask_scheduler.valid_workers(ts)) is None else valid & running)]
    # Recommendations are processed last in, first out: the highest priority last (as Dask's own
    # Scheduler.bulk_schedule_unrunnable_after_adding_worker orders them).
    runnable.sort(key=lambda ts: ts.priority, reverse=True)
    if runnable:
        dask_scheduler.transitions({ts.key: "processing" for ts in runnable},
                                   stimulus_id=f"regbench-machine-resource-{time.time()}")
    return len(runnable)


def _run(request: RunRequest, mark: tuple[str, str] | None = None) -> RunOutcome:
    if mark is not None:
        # Before the run, from the worker: the client counts a worker's death against this run
        # only if it had started there (:meth:`DaskExecutor._lost`).  The event goes out on the
        # worker's stream within milliseconds, long before a run could take its worker down.
        from distributed import get_worker

        get_worker().log_event(*mark)
    # Two workers on one host (or a campaign run there beside them) make their runs in turn.
    with measuring(request.noise.pin, enabled=request.noise.exclusive):
        outcome = request.execute()
    name, fingerprint = worker_machine()
    return dataclasses.replace(outcome, machine=name, fingerprint=fingerprint)


def task_resources(request: RunRequest) -> dict[str, float]:
    """What a run's task needs of a worker: one ``benchmark`` unit, one of each tag it requires,
    and one of its machine's resource when it is pinned to a machine (:attr:`RunRequest.machine`)."""
    pin = {} if request.machine is None else {machine_resource(request.machine): 1}
    return {RESOURCE: 1, **dict.fromkeys(request.spec.requires, 1), **pin}


def failed_outcome(reason: str, machine: str | None = None) -> RunOutcome:
    """A run that could not be made (no worker to take it, or the workers died running it),
    stored under ``machine`` when it was pinned to one."""
    return RunOutcome(status="failed", samples=np.empty(0), exit_code=None, stderr_tail=NOTE + reason,
                      duration=0.0, started_at=utcnow(), machine=machine)


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """A worker the scheduler knows: its name (``--name``, else its address), address and resources."""

    name: str
    address: str
    resources: Mapping[str, float]

    def __str__(self) -> str:
        offers = ", ".join(f"{k}={v:g}" for k, v in sorted(self.resources.items())) or "no resources"
        return f"{self.name}{'' if self.name == self.address else ' at ' + self.address} offers {offers}"


def describe_workers(workers: Sequence[WorkerInfo], *, most: int = 5) -> str:
    """``2 workers connected: w1 at tcp://... offers benchmark=1; w2 at tcp://... offers no resources``."""
    if not workers:
        return "no worker is connected"
    shown = "; ".join(str(w) for w in workers[:most])
    more = f"; and {len(workers) - most} more" if len(workers) > most else ""
    return f"{len(workers)} worker{'' if len(workers) == 1 else 's'} connected: {shown}{more}"


#: The event topic (with a suffix of each executor's) a run's task logs its start on.
STARTED_TOPIC = "regbench-run-started"

#: How many times at most a run lost with dying workers that it did not take down (Dask's
#: ``KilledWorker`` for a run that waited in their queues) is submitted again: each time is at
#: least ``allowed-failures + 1`` more deaths of workers (100 with Dask's default of 3).
MAX_RESUBMISSIONS = 25


@dataclasses.dataclass
class _Task:
    """A request as submitted: its token in the start events, its priority, and how many times
    it was submitted again after its workers died."""

    request: RunRequest
    token: str
    priority: int
    resubmitted: int = 0


@register
class DaskExecutor(Executor):
    """Runs requests as tasks of a Dask scheduler at ``scheduler`` (``tcp://host:8786``), or of
    the ``client`` given (a test's ``LocalCluster``).

    ``timeout`` bounds connecting; ``wait`` is how long to wait for a worker offering what runs
    need to join: with none offering ``benchmark``, a :class:`ConfigError` (the cluster is not set
    up for runs: nothing is stored); a run needing a tag no worker offers is recorded as failed.

    Worker deaths: Dask's scheduler counts a death against every task assigned to the worker,
    the ones waiting in its queue (behind the one running, a ``benchmark`` unit allowing one run at
    a time) as well as the one running, and gives up on a task (``KilledWorker``) after
    ``distributed.scheduler.allowed-failures`` of them.  Each task tells the client when it starts
    (a worker event), so a run given up on is recorded as failed only if it was running in more
    deaths than allowed; one that only waited on dying workers is submitted again.
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, *, client: Any = None, timeout: float = 10.0,
                 wait: float = 30.0, stranded_after: float = STRANDED_AFTER):
        if client is None:
            client = connect(scheduler, timeout=timeout)
            self._own = True
        else:
            self._own = False
        self.client = client
        self.wait = wait
        #: Seconds a submitted run waits for a worker that can take it, when none can any more
        #: (every worker of its machine, or offering a tag it needs, gone), before the campaign is
        #: interrupted (at least :attr:`wait`).
        self.stranded_after = max(wait, stranded_after)
        import distributed

        self._distributed = distributed
        self._topic = f"{STARTED_TOPIC}-{uuid.uuid4().hex}"
        self._tokens = itertools.count()
        self._starts: collections.Counter[str] = collections.Counter()
        self._subscribed = False
        self._disconnected = False  # the client lost its scheduler (:meth:`_stopped`)
        self._pinning = False  # the workers offer their machine's resource (:meth:`_pin_machines`)
        self.address = scheduler or str(getattr(client.scheduler, "address", "") or "(the client's)")

    def workers(self) -> list[WorkerInfo]:
        """Every worker the scheduler knows now."""
        found = self.client.scheduler_info(n_workers=-1)["workers"]
        return [WorkerInfo(str(w.get("name", address)), address, dict(w.get("resources") or {}))
                for address, w in found.items()]

    def worker_resources(self) -> dict[str, Mapping[str, float]]:
        """The resources of every worker the scheduler knows now, by worker address."""
        return {w.address: w.resources for w in self.workers()}

    def run_workers(self) -> list[WorkerInfo]:
        """The workers that can make runs (they offer ``benchmark``), after waiting up to
        :attr:`wait` seconds for one to join.

        Raises
        ------
        ConfigError
            No worker offers ``benchmark``: the message names the workers connected and what
            they offer.
        """
        deadline = time.monotonic() + self.wait
        while True:
            workers = self.workers()
            able = [w for w in workers if w.resources.get(RESOURCE, 0) >= 1]
            if able:
                return able
            if time.monotonic() >= deadline:
                raise ConfigError(self._no_run_worker(workers))
            time.sleep(0.2)  # waiting for a worker to join: the scheduler has no event for it here

    def _no_run_worker(self, workers: Sequence[WorkerInfo]) -> str:
        return (f"no Dask worker offers {RESOURCE} (waited {self.wait:g} s; {describe_workers(workers)}): start "
                f'the worker of each benchmark machine with --nthreads 1 --resources "{RESOURCE}=1" (docs/dask.md)')

    def machines(self) -> dict[str, dict]:
        """The machines of the workers that can make runs: name -> fingerprint (a
        :class:`ConfigError` when there is none, :meth:`run_workers`)."""
        found = self.client.run(worker_machine, workers=[w.address for w in self.run_workers()])
        return {name: fp for name, fp in found.values()}

    def machines_for(self, specs: Sequence[BenchmarkSpec]) -> dict[str, tuple[str, ...]]:
        """The machines whose workers can make the runs of each benchmark of ``specs`` (a
        worker offers ``benchmark`` and every tag it requires), by benchmark name: a campaign
        makes all of a benchmark's runs on each of them (:class:`ConfigError` when no worker
        offers ``benchmark``, :meth:`run_workers`)."""
        able = self.run_workers()
        names = self.client.run(worker_machine_name, workers=[w.address for w in able])
        out = {}
        for s in specs:
            need = {RESOURCE: 1, **dict.fromkeys(s.requires, 1)}
            out[s.name] = tuple(sorted({names[w.address] for w in able if w.address in names
                                        and all(w.resources.get(k, 0) >= v for k, v in need.items())}))
        return out

    def _pin_machines(self) -> None:
        """Have every worker offer its machine's resource (:func:`machine_resource`), those
        that join later too, before runs pinned to machines are submitted."""
        if not self._pinning:
            self.client.register_plugin(_machine_plugin())
            self._pinning = True

    def unplaceable(self, needs: Iterable[Mapping[str, float]]) -> dict[tuple[str, ...], str]:
        """Of the resource sets ``needs``, those no worker offers (after waiting up to
        :attr:`wait` seconds for a worker that does), each with the one-line reason.

        Raises
        ------
        ConfigError
            No worker offers ``benchmark``, which every run needs: the cluster is not set up for
            runs (not a failure of any of them).
        """
        wanted = {tuple(sorted(n)): n for n in needs}
        deadline = time.monotonic() + self.wait
        while True:
            workers = self.workers()
            offered = {w.address: w.resources for w in workers}
            missing = {key: n for key, n in wanted.items()
                       if not any(all(r.get(k, 0) >= v for k, v in n.items()) for r in offered.values())}
            if not missing or time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # waiting for a worker to join: the scheduler has no event for it here
        if missing and not _offered(RESOURCE, offered):
            raise ConfigError(self._no_run_worker(workers))
        tags = sorted({k for r in offered.values() for k in r})
        have = f"the workers offer {', '.join(tags)}"
        return {key: (f"no Dask worker offers {' and '.join(k for k in key if not _offered(k, offered))} "
                      f"(waited {self.wait:g} s; {have})") for key in missing}

    def refused(self, specs: Sequence[BenchmarkSpec]) -> dict[str, str]:
        """The benchmarks of ``specs`` that require a tag no worker offers (after waiting up to
        :attr:`wait` seconds for one that does), each with its one-line reason.

        Raises
        ------
        ConfigError
            No worker offers ``benchmark``, which every run needs (:meth:`unplaceable`).
        """
        needs = {s.name: {RESOURCE: 1, **dict.fromkeys(s.requires, 1)} for s in specs}
        missing = self.unplaceable(needs.values())
        out = {}
        for s in specs:
            key = tuple(sorted(needs[s.name]))
            if key in missing:
                tags = [k for k in key if k != RESOURCE]
                out[s.name] = (f"benchmark {s.name!r} requires {', '.join(tags)}: {missing[key]}; start a worker "
                               f'with --resources "{" ".join(f"{k}=1" for k in (RESOURCE, *tags))}" on a machine '
                               "that has it (docs/dask.md)")
        return out

    def map(self, requests: Iterable[RunRequest], *, started: Started | None = None,
            waiting: Started | None = None) -> Iterator[tuple[RunRequest, RunOutcome]]:
        # ``waiting`` is not called: a run waits for its machine's lock on its worker, where
        # this process does not see it (the run is still "started" there, as its task is).
        todo = list(requests)
        if not todo:
            return
        if any(r.machine is not None for r in todo):
            self._pin_machines()
        refused = self.unplaceable(task_resources(r) for r in todo)
        # A machine whose workers all left between the campaign's plan and now: its runs are not
        # failed runs (a resumed campaign would count them as made), the campaign is interrupted.
        gone = collections.Counter(
            ", ".join(k for k in key if k != RESOURCE)
            for key in (tuple(sorted(task_resources(r))) for r in todo)
            if key in refused and any(k.startswith(MACHINE_PREFIX) for k in key))
        if gone:
            raise self._stranded(gone, self.wait)
        if not self._subscribed:
            self.client.subscribe_topic(self._topic, self._on_started)
            self._subscribed = True
        in_flight: dict[Any, _Task] = {}
        for rank, request in enumerate(todo):
            if tuple(sorted(task_resources(request))) in refused:
                continue
            task = _Task(request, str(next(self._tokens)), len(todo) - rank)
            in_flight[self._submit(task)] = task
            if started is not None:
                started(request)
        try:
            for request in todo:
                reason = refused.get(tuple(sorted(task_resources(request))))
                if reason is not None:
                    yield request, failed_outcome(reason, request.machine)
            pending = self._distributed.as_completed(list(in_flight), loop=self.client.loop)
            # Runs no worker can take any more (every worker of their machine gone), by what
            # they need: since when, and how many were given up on after ``wait`` seconds.
            stranded: dict[Any, float] = {}
            given_up: collections.Counter[str] = collections.Counter()
            check = time.monotonic() + CHECK_EVERY
            while not pending.is_empty():
                if time.monotonic() >= check:  # also while other machines' runs keep coming back
                    self._give_up(in_flight, stranded, given_up)
                    check = time.monotonic() + CHECK_EVERY
                if not pending.has_ready():
                    time.sleep(0.02)  # polling the results: Dask's own iterator polls every 0.1 s
                    continue
                future = next(pending)
                stranded.pop(future, None)
                if future not in in_flight:
                    continue  # given up on (:meth:`_give_up`): it was cancelled here
                task = in_flight.pop(future)
                try:
                    outcome = future.result()
                except self._distributed.KilledWorker as exc:
                    lost = self._lost(task, exc.allowed_failures)
                    if lost is None:  # not running in enough of those deaths: it runs again, in its place
                        again = self._submit(task)
                        in_flight[again] = task
                        pending.add(again)
                        continue
                    outcome = lost
                except concurrent.futures.CancelledError as exc:  # distributed's FutureCancelledError too
                    # Not the run's failure: Dask cancels every future of a client that lost its
                    # scheduler (a scheduler killed or restarted, a network cut), the queued ones
                    # as well as the one running.  Stored as failed runs they would count as done
                    # and only --retry-failed would make them: a run that did not come back is not
                    # stored, and the campaign stops as interrupted, to be resumed.
                    raise self._stopped(exc, 1 + len(in_flight)) from None
                except Exception as exc:  # noqa: BLE001 - a task's error is a failed run, never a crash
                    outcome = failed_outcome(f"the Dask task failed: {type(exc).__name__}: "
                                             + " ".join(str(exc).split())[:300], task.request.machine)
                yield task.request, outcome
            if given_up:
                raise self._stranded(given_up, self.stranded_after)
        except BaseException:
            if not self._disconnected:  # else nothing to ask: the client cancelled them all
                self.client.cancel(list(in_flight))
            raise

    def _give_up(self, waiting: dict[Any, _Task], stranded: dict[Any, float],
                 given_up: collections.Counter[str]) -> None:
        """Cancel the runs that no worker has been able to take for :attr:`wait` seconds (all
        the workers of their machine, or offering a tag they need, gone), counting them in
        ``given_up`` by what they need; ``stranded`` says since when each could not be taken."""
        if self.client.status != "running":
            return  # a lost scheduler: its cancellations are on their way (:meth:`_stopped`)
        try:
            if self._pinning:
                self.client.run_on_scheduler(_schedule_unrunnable)
            offered = self.worker_resources()
        except Exception as exc:  # noqa: BLE001 - the scheduler went away during the look
            if _connection_lost(self.client, exc):
                return
            raise
        now = time.monotonic()
        for future, task in list(waiting.items()):
            need = task_resources(task.request)
            if any(all(r.get(k, 0) >= v for k, v in need.items()) for r in offered.values()):
                stranded.pop(future, None)
                continue
            if now - stranded.setdefault(future, now) >= self.stranded_after:
                del waiting[future], stranded[future]
                self.client.cancel([future])
                given_up[", ".join(k for k in sorted(need) if not _offered(k, offered)) or ", ".join(sorted(need))] += 1

    def _stranded(self, given_up: collections.Counter[str], waited: float) -> ExecutorLostError:
        """The one-line error of runs given up on because no worker could take them."""
        n = sum(given_up.values())
        what = "; ".join(f"{_needed(need)} ({k} run{'' if k == 1 else 's'})" for need, k in sorted(given_up.items()))
        return ExecutorLostError(
            f"{n} run{' was' if n == 1 else 's were'} not made: no Dask worker of the scheduler at {self.address} "
            f"could take {'it' if n == 1 else 'them'} for {waited:g} s ({what}); they are not stored and the "
            "campaign is interrupted: start those workers again (a machine's with REGBENCH_MACHINE=NAME), then "
            "run the same command to resume")

    def _stopped(self, exc: concurrent.futures.CancelledError, left: int) -> ExecutorLostError:
        """The one-line error of a run's task cancelled with ``left`` runs not back."""
        self._disconnected, error = _stopped_error(
            self.client, self.address, exc, "a run's task", f"{left} run{'' if left == 1 else 's'} not back",
            "not stored; the campaign is interrupted", "run the same command to resume", "run the same command to resume")
        return error

    def _submit(self, task: _Task) -> Any:
        return self.client.submit(_run, task.request, (self._topic, task.token),
                                  resources=task_resources(task.request), pure=False, priority=task.priority,
                                  retries=0)

    def _on_started(self, event: tuple[float, Any]) -> None:
        # Called on the client's event loop thread.  The scheduler sends a task's start events
        # and its end (the KilledWorker) on one stream, in order: a task's count is complete
        # when map() sees it end.
        self._starts[str(event[1])] += 1

    def _lost(self, task: _Task, allowed_failures: int) -> RunOutcome | None:
        """The failed outcome of a task the scheduler gave up on (``KilledWorker``), or None when
        it should be submitted again: it started fewer times than the deaths the scheduler
        allows (each start ended in its worker's death: no result came back), the other deaths
        being of workers it only waited on."""
        ran = self._starts[task.token]
        if ran > allowed_failures:
            return failed_outcome(f"every worker that ran this run died ({ran} workers; the scheduler's "
                                  f"distributed.scheduler.allowed-failures is {allowed_failures}): does it kill "
                                  "its machine?", task.request.machine)
        if task.resubmitted >= MAX_RESUBMISSIONS:
            return failed_outcome(f"given up on {task.resubmitted + 1} times by the scheduler for workers that died "
                                  f"while it waited to run (it was running in {ran} of those deaths): do the "
                                  "workers keep dying?", task.request.machine)
        task.resubmitted += 1
        return None

    def close(self) -> None:
        # A client that lost its scheduler is still trying to reconnect: closing it cancels that
        # attempt, which Dask logs with two tracebacks; the command has said it on one line.
        with _quiet("distributed.client") if self._disconnected else contextlib.nullcontext():
            if self._own:
                self.client.close()
            elif self._subscribed and self.client.status == "running":
                self.client.unsubscribe_topic(self._topic)


def _stopped_error(client: Any, address: str, exc: BaseException, task: str, left: str, outcome: str,
                   again: str, lost_again: str) -> tuple[bool, ExecutorLostError]:
    """Whether ``client`` lost its scheduler (:func:`_connection_lost`), and the one-line error
    of work stopped by ``exc`` with ``left`` (``5 runs not back``): the connection lost (then,
    once the cluster is back, ``lost_again``), or ``task`` (``a run's task``) cancelled by the
    scheduler for the reason it gives (then ``again``); ``outcome`` says what became of the work."""
    if _connection_lost(client, exc):
        return True, ExecutorLostError(
            f"lost the connection to the Dask scheduler at {address} with {left} ({outcome}): start the scheduler "
            f"and its workers again, then {lost_again}")
    reason = getattr(exc, "reason", None)  # distributed >= 2024.9 says why
    return False, ExecutorLostError(
        f"the Dask scheduler at {address} cancelled {task} ({reason or 'no reason given'}) with {left} ({outcome}): "
        f"{again}")


def _connection_lost(client: Any, exc: BaseException) -> bool:
    """Whether ``exc``, raised by ``client``'s futures or calls, is the client having lost its
    scheduler (killed, restarted, a network cut): Dask then cancels every future of the client,
    with that reason (distributed >= 2024.9), and the client is no longer ``running``; a call
    under way when the connection closed raises Dask's ``CommClosedError`` (``Stream is
    closed``), which can come before the client has noticed (a test saw it once in a loaded run)."""
    from distributed.comm.core import CommClosedError

    return (getattr(exc, "reason", None) == "scheduler-connection-lost" or isinstance(exc, CommClosedError)
            or client.status != "running")


def _needed(resources: str) -> str:
    """``machine:m1, hyperfine`` said for a person: ``a worker of machine 'm1' offering hyperfine``."""
    keys = resources.split(", ")
    machines = [k[len(MACHINE_PREFIX):] for k in keys if k.startswith(MACHINE_PREFIX)]
    tags = [k for k in keys if not k.startswith(MACHINE_PREFIX)]
    who = f"a worker of machine {machines[0]!r}" if machines else "a worker"
    return who + (f" offering {' and '.join(tags)}" if tags else "")


def _offered(tag: str, offered: Mapping[str, Mapping[str, float]]) -> bool:
    return any(r.get(tag, 0) >= 1 for r in offered.values())


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Within the block, the logger ``name`` says nothing (its level restored after)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


# ----------------------------------------------------------------------------------- detection

def _shared_call(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> Any:
    return fn(shared, item)


class DaskBatchPool:
    """Runs a function over work items on a Dask scheduler's workers, results in submission order
    (the detection driver's ``pool``, :class:`regbench.detect.driver.BatchPool`).

    ``shared`` (the source and the detector) is scattered to every worker once, not pickled with
    each item.

    A scheduler lost before every result came back (killed, restarted, a network cut: Dask
    cancels every future of the client) is an :class:`ExecutorLostError` naming the scheduler,
    not Dask's traceback: the pass did not finish, and the caller records nothing of it.
    """

    def __init__(self, scheduler: str | None = None, *, client: Any = None, timeout: float = 10.0):
        if client is None:
            client = connect(scheduler, timeout=timeout, what="detect --executor dask")
            self._own = True
        else:
            self._own = False
        self.client = client
        self.address = scheduler or str(getattr(client.scheduler, "address", "") or "(the client's)")
        self._disconnected = False  # the client lost its scheduler (:meth:`_stopped`)

    def map_ordered(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> Iterator[Any]:
        """``fn(shared, item)`` for every item, on the workers; yielded in the order of ``items``.

        Raises
        ------
        ConfigError
            The scheduler has no worker.
        ExecutorLostError
            The scheduler was lost (or cancelled an item's task) before every result came back.
        """
        futures: list[Any] = []
        done = 0
        try:
            if not self.client.scheduler_info(n_workers=-1)["workers"]:
                raise ConfigError("the Dask scheduler has no worker: start `dask worker ADDRESS` on a machine that "
                                  "reads the store")
            handle = self.client.scatter(shared, broadcast=True, hash=False)
            futures = [self.client.submit(_shared_call, fn, handle, item, pure=False, priority=len(items) - k)
                       for k, item in enumerate(items)]
            for future in futures:
                result = future.result()
                done += 1
                yield result
        except concurrent.futures.CancelledError as exc:  # distributed's FutureCancelledError too
            raise self._stopped(exc, len(items) - done, len(items)) from None
        except ConfigError:
            raise
        except Exception as exc:
            # Scattering or submitting to a scheduler that went away in the meantime raises
            # Dask's connection errors, not a cancellation: the same loss, said the same way.
            if not _connection_lost(self.client, exc):
                self.client.cancel(futures)
                raise
            raise self._stopped(exc, len(items) - done, len(items)) from None
        except BaseException:
            if not self._disconnected:  # else nothing to ask: the client cancelled them all
                self.client.cancel(futures)
            raise

    def _stopped(self, exc: BaseException, left: int, total: int) -> ExecutorLostError:
        """The one-line error of a pass whose scheduler stopped it with ``left`` of ``total``
        batches not back."""
        self._disconnected, error = _stopped_error(
            self.client, self.address, exc, "a detection batch",
            f"{left} of {total} detection batch{'' if total == 1 else 'es'} not back",
            "the pass did not finish: no alert recorded, no detection state saved", "run the same command again",
            "run the same command")
        return error

    def close(self) -> None:
        # A client that lost its scheduler is still trying to reconnect: closing it cancels that
        # attempt, which Dask logs with tracebacks; the command has said it on one line.
        if self._own:
            with _quiet("distributed.client") if self._disconnected else contextlib.nullcontext():
                self.client.close()

    def __enter__(self) -> DaskBatchPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
