#!/usr/bin/env bash
# Issue 31's no-loss checks: the sets measured before it, rerun with its changes, one run each, in the
# configuration of bench/confidence_runs.sh (issue 22's figures are the "before"):
#   spider100 - Spider dev sample100 (the first half of sample200)
#   lahman    - the 25 Lahman questions on the taught demo
#   nba       - the 20 held-out NBA questions with the warehouse's semantic layer, examples, wide pruning
# Extra arguments after the set names go to every eval (e.g. --dialect-notes auto).
# CAL (../shared/tools/calibrate.py) is timed before each set and written beside its records.
# Writes docs/results/idioms/regress-<set>${SUFFIX}.{jsonl,md,json,cal} (SUFFIX=-r2 keeps an earlier round).
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
mkdir -p docs/results/idioms
sets=() extra=()
for a in "$@"; do case $a in spider100|lahman|nba) sets+=("$a") ;; *) extra+=("$a") ;; esac; done
[ ${#sets[@]} -gt 0 ] || sets=(spider100 lahman nba)
for set in "${sets[@]}"; do
  case $set in
    spider100) args=("$SPIDER" --ids "$SPIDER/sample100.txt") ;;
    lahman)    args=(bench/lahman_questions.yaml --db data/lahman.duckdb) ;;
    nba)       args=(bench/nba_questions_heldout.yaml --db ../shared/data/nba --descriptions bench/nba_semantic
                     --column-pruning wide --examples bench/nba_examples.yaml) ;;
  esac
  OUT=docs/results/idioms/regress-$set${SUFFIX:-}
  rm -f "$OUT.jsonl"
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/duckask eval "${args[@]}" ${extra[@]+"${extra[@]}"} --out "$OUT.jsonl" --report "$OUT"
done
