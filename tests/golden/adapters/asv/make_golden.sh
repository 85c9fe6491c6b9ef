#!/usr/bin/env bash
# Regenerate the asv golden files with the real tool:
#   ASV=/tmp/adapters-venv/bin/asv bash make_golden.sh
# (asv from PyPI, in a venv whose Python runs the benchmarks: "environment_type": "existing").
#
# src/ is copied into a throw-away git repository (asv benchmarks commits); HOME points there too
# so that `asv machine` does not write ~/.asv-machine.json.
#
# results/ keeps asv's layout (results/<machine>/<commit>-<env>.json next to results/benchmarks.json):
#   results/golden/samples.json     asv run --record-samples: raw samples per parameter combination
#   results/golden/no-samples.json  asv run without it: statistics only (regbench refuses it)
#   results/golden/machine.json     asv's machine description
#   results/benchmarks.json         units, types and parameter names of the benchmarks
set -euo pipefail
cd "$(dirname "$0")"
ASV=${ASV:-asv}
here=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r src/. "$work/"
cd "$work"
export HOME=$work GIT_AUTHOR_NAME=golden GIT_AUTHOR_EMAIL=golden@example.invalid
export GIT_COMMITTER_NAME=golden GIT_COMMITTER_EMAIL=golden@example.invalid
git init -q -b main .
git add -A
git commit -q -m "tiny benchmarks"
"$ASV" machine --yes --machine golden >/dev/null
fast=(--machine golden --python=same -a repeat=5 -a number=20 -a warmup_time=0 --show-stderr)
"$ASV" run "${fast[@]}" --record-samples --set-commit-hash "$(git rev-parse HEAD)"
out=$here/results
rm -rf "$out"
mkdir -p "$out/golden"
cp .asv/results/golden/*-*.json "$out/golden/samples.json"
rm .asv/results/golden/*-*.json
"$ASV" run "${fast[@]}" --set-commit-hash "$(git rev-parse HEAD)"
cp .asv/results/golden/*-*.json "$out/golden/no-samples.json"
cp .asv/results/golden/machine.json "$out/golden/machine.json"
cp .asv/results/benchmarks.json "$out/benchmarks.json"
"$ASV" --version > "$here/tool-version.txt"
