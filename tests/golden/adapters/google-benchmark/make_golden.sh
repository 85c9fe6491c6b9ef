#!/bin/sh
# Regenerate the golden Google Benchmark files from src/tiny.cc with the Debian library
# (apt-get install -y g++ libbenchmark-dev).  Run from anywhere; writes beside this script.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -o "$tmp/tiny" "$here/src/tiny.cc" -lbenchmark -lpthread
# 3 repetitions: 3 samples per benchmark, then the mean/median/stddev/cv aggregates.
"$tmp/tiny" --benchmark_format=json --benchmark_repetitions=3 --benchmark_min_time=0.01 \
    > "$here/repetitions.json"
# One repetition: one sample each, no aggregates.
"$tmp/tiny" --benchmark_format=json --benchmark_min_time=0.01 > "$here/single.json"
