"""D-optimal designs of two-level options by coordinate exchange: a follow-up to a design, or
a design from scratch (the registry's ``doptimal``).

Seed 002 s.3.5 and s.4.5: after screening, a follow-up design separates the important options'
effects from what they were aliased with.  Given the runs already made and a model (the terms to
estimate), :func:`augment` chooses ``n_add`` more configurations, each valid under the
constraints, maximizing ``det(X'X)`` of the whole design's model matrix (the D criterion).

The algorithm is the coordinate exchange of Meyer and Nachtsheim (1995): start from random valid
rows; for each added row and each option, switch the option's level when that raises the
determinant and keeps the row valid; repeat until a pass changes nothing.  Up to
:data:`MAX_CANDIDATE_K` options a row-exchange pass over every valid configuration follows (the
modified Fedorov algorithm of Cook and Nachtsheim 1980), which leaves the local optima where
single switches stall; it polishes the best of several random starts.  A change of one row is a rank-two update, so its effect on the
determinant is computed from the inverse in O(p^2) (the delta function of Fedorov 1972:
``(1 + d(x_new)) (1 - d(x_old)) + d(x_old, x_new)^2``) instead of a new determinant.  While the
existing runs cannot estimate the model (that is the point of a follow-up), ``X'X`` is
regularized by a small ridge; the determinant reported is the true one.

:class:`DOptimal` is the design ``regbench screen --design doptimal --size N``: ``augment`` from an
empty base, under the constraints, with distinct configurations (a configuration is named by its
levels and stored once, so a repeated row would be run once and counted twice).

Written here because neither pyDOE3 nor statsmodels has an optimal-design algorithm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from .base import Design, DesignMatrix, register, two_level_only
from .effects import Term, model_columns

#: Up to this many options, every valid configuration is a candidate of a row-exchange pass
#: (modified Fedorov) after the coordinate exchange: single-level switches stall in local optima
#: that a whole-row exchange leaves.
MAX_CANDIDATE_K = 14
#: Added to the diagonal of X'X during the search, relative to the number of rows.
RIDGE = 1e-6


@dataclass(frozen=True)
class Augmented:
    """The result of :func:`augment`.

    Attributes
    ----------
    added : numpy.ndarray
        ``(n_add, k)`` ±1 rows to run next.
    coded : numpy.ndarray
        The existing rows followed by the added ones.
    log_det : float
        ``log det(X'X)`` of the whole design for the model (``-inf`` when it still cannot
        estimate every term).
    d_efficiency : float
        ``det(X'X)^(1/p) / N``: 1 for an orthogonal ±1 design, 0 when the model is not estimable.
    estimable : bool
        Whether the whole design estimates every term and the intercept.
    """

    added: np.ndarray = field(repr=False)
    coded: np.ndarray = field(repr=False)
    log_det: float
    d_efficiency: float
    estimable: bool


def _model(rows: np.ndarray, terms: Sequence[Term]) -> np.ndarray:
    return np.column_stack([np.ones(rows.shape[0]), model_columns(rows, terms)])


def _log_det(x: np.ndarray) -> float:
    sign, value = np.linalg.slogdet(x.T @ x)
    return float(value) if sign > 0 else float("-inf")


def augment(existing: np.ndarray, terms: Sequence[Term], n_add: int, *,
            valid: Callable[[np.ndarray], bool] | None = None, starts: int = 5,
            rng: int | np.random.Generator | None = None, max_passes: int = 50,
            distinct: bool = False) -> Augmented:
    """Add ``n_add`` runs to ``existing`` (``(N, k)`` ±1) maximizing det(X'X) for ``terms``.

    Parameters
    ----------
    existing : numpy.ndarray
        The runs made (may be empty: ``(0, k)``).
    terms : sequence of Term
        The model (an intercept is always in it).
    n_add : int
        Runs to add.
    valid : callable, optional
        ``valid(row)`` is False for a configuration that breaks a constraint (default: all valid).
    starts : int
        Random starts; the best is kept.
    rng : int or numpy.random.Generator, optional
    max_passes : int
        Passes over the added rows at most per start.
    distinct : bool
        Every added row differs from every other row, added or existing (a design whose
        configurations are each run once per replicate); a ``ConfigError`` when the valid
        configurations are too few.

    Raises
    ------
    ConfigError
        A bad ``n_add`` or ``starts``, or no valid random row found.

    References
    ----------
    R. K. Meyer, C. J. Nachtsheim, *The coordinate-exchange algorithm for constructing exact
    optimal experimental designs*, Technometrics 37(1), 1995.
    """
    existing = np.asarray(existing, dtype=float)
    if existing.ndim != 2:
        raise ConfigError("`existing` must be a 2-d array of ±1 levels")
    if isinstance(n_add, bool) or not isinstance(n_add, int) or n_add < 1:
        raise ConfigError(f"`n_add` must be a positive integer, got {n_add!r}")
    if isinstance(starts, bool) or not isinstance(starts, int) or starts < 1:
        raise ConfigError(f"`starts` must be a positive integer, got {starts!r}")
    rng = np.random.default_rng(rng)
    k = existing.shape[1]
    ok = valid if valid is not None else (lambda row: True)
    base = _model(existing, terms)
    p = base.shape[1]
    best_rows: np.ndarray | None = None
    best_value = -np.inf
    candidates = _candidates(k, ok, terms) if k <= MAX_CANDIDATE_K else None
    taken = {_code(r) for r in existing} if distinct else None
    if taken is not None and candidates is not None:
        free = _free(candidates.rows, existing)
        if free < n_add:
            raise ConfigError(f"{n_add} distinct configurations asked, but the constraints leave {free} valid ones")
    for _ in range(starts):
        drawn: list[np.ndarray] = []
        for _ in range(n_add):
            drawn.append(_random_valid(k, ok, rng, taken=None if taken is None else taken | {_code(r) for r in drawn}))
        rows = np.array(drawn).reshape(n_add, k)
        rows = _exchange(base, rows, terms, ok, max_passes, p, taken=taken)
        value = _log_det(np.vstack([base, _model(rows, terms)]))
        if best_rows is None or value > best_value:
            best_rows, best_value = rows, value
    assert best_rows is not None
    if candidates is not None:  # once, on the best start: each pass scores every candidate
        best_rows = _row_exchange(base, best_rows, terms, candidates, max_passes, p, taken=taken)
    coded = np.vstack([existing, best_rows])
    x = _model(coded, terms)
    log_det = _log_det(x)
    estimable = bool(np.isfinite(log_det) and np.linalg.matrix_rank(x) == p)
    eff = float(np.exp(log_det / p) / coded.shape[0]) if estimable else 0.0
    return Augmented(added=best_rows, coded=coded, log_det=log_det, d_efficiency=eff, estimable=estimable)


def _code(row: np.ndarray) -> bytes:
    """A ±1 row as a hashable key (which options are high)."""
    return (np.asarray(row) > 0).tobytes()


def _free(candidates: np.ndarray, existing: np.ndarray) -> int:
    """How many of the valid ``candidates`` rows are configurations ``existing`` does not have."""
    return len({_code(r) for r in candidates} - {_code(r) for r in existing})


def free_configurations(existing: np.ndarray, valid: Callable[[np.ndarray], bool]) -> int | None:
    """How many valid configurations (``valid(row)``) of ``existing``'s ±1 options it does not
    have, counted over the full factorial up to :data:`MAX_CANDIDATE_K` options (None beyond:
    too many to count)."""
    existing = np.asarray(existing, dtype=float)
    k = existing.shape[1]
    if k > MAX_CANDIDATE_K:
        return None
    return _free(_candidates(k, valid, ()).rows, existing)


def first_of_each(coded: np.ndarray) -> np.ndarray:
    """Which rows of ``coded`` are the first of their configuration."""
    seen: set[bytes] = set()
    out = np.zeros(len(coded), dtype=bool)
    for i, row in enumerate(coded):
        key = _code(row)
        out[i] = key not in seen
        seen.add(key)
    return out


def _random_valid(k: int, ok: Callable[[np.ndarray], bool], rng: np.random.Generator, tries: int = 10_000,
                  taken: set[bytes] | None = None) -> np.ndarray:
    for _ in range(tries):
        row = rng.choice([-1.0, 1.0], size=k)
        if ok(row) and (taken is None or _code(row) not in taken):
            return row
    raise ConfigError(f"no valid configuration found in {tries} random draws: the constraints leave too few"
                      + (" distinct ones" if taken else ""))


def _exchange(base: np.ndarray, rows: np.ndarray, terms: Sequence[Term], ok: Callable[[np.ndarray], bool],
              max_passes: int, p: int, taken: set[bytes] | None = None) -> np.ndarray:
    rows = rows.copy()
    row_codes = [_code(r) for r in rows]
    x_added = _model(rows, terms)
    m = base.T @ base + x_added.T @ x_added
    n = base.shape[0] + rows.shape[0]
    m_inv = np.linalg.inv(m + RIDGE * n * np.eye(p))
    for _ in range(max_passes):
        changed = False
        for i in range(rows.shape[0]):
            for j in range(rows.shape[1]):
                old = x_added[i]
                trial_row = rows[i].copy()
                trial_row[j] = -trial_row[j]
                if not ok(trial_row):
                    continue
                if taken is not None:  # distinct rows: not an existing one, nor another added one
                    code = _code(trial_row)
                    if code in taken or code in row_codes:
                        continue
                new = _model(trial_row[None, :], terms)[0]
                a = m_inv @ old
                b = m_inv @ new
                d_old, d_new, d_cross = old @ a, new @ b, old @ b
                delta = (1 + d_new) * (1 - d_old) + d_cross ** 2
                if delta > 1 + 1e-9:
                    # Sherman-Morrison twice: add the new row, remove the old one (before the
                    # row is overwritten: ``old`` is a view of it).
                    m_inv = m_inv - np.outer(b, b) / (1 + d_new)
                    a = m_inv @ old
                    m_inv = m_inv + np.outer(a, a) / (1 - old @ a)
                    rows[i] = trial_row
                    x_added[i] = new
                    row_codes[i] = _code(trial_row)
                    changed = True
        if not changed:
            break
    return rows


@dataclass(frozen=True)
class _Candidates:
    rows: np.ndarray
    model: np.ndarray


def _candidates(k: int, ok: Callable[[np.ndarray], bool], terms: Sequence[Term]) -> _Candidates:
    allrows = (((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1) * 2 - 1).astype(float)
    rows = np.array([r for r in allrows if ok(r)]).reshape(-1, k)
    return _Candidates(rows, _model(rows, terms))


def _row_exchange(base: np.ndarray, rows: np.ndarray, terms: Sequence[Term], cand: _Candidates,
                  max_passes: int, p: int, taken: set[bytes] | None = None) -> np.ndarray:
    """Exchange whole added rows for the best valid candidate while the determinant grows
    (Cook and Nachtsheim 1980's modified Fedorov algorithm), all candidates at once."""
    rows = rows.copy()
    x_added = _model(rows, terms)
    n = base.shape[0] + rows.shape[0]
    m_inv = np.linalg.inv(base.T @ base + x_added.T @ x_added + RIDGE * n * np.eye(p))
    codes = [_code(r) for r in cand.rows]
    for _ in range(max_passes):
        changed = False
        for i in range(rows.shape[0]):
            old = x_added[i]
            b_all = cand.model @ m_inv
            d_new = np.einsum("ij,ij->i", b_all, cand.model)
            d_cross = b_all @ old
            d_old = old @ m_inv @ old
            delta = (1 + d_new) * (1 - d_old) + d_cross ** 2
            if taken is not None:  # distinct rows: the other rows' configurations are not candidates
                used = taken | {_code(r) for j, r in enumerate(rows) if j != i}
                delta = np.where(np.fromiter((c in used for c in codes), bool, len(codes)), -np.inf, delta)
            j = int(np.argmax(delta))
            if delta[j] > 1 + 1e-9:
                new = cand.model[j]
                b = m_inv @ new
                m_inv = m_inv - np.outer(b, b) / (1 + new @ b)
                a = m_inv @ old
                m_inv = m_inv + np.outer(a, a) / (1 - old @ a)
                rows[i], x_added[i] = cand.rows[j], new
                changed = True
        if not changed:
            break
    return rows


@register
class DOptimal(Design):
    """A D-optimal design from scratch for two-level options under constraints: ``runs`` distinct
    valid configurations maximizing det(X'X) for the model of the main effects (``order`` 1) or
    the main effects and every two-option interaction (``order`` 2), by :func:`augment` from an
    empty base (seed 002 s.3.5 uses D-optimal designs for follow-ups; from scratch they fit a
    space whose constraints leave no regular fraction).

    Parameters
    ----------
    runs : int
        Configurations; at least the model's number of parameters (a one-line error names it).
    order : int
        1 or 2.
    valid : callable, optional
        ``valid(row)`` with ``row`` the level indices (0 low, 1 high) of a configuration; False
        when it breaks a constraint.
    rng : int, optional
        Seed of the random starts (the same seed gives the same design, so a run resumes).
    """

    name = "doptimal"

    def __init__(self, runs: int, order: int = 2, valid: Callable[[np.ndarray], bool] | None = None,
                 rng: int = 0) -> None:
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise ConfigError(f"design 'doptimal': the size must be a positive integer, got {runs!r}")
        if order not in (1, 2):
            raise ConfigError(f"design 'doptimal': the model's order must be 1 (main effects) or 2 (and "
                              f"two-option interactions), got {order!r}")
        self.runs, self.order, self.valid, self.rng = runs, order, valid, rng

    def model(self, k: int) -> list[Term]:
        from .terms import term_name

        names = [f"x{i}" for i in range(k)]
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)] if self.order == 2 else []
        return [Term((i,), names[i]) for i in range(k)] + [Term(pair, term_name(pair, names)) for pair in pairs]

    def build(self, level_counts: Sequence[int]) -> DesignMatrix:
        two_level_only(level_counts, self.name)
        k = len(level_counts)
        terms = self.model(k)
        p = len(terms) + 1
        what = (f"the intercept and {k} main effects" if self.order == 1 else
                f"the intercept, {k} main effects and {len(terms) - k} two-option interactions")
        if self.runs < p:
            raise ConfigError(f"design 'doptimal': {self.runs} runs cannot estimate a model of {p} parameters "
                              f"({what}); the smallest size that works is {p}")
        user_valid = self.valid

        def valid(row: np.ndarray) -> bool:
            return user_valid is None or bool(user_valid(((row + 1) // 2).astype(np.int64)))

        try:
            result = augment(np.empty((0, k)), terms, self.runs, valid=valid, rng=self.rng, distinct=True)
        except ConfigError as exc:
            raise ConfigError(f"design 'doptimal': {exc}") from None
        if not result.estimable:
            raise ConfigError(f"design 'doptimal': no {self.runs} valid configurations found that estimate {what}: "
                              "the constraints confound some of its terms (try --order 1, or more runs)")
        return DesignMatrix(design=self.name, levels=((result.added + 1) // 2).astype(np.int64),
                            level_counts=tuple(level_counts),
                            note=f"D-optimal for {what}: D-efficiency {result.d_efficiency:.3f}, "
                                 f"log det(X'X) {result.log_det:.2f}")
