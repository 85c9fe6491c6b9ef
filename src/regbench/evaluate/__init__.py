"""Evaluation of change detectors on a labelled synthetic corpus (``regbench evaluate``).

=============  ================================================================================
module         contents
=============  ================================================================================
``corpus``     :func:`make_corpus`: series of every kind with their true changes, at one of
               the noise shapes of :data:`NOISE_SHAPES`
``synthetic``  :func:`make_series`: one history at given levels, runs and iterations (what
               detector tests are written against)
``score``      matching detections to true changes; :class:`Score` (recall, precision, F1,
               false alarms per 1,000 version pairs, delay)
``baselines``  the Perfherder rule and Apache Otava, as detectors outside the registry
``runner``     :func:`evaluate` (every method over the corpus, in parallel) and :func:`render`
=============  ================================================================================

Re-run the published table with ``regbench evaluate --format markdown`` (docs/evaluation.md).
"""

from ..errors import MissingDependency
from .baselines import BASELINES, INSTALL_HINT, OtavaBaseline, PerfherderRule
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
from .runner import EvaluationResult, all_methods, evaluate, render, table_rows
from .score import DEFAULT_TOLERANCE, Score, SeriesMatch, match_series, score
from .synthetic import make_series

__all__ = ["BASELINES", "DEFAULT_KINDS", "DEFAULT_TOLERANCE", "INSTALL_HINT", "KINDS", "NOISE_SHAPES", "RELEVANT", "Corpus",
           "EvaluationResult", "LabelledSeries", "MissingDependency", "NoiseProfile", "NoiseShape", "OtavaBaseline",
           "PerfherderRule", "Score", "SeriesMatch", "TrueChange", "all_methods", "evaluate", "make_corpus",
           "make_series", "match_series", "render", "score", "table_rows"]
