#!/usr/bin/env bash
# NBA warehouse end to end, one run per configuration (issue 9's ablation), graph only:
#   descriptions  - the descriptions file, column_pruning budget (what session 3 measured)
#   pruning       - + column_pruning wide
#   examples      - + bench/nba_examples.yaml (about 40 verified pairs written from the warehouse)
#   semantic      - + the richer semantic file bench/nba_semantic.yaml in place of the descriptions
#                   (the same descriptions plus instructions, metrics, synonyms and allowed values)
#   plan          - the semantic layer bench/nba_semantic/ (dbt's spec: MetricFlow models per family plus the
#                   same descriptions in its side section) with the plan path, then the SQL path ("both")
#   plan-sql      - the same directory, plan path off (the SQL path alone, reading the same file)
# CAL (../shared/tools/calibrate.py) is timed before each configuration: <out>.cal
# Usage: bash bench/nba_ablation.sh [QUESTIONS.yaml] [CONFIG ...]
#   default questions: bench/nba_questions_heldout.yaml (20 held-out); default configs: all four.
# Writes docs/results/nba_ablation/<questions stem>-<config>.{jsonl,md,json}; RESUME=1 continues a run.
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${1:-bench/nba_questions_heldout.yaml}
shift || true
CONFIGS=${*:-descriptions pruning examples semantic}
STEM=$(basename "$QUESTIONS" .yaml)
mkdir -p docs/results/nba_ablation
for config in $CONFIGS; do
  semantic=bench/nba_descriptions.yaml
  case $config in
    descriptions) extra=(--column-pruning budget) ;;
    pruning)      extra=(--column-pruning wide) ;;
    examples)     extra=(--column-pruning wide --examples bench/nba_examples.yaml) ;;
    semantic)     extra=(--column-pruning wide --examples bench/nba_examples.yaml); semantic=bench/nba_semantic.yaml ;;
    plan)         extra=(--column-pruning wide --examples bench/nba_examples.yaml); semantic=bench/nba_semantic ;;
    plan-sql)     extra=(--column-pruning wide --examples bench/nba_examples.yaml --plan-path off)
                  semantic=bench/nba_semantic ;;
    *) echo "unknown configuration: $config (descriptions, pruning, examples, semantic, plan, plan-sql)" >&2; exit 2 ;;
  esac
  OUT=docs/results/nba_ablation/$STEM-$config
  [ "${RESUME:-0}" = 1 ] || rm -f "$OUT.jsonl"
  echo "== $config: ${extra[*]}" >&2
  .venv/bin/python -c "import sys; sys.path.insert(0, '../shared/tools'); from calibrate import calibrate; print(calibrate())" \
    > "$OUT.cal" || true
  .venv/bin/duckask eval "$QUESTIONS" --db ../shared/data/nba --descriptions "$semantic" \
    "${extra[@]}" --out "$OUT.jsonl" --report "$OUT"
done
