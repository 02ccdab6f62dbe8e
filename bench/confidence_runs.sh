#!/usr/bin/env bash
# The labelled records the confidence model is fitted on and judged on (issue 22), one eval run per set,
# CAL (../shared/tools/calibrate.py) timed before each and written beside its records:
#   fit      - 400 Spider dev questions outside sample100/sample200 (bench/confidence_fit400.txt, drawn
#              with seed 22): the only records bench/fit_confidence.py fits on
#   nba-fit  - the 30 NBA tuning questions (bench/nba_questions.yaml), same configuration as nba: fitted on too,
#              so that the model sees a warehouse, not only Spider's small databases
#   spider200 - Spider dev sample200 (held out from the fit)
#   nba      - the 20 held-out NBA questions, the warehouse's semantic layer (plan path, then SQL)
#   lahman   - the 25 Lahman questions on the taught demo (examples + semantic file, what `duckask demo` uses)
#   grader   - the LLM grader replayed on spider200's first results (bench/grader_eval.py: its recall on wrong
#              first results, its false fails on right ones, and its seconds, on the embedded model)
# Usage: bash bench/confidence_runs.sh [SET ...]   (default: all, in that order)
# Writes docs/results/confidence/<set>.{jsonl,md,json,cal}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
mkdir -p docs/results/confidence
for set in ${*:-fit nba-fit spider200 nba lahman grader}; do
  OUT=docs/results/confidence/$set
  case $set in
    fit)       args=("$SPIDER" --ids bench/confidence_fit400.txt) ;;
    spider200) args=("$SPIDER" --ids "$SPIDER/sample200.txt") ;;
    nba-fit)   args=(bench/nba_questions.yaml --db ../shared/data/nba --descriptions bench/nba_semantic
                     --column-pruning wide --examples bench/nba_examples.yaml) ;;
    nba)       args=(bench/nba_questions_heldout.yaml --db ../shared/data/nba --descriptions bench/nba_semantic
                     --column-pruning wide --examples bench/nba_examples.yaml) ;;
    lahman)    args=(bench/lahman_questions.yaml --db data/lahman.duckdb) ;;
    grader)    ${PYTHON:-.venv/bin/python} bench/grader_eval.py docs/results/confidence/spider200.jsonl \
                 --questions "$SPIDER" --out "$OUT"; continue ;;
    *) echo "unknown set: $set (fit, nba-fit, spider200, nba, lahman, grader)" >&2; exit 2 ;;
  esac
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  echo "== $set" >&2
  ${PYTHON:-.venv/bin/python} -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  ${PYTHON:-.venv/bin/python} -m duckask.utils.app.cli eval "${args[@]}" --out "$OUT.jsonl" --report "$OUT"
done
