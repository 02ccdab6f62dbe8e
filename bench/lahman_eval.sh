#!/usr/bin/env bash
# The demo database, taught and untaught: bench/lahman_questions.yaml (25 questions written
# independently of the demo's examples) on data/lahman.duckdb, one run each:
#   untaught - no example pairs and no semantic file (--examples "" --descriptions "")
#   taught   - what `duckask demo` uses: the demo's pairs (data/lahman_examples.yaml) and its semantic
#              file (data/lahman_semantic.yaml), applied by default to the demo database
# Writes docs/results/lahman/<config>.{jsonl,md,json}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/results/lahman
for config in ${*:-untaught taught}; do
  case $config in
    untaught) extra=(--examples "" --descriptions "") ;;
    taught)   extra=() ;;
    *) echo "unknown configuration: $config (untaught, taught)" >&2; exit 2 ;;
  esac
  OUT=docs/results/lahman/$config
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  .venv/bin/duckask eval bench/lahman_questions.yaml --db data/lahman.duckdb ${extra[@]+"${extra[@]}"} \
    --out "$OUT.jsonl" --report "$OUT"
done
