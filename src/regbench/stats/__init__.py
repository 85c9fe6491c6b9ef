"""Pure statistics on numpy arrays: no store, no CLI, no I/O (STYLE.md habit 1).

Each function cites the paper and section it implements (the papers are in ``shared/seeds``).
The precision core (:mod:`.hierarchical`, :mod:`.compare`) is imported eagerly; the other modules
load on first use of one of their names, because they import ``scipy.stats`` (about a second)
and most commands do not need them.

=================  ==========================================================================
module             contents
=================  ==========================================================================
``hierarchical``   result and precision over runs x iterations, impact factor, ``n_opt``,
                   robust variant, repetition planner (seed 000 s.2-4)
``compare``        two versions compared with runs as replicates; verdicts
``bootstrap``      vectorized bootstrap (percentile, BCa; run-level, hierarchical, batched);
                   stability metrics CV, RMAD, RCIW1-3 (seed 004 s.2)
``battery``        KS, Wilcoxon, Kruskal-Wallis, t on transformed data, Shapiro-Wilk, Welch,
                   Levene, Brown-Forsythe, Cliff's delta (seed 001 s.3.3, seed 003 s.3.3)
``samplesize``     sample size for a quantile (Chen and Kelton, seed 001 s.3.2)
``clusters``       modes by mixtures or k-means, clustering additive filter, cluster-by-cluster
                   comparison (seed 000 s.4.1, seed 001 s.4.2)
``dependence``     autocorrelation, lag plots, Ljung-Box, runs test, reordering (seed 000 s.4.1)
``outliers``       Tukey fences and MAD classification (seed 000 s.4.2)
``warmup``         steady-state detection, MSER-5 and change point (seed 001 s.2.2)
``changepoint``    E-Divisive: energy-statistic splits and the permutation test (Matteson and
                   James 2014; creeping degradations, seed 001 s.2.3)
``sequential``     interleaved A/B pairs monitored after every pair: always-valid t-mixture
                   confidence sequence and the changed / no change decision (Lai 1976; Wang and
                   Ramdas 2024)
``modepairs``      mode-matched pairs for a sequential comparison of a bimodal benchmark
                   (cluster by cluster, seed 001 s.4)
``variance``       whether the spread changed: Brown-Forsythe / Levene (seed 003 s.3.3.1)
``runs``           runs reduced to one value each (robust means, medians, a low quantile: the
                   location chosen per history), per-version summaries, outlying runs, Qn
                   (seed 000 s.2, seed 001 s.2.1)
``segments``       the two-level (versions x runs) test of adjacent segments of a history, the
                   versions' floors, the version-to-version variance (seed 000 s.2-3)
``levels``         the modes and the fastest level of a history, per-mode summaries (seed 001
                   s.4.2)
``moderuns``       a location change of runs that each stay in one mode, held to the shares of
                   runs per mode, the modes' levels and the fastest runs (seed 000 s.2, seed 001
                   s.4.2)
``zeros``          steps of a count from exactly 0 to above 0 and back, by the exact test of
                   the runs of the two stretches (Fisher 1935)
=================  ==========================================================================
"""

from __future__ import annotations

import importlib

from .compare import (
    VERDICTS,
    Comparison,
    compare_runs,
    compare_signed,
    delta_ratio_interval,
    run_location,
    verdict,
)
from .hierarchical import (
    HierarchicalSummary,
    RepetitionPlan,
    components,
    hierarchical_summary,
    plan_repetitions,
    resampled_run_stats,
    robust_summary,
)

_LAZY = {
    "bootstrap": ("BootstrapResult", "BootstrapBatchResult", "StabilityMetrics", "StabilityMetricsBatch",
                  "bootstrap_ci", "resample_runs", "hierarchical_bootstrap", "bootstrap_many",
                  "stability_metrics", "stability_metrics_many"),
    "battery": ("TestResult", "NormalityResult", "BatteryResult", "cliffs_delta", "cliffs_magnitude",
                "compare_battery"),
    "samplesize": ("quantile_sample_size", "quantile_confidence"),
    "outliers": ("TukeyOutliers", "MadOutliers", "tukey_outliers", "mad_outliers"),
    "clusters": ("find_clusters", "Clusters", "clustering_additive_filter", "AdditiveFilterResult",
                 "compare_clusters", "ClusterComparison", "ClusterShift"),
    "dependence": ("autocorrelation", "Autocorrelation", "lag_plot", "LagPlot", "ljung_box", "LjungBoxResult",
                   "runs_test", "RunsTestResult", "reordering_comparison", "ReorderingComparison"),
    "warmup": ("warmup_mser", "warmup_changepoint", "detect_warmup", "WarmupResult", "WarmupSummary"),
    "changepoint": ("e_divisive", "EDivisiveResult", "best_split", "edivisive_candidates", "SplitCandidate"),
    "sequential": ("ConfidenceSequence", "SequentialDecision", "SimulationResult", "DECISIONS",
                   "t_mixture_cs", "t_mixture_path", "sequential_decision", "simulate_error_rates"),
    "modepairs": ("ModeMatch", "match_modes", "split_modes"),
    "variance": ("VarianceComparison", "variance_change", "VARIANCE_VERDICTS"),
    "runs": ("VersionStats", "robust_run_means", "fence_bounds", "stats_of_runs", "bimodality_coefficient",
             "LOCATIONS", "LOW_QUANTILE", "LocationChoice", "choose_location", "run_locations"),
    "segments": ("SegmentStats", "SegmentTest", "TwoLevelT", "version_stats", "version_floors", "isolated_versions",
                 "version_stats_many", "two_level_t", "compare_segments", "compare_segments_many", "segment_test",
                 "ratio_interval", "version_variance", "MIN_VERSIONS_FOR_VERSION_VAR", "relative_change",
                 "segment_neighbourhood", "within_segments_mean_square", "mean_square_test"),
    "levels": ("mode_stats", "mode_floors", "runs_in_one_mode", "run_mode_counts", "fastest_level", "FastestLevel"),
    "zeros": ("ZeroStep", "ZeroSteps", "zero_steps"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "VERDICTS", "Comparison", "HierarchicalSummary", "RepetitionPlan", "compare_runs", "compare_signed", "components",
    "delta_ratio_interval", "hierarchical_summary", "plan_repetitions", "resampled_run_stats",
    "robust_summary", "run_location", "verdict", *_WHERE,
]
