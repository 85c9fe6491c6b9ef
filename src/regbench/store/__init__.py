"""The results repository (seed 001 fig. 1): SQLAlchemy schema, migrations and queries."""

from .db import DEFAULT_LOCATION, ENV_VAR, RunRow, Store, decode_samples, encode_samples, resolve_url

__all__ = ["DEFAULT_LOCATION", "ENV_VAR", "RunRow", "Store", "decode_samples", "encode_samples", "resolve_url"]
