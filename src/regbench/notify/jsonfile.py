"""The JSON sink: every alert delivered to it, in one versioned JSON file.

Format (``format_version`` 1)::

    {"format_version": 1, "generated_at": "2024-05-01T12:00:00Z", "sink": "json",
     "alerts": [{"id", "key", "benchmark", "config", "machine", "unit", "direction", "version",
                 "previous", "kind", "change", "ci_low", "ci_high", "p_value", "methods",
                 "status", "fixed_by", "fixed_by_alert", "restores", "created_at", "updated_at",
                 "confirmation", "spread", "machines", "unchanged_on", "held", "hold_machines"}, ...]}

Each call *adds* the alerts it delivers to those already in the file (an alert once, by its
``key``; ``generated_at`` is the last addition), under the lock of the file's folder and
atomically (:func:`regbench.notify.files.update_atomically`): two notifies at once both land in
the file, where replacing it lost the first one's alerts.  Whoever handles the alerts takes the
file away (``mv``, then read it); the next call starts a new one.  A call with nothing to deliver
writes ``"alerts": []`` when there is no file, and leaves a file alone.  ``confirmation`` (what
``regbench detect --confirm`` found, or null) was added to version 1 without changing the
version, and so were the alert's reach across machines (``spread``: ``several``,
``machine-specific`` or ``single``; ``machines``: each machine's evidence, the alert's own
first; ``unchanged_on``; ``held`` and ``hold_machines``, always false and null for an alert that
is sent), and ``until`` (for a creep only: the first version at the new level, the change spread
over ``version`` .. ``until``; absent for a step): keys are only ever added to a version, and
readers ignore those they do not know.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from ..model import Alert, iso
from .base import FORMAT_VERSION, Sink, SinkError, register
from .files import update_atomically


@register
class JsonSink(Sink):
    type = "json"
    per_alert = False

    def __init__(self, name: str | None = None, *, path: str | Path, **kw):
        super().__init__(name, **kw)
        self.path = Path(path)

    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        def add(text: str | None) -> str | None:
            if text is not None and not text.strip():
                text = None  # emptied by whoever handled the alerts: a new file
            if text is not None and not alerts:
                return None
            told = _alerts_in(text, self.path) if text is not None else []
            keys = {a.get("key") for a in told}
            told += [a.to_json() for a in alerts if a.uid not in keys]
            doc = {"format_version": FORMAT_VERSION, "generated_at": iso(now), "sink": self.name, "alerts": told}
            return json.dumps(doc, indent=1, allow_nan=False) + "\n"

        update_atomically(self.path, add)


def _alerts_in(text: str, path: Path) -> list[dict]:
    """The alerts of a file this sink wrote; :class:`SinkError` for any other file (it is not
    overwritten: it may be someone's)."""
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not (isinstance(doc, dict) and doc.get("format_version") == FORMAT_VERSION
            and isinstance(doc.get("alerts"), list)):
        raise SinkError(f"{path} is not a regbench alerts file (format_version {FORMAT_VERSION}): "
                        "move it away, the next notify writes a new one")
    return doc["alerts"]
