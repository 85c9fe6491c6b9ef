#!/bin/sh
# Regenerate the JMH golden files from the tiny Maven project in src/.
#
# Needs java (17+) and mvn; JMH comes from Maven Central.  Builds in a copy under the system
# temp directory (never in the source tree), so no build output lands in the repository.
#   usage: make_golden.sh [OUTDIR]    (default: this directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
work=${TMPDIR:-/tmp}/regbench-golden-jmh
rm -rf "$work/proj"
mkdir -p "$work"
cp -r "$here/src" "$work/proj"
cd "$work/proj"
mvn -q -B package -DskipTests
run() { java -cp "target/classes:target/lib/*" org.openjdk.jmh.Main regbench.golden.SumBench "$@"; }
# Throughput and average time, two forks, one warm-up and three measured iterations, with the
# GC profiler's secondary metrics.
run -f 2 -wi 1 -i 3 -w 100ms -r 100ms -bm thrpt,avgt -prof gc -rf json -rff "$out/thrpt_avgt_gc.json"
# Sample mode (a histogram per iteration), one parameter value, short iterations to keep it small.
run -f 2 -wi 1 -i 3 -w 100ms -r 20ms -bm sample -p size=10 -rf json -rff "$out/sample.json"
# Benchmarks that throw: JMH prints them on its console only (failing.out), leaves them out of
# the JSON and exits with status 0.
run_fail() { java -cp "target/classes:target/lib/*" org.openjdk.jmh.Main regbench.golden.FailBench "$@"; }
run_fail -f 1 -wi 1 -i 2 -w 100ms -r 100ms -rf json -rff "$out/failing.json" > "$out/failing.out"
