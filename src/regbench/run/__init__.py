"""Running benchmarks: the run core, its orchestrators, process execution, versions, noise control.

======================  ===================================================================
module                  job
======================  ===================================================================
``core``                what every orchestrator shares: :class:`~.core.Trial`, the executor
                        interface, versions made ready, :class:`~.core.TrialRunner` (run and
                        store), :func:`~.core.record_outcome`, the checks before a campaign
``executor``            executors behind the core's interface: ``local`` (one run at a time)
``dask_executor``       ``dask``: runs as tasks of a Dask cluster, one at a time per worker
``campaign``            :func:`run_campaign`: builds, then runs in RMIT order, stored one by one
``adaptive``            ``plan = "adaptive"``: runs added round by round until precise enough
``confirm``             ``detect --confirm``: each new change run again until settled
``bisect``              ``regbench bisect``: the first commit that changes a benchmark
``sequential``          :class:`~.sequential.Session`, ``compare --run``: pairs until settled
``duet``                duet runs: the two versions of a pair at once, each on its own CPU
``rerun``               whether a detected change can be run again here (bisect, confirm)
``definitions``         what a benchmark runs, as campaigns and sessions record it; the runs a
                        campaign supersedes when it changed, and takes back when it is reverted
``execute``             :func:`execute_run`: one run as one fresh process, classified
``process``             :func:`~.process.run_process`: start, time out, kill the group, reap
``worker``              the process that times a Python ``module:function`` benchmark
``measures``            CPU time, peak memory, wall time and instruction counts of a run
``noise``               noise control in the benchmark process (pinning, ASLR, environment size)
``ramdisk``             version trees copied to a tmpfs
``scratch``             owned temporary folders: locked while used, removed once their process
                        is killed (a campaign's start removes them)
``quiet``               the quiet-system gate before each run
``exclusive``           the machine's measuring lock: runs of concurrent commands take turns
``system_check``        ``regbench system check``: what on this machine adds noise
``versions``            git revisions in history order, worktrees, cached builds
``releases``            versions from a package's releases on PyPI, each in its own venv
``fingerprint``         :func:`machine_fingerprint`: what the machine is
``clean``               ``regbench clean``: leftover worktrees, caches and temporary folders
======================  ===================================================================

The modules lower in the table do not import those above them (``core`` imports ``execute``,
``versions`` and ``noise``; the orchestrators import ``core``; nothing imports an orchestrator but
the one above it).  Names are imported lazily: ``python -m regbench.run.worker`` must not pay
for numpy or the store.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "run_campaign": "campaign", "CampaignResult": "campaign", "CampaignReporter": "campaign",
    "NullReporter": "campaign", "rmit_order": "campaign",
    "Trial": "core", "RunRequest": "core", "Executor": "core", "TrialRunner": "core", "RunContext": "core",
    "record_outcome": "core",
    "LocalExecutor": "executor", "get_executor": "executor",
    "execute_run": "execute", "RunOutcome": "execute",
    "Commit": "versions", "resolve_revisions": "versions", "prepare_tree": "versions",
    "build_version": "versions", "working_tree_version": "versions",
    "machine_fingerprint": "fingerprint", "default_machine_name": "fingerprint",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
