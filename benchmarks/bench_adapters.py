"""Speed and memory of the tool adapters on large files (issue target: 100 MB in < 10 s, < 1 GB).

Usage::

    python benchmarks/bench_adapters.py                 # every section, 100 MB files
    python benchmarks/bench_adapters.py --mb 10         # smaller files, a smoke check
    python benchmarks/bench_adapters.py --sections google-benchmark

Each section builds a synthetic file of about ``--mb`` megabytes from a golden file captured
from the real tool (tests/golden/adapters/TOOL/), cached in ``--workdir``, then parses it with
the adapter in a fresh Python process, ``--reps`` times.  Reported: wall seconds (median and
min, parse only, from inside the child), the child's peak resident memory (``ru_maxrss``, the
whole process: interpreter, numpy and the result included) and the number of samples read.

A section is a :class:`Section` in :data:`SECTIONS`: the format and its module, a function
``make(golden_dir, target_bytes, out_path) -> None`` and the golden folder; to add a tool, write
its ``make_*`` and append one entry.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "adapters"
TARGET_SECONDS = 10.0
TARGET_BYTES = 1 << 30


@dataclass(frozen=True)
class Section:
    fmt: str  # adapter name
    module: str  # module of regbench.adapters that registers it
    make: Callable[[Path, int, Path], None]
    golden: str  # folder under tests/golden/adapters
    # A golden file in that folder, parsed to measure the memory of the imports alone (default:
    # the folder's smallest .json).
    tiny: str = ""


def make_google_benchmark(golden: Path, target: int, out: Path) -> None:
    """Repeat the golden file's benchmarks under new names (``BM_x/64#17``) until ``target`` bytes.

    Each copy keeps the repetition entries and the aggregates after them, as the library writes
    them, in the library's own layout (two-space indent, one key per line).
    """
    doc = json.loads((golden / "repetitions.json").read_text())
    entries = doc["benchmarks"]
    head = json.dumps({"context": doc["context"]}, indent=2)[:-2] + ',\n  "benchmarks": [\n'
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(head)
        written, copy, first = len(head), 0, True
        while written < target:
            for e in entries:
                e = dict(e, name=f"{e['name']}#{copy}", run_name=f"{e['run_name']}#{copy}")
                text = ("" if first else ",\n") + "    " + json.dumps(e, indent=2).replace("\n", "\n    ")
                first = False
                fh.write(text)
                written += len(text)
            copy += 1
        fh.write("\n  ]\n}\n")


SECTIONS: dict[str, Section] = {
    "google-benchmark": Section("google-benchmark", "googlebench", make_google_benchmark, "google-benchmark",
                                "repetitions.json"),
}


def make_jmh(golden: Path, target: int, out: Path) -> None:
    """Repeat the JMH golden files' benchmarks (thrpt and avgt with the GC profiler, and sample
    mode with its histograms) under new names (``pkg.Class.method_17``) until ``target`` bytes,
    in JMH's own layout (a JSON array, four-space indent)."""
    entries = [e for name in ("thrpt_avgt_gc.json", "sample.json")
               for e in json.loads((golden / name).read_text())]
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("[\n")
        written, copy, first = 2, 0, True
        while written < target:
            for e in entries:
                e = dict(e, benchmark=f"{e['benchmark']}_{copy}")
                text = ("" if first else ",\n") + "    " + json.dumps(e, indent=4).replace("\n", "\n    ")
                first = False
                fh.write(text)
                written += len(text)
            copy += 1
        fh.write("\n]\n")


SECTIONS["jmh"] = Section("jmh", "jmh", make_jmh, "jmh")

_CHILD = """
import importlib, json, resource, sys, time
from pathlib import Path
fmt, module, path = sys.argv[1:4]
importlib.import_module("regbench.adapters." + module)
from regbench.adapters.base import REGISTRY
t0 = time.perf_counter()
runs = REGISTRY[fmt].parse(Path(path))
t = time.perf_counter() - t0
print(json.dumps({"seconds": t, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "runs": len(runs), "samples": int(sum(r.samples.size for r in runs))}))
"""


def measure(section: Section, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, section.fmt, section.module, str(path)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def baseline_rss_kb(section: Section) -> int:
    """Peak memory of the same child on a tiny file: the interpreter and imports alone."""
    folder = GOLDEN / section.golden
    tiny = folder / section.tiny if section.tiny else min(folder.glob("*.json"), key=lambda p: p.stat().st_size)
    return measure(section, tiny)["maxrss_kb"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of each synthetic file in MB (default 100)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated: " + ", ".join(SECTIONS))
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "regbench-bench-adapters")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    target = int(args.mb * 1e6)
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()} {platform.system()} "
          f"{platform.release()}; load average {os.getloadavg()[0]:.2f}; median (min) of {args.reps} reps\n")
    print("| format | file | parse median (min) | target | peak RSS (imports alone) | target | runs | samples |")
    print("|---|---|---|---|---|---|---|---|")
    failed = False
    for name in args.sections.split(","):
        section = SECTIONS[name]
        path = args.workdir / f"{name}-{args.mb:g}MB.json"
        if not path.is_file():
            section.make(GOLDEN / section.golden, target, path)
        results = [measure(section, path) for _ in range(args.reps)]
        secs = [r["seconds"] for r in results]
        rss = max(r["maxrss_kb"] for r in results) * 1024
        base = baseline_rss_kb(section) * 1024
        ok_t, ok_m = statistics.median(secs) < TARGET_SECONDS, rss < TARGET_BYTES
        failed |= not (ok_t and ok_m)
        print(f"| {name} | {path.stat().st_size / 1e6:.0f} MB | {statistics.median(secs):.2f} s ({min(secs):.2f}) | "
              f"< {TARGET_SECONDS:g} s {'pass' if ok_t else '**miss**'} | {rss / 2**20:.0f} MiB ({base / 2**20:.0f}) | "
              f"< 1 GiB {'pass' if ok_m else '**miss**'} | {results[0]['runs']} | {results[0]['samples']} |")
    print(f"\n(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
