"""Main and interaction effects of a two-level design, and which of them matter.

Seed 002 s.3.4: the main effect of option A is the difference of the mean responses at its two
levels (eq. 1), the interaction of A and B half the difference of B's effects at A's two levels
(eq. 2-3), and effects are judged on a half-normal plot (eq. 4).  Here:

- an effect is ``z(+) - z(-)``, the usual sign (Wu and Hamada 2009, s.4.3); seed 002's eq. 1
  writes ``z(A-) - z(A+)``, which changes no magnitude, no half-normal plot and no decision;
- the estimates are twice the least-squares coefficients of the ±1 model (main effects and
  interactions up to ``order``, one term per alias chain), fitted to each design point's mean
  weighted by its runs: for a balanced orthogonal design that *is* eq. 1-3, and it stays right
  when some point lost runs;
- when points are replicated (runs of the same configuration), the runs' scatter about their
  point's mean is the pure error: each effect gets a t confidence interval and a t-test
  (Wu and Hamada 2009, s.4.4) -- seed 002 did not test, for want of a standard deviation;
- importance is decided objectively by Lenth's (1989) pseudo standard error, which needs no
  replication: the effects below 2.5 times a first robust scale are taken as noise, and an
  effect is important when it exceeds the margin of error ``t(0.975, m/3) * PSE`` (the
  simultaneous margin guards the whole set).

Pure numpy and scipy (STYLE.md habit 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..errors import ConfigError


@dataclass(frozen=True)
class Term:
    """A model term: a main effect (one factor) or an interaction, with what it is aliased with.

    ``factors`` are column indices of the design; ``aliases`` are names of the effects that share
    its column (up to the alias order asked), for the report: "B, aliased with ACD".
    """

    factors: tuple[int, ...]
    name: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Effect:
    """One estimated effect.

    Attributes
    ----------
    term : Term
    estimate : float
        ``z(+) - z(-)`` of the term's ±1 column.
    std_error : float
        From the pure error of replicated points; NaN without replication.
    ci_low, ci_high : float
        The ``confidence_level`` t interval; NaN without replication.
    p_value : float
        Two-sided t-test of a zero effect; NaN without replication.
    important : bool
        ``|estimate|`` above Lenth's margin of error.
    """

    term: Term
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    p_value: float
    important: bool


@dataclass(frozen=True)
class LenthResult:
    """Lenth's (1989) pseudo standard error and margins for ``m`` contrasts."""

    pse: float
    margin: float
    simultaneous_margin: float
    df: float


@dataclass(frozen=True)
class HalfNormal:
    """The points of a half-normal plot (seed 002 eq. 4): ``x[i] = Phi^-1(0.5 + 0.5 (i - 0.5) / I)``
    and ``y`` the ``|effects|`` sorted ascending, with their ``names``."""

    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    names: tuple[str, ...]


@dataclass(frozen=True)
class EffectsResult:
    """Every estimated effect, largest first, and how they were judged.

    Attributes
    ----------
    effects : tuple of Effect
        Sorted by decreasing ``|estimate|``.
    lenth : LenthResult
    sigma : float
        The run-to-run standard deviation (pure error), NaN without replication.
    df_error : int
        Its degrees of freedom (runs minus points with runs).
    confidence_level : float
    points, runs : int
        Design points with at least one run, and runs in all.
    half_normal : HalfNormal
    mean : float
        The model's intercept: the mean response over the design (each point's runs weighted by
        their number), the level the effects are a part of.
    resolution : float
        The rounding floor of the estimates (:func:`rounding_floor`).
    """

    effects: tuple[Effect, ...]
    lenth: LenthResult
    sigma: float
    df_error: int
    confidence_level: float
    points: int
    runs: int
    half_normal: HalfNormal
    mean: float = float("nan")
    #: The rounding floor of the estimates (:func:`rounding_floor`): an effect or a spread this
    #: small is 0, and so is a difference of two effects within both versions' floors.
    resolution: float = 0.0

    def effect(self, name: str) -> Effect:
        for e in self.effects:
            if e.term.name == name:
                return e
        raise KeyError(name)


