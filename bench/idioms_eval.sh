#!/usr/bin/env bash
# DuckDB idioms (issue 31): bench/idioms_{dev,heldout}.yaml over the six databases bench/idioms_dbs.py builds,
# one run each per configuration:
#   notes-off  - the DuckDB reference off (--dialect-notes off); nested-column notes, the habit rewrites and
#                the grain checks are always on
#   notes-auto - the reference on (--dialect-notes auto)
# Usage: bash bench/idioms_eval.sh SET [CONFIG ...]   (SET: dev or heldout; default configs: notes-off notes-auto)
# CAL (../shared/tools/calibrate.py) is timed before each configuration and written beside its records.
# Writes docs/results/idioms/<set>-<config>${SUFFIX}.{jsonl,md,json,cal}; RESUME=1 continues a run; SUFFIX=-r2
# keeps an earlier round's files.
set -euo pipefail
cd "$(dirname "$0")/.."
SET=${1:?usage: bash bench/idioms_eval.sh dev|heldout [notes-off] [notes-auto]}
shift
[ -f /tmp/duckask_idioms/events.duckdb ] || .venv/bin/python bench/idioms_dbs.py
mkdir -p docs/results/idioms
for config in ${*:-notes-off notes-auto}; do
  OUT=docs/results/idioms/$SET-$config${SUFFIX:-}
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/duckask eval "bench/idioms_$SET.yaml" --dialect-notes "${config#notes-}" --out "$OUT.jsonl" --report "$OUT"
done
