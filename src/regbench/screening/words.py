"""Words of a regular two-level fractional factorial design: generators, defining relation,
word-length pattern, resolution and alias structure.

An effect (a main effect or an interaction) is a set of factors, held as a bit mask (bit ``i``
for factor ``i``).  In a regular 2^(k-p) design every factor's column is the product of some of
the ``k-p`` base columns, so each factor has a *base word* (a bit mask over the base factors),
and an effect's column is the product of its factors' columns: its base word is the XOR of
theirs.  Two effects are aliased when their base words are equal, and an effect belongs to the
defining relation when its base word is empty (its column is all +1).

Written here rather than taken from pyDOE3: ``pyDOE3.fracfact_aliasing`` builds the column of
every one of the 2^k effects (2^30 columns for k = 30) and gives neither the defining relation
nor the word-length pattern; bit masks give all three exactly, and the alias structure up to a
chosen order costs only the effects of that order.

References: Wu and Hamada (2009), ch. 5 (defining relation, resolution, word-length pattern,
minimum aberration); seed 002 s.3.2-3.3 (resolution, aliasing, D = ABC).
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError

#: Enumerate the defining relation (2^p words) only up to this p; beyond, the word-length
#: pattern is counted by subsets of factors up to a length (:func:`word_length_pattern`).
MAX_ENUMERATED_P = 22


def letters(k: int) -> tuple[str, ...]:
    """Factor labels as the literature writes them: A..Z, then F27, F28... (SAS's convention
    is letters, which run out at 26)."""
    return tuple(string.ascii_uppercase[i] if i < 26 else f"F{i + 1}" for i in range(k))


def word_text(mask: int, labels: Sequence[str]) -> str:
    """``ABD`` for the mask of A, B and D (``I`` for the empty word)."""
    parts = [labels[i] for i in range(len(labels)) if mask >> i & 1]
    if not parts:
        return "I"
    sep = "" if all(len(p) == 1 for p in parts) else "*"
    return sep.join(parts)


def parse_word(text: str, labels: Sequence[str], *, where: str = "generator") -> int:
    """The mask of a word such as ``ABC`` (single letters) or ``F27*B`` (labels joined by ``*``)."""
    text = text.strip()
    index = {label: i for i, label in enumerate(labels)}
    parts = text.split("*") if "*" in text else list(text)
    mask = 0
    for p in parts:
        p = p.strip()
        if p not in index:
            raise ConfigError(f"{where}: unknown factor {p!r} in {text!r} (factors {labels[0]}..{labels[-1]})")
        if mask >> index[p] & 1:
            raise ConfigError(f"{where}: factor {p!r} appears twice in {text!r}")
        mask |= 1 << index[p]
    return mask


@dataclass(frozen=True)
class Generators:
    """A regular 2^(k-p) design given by its generators.

    Attributes
    ----------
    k : int
        Factors.
    base : tuple of int
        The base factors' indices (their columns form the full factorial 2^(k-p)).
    generated : tuple of (int, int)
        ``(factor, word)``: the factor's column is the product of the base factors in ``word``
        (a mask over *factors*, made of base factors only), as ``D = ABC``.
    """

    k: int
    base: tuple[int, ...]
    generated: tuple[tuple[int, int], ...]

    @property
    def p(self) -> int:
        return len(self.generated)

    @property
    def runs(self) -> int:
        return 2 ** len(self.base)

    def base_words(self) -> list[int]:
        """Per factor, its column as a mask over the base factors' positions (bit ``j`` for the
        ``j``-th base factor)."""
        position = {f: j for j, f in enumerate(self.base)}
        out = [0] * self.k
        for f in self.base:
            out[f] = 1 << position[f]
        for f, word in self.generated:
            out[f] = 0
            for g in range(self.k):
                if word >> g & 1:
                    out[f] ^= 1 << position[g]
        return out

    def defining_words(self) -> list[int]:
        """The words of the defining relation (masks over factors), the identity left out.

        Each generator ``D = ABC`` gives the word ``ABCD``; the defining relation is the group
        they generate (every product of a non-empty subset of them): 2^p - 1 words.
        """
        gens = [word | 1 << f for f, word in self.generated]
        out = []
        for r in range(1, len(gens) + 1):
            for combo in itertools.combinations(gens, r):
                w = 0
                for g in combo:
                    w ^= g
                out.append(w)
        return out

    def text(self, labels: Sequence[str] | None = None) -> tuple[str, ...]:
        labels = labels or letters(self.k)
        return tuple(f"{labels[f]} = {word_text(w, labels)}" for f, w in self.generated)


def parse_generators(k: int, texts: Sequence[str], *, labels: Sequence[str] | None = None,
                     where: str = "generators") -> Generators:
    """``["D = ABC", ...]`` as :class:`Generators` over ``k`` factors.

    The generated factors are those on the left; every other factor is a base factor, and the
    words on the right may name base factors only.

    Raises
    ------
    ConfigError
        A generator that does not parse, names an unknown factor, generates a factor twice, or
        uses a generated factor; generators whose words are not independent.
    """
    labels = tuple(labels or letters(k))
    generated: list[tuple[int, int]] = []
    lefts: set[int] = set()
    for text in texts:
        if text.count("=") != 1:
            raise ConfigError(f"{where}: {text!r} must look like \"D = ABC\"")
        left, right = text.split("=")
        f = parse_word(left, labels, where=where)
        if f & (f - 1) or not f:
            raise ConfigError(f"{where}: the left side of {text!r} must be one factor")
        index = f.bit_length() - 1
        if index in lefts:
            raise ConfigError(f"{where}: factor {labels[index]} is generated twice")
        lefts.add(index)
        generated.append((index, parse_word(right, labels, where=where)))
    for _, word in generated:
        for g in range(k):
            if word >> g & 1 and g in lefts:
                raise ConfigError(f"{where}: a generator's word uses the generated factor {labels[g]}; "
                                  "write words of base factors only")
        if word & (word - 1) == 0:
            raise ConfigError(f"{where}: a generator's word must have at least two factors "
                              "(a factor equal to another, or to a constant, is not a design)")
    base = tuple(i for i in range(k) if i not in lefts)
    gens = Generators(k=k, base=base, generated=tuple(generated))
    if len({w for _, w in generated}) != len(generated):
        raise ConfigError(f"{where}: two factors have the same generator (their effects could not be told apart)")
    return gens


def word_length_pattern(gens: Generators, *, max_length: int | None = None) -> tuple[int, ...]:
    """``(A_1, A_2, ..., A_L)``: how many words of each length the defining relation has.

    For p up to :data:`MAX_ENUMERATED_P` the 2^p - 1 words are enumerated; beyond, the words of
    length at most ``max_length`` (default 6) are counted as the subsets of factors whose base
    words cancel (a word of the defining relation is exactly such a subset).  The pattern then
    stops at ``max_length``.
    """
    if gens.p <= MAX_ENUMERATED_P and max_length is None:
        counts = [0] * gens.k
        for w in gens.defining_words():
            counts[w.bit_count() - 1] += 1
        return tuple(counts)
    limit = max_length or 6
    words = gens.base_words()
    counts = [0] * limit
    for length in range(1, limit + 1):
        if math.comb(gens.k, length) > 50_000_000:
            raise ConfigError(f"the word-length pattern up to length {limit} of {gens.k} factors is too long to count")
        for combo in itertools.combinations(words, length):
            acc = 0
            for w in combo:
                acc ^= w
            if acc == 0:
                counts[length - 1] += 1
    return tuple(counts)


def resolution(wlp: Sequence[int]) -> int | None:
    """The length of the shortest word (None for a full factorial: no word at all)."""
    for i, a in enumerate(wlp):
        if a:
            return i + 1
    return None


def alias_chains(gens: Generators, order: int) -> list[tuple[int, ...]]:
    """The alias structure up to ``order``: every effect of at most ``order`` factors, grouped
    with those it is aliased with (same base word), each group in order of effect size then
    factors.  Effects in the defining relation (aliased with the mean) form the group of word
    0, put first when there is one.
    """
    words = gens.base_words()
    groups: dict[int, list[int]] = {}
    for size in range(1, order + 1):
        for combo in itertools.combinations(range(gens.k), size):
            base = 0
            mask = 0
            for f in combo:
                base ^= words[f]
                mask |= 1 << f
            groups.setdefault(base, []).append(mask)
    return [tuple(g) for _, g in sorted(groups.items(), key=lambda kv: (kv[0] != 0, _rank(kv[1][0])))]


def _rank(mask: int) -> tuple[int, tuple[int, ...]]:
    return mask.bit_count(), tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def aliases_of(gens: Generators, effect: int, order: int) -> tuple[int, ...]:
    """The effects of at most ``order`` factors aliased with ``effect`` (itself left out)."""
    words = gens.base_words()

    def base_of(mask: int) -> int:
        acc = 0
        for f in range(gens.k):
            if mask >> f & 1:
                acc ^= words[f]
        return acc

    target = base_of(effect)
    out = []
    for size in range(1, order + 1):
        for combo in itertools.combinations(range(gens.k), size):
            mask = sum(1 << f for f in combo)
            if mask != effect and base_of(mask) == target:
                out.append(mask)
    return tuple(out)
