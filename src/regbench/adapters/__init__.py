"""Pure parsers of measurement files (STYLE.md habit 8): text or path in, runs out."""

from .canonical import COLUMNS, OPTIONAL, REQUIRED, ImportBatch, parse_file, write_csv

__all__ = ["COLUMNS", "OPTIONAL", "REQUIRED", "ImportBatch", "parse_file", "write_csv"]
