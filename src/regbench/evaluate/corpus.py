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

Shapes (:data:`NOISE_SHAPES`, ``make_corpus(shape=...)``): the ranges above are the ``default``
shape, on which the detectors were designed.  Other shapes draw the same kinds and truth with
other sizes and noise, so that a method is chosen by how it does at its worst, not on the data it
was tuned on: ``few-runs`` (3 runs x 10 iterations, run CVs up to 5%, more outliers and long
warm-ups, some bimodal runs), ``skewed`` (a floor with right-skewed interference in bursts),
``many-iterations`` (10 x 100, quiet runs), ``bimodal-runs`` (every run at one of two levels about
25% apart) and ``low-impact`` (impact factors 1-20: iterations as noisy as runs).  Two noises exist
only in shapes other than ``default``:

* **Interference above a floor** (``skewed``): an undisturbed iteration takes the floor (the
  level with its run effect and a little within-run noise); when interference hits, it takes the
  floor times ``1 + D``, ``D`` log-normal.  Hits come in bursts (a sticky two-state chain along
  the iterations), and the share of iterations hit varies from run to run (Beta), so some runs
  stay on the floor and others spend stretches above it.  This is what the cpu_loop runs of the
  quick sample of the real corpus (``benchmarks/real_corpus/make_real_corpus.py --quick``, this
  2-core machine under load) look like: runs within 1-2% of their floor next to runs that spend
  stretches of iterations, up to the whole run, 30% to 200% above it.  The rates and sizes are
  choices (the quick sample, measured under load, is not a calibration), see :class:`NoiseShape`.
