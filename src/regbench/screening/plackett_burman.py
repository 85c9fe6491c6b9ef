"""Plackett-Burman designs (pyDOE3's ``pbdesign``): two-level screening of main effects in a
multiple of four runs.  Their main effects are orthogonal to one another but *partially*
aliased with two-factor interactions (no regular defining relation), so no alias chain is
reported for them (Wu and Hamada 2009, s.8.4)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Design, DesignMatrix, register, two_level_only


@register
class PlackettBurman(Design):
    """The smallest Plackett-Burman design for the options (runs: the multiple of four above
    their number)."""

    name = "plackett-burman"

    def build(self, level_counts: Sequence[int]) -> DesignMatrix:
        from pyDOE3 import pbdesign

        two_level_only(level_counts, self.name)
        coded = np.asarray(pbdesign(len(level_counts)))
        levels = ((coded + 1) // 2).astype(np.int64)
        return DesignMatrix(design=self.name, levels=levels, level_counts=tuple(level_counts),
                            note="main effects partially aliased with two-factor interactions")
