"""Which effects a design can estimate, and what each is aliased with.

In a regular fraction every alias chain is one estimable contrast: the term estimated for a
chain is its lowest-order effect (a main effect before an interaction), and the chain's other
effects up to ``alias_order`` are reported beside it (seed 002 s.3.3: "D = ABC").  Chains whose
every effect is above ``order`` are not estimated, and the chain aliased with the mean (the
defining relation) never is.  A full factorial estimates every effect up to ``order`` clear of
any other; a Plackett-Burman design its main effects (their partial aliasing with
interactions has no chain to report).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..errors import ConfigError
from .base import DesignMatrix
from .effects import Term
from .words import alias_chains, letters


def term_name(factors: Sequence[int], names: Sequence[str]) -> str:
    """``journal*sync`` for an interaction, the option's name for a main effect.  (Not
    statsmodels' ``a:b``: a colon pair such as ``:b:`` reads as an emoji code in rich's markup.)"""
    return "*".join(names[f] for f in factors)


def _factors(mask: int) -> tuple[int, ...]:
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def design_terms(design: DesignMatrix, names: Sequence[str] | None = None, *, order: int = 2,
                 alias_order: int = 3) -> list[Term]:
    """The terms ``design`` estimates up to ``order`` factors, with their aliases up to
    ``alias_order`` factors (``names`` default to the letters A, B, C...)."""
    names = tuple(names) if names is not None else letters(design.k)
    if len(names) != design.k:
        raise ConfigError(f"`names` must name the {design.k} factors, got {len(names)}")
    if not 1 <= order <= design.k:
        raise ConfigError(f"`order` must be from 1 to {design.k}, got {order}")
    if design.generators is None:
        if design.design == "plackett-burman" or order == 1:
            return [Term((f,), names[f]) for f in range(design.k)]
        return [Term(c, term_name(c, names)) for size in range(1, order + 1)
                for c in itertools.combinations(range(design.k), size)]
    terms = []
    for chain in alias_chains(design.generators, max(order, min(alias_order, design.k))):
        lead = _factors(chain[0])
        if len(lead) > order:
            continue
        if _is_identity(design, chain[0]):
            continue
        aliases = tuple(term_name(_factors(w), names) for w in chain[1:] if w.bit_count() <= alias_order)
        terms.append(Term(lead, term_name(lead, names), aliases))
    return terms


def _is_identity(design: DesignMatrix, mask: int) -> bool:
    assert design.generators is not None
    words = design.generators.base_words()
    acc = 0
    for f in _factors(mask):
        acc ^= words[f]
    return acc == 0
