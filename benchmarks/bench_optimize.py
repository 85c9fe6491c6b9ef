"""Optimized plans evaluated like Japke et al. 2025, RQ1 and RQ4, on suites run here.

Each suite is a git repository made here with three versions: ``v1``; ``v2`` with slowdowns
planted in some benchmarks (the rest unchanged); ``v3`` with no change.  Every version is run
with the full configuration by ``regbench.run.campaign.run_campaign`` (real processes, RMIT, a
real SQLite store).  Then, as in the paper (s.4.2, s.4.5), everything else is simulated from the
stored runs:

* plans are derived from ``v1`` with Algorithm 1 (:func:`regbench.optimize.algorithm.minimal_configuration`);
* RQ1: on every version, the result of each benchmark under its plan (the first runs and
  iterations of the full data) against the full configuration's: the change rate of eq. (1),
  and the share of benchmarks within 1, 3 and 5 %; suite time saved (iterations, warm-up
  included, as the paper's "lowest possible time", s.4.2);
* RQ4: for each pair of consecutive versions, a change is detected when the 99 % bootstrap
  percentile intervals (10,000 resamples) of the two versions do not overlap and the results
  differ by at least 3 % (s.4.5); false positives and negatives against the full
  configuration's detections, and against the planted truth;
* baselines of s.4.2: the minimum configuration and a random one (seeded);
* ``plan = "adaptive"`` simulated from the same runs (:func:`adaptive_runs`): on every version,
  runs are added from a pilot of 3 until the 99 % interval of the mean is within +-1 %.

Suites
------
``go``      a Go module whose benchmarks call the standard library (encoding/json, sort, regexp,
            crypto/sha256, strconv, strings, compress/flate, ...), run as one ``go test -bench``
            invocation per run (``format = "go"``), ``-count`` = iterations; ``-bench`` reads
            ``REGBENCH_SELECT`` (all benchmarks when it is unset, as in every full campaign).
``python``  ``kind = "python"`` benchmarks over the standard library (json, re, difflib, zlib,
            decimal, textwrap, heapq, statistics, ...), one worker process per run.
``java``    a JMH 1.37 suite over the JDK (HashMap, Arrays.sort, regex, SHA-256, Deflater, ...), one
            invocation per run, ``-f 1`` (each run one fork); ``--jmh-forks N`` runs ``-f
            "${REGBENCH_FORKS:-N}"``: N forks a run, which the plans may reduce (docs/optimize.md
            "A tool's forks").  Each run is then simulated as its N forks (``(runs, forks,
            iterations)``, :func:`regbench.optimize.forks.fork_samples`), configurations are
            ``(runs, forks, iterations)``, the time saved counts JMH's unreported warm-up in each
            fork, the tables add muOpTime with the forks kept, and ``--real-run`` measures those
            plans too (the command's ``-f`` fixed).
``pyperformance`` (not in ``all``) ten pure-Python benchmarks of the Python Performance Benchmark
            Suite (pyperformance 1.14.0 from PyPI, each module copied into the repository and
            its timed call made as its pyperf runner does), two slowdowns planted in v2.
``go-btree`` (not in ``all``) a real project's own suite: github.com/google/btree's ``go test
            -bench`` benchmarks at three of its releases from the Go module proxy (v1.0.1,
            v1.1.2, v1.1.3); nothing is planted, so the rates are against the full configuration
            only (the planted columns say ``n/a``).

``--real-run``: measured, not simulated
---------------------------------------
After the tables, the plans of each suite's full campaign are derived and stored as ``regbench
optimize`` does (:func:`regbench.optimize.plans.derive_plans`, ``--real-metric`` and
``--real-threshold``, default rciw3 and 0.01, ``--min-runs``; each benchmark's plan from v3, its
last version), then a new version with no change (a copy of v3: ``v4``, ``v5``...) is run for real
by ``run_campaign``, once with the full configuration (configuration name ``full-measured``) and
once with the plans (``optimized=plans_for_campaign(...)``, as ``regbench run --plan optimized``),
``--real-repeats`` times (default 2), which of the two runs first alternating, each repeat on its
own copy.  Printed: each campaign's trials wall time (from its first trial to its end, so without
checkouts and builds), their ratio, the time saved measured and simulated from the same plans
(iterations, warm-up included, per benchmark and as invoked), and the invocations each ran (a
tool's groups from the optimized campaign's ``plan["split"]``), with the load average before and
after; then each set's plans (runs x forks x iterations) and the shares of benchmarks whose result
is within 1, 3 and 5 % of the full configuration's: measured (each campaign's against the full
campaign of its repeat, and the full campaigns of consecutive repeats against each other, the
floor that load and order set) and simulated (the same plans on v1-v3 of the first campaign).
``--java-opts`` passes options to the JVM of JMH's runner (``-Djmh.ignoreLock=true`` where another
JMH may run at the same time).
``--real-priced`` adds a second set of pairs: the plans derived again (``regbench optimize
--refresh``) once the store holds runs of two lengths, the full campaign's and the optimized
ones', so that each run's fixed cost is measured and priced
(:func:`regbench.optimize.algorithm.run_overhead`; a tool's shared invocation is not priced).

Run::

    TMPDIR=$(mktemp -d) python benchmarks/bench_optimize.py --suite all   # about 6 minutes
    python benchmarks/bench_optimize.py --suite python --runs 5 --iterations 10
    TMPDIR=$(mktemp -d) python benchmarks/bench_optimize.py --suite all --real-run
    TMPDIR=$(mktemp -d) python benchmarks/bench_optimize.py --suite java --jmh-forks 3 --real-run

Prints Markdown tables (docs/optimize.md has the latest).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from regbench.adapters.base import without_metric
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.model import SeriesName
from regbench.optimize.algorithm import (METRICS, Configuration, MinimalConfiguration, minimal_configuration,
                                         score_configurations, simulated, smaller_configurations)
from regbench.optimize.forks import fork_layout, run_processes
from regbench.optimize.plans import campaign_samples, campaign_slices, forked_samples
from regbench.run.campaign import run_campaign
from regbench.run.execute import FORKS_ENV
from regbench.stats import bootstrap_ci
from regbench.store import Store

PLANTED = 0.15  # relative slowdown planted in v2

# ------------------------------------------------------------------------------- the Go suite
GO_BENCH = """\
package suite

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var sink int

type record struct {
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
	N     int               `json:"n"`
}

func extra(n int) {
	for i := 0; i < n; i++ {
		sink += i * i
	}
}

var rec = record{Name: "regbench", Tags: []string{"a", "b", "c"}, Attrs: map[string]string{"k": "v", "x": "y"}, N: 7}
var words = strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog ", 50))
var re = regexp.MustCompile(`(\\w+)@(\\w+)\\.com`)
var text = strings.Repeat("mail bob@example.com or alice@test.com now ", 20)
var blob = bytes.Repeat([]byte("abcdefghij0123456789"), 200)

func BenchmarkJSONMarshal(b *testing.B) {
	for i := 0; i < b.N; i++ {
		out, _ := json.Marshal(rec)
		sink += len(out)
		extra(SLOW_JSON)
	}
}

func BenchmarkJSONUnmarshal(b *testing.B) {
	data, _ := json.Marshal(rec)
	for i := 0; i < b.N; i++ {
		var r record
		_ = json.Unmarshal(data, &r)
		sink += r.N
	}
}

func BenchmarkSortInts(b *testing.B) {
	base := make([]int, 1000)
	for i := range base {
		base[i] = (i * 7919) % 1009
	}
	xs := make([]int, len(base))
	for i := 0; i < b.N; i++ {
		copy(xs, base)
		sort.Ints(xs)
		extra(SLOW_SORT)
	}
}

func BenchmarkSortStrings(b *testing.B) {
	xs := make([]string, len(words))
	for i := 0; i < b.N; i++ {
		copy(xs, words)
		sort.Strings(xs)
	}
}

func BenchmarkRegexp(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += len(re.FindAllStringSubmatch(text, -1))
	}
}

func BenchmarkSHA256(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := sha256.Sum256(blob)
		sink += int(s[0])
	}
}

func BenchmarkStrconv(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := strconv.FormatFloat(float64(i)*1.5, 'g', -1, 64)
		v, _ := strconv.ParseFloat(s, 64)
		sink += int(v)
	}
}

func BenchmarkStringsBuilder(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var sb strings.Builder
		for _, w := range words[:100] {
			sb.WriteString(w)
		}
		sink += sb.Len()
	}
}

func BenchmarkSprintf(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += len(fmt.Sprintf("%s-%d-%.2f", "x", i, 1.5))
	}
}

