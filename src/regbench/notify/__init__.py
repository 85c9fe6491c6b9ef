"""Telling people about alerts: sinks (terminal, JSON, Markdown, webhook, e-mail) and the outbox
that sends each new alert to each sink once (seed 001 fig. 1, the notification repository).

Built-in sinks are imported on first use (:data:`base.BUILTIN`); others call :func:`register`.

============  ===================================================================================
module        job
============  ===================================================================================
``base``      the :class:`Sink` ABC, the registry, the headline and details of an alert
``outbox``    :func:`notify_pending`: each new alert to each sink once, with leases and retries
``terminal``  one line per alert on standard output
``jsonfile``  a versioned JSON file of the alerts of one call
``markdown``  a Markdown table for a pull-request comment
``webhook``   a Slack-compatible HTTP POST per alert
``smtp``      an e-mail per alert
``files``     atomic writes shared by the file sinks
============  ===================================================================================
"""

from .base import BUILTIN, FORMAT_VERSION, REGISTRY, Sink, SinkError, build_sinks, register, sink_class
from .outbox import DEFAULT_LEASE, NotifyReport, SinkReport, notify_pending

__all__ = ["BUILTIN", "DEFAULT_LEASE", "FORMAT_VERSION", "REGISTRY", "NotifyReport", "Sink", "SinkError",
           "SinkReport", "build_sinks", "notify_pending", "register", "sink_class"]
