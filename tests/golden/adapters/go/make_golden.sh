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