func BenchmarkFlate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestSpeed)
		_, _ = w.Write(blob)
		_ = w.Close()
		sink += buf.Len()
	}
}

func BenchmarkMapInsert(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m := make(map[int]int)
		for k := 0; k < 200; k++ {
			m[k] = k
		}
		sink += len(m)
	}
}

func BenchmarkReplace(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += len(strings.ReplaceAll(text, "com", "org"))
	}
}
"""


def go_suite(slow: dict[str, int]) -> dict[str, str]:
    src = GO_BENCH.replace("SLOW_JSON", str(slow.get("json", 0))).replace("SLOW_SORT", str(slow.get("sort", 0)))
    return {"go.mod": "module suite\n\ngo 1.21\n", "suite_test.go": src}


#: How long one iteration of a tool's benchmark lasts (Go's -benchtime, JMH's -w and -r), by suite;
#: ``--iteration-time`` sets both.  Short by default so that the evaluation takes minutes; Japke et
#: al. 2025 measured 5 s iterations.
ITERATION_TIME = {"go": "20ms", "java": "50ms"}


def _go_cmd() -> list[str]:
    return ["sh", "-c", f"go test -run '^$' -bench \"${{REGBENCH_SELECT:-.}}\" -benchtime {ITERATION_TIME['go']} "
            "-count \"$REGBENCH_ITERATIONS\" > \"$0\"", "{output}"]


def go_config(runs: int, iterations: int, warmup: int) -> str:
    # One invocation per run; -count is the iterations (warm-up included), each about -benchtime long.
    # -bench reads REGBENCH_SELECT, so that `run --plan optimized` (--real-run) runs one invocation
    # per plan; unset (every other campaign here) it is `.`, all benchmarks, as before.
    cmd = _go_cmd()
    return textwrap.dedent(f"""\
        [project]
        name = "go-suite"
        [defaults]
        runs = {runs}
        iterations = {iterations}
        warmup = {warmup}
        timeout = 600
        [[benchmark]]
        name = "go"
        command = {json.dumps(cmd)}
        format = "go"
        pass_env = ["GOCACHE", "GOPATH", "GOROOT", "GOFLAGS", "HOME"]
        """)


# --------------------------------------------------------------------------- the Python suite
PY_BENCH = '''\
import decimal, difflib, heapq, json, re, statistics, textwrap, zlib

DOC = {"name": "regbench", "tags": ["a", "b", "c"] * 10, "attrs": {str(i): i for i in range(50)}}
TEXT = "mail bob@example.com or alice@test.com now " * 40
LINES_A = [f"line {i} of the text" for i in range(200)]
LINES_B = [l if i % 7 else l + "!" for i, l in enumerate(LINES_A)]
BLOB = b"abcdefghij0123456789" * 500
RX = re.compile(r"(\\w+)@(\\w+)\\.com")


def _extra(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def json_dumps():
    json.dumps(DOC)
    _extra(SLOW_JSON)


def json_loads():
    json.loads(json.dumps(DOC))


def regex():
    RX.findall(TEXT)


def diff():
    list(difflib.unified_diff(LINES_A, LINES_B, lineterm=""))
    _extra(SLOW_DIFF)


def compress():
    zlib.compress(BLOB, 1)


def decimals():
    decimal.Decimal(1) / decimal.Decimal(7) * decimal.Decimal("3.14159")


def wrap():
    textwrap.wrap(TEXT, 40)


def heap():
    h = list(range(500, 0, -1))
    heapq.heapify(h)
    [heapq.heappop(h) for _ in range(50)]


def stats():
    statistics.median(range(1001))


def sort_strings():
    sorted(TEXT.split())
'''
PY_NAMES = ["json_dumps", "json_loads", "regex", "diff", "compress", "decimals", "wrap", "heap", "stats",
            "sort_strings"]


def py_suite(slow: dict[str, int]) -> dict[str, str]:
    src = PY_BENCH.replace("SLOW_JSON", str(slow.get("json", 0))).replace("SLOW_DIFF", str(slow.get("diff", 0)))
    return {"suite.py": src}


#: ``--slices N``: the Python suite's iterations timed as N slices (the duration level).
PY_SLICES = {"n": 1}


def py_config(runs: int, iterations: int, warmup: int, names=tuple(PY_NAMES)) -> str:
    text = (f"[project]\nname = \"py-suite\"\n[defaults]\nruns = {runs}\niterations = {iterations}\n"
            f"warmup = {warmup}\ntimeout = 120\n" + (f"slices = {PY_SLICES['n']}\n" if PY_SLICES["n"] > 1 else ""))
    for n in names:
        text += f"\n[[benchmark]]\nname = \"{n}\"\npython = \"suite:{n}\"\nmin_time = 0.005\n"
    return text


# ------------------------------------------ a real benchmark suite's code: pyperformance's
#: The Python Performance Benchmark Suite (MIT licence), from PyPI when the script runs: ten of
#: its pure-Python benchmarks, each module (its ``run_benchmark.py``) copied into the suite's
#: repository and its timed call made as its pyperf runner makes it, with one loop and the
#: suite's own arguments.  As in the suite written here, v2 plants an extra loop in two of them.
PYPERFORMANCE = "pyperformance==1.14.0"
PYPERF_CALLS = {
    "richards": "bm_richards.Richards().run(1)",
    "float": "bm_float.benchmark(bm_float.POINTS)",
    "deltablue": "bm_deltablue.delta_blue(100)",
    "nqueens": "bm_nqueens.bench_n_queens(8)",
    "nbody": "bm_nbody.bench_nbody(1, bm_nbody.DEFAULT_REFERENCE, bm_nbody.DEFAULT_ITERATIONS)",
    "spectral_norm": "bm_spectral_norm.bench_spectral_norm(1)",
    "hexiom": "bm_hexiom.main(1, bm_hexiom.DEFAULT_LEVEL)",
    "deepcopy": "bm_deepcopy.benchmark(1)",
    "regex_v8": "bm_regex_v8.bench_regex_v8(1)",
    "coroutines": "bm_coroutines.bench_coroutines(1)",
}
_PYPERF_MODULES: dict[str, str] = {}


def pyperformance_modules() -> dict[str, str]:
    """``bm_NAME.py`` -> the text of pyperformance's ``run_benchmark.py`` of each benchmark used."""
    if not _PYPERF_MODULES:
        import importlib.util
        import zipfile

        if importlib.util.find_spec("pyperf") is None:  # every module imports it
            raise SystemExit("--suite pyperformance needs pyperf (pip install pyperf; it is in the test extra)")

        with tempfile.TemporaryDirectory() as d:
            out = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", d,
                                  PYPERFORMANCE], capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"pip download {PYPERFORMANCE}: {out.stderr.strip()[-300:]}")
            with zipfile.ZipFile(next(Path(d).glob("*.whl"))) as whl:
                for name in PYPERF_CALLS:
                    member = f"pyperformance/data-files/benchmarks/bm_{name}/run_benchmark.py"
                    _PYPERF_MODULES[f"bm_{name}.py"] = whl.read(member).decode()
    return dict(_PYPERF_MODULES)


def pyperf_suite(slow: dict[str, int]) -> dict[str, str]:
    src = "".join(f"import bm_{n}\n" for n in PYPERF_CALLS) + textwrap.dedent("""

        def _extra(n):
            s = 0
            for i in range(n):
                s += i * i
            return s
        """)
    for name, call in PYPERF_CALLS.items():
        src += f"\n\ndef {name}():\n    {call}\n" + (f"    _extra({slow[name]})\n" if slow.get(name) else "")
    return {**pyperformance_modules(), "suite.py": src}


def pyperf_config(runs: int, iterations: int, warmup: int) -> str:
    return py_config(runs, iterations, warmup, names=tuple(PYPERF_CALLS)).replace('"py-suite"', '"pyperformance"')


