"""The full factorial: every combination of every option's levels (pyDOE3's ``fullfact``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from .base import Design, DesignMatrix, register

#: Configurations a full factorial may have at most (2^20: beyond, screen first).
MAX_RUNS = 2 ** 20


@register
class FullFactorial(Design):
    """Every configuration; for two-level options, in standard order with the first option
    changing fastest (the order of seed 002 Table 1)."""

    name = "full"

    def build(self, level_counts: Sequence[int]) -> DesignMatrix:
        from pyDOE3 import fullfact

        total = math.prod(level_counts)
        if total > MAX_RUNS:
            raise ConfigError(f"design 'full': {total} configurations, more than {MAX_RUNS}: "
                              "use a fractional or Plackett-Burman design to screen first")
        # fullfact changes the first factor fastest already.
        levels = np.asarray(fullfact(list(level_counts)), dtype=np.int64)
        return DesignMatrix(design=self.name, levels=levels, level_counts=tuple(level_counts),
                            note="every configuration")
