#!/usr/bin/env bash
# Test sample: 100 Spider dev questions outside sample200, drawn once at random (seed 20261122,
# bench/spider_test100.txt) after development ended, and run once. Nothing was tuned on them.
# Same command as bench/spider_sample100.sh otherwise. Writes docs/results/spider_test100.*
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
OUT=docs/results/spider_test100
[ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
.venv/bin/duckask eval "$SPIDER" --ids bench/spider_test100.txt --baseline single-prompt \
  --out "$OUT.jsonl" --report "$OUT" "$@"
