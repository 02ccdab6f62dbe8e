#!/usr/bin/env bash
# All 1,028 Spider dev questions: the duckask graph vs the single-prompt baseline, same model
# (embedded Qwen2.5-Coder-1.5B), same executor, one run (about an hour on 2 cores). Writes
# docs/results/spider_dev_full.*, then splits the result by how much each question was looked at
# during development (bench/spider_subsets.py): sample100 (developed on), held-out 100, test 100,
# and the 728 questions no session inspected one by one.
#   bash bench/spider_dev_full.sh            # fresh run
#   RESUME=1 bash bench/spider_dev_full.sh   # continue an interrupted run
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
OUT=docs/results/spider_dev_full
[ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
.venv/bin/duckask eval "$SPIDER" --baseline single-prompt --out "$OUT.jsonl" --report "$OUT" "$@"
.venv/bin/python bench/spider_subsets.py "$OUT.jsonl" | tee "$OUT.subsets.md"
