"""The canonical CSV (and JSON lines with the same fields): parser and writer.

Contract (DESIGN.md "Contracts"): a header row; required columns
``benchmark,version,run,iteration,value``; optional ``timestamp`` (ISO 8601; orders versions),
``config``, ``machine``, ``unit``, ``direction``, ``commit`` (the version's full sha), ``tags``
(the version's git tags, separated by spaces), ``status`` and ``error`` (a run that did not end
``ok``: one row, without ``iteration`` and ``value``), and what a benchmark tool said of a run
beyond its samples (table ``run_tool``): ``processes``, ``warmup_seconds`` and
``iteration_seconds`` (the run's :class:`~regbench.model.ToolTiming`, on each of its rows) and
``weight`` (each sample's).  ``run`` and ``iteration`` are non-negative integers, ``value`` a
finite number.  Without ``timestamp`` versions are ordered by first appearance.

This module is a pure parser (STYLE.md habit 8): a path in, an :class:`ImportBatch` out; every
problem is an :class:`~regbench.errors.InputError` ``FILE:LINE: what is wrong`` raised before
anything is stored.  Columns are parsed by pandas' C reader (10 million rows in seconds) and
validated as whole arrays with numpy.  A CSV file whose name ends in ``.gz`` is read through gzip
(the corpus of real measurements is kept so, :mod:`regbench.evaluate.real`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

import numpy as np

from ..errors import InputError, shown
from ..model import DEFAULT_CONFIG, DIRECTIONS, RunRecord, StoredRun, ToolTiming
from . import jsonsafe

if TYPE_CHECKING:
    import mmap

REQUIRED = ("benchmark", "version", "run", "iteration", "value")
#: What a tool said of a run beyond its samples (:class:`~regbench.model.ToolTiming`; table
#: ``run_tool``): one value per run, repeated on each of its rows, and given together or not at all.
TOOL_RUN = ("processes", "warmup_seconds", "iteration_seconds")
#: The tool's columns: its timing of a run (:data:`TOOL_RUN`) and each sample's ``weight``.
TOOL_COLUMNS = (*TOOL_RUN, "weight")
OPTIONAL = ("timestamp", "config", "machine", "unit", "direction", "commit", "tags", "status", "error",
            *TOOL_COLUMNS)
#: The columns read as numbers (blank: missing).
_NUMBERS = ("run", "iteration", "value", *TOOL_COLUMNS)
#: A commit as the ``commit`` column holds it: the full sha (a history is matched against the
#: full shas of the branch's first-parent line).
_SHA = re.compile(r"[0-9a-fA-F]{40}")
#: What ``git check-ref-format`` refuses in a tag name (the rules that concern one name): ASCII
#: control characters, space, ``~ ^ : ? * [ \``, ``..``, ``@{``, ``//``, a component that starts
#: with ``.``, or a name that starts with ``-`` or ``/`` or ends with ``/``, ``.`` or ``.lock``.
#: A space cannot be in a tag, so the ``tags`` column separates a version's tags with spaces.
_NOT_IN_TAG = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|(^|/)\.|^[-/]|[/.]$|\.lock$|^@$")
#: The longest tag name the store keeps (``version_alias.name``).
_TAG_CHARS = 200
COLUMNS = REQUIRED + OPTIONAL
DEFAULT_MACHINE = "local"
_TEXT = ("benchmark", "version", "config", "machine", "unit", "direction", "timestamp", "commit", "tags", "status",
         "error")
#: The longest ``error`` export writes (its end is kept, as a stderr tail is): escaped, its line
#: stays far below :data:`MAX_LINE_BYTES`.
ERROR_CHARS = 8192
#: How the CSV writes an ``error``'s line breaks (and the backslash, NUL), so a row is one line.
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\0": "\\0"}
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
#: Longest line (in bytes, line break excluded) of a canonical CSV or JSON-lines file.  A row of
#: measurements is tens of bytes; the bound keeps a corrupt file (one line of megabytes) from
#: costing the CSV reader seconds and gigabytes before it finds the line is wrong.
MAX_LINE_BYTES = 64 * 1024
_SCAN_CHUNK = 1 << 20


@dataclass
class ImportBatch:
    """Runs parsed from one file, ready to be stored in one transaction."""

    records: list[RunRecord]
    versions: dict[str, dict] = field(default_factory=dict)  # name -> version info, in history order
    benchmarks: dict[str, dict] = field(default_factory=dict)  # name -> unit/direction
    first_line: dict[tuple, int] = field(default_factory=dict)  # run key -> first line in the file
    benchmark_line: dict[str, int] = field(default_factory=dict)  # benchmark -> its first line
    n_samples: int = 0
    #: A version's git tags (the ``tags`` column), by version name; versions without are left out.
    tags: dict[str, tuple[str, ...]] = field(default_factory=dict)


def parse_file(path: str | Path, *, fmt: str = "auto") -> ImportBatch:
    """Parse a canonical CSV or JSON-lines file (``fmt`` ``csv``, ``jsonl`` or ``auto``)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=str(p))
    if fmt == "auto":
        fmt = "jsonl" if p.suffix.lower() in (".jsonl", ".ndjson") or _starts_with_brace(p) else "csv"
    if fmt == "csv":
        frame, offset = _read_csv(p), 2
    elif fmt == "jsonl":
        frame, offset = _read_jsonl(p), 1
    else:
        raise InputError(f"unknown format {fmt!r} (csv or jsonl)", path=str(p))
    return _validate(frame, str(p), offset)


