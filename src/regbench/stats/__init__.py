"""Pure statistics on numpy arrays: no store, no CLI, no I/O (STYLE.md habit 1).

Each function cites the paper and section it implements (the papers are in ``shared/seeds``).
"""

from .compare import VERDICTS, Comparison, compare_runs, delta_ratio_interval, verdict
from .hierarchical import (
    HierarchicalSummary,
    components,
    hierarchical_summary,
    resampled_run_stats,
    robust_summary,
)

__all__ = [
    "VERDICTS", "Comparison", "HierarchicalSummary", "compare_runs", "components",
    "delta_ratio_interval", "hierarchical_summary", "resampled_run_stats", "robust_summary", "verdict",
]
