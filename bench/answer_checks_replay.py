"""How often does each answer check fire on right answers, and on wrong ones? (No LLM; recorded answers.)

Each record of an eval run (its final SQL, scored right or wrong) is run again on its database, and every
check of ``checks.registry.CHECKS`` is asked about the result. Right is the user's ruler where the record has it
(``holds``: the answer's columns hold the asked ones, issue 53), else strict EX. A check that fires on a right
answer is a false alarm (the grader would move away from a right answer); one on a wrong answer is a catch. Only
the question is "given" (the records keep no conversation), so ``unasked_literal`` may over-fire where the
examples or data hints gave a literal. ``literal_not_a_value`` reads the database's value index
(``schema.value_index``); a run through a semantic directory's models names it after ``@``.

    .venv/bin/python bench/answer_checks_replay.py \\
        docs/results/spider-fit400/shipped.jsonl=../shared/benchmarks/spider_dev/dbs/{db} \\
        docs/results/idioms-dev/shipped.jsonl={db} docs/results/nba-heldout/raw-examples.jsonl=../shared/data/nba \\
        docs/results/lahman/shipped.jsonl=data/lahman.duckdb \
        docs/results/nba-heldout/models.jsonl=../shared/data/nba@bench/nba_models
"""
from __future__ import annotations

import argparse
import re
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from duckask.utils.checks.facts import Facts, table_words
from duckask.utils.checks.registry import CHECKS
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.eval.records import read_records
from duckask.utils.schema.terms import split_ident
from duckask.utils.schema.value_index import ValueIndex
from duckask.utils.schema.values import match_values
from duckask.utils.semantic import get_catalog


def replay(path: str, template: str, limit: int | None = None,
           semantic: str | None = None) -> tuple[Counter, Counter, int, int, list[str]]:
    right, wrong, n_right, n_wrong, shown = Counter(), Counter(), 0, 0, []
    recs = [r for r in read_records(path) if r.get("sql") and r.get("status") in ("ok", "answered")
            and not r.get("gold_error")][:limit]
    dbs: dict[str, object] = {}
    for r in recs:
        db = template.format(db=r.get("db", ""))
        if db not in dbs:
            database = open_database(db, load_settings(None, **({"semantic": semantic} if semantic else {})))
            catalog = get_catalog(database)
            dbs[db] = (database, ValueIndex.of(database, catalog), table_words(catalog), catalog)
        database, index, words, catalog = dbs[db]
        out = database.run(r["sql"], timeout_s=20, row_cap=10_000)
        if not out.ok or out.df is None:
            continue
        # The names the query uses stand in for the database's (the per-group rule asks whether "per Y" names one).
        facts = Facts({w for tok in re.findall(r"[A-Za-z_]\w*", out.sql) for w in split_ident(tok)}, values=index,
                      tables=words, named=[asdict(v) for v in match_values(catalog, r["question"])])
        ok = bool(r["holds"] if r.get("holds") is not None else r.get("correct"))   # the user's ruler where scored
        n_right, n_wrong = n_right + ok, n_wrong + (not ok)
        for check in CHECKS:
            if check(r["question"], out.sql, out.df, facts):
                (right if ok else wrong)[check.name] += 1
                if ok:
                    shown.append(f"  false alarm {check.name}: {r['question']} | {out.sql[:160]}")
    return right, wrong, n_right, n_wrong, shown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="RECORDS.jsonl=DB[@SEMANTIC_DIR] (DB may hold {db}, the record's db)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--show", action="store_true", help="list the false alarms")
    a = ap.parse_args(argv)
    print("| records | right / wrong | check | fires on right (false alarms) | fires on wrong (catches) |\n"
          "|---|---:|---|---:|---:|")
    for run in a.runs:
        path, template = run.split("=", 1)
        template, _, semantic = template.partition("@")
        right, wrong, n_right, n_wrong, shown = replay(path, template, a.limit, semantic or None)
        for check in CHECKS:
            name = check.name
            if right[name] or wrong[name]:
                print(f"| {Path(path).name} | {n_right} / {n_wrong} | {name} | {right[name]} | {wrong[name]} |")
        if a.show:
            print("\n".join(shown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
