#!/usr/bin/env bash
# The real benchmark tools that the adapters' live tests run (tests/test_adapters_*.py), from
# Debian's packages: Google Benchmark and hyperfine; the instruction counters of
# `measures = ["instructions"]` (tests/test_run_measures.py): valgrind (callgrind) and perf
# (linux-perf); and Chromium, which Playwright drives in the dashboard's tests
# (tests/test_web_*.py; Playwright's own browser download is not used). Go, a JDK with Maven and Rust (stable and nightly) are on this kind of machine
# already; a live test whose tool is missing is skipped with the reason. Then warm Go's build
# cache, so the live go test stays well inside its time.
set -euo pipefail
need=()
[ -f /usr/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v g++ >/dev/null || need+=(g++)
command -v valgrind >/dev/null || need+=(valgrind)
command -v perf >/dev/null || need+=(linux-perf)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >&2
  else
    sudo sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${need[*]}" >&2
  fi
fi
if command -v go >/dev/null || [ -x /usr/local/go/bin/go ]; then
  PATH=$PATH:/usr/local/go/bin
  (cd tests/golden/adapters/go/src && go test -run '^$' -bench . -benchtime 1x . >/dev/null 2>&1) || true
fi
