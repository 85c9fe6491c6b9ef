"""What matters among options with more than two levels: a Type III analysis of variance.

A two-level option has one effect, ``z(+) - z(-)`` (:mod:`regbench.screening.effects`); an option
with three levels (``cache_size`` at 0, 2000 and -64000) has two contrasts, and no single number
says how much it matters.  For a design with any such option the runs are analysed as a linear
model with every option a categorical factor (and, at ``order`` 2, the two-option interactions the
design can estimate), with sum-to-zero contrasts (``C(x, Sum)``: Type III sums of squares are
only meaningful with them), by statsmodels' ``ols`` and ``anova_lm(typ=3)``:

- each option's (and interaction's) F-test against the residual of the whole model;
- importance decided by Benjamini-Hochberg across the terms at ``alpha`` (the q-values are
  printed), rather than by eye (seed 002 s.3.4 judged a half-normal plot);
- each level's least-squares mean (the model's mean at that level, the other options averaged
  with equal weights: the raw mean of its runs when the design is balanced, and not biased by the
  other options when a constraint or a failed run unbalanced it) with its t interval.

Each run is one response, the mean of its samples (runs are the unit of replication, seed 000
s.2).  statsmodels is the ``diagnose`` extra: it is imported through
:func:`regbench.extras.require`, a one-line error when missing.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..extras import require
from .terms import term_name

WHAT = "the analysis of options with more than two levels (regbench screen)"


@dataclass(frozen=True)
class LevelMean:
    """One level of an option: its least-squares mean, the t interval, and the runs made at it."""

    level: str
    mean: float
    ci_low: float
    ci_high: float
    runs: int


@dataclass(frozen=True)
class AnovaTerm:
    """One line of the analysis: an option (main effect) or a two-option interaction.

    Attributes
    ----------
    name : str
        The option's name, or ``a*b``.
    factors : tuple of int
        Option indices.
    sum_sq, df, f, p_value : float, int, float, float
        Type III sum of squares, its degrees of freedom, the F statistic and its p-value.
    q_value : float
        Benjamini-Hochberg adjusted p-value across every term of the analysis.
    important : bool
        ``q_value <= alpha``.
    spread : float
        For an option, its largest level mean minus its smallest (NaN for an interaction).
    """

    name: str
    factors: tuple[int, ...]
    sum_sq: float
    df: int
    f: float
    p_value: float
    q_value: float
    important: bool
    spread: float


@dataclass(frozen=True)
class LevelAnova:
    """The analysis of one version's runs.

    Attributes
    ----------
    terms : tuple of AnovaTerm
        Options, then interactions, each group by increasing p-value.
    means : tuple of (str, tuple of LevelMean)
        Per option, in the space's order, its levels in their order.
    residual_sum_sq, residual_df : float, int
    alpha : float
        The false discovery rate of the importance decision.
    confidence_level : float
        Of the level means' intervals.
    points, runs : int
        Configurations with at least one run, and runs in all.
    not_estimable : tuple of str
        Interactions asked for (``order`` 2) that the configurations run cannot estimate, or that
        would leave no residual to test against.
    """

    terms: tuple[AnovaTerm, ...]
    means: tuple[tuple[str, tuple[LevelMean, ...]], ...]
    residual_sum_sq: float
    residual_df: int
    alpha: float
    confidence_level: float
    points: int
    runs: int
    not_estimable: tuple[str, ...] = ()

    def term(self, name: str) -> AnovaTerm:
        for t in self.terms:
            if t.name == name:
                return t
        raise KeyError(name)

    def levels_of(self, option: str) -> tuple[LevelMean, ...]:
        for name, means in self.means:
            if name == option:
                return means
        raise KeyError(option)


def _factor(j: int) -> str:
    # Columns are named f0, f1...: an option called C or Sum would read as patsy's functions.
    return f"C(f{j}, Sum)"


def level_anova(levels: np.ndarray, responses: Sequence[Sequence[float]], names: Sequence[str],
                level_labels: Sequence[Sequence[str]], *, order: int = 1, confidence_level: float = 0.95,
                alpha: float = 0.05) -> LevelAnova:
    """Type III analysis of variance of the runs of a design whose options may have any number
    of levels.

    Parameters
    ----------
    levels : numpy.ndarray
        ``(points, k)`` level indices (the design's rows).
    responses : sequence of sequences of float
        Per point, the value of each of its runs; a point without runs (never run, or every run
        failed) is left out.
    names : sequence of str
        The options' names.
    level_labels : sequence of sequences of str
        Per option, its levels as text (the index of ``levels`` is the position in it).
    order : int
        1: options only; 2: with every two-option interaction the runs can estimate with a
        residual left over.
    confidence_level : float
        Of the level means' t intervals.
    alpha : float
        False discovery rate of the Benjamini-Hochberg decision across the terms.

    Raises
    ------
    ConfigError
        One line: a level of an option that no run was made at (its mean cannot be estimated and
        the option cannot be compared across all its levels), a model that leaves no residual
        (no replication and no interaction left over), bad arguments.
    """
    import pandas as pd

    smf = require("statsmodels.formula.api", what=WHAT)
    anova_lm = require("statsmodels.stats.anova", what=WHAT).anova_lm
    multipletests = require("statsmodels.stats.multitest", what=WHAT).multipletests
    levels = np.asarray(levels, dtype=np.int64)
    k = levels.shape[1] if levels.ndim == 2 else 0
    if levels.ndim != 2 or len(names) != k or len(level_labels) != k:
        raise ConfigError(f"`levels` must be (points, {len(names)}) with a name and level labels per option")
    if len(responses) != levels.shape[0]:
        raise ConfigError(f"`responses` must have one entry per design point ({levels.shape[0]}), got {len(responses)}")
    if order not in (1, 2):
        raise ConfigError(f"`order` must be 1 or 2, got {order!r}")
    if not 0 < confidence_level < 1 or not 0 < alpha < 1:
        raise ConfigError("`confidence_level` and `alpha` must be in (0, 1)")
    rows = [(i, float(v)) for i, r in enumerate(responses) for v in r]
    if not rows:
        raise ConfigError("no run to analyse")
    at = levels[[i for i, _ in rows]]
    missing = [f"{names[j]} = {level_labels[j][m]}" for j in range(k) for m in range(len(level_labels[j]))
               if not np.any(at[:, j] == m)]
    if missing:
        raise ConfigError(f"no run was made at {'; '.join(missing)} (a constraint left it out, or its runs failed): "
                          "an option is compared across all its levels, so each level needs runs")
    data = pd.DataFrame({f"f{j}": at[:, j] for j in range(k)})
    data["y"] = [v for _, v in rows]
    n = len(data)

    def exog(terms: Sequence[tuple[int, ...]]) -> np.ndarray:
        return np.asarray(smf.ols(formula(terms), data).exog)

    mains: list[tuple[int, ...]] = [(j,) for j in range(k)]
    x = exog(mains)
    if np.linalg.matrix_rank(x) < x.shape[1]:  # cannot happen with every level run; kept as a guard
        raise ConfigError("the configurations run cannot separate the options' levels")
    if n - x.shape[1] < 1:
        raise ConfigError(f"the {n} runs leave no residual to test the options against ({x.shape[1]} parameters): "
                          "run more runs per configuration (--runs)")
    model = list(mains)
    skipped = []
    if order == 2:
        # The interactions the design can estimate, kept one at a time (as estimable_terms does
        # for two-level effects) while the model stays of full rank with a residual left over.
        for pair in itertools.combinations(range(k), 2):
            trial = exog([*model, pair])
            if trial.shape[1] < n and np.linalg.matrix_rank(trial) == trial.shape[1]:
                model.append(pair)
            else:
                skipped.append(term_name(pair, names))
    fit = smf.ols(formula(model), data).fit()
    table = anova_lm(fit, typ=3)
    keys = [":".join(_factor(j) for j in t) for t in model]
    p_values = np.array([float(table.loc[key, "PR(>F)"]) for key in keys])
    reject, q_values, _, _ = multipletests(p_values, alpha=alpha, method="fdr_bh")

    means = []
    params = list(fit.params.index)
    for j in range(k):
        count = len(level_labels[j])
        contrast = np.zeros((count, len(params)))
        contrast[:, params.index("Intercept")] = 1.0
        for m in range(count - 1):
            column = params.index(f"{_factor(j)}[S.{m}]")
            contrast[m, column] = 1.0
            contrast[count - 1, column] = -1.0  # sum to zero: the last level is minus the others
        test = fit.t_test(contrast)
        ci = np.asarray(test.conf_int(alpha=1 - confidence_level))
        effect = np.asarray(test.effect, dtype=float)
        means.append((names[j], tuple(LevelMean(level=level_labels[j][m], mean=float(effect[m]),
                                                ci_low=float(ci[m, 0]), ci_high=float(ci[m, 1]),
                                                runs=int(np.sum(at[:, j] == m)))
                                      for m in range(count))))
    spreads = {j: float(max(lm.mean for lm in ms) - min(lm.mean for lm in ms)) for j, (_, ms) in enumerate(means)}
    out = [AnovaTerm(name=term_name(t, names), factors=t, sum_sq=float(table.loc[key, "sum_sq"]),
                     df=round(float(table.loc[key, "df"])), f=float(table.loc[key, "F"]),
                     p_value=float(p), q_value=float(q), important=bool(r),
                     spread=spreads[t[0]] if len(t) == 1 else float("nan"))
           for t, key, p, q, r in zip(model, keys, p_values, q_values, reject, strict=True)]
    out.sort(key=lambda a: (len(a.factors), a.p_value))
    return LevelAnova(terms=tuple(out), means=tuple(means), residual_sum_sq=float(table.loc["Residual", "sum_sq"]),
                      residual_df=round(float(table.loc["Residual", "df"])), alpha=alpha,
                      confidence_level=confidence_level, points=len({i for i, _ in rows}), runs=n,
                      not_estimable=tuple(skipped))


def formula(terms: Sequence[tuple[int, ...]]) -> str:
    """``y ~ C(f0, Sum) + C(f1, Sum) + C(f0, Sum):C(f1, Sum)`` for options and interactions."""
    return "y ~ " + " + ".join(":".join(_factor(j) for j in t) for t in terms)