def _starts_with_brace(p: Path) -> bool:
    with p.open("rb") as fh:
        head = fh.read(64).removeprefix(b"\xef\xbb\xbf").lstrip()  # a byte-order mark is no content
    return head.startswith(b"{")


def _read_csv(p: Path):
    import pandas as pd  # type: ignore[import-untyped]

    where = str(p)
    gz = p.suffix.lower() == ".gz"
    if p.stat().st_size == 0:
        raise InputError("empty file (expected a header row: " + ",".join(REQUIRED) + ")", path=where, line=1)
    import csv
    import gzip
    import zlib

    # utf-8-sig: spreadsheets' "CSV UTF-8" starts with a byte-order mark.
    try:
        with (gzip.open(p, "rt", encoding="utf-8-sig", errors="replace", newline="") if gz
              else p.open("r", encoding="utf-8-sig", errors="replace", newline="")) as fh:
            header = [h.strip() for h in next(csv.reader(fh), [])]
    except csv.Error as exc:
        # A header field longer than the csv module allows (128 KiB): a line too long, said as
        # the check below says it (a probe: a file of one 140 KB field, or of NUL bytes, ended
        # in a traceback, and the server answered 500).
        _check_line_lengths(p, gz, where)
        raise InputError(f"unreadable header row ({exc})", path=where, line=1) from None
    except (OSError, EOFError, zlib.error) as exc:
        fake = isinstance(exc, gzip.BadGzipFile)
        what = "not a gzip-compressed file" if fake else "the gzip-compressed data is damaged"
        raise InputError(f"{what} ({exc})", path=where) from None
    _check_line_lengths(p, gz, where)
    for col in REQUIRED:
        if col not in header:
            raise InputError(f"missing column `{col}` (header must contain {','.join(REQUIRED)})",
                             path=where, line=1)
    unknown = [h for h in header if h not in COLUMNS]
    if unknown:
        raise InputError(f"unknown column `{unknown[0]}` (known: {','.join(COLUMNS)})", path=where, line=1)
    if len(set(header)) != len(header):
        raise InputError("a column appears twice in the header", path=where, line=1)
    # Text columns are read as plain objects and factorized below: pandas' "category" reading is
    # twice as slow here and turns names that look like numbers into numbers ('1.10' -> 1.1).
    dtypes: dict[str, type | str] = {c: object for c in header if c in _TEXT}
    numbers = [c for c in _NUMBERS if c in header]
    dtypes.update({c: "float64" for c in numbers})
    # One spare column catches rows with too many fields (pandas would drop them silently).  It
    # is read as a number: an empty column of 10 million Python objects costs seconds; an extra
    # field that is text fails the read, and the text read below finds it.
    names = [*header, "__extra__"]
    dtypes["__extra__"] = "float64"
    common = dict(names=names, header=None, skiprows=1, index_col=False, skip_blank_lines=False,
                  keep_default_na=False, skipinitialspace=True, encoding="utf-8-sig")
    try:
        frame = _pandas_csv(p, where, len(header), gz, dtype=dtypes,
                            na_values={c: [""] for c in (*numbers, "__extra__")}, **common)
    except ValueError:
        # A column that should be numeric holds text: find the first such line.  Every column is
        # read as text (a row with too many fields is found by this read too).
        raw_frame = _pandas_csv(p, where, len(header), gz, dtype=str, na_values=[""], **common)
        for col in numbers:
            raw = raw_frame[col]
            num = pd.to_numeric(raw, errors="coerce")
            bad = np.flatnonzero(num.isna().to_numpy() & raw.notna().to_numpy())
            if bad.size:
                i = int(bad[0])
                raise InputError(f"`{col}` is not a number: {shown(raw.iloc[i])}", path=where, line=i + 2) from None
        extra = np.flatnonzero(raw_frame["__extra__"].notna().to_numpy() & (raw_frame["__extra__"] != "").to_numpy())
        if extra.size:
            raise InputError(f"expected {len(header)} fields, found more", path=where,
                             line=int(extra[0]) + 2) from None
        raise
    extra = np.flatnonzero(frame["__extra__"].notna().to_numpy())
    if extra.size:
        raise InputError(f"expected {len(header)} fields, found more", path=where, line=int(extra[0]) + 2)
    frame = frame.drop(columns="__extra__")
    for col in header:
        if col in _TEXT:
            frame[col] = _factorize_text(frame[col])
    if "error" in frame:
        frame["error"] = _recode(frame["error"], _unescape)
    return frame


def _pandas_csv(p: Path, where: str, n_fields: int, gz: bool, **options):
    """``pandas.read_csv(p, **options)`` with its errors and warnings as InputErrors (a ValueError
    from a column that is not numeric is left to the caller)."""
    import warnings
    import zlib

    import pandas as pd

    with warnings.catch_warnings():
        # pandas warns, and drops the extra fields, when the first row is longer than the header.
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            return pd.read_csv(p, **options)
        except pd.errors.ParserWarning:
            raise InputError(f"expected {n_fields} fields, found more", path=where, line=2) from None
        except pd.errors.ParserError as exc:
            raise InputError(_parser_message(str(exc), n_fields), path=where, line=_parser_line(str(exc))) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason})", path=where) from None
        except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt gzip stream
            if not gz:
                raise
            raise InputError(f"the gzip-compressed data is damaged ({exc})", path=where) from None


