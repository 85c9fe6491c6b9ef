"""Running benchmarks: campaigns, process execution, machine fingerprint, git versions and builds.

======================  ===================================================================
module                  job
======================  ===================================================================
``campaign``            :func:`run_campaign`: builds, then runs in RMIT order, stored one by one
``execute``             :func:`execute_run`: one run as one fresh process, classified
``worker``              the process that times a Python ``module:function`` benchmark
``versions``            git revisions in history order, worktrees, cached builds
``fingerprint``         :func:`machine_fingerprint`: what the machine is
======================  ===================================================================

Names are imported lazily: ``python -m regbench.run.worker`` must not pay for numpy or the store.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "run_campaign": "campaign", "CampaignResult": "campaign", "CampaignReporter": "campaign",
    "NullReporter": "campaign", "Trial": "campaign", "rmit_order": "campaign",
    "execute_run": "execute", "RunOutcome": "execute",
    "Commit": "versions", "resolve_revisions": "versions", "prepare_tree": "versions",
    "build_version": "versions", "working_tree_version": "versions",
    "machine_fingerprint": "fingerprint", "default_machine_name": "fingerprint",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
