#!/usr/bin/env bash
# DuckDB-dialect questions (bench/dialect_questions.yaml, 54 questions over the shop database that
# bench/dialect_db.py builds), with and without the dialect notes (setting dialect_notes), one run each.
# Writes docs/results/dialect/<config>.{jsonl,md,json}; RESUME=1 continues a run.
# IDS=bench/dialect_sample18.txt runs a fixed sample (every third question: all families).
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DIALECT_DB:-/tmp/duckask_dialect.duckdb}
[ -f "$DB" ] || .venv/bin/python bench/dialect_db.py --out "$DB"
mkdir -p docs/results/dialect
for config in ${*:-off auto}; do
  OUT=docs/results/dialect/notes-$config
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  .venv/bin/duckask eval bench/dialect_questions.yaml --db "$DB" --dialect-notes "$config" ${IDS:+--ids "$IDS"} \
    --out "$OUT.jsonl" --report "$OUT"
done
