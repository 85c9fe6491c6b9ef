"""``regbench serve``: the dashboard live over the store (:mod:`regbench.web.app`)."""

from __future__ import annotations

import click


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; put HTTPS in front then).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--secure-cookies", is_flag=True, help="Mark the session cookies Secure (behind an HTTPS proxy).")
@click.pass_obj
def command(ctx, host: str, port: int, secure_cookies: bool) -> None:
    """Serve the dashboard: the pages of `regbench report`, live over the store (SQLite or
    PostgreSQL), and triage of alerts by people logged in with an API token (`regbench token`),
    with the HTTP API under /api/v1 (submitting runs, reading series and alerts; docs/api.md).

    The pages need no token unless `[serve] public_pages = false`; the API's reads need one
    unless `[serve] public_reads = true`; every write does. With `[serve] detect = true`, the
    server checks each submission's versions in the background once it is stored, as `detect
    --incremental --notify` does (the `[[notify]]` sinks are told unless `[serve] notify =
    false`). Stop with Ctrl-C.
    """
    import logging

    import uvicorn

    from ..run.versions import revision_resolver
    from ..web.app import create_app

    config = ctx.config_if_any()
    location = ctx.store_location_for(config)
    # Versions named as the command line names them (v0.2, HEAD~1, a short sha), in the project's
    # repository, asked again at each request: its branches move while the server runs.
    revisions = revision_resolver(ctx.project_repo(config), remember=False)
    app = create_app(location, project=config.name if config else "regbench", url=config.url if config else None,
                     secure_cookies=secure_cookies, settings=config.serve if config else None, revisions=revisions,
                     config=config)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(name)s: %(message)s")
    # The socket is bound here, before the address is printed: a port in use is one line, and the
    # line printed is an address the server answers at (with --port 0, the port it got).
    import socket

    from ..errors import ConfigError

    try:
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as exc:
        raise ConfigError(f"--host {host} --port {port}: cannot listen there: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    click.echo(f"regbench dashboard on http://{host}:{port}/ (Ctrl-C stops it)", err=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info")).run(sockets=[sock])
