"""Designs of experiments behind one contract and a registry (as detectors are).

A :class:`Design` turns the level counts of a configuration space's options into a
:class:`DesignMatrix`: one row per configuration to run, one column per option, each entry the
index of a level.  Designs are pure (numpy and pyDOE3 only): the orchestrator
(:mod:`regbench.screening.campaign`) turns rows into configurations and runs.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..errors import ConfigError
from .words import Generators, letters, word_text

ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII", 9: "IX", 10: "X"}


@dataclass(frozen=True)
class DesignMatrix:
    """A design: which configurations to run.

    Attributes
    ----------
    design : str
        The registry name of the design that made it.
    levels : numpy.ndarray
        ``(runs, k)`` integer level indices (for two-level options, 0 is the low level).
    level_counts : tuple of int
        Levels of each factor.
    generators : Generators or None
        For a regular fraction, its generators (defining relation, word-length pattern and
        aliases follow from them, :mod:`regbench.screening.words`).
    word_length_pattern : tuple of int or None
        ``(A_1, A_2, ...)`` of a regular fraction.
    resolution : int or None
        The length of its shortest word (None when there is none: a full factorial, or a
        design that is not a regular fraction).
    note : str
        How the design was made (the search used, for instance).
    """

    design: str
    levels: np.ndarray = field(repr=False)
    level_counts: tuple[int, ...]
    generators: Generators | None = None
    word_length_pattern: tuple[int, ...] | None = None
    resolution: int | None = None
    note: str = ""

    @property
    def runs(self) -> int:
        return int(self.levels.shape[0])

    @property
    def k(self) -> int:
        return int(self.levels.shape[1])

    @property
    def coded(self) -> np.ndarray:
        """The ±1 matrix of a two-level design (-1 for the low level)."""
        if any(n != 2 for n in self.level_counts):
            raise ConfigError("the ±1 coding needs options with two levels each")
        return 2.0 * self.levels - 1.0

    def label(self) -> str:
        """``2^(4-1) resolution IV`` and the like; ``2^3 full factorial`` for a fraction without
        generators."""
        if self.generators is not None:
            g = self.generators
            if not g.p:
                return f"2^{g.k} full factorial, {self.runs} runs"
            res = ROMAN.get(self.resolution or 0, str(self.resolution)) if self.resolution else "full"
            return f"2^({g.k}-{g.p}) resolution {res}, {self.runs} runs"
        return f"{self.design}, {self.runs} runs"

    def generator_texts(self) -> tuple[str, ...]:
        return self.generators.text() if self.generators is not None else ()

    def defining_relation(self) -> str:
        """``I = ABCD`` (words of the defining relation, shortest first)."""
        if self.generators is None or not self.generators.generated:
            return ""
        labels = letters(self.k)
        words = sorted(self.generators.defining_words(), key=lambda w: (w.bit_count(), w))
        return "I = " + " = ".join(word_text(w, labels) for w in words)


class Design(abc.ABC):
    """A way to choose configurations; subclasses set :attr:`name` and implement :meth:`build`."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def build(self, level_counts: Sequence[int]) -> DesignMatrix:
        """The design for options with these level counts (one per option, in order)."""


#: Designs shipped with regbench: name -> module of this package (imported when first asked for).
BUILTIN = {"full": "full_factorial", "fractional": "fractional", "plackett-burman": "plackett_burman",
           "suite": "suite", "doptimal": "doptimal"}
REGISTRY: dict[str, type[Design]] = {}


def available_designs() -> list[str]:
    return sorted(set(BUILTIN) | set(REGISTRY))


def register(cls: type[Design]) -> type[Design]:
    builtin = BUILTIN.get(cls.name)
    if not cls.name or cls.name in REGISTRY or (builtin and cls.__module__ != f"{__package__}.{builtin}"):
        raise ValueError(f"design name {cls.name!r} is empty or taken")
    REGISTRY[cls.name] = cls
    return cls


def get_design(name: str, **options: object) -> Design:
    """The design registered as ``name``, made with ``options``.

    Raises
    ------
    ConfigError
        An unknown design, or options it does not take.
    """
    if name not in REGISTRY and name in BUILTIN:
        importlib.import_module(f".{BUILTIN[name]}", __package__)
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown design {name!r} (known: {', '.join(available_designs())})") from None
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigError(f"design {name!r}: {exc}") from None


def two_level_only(level_counts: Sequence[int], design: str) -> None:
    bad = [i for i, n in enumerate(level_counts) if n != 2]
    if bad:
        raise ConfigError(f"design {design!r} needs two-level options; option #{bad[0] + 1} has "
                          f"{level_counts[bad[0]]} levels (use the full design, or give it two levels)")


def standard_order(m: int) -> np.ndarray:
    """The 2^m full factorial as level indices in standard (Yates) order: the first factor
    changes fastest, as seed 002's Table 1 lists it.  (pyDOE3's ``ff2n`` changes the first
    factor slowest; the rows are the same set.)"""
    rows = np.arange(2 ** m)[:, None]
    return ((rows >> np.arange(m)[None, :]) & 1).astype(np.int64)
