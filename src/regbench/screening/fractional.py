"""Regular two-level fractional factorial designs 2^(k-p).

Given its generators (``["D = ABC"]``, as seed 002's appendix lists Scr32, Scr64 and Scr128),
the design is the full factorial of the k-p base factors in standard order with each generated
factor's column the product of its word's columns (seed 002 s.3.3, Table 1).  Given a run size
and a resolution instead, generators are *searched*:

- candidates are the words of base factors of at least ``resolution - 1`` letters (a generator
  of length L gives a defining word of length L + 1);
- generators are added one at a time, each the candidate that adds the fewest words of length 3,
  then 4 (counted from the XORs of pairs of columns: a word of length 3 through the new column is
  a pair of columns whose product is its column, a word of length 4 a triple), then of the
  lengths up to ``resolution + 1`` when the defining relation is small enough to enumerate;
  ties go to the longest word, then the first in order;
- then, while the defining relation is small enough to enumerate (p <= 10), one generator at a
  time is exchanged for any candidate that makes the word-length pattern lexicographically
  smaller, and an iterated local search moves two generators at random (fixed seed) and
  exchanges again, keeping improvements.

This greedy search reaches the resolution asked whenever a regular design of that size can
(for resolution III and IV: up to N - 1 and N / 2 factors in N runs; Wu and Hamada 2009, s.5.2
and s.5.5), but it is a heuristic: its word-length pattern is not guaranteed to be of minimum
aberration (the catalogues of Chen, Sun and Wu 1993 are).  Written here because pyDOE3's
``fracfact_by_res`` takes no run size and ``fracfact_opt`` searches exhaustively (hours for
k = 14) and cannot go beyond 26 factors; pyDOE3's ``fracfact`` is the independent check in the
tests.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from .base import ROMAN, Design, DesignMatrix, register, standard_order, two_level_only
from .words import MAX_ENUMERATED_P, Generators, parse_generators, resolution, word_length_pattern

#: Generated factors at most for the exchange pass (each step enumerates 2^p words per candidate).
EXCHANGE_MAX_P = 10
#: Rounds of the iterated local search after the exchange.
PERTURBATIONS = 8
#: Options at most for which generators are searched.
MAX_SEARCHED_K = 128
#: Base factors at most (2^16 runs): a larger design is no screening design.
MAX_BASE = 16


@register
class Fractional(Design):
    """A regular 2^(k-p) fraction.

    Parameters
    ----------
    generators : sequence of str, optional
        ``["D = ABC", ...]`` over the factors A, B, C... (the options in order).
    runs : int, optional
        The run size (a power of two) for a searched design.
    resolution : int, optional
        The resolution wanted (default 4: main effects clear of two-factor interactions).
    """

    name = "fractional"

    def __init__(self, *, generators: Sequence[str] | None = None, runs: int | None = None,
                 resolution: int | None = None):
        if generators is not None and runs is not None:
            raise ConfigError("design 'fractional': give generators or a run size, not both")
        if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 4
                                 or runs & (runs - 1)):
            raise ConfigError(f"design 'fractional': `runs` must be a power of two of at least 4, got {runs!r}")
        if resolution is not None and (isinstance(resolution, bool) or not isinstance(resolution, int)
                                       or not 3 <= resolution <= 10):
            raise ConfigError(f"design 'fractional': `resolution` must be an integer from 3 to 10, got {resolution!r}")
        self.generators = tuple(generators) if generators is not None else None
        self.runs = runs
        self.resolution = resolution

    def build(self, level_counts: Sequence[int]) -> DesignMatrix:
        two_level_only(level_counts, self.name)
        k = len(level_counts)
        note = "from the generators given"
        if self.generators is not None:
            gens = parse_generators(k, self.generators, where="design 'fractional'")
        else:
            want = self.resolution or 4
            gens = search_generators(k, want, self.runs)
            if not gens.p:  # no generator: nothing was searched
                note = (f"every configuration: the {self.runs} runs asked hold all of them" if self.runs is not None
                        else f"every configuration: no fraction of {k} options reaches resolution "
                             f"{ROMAN.get(want, want)}")
            else:
                note = "generators searched (greedy on the word-length pattern; not guaranteed minimum aberration)"
        return fraction(gens, note=note)


def fraction(gens: Generators, *, note: str = "") -> DesignMatrix:
    """The design of ``gens``: base factors in standard order, generated columns their products."""
    base = standard_order(len(gens.base))
    coded = np.empty((gens.runs, gens.k))
    position = {f: j for j, f in enumerate(gens.base)}
    for f in gens.base:
        coded[:, f] = 2 * base[:, position[f]] - 1
    for f, word in gens.generated:
        col = np.ones(gens.runs)
        for g in range(gens.k):
            if word >> g & 1:
                col *= 2 * base[:, position[g]] - 1
        coded[:, f] = col
    wlp = word_length_pattern(gens) if gens.p <= MAX_ENUMERATED_P else word_length_pattern(gens, max_length=6)
    return DesignMatrix(design="fractional", levels=((coded + 1) // 2).astype(np.int64),
                        level_counts=(2,) * gens.k, generators=gens, word_length_pattern=wlp,
                        resolution=resolution(wlp), note=note)


def _candidates(m: int, min_length: int) -> list[int]:
    """Words over ``m`` base positions of at least ``min_length`` letters (at least 2), longest
    first, then in order."""
    out = [w for w in range(1, 2 ** m) if w.bit_count() >= max(min_length, 2)]
    return sorted(out, key=lambda w: (-w.bit_count(), w))


def _greedy(k: int, m: int, want: int) -> list[int] | None:
    """Column words (over the ``m`` base positions) of ``k`` factors reaching resolution
    ``want``, or None when the greedy search gets stuck."""
    columns = [1 << j for j in range(m)]
    pairs: Counter[int] = Counter(a ^ b for a, b in itertools.combinations(columns, 2))
    pool = _candidates(m, want - 1)
    if want == 4:
        # Odd words keep every defining word even: no word of length 3 (or 5) can appear.
        pool = [w for w in pool if w.bit_count() % 2 == 1] or pool
    while len(columns) < k:
        best: tuple | None = None
        best_word = 0
        for w in pool:
            if w in columns:
                continue
            a3 = pairs[w]
            a4 = sum(pairs[w ^ c] for c in columns) // 3
            score: tuple = (a3, a4) if want > 3 else (a3 > 0, a4)
            if want > 4:
                score = (*score, *_wlp_tail(columns + [w], m, want))
            if best is None or score < best:
                best, best_word = score, w
        if best is None:
            return None
        columns.append(best_word)
        pairs.update(best_word ^ c for c in columns[:-1])
    return _perturb(_exchange(columns, m, want), m, want)


def _perturb(columns: list[int], m: int, want: int) -> list[int]:
    """Iterated local search: replace two generated columns by random candidates, exchange
    again, keep the result when its word-length pattern is smaller (a fixed seed: the same
    design every time).  Single exchanges stall where two generators must move together."""
    p = len(columns) - m
    if p < 2 or p > EXCHANGE_MAX_P:
        return columns
    rng = np.random.default_rng(0)
    pool = _candidates(m, want - 1)

    def score(cols: list[int]) -> tuple[int, ...]:
        return word_length_pattern(_as_generators(cols, m))[:want + 3]

    best, best_score = columns, score(columns)
    for _ in range(PERTURBATIONS):
        trial = list(best)
        for f in rng.choice(np.arange(m, len(trial)), size=2, replace=False):
            unused = [w for w in pool if w not in trial]
            if unused:
                trial[int(f)] = unused[int(rng.integers(len(unused)))]
        trial = _exchange(trial, m, want)
        s = score(trial)
        if s < best_score:
            best, best_score = trial, s
    return best


def _exchange(columns: list[int], m: int, want: int) -> list[int]:
    """Improve a greedy design by exchanging one generated column at a time for an unused
    candidate while the word-length pattern (lexicographically, up to length ``want + 3``) gets
    smaller; only when the defining relation is small enough to enumerate quickly."""
    if len(columns) - m > EXCHANGE_MAX_P:
        return columns
    pool = _candidates(m, want - 1)  # even words too: they may lower A_4 (seed 002's Scr64 has J = ACDE)

    def score(cols: list[int]) -> tuple[int, ...]:
        return word_length_pattern(_as_generators(cols, m))[:want + 3]

    best = score(columns)
    improved = True
    while improved:
        improved = False
        for f in range(m, len(columns)):
            for w in pool:
                if w in columns:
                    continue
                trial = columns[:f] + [w] + columns[f + 1:]
                s = score(trial)
                if s < best:
                    best, columns, improved = s, trial, True
    return columns


def _wlp_tail(columns: list[int], m: int, want: int) -> tuple[int, ...]:
    gens = _as_generators(columns, m)
    if gens.p > MAX_ENUMERATED_P:
        return word_length_pattern(gens, max_length=want + 1)[4:]
    return word_length_pattern(gens)[4:want + 1]


def _as_generators(columns: Sequence[int], m: int) -> Generators:
    """Column words over base positions as :class:`Generators` (the first ``m`` columns are the
    base factors)."""
    return Generators(k=len(columns), base=tuple(range(m)),
                      generated=tuple((f, columns[f]) for f in range(m, len(columns))))


def search_generators(k: int, want: int, runs: int | None) -> Generators:
    """Generators of a 2^(k-p) design of resolution ``want`` in ``runs`` runs (default: the
    smallest run size the search reaches it in).

    Raises
    ------
    ConfigError
        When no design of ``runs`` runs reaches the resolution: the message names the smallest
        run size that does; when ``runs`` is more than the ``2^k`` configurations there are.
    """
    if k < 2:
        raise ConfigError("design 'fractional': needs at least two options")
    if runs is not None and runs > 2 ** k:
        # A design of fewer runs than asked would be a silent surprise: say what the most is.
        raise ConfigError(f"design 'fractional': {k} two-level options have only {2 ** k} configurations, fewer "
                          f"than the {runs} runs asked for: a size of {2 ** k} (every configuration) is the largest; "
                          "--runs repeats each configuration")
    if k > MAX_SEARCHED_K:
        raise ConfigError(f"design 'fractional': searching generators for {k} options is not supported (at most "
                          f"{MAX_SEARCHED_K}); give the generators")
    m_min = max(int(np.ceil(np.log2(k + 1))), 2)
    sizes = [int(np.log2(runs))] if runs is not None else list(range(m_min, min(k, MAX_BASE) + 1))
    for m in sizes:
        if m >= k:
            return Generators(k=k, base=tuple(range(k)), generated=())
        if m > MAX_BASE:
            break
        columns = _greedy(k, m, want) if 2 ** m > k else None
        if columns is not None:
            gens = _as_generators(columns, m)
            res = resolution(word_length_pattern(gens) if gens.p <= MAX_ENUMERATED_P
                             else word_length_pattern(gens, max_length=want))
            if res is None or res >= want:
                return gens
    smallest = _smallest_runs(k, want, sizes[-1] + 1 if runs is not None else MAX_BASE + 1)
    where = f"{runs} runs" if runs is not None else f"at most {2 ** MAX_BASE} runs"
    hint = f"; the smallest run size that does is {smallest}" if smallest else ""
    raise ConfigError(f"design 'fractional': no regular design of {k} two-level options in {where} reaches "
                      f"resolution {ROMAN.get(want, want)}{hint}")


def _smallest_runs(k: int, want: int, start: int) -> int | None:
    for m in range(start, MAX_BASE + 1):
        if m >= k:
            return 2 ** k
        columns = _greedy(k, m, want)
        if columns is not None:
            gens = _as_generators(columns, m)
            res = resolution(word_length_pattern(gens) if gens.p <= MAX_ENUMERATED_P
                             else word_length_pattern(gens, max_length=want))
            if res is None or res >= want:
                return 2 ** m
    return None
