"""Store helpers shared by the test files (fixtures are in ``conftest.py``)."""

from __future__ import annotations

import io
from pathlib import Path

from regbench.adapters import write_csv
from regbench.store import Store


def export_csv(store: Store) -> str:
    """The store as ``regbench export`` writes it (canonical CSV)."""
    buf = io.StringIO()
    write_csv(store.iter_raw_runs(), buf)
    return buf.getvalue()


def _alembic_config(conn):
    from alembic.config import Config

    import regbench.store.db as db

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(db.__file__).parent / "migrations"))
    cfg.attributes["connection"] = conn
    return cfg


def upgrade_to(conn, revision: str) -> None:
    """Run the store's Alembic migrations on ``conn`` up to ``revision`` (a store made by an
    earlier regbench, for the upgrade tests)."""
    from alembic import command

    command.upgrade(_alembic_config(conn), revision)


def downgrade_to(conn, revision: str) -> None:
    """Run the store's Alembic downgrades on ``conn`` down to ``revision``."""
    from alembic import command

    command.downgrade(_alembic_config(conn), revision)
