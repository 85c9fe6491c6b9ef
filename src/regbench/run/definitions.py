"""What a benchmark runs (its *definition*), as campaigns and sessions record it, and what a
campaign does when it changed.

A campaign records each benchmark's definition in its plan (``plan["benchmarks"][NAME]
["definition"]``); a session of ``compare --run``, ``bisect`` or ``detect --confirm`` records those
of the benchmarks it runs in ``plan["definitions"]`` (:attr:`regbench.model.CampaignInfo.definitions`).
A campaign that runs a benchmark whose definition changed since the runs stored were made
supersedes them (:meth:`regbench.store.Store.supersede_runs`), and takes back the runs of the
campaigns and sessions that ran the definition it has again, an edit reverted
(:func:`changed_definitions`, :func:`supersede_changed`).  A session supersedes nothing: the
campaign after it settles what it ran (:func:`changed_definitions` reads the sessions since the
last campaign too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import DEFAULT_CONFIG
from .execute import FORKS_ENV, SELECT_ENV

if TYPE_CHECKING:
    from ..config import BenchmarkSpec
    from ..store import Store


#: What a benchmark runs, as :func:`definition` keeps it: a change to any of these makes its
#: runs measure something else.  How often it runs (runs, iterations, warm-up, min_time, a plan)
#: is not its definition: each sample stays the time of one iteration.  ``source`` is the code of
#: a Python benchmark's function where its module is in ``[project] benchmark_dir``
#: (:func:`python_source_digest`).
DEFINITION_FIELDS = ("kind", "command", "target", "source", "cwd", "env", "output", "unit", "format")


def definition(spec: BenchmarkSpec, benchmark_dir: Path | None = None) -> dict:
    """What ``spec`` runs (:data:`DEFINITION_FIELDS`), as a campaign's plan records it: the
    variables of ``env`` by a digest of their values (a value may be a credential; the store
    keeps no copy of it), and a Python benchmark's code in ``benchmark_dir`` by a digest of its
    function's source."""
    import hashlib

    # Not the variables regbench sets itself (an optimized plan's forks, a split group's
    # selection): how often a benchmark runs, not what.
    env = {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in sorted(spec.env.items())
           if k not in (FORKS_ENV, SELECT_ENV)}
    out = {"command": list(spec.command), "target": spec.target, "cwd": spec.cwd, "env": env,
           "output": spec.output, "unit": spec.unit, "format": spec.format, "kind": spec.kind}
    if spec.kind == "python" and spec.target and benchmark_dir is not None:
        source = python_source_digest(spec.target, benchmark_dir)
        if source is not None:
            out["source"] = source
    return out


