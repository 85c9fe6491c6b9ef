"""A long fuzz run of every parser and of ``regbench.toml`` loading, with counts.

The strategies are tests/fuzztools.py's (the suite runs them with a small fixed budget in
tests/test_fuzz_inputs.py).  For each parser it prints how many inputs were tried, accepted,
refused with a one-line error, and how many gave anything else (a traceback); the first
tracebacks of each parser are printed after the table.  The target is zero tracebacks.

    python benchmarks/fuzz_inputs.py                         # 10,000 inputs a parser, 1,000 configurations
    python benchmarks/fuzz_inputs.py --examples 500 --configs 200 --only csv,jmh
    python benchmarks/fuzz_inputs.py --seconds 180           # stop each parser at its share of 180 s

Needs the test extra (hypothesis) and is run from the repository's root.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from fuzztools import TARGETS, configuration, load_configuration, outcome  # noqa: E402


class _OutOfTime(Exception):
    pass


def fuzz(name: str, strategy, call, filename: str, examples: int, seconds: float | None,
         rng_seed: int) -> tuple[Counter, list[str], float]:
    counts: Counter = Counter()
    tracebacks: list[str] = []
    start = time.monotonic()

    @seed(rng_seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=strategy)
    def run(data: bytes) -> None:
        if seconds is not None and time.monotonic() - start > seconds:
            raise _OutOfTime
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / filename
            path.write_bytes(data)
            kind, text = outcome(call, path)
        counts[kind] += 1
        if kind == "traceback" and len(tracebacks) < 3:
            tracebacks.append(text)

    try:
        run()
    except _OutOfTime:
        pass
    return counts, tracebacks, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--examples", type=int, default=10_000, help="inputs per parser (default 10,000)")
    ap.add_argument("--configs", type=int, default=1_000, help="configurations (default 1,000)")
    ap.add_argument("--only", default="", help="comma-separated parsers (and `config`) to run")
    ap.add_argument("--seconds", type=float, default=None,
                    help="time budget of the whole run, shared equally (default: none)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or [*sorted(TARGETS), "config"]
    share = args.seconds / len(names) if args.seconds else None
    rows, failures = [], {}
    for name in names:
        if name == "config":
            counts, tbs, secs = fuzz(name, configuration(), load_configuration, "regbench.toml", args.configs,
                                     share, args.seed)
        else:
            t = TARGETS[name]
            counts, tbs, secs = fuzz(name, t.inputs(), t.call, t.filename, args.examples, share, args.seed)
        tried = sum(counts.values())
        rows.append((name, tried, counts["accepted"], counts["error"], counts["traceback"], secs))
        print(f"{name}: {tried} tried, {counts['accepted']} accepted, {counts['error']} one-line errors, "
              f"{counts['traceback']} tracebacks ({secs:.0f} s)", file=sys.stderr, flush=True)
        if tbs:
            failures[name] = tbs
    print("| parser | inputs tried | accepted | one-line errors | tracebacks | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, tried, acc, err, tb, secs in rows:
        print(f"| {name} | {tried} | {acc} | {err} | {tb} | {secs:.0f} |")
    for name, tbs in failures.items():
        for text in tbs:
            print(f"\n--- {name}\n{text}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
