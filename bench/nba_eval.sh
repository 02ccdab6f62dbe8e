#!/usr/bin/env bash
# End to end on the 52-table NBA warehouse: the 20 held-out questions of
# bench/nba_questions_heldout.yaml (gold SQL returns only the asked-for columns), with the
# descriptions file, graph vs single prompt. The single prompt has to fit all 52 tables into the
# model's 4,096-token context and cannot: its rows record that error. Writes docs/results/nba_heldout.*
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=docs/results/nba_heldout
[ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
.venv/bin/duckask eval bench/nba_questions_heldout.yaml --db ../shared/data/nba \
  --descriptions bench/nba_descriptions.yaml --baseline single-prompt --out "$OUT.jsonl" --report "$OUT" "$@"
