#!/usr/bin/env bash
# All 1,028 Spider dev questions: the duckask graph vs the single-prompt baseline, same model
# (embedded Qwen2.5-Coder-1.5B), same executor. Writes docs/results/spider_dev_full.*, then splits
# the result by how much each question was looked at during development (bench/spider_subsets.py):
# sample100 (developed on), held-out 100, test 100, and the 728 others.
# The run starts from the records of bench/spider_sample100.sh (run it first, on the same code) and
# evaluates the other 928 questions (about 70 minutes on 2 cores); eval's resume skips the rest.
# The records (2 MB) are committed gzip-compressed as $OUT.jsonl.gz; the working file is ignored.
#   bash bench/spider_dev_full.sh            # fresh run (after bench/spider_sample100.sh)
#   RESUME=1 bash bench/spider_dev_full.sh   # continue an interrupted run
#   SEED=0 bash bench/spider_dev_full.sh     # all 1,028 questions in this run
set -euo pipefail
cd "$(dirname "$0")/.."
SPIDER=../shared/benchmarks/spider_dev
OUT=docs/results/spider_dev_full
if [ "${RESUME:-0}" != 1 ]; then
  rm -f "$OUT.jsonl"
  [ "${SEED:-1}" = 1 ] && cp docs/results/spider_sample100.jsonl "$OUT.jsonl"
fi
.venv/bin/duckask eval "$SPIDER" --baseline single-prompt --out "$OUT.jsonl" --report "$OUT" "$@"
gzip -9 -c "$OUT.jsonl" > "$OUT.jsonl.gz"
.venv/bin/python bench/spider_subsets.py "$OUT.jsonl.gz" | tee "$OUT.subsets.md"
