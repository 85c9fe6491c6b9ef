#!/bin/sh
# Regenerate the golden Go files from the package in src/ (needs the go command).
# Run from anywhere; writes beside this script.  -benchtime 2000x keeps it to a second.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/src"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
go test -run '^$' -bench . -count 3 -benchmem -benchtime 2000x . > "$here/bench.txt"
go test -run '^$' -bench . -count 3 -benchmem -benchtime 2000x -json . > "$here/bench.json"
# -v text: each benchmark's bare name is printed on its own line before its results.
go test -run '^$' -bench . -count 2 -benchtime 2000x -v . > "$here/bench-v.txt"
# Failed benchmarks (failing/src): go test exits 1 (2 for the panic) and still prints the others.
cd "$here/failing/src"
go test -run '^$' -bench . -count 2 -benchmem -benchtime 100x -cpu 2 . > "$here/failing/fail.txt" || true
go test -run '^$' -bench . -count 2 -benchtime 100x -cpu 2 -v . > "$here/failing/fail-v.txt" || true
go test -run '^$' -bench . -count 2 -benchtime 100x -cpu 2 -json . > "$here/failing/fail.json" || true
go test -run '^$' -bench . -count 1 -benchtime 100x -cpu 1,2 . > "$here/failing/fail-cpus.txt" || true
REGBENCH_GOLDEN_PANIC=late go test -run '^$' -bench . -count 2 -benchtime 100x -cpu 2 . > "$here/failing/panic.txt" || true
# A panic on a benchmark's first call: whether its name is printed before the panic depends on
# timing (both happen); the golden file is one where it is not (run again until line 7 is the panic).
REGBENCH_GOLDEN_PANIC=first go test -run '^$' -bench . -count 2 -benchtime 100x -cpu 2 . > "$here/failing/panic-first.txt" || true
# The traces' paths without this checkout's folder.
sed -i "s|$here/failing/src/|/src/|" "$here"/failing/*.txt
