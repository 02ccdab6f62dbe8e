#!/usr/bin/env bash
# Held-out check: the 100 questions of Spider dev sample200 that are not in sample100 (the graph was
# developed against sample100). Same command otherwise. Writes docs/results/spider_heldout100.*
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
OUT=docs/results/spider_heldout100
ids=$(mktemp)
grep -vxF -f "$SPIDER/sample100.txt" "$SPIDER/sample200.txt" > "$ids"
[ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
.venv/bin/duckask eval "$SPIDER" --ids "$ids" --baseline single-prompt --out "$OUT.jsonl" --report "$OUT" "$@"
rm -f "$ids"
