"""Change detection over histories: one detector per file behind a registry.

Built-in detectors are imported on first use (:data:`base.BUILTIN`); third-party ones call
:func:`register`.
"""

from .base import BUILTIN, JSON_FIELDS, REGISTRY, Change, Detector, available_methods, get_detector, kind_of, register

DEFAULT_METHOD = "auto"

__all__ = ["BUILTIN", "DEFAULT_METHOD", "JSON_FIELDS", "REGISTRY", "Change", "Detector", "available_methods",
           "get_detector", "kind_of", "register"]
