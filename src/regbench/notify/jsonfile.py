"""The JSON sink: the alerts delivered by one notify call, as one versioned JSON file.

Format (``format_version`` 1)::

    {"format_version": 1, "generated_at": "2024-05-01T12:00:00Z", "sink": "json",
     "alerts": [{"id", "key", "benchmark", "config", "machine", "unit", "direction", "version",
                 "previous", "kind", "change", "ci_low", "ci_high", "p_value", "methods",
                 "status", "fixed_by", "fixed_by_alert", "restores", "created_at", "updated_at",
                 "confirmation"}, ...]}

The file is rewritten by every call (with ``"alerts": []`` when nothing was due), atomically.
``confirmation`` (what ``regbench detect --confirm`` found, or null) was added to version 1
without changing the version: keys are only ever added to a version, and readers ignore those
they do not know.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from ..model import Alert, iso
from .base import FORMAT_VERSION, Sink, register
from .files import write_atomically


@register
class JsonSink(Sink):
    type = "json"
    per_alert = False

    def __init__(self, name: str | None = None, *, path: str | Path, **kw):
        super().__init__(name, **kw)
        self.path = Path(path)

    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        doc = {"format_version": FORMAT_VERSION, "generated_at": iso(now), "sink": self.name,
               "alerts": [a.to_json() for a in alerts]}
        write_atomically(self.path, json.dumps(doc, indent=1, allow_nan=False) + "\n")
