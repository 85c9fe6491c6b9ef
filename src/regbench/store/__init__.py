"""The results repository (seed 001 fig. 1): SQLAlchemy schema, migrations and queries.

The records it returns (:class:`~regbench.model.BenchmarkInfo`, :class:`~regbench.model.RunInfo`,
:class:`~regbench.model.StoredRun`...) live in :mod:`regbench.model`, so that readers of them need
not import the store.
"""

from .db import DEFAULT_LOCATION, ENV_VAR, Store, decode_samples, encode_samples, resolve_url

__all__ = ["DEFAULT_LOCATION", "ENV_VAR", "Store", "decode_samples", "encode_samples", "resolve_url"]
