"""Fuzzed inputs for every parser and for ``regbench.toml``, shared by tests/test_fuzz_inputs.py
(a small fixed budget in the suite) and benchmarks/fuzz_inputs.py (a long run that counts).

Each parser gets hypothesis strategies of files: its golden files (tests/golden/adapters) and
small valid documents, mutated at three levels:

* **bytes**: flips, insertions of hostile tokens, deletions, truncation, duplication;
* **JSON trees** (JSON formats): a random node replaced by a hostile value (deep nesting,
  integers beyond floats, ``1e400``, NaN, wrong types, NUL and non-ASCII text, huge arrays);
* **rows** (canonical CSV and JSON lines): rows of random, often wrong, fields.

The property, checked by :func:`outcome`: a parser returns its result or raises regbench's own
one-line error (:class:`~regbench.errors.RegbenchError`), never any other exception.
"""

from __future__ import annotations

import gzip
import json
import math
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from regbench.errors import RegbenchError

GOLDEN = Path(__file__).parent / "golden" / "adapters"

#: Tokens that broke parsers before (the reliability issue) or could: inserted into bytes and text.
HOSTILE_TOKENS = [
    b"[" * 1000, b"{\"a\":" * 990, b"1e400", b"-1e400", str(2**64).encode(), b"9" * 5000, b"NaN", b"Infinity",
    b"-0", b"\x00", b"\xff\xfe", b"\xc3", b"\\ud800", b"\"", b",", b"\n", b"\r", b"\r\n", b"\t", b"null",
    b"true", b"[]", b"{}", b"\xef\xbb\xbf", b"1_000", b"0x10", b"1" * 400, b",,,,,,", b"\"\"\"",
]
_ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(
    ["\x00", "\n", ",", "\"", "\\", "\u2028", "\ufeff", "é", "🖥"])


def _hostile_value(depth: int = 0) -> st.SearchStrategy:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.sampled_from([2**64, -(2**63) - 1, 10**400, 10**4400]),
        st.floats(), st.text(_ALPHABET, max_size=20), st.sampled_from(["", "ns", "s", "thrpt", "iteration",
                                                                        "aggregate", "x" * 10_000]),
    )
    if depth >= 2:
        return scalars
    return st.one_of(
        scalars,
        st.lists(_hostile_value(depth + 1), max_size=4),
        st.dictionaries(st.text(_ALPHABET, max_size=8), _hostile_value(depth + 1), max_size=4),
        st.integers(1, 1100).map(lambda n: _Nested(n)),
    )


@dataclass(frozen=True)
class _Nested:
    """A value nested ``depth`` arrays deep (written by :func:`_dumps` without recursion)."""

    depth: int


def _dumps(value) -> str:
    """JSON text of a tree that may hold :class:`_Nested` and non-finite floats (as ``1e400``)."""
    if isinstance(value, _Nested):
        return "[" * value.depth + "]" * value.depth
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("1e400" if value > 0 else "-1e400")
    if isinstance(value, list):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + _dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**4000:
        return "9" * 4400
    return json.dumps(value)


def _paths(tree, limit: int = 400) -> list[tuple]:
    """Paths to the nodes of a JSON tree (breadth first, at most ``limit``)."""
    out: list[tuple] = [()]
    i = 0
    while i < len(out) and len(out) < limit:
        node = tree
        for step in out[i]:
            node = node[step]
        if isinstance(node, dict):
            out.extend(out[i] + (k,) for k in node)
        elif isinstance(node, list):
            out.extend(out[i] + (j,) for j in range(len(node)))
        i += 1
    return out[:limit]


@st.composite
def mutated_json(draw, seed: str) -> bytes:
    """A JSON document ``seed`` with one to three nodes replaced by hostile values."""
    tree = json.loads(seed)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(tree)
        path = draw(st.sampled_from(paths))
        value = draw(_hostile_value())
        if not path:
            tree = value
            break
        node = tree
        for step in path[:-1]:
            node = node[step]
        if draw(st.booleans()) and isinstance(node, dict):
            node[draw(st.text(_ALPHABET, max_size=6))] = value  # a new key
        else:
            node[path[-1]] = value
        if isinstance(tree, _Nested):
            break
    return _dumps(tree).encode("utf-8", "surrogatepass")


