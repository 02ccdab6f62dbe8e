#!/usr/bin/env bash
# Spider dev with leave-one-out example pairs from the same database (DAIL-SQL style; a separate,
# clearly labelled figure, see bench/spider_loo_examples.py) on the 200 questions not developed on:
# held-out 100 (sample200 minus sample100) and test 100. Compare with the same questions of
# docs/results/spider_dev_full.jsonl.gz (no examples). Writes docs/results/spider_loo.*
# PART=heldout runs only the held-out 100 (PART=test: only test 100); RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
OUT=docs/results/spider_loo
ids=$(mktemp)
case ${PART:-all} in
  heldout) grep -vxF -f "$SPIDER/sample100.txt" "$SPIDER/sample200.txt" > "$ids" ;;
  test)    cp bench/spider_test100.txt "$ids" ;;
  *)       { grep -vxF -f "$SPIDER/sample100.txt" "$SPIDER/sample200.txt"; cat bench/spider_test100.txt; } > "$ids" ;;
esac
[ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
.venv/bin/python bench/spider_loo_examples.py --ids "$ids" --out "$OUT.jsonl" --report "$OUT"
.venv/bin/python - "$OUT.jsonl" <<'PY'
import sys
sys.path.insert(0, "bench")
from ablation import paired
from duckask.utils.eval.records import read_records
paired(read_records(sys.argv[1]), "docs/results/spider_dev_full.jsonl.gz")
PY
rm -f "$ids"
