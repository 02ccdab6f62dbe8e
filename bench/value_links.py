"""What issue 53's entity rule does to a question's value links, without the model (``schema.values.from_entities``).

For every question of a set, the value links TableSelector makes before the rule (``match_values`` then
``whole_names``) and after it; each link the rule drops is read against the gold SQL: a link into a table the gold
query reads is a loss (the rule took a hint the answer needed away), a link into a table it does not read is noise
removed. The tables of the gold query are its base tables and views (sqlglot). No model, no timing: the figure is
counts. The NBA sets are read through ``bench/nba_models`` (the models as views) as a user would run them.

    .venv/bin/python bench/value_links.py --out docs/results/value-links.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import sqlglot
from sqlglot import exp

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"
#: name -> (question file or folder, database (None: each question's own), semantic folder, about)
SETS = {
    "nba-tuning": ("bench/nba_questions.yaml", "../shared/data/nba", "bench/nba_models",
                   "the 30 NBA questions the rule was read against (the drops in nba15, nba20: selection bias)"),
    "nba-heldout": ("bench/nba_questions_heldout.yaml", "../shared/data/nba", "bench/nba_models",
                    "20 NBA questions kept from the rule's authors"),
    "lahman": ("bench/lahman_questions.yaml", "data/lahman.duckdb", None, "the 25 Lahman demo questions"),
    "spider-dev": (str(SPIDER), None, None, "all 1,028 Spider dev questions (20 databases with keys)"),
}


def gold_tables(sql: str | None) -> set[str]:
    """The tables and views a gold query reads, lower-case (CTE names left out); empty when it does not parse."""
    try:
        tree = sqlglot.parse_one(sql or "", read="duckdb")
    except sqlglot.errors.ParseError:
        return set()
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table)} - ctes


def run_set(name: str, say) -> dict:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.eval.questions import load_questions, resolve_db
    from duckask.utils.schema import get_catalog
    from duckask.utils.schema.values import from_entities, match_values, whole_names

    qfile, db, models, about = SETS[name]
    questions, db_dir = load_questions(ROOT / qfile)
    settings = load_settings(None, **({"semantic": str(ROOT / models)} if models else {}))
    opened: dict[str, tuple] = {}
    out = {"about": about, "questions": len(questions), "links": 0, "questions_changed": 0, "dropped": 0,
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
            gold = gold_tables(q.gold_sql)
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
