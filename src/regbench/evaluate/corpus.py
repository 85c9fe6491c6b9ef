"""A labelled synthetic corpus: benchmark histories with known true changes.

Every series is one benchmark's history over ``n_versions`` versions, each measured by
``n_runs`` fresh runs of ``warmup + n_iterations`` iterations; the warm-up is generated and then
stripped as the pipeline strips a configured warm-up (``samples[warmup:]``, and
``Series.warmup`` records it), so :attr:`Series.runs` holds measured samples as it does when read
from the store.  Each series comes with the list of changes that were put into it.

Noise (every kind gets all of it, drawn per series; :class:`NoiseProfile` keeps the draw):

* **Random initial conditions** (seed 000 s.2): every run gets its own level.  Its size is set by
  the *run CV* ``s_M``, the standard deviation of run means relative to the level, and by the
  impact factor ``F`` (seed 000 s.2: "in the order of tens to hundreds" for FFT, "twice or three
  times" for HTTP Ping), drawn log-uniformly in [1, 100].  ``F`` is the ratio that
  :func:`regbench.stats.hierarchical_summary` reports, ``sd(run means) / (sd(within run) / sqrt(n))``,
  so the within-run standard deviation is ``s_M sqrt(n) / F`` and the between-run one
  ``s_M sqrt(1 - 1/F^2)`` (clusters, auto-dependence and warm-up move the factor measured on the
  generated runs away from the designed one; it still spans 1 to 100, and the tests check it).  ``s_M`` is drawn log-uniformly in [0.2%, 1.5%]: seed 003 Table 2 lists
  the coefficients of variation of 30 runs of one Firefox build, 0.04% (tsvg) to 5.68% (tgfx),
  13 of 17 tests between 0.30% and 1.42%.  The noisier ones are left out on purpose: with 10 runs
  their standard error (1.6% at 5%) exceeds what a 3% relevance threshold (seed 004 s.4.5) can
  resolve, so no detector could be asked to find their changes.
* **Per-run clusters with auto-dependence** (seed 000 s.4.1, fig. 1 and 4): in 35% of the series
  the values of a run gather around 2 or 3 run-specific typical values, visited as a sticky Markov
  chain ("observing a value from a particular cluster restricts the possible value of the next
  observation"); the cluster centres carry half of the between-run variance, as the paper's
  clustering additive filter found (impact factors near 1 once each cluster is centred).  In half
  of the series the within-run noise is AR(1) with a coefficient uniform in [0.2, 0.8] (the paper
  shows the dependence but gives no coefficient; the innovations are scaled so that the run CV
  stays as drawn).
* **Rare huge outliers** (seed 000 s.4.2: "as much as several orders of magnitude longer",
  "rare"): in half of the series each iteration is an outlier with a probability drawn
  log-uniformly in [1e-4, 2e-3], 10x to 1000x (log-uniform) its value.
* **Warm-up** (seed 001 s.2.2; seed 004 s.4.1 and s.4.4: JMH's default of 5 x 10 s, data set 3
  with 20 warm-up iterations removed; seed 003 s.2.3: Talos drops its first, slowest
  repetition): the first ``L`` iterations of every run are ``A exp(-4 i / L)`` slower, ``A``
  uniform in [10%, 100%] per series (times 0.5-1.5 per run), and the configured ``warmup``
  iterations (default 10) are stripped.  In 80% of the series ``L`` is within the configured
  count; in 20% it outlasts it by 1-10 iterations (seed 001 s.2.2: fixed warm-ups are "set by
  trial and error") and what outlasts it stays in the samples, as it does in real runs.
  Warm-up detection by MSER-5 (``warmup = "auto"``) is not used: it costs about 4 ms a run,
  20 minutes for the default corpus.
* **Version-to-version jitter**: each version is a new binary, and seed 000 s.2 names "a class of
  factors that stay the same for all operations of all benchmark processes run using the same
  benchmark binary image"; seed 003 s.6 quotes memory-layout effects of up to 8% (environment
  size) and 4% (link order) (Mytkowicz et al.).  Those maxima are extremes; each version here gets
  a factor ``1 + N(0, j^2)`` with ``j`` uniform in [0, 0.25%] per series, so consecutive versions
  differ by less than 1% (3 standard deviations): a real but irrelevant difference that a
  detector should not report.

Kinds (each a documented generator below): ``quiet``; ``step`` (1-3 steps of 1% to 40%, up or
down, log-uniform, so about 30% are below the 3% relevance threshold); ``revert`` (a step undone
1-5 versions later, the pattern of seed 003 s.2.2 and s.5.3); ``creep`` (5-15 consecutive steps of
0.3%-1% each, the "creeping performance degradation" of seed 001 s.2.3); ``bimodal`` (a cache
hit/miss mixture in which only one mode moves, seed 001 s.4.1).  Changes start at least
:data:`MARGIN` versions from either end and :data:`MIN_GAP` versions apart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model import Series, VersionInfo

#: Series kinds and their default share of the corpus.
DEFAULT_KINDS: Mapping[str, float] = {"quiet": 0.3, "step": 0.3, "revert": 0.1, "creep": 0.1, "bimodal": 0.2}
KINDS = tuple(DEFAULT_KINDS)
SHAPES = ("step", "revert", "creep", "mode-shift")
#: Relative changes at least this large are *relevant* (seed 004 s.4.5: "a relevant performance
#: change as a performance change of at least 3%").
RELEVANT = 0.03
#: No change starts closer than this to either end of a series (windowed and change-point
#: detectors need some history on both sides; a change in the newest version is a different task).
MARGIN = 5
#: Changes of one series are at least this many versions apart.
MIN_GAP = 8
DEFAULT_SIZES = {"n_series": 300, "n_versions": 100, "n_runs": 10, "n_iterations": 20, "warmup": 10}
MIN_VERSIONS = 2 * MARGIN + 10


@dataclass(frozen=True)
class TrueChange:
    """A change put into a series.

    Attributes
    ----------
    index : int
        The first version (index into the series) that shows the change.
    end_index : int
        The last version of a creep (``> index``); equal to ``index`` for the other shapes.
    magnitude : float
        Relative change of the level that moved (0.034 = +3.4%): of the whole benchmark for a
        step, revert or creep (the total over the creep), of the one mode that moved for a mode
        shift.  Positive is slower.
    shape : str
        ``step``, ``revert`` (a step, or its undoing, in a ``revert`` series), ``creep`` or
        ``mode-shift``.
    mean_change : float
        Relative change of the expected mean of the samples; equal to ``magnitude`` except for a
        mode shift, where the other mode dilutes it (to almost nothing when the modes are far
        apart, as in seed 001 fig. 8).
    """

    index: int
    end_index: int
    magnitude: float
    shape: str
    mean_change: float = float("nan")

    @property
    def relevant(self) -> bool:
        return abs(self.magnitude) >= RELEVANT


@dataclass(frozen=True)
class NoiseProfile:
    """The noise drawn for one series (see the module docstring for where each range comes from).

    ``run_cv`` is ``s_M``, ``impact_factor`` the designed ``F``; ``clusters`` is the number of
    per-run clusters (1 = none); ``ar`` the AR(1) coefficient within runs; ``outlier_rate`` the
    probability that an iteration is an outlier; ``jitter`` the standard deviation of the
    per-version factor; ``warmup_amplitude``, ``warmup_length`` and ``warmup_tau`` the warm-up
    profile (``warmup_length`` > the configured warm-up: it outlasts it).  For a bimodal
    series ``slow_share`` is the mean share of slow (cache-miss) iterations and ``mode_ratio``
    the ratio of the slow mode to the fast one; both are NaN otherwise.
    """

    level: float
    run_cv: float
    impact_factor: float
    clusters: int
    ar: float
    outlier_rate: float
    jitter: float
    warmup_amplitude: float
    warmup_length: int
    warmup_tau: float
    slow_share: float = float("nan")
    mode_ratio: float = float("nan")


@dataclass(frozen=True)
class LabelledSeries:
    """One generated history and the changes put into it."""

    series: Series
    truth: tuple[TrueChange, ...]
    kind: str
    noise: NoiseProfile | None = None

    @property
    def n_pairs(self) -> int:
        """Consecutive version pairs (the denominator of false alarm rates)."""
        return max(len(self.series) - 1, 0)


@dataclass(frozen=True)
class Corpus:
    """Labelled series and the parameters that made them (``params`` is enough to remake it)."""

    series: tuple[LabelledSeries, ...]
    params: Mapping[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.series)

    @property
    def n_pairs(self) -> int:
        return sum(s.n_pairs for s in self.series)

    @property
    def truths(self) -> list[TrueChange]:
        return [t for s in self.series for t in s.truth]

    def counts(self) -> dict[str, int]:
        """Series per kind, true changes, relevant and small ones, version pairs."""
        out = {f"series_{k}": 0 for k in KINDS}
        for s in self.series:
            out[f"series_{s.kind}"] = out.get(f"series_{s.kind}", 0) + 1
        truths = self.truths
        out.update(series=len(self.series), version_pairs=self.n_pairs, true_changes=len(truths),
                   relevant=sum(t.relevant for t in truths), small=sum(not t.relevant for t in truths))
        return out


def make_corpus(*, n_series: int = DEFAULT_SIZES["n_series"], n_versions: int = DEFAULT_SIZES["n_versions"],
                n_runs: int = DEFAULT_SIZES["n_runs"], n_iterations: int = DEFAULT_SIZES["n_iterations"],
                warmup: int = DEFAULT_SIZES["warmup"], rng=0,
                kinds: Mapping[str, float] | Sequence[str] | None = None) -> Corpus:
    """Generate the labelled corpus.

    Parameters
    ----------
    n_series, n_versions, n_runs, n_iterations : int, keyword-only
        Series, versions per series, runs per version and measured iterations per run.  The
        default, 300 x 100 x 10 x 20, has 29,700 version pairs, enough to tell a rate of 1 false
        alarm per 1,000 pairs (about 30) from 2 (about 60).
    warmup : int, keyword-only
        Warm-up iterations generated before the measured ones and stripped (``Series.warmup``).
    rng : int, numpy.random.Generator or None, keyword-only
        Seed.  The same seed and sizes give the same corpus.
    kinds : mapping of kind -> weight, or sequence of kinds, keyword-only
        Share of each kind (default :data:`DEFAULT_KINDS`); a sequence keeps the default weights of
        the kinds it names.  When there are at least as many series as kinds, each kind gets one.

    Returns
    -------
    Corpus

    Raises
    ------
    ValueError
        When a size is too small or a kind is unknown.

    References
    ----------
    seed 000 s.2 (random initial conditions, impact factor), s.4.1 (clusters, auto-dependence),
    s.4.2 (outliers); seed 001 s.2.2 (warm-up), s.2.3 (creeping degradation), s.4.1 (cache
    hit/miss clusters); seed 003 Table 2 (run-to-run CoV), s.5.3 (reverted jumps); seed 004 s.4.5
    (3% relevance).
    """
    for name, value, low in (("n_series", n_series, 1), ("n_versions", n_versions, MIN_VERSIONS),
                             ("n_runs", n_runs, 2), ("n_iterations", n_iterations, 2), ("warmup", warmup, 0)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
            raise ValueError(f"`{name}` must be an integer >= {low}")
    weights = _kind_weights(kinds)
    gen = np.random.default_rng(rng)
    counts = _allocate(weights, n_series)
    order = np.array([k for k, c in counts.items() for _ in range(c)])
    order = order[gen.permutation(order.size)]
    children = gen.spawn(n_series)
    out = []
    for i, (kind, child) in enumerate(zip(order, children, strict=True)):
        out.append(_GENERATORS[str(kind)](child, name=f"{kind}-{i:04d}", n_versions=n_versions, n_runs=n_runs,
                                          n_iterations=n_iterations, warmup=warmup))
    params = {"n_series": n_series, "n_versions": n_versions, "n_runs": n_runs, "n_iterations": n_iterations,
              "warmup": warmup, "seed": rng if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None,
              "kinds": dict(weights)}
    return Corpus(tuple(out), params)


def _kind_weights(kinds) -> dict[str, float]:
    if kinds is None:
        return dict(DEFAULT_KINDS)
    if isinstance(kinds, Mapping):
        weights = {str(k): float(w) for k, w in kinds.items()}
    else:
        weights = {str(k): DEFAULT_KINDS.get(str(k), 0.0) for k in kinds}
    unknown = [k for k in weights if k not in DEFAULT_KINDS]
    if unknown:
        raise ValueError(f"`kinds` has unknown kind {unknown[0]!r} (known: {', '.join(KINDS)})")
    if not weights or any(not math.isfinite(w) or w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ValueError("`kinds` must give non-negative weights with a positive sum")
    return {k: w for k, w in weights.items() if w > 0}


def _allocate(weights: Mapping[str, float], n: int) -> dict[str, int]:
    """Series per kind: one each first (when there is room), the rest by largest remainder."""
    kinds = list(weights)
    counts = dict.fromkeys(kinds, 0)
    if n >= len(kinds):
        counts = dict.fromkeys(kinds, 1)
    rest = n - sum(counts.values())
    total = sum(weights.values())
    shares = {k: rest * weights[k] / total for k in kinds}
    for k in kinds:
        counts[k] += int(shares[k])
    left = n - sum(counts.values())
    for k in sorted(kinds, key=lambda k: (-(shares[k] - int(shares[k])), kinds.index(k)))[:left]:
        counts[k] += 1
    return counts


# ---------------------------------------------------------------------------------------------
# Noise

def _log_uniform(gen: np.random.Generator, low: float, high: float) -> float:
    return float(np.exp(gen.uniform(np.log(low), np.log(high))))


def _noise_profile(gen: np.random.Generator, warmup: int, *, bimodal: bool = False) -> NoiseProfile:
    # 80% of warm-ups end within the configured count; the rest outlast it by 1-10 iterations
    # (fixed warm-ups "set by trial and error", seed 001 s.2.2).
    if gen.random() < 0.8:
        length = int(gen.integers(max(warmup // 2, 1), warmup + 1)) if warmup else 0
    else:
        length = warmup + int(gen.integers(1, 11))
    return NoiseProfile(
        level=_log_uniform(gen, 0.01, 100.0),
        run_cv=_log_uniform(gen, 0.002, 0.015),
        impact_factor=_log_uniform(gen, 1.0, 100.0),
        clusters=1 if bimodal or gen.random() >= 0.35 else int(gen.integers(2, 4)),
        ar=float(gen.uniform(0.2, 0.8)) if gen.random() < 0.5 else 0.0,
        outlier_rate=_log_uniform(gen, 1e-4, 2e-3) if gen.random() < 0.5 else 0.0,
        jitter=float(gen.uniform(0.0, 0.0025)),
        warmup_amplitude=float(gen.uniform(0.1, 1.0)),
        warmup_length=length,
        warmup_tau=max(length, 1) / 4,
        slow_share=float(gen.uniform(0.1, 0.7)) if bimodal else float("nan"),
        mode_ratio=_log_uniform(gen, 1.2, 1000.0) if bimodal else float("nan"),
    )


def _ar_mean_inflation(phi: float, n: int) -> float:
    """``n Var(mean) / Var(x)`` for AR(1) with coefficient ``phi`` over ``n`` samples."""
    if phi == 0:
        return 1.0
    k = np.arange(1, n)
    return float(1 + 2 * np.sum((1 - k / n) * phi ** k))


def _sticky_chain(gen: np.random.Generator, shape: tuple[int, ...], n_states: int, stay: float,
                  p_first: np.ndarray | None = None) -> np.ndarray:
    """States of a Markov chain along the last axis that stays with probability ``stay`` and
    otherwise jumps to a uniformly chosen state (or, for two states with ``p_first``, one
    with the stationary share ``p_first`` of state 1 per row)."""
    *lead, n = shape
    states = np.empty(shape, dtype=np.intp)
    if p_first is None:
        states[..., 0] = gen.integers(0, n_states, size=lead)
    else:
        states[..., 0] = gen.random(lead) < p_first
    for i in range(1, n):
        jump = gen.random(lead) >= stay
        new = gen.integers(0, n_states, size=lead) if p_first is None else (gen.random(lead) < p_first)
        states[..., i] = np.where(jump, new, states[..., i - 1])
    return states


def _within_run(gen: np.random.Generator, noise: NoiseProfile, shape: tuple[int, int, int],
                n_iterations: int) -> tuple[np.ndarray, float]:
    """Relative within-run noise (AR(1), scaled so the run mean keeps its designed variance) and the
    between-run standard deviation left for the run offsets."""
    s_m, f = noise.run_cv, noise.impact_factor
    sigma_w = s_m * math.sqrt(n_iterations) / f
    rho = s_m * math.sqrt(max(1.0 - 1.0 / f ** 2, 0.0))
    sd = sigma_w / math.sqrt(_ar_mean_inflation(noise.ar, n_iterations))
    eps = gen.standard_normal(shape)
    if noise.ar:
        innov = math.sqrt(1 - noise.ar ** 2)
        for i in range(1, shape[-1]):
            eps[..., i] = noise.ar * eps[..., i - 1] + innov * eps[..., i]
    return sd * eps, rho


def _sample(gen: np.random.Generator, noise: NoiseProfile, version_level: np.ndarray, *, n_runs: int,
            n_iterations: int, warmup: int, modes: np.ndarray | None = None) -> np.ndarray:
    """Samples ``(versions, runs, warmup + iterations)`` of one series.

    ``version_level`` is the true relative level of each version (1 = the base); for a bimodal
    series ``modes`` holds the relative level of each mode per version, shape ``(versions, 2)``.
    """
    n_versions = version_level.shape[0]
    shape = (n_versions, n_runs, warmup + n_iterations)
    within, rho = _within_run(gen, noise, shape, n_iterations)
    run_sd = rho
    if noise.clusters > 1:
        # Typical values of each run (seed 000 fig. 1): the centres carry half of the between-run
        # variance, the run offset the other half.
        run_sd = rho / math.sqrt(2)
        centres = rho * gen.standard_normal((n_versions, n_runs, noise.clusters))
        chain = _sticky_chain(gen, shape, noise.clusters, stay=float(gen.uniform(0.6, 0.95)))
        within = within + np.take_along_axis(centres, chain, axis=-1)
    run_factor = 1 + run_sd * gen.standard_normal((n_versions, n_runs, 1))
    version_factor = 1 + noise.jitter * gen.standard_normal((n_versions, 1, 1))
    if modes is None:
        level = version_level[:, None, None]
    else:
        # Per-run share of misses varies with the run's initial conditions (Beta, concentration 100);
        # hits and misses come in sticky streaks (seed 001 fig. 9).
        p_run = gen.beta(noise.slow_share * 100, (1 - noise.slow_share) * 100, size=(n_versions, n_runs))
        chain = _sticky_chain(gen, shape, 2, stay=float(gen.uniform(0.0, 0.8)), p_first=p_run)
        level = np.where(chain == 1, noise.mode_ratio * modes[:, 1, None, None], modes[:, 0, None, None])
    i = np.arange(shape[-1])
    amp = noise.warmup_amplitude * gen.uniform(0.5, 1.5, size=(n_versions, n_runs, 1))
    warm = 1 + amp * np.exp(-i / noise.warmup_tau) * (i < noise.warmup_length)
    x = noise.level * level * version_factor * run_factor * (1 + within) * warm
    if noise.outlier_rate:
        hit = gen.random(shape) < noise.outlier_rate
        if hit.any():
            x[hit] *= 10 ** gen.uniform(1, 3, size=int(hit.sum()))
    return x


def _series(name: str, x: np.ndarray, warmup: int) -> Series:
    measured = np.ascontiguousarray(x[..., warmup:])
    measured.setflags(write=False)  # a detector must not change the corpus under the next one
    n_versions, n_runs, _ = measured.shape
    return Series(benchmark=name, config="default", machine="synthetic", unit="ms", direction="lower",
                  versions=[VersionInfo(name=f"v{k:03d}", id=k + 1) for k in range(n_versions)],
                  runs=[[measured[k, j] for j in range(n_runs)] for k in range(n_versions)],
                  failed=[0] * n_versions, warmup=[warmup] * n_versions)


def _positions(gen: np.random.Generator, n_versions: int, widths: Sequence[int]) -> list[int] | None:
    """Start indices for changes of the given widths (versions they span), in order, each at least
    MARGIN from the ends and MIN_GAP after the previous one's end; None when they do not fit."""
    need = sum(widths) - len(widths) + MIN_GAP * (len(widths) - 1)
    room = (n_versions - 1 - MARGIN) - MARGIN - need
    if room < 0:
        return None
    # Spread the free room over the gaps: sorted uniform cut points.
    cuts = np.sort(gen.integers(0, room + 1, size=len(widths)))
    out, pos = [], MARGIN
    for k, w in enumerate(widths):
        start = pos + int(cuts[k]) - (int(cuts[k - 1]) if k else 0)
        out.append(start)
        pos = start + w - 1 + MIN_GAP
    return out