# ----------------------------------------------------------------------------- the JMH suite
JAVA_BENCH = """\
package suite;

import java.math.BigDecimal;
import java.math.MathContext;
import java.security.MessageDigest;
import java.util.*;
import java.util.concurrent.TimeUnit;
import java.util.regex.*;
import java.util.zip.Deflater;
import org.openjdk.jmh.annotations.*;

@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Bench {
    static final int SLOW_MAP = 0;
    static final int SLOW_SORT = 0;
    int[] base = new int[1000];
    String text = "mail bob@example.com or alice@test.com now ".repeat(20);
    Pattern re = Pattern.compile("(\\\\w+)@(\\\\w+)\\\\.com");
    byte[] blob = "abcdefghij0123456789".repeat(200).getBytes();
    long sink;

    @Setup public void setup() { for (int i = 0; i < base.length; i++) base[i] = (i * 7919) % 1009; }

    long extra(int n) { long s = 0; for (int i = 0; i < n; i++) s += (long) i * i; return s; }

    @Benchmark public long hashMap() {
        HashMap<Integer, Integer> m = new HashMap<>();
        for (int k = 0; k < 200; k++) m.put(k, k);
        return m.size() + extra(SLOW_MAP);
    }
    @Benchmark public int[] sortInts() { int[] xs = base.clone(); Arrays.sort(xs); sink += extra(SLOW_SORT); return xs; }
    @Benchmark public int regex() { Matcher m = re.matcher(text); int n = 0; while (m.find()) n++; return n; }
    @Benchmark public byte[] sha256() throws Exception { return MessageDigest.getInstance("SHA-256").digest(blob); }
    @Benchmark public String format() { return String.format("%s-%d-%.2f", "x", 42, 1.5); }
    @Benchmark public int deflate() { Deflater d = new Deflater(1); d.setInput(blob); d.finish(); byte[] out = new byte[8192]; int n = d.deflate(out); d.end(); return n; }
    @Benchmark public BigDecimal bigDecimal() { return BigDecimal.ONE.divide(BigDecimal.valueOf(7), MathContext.DECIMAL128).multiply(new BigDecimal("3.14159")); }
    @Benchmark public String base64() { return Base64.getEncoder().encodeToString(blob); }
    @Benchmark public String stringBuilder() { StringBuilder sb = new StringBuilder(); for (int i = 0; i < 100; i++) sb.append(i); return sb.toString(); }
    @Benchmark public List<String> splitSort() { List<String> w = new ArrayList<>(Arrays.asList(text.split(" "))); Collections.sort(w); return w; }
}
"""
JMH_WARMUP = 5  # JMH warm-up iterations per fork: not in JMH's JSON, but paid in every fork
#: ``--jmh-forks N``: JMH's forks a regbench run (1: ``-f 1``, each run one fork, as before).  With
#: N > 1 the command reads ``-f "${REGBENCH_FORKS:-N}"``, so the forks are a level of the plans
#: (docs/optimize.md "A tool's forks") and ``run --plan optimized`` sets them.
JMH_FORKS = {"n": 1}
#: ``--java-opts``: options of the JVM that runs JMH's runner (``java OPTS -cp ...``), e.g.
#: ``-Djmh.ignoreLock=true`` where another JMH may run at the same time (JMH otherwise exits when
#: its lock file in java.io.tmpdir is held); its forks are started by JMH with their own options.
JAVA_OPTS = {"opts": ""}


def jmh_classpath() -> str:
    m2 = Path.home() / ".m2" / "repository"
    jars = [m2 / "org/openjdk/jmh/jmh-core/1.37/jmh-core-1.37.jar",
            m2 / "net/sf/jopt-simple/jopt-simple/5.0.4/jopt-simple-5.0.4.jar",
            m2 / "org/apache/commons/commons-math3/3.6.1/commons-math3-3.6.1.jar"]
    return ":".join(str(j) for j in jars)


def jmh_processor() -> str:
    return str(Path.home() / ".m2/repository/org/openjdk/jmh/jmh-generator-annprocess/1.37/"
                             "jmh-generator-annprocess-1.37.jar") + ":" + jmh_classpath()


def java_suite(slow: dict[str, int]) -> dict[str, str]:
    src = (JAVA_BENCH.replace("SLOW_MAP = 0", f"SLOW_MAP = {slow.get('map', 0)}")
           .replace("SLOW_SORT = 0", f"SLOW_SORT = {slow.get('sort', 0)}"))
    return {"src/suite/Bench.java": src}


def java_config(runs: int, iterations: int, warmup: int) -> str:
    # One JMH fork per regbench run (runs are the forks) unless --jmh-forks; -i is the iterations
    # (of each fork).  JMH's include regex reads REGBENCH_SELECT, as Go's -bench does (`.`, every
    # benchmark, when it is unset); with --jmh-forks N, -f reads REGBENCH_FORKS (N when unset).
    forks = JMH_FORKS["n"]
    fork_arg = "-f 1" if forks == 1 else f"-f \"${{{FORKS_ENV}:-{forks}}}\""
    build = ["javac", "-cp", jmh_classpath(), "-processorpath", jmh_processor(), "-d", "classes",
             "src/suite/Bench.java"]
    java = "java " + (JAVA_OPTS["opts"] + " " if JAVA_OPTS["opts"] else "")
    cmd = ["sh", "-c", f"{java}-cp classes:{jmh_classpath()} org.openjdk.jmh.Main \"${{REGBENCH_SELECT:-.}}\" "
           f"{fork_arg} -wi {JMH_WARMUP} "
           f"-i \"$REGBENCH_ITERATIONS\" -w {ITERATION_TIME['java']} -r {ITERATION_TIME['java']} -rf json "
           "-rff \"$0\"", "{output}"]
    return textwrap.dedent(f"""\
        [project]
        name = "jmh-suite"
        build = {json.dumps(build)}
        build_timeout = 300
        [defaults]
        runs = {runs}
        iterations = {iterations}
        warmup = 0
        timeout = 600
        [[benchmark]]
        name = "jmh"
        command = {json.dumps(cmd)}
        format = "jmh"
        """)


@dataclass(frozen=True)
class Suite:
    name: str
    files: object
    config: object
    slow: dict[str, int]      # the planted slowdown of v2: extra loop iterations per call
    planted: frozenset[str]   # series names whose v2 is slower
    warmup: int | None = None  # warm-up per run the tool does and does not report (JMH -wi)
    # A real project's releases instead of planted slowdowns: (commit message, files) of each
    # version, the first one with regbench.toml added; what changed between them is not known.
    releases: tuple | None = None


def calibrate_slow(suite: str) -> dict[str, int]:
    """Extra loop iterations that make the planted benchmarks about PLANTED slower (a rough guess
    from their speed here; the truth used is what the full configuration sees, see below)."""
    return {"go": {"json": 120, "sort": 2500}, "python": {"json": 200, "diff": 2000},
            "pyperformance": {"richards": 100_000, "regex_v8": 47_000},
            "java": {"map": 300, "sort": 2000}}[suite]


# ------------------------------------------------------- a real open-source Go module's suite
#: github.com/google/btree (Apache-2.0): its own `go test -bench` suite, at three releases from
#: the Go module proxy.  v1.0.1 is the original interface{} B-tree; v1.1.2 re-implements it over
#: the generic BTreeG (Go 1.18+), a real change of every benchmark's code path; v1.1.3 fixes a
#: copy-on-write bug in one removal path.  The generic benchmarks (names ending in G) exist from
#: v1.1 on only, so the 14 benchmarks (and 4 sub-benchmarks) of all three releases are run.
BTREE = "github.com/google/btree"
BTREE_RELEASES = ("v1.0.1", "v1.1.2", "v1.1.3")


def go_module_files(module: str, version: str) -> dict[str, str]:
    """go.mod and go.sum of a module that requires ``module@version`` (taken from the module
    proxy by `go get`), so that `go test MODULE` runs that release's own benchmarks."""
    with tempfile.TemporaryDirectory() as d:
        Path(d, "go.mod").write_text("module suite\n\ngo 1.21\n")
        out = subprocess.run(["go", "get", f"{module}@{version}"], cwd=d, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"go get {module}@{version}: {out.stderr.strip()}")
        return {"go.mod": Path(d, "go.mod").read_text(), "go.sum": Path(d, "go.sum").read_text()}


@functools.cache
def btree_releases() -> tuple:
    return tuple((f"btree {v}", go_module_files(BTREE, v)) for v in BTREE_RELEASES)


def go_module_config(runs: int, iterations: int, warmup: int) -> str:
    # As go_config, on the module's package; `[^G]$` leaves out the generic benchmarks.
    cmd = ["sh", "-c", f"go test -run '^$' -bench \"${{REGBENCH_SELECT:-[^G]\\$}}\" "
           f"-benchtime {ITERATION_TIME['go']} -count \"$REGBENCH_ITERATIONS\" {BTREE} > \"$0\"", "{output}"]
    text = go_config(runs, iterations, warmup)
    for old, new in (('name = "go-suite"', 'name = "go-btree"'), ('name = "go"\n', 'name = "btree"\n'),
                     (json.dumps(_go_cmd()), json.dumps(cmd))):
        assert old in text, f"go_config no longer writes {old!r}"
        text = text.replace(old, new)
    return text


