"""The e-mail sink: one message per alert through an SMTP server (:mod:`smtplib`).

The password is read from the environment variable named by ``password_env``, never from
``regbench.toml``.  Every message has a ``Message-ID`` built from the alert's key and the sink's
name, stable across retries, so that mail software can recognise a duplicate; the key is also in
an ``X-Regbench-Alert`` header.
"""

from __future__ import annotations

import os
import re
import smtplib
import ssl
from collections.abc import Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime

from ..model import Alert
from .base import Sink, SinkError, details, headline, pct, register, series_label


def message(a: Alert, *, sender: str, to: Sequence[str], sink: str, now: datetime,
            subject_prefix: str = "[regbench]") -> EmailMessage:
    msg = EmailMessage()
    what = f"{a.kind} in" if a.failure else f"{a.kind} {pct(a.change)} in"  # a failure has no size
    msg["Subject"] = " ".join(filter(None, [subject_prefix, f"{what} {series_label(a)} at {a.version}"
                                            + (f" .. {a.until} (a creep)" if a.until is not None else "")
                                            + (" (already undone)" if a.status == "fixed" else "")]))
    msg["From"] = sender
    msg["To"] = ", ".join(to)
    msg["Date"] = format_datetime(now.replace(tzinfo=UTC) if now.tzinfo is None else now)
    msg["Message-ID"] = f"<{a.uid}.{re.sub(r'[^A-Za-z0-9.-]', '-', sink)}@regbench.invalid>"
    msg["X-Regbench-Alert"] = a.uid
    msg.set_content("\n".join([headline(a), "", *details(a), "",
                               "Triage: regbench alerts ack|invalid|expected "
                               f"{a.id} --reason '...'"]) + "\n")
    return msg


@register
class EmailSink(Sink):
    type = "email"
    per_alert = True

    def __init__(self, name: str | None = None, *, host: str, sender: str, to: Sequence[str], port: int = 25,
                 starttls: bool = False, user: str | None = None, password_env: str | None = None,
                 timeout: float = 10.0, subject_prefix: str = "[regbench]", **kw):
        super().__init__(name, **kw)
        self.host, self.port, self.sender, self.to = host, int(port), sender, tuple(to)
        self.starttls, self.user, self.password_env = starttls, user, password_env
        self.timeout, self.subject_prefix = float(timeout), subject_prefix

    def send(self, alerts: Sequence[Alert], *, now: datetime) -> None:
        login: tuple[str, str] | None = None  # (user, password)
        if self.user is not None:
            password = os.environ.get(self.password_env or "")
            if password is None:
                raise SinkError(f"environment variable {self.password_env} (the SMTP password) is not set")
            login = (self.user, password)
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as smtp:
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if login is not None:
                    smtp.login(*login)
                for a in alerts:
                    smtp.send_message(message(a, sender=self.sender, to=self.to, sink=self.name, now=now,
                                              subject_prefix=self.subject_prefix))
        except (smtplib.SMTPException, OSError) as exc:
            text = " ".join(str(exc).split()) or type(exc).__name__
            raise SinkError(f"SMTP {self.host}:{self.port}: {type(exc).__name__}: {text}") from exc