def rounding_floor(values: np.ndarray, n: int) -> float:
    """How far rounding alone can move a sum of ``n`` signed terms of ``values`` (an effect, a
    deviation from a mean): ``4 n u max|values|``, ``u`` the unit roundoff of float64.

    A sum of ``n`` terms computed in floating point is exact to within ``n u`` times the sum of
    their magnitudes (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed. 2002,
    s.3.1 and s.4.2); the factor 4 covers the few operations around it (the means, the least
    squares solve of a well-conditioned ±1 design).  Where runs do not scatter at all (a count, a
    size, an instruction count: the same value every run), an effect that is exactly 0 comes out
    as a few units in the last place, and so does the run-to-run spread; with a spread of 0 a
    t-test then calls that rounding certain.  Below this floor both are taken as exactly 0.
    """
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if not finite.size:
        return 0.0
    return 4.0 * max(n, 1) * float(np.finfo(float).eps) / 2 * float(np.max(np.abs(finite)))


def lenth(contrasts: Sequence[float] | np.ndarray, *, alpha: float = 0.05) -> LenthResult:
    """Lenth's pseudo standard error of unreplicated contrasts.

    ``s0 = 1.5 median|c|``; ``PSE = 1.5 median{|c| : |c| < 2.5 s0}``; margin of error
    ``t(1 - alpha/2, m/3) PSE``; simultaneous margin ``t(gamma, m/3) PSE`` with
    ``gamma = (1 + (1 - alpha)^(1/m)) / 2``.

    References
    ----------
    Lenth, R. V. (1989). Quick and easy analysis of unreplicated factorials. Technometrics 31(4).
    """
    c = np.abs(np.asarray(contrasts, dtype=float))
    if c.size < 2 or not np.all(np.isfinite(c)):
        raise ConfigError("`contrasts` must be at least two finite numbers")
    if not 0 < alpha < 1:
        raise ConfigError("`alpha` must be in (0, 1)")
    m = c.size
    s0 = 1.5 * np.median(c)
    small = c[c < 2.5 * s0]
    pse = 1.5 * float(np.median(small)) if small.size else 0.0
    df = m / 3
    gamma = (1 + (1 - alpha) ** (1 / m)) / 2
    return LenthResult(pse=pse, margin=float(stats.t.ppf(1 - alpha / 2, df)) * pse,
                       simultaneous_margin=float(stats.t.ppf(gamma, df)) * pse, df=df)


def half_normal_points(effects: Sequence[float] | np.ndarray, names: Sequence[str] = ()) -> HalfNormal:
    """Seed 002 eq. 4: ``(Phi^-1(0.5 + 0.5 (i - 0.5) / I), |theta|_(i))`` for i = 1..I."""
    a = np.abs(np.asarray(effects, dtype=float))
    order = np.argsort(a, kind="stable")
    i = np.arange(1, a.size + 1)
    x = stats.norm.ppf(0.5 + 0.5 * (i - 0.5) / a.size)
    labels = tuple(names[j] for j in order) if len(names) else tuple(str(j) for j in order)
    return HalfNormal(x=x, y=a[order], names=labels)


def model_columns(coded: np.ndarray, terms: Sequence[Term]) -> np.ndarray:
    """The ±1 column of every term (the product of its factors' columns)."""
    cols = np.ones((coded.shape[0], len(terms)))
    for j, t in enumerate(terms):
        for f in t.factors:
            cols[:, j] *= coded[:, f]
    return cols


def estimable_terms(coded: np.ndarray, terms: Sequence[Term]) -> list[Term]:
    """The terms that ``coded``'s rows can estimate together, kept in order (main effects first
    when ``terms`` lists them first): a term whose column is a combination of the intercept's
    and the kept terms' columns is dropped.  A regular design estimates every term of
    :func:`regbench.screening.terms.design_terms`; one that lost points (to a constraint, or to
    failed runs) estimates fewer."""
    coded = np.asarray(coded, dtype=float)
    kept: list[Term] = []
    x: np.ndarray = np.ones((coded.shape[0], 1))
    for t in terms:
        trial = np.column_stack([x, model_columns(coded, [t])])
        if trial.shape[1] <= coded.shape[0] and np.linalg.matrix_rank(trial) == trial.shape[1]:
            kept.append(t)
            x = trial
    return kept


