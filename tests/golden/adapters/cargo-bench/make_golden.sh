#!/bin/sh
# Regenerate the libtest (`cargo +nightly bench`) golden files from the tiny project in src/.
#
# Needs a nightly toolchain (`#![feature(test)]`): rustup toolchain install nightly.  Builds
# under the system temp directory (CARGO_TARGET_DIR), never in the source tree.
#   usage: make_golden.sh [OUTDIR]    (default: this directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
work=${TMPDIR:-/tmp}/regbench-golden-cargo-bench
rm -rf "$work/proj"
mkdir -p "$work"
cp -r "$here/src" "$work/proj"
cd "$work/proj"
export CARGO_TARGET_DIR="$work/target"
# One invocation, stdout only (what `cargo bench > FILE` keeps).
cargo +nightly bench --bench sum > "$out/single.txt"
# Three invocations, stdout and stderr together (`cargo bench 2>&1 | tee`): three runs of each
# benchmark, with cargo's progress lines mixed in.
: > "$out/repeated.txt"
for _ in 1 2 3; do
    cargo +nightly bench --bench sum >> "$out/repeated.txt" 2>&1
done