SUITES = {
    "go": lambda: Suite("go", go_suite, go_config, calibrate_slow("go"),
                        frozenset({"go/BenchmarkJSONMarshal", "go/BenchmarkSortInts"})),
    "pyperformance": lambda: Suite("pyperformance", pyperf_suite, pyperf_config, calibrate_slow("pyperformance"),
                                   frozenset({"richards", "regex_v8"})),
    "go-btree": lambda: Suite("go-btree", None, go_module_config, {}, frozenset(), releases=btree_releases()),
    "python": lambda: Suite("python", py_suite, py_config, calibrate_slow("python"),
                            frozenset({"json_dumps", "diff"})),
    "java": lambda: Suite("java", java_suite, java_config, calibrate_slow("java"),
                          frozenset({"jmh/suite.Bench.hashMap", "jmh/suite.Bench.sortInts"}), JMH_WARMUP),
}


# ------------------------------------------------------------------------------------ running
def make_repo(root: Path, suite: Suite, runs: int, iterations: int, warmup: int) -> list[str]:
    git_init(root)
    when = datetime(2025, 1, 1, tzinfo=UTC)
    cfg = suite.config(runs, iterations, warmup)
    if suite.releases:
        return [git_commit(root, {**files, **({"regbench.toml": cfg} if k == 0 else {})}, message,
                           when=when + timedelta(days=k)) for k, (message, files) in enumerate(suite.releases)]
    shas = [git_commit(root, {**suite.files({}), "regbench.toml": cfg}, "v1", when=when),
            git_commit(root, suite.files(suite.slow), "v2: planted slowdowns", when=when + timedelta(days=1)),
            git_commit(root, {"README": "no change\n"}, "v3: no change", when=when + timedelta(days=2))]
    return shas


def collect(store: Store, campaign_id: int, retried: int | None = None) -> dict[str, dict[str, tuple]]:
    """series -> version -> (measured samples (runs, iterations), warm-up, the runs' slices
    (runs, warm-up + iterations, N) or None).  A tool's runs of several forks (JMH's ``-f``) are
    cut back into them as ``regbench optimize`` does (:func:`regbench.optimize.forks.fork_layout`):
    samples ``(runs, forks, iterations)``; a series whose runs do not split is left out, said."""
    out: dict[str, dict[str, tuple[np.ndarray, int]]] = {}
    unsplit: dict[str, str] = {}
    order = [v.name for v in store.versions()]
    ids = {campaign_id} | ({retried} if retried is not None else set()) | (
        set(range(campaign_id, retried + 1)) if retried is not None else set())
    keys = {(r.benchmark, r.version) for r in store.runs() if r.campaign_id in ids and r.status == "ok"}
    for bench, ver in sorted(keys, key=lambda k: (k[0], order.index(k[1]))):
        if SeriesName.parse(bench).measure is not None or secondary(bench):
            continue  # not times: a measure, or a tool's secondary metric (Go's B/op and allocs/op)
        runs = [r for r in store.raw_runs(bench, ver) if r.campaign_id in ids]
        samples, warmup, _ = campaign_samples(runs, benchmark=bench)
        sl = None
        if runs and runs[0].config is not None:
            where = {"config": runs[0].config, "machine": runs[0].machine}
            layout = (fork_layout(runs, run_processes(store, bench, version=ver, **where))
                      if SeriesName.parse(bench).reported is not None else None)
            if layout is not None and layout.forked:
                samples = forked_samples(runs, layout, benchmark=bench, where=f"campaign {campaign_id} at {ver}")
                warmup = layout.warmup
            elif layout is not None and layout.reason is not None and layout.said:
                # Several forks a run that do not split (a fork cut short): one stream each
                # would be priced and simulated as one fork.
                unsplit[bench] = f"{ver}: {layout.reason}"
            else:
                stored = store.run_slices(bench, ver, **where)
                sl = campaign_slices(runs, stored, iterations=samples.shape[1], warmup=warmup)
        out.setdefault(bench, {})[ver] = (samples, warmup, sl)
    for bench, why in sorted(unsplit.items()):
        print(f"({bench}: left out, its runs do not split into their forks ({why}))")
        out.pop(bench, None)
    return out


# ---------------------------------------------------------------------------------- analysis
def result_of(x: np.ndarray, c: Configuration, location: str, warmup: int = 0, sl=None) -> np.ndarray:
    return simulated(x, c, warmup=warmup, slices=sl).ravel()


def full_of(x: np.ndarray, sl) -> Configuration:
    """The full configuration of samples ``x``, ``(runs, iterations)`` or ``(runs, forks,
    iterations)`` (and their slices, if any)."""
    n = 1 if sl is None else sl.shape[2]
    return Configuration(x.shape[0], x.shape[-1], n, n, forks_of(x))


def forks_of(x: np.ndarray) -> int:
    """The forks of each run of samples ``x``: 1 unless ``(runs, forks, iterations)``."""
    return x.shape[1] if x.ndim == 3 else 1


def detect(a: np.ndarray, b: np.ndarray, location: str, rng) -> bool:
    """s.4.5: non-overlapping 99 % percentile intervals and a relative change of at least 3 %."""
    stat = np.mean if location == "mean" else np.median
    ca = bootstrap_ci(a, stat, confidence_level=0.99, n_resamples=10_000, method="percentile", rng=rng)
    cb = bootstrap_ci(b, stat, confidence_level=0.99, n_resamples=10_000, method="percentile", rng=rng)
    apart = ca.ci_high < cb.ci_low or cb.ci_high < ca.ci_low
    return bool(apart and abs(stat(b) - stat(a)) / abs(stat(a)) >= 0.03)


def adaptive_runs(x: np.ndarray, *, target: float, pilot: int = 3) -> int:
    """Runs ``plan = "adaptive"`` would stop at on this experiment, simulated from its runs: the
    first ``r >= pilot`` whose 99 % interval of the mean (formula 4 of Kalibera et al. 2005, as
    :mod:`regbench.run.adaptive` uses) has a relative half-width of at most ``target``; all runs
    when none does.  (The real adaptive plan also re-chooses the iterations after the pilot; the
    simulation keeps them, so its cost is an upper bound.)"""
    from regbench.stats import hierarchical_summary

    for r in range(pilot, x.shape[0] + 1):
        hs = hierarchical_summary(list(x[:r]))
        if hs.half_width / abs(hs.mean) <= target:
            return r
    return x.shape[0]