def python_source_digest(target: str, benchmark_dir: Path) -> str | None:
    """A digest of the source of the function ``target`` (``module:function``, or
    ``module:Class.method``) where its module is a file of ``benchmark_dir``; None when it is not
    there (a module of the project's own tree is part of each version, not of the benchmark's
    definition) or cannot be parsed (its runs will say why).

    The file is parsed, not imported: a benchmark module imports the project, which this process
    may not have.  As asv versions a benchmark by its code, only the function's own code counts
    (the helpers it calls do not): an edit elsewhere in the file does not supersede every other
    benchmark of it.  The digest is of the function's syntax tree without its docstrings, so
    comments, blank lines, formatting and docstrings are not part of it (a probe: a comment
    edited superseded every run of the benchmark).
    """
    import ast
    import hashlib

    module, _, qualname = target.partition(":")
    base = Path(benchmark_dir, *module.split("."))
    path = next((p for p in (base.with_name(base.name + ".py"), base / "__init__.py") if p.is_file()), None)
    if path is None or not qualname:
        return None
    try:
        text = path.read_text(encoding="utf-8")
        body: list[ast.stmt] = ast.parse(text).body
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                     and n.name == part), None)
        if node is None:
            return None
        body = getattr(node, "body", [])
    if node is None:
        return None
    for inner in ast.walk(node):  # docstrings: a string alone first in a body
        if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and inner.body \
                and isinstance(inner.body[0], ast.Expr) and isinstance(inner.body[0].value, ast.Constant) \
                and isinstance(inner.body[0].value.value, str):
            inner.body = inner.body[1:] or [ast.Pass()]
    # Without line and column attributes: where the code sits in the file is not what it runs.
    return hashlib.sha256(ast.dump(node, include_attributes=False).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RecordedDefinition:
    """A benchmark's definition as campaign ``campaign_id`` recorded it (:func:`definition_history`);
    ``session``: that campaign is a session (``compare --run``, ``bisect``, ``detect --confirm``),
    which supersedes no run."""

    campaign_id: int
    definition: dict
    session: bool = False


@dataclass(frozen=True)
class DefinitionChange:
    """A benchmark whose definition (what it runs) changed since campaign ``since`` ran it on this
    machine and configuration (:func:`changed_definitions`): its ``fields`` differ (``session``:
    ``since`` is a session).  ``origins`` are the campaigns and sessions that ran the definition
    it has again (an edit reverted, or a session that ran the edit before the campaign): their
    runs are kept, and taken back where an earlier change superseded them."""

    benchmark: str
    fields: tuple[str, ...]
    since: int
    origins: tuple[int, ...] = ()
    session: bool = False

    def sentence(self, superseded: int | None, restored: int = 0) -> str:
        """What the campaign that first runs the new definition says: with ``superseded``, how
        many runs it superseded (None: kept, ``run --keep-old-runs``), and how many of the
        ``origins``' it took back."""
        what = "session" if self.session else "campaign"
        head = f"{self.benchmark}: its {', '.join(self.fields)} changed since {what} {self.since}, which ran it"
        if superseded is None:
            return (f"{head}: the runs stored before measure the old one and were kept (--keep-old-runs), "
                    "the versions they cover are not run again, and analyses compare them with the new runs")
        back = (f"; {restored} run{'s' if restored != 1 else ''} of earlier campaigns that ran the definition it has "
                f"again ({', '.join(map(str, self.origins))}) are back in the analyses") if restored else ""
        if superseded == 0:
            return f"{head}: no run of the old one was stored here{back}"
        if restored:
            # An edit reverted: the versions whose runs came back are not measured again, and
            # --keep-old-runs would take back the runs of the edit undone (a probe: the sentence
            # said every version was measured again while the campaign stored no run).
            return (f"{head}: its {superseded} run{'s' if superseded != 1 else ''} of that definition are "
                    f"superseded (kept in the store, out of every analysis){back}; only versions without runs of "
                    "the definition it has now are measured again")
        return (f"{head}: its {superseded} run{'s' if superseded != 1 else ''} stored before measure the old "
                f"one and are superseded (kept in the store, out of every analysis){back}; the versions this "
                "campaign runs are measured again. If the edit does not change what is measured, the next "
                "`regbench run --keep-old-runs` takes them back")


def definition_history(store: Store, *, machine: str, config_name: str) -> dict[str, list[RecordedDefinition]]:
    """Per benchmark, the definition recorded by every campaign and session that ran it on
    ``machine`` and ``config_name``, oldest first (campaigns before the plans recorded definitions,
    and sessions before they did, are not there)."""
    out: dict[str, list[RecordedDefinition]] = {}
    for c in sorted(store.campaigns(), key=lambda c: c.id):
        if c.machine != machine or (c.plan or {}).get("config", DEFAULT_CONFIG) != config_name:
            continue
        for name, d in c.definitions.items():
            out.setdefault(name, []).append(RecordedDefinition(c.id, d, c.session))
    return out


def definition_differences(before: dict, now: dict) -> tuple[str, ...]:
    """The :data:`DEFINITION_FIELDS` in which two recorded definitions differ; ``source`` only
    where both recorded it (campaigns before it was kept did not)."""
    return tuple(f for f in DEFINITION_FIELDS
                 if before.get(f) != now.get(f) and (f != "source" or (f in before and f in now)))


def changed_definitions(store: Store, specs: Sequence[BenchmarkSpec], *, machine: str, config_name: str,
                        benchmark_dir: Path | None = None,
                        history: Mapping[str, list[RecordedDefinition]] | None = None) -> tuple[DefinitionChange, ...]:
    """The benchmarks of ``specs`` whose definition differs from one that ran since their last
    campaign on ``machine`` and ``config_name`` (:func:`definition_history`, read here unless
    given; a field a campaign did not record, as ``source`` before it was kept, is not compared).

    A campaign skips the versions whose runs are stored, so after an edit those runs would measure
    the old definition while new versions measure the new one, and every analysis would compare
    the two: the campaign supersedes them (:meth:`regbench.store.Store.supersede_runs`) and says
    so, once, at the campaign that changed it.  What that campaign recorded, and what the
    sessions since it ran (a session supersedes nothing, so a session that ran an edit left the
    runs of the other definition stored), is compared: the change is ``since`` the last of them
    that differs.  Before any campaign recorded the benchmark, its sessions are.  Each change
    names the campaigns and sessions that ran the definition it has again (``origins``): an edit
    reverted, or a session that ran the edit before this campaign."""
    if history is None:
        history = definition_history(store, machine=machine, config_name=config_name)
    out = []
    for spec in specs:
        ran = history.get(spec.name)
        if not ran:
            continue
        now = definition(spec, benchmark_dir)
        last = max((k for k, r in enumerate(ran) if not r.session), default=0)
        differing = [r for r in ran[last:] if definition_differences(r.definition, now)]
        if differing:
            since = differing[-1]
            origins = tuple(r.campaign_id for r in ran if not definition_differences(r.definition, now))
            out.append(DefinitionChange(spec.name, definition_differences(since.definition, now), since.campaign_id,
                                        origins, since.session))
    return tuple(out)


def supersede_changed(store: Store, specs: Sequence[BenchmarkSpec], changes: Sequence[DefinitionChange],
                      recorded: Mapping[str, list[RecordedDefinition]], *, keep_old_runs: bool, config_name: str,
                      machines: tuple[str, ...], campaign_id: int) -> tuple[str, ...]:
    """Before any run of campaign ``campaign_id`` is counted as stored: supersede the runs of the
    benchmarks whose definition changed (their versions are then run again), but those of the
    campaigns and sessions that ran the definition they have now, which are taken back where an
    earlier change superseded them; with ``keep_old_runs``, keep them instead, and take back the
    runs that the last campaign of a benchmark superseded (a session supersedes none).  One
    sentence for each benchmark concerned."""
    out = []
    for c in changes:
        if keep_old_runs:
            out.append(c.sentence(None))
            continue
        gone = store.supersede_runs([c.benchmark], config=config_name, machines=machines, campaign_id=campaign_id,
                                    keep=c.origins)
        back = store.restore_runs([c.benchmark], config=config_name, machines=machines,
                                  origins=c.origins) if c.origins else {}
        out.append(c.sentence(gone.get(c.benchmark, 0), back.get(c.benchmark, 0)))
    if keep_old_runs:
        changed = {c.benchmark for c in changes}
        for spec in specs:
            last = next((r.campaign_id for r in reversed(recorded.get(spec.name, ())) if not r.session), None)
            if spec.name in changed or last is None:
                continue
            back = store.restore_runs([spec.name], config=config_name, machines=machines, superseded_by=last)
            if back.get(spec.name):
                n = back[spec.name]
                out.append(f"{spec.name}: its {n} run{'s' if n != 1 else ''} that campaign {last} superseded are "
                           "back in the analyses (--keep-old-runs)")
    return tuple(out)
