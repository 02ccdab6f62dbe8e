#!/usr/bin/env bash
# Issue 33's runs: the NBA warehouse through its clean models (bench/nba_models, models: public) against the
# raw tables (bench/nba_semantic), shipped settings otherwise (plan path auto, plan grammar auto, the time
# budget on); no example pairs (the shipped NBA examples are written over the raw tables).
# Usage: bash bench/models_runs.sh SET ...   SET: nba-heldout-models nba-heldout-raw nba-fit-models nba-fit-raw
# CAL (../shared/tools/calibrate.py) is timed before each set and written beside its records.
# Writes docs/results/models/<set>.{jsonl,md,json,cal}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
NBA=(--db ../shared/data/nba --column-pruning wide)
mkdir -p docs/results/models
for set in "$@"; do
  case $set in
    nba-heldout-models) args=(bench/nba_questions_heldout.yaml "${NBA[@]}" --semantic bench/nba_models) ;;
    nba-heldout-raw)    args=(bench/nba_questions_heldout.yaml "${NBA[@]}" --semantic bench/nba_semantic) ;;
    nba-fit-models)     args=(bench/nba_questions.yaml "${NBA[@]}" --semantic bench/nba_models) ;;
    nba-fit-raw)        args=(bench/nba_questions.yaml "${NBA[@]}" --semantic bench/nba_semantic) ;;
    *) echo "unknown set: $set" >&2; exit 2 ;;
  esac
  OUT=docs/results/models/$set
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  echo "== $set" >&2
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/python -m duckask.utils.app.cli eval "${args[@]}" --out "$OUT.jsonl" --report "$OUT"
done