def _check_line_lengths(p: Path, gz: bool, where: str) -> None:
    """An InputError at the first line longer than :data:`MAX_LINE_BYTES` (read in 1 MiB chunks:
    memory stays bounded whatever the file holds)."""
    import gzip
    import zlib

    if not gz and _no_long_line_mapped(p):
        return
    line, length = 1, 0  # the current line and its length so far
    try:
        with (gzip.open(p, "rb") if gz else p.open("rb")) as fh:
            while chunk := fh.read(_SCAN_CHUNK):
                first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
                if (first >= 0 and length + first <= MAX_LINE_BYTES and len(chunk) - last - 1 <= MAX_LINE_BYTES
                        and _no_long_line_between(chunk, first, last)):
                    # No line of this chunk is too long: count its lines at memchr speed.
                    line += chunk.count(b"\n")
                    length = len(chunk) - last - 1
                    continue
                breaks = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 0x0A)
                # The lengths of the lines in this chunk: the one open before it, those between
                # its line breaks, and the one still open after it (line, line + 1, ...).
                bounds = np.concatenate(([-1], breaks, [len(chunk)]))
                lengths = np.diff(bounds) - 1
                lengths[0] += length
                long = np.flatnonzero(lengths > MAX_LINE_BYTES)
                if long.size:
                    raise InputError(f"a line longer than {MAX_LINE_BYTES} bytes (a row of measurements is "
                                     "tens of bytes)", path=where, line=line + int(long[0]))
                line += breaks.size
                length = int(lengths[-1])
    except (OSError, EOFError, zlib.error) as exc:
        if not gz:
            raise InputError(f"cannot read: {exc}", path=where) from None
        raise InputError(f"the gzip-compressed data is damaged ({exc})", path=where) from None


def _no_long_line_mapped(p: Path) -> bool:
    """Whether no line of the file ``p`` is longer than :data:`MAX_LINE_BYTES`, found in the
    file mapped into memory (no copy, no count of its lines) by :func:`_no_long_line_between`;
    False means "look closer" (or that the file cannot be mapped), not that a line is too long."""
    import mmap

    try:
        with p.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            first, last = mm.find(b"\n"), mm.rfind(b"\n")
            return (first >= 0 and first <= MAX_LINE_BYTES and len(mm) - last - 1 <= MAX_LINE_BYTES
                    and _no_long_line_between(mm, first, last))
    except (OSError, ValueError):  # not a regular file, or empty
        return False


def _no_long_line_between(chunk: bytes | mmap.mmap, first: int, last: int) -> bool:
    """Whether no line between the line breaks at ``first`` and ``last`` of ``chunk`` can be
    longer than :data:`MAX_LINE_BYTES`: every window of half that many bytes, from ``first`` on,
    holds a line break (a longer line would cover one such window whole).  False means "look
    closer", not that a line is too long."""
    half = MAX_LINE_BYTES // 2
    return all(chunk.find(b"\n", w + 1, w + half + 1) >= 0 for w in range(first, last, half))


def _factorize_text(column):
    """A text column as a categorical with exact string categories; a blank cell is missing."""
    import pandas as pd

    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    names = [str(u) for u in uniques]
    if "" in names:
        k = names.index("")
        codes = np.where(codes == k, -1, np.where(codes > k, codes - 1, codes))
        del names[k]
    return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))


def _parser_line(msg: str) -> int | None:
    import re

    m = re.search(r"line (\d+)", msg)
    return int(m.group(1)) if m else None


def _parser_message(msg: str, n_fields: int) -> str:
    import re

    m = re.search(r"Expected (\d+) fields in line \d+, saw (\d+)", msg)
    if m:
        return f"expected {n_fields} fields, found {m.group(2)}"
    return msg.strip().splitlines()[-1]


def _read_jsonl(p: Path):
    import pandas as pd

    where = str(p)
    cols: dict[str, list] = {c: [] for c in COLUMNS}
    present: set[str] = set()
    n = 0
    with p.open("rb") as fh:
        # Read line by line, at most MAX_LINE_BYTES + 2 bytes at a time: memory stays bounded.
        while raw := fh.readline(MAX_LINE_BYTES + 2):
            n += 1
            if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES:
                raise InputError(f"a line longer than {MAX_LINE_BYTES} bytes (a measurement is tens of bytes)",
                                 path=where, line=n)
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text ({exc.reason})", path=where, line=n) from None
            if not line.strip():
                for c in COLUMNS:
                    cols[c].append(None)
                continue
            try:
                obj = jsonsafe.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc.msg}", path=where, line=n) from None
            if not isinstance(obj, dict):
                raise InputError("each line must be a JSON object", path=where, line=n)
            unknown = set(obj) - set(COLUMNS)
            if unknown:
                raise InputError(f"unknown field `{sorted(unknown)[0][:80]}`", path=where, line=n)
            present.update(obj)
            for c in COLUMNS:
                v = obj.get(c)
                if c in _NUMBERS and v is not None:
                    v = _json_number(v, c, where, n)
                elif c == "tags" and isinstance(v, list):
                    v = _json_tags(v, where, n)
                cols[c].append(v)
    if n == 0:
        raise InputError("empty file", path=where, line=1)
    for c in REQUIRED:
        # `iteration` and `value` may be absent from every line of a file whose runs all failed
        # (a failed run's row has neither): each row is checked for them below, as a CSV's is.
        if c not in present and not (c in ("iteration", "value") and "status" in present):
            raise InputError(f"missing field `{c}`", path=where, line=1)
        present.add(c)
    data: dict[str, np.ndarray | pd.Categorical] = {}
    for c in COLUMNS:
        if c not in present:
            continue
        if c in _NUMBERS:
            data[c] = np.array([np.nan if v is None else v for v in cols[c]], dtype=float)
        else:  # text: a missing field stays missing (code -1), anything else is its text
            data[c] = pd.Categorical([None if v is None else str(v) for v in cols[c]])
    return pd.DataFrame(data)


