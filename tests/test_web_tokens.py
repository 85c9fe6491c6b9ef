"""API tokens: ``regbench token create/list/revoke``, the stored hash, migration 0008."""

from __future__ import annotations

import hashlib

import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.errors import ConfigError, ExitStatus, NotFoundError
from regbench.store import Store
from regbench.store import schema as t
from regbench.store.tokens import authenticate, create_token, list_tokens, parse_scopes, revoke_token
from storetools import upgrade_to


def test_only_the_hash_of_a_secret_is_stored_and_it_authenticates(sqlite_store):
    token, secret = create_token(sqlite_store, "alice", "triage read")
    assert secret.startswith("rbt_") and len(secret) > 40
    with sqlite_store.engine.connect() as conn:
        stored = conn.execute(sa.select(t.api_token.c.token_hash)).scalar_one()
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    found = authenticate(sqlite_store, secret)
    assert found is not None and found.name == "alice" and found.scopes == ("read", "triage")
    assert found.allows("triage") and not found.allows("admin")
    assert authenticate(sqlite_store, secret + "x") is None
    assert authenticate(sqlite_store, "") is None
    revoke_token(sqlite_store, token.id)
    assert authenticate(sqlite_store, secret) is None
    with pytest.raises(NotFoundError, match="no live token 'alice'"):
        revoke_token(sqlite_store, "alice")


@pytest.mark.parametrize("scopes, message", [("", "at least one scope"), ("triage write", "unknown token scope 'write'")])
def test_bad_scopes_are_named(scopes, message):
    with pytest.raises(ConfigError, match=message):
        parse_scopes(scopes)


def test_the_token_commands(tmp_path, capsys, store_url):
    store = store_url
    Store(store).close()
    assert main(["--store", store, "token", "create", "--name", "ci-bot", "--scope", "triage", "--scope", "read"]) == 0
    out = capsys.readouterr().out
    secret = out.strip().splitlines()[-1]
    assert "Token #1 'ci-bot' (read triage) created" in out
    assert main(["--store", store, "token", "list"]) == 0
    listing = capsys.readouterr().out
    assert "ci-bot" in listing and secret not in listing
    assert main(["--store", store, "token", "revoke", "1"]) == 0
    assert "Token #1 'ci-bot' revoked." in capsys.readouterr().out
    assert main(["--store", store, "token", "create", "--name", "x", "--scope", "root"]) == ExitStatus.USAGE
    err = capsys.readouterr().err
    assert "Error: Invalid value for '--scope': unknown token scope 'root'" in err
    with Store(store, create=False) as s:
        assert [k.revoked_at is not None for k in list_tokens(s)] == [True]


def test_a_0007_store_is_upgraded_to_hold_tokens(tmp_path):
    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade_to(conn, "0007")
    engine.dispose()
    with Store(path) as s:
        assert s.schema_revision() == t.SCHEMA_REVISION
        create_token(s, "alice", "triage")
        assert [k.name for k in list_tokens(s)] == ["alice"]


def test_a_new_servers_first_token_creates_its_store(tmp_path, capsys, store_url):
    # A team's server starts empty: the token a CI machine pushes with comes before any run, and
    # `POST /api/v1/runs` needs the store to exist. `token create` refused with "not a regbench
    # store (no schema); `regbench run` or `regbench import` creates one".
    assert main(["--store", store_url, "token", "create", "--name", "ci-a", "--scope", "submit",
                 "--machine", "ci-a"]) == 0
    said = capsys.readouterr()
    assert "Token #1 'ci-a' (submit) created" in said.out
    assert said.err == f"note: created a new store at {store_url}\n"  # a mistyped location shows
    assert main(["--store", store_url, "token", "create", "--name", "ci-b"]) == 0
    assert capsys.readouterr().err == ""
    with Store(store_url, create=False) as s:
        assert [(k.name, k.machine) for k in list_tokens(s)] == [("ci-a", "ci-a"), ("ci-b", None)]
    # Listing and revoking only read and change tokens: a mistyped store stays an error.
    missing = f"sqlite:///{tmp_path / 'typo' / 'results.db'}"
    assert main(["--store", missing, "token", "list"]) == ExitStatus.ERROR
    assert not (tmp_path / "typo" / "results.db").exists()
