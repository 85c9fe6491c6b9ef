"""``regbench push FILE``: send a result file to a ``regbench serve`` (``POST /api/v1/runs``).

The submission id is derived from the file's content, format, version, machine and
configuration, so running the same push again (a CI job retried) is answered "already stored" by
the server rather than stored twice; a canonical file's runs the server holds already (another
file with them) are skipped, and a re-measurement of a version goes after its stored runs.
Connection errors, 5xx and 429 answers are retried with exponential backoff (1, 2, 4, ... s, at
most 60 s a wait), a 429's or 503's ``Retry-After`` honoured; a 4xx answer is one line naming
what the server refused.  The token is read from an environment variable or a file, never from
the command line (where ``ps`` and shell histories would show it).
"""

from __future__ import annotations

import click

from ._common import FiniteFloatRange, configuration_name


def _server(ctx: click.Context, param: click.Parameter, url: str) -> str:
    """Callback of ``--server``: what is not an http(s) URL with a host is a usage error (exit
    status 2), rather than a connection error tried again and again."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        # .port raises ValueError for a port that is not a number from 0 to 65535
        ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.port != -1
    except ValueError:
        ok = False
    if not ok:
        raise click.BadParameter(f"{url!r} is not a server's URL such as https://bench.example.org or "
                                 "http://127.0.0.1:8000")
    return url.strip()


@click.command("push")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--server", required=True, metavar="URL", callback=_server, help="The server's base URL (as `regbench serve` says).")
@click.option("--token-env", metavar="VAR", help="Read the API token (scope `submit`) from this environment variable.")
@click.option("--token-file", metavar="PATH", type=click.Path(dir_okay=False),
              help="Read the API token from this file (its first line).")
@click.option("--format", "fmt", required=True, metavar="NAME",
              help="The file's format: jsonl or csv (canonical), or a harness's (`regbench import --list-formats`).")
@click.option("--version", "version", metavar="NAME", help="The version the file measured (needed but for jsonl/csv).")
@click.option("--machine", default="local", show_default=True, help="The machine the file was measured on.")
@click.option("--configuration", "config_name", default=None, metavar="NAME", callback=configuration_name,
              help="Configuration the file belongs to [default: default].")
@click.option("--attempts", default=6, show_default=True, type=click.IntRange(1, 20),
              help="Tries at most, on connection errors, 5xx and 429 answers.")
@click.option("--timeout", default=120.0, show_default=True, type=FiniteFloatRange(1, 3600),
              help="Seconds to wait for one answer.")
@click.pass_context
def command(click_ctx: click.Context, file: str, server: str, token_env: str | None, token_file: str | None,
            fmt: str, version: str | None, machine: str, config_name: str | None, attempts: int,
            timeout: float) -> None:
    """Send FILE's runs to a regbench server, once: a re-run of the same push stores nothing more.

    \b
    Example (CI):
      regbench push --server https://bench.example.org --token-env REGBENCH_TOKEN \\
          --format pyperf --version "$GITHUB_SHA" --machine ci-large results.json
    """
    from pathlib import Path

    from ..push import PushRequest, push, read_token

    if (token_env is None) == (token_file is None):
        raise click.UsageError("give the API token with one of --token-env VAR or --token-file PATH", ctx=click_ctx)
    token = read_token(env=token_env, path=token_file)
    body = Path(file).read_bytes()
    request = PushRequest(server=server, fmt=fmt, version=version, machine=machine, config=config_name or "default")
    result = push(request, body, token=token, attempts=attempts, timeout=timeout,
                  on_retry=lambda why, wait: click.echo(f"{why}; retrying in {wait:.0f} s", err=True))
    if result.replayed:
        click.echo(f"already stored: submission {result.submission_id} ({result.runs} runs, {result.samples} samples)")
    elif result.runs == 0 and result.skipped:
        click.echo(f"nothing new: the {_runs(result.skipped)} of the file {'is' if result.skipped == 1 else 'are'} "
                   f"already stored (submission {result.submission_id})")
    else:
        click.echo(f"stored {_runs(result.runs)} ({result.samples} samples) as submission {result.submission_id}")
        if result.remeasured:
            click.echo(f"{_runs(result.remeasured)} measured again what the server has runs of (the same "
                       "benchmarks, versions and machine): numbered after them")
        if result.skipped:
            click.echo(f"{_runs(result.skipped)} already stored {'was' if result.skipped == 1 else 'were'} skipped")
        if result.detecting:
            click.echo("the server checks the new versions now ([serve] detect): its alerts are on its dashboard, "
                       "GET /api/v1/detection says when it is done")


def _runs(n: int) -> str:
    return f"{n} run{'' if n == 1 else 's'}"