def _json_number(v, col: str, where: str, line: int) -> float:
    """A JSON number of a JSON-lines file as a finite float, else an InputError."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise InputError(f"`{col}` is not a number: {shown(v)}", path=where, line=line)
    try:
        x = float(v)  # an integer beyond the range of floats raises OverflowError
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise InputError(f"`{col}` must be a finite number, got {shown(v)}", path=where, line=line)
    return x


def _json_tags(v: list, where: str, line: int) -> str:
    """A JSON list of tag names as the ``tags`` column's text (names separated by spaces)."""
    if not all(isinstance(tag, str) for tag in v):
        raise InputError(f"`tags` must be a list of tag names (text), got {shown(v)}", path=where, line=line)
    spaced = next((tag for tag in v if " " in tag), None)
    if spaced is not None:
        raise InputError(f"`tags` holds {shown(spaced)}, which is not a git tag name", path=where, line=line)
    return " ".join(v)


def _tag_names(text: str | None) -> tuple[str, ...]:
    """The tags of a ``tags`` cell: the names between its spaces, each once, sorted."""
    return tuple(sorted({tag for tag in (text or "").split(" ") if tag}))


def _canonical_tags(text: str) -> str:
    """A ``tags`` cell with its tags sorted, each once: rows that list the same tags in another
    order hold the same text; a cell of spaces alone is blank."""
    return " ".join(_tag_names(text))


