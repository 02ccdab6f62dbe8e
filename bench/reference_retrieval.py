"""Which DuckDB reference lines does a question get, and are they the ones its gold SQL uses? (No LLM.)

For each question with gold SQL, ``reference.lookup`` is called as SQLGenerator calls it (the question and
the column types of the tables the gold SQL reads, standing in for the selected tables). A line is
"needed" when the gold SQL uses the feature it teaches (a pattern per sheet entry, below), "noise"
otherwise. Reported per file: questions that get any line, lines per question, recall (needed entries
shown / needed entries) and noise lines per question. On Spider (SQLite-born gold) nearly every line is
noise: those are the lines that cost issue 31 its no-loss check on sample100.

Tune on the dev half and Spider's fit400 list only (never the held-out half or sample100)::

    .venv/bin/python bench/reference_retrieval.py bench/idioms_dev.yaml \\
        --spider ../shared/benchmarks/spider_dev --ids bench/confidence_fit400.txt
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import duckdb

from duckask.utils.eval.questions import load_questions
from duckask.utils.knowledge.examples import tables_of
from duckask.utils.sql.reference import lookup, sheet

#: The gold-SQL signature of each sheet entry's feature (entries without one are never "needed").
NEEDS = {
    "summarize": r"\A\s*SUMMARIZE", "describe": r"\A\s*DESCRIBE", "sample": r"USING\s+SAMPLE",
    "exclude": r"\bEXCLUDE\s*\(", "replace": r"\*\s*REPLACE\s*\(", "columns": r"\bCOLUMNS\s*\(",
    "group_by_all": r"GROUP\s+BY\s+ALL", "pivot": r"\A\s*PIVOT", "unpivot": r"\bUNPIVOT\b",
    "list_index": r"\w\]?\[-?\d*:?-?\d*\]", "list_functions": r"\b(list_\w+|unnest|len)\s*\(",
    "map": r"\b(map_\w+|cardinality)\s*\(|\w\['", "json": r"->|json_\w+\s*\(",
    "date_diff": r"\b(date_diff|datediff|epoch|age)\s*\(",
    "date_parts": r"\b(year|month|hour|dayname|isodow|date_trunc|dayofweek)\s*\(",
    "date_format": r"\b(strftime|strptime|make_date)\s*\(|INTERVAL",
    "split": r"\b(split_part|string_split|regexp_extract|parse_\w+)\s*\(",
    "find_text": r"\b(strpos|position|contains|starts_with|ends_with)\s*\(",
    "top_per_group": r"\bQUALIFY\b|row_number\s*\(",
    "arg_max": r"\barg_(max|min)\s*\(", "share": r"\bcount_if\s*\(|FILTER\s*\(",
    "quantiles": r"\b(median|quantile\w*|mode)\s*\(",
    "string_agg": r"\b(string_agg|group_concat|list)\s*\(", "try_cast": r"\bTRY_CAST\b", "window": r"\bOVER\s*\(",
    "version": r"string_split\([^)]*'\.'", "from_first": r"\A\s*FROM\b",
    "grain": r"GROUP\s+BY[\s\S]*\b(avg|sum|count)\s*\(|\b(avg|sum|count)\s*\([\s\S]*GROUP\s+BY",
}


def needed(gold: str) -> set[str]:
    return {name for name, pat in NEEDS.items() if re.search(pat, gold, re.I)}


def db_types(path: str) -> dict[str, list[str]]:
    """{table: [column types]} of a DuckDB file or an EXPORT DATABASE folder (its schema.sql only)."""
    con = duckdb.connect()
    try:
        p = Path(path)
        if p.is_dir():
            for stmt in (p / "schema.sql").read_text().split(";"):
                if stmt.strip():
                    con.execute(stmt)
        else:
            con.execute(f"ATTACH '{p}' AS src (READ_ONLY); USE src")
        rows = con.execute("SELECT table_name, data_type FROM duckdb_columns()").fetchall()
    finally:
        con.close()
    out: dict[str, list[str]] = {}
    for t, ty in rows:
        out.setdefault(t.lower(), []).append(ty)
    return out


def measure(label: str, items: list[tuple[str, str, list[str]]], by_entry: Counter) -> str:
    text_to_name = {e.text: e.name for e in sheet()}
    any_line = lines = need = got = noise = 0
    for question, gold, types in items:
        shown = {text_to_name.get(line, "function") for line in lookup(question, types)}
        want = needed(gold)
        any_line += bool(shown)
        lines += len(shown)
        need += len(want)
        got += len(want & shown)
        noise += len(shown - want)
        by_entry.update(f"{label}:{n}" for n in shown - want)
    n = max(len(items), 1)
    return (f"| {label} | {len(items)} | {any_line} | {lines / n:.2f} | "
            f"{got}/{need} = {got / max(need, 1):.0%} | {noise / n:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions", nargs="*", help="question files with gold SQL and db (e.g. bench/idioms_dev.yaml)")
    ap.add_argument("--spider", help="the Spider dev folder (questions.jsonl, dbs/)")
    ap.add_argument("--ids", help="a file of Spider ids to use (default: all)")
    ap.add_argument("--noise", action="store_true", help="also list the entries shown where not needed")
    a = ap.parse_args(argv)
    cache: dict[str, dict[str, list[str]]] = {}

    def types_for(db: str, gold: str) -> list[str]:
        if db not in cache:
            cache[db] = db_types(db)
        return [t for name in tables_of(gold) for t in cache[db].get(name.lower(), [])]

    rows, noise = [], Counter()
    for path in a.questions:
        qs = load_questions(path)[0]
        items = [(q.question, q.gold_sql, types_for(q.db, q.gold_sql)) for q in qs]
        rows.append(measure(Path(path).name, items, noise))
    if a.spider:
        root = Path(a.spider)
        ids = set(Path(a.ids).read_text().split()) if a.ids else None
        qs = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines() if line.strip()]
        qs = [q for q in qs if ids is None or q["id"] in ids]
        rows.append(measure("spider" + (f" ({Path(a.ids).name})" if a.ids else ""),
                            [(q["question"], q["gold_sql"], types_for(str(root / "dbs" / q["db_id"]), q["gold_sql"]))
                             for q in qs], noise))
    print("| set | questions | with a line | lines/q | recall (needed shown) | noise lines/q |\n"
          "|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    if a.noise:
        print("\nnoise by entry:", ", ".join(f"{k} {v}" for k, v in noise.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
