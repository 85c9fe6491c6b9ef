"""Change detection over histories: one detector per file behind a registry, and one driver.

Built-in detectors are imported on first use (:data:`base.BUILTIN`); third-party ones call
:func:`register`.  :func:`detect_changes` (:mod:`.driver`) runs one of them over a store or over
series at hand and controls the false discovery rate across series; the driver loads on first
use of one of its names, so that commands other than ``detect`` do not pay for it at start-up.

=================  ==========================================================================
module             job
=================  ==========================================================================
``base``           the :class:`Detector` ABC (the only contract the driver knows), the
                   :class:`Change` record, the registry
``driver``         :func:`detect_changes`: one detector over a store or series at hand, in
                   batches or worker processes, incremental or full, with FDR control
``zeros``          the driver's pre-pass: steps of a count from exactly 0 to above 0 and
                   back, for every detector (test in :mod:`regbench.stats.zeros`)
``notes``          the driver's notes: series not analysed and why, throughputs fallen to 0,
                   one-run excursions a detector left out
``fdr``            Benjamini-Hochberg across every hypothesis of every series
``alerts``         changes to alerts, told once: de-duplication, fixes, triage (pure rules
                   over a repository protocol the store implements)
``auto``           the default: change points over the whole history, confirmed by a
                   hierarchical test (statistics in :mod:`regbench.stats.runs`,
                   :mod:`~regbench.stats.segments` and :mod:`~regbench.stats.levels`)
``search``         ``auto``'s split search: binary segmentation, refinement, short excursions
``modes``          ``auto``'s modes: their boundaries, a change found in one placed and merged
``lone``           ``auto``'s histories of one run a version: spikes of interference told
                   from changes by the history's own rate of them
``ci_overlap``     non-overlapping confidence intervals (seed 000 s.5)
``bootstrap_ci``   non-overlapping bootstrap intervals and a 3% floor (seed 004 s.4.5)
``talos_ttest``    Talos' moving-window t-test (seed 003 s.5.1)
``forecast``       exponential-smoothing prediction intervals (seed 003 s.5.2)
``edivisive``      E-Divisive change points
``clusters``       cluster-by-cluster comparison (seed 001 s.4)
=================  ==========================================================================

A new detector is one file: subclass :class:`Detector`, set ``name``, implement ``detect`` (and
``check_new``/``check_new_many`` for incremental detection), then :func:`register` it or add it
to :data:`base.BUILTIN`.
"""

from __future__ import annotations

import importlib

from .base import BUILTIN, JSON_FIELDS, REGISTRY, Change, Detector, available_methods, get_detector, kind_of, register

DEFAULT_METHOD = "auto"

_DRIVER = ("DEFAULT_FDR", "DetectionResult", "SeriesSource", "detect_changes", "save_detection_state")


def __getattr__(name: str):
    if name not in _DRIVER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".driver", __name__), name)
    globals()[name] = value
    return value


__all__ = ["BUILTIN", "DEFAULT_METHOD", "JSON_FIELDS", "REGISTRY", "Change", "Detector", "available_methods",
           "get_detector", "kind_of", "register", *_DRIVER]
