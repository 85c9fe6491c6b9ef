"""Store helpers shared by the test files (fixtures are in ``conftest.py``)."""

from __future__ import annotations

import io

from regbench.adapters import write_csv
from regbench.store import Store


def export_csv(store: Store) -> str:
    """The store as ``regbench export`` writes it (canonical CSV)."""
    buf = io.StringIO()
    write_csv(store.iter_raw_runs(), buf)
    return buf.getvalue()
