"""Change detection over histories: one detector per file behind a registry."""

from . import ci_overlap  # noqa: F401  (registers the detector)
from .base import JSON_FIELDS, REGISTRY, Change, Detector, get_detector, kind_of, register

DEFAULT_METHOD = "ci-overlap"

__all__ = ["DEFAULT_METHOD", "JSON_FIELDS", "REGISTRY", "Change", "Detector", "get_detector", "kind_of",
           "register"]