@st.composite
def mutated_bytes(draw, seed: bytes) -> bytes:
    """``seed`` with one to four byte-level edits."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "token", "delete", "truncate", "duplicate"]))
        at = draw(st.integers(0, len(data)))
        if op == "flip" and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "token":
            data[at:at] = draw(st.sampled_from(HOSTILE_TOKENS))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        elif op == "truncate":
            del data[at:]
        elif op == "duplicate":
            data[at:at] = data[at:at + draw(st.integers(1, 200))]
    return bytes(data)


# ----------------------------------------------------------------------------- canonical rows
_FIELD = st.one_of(
    st.sampled_from(["a", "v1", "v2", "0", "1", "2", "-1", "1.5", "2.5", "1e400", "nan", "inf", "x", "", " ",
                     "2024-01-01", "2024-13-45T99:00", "lower", "higher", "ns", str(2**64), "1" * 400,
                     "\"q,\"", "é", "\x00"]),
    st.text(_ALPHABET, max_size=10),
)
_COLUMNS = ["benchmark", "version", "run", "iteration", "value", "timestamp", "config", "machine", "unit",
            "direction", "processes", "warmup_seconds", "iteration_seconds", "weight"]


@st.composite
def canonical_csv(draw) -> bytes:
    header = draw(st.lists(st.sampled_from(_COLUMNS + ["", "extra"]), min_size=4, max_size=8)
                  | st.just(_COLUMNS[:5]))
    rows = draw(st.lists(st.lists(_FIELD, min_size=max(0, len(header) - 2), max_size=len(header) + 2),
                         max_size=8))
    text = ",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def canonical_runs(draw) -> list[dict]:
    """Rows that are mostly valid: whole runs with consecutive iterations, and the optional
    columns sometimes inconsistent, so that validation past the syntax is reached."""
    rows: list[dict] = []
    for _ in range(draw(st.integers(1, 4))):
        key = {"benchmark": draw(st.sampled_from(["a", "b", "1.10", "é,\"x\""])),
               "version": draw(st.sampled_from(["v1", "v2", "007"])), "run": draw(st.integers(0, 2))}
        extra = draw(st.dictionaries(st.sampled_from(_COLUMNS[5:]), st.sampled_from(
            ["2024-01-01", "2024-01-01T00:00:00+02:00", "x", "lower", "higher", "ns", "cfg", "", "2", "0.5", "-1"]),
            max_size=3))
        first = draw(st.integers(0, 3))
        for i in range(draw(st.integers(1, 4))):
            value = draw(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e308, -0.0, 5e-324]))
            rows.append({**key, "iteration": first + i, "value": value, **extra})
    return rows


@st.composite
def canonical_csv_runs(draw) -> bytes:
    rows = draw(canonical_runs())
    header = list(dict.fromkeys(k for r in rows for k in r))
    def cell(v) -> str:
        text = repr(v) if isinstance(v, float) else str(v)
        return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text
    return (",".join(header) + "\n" + "".join(",".join(cell(r.get(h, "")) for h in header) + "\n"
                                              for r in rows)).encode()


@st.composite
def canonical_jsonl(draw) -> bytes:
    def row():
        return st.dictionaries(st.sampled_from(_COLUMNS + ["extra"]), _hostile_value(1) | _FIELD
                               | st.integers(0, 3), min_size=3, max_size=7)
    if draw(st.booleans()):
        rows = draw(canonical_runs())
    else:
        rows = draw(st.lists(row() | st.just({"benchmark": "a", "version": "v", "run": 0, "iteration": 0,
                                              "value": 1.0}), max_size=6))
    return "".join(_dumps(r) + "\n" for r in rows).encode("utf-8", "surrogatepass")


# ----------------------------------------------------------------------------- the parsers
def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def _golden(*names: str) -> list[bytes]:
    return [_read(GOLDEN / n) for n in names]


_CANONICAL_SEED = (b"benchmark,version,run,iteration,value,timestamp,unit,direction\n"
                   b"a,v1,0,0,1.5,2024-01-01T00:00:00Z,s,lower\na,v1,0,1,1.6,2024-01-01T00:00:00Z,s,lower\n"
                   b"a,v2,0,0,1.7,2024-01-02,s,lower\n")
_JSONL_SEED = (b'{"benchmark": "a", "version": "v1", "run": 0, "iteration": 0, "value": 1.5}\n'
               b'{"benchmark": "a", "version": "v1", "run": 0, "iteration": 1, "value": 1.25, "unit": "s"}\n')
_BMF_SEED = b'{"sort": {"latency": {"value": 5120.0, "lower_value": 5001.5, "upper_value": 5240.2}}}'
_CARGO_SEED = (b"running 2 tests\ntest a ... bench:       1,026.85 ns/iter (+/- 470.14)\n"
               b"test b ... bench:          25 ns/iter (+/- 1) = 4096 MB/s\n")


@dataclass(frozen=True)
class Target:
    """A parser under test: its name, the file name it reads, its seeds and how to call it."""

    name: str
    filename: str
    seeds: tuple[bytes, ...]
    call: Callable[[Path], object]
    json: bool = False
    rows: st.SearchStrategy | None = None

    def inputs(self) -> st.SearchStrategy[bytes]:
        seeds = st.sampled_from(self.seeds)
        parts = [seeds.flatmap(mutated_bytes)]
        if self.json:
            parts.append(seeds.flatmap(lambda s: mutated_json(s.decode("utf-8-sig"))))
        if self.rows is not None:
            parts.append(self.rows)
        return st.one_of(*parts)


def _adapter(fmt: str) -> Callable[[Path], object]:
    def call(path: Path) -> object:
        from regbench.adapters.base import get_adapter

        return get_adapter(fmt).parse(path)
    return call


def _canonical(fmt: str) -> Callable[[Path], object]:
    def call(path: Path) -> object:
        from regbench.adapters import parse_file

        return parse_file(path, fmt=fmt)
    return call


def _sniff(path: Path) -> object:
    from regbench.ingest import sniff_file

    return sniff_file(str(path))


TARGETS: dict[str, Target] = {t.name: t for t in [
    Target("go", "bench.txt", tuple(_golden("go/bench.txt", "go/bench-v.txt")), _adapter("go")),
    Target("go-json", "bench.json", tuple(_golden("go/bench.json")), _adapter("go-json"), json=False),
    Target("google-benchmark", "gb.json", tuple(_golden("google-benchmark/single.json")),
           _adapter("google-benchmark"), json=True),
    Target("hyperfine", "hf.json", tuple(_golden("hyperfine/two-commands.json", "hyperfine/failure.json")),
           _adapter("hyperfine"), json=True),
    Target("jmh", "jmh.json", tuple(_golden("jmh/sample.json")), _adapter("jmh"), json=True),
    Target("criterion", "sample.json", tuple(_golden("criterion/results/sum_plain/new/sample.json")),
           _adapter("criterion"), json=True),
    Target("cargo-bench", "bench.txt", (_CARGO_SEED, *_golden("cargo-bench/repeated.txt")), _adapter("cargo-bench")),
    Target("pytest-benchmark", "pb.json", tuple(_golden("pytest-benchmark/benchmark-json.json")),
           _adapter("pytest-benchmark"), json=True),
    Target("pyperf", "pyperf.json", tuple(_golden("pyperf/suite.json")), _adapter("pyperf"), json=True),
    Target("asv", "asv.json", tuple(_golden("asv/results/golden/samples.json")), _adapter("asv"), json=True),
    Target("bmf", "bmf.json", (_BMF_SEED, *_golden("bmf/bench.json")), _adapter("bmf"), json=True),
    Target("csv", "data.csv", (_CANONICAL_SEED,), _canonical("csv"), rows=canonical_csv() | canonical_csv_runs()),
    Target("jsonl", "data.jsonl", (_JSONL_SEED,), _canonical("jsonl"), rows=canonical_jsonl()),
    Target("sniff", "input", (_CANONICAL_SEED, _JSONL_SEED, _BMF_SEED, _CARGO_SEED,
                              *_golden("go/bench.json", "jmh/sample.json", "hyperfine/scan.json",
                                       "google-benchmark/single.json")), _sniff, json=False),
]}


# ----------------------------------------------------------------------------- configurations
_KEYS = {
    "project": ["name", "repo", "build", "build_timeout", "store", "python", "bogus"],
    "defaults": ["runs", "iterations", "warmup", "timeout", "unit", "direction", "min_time", "plan", "target",
                 "budget", "pilot", "pass_env", "max_samples"],
    "benchmark": ["name", "command", "python", "cwd", "env", "output", "alerts", "format", "measures", "runs",
                  "iterations", "warmup", "timeout", "unit", "direction", "min_time", "plan", "target",
                  "budget", "pilot", "pass_env", "max_samples"],
    "noise": ["pin", "aslr", "ramdisk", "env_size", "quiet_load", "quiet_wait", "quiet"],
    "detect": ["confirm", "confirm_budget", "confirm_max_pairs", "retire_after", "retire_lag_factor"],
    "alerts": ["suppress"],
    "notify": ["type", "name", "kinds", "path", "url", "url_env", "timeout", "retries", "headers", "host",
               "port", "from", "to", "starttls", "user", "password_env", "title"],
}
_TOML_SCALAR = st.one_of(
    st.integers(-3, 12), st.sampled_from([0, 1, 2**63 - 1, -(2**63), 3_000_000, 10**12, 100000000000000000000]),
    st.floats(), st.booleans(), st.text(_ALPHABET, max_size=12),
    st.sampled_from(["auto", "lines", "jsonl", "adaptive", "fixed", "lower", "higher", "go", "jmh", "wait",
                     "warn", "0-3", "1-99999999999", "none", "10m", "1e999s", "markdown", "webhook", "email",
                     "terminal", "json", "a=b", "x\x00y", "http://x", "cpu", "maxrss", "m:f", "."]),
)
_TOML_VALUE = st.recursive(_TOML_SCALAR, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(_ALPHABET, min_size=1, max_size=6) | st.sampled_from(
                               ["PATH", "A=B", ""]), inner, max_size=3), max_leaves=6)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == math.inf else "-inf" if v == -math.inf else repr(v))
    if isinstance(v, str):
        return json.dumps(v)  # JSON's escapes are TOML's basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"


@st.composite
def toml_table(draw, table: str) -> dict:
    keys = draw(st.lists(st.sampled_from(_KEYS[table]), max_size=6, unique=True))
    out = {k: draw(_TOML_VALUE) for k in keys}
    if table == "benchmark" and draw(st.booleans()):
        out.setdefault("name", draw(st.sampled_from(["a", "b", "a/b", " "])))
        out.setdefault("command", ["true"])
    return out


@st.composite
def configuration(draw) -> bytes:
    """The text of a ``regbench.toml``: tables with known keys and hostile values, sometimes
    mutated at the byte level, sometimes nested deeply."""
    lines: list[str] = []
    for table in draw(st.lists(st.sampled_from(["project", "defaults", "noise", "detect", "alerts"]), max_size=4,
                               unique=True)):
        lines.append(f"[{table}]")
        lines.extend(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in draw(toml_table(table)).items())
    for array in ("benchmark", "notify"):
        for _ in range(draw(st.integers(0, 2))):
            lines.append(f"[[{array}]]")
            lines.extend(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in draw(toml_table(array)).items())
    if draw(st.integers(0, 9)) == 0:
        lines.append("deep = " + "[" * 1000 + "]" * 1000)
    text = "\n".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 3)) == 0:
        text = draw(mutated_bytes(text))
    return text


def load_configuration(path: Path) -> object:
    from regbench.config import load_config

    return load_config(path)


# ----------------------------------------------------------------------------- the property
#: Longest acceptable error line (the file's path included).
MAX_ERROR_CHARS = 1200


def outcome(call: Callable[[Path], object], path: Path) -> tuple[str, str]:
    """``("accepted", "")``, ``("error", message)`` for a one-line RegbenchError, or
    ``("traceback", text)`` for anything else (another exception, or a message that is not one
    line of at most :data:`MAX_ERROR_CHARS` characters)."""
    try:
        call(path)
    except RegbenchError as exc:
        message = str(exc)
        if "\n" in message or "\r" in message or len(message) > MAX_ERROR_CHARS:
            return "traceback", f"not a one-line error ({len(message)} characters): {message[:300]!r}"
        return "error", message
    except Exception:  # noqa: BLE001 - what the property is about
        return "traceback", traceback.format_exc()
    return "accepted", ""
