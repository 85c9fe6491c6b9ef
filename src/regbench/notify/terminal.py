"""The terminal sink: one line per alert on standard output (or any text stream)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TextIO

from ..model import Alert
from .base import Sink, headline, register


@register
class TerminalSink(Sink):
    """Print each alert's headline; ``stream`` defaults to ``sys.stdout`` at send time."""

    type = "terminal"
    per_alert = False

    def __init__(self, name: str | None = None, *, stream: TextIO | None = None, **kw):
        super().__init__(name, **kw)
        self.stream = stream

    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        out = self.stream or sys.stdout
        for a in alerts:
            out.write(f"{a.status.upper():>5}  {headline(a)}\n")
        out.flush()
