#!/usr/bin/env bash
# Regenerate the pytest-benchmark golden files from src/bench_tiny.py with the real tool (the file
# is not named test_*.py so that regbench's own test run does not collect it):
#   PYTHON=/tmp/adapters-venv/bin/python bash make_golden.sh
# (any Python with pytest and pytest-benchmark from PyPI).
#
#   benchmark-json.json  --benchmark-json: always carries every round's timing (stats.data)
#   saved-no-data.json   --benchmark-save without --benchmark-save-data: aggregates only, which
#                        regbench refuses with a hint
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
# -c /dev/null: not regbench's own pytest settings.  Small timing budgets keep the files small.
common=(-q -p no:cacheprovider -c /dev/null --rootdir . --benchmark-storage="file://$store"
        --benchmark-min-time=0.00005 --benchmark-max-time=0.002 --benchmark-min-rounds=5
        --benchmark-disable-gc src/bench_tiny.py)
"$PY" -m pytest "${common[@]}" --benchmark-json=benchmark-json.json --benchmark-save=golden
find "$store" -name '*_golden.json' -exec cp {} saved-no-data.json \;
{ "$PY" -m pytest --version; "$PY" -m pip show pytest-benchmark | grep -i '^version'; } > tool-version.txt 2>&1
