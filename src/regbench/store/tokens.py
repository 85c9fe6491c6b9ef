"""API tokens (table ``api_token``, migration 0008): who may write through the live dashboard.

A token's secret is ``secrets.token_urlsafe(32)`` (256 random bits), shown once when it is
created; the store keeps only its SHA-256.  A plain fast hash is enough here, unlike for
passwords: a secret of 256 random bits cannot be guessed from its hash by trying candidates, so
a slow, salted password hash (bcrypt, scrypt) would add cost and no protection.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..errors import ConfigError, NotFoundError
from ..model import MAX_ROW_ID, utcnow
from . import schema as t
from .schema import Database

#: What a token may do: ``read`` (nothing more than anyone), ``triage`` (set alerts' statuses),
#: ``submit`` (send results, for later use), ``admin`` (everything).
SCOPES = ("read", "triage", "submit", "admin")
#: Every secret starts so, to be recognisable (in a leaked log, by a secret scanner).
PREFIX = "rbt_"


@dataclass(frozen=True)
class ApiToken:
    """A stored token (never its secret)."""

    id: int
    name: str
    scopes: tuple[str, ...]
    machine: str | None
    created_at: datetime
    revoked_at: datetime | None

    def allows(self, scope: str) -> bool:
        """Whether the token is live and has ``scope`` (``admin`` has every scope)."""
        return self.revoked_at is None and (scope in self.scopes or "admin" in self.scopes)


def hash_secret(secret: str) -> str:
    """The SHA-256 (hex) of a token's secret, as the store keeps it."""
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_scopes(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Scopes given as ``"read triage"`` or ``"read,triage"`` or a list, checked and in order.

    Raises
    ------
    ConfigError
        An unknown scope, or none.
    """
    words = text.replace(",", " ").split() if isinstance(text, str) else [w for s in text for w in s.replace(",", " ").split()]
    for w in words:
        if w not in SCOPES:
            raise ConfigError(f"unknown token scope {w!r} (known: {', '.join(SCOPES)})")
    if not words:
        raise ConfigError(f"give a token at least one scope ({', '.join(SCOPES)})")
    return tuple(s for s in SCOPES if s in words)


def _token(row) -> ApiToken:
    return ApiToken(row.id, row.name, tuple(row.scopes.split()), row.machine, row.created_at, row.revoked_at)


def create_token(store: Database, name: str, scopes: str | tuple[str, ...], *, machine: str | None = None,
                 now: datetime | None = None) -> tuple[ApiToken, str]:
    """Create a token; the token and its secret (which is not stored, and cannot be shown again).

    Raises
    ------
    ConfigError
        An empty name or a bad scope.
    """
    if not name or not name.strip():
        raise ConfigError("a token needs a name (--name)")
    if machine is not None and not machine.strip():
        raise ConfigError("a token's machine must be named (--machine); without one the token is bound to none")
    wanted = parse_scopes(scopes)
    secret = PREFIX + secrets.token_urlsafe(32)
    created = now or utcnow()

    def work(conn: Connection) -> int:
        result = conn.execute(t.api_token.insert().values(
            name=name.strip(), token_hash=hash_secret(secret), scopes=" ".join(wanted), machine=machine,
            created_at=created, revoked_at=None))
        key = result.inserted_primary_key
        return int(key[0]) if key is not None else 0

    ident = store.write(work)
    return ApiToken(ident, name.strip(), wanted, machine, created, None), secret


def list_tokens(store: Database) -> list[ApiToken]:
    """Every token, revoked ones too, oldest first."""
    with store.engine.connect() as conn:
        return [_token(r) for r in conn.execute(sa.select(t.api_token).order_by(t.api_token.c.id))]


def revoke_token(store: Database, ident: int | str, *, now: datetime | None = None) -> list[ApiToken]:
    """Revoke the token with id ``ident`` or every live token named ``ident``; the tokens revoked.

    Raises
    ------
    NotFoundError
        No live token has that id or name.
    """
    when = now or utcnow()

    def work(conn: Connection) -> list[ApiToken]:
        live = t.api_token.c.revoked_at.is_(None)
        # An id past any row's (MAX_ROW_ID) is looked up as the name it may be, and found as neither.
        by = (t.api_token.c.id == int(ident)) if str(ident).isdigit() and int(ident) <= MAX_ROW_ID \
            else (t.api_token.c.name == str(ident))
        rows = conn.execute(sa.select(t.api_token).where(by, live)).all()
        if not rows:
            raise NotFoundError(f"no live token {ident!r} (`regbench token list` shows them)")
        conn.execute(t.api_token.update().where(t.api_token.c.id.in_([r.id for r in rows])).values(revoked_at=when))
        return [dataclasses.replace(_token(r), revoked_at=when) for r in rows]

    return store.write(work)


def authenticate(store: Database, secret: str | None) -> ApiToken | None:
    """The live token whose secret is ``secret``, or None (unknown, revoked or empty)."""
    if not secret:
        return None
    return token_by_hash(store, hash_secret(secret.strip()))


def token_by_hash(store: Database, digest: str) -> ApiToken | None:
    """The live token whose secret has the SHA-256 ``digest``, or None."""
    with store.engine.connect() as conn:
        row = conn.execute(sa.select(t.api_token).where(t.api_token.c.token_hash == digest)).first()
    # The lookup is by the hash's value; comparing again in constant time costs nothing.
    if row is None or not hmac.compare_digest(row.token_hash, digest) or row.revoked_at is not None:
        return None
    return _token(row)
