"""The misses of an idioms run by kind (issue 31): feature not used, wrong grain, wrong table or column, other.

For each question the run got wrong (records from bench/idioms_eval.sh), in this order:
- feature not used: the question needs a DuckDB feature (its tags) and the final SQL shows none of the
  markers of that feature (json: ``->``/``json_``; split: ``split_part``/``string_split``/``regexp``/a
  slice; describe: DESCRIBE; ...);
- wrong grain: the question is about grain (kind:grain or the grain tag) and the final result has another
  number of rows than the gold result (one row per group asked, a total given, or the other way round);
- wrong table or column: the final SQL failed naming a column or table, or reads other tables than the gold
  (CTE names aside: ``sql.reads``);
- other: everything else (a wrong filter, value, join or expression).

    .venv/bin/python bench/idioms_misses.py docs/results/idioms/heldout-notes-auto.jsonl bench/idioms_heldout.yaml
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MARKERS = {
    "json": r"->|json_", "json_array": r"->|json_|unnest",
    "split": r"split_part|string_split|regexp|\[\s*-?\d*\s*:",
    "describe": r"\bDESCRIBE\b", "summarize": r"\bSUMMARIZE\b", "columns_regex": r"\bCOLUMNS\s*\(",
    "exclude": r"\bEXCLUDE\b", "replace": r"\bREPLACE\s*\(", "pivot": r"\bPIVOT\b|FILTER\s*\(",
    "slice": r"\[\s*-?\d*\s*:", "last_element": r"\[\s*-1\s*\]|len\(|array_length",
    "list": r"\[|list_|unnest|len\(", "map": r"\[\s*'|map_|element_at", "struct": r"\.\w+|struct_",
    "date_diff": r"date_diff|datediff|epoch|age\(|-", "version": r"string_split|split_part|::INT",
}


def kind_of_miss(rec: dict, q: dict, gold_rows: int | None) -> str:
    sql = rec.get("sql") or ""
    tags = set(q.get("tags") or [])
    for tag in tags & set(MARKERS):
        if not re.search(MARKERS[tag], sql, re.I):
            return "feature not used"
    if ("kind:grain" in tags or "grain" in tags) and rec.get("rows") is not None and gold_rows is not None \
            and rec["rows"] != gold_rows:
        return "wrong grain"
    err = rec.get("error") or ""
    if re.search(r"column|table|not found|does not have", err, re.I):
        return "wrong table or column"
    gold_tables, pred_tables = set(q.get("gold_tables") or []), set(rec.get("read_tables") or [])
    if gold_tables and pred_tables and gold_tables != pred_tables:
        return "wrong table or column"
    return "other"


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.db.database import open_database
    from duckask.utils.sql.reads import resolve

    ap = argparse.ArgumentParser(description="Count an idioms run's misses by kind.")
    ap.add_argument("records")
    ap.add_argument("questions")
    a = ap.parse_args(argv)
    questions = {q["id"]: q for q in yaml.safe_load(Path(a.questions).read_text())}
    counts, rows = Counter(), []
    for line in Path(a.records).read_text().splitlines():
        rec = json.loads(line)
        if rec.get("correct"):
            continue
        q = questions[rec["id"]]
        db = open_database(q["db"])
        gold = db.run(q["gold_sql"])
        pred = db.run(rec["sql"]) if rec.get("sql") else None
        rec["rows"] = None if pred is None or not pred.ok else len(pred.df)
        reads, pred_reads = resolve(q["gold_sql"]), resolve(rec.get("sql") or "")
        q["gold_tables"] = sorted(reads.names) if reads else []
        rec["read_tables"] = sorted(pred_reads.names) if pred_reads else []
        kind = kind_of_miss(rec, q, len(gold.df) if gold.ok else None)
        counts[kind] += 1
        rows.append((rec["id"], kind, q["question"][:70]))
    for qid, kind, question in rows:
        print(f"{qid}\t{kind}\t{question}")
    print(json.dumps(dict(counts)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
