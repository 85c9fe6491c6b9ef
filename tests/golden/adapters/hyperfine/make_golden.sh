#!/bin/sh
# Regenerate the golden hyperfine files (apt-get install -y hyperfine).  Run from anywhere;
# writes beside this script.  Nothing to build: the commands are coreutils'.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# Two commands without a shell (-N), 5 timed runs after 1 warm-up run each.
hyperfine -N --style none --warmup 1 --runs 5 --export-json "$here/two-commands.json" \
    'sleep 0.01' 'true' > /dev/null 2>&1
# A parameter scan: `parameters` in each result.
hyperfine -N --style none --runs 3 --export-json "$here/scan.json" \
    --parameter-list n 1,2 'sleep 0.00{n}' > /dev/null 2>&1
# A command that fails, kept with -i: non-zero `exit_codes`.
hyperfine -N --style none --runs 3 -i --export-json "$here/failure.json" 'false' > /dev/null 2>&1