def _escape(text: str) -> str:
    """An ``error`` as the CSV writes it: on one line (``\\n``, ``\\r``, ``\\0``, ``\\\\``)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text) if any(ch in text for ch in _ESCAPES) else text


def _unescape(text: str) -> str:
    """The inverse of :func:`_escape` (a backslash before another character stays as it is)."""
    if "\\" not in text:
        return text
    back = {"n": "\n", "r": "\r", "0": "\0", "\\": "\\"}
    return _UNESCAPE.sub(lambda m: back.get(m.group(1), m.group(0)), text)


def _recode(column, fn):
    """A text column (a categorical) with ``fn`` applied to each distinct text, once; a text
    ``fn`` makes empty is blank (missing)."""
    import pandas as pd

    texts = [fn(str(c)) for c in column.cat.categories]
    names = [t for t in dict.fromkeys(texts) if t]
    index = {t: k for k, t in enumerate(names)}
    remap = np.array([index.get(t, -1) for t in texts] + [-1], dtype=np.int64)  # code -1 (blank) stays -1
    return pd.Categorical.from_codes(remap[column.cat.codes.to_numpy(np.int64)],
                                     categories=pd.Index(names, dtype=object))


def _validate(frame, where: str, offset: int) -> ImportBatch:
    n_rows = len(frame)
    # Blank lines are skipped; every other row must be complete.
    blank = np.ones(n_rows, dtype=bool)
    for c in frame.columns:
        blank &= frame[c].isna().to_numpy()
    keep = np.flatnonzero(~blank)
    if keep.size == 0:
        raise InputError("no measurements after the header", path=where, line=offset)
    lines = keep + offset
    if keep.size < n_rows:  # a copy of every column only when there are blank lines to drop
        frame = frame.iloc[keep].reset_index(drop=True)

    for col in ("status", "error"):
        if col in frame:  # an empty text (a JSON "") is no status, no error
            frame[col] = _recode(frame[col], str)
    failed = _failed_rows(frame, lines, where)  # runs that did not end ok: one row each, no sample
    measured = ~failed
    for c in REQUIRED:
        miss = frame[c].isna().to_numpy()
        if c in ("iteration", "value"):
            miss = miss & measured
        miss = np.flatnonzero(miss)
        if miss.size:
            raise InputError(f"missing value for `{c}`", path=where, line=int(lines[miss[0]]))

    value = frame["value"].to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(value) & measured)
    if bad.size:
        raise InputError(f"`value` must be a finite number, got {float(value[bad[0]])!r}", path=where,
                         line=int(lines[bad[0]]))
    ints = {}
    for c in ("run", "iteration"):
        x = frame[c].to_numpy(dtype=float)
        if c == "iteration":
            x = np.where(measured, x, 0.0)  # a failed run's row has none
        bad = np.flatnonzero((x < 0) | (x != np.floor(x)) | (x > 2**31 - 1))
        if bad.size:
            raise InputError(f"`{c}` must be a non-negative integer, got {_fmt(x[bad[0]])}", path=where,
                             line=int(lines[bad[0]]))
        ints[c] = x.astype(np.int64)
    tool = _tool_columns(frame, lines, where)  # None: the file says nothing of a tool

    def codes(col, default):
        if col in frame:
            cat = frame[col]
            miss = np.flatnonzero(cat.isna().to_numpy())
            if miss.size:
                raise InputError(f"missing value for `{col}`", path=where, line=int(lines[miss[0]]))
            return cat.cat.codes.to_numpy(np.int64), [str(x) for x in cat.cat.categories]
        return np.zeros(len(frame), dtype=np.int64), [default]

    b_code, b_names = codes("benchmark", None)
    v_code, v_names = codes("version", None)
    c_code, c_names = codes("config", DEFAULT_CONFIG)
    m_code, m_names = codes("machine", DEFAULT_MACHINE)
    for names, col in ((b_names, "benchmark"), (v_names, "version")):
        empty = [k for k, nm in enumerate(names) if not nm.strip()]
        if empty:
            code = b_code if col == "benchmark" else v_code
            raise InputError(f"`{col}` must not be blank", path=where,
                             line=int(lines[np.flatnonzero(code == empty[0])[0]]))

    v_seen, v_first = _unique_first(v_code)
    b_seen, b_first = _unique_first(b_code)
    versions = _per_key_attribute(frame, v_code, v_names, (v_seen, v_first), "timestamp", lines, where, "version")
    commits = _per_key_attribute(frame, v_code, v_names, (v_seen, v_first), "commit", lines, where, "version")
    for name, sha in commits.items():
        if sha is not None and not _SHA.fullmatch(sha):
            row = np.flatnonzero(v_code == v_names.index(name))[0]  # only on the error path
            raise InputError(f"`commit` must be a git commit's full sha (40 hex digits), got {shown(sha)}",
                             path=where, line=int(lines[row]))
    if "tags" in frame:  # one version's rows may list its tags in any order
        frame["tags"] = _recode(frame["tags"], _canonical_tags)
    tags = {name: _tag_names(text)
            for name, text in _per_key_attribute(frame, v_code, v_names, (v_seen, v_first), "tags", lines, where,
                                                 "version").items()}
    for name, given in tags.items():
        refused = next((tag for tag in given if len(tag) > _TAG_CHARS or _NOT_IN_TAG.search(tag)), None)
        if refused is not None:
            row = np.flatnonzero(v_code == v_names.index(name))[0]  # only on the error path
            raise InputError(f"`tags` holds {shown(refused)}, which is not a git tag name (a version's tags are "
                             f"separated by spaces; at most {_TAG_CHARS} characters each)",
                             path=where, line=int(lines[row]))
    units = _per_key_attribute(frame, b_code, b_names, (b_seen, b_first), "unit", lines, where, "benchmark")
    dirs = _per_key_attribute(frame, b_code, b_names, (b_seen, b_first), "direction", lines, where, "benchmark")
    for name, d in dirs.items():
        if d is not None and d not in DIRECTIONS:
            row = np.flatnonzero(b_code == b_names.index(name))[0]  # only on the error path
            raise InputError(f"`direction` must be 'lower' or 'higher', got {d!r}", path=where,
                             line=int(lines[row]))

    # Versions in first-appearance order (DESIGN.md) unless their timestamps say otherwise.
    batch = ImportBatch(records=[], versions={}, benchmarks={}, n_samples=int(np.count_nonzero(measured)))
    for pos in np.argsort(v_first, kind="stable"):
        name = v_names[v_seen[pos]]
        ts_text = versions[name]
        info: dict = {}
        if ts_text is not None:
            info = {"timestamp": _parse_time(ts_text, where, lines[v_first[pos]]), "timestamp_text": ts_text}
        sha = commits.get(name)
        if sha:
            info["commit"] = sha.lower()
        batch.versions[name] = info
        if tags.get(name):
            batch.tags[name] = tags[name]
    batch.benchmark_line = {b_names[c]: int(lines[i]) for c, i in zip(b_seen, b_first, strict=True)}
    for name in b_names:
        info = {}
        if units.get(name):
            info["unit"] = units[name]
        if dirs.get(name):
            info["direction"] = dirs[name]
        batch.benchmarks[name] = info

    run = ints["run"]
    it = ints["iteration"]
    if failed.any():
        rows = np.flatnonzero(failed)
        status, error = frame["status"], frame.get("error")
        for j in rows:
            rec = RunRecord(benchmark=b_names[b_code[j]], version=v_names[v_code[j]], run_index=int(run[j]),
                            samples=np.empty(0), config=c_names[c_code[j]], machine=m_names[m_code[j]],
                            status=str(status.iloc[j]),
                            stderr_tail=None if error is None or error.isna().iloc[j] else str(error.iloc[j]),
                            timing=None if tool is None else _timing(tool, j))
            run_key = (rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index)
            if run_key in batch.first_line:
                raise InputError(f"run {rec.run_index} of {rec.benchmark!r} at version {rec.version!r} is given "
                                 f"twice: a failed run has one row (the first on line {batch.first_line[run_key]})",
                                 path=where, line=int(lines[j]))
            batch.records.append(rec)
            batch.first_line[run_key] = int(lines[j])
        # The measured rows are grouped into runs below.
        ok = np.flatnonzero(measured)
        run, it, value, b_code, v_code, c_code, m_code, lines = (
            a[ok] for a in (run, it, value, b_code, v_code, c_code, m_code, lines))
        if tool is not None:
            tool = {col: x[ok] for col, x in tool.items()}
        if not ok.size:
            return batch

    # Group rows into runs: one integer key per (benchmark, version, config, machine, run).
    dims = [len(b_names), len(v_names), len(c_names), len(m_names), int(run.max()) + 1]
    key = np.zeros(len(run), dtype=np.int64)
    for code, size in zip((b_code, v_code, c_code, m_code, run), dims, strict=True):
        key = key * size + code
    span = int(it.max()) + 1
    order: np.ndarray | None  # None: the rows are in order already
    if np.prod([float(d) for d in dims]) * span < 2**62:
        full = key * span + it
        order = None if np.all(np.diff(full) > 0) else np.argsort(full, kind="stable")
    else:  # too many distinct keys for one integer: sort on two
        order = np.lexsort((it, key))

    def row_of(k) -> int:
        """The row of the ``k``-th value in sorted order."""
        return int(k) if order is None else int(order[k])

    # Rows of a campaign's log come in order: then the sorted views are the columns themselves.
    key_s, it_s, value_s = (key, it, value) if order is None else (key[order], it[order], value[order])
    same_run = key_s[1:] == key_s[:-1]
    dup = np.flatnonzero(same_run & (it_s[1:] == it_s[:-1]))
    if dup.size:
        i, j = row_of(dup[0]), row_of(dup[0] + 1)
        first, second = sorted((int(lines[i]), int(lines[j])))
        raise InputError(
            f"duplicate sample: benchmark {b_names[b_code[j]]!r}, version {v_names[v_code[j]]!r}, run "
            f"{run[j]}, iteration {it[j]} already on line {first}", path=where, line=second)
    gap = np.flatnonzero(same_run & (it_s[1:] != it_s[:-1] + 1))
    if gap.size:
        j = row_of(gap[0] + 1)
        raise InputError(
            f"iterations of run {run[j]} of {b_names[b_code[j]]!r} at version {v_names[v_code[j]]!r} must be "
            f"consecutive: iteration {it_s[gap[0]]} is followed by {it[j]}", path=where, line=int(lines[j]))

    tool_s = None
    if tool is not None:  # in run order, checked: one timing per run, a weight on each sample or on none
        tool_s = {col: x if order is None else x[order] for col, x in tool.items()}
        conflict = _tool_conflict(tool_s, same_run)
        if conflict is not None:
            col, k = conflict
            i, j = row_of(k), row_of(k + 1)  # two rows of one run, in iteration order
            if col == "weight":
                there, here = ("a `weight`", "none") if np.isnan(tool[col][j]) else ("no `weight`", "one")
                what = (f"has {there} on line {int(lines[i])} and {here} here: a run's samples have a weight each, "
                        "or none")
            else:
                what = (f"has two values of `{col}`: {_shown_number(tool[col][i])} (line {int(lines[i])}) and "
                        f"{_shown_number(tool[col][j])} (one per run, on each of its rows)")
            raise InputError(f"run {run[j]} of {b_names[b_code[j]]!r} at version {v_names[v_code[j]]!r} {what}",
                             path=where, line=int(lines[j]))

    starts = np.concatenate(([0], np.flatnonzero(~same_run) + 1))
    ends = np.concatenate((starts[1:], [len(key)]))
    for s, e in zip(starts, ends, strict=True):
        j = row_of(s)
        rec = RunRecord(benchmark=b_names[b_code[j]], version=v_names[v_code[j]], run_index=int(run[j]),
                        samples=value_s[s:e], config=c_names[c_code[j]], machine=m_names[m_code[j]],
                        first_iteration=int(it_s[s]))
        if tool_s is not None:
            weights = tool_s["weight"][s:e]
            rec = dataclasses.replace(rec, timing=_timing(tool_s, s),
                                      weights=None if np.isnan(weights[0]) else weights)
        where_first = int(lines[s] if order is None else lines[order[s:e]].min())
        failed_line = batch.first_line.get((rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index))
        if failed_line is not None:
            raise InputError(f"run {rec.run_index} of {rec.benchmark!r} at version {rec.version!r} has samples "
                             f"and a failed row (line {failed_line}): a failed run has no samples",
                             path=where, line=where_first)
        batch.records.append(rec)
        batch.first_line[(rec.benchmark, rec.version, rec.config, rec.machine, rec.run_index)] = where_first
    return batch


def _failed_rows(frame, lines, where: str) -> np.ndarray:
    """Which rows are runs that did not end ``ok`` (their ``status``), checked: a known status,
    no ``iteration`` or ``value`` on them, no ``error`` on a measured row."""
    from ..model import RUN_STATUSES

    failed: np.ndarray = np.zeros(len(frame), dtype=bool)
    if "status" in frame:
        status = frame["status"]
        names = [str(x) for x in status.cat.categories]
        unknown = [k for k, name in enumerate(names) if name not in RUN_STATUSES]
        codes = status.cat.codes.to_numpy(np.int64)
        if unknown:
            row = np.flatnonzero(np.isin(codes, unknown))[0]
            raise InputError(f"`status` must be one of {', '.join(RUN_STATUSES)} (blank: ok), got "
                             f"{shown(names[codes[row]])}", path=where, line=int(lines[row]))
        not_ok = [k for k, name in enumerate(names) if name != "ok"]
        failed = np.isin(codes, not_ok)
    for col in ("iteration", "value", "weight"):
        if col not in frame:
            continue
        given = np.flatnonzero(failed & frame[col].notna().to_numpy())
        if given.size:
            row = given[0]
            raise InputError(f"a run with status {str(frame['status'].iloc[row])!r} has no samples: its row has no "
                             f"`{col}`", path=where, line=int(lines[row]))
    if "error" in frame:
        stray = np.flatnonzero(~failed & frame["error"].notna().to_numpy())
        if stray.size:
            raise InputError("`error` is for a run whose `status` is not ok", path=where, line=int(lines[stray[0]]))
    return failed


def _tool_columns(frame, lines, where: str) -> dict[str, np.ndarray] | None:
    """The tool's columns (:data:`TOOL_RUN` and ``weight``) as float arrays, NaN where blank (a
    column the file has not is all blank), checked row by row: ``processes`` a non-negative
    integer, the seconds and the weight finite and non-negative, the timing columns all given or
    all blank.  None when the file gives none of them (what most files hold: nothing to do)."""
    given = [c for c in TOOL_COLUMNS if c in frame and frame[c].notna().to_numpy().any()]
    if not given:
        return None
    blank = np.full(len(frame), np.nan)
    tool = {c: frame[c].to_numpy(dtype=float) if c in given else blank for c in TOOL_COLUMNS}
    for col in given:
        x = tool[col]
        if col == "processes":
            bad = np.flatnonzero(~np.isnan(x) & ((x < 0) | (x != np.floor(x)) | (x > 2**31 - 1)))
            need = "a non-negative integer"
        else:
            bad = np.flatnonzero(~np.isnan(x) & (~np.isfinite(x) | (x < 0)))
            need = "a finite, non-negative number"
        if bad.size:
            raise InputError(f"`{col}` must be {need}, got {_shown_number(x[bad[0]])}", path=where,
                             line=int(lines[bad[0]]))
    has = np.stack([~np.isnan(tool[c]) for c in TOOL_RUN])
    partial = np.flatnonzero(has.any(axis=0) & ~has.all(axis=0))
    if partial.size:
        row = partial[0]
        missing = next(c for k, c in enumerate(TOOL_RUN) if not has[k, row])
        raise InputError(f"`{missing}` is blank: a run's {', '.join(f'`{c}`' for c in TOOL_RUN[:-1])} and "
                         f"`{TOOL_RUN[-1]}` are given together, or none of them", path=where, line=int(lines[row]))
    return tool


def _tool_conflict(tool_s: dict[str, np.ndarray], same_run: np.ndarray) -> tuple[str, int] | None:
    """The first place where two consecutive rows of one run (``same_run[k]``: rows ``k`` and
    ``k + 1``, in run order) disagree on the tool's columns: another timing, or a weight on one
    and not the other; as (column, ``k``), or None."""
    for col in TOOL_COLUMNS:
        x = tool_s[col]
        blank = np.isnan(x)
        if col == "weight":
            differs = blank[1:] != blank[:-1]
        else:
            differs = (x[1:] != x[:-1]) & ~(blank[1:] & blank[:-1])
        k = np.flatnonzero(same_run & differs)
        if k.size:
            return col, int(k[0])
    return None


def _timing(tool: dict[str, np.ndarray], row: int) -> ToolTiming | None:
    """The :class:`ToolTiming` of the run whose row is ``row`` of ``tool``; None where blank."""
    processes, warmup, iteration = (tool[c][row] for c in TOOL_RUN)
    if np.isnan(processes):
        return None
    return ToolTiming(int(processes), float(warmup), float(iteration))


def _shown_number(x: float) -> str:
    """A value of a tool's column in an error: ``blank`` for NaN (a blank cell), a whole number
    without its ``.0``."""
    if np.isnan(x):
        return "blank"
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else repr(float(x))


def _unique_first(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(code, return_index=True)``: the distinct codes, sorted, and the row where each
    first occurs; by hashing (pandas), not by sorting millions of rows."""
    import pandas as pd

    first = np.flatnonzero(~pd.Index(code).duplicated(keep="first"))
    seen = code[first]
    order = np.argsort(seen, kind="stable")
    return seen[order], first[order]


