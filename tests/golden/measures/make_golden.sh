#!/bin/sh
# Regenerate the golden output of the instruction counters read by regbench.run.measures
# (apt-get install -y valgrind linux-perf gcc).  Run from anywhere; writes beside this script.
#
#   callgrind.out          valgrind --tool=callgrind on a tiny C loop (one process)
#   callgrind-fork.out.*   the same program forking once without exec: one file per process
#   perf-stat.csv          perf stat -x, -e instructions:u -o FILE -- the loop, on a machine whose
#                          CPU counters perf can read (bare metal); skipped where it says
#                          <not supported>, keeping the file from an earlier run
#   perf-not-supported.csv the same in a virtual machine without counters (<not supported>)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/loop.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int forks = argc > 2;
    if (forks && fork() == 0) n /= 2;       /* the child does half the work, then exits */
    volatile long s = 0;
    for (long i = 0; i < n; i++) s += i;
    if (forks) wait(NULL);
    return 0;
}
C
cc -O1 -o "$work/loop" "$work/loop.c"
# Header lines name the command and pid: keep them, they are part of the format.
valgrind --tool=callgrind -q --callgrind-out-file="$work/cg.out" "$work/loop" 1000000
mv "$work/cg.out" "$here/callgrind.out"
rm -f "$here"/callgrind-fork.out.*
valgrind --tool=callgrind -q --callgrind-out-file="$work/fork.out.%p" "$work/loop" 1000000 fork
k=0
for f in "$work"/fork.out.*; do k=$((k + 1)); mv "$f" "$here/callgrind-fork.out.$k"; done
if command -v perf >/dev/null; then
    perf stat -x, -e instructions:u -o "$work/perf.csv" -- "$work/loop" 1000000
    if grep -q '<not supported>' "$work/perf.csv"; then
        mv "$work/perf.csv" "$here/perf-not-supported.csv"
    else
        mv "$work/perf.csv" "$here/perf-stat.csv"
    fi
fi