def confounded_with(coded: np.ndarray, kept: Sequence[Term], lost: Sequence[Term]) -> dict[str, str]:
    """For each term of ``lost`` (not estimable from ``coded``'s rows beside ``kept``), what it is
    confounded with there: the kept term whose column is its own or its negative (``"x"``), the
    mean where its column is constant (``"the mean"``), else ``"a combination of the others"``.

    A design that lost configurations (a constraint, a build variant that did not build) aliases
    terms that the whole design kept apart: with every configuration at ``b = 1``, ``x*b``'s
    column is ``-x``'s, so the estimate of ``x`` is that of ``x`` minus ``x*b``.
    """
    coded = np.asarray(coded, dtype=float)
    cols = model_columns(coded, kept)
    out: dict[str, str] = {}
    for t in lost:
        col = model_columns(coded, [t])[:, 0]
        if np.all(col == col[0]):
            out[t.name] = "the mean"
            continue
        same = [k.name for j, k in enumerate(kept) if np.array_equal(cols[:, j], col) or np.array_equal(cols[:, j], -col)]
        out[t.name] = same[0] if same else "a combination of the others"
    return out


def estimate_effects(coded: np.ndarray, responses: Sequence[Sequence[float]], terms: Sequence[Term], *,
                     confidence_level: float = 0.95, alpha: float = 0.05) -> EffectsResult:
    """Estimate ``terms`` from the runs of each design point.

    Parameters
    ----------
    coded : numpy.ndarray
        ``(points, k)`` ±1 design.
    responses : sequence of sequences of float
        Per point, the value of each of its runs (a run's mean sample); a point without runs
        is left out.
    terms : sequence of Term
        Main effects and interactions to estimate (at most one per alias chain).
    confidence_level : float
        Of the t intervals from replication.
    alpha : float
        Level of Lenth's margin of error.

    Raises
    ------
    ConfigError
        When the points with runs cannot estimate every term (too few, or confounded).
    """
    if not 0 < confidence_level < 1:
        raise ConfigError("`confidence_level` must be in (0, 1)")
    coded = np.asarray(coded, dtype=float)
    if len(terms) < 2:
        raise ConfigError("at least two effects are needed to judge them against one another (Lenth's method)")
    if len(responses) != coded.shape[0]:
        raise ConfigError(f"`responses` must have one entry per design point ({coded.shape[0]}), got {len(responses)}")
    runs = [np.asarray(r, dtype=float) for r in responses]
    keep = np.array([r.size > 0 for r in runs])
    means = np.array([r.mean() if r.size else np.nan for r in runs])[keep]
    weights = np.array([r.size for r in runs], dtype=float)[keep]
    x = np.column_stack([np.ones(int(keep.sum())), model_columns(coded[keep], terms)])
    if x.shape[0] < x.shape[1] or np.linalg.matrix_rank(x) < x.shape[1]:
        raise ConfigError(f"the {int(keep.sum())} design points with runs cannot estimate the {len(terms)} effects "
                          "(points lost every run, or effects confounded)")
    # Weighted least squares on the point means = ordinary least squares on every run.
    w = np.sqrt(weights)
    xtwx_inv = np.linalg.inv((x * weights[:, None]).T @ x)
    beta = np.linalg.lstsq(x * w[:, None], means * w, rcond=None)[0]
    df = int(sum(r.size - 1 for r in runs if r.size))
    sigma = float(np.sqrt(sum(float(((r - r.mean()) ** 2).sum()) for r in runs if r.size) / df)) if df else float("nan")
    floor = rounding_floor(np.concatenate([r for r in runs if r.size]), int(weights.sum()))
    if df and sigma <= floor:
        sigma = 0.0  # runs that do not scatter: what is left is rounding
    se = 2 * sigma * np.sqrt(np.diag(xtwx_inv))[1:] if df else np.full(len(terms), np.nan)
    est = 2 * beta[1:]
    est[np.abs(est) <= floor] = 0.0
    if df:
        q = float(stats.t.ppf((1 + confidence_level) / 2, df))
        with np.errstate(divide="ignore", invalid="ignore"):
            p = 2 * stats.t.sf(np.abs(est / se), df)
        # No scatter: an effect is exactly what it is, certain where it is not 0, none where it is.
        p = np.where(se > 0, p, np.where(est == 0, 1.0, 0.0))
        low, high = est - q * se, est + q * se
    else:
        p = low = high = np.full(len(terms), np.nan)
    lr = lenth(est, alpha=alpha)
    effects = [Effect(term=t, estimate=float(est[j]), std_error=float(se[j]), ci_low=float(low[j]),
                      ci_high=float(high[j]), p_value=float(p[j]), important=bool(abs(est[j]) > lr.margin))
               for j, t in enumerate(terms)]
    effects.sort(key=lambda e: -abs(e.estimate))
    return EffectsResult(effects=tuple(effects), lenth=lr, sigma=sigma, df_error=df,
                         confidence_level=confidence_level, points=int(keep.sum()),
                         runs=int(weights.sum()), half_normal=half_normal_points(est, [t.name for t in terms]),
                         mean=float(beta[0]), resolution=floor)