def _per_key_attribute(frame, code, names, seen_first, col, lines, where, owner) -> dict[str, str | None]:
    """The value of ``col`` for each ``owner`` (it must not differ between rows of one owner);
    ``seen_first`` is :func:`_unique_first` of ``code``."""
    import pandas as pd

    if col not in frame:
        return {n: None for n in names}
    attr = frame[col]
    a_code = attr.cat.codes.to_numpy(np.int64)  # -1 for a blank cell
    a_names = [str(x) for x in attr.cat.categories]
    owners, first = seen_first
    if len(a_names) == 1 and a_code.min() >= 0:  # one value in the whole column (a unit, a direction)
        return {names[o]: a_names[0] for o in owners}
    # One value per owner when there are as many distinct (owner, value) pairs as owners (a hash
    # of the rows); otherwise every row is compared with its owner's first, to say where.
    pairs = code * (len(a_names) + 1) + (a_code + 1)
    if len(pd.unique(pairs)) == len(owners):
        return {names[o]: None if a_code[f] < 0 else a_names[a_code[f]] for o, f in zip(owners, first, strict=True)}
    first_of = np.zeros(len(names), dtype=np.int64)
    first_of[owners] = first
    # One pass: every row against the first row of its owner.
    conflict = np.flatnonzero(a_code != a_code[first_of[code]])

    def show(row):
        return None if a_code[row] < 0 else a_names[a_code[row]]

    if conflict.size:
        row = conflict[0]
        name, ref = names[code[row]], first_of[code[row]]
        raise InputError(f"{owner} {name!r} has two values of `{col}`: {show(ref)!r} (line "
                         f"{int(lines[ref])}) and {show(row)!r}", path=where, line=int(lines[row]))
    return {names[o]: show(f) for o, f in zip(owners, first, strict=True)}


