#!/bin/sh
# Regenerate the Criterion golden files (results/, a copy of target/criterion) from the tiny
# cargo project in src/.
#
# Needs cargo (stable); criterion comes from crates.io.  Builds under the system temp directory
# (CARGO_TARGET_DIR), never in the source tree, and reuses that build on the next run.
#   usage: make_golden.sh [OUTDIR]    (default: this directory's results/)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/results}
work=${TMPDIR:-/tmp}/regbench-golden-criterion
rm -rf "$work/proj" "$work/target/criterion"
mkdir -p "$work"
cp -r "$here/src" "$work/proj"
cd "$work/proj"
CARGO_TARGET_DIR="$work/target" cargo bench --bench sum
rm -rf "$out"
mkdir -p "$out"
# Everything Criterion wrote except the HTML report (there is none: the bench disables plots).
cp -r "$work/target/criterion/." "$out/"
rm -rf "$out/report"
