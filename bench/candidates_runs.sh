#!/usr/bin/env bash
# Issue 32's runs: candidates on (--candidates $K, default 4) or off (CONFIG=off: --candidates 0), one run each.
# Fit sets (records for the confidence refit, judged leave-one-kind-out):
#   spider-fit   - 120 Spider dev questions outside sample100/200 (bench/candidates_fit120.txt, the first
#                  120 of bench/confidence_fit400.txt)
#   idioms-dev   - the DuckDB-idioms tuned half (bench/idioms_dev.yaml)
#   nba-fit      - the 30 NBA fit questions with the warehouse's semantic layer, examples, wide pruning
# Benchmark sets:
#   lahman       - the 25 Lahman questions on the taught demo
#   nba          - the 20 NBA held-out questions (as nba-fit)
#   idioms-heldout - the DuckDB-idioms held-out half
#   spider100    - Spider dev sample100 (spider200: sample200)
# Usage: bash bench/candidates_runs.sh SET ...   (K=4 CONFIG=on by default)
# CAL (../shared/tools/calibrate.py) is timed before each set and written beside its records.
# Writes docs/results/candidates/<set>-<config><SUFFIX>.{jsonl,md,json,cal}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
NBA=(--db ../shared/data/nba --descriptions bench/nba_semantic --column-pruning wide --examples bench/nba_examples.yaml)
K=${K:-4}
CONFIG=${CONFIG:-on}
[ "$CONFIG" = on ] && cand=$K || cand=0
[ -f /tmp/duckask_idioms/events.duckdb ] || .venv/bin/python bench/idioms_dbs.py
mkdir -p docs/results/candidates
for set in "$@"; do
  case $set in
    spider-fit)     args=("$SPIDER" --ids bench/candidates_fit120.txt) ;;
    idioms-dev)     args=(bench/idioms_dev.yaml --dialect-notes auto) ;;
    nba-fit)        args=(bench/nba_questions.yaml "${NBA[@]}") ;;
    lahman)         args=(bench/lahman_questions.yaml --db data/lahman.duckdb) ;;
    nba)            args=(bench/nba_questions_heldout.yaml "${NBA[@]}") ;;
    idioms-heldout) args=(bench/idioms_heldout.yaml --dialect-notes auto) ;;
    spider100)      args=("$SPIDER" --ids "$SPIDER/sample100.txt") ;;
    spider200)      args=("$SPIDER" --ids "$SPIDER/sample200.txt") ;;
    *) echo "unknown set: $set" >&2; exit 2 ;;
  esac
  OUT=docs/results/candidates/$set-$CONFIG${SUFFIX:-}
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  echo "== $set ($CONFIG, candidates $cand)" >&2
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/python -m duckask.utils.app.cli eval "${args[@]}" --candidates "$cand" --out "$OUT.jsonl" --report "$OUT"
done