def _parse_time(text: str, where: str, line) -> datetime:
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"`timestamp` is not ISO 8601: {text!r}", path=where, line=int(line)) from None
    if stamp.tzinfo is not None:
        try:  # the store orders versions in UTC
            stamp = stamp.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:
            raise InputError(f"`timestamp` is out of range in UTC: {text!r}", path=where, line=int(line)) from None
    return stamp


def _fmt(x: float) -> str:
    return str(int(x)) if np.isfinite(x) and x == int(x) else repr(float(x))


def write_csv(runs: Iterable[StoredRun], path_or_buffer: str | Path | TextIO) -> int:
    """Write runs as canonical CSV, in the order given; return the number of samples written.

    Parameters
    ----------
    runs : iterable of StoredRun
        Runs with their samples, warm-up included (:meth:`regbench.store.Store.iter_raw_runs`
        gives every stored run in history order).
    path_or_buffer : str, Path or text file
        Where to write.

    Only measured samples are written (warm-up iterations are left out, the first written
    iteration keeps its number), so importing the file reproduces every analysis.  A run that did
    not end ``ok`` is one row with its ``status`` and ``error`` (its stderr tail, the last
    8192 characters at most, line breaks written ``\\n``) and neither ``iteration`` nor
    ``value``.  What the tool said of a run (its :class:`~regbench.model.StoredRun`'s ``timing``
    and ``weights``) is in the :data:`TOOL_COLUMNS`, ``processes``, ``warmup_seconds`` and
    ``iteration_seconds`` (on each of its rows) and ``weight`` (each measured sample's), written
    when one of the runs has either: without, the file is what regbench wrote before these
    columns, which an older regbench (a team's server) reads, and no blank columns cost an
    import time.  Floats are written with ``repr``, which round-trips exactly.
    """
    runs = list(runs)
    tool = any(r.timing is not None or r.weights is not None for r in runs)
    if isinstance(path_or_buffer, str | Path):
        with open(path_or_buffer, "w", encoding="utf-8", newline="") as out:
            return _write_runs(runs, out, tool=tool)
    return _write_runs(runs, path_or_buffer, tool=tool)