def evaluate(data, suite: Suite, *, metric: str, threshold: float, min_runs: int, seed: int,
             adaptive_target: float = 0.01, overheads: dict[str, float] | None = None,
             use_slices: bool = True, fork_level: bool = True,
             fork_overheads: dict[str, float] | None = None) -> dict:
    """The methods' plans simulated on ``data``; ``overheads`` (benchmark -> a run's fixed cost in
    iterations, as the plans of ``--real-priced`` measured it) prices muOpTime's runs with it, and
    ``fork_overheads`` each fork's where the forks are a level;
    ``use_slices=False`` ignores the slices (the duration level) of sliced iterations.

    Where a benchmark's runs are forks (``(runs, forks, iterations)`` samples: ``--jmh-forks``),
    a configuration is ``(runs, forks, iterations)``, each fork running JMH's warm-up and the
    iterations (``Configuration.cost``: ``runs x forks x (warm-up + iterations)``); with
    ``fork_level`` (the command reads REGBENCH_FORKS) muOpTime, the minimum and the random
    configuration choose the forks too (the minimum is ``min_runs`` runs x 1 fork x the fewest
    iterations); otherwise every configuration keeps the campaign's forks.  The adaptive plan
    adds runs and keeps the forks (the command's own)."""
    if not use_slices:
        data = {b: {v: (x, w, None) for v, (x, w, _) in per.items()} for b, per in data.items()}
    rng = np.random.default_rng(seed)
    location = METRICS[metric]
    versions = list(next(iter(data.values())).keys())
    names = ["muoptime", "minimum", "random"] + (["adaptive"] if location == "mean" else [])
    # method -> (benchmark, version) -> configuration; the static plans are derived from v1 and
    # used on every version; the adaptive plan decides on each version from its own runs.
    plans: dict[str, dict[tuple[str, str], Configuration]] = {m: {} for m in names}
    cost = {m: 0 for m in names} | {"full": 0}
    unstable = 0
    chosen: dict[str, Configuration] = {}
    for bench, per in data.items():
        x, w, sl = per[versions[0]]
        w = suite.warmup if suite.warmup is not None else w
        forked = fork_level and forks_of(x) > 1
        found: MinimalConfiguration = minimal_configuration(x, warmup=w, metric=metric, threshold=threshold,
                                                            min_runs=min_runs, n_resamples=2000, rng=rng,
                                                            overhead=(overheads or {}).get(bench, 0.0),
                                                            slices=sl if suite.warmup is None else None,
                                                            fork_level=forked,
                                                            fork_overhead=(fork_overheads or {}).get(bench, 0.0))
        unstable += not found.stable
        chosen[bench] = found.chosen.configuration
        configs = smaller_configurations(full_of(x, sl if suite.warmup is None else None), min_runs=min_runs,
                                         fork_level=forked)
        static = {"muoptime": found.chosen.configuration,
                  "minimum": min(configs, key=lambda c: (c.cost(w), c.runs)),
                  "random": configs[int(rng.integers(len(configs)))]}
        for ver in versions:
            xv, _, slv = per[ver]
            for m in names:
                c = (static[m] if m != "adaptive"
                     else Configuration(adaptive_runs(xv.reshape(xv.shape[0], -1), target=adaptive_target),
                                        xv.shape[-1], forks=forks_of(xv)))
                plans[m][(bench, ver)] = c
                cost[m] += c.cost(w)
            cost["full"] += full_of(xv, slv if suite.warmup is None else None).cost(w)
    out: dict = {"benchmarks": len(data), "unstable": unstable, "versions": len(versions), "chosen": chosen}
    for m, plan in plans.items():
        rates = []
        for bench, per in data.items():
            for ver in versions:
                x, w, sl = per[ver]
                full = full_of(x, sl if plan[(bench, ver)].full_slices > 1 else None)
                s = score_configurations(x, [plan[(bench, ver)], full], warmup=w,
                                         metric="cv" if location == "mean" else "rmad", slices=sl)
                rates.append(abs(s[0].result - s[1].result) / abs(s[1].result))
        r = np.array(rates)
        fp = fn = tp_full = neg_full = 0
        truth_fn = truth_fp = full_truth_fn = full_truth_fp = 0
        for bench, per in data.items():
            for a, b in zip(versions, versions[1:], strict=False):
                xa, wa, sla = per[a]
                xb, wb, slb = per[b]
                full = detect(xa.ravel(), xb.ravel(), location, rng)
                ca, cb = plan[(bench, a)], plan[(bench, b)]
                mine = detect(result_of(xa, ca, location, wa, sla), result_of(xb, cb, location, wb, slb), location, rng)
                # Go names its benchmarks NAME-GOMAXPROCS: a planted name is a prefix.
                planted = any(bench == p or bench.startswith(p + "-") for p in suite.planted) and b == versions[1]
                tp_full += full
                neg_full += not full
                fp += mine and not full
                fn += full and not mine
                truth_fn += planted and not mine
                truth_fp += mine and not planted
                full_truth_fn += planted and not full
                full_truth_fp += full and not planted
        out[m] = {"time_saved": 1 - cost[m] / cost["full"], "within1": float(np.mean(r <= 0.01)),
                  "within3": float(np.mean(r <= 0.03)), "within5": float(np.mean(r <= 0.05)),
                  "fpr_vs_full": fp / neg_full if neg_full else float("nan"),
                  "fnr_vs_full": fn / tp_full if tp_full else float("nan"),
                  "full_changes": tp_full, "fp": fp, "fn": fn,
                  "missed_planted": truth_fn, "false_alarms": truth_fp,
                  "full_missed_planted": full_truth_fn, "full_false_alarms": full_truth_fp,
                  "truth": not suite.releases}
    return out


def run_suite(name: str, args, work: Path) -> tuple[dict, float, int]:
    suite = SUITES[name]()
    repo = work / name
    shas = make_repo(repo, suite, args.runs, args.iterations, args.warmup)
    config = load_config(repo / "regbench.toml")
    t0 = time.perf_counter()
    with Store(work / f"{name}.db") as store:
        result = run_campaign(config, store, revisions=",".join(shas), seed=1, machine="here",
                              cache_dir=work / f"{name}-trees")
        cid = result.campaign_id
        # On the shared machine this was written on, runs' temporary folders (`regbench-run-*` in
        # the system's temporary folder) vanished while runs were in flight (a benchmark could
        # not read the output file it had just written), removed by some other process there;
        # such runs are stored as garbage and run again here once or twice.  With its own TMPDIR
        # this script saw none.
        failed = len(result.failed)
        for again in range(2):
            if result.ok:
                break
            result = run_campaign(config, store, revisions=",".join(shas), seed=2 + again, machine="here",
                                  cache_dir=work / f"{name}-trees", retry_failed=True)
        seconds = time.perf_counter() - t0
        if not result.ok:
            raise SystemExit(f"{name}: runs failed: {result.failed[:1]}")
        if failed:
            print(f"({name}: {failed} runs of the first campaign failed and were run again)")
        data = collect(store, cid, retried=result.campaign_id if failed else None)
    return data, seconds, cid


# ---------------------------------------------------------------- --real-run: measured, not simulated
class _TrialClock:
    """A :class:`~regbench.run.campaign.CampaignReporter` that times a campaign's trials: from
    ``trials_started`` (after checkouts and builds) to ``finished``."""

    def __init__(self) -> None:
        self.start: float | None = None
        self.end: float | None = None

    def builds_started(self, n: int) -> None:
        pass

    def build_done(self, version: str, status: str, cached: bool, log_tail: str | None = None) -> None:
        pass

    def trials_started(self, total: int, skipped: int) -> None:
        self.start = time.perf_counter()

    def trial_started(self, benchmark: str, version: str, run_index: int) -> None:
        pass

    def trial_done(self, benchmark: str, version: str, run_index: int, status: str) -> None:
        pass

    def finished(self) -> None:
        self.end = time.perf_counter()

    @property
    def seconds(self) -> float:
        assert self.start is not None and self.end is not None
        return self.end - self.start


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def secondary(series: str) -> bool:
    """A tool's secondary metric reported as ``NAME [metric]`` (Go's ``B/op``, ``allocs/op``)."""
    reported = SeriesName.parse(series).reported
    return reported is not None and without_metric(reported) != reported


def simulated_saving(plans, config, suite: Suite, split: dict, full_forks: int = 1) -> tuple[float, float]:
    """Time saved by ``plans`` (ExecutionPlan) as simulated from iterations (warm-up included,
    :meth:`Configuration.cost`, as the tables above): per benchmark (each plan alone), and as
    invoked (a tool's benchmark not split runs every reported benchmark at the most runs and
    iterations of its plans; a split one runs each group at its plan).  A tool's runs of
    ``full_forks`` forks (``--jmh-forks``) count iterations and warm-up in each fork: a plan's
    forks where it sets them (``plan.forks``, REGBENCH_FORKS), ``full_forks`` where it keeps them."""
    def warm(p) -> int:
        return suite.warmup if suite.warmup is not None else p.warmup

    def forks(p) -> int:
        return p.forks or (full_forks if SeriesName.parse(p.benchmark).reported is not None else 1)

    def full_forks_of(p) -> int:
        return full_forks if SeriesName.parse(p.benchmark).reported is not None else 1

    plans = [p for p in plans if not secondary(p.benchmark)]  # times only, as the tables
    alone = sum(Configuration(p.runs, p.iterations, p.slices or 1, p.full_slices or 1, forks(p)).cost(warm(p))
                for p in plans)
    full = sum(Configuration(p.full_runs, p.full_iterations, forks=full_forks_of(p)).cost(warm(p)) for p in plans)
    invoked = 0
    for spec in config.benchmarks:
        mine = [p for p in plans if p.benchmark == spec.name or SeriesName.parse(p.benchmark).benchmark == spec.name
                and SeriesName.parse(p.benchmark).reported is not None]
        if not mine:
            continue
        groups = split.get(spec.name, {}).get("groups")
        # A plan's iterations are measured ones: REGBENCH_ITERATIONS = the configured warm-up + them.
        if groups:
            by_name = {SeriesName.parse(p.benchmark).reported: p for p in mine}
            invoked += sum(Configuration(g["runs"], g["iterations"], forks=g.get("forks") or full_forks_of(by_name[b]))
                           .cost(warm(by_name[b])) for g in groups for b in g["benchmarks"] if b in by_name)
        elif spec.format is not None:
            from regbench.adapters.base import get_adapter

            runs = max(p.runs for p in mine)
            iterations = max(max(p.iterations for p in mine), get_adapter(spec.format).min_iterations)
            # One invocation for all: the most forks of the plans where they all set them.
            f = max(p.forks for p in mine) if all(p.forks for p in mine) else None
            invoked += sum(Configuration(runs, iterations, forks=f or full_forks_of(p)).cost(warm(p)) for p in mine)
        else:
            invoked += sum(Configuration(p.runs, p.iterations, p.slices or 1, p.full_slices or 1).cost(warm(p))
                           for p in mine)
    return 1 - alone / full, 1 - invoked / full