* **Bimodal runs**: each run lands at one of two levels, the slow one 15%-35% above the fast,
  with a share of slow runs per series; ``py-sort`` (CPython sorting, docs/measuring.md s.5)
  measured on this machine had run means at two levels 25% apart with runs spread 11.5%, which
  is a slow share of about a third.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

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
class NoiseShape:
    """A named set of generator parameters: the sizes of a series and the ranges its noise is drawn from.

    Every range is drawn per series: ``(low, high)`` log-uniformly for rates, levels and factors,
    uniformly for coefficients and lengths; a ``*_share`` is the share of series that get that
    noise at all.  The ``default`` values are the generator's original ones (see the module
    docstring for where each comes from); :data:`NOISE_SHAPES` says why each shape departs from
    them.

    Attributes
    ----------
    name, description : str
    n_runs, n_iterations, warmup : int
        Runs per version, measured iterations per run, warm-up iterations generated and stripped.
    run_cv : (float, float)
        Range of the run CV ``s_M`` (log-uniform).
    impact_factor : (float, float)
        Range of the impact factor ``F`` (log-uniform).
    cluster_share : float
        Share of series with 2-3 per-run clusters.
    ar_share, ar : float, (float, float)
        Share of series with AR(1) within-run noise, and its coefficient's range (uniform).
    outlier_share, outlier_rate : float, (float, float)
        Share of series with outliers (10x-1000x), and the per-iteration rate (log-uniform).
    warmup_outlast : float
        Share of series whose warm-up outlasts the configured one by 1-10 iterations.
    warmup_amplitude : (float, float)
        Range of the warm-up's first-iteration slowdown (uniform).
    jitter : float
        Largest standard deviation of the per-version factor (uniform from 0).
    interference_share : float
        Share of series with interference above a floor (module docstring).
    interference_hits : (float, float)
        Mean share of iterations hit (log-uniform per series; per run it is Beta with
        concentration ``interference_concentration``).
    interference_burst : (float, float)
        Mean length of a burst of hits, in iterations (uniform).
    interference_delay : (float, float)
        Median delay ``D`` of a hit iteration relative to the floor (log-uniform per series);
        delays are log-normal around it with log standard deviation ``interference_sigma``.
    interference_sigma, interference_concentration : float
    bimodal_runs_share : float
        Share of series whose runs land at one of two levels.
    bimodal_runs_ratio : (float, float)
        Ratio of the slow level to the fast one (uniform).
    bimodal_runs_slow : (float, float)
        Share of slow runs (uniform per series; each run is slow with that probability).
    """

    name: str
    description: str
    n_runs: int = DEFAULT_SIZES["n_runs"]
    n_iterations: int = DEFAULT_SIZES["n_iterations"]
    warmup: int = DEFAULT_SIZES["warmup"]
    run_cv: tuple[float, float] = (0.002, 0.015)
    impact_factor: tuple[float, float] = (1.0, 100.0)
    cluster_share: float = 0.35
    ar_share: float = 0.5
    ar: tuple[float, float] = (0.2, 0.8)
    outlier_share: float = 0.5
    outlier_rate: tuple[float, float] = (1e-4, 2e-3)
    warmup_outlast: float = 0.2
    warmup_amplitude: tuple[float, float] = (0.1, 1.0)
    jitter: float = 0.0025
    interference_share: float = 0.0
    interference_hits: tuple[float, float] = (0.02, 0.3)
    interference_burst: tuple[float, float] = (1.0, 10.0)
    interference_delay: tuple[float, float] = (0.05, 1.0)
    interference_sigma: float = 0.5
    interference_concentration: float = 2.0
    bimodal_runs_share: float = 0.0
    bimodal_runs_ratio: tuple[float, float] = (1.15, 1.35)
    bimodal_runs_slow: tuple[float, float] = (0.15, 0.6)

    def __post_init__(self) -> None:
        for label in ("n_runs", "n_iterations"):
            value = getattr(self, label)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 2:
                raise ValueError(f"`{label}` must be an integer >= 2")
        if not isinstance(self.warmup, (int, np.integer)) or isinstance(self.warmup, bool) or self.warmup < 0:
            raise ValueError("`warmup` must be an integer >= 0")
        for label in ("cluster_share", "ar_share", "outlier_share", "warmup_outlast", "interference_share",
                      "bimodal_runs_share"):
            if not 0 <= getattr(self, label) <= 1:
                raise ValueError(f"`{label}` must be in [0, 1]")
        for label, low in (("run_cv", 0.0), ("impact_factor", 1.0), ("outlier_rate", 0.0),
                           ("interference_hits", 0.0), ("interference_burst", 1.0), ("interference_delay", 0.0),
                           ("bimodal_runs_ratio", 1.0)):
            a, b = getattr(self, label)
            if not (math.isfinite(a) and math.isfinite(b) and low <= a <= b and (a > 0 or low > 0)):
                bound = f"{low:g} < low" if low == 0 else f"{low:g} <= low"
                raise ValueError(f"`{label}` must be a range (low, high) with {bound} <= high")
        for label in ("ar", "bimodal_runs_slow", "interference_hits"):
            a, b = getattr(self, label)
            if not 0 <= a <= b < 1:
                raise ValueError(f"`{label}` must be a range (low, high) within [0, 1)")
        if not 0 <= self.jitter < 1 or not self.interference_sigma >= 0 or not self.interference_concentration > 0:
            raise ValueError("`jitter` must be in [0, 1), `interference_sigma` >= 0 and "
                             "`interference_concentration` > 0")

    def parameters(self) -> dict[str, object]:
        """The parameters as plain JSON values (ranges as lists)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}


#: The shapes of the corpus, by name.  Every number that is not the default's is a choice made to
#: cover the ranges the project's detection issue names (runs 3/5/10, iterations 10/30/100, run
#: CV 0.3%-5%, impact factor 1-20, right-skewed interference with a floor, bimodal runs), unless
#: its comment cites a source.
NOISE_SHAPES: Mapping[str, NoiseShape] = {s.name: s for s in (
    NoiseShape("default", "the generator the detectors were designed on: 10 runs x 20 iterations, run CV "
                          "0.2%-1.5%, impact factor 1-100"),
    # Few, noisy runs, as a project that measures every commit cheaply has.  Run CVs up to 5%:
    # seed 003 Table 2 (3 of 17 Firefox tests above 1.5%: ts_shutdown 2.00%, tp_dist_shutdown
    # 5.14%, tgfx 5.68%).  Outliers in 70% of the series at up to 1 in 100 iterations, warm-ups
    # outlasting the configured count in 40% and bimodal runs in a quarter of the series are
    # choices: "outliers, warm-up, bimodal" of the held-out data the default detector lost on.
    NoiseShape("few-runs", "3 runs x 10 iterations, run CV 0.3%-5%, impact factor 1-20, more outliers, "
                           "long warm-ups, bimodal runs in 25% of series",
               n_runs=3, n_iterations=10, run_cv=(0.003, 0.05), impact_factor=(1.0, 20.0),
               outlier_share=0.7, outlier_rate=(1e-3, 1e-2), warmup_outlast=0.4, bimodal_runs_share=0.25),
    # A floor and right-skewed interference above it (module docstring), in every series; the
    # floor is quiet (run CV 0.2%-1%, impact factor 5-100: within-run noise of the floor at most
    # about 1%) and without clusters or AR(1), so that what moves the samples is the interference.
    NoiseShape("skewed", "5 runs x 30 iterations; a quiet floor with interference bursts, delays "
                         "log-normal around 5%-100%, 2%-30% of iterations hit",
               n_runs=5, n_iterations=30, run_cv=(0.002, 0.01), impact_factor=(5.0, 100.0), cluster_share=0.0,
               ar_share=0.0, interference_share=1.0),
    # Many iterations of quiet runs: a micro-benchmark harness (JMH, Google Benchmark).  Run CVs
    # 0.3%-1%: the middle of seed 003 Table 2 (13 of 17 tests between 0.30% and 1.42%).
    NoiseShape("many-iterations", "10 runs x 100 iterations, run CV 0.3%-1%",
               n_iterations=100, run_cv=(0.003, 0.01)),
    # Every series' runs land at one of two levels (py-sort, docs/measuring.md s.5: two levels 25%
    # apart; the range 15%-35% and the slow share 15%-60% around its third are choices).
    NoiseShape("bimodal-runs", "10 runs x 20 iterations, every run at one of two levels 15%-35% apart, "
                               "15%-60% of runs slow",
               bimodal_runs_share=1.0),
    # Impact factors of 1-20 only: iterations nearly as noisy as runs (seed 000 s.2: HTTP Ping's
    # "twice or three times"), 5 runs x 30 iterations.
    NoiseShape("low-impact", "5 runs x 30 iterations, impact factor 1-20, run CV 0.3%-2%",
               n_runs=5, n_iterations=30, run_cv=(0.003, 0.02), impact_factor=(1.0, 20.0)),
)}


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
    the ratio of the slow mode to the fast one; both are NaN otherwise.  With interference
    (:class:`NoiseShape`), ``interference_hits`` is the mean share of iterations hit (0 = none),
    ``interference_burst`` the mean burst length, ``interference_delay`` the median delay,
    ``interference_sigma`` its log standard deviation and ``interference_concentration`` that of
    the per-run share of hits; with bimodal runs, ``run_mode_ratio`` is
    the slow level over the fast one and ``slow_runs`` the share of slow runs (NaN without).
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
    interference_hits: float = 0.0
    interference_burst: float = float("nan")
    interference_delay: float = float("nan")
    interference_sigma: float = float("nan")
    interference_concentration: float = float("nan")
    run_mode_ratio: float = float("nan")
    slow_runs: float = float("nan")


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
    """Labelled series and the parameters that made them (``params`` is enough to remake it).

    ``name`` labels the corpus in tables: ``SHAPE seed N`` for a generated one, ``real`` (or the
    folder) for measurements (:func:`regbench.evaluate.real.load_real_corpus`).
    """

    series: tuple[LabelledSeries, ...]
    params: Mapping[str, object] = field(default_factory=dict)
    name: str = "synthetic"

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


def make_corpus(*, shape: str | NoiseShape = "default", n_series: int = DEFAULT_SIZES["n_series"],
                n_versions: int = DEFAULT_SIZES["n_versions"], n_runs: int | None = None,
                n_iterations: int | None = None, warmup: int | None = None, rng=0,
                kinds: Mapping[str, float] | Sequence[str] | None = None) -> Corpus:
    """Generate the labelled corpus.

    Parameters
    ----------
    shape : str or NoiseShape, keyword-only
        The sizes and noise of the series: a name in :data:`NOISE_SHAPES` (default ``default``,
        the original generator: the same seed gives the same corpus as before shapes existed) or
        a :class:`NoiseShape` (``dataclasses.replace(NOISE_SHAPES["few-runs"], ...)``).
    n_series, n_versions : int, keyword-only
        Series, and versions per series.  The default, 300 x 100, has 29,700 version pairs,
        enough to tell a rate of 1 false alarm per 1,000 pairs (about 30) from 2 (about 60).
    n_runs, n_iterations, warmup : int, keyword-only
        Runs per version, measured iterations per run, and warm-up iterations generated before
        the measured ones and stripped (``Series.warmup``); default: the shape's.
    rng : int, numpy.random.Generator or None, keyword-only
        Seed.  The same seed, shape and sizes give the same corpus.
    kinds : mapping of kind -> weight, or sequence of kinds, keyword-only
        Share of each kind (default :data:`DEFAULT_KINDS`); a sequence keeps the default weights of
        the kinds it names.  When there are at least as many series as kinds, each kind gets one.

    Returns
    -------
    Corpus
        Named ``SHAPE seed N``; ``params`` holds the shape's name and parameters, the sizes and
        the seed.

    Raises
    ------
    ValueError
        When a size is too small, or a shape or kind is unknown.

    References
    ----------
    seed 000 s.2 (random initial conditions, impact factor), s.4.1 (clusters, auto-dependence),
    s.4.2 (outliers); seed 001 s.2.2 (warm-up), s.2.3 (creeping degradation), s.4.1 (cache
    hit/miss clusters); seed 003 Table 2 (run-to-run CoV), s.5.3 (reverted jumps); seed 004 s.4.5
    (3% relevance).
    """
    if isinstance(shape, str):
        if shape not in NOISE_SHAPES:
            raise ValueError(f"`shape` must be one of {', '.join(NOISE_SHAPES)}, got {shape!r}")
        shape = NOISE_SHAPES[shape]
    elif not isinstance(shape, NoiseShape):
        raise ValueError("`shape` must be a shape name or a NoiseShape")
    n_runs = shape.n_runs if n_runs is None else n_runs
    n_iterations = shape.n_iterations if n_iterations is None else n_iterations
    warmup = shape.warmup if warmup is None else warmup
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
        layout = _Layout(name=f"{kind}-{i:04d}", n_versions=int(n_versions), n_runs=int(n_runs),
                         n_iterations=int(n_iterations), warmup=int(warmup), shape=shape)
        out.append(_GENERATORS[str(kind)](child, layout))
    seed = rng if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    params = {"shape": shape.name, "n_series": n_series, "n_versions": n_versions, "n_runs": n_runs,
              "n_iterations": n_iterations, "warmup": warmup, "seed": seed, "kinds": dict(weights),
              "shape_parameters": shape.parameters()}
    return Corpus(tuple(out), params, name=shape.name if seed is None else f"{shape.name} seed {seed}")


@dataclass(frozen=True)
class _Layout:
    """What every kind's generator needs besides its random generator: the series' name, sizes and shape."""

    name: str
    n_versions: int
    n_runs: int
    n_iterations: int
    warmup: int
    shape: NoiseShape


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


def _noise_profile(gen: np.random.Generator, layout: _Layout, *, bimodal: bool = False) -> NoiseProfile:
    # The draws are in the order of the original generator, and a noise the shape does not have
    # draws nothing, so that the default shape gives, seed for seed, the corpus it always gave.
    shape, warmup = layout.shape, layout.warmup
    # 80% of warm-ups end within the configured count; the rest outlast it by 1-10 iterations
    # (fixed warm-ups "set by trial and error", seed 001 s.2.2).
    if gen.random() < 1 - shape.warmup_outlast:
        length = int(gen.integers(max(warmup // 2, 1), warmup + 1)) if warmup else 0
    else:
        length = warmup + int(gen.integers(1, 11))
    level = _log_uniform(gen, 0.01, 100.0)
    run_cv = _log_uniform(gen, *shape.run_cv)
    impact = _log_uniform(gen, *shape.impact_factor)
    clusters = 1 if bimodal or gen.random() >= shape.cluster_share else int(gen.integers(2, 4))
    ar = float(gen.uniform(*shape.ar)) if gen.random() < shape.ar_share else 0.0
    outlier_rate = _log_uniform(gen, *shape.outlier_rate) if gen.random() < shape.outlier_share else 0.0
    jitter = float(gen.uniform(0.0, shape.jitter))
    amplitude = float(gen.uniform(*shape.warmup_amplitude))
    slow_share = float(gen.uniform(0.1, 0.7)) if bimodal else float("nan")
    mode_ratio = _log_uniform(gen, 1.2, 1000.0) if bimodal else float("nan")
    extra: dict[str, float] = {}
    if shape.interference_share and gen.random() < shape.interference_share:
        extra.update(interference_hits=_log_uniform(gen, *shape.interference_hits),
                     interference_burst=float(gen.uniform(*shape.interference_burst)),
                     interference_delay=_log_uniform(gen, *shape.interference_delay),
                     interference_sigma=shape.interference_sigma,
                     interference_concentration=shape.interference_concentration)
    if shape.bimodal_runs_share and gen.random() < shape.bimodal_runs_share:
        extra.update(run_mode_ratio=float(gen.uniform(*shape.bimodal_runs_ratio)),
                     slow_runs=float(gen.uniform(*shape.bimodal_runs_slow)))
    return NoiseProfile(level=level, run_cv=run_cv, impact_factor=impact, clusters=clusters, ar=ar,
                        outlier_rate=outlier_rate, jitter=jitter, warmup_amplitude=amplitude, warmup_length=length,
                        warmup_tau=max(length, 1) / 4, slow_share=slow_share, mode_ratio=mode_ratio, **extra)


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


def _sample(gen: np.random.Generator, noise: NoiseProfile, version_level: np.ndarray, layout: _Layout, *,
            modes: np.ndarray | None = None) -> np.ndarray:
    """Samples ``(versions, runs, warmup + iterations)`` of one series.

    ``version_level`` is the true relative level of each version (1 = the base); for a bimodal
    series ``modes`` holds the relative level of each mode per version, shape ``(versions, 2)``.
    """
    n_runs, n_iterations, warmup = layout.n_runs, layout.n_iterations, layout.warmup
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
    # Noises of other shapes than the default, drawn last (the factors commute).
    if noise.interference_hits:
        x *= 1 + _interference(gen, noise, shape)
    if math.isfinite(noise.slow_runs):
        slow = gen.random((n_versions, n_runs, 1)) < noise.slow_runs
        x *= np.where(slow, noise.run_mode_ratio, 1.0)
    return x


def _interference(gen: np.random.Generator, noise: NoiseProfile, shape: tuple[int, int, int]) -> np.ndarray:
    """Relative delays of shape ``shape``: 0 off interference; log-normal around
    ``interference_delay`` in bursts (a sticky chain whose stationary share of hits is each run's
    own, Beta around the series' ``interference_hits``)."""
    p, c = noise.interference_hits, noise.interference_concentration
    p_run = gen.beta(p * c, (1 - p) * c, size=shape[:2])
    # A chain that stays with probability ``stay`` and otherwise redraws (hit with probability p)
    # has hit bursts of mean length 1 / ((1 - stay) (1 - p)).
    stay = min(max(1 - 1 / (noise.interference_burst * (1 - p)), 0.0), 0.99)
    hit = _sticky_chain(gen, shape, 2, stay=stay, p_first=p_run)
    delay = noise.interference_delay * np.exp(noise.interference_sigma * gen.standard_normal(shape))
    return np.where(hit == 1, delay, 0.0)


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

def _quiet(gen, layout: _Layout) -> LabelledSeries:
    """No change: noise only."""
    noise = _noise_profile(gen, layout)
    x = _sample(gen, noise, np.ones(layout.n_versions), layout)
    return LabelledSeries(_series(layout.name, x, layout.warmup), (), "quiet", noise)


def _step(gen, layout: _Layout) -> LabelledSeries:
    """1 (50%), 2 (30%) or 3 (20%) lasting steps; magnitudes log-uniform in [1%, 40%], up or down
    with equal probability (seed 000 fig. 6 lists changes from 1.77% to 39.29% in both directions)."""
    noise = _noise_profile(gen, layout)
    n = int(gen.choice([1, 2, 3], p=[0.5, 0.3, 0.2]))
    _, pos = _n_fitting(gen, layout.n_versions, [1] * n)
    mags = [_step_magnitude(gen) for _ in pos]
    truth = tuple(TrueChange(p, p, m, "step", m) for p, m in zip(pos, mags, strict=True))
    x = _sample(gen, noise, _levels(layout.n_versions, [(p, 1 + m) for p, m in zip(pos, mags, strict=True)]), layout)
    return LabelledSeries(_series(layout.name, x, layout.warmup), truth, "step", noise)


def _revert(gen, layout: _Layout) -> LabelledSeries:
    """A step (1%-40%, up or down) undone 1-5 versions later: two true changes, the second
    ``1 / (1 + m) - 1``.  Seed 003 s.2.2 (a drop "reverted until the bugs were fixed") and s.5.3
    ("big jumps ... followed by equally big jumps back soon after", missed by windowed t-tests)."""
    noise = _noise_profile(gen, layout)
    gap = int(gen.integers(1, 6))
    widths, pos = _n_fitting(gen, layout.n_versions, [gap + 1])
    truth: tuple[TrueChange, ...] = ()
    changes = []
    if pos:
        m = _step_magnitude(gen)
        back = 1 / (1 + m) - 1
        truth = (TrueChange(pos[0], pos[0], m, "revert", m), TrueChange(pos[0] + gap, pos[0] + gap, back, "revert", back))
        changes = [(pos[0], 1 + m), (pos[0] + gap, 1 + back)]
    x = _sample(gen, noise, _levels(layout.n_versions, changes), layout)
    return LabelledSeries(_series(layout.name, x, layout.warmup), truth, "revert", noise)


def _creep(gen, layout: _Layout) -> LabelledSeries:
    """5-15 consecutive versions each 0.3%-1% slower (uniform): one true change spanning them,
    of the total magnitude (1.5% to 16%).  Seed 001 s.2.3: "creeping performance degradations,
    which consist of a sequence of individually negligible changes"; seed 003 s.5.3 warns that
    "a series of small regressions, each too small to be detected as an outlier" goes unseen."""
    noise = _noise_profile(gen, layout)
    length = int(gen.integers(5, 16))
    length = min(length, layout.n_versions - 2 * MARGIN - 1)
    _, pos = _n_fitting(gen, layout.n_versions, [length])
    truth: tuple[TrueChange, ...] = ()
    changes = []
    if pos:
        steps = gen.uniform(0.003, 0.01, size=length)
        changes = [(pos[0] + k, 1 + s) for k, s in enumerate(steps)]
        total = float(np.prod(1 + steps) - 1)
        truth = (TrueChange(pos[0], pos[0] + length - 1, total, "creep", total),)
    x = _sample(gen, noise, _levels(layout.n_versions, changes), layout)
    return LabelledSeries(_series(layout.name, x, layout.warmup), truth, "creep", noise)


def _bimodal(gen, layout: _Layout) -> LabelledSeries:
    """Cache hits and misses (seed 001 s.4.1, fig. 7-9: ~100 us hits, ~80 ms misses, and a 10%
    slower invocation that moves only the hits, invisible in means and medians): a fast and a slow
    mode, the slow one 1.2x to 1000x the fast (log-uniform), a share of misses uniform in
    [10%, 70%] that varies from run to run, and 1 (70%) or 2 mode shifts, each moving one mode
    (either, equally likely) by 5%-40% (log-uniform, up or down)."""
    noise = _noise_profile(gen, layout, bimodal=True)
    n = 1 if gen.random() < 0.7 else 2
    _, pos = _n_fitting(gen, layout.n_versions, [1] * n)
    modes = np.ones((layout.n_versions, 2))
    truth = []
    p, r = noise.slow_share, noise.mode_ratio
    for q in pos:
        which = int(gen.integers(0, 2))
        m = _step_magnitude(gen, 0.05, 0.40)
        before = (1 - p) * modes[q, 0] + p * r * modes[q, 1]
        modes[q:, which] *= 1 + m
        after = (1 - p) * modes[q, 0] + p * r * modes[q, 1]
        truth.append(TrueChange(q, q, m, "mode-shift", float(after / before - 1)))
    x = _sample(gen, noise, np.ones(layout.n_versions), layout, modes=modes)
    return LabelledSeries(_series(layout.name, x, layout.warmup), tuple(truth), "bimodal", noise)


_GENERATORS = {"quiet": _quiet, "step": _step, "revert": _revert, "creep": _creep, "bimodal": _bimodal}
