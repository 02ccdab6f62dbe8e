#!/usr/bin/env bash
# Accuracy and cost on Spider dev sample100: the duckask graph vs the single-prompt baseline, same
# model (embedded Qwen2.5-Coder-1.5B), same executor, one run. Writes docs/results/spider_sample100.*
#   bash bench/spider_sample100.sh            # fresh run
#   RESUME=1 bash bench/spider_sample100.sh   # continue an interrupted run
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
OUT=docs/results/spider_sample100
[ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
.venv/bin/duckask eval "$SPIDER" --ids "$SPIDER/sample100.txt" --baseline single-prompt \
  --out "$OUT.jsonl" --report "$OUT" "$@"