def invocation_seconds(store: Store, campaign_id: int, split: dict) -> dict[str, list[float]]:
    """The stored duration of each invocation of a campaign (a tool's benchmarks share theirs), by
    configured benchmark, or by split group (its label) when ``split`` has groups; Python
    benchmarks together under ``python``."""
    group_of = {f"{bench}/{b}": g["label"] for bench, sp in split.items() for g in sp.get("groups", ())
                for b in g["benchmarks"]}
    seen: dict[tuple[str, str, int], float] = {}
    for r in store.runs():
        if r.campaign_id != campaign_id or r.duration is None:
            continue
        spec = SeriesName.parse(r.benchmark)
        if spec.reported is None:  # a Python benchmark (or its measure): one process per run
            key = ("python:" + spec.benchmark, r.version, r.run_index)
        else:  # a tool's reported benchmarks share their invocation's run index
            key = (group_of.get(r.benchmark, spec.benchmark), r.version, r.run_index)
        seen[key] = max(seen.get(key, 0.0), r.duration)
    out: dict[str, list[float]] = {}
    for (label, _, _), secs in seen.items():
        out.setdefault("python" if label.startswith("python:") else label, []).append(secs)
    return out


def print_rows(res: dict, metric: str, th: float, methods, label: str | None = None) -> None:
    for m in methods:
        e = res[m]
        what = label or {"muoptime": metric, "adaptive": "mean, target 0.01"}.get(m, METRICS[metric])
        print(f"| {m} | {what} | {th if m == 'muoptime' else '—'} | {e['time_saved']:.1%} | "
              f"{e['within1']:.0%} | {e['within3']:.0%} | {e['within5']:.0%} | "
              f"{e['fpr_vs_full']:.1%} | {e['fnr_vs_full']:.1%} | {e['full_changes']} | "
              + (f"{e['missed_planted']} ({e['full_missed_planted']}) | "
                 f"{e['false_alarms']} ({e['full_false_alarms']}) |" if e.get("truth", True) else "n/a | n/a |"))


@dataclass(frozen=True)
class PlanSet:
    """One set of plans that ``--real-run`` measures against the full configuration.

    Attributes
    ----------
    kind : str
        ``optimized`` (as ``regbench optimize`` derives them), ``forks kept`` (the same with the
        command's forks fixed, ``--jmh-forks``).
    stored : list of ExecutionPlan
        The plans.
    campaign : CampaignPlans
        What ``run --plan optimized`` runs of them (:func:`regbench.optimize.plans.plans_for_campaign`,
        read when they were the current plans).
    config_name : str
        The configuration its campaigns are stored under (one per set: a campaign skips the
        trials stored for its configuration).
    estimate : SuiteEstimate or None
        ``regbench optimize``'s estimate of the suite's time under them.
    """

    kind: str
    stored: list
    campaign: object
    config_name: str
    estimate: object


def forks_kept_specs(specs, forks: int) -> list:
    """``specs`` with ``-f "${REGBENCH_FORKS:-N}"`` read as ``-f "N"``: the same suite whose
    command sets its forks, which plans then keep (docs/optimize.md "Forks the command sets")."""
    token = f"${{{FORKS_ENV}:-{forks}}}"
    return [dataclasses.replace(s, command=tuple(a.replace(token, str(forks)) for a in s.command)) for s in specs]


def real_run(name: str, args, work: Path, full_cid: int, repeats: int, data=None) -> None:
    """Derive and store the plans of the full campaign as ``regbench optimize`` does, then run a
    version with no change (a copy of v3) for real, with the full configuration and with
    ``--plan optimized`` (as ``regbench run --plan optimized`` does), ``repeats`` times in
    alternating order, each repeat on a new copy; print the trials' wall time of each.  With
    ``--jmh-forks`` above 1, the JMH suite's plans with the forks kept (its command's ``-f``
    fixed) are derived from the same runs and measured in the same repeats.  With
    ``--real-priced``, then derive the plans again with each run's fixed cost measured from the
    runs of both lengths now stored, and measure those the same way."""
    from regbench.optimize.plans import OptimizeOptions, derive_plans, plans_for_campaign

    suite = SUITES[name]()
    config = load_config(work / name / "regbench.toml")
    names = [b.name for b in config.benchmarks]
    load_before = loadavg()
    forks = JMH_FORKS["n"] if name == "java" else 1
    options = OptimizeOptions(metric=args.real_metric, threshold=args.real_threshold, min_runs=args.min_runs)
    phases = [("optimized", False)] + ([("priced", True)] if getattr(args, "real_priced", False) else [])
    with Store(work / f"{name}.db") as store:
        for phase, refresh in phases:
            sets = []
            if phase == "optimized" and forks > 1:
                # Derived first, from the same stored runs as the plans that reduce the forks (no
                # campaign in between): the store's current plans are then the latter.
                kept = derive_plans(store, campaign_id=full_cid, options=options,
                                    specs=forks_kept_specs(config.benchmarks, forks))
                sets.append(PlanSet("forks kept", [d.plan for d in kept.derived] + list(kept.kept),
                                    plans_for_campaign(store, names, configured=names, machine="here"),
                                    "forks-kept", kept.suite))
            # "priced": the plans derived again (`regbench optimize --refresh`) now that the store
            # holds runs of two lengths (the full campaign's and the optimized ones'), so that each
            # run's fixed cost is measured and priced (regbench.optimize.algorithm.run_overhead).
            t0 = time.perf_counter()
            derived = derive_plans(store, campaign_id=full_cid, options=options, refresh=refresh or bool(sets),
                                   specs=config.benchmarks)
            derive_seconds = time.perf_counter() - t0
            stored = [d.plan for d in derived.derived] + list(derived.kept)
            sets.insert(0, PlanSet("optimized", stored, plans_for_campaign(store, names, configured=names,
                                                                           machine="here"),
                                   "default", derived.suite))
            first = 0 if phase == "optimized" else repeats
            _measure_pairs(name, phase, sets, args, work, full_cid, range(first, first + repeats), store, config,
                           suite, f"derived in {derive_seconds:.0f} s from campaign {full_cid} (v3); load average "
                           f"before {load_before}", data)
            if phase == "priced" and data is not None:
                # The accuracy of plans priced so, simulated as in the first table (plans from
                # v1, every version scored against the full configuration), next to unpriced.
                overheads = {p.benchmark: p.run_overhead or 0.0 for p in stored}
                fork_overheads = {p.benchmark: p.fork_overhead or 0.0 for p in stored}
                print("\nSimulated as in the first table, iterations alone priced and then each run's "
                      "fixed cost as measured (`time saved` counts iterations only):\n")
                print("| method | metric | threshold | time saved | within 1% | within 3% | within 5% | "
                      "FPR vs full | FNR vs full | full's changes | missed planted (full) | false alarms (full) |")
                print("|---|---|---|---|---|---|---|---|---|---|---|---|")
                for label, oh, foh in ((args.real_metric, None, None),
                                       (f"{args.real_metric}, runs priced", overheads, fork_overheads)):
                    res = evaluate(data, SUITES[name](), metric=args.real_metric, threshold=args.real_threshold,
                                   min_runs=args.min_runs, seed=1, overheads=oh, fork_overheads=foh)
                    print_rows(res, args.real_metric, args.real_threshold, ["muoptime"], label)
                sys.stdout.flush()


def campaign_results(store: Store, campaign_id: int, location: str) -> dict[str, float]:
    """series -> the result (``location``: mean or median) of all the measured samples of a
    campaign's ok runs of it, pooled (its forks' too); times only (no measure, no secondary metric)."""
    stat = np.mean if location == "mean" else np.median
    keys = {(r.benchmark, r.version) for r in store.runs() if r.campaign_id == campaign_id and r.status == "ok"}
    out = {}
    for bench, ver in sorted(keys):
        if SeriesName.parse(bench).measure is not None or secondary(bench):
            continue
        runs = [r for r in store.raw_runs(bench, ver) if r.campaign_id == campaign_id and r.status == "ok"]
        out[bench] = float(stat(np.concatenate([np.asarray(r.samples[r.warmup:], dtype=float) for r in runs])))
    return out


