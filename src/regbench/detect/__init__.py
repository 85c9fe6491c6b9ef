"""Change detection over histories: one detector per file behind a registry, and one driver.

Built-in detectors are imported on first use (:data:`base.BUILTIN`); third-party ones call
:func:`register`.  :func:`detect_changes` (:mod:`.driver`) runs one of them over a store or over
series at hand and controls the false discovery rate across series; the driver loads on first
use of one of its names, so that commands other than ``detect`` do not pay for it at start-up.
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
