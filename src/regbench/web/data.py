"""What the dashboard shows, as plain JSON-ready data, built once from the store.

Both front ends use this module: the static report (:mod:`regbench.web.static_site`) writes each
payload to a file of its own, and the live dashboard (:mod:`regbench.web.app`) answers the same
paths from memory.  The payloads are small and per series, so that a page with 10,000 series
loads the index (names and states, dictionary-encoded) and then only the few series it shows.

Payloads (``format_version`` 1):

``index``
    every series: ``[id, benchmark, config, machine, state, n_versions]`` with the three names as
    indices into the ``benchmarks``, ``configs`` and ``machines`` lists and ``state`` an index
    into ``states``; ``chunk`` is how many series share one ``spark/K`` payload.
``spark/K``
    the sparklines (one estimate per version) of series ``K*chunk`` to ``(K+1)*chunk - 1`` of the index.
``series/ID``
    one series: every version's estimate with its confidence interval (seed 000 s.3.1, fig. 6),
    its changes (the alerts of the notification repository, each at this machine's versions, with
    ``until`` for a creep there) and the series of the same benchmark on other configurations and
    machines.
``runs/ID``
    every run's mean, as ``[version index, value]`` pairs, loaded when a person asks for them.

The state of a series is ``changed`` when it has an alert that was not judged invalid,
``noisy`` (too noisy to judge) when its intervals are wider than the smallest change detection
reports (the median relative half-width above :data:`NOISY_WIDTH`) or no version has two runs,
and ``stable`` otherwise.  An interval of no width is of relative width 0, also around 0: a
count exactly 0 in every run is stable.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from ..analysis import ExperimentSummary, summarize_series
from ..errors import NotFoundError
from ..model import Alert, MachineEvidence, Series, version_labels
from ..store import Store

if TYPE_CHECKING:
    from ..config import ProjectConfig

FORMAT_VERSION = 1
#: Series per ``spark/K`` payload: one overview page's worth.
CHUNK = 100
#: States of a series, in the order the index refers to them (a new one goes last: the index
#: payload refers to them by position).
STATES = ("changed", "stable", "noisy", "failing")
#: Median relative half-width of the intervals above which a series is too noisy to judge: the
#: 3% minimum change that ``regbench detect`` reports by default (docs/detection.md).
NOISY_WIDTH = 0.03
#: Confidence level of the intervals shown (as ``regbench summary``).
CONFIDENCE = 0.99

_ID = re.compile(r"^[0-9a-f]{12}$")


def series_id(benchmark: str, config: str, machine: str) -> str:
    """A short, stable name of a series for URLs and file names (12 hex digits of SHA-1)."""
    return hashlib.sha1("\0".join((benchmark, config, machine)).encode()).hexdigest()[:12]


def benchmark_id(benchmark: str) -> str:
    """A short, stable name of a benchmark for its diagnosis page (``diagnosis-ID.html``)."""
    return hashlib.sha1(benchmark.encode()).hexdigest()[:12]


def valid_id(text: str) -> bool:
    """Whether ``text`` has the shape of a :func:`series_id` (which says nothing of its existence)."""
    return bool(_ID.match(text))


def commit_link(url: str | None, commit: str | None) -> str | None:
    """The web page of ``commit`` under the repository page ``url`` (``[project] url``), GitHub,
    GitLab and Gitea style (``URL/commit/SHA``); None without either."""
    if not url or not commit:
        return None
    return f"{url.rstrip('/')}/commit/{commit}"


def _num(x: float | None, digits: int = 6) -> float | None:
    """A finite float rounded for JSON (``None`` for NaN or infinity, which JSON cannot carry)."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


