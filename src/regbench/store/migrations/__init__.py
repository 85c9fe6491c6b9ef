"""Alembic migrations of the results store (run programmatically by :mod:`regbench.store.db`)."""
