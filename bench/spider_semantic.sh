#!/usr/bin/env bash
# Spider dev sample100 with the plan path over `duckask semantic init` drafts, no human edits:
#   1. a draft per database of the sample (duckask semantic init), written to $DRAFTS (not committed:
#      derived from ../shared data; rerun this script to rebuild them);
#   2. sql  - the drafts given (--semantic-dir), plan path off: today's SQL path reading the drafts;
#      plan - the same drafts, --plan-path on (a draft is otherwise skipped: plan_path auto).
# The question: does the plan path lose accuracy on undocumented databases? If it does, the default stays
# off for drafts (plan_path auto). CAL (../shared/tools/calibrate.py) is timed before each configuration.
# Writes docs/results/spider_semantic/<config>.{jsonl,md,json,cal}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
DRAFTS=${DRAFTS:-${XDG_CACHE_HOME:-$HOME/.cache}/duckask/spider-drafts}
mkdir -p "$DRAFTS" docs/results/spider_semantic
for id in $(.venv/bin/python -c "
import json
ids = set(open('$SPIDER/sample100.txt').read().split())
rows = [json.loads(line) for line in open('$SPIDER/questions.jsonl')]
print(' '.join(sorted({r['db_id'] for r in rows if r['id'] in ids})))"); do
  [ -s "$DRAFTS/$id.yaml" ] || .venv/bin/duckask semantic init --db "$SPIDER/dbs/$id" -o "$DRAFTS/$id.yaml" --force
done
for config in ${*:-sql plan}; do
  case $config in
    sql)  extra=(--plan-path off) ;;
    plan) extra=(--plan-path on) ;;
    *) echo "unknown configuration: $config (sql, plan)" >&2; exit 2 ;;
  esac
  OUT=docs/results/spider_semantic/$config
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/duckask eval "$SPIDER" --ids "$SPIDER/sample100.txt" --semantic-dir "$DRAFTS" "${extra[@]}" \
    --out "$OUT.jsonl" --report "$OUT"
done
