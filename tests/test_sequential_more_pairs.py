"""The hint "about N more pairs needed" of compare --run: with the size to settle (the default),
the session stops only once the size against the threshold is settled too, so the hint must
count the pairs to that point, not to the first decision."""

from __future__ import annotations

import math

import numpy as np

from regbench.run.sequential import more_pairs_needed, size_settled
from regbench.stats.sequential import sequential_decision


def synthetic(n, m, s):
    # Same construction as more_pairs_needed's width(): exactly mean m and sd s.
    z = np.full(n, m)
    z[0] -= s * math.sqrt((n - 1) / 2)
    z[1] += s * math.sqrt((n - 1) / 2)
    return z


def stops(x, threshold, alpha, center="mean"):
    """Session.settle's stopping condition with resolve_size=True (sequential.py:304-305)."""
    d = sequential_decision(np.asarray(x), threshold=threshold, alpha=alpha, min_n=3, center=center)
    return d.decision == "no change" or (d.decision == "changed" and size_settled(d) is not None)


def test_more_pairs_hint_reaches_the_stopping_rule_of_compare_run():
    threshold, alpha = 0.03, 0.05
    m, s, n = math.log(1.035), 0.05, 20  # a +3.5% estimate, 5% pair sd: undecided at 20 pairs
    x = synthetic(n, m, s)
    d = sequential_decision(x, threshold=threshold, alpha=alpha, min_n=3, center="mean")
    assert d.decision == "undecided"
    # What Session.settle asks with the size to settle (on the mean's sequence alone, which the
    # synthetic sample, all but two values at the mean, is built for).
    more = more_pairs_needed(x, threshold=threshold, alpha=alpha, size=True, center="mean")
    assert more is not None
    # If the estimate and spread held, the session would be stopped after `more` pairs.
    assert stops(synthetic(n + more, m, s), threshold, alpha), f"hint says {more} more pairs, not enough"
    assert not stops(synthetic(n + more - 1, m, s), threshold, alpha)  # and not more than needed
    # The first decision alone (--no-settle-size) needs far fewer.
    assert more_pairs_needed(x, threshold=threshold, alpha=alpha, center="mean") < more


def gaussian_like(n, m, s):
    # Normal scores with exactly mean m and sd s: a sample whose median is not degenerate.
    from scipy.stats import norm
    z = norm.ppf((np.arange(n) + 0.5) / n)
    z = (z - z.mean()) / z.std(ddof=1)
    return m + s * np.random.default_rng(n).permutation(z)


def test_with_both_sequences_the_hint_is_enough_pairs():
    threshold, alpha = 0.03, 0.05
    m, s, n = math.log(1.035), 0.05, 20
    x = gaussian_like(n, m, s)
    assert sequential_decision(x, threshold=threshold, alpha=alpha, min_n=3).decision == "undecided"
    more = more_pairs_needed(x, threshold=threshold, alpha=alpha, size=True)
    assert more is not None and more > more_pairs_needed(x, threshold=threshold, alpha=alpha, size=True,
                                                         center="mean")
    assert stops(gaussian_like(n + more, m, s), threshold, alpha, center="both")