def _n_fitting(gen: np.random.Generator, n_versions: int, widths: list[int]) -> tuple[list[int], list[int]]:
    while widths:
        pos = _positions(gen, n_versions, widths)
        if pos is not None:
            return widths, pos
        widths = widths[:-1]
    return [], []


def _step_magnitude(gen: np.random.Generator, low: float = 0.01, high: float = 0.40) -> float:
    return _log_uniform(gen, low, high) * (1 if gen.random() < 0.5 else -1)


def _levels(n_versions: int, changes: Sequence[tuple[int, float]]) -> np.ndarray:
    level = np.ones(n_versions)
    for index, factor in changes:
        level[index:] *= factor
    return level


# ---------------------------------------------------------------------------------------------
# Kinds

def _quiet(gen, *, name, n_versions, n_runs, n_iterations, warmup) -> LabelledSeries:
    """No change: noise only."""
    noise = _noise_profile(gen, warmup)
    x = _sample(gen, noise, np.ones(n_versions), n_runs=n_runs, n_iterations=n_iterations, warmup=warmup)
    return LabelledSeries(_series(name, x, warmup), (), "quiet", noise)


def _step(gen, *, name, n_versions, n_runs, n_iterations, warmup) -> LabelledSeries:
    """1 (50%), 2 (30%) or 3 (20%) lasting steps; magnitudes log-uniform in [1%, 40%], up or down
    with equal probability (seed 000 fig. 6 lists changes from 1.77% to 39.29% in both directions)."""
    noise = _noise_profile(gen, warmup)
    n = int(gen.choice([1, 2, 3], p=[0.5, 0.3, 0.2]))
    _, pos = _n_fitting(gen, n_versions, [1] * n)
    mags = [_step_magnitude(gen) for _ in pos]
    truth = tuple(TrueChange(p, p, m, "step", m) for p, m in zip(pos, mags, strict=True))
    x = _sample(gen, noise, _levels(n_versions, [(p, 1 + m) for p, m in zip(pos, mags, strict=True)]),
                n_runs=n_runs, n_iterations=n_iterations, warmup=warmup)
    return LabelledSeries(_series(name, x, warmup), truth, "step", noise)


