"""Write the table-driven fixtures of the SQL rules from recorded queries (no LLM).

For every query recorded in eval records (final ``sql``, ``first_sql``, ``baseline_sql``, resample
drafts), on its Spider database:
- ``tidy.sql``: every query ``tidy_sql`` (with the question) changes, and one in 25 it leaves alone;
- ``repair.sql``: queries DuckDB rejects, with the query the free repair loop (``run_repaired``: each
  rule of ``REPAIRS``, then ``tidy_sql``, up to 3 times) ends with; up to 15 per first rule that
  fires, and 15 that no rule can fix.
Each case is three lines: ``-- id | db | question``, the input (whitespace folded to one line), and the
expected output. tests/test_sql_fixtures.py replays them; a change to a rule that changes an output
shows up there as a diff to review (then rerun this script and commit the new expectations).

    .venv/bin/python bench/rule_fixtures.py docs/results/spider_sample100.jsonl ... --out tests/fixtures/sql_rules
"""
from __future__ import annotations

import argparse
import hashlib
from collections import Counter
from pathlib import Path

from duckask.utils.eval.records import recorded_queries, replay
from duckask.utils.sql.drafts import run_repaired
from duckask.utils.sql.errors import parse_error
from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.sql.repair import REPAIRS
from duckask.utils.sql.tidy import tidy_sql

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"
PER_RULE = 15


def _keep(sql: str, one_in: int) -> bool:
    return int(hashlib.sha256(sql.encode()).hexdigest(), 16) % one_in == 0


def _first_rule(sql: str, error: str, cat) -> str:
    err, facts = parse_error(error), SchemaFacts.of(cat)
    return next((r.__name__ for r in REPAIRS if (f := r(sql, err, facts)) and f != sql), "none")


def case(r: dict, q, sql: str, out: str) -> str:
    return f"-- {r['id']} | {q.db_id} | {' '.join(q.question.split())}\n{sql}\n{out}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--questions", default=str(SPIDER))
    ap.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "sql_rules"))
    args = ap.parse_args(argv)
    tidy_cases, repair_cases, per_rule, seen = [], [], Counter(), set()
    for r, q, db, cat in replay(args.records, args.questions):
        for _, sql in recorded_queries(r):
            sql = " ".join(sql.split())
            if (q.question, sql) in seen:
                continue
            seen.add((q.question, sql))
            tidied = tidy_sql(sql, cat, q.question)
            if tidied != sql or _keep(sql, 25):
                tidy_cases.append(case(r, q, sql, tidied))
            first = db.run(sql)
            if first.ok:
                continue
            rule = _first_rule(sql, first.error or "", cat)
            if per_rule[rule] < PER_RULE:
                per_rule[rule] += 1
                repair_cases.append(case(r, q, sql, run_repaired(db.run, sql, cat, q.question).sql))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    head = ("-- Written by bench/rule_fixtures.py from recorded queries. Each case: a comment line with the id, the\n"
            "-- database and the question; the input; the expected output.\n\n")
    (out / "tidy.sql").write_text(head + "\n".join(tidy_cases))
    (out / "repair.sql").write_text(head + "\n".join(repair_cases))
    print(f"tidy: {len(tidy_cases)} cases; repair: {len(repair_cases)} cases, by first rule: {dict(per_rule)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
