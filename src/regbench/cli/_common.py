"""What several commands share that is not rendering (that is in :mod:`regbench.report`): the
``DURATION`` option type and SIGTERM handled as Ctrl-C."""

from __future__ import annotations

import contextlib
import re
import signal
import threading

import click

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")


class DurationType(click.ParamType):
    """``90``, ``90s``, ``10m`` or ``1.5h`` as seconds."""

    name = "DURATION"

    def convert(self, value, param, ctx):
        if isinstance(value, int | float):
            return float(value)
        m = _DURATION.match(str(value))
        if not m or float(m.group(1)) <= 0:
            self.fail(f"{value!r} is not a duration such as 90s, 10m or 1h", param, ctx)
        factor = {"m": 60, "min": 60, "h": 3600}.get(m.group(2) or "s", 1)
        return float(m.group(1)) * factor


DURATION = DurationType()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises KeyboardInterrupt (in the main thread only)."""
    # `kill PID` then cleans up like Ctrl-C: the run's process group is killed and the campaign
    # is marked interrupted.
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
