"""Servers, tokens and bodies for the HTTP API's tests (tests/test_api*.py, tests/test_push.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from regbench.store import Store
from regbench.store.tokens import create_token
from webtools import Server

GOLDEN_PYPERF = Path(__file__).parent / "golden" / "adapters" / "pyperf" / "suite.json"


def write_config(root: Path, **serve: object) -> Path:
    """A ``regbench.toml`` with a ``[serve]`` table of ``serve``."""
    lines = ["[project]", 'name = "api-test"', "", "[serve]"]
    for key, value in serve.items():
        lines.append(f"{key} = {str(value).lower() if isinstance(value, bool) else value}")
    path = root / "regbench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def tokens(location: str | Path, **wanted: tuple[str, str | None]) -> dict[str, str]:
    """Create tokens ``name=(scopes, machine)`` in the store; their secrets by name."""
    out = {}
    with Store(location, create=False) as s:
        for name, (scopes, machine) in wanted.items():
            out[name] = create_token(s, name, scopes, machine=machine)[1]
    return out


def jsonl_body(*, machine: str, version: str = "v1", benchmark: str = "api_bench", runs: int = 2,
               samples: int = 5, seed: int = 0) -> bytes:
    """Canonical JSON lines: ``runs`` runs of ``samples`` values each."""
    rng = np.random.default_rng(seed)
    lines = []
    for r in range(runs):
        for i in range(samples):
            lines.append(f'{{"benchmark": "{benchmark}", "version": "{version}", "run": {r}, "iteration": {i}, '
                         f'"value": {1.0 + 0.01 * rng.standard_normal()!r}, "machine": "{machine}"}}')
    return ("\n".join(lines) + "\n").encode()


def start(location: str | Path, root: Path, name: str = "serve", **serve: object) -> Server:
    """``regbench serve`` over ``location`` with ``[serve]`` settings ``serve``."""
    config = write_config(root, **serve) if serve else None
    return Server(location, root / f"{name}.log", config=config)


def count(location: str | Path, table: str) -> int:
    """Rows of ``table`` in the store (``run``, ``submission``...)."""
    import sqlalchemy as sa

    from regbench.store import schema as t

    with Store(location, create=False) as s, s.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(t.metadata.tables[table])).scalar_one())
