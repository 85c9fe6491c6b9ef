"""Sinks: where alerts are told, behind a small ABC and a string registry (STYLE.md habit 7).

A sink delivers alerts or raises; it never touches the store.  Which alerts a sink gets, and
the record of what it was sent, is the outbox's job (:mod:`regbench.notify.outbox`).  The texts
built here are plain (no rich): terminals, files, chat and e-mail all read them.
"""

from __future__ import annotations

import abc
import importlib
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import ClassVar

from ..errors import ConfigError, SinkError
from ..model import ALERT_KINDS, Alert, MachineEvidence

#: Version of the JSON that sinks write or post (the JSON file, the webhook's ``regbench`` field).
FORMAT_VERSION = 1


class Sink(abc.ABC):
    """A destination of alerts; subclasses set :attr:`type` and implement :meth:`send`.

    Parameters
    ----------
    name : str, optional
        The sink's name in the store's delivery records (default: its type).  Renaming a sink
        makes it a new sink, which then gets every alert that is still ``new``.
    kinds : sequence of str
        The alert kinds it gets (``regression``, ``improvement``, ``failure``; as given: the
        configuration decides where failures go, :class:`regbench.config.NotifySpec`).
    """

    type: ClassVar[str] = ""
    #: True: :meth:`send` gets one alert per call (one message, one idempotency key each).
    #: False: every alert due in one call (a file or a screen shows them together).
    per_alert: ClassVar[bool] = True

    def __init__(self, name: str | None = None, *, kinds: Sequence[str] = ALERT_KINDS):
        self.name = name or self.type
        self.kinds = tuple(kinds)

    @abc.abstractmethod
    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        """Deliver ``alerts`` (one when :attr:`per_alert`); raise when they were not delivered."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


REGISTRY: dict[str, type[Sink]] = {}
#: Built-in sink types -> module in this package, imported on first use.
BUILTIN = {"terminal": "terminal", "json": "jsonfile", "markdown": "markdown", "webhook": "webhook",
           "email": "smtp"}


def register(cls: type[Sink]) -> type[Sink]:
    builtin = BUILTIN.get(cls.type)
    if not cls.type or cls.type in REGISTRY or (builtin and cls.__module__ != f"{__package__}.{builtin}"):
        raise ValueError(f"sink type {cls.type!r} is empty or taken")
    REGISTRY[cls.type] = cls
    return cls


def sink_class(type_: str) -> type[Sink]:
    if type_ not in REGISTRY and type_ in BUILTIN:
        importlib.import_module(f".{BUILTIN[type_]}", __package__)
    try:
        return REGISTRY[type_]
    except KeyError:
        known = ", ".join(sorted(set(BUILTIN) | set(REGISTRY)))
        raise ConfigError(f"unknown sink type {type_!r} (known: {known})") from None


def build_sinks(specs) -> list[Sink]:
    """Sinks from the ``[[notify]]`` tables of a config (:class:`regbench.config.NotifySpec`)."""
    return [sink_class(s.type)(s.name, kinds=s.kinds, **s.options) for s in specs]


# ------------------------------------------------------------------------------------- texts
def pct(x: float | None) -> str:
    """``+3.40%``; ``+∞`` for a count from exactly 0 (:mod:`regbench.detect.zeros`); ``?`` for none."""
    if x is not None and math.isinf(x):
        return "+∞" if x > 0 else "-∞"
    return "?" if x is None else f"{x * 100:+.2f}%"


def series_label(a: Alert) -> str:
    """``benchmark [config] on machine`` (the default configuration is not named), with ``(also on
    b, c)`` for a change seen on other machines too (the numbers of a headline are the first
    machine's; :func:`machines_text` gives each one's)."""
    also = f" (also on {', '.join(a.machines[1:])})" if a.also_on else ""
    return a.benchmark + ("" if a.config == "default" else f" [{a.config}]") + f" on {a.machine}{also}"


def tagged(version: str, tags: tuple[str, ...]) -> str:
    """A version as a message names it: ``v0.4.3 (5c1b9e2a10)`` when it has tags (the first by
    name, as :func:`regbench.model.version_labels` picks), the stored name alone otherwise."""
    return f"{tags[0]} ({version})" if tags else version


#: What a creep alert's messages say of its span: no commit in it is to blame alone.
CREEP_NOTE = "a creep, each step below the minimum change: no single commit made it"


def headline(a: Alert, labels: Mapping[str, str] | None = None) -> str:
    """One line: what changed, where, how much (with its interval), since when (for a creep, over
    which versions: ``at v3 .. v9 (since v2; a creep, ...)``), what it fixed,
    what undid it when it is ``fixed`` (``already undone at v5 by alert #4``: told after the
    change that undid it was found), and the commit ``detect --bisect`` found (``first bad commit
    5c1b9e2a10``; for a failure, ``first failing commit``); versions by their ``labels`` (tags,
    :func:`regbench.report.console.version_labels`) if given, else with the tags the alert carries
    (:func:`tagged`).  A failure has no size: ``failure in gb on ci-1 at v1.2 (last ok at v1.1),
    alert #3: failed (exit status 2): panic: ...``, its error last (the longest part); one that
    never succeeded says so: ``failure in gb on ci-1 at v1.2 (never succeeded), alert #3: ...``."""
    ci = f" [{pct(a.ci_low)}, {pct(a.ci_high)}]" if a.ci_low is not None and a.ci_high is not None else ""
    if labels is not None:
        version, previous = (labels.get(v, v) for v in (a.version, a.previous))
    else:
        version, previous = tagged(a.version, a.version_tags), tagged(a.previous, a.previous_tags)
    if a.failure:
        worked = "never succeeded" if a.never_succeeded else f"last ok at {previous}"
        text = f"{a.kind} in {series_label(a)} at {version} ({worked}), alert #{a.id}"
        if a.status == "fixed" and a.fixed_by is not None:
            text += f", runs again at {labels.get(a.fixed_by, a.fixed_by) if labels is not None else a.fixed_by}"
        elif a.no_longer_run:
            text += ", no longer run"
        if a.culprit is not None:
            text += f", first failing commit {a.culprit}"
        return text + (f": {a.error}" if a.error else "")
    if a.until is not None:  # the ramp's total: read as one commit's without its span
        until = labels.get(a.until, a.until) if labels is not None else a.until
        where = f"at {version} .. {until} (since {previous}; {CREEP_NOTE})"
    else:
        where = f"at {version} (since {previous})"
    text = f"{a.kind} {pct(a.change)}{ci} in {series_label(a)} {where}, alert #{a.id}"
    if a.restores is not None:
        text += f", restores alert #{a.restores}"
    if a.status == "fixed" and a.fixed_by is not None:
        fixed_by = labels.get(a.fixed_by, a.fixed_by) if labels is not None else a.fixed_by
        text += f", already undone at {fixed_by}" + (f" by alert #{a.fixed_by_alert}" if a.fixed_by_alert else "")
    if a.culprit is not None:
        text += f", first bad commit {a.culprit}"
    return text


