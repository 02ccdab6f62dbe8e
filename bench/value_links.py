"""What issue 53's entity rule does to a question's value links, without the model (``schema.values.from_entities``).

For every question of a set, the value links TableSelector makes before the rule (``match_values`` then
``whole_names``) and after it; each link the rule drops is read against the gold SQL: a link into a table the gold
query reads is a loss (the rule took a hint the answer needed away), a link into a table it does not read is noise
removed. The tables of the gold query are the base tables DuckDB's parser finds in it (``schema_linking``). No
model, no timing: the figure is counts. The sets are bench/suites.yaml's (``sets``), the NBA ones through
``bench/nba_models`` (the models as views) as a user would run them.

    .venv/bin/python bench/value_links.py --out docs/results/value-links.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from schema_linking import gold_tables  # noqa: E402
from sets import about, question_set  # noqa: E402

#: the sets measured, each with its suite's configuration (the NBA sets through their public models)
SETS = {"nba-tuning": "models", "nba-heldout": "models", "lahman": None, "spider-dev": None}


def gold_reads(sql: str | None) -> set[str]:
    """The tables a gold query reads, lower-case (``schema_linking.gold_tables``); empty when it does not parse."""
    try:
        return {t.lower() for t in gold_tables(sql or "")}
    except ValueError:
        return set()


def run_set(name: str, say) -> dict:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.eval.questions import load_questions, resolve_db
    from duckask.utils.schema.values import from_entities, match_values, whole_names
    from duckask.utils.semantic import get_catalog

    qfile, db, models = question_set(name, SETS[name])
    questions, db_dir = load_questions(ROOT / qfile)
    settings = load_settings(None, **({"semantic": str(ROOT / models)} if models else {}))
    opened: dict[str, tuple] = {}
    out = {"about": about(name), "questions": len(questions), "links": 0, "questions_changed": 0, "dropped": 0,
           "dropped_from_gold_table": 0, "dropped_elsewhere": 0, "drops": []}
    for i, q in enumerate(questions, 1):
        where = resolve_db(q, db=str(ROOT / db) if db else None, db_dir=db_dir)
        if where not in opened:
            database = open_database(where, settings)
            opened[where] = (database, get_catalog(database, settings))
        database, cat = opened[where]
        before = whole_names(database, cat, q.question, match_values(cat, q.question))
        after = from_entities(cat, q.question, before)
        gone = [m for m in before if m not in after]
        out["links"] += len(before)
        if gone:
            out["questions_changed"] += 1
            gold = gold_reads(q.gold_sql)
            for m in gone:
                hit = m.table.lower() in gold
                out["dropped"] += 1
                out["dropped_from_gold_table" if hit else "dropped_elsewhere"] += 1
                out["drops"].append({"id": q.id, "question": q.question, "table": m.table, "column": m.column,
                                     "phrase": m.phrase, "gold_reads_it": hit})
        line = f"{name}: {i}/{len(questions)} questions, {out['dropped']} links dropped"
        if sys.stderr.isatty():
            say(f"\r{line}" + ("\n" if i == len(questions) else ""))     # a status line on a terminal
        elif i % 100 == 0 or i == len(questions):
            say(line + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", choices=sorted(SETS), help="the sets (default: all)")
    ap.add_argument("--out", default="docs/results/value-links.json")
    a = ap.parse_args(argv)
    result = {name: run_set(name, lambda s: print(s, end="", file=sys.stderr, flush=True))
              for name in a.set or list(SETS)}
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: {f: v[f] for f in ("questions", "links", "dropped", "dropped_from_gold_table",
                                            "dropped_elsewhere")} for k, v in result.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