def within_shares(a: dict[str, float], b: dict[str, float]) -> tuple[float, float, float, int]:
    """The shares of the series of ``b`` whose result in ``a`` is within 1, 3 and 5 % of ``b``'s,
    and how many series were compared."""
    r = np.array([abs(a[k] - b[k]) / abs(b[k]) for k in b if k in a])
    if r.size == 0:
        return float("nan"), float("nan"), float("nan"), 0
    return float(np.mean(r <= 0.01)), float(np.mean(r <= 0.03)), float(np.mean(r <= 0.05)), int(r.size)


def plan_text(p, full_forks: int) -> str:
    """A stored plan as ``runs x forks x iterations`` (``full_forks``, the command's, where the
    plan does not set them), ``(unstable)`` where nothing was under the threshold."""
    return f"{p.runs}x{p.forks or full_forks}x{p.iterations}" + ("" if p.stable else " (unstable)")


def simulated_within(plans, data, location: str) -> tuple[float, float, float, int]:
    """The stored ``plans`` simulated on every version of the full campaign (``data``, as the first
    table's), each benchmark's result under its plan against the full configuration's: the
    shares within 1, 3 and 5 % (benchmark x version results)."""
    rates = []
    for p in plans:
        if p.benchmark not in data:
            continue
        for x, w, _ in data[p.benchmark].values():
            c = Configuration(p.runs, p.iterations, forks=p.forks or forks_of(x))
            s = score_configurations(x, [c, full_of(x, None)], warmup=w,
                                     metric="cv" if location == "mean" else "rmad")
            rates.append(abs(s[0].result - s[1].result) / abs(s[1].result))
    r = np.array(rates)
    if r.size == 0:
        return float("nan"), float("nan"), float("nan"), 0
    return float(np.mean(r <= 0.01)), float(np.mean(r <= 0.03)), float(np.mean(r <= 0.05)), int(r.size)


def _measure_pairs(name, phase, sets, args, work, full_cid, repeats, store, config, suite, derived_text,
                   data=None) -> None:
    """For each repeat (index in ``repeats``), on a new copy of v3, a campaign with the full
    configuration and one with each set of plans in ``sets``, alternating which runs first and
    last; print their table, each set's plans, and how far each benchmark's measured result
    under the plans is from the full campaign's of the same repeat (and, with ``data``, the same
    plans simulated on the first table's runs)."""
    repo = work / name
    when = datetime(2025, 1, 4, tzinfo=UTC)
    rows = []
    kinds = [s.kind for s in sets]
    by_kind = {s.kind: s for s in sets}
    durations: dict[str, list[dict[str, list[float]]]] = {k: [] for k in ["full", *kinds]}
    splits: dict[str, dict] = {k: {} for k in kinds}
    location = METRICS[args.real_metric]
    results: dict[str, list[dict[str, float]]] = {k: [] for k in ["full", *kinds]}
    for k in repeats:
        sha = git_commit(repo, {"README": f"no change ({k + 1})\n"}, f"v{4 + k}: no change (copy of v3)",
                         when=when + timedelta(days=k))
        order = ["full", *kinds[::-1]] if k % 2 else [*kinds, "full"]
        measured: dict[str, tuple[float, int, float]] = {}
        for kind in order:
            clock = _TrialClock()
            if kind == "full":
                # Its own configuration name: the optimized campaign runs the same version
                # under the plans' configuration ("default"), which must have no run of it.
                result = run_campaign(config, store, revisions=sha, seed=10 + k, machine="here",
                                      cache_dir=work / f"{name}-trees", config_name="full-measured",
                                      reporter=clock)
            else:
                result = run_campaign(config, store, revisions=sha, seed=10 + k, machine="here",
                                      cache_dir=work / f"{name}-trees", optimized=by_kind[kind].campaign,
                                      config_name=by_kind[kind].config_name, reporter=clock)
                plan = next(c for c in store.campaigns() if c.id == result.campaign_id).plan or {}
                splits[kind] = plan.get("split", {})
            if not result.ok:
                raise SystemExit(f"{name}: --real-run {kind} campaign: runs failed: {result.failed[:1]}")
            measured[kind] = (clock.seconds, len(result.order), sum(result.counts.values()))
            results[kind].append(campaign_results(store, result.campaign_id, location))
            durations[kind].append(invocation_seconds(store, result.campaign_id, splits.get(kind, {})))
        rows.append((k + 1, " then ".join(order), measured))
    full_forks = JMH_FORKS["n"] if name == "java" else 1
    sim = {s.kind: simulated_saving(s.stored, config, suite, splits[s.kind], full_forks) for s in sets}
    load_after = loadavg()
    stored = sets[0].stored
    overheads = [p.run_overhead for p in stored if p.run_overhead]
    fork_overheads = [p.fork_overhead for p in stored if p.fork_overhead]
    priced = "".join(
        f"; each {what}'s fixed cost priced for {len(o)} of {len(stored)} plans (median {np.median(o):.1f} iterations)"
        for what, o in (("run", overheads), ("fork", fork_overheads)) if o) or "; iterations alone priced"
    print(f"\n#### {name}: measured, not simulated (`run --plan optimized`), plans {args.real_metric} "
          f"threshold {args.real_threshold} min-runs {args.min_runs}{priced}, {derived_text}, after {load_after}\n")
    tag = {k: (f", {k}" if len(kinds) > 1 else "") for k in kinds}
    head = ["repeat", "order", "full: trials wall s"]
    for k in kinds:
        head += [f"{k}: trials wall s", f"{k} / full", "time saved, measured" + (f" ({k})" if tag[k] else ""),
                 f"time saved, simulated (per benchmark{tag[k]})", f"simulated (as invoked{tag[k]})"]
    head += ["invocations full", *(f"invocations {k}" for k in kinds)]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    total = {k: 0.0 for k in ["full", *kinds]}
    for k, order_text, m in rows:
        cells = [str(k), order_text, f"{m['full'][0]:.1f}"]
        for kind in ["full", *kinds]:
            total[kind] += m[kind][0]
        for kind in kinds:
            ratio = m[kind][0] / m["full"][0]
            cells += [f"{m[kind][0]:.1f}", f"{ratio:.2f}", f"{1 - ratio:.1%}", f"{sim[kind][0]:.1%}",
                      f"{sim[kind][1]:.1%}"]
        cells += [str(m[kind][1]) for kind in ["full", *kinds]]
        print("| " + " | ".join(cells) + " |")
    if len(rows) > 1:
        cells = ["all", "", f"{total['full']:.1f}"]
        for kind in kinds:
            ratio = total[kind] / total["full"]
            cells += [f"{total[kind]:.1f}", f"{ratio:.2f}", f"{1 - ratio:.1%}", f"{sim[kind][0]:.1%}",
                      f"{sim[kind][1]:.1%}"]
        print("| " + " | ".join(cells + [""] * (1 + len(kinds))) + " |")
    for s in sets:
        e = s.estimate
        if e is not None and np.isfinite(e.low):
            share = f"{e.low:.1%}" if e.high - e.low < 1e-9 else f"{e.low:.1%}-{e.high:.1%}"
            print(f"\n{s.kind}: `regbench optimize` estimated the suite's time under the plans at "
                  f"{'at least ' if e.lower_bound else ''}{share} of the full configuration's "
                  f"({'; '.join(e.notes) or 'its runs priced as the tool says'})")
    for kind in ["full", *kinds]:
        per: dict[str, list[float]] = {}
        for d in durations[kind]:
            for label, secs in d.items():
                per.setdefault(label, []).extend(secs)
        text = ", ".join(f"{label} {np.mean(secs):.2f} s x {len(secs)}" for label, secs in sorted(per.items()))
        print(f"\n{kind}: mean seconds of one invocation (the process, as stored), all repeats: {text}")
    for kind in kinds:
        for bench, sp in splits[kind].items():
            who = f"{kind}, " if len(kinds) > 1 else ""
            if sp.get("groups"):
                w = config.benchmark(bench).warmup
                text = "; ".join(f"{g['label']} {g['runs']} runs x "
                                 + (f"{g['forks']} fork{'s' if g['forks'] > 1 else ''} x " if g.get("forks") else "")
                                 + f"({w} + {g['iterations']}) iterations: {len(g['benchmarks'])} benchmarks"
                                 for g in sp["groups"])
                print(f"\n{who}{bench}: {len(sp['groups'])} invocations per round ({text}), "
                      f"{sum(g['runs'] for g in sp['groups'])} per version (full: {config.benchmark(bench).runs})")
            else:
                print(f"\n{who}{bench}: not split ({sp.get('reason')})")
    for s in sets:
        counts: dict[str, int] = {}
        for p in s.stored:
            if not secondary(p.benchmark):
                counts[plan_text(p, full_forks)] = counts.get(plan_text(p, full_forks), 0) + 1
        print(f"\n{s.kind}: plans (runs x forks x iterations: benchmarks): "
              + ", ".join(f"{t}: {n}" for t, n in sorted(counts.items(), key=lambda kv: -kv[1])) + "; "
              + ", ".join(f"{SeriesName.parse(p.benchmark).reported or p.benchmark} {plan_text(p, full_forks)}"
                          for p in sorted(s.stored, key=lambda p: p.benchmark) if not secondary(p.benchmark)))
    print(f"\nResults ({location} of every measured iteration of a campaign) within 1/3/5 % of the full "
          "configuration's:\n")
    print("| plans | compared with | within 1% | within 3% | within 5% | benchmark results |")
    print("|---|---|---|---|---|---|")
    for kind in kinds:
        shares = [within_shares(results[kind][i], results["full"][i]) for i in range(len(rows))]
        n = sum(x[3] for x in shares)
        avg = [sum(x[j] * x[3] for x in shares) / n if n else float("nan") for j in range(3)]
        print(f"| {kind}, measured | the full campaign of the same repeat (same version) | {avg[0]:.0%} | "
              f"{avg[1]:.0%} | {avg[2]:.0%} | {n} ({len(rows)} repeats) |")
        if data is not None:
            sim_stored = by_kind[kind].stored
            w1, w3, w5, n = simulated_within(sim_stored, data, location)
            print(f"| {kind}, simulated | the full configuration, on v1-v3 of the first table's campaign | "
                  f"{w1:.0%} | {w3:.0%} | {w5:.0%} | {n} |")
    if len(rows) > 1:  # the noise floor: two full campaigns of the same code
        shares = [within_shares(results["full"][i + 1], results["full"][i]) for i in range(len(rows) - 1)]
        n = sum(x[3] for x in shares)
        avg = [sum(x[j] * x[3] for x in shares) / n if n else float("nan") for j in range(3)]
        print(f"| full, measured | the full campaign of the previous repeat (no change between them) | "
              f"{avg[0]:.0%} | {avg[1]:.0%} | {avg[2]:.0%} | {n} |")
    if phase == "optimized" and not any(p.stable for p in stored):
        print("\n(no plan under the threshold: every plan is the full configuration)")
    sys.stdout.flush()


