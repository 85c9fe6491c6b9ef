"""Change detection over histories: one detector per file behind a registry, and one driver.

Built-in detectors are imported on first use (:data:`base.BUILTIN`); third-party ones call
:func:`register`.  :func:`detect_changes` (:mod:`.driver`) runs one of them over a store or over
series at hand and controls the false discovery rate across series.
"""

from .base import BUILTIN, JSON_FIELDS, REGISTRY, Change, Detector, available_methods, get_detector, kind_of, register
from .driver import DEFAULT_FDR, DetectionResult, SeriesSource, detect_changes, save_detection_state

DEFAULT_METHOD = "auto"

__all__ = ["BUILTIN", "DEFAULT_FDR", "DEFAULT_METHOD", "JSON_FIELDS", "REGISTRY", "Change", "DetectionResult",
           "Detector", "SeriesSource", "available_methods", "detect_changes", "get_detector", "kind_of", "register",
           "save_detection_state"]
