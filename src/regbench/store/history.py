"""A store's series read as a history: one line of commits, the runs of its campaigns.

``regbench detect`` walks each series version after version, so what a series holds must be a
history, not everything ever measured:

- **One line.**  With the first-parent line of a branch (``line``, full shas oldest first, as
  ``git rev-list --first-parent`` gives it), only versions whose commit is on it are kept:
  commits of side branches (benchmarked by a bisection of a merged branch, or by ``compare
  --run`` of a feature branch) are not laid out between the line's commits as if they followed
  each other.  A dirty working tree (``<sha>-dirty-<digest>``) is an experiment, not history,
  and is left out too.  Versions stored without a commit (imported, releases) are kept.
- **One kind of run.**  Runs made by a session (``compare --run``, ``bisect``, ``detect
  --confirm``; :data:`regbench.model.SESSION_SCHEDULE`) are made at another time, often in
  another state of the machine, than the campaign's (30% apart is common on a laptop):
  pooled with the campaign's runs of the same version they make a step that is the session,
  not the code.  They are left out (``sessions="exclude"``, the default) or, when asked
  (``sessions="centre"``, ``detect --all-sessions``), each session is centred: its runs are
  scaled by the ratio of the history's level to the session's over the versions both measured
  (the geometric mean of the ratios of their means of run means; a difference of means when a
  value is not positive), so that only its versions' differences enter the history.  A session
  that shares no version with the history of a series cannot be centred and is left out of it.

:class:`HistoryView` is a :class:`regbench.detect.driver.SeriesSource` over a store with those
rules; :meth:`HistoryView.describe` says in words what it did.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..model import Series, VersionInfo
from .db import Store

#: How a history treats the runs of sessions: left out, or each session centred on the history.
SESSION_MODES = ("exclude", "centre")


@dataclass(frozen=True)
class HistoryView:
    """The series of ``store`` as histories (see the module docstring).

    Attributes
    ----------
    store : Store
    line : tuple of str or None
        The full shas of the line read, oldest first; None: every version (no repository).
    line_name : str or None
        What the line is, in words (``"main"``, ``"HEAD"``), for :meth:`describe`.
    sessions : str
        One of :data:`SESSION_MODES`.
    """

    store: Store
    line: tuple[str, ...] | None = None
    line_name: str | None = None
    sessions: str = "exclude"

    def __post_init__(self):
        if self.sessions not in SESSION_MODES:
            raise ValueError(f"`sessions` must be one of {', '.join(SESSION_MODES)}, got {self.sessions!r}")

    # ------------------------------------------------------------------ SeriesSource
    @property
    def shareable(self) -> bool:
        return self.store.shareable

    def benchmark_names(self) -> list[str]:
        return self.store.benchmark_names()

    def load_detection_states(self, method: str, options: str) -> dict[tuple[str, str, str], dict]:
        return self.store.load_detection_states(method, options)

    def save_detection_states(self, method: str, options: str, states) -> int:
        return self.store.save_detection_states(method, options, states)

    def advance_run_marks(self, method: str, options: str, mark: int, **scope) -> int:
        return self.store.advance_run_marks(method, options, mark, **scope)

    def last_run_id(self) -> int:
        return self.store.last_run_id()

    def runs_since(self, mark: int) -> list[tuple[tuple[str, str, str], str, int]]:
        """:meth:`Store.runs_since` of the runs this history reads (sessions' only when centred)."""
        sessions = [] if self.sessions == "centre" else self.store.session_campaigns()
        return self.store.runs_since(mark, exclude_campaigns=sessions)

    def versions(self) -> list[VersionInfo]:
        """The store's versions on the line, in history order."""
        return [v for v in self.store.versions() if self._kept(v)]

    def load_series(self, benchmark: str | Iterable[str] | None = None, *, config: str | None = None,
                    machine: str | None = None, versions: Iterable[str] | None = None) -> list[Series]:
        """The series as histories: runs of the history's campaigns (sessions left out or
        centred), versions on the line."""
        wanted = None if versions is None else list(versions)
        sessions = self.store.session_campaigns()
        history = self.store.load_series(benchmark, config=config, machine=machine, versions=wanted,
                                         exclude_campaigns=sessions)
        if self.sessions == "centre" and sessions:
            rank = {v.name: k for k, v in enumerate(self.store.versions())}
            by_key = {(s.benchmark, s.config, s.machine): s for s in history}
            for sid in sessions:
                for part in self.store.load_series(benchmark, config=config, machine=machine, versions=wanted,
                                                   campaigns=[sid]):
                    key = (part.benchmark, part.config, part.machine)
                    if key in by_key:
                        by_key[key] = _merge(by_key[key], _centred(part, by_key[key]), rank)
            history = [by_key[k] for k in sorted(by_key)]
        out = []
        for s in history:
            keep = [k for k, v in enumerate(s.versions) if self._kept(v)]
            if not keep:
                continue
            out.append(Series(s.benchmark, s.config, s.machine, s.unit, s.direction,
                              [s.versions[k] for k in keep], [s.runs[k] for k in keep],
                              [s.failed[k] for k in keep], [s.warmup[k] for k in keep]))
        return out

    def measured_versions(self, benchmark: str, config: str) -> dict[str, list[str]]:
        """Machine -> the versions of the history where it measured ``benchmark`` on ``config``
        (as :meth:`Store.measured_versions`: runs of campaigns, and of sessions when they are
        centred; versions on the line)."""
        # Asked once per benchmark and configuration with changes: what does not depend on them
        # is read once per view (a view is one detection's reading of the store).
        cached = self.__dict__.get("_measured_cache")
        if cached is None:
            sessions = [] if self.sessions == "centre" else self.store.session_campaigns()
            cached = (sessions, frozenset(v.name for v in self.versions()))
            object.__setattr__(self, "_measured_cache", cached)
        sessions, kept = cached
        measured = self.store.measured_versions(benchmark, config, exclude_campaigns=sessions)
        return {m: [v for v in names if v in kept] for m, names in measured.items()
                if any(v in kept for v in names)}

    # ------------------------------------------------------------------------- words
    def describe(self) -> str:
        """What this history is, in one sentence (``regbench detect`` prints it)."""
        versions = self.store.versions()
        parts = []
        if self.line is not None:
            off = sum(1 for v in versions if not self._kept(v))
            loose = sum(1 for v in versions if v.commit is None)
            if loose < len(versions):
                parts.append(f"versions on the first-parent line of {self.line_name or 'HEAD'}"
                             + (f" ({off} off it left out)" if off else ""))
            if loose:  # releases (run --releases) and imported versions are on no line: kept
                parts.append(f"{loose} version(s) without a commit (releases, imported) in time order")
        else:
            timed = sum(1 for v in versions if v.timestamp is not None)
            parts.append("every version in stored order" if not timed else
                         "every version in time order" if timed == len(versions) else
                         f"every version, {timed} with a timestamp in time order, then the others in stored order")
        n = len(self.store.session_campaigns())
        if n == 0:
            parts.append("runs of campaigns and imports")
        elif self.sessions == "exclude":
            parts.append(f"runs of campaigns and imports; the runs of {n} session(s) of compare --run, bisect or confirm "
                         "left out (--all-sessions to include them)")
        else:
            parts.append(f"runs of campaigns and imports, and of {n} session(s) of compare --run, bisect or confirm, each "
                         "centred on the history's level at the versions it shares with it (left out where it "
                         "shares none)")
        return "History: " + ", ".join(parts) + "."

    def _kept(self, v: VersionInfo) -> bool:
        if self.line is None or v.commit is None:
            return True
        return v.commit in self._line_set and "-dirty-" not in v.name

    @property
    def _line_set(self) -> frozenset[str]:
        cached = self.__dict__.get("_line_cache")
        if cached is None:
            cached = frozenset(self.line or ())
            object.__setattr__(self, "_line_cache", cached)
        return cached


def _level(runs: list[np.ndarray]) -> float:
    """The mean of run means of one version (NaN without runs)."""
    means = [float(np.mean(r)) for r in runs if r.size]
    return float(np.mean(means)) if means else math.nan


def _centred(part: Series, history: Series) -> Series | None:
    """``part`` (one session's runs) moved to ``history``'s level over the versions both have,
    or None when they share none."""
    mine = {v.name: _level(r) for v, r in zip(part.versions, part.runs, strict=True)}
    theirs = {v.name: _level(r) for v, r in zip(history.versions, history.runs, strict=True)}
    shared = [n for n in mine if n in theirs and math.isfinite(mine[n]) and math.isfinite(theirs[n])]
    if not shared:
        return None
    a = np.array([theirs[n] for n in shared])
    b = np.array([mine[n] for n in shared])
    if np.all(a > 0) and np.all(b > 0):
        factor = float(np.exp(np.mean(np.log(a) - np.log(b))))
        runs = [[r * factor for r in rs] for rs in part.runs]
    else:
        shift = float(np.mean(a - b))
        runs = [[r + shift for r in rs] for rs in part.runs]
    return Series(part.benchmark, part.config, part.machine, part.unit, part.direction, list(part.versions), runs,
                  list(part.failed), list(part.warmup))


def _merge(history: Series, part: Series | None, rank: dict[str, int]) -> Series:
    """``history`` with a centred session's runs added (versions in history order)."""
    if part is None:
        return history
    rows = {v.name: (v, list(r), f, w) for v, r, f, w in
            zip(history.versions, history.runs, history.failed, history.warmup, strict=True)}
    for v, r, f, w in zip(part.versions, part.runs, part.failed, part.warmup, strict=True):
        if v.name in rows:
            old = rows[v.name]
            rows[v.name] = (old[0], old[1] + list(r), old[2] + f, max(old[3], w))
        else:
            rows[v.name] = (v, list(r), f, w)
    order = sorted(rows, key=lambda n: rank.get(n, len(rank)))
    return Series(history.benchmark, history.config, history.machine, history.unit, history.direction,
                  [rows[n][0] for n in order], [rows[n][1] for n in order], [rows[n][2] for n in order],
                  [rows[n][3] for n in order])