def plan_summary(res: dict) -> str:
    """muOpTime's plans from v1, ``runs x forks x iterations: benchmarks``, most common first."""
    counts: dict[Configuration, int] = {}
    for c in res["chosen"].values():
        counts[c] = counts.get(c, 0) + 1
    return ", ".join(f"{c.runs}x{c.forks}x{c.iterations}: {n}"
                     for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", choices=["go", "python", "java", "go-btree", "pyperformance", "all"], default="all")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--min-runs", type=int, default=2)
    ap.add_argument("--metrics", default="cv,rmad,rciw1,rciw3")
    ap.add_argument("--thresholds", default="0.01,0.02")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--slices", type=int, default=1, metavar="N",
                    help="time the Python suite's iterations as N slices: the duration of an iteration becomes "
                         "a level optimize may reduce [default: 1, not sliced]")
    ap.add_argument("--iteration-time", metavar="DURATION",
                    help="one iteration of the Go and JMH benchmarks, as the tools write it (e.g. 200ms) "
                         "[default: Go 20ms, JMH 50ms]")
    ap.add_argument("--jmh-forks", type=int, default=1, metavar="N",
                    help="JMH forks a run of the java suite: with N > 1 its command runs -f \"${REGBENCH_FORKS:-N}\", "
                         "so the forks are a level of the plans; the tables add muOpTime with the forks kept, and "
                         "--real-run measures those plans too [default: 1, -f 1]")
    ap.add_argument("--java-opts", default="", metavar="OPTS",
                    help="options of the java command that runs JMH (not of its forks), e.g. "
                         "-Djmh.ignoreLock=true when another JMH may run at the same time [default: none]")
    ap.add_argument("--real-run", action="store_true",
                    help="after the simulation, store the plans (as `regbench optimize`) and run one more "
                         "version with no change for real, full and `--plan optimized`; print the measured times")
    ap.add_argument("--real-repeats", type=int, default=2, metavar="N",
                    help="--real-run: pairs of campaigns (alternating which runs first), each on a new copy of v3")
    ap.add_argument("--real-metric", default="rciw3", choices=sorted(METRICS),
                    help="--real-run: the plans' metric [default: regbench optimize's, rciw3]")
    ap.add_argument("--real-priced", action="store_true",
                    help="--real-run: then derive the plans again (optimize --refresh) with each run's fixed "
                         "cost measured from the runs of both lengths now stored, and measure them too")
    ap.add_argument("--real-threshold", type=float, default=0.01,
                    help="--real-run: the plans' threshold [default: regbench optimize's, 0.01]")
    args = ap.parse_args(argv)
    if args.jmh_forks < 1:
        ap.error("--jmh-forks must be a positive integer")
    if args.iteration_time:
        ITERATION_TIME.update(go=args.iteration_time, java=args.iteration_time)
    PY_SLICES["n"] = args.slices
    JMH_FORKS["n"] = args.jmh_forks
    JAVA_OPTS["opts"] = args.java_opts
    if args.suite in ("go", "go-btree", "all") and shutil.which("go") is None:
        raise SystemExit("go is not installed")
    work = Path(tempfile.mkdtemp(prefix="regbench-optimize-"))
    try:
        names = ["go", "python", "java"] if args.suite == "all" else [args.suite]
        for name in names:
            data, seconds, full_cid = run_suite(name, args, work)
            forks = max((forks_of(x) for per in data.values() for x, _, _ in per.values()), default=1)
            if forks > 1:
                print(f"\n### {name}: {len(data)} benchmarks x 3 versions, full configuration {args.runs} runs x "
                      f"{forks} forks x (JMH's {JMH_WARMUP} warm-up + {args.iterations}) iterations, campaign "
                      f"{seconds:.0f} s wall\n")
                print(f"`time saved` counts the iterations of every fork, JMH's {JMH_WARMUP} unreported warm-up "
                      "iterations of each fork included (not the JVMs' start); muoptime, minimum and random choose "
                      f"runs x forks x iterations (`{FORKS_ENV}`), `forks kept` rows the same metric with the "
                      f"{forks} forks in every configuration; adaptive adds runs of {forks} forks.\n")
            else:
                print(f"\n### {name}: {len(data)} benchmarks x 3 versions, full configuration {args.runs} runs x "
                      f"({args.warmup} + {args.iterations}) iterations, campaign {seconds:.0f} s wall\n")
            print("| method | metric | threshold | time saved | within 1% | within 3% | within 5% | "
                  "FPR vs full | FNR vs full | full's changes | missed planted (full) | false alarms (full) |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|")
            thresholds = [float(x) for x in args.thresholds.split(",")]
            summaries = []
            for metric in args.metrics.split(","):
                for th in thresholds:
                    res = evaluate(data, SUITES[name](), metric=metric, threshold=th, min_runs=args.min_runs, seed=1)
                    # a baseline depends only on the location (mean: cv, median: rmad)
                    print_rows(res, metric, th, [m for m in ("muoptime", "minimum", "random", "adaptive") if m in res
                                                 and (m == "muoptime" or th == thresholds[0]
                                                      and metric in ("cv", "rmad"))])
                    if args.slices > 1 and name in ("python", "pyperformance"):  # the same runs, the duration level left out
                        res = evaluate(data, SUITES[name](), metric=metric, threshold=th, min_runs=args.min_runs,
                                       seed=1, use_slices=False)
                        print_rows(res, metric, th, ["muoptime"], f"{metric}, runs x iterations only")
                    if forks > 1:  # the same runs, the forks kept as the command would set them
                        kept = evaluate(data, SUITES[name](), metric=metric, threshold=th, min_runs=args.min_runs,
                                        seed=1, fork_level=False)
                        print_rows(kept, metric, th, ["muoptime"], f"{metric}, forks kept ({forks})")
                        summaries.append(f"- {metric} {th}: {plan_summary(res)}; forks kept: {plan_summary(kept)}")
                    sys.stdout.flush()
            if summaries:
                print("\nmuoptime's plans from v1, runs x forks x iterations: benchmarks\n")
                print("\n".join(summaries))
            if args.real_run:
                real_run(name, args, work, full_cid, args.real_repeats, data)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"\nwork folder kept: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
