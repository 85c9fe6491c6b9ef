"""``regbench token``: API tokens of the live dashboard (:mod:`regbench.store.tokens`)."""

from __future__ import annotations

import click


@click.group("token")
def command() -> None:
    """Create, list and revoke the API tokens that may write through `regbench serve`.

    A token is shown once, when it is created; the store keeps only its SHA-256. Give it to
    the dashboard's log-in form, or send it as `Authorization: Bearer TOKEN`.
    """


def _name(ctx: click.Context, param: click.Parameter, name: str) -> str:
    """Callback of ``--name``: a blank name is a usage error (exit status 2)."""
    if not name.strip():
        raise click.BadParameter(f"{name!r} is blank: a token needs a name")
    return name


def _machine(ctx: click.Context, param: click.Parameter, machine: str | None) -> str | None:
    """Callback of ``--machine``: a blank name is a usage error, where it made a token that may
    submit as any machine (a probe: ``--machine "$MACHINE"`` with the variable unset)."""
    if machine is not None and not machine.strip():
        raise click.BadParameter(f"{machine!r} is blank: give the machine's name, or leave --machine out for a "
                                 "token not bound to one")
    return machine.strip() if machine is not None else None


def _scopes(ctx: click.Context, param: click.Parameter, scopes: tuple[str, ...]) -> tuple[str, ...]:
    """Callback of ``--scope``: an unknown scope, or none, is a usage error (exit status 2), said
    before the store is opened."""
    from ..errors import ConfigError
    from ..store.tokens import parse_scopes  # here: sqlalchemy is not for `regbench --help`

    try:
        parse_scopes(scopes)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return scopes


@command.command("create")
@click.option("--name", required=True, callback=_name,
              help="Who or what the token is for (recorded with every triage).")
@click.option("--scope", "scopes", multiple=True, default=("triage",), show_default=True, callback=_scopes,
              help="What it may do: read, triage, submit or admin (repeat, or space-separated).")
@click.option("--machine", default=None, callback=_machine, help="Bind the token to one machine's submissions.")
@click.pass_obj
def create(ctx, name: str, scopes: tuple[str, ...], machine: str | None) -> None:
    """Create a token and print its secret, once (creating the store if there is none yet: a
    server's first command, before any push can reach it)."""
    from ..report.web import print_token_created
    from ..store.tokens import create_token

    store = ctx.open_store()
    new = store.peek(lambda conn: True) is None  # no schema yet: said, in case the location is mistyped
    token, secret = create_token(store, name, scopes, machine=machine)
    if new:
        click.echo(f"note: created a new store at {store.shown_url}", err=True)
    print_token_created(token, secret)


@command.command("list")
@click.pass_obj
def list_(ctx) -> None:
    """List the tokens (never their secrets)."""
    from ..report.web import print_tokens
    from ..store.tokens import list_tokens

    print_tokens(list_tokens(ctx.open_store(create=False)))


@command.command("revoke")
@click.argument("token")
@click.pass_obj
def revoke(ctx, token: str) -> None:
    """Revoke TOKEN (its id, or every live token of that name)."""
    from ..report.web import print_tokens_revoked
    from ..store.tokens import revoke_token

    print_tokens_revoked(revoke_token(ctx.open_store(create=False), token))