def _revert(gen, *, name, n_versions, n_runs, n_iterations, warmup) -> LabelledSeries:
    """A step (1%-40%, up or down) undone 1-5 versions later: two true changes, the second
    ``1 / (1 + m) - 1``.  Seed 003 s.2.2 (a drop "reverted until the bugs were fixed") and s.5.3
    ("big jumps ... followed by equally big jumps back soon after", missed by windowed t-tests)."""
    noise = _noise_profile(gen, warmup)
    gap = int(gen.integers(1, 6))
    widths, pos = _n_fitting(gen, n_versions, [gap + 1])
    truth: tuple[TrueChange, ...] = ()
    changes = []
    if pos:
        m = _step_magnitude(gen)
        back = 1 / (1 + m) - 1
        truth = (TrueChange(pos[0], pos[0], m, "revert", m), TrueChange(pos[0] + gap, pos[0] + gap, back, "revert", back))
        changes = [(pos[0], 1 + m), (pos[0] + gap, 1 + back)]
    x = _sample(gen, noise, _levels(n_versions, changes), n_runs=n_runs, n_iterations=n_iterations, warmup=warmup)
    return LabelledSeries(_series(name, x, warmup), truth, "revert", noise)


def _creep(gen, *, name, n_versions, n_runs, n_iterations, warmup) -> LabelledSeries:
    """5-15 consecutive versions each 0.3%-1% slower (uniform): one true change spanning them,
    of the total magnitude (1.5% to 16%).  Seed 001 s.2.3: "creeping performance degradations,
    which consist of a sequence of individually negligible changes"; seed 003 s.5.3 warns that
    "a series of small regressions, each too small to be detected as an outlier" goes unseen."""
    noise = _noise_profile(gen, warmup)
    length = int(gen.integers(5, 16))
    length = min(length, n_versions - 2 * MARGIN - 1)
    _, pos = _n_fitting(gen, n_versions, [length])
    truth: tuple[TrueChange, ...] = ()
    changes = []
    if pos:
        steps = gen.uniform(0.003, 0.01, size=length)
        changes = [(pos[0] + k, 1 + s) for k, s in enumerate(steps)]
        total = float(np.prod(1 + steps) - 1)
        truth = (TrueChange(pos[0], pos[0] + length - 1, total, "creep", total),)
    x = _sample(gen, noise, _levels(n_versions, changes), n_runs=n_runs, n_iterations=n_iterations, warmup=warmup)
    return LabelledSeries(_series(name, x, warmup), truth, "creep", noise)


