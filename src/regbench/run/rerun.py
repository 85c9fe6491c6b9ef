"""Can a detected change be run again here?  The one answer ``detect --bisect`` and ``detect
--confirm`` share.

Both run the two versions of a change again (bisection also the commits between them), so both
need the same things: the two versions stored with commits of ``config.repo`` that this
repository has (as those commits: not a working tree with uncommitted changes, which has its
HEAD's commit), a benchmark configured with its own samples (not a measure series ``NAME:cpu``,
not a tool's series ``NAME/...``, not a tool benchmark), and the change measured on this
machine (runs made here are not comparable with another machine's).  :func:`plan_reruns` sorts
changes into those that can be run again, with their commits and benchmark, and those that
cannot, with the reason, worded once for both commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import COMPARE_AS, BenchmarkSpec, ProjectConfig
from ..errors import VersionError
from ..model import SeriesName
from .versions import Commit, resolve_revisions

if TYPE_CHECKING:
    from ..detect.base import Change
    from ..store import Store

#: What runs a change again, as named in the reasons: (the command's name, how to run it on
#: another machine's behalf).
PURPOSES = {
    "bisect": ("bisect", "regbench bisect {previous} {version} --benchmark {benchmark} --machine {machine}"),
    "bisect-failure": ("bisect", "regbench bisect {previous} {version} --benchmark {benchmark} --machine {machine} "
                                 "--failure"),
    "confirm": ("confirmation", "regbench compare {previous} {version} --run --benchmark {benchmark} "
                                "--machine {machine}"),
}


@dataclass(frozen=True)
class Rerun:
    """A change that can be run again here: its benchmark as configured, and its two commits."""

    change: Change
    spec: BenchmarkSpec
    previous: Commit
    version: Commit


@dataclass(frozen=True)
class Skipped:
    """A detected change that cannot be run again here (or that a command left alone), and why."""

    change: Change
    reason: str


def plan_reruns(config: ProjectConfig, store: Store, changes: Sequence[Change], *, machine: str | None = None,
                purpose: str = "bisect") -> tuple[list[Rerun], list[Skipped]]:
    """Which changes can be run again here, with what; and which cannot, and why.

    Parameters
    ----------
    config : ProjectConfig
        The benchmarks and the repository (``config.repo``, else the configuration's folder).
    store : Store
        Where the changes' versions are stored, with their commits.
    changes : sequence of Change
    machine : str, optional
        This machine's name [default: the host name, as runs are stored].
    purpose : {"bisect", "bisect-failure", "confirm"}
        Who asks: names the command in the reasons (``bisect-failure``: ``bisect --failure``, the
        first commit where a failing benchmark fails).

    Returns
    -------
    (reruns, skipped)
        In the order of ``changes``.
    """
    from .fingerprint import default_machine_name

    if purpose not in PURPOSES:
        raise ValueError(f"`purpose` must be one of {', '.join(PURPOSES)}, got {purpose!r}")
    what, elsewhere = PURPOSES[purpose]
    here = machine or default_machine_name()
    stored = {v.name: v for v in store.versions()}
    repo = Path(config.repo or config.root)
    names = {b.name: b for b in config.benchmarks}
    commits: dict[str, Commit | VersionError] = {}

    def commit(sha: str) -> Commit | VersionError:
        if sha not in commits:
            try:
                commits[sha] = resolve_revisions(repo, sha)[0]
            except VersionError as exc:
                commits[sha] = exc
        return commits[sha]

    reruns: list[Rerun] = []
    skipped: list[Skipped] = []
    for ch in changes:
        spec = names.get(ch.benchmark)
        a, b = stored.get(ch.previous), stored.get(ch.version)
        reason: str | None = None
        if a is None or b is None or a.commit is None or b.commit is None:
            reason = "its versions are not stored with commits"
        elif spec is None:
            name = SeriesName.parse(ch.benchmark)
            base = name.benchmark
            if name.measure is not None and base in names:
                reason = (f"{ch.benchmark!r} is the {name.measure!r} measure of {base!r}; {what} follows a "
                          "benchmark's own samples"
                          + (f" (`regbench bisect --benchmark {base}` if its samples changed too)"
                             if purpose == "bisect" else ""))
            elif name.reported is not None and base in names and names[base].format is not None:
                if purpose == "bisect-failure" and name.measure is None:
                    spec = names[base]  # bisect --failure follows what the tool says of it
                else:
                    reason = (f"{ch.benchmark!r} is reported by the tool benchmark {base!r}; {what} needs a "
                              "benchmark with its own samples")
            else:
                reason = f"no benchmark {ch.benchmark!r} in regbench.toml"
        elif spec.format is not None and purpose != "bisect-failure":  # a failure is the tool's invocation's
            reason = f"it reports through a tool (format); {what} needs a benchmark with its own samples"
        if reason is None and ch.machine != here:
            hint = elsewhere.format(previous=ch.previous, version=ch.version, benchmark=ch.benchmark,
                                    machine=ch.machine)
            reason = (f"it was measured on {ch.machine!r}, not on this machine ({here!r}); if this machine is "
                      f"{ch.machine!r}, run `{hint}`")
        if reason is not None:
            skipped.append(Skipped(ch, reason))
            continue
        assert spec is not None and a is not None and b is not None and a.commit and b.commit  # checked above
        older, newer = commit(a.commit), commit(b.commit)
        if isinstance(older, VersionError) or isinstance(newer, VersionError):
            error = older if isinstance(older, VersionError) else newer
            skipped.append(Skipped(ch, f"its commits are not in this repository ({error})"))
            continue
        # A working tree with changes is `SHORT-dirty-DIGEST` (`SHORT-dirty` in stores made before
        # the digest): its commit is not what was measured.
        dirty = [v.name for v, c in ((a, older), (b, newer))
                 if v.name == f"{c.short}-dirty" or v.name.startswith(f"{c.short}-dirty-")]
        if dirty:
            skipped.append(Skipped(ch, f"version {dirty[0]!r} is a working tree with uncommitted changes, "
                                       "not a commit that can be checked out"))
            continue
        reruns.append(Rerun(ch, spec, older, newer))
    return reruns, skipped


def comparison_of(change: Change, compare_as: str = "follow", *, direction: str = "lower") -> dict[str, Any]:
    """The keyword arguments of :meth:`~regbench.run.sequential.Session.settle` (``by_mode``,
    ``measure``, ``location``) that run ``change`` again as ``compare_as`` says.

    With ``follow``, the detection decides: ``auto`` records in :attr:`Change.estimator` which
    location of each run varied least between runs of a version (the 10% quantile under a floor
    with slower interference above it, Chen and Revels 2016; the median under heavy tails; else
    the mean), and in
    :attr:`Change.detail` the mode of a multimodal benchmark in which it found
    the change (Bulej et al. 2005, s.4).  The comparison that settles the change again uses the
    same summary, so that it is as precise as the detection was, and matches runs mode by mode
    where the detection looked at one mode.  Other detectors record neither: their changes are
    compared on run means.  ``direction`` is the benchmark's: a comparison's ``low`` location of
    a throughput is its floor, the 90% quantile (:func:`regbench.run.sequential.run_value`), which
    is what a throughput searched as its reciprocal was searched on; one whose detection used its
    own 10% quantile (a throughput with a negative sample is not inverted) is compared on
    medians, the nearest location a comparison takes.

    Raises
    ------
    ConfigError
        ``compare_as`` is not one of :data:`COMPARE_AS`.
    """
    from ..errors import ConfigError
    from ..stats.runs import LOW_QUANTILE

    if compare_as not in COMPARE_AS:
        raise ConfigError(f"`confirm_as` must be one of {', '.join(COMPARE_AS)}, got {compare_as!r}")
    if compare_as == "by-mode":
        return {"by_mode": True, "measure": None, "location": "mean"}
    if compare_as == "instructions":
        return {"by_mode": False, "measure": "instructions", "location": "mean"}
    if compare_as != "follow":
        return {"by_mode": False, "measure": None, "location": compare_as}
    if (change.detail or "").startswith("mode "):
        return {"by_mode": True, "measure": None, "location": "mean"}
    how = change.estimator or ""
    location = ("low" if how.startswith(f"the {LOW_QUANTILE:.0%} quantile") else
                "median" if how.startswith("the median") else "mean")
    # A throughput searched as its reciprocal (RECIPROCAL_NOTE in ``how``) keeps "low": the
    # comparison's low location of a benchmark where higher is better is the throughput's 90%
    # quantile, the reciprocal's 10% one (:func:`regbench.run.sequential.run_value`).
    from ..detect.auto import RECIPROCAL_NOTE

    if location == "low" and direction == "higher" and RECIPROCAL_NOTE not in how:
        location = "median"
    return {"by_mode": False, "measure": None, "location": location}
