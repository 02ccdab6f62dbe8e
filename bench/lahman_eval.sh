#!/usr/bin/env bash
# The demo database, taught and untaught: bench/lahman_questions.yaml (25 questions written
# independently of the demo's examples) on data/lahman.duckdb, one run each:
#   untaught - no example pairs and no semantic file (--examples "" --descriptions "")
#   taught   - what `duckask demo` uses: the demo's pairs (data/lahman_examples.yaml) and its semantic
#              file (data/lahman_semantic.yaml, dbt's spec), applied by default to the demo database:
#              the plan path first for questions that name a metric, then the SQL path ("both")
#   taught-sql - the same knowledge, plan path off (the SQL path alone)
# Plan path alone = the "both" records that the plan answered (path: plan) and got right.
# CAL (../shared/tools/calibrate.py) is timed before each configuration and written beside its records.
# Writes docs/results/lahman/<config>.{jsonl,md,json}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/results/lahman
for config in ${*:-untaught taught}; do
  case $config in
    untaught) extra=(--examples "" --descriptions "") ;;
    taught)   extra=() ;;
    taught-sql) extra=(--plan-path off) ;;
    *) echo "unknown configuration: $config (untaught, taught, taught-sql)" >&2; exit 2 ;;
  esac
  OUT=docs/results/lahman/$config
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/duckask eval bench/lahman_questions.yaml --db data/lahman.duckdb ${extra[@]+"${extra[@]}"} \
    --out "$OUT.jsonl" --report "$OUT"
done