@dataclass(frozen=True)
class SeriesData:
    """One series as the dashboard shows it."""

    id: str
    benchmark: str
    config: str
    machine: str
    unit: str
    direction: str
    state: str
    versions: tuple[dict, ...]
    run_means: tuple[tuple[float, ...], ...]
    changes: tuple[dict, ...]
    #: Whether ``regbench diagnose`` can diagnose it: a version with two successful runs of two
    #: measured samples (:func:`regbench.diagnosis.diagnose`'s rule); the series page links to
    #: the diagnosis only then (a probe: a go test ``[allocs/op]`` series, one sample a run, and a
    #: benchmark that never succeeded linked to a page answering 404).
    diagnosable: bool = True

    @property
    def spark(self) -> list[float | None]:
        return [v["estimate"] for v in self.versions]


@dataclass
class Dashboard:
    """Every payload of the dashboard over one store, computed once (:meth:`load`).

    Parameters
    ----------
    store : Store
        The results store.
    project : str
        The project's name, shown in the page titles.
    url : str, optional
        The repository's web page (``[project] url``): commits are linked under it.
    config : ProjectConfig, optional
        The project's configuration: the series are read as the history ``regbench detect``
        reads (:func:`regbench.pipeline.history_of`: versions on the first-parent line of
        ``[project] branch``, the runs of sessions left out), so that a pull request's commits
        are not drawn in the branch's line nor compared as its newest versions (a probe).
        Without it, every version in stored order, the runs of sessions left out.
    """

    store: Store
    project: str = "project"
    url: str | None = None
    config: ProjectConfig | None = None
    series: list[SeriesData] = field(default_factory=list)
    by_id: dict[str, SeriesData] = field(default_factory=dict)
    of_benchmark: dict[str, list[SeriesData]] = field(default_factory=dict)
    alerts: list[Alert] = field(default_factory=list)
    versions: list[dict] = field(default_factory=list)
    #: The tag each tagged version is shown by, by stored name (:func:`regbench.model.version_labels`).
    labels: dict[str, str] = field(default_factory=dict)
    generated: str = ""
    fingerprint: tuple = ()
    #: What pages derived from this state of the store (a comparison's rows...), by key.
    cache: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def load(self) -> Dashboard:
        """Read the store and compute every series' estimates and state (again when it changed)."""
        from ..pipeline import history_of
        from ..store.alerts import list_alerts

        with self._lock:
            now = store_fingerprint(self.store)
            if now == self.fingerprint and self.generated:
                return self
            alerts = list_alerts(self.store)
            # A shallow clone is read as it is (its line may leave old versions out): a dashboard
            # marks nothing checked, and a report made in CI must not stop for it.
            history = history_of(self.store, self.config, shallow_ok=True)
            stored = history.versions()
            commits = {v.name: v.commit for v in stored}
            # A version is shown by its tag where it has one (v1.2.0, not a short sha), as the
            # command line shows it; links and URLs keep its stored name.
            self.labels = version_labels(self.store.aliases())
            loaded = history.load_series()
            summaries = summarize_series(loaded, confidence_level=CONFIDENCE, robust=False)
            by_series: dict[tuple[str, str, str], list[ExperimentSummary]] = {}
            for summ in summaries:
                by_series.setdefault((summ.benchmark, summ.config, summ.machine), []).append(summ)
            # An alert is every machine's that showed its change (its own and `also_on`): each
            # of those series is changed, and lists the change at its own versions and size.
            alerts_of: dict[tuple[str, str, str], list[tuple[Alert, MachineEvidence]]] = {}
            for a in alerts:
                for seen in a.evidence:
                    alerts_of.setdefault((a.benchmark, a.config, seen.machine), []).append((a, seen))
            series = []
            for one in loaded:
                key = (one.benchmark, one.config, one.machine)
                series.append(self._series(one, by_series.get(key, []), alerts_of.get(key, []), commits))
            self.series = series
            self.by_id = {s.id: s for s in series}
            self.of_benchmark = {}
            for s in series:
                self.of_benchmark.setdefault(s.benchmark, []).append(s)
            self.alerts = alerts
            self.versions = [{"name": v.name, "label": self.labels.get(v.name, v.name), "commit": v.commit,
                              "commit_url": commit_link(self.url, v.commit)} for v in stored]
            self.generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
            self.fingerprint = now
            self.cache = {}
            return self

    def _series(self, s: Series, summaries: Sequence[ExperimentSummary],
                alerts: Sequence[tuple[Alert, MachineEvidence]], commits: dict[str, str | None]) -> SeriesData:
        versions, run_means, widths = [], [], []
        for k, (v, summ) in enumerate(zip(s.versions, summaries, strict=True)):
            plain = summ.plain
            est = plain.mean if plain is not None else float("nan")
            hw = plain.half_width if plain is not None else float("nan")
            if plain is not None and plain.n_runs >= 2 and math.isfinite(hw) and (est or hw == 0):
                # An interval of no width (every run the same: a count exactly 0 in every run, as
                # Go's allocs/op of an allocation-free loop) is as precise as can be, at 0 too.
                widths.append(abs(hw / est) if hw else 0.0)
            versions.append({"name": v.name, "label": self.labels.get(v.name, v.name), "commit": v.commit,
                             "commit_url": commit_link(self.url, v.commit),
                             "time": v.timestamp.strftime("%Y-%m-%d %H:%M") if v.timestamp else None,
                             "estimate": _num(est), "low": _num(est - hw), "high": _num(est + hw),
                             "runs": plain.n_runs if plain is not None else 0, "failed": s.failed[k]})
            means = plain.run_means if plain is not None else np.empty(0)
            run_means.append(tuple(float(_num(x) or 0.0) for x in means if math.isfinite(x)))
        names = [v.name for v in s.versions]
        changes = []
        for a, e in alerts:
            changes.append({"alert": a.id, "version": e.version, "previous": e.previous,
                            "version_label": self.labels.get(e.version, e.version),
                            "previous_label": self.labels.get(e.previous, e.previous),
                            # a creep on this machine: its change is spread over version .. until
                            "until": e.until,
                            "until_label": self.labels.get(e.until, e.until) if e.until is not None else None,
                            "index": names.index(e.version) if e.version in names else None,
                            "commit": commits.get(e.version), "commit_url": commit_link(self.url, commits.get(e.version)),
                            "kind": a.kind, "change": _num(e.change, 4), "low": _num(e.ci_low, 4),
                            "high": _num(e.ci_high, 4), "status": a.status,
                            # a failure has no size: what failed, and where it ran again
                            "error": a.error, "fixed_by": a.fixed_by,
                            # broken from its first run: no version it worked at to name
                            "never_succeeded": a.never_succeeded,
                            # JSON has no infinity: a count from exactly 0 in every run says so here.
                            "from_zero": e.change == math.inf})
        if versions and versions[-1]["runs"] == 0 and versions[-1]["failed"]:
            # Its newest version has failed runs alone: a benchmark that fails now, or has never run
            # (a probe: one that crashed, hung or printed garbage from its first run was "too noisy
            # to judge").
            state = "failing"
        elif any(a.status != "invalid" for a, _ in alerts):
            state = "changed"
        elif not widths or float(np.median(widths)) > NOISY_WIDTH:
            state = "noisy"
        else:
            state = "stable"
        diagnosable = any(sum(r.size >= 2 for r in runs) >= 2 for runs in s.runs)
        return SeriesData(series_id(s.benchmark, s.config, s.machine), s.benchmark, s.config, s.machine, s.unit,
                          s.direction, state, tuple(versions), tuple(run_means), tuple(changes), diagnosable)

    # ------------------------------------------------------------------------- payloads
    def get(self, sid: str) -> SeriesData:
        """The series ``sid``; :class:`NotFoundError` naming it when there is none."""
        found = self.by_id.get(sid)
        if found is None:
            raise NotFoundError(f"no series {sid!r} in the store")
        return found

    def index_payload(self) -> dict:
        benchmarks = sorted({s.benchmark for s in self.series})
        configs = sorted({s.config for s in self.series})
        machines = sorted({s.machine for s in self.series})
        b, c, m = ({n: k for k, n in enumerate(x)} for x in (benchmarks, configs, machines))
        return {"format_version": FORMAT_VERSION, "project": self.project, "generated": self.generated,
                "states": list(STATES), "chunk": CHUNK, "benchmarks": benchmarks, "configs": configs,
                "machines": machines,
                "series": [[s.id, b[s.benchmark], c[s.config], m[s.machine], STATES.index(s.state), len(s.versions)]
                           for s in self.series]}

    def spark_payload(self, chunk: int) -> dict:
        """Sparklines of the ``chunk``-th slice of the index; :class:`NotFoundError` past the end."""
        part = self.series[chunk * CHUNK:(chunk + 1) * CHUNK]
        if chunk < 0 or not part:
            raise NotFoundError(f"no sparkline chunk {chunk}: the store has {len(self.series)} series")
        return {"chunk": chunk, "series": {s.id: s.spark for s in part}}

    def series_payload(self, sid: str) -> dict:
        s = self.get(sid)
        siblings = [{"config": o.config, "machine": o.machine, "id": o.id} for o in self.of_benchmark[s.benchmark]]
        return {"format_version": FORMAT_VERSION, "id": s.id, "benchmark": s.benchmark, "config": s.config,
                "machine": s.machine, "unit": s.unit, "direction": s.direction, "state": s.state,
                "confidence": CONFIDENCE, "versions": list(s.versions), "changes": list(s.changes),
                "siblings": siblings, "diagnosis": benchmark_id(s.benchmark) if s.diagnosable else None}

    def runs_payload(self, sid: str) -> dict:
        s = self.get(sid)
        return {"id": s.id, "runs": [[k, x] for k, means in enumerate(s.run_means) for x in means]}

    def payload(self, name: str) -> dict:
        """The payload called ``name`` (``index``, ``spark/K``, ``series/ID``, ``runs/ID``).

        Raises
        ------
        NotFoundError
            No such payload.
        """
        kind, _, arg = name.partition("/")
        if kind == "index" and not arg:
            return self.index_payload()
        if kind == "spark" and arg.isdigit():
            return self.spark_payload(int(arg))
        if kind == "series" and valid_id(arg):
            return self.series_payload(arg)
        if kind == "runs" and valid_id(arg):
            return self.runs_payload(arg)
        raise NotFoundError(f"no data {name!r}")

    def payload_names(self) -> list[str]:
        """Every payload a static report holds."""
        chunks = (len(self.series) + CHUNK - 1) // CHUNK
        return (["index"] + [f"spark/{k}" for k in range(chunks)] + [f"series/{s.id}" for s in self.series]
                + [f"runs/{s.id}" for s in self.series])


def store_fingerprint(store: Store) -> tuple:
    """What changes when runs, versions or alerts are written: the live dashboard computes its
    payloads again only then."""
    import sqlalchemy as sa

    from ..store import schema as t

    with store.engine.connect() as conn:
        runs = conn.execute(sa.select(sa.func.count(), sa.func.max(t.run.c.id)).select_from(t.run)).one()
        alerts = conn.execute(sa.select(sa.func.count(), sa.func.max(t.alert.c.updated_at)).select_from(t.alert)).one()
        events = conn.execute(sa.select(sa.func.count()).select_from(t.alert_event)).scalar()
        versions = conn.execute(sa.select(sa.func.count()).select_from(t.version)).scalar()
    return (tuple(runs), tuple(alerts), events, versions)


def js_payload(name: str, payload: dict) -> str:
    """``payload`` as a script that hands it to the page: ``window.__regbench_data(name, {...})``.

    A script, not a JSON file: browsers refuse ``fetch()`` of local files, so a report opened
    from ``file://`` loads its data with ``<script>`` elements.
    """
    import json

    # "</" would end an inline script; harmless in a file but cheap to keep out.
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return f"window.__regbench_data({json.dumps(name)},{text});\n"
