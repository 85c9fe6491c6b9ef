"""Evaluation of change detectors on labelled corpora, synthetic and real (``regbench evaluate``).

=============  ================================================================================
module         contents
=============  ================================================================================
``corpus``     :func:`make_corpus`: series of every kind with their true changes, at one of
               the noise shapes of :data:`NOISE_SHAPES`
``synthetic``  :func:`make_series`: one history at given levels, runs and iterations (what
               detector tests are written against)
``score``      matching detections to true changes; :class:`Score` (recall, precision, F1,
               false alarms per 1,000 version pairs, delay)
``baselines``  the Perfherder rule, Apache Otava and asv's step detection, as detectors outside
               the registry
``real``       :func:`load_real_corpus`: the corpus of real measurements with known work ratios
``runner``     :func:`evaluate` (every method over a corpus, in parallel), :func:`evaluate_corpora`
               (several corpora, and each method's worst row)
``tables``     :func:`render`: the score table and the worst-row table as text or Markdown
=============  ================================================================================

Re-run the published tables with ``regbench evaluate --format markdown`` (docs/evaluation.md).
"""

from ..errors import MissingDependency
from .baselines import BASELINES, INSTALL_HINT, AsvSteps, OtavaBaseline, PerfherderRule
from .corpus import (
    DEFAULT_KINDS,
    KINDS,
    NOISE_SHAPES,
    RELEVANT,
    Corpus,
    LabelledSeries,
    NoiseProfile,
    NoiseShape,
    TrueChange,
    make_corpus,
)
from .real import load_real_corpus
from .runner import (
    Evaluation,
    EvaluationResult,
    NotAnalysed,
    WorstRow,
    all_methods,
    evaluate,
    evaluate_corpora,
    worst_rows,
)
from .score import DEFAULT_TOLERANCE, Score, SeriesMatch, match_series, score
from .synthetic import make_series
from .tables import render, table_rows, worst_table_rows

__all__ = ["BASELINES", "DEFAULT_KINDS", "DEFAULT_TOLERANCE", "INSTALL_HINT", "KINDS", "NOISE_SHAPES", "RELEVANT",
           "AsvSteps", "Corpus", "Evaluation", "EvaluationResult", "LabelledSeries", "MissingDependency",
           "NoiseProfile", "NoiseShape", "NotAnalysed", "OtavaBaseline", "PerfherderRule", "Score", "SeriesMatch",
           "TrueChange", "WorstRow", "all_methods", "evaluate", "evaluate_corpora", "load_real_corpus",
           "make_corpus", "make_series", "match_series", "render", "score", "table_rows", "worst_rows",
           "worst_table_rows"]
