"""Detectors of changes over a history, behind a small ABC and a string registry.

A detector gets one :class:`~regbench.model.Series` (versions in history order, the runs of each)
and returns the :class:`Change` objects it finds between consecutive versions.  Detectors work on
arrays handed to them; they never read the store (DESIGN.md layering).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for annotations: `detect --help` lists the methods without numpy
    from ..model import Series

#: Keys of the detection JSON, in order (DESIGN.md "Contracts").
JSON_FIELDS = ("benchmark", "config", "machine", "version", "previous", "change", "ci_low", "ci_high",
               "kind", "method")


@dataclass(frozen=True)
class Change:
    """A significant difference between consecutive versions of a series.

    ``version`` is the first version that shows it and ``previous`` the last one before it;
    ``change`` is the relative change of the central value (0.034 = +3.4%) with its interval
    ``[ci_low, ci_high]``; ``kind`` is ``regression`` or ``improvement`` by the benchmark's
    direction; ``method`` names the detector.  ``p_value`` is the test's p-value when the method
    has one, and ``q_value`` its Benjamini-Hochberg adjustment across series
    (:mod:`regbench.detect.fdr`) once detection over a whole store has applied it; ``detail``
    says more where the method has more to say (which mode of a multimodal benchmark moved).
    """

    benchmark: str
    config: str
    machine: str
    version: str
    previous: str
    change: float
    ci_low: float
    ci_high: float
    kind: str
    method: str
    p_value: float | None = None
    q_value: float | None = None
    detail: str | None = None
    #: How each run was summarised before versions were compared, and why (``auto``: the
    #: location with the least run-to-run spread, :func:`regbench.stats.runs.choose_location`).
    estimator: str | None = None
    #: For a creep (``auto``'s ramp of small changes reported as one): the first version at the
    #: new level; the change is spread over ``version`` .. ``until``, no single commit made it.
    until: str | None = None

    def to_json(self) -> dict:
        d = asdict(self)
        return {k: d[k] for k in JSON_FIELDS}


def kind_of(change: float, direction: str) -> str:
    worse = change > 0 if direction == "lower" else change < 0
    return "regression" if worse else "improvement"


class Detector(abc.ABC):
    """A change detector; subclasses set :attr:`name` and implement :meth:`detect`.

    This class is the whole contract between detectors and the driver
    (:mod:`regbench.detect.driver`): a detector that tests differently overrides
    :meth:`detect_counted`; one that cannot analyse short series says why in
    :meth:`not_analysable`; one that can go on from a saved state sets :attr:`incremental` and
    implements :meth:`detect_with_state` and :meth:`check_new` (and, to pool the work of many
    series, :meth:`check_new_many`).
    """

    name: str = ""
    #: Whether the changes carry p-values (and so can take part in false-discovery-rate control).
    p_values: bool = False

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.0):
        if not 0 < confidence_level < 1:
            raise ValueError("`confidence_level` must be in (0, 1)")
        if min_change < 0:
            raise ValueError("`min_change` must be non-negative")
        self.confidence_level = confidence_level
        self.min_change = min_change

    @abc.abstractmethod
    def detect(self, series: Series) -> list[Change]:
        """Changes found in one series, oldest first."""

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes found in one series and the number of hypotheses tested to find them.

        The count is the size of the family for false-discovery-rate control across series
        (:mod:`regbench.detect.fdr`).  By default every pair of consecutive versions with data is
        one hypothesis; detectors that test differently override this.
        """
        return self.detect(series), max(0, sum(1 for r in series.runs if len(r)) - 1)

    def not_analysable(self, series: Series) -> str | None:
        """Why this detector can test no pair of versions of ``series`` (too few versions with
        data for its windows, say), or None when it can.

        A series it cannot analyse is reported as not analysed, with this reason, rather than as
        one where nothing changed (``regbench evaluate``).  By default any series with two
        versions with data can be analysed; a detector whose :meth:`detect_counted` tests no
        hypothesis on a series is taken not to have analysed it either.
        """
        usable = sum(1 for r in series.runs if len(r))
        return None if usable >= 2 else f"{usable} version(s) with data, a change needs 2"

    #: Whether :meth:`check_new` can re-check new versions from a saved state (incremental detection).
    incremental = False

    #: What the saved states mean, raised when a change makes the states saved before it unfit for
    #: :meth:`check_new`: it is part of the key states are saved under
    #: (:func:`regbench.detect.driver.options_key`), so that the next pass is a full one.
    state_revision = 1

    def detect_with_state(self, series: Series) -> tuple[list[Change], int, dict | None]:
        """:meth:`detect_counted` plus a JSON-able state from which :meth:`check_new` goes on."""
        changes, n_tests = self.detect_counted(series)
        return changes, n_tests, None

    def check_new(self, state: dict, series: Series) -> tuple[list[Change], int, dict]:
        """Check versions newer than a saved state; ``series`` holds only those versions.

        Returns the changes, the hypotheses tested and the new state.
        """
        raise NotImplementedError(f"{self.name} does not detect incrementally")

    def full_pass_needed(self, state: dict, series: Series, changes: Sequence[Change],
                         new_state: dict | None = None) -> bool:
        """Whether :meth:`check_new` of ``series`` (the new versions) from ``state``, which gave
        ``changes`` and ``new_state``, must be replaced by a full pass of the whole history (the
        driver then reports what that finds after :meth:`reported_through`).  By default never."""
        return False

    def reported_through(self, state: dict) -> str | None:
        """The version through which the passes that led to ``state`` have reported every change
        (a full pass then reports only the changes after it).  By default the last version they
        checked: a detector whose checks can let a change's versions in without reporting it says
        where its unreported stretch begins."""
        return state.get("last_version")

    def check_new_many(self, items: Sequence[tuple[dict, Series]]) -> list[tuple[list[Change], int, dict]]:
        """:meth:`check_new` of many series at once; ``items`` are ``(state, series)`` pairs.

        An incremental pass over a store checks one or two new versions of every series, so a
        detector whose per-series cost is mostly fixed overhead may override this to pool the
        work.  The result must be what :meth:`check_new` gives for each pair, in order; by
        default it is exactly that.
        """
        return [self.check_new(state, series) for state, series in items]


REGISTRY: dict[str, type[Detector]] = {}

#: Built-in detectors by name -> module in this package, imported on first use so that the CLI
#: starts without importing scipy.
BUILTIN = {
    "ci-overlap": "ci_overlap",
    "bootstrap-ci": "bootstrap_ci",
    "talos-ttest": "talos_ttest",
    "forecast": "forecast",
    "edivisive": "edivisive",
    "clusters": "clusters",
    "auto": "auto",
}


def available_methods() -> list[str]:
    return sorted(set(BUILTIN) | set(REGISTRY))


def register(cls: type[Detector]) -> type[Detector]:
    builtin = BUILTIN.get(cls.name)
    if not cls.name or cls.name in REGISTRY or (builtin and cls.__module__ != f"{__package__}.{builtin}"):
        raise ValueError(f"detector name {cls.name!r} is empty or taken")
    REGISTRY[cls.name] = cls
    return cls


def detector_class(name: str) -> type[Detector]:
    """The detector class registered as ``name`` (a built-in one imported on first use)."""
    from ..errors import ConfigError

    if name not in REGISTRY and name in BUILTIN:
        import importlib

        importlib.import_module(f".{BUILTIN[name]}", __package__)
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown detection method {name!r} (known: {', '.join(available_methods())})") from None


def get_detector(name: str, **options) -> Detector:
    return detector_class(name)(**options)