def evidence_text(e: MachineEvidence) -> str:
    """One machine's evidence: ``b +9.80% [+7.00%, +12.60%] at v3 (since v2), p = 0.001, auto``; a
    creep there by its span, as the alert's own (``at v3 .. v9 (since v2; a creep)``)."""
    from ..detect.alerts import span_text

    ci = f" [{pct(e.ci_low)}, {pct(e.ci_high)}]" if e.ci_low is not None and e.ci_high is not None else ""
    p = f", p = {e.p_value:.3g}" if e.p_value is not None else ""
    since = f"since {e.previous}" + ("; a creep" if e.until is not None else "")
    return f"{e.machine} {pct(e.change)}{ci} at {span_text(e.version, e.until)} ({since}){p}, {', '.join(e.methods)}"


def machines_text(a: Alert) -> str:
    """How far the change reaches across machines, in words, with the hold if any:
    ``seen on 3 machines: ...``, ``machine-specific: seen on a only; measured without it on b, c``,
    ``single machine (no other machine measured it)``."""
    if a.spread == "several":
        text = f"seen on {len(a.machines)} machines: " + "; ".join(evidence_text(e) for e in a.evidence)
        if a.unchanged_on:
            text += f"; measured without it on {', '.join(a.unchanged_on)}"
    elif a.spread == "machine-specific":
        text = f"machine-specific: seen on {a.machine} only; measured without it on {', '.join(a.unchanged_on)}"
    else:
        text = f"single machine ({a.machine}; no other machine measured it)"
    if a.held:
        text += (f"; held, not notified: seen on {len(a.machines)} of the {a.hold_machines} machines "
                 "[alerts] require_machines asks")
    return text


def details(a: Alert) -> list[str]:
    """Further lines for a message body: a creep's span, machines, methods, p-value, status, fix,
    confirmation; for a failure, its error, machine, status and fix."""
    from ..detect.alerts import confirmation_text

    if a.failure:
        return [f"error: {a.error or '(none stored)'}",
                f"machine: {a.machine} (every run failed from {a.version} on; "
                + ("it never succeeded)" if a.never_succeeded else f"the last successful one at {a.previous})"),
                f"status: {a.status}" + (f" (runs again at {a.fixed_by})" if a.fixed_by else
                                         " (no longer run: removed from the suite, renamed, or its machine "
                                         "or configuration retired)" if a.no_longer_run else ""),
                f"alert key: {a.uid}"] + ([f"bisected: {a.bisection}"] if a.bisection else [])
    lines = [f"machines: {machines_text(a)}",
             f"methods: {', '.join(a.methods)}" + (f"; p = {a.p_value:.3g}" if a.p_value is not None else ""),
             f"status: {a.status}" + (f" (fixed by {a.fixed_by}, alert #{a.fixed_by_alert})" if a.fixed_by else ""),
             f"unit: {a.unit} ({a.direction} is better)",
             f"alert key: {a.uid}"]
    if a.confirmation is not None:
        lines.insert(3, f"run again: {confirmation_text(a.confirmation)}")
    if a.bisection:
        lines.append(f"bisected: {a.bisection}")
    if a.until is not None:
        lines.insert(0, f"span: a creep over {a.version} .. {a.until} (since {a.previous})")
    return lines


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if isinstance(exc, SinkError) else f"{type(exc).__name__}: {text}"