def _bimodal(gen, *, name, n_versions, n_runs, n_iterations, warmup) -> LabelledSeries:
    """Cache hits and misses (seed 001 s.4.1, fig. 7-9: ~100 us hits, ~80 ms misses, and a 10%
    slower invocation that moves only the hits, invisible in means and medians): a fast and a slow
    mode, the slow one 1.2x to 1000x the fast (log-uniform), a share of misses uniform in
    [10%, 70%] that varies from run to run, and 1 (70%) or 2 mode shifts, each moving one mode
    (either, equally likely) by 5%-40% (log-uniform, up or down)."""
    noise = _noise_profile(gen, warmup, bimodal=True)
    n = 1 if gen.random() < 0.7 else 2
    _, pos = _n_fitting(gen, n_versions, [1] * n)
    modes = np.ones((n_versions, 2))
    truth = []
    p, r = noise.slow_share, noise.mode_ratio
    for q in pos:
        which = int(gen.integers(0, 2))
        m = _step_magnitude(gen, 0.05, 0.40)
        before = (1 - p) * modes[q, 0] + p * r * modes[q, 1]
        modes[q:, which] *= 1 + m
        after = (1 - p) * modes[q, 0] + p * r * modes[q, 1]
        truth.append(TrueChange(q, q, m, "mode-shift", float(after / before - 1)))
    x = _sample(gen, noise, np.ones(n_versions), n_runs=n_runs, n_iterations=n_iterations, warmup=warmup, modes=modes)
    return LabelledSeries(_series(name, x, warmup), tuple(truth), "bimodal", noise)


_GENERATORS = {"quiet": _quiet, "step": _step, "revert": _revert, "creep": _creep, "bimodal": _bimodal}