def _write_runs(runs: Iterable[StoredRun], out: TextIO, *, tool: bool) -> int:
    """The CSV of ``runs``; with ``tool``, the :data:`TOOL_COLUMNS` too."""
    out.write(",".join(COLUMNS if tool else COLUMNS[:-len(TOOL_COLUMNS)]) + "\n")
    n = 0
    for r in runs:
        fixed = ",".join((_csv(r.timestamp_text or ""), _csv(r.config), _csv(r.machine), _csv(r.unit),
                          _csv(r.direction), r.commit or "", _csv(" ".join(r.tags))))
        head = f"{_csv(r.benchmark)},{_csv(r.version)},{r.run_index},"
        tm = r.timing  # the tool's timing: the same on each of the run's rows
        timing = "" if not tool else ",,,," if tm is None else \
            f",{tm.processes},{float(tm.warmup_seconds)!r},{float(tm.iteration_seconds)!r},"
        if r.status != "ok":  # one row: its status and why, no sample (analyses use none of a failed run's)
            error = _escape((r.stderr_tail or "")[-ERROR_CHARS:])
            out.write(f"{head},,{fixed},{r.status},{_csv(error)}{timing}\n")
            continue
        vals = cast("list[float]", r.samples[r.warmup:].tolist())
        if not vals:
            continue
        start = r.first_iteration + r.warmup
        if tool and r.weights is not None and r.weights.size == r.samples.size:
            weights = cast("list[float]", r.weights[r.warmup:].tolist())
            out.write("".join(f"{head}{start + i},{float(v)!r},{fixed},,{timing}{float(w)!r}\n"
                              for i, (v, w) in enumerate(zip(vals, weights, strict=True))))
        else:
            tail = f",,{timing}\n"
            out.write("".join(f"{head}{start + i},{float(v)!r},{fixed}{tail}" for i, v in enumerate(vals)))
        n += len(vals)
    return n


def _csv(text: str) -> str:
    if any(ch in text for ch in ',"\n\r') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text
