"""What several commands share that is not rendering (that is in :mod:`regbench.report`): the
``DURATION`` option type and SIGTERM handled as Ctrl-C."""

from __future__ import annotations

import contextlib
import signal
import threading

import click

class DurationType(click.ParamType):
    """``90``, ``90s``, ``10m`` or ``1.5h`` as seconds (:func:`regbench.config.duration_seconds`,
    which reads the durations of ``regbench.toml`` too)."""

    name = "DURATION"

    def convert(self, value, param, ctx):
        from ..config import duration_seconds

        if isinstance(value, int | float):
            return float(value)
        seconds = duration_seconds(str(value))
        if seconds is None:
            self.fail(f"{value!r} is not a duration such as 90s, 10m or 1h", param, ctx)
        return seconds


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
