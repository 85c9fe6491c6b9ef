"""Telling people about alerts: sinks (terminal, JSON, Markdown, webhook, e-mail) and the outbox
that sends each new alert to each sink once (seed 001 fig. 1, the notification repository).

Built-in sinks are imported on first use (:data:`base.BUILTIN`); others call :func:`register`.
"""

from .base import BUILTIN, FORMAT_VERSION, REGISTRY, Sink, SinkError, build_sinks, register, sink_class
from .outbox import DEFAULT_LEASE, NotifyReport, SinkReport, notify_pending

__all__ = ["BUILTIN", "DEFAULT_LEASE", "FORMAT_VERSION", "REGISTRY", "NotifyReport", "Sink", "SinkError",
           "SinkReport", "build_sinks", "notify_pending", "register", "sink_class"]
