"""Validation at the door (STYLE.md habit 4): one helper per kind of argument."""

from __future__ import annotations

import numbers

import numpy as np


def check_confidence(value: float, name: str = "confidence_level") -> None:
    if not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"`{name}` must be in (0, 1)")


def check_positive_int(value: int, name: str) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer")


def make_rng(rng) -> np.random.Generator:
    """The one randomness convention (STYLE.md habit 3)."""
    return np.random.default_rng(rng)


def as_1d(sample, name: str) -> np.ndarray:
    a = np.asarray(sample, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"`{name}` must contain only finite numbers")
    return a
