"""Optional parts of regbench, installed as extras, and the one-line hint when one is missing.

=============  ============================================  =====================================
extra          packages                                      what needs them
=============  ============================================  =====================================
``diagnose``   statsmodels, matplotlib                       ``regbench diagnose``: auto-dependence
                                                             tests (seed 000 s.4.1) and its plots
``evaluate``   apache-otava, asv                             the Otava and asv baselines in
                                                             ``regbench evaluate``
``postgres``   psycopg                                       a PostgreSQL store
``dask``       dask, distributed                             ``--executor dask`` of ``regbench run``,
                                                             ``screen`` and ``detect``
=============  ============================================  =====================================

Everything else (detection, campaigns, import and export) needs only the base install, which the
README's first command gives.  The modules of an extra are imported when first used, through
:func:`require`, so a missing one is a one-line :class:`~regbench.errors.MissingDependency`
naming the command that installs it, never a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingDependency

#: The extra that provides each optional top-level package, and its name on PyPI.
PROVIDERS = {
    "statsmodels": ("diagnose", "statsmodels"),
    "matplotlib": ("diagnose", "matplotlib"),
    "otava": ("evaluate", "apache-otava"),
    "asv": ("evaluate", "asv"),
    "asv_runner": ("evaluate", "asv"),  # installed with asv, which computes its statistics with it
    "psycopg": ("postgres", "psycopg"),
    "distributed": ("dask", "distributed"),
    "dask": ("dask", "dask"),
}


def install_hint(module: str) -> str:
    """``pip install 'regbench[EXTRA]'`` for an optional package."""
    extra, _ = PROVIDERS[module.split(".")[0]]
    return f"pip install 'regbench[{extra}]'"


def require(module: str, *, what: str) -> ModuleType:
    """Import an optional module, or say in one line what needs it and how to install it.

    Parameters
    ----------
    module : str
        The module to import (``"statsmodels.tsa.stattools"``); its top-level package must be in
        :data:`PROVIDERS`.
    what : str
        What needs it, for the message (``"regbench diagnose"``).

    Raises
    ------
    MissingDependency
        The package is not installed.
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # the package is there but broken: its own error says more
        _, package = PROVIDERS[top]
        raise MissingDependency(f"{what} needs {package}, which is not installed: {install_hint(top)}") from None
