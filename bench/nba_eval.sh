#!/usr/bin/env bash
# End-to-end accuracy on the 52-table NBA warehouse (30 questions with gold SQL in
# bench/nba_questions.yaml), embedded model, with the descriptions overlay (bench/nba_descriptions.yaml).
# Writes docs/results/nba_eval_described.*
set -euo pipefail
cd "$(dirname "$0")/.."
NBA=../shared/data/nba
rm -f docs/results/nba_eval_described.jsonl
.venv/bin/duckask eval bench/nba_questions.yaml --db "$NBA" --descriptions bench/nba_descriptions.yaml \
  --baseline single-prompt --out docs/results/nba_eval_described.jsonl --report docs/results/nba_eval_described "$@"