@dataclass(frozen=True)
class Type3Row:
    """One term's line of a Type III analysis of variance."""

    term: Term
    sum_sq: float
    df: int
    f: float
    p_value: float


@dataclass(frozen=True)
class Type3Result:
    """Type III sums of squares of every term, and the residual they are tested against."""

    rows: tuple[Type3Row, ...]
    residual_sum_sq: float
    residual_df: int


def type3_anova(coded: np.ndarray, responses: Sequence[Sequence[float]], terms: Sequence[Term]) -> Type3Result:
    """Type III sums of squares of a ±1 model fitted to every run (seed 002 s.4.5 analyses its
    D-optimal follow-up so, since the design is not orthogonal): each term's sum of squares is
    what the residual grows by when the term alone is dropped from the full model, tested with
    F against the full model's residual mean square.

    Raises
    ------
    ConfigError
        When the model leaves no residual degree of freedom or cannot be estimated.
    """
    coded = np.asarray(coded, dtype=float)
    rows, ys = [], []
    for row, r in zip(coded, responses, strict=True):
        for v in r:
            rows.append(row)
            ys.append(float(v))
    if not rows:
        raise ConfigError("no run to analyse")
    x = np.column_stack([np.ones(len(rows)), model_columns(np.array(rows), terms)])
    y = np.array(ys)
    df = x.shape[0] - x.shape[1]
    if df < 1 or np.linalg.matrix_rank(x) < x.shape[1]:
        raise ConfigError(f"the {len(rows)} runs cannot estimate the {len(terms)} terms with a residual left over")

    def rss(m: np.ndarray) -> float:
        beta = np.linalg.lstsq(m, y, rcond=None)[0]
        return float(((y - m @ beta) ** 2).sum())

    # A sum of squares within rounding of 0 is 0 (rounding_floor: each residual's floor, squared, n times).
    floor = y.size * rounding_floor(y, y.size) ** 2
    full = rss(x)
    full = 0.0 if full <= floor else full
    mse = full / df
    out = []
    for j, t in enumerate(terms):
        ss = rss(np.delete(x, j + 1, axis=1)) - full
        ss = 0.0 if ss <= floor else ss
        f = ss / mse if mse > 0 else (float("inf") if ss > 0 else 0.0)
        out.append(Type3Row(term=t, sum_sq=ss, df=1, f=f, p_value=float(stats.f.sf(f, 1, df))))
    return Type3Result(rows=tuple(out), residual_sum_sq=full, residual_df=df)
