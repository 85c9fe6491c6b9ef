#!/usr/bin/env bash
# Regenerate the pyperf golden files with the real tool:
#   PYTHON=/tmp/adapters-venv/bin/python bash make_golden.sh
# (any Python with pyperf from PyPI).
#
#   suite.json     two benchmarks from src/bench_tiny.py (pyperf.Runner): 2 worker processes with
#                  1 warm-up and 3 values each, after one calibration run (warm-ups only)
#   timeit.json.gz `python -m pyperf timeit`, gzip-compressed because of the .gz suffix
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
rm -f suite.json timeit.json.gz
small=(--processes 2 --values 3 --warmups 1 --min-time 0.0005)
"$PY" src/bench_tiny.py "${small[@]}" -o suite.json
"$PY" -m pyperf timeit "${small[@]}" --loops 100 -o timeit.json.gz -s 'x = list(range(100))' 'sorted(x)'
"$PY" -m pip show pyperf | grep -i '^version' > tool-version.txt
