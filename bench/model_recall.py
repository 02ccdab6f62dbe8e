"""Recall of the right model (issue 33): does table selection, over the NBA warehouse's clean models, rank a
model that covers each table the gold SQL reads? No LLM; the deterministic pre-ranker TableSelector uses.

For every question of bench/nba_questions.yaml (tuning 30) and bench/nba_questions_heldout.yaml (held-out 20):
the gold SQL's base tables (DuckDB's parser, as bench/schema_linking.py). Raw: the 52 tables with
bench/nba_semantic's descriptions (as the NBA runs use them). Models: bench/nba_models (``models: public``),
ranked over ``Catalog.visible(question)`` exactly as TableSelector does; a gold table counts as found at k
when it is visible and in the top k, or when a model that reads it (``Table.reads``, one level: a model's
own reads) is. recall@k is the mean share of gold tables found; all@k the share of questions with all found.

The models were written from the warehouse and its documentation, not from these questions; this is the
first and only measurement of them on these questions (2026-11-25).

Run::

    .venv/bin/python bench/model_recall.py --out docs/results/models/recall.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from schema_linking import NBA_DB, gold_tables  # noqa: E402

from duckask.utils.config import load_settings  # noqa: E402
from duckask.utils.schema.ranker import rank_tables  # noqa: E402
from duckask.utils.schema.values import match_values  # noqa: E402
from duckask.utils.semantic import get_catalog  # noqa: E402

KS = (1, 3, 5, 8)
SETS = {"tuning 30": ROOT / "bench" / "nba_questions.yaml",
        "held-out 20": ROOT / "bench" / "nba_questions_heldout.yaml"}
KNOWLEDGE = {"raw tables": ROOT / "bench" / "nba_semantic", "models": ROOT / "bench" / "nba_models"}


def measure(cat, questions: list[dict]) -> dict:
    rows = []
    for q in questions:
        seen = set(cat.visible(q["question"]))
        ranked = [r.table for r in rank_tables(cat, q["question"], match_values(cat, q["question"])) if r.table in seen]
        pos = {t: i + 1 for i, t in enumerate(ranked)}
        gold = list(dict.fromkeys(t for t in gold_tables(q["gold_sql"])))
        covers = {g: [g] if g in seen else [m for m, t in cat.tables.items() if t.model and g in t.reads] for g in gold}
        best = {g: min((pos.get(c, 10**9) for c in covers[g]), default=10**9) for g in gold}
        rows.append({"id": q["id"], "gold": gold, "covered_by": covers, "rank": best, "visible": len(seen),
                     "recall": {k: sum(1 for g in gold if best[g] <= k) / len(gold) for k in KS}})
    return {"questions": len(rows), "visible_tables": round(statistics.mean(r["visible"] for r in rows), 1),
            **{f"recall@{k}": round(100 * statistics.mean(r["recall"][k] for r in rows), 1) for k in KS},
            **{f"all@{k}": round(100 * statistics.mean(r["recall"][k] == 1 for r in rows), 1) for k in (3, 5)},
            "uncovered": sorted({g for r in rows for g, c in r["covered_by"].items() if not c}), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Recall of the right model over the NBA warehouse's models.")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    out = {}
    print("| knowledge | questions | tables seen | R@1 | R@3 | R@5 | R@8 | all@3 | all@5 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kname, path in KNOWLEDGE.items():
        cat = get_catalog(str(NBA_DB), load_settings(None, semantic=str(path)))
        for sname, qpath in SETS.items():
            res = out[f"{kname} / {sname}"] = measure(cat, yaml.safe_load(qpath.read_text()))
            print(f"| {kname} | {sname} | {res['visible_tables']} | " + " | ".join(
                str(res[f"recall@{k}"]) for k in KS) + f" | {res['all@3']} | {res['all@5']} |")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
